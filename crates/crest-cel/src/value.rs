//! Runtime values and CEL's equality and ordering over them.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use indexmap::IndexMap;

use crate::types::Type;

#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Arc<ListValue>),
    Map(Arc<MapValue>),
    Timestamp(DateTime<Utc>),
    Duration(TimeDelta),
    /// A type value (`int`, `list`, `google.protobuf.Timestamp`, a message name, ...).
    Type(Arc<str>),
    /// `optional_type`: `None` is `optional.none()`.
    Optional(Option<Arc<Value>>),
    /// A message value: type name and set fields.
    Object(Arc<ObjectValue>),
    /// A value of an extension library's type (`Type::Opaque(name, ..)`).
    Opaque(Arc<dyn OpaqueValue>),
}

/// A value type defined outside the engine (Kubernetes' quantity, URL, IP, ...). Its type
/// name is what `type(x)` returns and what overloads declared with `Type::Opaque(name, ..)`
/// dispatch on.
pub trait OpaqueValue: fmt::Debug + Send + Sync + 'static {
    fn type_name(&self) -> &str;
    /// CEL equality with another opaque value (of any type).
    fn equals(&self, other: &dyn OpaqueValue) -> bool;
    /// Ordering for `<` and friends, if the type is ordered.
    fn compare(&self, _other: &dyn OpaqueValue) -> Option<Ordering> {
        None
    }
    /// For downcasting in implementations.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A list's elements and how `==` and `+` treat it when it is the left operand: hosts mark
/// lists with set or keyed-map semantics (Kubernetes' `x-kubernetes-list-type`), which compare
/// ignoring order and concatenate as a union or a keyed merge. Derefs to the elements.
#[derive(Debug, Clone, Default)]
pub struct ListValue {
    pub items: Vec<Value>,
    pub kind: ListKind,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ListKind {
    #[default]
    Ordered,
    /// Unique scalar elements.
    Set,
    /// Map elements identified by these keys.
    Map(Arc<[Arc<str>]>),
}

impl ListValue {
    pub fn with_kind(items: Vec<Value>, kind: ListKind) -> ListValue {
        ListValue { items, kind }
    }

    /// The identity of a map-list element: its key fields' values.
    fn map_key<'a>(keys: &[Arc<str>], v: &'a Value) -> Vec<Option<&'a Value>> {
        keys.iter()
            .map(|k| match v {
                Value::Map(m) => m.get_str(k),
                _ => None,
            })
            .collect()
    }

    /// A map-list element's key values as hashable keys, when every one is (scalars); None
    /// sends the element to the linear comparison.
    fn hashed_key(keys: &[Arc<str>], v: &Value) -> Option<Vec<Option<Key>>> {
        Self::map_key(keys, v)
            .into_iter()
            .map(|k| match k {
                Some(k) => Key::for_lookup(k).map(Some),
                None => Some(None),
            })
            .collect()
    }

    /// The position of each element by its hashed key (the first of equal keys).
    fn key_index(keys: &[Arc<str>], items: &[Value]) -> HashMap<Vec<Option<Key>>, usize> {
        let mut index = HashMap::with_capacity(items.len());
        for (i, x) in items.iter().enumerate() {
            if let Some(k) = Self::hashed_key(keys, x) {
                index.entry(k).or_insert(i);
            }
        }
        index
    }

    /// The first element of `items` with `y`'s key: looked up by hash (map lists can be long:
    /// comparing every pair is quadratic), else compared one by one.
    fn find_by_key(
        keys: &[Arc<str>],
        items: &[Value],
        index: &HashMap<Vec<Option<Key>>, usize>,
        y: &Value,
    ) -> Option<usize> {
        // A key of scalars that hash never equals one that does not (a fractional double, ...):
        // the index alone decides.
        if let Some(k) = Self::hashed_key(keys, y) {
            return index.get(&k).copied();
        }
        let ky = Self::map_key(keys, y);
        items
            .iter()
            .position(|x| Self::same_key(&Self::map_key(keys, x), &ky))
    }

    fn same_key(a: &[Option<&Value>], b: &[Option<&Value>]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => x.equals(y),
                (None, None) => true,
                _ => false,
            })
    }

    /// `self == other` with self's semantics.
    pub fn equals(&self, other: &ListValue) -> bool {
        if self.len() != other.len() {
            return false;
        }
        match &self.kind {
            ListKind::Ordered => self.iter().zip(other.iter()).all(|(x, y)| x.equals(y)),
            ListKind::Set => {
                let hashed: std::collections::HashSet<Key> =
                    self.iter().filter_map(Key::from_value).collect();
                other.iter().all(|y| match Key::from_value(y) {
                    Some(k) if hashed.contains(&k) => true,
                    _ => self.iter().any(|x| x.equals(y)),
                })
            }
            ListKind::Map(keys) => {
                let index = Self::key_index(keys, &self.items);
                other.iter().all(|y| {
                    Self::find_by_key(keys, &self.items, &index, y)
                        .is_some_and(|i| self.items[i].equals(y))
                })
            }
        }
    }

    /// `self + other` with self's semantics: ordered lists concatenate, sets add the elements
    /// they lack (in order), map lists replace same-keyed elements in place and append others.
    pub fn concat(&self, other: &ListValue) -> ListValue {
        let mut items = self.items.clone();
        match &self.kind {
            ListKind::Ordered => items.extend(other.iter().cloned()),
            ListKind::Set => {
                let mut seen: std::collections::HashSet<Key> =
                    self.iter().filter_map(Key::from_value).collect();
                for y in other.iter() {
                    let fresh = match Key::from_value(y) {
                        Some(k) => seen.insert(k),
                        None => !items.iter().any(|x| x.equals(y)),
                    };
                    if fresh {
                        items.push(y.clone());
                    }
                }
            }
            ListKind::Map(keys) => {
                let mut index = Self::key_index(keys, &items);
                for y in other.iter() {
                    match Self::find_by_key(keys, &items, &index, y) {
                        Some(i) => items[i] = y.clone(),
                        None => {
                            if let Some(k) = Self::hashed_key(keys, y) {
                                index.entry(k).or_insert(items.len());
                            }
                            items.push(y.clone());
                        }
                    }
                }
            }
        }
        ListValue {
            items,
            kind: self.kind.clone(),
        }
    }
}

