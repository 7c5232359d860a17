//! Duplicate fields in request bodies, found as kube-apiserver's strict decoding finds them.
//!
//! - JSON (`sigs.k8s.io/json` `UnmarshalStrict`, `DisallowDuplicateFields`): one
//!   `duplicate field "spec.template.spec.containers[0].image"` per duplicated key, in document
//!   order. The path is the decoder's strict field stack: keys joined with `.` (never escaped, so a
//!   key with dots reads as several), array indices as `[i]` with no dot before them; the whole
//!   path `strconv.Quote`d. Messages are deduplicated and at most 100 are kept, as upstream.
//! - YAML (`sigs.k8s.io/yaml` `YAMLToJSONStrict`, i.e. goyaml.v2 `UnmarshalStrict`): one
//!   `line 5: key "name" already set in map` per duplicated key. The line is the 1-based line of
//!   the duplicate's *value* node and the errors come in the order goyaml.v2 records them (a
//!   value's own duplicates before its key's). Keys are compared after YAML 1.1 resolution
//!   (`1` and `01` are the same int, `yes` and `true` the same bool) and printed with Go's `%#v`.
//!   Upstream joins them into one strict error `yaml: unmarshal errors:\n  line 5: ...\n  line
//!   12: ...`, but warns with each line on its own ([`Duplicates`] does both).
//!
//! Both are pure, never panic, keep serde_json's (and serde_yaml_ng's) nesting limit of 128 and
//! return nothing for input the normal decoder rejects (it reports the syntax error).

use crest_gofmt::go_quote;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::{self, Write as _};

use crate::libyaml as yaml;

/// Upstream's cap on accumulated strict errors (`saveStrictError`).
const MAX_ERRORS: usize = 100;
/// Nesting allowed before giving up: the decoders' limit (they refuse deeper documents anyway).
const MAX_DEPTH: usize = crate::yaml::MAX_DEPTH;

/// The strict-decoding findings of a request body: what a Strict error lists and what Warn says.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Duplicates {
    /// Entries of `strict decoding error: a, b, c`.
    pub strict: Vec<String>,
    /// One `Warning` header each.
    pub warnings: Vec<String>,
}

impl Duplicates {
    pub fn is_empty(&self) -> bool {
        self.strict.is_empty() && self.warnings.is_empty()
    }

    /// Duplicates of a JSON body (create/update body, merge or strategic merge patch).
    pub fn json(body: &[u8]) -> Self {
        let d = duplicate_fields_json(body);
        Duplicates {
            strict: d.clone(),
            warnings: d,
        }
    }

    /// Strict errors of a JSON patch's operations (`json patch duplicate field "[1].path"`,
    /// `json patch unknown field "[0].foo"`), as `applyJSPatch` reports them.
    pub fn json_patch(body: &[u8]) -> Self {
        let d = json_patch_strict_errors(body);
        Duplicates {
            strict: d.clone(),
            warnings: d,
        }
    }

    /// Duplicates of a YAML body: one strict error for all lines, one warning per line.
    pub fn yaml(body: &[u8]) -> Self {
        let d = duplicate_fields_yaml(body);
        if d.is_empty() {
            return Duplicates::default();
        }
        Duplicates {
            strict: vec![format!("yaml: unmarshal errors:\n  {}", d.join("\n  "))],
            warnings: d,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

/// `duplicate field "<path>"` for each duplicated key of a JSON document, in document order.
pub fn duplicate_fields_json(body: &[u8]) -> Vec<String> {
    let mut st = JsonState::default();
    let mut de = serde_json::Deserializer::from_slice(body);
    if Node(&mut st).deserialize(&mut de).is_err() || de.end().is_err() {
        return Vec::new();
    }
    st.errors
}

/// A JSON document decoded as `serde_json::from_slice::<Value>` decodes it (the later of two
/// equal keys wins), and whether some object in it repeats a key. A body with none needs no
/// [`duplicate_fields_json`] pass: the common case costs one parse, not two; the rare one pays
/// the second pass for the paths.
pub fn json_value_noting_duplicates(body: &[u8]) -> serde_json::Result<(Value, bool)> {
    let mut repeated = false;
    let mut de = serde_json::Deserializer::from_slice(body);
    let v = Build(&mut repeated).deserialize(&mut de)?;
    de.end()?;
    Ok((v, repeated))
}

/// Builds the `Value` serde_json's own `Deserialize` would, noting a repeated key.
struct Build<'a>(&'a mut bool);

impl<'de> DeserializeSeed<'de> for Build<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Build<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let flag = self.0;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Build(&mut *flag))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let flag = self.0;
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value_seed(Build(&mut *flag))?;
            if out.insert(key, v).is_some() {
                *flag = true;
            }
        }
        Ok(Value::Object(out))
    }
}

