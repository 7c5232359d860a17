//! JSON to protobuf: an object as kube-apiserver's protobuf serializer writes the Go struct the
//! JSON stands for. A field absent or `null` in the JSON is not written (Go's zero value or nil
//! pointer, which is what a decoder makes of an absent field); a present one is, zero or not, so
//! pointers set to zero values keep them.

use super::schema::{Card, Messages, Msg, Special, Ty};
use super::wire::{begin_len, end_len, put_bytes, put_key, put_varint, FIXED64, VARINT};
use base64::Engine;
use serde_json::Value;

/// How deep values nest before the rest is left out (stored objects passed the JSON decoders'
/// depth limit, so this only bounds the recursion).
const MAX_DEPTH: usize = 128;

pub(crate) fn message(msgs: &Messages, m: &Msg, v: &Value, out: &mut Vec<u8>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if m.special != Special::None {
        special(msgs, m, v, out, depth);
        return;
    }
    let Value::Object(o) = v else {
        return;
    };
    for f in &m.fields {
        let Some(x) = o.get(f.name.as_str()).filter(|x| !x.is_null()) else {
            continue;
        };
        match f.card {
            Card::One => value(msgs, f.tag, f.ty, x, out, depth),
            Card::Repeated => {
                if let Value::Array(items) = x {
                    for item in items {
                        // A null element is Go's zero value (it keeps its place).
                        match (item, f.ty) {
                            (Value::Null, Ty::String | Ty::Bytes) => put_bytes(f.tag, b"", out),
                            (Value::Null, Ty::Bool | Ty::Int32 | Ty::Int64) => {
                                put_key(f.tag, VARINT, out);
                                put_varint(0, out);
                            }
                            _ => value(msgs, f.tag, f.ty, item, out, depth),
                        }
                    }
                }
            }
            Card::Map => {
                if let Value::Object(entries) = x {
                    for (k, item) in entries {
                        let start = begin_len(f.tag, out);
                        put_bytes(1, k.as_bytes(), out);
                        value(msgs, 2, f.ty, item, out, depth);
                        end_len(start, out);
                    }
                }
            }
        }
    }
}

/// One field value; a value of the wrong JSON type is left out.
fn value(msgs: &Messages, tag: u32, ty: Ty, v: &Value, out: &mut Vec<u8>, depth: usize) {
    match ty {
        Ty::String => {
            if let Some(s) = v.as_str() {
                put_bytes(tag, s.as_bytes(), out);
            }
        }
        Ty::Bytes => {
            if let Some(b) = v
                .as_str()
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            {
                put_bytes(tag, &b, out);
            }
        }
        Ty::Bool => {
            if let Some(b) = v.as_bool() {
                put_key(tag, VARINT, out);
                put_varint(u64::from(b), out);
            }
        }
        Ty::Int32 | Ty::Int64 => {
            let n = v.as_i64().or_else(|| v.as_f64().map(|f| f as i64));
            if let Some(n) = n {
                let n = if ty == Ty::Int32 {
                    i64::from(n as i32)
                } else {
                    n
                };
                put_key(tag, VARINT, out);
                put_varint(n as u64, out);
            }
        }
        Ty::Double => {
            if let Some(f) = v.as_f64() {
                put_key(tag, FIXED64, out);
                out.extend_from_slice(&f.to_le_bytes());
            }
        }
        Ty::Message(sub) => {
            let start = begin_len(tag, out);
            message(msgs, msgs.msg(sub), v, out, depth + 1);
            end_len(start, out);
        }
    }
}

fn special(msgs: &Messages, m: &Msg, v: &Value, out: &mut Vec<u8>, depth: usize) {
    let schema = |v: &Value, tag: u32, out: &mut Vec<u8>| {
        if let Some(props) = msgs.by_name(&m.name.replace(m.short_name(), "JSONSchemaProps")) {
            let start = begin_len(tag, out);
            message(msgs, props, v, out, depth + 1);
            end_len(start, out);
        }
    };
    match m.special {
        Special::Time | Special::MicroTime => {
            let Some(t) = v
                .as_str()
                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            else {
                return;
            };
            put_key(1, VARINT, out);
            put_varint(t.timestamp() as u64, out);
            let nanos = t.timestamp_subsec_nanos();
            if nanos != 0 {
                put_key(2, VARINT, out);
                put_varint(u64::from(nanos), out);
            }
        }
        Special::IntOrString => match v {
            Value::String(s) => {
                put_key(1, VARINT, out);
                put_varint(1, out);
                put_bytes(3, s.as_bytes(), out);
            }
            Value::Number(n) => {
                put_key(1, VARINT, out);
                put_varint(0, out);
                put_key(2, VARINT, out);
                put_varint(i64::from(n.as_i64().unwrap_or(0) as i32) as u64, out);
            }
            _ => {}
        },
        Special::Quantity => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return,
            };
            put_bytes(1, s.as_bytes(), out);
        }
        Special::RawJson => {
            if let Ok(raw) = serde_json::to_vec(v) {
                put_bytes(1, &raw, out);
            }
        }
        Special::OrArray => match v {
            Value::Array(items) => items.iter().for_each(|s| schema(s, 2, out)),
            other => schema(other, 1, out),
        },
        Special::OrBool => match v {
            Value::Bool(b) => {
                put_key(1, VARINT, out);
                put_varint(u64::from(*b), out);
            }
            other => {
                put_key(1, VARINT, out);
                put_varint(1, out);
                schema(other, 2, out);
            }
        },
        Special::OrStringArray => match v {
            Value::Array(items) => {
                for s in items.iter().filter_map(Value::as_str) {
                    put_bytes(2, s.as_bytes(), out);
                }
            }
            other => schema(other, 1, out),
        },
        Special::StringList => {
            if let Value::Array(items) = v {
                for s in items.iter().filter_map(Value::as_str) {
                    put_bytes(1, s.as_bytes(), out);
                }
            }
        }
        Special::None => {}
    }
}
