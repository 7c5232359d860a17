//! Input decoding shared by the fuzz targets.
//!
//! An input is split at NUL bytes into parts (schema, object, old object). Each part is parsed as
//! JSON; a part that is not JSON is read as a byte program ([`Builder`]) that builds a value
//! structurally, biased towards OpenAPI schema keywords and Kubernetes object fields, so that
//! random mutations still reach deep into the schema code.

use serde_json::{Map, Number, Value};

/// Splits `data` at the first `n - 1` NUL bytes; missing parts are empty.
pub fn split(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut parts = Vec::with_capacity(n);
    let mut rest = data;
    while parts.len() + 1 < n {
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                parts.push(&rest[..i]);
                rest = &rest[i + 1..];
            }
            None => break,
        }
    }
    parts.push(rest);
    while parts.len() < n {
        parts.push(&[]);
    }
    parts
}

/// The JSON value of `bytes`, or the value the bytes build ([`Builder`]).
pub fn value(bytes: &[u8]) -> Value {
    match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) => Builder::new(bytes).value(0),
    }
}

/// Object keys: schema keywords, extensions, and fields of Kubernetes objects.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "items",
    "additionalProperties",
    "default",
    "enum",
    "pattern",
    "format",
    "nullable",
    "required",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "description",
    "title",
    "example",
    "$ref",
    "id",
    "$schema",
    "definitions",
    "dependencies",
    "patternProperties",
    "additionalItems",
    "externalDocs",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "rule",
    "message",
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "ownerReferences",
    "managedFields",
    "spec",
    "status",
    "a",
    "b",
    "k",
    "key",
    "value",
    "",
];

/// String values: types, list/map types, formats, patterns, names.
const STRINGS: &[&str] = &[
    "object",
    "array",
    "string",
    "integer",
    "number",
    "boolean",
    "null",
    "set",
    "map",
    "atomic",
    "granular",
    "date-time",
    "date",
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "uuid",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uri",
    "duration",
    "password",
    "isbn",
    "creditcard",
    "hexcolor",
    "rgbcolor",
    "ssn",
    "bsonobjectid",
    "k8s-short-name",
    "k8s-long-name",
    "^a+$",
    "(",
    "a{1000}{1000}",
    "(a*)*b",
    "\\p{L}",
    "[[:alpha:]]",
    "(?i)x",
    "\\z",
    "\\C",
    "(?P<n>a)",
    "a{,5}",
    "v1",
    "example.com/v1",
    "CronTab",
    "crontabs",
    "default",
    "a",
    "b",
    "k",
    "2006-01-02T15:04:05Z",
    "1h",
    "10.0.0.0/8",
    "::1",
    "self.a > 0",
    "",
    "\u{0}",
    "é",
];

const NUMBERS: &[f64] = &[
    0.0, -0.0, 0.5, -1.0, 1e300, -1e300, 1e-300, 2147483647.0, 2147483648.0, 9.2e18, 1.5e19,
];

const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    10,
    63,
    64,
    253,
    i32::MAX as i64,
    i32::MIN as i64,
    i64::MAX,
    i64::MIN,
];

/// Deeper than the crates' own nesting limits (and serde_json's recursion limit of 128).
const MAX_DEPTH: usize = 300;