/// The strict errors of decoding a JSON patch into upstream's `[]jsonPatchOp` (fields `op`,
/// `path`, `from`, `value`), each prefixed `json patch `.
pub fn json_patch_strict_errors(body: &[u8]) -> Vec<String> {
    let mut st = JsonState::default();
    let mut de = serde_json::Deserializer::from_slice(body);
    if PatchOps(&mut st).deserialize(&mut de).is_err() || de.end().is_err() {
        return Vec::new();
    }
    st.errors
        .into_iter()
        .map(|e| format!("json patch {e}"))
        .collect()
}

#[derive(Default)]
struct JsonState {
    /// The strict field stack joined: `spec.containers[0]`.
    path: String,
    errors: Vec<String>,
    seen: HashSet<String>,
}

impl JsonState {
    fn save(&mut self, kind: &str, key: &str) {
        if self.errors.len() >= MAX_ERRORS {
            return;
        }
        let full = if self.path.is_empty() {
            Cow::Borrowed(key)
        } else {
            Cow::Owned(format!("{}.{key}", self.path))
        };
        let msg = format!("{kind} {}", go_quote(&full));
        if self.seen.insert(msg.clone()) {
            self.errors.push(msg);
        }
    }

    fn push_key(&mut self, key: &str) {
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
    }

    fn push_index(&mut self, i: usize) {
        let _ = write!(self.path, "[{i}]");
    }
}

/// Any JSON value, decoded as into `interface{}`.
struct Node<'a>(&'a mut JsonState);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

macro_rules! accept_scalars {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    };
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    accept_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let st = self.0;
        let base = st.path.len();
        let mut i = 0;
        loop {
            st.push_index(i);
            let more = seq.next_element_seed(Node(&mut *st))?.is_some();
            st.path.truncate(base);
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let st = self.0;
        let base = st.path.len();
        let mut keys: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(Key)? {
            if keys.contains(&key) {
                st.save("duplicate field", &key);
            } else {
                keys.insert(key.clone());
            }
            st.push_key(&key);
            map.next_value_seed(Node(&mut *st))?;
            st.path.truncate(base);
        }
        Ok(())
    }
}

/// An object key, borrowed from the body when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// The top of a JSON patch: an array of operations (or null).
struct PatchOps<'a>(&'a mut JsonState);

impl<'de> DeserializeSeed<'de> for PatchOps<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PatchOps<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of JSON patch operations")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let st = self.0;
        let mut i = 0;
        loop {
            st.push_index(i);
            let more = seq.next_element_seed(PatchOp(&mut *st))?.is_some();
            st.path.clear();
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }
}

/// One operation, decoded as into upstream's `jsonPatchOp` struct.
struct PatchOp<'a>(&'a mut JsonState);

