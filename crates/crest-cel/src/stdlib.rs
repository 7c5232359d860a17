//! Runtime implementations of the standard library, optionals and the strings extension,
//! dispatched on the function name and the runtime kinds of the arguments (so unchecked
//! expressions get the same dynamic dispatch cel-go does). The receiver of a member call is
//! `args[0]`.

use std::cmp::Ordering;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Datelike, FixedOffset, TimeDelta, Timelike, Utc};

use crate::runtime::EvalError;
use crate::value::{Key, MapValue, Value};

pub use crate::format::{format_duration, format_timestamp};

type R = Result<Value, EvalError>;

fn err(msg: impl Into<String>) -> EvalError {
    EvalError::new(msg)
}

pub fn no_such_overload(name: &str, args: &[Value]) -> EvalError {
    let kinds: Vec<String> = args.iter().map(|a| a.type_name().to_string()).collect();
    err(format!("no such overload: {}({})", name, kinds.join(", ")))
}

/// Smallest and largest valid timestamps (0001-01-01T00:00:00Z, 9999-12-31T23:59:59Z), in
/// Unix seconds.
const MIN_TS: i64 = -62_135_596_800;
const MAX_TS: i64 = 253_402_300_799;
/// Durations are Go `time.Duration`s in cel-go: int64 nanoseconds (about 292 years).
const MAX_DURATION_SECS: i64 = i64::MAX / 1_000_000_000;

pub fn check_timestamp(t: DateTime<Utc>) -> R {
    let s = t.timestamp();
    if !(MIN_TS..=MAX_TS).contains(&s) {
        return Err(err("timestamp out of range"));
    }
    Ok(Value::Timestamp(t))
}

pub fn check_duration(d: TimeDelta) -> R {
    if d.num_nanoseconds().is_none() {
        return Err(err("duration out of range"));
    }
    Ok(Value::Duration(d))
}

/// Names of global functions (for resolving `ns.f()` in unchecked expressions).
pub fn is_global_function(name: &str) -> bool {
    matches!(
        name,
        "optional.of"
            | "optional.ofNonZeroValue"
            | "optional.none"
            | "optional.unwrap"
            | "strings.quote"
    )
}

