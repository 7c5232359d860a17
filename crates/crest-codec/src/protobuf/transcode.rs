//! JSON bytes to protobuf without building a `Value`: the cached JSON of an object is read
//! token by token (serde_json's deserializer driven by the message table) and written as the
//! message, the same bytes [`super::encode`] writes from a `Value` but for field order (JSON
//! key order here, which decoders do not care about). Lists and GETs of built-in kinds in
//! protobuf cost about what their JSON does this way, instead of a parse into a tree per object.

use super::encode;
use super::schema::{Card, Messages, Msg, Special, Ty};
use super::wire::{begin_len, end_len, put_bytes, put_key, put_varint, FIXED64, VARINT};
use base64::Engine;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Writes the message `m` read from `json` into `out`; `false` (with `out` unspecified) when the
/// JSON does not parse.
pub(crate) fn message(msgs: &Messages, m: &Msg, json: &[u8], out: &mut Vec<u8>) -> bool {
    let mut de = serde_json::Deserializer::from_slice(json);
    let ok = MsgSeed {
        msgs,
        m,
        out,
        depth: 0,
    }
    .deserialize(&mut de)
    .is_ok();
    ok && de.end().is_ok()
}

/// How deep the transcoder follows nesting (the stored JSON passed the decoders' limits).
const MAX_DEPTH: usize = 128;

struct MsgSeed<'a, 'o> {
    msgs: &'a Messages,
    m: &'a Msg,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for MsgSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MsgSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let Some(f) = self.m.field_named(&key.0) else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let seed = FieldSeed {
                msgs: self.msgs,
                tag: f.tag,
                ty: f.ty,
                card: f.card,
                out: &mut *self.out,
                depth: self.depth,
            };
            map.next_value_seed(seed)?;
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A map key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// One field's JSON value: a single value, an array of them, or a map of them.
struct FieldSeed<'a, 'o> {
    msgs: &'a Messages,
    tag: u32,
    ty: Ty,
    card: Card,
    out: &'o mut Vec<u8>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.card {
            Card::One => ValueSeed {
                msgs: self.msgs,
                tag: self.tag,
                ty: self.ty,
                out: self.out,
                depth: self.depth,
                in_list: false,
            }
            .deserialize(d),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array or an object")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            let seed = ValueSeed {
                msgs: self.msgs,
                tag: self.tag,
                ty: self.ty,
                out: &mut *self.out,
                depth: self.depth,
                in_list: true,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let start = begin_len(self.tag, self.out);
            put_bytes(1, key.0.as_bytes(), self.out);
            map.next_value_seed(ValueSeed {
                msgs: self.msgs,
                tag: 2,
                ty: self.ty,
                out: &mut *self.out,
                depth: self.depth,
                in_list: false,
            })?;
            end_len(start, self.out);
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    // A scalar where an array or map belongs: left out, as the Value encoder does.
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

/// One value of type `ty`, written as field `tag`; `in_list`: an element of a repeated field,
/// where a null is Go's zero value rather than an absent field.
struct ValueSeed<'a, 'o> {
    msgs: &'a Messages,
    tag: u32,
    ty: Ty,
    out: &'o mut Vec<u8>,
    depth: usize,
    in_list: bool,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if let Ty::Message(i) = self.ty {
            let m = self.msgs.msg(i);
            // Kinds whose JSON is not their fields (Time and IntOrString are scalars and handled
            // below): through a Value, as the Value encoder writes them.
            if matches!(
                m.special,
                Special::RawJson
                    | Special::OrArray
                    | Special::OrBool
                    | Special::OrStringArray
                    | Special::StringList
            ) || self.depth >= MAX_DEPTH
            {
                let v = Value::deserialize(d)?;
                if (!v.is_null() || self.in_list) && self.depth < MAX_DEPTH {
                    let start = begin_len(self.tag, self.out);
                    encode::message(self.msgs, m, &v, self.out, self.depth + 1);
                    end_len(start, self.out);
                }
                return Ok(());
            }
        }
        d.deserialize_any(self)
    }
}

use serde::Deserialize as _;

