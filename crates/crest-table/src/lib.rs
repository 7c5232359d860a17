//! Server-side printing: `meta.k8s.io/v1` (or v1beta1) `Table` for get, list and watch.
//!
//! Custom resources print as kube-apiserver's CRD table convertor does (apiextensions-apiserver
//! `registry/customresource/tableconvertor`): `Name`, then the version's
//! `additionalPrinterColumns` (or `Age` when it has none), each a kubectl JSONPath
//! ([`jsonpath`]) compiled once per CRD version. Namespaces use the built-in namespace printer,
//! CRDs the default convertor (Name, Created At). Lists are written straight to bytes.

mod jsonpath;
pub mod printers;

pub use jsonpath::{Item, JsonPath};

use crest_api::ApiError;
use crest_gofmt::{go_float, go_json, go_json_float};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;

/// How a resource renders as a `meta.k8s.io/v1 Table`.
#[derive(Clone, Debug)]
pub enum TableStyle {
    /// A built-in kind's printer (upstream's pkg/printers/internalversion handler for it).
    Builtin(&'static Printer),
    /// Name, Created At: kube-apiserver's default table convertor (used for CRDs).
    Default,
    /// Name, then the CRD version's printer columns, compiled once (Age when none are declared).
    Columns(std::sync::Arc<Columns>),
}

/// A built-in kind's printer: its column definitions and the cells of one object's row (the
/// first cell is the name).
#[derive(Debug)]
pub struct Printer {
    pub columns: &'static [ColumnDef],
    pub cells: for<'a> fn(&'a Value, i64) -> Vec<Cell<'a>>,
}

/// One column definition of a built-in printer (`metav1.TableColumnDefinition`).
#[derive(Debug)]
pub struct ColumnDef {
    pub name: &'static str,
    pub column_type: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    pub priority: i64,
}

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
    /// `TableOptions` from the query, validated as upstream's `optionsForTransform`.
    pub fn parse(v: Option<&str>) -> Result<Self, ApiError> {
        match v {
            None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
            Some("None") => Ok(IncludeObject::None),
            Some("Object") => Ok(IncludeObject::Object),
            Some(other) => {
                let e = crest_api::FieldError::not_supported(
                    &crest_api::FieldPath::new("includeObject"),
                    other,
                    &["Metadata", "None", "Object"],
                );
                Err(ApiError::bad_request(format!(
                    "Unable to convert to Table as requested: {e}"
                )))
            }
        }
    }
}

/// One compiled printer column.
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub column_type: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    pub json_path: String,
    path: JsonPath,
}

/// A CRD version's printer columns, compiled once when the served set is rebuilt.
#[derive(Debug, Default)]
pub struct Columns {
    pub columns: Vec<Column>,
    /// `columnDefinitions`, serialized once.
    definitions: String,
    /// What of an object the cells read, so a list parses only that.
    need: Need,
}

/// A tree of the members a row reads: `full` members are parsed whole, others only for their
/// children.
#[derive(Debug, Default)]
struct Need {
    full: bool,
    children: std::collections::BTreeMap<String, Need>,
}

impl Need {
    fn add(&mut self, path: &[&str]) {
        if self.full {
            return;
        }
        match path.split_first() {
            None => {
                self.full = true;
                self.children.clear();
            }
            Some((first, rest)) => self
                .children
                .entry(first.to_string())
                .or_default()
                .add(rest),
        }
    }

    /// The JSON text `raw` with only what is needed parsed (other members are left out).
    fn parse(&self, raw: &str) -> Result<Value, serde_json::Error> {
        if self.full {
            return serde_json::from_str(raw);
        }
        let Ok(members) = serde_json::from_str::<HashMap<&str, &RawValue>>(raw) else {
            // Not an object (or keys with escapes): parse it all.
            return serde_json::from_str(raw);
        };
        let mut out = Map::new();
        for (k, child) in &self.children {
            if let Some(r) = members.get(k.as_str()) {
                out.insert(k.clone(), child.parse(r.get())?);
            }
        }
        Ok(Value::Object(out))
    }
}

