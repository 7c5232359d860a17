//! CEL validation rules (`x-kubernetes-validations`) through kubectl and raw HTTP: the seeds'
//! (000 合法性检查规则 / 002 "Validation rules") replica rules and messages, their compile-error
//! list, every example of the rule tables, escaping, transition rules and optionalOldSelf,
//! messageExpression/reason/fieldPath, ratcheting, and the cost limits at CRD write and at
//! request time.

mod common;
use common::*;
use serde_json::{json, Value};

/// A CRD `widgets.cel.example.com` (kind Widget, with the status subresource) whose root schema
/// is `schema` (YAML indented for `openAPIV3Schema`).
fn widget_crd(schema: &str) -> String {
    crd_with_schema("cel.example.com", "widgets", "Widget", schema).replace(
        "      storage: true\n",
        "      storage: true\n      subresources:\n        status: {}\n",
    )
}

/// Applies a Widget with `spec` (and the given name); returns (ok, stderr).
fn apply_widget(s: &Server, name: &str, spec: Value) -> (bool, String) {
    let obj = json!({
        "apiVersion": "cel.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    });
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&obj.to_string()));
    (ok, err)
}

fn assert_rejected(s: &Server, name: &str, spec: Value, want: &[&str]) {
    let (ok, err) = apply_widget(s, name, spec.clone());
    assert!(!ok, "{spec} was accepted");
    for w in want {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

fn assert_accepted(s: &Server, name: &str, spec: Value) {
    let (ok, err) = apply_widget(s, name, spec.clone());
    assert!(ok, "{spec} was refused: {err}");
}

const REPLICA_RULES: &str = r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.minReplicas <= self.replicas"
                  message: "replicas should be greater than or equal to minReplicas."
                - rule: "self.replicas <= self.maxReplicas"
                  message: "replicas should be smaller than or equal to maxReplicas."
                - rule: "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"
              properties:
                cronSpec:
                  type: string
                image:
                  type: string
                minReplicas:
                  type: integer
                replicas:
                  type: integer
                maxReplicas:
                  type: integer
              required:
                - minReplicas
                - replicas
                - maxReplicas"#;

#[test]
fn seed_replica_rules_with_kubectl() {
    let s = Server::start();
    s.install_crd(&crontab_crd_with_schema(REPLICA_RULES));
    let invalid = r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  minReplicas: 0
  replicas: 20
  maxReplicas: 10
"#;
    let (ok, out, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(invalid));
    assert!(!ok, "{out}");
    for want in [
        r#"The CronTab "my-new-cron-object" is invalid"#,
        r#"spec: Invalid value: "object": replicas should be smaller than or equal to maxReplicas."#,
        r#"spec: Invalid value: "object": failed rule: self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"#,
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    assert!(
        !err.contains("greater than or equal to minReplicas"),
        "{err}"
    );
    s.apply_yaml(
        r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  minReplicas: 0
  replicas: 5
  maxReplicas: 10
"#,
    );
}

#[test]
fn seed_compile_errors_refuse_the_crd() {
    let s = Server::start();
    let cases = [
        (
            "integer",
            "self == true",
            r#"Invalid value: apiextensions.ValidationRule{Rule:"self == true", Message:"""#,
            "compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'",
        ),
        (
            "object",
            "self.nonExistingField > 0",
            r#"Invalid value: apiextensions.ValidationRule{Rule:"self.nonExistingField > 0", Message:"""#,
            "compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'",
        ),
        (
            "object",
            "has(self)",
            r#"Invalid value: apiextensions.ValidationRule{Rule:"has(self)", Message:"""#,
            "compilation failed: ERROR: <input>:1:4: invalid argument to has() macro",
        ),
        (
            "integer",
            "self >",
            r#"Invalid value: apiextensions.ValidationRule{Rule:"self >", Message:"""#,
            "compilation failed: ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>'",
        ),
        (
            "integer",
            "self + 1",
            r#"apiextensions.ValidationRule{Rule:"self + 1""#,
            "cel expression must evaluate to a bool",
        ),
    ];
    for (ty, rule, value, detail) in cases {
        let props = if ty == "object" {
            "\n                  properties:\n                    foo:\n                      type: integer"
        } else {
            ""
        };
        let schema = format!(
            r#"          type: object
          properties:
            spec:
              type: object
              properties:
                field:
                  type: {ty}{props}
                  x-kubernetes-validations:
                    - rule: {rule:?}"#
        );
        let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(&schema)));
        assert!(!ok, "{rule} accepted");
        let path = "spec.validation.openAPIV3Schema.properties[spec].properties[field].x-kubernetes-validations[0].rule";
        for want in [path, value, detail] {
            assert!(err.contains(want), "{rule}: missing {want:?} in:\n{err}");
        }
    }
}

/// Every example of 000's rule table, with objects that pass and fail.
const TABLE: &str = r#"          type: object
          x-kubernetes-validations:
            - rule: "self.metadata.name.startsWith(self.spec.prefix)"
              message: "name must start with prefix"
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"
                  message: "replica order"
                - rule: "'Available' in self.stateCounts"
                  message: "Available missing"
                - rule: "(size(self.list1) == 0) != (size(self.list2) == 0)"
                  message: "exactly one list"
                - rule: "self.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))"
                  message: "MY_ENV must be letters"
                - rule: "has(self.expired) && self.created + self.ttl < self.expired"
                  message: "expired too early"
                - rule: "self.health.startsWith('ok')"
                  message: "health not ok"
                - rule: "self.widgets.exists(w, w.key == 'x' && w.foo < 10)"
                  message: "no small x widget"
                - rule: "self.set1.all(e, !(e in self.set2))"
                  message: "sets intersect"
                - rule: "size(self.names) == size(self.details) && self.names.all(n, n in self.details)"
                  message: "names and details differ"
                - rule: "size(self.clusters.filter(c, c.name == self.primary)) == 1"
                  message: "primary not in clusters"
              properties:
                prefix: {type: string}
                minReplicas: {type: integer}
                replicas: {type: integer}
                maxReplicas: {type: integer}
                stateCounts:
                  type: object
                  additionalProperties: {type: integer}
                list1: {type: array, items: {type: string}}
                list2: {type: array, items: {type: string}}
                map1:
                  type: object
                  additionalProperties: {type: string}
                  x-kubernetes-validations:
                    - rule: "!('MY_KEY' in self) || self['MY_KEY'].matches('^[a-zA-Z]*$')"
                      message: "MY_KEY must be letters"
                envars:
                  type: array
                  maxItems: 10
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string, maxLength: 20}
                      value: {type: string, maxLength: 20}
                created: {type: string, format: date-time}
                expired: {type: string, format: date-time}
                ttl: {type: string, format: duration}
                health: {type: string}
                widgets:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [key]
                  items:
                    type: object
                    required: [key]
                    properties:
                      key: {type: string}
                      foo: {type: integer}
                intOrString:
                  x-kubernetes-int-or-string: true
                  x-kubernetes-validations:
                    - rule: "type(self) == string ? self == '100%' : self == 1000"
                      message: "100% or 1000"
                set1: {type: array, maxItems: 10, x-kubernetes-list-type: set, items: {type: string, maxLength: 10}}
                set2: {type: array, maxItems: 10, x-kubernetes-list-type: set, items: {type: string, maxLength: 10}}
                names: {type: array, maxItems: 10, x-kubernetes-list-type: set, items: {type: string, maxLength: 10}}
                details:
                  type: object
                  maxProperties: 10
                  additionalProperties: {type: string}
                primary: {type: string, maxLength: 20}
                clusters:
                  type: array
                  maxItems: 10
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string, maxLength: 20}
                components:
                  type: object
                  x-kubernetes-validations:
                    - rule: "self['Widget'].priority < 10"
                      message: "Widget priority"
                  additionalProperties:
                    type: object
                    properties:
                      priority: {type: integer}
                values:
                  type: array
                  maxItems: 100
                  items: {type: integer}
                  x-kubernetes-validations:
                    - rule: "self.all(value, value >= 0 && value < 100)"
                      message: "values out of range"
                kube:
                  type: string
                  x-kubernetes-validations:
                    - rule: "self.startsWith('kube')"
                      message: "not kube"
            status:
              type: object
              properties:
                actual: {type: integer}"#;

