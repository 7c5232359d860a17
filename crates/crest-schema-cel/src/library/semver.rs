//! Kubernetes' semver library (apiserver `library/semverlib.go`, 1.33's base environment at
//! library version 1, so with the `normalize` overloads) over a port of blang/semver v4's
//! `Parse`: its acceptance rules and error wording are what rules see, so both match upstream.

use std::cmp::Ordering;
use std::sync::Arc;

use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::types::Type;
use crest_cel::value::{OpaqueValue, Value};

use super::go_quote;

pub const TYPE_NAME: &str = "kubernetes.Semver";

const ALPHANUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789";

/// A prerelease identifier: numeric ones order numerically and before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pre {
    Num(u64),
    Alpha(String),
}

impl Pre {
    fn cmp(&self, o: &Pre) -> Ordering {
        match (self, o) {
            (Pre::Num(a), Pre::Num(b)) => a.cmp(b),
            (Pre::Num(_), Pre::Alpha(_)) => Ordering::Less,
            (Pre::Alpha(_), Pre::Num(_)) => Ordering::Greater,
            (Pre::Alpha(a), Pre::Alpha(b)) => a.cmp(b),
        }
    }
}

/// blang/semver's `Version`. Build metadata is kept but has no precedence.
#[derive(Debug, Clone)]
pub struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pre: Vec<Pre>,
    build: Vec<String>,
}

fn only_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn only_alphanum(s: &str) -> bool {
    s.chars().all(|c| ALPHANUM.contains(c))
}

fn leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go's `strconv.ParseUint(s, 10, 64)` for a string of digits (possibly empty).
fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            go_quote(s)
        )
    })
}

fn number(s: &str, what: &str, upper: &str) -> Result<u64, String> {
    if !only_digits(s) {
        return Err(format!(
            "Invalid character(s) found in {what} number {}",
            go_quote(s)
        ));
    }
    if leading_zero(s) {
        return Err(format!(
            "{upper} number must not contain leading zeroes {}",
            go_quote(s)
        ));
    }
    parse_uint(s)
}

/// blang/semver v4 `Parse`, with its error messages.
pub fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let major = number(major, "major", "Major")?;
    let minor = number(minor, "minor", "Minor")?;
    let mut patch = rest;
    let mut build = vec![];
    let mut pre = vec![];
    if let Some(i) = patch.find('+') {
        build = patch[i + 1..].split('.').collect();
        patch = &patch[..i];
    }
    if let Some(i) = patch.find('-') {
        pre = patch[i + 1..].split('.').collect();
        patch = &patch[..i];
    }
    let patch = number(patch, "patch", "Patch")?;
    let pre = pre
        .into_iter()
        .map(|p| {
            if p.is_empty() {
                Err("Prerelease is empty".to_string())
            } else if only_digits(p) {
                if leading_zero(p) {
                    return Err(format!(
                        "Numeric PreRelease version must not contain leading zeroes {}",
                        go_quote(p)
                    ));
                }
                parse_uint(p).map(Pre::Num)
            } else if only_alphanum(p) {
                Ok(Pre::Alpha(p.to_string()))
            } else {
                Err(format!(
                    "Invalid character(s) found in prerelease {}",
                    go_quote(p)
                ))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let build = build
        .into_iter()
        .map(|b| {
            if b.is_empty() {
                Err("Build meta data is empty".to_string())
            } else if !only_alphanum(b) {
                Err(format!(
                    "Invalid character(s) found in build meta data {}",
                    go_quote(b)
                ))
            } else {
                Ok(b.to_string())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Semver {
        major,
        minor,
        patch,
        pre,
        build,
    })
}

/// Upstream's `normalizeAndParse`: blang's `ParseTolerant` without its whitespace trimming
/// (drop a "v" prefix and leading zeros, fill in a missing minor and patch).
pub fn normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() <= 1 {
                return p.to_string();
            }
            let t = p.trim_start_matches('0');
            if t.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                t.to_string()
            } else {
                format!("0{t}")
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts
            .last()
            .is_some_and(|p| p.contains('+') || p.contains('-'))
        {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_string());
    }
    parse(&parts.join("."))
}

impl Semver {
    /// blang's `Compare`: major, minor, patch, then prerelease (a release is greater).
    pub fn compare(&self, o: &Semver) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self
                .pre
                .iter()
                .zip(&o.pre)
                .map(|(a, b)| a.cmp(b))
                .find(|c| *c != Ordering::Equal)
                .unwrap_or_else(|| self.pre.len().cmp(&o.pre.len())),
        }
    }

    pub fn build(&self) -> &[String] {
        &self.build
    }
}

