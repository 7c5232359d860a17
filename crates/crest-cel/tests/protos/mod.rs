//! The conformance suite's message types (`cel.expr.conformance.proto2/proto3` `TestAllTypes`,
//! `NestedTestAllTypes`, ...) read from its own `.proto` files, as a `TypeProvider` with
//! protobuf field defaults and proto3 presence. Well-known types map onto CEL types: wrappers,
//! `Value` and `Any` are `dyn`, `Struct` a map, `ListValue` a list, enums ints.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use chrono::DateTime;
use indexmap::IndexMap;
use serde_json::Value as J;

use crest_cel::provider::TypeProvider;
use crest_cel::types::Type;
use crest_cel::value::{Key, MapValue, ObjectValue, Value};

#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub ty: Type,
    /// The protobuf type as written (`int32`, `NestedEnum`, ...), resolved for messages/enums.
    pub proto: String,
    pub repeated: bool,
    pub map: bool,
    /// Explicit presence (proto2, `optional`, messages, oneofs).
    pub presence: bool,
    pub default: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Protos {
    pub messages: HashMap<String, IndexMap<String, Field>>,
    /// Enum full name -> value name -> number.
    pub enums: HashMap<String, HashMap<String, i64>>,
    proto2: HashMap<String, bool>,
}

fn scalar(t: &str) -> Option<Type> {
    Some(match t {
        "int32" | "int64" | "sint32" | "sint64" | "sfixed32" | "sfixed64" => Type::Int,
        "uint32" | "uint64" | "fixed32" | "fixed64" => Type::Uint,
        "float" | "double" => Type::Double,
        "bool" => Type::Bool,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Any" => Type::Any,
        "google.protobuf.Struct" => Type::map(Type::String, Type::Dyn),
        "google.protobuf.ListValue" => Type::list(Type::Dyn),
        "google.protobuf.NullValue" => Type::Null,
        t if t.starts_with("google.protobuf.") => Type::Dyn,
        _ => return None,
    })
}

impl Protos {
    pub(crate) fn load(dir: &Path) -> Protos {
        let mut p = Protos::default();
        for (pkg, file) in [
            ("cel.expr.conformance.proto2", "proto2/test_all_types.proto"),
            ("cel.expr.conformance.proto3", "proto3/test_all_types.proto"),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            p.parse(pkg, &text, pkg.ends_with("proto2"));
        }
        p.resolve();
        p
    }