fn valid_table_spec() -> Value {
    json!({
        "prefix": "good",
        "minReplicas": 1, "replicas": 2, "maxReplicas": 3,
        "stateCounts": {"Available": 1},
        "list1": ["a"], "list2": [],
        "map1": {"MY_KEY": "abc"},
        "envars": [{"name": "MY_ENV", "value": "abc"}, {"name": "OTHER", "value": "1"}],
        "created": "2024-01-01T00:00:00Z", "ttl": "1h", "expired": "2024-01-02T00:00:00Z",
        "health": "ok-ish",
        "widgets": [{"key": "x", "foo": 5}],
        "intOrString": "100%",
        "set1": ["a"], "set2": ["b"],
        "names": ["n"], "details": {"n": "d"},
        "primary": "c1", "clusters": [{"name": "c1"}, {"name": "c2"}],
        "components": {"Widget": {"priority": 1}},
        "values": [0, 99],
        "kube": "kube-system",
    })
}

#[test]
fn seed_rule_table_examples_with_kubectl() {
    let s = Server::start();
    s.install_crd(&widget_crd(TABLE));
    assert_accepted(&s, "good-1", valid_table_spec());
    let mut int_form = valid_table_spec();
    int_form["intOrString"] = json!(1000);
    assert_accepted(&s, "good-2", int_form);

    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "replicas",
            json!(9),
            r#"spec: Invalid value: "object": replica order"#,
        ),
        ("stateCounts", json!({"Other": 1}), "Available missing"),
        ("list2", json!(["b"]), "exactly one list"),
        (
            "map1",
            json!({"MY_KEY": "a1"}),
            r#"spec.map1: Invalid value: "object": MY_KEY must be letters"#,
        ),
        (
            "envars",
            json!([{"name": "MY_ENV", "value": "a-1"}]),
            "MY_ENV must be letters",
        ),
        (
            "expired",
            json!("2024-01-01T00:30:00Z"),
            "expired too early",
        ),
        ("health", json!("bad"), "health not ok"),
        (
            "widgets",
            json!([{"key": "x", "foo": 10}, {"key": "y", "foo": 1}]),
            "no small x widget",
        ),
        (
            "intOrString",
            json!("50%"),
            r#"spec.intOrString: Invalid value: "": 100% or 1000"#,
        ),
        ("set2", json!(["b", "a"]), "sets intersect"),
        ("details", json!({"m": "d"}), "names and details differ"),
        ("primary", json!("c3"), "primary not in clusters"),
        (
            "components",
            json!({"Widget": {"priority": 10}}),
            r#"spec.components: Invalid value: "object": Widget priority"#,
        ),
        (
            "values",
            json!([1, 100]),
            r#"spec.values: Invalid value: "array": values out of range"#,
        ),
        (
            "kube",
            json!("system"),
            r#"spec.kube: Invalid value: "string": not kube"#,
        ),
    ];
    for (field, value, want) in cases {
        let mut spec = valid_table_spec();
        spec[field] = value;
        assert_rejected(&s, "bad", spec, &[want]);
    }
    // The int form of int-or-string is checked against 1000.
    let mut spec = valid_table_spec();
    spec["intOrString"] = json!(999);
    assert_rejected(&s, "bad", spec, &["100% or 1000"]);
    // has() of an absent field: the rule fails, not errors.
    let mut spec = valid_table_spec();
    spec.as_object_mut().map(|o| o.remove("expired"));
    assert_rejected(&s, "bad", spec, &["expired too early"]);
    // A root rule sees metadata.name.
    let mut spec = valid_table_spec();
    spec["prefix"] = json!("other");
    assert_rejected(
        &s,
        "bad",
        spec,
        &[r#"<nil>: Invalid value: "object": name must start with prefix"#],
    );
}