impl OpaqueValue for Semver {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }
    /// `Version.EQ`: equal precedence, so build metadata is ignored.
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<Semver>()
            .is_some_and(|o| self.compare(o) == Ordering::Equal)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn ty() -> Type {
    Type::Opaque(TYPE_NAME.into(), vec![])
}

fn no_overload() -> EvalError {
    EvalError::new("no such overload")
}

fn sv(v: &Value) -> Result<&Semver, EvalError> {
    match v {
        Value::Opaque(o) => o.as_any().downcast_ref::<Semver>().ok_or_else(no_overload),
        _ => Err(no_overload()),
    }
}

/// The string argument and the normalize flag (false when absent).
fn string_args(a: &[Value]) -> Result<Result<Semver, String>, EvalError> {
    match a {
        [Value::String(s)] => Ok(parse(s)),
        [Value::String(s), Value::Bool(n)] => {
            Ok(if *n { normalize_and_parse(s) } else { parse(s) })
        }
        _ => Err(no_overload()),
    }
}

fn accessor(id: &str, f: fn(&Semver) -> u64) -> Overload {
    Overload::member(id, vec![ty()], Type::Int).implement(move |a| match a {
        // blang's uint64 converted as Go's int64 conversion does (wrapping).
        [x] => Ok(Value::Int(f(sv(x)?) as i64)),
        _ => Err(no_overload()),
    })
}

fn comparison(id: &str, result: Type, f: fn(Ordering) -> Value) -> Overload {
    Overload::member(id, vec![ty(), ty()], result).implement(move |a| match a {
        [x, y] => Ok(f(sv(x)?.compare(sv(y)?))),
        _ => Err(no_overload()),
    })
}

pub fn library() -> Library {
    let to_semver = |a: &[Value]| {
        string_args(a)?
            .map(|v| Value::Opaque(Arc::new(v)))
            .map_err(EvalError::new)
    };
    let is_semver = |a: &[Value]| Ok(Value::Bool(string_args(a)?.is_ok()));
    Library::new("kubernetes.Semver")
        .function(
            "semver",
            [
                Overload::global("string_to_semver", vec![Type::String], ty()).implement(to_semver),
                Overload::global(
                    "string_bool_to_semver",
                    vec![Type::String, Type::Bool],
                    ty(),
                )
                .implement(to_semver),
            ],
        )
        .function(
            "isSemver",
            [
                Overload::global("is_semver_string", vec![Type::String], Type::Bool)
                    .implement(is_semver),
                Overload::global(
                    "is_semver_string_bool",
                    vec![Type::String, Type::Bool],
                    Type::Bool,
                )
                .implement(is_semver),
            ],
        )
        .function(
            "isGreaterThan",
            [comparison("semver_is_greater_than", Type::Bool, |o| {
                Value::Bool(o == Ordering::Greater)
            })],
        )
        .function(
            "isLessThan",
            [comparison("semver_is_less_than", Type::Bool, |o| {
                Value::Bool(o == Ordering::Less)
            })],
        )
        .function(
            "compareTo",
            [comparison("semver_compare_to", Type::Int, |o| {
                Value::Int(o as i64)
            })],
        )
        .function("major", [accessor("semver_major", |v| v.major)])
        .function("minor", [accessor("semver_minor", |v| v.minor)])
        .function("patch", [accessor("semver_patch", |v| v.patch)])
}
