//! Compilation and evaluation of rules over structural schemas, without a server.

use crest_api::FieldPath;
use crest_schema::Structural;
use crest_schema_cel::crd::validate_schema_rules;
use crest_schema_cel::Validator;
use serde_json::{json, Value};

fn schema(v: Value) -> Structural {
    Structural::from_json(&v).expect("schema")
}

fn crd_errors(v: Value) -> Vec<String> {
    validate_schema_rules(&schema(v), &FieldPath::new("s"), &[])
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn run(v: Value, new: Value, old: Option<Value>) -> Vec<String> {
    Validator::new(&schema(v))
        .expect("rules")
        .validate(&new, old.as_ref())
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn compile_errors_use_cel_go_wording() {
    let errs = crd_errors(
        json!({"type": "object", "properties": {"i": {"type": "integer",
        "x-kubernetes-validations": [{"rule": "self == true"}]}}}),
    );
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("s.properties[i].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self == true\", Message:\"\""), "{errs:?}");
    assert!(errs[0].contains("compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'\n | self == true\n | .....^"), "{errs:?}");
}

#[test]
fn types_follow_the_schema() {
    let s = json!({"type": "object", "properties": {
        "ts": {"type": "string", "format": "date-time"},
        "d": {"type": "string", "format": "duration"},
        "b": {"type": "string", "format": "byte"},
        "ios": {"x-kubernetes-int-or-string": true},
        "n": {"type": "number"},
        "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        "x-y": {"type": "integer"},
        "unknown": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    }, "x-kubernetes-validations": [
        {"rule": "self.ts + self.d > timestamp('2024-01-01T00:00:00Z')", "message": "time"},
        {"rule": "size(self.b) == 3", "message": "bytes"},
        {"rule": "type(self.ios) == int || self.ios == 'x'", "message": "ios"},
        {"rule": "self.n == 1.0", "message": "number"},
        {"rule": "self.m.all(k, self.m[k] > 0)", "message": "map"},
        {"rule": "self.x__dash__y == 1", "message": "escaped"},
        {"rule": "self.metadata.name == 'n' && self.kind == 'K'", "message": "meta"},
    ]});
    // Preserved unknown fields are not part of the type.
    let hidden = crd_errors(
        json!({"type": "object", "properties": {"unknown": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true}},
        "x-kubernetes-validations": [{"rule": "has(self.unknown.other)"}]}),
    );
    assert!(hidden[0].contains("undefined field 'other'"), "{hidden:?}");
    let good = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"},
        "ts": "2024-01-01T00:00:00Z", "d": "1h", "b": "YWJj", "ios": 3, "n": 1,
        "m": {"a": 1}, "x-y": 1, "unknown": {"other": 1}});
    assert_eq!(run(s.clone(), good.clone(), None), Vec::<String>::new());
    let mut bad = good.clone();
    bad["n"] = json!(2);
    bad["ios"] = json!("y");
    assert_eq!(
        run(s, bad, None),
        vec![
            "<nil>: Invalid value: \"object\": ios".to_string(),
            "<nil>: Invalid value: \"object\": number".to_string()
        ]
    );
}

#[test]
fn transition_rules_need_an_old_value_and_ratchet_others() {
    let s = json!({"type": "object", "properties": {"a": {"type": "integer",
        "x-kubernetes-validations": [
            {"rule": "self >= oldSelf", "message": "shrunk"},
            {"rule": "self < 10", "message": "big"}]}}});
    assert_eq!(
        run(s.clone(), json!({"a": 20}), None),
        vec!["a: Invalid value: \"integer\": big"]
    );
    // Unchanged invalid value: ratcheted; the transition rule passes.
    assert!(run(s.clone(), json!({"a": 20}), Some(json!({"a": 20}))).is_empty());
    assert_eq!(
        run(s, json!({"a": 5}), Some(json!({"a": 6}))),
        vec!["a: Invalid value: \"integer\": shrunk"]
    );
}