/// The escaping table and the scope examples of 000.
#[test]
fn escaped_property_names_and_scopes() {
    let s = Server::start();
    let schema = r#"          type: object
          x-kubernetes-validations:
            - rule: "!has(self.status) || self.status.actual <= self.spec.maxDesired"
              message: "actual above maxDesired"
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.__namespace__ > 0"
                  message: "namespace"
                - rule: "self.x__dash__prop > 0"
                  message: "x-prop"
                - rule: "self.redact__underscores__d > 0"
                  message: "redact__d"
                - rule: "self.__if__ == 'yes'"
                  message: "if"
              properties:
                namespace: {type: integer}
                x-prop: {type: integer}
                redact__d: {type: integer}
                if: {type: string}
                maxDesired: {type: integer}
                string:
                  type: string
                  x-kubernetes-validations:
                    - rule: "self.startsWith('kube')"
                      message: "string"
            status:
              type: object
              properties:
                actual: {type: integer}"#;
    s.install_crd(&widget_crd(schema));
    let good = json!({"namespace": 1, "x-prop": 1, "redact__d": 1, "if": "yes", "maxDesired": 5, "string": "kube-x"});
    assert_accepted(&s, "w", good.clone());
    for (field, value, want) in [
        ("namespace", json!(0), "namespace"),
        ("x-prop", json!(0), "x-prop"),
        ("redact__d", json!(0), "redact__d"),
        ("if", json!("no"), "if"),
        (
            "string",
            json!("k8s"),
            "spec.string: Invalid value: \"string\": string",
        ),
    ] {
        let mut spec = good.clone();
        spec[field] = value;
        assert_rejected(&s, "w", spec, &[want]);
    }
    // status is set through /status; the root rule then compares it with spec.
    let (ok, _, err) = s.kubectl(&[
        "patch",
        "widget",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"actual":6}}"#,
    ]);
    assert!(!ok);
    assert!(err.contains("actual above maxDesired"), "{err}");
    s.kubectl_ok(&[
        "patch",
        "widget",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"actual":5}}"#,
    ]);
}

