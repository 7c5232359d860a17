//! Typed decoding of built-in kinds by their published schemas: the fields a Go struct has no
//! place for, found and removed as kube-apiserver's strict decoder (sigs.k8s.io/json with
//! `DisallowUnknownFields`) reports them, so `fieldValidation` can refuse them (Strict), warn
//! about them (Warn) or drop them silently (Ignore); they are never stored.
//!
//! The published v3 definitions are the source of truth (no hand-written field lists): an
//! object with `properties` is a struct, its other fields unknown; `additionalProperties` with a
//! schema is a map whose values are walked; `items` a slice. A definition with neither (JSON,
//! IntOrString, Quantity, Time, FieldsV1) is opaque: decoded by its own UnmarshalJSON, which
//! the strict decoder does not look into. apiextensions' JSONSchemaPropsOr{Array,Bool,
//! StringArray} decode the schema they hold leniently: unknown fields there are dropped
//! without a report, as upstream's custom UnmarshalJSON drops them.
//!
//! Paths are the decoder's field stack, as its messages print them: keys joined with `.`
//! (map keys too), indices as `[i]`.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// How deep a value is walked (the JSON decoders refuse deeper nesting anyway).
const MAX_DEPTH: usize = 128;

/// The unknown fields of `value` read as the built-in definition `definition` (e.g.
/// `io.k8s.api.core.v1.Namespace`), removed from it, in key order, depth first. An unknown
/// definition name reports nothing.
pub fn prune_unknown_fields(definition: &str, value: &mut Value) -> Vec<String> {
    let defs = super::builtin_v3();
    let mut found = vec![];
    if let Some(schema) = defs.get(definition) {
        walk(defs, schema, value, &mut String::new(), &mut found, true, 0);
    }
    found
}

/// The definition name a schema refers to through `$ref` (also wrapped in a one-element
/// `allOf`, as the v3 documents write references with siblings).
fn ref_name(schema: &Value) -> Option<&str> {
    let target = schema
        .get("$ref")
        .or_else(|| match schema.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => all[0].get("$ref"),
            _ => None,
        })
        .and_then(Value::as_str)?;
    Some(target.rsplit('/').next().unwrap_or(target))
}

/// The definition a schema refers to, or the schema itself.
pub(crate) fn resolve<'a>(defs: &'a Map<String, Value>, schema: &'a Value) -> Option<&'a Value> {
    let mut s = schema;
    for _ in 0..8 {
        match ref_name(s) {
            Some(name) => s = defs.get(name)?,
            None => return Some(s),
        }
    }
    None
}

/// apiextensions' `JSONSchemaPropsOr{Array,Bool,StringArray}` have their own UnmarshalJSON,
/// which decodes the schema they may hold with the lenient decoder: unknown fields in it (and
/// below) are dropped without a report, whatever fieldValidation says.
const LENIENT_WRAPPERS: [&str; 3] = [
    "JSONSchemaPropsOrArray",
    "JSONSchemaPropsOrBool",
    "JSONSchemaPropsOrStringArray",
];
const JSON_SCHEMA_PROPS: &str =
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";

