//! Reading `metadata` as a typed `metav1.ObjectMeta` would (upstream `GetObjectMeta`): every
//! known field must have its Go type, unknown fields are ignored, and the result is written back
//! the way the typed object serializes (empty fields omitted, timestamps normalized to UTC).

use chrono::{DateTime, SecondsFormat, Utc};
use crest_gofmt::{go_type, json_kind};
use serde_json::{Map, Value};

/// The result of reading `metadata`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectMetaRead {
    /// The metadata as the typed ObjectMeta serializes; `None` when there is no `metadata`.
    pub meta: Option<Map<String, Value>>,
    /// Paths of unknown fields (`metadata.foo`), when asked for.
    pub unknown_field_paths: Vec<String>,
}

/// Reads `obj.metadata` (upstream `GetObjectMetaWithOptions`). Without `drop_malformed_fields`
/// a wrongly typed field is an error; with it, such fields are dropped one by one. A zero
/// `creationTimestamp` is not included.
pub fn get_object_meta(
    obj: &Map<String, Value>,
    drop_malformed_fields: bool,
    return_unknown_field_paths: bool,
) -> Result<ObjectMetaRead, String> {
    let Some(metadata) = obj.get("metadata") else {
        return Ok(ObjectMetaRead::default());
    };
    let m = match metadata {
        Value::Null => {
            return Ok(ObjectMetaRead {
                meta: Some(Map::new()),
                unknown_field_paths: vec![],
            })
        }
        Value::Object(m) => m,
        other if drop_malformed_fields => {
            return Err(format!(
                "invalid metadata: expected object, got {}",
                go_type(other)
            ))
        }
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                json_kind(other)
            ))
        }
    };
    let mut out = Map::new();
    let mut unknown = Vec::new();
    for (k, v) in m {
        let Some(field) = known_field(k) else {
            if return_unknown_field_paths {
                unknown.push(format!("metadata.{k}"));
            }
            continue;
        };
        match convert_field(field, v, &["metadata.", k].concat(), &mut unknown) {
            Ok(Some(nv)) => {
                out.insert(k.clone(), nv);
            }
            Ok(None) => {}
            Err(e) if drop_malformed_fields => {
                let _ = e;
            }
            Err(e) => return Err(e),
        }
    }
    if !return_unknown_field_paths {
        unknown.clear();
    }
    unknown.sort();
    Ok(ObjectMetaRead {
        meta: Some(out),
        unknown_field_paths: unknown,
    })
}

#[derive(Clone, Copy)]
enum Field {
    Str,
    Int,
    Time,
    OptTime,
    OptInt,
    StrMap,
    StrList,
    OwnerRefs,
    ManagedFields,
}

fn known_field(k: &str) -> Option<Field> {
    Some(match k {
        "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion" => {
            Field::Str
        }
        "generation" => Field::Int,
        "creationTimestamp" => Field::Time,
        "deletionTimestamp" => Field::OptTime,
        "deletionGracePeriodSeconds" => Field::OptInt,
        "labels" | "annotations" => Field::StrMap,
        "finalizers" => Field::StrList,
        "ownerReferences" => Field::OwnerRefs,
        "managedFields" => Field::ManagedFields,
        _ => return None,
    })
}

fn mismatch(v: &Value, field: &str, go: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {field} of type {go}",
        json_kind(v)
    )
}

fn string(v: &Value, field: &str) -> Result<String, String> {
    match v {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        other => Err(mismatch(other, field, "string")),
    }
}

fn int(v: &Value, field: &str) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| mismatch(v, field, "int64")),
        other => Err(mismatch(other, field, "int64")),
    }
}

fn boolean(v: &Value, field: &str) -> Result<Option<bool>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(mismatch(other, field, "bool")),
    }
}

/// `metav1.Time`: RFC 3339 in, UTC with second precision out.
fn time(v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| {
                Some(
                    t.with_timezone(&Utc)
                        .to_rfc3339_opts(SecondsFormat::Secs, true),
                )
            })
            .map_err(|_| {
                format!("parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse")
            }),
        other => Err(format!(
            "json: cannot unmarshal {} into Go value of type string",
            json_kind(other)
        )),
    }
}