impl Columns {
    /// The columns of a CRD version (`spec.versions[*]`), as upstream's `GetColumnsForVersion`
    /// and `tableconvertor.New`: `Age` when none are declared; a column whose JSONPath does not
    /// parse ends the list (kube-apiserver keeps the columns before it and logs the error).
    pub fn for_version(version: &Value) -> Columns {
        let declared = version
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty());
        let specs: Vec<(String, String, String, String, i64, String)> = match declared {
            Some(cols) => cols
                .iter()
                .map(|c| {
                    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    let priority = c.get("priority").and_then(Value::as_i64).unwrap_or(0);
                    (
                        s("name"),
                        s("type"),
                        s("format"),
                        s("description"),
                        priority,
                        s("jsonPath"),
                    )
                })
                .collect(),
            None => vec![(
                "Age".into(),
                "date".into(),
                String::new(),
                CREATION_TIMESTAMP_DESCRIPTION.into(),
                0,
                ".metadata.creationTimestamp".into(),
            )],
        };
        let mut columns = vec![];
        for (name, column_type, format, description, priority, json_path) in specs {
            let Ok(path) = JsonPath::parse(&format!("{{{json_path}}}")) else {
                tracing::debug!(column = %name, json_path = %json_path, "unrecognized column definition, later columns dropped");
                break;
            };
            let description = if description.is_empty() {
                format!("Custom resource definition column (in JSONPath format): {json_path}")
            } else {
                description
            };
            columns.push(Column {
                name,
                column_type,
                format,
                description,
                priority,
                json_path,
                path,
            });
        }
        let mut defs = vec![definition("Name", "string", "name", NAME_DESCRIPTION, 0)];
        defs.extend(columns.iter().map(|c| {
            definition(
                &c.name,
                &c.column_type,
                &c.format,
                &c.description,
                c.priority,
            )
        }));
        let mut need = Need::default();
        need.add(&["metadata", "name"]);
        for c in &columns {
            match (c.path.field_path(), c.path.first_field()) {
                (Some(fields), _) => need.add(&fields),
                (None, Some(first)) => need.add(&[first]),
                (None, None) => need.add(&[]),
            }
        }
        Columns {
            columns,
            definitions: definitions_json(&defs),
            need,
        }
    }
}

fn definition(name: &str, ty: &str, format: &str, description: &str, priority: i64) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

pub fn column_definitions(style: &TableStyle) -> Vec<Value> {
    match style {
        TableStyle::Builtin(p) => p
            .columns
            .iter()
            .map(|c| definition(c.name, c.column_type, c.format, c.description, c.priority))
            .collect(),
        TableStyle::Default => vec![
            definition("Name", "string", "name", NAME_DESCRIPTION, 0),
            definition("Created At", "date", "", CREATION_TIMESTAMP_DESCRIPTION, 0),
        ],
        TableStyle::Columns(c) => serde_json::from_str(&c.definitions).unwrap_or_default(),
    }
}

fn write_definitions(style: &TableStyle, out: &mut Vec<u8>) {
    match style {
        TableStyle::Columns(c) => out.extend_from_slice(c.definitions.as_bytes()),
        _ => out.extend_from_slice(definitions_json(&column_definitions(style)).as_bytes()),
    }
}

/// Column definitions as JSON, each a meta/v1 TableColumnDefinition in Go's field order.
fn definitions_json(defs: &[Value]) -> String {
    let mut out = vec![b'['];
    for (i, d) in defs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&crest_codec::json::to_vec_as(
            d,
            "k8s.io/apimachinery/pkg/apis/meta/v1.TableColumnDefinition",
            false,
        ));
    }
    out.push(b']');
    String::from_utf8(out).unwrap_or_default()
}

/// One table cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Str(Cow<'a, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Cell<'_> {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Cell::Null => out.extend_from_slice(b"null"),
            Cell::Str(s) => write_str(out, s),
            Cell::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
            Cell::Float(f) => out.extend_from_slice(go_json_float(*f).as_bytes()),
            Cell::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        }
    }
}

/// Seconds since the epoch, read once per response (every Age of a table is against it).
fn now() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The cells of one object's row.
pub fn cells<'a>(style: &'a TableStyle, obj: &'a Value, now_ms: i64) -> Vec<Cell<'a>> {
    let name = Cell::Str(Cow::Borrowed(crest_api::meta::name(obj)));
    let created = crest_api::meta::meta_str(obj, "creationTimestamp");
    match style {
        TableStyle::Builtin(p) => (p.cells)(obj, now_ms),
        TableStyle::Default => vec![name, Cell::Str(Cow::Borrowed(created))],
        TableStyle::Columns(c) => {
            let mut cells = Vec::with_capacity(1 + c.columns.len());
            cells.push(name);
            cells.extend(c.columns.iter().map(|col| cell(col, obj, now_ms)));
            cells
        }
    }
}