/// Builds a value from a byte program: each value starts with a tag byte; running out of bytes
/// yields `null`.
pub struct Builder<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Builder<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Builder { data, pos: 0 }
    }

    fn byte(&mut self) -> Option<u8> {
        let b = self.data.get(self.pos).copied();
        self.pos += 1;
        b
    }

    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(n).min(self.data.len());
        self.pos = end;
        &self.data[start..end]
    }

    fn pick<T: Copy>(&mut self, list: &[T]) -> Option<T> {
        let b = self.byte()?;
        list.get(usize::from(b) % list.len()).copied()
    }

    fn string(&mut self) -> String {
        match self.byte() {
            Some(b) if b < 200 => self.pick(STRINGS).unwrap_or("").to_string(),
            Some(b) => {
                let n = usize::from(b - 200);
                String::from_utf8_lossy(self.bytes(n)).into_owned()
            }
            None => String::new(),
        }
    }

    fn key(&mut self) -> String {
        match self.byte() {
            Some(b) if b < 220 => self.pick(KEYS).unwrap_or("").to_string(),
            Some(_) => self.string(),
            None => String::new(),
        }
    }

    fn number(&mut self) -> Value {
        match self.byte().map(|b| b % 6) {
            Some(0) => Value::from(self.pick(INTS).unwrap_or(0)),
            Some(1) => Number::from_f64(self.pick(NUMBERS).unwrap_or(0.0))
                .map_or(Value::Null, Value::Number),
            Some(2) => {
                let mut buf = [0u8; 8];
                let b = self.bytes(8);
                buf[..b.len()].copy_from_slice(b);
                Number::from_f64(f64::from_le_bytes(buf)).map_or(Value::Null, Value::Number)
            }
            Some(3) => {
                let mut buf = [0u8; 8];
                let b = self.bytes(8);
                buf[..b.len()].copy_from_slice(b);
                Value::from(u64::from_le_bytes(buf))
            }
            Some(_) => Value::from(i64::from(self.byte().unwrap_or(0)) - 8),
            None => Value::Null,
        }
    }

    /// One value; `depth` bounds the nesting.
    pub fn value(&mut self, depth: usize) -> Value {
        let Some(tag) = self.byte() else {
            return Value::Null;
        };
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        match tag % 10 {
            0 => Value::Null,
            1 => Value::Bool(tag & 0x80 != 0),
            2 => self.number(),
            3 | 4 => Value::String(self.string()),
            5 => {
                let n = usize::from(self.byte().unwrap_or(0) % 5);
                Value::Array((0..n).map(|_| self.value(depth + 1)).collect())
            }
            6 | 7 => {
                let n = usize::from(self.byte().unwrap_or(0) % 6);
                let mut m = Map::new();
                for _ in 0..n {
                    let k = self.key();
                    let v = self.value(depth + 1);
                    m.insert(k, v);
                }
                Value::Object(m)
            }
            _ => self.schema(depth),
        }
    }

    /// A schema-shaped object: a type and a few keywords with well-typed values.
    fn schema(&mut self, depth: usize) -> Value {
        let mut m = Map::new();
        let t = self.pick(&["object", "array", "string", "integer", "number", "boolean", ""]);
        if let Some(t) = t.filter(|t| !t.is_empty()) {
            m.insert("type".into(), Value::from(t));
        }
        let n = usize::from(self.byte().unwrap_or(0) % 5);
        for _ in 0..n {
            let Some(k) = self.byte() else { break };
            match k % 12 {
                0 => {
                    let c = usize::from(self.byte().unwrap_or(0) % 4);
                    let mut props = Map::new();
                    for _ in 0..c {
                        let name = self.key();
                        props.insert(name, self.value(depth + 1));
                    }
                    m.insert("properties".into(), Value::Object(props));
                }
                1 => {
                    m.insert("items".into(), self.value(depth + 1));
                }
                2 => {
                    m.insert("additionalProperties".into(), self.value(depth + 1));
                }
                3 => {
                    m.insert("default".into(), self.value(depth + 1));
                }
                4 => {
                    let k = self.pick(&[
                        "x-kubernetes-preserve-unknown-fields",
                        "x-kubernetes-embedded-resource",
                        "x-kubernetes-int-or-string",
                        "nullable",
                        "uniqueItems",
                        "exclusiveMinimum",
                        "exclusiveMaximum",
                    ]);
                    m.insert(k.unwrap_or("nullable").into(), Value::Bool(true));
                }
                5 => {
                    let lt = self.pick(&["set", "map", "atomic"]).unwrap_or("map");
                    m.insert("x-kubernetes-list-type".into(), Value::from(lt));
                    let keys = vec![Value::from(self.key())];
                    m.insert("x-kubernetes-list-map-keys".into(), Value::Array(keys));
                }
                6 => {
                    let mt = self.pick(&["granular", "atomic"]).unwrap_or("atomic");
                    m.insert("x-kubernetes-map-type".into(), Value::from(mt));
                }
                7 => {
                    let j = self.pick(&["allOf", "anyOf", "oneOf"]).unwrap_or("allOf");
                    let c = usize::from(self.byte().unwrap_or(0) % 3);
                    let list = (0..c).map(|_| self.value(depth + 1)).collect();
                    m.insert(j.into(), Value::Array(list));
                }
                8 => {
                    m.insert("not".into(), self.value(depth + 1));
                }
                9 => {
                    let k = self.pick(&[
                        "minimum",
                        "maximum",
                        "multipleOf",
                        "minLength",
                        "maxLength",
                        "minItems",
                        "maxItems",
                        "minProperties",
                        "maxProperties",
                    ]);
                    let v = self.number();
                    m.insert(k.unwrap_or("minimum").into(), v);
                }
                10 => {
                    let k = self.pick(&["pattern", "format"]).unwrap_or("pattern");
                    m.insert(k.into(), Value::String(self.string()));
                }
                _ => {
                    let c = usize::from(self.byte().unwrap_or(0) % 4);
                    let list = (0..c).map(|_| self.value(depth + 1)).collect();
                    let k = self.pick(&["enum", "required"]).unwrap_or("enum");
                    m.insert(k.into(), Value::Array(list));
                }
            }
        }
        Value::Object(m)
    }
}
