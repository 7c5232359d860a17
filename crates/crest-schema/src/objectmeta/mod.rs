//! `metadata` of embedded resources (upstream `schema/objectmeta`): coercion to what a typed
//! ObjectMeta holds, and validation of `apiVersion`, `kind` and `metadata`.

mod meta;

pub use meta::{get_object_meta, ObjectMetaRead};

use crate::structural::Structural;
use crest_api::validation::{is_dns1035_label, name_is_path_segment, validate_object_meta};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::Value;

/// Normalizes `apiVersion`, `kind` and `metadata` of every embedded resource in `obj` (and of the
/// root when `is_resource_root`): unknown metadata fields are dropped. Wrongly typed values are
/// an error, or dropped with `drop_invalid_fields` (upstream `Coerce`).
pub fn coerce(
    path: &FieldPath,
    obj: &mut Value,
    s: &Structural,
    is_resource_root: bool,
    drop_invalid_fields: bool,
) -> Result<(), FieldError> {
    coerce_value(path, obj, Some(s), is_resource_root, drop_invalid_fields)
}

fn coerce_value(
    path: &FieldPath,
    x: &mut Value,
    s: Option<&Structural>,
    embedded_root: bool,
    drop: bool,
) -> Result<(), FieldError> {
    let Some(s) = s else {
        return Ok(());
    };
    match x {
        Value::Object(m) => {
            let embedded = embedded_root || s.extensions.x_embedded_resource;
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if embedded {
                    match k.as_str() {
                        "apiVersion" | "kind" if !m.get(&k).is_some_and(Value::is_string) => {
                            if drop {
                                m.remove(&k);
                            } else {
                                let v = m.get(&k).cloned().unwrap_or(Value::Null);
                                return Err(FieldError::invalid(
                                    &path.child(&k),
                                    v,
                                    "must be a string",
                                ));
                            }
                        }
                        "metadata" => match get_object_meta(m, drop, false) {
                            Err(e) => {
                                if !drop {
                                    let v = m.get(&k).cloned().unwrap_or(Value::Null);
                                    return Err(FieldError::invalid(&path.child("metadata"), v, e));
                                }
                            }
                            Ok(read) => {
                                if let Some(meta) = read.meta {
                                    m.insert(k.clone(), Value::Object(meta));
                                }
                            }
                        },
                        _ => {}
                    }
                }
                let Some(v) = m.get_mut(&k) else {
                    continue;
                };
                if let Some(prop) = s.properties.get(&k) {
                    coerce_value(&path.child(&k), v, Some(prop), false, drop)?;
                } else if let Some(a) = &s.generic.additional_properties {
                    coerce_value(&path.key(&k), v, a.structural.as_deref(), false, drop)?;
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter_mut().enumerate() {
                coerce_value(&path.index(i), v, s.items.as_deref(), false, drop)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Validates `apiVersion`, `kind` and `metadata` of every embedded resource in `obj` (and of the
/// root when `is_resource_root`) (upstream `objectmeta.Validate`).
pub fn validate(
    path: &FieldPath,
    obj: &Value,
    s: &Structural,
    is_resource_root: bool,
) -> FieldErrors {
    let mut errs = Vec::new();
    validate_value(path, obj, Some(s), is_resource_root, &mut errs);
    errs
}

fn validate_value(
    path: &FieldPath,
    x: &Value,
    s: Option<&Structural>,
    embedded_root: bool,
    errs: &mut FieldErrors,
) {
    let Some(s) = s else {
        return;
    };
    match x {
        Value::Object(m) => {
            if embedded_root || s.extensions.x_embedded_resource {
                errs.extend(validate_embedded_resource(path, x));
            }
            for (k, v) in m {
                if let Some(prop) = s.properties.get(k) {
                    validate_value(&path.child(k), v, Some(prop), false, errs);
                } else if let Some(a) = &s.generic.additional_properties {
                    validate_value(&path.key(k), v, a.structural.as_deref(), false, errs);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                validate_value(&path.index(i), v, s.items.as_deref(), false, errs);
            }
        }
        _ => {}
    }
}

/// `apiVersion` and `kind` are required; `kind` must be a DNS-1035 label up to case; `metadata`
/// is validated as ObjectMeta with path-segment names.
pub fn validate_embedded_resource(path: &FieldPath, x: &Value) -> FieldErrors {
    let mut errs = Vec::new();
    let Some(m) = x.as_object() else {
        return errs;
    };
    if !m.contains_key("apiVersion") {
        errs.push(FieldError::required(&path.child("apiVersion"), ""));
    }
    if !m.contains_key("kind") {
        errs.push(FieldError::required(&path.child("kind"), ""));
    }
    for (k, v) in m {
        match k.as_str() {
            "apiVersion" => match v {
                Value::String(s) if s.is_empty() => {
                    errs.push(FieldError::required(&path.child("apiVersion"), ""))
                }
                Value::String(s) => {
                    if s != "/" && s.matches('/').count() > 1 {
                        errs.push(FieldError::invalid(
                            &path.child("apiVersion"),
                            s.as_str(),
                            format!("unexpected GroupVersion string: {s}"),
                        ));
                    }
                }
                other => errs.push(FieldError::invalid(
                    &path.child("apiVersion"),
                    other.clone(),
                    "must be a string",
                )),
            },
            "kind" => match v {
                Value::String(s) if s.is_empty() => {
                    errs.push(FieldError::required(&path.child("kind"), ""))
                }
                Value::String(s) => {
                    let msgs = is_dns1035_label(&s.to_lowercase());
                    if !msgs.is_empty() {
                        errs.push(FieldError::invalid(
                            &path.child("kind"),
                            s.as_str(),
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                msgs.join(",")
                            ),
                        ));
                    }
                }
                other => errs.push(FieldError::invalid(
                    &path.child("kind"),
                    other.clone(),
                    "must be a string",
                )),
            },
            "metadata" => match get_object_meta(m, false, false) {
                Err(e) => errs.push(FieldError::invalid(&path.child("metadata"), v.clone(), e)),
                Ok(read) => {
                    let mut meta = read.meta.unwrap_or_default();
                    if meta
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .is_empty()
                    {
                        // Upstream validates a placeholder name: embedded names are optional.
                        meta.insert("name".to_string(), Value::from("fakename"));
                    }
                    let namespaced = meta
                        .get("namespace")
                        .and_then(Value::as_str)
                        .is_some_and(|n| !n.is_empty());
                    errs.extend(validate_object_meta(
                        &meta,
                        namespaced,
                        name_is_path_segment,
                        &path.child("metadata"),
                    ));
                }
            },
            _ => {}
        }
    }
    errs
}
