//! OpenAPI value validation of custom resources (upstream `pkg/apiserver/validation` on top of
//! kube-openapi's validator), with kube-apiserver's field errors and wording.

mod engine;
pub mod formats;
mod node;

use crate::structural::Structural;
use crest_api::validation::REPEATED_VALUE_BUDGET;
use crest_api::{ErrorType, FieldError, FieldErrors, FieldPath};
use crest_gofmt::{go_float, go_quote};
use engine::{Bad, Engine, Kind, Path, RawError};
use node::Node;
use serde_json::Value;
use std::collections::HashSet;

/// Validates `obj` against `s` (upstream `ValidateCustomResource`). Field paths are appended to
/// `path` (use [`FieldPath::root`] for a whole object).
pub fn validate(obj: &Value, s: &Structural, path: &FieldPath) -> FieldErrors {
    let mut e = Engine::new();
    e.schema(Node::S(s), obj, &Path::ROOT, None);
    to_field_errors(e.errs, path)
}

/// Validates an update with ratcheting (upstream `ValidateCustomResourceUpdate` with
/// `CRDValidationRatcheting`): errors inside a subtree whose value is unchanged from the
/// correlated old value are dropped. Values correlate through properties, additionalProperties
/// and items of `x-kubernetes-list-type: map` lists (by key); junctors (`allOf`, `anyOf`,
/// `oneOf`, `not`), `required` and other errors reported on a changed parent are not ratcheted.
pub fn validate_update(new: &Value, old: &Value, s: &Structural, path: &FieldPath) -> FieldErrors {
    let mut e = Engine::new();
    e.schema(Node::S(s), new, &Path::ROOT, Some(old));
    to_field_errors(e.errs, path)
}

/// The `format`s in `schema` (an `openAPIV3Schema` JSON, walked recursively) that Kubernetes
/// `major.minor` does not recognize for strings (upstream `GetUnrecognizedFormats`); each is
/// reported once, in schema order.
pub fn unrecognized_formats(schema: &Value, major: u32, minor: u32) -> Vec<String> {
    let mut out = Vec::new();
    collect_formats(schema, major, minor, &mut out, 0);
    out
}