/// `ConvertToTable`'s cell: the first result of the column's JSONPath, as its type prints it.
fn cell<'a>(col: &'a Column, obj: &'a Value, now_ms: i64) -> Cell<'a> {
    let Some(item) = col.path.first(obj) else {
        return Cell::Null;
    };
    if col.column_type == "string" {
        // The JSONPath printer's text: strings as-is, maps and arrays as JSON.
        return Cell::Str(match item {
            Item::Json(Value::String(s)) => Cow::Borrowed(s.as_str()),
            Item::Text(s) => Cow::Borrowed(s),
            Item::Json(v @ (Value::Object(_) | Value::Array(_))) => Cow::Owned(go_json(v)),
            Item::Json(Value::Null) => Cow::Borrowed("<no value>"),
            Item::Json(&Value::Bool(b)) | Item::Bool(b) => Cow::Borrowed(bool_str(b)),
            Item::Json(Value::Number(n)) => Cow::Owned(match n.as_i64() {
                Some(i) => i.to_string(),
                None => go_float(n.as_f64().unwrap_or(0.0)),
            }),
            Item::Int(i) => Cow::Owned(i.to_string()),
            Item::Float(f) => Cow::Owned(go_float(f)),
        });
    }
    // cellForJSONValue: values of another type are omitted. Template literals are Go ints,
    // strings, float64s and bools.
    let number = |i: &Item| -> Option<Result<i64, f64>> {
        match i {
            Item::Json(Value::Number(n)) => Some(match n.as_i64() {
                Some(i) => Ok(i),
                None => Err(n.as_f64()?),
            }),
            Item::Float(f) => Some(Err(*f)),
            _ => None,
        }
    };
    match col.column_type.as_str() {
        "integer" => match number(&item) {
            Some(Ok(i)) => Cell::Int(i),
            Some(Err(f)) => Cell::Int(f as i64),
            None => Cell::Null,
        },
        "number" => match number(&item) {
            Some(Ok(i)) => Cell::Float(i as f64),
            Some(Err(f)) => Cell::Float(f),
            None => Cell::Null,
        },
        "boolean" => match item {
            Item::Json(&Value::Bool(b)) | Item::Bool(b) => Cell::Bool(b),
            _ => Cell::Null,
        },
        "date" => match item {
            Item::Json(Value::String(s)) => Cell::Str(Cow::Owned(date_cell(s, now_ms))),
            Item::Text(s) => Cell::Str(Cow::Owned(date_cell(s, now_ms))),
            _ => Cell::Null,
        },
        _ => Cell::Null,
    }
}

fn bool_str(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// A date column: `metav1.Time.UnmarshalQueryParameter` then `ConvertToHumanReadableDateType`.
fn date_cell(s: &str, now_ms: i64) -> String {
    if s.is_empty() || s == "null" {
        return "<unknown>".into();
    }
    match chrono::DateTime::parse_from_rfc3339(s) {
        Ok(t) => human_duration_ms(now_ms - t.timestamp_millis()),
        Err(_) => "<invalid>".into(),
    }
}

fn human_age_at(ts: &str, now_ms: i64) -> String {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => human_duration_ms(now_ms - t.timestamp_millis()),
        Err(_) => "<unknown>".into(),
    }
}

fn human_duration_ms(ms: i64) -> String {
    // Go's int(d.Seconds()) truncates toward zero.
    human_duration(ms / 1000)
}

/// kube-apiserver's `ConvertToHumanReadableDateType`: the age of an RFC 3339 timestamp.
pub fn human_age(ts: &str) -> String {
    human_age_at(ts, now())
}

/// One row for `obj` (a `TableRow` value).
pub fn row(style: &TableStyle, obj: &Value, include: IncludeObject, v1beta1: bool) -> Value {
    let mut out = vec![];
    write_row(&mut out, style, obj, None, None, include, v1beta1, now());
    serde_json::from_slice(&out).unwrap_or(Value::Null)
}

#[allow(clippy::too_many_arguments)]
fn write_row(
    out: &mut Vec<u8>,
    style: &TableStyle,
    obj: &Value,
    raw: Option<&[u8]>,
    raw_metadata: Option<&str>,
    include: IncludeObject,
    v1beta1: bool,
    now_ms: i64,
) {
    out.extend_from_slice(b"{\"cells\":[");
    for (i, c) in cells(style, obj, now_ms).iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        c.write(out);
    }
    out.push(b']');
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => {
            out.extend_from_slice(
                b",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":",
            );
            out.extend_from_slice(meta_api_version(v1beta1).as_bytes());
            out.extend_from_slice(b",\"metadata\":");
            match (raw_metadata, obj.get("metadata")) {
                (Some(m), _) => out.extend_from_slice(m.as_bytes()),
                // A typed PartialObjectMetadata: ObjectMeta in Go's field order.
                (None, Some(m)) => crest_codec::json::write_object_meta(out, m),
                (None, None) => out.extend_from_slice(b"{}"),
            }
            out.push(b'}');
        }
        IncludeObject::Object => {
            out.extend_from_slice(b",\"object\":");
            match raw {
                Some(b) => out.extend_from_slice(b),
                None => crest_codec::json::write(out, obj),
            }
        }
    }
    out.push(b'}');
}

