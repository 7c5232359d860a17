//! The structural form of an `openAPIV3Schema` (upstream `schema.Structural` and `NewStructural`).
//!
//! Conversion accepts any schema, structural or not: value validations under logical junctors
//! (`allOf`, `anyOf`, `oneOf`, `not`) are kept as [`NestedValueValidation`] so that validation
//! can evaluate them, and the keywords a structural schema forbids there are kept in
//! `forbidden_generics`/`forbidden_extensions` for whoever checks structural-ness.

use crate::enums::EnumIndex;
use crate::pattern::Pattern;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Deeper schemas are refused rather than risking the stack.
const MAX_DEPTH: usize = 256;

/// A structural schema node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Structural {
    pub items: Option<Box<Structural>>,
    pub properties: BTreeMap<String, Structural>,
    pub generic: Generic,
    pub extensions: Extensions,
    pub value_validation: Option<Box<ValueValidation>>,
}

/// `additionalProperties`: either a schema or a boolean.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StructuralOrBool {
    pub structural: Option<Box<Structural>>,
    pub bool: bool,
}

/// The generic keywords (not allowed under junctors in a structural schema).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generic {
    pub description: String,
    /// `type`; empty when not set.
    pub type_: String,
    pub title: String,
    pub default: Option<Value>,
    pub additional_properties: Option<StructuralOrBool>,
    pub nullable: bool,
}

/// The Kubernetes vendor extensions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extensions {
    pub x_preserve_unknown_fields: bool,
    pub x_embedded_resource: bool,
    pub x_int_or_string: bool,
    pub x_list_map_keys: Vec<String>,
    pub x_list_type: Option<String>,
    pub x_map_type: Option<String>,
    /// `x-kubernetes-validations`, kept verbatim for the CEL layer.
    pub x_validations: Option<Value>,
}

/// The value validations (keywords that do not contribute to the structure).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueValidation {
    pub format: String,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    /// Compiled once; an invalid pattern is kept with its compile error.
    pub pattern: Option<Pattern>,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub multiple_of: Option<f64>,
    pub enum_: Option<Vec<Value>>,
    /// `enum_` indexed for membership, with its error texts (built once per schema).
    pub enum_index: Option<Box<EnumIndex>>,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub all_of: Vec<NestedValueValidation>,
    pub one_of: Vec<NestedValueValidation>,
    pub any_of: Vec<NestedValueValidation>,
    pub not: Option<Box<NestedValueValidation>>,
}

/// A schema under a logical junctor: value validations plus whatever else was written there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NestedValueValidation {
    pub value_validation: ValueValidation,
    pub items: Option<Box<NestedValueValidation>>,
    pub properties: BTreeMap<String, NestedValueValidation>,
    /// Generic keywords found under the junctor (forbidden in structural schemas, but validated).
    pub forbidden_generics: Generic,
    pub forbidden_extensions: Extensions,
}

impl Structural {
    /// Converts an `openAPIV3Schema` JSON value. Fails only on wrongly typed keywords.
    pub fn from_json(schema: &Value) -> Result<Structural, String> {
        structural(schema, "", 0)
    }

    /// The `x-kubernetes-list-type`, if any.
    pub fn list_type(&self) -> Option<&str> {
        self.extensions.x_list_type.as_deref()
    }

    /// The schema of `additionalProperties` when it is a schema.
    pub fn additional_properties_schema(&self) -> Option<&Structural> {
        self.generic
            .additional_properties
            .as_ref()
            .and_then(|a| a.structural.as_deref())
    }
}

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, String> {
    match v {
        Value::Object(m) => Ok(m),
        _ => Err(format!("{}: must be an object", display(path))),
    }
}

fn display(path: &str) -> &str {
    if path.is_empty() {
        "<root>"
    } else {
        path
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A keyword's value, treating JSON `null` as absent (Go decodes null into a nil pointer).
fn get<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

fn string(m: &Map<String, Value>, key: &str, path: &str) -> Result<String, String> {
    match get(m, key) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{}: must be a string", child(path, key))),
    }
}

fn opt_string(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, String> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{}: must be a string", child(path, key))),
    }
}

fn boolean(m: &Map<String, Value>, key: &str, path: &str) -> Result<bool, String> {
    match get(m, key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{}: must be a boolean", child(path, key))),
    }
}