const TRANSITIONS: &str = r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.immutable == oldSelf.immutable"
                  message: "immutable is immutable"
                - rule: "!has(oldSelf.once) || has(self.once)"
                  message: "once may not be removed"
              properties:
                immutable: {type: string}
                once: {type: string}
                level:
                  type: string
                  enum: ["low", "medium", "high"]
                  x-kubernetes-validations:
                    - rule: "!(self == 'high' && oldSelf == 'low') && !(self == 'low' && oldSelf == 'high')"
                      message: cannot transition directly between 'low' and 'high'
                counter:
                  type: integer
                  x-kubernetes-validations:
                    - rule: "self >= oldSelf"
                      message: "counter may not decrease"
                tags:
                  type: array
                  maxItems: 10
                  x-kubernetes-list-type: set
                  items: {type: string, maxLength: 10}
                  x-kubernetes-validations:
                    - rule: "oldSelf.all(element, element in self)"
                      message: "tags are append-only"
                items:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string}
                      size:
                        type: integer
                        x-kubernetes-validations:
                          - rule: "self >= oldSelf"
                            message: "item size may not shrink"
                optional:
                  type: string
                  maxLength: 20
                  x-kubernetes-validations:
                    - rule: "oldSelf.optMap(o, size(o)).orValue(0) < 4"
                      optionalOldSelf: true
                      message: "grandfathered only when short before"
                    - rule: "oldSelf.orValue('new') in ['OldCase1', 'OldCase2', 'new'] && self in ['OldCase1', 'OldCase2', 'new']"
                      optionalOldSelf: true
                      message: "old cases only"
                      reason: FieldValueForbidden"#;