fn meta_api_version(v1beta1: bool) -> &'static str {
    if v1beta1 {
        "\"meta.k8s.io/v1beta1\""
    } else {
        "\"meta.k8s.io/v1\""
    }
}

/// `PartialObjectMetadata` of an object.
pub fn partial_object_metadata(obj: &Value, v1beta1: bool) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
        "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
    })
}

/// A Table of `rows` (built with [`row`]).
pub fn table(style: &TableStyle, rows: Vec<Value>, list_meta: Value, v1beta1: bool) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
        "metadata": list_meta,
        "columnDefinitions": column_definitions(style),
        "rows": rows,
    })
}

/// The Table of a list, written straight from the cached object bytes: each object is parsed
/// once for its cells; with `includeObject=Object` its bytes are copied as they are.
pub fn list_table(
    style: &TableStyle,
    items: &[impl AsRef<[u8]>],
    list_meta: &Map<String, Value>,
    include: IncludeObject,
    v1beta1: bool,
) -> Result<Vec<u8>, ApiError> {
    let per_row = items.first().map_or(0, |b| match include {
        IncludeObject::Object => b.as_ref().len() + 128,
        _ => b.as_ref().len() / 2 + 64,
    });
    let mut out = Vec::with_capacity(1024 + per_row * items.len());
    write_table(&mut out, style, items, list_meta, include, v1beta1, true)?;
    Ok(out)
}

/// Appends the Table of `items` (object bytes) to `out`; without `headers` its
/// `columnDefinitions` is null (watch events after the first). On error `out` may hold part of
/// the table.
#[allow(clippy::too_many_arguments)]
pub fn write_table(
    out: &mut Vec<u8>,
    style: &TableStyle,
    items: &[impl AsRef<[u8]>],
    list_meta: &Map<String, Value>,
    include: IncludeObject,
    v1beta1: bool,
    headers: bool,
) -> Result<(), ApiError> {
    let now_ms = now();
    out.extend_from_slice(b"{\"kind\":\"Table\",\"apiVersion\":");
    out.extend_from_slice(meta_api_version(v1beta1).as_bytes());
    out.extend_from_slice(b",\"metadata\":");
    write_list_meta(out, list_meta);
    out.extend_from_slice(b",\"columnDefinitions\":");
    if headers {
        write_definitions(style, out);
    } else {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b",\"rows\":[");
    let need = match style {
        // A column reading anywhere (`..x`) needs the whole object.
        TableStyle::Columns(c) if !c.need.full => Some(&c.need),
        _ => None,
    };
    for (i, b) in items.iter().enumerate() {
        let b = b.as_ref();
        if i > 0 {
            out.push(b',');
        }
        // Only what the cells read is parsed; the metadata is copied as it is.
        if let Some(need) = need {
            if let Ok(top) = serde_json::from_slice::<HashMap<&str, &RawValue>>(b) {
                let mut obj = Map::new();
                for (k, child) in &need.children {
                    if let Some(raw) = top.get(k.as_str()) {
                        let v = child
                            .parse(raw.get())
                            .map_err(|e| ApiError::internal(e.to_string()))?;
                        obj.insert(k.clone(), v);
                    }
                }
                let meta = top.get("metadata").map(|r| r.get());
                let obj = Value::Object(obj);
                write_row(out, style, &obj, Some(b), meta, include, v1beta1, now_ms);
                continue;
            }
        }
        let obj: Value =
            serde_json::from_slice(b).map_err(|e| ApiError::internal(e.to_string()))?;
        write_row(out, style, &obj, Some(b), None, include, v1beta1, now_ms);
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

/// ListMeta in Go's field order.
fn write_list_meta(out: &mut Vec<u8>, m: &Map<String, Value>) {
    out.push(b'{');
    let mut first = true;
    for k in [
        "selfLink",
        "resourceVersion",
        "continue",
        "remainingItemCount",
    ] {
        if let Some(v) = m.get(k) {
            if !first {
                out.push(b',');
            }
            first = false;
            write_str(out, k);
            out.push(b':');
            write_value(out, v);
        }
    }
    out.push(b'}');
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    // Writing a Value to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}

// ---- Go's number and JSON text: crest_gofmt ----

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
mod tests;