fn number(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, String> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(format!("{}: must be a number", child(path, key))),
    }
}

fn integer(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>, String> {
    match get(m, key) {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Ok(Some(i)),
            None => Err(format!("{}: must be an integer", child(path, key))),
        },
        Some(_) => Err(format!("{}: must be an integer", child(path, key))),
    }
}

fn strings(m: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<String>, String> {
    match get(m, key) {
        None => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(format!("{}: must be a list of strings", child(path, key))),
            })
            .collect(),
        Some(_) => Err(format!("{}: must be a list of strings", child(path, key))),
    }
}

fn generic(m: &Map<String, Value>, path: &str, depth: usize) -> Result<Generic, String> {
    let additional_properties = match get(m, "additionalProperties") {
        None => None,
        Some(Value::Bool(b)) => Some(StructuralOrBool {
            structural: None,
            bool: *b,
        }),
        Some(v @ Value::Object(_)) => Some(StructuralOrBool {
            structural: Some(Box::new(structural(
                v,
                &child(path, "additionalProperties"),
                depth + 1,
            )?)),
            bool: true,
        }),
        Some(_) => {
            return Err(format!(
                "{}: must be a boolean or a schema",
                child(path, "additionalProperties")
            ))
        }
    };
    Ok(Generic {
        description: string(m, "description", path)?,
        type_: string(m, "type", path)?,
        title: string(m, "title", path)?,
        default: get(m, "default").cloned(),
        additional_properties,
        nullable: boolean(m, "nullable", path)?,
    })
}

fn extensions(m: &Map<String, Value>, path: &str) -> Result<Extensions, String> {
    let x_validations = match get(m, "x-kubernetes-validations") {
        None => None,
        Some(v @ Value::Array(_)) => Some(v.clone()),
        Some(_) => {
            return Err(format!(
                "{}: must be a list",
                child(path, "x-kubernetes-validations")
            ))
        }
    };
    Ok(Extensions {
        x_preserve_unknown_fields: boolean(m, "x-kubernetes-preserve-unknown-fields", path)?,
        x_embedded_resource: boolean(m, "x-kubernetes-embedded-resource", path)?,
        x_int_or_string: boolean(m, "x-kubernetes-int-or-string", path)?,
        x_list_map_keys: strings(m, "x-kubernetes-list-map-keys", path)?,
        x_list_type: opt_string(m, "x-kubernetes-list-type", path)?,
        x_map_type: opt_string(m, "x-kubernetes-map-type", path)?,
        x_validations,
    })
}

fn nested_list(
    m: &Map<String, Value>,
    key: &str,
    path: &str,
    depth: usize,
) -> Result<Vec<NestedValueValidation>, String> {
    match get(m, key) {
        None => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| nested(v, &format!("{}[{i}]", child(path, key)), depth + 1))
            .collect(),
        Some(_) => Err(format!("{}: must be a list of schemas", child(path, key))),
    }
}

fn value_validation(
    m: &Map<String, Value>,
    path: &str,
    depth: usize,
) -> Result<ValueValidation, String> {
    let enum_ = match get(m, "enum") {
        None => None,
        Some(Value::Array(a)) => Some(a.clone()),
        Some(_) => return Err(format!("{}: must be a list", child(path, "enum"))),
    };
    let not = match get(m, "not") {
        None => None,
        Some(v) => Some(Box::new(nested(v, &child(path, "not"), depth + 1)?)),
    };
    Ok(ValueValidation {
        format: string(m, "format", path)?,
        maximum: number(m, "maximum", path)?,
        exclusive_maximum: boolean(m, "exclusiveMaximum", path)?,
        minimum: number(m, "minimum", path)?,
        exclusive_minimum: boolean(m, "exclusiveMinimum", path)?,
        max_length: integer(m, "maxLength", path)?,
        min_length: integer(m, "minLength", path)?,
        pattern: opt_string(m, "pattern", path)?.map(|p| Pattern::new(&p)),
        max_items: integer(m, "maxItems", path)?,
        min_items: integer(m, "minItems", path)?,
        unique_items: boolean(m, "uniqueItems", path)?,
        multiple_of: number(m, "multipleOf", path)?,
        enum_index: enum_.as_deref().map(|e| Box::new(EnumIndex::new(e))),
        enum_,
        max_properties: integer(m, "maxProperties", path)?,
        min_properties: integer(m, "minProperties", path)?,
        required: strings(m, "required", path)?,
        all_of: nested_list(m, "allOf", path, depth)?,
        one_of: nested_list(m, "oneOf", path, depth)?,
        any_of: nested_list(m, "anyOf", path, depth)?,
        not,
    })
}