pub fn call(name: &str, args: &[Value]) -> R {
    use Value::*;
    let r = match (name, args) {
        ("!_", [Bool(b)]) => Bool(!b),
        ("-_", [Int(i)]) => Int(i.checked_neg().ok_or_else(overflow)?),
        ("-_", [Double(d)]) => Double(-d),
        ("_==_", [a, b]) => Bool(a.equals(b)),
        ("_!=_", [a, b]) => Bool(!a.equals(b)),
        ("_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => compare(name, a, b)?,
        ("_+_", [a, b]) => add(a, b)?,
        ("_-_", [a, b]) => sub(a, b)?,
        ("_*_", [a, b]) => mul(a, b)?,
        ("_/_", [a, b]) => div(a, b)?,
        ("_%_", [a, b]) => rem(a, b)?,
        ("_[_]", [c, i]) => index(c, i)?,
        ("_[?_]", [c, i]) => opt_index(c, i)?,
        ("@in", [v, c]) => Bool(contains(c, v)?),
        ("size", [v]) => Int(size(v).ok_or_else(|| no_such_overload(name, args))?),
        ("contains", [String(s), String(t)]) => Bool(s.contains(&**t)),
        ("startsWith", [String(s), String(t)]) => Bool(s.starts_with(&**t)),
        ("endsWith", [String(s), String(t)]) => Bool(s.ends_with(&**t)),
        ("matches", [String(s), String(re)]) => Bool(matches(s, re)?),
        ("int", [v]) => to_int(v)?,
        ("uint", [v]) => to_uint(v)?,
        ("double", [v]) => to_double(v)?,
        ("string", [v]) => to_string(v)?,
        ("bytes", [String(s)]) => Bytes(s.as_bytes().into()),
        ("bytes", [Bytes(b)]) => Bytes(b.clone()),
        ("bool", [Bool(b)]) => Bool(*b),
        ("bool", [String(s)]) => Bool(match &**s {
            "1" | "t" | "T" | "true" | "TRUE" | "True" => true,
            "0" | "f" | "F" | "false" | "FALSE" | "False" => false,
            _ => {
                return Err(err(format!(
                    "type conversion error from 'string' to 'bool': {s}"
                )))
            }
        }),
        ("timestamp", [Timestamp(t)]) => Timestamp(*t),
        ("timestamp", [String(s)]) => parse_timestamp(s)?,
        ("timestamp", [Int(i)]) => match DateTime::from_timestamp(*i, 0) {
            Some(t) => check_timestamp(t)?,
            None => return Err(err("timestamp out of range")),
        },
        ("duration", [Duration(d)]) => Duration(*d),
        ("duration", [String(s)]) => check_duration(parse_duration(s)?)?,
        ("dyn", [v]) => v.clone(),
        ("type", [v]) => Type(v.type_name()),
        (
            "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
            | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds",
            [Timestamp(t), rest @ ..],
        ) if rest.len() <= 1 => {
            let tz = match rest {
                [String(z)] => Some(&**z),
                [] => None,
                _ => return Err(no_such_overload(name, args)),
            };
            timestamp_part(name, *t, tz)?
        }
        ("getHours", [Duration(d)]) => Int(d.num_hours()),
        ("getMinutes", [Duration(d)]) => Int(d.num_minutes()),
        ("getSeconds", [Duration(d)]) => Int(d.num_seconds()),
        ("getMilliseconds", [Duration(d)]) => Int(d.num_milliseconds() % 1000),

        // Optionals.
        ("optional.of", [v]) => Optional(Some(Arc::new(v.clone()))),
        ("optional.none", []) => Optional(None),
        ("optional.ofNonZeroValue", [v]) => {
            if is_zero(v) {
                Optional(None)
            } else {
                Optional(Some(Arc::new(v.clone())))
            }
        }
        ("hasValue", [Optional(o)]) => Bool(o.is_some()),
        ("value", [Optional(o)]) => match o {
            Some(v) => (**v).clone(),
            None => return Err(err("optional.none() dereference")),
        },
        ("or", [Optional(a), Optional(b)]) => Optional(a.clone().or_else(|| b.clone())),
        ("orValue", [Optional(a), v]) => match a {
            Some(x) => (**x).clone(),
            None => v.clone(),
        },
        ("optional.unwrap" | "unwrapOpt", [List(l)]) => {
            let mut out = Vec::new();
            for v in l.iter() {
                match v {
                    Optional(Some(x)) => out.push((**x).clone()),
                    Optional(None) => {}
                    _ => return Err(no_such_overload(name, args)),
                }
            }
            Value::list(out)
        }
        ("first", [List(l)]) => Optional(l.first().map(|v| Arc::new(v.clone()))),
        ("last", [List(l)]) => Optional(l.last().map(|v| Arc::new(v.clone()))),

        // Strings extension.
        ("charAt", [String(s), Int(i)]) => {
            let n = s.chars().count() as i64;
            if *i < 0 || *i > n {
                return Err(err(format!("index out of range: {i}")));
            }
            String(
                s.chars()
                    .nth(*i as usize)
                    .map(|c| c.to_string())
                    .unwrap_or_default()
                    .into(),
            )
        }
        ("indexOf", [String(s), String(t), rest @ ..]) if rest.len() <= 1 => {
            index_of(s, t, rest.first(), false)?
        }
        ("lastIndexOf", [String(s), String(t), rest @ ..]) if rest.len() <= 1 => {
            index_of(s, t, rest.first(), true)?
        }
        ("lowerAscii", [String(s)]) => String(s.to_ascii_lowercase().into()),
        ("upperAscii", [String(s)]) => String(s.to_ascii_uppercase().into()),
        ("replace", [String(s), String(from), String(to), rest @ ..]) if rest.len() <= 1 => {
            let n = match rest {
                [Int(n)] => *n,
                [] => -1,
                _ => return Err(no_such_overload(name, args)),
            };
            String(if n < 0 {
                s.replace(&**from, to).into()
            } else {
                s.replacen(&**from, to, n as usize).into()
            })
        }
        ("split", [String(s), String(sep), rest @ ..]) if rest.len() <= 1 => {
            let n = match rest {
                [Int(n)] => *n,
                [] => -1,
                _ => return Err(no_such_overload(name, args)),
            };
            split(s, sep, n)
        }
        ("substring", [String(s), Int(start), rest @ ..]) if rest.len() <= 1 => {
            let chars: Vec<char> = s.chars().collect();
            let end = match rest {
                [Int(e)] => *e,
                [] => chars.len() as i64,
                _ => return Err(no_such_overload(name, args)),
            };
            if *start < 0 || *start > chars.len() as i64 {
                return Err(err(format!("index out of range: {start}")));
            }
            if end < 0 || end > chars.len() as i64 {
                return Err(err(format!("index out of range: {end}")));
            }
            if *start > end {
                return Err(err(format!(
                    "invalid substring range. start: {start}, end: {end}"
                )));
            }
            String(
                chars[*start as usize..end as usize]
                    .iter()
                    .collect::<std::string::String>()
                    .into(),
            )
        }
        ("trim", [String(s)]) => String(s.trim().into()),
        ("join", [List(l), rest @ ..]) if rest.len() <= 1 => {
            let sep = match rest {
                [String(s)] => s.to_string(),
                [] => std::string::String::new(),
                _ => return Err(no_such_overload(name, args)),
            };
            let mut parts = Vec::with_capacity(l.len());
            for v in l.iter() {
                match v {
                    String(s) => parts.push(s.to_string()),
                    _ => return Err(no_such_overload(name, args)),
                }
            }
            String(parts.join(&sep).into())
        }
        ("reverse", [String(s)]) => String(s.chars().rev().collect::<std::string::String>().into()),
        ("strings.quote", [String(s)]) => String(quote(s).into()),
        ("format", [String(f), List(l)]) => String(crate::format::format(f, l)?.into()),

        ("cel.@mapInsert", [Map(m), k, v]) => {
            let key = Key::from_value(k).ok_or_else(|| err("unsupported key type"))?;
            if m.entries.contains_key(&key) {
                return Err(err(format!("insert failed: key {k} already exists")));
            }
            let mut m2 = (**m).clone();
            m2.entries.insert(key, (k.clone(), v.clone()));
            Map(Arc::new(m2))
        }
        ("cel.@mapInsert", [Map(m), Map(other)]) => {
            let mut m2 = (**m).clone();
            for (key, kv) in other.entries.iter() {
                if m2.entries.contains_key(key) {
                    return Err(err(format!("insert failed: key {} already exists", kv.0)));
                }
                m2.entries.insert(key.clone(), kv.clone());
            }
            Map(Arc::new(m2))
        }
        _ => return Err(no_such_overload(name, args)),
    };
    Ok(r)
}

/// A lower bound, known before the call, of the cost of a call whose result can be far larger
/// than its operands (`'a'.replace('', big)`, `list.join(big)`, `lists.range(n)`): the
/// evaluator refuses the call when the bound is over its budget, rather than building the
/// result and charging for it afterwards. Strings are charged per byte as traversals are.
pub fn result_cost_bound(name: &str, args: &[Value]) -> u64 {
    use Value::*;
    let per_byte = |n: u64| n / crate::runtime::costs::TRAVERSAL_DIVISOR;
    match (name, args) {
        ("replace", [String(s), String(from), String(to), rest @ ..]) => {
            let limit = match rest {
                [Int(n)] if *n >= 0 => Some(*n as u64),
                _ => None,
            };
            if limit == Some(0) || to.len() <= from.len() {
                return per_byte(s.len() as u64);
            }
            let count = if from.is_empty() {
                s.chars().count() as u64 + 1
            } else {
                s.matches(&**from).count() as u64
            };
            let count = limit.map_or(count, |n| n.min(count));
            let growth = count.saturating_mul((to.len() - from.len()) as u64);
            per_byte((s.len() as u64).saturating_add(growth))
        }
        ("join", [List(l), rest @ ..]) => {
            let sep = match rest {
                [String(sep)] => sep.len() as u64,
                _ => 0,
            };
            let parts = l
                .iter()
                .map(|v| match v {
                    String(s) => s.len() as u64,
                    _ => 0,
                })
                .fold(0, u64::saturating_add);
            per_byte(parts.saturating_add(sep.saturating_mul(l.len().saturating_sub(1) as u64)))
        }
        ("lists.range", [Int(n)]) => (*n).max(0) as u64,
        _ => 0,
    }
}

fn overflow() -> EvalError {
    err("integer overflow")
}

fn compare(name: &str, a: &Value, b: &Value) -> R {
    let o = ordering(name, a, b)?;
    Ok(Value::Bool(match name {
        "_<_" => o == Ordering::Less,
        "_<=_" => o != Ordering::Greater,
        "_>_" => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }))
}

/// The order of two values for `<`, `<=`, `>` and `>=` (cel-go's `Compare`): numbers across
/// the three kinds as cel-go's `compareIntDouble` and friends do (int against uint exactly; a
/// double against an int or uint after range checks, with the integer rounded to a double; see
/// [`Value::compare`]), others within their kind. A NaN has no order: an error of its own
/// ("NaN values cannot be ordered") when it is the left operand or both are numbers; other
/// mismatches have no overload for operator `name`.
pub fn ordering(name: &str, a: &Value, b: &Value) -> Result<Ordering, EvalError> {
    if let Some(o) = a.compare(b) {
        return Ok(o);
    }
    let nan = |v: &Value| matches!(v, Value::Double(d) if d.is_nan());
    let number = |v: &Value| matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_));
    if nan(a) || (nan(b) && number(a)) {
        return Err(err("NaN values cannot be ordered"));
    }
    Err(no_such_overload(name, &[a.clone(), b.clone()]))
}