fn collect_formats(s: &Value, major: u32, minor: u32, out: &mut Vec<String>, depth: usize) {
    let Some(m) = s.as_object() else {
        return;
    };
    if depth > 256 {
        return;
    }
    if let (Some(Value::String(f)), Some(Value::String(t))) = (m.get("format"), m.get("type")) {
        if !f.is_empty()
            && t == "string"
            && !formats::supported_at(f, major, minor)
            && !out.contains(f)
        {
            out.push(f.clone());
        }
    }
    for key in ["items", "not", "additionalProperties"] {
        if let Some(v) = m.get(key) {
            collect_formats(v, major, minor, out, depth + 1);
        }
    }
    if let Some(Value::Object(p)) = m.get("properties") {
        for v in p.values() {
            collect_formats(v, major, minor, out, depth + 1);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = m.get(key) {
            for v in a {
                collect_formats(v, major, minor, out, depth + 1);
            }
        }
    }
}

/// Upstream's `kubeOpenAPIResultToFieldErrors`, after kube-openapi's de-duplication of
/// identical messages.
fn to_field_errors(errs: Vec<RawError>, base: &FieldPath) -> FieldErrors {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(errs.len());
    let mut listed = 0usize;
    for e in &errs {
        if errs.len() > 1 && !seen.insert(e.message.as_str()) {
            continue;
        }
        out.push(convert(e, base, &mut listed));
    }
    out
}

fn bad_value(b: &Bad) -> (Value, Option<String>) {
    match b {
        Bad::None => (Value::from(""), None),
        Bad::Str(s) => (Value::from(s.as_str()), Some(go_quote(s))),
        Bad::Int(i) => (Value::from(*i), None),
        Bad::Json(Value::Number(n)) => match n.as_i64() {
            Some(i) => (Value::from(i), None),
            None => {
                let f = n.as_f64().unwrap_or(0.0);
                (Value::Number(n.clone()), Some(go_float(f)))
            }
        },
        Bad::Json(Value::String(s)) => (Value::from(s.as_str()), Some(go_quote(s))),
        Bad::Json(v) => (v.clone(), None),
    }
}

fn make(
    t: ErrorType,
    field: FieldPath,
    value: Option<(Value, Option<String>)>,
    detail: String,
) -> FieldError {
    let (value, value_repr) = match value {
        Some((v, r)) => (Some(v), r),
        None => (None, None),
    };
    FieldError {
        error_type: t,
        field,
        value,
        value_repr,
        detail,
    }
}

/// `listed`: how many bytes of enum values the errors so far listed.
fn convert(e: &RawError, base: &FieldPath, listed: &mut usize) -> FieldError {
    if let Kind::Composite = e.kind {
        return make(
            ErrorType::Invalid,
            base.clone(),
            Some(bad_value(&Bad::None)),
            e.message.clone(),
        );
    }
    let field = if e.name.is_empty() || e.name == "." {
        base.clone()
    } else {
        base.child(e.name.strip_prefix('.').unwrap_or(&e.name))
    };
    match &e.kind {
        Kind::Required => make(ErrorType::Required, field, None, String::new()),
        Kind::Enum { values, size } => {
            // Upstream lists the enum in every failing value's error. After the first list,
            // lists are shown only while they stay within a budget, then left out (upstream's
            // form without supported values), so 30,000 bad values of a 30,000-value enum are
            // not 30,000 copies of the enum.
            let show = *listed == 0 || *listed + size <= REPEATED_VALUE_BUDGET;
            let detail = if values.is_empty() || !show {
                String::new()
            } else {
                *listed += size;
                let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
                format!("supported values: {}", quoted.join(", "))
            };
            make(
                ErrorType::NotSupported,
                field,
                Some(bad_value(&e.value)),
                detail,
            )
        }
        Kind::TooLong(max) => {
            let detail = match max {
                m if *m < 0 => "value is too long".to_string(),
                1 => "may not be more than 1 byte".to_string(),
                m => format!("may not be more than {m} bytes"),
            };
            make(ErrorType::TooLong, field, Some(bad_value(&e.value)), detail)
        }
        Kind::TooMany { actual, max } => {
            let detail = match max {
                m if *m < 0 => "has too many items".to_string(),
                1 => "must have at most 1 item".to_string(),
                m => format!("must have at most {m} items"),
            };
            let value = (*actual >= 0).then(|| (Value::from(*actual), None));
            make(ErrorType::TooMany, field, value, detail)
        }
        Kind::InvalidType => make(
            ErrorType::TypeInvalid,
            field,
            Some(bad_value(&e.value)),
            e.message.clone(),
        ),
        Kind::Invalid | Kind::Composite => make(
            ErrorType::Invalid,
            field,
            Some(bad_value(&e.value)),
            e.message.clone(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(schema: Value, obj: Value) -> Vec<String> {
        let s = Structural::from_json(&schema).unwrap();
        validate(&obj, &s, &FieldPath::root())
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn kube_apiserver_wording() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string", "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        }}}});
        assert_eq!(
            errs(schema.clone(), json!({"spec": {"cronSpec": "* * * *", "replicas": 15}})),
            vec![
                r#"spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#,
                "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
            ]
        );
        assert_eq!(
            errs(schema, json!({"spec": {"replicas": "string"}})),
            vec![
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
            ]
        );
    }

    #[test]
    fn root_and_additional_properties_paths() {
        let e = errs(
            json!({"type": "object", "required": ["a"], "additionalProperties": {"type": "string"}}),
            json!({"b": 1}),
        );
        assert_eq!(
            e,
            vec![
                r#"b: Invalid value: "integer": .b in body must be of type string: "integer""#,
                "a: Required value",
            ]
        );
        assert_eq!(
            errs(json!({"type": "object"}), json!([])),
            vec![r#"<nil>: Invalid value: "array":  in body must be of type object: "array""#]
        );
    }

    #[test]
    fn limits_and_enum() {
        let e = errs(
            json!({"properties": {
                "s": {"type": "string", "maxLength": 1},
                "l": {"type": "array", "maxItems": 1, "minItems": 0},
                "e": {"enum": ["a", 1]},
                "f": {"type": "number", "maximum": 1.5},
                "m": {"type": "integer", "multipleOf": 3},
            }}),
            json!({"s": "ab", "l": [1, 2], "e": "x", "f": 2.5, "m": 4}),
        );
        assert_eq!(
            e,
            vec![
                r#"e: Unsupported value: "x": supported values: "a", "1""#,
                "f: Invalid value: 2.5: f in body should be less than or equal to 1.5",
                "l: Too many: 2: must have at most 1 item",
                "m: Invalid value: 4: m in body should be a multiple of 3",
                "s: Too long: may not be more than 1 byte",
            ]
        );
    }

    #[test]
    fn formats_and_unrecognized() {
        let e = errs(
            json!({"properties": {"t": {"type": "string", "format": "date-time"}, "u": {"type": "string", "format": "no-such"}}}),
            json!({"t": "yesterday", "u": "x"}),
        );
        assert_eq!(
            e,
            vec![
                r#"t: Invalid value: "yesterday": t in body must be of type date-time: "yesterday""#
            ]
        );
        let f = unrecognized_formats(
            &json!({"properties": {"a": {"type": "string", "format": "no-such"}, "b": {"type": "string", "format": "uuid"}}}),
            1,
            32,
        );
        assert_eq!(f, vec!["no-such"]);
    }

    #[test]
    fn ratcheting() {
        let s = Structural::from_json(&json!({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 1},
            "b": {"type": "string", "maxLength": 1},
        }}))
        .unwrap();
        let old = json!({"a": "xx", "b": "y"});
        assert!(
            validate_update(&json!({"a": "xx", "b": "z"}), &old, &s, &FieldPath::root()).is_empty()
        );
        assert_eq!(
            validate_update(&json!({"a": "xx", "b": "zz"}), &old, &s, &FieldPath::root()).len(),
            1
        );
    }
}

