//! Schema transformations of apiextensions-apiserver's OpenAPI publishing, on JSON values.

use crate::{Flavor, OBJECT_META, OBJECT_METADATA_DESCRIPTION};
use serde_json::{json, Map, Value};

/// Keys a structural schema keeps when published (upstream converts the CRD schema into its
/// `Structural` type and back, which drops everything else: `example`, `externalDocs`, `id`,
/// `$schema`, `definitions`, ...). Falsy booleans and empty strings or lists are omitted too.
const KEPT: &[&str] = &[
    "type",
    "title",
    "description",
    "default",
    "nullable",
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// The schema as its structural form publishes it.
pub(crate) fn structural(s: &Value) -> Value {
    let Some(o) = s.as_object() else {
        return s.clone();
    };
    let mut out = Map::new();
    for (k, v) in o {
        match k.as_str() {
            // `default` may legitimately be false, "", [] or null-free values.
            "default" => {
                out.insert(k.clone(), v.clone());
            }
            "properties" => {
                if let Some(p) = v.as_object() {
                    let m: Map<String, Value> =
                        p.iter().map(|(k, v)| (k.clone(), structural(v))).collect();
                    out.insert(k.clone(), Value::Object(m));
                }
            }
            "items" | "not" if v.is_object() => {
                out.insert(k.clone(), structural(v));
            }
            "additionalProperties" => {
                let v = if v.is_object() {
                    structural(v)
                } else {
                    v.clone()
                };
                out.insert(k.clone(), v);
            }
            "allOf" | "anyOf" | "oneOf" => {
                if let Some(a) = v.as_array().filter(|a| !a.is_empty()) {
                    out.insert(k.clone(), Value::Array(a.iter().map(structural).collect()));
                }
            }
            _ if KEPT.contains(&k.as_str()) && !is_empty(v) => {
                out.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// Calls `f` on every structural child (properties, items, additionalProperties), as the
/// upstream visitor walks a structural schema (value validations are not entered).
fn for_children(s: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    let Some(o) = s.as_object_mut() else { return };
    if let Some(Value::Object(p)) = o.get_mut("properties") {
        for v in p.values_mut() {
            f(v);
        }
    }
    if let Some(v @ Value::Object(_)) = o.get_mut("items") {
        f(v);
    }
    if let Some(v @ Value::Object(_)) = o.get_mut("additionalProperties") {
        f(v);
    }
}

/// `x-kubernetes-int-or-string: true` unfolds to `anyOf: [{type: integer}, {type: string}]`
/// (or, when an `anyOf` exists, that pattern is prepended to `allOf`), as upstream `Unfold`.
pub fn unfold(s: &mut Value) {
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        let pattern = json!([{"type": "integer"}, {"type": "string"}]);
        if let Some(o) = s.as_object_mut() {
            if o.contains_key("anyOf") {
                let mut all = vec![json!({ "anyOf": pattern })];
                if let Some(Value::Array(a)) = o.remove("allOf") {
                    all.extend(a);
                }
                o.insert("allOf".into(), Value::Array(all));
            } else {
                o.insert("anyOf".into(), pattern);
            }
        }
    }
    for_children(s, &mut unfold);
}

/// The seed's lossy v2 conversion (upstream `ToStructuralOpenAPIV2`): junctors dropped;
/// `nullable: true` drops type, nullable, items and properties (and the field from its parent's
/// `required`); preserved unknown fields drop items and properties; an array without items loses
/// its type.
pub fn to_v2_schema(s: &mut Value) {
    let Some(o) = s.as_object_mut() else { return };
    for k in ["allOf", "anyOf", "oneOf", "not"] {
        o.remove(k);
    }
    if o.get("nullable") == Some(&Value::Bool(true)) {
        for k in ["type", "nullable", "items", "properties"] {
            o.remove(k);
        }
    }
    if o.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        o.remove("items");
        o.remove("properties");
    }
    if !o.contains_key("items") && o.get("type").and_then(Value::as_str) == Some("array") {
        o.remove("type");
    }
    let nullable = |v: &Value| v.get("nullable") == Some(&Value::Bool(true));
    let nullable_props: Vec<String> = o
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, v)| nullable(v))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let nullable_additional = o.get("additionalProperties").is_some_and(nullable);
    if nullable_additional {
        o.remove("required");
    } else if !nullable_props.is_empty() {
        if let Some(Value::Array(req)) = o.get_mut("required") {
            req.retain(|r| {
                !r.as_str()
                    .is_some_and(|r| nullable_props.iter().any(|p| p == r))
            });
            if req.is_empty() {
                o.remove("required");
            }
        }
    }
    for_children(s, &mut to_v2_schema);
}

/// Embedded resources (`x-kubernetes-embedded-resource: true`) get apiVersion, kind and an
/// ObjectMeta reference, and require kind and apiVersion (upstream `addEmbeddedProperties`).
pub(crate) fn add_embedded_properties(s: &mut Value, flavor: Flavor) {
    for_children(s, &mut |c| add_embedded_properties(c, flavor));
    let Some(o) = s.as_object_mut() else { return };
    let is = |k: &str| o.get(k) == Some(&Value::Bool(true));
    // In v2 such properties would make kubectl reject the fields that are preserved.
    if flavor == Flavor::V2 && is("x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if !is("x-kubernetes-embedded-resource") {
        return;
    }
    let props = o.entry("properties").or_insert_with(|| json!({}));
    if let Some(p) = props.as_object_mut() {
        p.insert("apiVersion".into(), json!({"type": "string", "description": "apiVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"}));
        p.insert("kind".into(), json!({"type": "string", "description": "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}));
        let mut meta = flavor.ref_to(OBJECT_META);
        meta["description"] = json!(OBJECT_METADATA_DESCRIPTION);
        p.insert("metadata".into(), meta);
    }
    let req = o.entry("required").or_insert_with(|| json!([]));
    if let Some(r) = req.as_array_mut() {
        for k in ["kind", "apiVersion"] {
            if !r.iter().any(|v| v == k) {
                r.push(json!(k));
            }
        }
    }
}

/// OpenAPI v3 ignores the siblings of a `$ref`: a reference with siblings (a description, a
/// default) is wrapped as `allOf: [{$ref}]`, as kube-openapi's builder3 does.
pub fn wrap_refs(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.len() > 1 {
                if let Some(r) = o.remove("$ref") {
                    o.insert("allOf".into(), json!([{ "$ref": r }]));
                }
            }
            for c in o.values_mut() {
                wrap_refs(c);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(wrap_refs),
        _ => {}
    }
}

/// The v2 form of a v3 definition: `allOf: [{$ref}]` back to a `$ref` with siblings, and refs to
/// `#/definitions/`.
pub(crate) fn unwrap_refs_for_v2(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let single_ref = o
                .get("allOf")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 1)
                .and_then(|a| a[0].as_object())
                .filter(|r| r.len() == 1)
                .and_then(|r| r.get("$ref"))
                .cloned();
            if let Some(r) = single_ref {
                o.remove("allOf");
                o.insert("$ref".into(), r);
            }
            if let Some(Value::String(r)) = o.get_mut("$ref") {
                if let Some(name) = r.strip_prefix(crate::V3_REF_PREFIX) {
                    *r = format!("{}{name}", crate::V2_REF_PREFIX);
                }
            }
            for c in o.values_mut() {
                unwrap_refs_for_v2(c);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(unwrap_refs_for_v2),
        _ => {}
    }
}

/// Calls `f` with every `$ref` in `v`.
pub(crate) fn for_each_ref(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                f(r);
            }
            for c in o.values() {
                for_each_ref(c, f);
            }
        }
        Value::Array(a) => a.iter().for_each(|c| for_each_ref(c, f)),
        _ => {}
    }
}