pub fn add(a: &Value, b: &Value) -> R {
    use Value::*;
    Ok(match (a, b) {
        (Int(x), Int(y)) => Int(x.checked_add(*y).ok_or_else(overflow)?),
        (Uint(x), Uint(y)) => Uint(x.checked_add(*y).ok_or_else(overflow)?),
        (Double(x), Double(y)) => Double(x + y),
        (String(x), String(y)) => {
            let mut s = std::string::String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            String(s.into())
        }
        (Bytes(x), Bytes(y)) => Bytes([&x[..], &y[..]].concat().into()),
        (List(x), List(y)) => List(std::sync::Arc::new(x.concat(y))),
        (Timestamp(t), Duration(d)) | (Duration(d), Timestamp(t)) => {
            let r = t
                .checked_add_signed(*d)
                .ok_or_else(|| err("timestamp out of range"))?;
            check_timestamp(r)?
        }
        (Duration(x), Duration(y)) => check_duration(
            x.checked_add(y)
                .ok_or_else(|| err("duration out of range"))?,
        )?,
        _ => return Err(no_such_overload("_+_", &[a.clone(), b.clone()])),
    })
}

fn sub(a: &Value, b: &Value) -> R {
    use Value::*;
    Ok(match (a, b) {
        (Int(x), Int(y)) => Int(x.checked_sub(*y).ok_or_else(overflow)?),
        (Uint(x), Uint(y)) => Uint(x.checked_sub(*y).ok_or_else(overflow)?),
        (Double(x), Double(y)) => Double(x - y),
        (Timestamp(x), Timestamp(y)) => check_duration(x.signed_duration_since(*y))?,
        (Timestamp(t), Duration(d)) => {
            let r = t
                .checked_sub_signed(*d)
                .ok_or_else(|| err("timestamp out of range"))?;
            check_timestamp(r)?
        }
        (Duration(x), Duration(y)) => check_duration(
            x.checked_sub(y)
                .ok_or_else(|| err("duration out of range"))?,
        )?,
        _ => return Err(no_such_overload("_-_", &[a.clone(), b.clone()])),
    })
}