impl std::ops::Deref for ListValue {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.items
    }
}

impl std::ops::DerefMut for ListValue {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.items
    }
}

impl From<Vec<Value>> for ListValue {
    fn from(items: Vec<Value>) -> ListValue {
        ListValue {
            items,
            kind: ListKind::Ordered,
        }
    }
}

impl FromIterator<Value> for ListValue {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> ListValue {
        ListValue::from(iter.into_iter().collect::<Vec<_>>())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ObjectValue {
    pub type_name: String,
    pub fields: IndexMap<String, Value>,
}

/// Normalized map key: numeric keys compare across int and uint (heterogeneous equality).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    Bool(bool),
    /// Every int, and every uint that fits in an int.
    Int(i64),
    /// A uint above `i64::MAX`.
    BigUint(u64),
    String(Arc<str>),
}

impl Key {
    /// The key a value denotes for insertion; None if the value cannot be a map key.
    pub fn from_value(v: &Value) -> Option<Key> {
        match v {
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Uint(u) => Some(match i64::try_from(*u) {
                Ok(i) => Key::Int(i),
                Err(_) => Key::BigUint(*u),
            }),
            Value::String(s) => Some(Key::String(s.clone())),
            _ => None,
        }
    }

    /// The key to look up for a value: also doubles with an exact integer value, as cel-go's
    /// map `Find` converts them (`doubleToInt64Lossless`, then `doubleToUint64Lossless`): an int
    /// strictly between -2^63 and 2^63 (so -2^63 itself finds no key, though it equals the
    /// smallest int), else a uint below 2^64.
    pub fn for_lookup(v: &Value) -> Option<Key> {
        match v {
            Value::Double(d) => {
                if d.fract() != 0.0 || !d.is_finite() {
                    None
                } else if *d > -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18 {
                    Some(Key::Int(*d as i64))
                } else if *d >= 0.0 && *d < 1.844_674_407_370_955_2e19 {
                    Some(Key::BigUint(*d as u64))
                } else {
                    None
                }
            }
            _ => Key::from_value(v),
        }
    }
}

/// A borrowed map key for lookups without allocating; hashes as the matching [`Key`] does
/// (same variant order, and `Arc<str>` hashes as `str`).
#[derive(Hash)]
enum KeyRef<'a> {
    #[allow(dead_code)]
    Bool(bool),
    #[allow(dead_code)]
    Int(i64),
    #[allow(dead_code)]
    BigUint(u64),
    String(&'a str),
}

impl indexmap::Equivalent<Key> for KeyRef<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        matches!((self, key), (KeyRef::String(a), Key::String(b)) if *a == &**b)
    }
}

#[derive(Debug, Clone, Default)]
pub struct MapValue {
    /// Normalized key -> (key as written, value), in insertion order.
    pub entries: IndexMap<Key, (Value, Value)>,
}

impl MapValue {
    pub fn get(&self, key: &Value) -> Option<&Value> {
        let k = Key::for_lookup(key)?;
        self.entries.get(&k).map(|(_, v)| v)
    }