impl ValueSeed<'_, '_> {
    fn special(&self) -> Special {
        match self.ty {
            Ty::Message(i) => self.msgs.msg(i).special,
            _ => Special::None,
        }
    }

    fn int(&mut self, n: i64) {
        match (self.ty, self.special()) {
            (Ty::Int32, _) => {
                put_key(self.tag, VARINT, self.out);
                put_varint(i64::from(n as i32) as u64, self.out);
            }
            (Ty::Int64, _) => {
                put_key(self.tag, VARINT, self.out);
                put_varint(n as u64, self.out);
            }
            (Ty::Double, _) => self.double(n as f64),
            (_, Special::IntOrString) => {
                let start = begin_len(self.tag, self.out);
                put_key(1, VARINT, self.out);
                put_varint(0, self.out);
                put_key(2, VARINT, self.out);
                put_varint(i64::from(n as i32) as u64, self.out);
                end_len(start, self.out);
            }
            (_, Special::Quantity) => {
                let start = begin_len(self.tag, self.out);
                put_bytes(1, n.to_string().as_bytes(), self.out);
                end_len(start, self.out);
            }
            _ => {}
        }
    }

    fn double(&mut self, f: f64) {
        match self.ty {
            Ty::Double => {
                put_key(self.tag, FIXED64, self.out);
                self.out.extend_from_slice(&f.to_le_bytes());
            }
            Ty::Int32 | Ty::Int64 => self.int(f as i64),
            _ => {
                if self.special() == Special::Quantity {
                    let start = begin_len(self.tag, self.out);
                    put_bytes(1, Value::from(f).to_string().as_bytes(), self.out);
                    end_len(start, self.out);
                }
            }
        }
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        // A null element of a list keeps its place as Go's zero value.
        if self.in_list {
            match self.ty {
                Ty::String | Ty::Bytes => put_bytes(self.tag, b"", self.out),
                Ty::Bool | Ty::Int32 | Ty::Int64 => {
                    put_key(self.tag, VARINT, self.out);
                    put_varint(0, self.out);
                }
                Ty::Double => {
                    put_key(self.tag, FIXED64, self.out);
                    self.out.extend_from_slice(&0f64.to_le_bytes());
                }
                Ty::Message(_) => {
                    let start = begin_len(self.tag, self.out);
                    end_len(start, self.out);
                }
            }
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        if self.ty == Ty::Bool {
            put_key(self.tag, VARINT, self.out);
            put_varint(u64::from(b), self.out);
        }
        Ok(())
    }
    fn visit_i64<E: de::Error>(mut self, n: i64) -> Result<(), E> {
        self.int(n);
        Ok(())
    }
    fn visit_u64<E: de::Error>(mut self, n: u64) -> Result<(), E> {
        self.int(n as i64);
        Ok(())
    }
    fn visit_f64<E: de::Error>(mut self, f: f64) -> Result<(), E> {
        self.double(f);
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        match (self.ty, self.special()) {
            (Ty::String, _) => put_bytes(self.tag, s.as_bytes(), self.out),
            (Ty::Bytes, _) => {
                if let Ok(b) = base64::engine::general_purpose::STANDARD.decode(s) {
                    put_bytes(self.tag, &b, self.out);
                }
            }
            (Ty::Message(i), Special::Time | Special::MicroTime | Special::IntOrString)
            | (Ty::Message(i), Special::Quantity) => {
                let start = begin_len(self.tag, self.out);
                encode::message(
                    self.msgs,
                    self.msgs.msg(i),
                    &Value::String(s.to_string()),
                    self.out,
                    self.depth + 1,
                );
                end_len(start, self.out);
            }
            _ => {}
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let Ty::Message(i) = self.ty else {
            return IgnoredAny.visit_map(map).map(drop);
        };
        let start = begin_len(self.tag, self.out);
        MsgSeed {
            msgs: self.msgs,
            m: self.msgs.msg(i),
            out: &mut *self.out,
            depth: self.depth + 1,
        }
        .visit_map(map)?;
        end_len(start, self.out);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        // An array where one value belongs: left out.
        IgnoredAny.visit_seq(seq).map(drop)
    }
}