fn mul(a: &Value, b: &Value) -> R {
    use Value::*;
    Ok(match (a, b) {
        (Int(x), Int(y)) => Int(x.checked_mul(*y).ok_or_else(overflow)?),
        (Uint(x), Uint(y)) => Uint(x.checked_mul(*y).ok_or_else(overflow)?),
        (Double(x), Double(y)) => Double(x * y),
        _ => return Err(no_such_overload("_*_", &[a.clone(), b.clone()])),
    })
}

fn div(a: &Value, b: &Value) -> R {
    use Value::*;
    Ok(match (a, b) {
        (Int(_), Int(0)) | (Uint(_), Uint(0)) => return Err(err("division by zero")),
        (Int(x), Int(y)) => Int(x.checked_div(*y).ok_or_else(overflow)?),
        (Uint(x), Uint(y)) => Uint(x / y),
        (Double(x), Double(y)) => Double(x / y),
        _ => return Err(no_such_overload("_/_", &[a.clone(), b.clone()])),
    })
}

fn rem(a: &Value, b: &Value) -> R {
    use Value::*;
    Ok(match (a, b) {
        (Int(_), Int(0)) | (Uint(_), Uint(0)) => return Err(err("modulus by zero")),
        (Int(x), Int(y)) => Int(x.checked_rem(*y).ok_or_else(overflow)?),
        (Uint(x), Uint(y)) => Uint(x % y),
        _ => return Err(no_such_overload("_%_", &[a.clone(), b.clone()])),
    })
}

