//! An `enum`'s values indexed for membership (kube-openapi scans the list per value: a
//! 30,000-item array of a 30,000-value enum is then 9e8 comparisons), and its error texts built
//! once rather than per failing value.

use crest_gofmt::{go_json, go_number};
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The values of one `enum`, as kube-openapi's `basicCommonValidator` compares them: Go's
/// conversion of the data to each value's type (an integer matches a float of the same value
/// and a one-character string of that code point; a float matches the integer it truncates to).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnumIndex {
    strings: HashSet<String>,
    ints: HashSet<i64>,
    /// Bit patterns of the float values (-0 as +0; NaN equals nothing, so it is left out).
    floats: HashSet<u64>,
    bools: [bool; 2],
    /// Arrays and objects, compared one by one (deep equality).
    compounds: Vec<Value>,
    /// The values as the `NotSupported` error lists them (strings bare, the rest as JSON).
    pub(crate) shown: Arc<[String]>,
    /// About how many bytes listing `shown` takes (quoted, comma-separated).
    pub(crate) shown_size: usize,
    /// The length and a digest of Go's `%v` of the list, as kube-openapi's message shows it:
    /// errors with equal messages are dropped as duplicates, compared without the list.
    pub(crate) listed_len: usize,
    pub(crate) listed_digest: u64,
}

enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

fn float_bits(f: f64) -> u64 {
    if f == 0.0 {
        0.0f64.to_bits()
    } else {
        f.to_bits()
    }
}

impl EnumIndex {
    pub fn new(values: &[Value]) -> Self {
        let mut ix = EnumIndex::default();
        for v in values {
            match v {
                Value::String(s) => {
                    ix.strings.insert(s.clone());
                }
                Value::Number(n) => match num(n) {
                    Num::Int(i) => {
                        ix.ints.insert(i);
                    }
                    Num::Float(f) if !f.is_nan() => {
                        ix.floats.insert(float_bits(f));
                    }
                    Num::Float(_) => {}
                },
                Value::Bool(b) => ix.bools[usize::from(*b)] = true,
                Value::Array(_) | Value::Object(_) => ix.compounds.push(v.clone()),
                Value::Null => {}
            }
        }
        ix.shown = values
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => go_json(other),
            })
            .collect();
        ix.shown_size = ix.shown.iter().map(|v| v.len() + 4).sum();
        let parts: Vec<String> = values
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => go_number(n),
                other => go_json(other),
            })
            .collect();
        let listed = format!("[{}]", parts.join(" "));
        let mut h = DefaultHasher::new();
        listed.hash(&mut h);
        ix.listed_digest = h.finish();
        ix.listed_len = listed.len();
        ix
    }

    /// Whether `data` (not null) equals one of the values after Go's conversion.
    pub fn contains(&self, data: &Value) -> bool {
        match data {
            Value::String(s) => self.strings.contains(s),
            Value::Number(n) => match num(n) {
                Num::Int(i) => {
                    self.ints.contains(&i)
                        || self.floats.contains(&float_bits(i as f64))
                        || u32::try_from(i)
                            .ok()
                            .and_then(char::from_u32)
                            .is_some_and(|c| self.strings.contains(c.encode_utf8(&mut [0; 4]) as &str))
                        // Go converts an out-of-range code point to U+FFFD.
                        || (u32::try_from(i).ok().and_then(char::from_u32).is_none()
                            && self.strings.contains("\u{FFFD}"))
                }
                Num::Float(f) => {
                    self.ints.contains(&(f as i64))
                        || (!f.is_nan() && self.floats.contains(&float_bits(f)))
                }
            },
            Value::Bool(b) => self.bools[usize::from(*b)],
            Value::Array(_) | Value::Object(_) => self.compounds.iter().any(|c| c == data),
            Value::Null => false,
        }
    }
}
