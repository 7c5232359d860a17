//! Server-side printing: `meta.k8s.io/v1 Table` for get, list and watch.

use crate::resources::{PrinterColumn, TableStyle};
use serde_json::{json, Map, Value};

pub const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
pub const CREATION_TIMESTAMP_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// `includeObject`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    pub fn parse(v: Option<&str>) -> Result<Self, crest_api::ApiError> {
        match v {
            None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
            Some("None") => Ok(IncludeObject::None),
            Some("Object") => Ok(IncludeObject::Object),
            Some(other) => Err(crest_api::ApiError::bad_request(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            ))),
        }
    }
}

fn column(name: &str, ty: &str, format: &str, description: &str, priority: i64) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

pub fn column_definitions(style: &TableStyle) -> Vec<Value> {
    let name = column("Name", "string", "name", NAME_DESCRIPTION, 0);
    match style {
        TableStyle::Namespace => vec![
            name,
            column("Status", "string", "", "The status of the namespace", 0),
            column("Age", "string", "", CREATION_TIMESTAMP_DESCRIPTION, 0),
        ],
        TableStyle::Default => vec![
            name,
            column("Created At", "date", "", CREATION_TIMESTAMP_DESCRIPTION, 0),
        ],
        TableStyle::Columns(cols) => {
            let mut out = vec![name];
            out.extend(cols.iter().map(|c| {
                column(
                    &c.name,
                    &c.column_type,
                    &c.format,
                    &c.description,
                    c.priority,
                )
            }));
            out
        }
    }
}

/// One row for `obj`.
pub fn row(style: &TableStyle, obj: &Value, include: IncludeObject, v1beta1: bool) -> Value {
    let name = crest_api::meta::name(obj);
    let created = crest_api::meta::meta_str(obj, "creationTimestamp");
    let cells: Vec<Value> = match style {
        TableStyle::Namespace => vec![
            name.into(),
            obj.pointer("/status/phase")
                .cloned()
                .unwrap_or(Value::from("")),
            human_age(created).into(),
        ],
        TableStyle::Default => vec![name.into(), created.into()],
        TableStyle::Columns(cols) => {
            let mut cells = vec![Value::from(name)];
            cells.extend(cols.iter().map(|c| cell(c, obj)));
            cells
        }
    };
    let mut r = Map::new();
    r.insert("cells".into(), Value::Array(cells));
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            r.insert("object".into(), partial_object_metadata(obj, v1beta1));
        }
        IncludeObject::Object => {
            r.insert("object".into(), obj.clone());
        }
    }
    Value::Object(r)
}

/// `PartialObjectMetadata` of an object.
pub fn partial_object_metadata(obj: &Value, v1beta1: bool) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
        "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
    })
}

pub fn table(style: &TableStyle, rows: Vec<Value>, list_meta: Value, v1beta1: bool) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
        "metadata": list_meta,
        "columnDefinitions": column_definitions(style),
        "rows": rows,
    })
}

fn cell(col: &PrinterColumn, obj: &Value) -> Value {
    let Some(v) = simple_json_path(obj, &col.json_path) else {
        return Value::Null;
    };
    match col.column_type.as_str() {
        "date" => match v.as_str() {
            Some(s) => human_age(s).into(),
            None => Value::Null,
        },
        "integer" if v.is_i64() || v.is_u64() => v.clone(),
        "number" if v.is_number() => v.clone(),
        "boolean" if v.is_boolean() => v.clone(),
        "string" => match v {
            Value::String(s) => s.clone().into(),
            Value::Null => Value::Null,
            other => other.to_string().into(),
        },
        _ => Value::Null,
    }
}

/// Evaluates the dotted JSONPaths printer columns use (`.spec.replicas`, `.status.items[0].name`).
pub fn simple_json_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut cur = obj;
    for seg in path
        .trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
    {
        let (field, idx) = match seg.split_once('[') {
            Some((f, rest)) => (f, Some(rest.trim_end_matches(']'))),
            None => (seg, None),
        };
        if !field.is_empty() {
            cur = cur.get(field)?;
        }
        if let Some(i) = idx {
            cur = cur.get(i.parse::<usize>().ok()?)?;
        }
    }
    Some(cur)
}

/// kube-apiserver's `ConvertToHumanReadableDateType`: the age of an RFC 3339 timestamp.
pub fn human_age(ts: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => human_duration(chrono::Utc::now().signed_duration_since(t).num_seconds()),
        Err(_) => "<unknown>".into(),
    }
}

/// `k8s.io/apimachinery/pkg/util/duration.HumanDuration`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    } else if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    } else if hours < 48 {
        return format!("{hours}h");
    } else if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{}h", hours / 24, h)
        };
    } else if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{}d", hours / 24 / 365, dy)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(human_duration(6), "6s");
        assert_eq!(human_duration(119), "119s");
        assert_eq!(human_duration(125), "2m5s");
        assert_eq!(human_duration(3600 * 5 + 60), "5h1m");
        assert_eq!(human_duration(86400 * 3), "3d");
    }

    #[test]
    fn paths() {
        let o = json!({"spec": {"a": [{"b": 1}]}});
        assert_eq!(simple_json_path(&o, ".spec.a[0].b"), Some(&json!(1)));
        assert_eq!(simple_json_path(&o, ".spec.x"), None);
    }
}