impl<'de> DeserializeSeed<'de> for PatchOp<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PatchOp<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON patch operation")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        const FIELDS: [&str; 4] = ["op", "path", "from", "value"];
        let st = self.0;
        let base = st.path.len();
        let mut seen = [false; 4];
        while let Some(key) = map.next_key_seed(Key)? {
            match FIELDS.iter().position(|f| *f == key) {
                Some(i) => {
                    if seen[i] {
                        st.save("duplicate field", &key);
                    }
                    seen[i] = true;
                    st.push_key(&key);
                    if i == 3 {
                        map.next_value_seed(Node(&mut *st))?;
                    } else {
                        // A string field: anything else fails the whole decode upstream.
                        map.next_value::<Option<String>>()?;
                    }
                    st.path.truncate(base);
                }
                None => {
                    st.save("unknown field", &key);
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// YAML

/// `line N: key "k" already set in map` for each duplicated key of a YAML document (the first
/// document only, as upstream decodes), in goyaml.v2's order.
pub fn duplicate_fields_yaml(body: &[u8]) -> Vec<String> {
    let Some(mut parser) = yaml::Parser::new(body, true) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match walk_document(&mut parser, &mut out) {
        Some(()) => out,
        None => Vec::new(),
    }
}

fn walk_document(p: &mut yaml::Parser<'_>, out: &mut Vec<String>) -> Option<()> {
    loop {
        match p.next()?.0 {
            yaml::Event::StreamStart | yaml::Event::DocumentStart => {}
            yaml::Event::StreamEnd => return Some(()),
            ev => {
                walk_node(p, ev, 0, out)?;
                return Some(());
            }
        }
    }
}

/// A resolved mapping key, compared as goyaml.v2 compares `interface{}` map keys.
#[derive(PartialEq, Eq, Hash)]
enum YamlKey {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// The bits of a (non-NaN) float64.
    Float(u64),
    Str(String),
}

impl YamlKey {
    /// Go's `%#v`.
    fn go_sharp_v(&self) -> String {
        match self {
            YamlKey::Null => "<nil>".into(),
            YamlKey::Bool(b) => b.to_string(),
            YamlKey::Int(i) => i.to_string(),
            YamlKey::Uint(u) => format!("0x{u:x}"),
            YamlKey::Float(bits) => {
                let f = f64::from_bits(*bits);
                if f.is_infinite() {
                    if f > 0.0 { "+Inf" } else { "-Inf" }.into()
                } else {
                    format!("{f}")
                }
            }
            YamlKey::Str(s) => go_quote(s),
        }
    }
}

/// Walks the node that starts with `ev`; `None` when the document is not one upstream decodes
/// (syntax error, a collection as a key, too deep).
fn walk_node(
    p: &mut yaml::Parser<'_>,
    ev: yaml::Event,
    depth: usize,
    out: &mut Vec<String>,
) -> Option<()> {
    match ev {
        yaml::Event::Scalar { .. } | yaml::Event::Alias { .. } => Some(()),
        yaml::Event::SequenceStart { .. } => {
            if depth >= MAX_DEPTH {
                return None;
            }
            loop {
                match p.next()?.0 {
                    yaml::Event::SequenceEnd => return Some(()),
                    ev => walk_node(p, ev, depth + 1, out)?,
                }
            }
        }
        yaml::Event::MappingStart { .. } => {
            if depth >= MAX_DEPTH {
                return None;
            }
            let mut keys: HashSet<YamlKey> = HashSet::new();
            loop {
                let key = match p.next()?.0 {
                    yaml::Event::MappingEnd => return Some(()),
                    yaml::Event::Scalar {
                        value, plain, tag, ..
                    } => {
                        if plain && tag.is_none() && value == "<<" {
                            // A merge key: its keys are merged, not compared (see the report).
                            None
                        } else {
                            resolve(value, plain, tag.as_deref())
                        }
                    }
                    // An alias key stands for its anchor's value: not compared.
                    yaml::Event::Alias { .. } => None,
                    // goyaml.v2 fails on a collection key ("invalid map key").
                    _ => return None,
                };
                let (ev, mark) = p.next()?;
                let line = mark.line;
                walk_node(p, ev, depth + 1, out)?;
                let Some(key) = key else { continue };
                if keys.contains(&key) {
                    out.push(format!(
                        "line {}: key {} already set in map",
                        line + 1,
                        key.go_sharp_v()
                    ));
                } else {
                    keys.insert(key);
                }
            }
        }
        // Stream or document events inside a node: not a document upstream decodes.
        _ => None,
    }
}

/// goyaml.v2 `resolve` of a scalar decoded into `interface{}` (timestamps stay strings). `None`
/// for NaN, which never equals another key.
fn resolve(value: String, plain: bool, tag: Option<&str>) -> Option<YamlKey> {
    const STR: &str = "tag:yaml.org,2002:str";
    match tag {
        Some(STR) | Some("tag:yaml.org,2002:binary") => return Some(YamlKey::Str(value)),
        None if !plain => return Some(YamlKey::Str(value)),
        _ => {}
    }
    let first = value.bytes().next();
    let hint = match first {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        _ => 0,
    };
    if hint == 0 {
        return Some(YamlKey::Str(value));
    }
    match value.as_str() {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Some(YamlKey::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Some(YamlKey::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => return Some(YamlKey::Null),
        ".nan" | ".NaN" | ".NAN" => return None,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Some(YamlKey::Float(f64::INFINITY.to_bits()))
        }
        "-.inf" | "-.Inf" | "-.INF" => return Some(YamlKey::Float(f64::NEG_INFINITY.to_bits())),
        _ => {}
    }
    match hint {
        b'.' => {
            if let Some(f) = go_parse_float(&value) {
                return float_key(f);
            }
        }
        b'D' | b'S' => {
            let plain = value.replace('_', "");
            if let Some(i) = go_parse_int(&plain) {
                return Some(match i {
                    GoInt::Signed(i) => YamlKey::Int(i),
                    GoInt::Unsigned(u) => YamlKey::Uint(u),
                });
            }
            if yaml_style_float(&plain) {
                if let Some(f) = go_parse_float(&plain) {
                    return float_key(f);
                }
            }
        }
        _ => {}
    }
    Some(YamlKey::Str(value))
}

fn float_key(f: f64) -> Option<YamlKey> {
    if f.is_nan() {
        None
    } else if f == 0.0 {
        // -0 == 0 as Go map keys.
        Some(YamlKey::Float(0.0f64.to_bits()))
    } else {
        Some(YamlKey::Float(f.to_bits()))
    }
}

enum GoInt {
    Signed(i64),
    Unsigned(u64),
}

/// `strconv.ParseInt(s, 0, 64)`, then `ParseUint(s, 0, 64)` (underscores already removed).
fn go_parse_int(s: &str) -> Option<GoInt> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, body) = if let Some(r) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, r)
    } else if let Some(r) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        (8, r)
    } else if let Some(r) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, r)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    let mag = u64::from_str_radix(body, radix).ok()?;
    if neg {
        if mag <= i64::MAX as u64 + 1 {
            return Some(GoInt::Signed((mag as i64).wrapping_neg()));
        }
        return None;
    }
    if mag <= i64::MAX as u64 {
        Some(GoInt::Signed(mag as i64))
    } else {
        Some(GoInt::Unsigned(mag))
    }
}