/// A list index from an int, uint or integral double.
fn list_index(i: &Value, len: usize) -> Result<Option<usize>, EvalError> {
    let n: i128 = match i {
        Value::Int(i) => *i as i128,
        Value::Uint(u) => *u as i128,
        Value::Double(d) if d.fract() == 0.0 && d.is_finite() => *d as i128,
        Value::Double(d) => return Err(err(format!("unsupported index value {d} in list"))),
        _ => return Err(no_such_overload("_[_]", &[Value::list(vec![]), i.clone()])),
    };
    if n < 0 || n >= len as i128 {
        return Ok(None);
    }
    Ok(Some(n as usize))
}

pub fn index(c: &Value, i: &Value) -> R {
    match c {
        Value::List(l) => match list_index(i, l.len())? {
            Some(n) => Ok(l[n].clone()),
            None => Err(err(format!("index out of range: {i}"))),
        },
        Value::Map(m) => map_get(m, i),
        Value::Optional(o) => opt_index(c, i).map(|r| match o {
            Some(_) => r,
            None => Value::Optional(None),
        }),
        _ => Err(no_such_overload("_[_]", &[c.clone(), i.clone()])),
    }
}

fn map_get(m: &MapValue, k: &Value) -> R {
    if !matches!(
        k,
        Value::Bool(_) | Value::Int(_) | Value::Uint(_) | Value::Double(_) | Value::String(_)
    ) {
        return Err(err(format!("unsupported key type: {}", k.type_name())));
    }
    m.get(k)
        .cloned()
        .ok_or_else(|| err(format!("no such key: {k}")))
}