#[allow(clippy::too_many_arguments)]
fn walk(
    defs: &Map<String, Value>,
    schema: &Value,
    value: &mut Value,
    path: &mut String,
    found: &mut Vec<String>,
    report: bool,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if ref_name(schema).is_some_and(|n| LENIENT_WRAPPERS.iter().any(|w| n.ends_with(w))) {
        // A schema (object) or, for OrArray, a list of schemas; booleans and strings as they are.
        let Some(props) = defs.get(JSON_SCHEMA_PROPS) else {
            return;
        };
        match value {
            Value::Object(_) => walk(defs, props, value, path, found, false, depth + 1),
            Value::Array(items) => {
                for v in items.iter_mut().filter(|v| v.is_object()) {
                    walk(defs, props, v, path, found, false, depth + 1);
                }
            }
            _ => {}
        }
        return;
    }
    let Some(schema) = resolve(defs, schema) else {
        return;
    };
    match value {
        Value::Object(obj) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                // Keys in order (serde_json's maps are sorted, as Go's encoding/json writes
                // them, so this is the order of a body kubectl or client-go sent).
                let unknown: Vec<String> = obj
                    .keys()
                    .filter(|k| !props.contains_key(k.as_str()))
                    .cloned()
                    .collect();
                for (k, v) in obj.iter_mut() {
                    match props.get(k.as_str()) {
                        Some(p) => descend(defs, p, v, path, k, found, report, depth),
                        None if report => found.push(if path.is_empty() {
                            k.clone()
                        } else {
                            format!("{path}.{k}")
                        }),
                        None => {}
                    }
                }
                for k in unknown {
                    obj.remove(&k);
                }
            } else if let Some(values) =
                schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, v) in obj.iter_mut() {
                    descend(defs, values, v, path, k, found, report, depth);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                for (i, v) in items.iter_mut().enumerate() {
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    walk(defs, item, v, path, found, report, depth + 1);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

#[allow(clippy::too_many_arguments)]
fn descend(
    defs: &Map<String, Value>,
    schema: &Value,
    value: &mut Value,
    path: &mut String,
    key: &str,
    found: &mut Vec<String>,
    report: bool,
    depth: usize,
) {
    // One path buffer for the whole walk: pushed and truncated, not copied per field.
    let len = path.len();
    if len > 0 {
        path.push('.');
    }
    path.push_str(key);
    walk(defs, schema, value, path, found, report, depth + 1);
    path.truncate(len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn namespace_unknown_fields_are_found_and_removed() {
        let mut ns = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "a", "labels": {"x": "y"}, "bogus3": 1,
                         "ownerReferences": [{"name": "o", "kind": "K", "apiVersion": "v1", "uid": "u", "extra": true}]},
            "spec": {"finalizers": ["kubernetes"], "bogus": true},
            "bogus2": true,
        });
        let found = prune_unknown_fields("io.k8s.api.core.v1.Namespace", &mut ns);
        assert_eq!(
            found,
            [
                "bogus2",
                "metadata.bogus3",
                "metadata.ownerReferences[0].extra",
                "spec.bogus"
            ]
        );
        assert_eq!(
            ns,
            json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "a", "labels": {"x": "y"},
                             "ownerReferences": [{"name": "o", "kind": "K", "apiVersion": "v1", "uid": "u"}]},
                "spec": {"finalizers": ["kubernetes"]},
            })
        );
    }

    #[test]
    fn crd_schemas_are_structs_and_their_maps_are_walked() {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "a.b.c"},
            "spec": {"group": "b.c", "scope": "Namespaced",
                     "names": {"plural": "a", "kind": "A"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {
                            "type": "object", "readOnly": true,
                            "x-kubernetes-validations": [{"rule": "true", "bogus": 1}],
                            // items and additionalProperties have lenient custom unmarshalers.
                            "properties": {"spec": {"type": "object", "writeOnly": true,
                                "items": {"type": "string", "dropped": true,
                                          "properties": {"x": {"type": "string", "gone": 1}}}}}}}}]},
        });
        let found = prune_unknown_fields(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
            &mut crd,
        );
        assert_eq!(
            found,
            [
                "spec.versions[0].schema.openAPIV3Schema.properties.spec.writeOnly",
                "spec.versions[0].schema.openAPIV3Schema.readOnly",
                "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].bogus",
            ]
        );
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert!(schema.get("readOnly").is_none());
        // Under items (a lenient custom unmarshaler): dropped, not reported.
        assert_eq!(
            schema["properties"]["spec"]["items"],
            json!({"type": "string", "properties": {"x": {"type": "string"}}})
        );
    }

    #[test]
    fn unknown_definitions_and_deep_values_are_left_alone() {
        let mut v = json!({"a": 1});
        assert!(prune_unknown_fields("no.such.Kind", &mut v).is_empty());
        let mut deep = json!(1);
        for _ in 0..1000 {
            deep = json!({"metadata": {"labels": {}}, "spec": deep});
        }
        let _ = prune_unknown_fields("io.k8s.api.core.v1.Namespace", &mut deep);
    }
}