#[test]
fn transition_rules_and_optional_old_self() {
    let s = Server::start();
    s.install_crd(&widget_crd(TRANSITIONS));
    let base = json!({
        "immutable": "a", "once": "x", "level": "low", "counter": 5,
        "tags": ["a"], "items": [{"name": "i", "size": 3}], "optional": "new",
    });
    // Creation: transition rules do not run (oldSelf has no value) except optionalOldSelf ones.
    assert_accepted(&s, "t", base.clone());
    let cases: Vec<(&str, Value, &str)> = vec![
        ("immutable", json!("b"), r#"spec: Invalid value: "object": immutable is immutable"#),
        ("level", json!("high"), "spec.level: Invalid value: \"string\": cannot transition directly between 'low' and 'high'"),
        ("counter", json!(4), "counter may not decrease"),
        ("tags", json!(["b"]), "tags are append-only"),
        ("items", json!([{"name": "i", "size": 2}]), "spec.items[0].size: Invalid value: \"integer\": item size may not shrink"),
        ("optional", json!("other"), "spec.optional: Forbidden: old cases only"),
    ];
    for (field, value, want) in cases {
        let mut spec = base.clone();
        spec[field] = value;
        assert_rejected(&s, "t", spec, &[want]);
    }
    let mut spec = base.clone();
    spec.as_object_mut().map(|o| o.remove("once"));
    assert_rejected(&s, "t", spec, &["once may not be removed"]);
    // Allowed transitions.
    let mut spec = base.clone();
    spec["level"] = json!("medium");
    spec["counter"] = json!(6);
    spec["tags"] = json!(["a", "b"]);
    spec["items"] = json!([{"name": "i", "size": 4}, {"name": "j", "size": 1}]);
    assert_accepted(&s, "t", spec);
    // optionalOldSelf runs on create: "other" is no old case.
    let mut spec = base.clone();
    spec["optional"] = json!("other");
    assert_rejected(
        &s,
        "t2",
        spec,
        &["spec.optional: Forbidden: old cases only"],
    );
}

const MESSAGES: &str = r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.x <= self.maxLimit"
                  messageExpression: '"x exceeded max limit of " + string(self.maxLimit)'
                - rule: "self.x != 13"
                  message: "static fallback"
                  messageExpression: "self.missing + ' never'"
                - rule: "self.x != 14"
                  messageExpression: "'   '"
                - rule: "self.foo.test.x <= self.maxLimit"
                  fieldPath: ".foo.test.x"
                  message: "foo.test.x too big"
                - rule: "self.x != 15"
                  reason: FieldValueRequired
                  message: "x may not be 15"
                - rule: "self.x != 16"
                  reason: FieldValueDuplicate
                - rule: "self.x != 17"
                  reason: FieldValueInvalid
                  fieldPath: ".testMap['foo']"
                  message: "map path"
              properties:
                x: {type: integer}
                maxLimit: {type: integer}
                missing: {type: string}
                testMap:
                  type: object
                  additionalProperties: {type: string}
                foo:
                  type: object
                  properties:
                    test:
                      type: object
                      properties:
                        x: {type: integer}"#;

#[tokio::test]
async fn message_expression_reason_and_field_path() {
    let s = Server::start();
    s.install_crd(&widget_crd(MESSAGES));
    let base = json!({"x": 1, "maxLimit": 10, "foo": {"test": {"x": 1}}});
    assert_accepted(&s, "m", base.clone());
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"x": 11}),
            r#"spec: Invalid value: "object": x exceeded max limit of 10"#,
        ),
        (
            json!({"x": 13}),
            r#"spec: Invalid value: "object": static fallback"#,
        ),
        (
            json!({"x": 14}),
            r#"spec: Invalid value: "object": failed rule: self.x != 14"#,
        ),
        (
            json!({"foo": {"test": {"x": 11}}}),
            r#"spec.foo.test.x: Invalid value: "object": foo.test.x too big"#,
        ),
        (json!({"x": 15}), "spec: Required value: x may not be 15"),
        (json!({"x": 16}), r#"spec: Duplicate value: "object""#),
        (
            json!({"x": 17}),
            r#"spec.testMap[foo]: Invalid value: "object": map path"#,
        ),
    ];
    for (patch, want) in cases {
        let mut spec = base.clone();
        for (k, v) in patch.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        assert_rejected(&s, "m2", spec, &[want]);
    }
    // The Status over raw HTTP: 422 Invalid with one cause per failed rule.
    let body = json!({
        "apiVersion": "cel.example.com/v1", "kind": "Widget",
        "metadata": {"name": "raw"}, "spec": {"x": 15, "maxLimit": 10},
    });
    let (code, status) = s
        .http_json(
            "POST",
            "/apis/cel.example.com/v1/namespaces/default/widgets",
            "application/json",
            Some(&body),
        )
        .await;
    assert_eq!(code, 422, "{status}");

    assert_eq!(status["reason"], "Invalid");
    let causes = status["details"]["causes"].as_array().expect("causes");
    assert!(
        causes.iter().any(|c| c["reason"] == "FieldValueRequired"
            && c["field"] == "spec"
            && c["message"] == "Required value: x may not be 15"),
        "{causes:?}"
    );
    assert!(
        causes.iter().any(|c| c["reason"] == "FieldValueInvalid"
            && c["message"] == "Invalid value: \"object\": x exceeded max limit of 10"),
        "{causes:?}"
    );
}