    pub fn get_str(&self, key: &str) -> Option<&Value> {
        self.entries.get(&KeyRef::String(key)).map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = &Value> {
        self.entries.values().map(|(k, _)| k)
    }
}

impl Value {
    pub fn string(s: &str) -> Value {
        Value::String(s.into())
    }

    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Arc::new(v.into()))
    }

    /// Name of this value's runtime type (`type(x)`).
    pub fn type_name(&self) -> Arc<str> {
        let s = match self {
            Value::Null => "null_type",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint",
            Value::Double(_) => "double",
            Value::String(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Timestamp(_) => "google.protobuf.Timestamp",
            Value::Duration(_) => "google.protobuf.Duration",
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Object(o) => return o.type_name.as_str().into(),
            Value::Opaque(o) => return o.type_name().into(),
        };
        s.into()
    }

    /// The static type this value certainly has (element types of containers are `dyn`).
    pub fn static_type(&self) -> Type {
        match self {
            Value::Null => Type::Null,
            Value::Bool(_) => Type::Bool,
            Value::Int(_) => Type::Int,
            Value::Uint(_) => Type::Uint,
            Value::Double(_) => Type::Double,
            Value::String(_) => Type::String,
            Value::Bytes(_) => Type::Bytes,
            Value::List(_) => Type::list(Type::Dyn),
            Value::Map(_) => Type::map(Type::Dyn, Type::Dyn),
            Value::Timestamp(_) => Type::Timestamp,
            Value::Duration(_) => Type::Duration,
            Value::Type(_) => Type::Type(None),
            Value::Optional(_) => Type::optional(Type::Dyn),
            Value::Object(o) => Type::Object(o.type_name.clone()),
            Value::Opaque(o) => Type::Opaque(o.type_name().to_string(), vec![]),
        }
    }

    /// CEL equality: heterogeneous across int, uint and double (equal when cel-go's numeric
    /// comparison, see `numeric_cmp`, finds them equal; NaN equals nothing); values of other
    /// different kinds are unequal.
    pub fn equals(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (String(a), String(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a == b,
            (Duration(a), Duration(b)) => a == b,
            (Type(a), Type(b)) => a == b,
            (List(a), List(b)) => a.equals(b),
            (Map(a), Map(b)) => {
                a.len() == b.len()
                    && a.entries.iter().all(|(k, (_, v))| match b.entries.get(k) {
                        Some((_, w)) => v.equals(w),
                        None => false,
                    })
            }
            (Optional(a), Optional(b)) => match (a, b) {
                (None, None) => true,
                (Some(x), Some(y)) => x.equals(y),
                _ => false,
            },
            (Object(a), Object(b)) => {
                a.type_name == b.type_name
                    && a.fields.len() == b.fields.len()
                    && a.fields
                        .iter()
                        .all(|(k, v)| b.fields.get(k).is_some_and(|w| v.equals(w)))
            }
            (Opaque(a), Opaque(b)) => a.equals(&**b),
            _ => matches!(numeric_cmp(self, other), Some(Ordering::Equal)),
        }
    }

    /// CEL ordering for `<` and friends; None when the kinds are not comparable or a NaN is
    /// involved. Numbers order across int, uint and double as cel-go's `compare.go` does (see
    /// `numeric_cmp`).
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        use Value::*;
        match (self, other) {
            (Bool(a), Bool(b)) => Some(a.cmp(b)),
            (String(a), String(b)) => Some(a.cmp(b)),
            (Bytes(a), Bytes(b)) => Some(a.cmp(b)),
            (Timestamp(a), Timestamp(b)) => Some(a.cmp(b)),
            (Duration(a), Duration(b)) => Some(a.cmp(b)),
            (Opaque(a), Opaque(b)) => a.compare(&**b),
            _ => numeric_cmp(self, other),
        }
    }
}