    fn parse(&mut self, pkg: &str, text: &str, proto2: bool) {
        // Frames: Some(full message name) or None (enum, oneof, group, ... to skip or merge).
        enum Frame {
            Message(String),
            Enum(String),
            Oneof,
            Skip,
        }
        let mut stack: Vec<Frame> = vec![];
        let scope = |stack: &Vec<Frame>| -> String {
            stack
                .iter()
                .rev()
                .find_map(|f| match f {
                    Frame::Message(m) => Some(m.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| pkg.to_string())
        };
        for raw in text.lines() {
            let line = raw.split("//").next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('}') {
                stack.pop();
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.first().copied() {
                Some("message") => {
                    let name = format!("{}.{}", scope(&stack), words[1]);
                    self.messages.entry(name.clone()).or_default();
                    self.proto2.insert(name.clone(), proto2);
                    stack.push(Frame::Message(name));
                    continue;
                }
                Some("enum") => {
                    let name = format!("{}.{}", scope(&stack), words[1]);
                    self.enums.entry(name.clone()).or_default();
                    stack.push(Frame::Enum(name));
                    continue;
                }
                Some("oneof") => {
                    stack.push(Frame::Oneof);
                    continue;
                }
                _ => {}
            }
            if line.ends_with('{') {
                stack.push(Frame::Skip);
                continue;
            }
            if matches!(stack.last(), Some(Frame::Skip) | None) {
                continue;
            }
            if let Some(Frame::Enum(e)) = stack.last() {
                if let Some((n, v)) = line.trim_end_matches(';').split_once('=') {
                    let v: i64 = v.trim().parse().unwrap_or(0);
                    self.enums
                        .entry(e.clone())
                        .or_default()
                        .insert(n.trim().to_string(), v);
                }
                continue;
            }
            if matches!(
                words.first().copied(),
                Some(
                    "option"
                        | "extensions"
                        | "reserved"
                        | "extend"
                        | "syntax"
                        | "package"
                        | "import"
                )
            ) {
                continue;
            }
            let in_oneof = matches!(stack.last(), Some(Frame::Oneof));
            let msg = scope(&stack);
            let Some((decl, _)) = line.split_once('=') else {
                continue;
            };
            let default = line.split_once("[default =").map(|(_, d)| {
                d.trim()
                    .trim_end_matches("];")
                    .trim()
                    .trim_matches('"')
                    .to_string()
            });
            let (label, rest) = match decl.split_whitespace().next() {
                Some(l @ ("optional" | "repeated" | "required")) => {
                    (l, decl.trim_start()[l.len()..].trim())
                }
                _ => ("", decl.trim()),
            };
            let (ty, name, map) = if let Some(m) = rest.strip_prefix("map<") {
                let (kv, name) = m.split_once('>').unwrap_or((m, ""));
                (kv.replace(' ', ""), name.trim().to_string(), true)
            } else {
                let mut it = rest.split_whitespace();
                let t = it.next().unwrap_or("").to_string();
                (t, it.next().unwrap_or("").to_string(), false)
            };
            if name.is_empty() {
                continue;
            }
            let field = Field {
                ty: Type::Dyn,
                proto: format!("{msg}|{ty}"),
                repeated: label == "repeated",
                map,
                presence: proto2 || label == "optional" || in_oneof,
                default,
            };
            self.messages.entry(msg).or_default().insert(name, field);
        }
    }

    /// Resolves field type names (relative to their message scope) once all are known.
    fn resolve(&mut self) {
        let names: Vec<String> = self.messages.keys().cloned().collect();
        let enums: Vec<String> = self.enums.keys().cloned().collect();
        let resolve_one = |scope: &str, t: &str| -> (Type, String) {
            if let Some(s) = scalar(t) {
                return (s, t.to_string());
            }
            let mut s = scope.to_string();
            loop {
                let cand = if s.is_empty() {
                    t.to_string()
                } else {
                    format!("{s}.{t}")
                };
                if names.contains(&cand) {
                    return (Type::Object(cand.clone()), cand);
                }
                if enums.contains(&cand) {
                    return (Type::Int, cand);
                }
                match s.rfind('.') {
                    Some(i) => s.truncate(i),
                    None if !s.is_empty() => s.clear(),
                    None => return (Type::Dyn, t.to_string()),
                }
            }
        };
        for fields in self.messages.values_mut() {
            for f in fields.values_mut() {
                let (scope, t) = f
                    .proto
                    .split_once('|')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .unwrap_or_default();
                if f.map {
                    let (k, v) = t.split_once(',').unwrap_or((&t, ""));
                    let (kt, _) = resolve_one(&scope, k);
                    let (vt, vp) = resolve_one(&scope, v);
                    f.ty = Type::map(kt, vt);
                    f.proto = vp;
                } else {
                    let (et, ep) = resolve_one(&scope, &t);
                    f.ty = if f.repeated { Type::list(et) } else { et };
                    f.proto = ep;
                    if matches!(f.ty, Type::Object(_)) || f.proto.starts_with("google.protobuf.") {
                        f.presence = true;
                    }
                }
            }
        }
    }

    pub(crate) fn field(&self, msg: &str, field: &str) -> Option<&Field> {
        self.messages.get(msg)?.get(field)
    }

    fn empty(&self, msg: &str) -> Value {
        Value::Object(Arc::new(ObjectValue {
            type_name: msg.to_string(),
            fields: IndexMap::new(),
        }))
    }

    fn default_of(&self, f: &Field) -> Value {
        if f.repeated {
            return Value::list(vec![]);
        }
        if f.map {
            return Value::Map(Arc::new(MapValue::default()));
        }
        if let Some(e) = self.enums.get(&f.proto) {
            return Value::Int(
                f.default
                    .as_ref()
                    .and_then(|d| e.get(d).copied())
                    .unwrap_or(0),
            );
        }
        let d = f.default.as_deref();
        match &f.ty {
            Type::Int => Value::Int(d.and_then(|d| d.parse().ok()).unwrap_or(0)),
            Type::Uint => Value::Uint(d.and_then(|d| d.parse().ok()).unwrap_or(0)),
            Type::Double => Value::Double(d.and_then(|d| d.parse().ok()).unwrap_or(0.0)),
            Type::Bool => Value::Bool(d == Some("true")),
            Type::String => Value::string(d.unwrap_or("")),
            Type::Bytes => Value::Bytes(d.unwrap_or("").as_bytes().into()),
            Type::Timestamp => Value::Timestamp(DateTime::from_timestamp(0, 0).unwrap_or_default()),
            Type::Duration => Value::Duration(chrono::TimeDelta::zero()),
            Type::Map(..) => Value::Map(Arc::new(MapValue::default())),
            Type::List(_) => Value::list(vec![]),
            Type::Object(m) => self.empty(m),
            _ => Value::Null,
        }
    }

    /// Whether a value is the field's zero value (proto3 fields without presence drop it).
    fn is_default(&self, f: &Field, v: &Value) -> bool {
        match v {
            Value::List(l) => l.is_empty(),
            Value::Map(m) => m.is_empty(),
            _ => !f.presence && v.equals(&self.default_of(f)),
        }
    }

    /// Converts a protobuf-JSON value of a field into a CEL value.
    pub(crate) fn value_from_json(&self, ty: &Type, proto: &str, j: &J) -> Option<Value> {
        Some(match (ty, j) {
            (_, J::Null) => Value::Null,
            (Type::Int, J::String(s)) if self.enums.contains_key(proto) => {
                Value::Int(*self.enums.get(proto)?.get(s.as_str())?)
            }
            (Type::Int, J::String(s)) => Value::Int(s.parse().ok()?),
            (Type::Int, n) => Value::Int(n.as_i64()?),
            (Type::Uint, J::String(s)) => Value::Uint(s.parse().ok()?),
            (Type::Uint, n) => Value::Uint(n.as_u64()?),
            (Type::Double, J::String(s)) => Value::Double(match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                s => s.parse().ok()?,
            }),
            (Type::Double, n) => Value::Double(n.as_f64()?),
            (Type::Bool, J::Bool(b)) => Value::Bool(*b),
            (Type::String, J::String(s)) => Value::string(s),
            (Type::Bytes, J::String(s)) => Value::Bytes(
                base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .ok()?
                    .into(),
            ),
            (Type::Timestamp, J::String(s)) => {
                Value::Timestamp(DateTime::parse_from_rfc3339(s).ok()?.to_utc())
            }
            (Type::Duration, J::String(s)) => {
                Value::Duration(crest_cel::stdlib::parse_duration(s).ok()?)
            }
            (Type::List(e), J::Array(a)) => Value::list(
                a.iter()
                    .map(|x| self.value_from_json(e, proto, x))
                    .collect::<Option<Vec<_>>>()?,
            ),
            (Type::Map(k, v), J::Object(o)) => {
                let mut m = IndexMap::new();
                for (ks, x) in o {
                    let key = match &**k {
                        Type::Bool => Value::Bool(ks == "true"),
                        Type::Int => Value::Int(ks.parse().ok()?),
                        Type::Uint => Value::Uint(ks.parse().ok()?),
                        _ => Value::string(ks),
                    };
                    let val = self.value_from_json(v, proto, x)?;
                    m.insert(Key::from_value(&key)?, (key, val));
                }
                Value::Map(Arc::new(MapValue { entries: m }))
            }
            (Type::Object(name), J::Object(o)) => self.message_from_json(name, o)?,
            _ => return None,
        })
    }

    pub(crate) fn message_from_json(
        &self,
        name: &str,
        o: &serde_json::Map<String, J>,
    ) -> Option<Value> {
        let mut fields = IndexMap::new();
        for (k, j) in o {
            if k == "@type" {
                continue;
            }
            let f = self.field(name, k)?;
            let v = match (&f.ty, wrapped(&f.proto)) {
                (_, Some(t)) => self.value_from_json(&t, &f.proto, j)?,
                (Type::Map(..), _) if f.proto == "google.protobuf.Struct" => json_dyn(j)?,
                (Type::Dyn, _) if f.proto == "google.protobuf.Value" => json_dyn(j)?,
                (Type::Dyn | Type::Any, _) => return None,
                (t, _) => self.value_from_json(t, &f.proto, j)?,
            };
            fields.insert(k.clone(), v);
        }
        self.new_object(name, fields).ok()
    }
}

impl TypeProvider for Protos {
    fn has_type(&self, name: &str) -> bool {
        self.messages.contains_key(name)
    }

    fn field_type(&self, name: &str, field: &str) -> Option<Type> {
        self.field(name, field).map(|f| f.ty.clone())
    }

    fn field_default(&self, name: &str, field: &str) -> Option<Value> {
        self.field(name, field).map(|f| self.default_of(f))
    }

    fn enum_value(&self, name: &str) -> Option<i64> {
        let (e, v) = name.rsplit_once('.')?;
        self.enums.get(e)?.get(v).copied()
    }

    fn new_object(&self, name: &str, fields: IndexMap<String, Value>) -> Result<Value, String> {
        let mut out = IndexMap::with_capacity(fields.len());
        for (k, mut v) in fields {
            let f = self
                .field(name, &k)
                .ok_or_else(|| format!("no such field: {k}"))?;
            let int32 = matches!(f.proto.as_str(), "int32" | "sint32" | "sfixed32")
                || self.enums.contains_key(&f.proto);
            match (&v, f.proto.as_str()) {
                (Value::Int(i), _) if int32 && i32::try_from(*i).is_err() => {
                    return Err("range error".into())
                }
                (Value::Uint(u), "uint32" | "fixed32") if u32::try_from(*u).is_err() => {
                    return Err("range error".into())
                }
                (Value::Double(d), "float") => v = Value::Double(*d as f32 as f64),
                _ => {}
            }
            // A null element of a repeated or map field of messages (wrappers, timestamps,
            // durations, ...) is no element.
            let message_elems = (f.repeated || f.map)
                && (self.messages.contains_key(&f.proto)
                    || (f.proto.starts_with("google.protobuf.")
                        && !matches!(
                            f.proto.as_str(),
                            "google.protobuf.Value"
                                | "google.protobuf.Any"
                                | "google.protobuf.Struct"
                                | "google.protobuf.ListValue"
                        )));
            if message_elems {
                v = match v {
                    Value::List(l) => Value::list(
                        l.iter()
                            .filter(|x| !matches!(x, Value::Null))
                            .cloned()
                            .collect(),
                    ),
                    Value::Map(m) => {
                        let mut m = (*m).clone();
                        m.entries.retain(|_, (_, x)| !matches!(x, Value::Null));
                        Value::Map(Arc::new(m))
                    }
                    other => other,
                };
            }
            if matches!(v, Value::Null) {
                // null clears message-typed fields (wrappers, timestamps, ...) but is no value
                // of a scalar, repeated, map, Struct or ListValue field.
                let clears = !f.repeated
                    && !f.map
                    && (matches!(f.ty, Type::Object(_))
                        || (f.proto.starts_with("google.protobuf.")
                            && !matches!(
                                f.proto.as_str(),
                                "google.protobuf.Struct" | "google.protobuf.ListValue"
                            )));
                if !clears {
                    return Err(format!("unsupported field type for null: {k}"));
                }
                if matches!(f.ty, Type::Null) || f.proto == "google.protobuf.Value" {
                    out.insert(k, v);
                }
                continue;
            }
            if !crest_cel::decls::value_has_type(&v, &f.ty) && !matches!(v, Value::Null) {
                return Err(format!("no such overload: field {k}"));
            }
            if self.is_default(f, &v) {
                continue;
            }
            out.insert(k, v);
        }
        let _ = self.proto2.get(name);
        Ok(Value::Object(Arc::new(ObjectValue {
            type_name: name.to_string(),
            fields: out,
        })))
    }
}

/// The scalar a wrapper type wraps.
fn wrapped(proto: &str) -> Option<Type> {
    Some(match proto {
        "google.protobuf.Int64Value" | "google.protobuf.Int32Value" => Type::Int,
        "google.protobuf.UInt64Value" | "google.protobuf.UInt32Value" => Type::Uint,
        "google.protobuf.DoubleValue" | "google.protobuf.FloatValue" => Type::Double,
        "google.protobuf.StringValue" => Type::String,
        "google.protobuf.BoolValue" => Type::Bool,
        "google.protobuf.BytesValue" => Type::Bytes,
        _ => return None,
    })
}

/// Plain JSON as CEL's JSON values (numbers are doubles).
fn json_dyn(j: &J) -> Option<Value> {
    Some(match j {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => Value::Double(n.as_f64()?),
        J::String(s) => Value::string(s),
        J::Array(a) => Value::list(a.iter().map(json_dyn).collect::<Option<Vec<_>>>()?),
        J::Object(o) => {
            let mut m = IndexMap::new();
            for (k, v) in o {
                let key = Value::string(k);
                m.insert(Key::from_value(&key)?, (key, json_dyn(v)?));
            }
            Value::Map(Arc::new(MapValue { entries: m }))
        }
    })
}