fn opt_index(c: &Value, i: &Value) -> R {
    let some = |v: &Value| Value::Optional(Some(Arc::new(v.clone())));
    Ok(match c {
        Value::List(l) => match list_index(i, l.len())? {
            Some(n) => some(&l[n]),
            None => Value::Optional(None),
        },
        Value::Map(m) => match m.get(i) {
            Some(v) => some(v),
            None => Value::Optional(None),
        },
        Value::Optional(None) => Value::Optional(None),
        Value::Optional(Some(inner)) => opt_index(inner, i)?,
        _ => return Err(no_such_overload("_[?_]", &[c.clone(), i.clone()])),
    })
}

fn contains(c: &Value, v: &Value) -> Result<bool, EvalError> {
    match c {
        Value::List(l) => Ok(l.iter().any(|x| x.equals(v))),
        Value::Map(m) => Ok(m.get(v).is_some()),
        _ => Err(no_such_overload("@in", &[v.clone(), c.clone()])),
    }
}

pub fn size(v: &Value) -> Option<i64> {
    Some(match v {
        Value::String(s) => s.chars().count() as i64,
        Value::Bytes(b) => b.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.len() as i64,
        _ => return None,
    })
}

fn matches(s: &str, re: &str) -> Result<bool, EvalError> {
    Ok(compiled_pattern(re)?.is_match(s))
}

/// A pattern that is not a literal (literals are compiled with the program), compiled with Go's
/// regexp syntax, semantics and error text, as cel-go's.
fn compiled_pattern(re: &str) -> Result<Arc<regex::Regex>, EvalError> {
    compiled_regex(re).map_err(err)
}

/// `pattern` compiled with Go's regexp syntax and semantics (`crest_goregexp`), or Go's error
/// text. Kept per thread (bounded, errors too): a rule such as
/// `self.items.all(x, x.matches(self.pattern))` compiles its pattern once, not once per item,
/// whose cost the CEL cost model does not charge. Libraries with regex functions (Kubernetes'
/// `find`/`findAll`) share it.
pub fn compiled_regex(pattern: &str) -> Result<Arc<regex::Regex>, String> {
    type Compiled = Result<Arc<regex::Regex>, String>;
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, Compiled>> =
            Default::default();
    }
    if let Some(c) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
        return c;
    }
    let c: Compiled = crest_goregexp::compile(pattern)
        .map(Arc::new)
        .map_err(|e| e.to_string());
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(pattern.to_string(), c.clone());
    });
    c
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Duration(d) => d.is_zero(),
        Value::Timestamp(t) => t.timestamp() == 0 && t.timestamp_subsec_nanos() == 0,
        Value::Object(o) => o.fields.is_empty(),
        _ => false,
    }
}

fn to_int(v: &Value) -> R {
    Ok(Value::Int(match v {
        Value::Int(i) => *i,
        Value::Uint(u) => {
            i64::try_from(*u).map_err(|_| err("range error converting uint to int"))?
        }
        Value::Double(d) => {
            // cel-go excludes both ends: -2^63 and 2^63 are out of range.
            if !(*d > -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18) {
                return Err(err("range error converting double to int"));
            }
            *d as i64
        }
        Value::String(s) => s
            .parse::<i64>()
            .map_err(|_| err(format!("cannot convert string '{s}' to int")))?,
        Value::Timestamp(t) => t.timestamp(),
        _ => return Err(no_such_overload("int", std::slice::from_ref(v))),
    }))
}

fn to_uint(v: &Value) -> R {
    Ok(Value::Uint(match v {
        Value::Uint(u) => *u,
        Value::Int(i) => {
            u64::try_from(*i).map_err(|_| err("range error converting int to uint"))?
        }
        Value::Double(d) => {
            // cel-go: below zero (-0.5 included; -0.0 is zero) or from 2^64 on is out of range.
            if !(*d >= 0.0 && *d < 1.844_674_407_370_955_2e19) {
                return Err(err("range error converting double to uint"));
            }
            *d as u64
        }
        Value::String(s) => s
            .parse::<u64>()
            .map_err(|_| err(format!("cannot convert string '{s}' to uint")))?,
        _ => return Err(no_such_overload("uint", std::slice::from_ref(v))),
    }))
}

