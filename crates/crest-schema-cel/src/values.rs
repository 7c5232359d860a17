//! JSON values as CEL sees them (apiserver `UnstructuredToVal`), guided by the node's type:
//! objects become maps keyed by the escaped property names with only the declared, non-null
//! properties (so preserved unknown fields are not accessible and null fields are absent for
//! `has()`), `additionalProperties` maps keep their JSON keys, formatted strings become bytes,
//! timestamps and durations. Values that do not match their type (which schema validation
//! reports before rules run) convert as plain JSON.

use std::sync::Arc;

use base64::Engine;
use chrono::{DateTime, NaiveDate, Utc};
use crest_cel::value::{Key, ListValue, MapValue, Value};
use indexmap::IndexMap;
use serde_json::Value as Json;

use crate::model::{DeclKind, DeclType};

pub fn to_cel(v: &Json, t: &DeclType) -> Value {
    match (&t.kind, v) {
        (_, Json::Null) => Value::Null,
        (DeclKind::Object { fields, .. }, Json::Object(m)) => {
            let mut entries = IndexMap::with_capacity(fields.len());
            for (escaped, f) in fields {
                match m.get(&f.json_name) {
                    None | Some(Json::Null) => {}
                    Some(fv) => {
                        entries.insert(
                            Key::String(escaped.clone()),
                            (Value::String(escaped.clone()), to_cel(fv, &f.ty)),
                        );
                    }
                }
            }
            Value::Map(Arc::new(MapValue { entries }))
        }
        (DeclKind::Map { elem }, Json::Object(m)) => {
            let mut entries = IndexMap::with_capacity(m.len());
            for (k, fv) in m {
                let k: Arc<str> = k.as_str().into();
                entries.insert(Key::String(k.clone()), (Value::String(k), to_cel(fv, elem)));
            }
            Value::Map(Arc::new(MapValue { entries }))
        }
        (DeclKind::List { elem, list_type }, Json::Array(a)) => {
            let items = a.iter().map(|x| to_cel(x, elem)).collect();
            Value::List(Arc::new(ListValue::with_kind(items, list_type.clone())))
        }
        (DeclKind::Int, Json::Number(n)) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
        },
        (DeclKind::Double, Json::Number(n)) => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
        (DeclKind::Bytes, Json::String(s)) => {
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(b) => Value::Bytes(b.into()),
                Err(_) => Value::String(s.as_str().into()),
            }
        }
        (DeclKind::Timestamp { date_only }, Json::String(s)) => {
            match parse_timestamp(s, *date_only) {
                Some(t) => Value::Timestamp(t),
                None => Value::String(s.as_str().into()),
            }
        }
        (DeclKind::Duration, Json::String(s)) => match crest_cel::stdlib::parse_duration(s) {
            Ok(d) => Value::Duration(d),
            Err(_) => Value::String(s.as_str().into()),
        },
        _ => plain(v),
    }
}

fn parse_timestamp(s: &str, date_only: bool) -> Option<DateTime<Utc>> {
    if date_only {
        let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
        return Some(d.and_hms_opt(0, 0, 0)?.and_utc());
    }
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// JSON without a schema: numbers that are integers stay ints.
pub fn plain(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => match n.as_u64() {
                Some(u) => Value::Uint(u),
                None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
            },
        },
        Json::String(s) => Value::String(s.as_str().into()),
        Json::Array(a) => Value::List(Arc::new(a.iter().map(plain).collect())),
        Json::Object(m) => {
            let entries = m
                .iter()
                .map(|(k, v)| {
                    let k: Arc<str> = k.as_str().into();
                    (Key::String(k.clone()), (Value::String(k), plain(v)))
                })
                .collect();
            Value::Map(Arc::new(MapValue { entries }))
        }
    }
}