/// Widgets whose `name` and `replicas` have no rules yet (the ratcheting tests tighten them).
const LOOSE_NAME_REPLICAS: &str = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                name: {type: string}
                replicas: {type: integer}"#;

#[test]
fn ratcheting_skips_unchanged_invalid_values() {
    let s = Server::start();
    s.install_crd(&widget_crd(LOOSE_NAME_REPLICAS));
    assert_accepted(&s, "r", json!({"name": "UPPER", "replicas": 1}));
    let strict = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                name:
                  type: string
                  x-kubernetes-validations:
                    - rule: "self == self.lowerAscii()"
                      message: "name must be lowercase"
                replicas:
                  type: integer
                  x-kubernetes-validations:
                    - rule: "self < 100"
                      message: "too many"
                counter:
                  type: integer
                  x-kubernetes-validations:
                    - rule: "self >= oldSelf"
                      message: "counter may not decrease""#;
    s.apply_yaml(&widget_crd(strict));
    // The invalid name did not change: ratcheted.
    assert_accepted(&s, "r", json!({"name": "UPPER", "replicas": 2}));
    // Changing it to another invalid value is refused.
    assert_rejected(
        &s,
        "r",
        json!({"name": "OTHER", "replicas": 2}),
        &[r#"spec.name: Invalid value: "string": name must be lowercase"#],
    );
    // New objects get every error.
    assert_rejected(
        &s,
        "r2",
        json!({"name": "UPPER"}),
        &["name must be lowercase"],
    );
}

/// Upstream's validator passes ratcheted failures to `warning.AddWarning`: the write succeeds
/// and the client sees `Warning: 299 - "<field error>"` (kubectl prints `Warning: ...`).
#[tokio::test]
async fn ratcheted_failures_are_warnings() {
    let s = Server::start();
    s.install_crd(&widget_crd(LOOSE_NAME_REPLICAS));
    assert_accepted(&s, "w", json!({"name": "UPPER", "replicas": 1}));
    let strict = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                name:
                  type: string
                  x-kubernetes-validations:
                    - rule: "self == self.lowerAscii()"
                      message: "name must be lowercase"
                replicas:
                  type: integer
                  x-kubernetes-validations:
                    - rule: "self < 100"
                      messageExpression: "'replicas ' + string(self) + ' is too many'""#;
    s.apply_yaml(&widget_crd(strict));
    let text = r#"spec.name: Invalid value: "string": name must be lowercase"#;
    // kubectl: accepted, with the warning on stderr.
    let (ok, err) = apply_widget(&s, "w", json!({"name": "UPPER", "replicas": 2}));
    assert!(ok, "{err}");
    assert!(err.contains(&format!("Warning: {text}")), "{err}");
    // Raw HTTP: one Warning header per ratcheted failure, the text quoted as RFC 7234 wants.
    let path = "/apis/cel.example.com/v1/namespaces/default/widgets/w";
    let patch = |body: Value| serde_json::to_vec(&body).expect("json");
    let merge = [("Content-Type", "application/merge-patch+json")];
    let warnings = |h: &reqwest::header::HeaderMap| -> Vec<String> {
        h.get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect()
    };
    let want = r#"299 - "spec.name: Invalid value: \"string\": name must be lowercase""#;
    let (code, headers, body) = s
        .http(
            "PATCH",
            path,
            &merge,
            Some(patch(json!({"spec": {"replicas": 3}}))),
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(warnings(&headers), [want]);
    // A newly invalid value is an error; the messageExpression words it.
    let (code, _, body) = s
        .http(
            "PATCH",
            path,
            &merge,
            Some(patch(json!({"spec": {"replicas": 200}}))),
        )
        .await;
    assert_eq!(code, 422, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        v["details"]["causes"][0]["message"],
        "Invalid value: \"integer\": replicas 200 is too many"
    );
    // A /status write leaves spec as it is: the spec rules still run, ratcheted.
    let (code, headers, body) = s
        .http(
            "PATCH",
            &format!("{path}/status"),
            &merge,
            Some(patch(json!({"metadata": {"labels": {"a": "b"}}}))),
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(warnings(&headers), [want]);
    // Changing the invalid value to another invalid one is an error, not a warning.
    let (code, headers, _) = s
        .http(
            "PATCH",
            path,
            &merge,
            Some(patch(json!({"spec": {"name": "OTHER"}}))),
        )
        .await;
    assert_eq!(code, 422);
    assert!(warnings(&headers).is_empty());
    // Creates have nothing to ratchet against.
    assert_rejected(&s, "w2", json!({"name": "UPPER"}), &[text]);
}

#[test]
fn blocking_schema_errors_skip_rules() {
    let s = Server::start();
    let schema = r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.name.size() > 3"
                  message: "name too short"
              required: [name]
              properties:
                name: {type: string}"#;
    s.install_crd(&widget_crd(schema));
    assert_rejected(
        &s,
        "b",
        json!({}),
        &[
            "spec.name: Required value",
            r#"<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#,
        ],
    );
    assert_rejected(&s, "b", json!({"name": "ab"}), &["name too short"]);
}

#[test]
fn cost_limits_at_crd_write() {
    let s = Server::start();
    let forbidden = "CEL rule exceeded budget by more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are used)";
    // 000's examples: unbounded list of unbounded strings.
    let unbounded = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: array
                  items:
                    type: string
                  x-kubernetes-validations:
                    - rule: "self.all(x, x.contains('a string'))""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(unbounded)));
    assert!(!ok);
    let want = format!("spec.validation.openAPIV3Schema.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: {forbidden}");
    assert!(err.contains(&want), "missing {want:?} in:\n{err}");
    assert!(
        err.contains("spec.validation.openAPIV3Schema: Forbidden: CEL rule exceeded budget"),
        "{err}"
    );
    // With limits the same rule is accepted, on the list or on its items.
    for schema in [
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: array
                  maxItems: 25
                  items:
                    type: string
                    maxLength: 10
                  x-kubernetes-validations:
                    - rule: "self.all(x, x.contains('a string'))""#,
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: array
                  maxItems: 25
                  items:
                    type: string
                    x-kubernetes-validations:
                      - rule: "self.contains('a string')"
                    maxLength: 10"#,
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: array
                  items:
                    type: integer
                  x-kubernetes-validations:
                    - rule: "self.all(x, x == 5)""#,
    ] {
        let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(schema)));
        assert!(ok, "{schema}\n{err}");
    }
    // Nested lists multiply: the same rule on the inner lists is refused.
    let nested = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: array
                  items:
                    type: array
                    items:
                      type: integer
                    x-kubernetes-validations:
                      - rule: "self.all(x, x == 5)""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(nested)));
    assert!(!ok);
    assert!(err.contains("properties[foo].items.x-kubernetes-validations[0].rule: Forbidden: CEL rule exceeded budget by more than 100x"), "{err}");
    // Transition rules under atomic lists are refused.
    let uncorrelatable = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: array
                  maxItems: 5
                  items:
                    type: string
                    maxLength: 5
                    x-kubernetes-validations:
                      - rule: "self == oldSelf""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(uncorrelatable)));
    assert!(!ok);
    assert!(err.contains(r#"properties[foo].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[foo]"#), "{err}");
    // messageExpression must be a string.
    let bad_message = r#"          type: object
          properties:
            spec:
              type: object
              properties:
                foo:
                  type: integer
                  x-kubernetes-validations:
                    - rule: "self > 0"
                      messageExpression: "42""#;
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(bad_message)));
    assert!(!ok);
    assert!(err.contains("x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"self > 0\""), "{err}");
    assert!(
        err.contains("messageExpression must evaluate to a string"),
        "{err}"
    );
}

#[test]
fn runtime_cost_limits_stop_evaluation() {
    let s = Server::start();
    // Within the static limits, but one call over the per-call limit on a full list.
    let rule = "self.all(a, self.all(b, a == b || a != b))";
    let schema = format!(
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
                items:
                  type: array
                  maxItems: 700
                  items: {{type: integer}}
                  x-kubernetes-validations:
                    - rule: "{rule}"
                      message: "first""#
    );
    s.install_crd(&widget_crd(&schema));
    assert_accepted(&s, "small", json!({"items": [1, 2, 3]}));
    let items: Vec<i64> = (0..700).collect();
    assert_rejected(
        &s,
        "big",
        json!({ "items": items }),
        &[
            r#"spec.items: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: first"#,
        ],
    );
    // Many rules under the per-call limit exhaust the request's budget together.
    let mut rules = String::new();
    for i in 0..20 {
        rules.push_str(&format!(
            "\n                    - rule: \"{rule}\"\n                      message: \"rule {i}\""
        ));
    }
    let schema = format!(
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
                items:
                  type: array
                  maxItems: 250
                  items: {{type: integer}}
                  x-kubernetes-validations:{rules}"#
    );
    s.apply_yaml(&widget_crd(&schema));
    let items: Vec<i64> = (0..250).collect();
    assert_rejected(
        &s,
        "big",
        json!({ "items": items }),
        &[
            r#"spec.items: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run"#,
        ],
    );
}

/// Go's regexp errors and defaults that break the rules, at CRD write through kubectl.
#[test]
fn regex_errors_and_rule_breaking_defaults_refuse_the_crd() {
    let s = Server::start();
    let field = |decl: &str| {
        format!(
            "          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                field:\n{decl}"
        )
    };
    let cases = [
        (
            "                  type: string\n                  pattern: \"a{1001}\"",
            "spec.validation.openAPIV3Schema.properties[spec].properties[field].pattern: Invalid value: \"a{1001}\": must be a valid regular expression, but isn't: error parsing regexp: invalid repeat count: `{1001}`",
        ),
        (
            "                  type: string\n                  x-kubernetes-validations:\n                    - rule: \"self.matches('x++')\"",
            "compilation failed: ERROR: <input>:1:14: invalid matches argument",
        ),
        (
            "                  type: string\n                  x-kubernetes-validations:\n                    - rule: \"self.find('(?<n') == ''\"",
            "program instantiation failed: error parsing regexp: invalid named capture: `(?<n`",
        ),
        (
            "                  type: integer\n                  default: 0\n                  x-kubernetes-validations:\n                    - rule: \"self > 0\"\n                      messageExpression: \"'field must be positive, not ' + string(self)\"",
            "spec.validation.openAPIV3Schema.properties[spec].properties[field].default: Invalid value: \"integer\": field must be positive, not 0",
        ),
    ];
    for (decl, want) in cases {
        let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&widget_crd(&field(decl))));
        assert!(!ok, "{decl} accepted");
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    // Go's syntax the regex crate rejects is accepted; a dynamic pattern fails at run time
    // with Go's error.
    s.install_crd(&widget_crd(
        r#"          type: object
          properties:
            spec:
              type: object
              x-kubernetes-validations:
                - rule: "self.s.matches(self.p)"
                  message: "no match"
              properties:
                s: {type: string, maxLength: 20, pattern: "^[[]x{abc}\\Q*\\E$"}
                p: {type: string, maxLength: 20}"#,
    ));
    assert_accepted(&s, "w1", json!({"s": "[x{abc}*", "p": "^\\[x"}));
    assert_rejected(
        &s,
        "w2",
        json!({"s": "[x{abc}*", "p": "a{2}{3}"}),
        &["spec: Invalid value: \"object\": error parsing regexp: invalid nested repetition operator: `{2}{3}` evaluating rule: no match"],
    );
}