fn non_empty_str(s: String) -> Option<Value> {
    (!s.is_empty()).then_some(Value::String(s))
}

fn convert_field(
    f: Field,
    v: &Value,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<Option<Value>, String> {
    let name = path.strip_prefix("metadata.").unwrap_or(path);
    let go_field = ["ObjectMeta.", name].concat();
    Ok(match f {
        Field::Str => non_empty_str(string(v, &go_field)?),
        Field::Int => int(v, &go_field)?.filter(|i| *i != 0).map(Value::from),
        Field::OptInt => int(v, &go_field)?.map(Value::from),
        Field::Time | Field::OptTime => time(v)?.map(Value::String),
        Field::StrMap => match v {
            Value::Null => None,
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m {
                    out.insert(k.clone(), Value::String(string(x, &go_field)?));
                }
                (!out.is_empty()).then_some(Value::Object(out))
            }
            other => return Err(mismatch(other, &go_field, "map[string]string")),
        },
        Field::StrList => match v {
            Value::Null => None,
            Value::Array(a) => {
                let items = a
                    .iter()
                    .map(|x| string(x, &go_field).map(Value::String))
                    .collect::<Result<Vec<_>, _>>()?;
                (!items.is_empty()).then_some(Value::Array(items))
            }
            other => return Err(mismatch(other, &go_field, "[]string")),
        },
        Field::OwnerRefs => list_of(v, &go_field, path, unknown, owner_reference)?,
        Field::ManagedFields => list_of(v, &go_field, path, unknown, managed_fields_entry)?,
    })
}

type ItemFn = fn(&Map<String, Value>, &str, &mut Vec<String>) -> Result<Value, String>;

fn list_of(
    v: &Value,
    go_field: &str,
    path: &str,
    unknown: &mut Vec<String>,
    item: ItemFn,
) -> Result<Option<Value>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                let p = format!("{path}[{i}]");
                match x {
                    Value::Null => out.push(item(&Map::new(), &p, unknown)?),
                    Value::Object(m) => out.push(item(m, &p, unknown)?),
                    other => return Err(mismatch(other, go_field, "struct")),
                }
            }
            Ok((!out.is_empty()).then_some(Value::Array(out)))
        }
        other => Err(mismatch(other, go_field, "[]struct")),
    }
}

fn owner_reference(
    m: &Map<String, Value>,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<Value, String> {
    let mut out = Map::new();
    for k in ["apiVersion", "kind", "name", "uid"] {
        let s = match m.get(k) {
            Some(v) => string(v, &format!("OwnerReference.{k}"))?,
            None => String::new(),
        };
        out.insert(k.to_string(), Value::String(s));
    }
    for k in ["controller", "blockOwnerDeletion"] {
        if let Some(v) = m.get(k) {
            if let Some(b) = boolean(v, &format!("OwnerReference.{k}"))? {
                out.insert(k.to_string(), Value::Bool(b));
            }
        }
    }
    for k in m.keys() {
        if !matches!(
            k.as_str(),
            "apiVersion" | "kind" | "name" | "uid" | "controller" | "blockOwnerDeletion"
        ) {
            unknown.push(format!("{path}.{k}"));
        }
    }
    Ok(Value::Object(out))
}

fn managed_fields_entry(
    m: &Map<String, Value>,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<Value, String> {
    let mut out = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "manager" | "operation" | "apiVersion" | "fieldsType" | "subresource" => {
                if let Some(s) = non_empty_str(string(v, &format!("ManagedFieldsEntry.{k}"))?) {
                    out.insert(k.clone(), s);
                }
            }
            "time" => {
                if let Some(t) = time(v)? {
                    out.insert(k.clone(), Value::String(t));
                }
            }
            "fieldsV1" => {
                if !v.is_null() {
                    out.insert(k.clone(), v.clone());
                }
            }
            _ => unknown.push(format!("{path}.{k}")),
        }
    }
    Ok(Value::Object(out))
}