fn to_double(v: &Value) -> R {
    Ok(Value::Double(match v {
        Value::Double(d) => *d,
        Value::Int(i) => *i as f64,
        Value::Uint(u) => *u as f64,
        Value::String(s) => parse_go_float(s)
            .ok_or_else(|| err(format!("cannot convert string '{s}' to double")))?,
        _ => return Err(no_such_overload("double", std::slice::from_ref(v))),
    }))
}

/// Go's `strconv.ParseFloat` accepts what Rust does plus case-insensitive inf/infinity/nan.
fn parse_go_float(s: &str) -> Option<f64> {
    s.parse::<f64>().ok()
}

fn to_string(v: &Value) -> R {
    Ok(Value::String(match v {
        Value::String(s) => s.clone(),
        Value::Int(i) => i.to_string().into(),
        Value::Uint(u) => u.to_string().into(),
        Value::Double(d) => format_double(*d).into(),
        Value::Bool(b) => b.to_string().into(),
        Value::Bytes(b) => std::str::from_utf8(b)
            .map_err(|_| err("invalid UTF-8 in bytes, cannot convert to string"))?
            .into(),
        Value::Timestamp(t) => format_timestamp(*t).into(),
        Value::Duration(d) => format_duration(*d).into(),
        _ => return Err(no_such_overload("string", std::slice::from_ref(v))),
    }))
}

/// `string(double)`: cel-go's `fmt.Sprintf("%g", d)`, Go's shortest digits with an exponent
/// below 1e-4 and from 1e6 on (`1e+06`, `1.5e-05`).
pub fn format_double(d: f64) -> String {
    crest_gofmt::go_float(d)
}

fn parse_timestamp(s: &str) -> R {
    let t =
        DateTime::parse_from_rfc3339(s).map_err(|e| err(format!("timestamp parse error: {e}")))?;
    check_timestamp(t.with_timezone(&Utc))
}

/// Go's `time.ParseDuration` syntax: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
pub fn parse_duration(s: &str) -> Result<TimeDelta, EvalError> {
    let bad = || err(format!("invalid duration: {s}"));
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(TimeDelta::zero());
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let num = &rest[..num_end];
        if num.is_empty() || num == "." {
            return Err(bad());
        }
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(bad()),
        };
        let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
        // One fraction at most: Go reads "1.2.3s" as "1.2" with the unit ".3s" missing.
        if frac_part.contains('.') {
            return Err(bad());
        }
        let whole: i128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse::<i128>().map_err(|_| bad())?
        };
        let mut v = whole.checked_mul(scale).ok_or_else(bad)?;
        let mut f_scale = scale;
        for c in frac_part.chars() {
            f_scale /= 10;
            if f_scale == 0 {
                break;
            }
            v += (c as i128 - '0' as i128) * f_scale;
        }
        total = total.checked_add(v).ok_or_else(bad)?;
        if total > (MAX_DURATION_SECS as i128 + 1) * 1_000_000_000 {
            return Err(err("duration out of range"));
        }
    }
    if neg {
        total = -total;
    }
    let secs = (total / 1_000_000_000) as i64;
    let nanos = (total % 1_000_000_000) as i64;
    Ok(TimeDelta::seconds(secs) + TimeDelta::nanoseconds(nanos))
}

/// The offset of a time zone: an IANA name, `UTC`, or `[+-]HH:MM`.
fn zone_offset(t: DateTime<Utc>, tz: &str) -> Result<FixedOffset, EvalError> {
    use chrono::Offset;
    let bad = || err(format!("invalid time zone: {tz}"));
    if tz.contains(':') {
        let (sign, rest) = match tz.as_bytes().first() {
            Some(b'-') => (-1, &tz[1..]),
            Some(b'+') => (1, &tz[1..]),
            _ => (1, tz),
        };
        let (h, m) = rest.split_once(':').ok_or_else(bad)?;
        let h: i32 = h.parse().map_err(|_| bad())?;
        let m: i32 = m.parse().map_err(|_| bad())?;
        // Hours and minutes come from the expression: keep the arithmetic from overflowing.
        let secs = h
            .checked_mul(3600)
            .and_then(|h| m.checked_mul(60).and_then(|m| h.checked_add(m)))
            .and_then(|s| s.checked_mul(sign))
            .ok_or_else(bad)?;
        return FixedOffset::east_opt(secs).ok_or_else(bad);
    }
    let zone = chrono_tz::Tz::from_str(tz).map_err(|_| bad())?;
    Ok(t.with_timezone(&zone).offset().fix())
}

