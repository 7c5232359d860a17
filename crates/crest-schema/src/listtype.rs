//! Uniqueness of `x-kubernetes-list-type: set` items and `map` keys (upstream `schema/listtype`).

use crate::structural::Structural;
use crest_api::{FieldError, FieldErrors, FieldPath};
use crest_gofmt::go_json;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Reports `Duplicate` errors for repeated set items and map-list keys anywhere in `obj`
/// (upstream `ValidateListSetsAndMaps`). A repeated value is reported once, at the index of its
/// first repetition.
pub fn validate_list_sets_and_maps(path: &FieldPath, s: &Structural, obj: &Value) -> FieldErrors {
    let mut errs = Vec::new();
    if let Value::Object(m) = obj {
        object(path, s, m, &mut errs);
    }
    errs
}

fn object(path: &FieldPath, s: &Structural, m: &Map<String, Value>, errs: &mut FieldErrors) {
    if let Some(ap) = s.additional_properties_schema() {
        for (k, v) in m {
            value(&path.key(k), ap, v, errs);
        }
    }
    if !s.properties.is_empty() {
        for (k, v) in m {
            if let Some(sub) = s.properties.get(k) {
                value(&path.child(k), sub, v, errs);
            }
        }
    }
}

fn value(path: &FieldPath, s: &Structural, v: &Value, errs: &mut FieldErrors) {
    match v {
        Value::Array(a) => array(path, s, a, errs),
        Value::Object(m) => object(path, s, m, errs),
        _ => {}
    }
}

fn array(path: &FieldPath, s: &Structural, a: &[Value], errs: &mut FieldErrors) {
    match s.list_type() {
        Some("set") => {
            let keys: Vec<String> = a.iter().map(|v| key_of(Some(v))).collect();
            for i in non_unique(&keys) {
                errs.push(FieldError::duplicate(&path.index(i), a[i].clone()));
            }
        }
        Some("map") => list_map(path, s, a, errs),
        _ => {}
    }
    if let Some(items) = s.items.as_deref() {
        for (i, v) in a.iter().enumerate() {
            value(&path.index(i), items, v, errs);
        }
    }
}

/// A list item or map key as upstream compares it: scalars by Go equality (int64 and float64
/// differ), compounds by their Go JSON encoding; `None` is a missing key, its own value.
fn key_of(v: Option<&Value>) -> String {
    match v {
        None => "u".to_string(),
        Some(Value::Null) => "n".to_string(),
        Some(Value::Bool(b)) => format!("b{b}"),
        Some(Value::String(s)) => format!("s{s}"),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => format!("i{i}"),
            None => format!("f{}", n.as_f64().unwrap_or(0.0).to_bits()),
        },
        Some(c) => format!("c{}", go_json(c)),
    }
}

/// Indices of the first repetition of every repeated key.
fn non_unique(keys: &[String]) -> Vec<usize> {
    if keys.len() <= 1 {
        return vec![];
    }
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(keys.len());
    let mut out = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let times = seen.entry(k.as_str()).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn list_map(path: &FieldPath, s: &Structural, a: &[Value], errs: &mut FieldErrors) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            errs.push(FieldError::invalid(
                &path.index(i),
                x.clone(),
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    if a.len() <= 1 {
        return;
    }
    let key_fields = &s.extensions.x_list_map_keys;
    if let [key_field] = key_fields.as_slice() {
        let values: Vec<Option<&Value>> = a
            .iter()
            .map(|x| x.as_object().and_then(|m| m.get(key_field)))
            .collect();
        let keys: Vec<String> = values.iter().map(|v| key_of(*v)).collect();
        for i in non_unique(&keys) {
            let mut m = Map::new();
            if let Some(k) = values[i] {
                m.insert(key_field.clone(), k.clone());
            }
            let shown = Value::Object(m);
            errs.push(FieldError::duplicate(&path.index(i), shown));
        }
        return;
    }
    // Several key fields: the key is the object of the present key fields.
    let keys: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut key = Map::new();
            if let Some(m) = x.as_object() {
                for f in key_fields {
                    if let Some(v) = m.get(f) {
                        key.insert(f.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    let encoded: Vec<String> = keys.iter().map(|k| key_of(Some(k))).collect();
    for i in non_unique(&encoded) {
        errs.push(FieldError::duplicate(&path.index(i), keys[i].clone()));
    }
}