/// Upstream's `validateExpressions` passes a ratcheted failure to `warning.AddWarning` as the
/// field error's text; runtime errors and transition rules are never ratcheted.
#[test]
fn ratcheted_failures_become_warnings() {
    let s = json!({"type": "object", "properties": {
        "a": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self < 10", "messageExpression": "'a is ' + string(self)"},
            {"rule": "self >= oldSelf", "message": "shrunk"}]},
        "b": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self != 'x'", "reason": "FieldValueForbidden", "message": "no x"}]},
        "o": {"type": "object", "properties": {"x": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.x > 0"}]},
        "c": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.c != 3"}]});
    let v = Validator::new(&schema(s)).expect("rules");
    let old = json!({"a": 20, "b": "x", "o": {}, "c": 3});
    // Unchanged: every failure of a rule without oldSelf is a warning, except the runtime error.
    let out = v.evaluate(&old, Some(&old));
    let errs: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        vec!["o: Invalid value: \"object\": no such key: x evaluating rule: self.x > 0"]
    );
    assert_eq!(
        out.warnings,
        vec![
            "<nil>: Invalid value: \"object\": failed rule: self.c != 3",
            "a: Invalid value: \"integer\": a is 20",
            "b: Forbidden: no x",
        ]
    );
    // A changed value fails; its unchanged siblings still warn (the root changed, so its rule
    // fails too).
    let new = json!({"a": 30, "b": "x", "o": {"x": 1}, "c": 3});
    let out = v.evaluate(&new, Some(&old));
    let errs: Vec<String> = out.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errs,
        vec![
            "<nil>: Invalid value: \"object\": failed rule: self.c != 3",
            "a: Invalid value: \"integer\": a is 30",
        ]
    );
    assert_eq!(out.warnings, vec!["b: Forbidden: no x"]);
    // Creates have nothing to ratchet against.
    assert!(v.evaluate(&new, None).warnings.is_empty());
}

#[test]
fn runtime_errors_name_the_rule() {
    let s = json!({"type": "object", "properties": {"o": {"type": "object",
        "properties": {"x": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.x > 0"}]}}});
    assert_eq!(
        run(s, json!({"o": {}}), None),
        vec!["o: Invalid value: \"object\": no such key: x evaluating rule: self.x > 0"]
    );
}

#[test]
fn rules_over_a_large_object_fail_on_cost_not_memory() {
    // About 3 MiB, the request body limit: results of terabytes are refused before they are
    // built, with upstream's per-call cost error naming the rule.
    let s = json!({"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "self.a.replace('', self.b).size() > 0"},
            {"rule": "self.a.split('').join(self.c).size() > 0"}]});
    let big = "x".repeat(1 << 20);
    let obj = json!({"a": big, "b": big, "c": big});
    let start = std::time::Instant::now();
    let errs = run(s, obj, None);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        errs,
        vec!["<nil>: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.a.replace('', self.b).size() > 0".to_string()]
    );
}

/// The rule's (or messageExpression's) error detail at CRD write for a string field `s`.
fn regex_rule_error(rule: &str, message_expression: &str) -> Vec<String> {
    crd_errors(json!({"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 10},
        "p": {"type": "string", "maxLength": 10},
    }, "x-kubernetes-validations": [{"rule": rule, "messageExpression": message_expression}]}))
    .iter()
    .map(|e| match e.split_once("OptionalOldSelf:(*bool)(nil)}: ") {
        Some((_, detail)) => detail.to_string(),
        None => e.clone(),
    })
    .collect()
}

#[test]
fn regex_literals_are_checked_as_kubernetes_does() {
    // cel-go's ValidateRegexLiterals: the literal first argument of matches, at compile time.
    assert_eq!(
        regex_rule_error("self.s.matches('x++')", ""),
        ["compilation failed: ERROR: <input>:1:16: invalid matches argument\n | self.s.matches('x++')\n | ...............^"]
    );
    assert_eq!(
        regex_rule_error("self.s.matches('(') || self.s.matches('[a') || self.s.matches('ok')", ""),
        ["compilation failed: ERROR: <input>:1:16: invalid matches argument\n | self.s.matches('(') || self.s.matches('[a') || self.s.matches('ok')\n | ...............^\nERROR: <input>:1:39: invalid matches argument\n | self.s.matches('(') || self.s.matches('[a') || self.s.matches('ok')\n | ......................................^"]
    );
    // Its upstream quirk: the global form's first argument is the string, not the pattern.
    assert_eq!(
        regex_rule_error("matches('(', self.s)", ""),
        ["compilation failed: ERROR: <input>:1:9: invalid matches argument\n | matches('(', self.s)\n | ........^"]
    );
    // Program building compiles the other literal patterns: Go's error verbatim.
    for (rule, err) in [
        ("matches(self.s, '[')", "missing closing ]: `[`"),
        ("self.s.find(')') == ''", "unexpected ): `)`"),
        ("self.s.findAll(')') == []", "unexpected ): `)`"),
        (
            "self.s.findAll('a{1001}', 1) == []",
            "invalid repeat count: `{1001}`",
        ),
        (
            "self.s.matches(string('(?x)'))",
            "invalid or unsupported Perl syntax: `(?x`",
        ),
        (
            "self.s.find('\\\\p{Foo}') == '' || self.s.find('[') == ''",
            "invalid character class range: `\\p{Foo}`",
        ),
        (
            "[self.s].all(x, x.findAll('\\\\8').size() == 0)",
            "invalid escape sequence: `\\8`",
        ),
    ] {
        assert_eq!(
            regex_rule_error(rule, ""),
            [format!(
                "program instantiation failed: error parsing regexp: {err}"
            )],
            "{rule}"
        );
    }
    // Go syntax the regex crate rejects is fine.
    for rule in [
        "self.s.matches('[[]x{abc}\\\\Q*\\\\E')",
        "self.s.find('(?P<a>x)(?P<a>y)') == ''",
        "self.s.matches(self.p)",
    ] {
        assert_eq!(regex_rule_error(rule, ""), Vec::<String>::new(), "{rule}");
    }
    // The same for messageExpression.
    assert_eq!(
        regex_rule_error("true", "self.s.find('(')"),
        ["messageExpression instantiation failed: error parsing regexp: missing closing ): `(`"]
    );
    assert_eq!(
        regex_rule_error("true", "self.s.matches('a**') ? 'x' : 'y'"),
        ["messageExpression compilation failed: ERROR: <input>:1:16: invalid matches argument\n | self.s.matches('a**') ? 'x' : 'y'\n | ...............^"]
    );
}

#[test]
fn dynamic_regexes_fail_at_run_time_with_go_errors() {
    let s = json!({"type": "object", "properties": {
        "s": {"type": "string"}, "p": {"type": "string"},
    }, "x-kubernetes-validations": [
        {"rule": "self.s.matches(self.p)"},
        {"rule": "self.s.find(self.p) == ''"},
        {"rule": "self.s.findAll(self.p).size() == 0"},
    ]});
    assert_eq!(
        run(s.clone(), json!({"s": "x", "p": "a(b"}), None),
        [
            "<nil>: Invalid value: \"object\": error parsing regexp: missing closing ): `a(b` evaluating rule: self.s.matches(self.p)",
            "<nil>: Invalid value: \"object\": Illegal regex: error parsing regexp: missing closing ): `a(b` evaluating rule: self.s.find(self.p) == ''",
            "<nil>: Invalid value: \"object\": Illegal regex: error parsing regexp: missing closing ): `a(b` evaluating rule: self.s.findAll(self.p).size() == 0",
        ]
    );
    // Go's semantics when the pattern is valid: \d is ASCII.
    assert_eq!(
        run(s, json!({"s": "١", "p": "^\\d$"}), None),
        ["<nil>: Invalid value: \"object\": failed rule: self.s.matches(self.p)"]
    );
}