fn timestamp_part(name: &str, t: DateTime<Utc>, tz: Option<&str>) -> R {
    let offset = match tz {
        Some(z) => zone_offset(t, z)?,
        None => FixedOffset::east_opt(0).ok_or_else(|| err("invalid time zone"))?,
    };
    let l = t.with_timezone(&offset);
    Ok(Value::Int(match name {
        "getFullYear" => l.year() as i64,
        "getMonth" => l.month0() as i64,
        "getDayOfYear" => l.ordinal0() as i64,
        "getDayOfMonth" => l.day0() as i64,
        "getDate" => l.day() as i64,
        "getDayOfWeek" => l.weekday().num_days_from_sunday() as i64,
        "getHours" => l.hour() as i64,
        "getMinutes" => l.minute() as i64,
        "getSeconds" => l.second() as i64,
        _ => (l.nanosecond() / 1_000_000) as i64,
    }))
}

fn index_of(s: &str, t: &str, start: Option<&Value>, last: bool) -> R {
    let n = s.chars().count() as i64;
    let start = match start {
        Some(Value::Int(i)) => *i,
        None => {
            if last {
                n
            } else {
                0
            }
        }
        Some(v) => return Err(no_such_overload("indexOf", std::slice::from_ref(v))),
    };
    if start < 0 || start > n {
        return Err(err(format!("index out of range: {start}")));
    }
    // A substring search in linear time (a match of valid UTF-8 in valid UTF-8 starts at a
    // character boundary), with code point offsets converted to and from byte offsets: a
    // character-by-character comparison at every offset is quadratic on hostile inputs.
    let byte_at = |chars: i64| {
        s.char_indices()
            .nth(chars as usize)
            .map_or(s.len(), |(b, _)| b)
    };
    let found = if last {
        // The last match starting at or before `start`: it ends by `start + size(t)`.
        let end = start.saturating_add(t.chars().count() as i64).min(n);
        s[..byte_at(end)].rfind(t)
    } else {
        let from = byte_at(start);
        s[from..].find(t).map(|p| from + p)
    };
    Ok(Value::Int(match found {
        Some(b) => s[..b].chars().count() as i64,
        None => -1,
    }))
}

fn split(s: &str, sep: &str, n: i64) -> Value {
    let parts: Vec<Value> = if n == 0 {
        vec![]
    } else if sep.is_empty() {
        // Go splits into code points, the last one holding the rest.
        let chars: Vec<char> = s.chars().collect();
        let limit = if n < 0 {
            chars.len()
        } else {
            (n as usize).min(chars.len())
        };
        let mut out = Vec::new();
        for (i, c) in chars.iter().enumerate() {
            if limit > 0 && i == limit - 1 {
                out.push(Value::string(&chars[i..].iter().collect::<String>()));
                break;
            }
            out.push(Value::string(&c.to_string()));
        }
        out
    } else if n < 0 {
        s.split(sep).map(Value::string).collect()
    } else {
        s.splitn(n as usize, sep).map(Value::string).collect()
    };
    Value::list(parts)
}

/// cel-go's `strings.quote`, which is not Go's `strconv.Quote`: it escapes CEL's escape
/// sequences (`\a \b \f \n \r \t \v \\ \"`) and keeps every other character as it is
/// (controls, U+00A0, zero-width characters included).
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