fn is_empty_vv(v: &ValueValidation) -> bool {
    *v == ValueValidation::default()
}

fn items<'a>(m: &'a Map<String, Value>, path: &str) -> Result<Option<&'a Value>, String> {
    match get(m, "items") {
        None => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v)),
        Some(Value::Array(_)) => Err(format!(
            "{}: must be a schema object and not an array",
            child(path, "items")
        )),
        Some(_) => Err(format!("{}: must be a schema object", child(path, "items"))),
    }
}

fn properties<'a>(
    m: &'a Map<String, Value>,
    path: &str,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match get(m, "properties") {
        None => Ok(None),
        Some(Value::Object(p)) => Ok(Some(p)),
        Some(_) => Err(format!("{}: must be an object", child(path, "properties"))),
    }
}

fn structural(v: &Value, path: &str, depth: usize) -> Result<Structural, String> {
    if depth > MAX_DEPTH {
        return Err(format!("{}: schema nested too deeply", display(path)));
    }
    let m = obj(v, path)?;
    let items = match items(m, path)? {
        None => None,
        Some(i) => Some(Box::new(structural(i, &child(path, "items"), depth + 1)?)),
    };
    let mut props = BTreeMap::new();
    if let Some(p) = properties(m, path)? {
        let base = child(path, "properties");
        for (k, sub) in p {
            props.insert(
                k.clone(),
                structural(sub, &format!("{base}[{k}]"), depth + 1)?,
            );
        }
    }
    let vv = value_validation(m, path, depth)?;
    Ok(Structural {
        items,
        properties: props,
        generic: generic(m, path, depth)?,
        extensions: extensions(m, path)?,
        value_validation: if is_empty_vv(&vv) {
            None
        } else {
            Some(Box::new(vv))
        },
    })
}

fn nested(v: &Value, path: &str, depth: usize) -> Result<NestedValueValidation, String> {
    if depth > MAX_DEPTH {
        return Err(format!("{}: schema nested too deeply", display(path)));
    }
    let m = obj(v, path)?;
    let items = match items(m, path)? {
        None => None,
        Some(i) => Some(Box::new(nested(i, &child(path, "items"), depth + 1)?)),
    };
    let mut props = BTreeMap::new();
    if let Some(p) = properties(m, path)? {
        let base = child(path, "properties");
        for (k, sub) in p {
            props.insert(k.clone(), nested(sub, &format!("{base}[{k}]"), depth + 1)?);
        }
    }
    Ok(NestedValueValidation {
        value_validation: value_validation(m, path, depth)?,
        items,
        properties: props,
        forbidden_generics: generic(m, path, depth)?,
        forbidden_extensions: extensions(m, path)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_keywords() {
        let s = Structural::from_json(&json!({
            "type": "object",
            "properties": {"a": {"type": "string", "pattern": "^a$", "default": "a"}},
            "additionalProperties": false,
            "anyOf": [{"required": ["a"]}],
            "x-kubernetes-preserve-unknown-fields": true,
        }))
        .unwrap();
        assert_eq!(s.generic.type_, "object");
        assert!(s.extensions.x_preserve_unknown_fields);
        assert_eq!(s.properties["a"].generic.default, Some(json!("a")));
        let vv = s.value_validation.unwrap();
        assert_eq!(vv.any_of[0].value_validation.required, vec!["a"]);
        assert!(!s.generic.additional_properties.unwrap().bool);
    }

    #[test]
    fn wrong_types_are_errors_not_panics() {
        assert!(Structural::from_json(&json!({"type": 1})).is_err());
        assert!(Structural::from_json(&json!({"properties": {"a": {"minLength": 1.5}}})).is_err());
        assert!(Structural::from_json(&json!([])).is_err());
        assert!(Structural::from_json(&json!({"default": null})).is_ok());
    }
}