/// goyaml.v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat(s, 64)` for the decimal forms YAML keys use.
fn go_parse_float(s: &str) -> Option<f64> {
    if !s
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    s.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_nested_duplicates_with_upstream_paths() {
        let body = br#"{"apiVersion":"v1","kind":"Namespace",
            "metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},
            "spec":{"replicas":1,"replicas":2,"replicas":3}}"#;
        assert_eq!(
            duplicate_fields_json(body),
            [
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "metadata.labels.x""#,
                r#"duplicate field "spec.replicas""#,
            ]
        );
    }

    #[test]
    fn json_duplicates_inside_arrays_of_objects() {
        let body = br#"{"spec":{"containers":[{"name":"a"},{"name":"b","image":"x","image":"y"}],
            "m":[[{"k":1,"k":2}]]}, "top":1, "top":2}"#;
        assert_eq!(
            duplicate_fields_json(body),
            [
                r#"duplicate field "spec.containers[1].image""#,
                r#"duplicate field "spec.m[0][0].k""#,
                r#"duplicate field "top""#,
            ]
        );
        // A document that is an array: the index opens the path.
        assert_eq!(
            duplicate_fields_json(br#"[{"a":1},{"a":1,"a":2}]"#),
            [r#"duplicate field "[1].a""#]
        );
    }

    #[test]
    fn json_same_key_in_different_objects_is_no_duplicate() {
        let body = br#"{"a":{"name":1},"b":{"name":2},"c":[{"name":1},{"name":2}],"name":3}"#;
        assert!(duplicate_fields_json(body).is_empty());
    }

    #[test]
    fn json_keys_compare_unescaped_and_paths_are_go_quoted() {
        // "\u0061" is "a"; a key with a dot is joined as is; quotes and newlines are escaped.
        let body = br#"{"a":1,"\u0061":2,"x.y":{"q\"\n":1,"q\"\n":2}}"#;
        assert_eq!(
            duplicate_fields_json(body),
            [r#"duplicate field "a""#, r#"duplicate field "x.y.q\"\n""#,]
        );
    }

    #[test]
    fn json_messages_are_deduplicated_and_capped_at_100() {
        assert_eq!(
            duplicate_fields_json(br#"{"a":1,"a":2,"a":3}"#),
            [r#"duplicate field "a""#]
        );
        let mut body = String::from("{");
        for i in 0..150 {
            body.push_str(&format!(r#""k{i}":1,"k{i}":2,"#));
        }
        body.push_str(r#""end":0}"#);
        let d = duplicate_fields_json(body.as_bytes());
        assert_eq!(d.len(), 100);
        assert_eq!(d[99], r#"duplicate field "k99""#);
    }

    #[test]
    fn json_three_mib_body_is_fast() {
        let mut body = String::from(r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"#);
        let mut i = 0;
        while body.len() < 3 * 1024 * 1024 - 100 {
            body.push_str(&format!(r#""key{i}":"{}","#, "v".repeat(40)));
            i += 1;
        }
        body.push_str(r#""key0":"again"},"items":[{"a":1},{"a":2}]}"#);
        let start = std::time::Instant::now();
        let d = duplicate_fields_json(body.as_bytes());
        assert_eq!(d, [r#"duplicate field "data.key0""#]);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn json_malformed_input_and_deep_nesting_give_nothing() {
        for body in [
            &b"{"[..],
            b"{}}",
            b"{,}",
            b"{\"a\":1,\"a\":2",
            b"{\"a\":1,\"a\":2} x",
            b"",
            b"\xff\xfe",
        ] {
            assert!(duplicate_fields_json(body).is_empty(), "{body:?}");
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(duplicate_fields_json(deep.as_bytes()).is_empty());
        let deep = "{\"a\":".repeat(100_000);
        assert!(duplicate_fields_json(deep.as_bytes()).is_empty());
    }

    #[test]
    fn json_patch_ops_report_duplicate_and_unknown_fields() {
        let body = br#"[
            {"op": "add", "path": "/spec/unknown1", "value": "val1", "foo":"bar"},
            {"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "val1"},
            {"op": "add", "path": "/spec/x", "value": {"k":1,"k":2}}
        ]"#;
        assert_eq!(
            json_patch_strict_errors(body),
            [
                r#"json patch unknown field "[0].foo""#,
                r#"json patch duplicate field "[1].path""#,
                r#"json patch duplicate field "[2].value.k""#,
            ]
        );
        assert!(json_patch_strict_errors(br#"[{"op":5}]"#).is_empty());
        assert!(json_patch_strict_errors(br#"{"op":"add"}"#).is_empty());
    }

    /// The Deployment of upstream's field validation integration test.
    const INVALID_YAML: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: test
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never";

    #[test]
    fn yaml_duplicates_with_upstream_lines() {
        assert_eq!(
            duplicate_fields_yaml(INVALID_YAML.as_bytes()),
            [
                r#"line 5: key "name" already set in map"#,
                r#"line 12: key "unknownDupe" already set in map"#,
                r#"line 14: key "paused" already set in map"#,
                r#"line 28: key "imagePullPolicy" already set in map"#,
            ]
        );
        let d = Duplicates::yaml(INVALID_YAML.as_bytes());
        assert_eq!(
            d.strict,
            ["yaml: unmarshal errors:\n  line 5: key \"name\" already set in map\n  line 12: key \"unknownDupe\" already set in map\n  line 14: key \"paused\" already set in map\n  line 28: key \"imagePullPolicy\" already set in map"]
        );
        assert_eq!(d.warnings.len(), 4);
    }

    #[test]
    fn yaml_value_line_and_goyaml_order() {
        // The line is the value node's: a block mapping starts at its first key. A value's own
        // duplicates come before its key's.
        let body = "a: 1\na:\n  b: 1\n  b: 2\n";
        assert_eq!(
            duplicate_fields_yaml(body.as_bytes()),
            [
                r#"line 4: key "b" already set in map"#,
                r#"line 3: key "a" already set in map"#,
            ]
        );
    }

    #[test]
    fn yaml_keys_resolve_as_yaml_1_1() {
        let body = "1: a\n01: b\n\"1\": c\nyes: d\ntrue: e\n~: f\nnull: g\n1.5: h\n15e-1: i\n";
        assert_eq!(
            duplicate_fields_yaml(body.as_bytes()),
            [
                "line 2: key 1 already set in map",
                "line 5: key true already set in map",
                "line 7: key <nil> already set in map",
                "line 9: key 1.5 already set in map",
            ]
        );
    }

    #[test]
    fn yaml_no_false_positives_and_arrays_of_maps() {
        let body = "a:\n  name: x\nb:\n  name: y\nitems:\n- name: a\n- name: b\n  name: c\n- {k: 1, k: 2}\n";
        assert_eq!(
            duplicate_fields_yaml(body.as_bytes()),
            [
                r#"line 8: key "name" already set in map"#,
                r#"line 9: key "k" already set in map"#,
            ]
        );
        assert!(duplicate_fields_yaml(b"a: 1\nb: {a: 1}\nc: [a, a]\n").is_empty());
    }

    #[test]
    fn yaml_malformed_and_odd_input_gives_nothing() {
        for body in [
            &b"a: [1, 2"[..],
            b"a: 1\n a: 2\n  - x",
            b"{a: 1, a: 2",
            b"? [a]\n: 1\n",
            b"",
            b"\xff\xfe\x00",
        ] {
            assert!(duplicate_fields_yaml(body).is_empty(), "{body:?}");
        }
        let deep = "[".repeat(100_000);
        assert!(duplicate_fields_yaml(deep.as_bytes()).is_empty());
        // Only the first document counts.
        assert!(duplicate_fields_yaml(b"a: 1\n---\na: 1\na: 2\n").is_empty());
    }

    #[test]
    fn yaml_three_mib_body() {
        let mut body = String::from("apiVersion: v1\nkind: ConfigMap\ndata:\n");
        let mut i = 0;
        while body.len() < 3 * 1024 * 1024 - 100 {
            body.push_str(&format!("  key{i}: {}\n", "v".repeat(40)));
            i += 1;
        }
        body.push_str("  key0: again\n");
        let lines = body.lines().count();
        let d = duplicate_fields_yaml(body.as_bytes());
        assert_eq!(
            d,
            [format!("line {lines}: key \"key0\" already set in map")]
        );
    }
}

#[cfg(test)]
mod decode_tests {
    use super::*;

    #[test]
    fn the_noting_decode_builds_serde_jsons_value_and_notes_repeats() {
        let docs: [&[u8]; 6] = [
            br#"{"a":1,"b":[1,-2,3.5,1e300,18446744073709551615,-9223372036854775808,"x\u00e9\n"],"c":{"d":null,"e":true}}"#,
            br#"{"a":{"b":{"c":[{"d":1},{"d":2}]}}}"#,
            br#"{}"#,
            br#"[1,{"a":2}]"#,
            br#"{"a":1,"a":2}"#,
            br#"{"x":[{"a":{},"b":1,"a":{"q":1}}]}"#,
        ];
        for (i, d) in docs.iter().enumerate() {
            let (v, rep) = json_value_noting_duplicates(d).unwrap();
            assert_eq!(v, serde_json::from_slice::<Value>(d).unwrap(), "doc {i}");
            assert_eq!(rep, !duplicate_fields_json(d).is_empty(), "doc {i}");
            assert_eq!(rep, i >= 4, "doc {i}");
        }
        for bad in [&b"{"[..], b"[1e400]", b"{\"a\":1}x", b"", b"[1,]"] {
            let ours = json_value_noting_duplicates(bad).unwrap_err().to_string();
            let theirs = serde_json::from_slice::<Value>(bad)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, theirs);
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(json_value_noting_duplicates(deep.as_bytes()).is_err());
    }
}