#[cfg(test)]
mod ratcheting_tests {
    use super::*;
    use serde_json::json;

    fn update(schema: Value, new: Value, old: Value) -> Vec<String> {
        let s = Structural::from_json(&schema).unwrap();
        validate_update(&new, &old, &s, &FieldPath::root())
            .iter()
            .map(|e| e.field.to_string())
            .collect()
    }

    fn list_schema(list_type: &str) -> Value {
        json!({"type": "object", "properties": {"l": {
            "type": "array", "x-kubernetes-list-type": list_type, "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer", "maximum": 10}}},
        }}})
    }

    #[test]
    fn map_lists_correlate_by_key() {
        let old = json!({"l": [{"k": "a", "v": 100}]});
        // The old item moved and an item was added: the unchanged item still ratchets.
        let new = json!({"l": [{"k": "b", "v": 1}, {"k": "a", "v": 100}]});
        assert!(update(list_schema("map"), new, old.clone()).is_empty());
        let new = json!({"l": [{"k": "b", "v": 11}, {"k": "a", "v": 100}]});
        assert_eq!(update(list_schema("map"), new, old), vec!["l[0].v"]);
    }

    #[test]
    fn sets_and_atomic_lists_ratchet_only_as_a_whole() {
        let old = json!({"l": [{"k": "a", "v": 100}]});
        assert!(update(list_schema("atomic"), old.clone(), old.clone()).is_empty());
        let new = json!({"l": [{"k": "a", "v": 100}, {"k": "b", "v": 1}]});
        assert_eq!(update(list_schema("atomic"), new, old), vec!["l[0].v"]);
    }

    #[test]
    fn required_and_junctors_are_not_ratcheted_on_changed_parents() {
        let schema = json!({"type": "object", "properties": {"spec": {
            "type": "object", "required": ["must"],
            "properties": {"a": {"type": "string"}, "n": {"type": "integer", "anyOf": [{"minimum": 5}]}},
        }}});
        let old = json!({"spec": {"a": "x", "n": 1}});
        assert!(update(schema.clone(), old.clone(), old.clone()).is_empty());
        let new = json!({"spec": {"a": "y", "n": 1}});
        // n itself is unchanged, so its anyOf failure ratchets; the changed spec reports required.
        assert_eq!(update(schema, new, old), vec!["spec.must"]);
    }

    #[test]
    fn unknown_fields_make_values_unequal() {
        let schema = json!({"type": "object", "properties": {"spec": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": true, "maxProperties": 1,
        }}});
        let old = json!({"spec": {"a": 1, "b": 2}});
        // No schema for a and b: upstream cannot correlate them, so spec never ratchets.
        assert_eq!(update(schema, old.clone(), old), vec!["spec"]);
    }
}
