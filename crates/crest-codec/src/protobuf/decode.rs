//! Protobuf to JSON: a message decoded as gogo-protobuf fills the Go struct, then written as Go's
//! encoding/json writes that struct — plain scalars omitted when zero (`omitempty`), pointers
//! present exactly when sent, struct values always present (a zero `metav1.Time` as `null`),
//! fields without `omitempty` always. Fields the table does not know are skipped, as gogo skips
//! unknown field numbers.

use super::schema::{Card, Messages, Msg, Presence, Special, Ty};
use super::wire::{Reader, FIXED64, LEN, VARINT};
use base64::Engine;
use serde_json::{Map, Value};

/// How deep messages nest before the body is refused (Kubernetes objects nest far less; the
/// JSON decoders stop at a similar depth).
const MAX_DEPTH: usize = 100;

pub(crate) fn message(msgs: &Messages, m: &Msg, buf: &[u8], depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("proto: message nested too deeply".into());
    }
    match m.special {
        Special::None => {}
        s => return special(msgs, m, s, buf, depth),
    }
    let mut slots: Vec<Option<Value>> = Vec::new();
    slots.resize_with(m.fields.len(), || None);
    let mut r = Reader::new(buf);
    while !r.is_empty() {
        let (tag, wire) = r.key(m.short_name())?;
        let Some((i, f)) = m.field(tag) else {
            r.skip(wire)?;
            continue;
        };
        let wrong = || {
            format!(
                "proto: wrong wireType = {wire} for field {}",
                go_name(&f.name)
            )
        };
        match f.card {
            Card::Map => {
                if wire != LEN {
                    return Err(wrong());
                }
                let (k, v) = map_entry(msgs, f.ty, r.bytes()?, depth)?;
                let slot = slots[i].get_or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(o) = slot {
                    o.insert(k, v);
                }
            }
            Card::Repeated => {
                let slot = slots[i].get_or_insert_with(|| Value::Array(vec![]));
                let Value::Array(items) = slot else {
                    continue;
                };
                // proto2 repeated scalars arrive unpacked; accept packed ones too.
                if wire == LEN && matches!(f.ty, Ty::Bool | Ty::Int32 | Ty::Int64) {
                    let mut packed = Reader::new(r.bytes()?);
                    while !packed.is_empty() {
                        items.push(varint_value(f.ty, packed.varint()?));
                    }
                    continue;
                }
                items.push(scalar_or_message(msgs, f.ty, wire, &mut r, depth).ok_or_else(wrong)??);
            }
            Card::One => {
                let v = scalar_or_message(msgs, f.ty, wire, &mut r, depth).ok_or_else(wrong)??;
                slots[i] = Some(v);
            }
        }
    }
    let mut out = Map::new();
    for (f, slot) in m.fields.iter().zip(slots) {
        let v = match slot {
            Some(v) => {
                let keep = matches!(f.presence, Presence::Pointer | Presence::Always)
                    || matches!(f.ty, Ty::Message(_))
                    || f.card != Card::One
                    || !is_zero(&v);
                if !keep {
                    continue;
                }
                v
            }
            None => match (f.card, f.ty, f.presence) {
                (_, _, Presence::Pointer) => continue,
                (Card::One, Ty::Message(sub), _) => message(msgs, msgs.msg(sub), &[], depth + 1)?,
                (Card::One, ty, Presence::Always) => zero(ty),
                (_, _, Presence::Always) => Value::Null,
                _ => continue,
            },
        };
        out.insert(f.name.clone(), v);
    }
    Ok(Value::Object(out))
}

/// Go's field name for an error: the JSON name with its first letter upper-cased.
fn go_name(json: &str) -> String {
    let mut c = json.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

fn zero(ty: Ty) -> Value {
    match ty {
        Ty::String | Ty::Bytes => Value::String(String::new()),
        Ty::Bool => false.into(),
        Ty::Int32 | Ty::Int64 => 0.into(),
        Ty::Double => 0.0.into(),
        Ty::Message(_) => Value::Null,
    }
}

fn varint_value(ty: Ty, v: u64) -> Value {
    match ty {
        Ty::Bool => (v != 0).into(),
        // int32 is sign-extended on the wire; Go truncates to 32 bits.
        Ty::Int32 => (v as i32).into(),
        _ => (v as i64).into(),
    }
}

/// One value of type `ty` arriving with wire type `wire`; `None` when the wire type is wrong.
fn scalar_or_message(
    msgs: &Messages,
    ty: Ty,
    wire: u8,
    r: &mut Reader<'_>,
    depth: usize,
) -> Option<Result<Value, String>> {
    Some(match (ty, wire) {
        (Ty::Bool | Ty::Int32 | Ty::Int64, VARINT) => r.varint().map(|v| varint_value(ty, v)),
        (Ty::Double, FIXED64) => r.fixed64().map(|v| f64::from_bits(v).into()),
        (Ty::String, LEN) => r
            .bytes()
            .map(|b| Value::String(String::from_utf8_lossy(b).into_owned())),
        (Ty::Bytes, LEN) => r
            .bytes()
            .map(|b| base64::engine::general_purpose::STANDARD.encode(b).into()),
        (Ty::Message(sub), LEN) => r
            .bytes()
            .and_then(|b| message(msgs, msgs.msg(sub), b, depth + 1)),
        _ => return None,
    })
}

/// A map entry message: key = 1 (string), value = 2.
fn map_entry(msgs: &Messages, ty: Ty, buf: &[u8], depth: usize) -> Result<(String, Value), String> {
    let mut r = Reader::new(buf);
    let mut key = String::new();
    let mut value = None;
    while !r.is_empty() {
        let (tag, wire) = r.key("MapEntry")?;
        match (tag, wire) {
            (1, LEN) => key = String::from_utf8_lossy(r.bytes()?).into_owned(),
            (2, w) => {
                value = Some(
                    scalar_or_message(msgs, ty, w, &mut r, depth)
                        .ok_or_else(|| format!("proto: wrong wireType = {w} for field value"))??,
                )
            }
            (_, w) => r.skip(w)?,
        }
    }
    let value = match (value, ty) {
        (Some(v), _) => v,
        (None, Ty::Message(sub)) => message(msgs, msgs.msg(sub), &[], depth + 1)?,
        (None, ty) => zero(ty),
    };
    Ok((key, value))
}

/// The fields of a message, by number, as raw wire values (for the special messages).
fn fields<'a>(m: &Msg, buf: &'a [u8]) -> Result<Vec<(u32, u8, Field<'a>)>, String> {
    let mut r = Reader::new(buf);
    let mut out = vec![];
    while !r.is_empty() {
        let (tag, wire) = r.key(m.short_name())?;
        let v = match wire {
            VARINT => Field::Varint(r.varint()?),
            LEN => Field::Bytes(r.bytes()?),
            w => {
                r.skip(w)?;
                continue;
            }
        };
        out.push((tag, wire, v));
    }
    Ok(out)
}

enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

fn special(
    msgs: &Messages,
    m: &Msg,
    s: Special,
    buf: &[u8],
    depth: usize,
) -> Result<Value, String> {
    let fs = fields(m, buf)?;
    let varint = |n: u32| {
        fs.iter().rev().find_map(|(t, _, v)| match v {
            Field::Varint(x) if *t == n => Some(*x),
            _ => None,
        })
    };
    let bytes = |n: u32| {
        fs.iter().rev().find_map(|(t, _, v)| match v {
            Field::Bytes(b) if *t == n => Some(*b),
            _ => None,
        })
    };
    let text = |n: u32| bytes(n).map(|b| String::from_utf8_lossy(b).into_owned());
    let schema = |b: &[u8]| match msgs.by_name(&m.name.replace(m.short_name(), "JSONSchemaProps")) {
        Some(props) => message(msgs, props, b, depth + 1),
        None => Ok(Value::Null),
    };
    Ok(match s {
        Special::Time | Special::MicroTime => {
            if buf.is_empty() {
                return Ok(Value::Null);
            }
            let secs = varint(1).unwrap_or(0) as i64;
            let nanos = varint(2).unwrap_or(0) as i32;
            let micro = s == Special::MicroTime;
            // metav1.Time keeps whole seconds (its Unmarshal drops the nanoseconds).
            let nanos = if micro { nanos } else { 0 };
            let dt = u32::try_from(nanos)
                .ok()
                .and_then(|n| chrono::DateTime::from_timestamp(secs, n))
                .ok_or_else(|| format!("Time out of range: seconds {secs}, nanos {nanos}"))?;
            let fmt = if micro {
                "%Y-%m-%dT%H:%M:%S%.6fZ"
            } else {
                "%Y-%m-%dT%H:%M:%SZ"
            };
            dt.format(fmt).to_string().into()
        }
        Special::IntOrString => {
            if varint(1) == Some(1) {
                text(3).unwrap_or_default().into()
            } else {
                (varint(2).unwrap_or(0) as i32).into()
            }
        }
        Special::Quantity => match text(1) {
            Some(q) if !q.is_empty() => q.into(),
            _ => "0".into(),
        },
        Special::RawJson => match bytes(1) {
            None => Value::Null,
            Some(raw) => serde_json::from_slice(raw).map_err(|e| format!("invalid JSON: {e}"))?,
        },
        Special::OrArray => match bytes(1) {
            Some(b) => schema(b)?,
            None => {
                let items: Result<Vec<Value>, String> = fs
                    .iter()
                    .filter_map(|(t, _, v)| match v {
                        Field::Bytes(b) if *t == 2 => Some(schema(b)),
                        _ => None,
                    })
                    .collect();
                Value::Array(items?)
            }
        },
        Special::OrBool => match bytes(2) {
            Some(b) => schema(b)?,
            None => (varint(1).unwrap_or(0) != 0).into(),
        },
        Special::OrStringArray => match bytes(1) {
            Some(b) => schema(b)?,
            None => Value::Array(
                fs.iter()
                    .filter_map(|(t, _, v)| match v {
                        Field::Bytes(b) if *t == 2 => {
                            Some(Value::String(String::from_utf8_lossy(b).into_owned()))
                        }
                        _ => None,
                    })
                    .collect(),
            ),
        },
        Special::StringList => Value::Array(
            fs.iter()
                .filter_map(|(t, _, v)| match v {
                    Field::Bytes(b) if *t == 1 => {
                        Some(Value::String(String::from_utf8_lossy(b).into_owned()))
                    }
                    _ => None,
                })
                .collect(),
        ),
        Special::None => Value::Null,
    })
}
