//! core/v1 ConfigMap: `ValidateConfigMap`, `ValidateConfigMapUpdate`.

pub use crate::data::{config_map_key_errors, MAX_SIZE};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{Map, Value};

fn bag<'a>(obj: &'a Value, field: &str) -> Option<&'a Map<String, Value>> {
    obj.get(field).and_then(Value::as_object)
}

/// The bytes a value holds: a `data` string's UTF-8 bytes, a `binaryData` value's decoded
/// bytes (base64: three bytes per four characters, less padding).
fn size(field: &str, v: &Value) -> usize {
    let s = v.as_str().unwrap_or_default();
    if field == "binaryData" {
        let pad = s.bytes().rev().take_while(|b| *b == b'=').count().min(2);
        (s.len() * 3 / 4).saturating_sub(pad)
    } else {
        s.len()
    }
}

/// What decoding into the Go type does to `binaryData`: values re-encoded as Go writes them
/// (see [`crate::secret::canonical_base64`]).
pub fn canonicalize(obj: &mut Value) {
    if let Some(b) = obj.get_mut("binaryData").and_then(Value::as_object_mut) {
        crate::data::canonical_base64(b);
    }
}

/// `ValidateConfigMap` without the ObjectMeta part: keys of `data` and `binaryData`, no key in
/// both, at most 1 MiB in all. Keys are checked in sorted order (upstream walks Go maps, in no
/// order).
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let mut total = 0usize;
    let binary = bag(obj, "binaryData");
    for field in ["data", "binaryData"] {
        let Some(values) = bag(obj, field) else {
            continue;
        };
        let path = FieldPath::new(field);
        for (key, value) in values {
            for msg in config_map_key_errors(key) {
                errs.push(FieldError::invalid(&path.key(key), key.as_str(), msg));
            }
            if field == "data" && binary.is_some_and(|b| b.contains_key(key)) {
                errs.push(FieldError::invalid(
                    &path.key(key),
                    key.as_str(),
                    "duplicate of key present in binaryData",
                ));
            }
            total += size(field, value);
        }
    }
    if total > MAX_SIZE {
        // Upstream reports it at `field.NewPath("")` (the whole object), which prints as `[]`.
        errs.push(FieldError::too_long(&FieldPath::new("[]"), MAX_SIZE));
    }
    errs
}

/// `ValidateConfigMapUpdate` without the ObjectMeta part: an immutable ConfigMap keeps its data,
/// its binary data and its immutability; then the new object as on create.
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = vec![];
    let immutable = |v: &Value| v.get("immutable").and_then(Value::as_bool) == Some(true);
    if immutable(old) {
        const MSG: &str = "field is immutable when `immutable` is set";
        if !immutable(new) {
            errs.push(FieldError::forbidden(&FieldPath::new("immutable"), MSG));
        }
        // Absent and empty are the same map to Go's DeepEqual only when both are nil: compare
        // as upstream decodes them (an empty object decodes to an empty, non-nil map).
        for field in ["data", "binaryData"] {
            if new.get(field) != old.get(field) {
                errs.push(FieldError::forbidden(&FieldPath::new(field), MSG));
            }
        }
    }
    errs.extend(validate(new));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn keys() {
        assert!(config_map_key_errors("key.name").is_empty());
        assert!(config_map_key_errors("KEY_NAME-1").is_empty());
        assert_eq!(config_map_key_errors(".."), ["must not be '..'"]);
        assert_eq!(config_map_key_errors("..a"), ["must not start with '..'"]);
        assert_eq!(config_map_key_errors("."), ["must not be '.'"]);
        assert_eq!(config_map_key_errors("a b").len(), 1);
        assert_eq!(
            config_map_key_errors(&"a".repeat(254)),
            ["must be no more than 253 characters"]
        );
    }

    #[test]
    fn create() {
        let cm = json!({"data": {"a b": "x", "dup": "1"}, "binaryData": {"dup": "AA=="}});
        assert_eq!(
            messages(&validate(&cm)),
            [
                "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[dup]: Invalid value: \"dup\": duplicate of key present in binaryData",
            ]
        );
        let big = json!({"data": {"a": "x".repeat(MAX_SIZE), "b": "y"}});
        assert_eq!(
            messages(&validate(&big)),
            ["[]: Too long: may not be more than 1048576 bytes"]
        );
        assert!(validate(&json!({"data": {"a": "x".repeat(MAX_SIZE)}})).is_empty());
        assert_eq!(size("binaryData", &json!("AAAA")), 3);
        assert_eq!(size("binaryData", &json!("AA==")), 1);
        assert_eq!(size("binaryData", &json!("AAA=")), 2);
    }

    #[test]
    fn immutable() {
        let old = json!({"immutable": true, "data": {"a": "1"}});
        assert!(validate_update(&old.clone(), &old).is_empty());
        let new = json!({"immutable": false, "data": {"a": "2"}, "binaryData": {"b": "AA=="}});
        assert_eq!(
            messages(&validate_update(&new, &old)),
            [
                "immutable: Forbidden: field is immutable when `immutable` is set",
                "data: Forbidden: field is immutable when `immutable` is set",
                "binaryData: Forbidden: field is immutable when `immutable` is set",
            ]
        );
        // Mutable ones change freely, and may become immutable.
        let old = json!({"data": {"a": "1"}});
        assert!(validate_update(&json!({"immutable": true, "data": {"a": "2"}}), &old).is_empty());
    }
}