/// Orders numbers of the three numeric kinds as cel-go does (`common/types/compare.go`, used by
/// `Int`/`Uint`/`Double`'s `Compare` and `Equal`), which is also what `==` and `!=` use:
///
/// * int against uint is exact (a negative int is below every uint);
/// * a double against an int or uint is not exact: a double below the other kind's range
///   (`< -2^63` for an int, `< 0` for a uint) is below it, one above its range (`> 2^63`, resp.
///   `> 2^64`, the limits `i64::MAX`/`u64::MAX` rounded to doubles) is above it, and otherwise
///   the integer is rounded to the nearest double and the two doubles are compared. So the
///   largest int equals 2^63 as a double, 2^53 + 1 equals 2^53 as a double, and the largest
///   uint equals 2^64 as a double (the conformance suite's "lossy" cases).
///
/// -0.0 equals 0. NaN is unordered (None), hence unequal to everything; callers turn an
/// unordered NaN into cel-go's "NaN values cannot be ordered". Because the int/double and
/// uint/double comparisons round, equality across kinds is not transitive at the extremes
/// (`9223372036854775807 == 2^63.0 == 9223372036854775808u`, yet the int is below the uint).
fn numeric_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Uint(x), Uint(y)) => Some(x.cmp(y)),
        (Double(x), Double(y)) => x.partial_cmp(y),
        (Int(x), Uint(y)) => Some(cmp_i64_u64(*x, *y)),
        (Uint(x), Int(y)) => Some(cmp_i64_u64(*y, *x).reverse()),
        (Double(x), Int(y)) => cmp_f64_i64(*x, *y),
        (Int(x), Double(y)) => cmp_f64_i64(*y, *x).map(Ordering::reverse),
        (Double(x), Uint(y)) => cmp_f64_u64(*x, *y),
        (Uint(x), Double(y)) => cmp_f64_u64(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

/// `-2^63`, exact as a double.
const I64_MIN_F64: f64 = i64::MIN as f64;
/// `i64::MAX` rounded to the nearest double: 2^63 (as Go converts `math.MaxInt64`).
const I64_MAX_F64: f64 = i64::MAX as f64;
/// `u64::MAX` rounded to the nearest double: 2^64 (as Go converts `math.MaxUint64`).
const U64_MAX_F64: f64 = u64::MAX as f64;

/// An int against a uint, exactly.
fn cmp_i64_u64(x: i64, y: u64) -> Ordering {
    match u64::try_from(x) {
        Ok(x) => x.cmp(&y),
        Err(_) => Ordering::Less,
    }
}

/// A double against an int (cel-go's `compareDoubleInt`): range checks, then the int rounded
/// to a double. None for NaN.
fn cmp_f64_i64(d: f64, i: i64) -> Option<Ordering> {
    if d.is_nan() {
        None
    } else if d < I64_MIN_F64 {
        Some(Ordering::Less)
    } else if d > I64_MAX_F64 {
        Some(Ordering::Greater)
    } else {
        d.partial_cmp(&(i as f64))
    }
}

/// A double against a uint (cel-go's `compareDoubleUint`): range checks, then the uint rounded
/// to a double. None for NaN.
fn cmp_f64_u64(d: f64, u: u64) -> Option<Ordering> {
    if d.is_nan() {
        None
    } else if d < 0.0 {
        Some(Ordering::Less)
    } else if d > U64_MAX_F64 {
        Some(Ordering::Greater)
    } else {
        d.partial_cmp(&(u as f64))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.equals(other)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Uint(u) => write!(f, "{u}u"),
            Value::Double(d) => write!(f, "{d}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "b{:?}", String::from_utf8_lossy(b)),
            Value::List(l) => {
                f.write_str("[")?;
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.entries.values().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
            Value::Timestamp(t) => write!(f, "timestamp({t})"),
            Value::Duration(d) => write!(f, "duration({d})"),
            Value::Type(t) => f.write_str(t),
            Value::Optional(None) => f.write_str("optional.none()"),
            Value::Optional(Some(v)) => write!(f, "optional.of({v})"),
            Value::Object(o) => write!(f, "{}{{...}}", o.type_name),
            Value::Opaque(o) => write!(f, "{o:?}"),
        }
    }
}

#[cfg(test)]
mod list_kind_tests {
    use super::*;

    fn ints(v: &[i64], kind: ListKind) -> ListValue {
        ListValue::with_kind(v.iter().map(|i| Value::Int(*i)).collect(), kind)
    }

    fn entry(k: &str, v: i64) -> Value {
        let mut m = MapValue::default();
        for (name, val) in [("k", Value::string(k)), ("v", Value::Int(v))] {
            let key: Arc<str> = name.into();
            m.entries
                .insert(Key::String(key.clone()), (Value::String(key), val));
        }
        Value::Map(Arc::new(m))
    }

    #[test]
    fn set_lists_ignore_order_and_union() {
        let set = ints(&[1, 2], ListKind::Set);
        assert!(set.equals(&ints(&[2, 1], ListKind::Ordered)));
        assert!(!ints(&[1, 2], ListKind::Ordered).equals(&ints(&[2, 1], ListKind::Ordered)));
        let u = set.concat(&ints(&[3, 2, 4], ListKind::Ordered));
        assert_eq!(u.items, ints(&[1, 2, 3, 4], ListKind::Ordered).items);
        assert_eq!(u.kind, ListKind::Set);
    }

    #[test]
    fn map_lists_merge_by_key() {
        let keys: Arc<[Arc<str>]> = vec![Arc::<str>::from("k")].into();
        let x = ListValue::with_kind(vec![entry("a", 1), entry("b", 2)], ListKind::Map(keys));
        let y = ListValue::from(vec![entry("c", 3), entry("a", 9)]);
        let m = x.concat(&y);
        assert_eq!(m.items, vec![entry("a", 9), entry("b", 2), entry("c", 3)]);
        assert!(x.equals(&ListValue::from(vec![entry("b", 2), entry("a", 1)])));
        assert!(!x.equals(&ListValue::from(vec![entry("b", 2), entry("a", 3)])));
    }
}
