//! `string.format(list)` as the current cel-go strings extension formats it (its
//! `formatting_v2`, the formatter of every strings version from 4 on, the default): the clause
//! parser shared by evaluation and the checker's validation of literal format strings, the
//! clauses' formatting, and their messages.
//!
//! Clauses: `%s` (any printable value; lists as `[a, b]`, maps as `{k: v}` ordered by their
//! formatted keys, nothing quoted), `%d` (int, uint, double), `%f` and `%e` (int, uint, double,
//! with an optional `.precision` up to 100, 6 by default), `%b` (int, uint, bool), `%x` / `%X`
//! (int, uint, string, bytes) and `%o` (int, uint); `%%` is a percent sign. Doubles that are
//! not finite print as `NaN`, `Infinity` and `-Infinity` under every clause that takes doubles.

use std::fmt::Write;

use chrono::{DateTime, TimeDelta, Utc};
use crest_gofmt::{go_float_exp, go_float_fixed, go_float_fixed_shortest, go_quote};

use crate::runtime::EvalError;
use crate::types::Type;
use crate::value::Value;

/// cel-go's `maxPrecision`.
pub const MAX_PRECISION: usize = 100;
/// cel-go's `defaultPrecision`.
const DEFAULT_PRECISION: usize = 6;

/// One formatting clause (what follows a `%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clause {
    String,
    Decimal,
    Fixed(usize),
    Scientific(usize),
    Binary,
    Hex { upper: bool },
    Octal,
}

impl Clause {
    /// The clause's complaint about an argument of type `given` (cel-go's `*FormatErrorV2`).
    pub fn error(self, given: &str) -> String {
        let what = match self {
            Clause::String => "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
            Clause::Decimal => "decimal clause can only be used on ints, uints, and doubles",
            Clause::Fixed(_) => "fixed-point clause can only be used on ints, uints, and doubles",
            Clause::Scientific(_) => "scientific clause can only be used on ints, uints, and doubles",
            Clause::Binary => "only ints, uints, and bools can be formatted as binary",
            Clause::Hex { .. } => "only ints, uints, bytes, and strings can be formatted as hex",
            Clause::Octal => "octal clause can only be used on ints and uints",
        };
        format!("{what}, was given {given}")
    }

    /// Whether the checker lets an argument of static type `t` through (`dyn` and unresolved
    /// types always pass; parameters of lists and maps are not looked at). `%s` also checks the
    /// elements of list and map literals: see [`string_clause_allows`].
    pub fn allows(self, t: &Type) -> bool {
        use Type as T;
        if matches!(t, T::Dyn | T::TypeParam(_) | T::Error) {
            return true;
        }
        match self {
            Clause::String => string_clause_allows(t),
            Clause::Decimal | Clause::Fixed(_) | Clause::Scientific(_) => {
                matches!(t, T::Int | T::Uint | T::Double)
            }
            Clause::Binary => matches!(t, T::Int | T::Uint | T::Bool),
            Clause::Hex { .. } => matches!(t, T::Int | T::Uint | T::String | T::Bytes),
            Clause::Octal => matches!(t, T::Int | T::Uint),
        }
    }
}

/// The static types `%s` accepts (besides `dyn`).
pub fn string_clause_allows(t: &Type) -> bool {
    use Type as T;
    matches!(
        t,
        T::Dyn
            | T::TypeParam(_)
            | T::Error
            | T::List(_)
            | T::Map(..)
            | T::Int
            | T::Uint
            | T::Double
            | T::Bool
            | T::String
            | T::Timestamp
            | T::Bytes
            | T::Duration
            | T::Type(_)
            | T::Null
    )
}

/// Parses the clause at the start of `rest` (the bytes after a `%`, at least one): the clause
/// and how many bytes it takes, or the reason, worded as cel-go's `parseFormattingClauseV2`
/// (to be prefixed with `could not parse formatting clause: `).
pub fn parse_clause(rest: &[u8]) -> Result<(Clause, usize), String> {
    let mut i = 0;
    let mut precision = DEFAULT_PRECISION;
    if rest.first() == Some(&b'.') {
        i = 1;
        while rest.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i >= rest.len() {
            return Err(
                "error while parsing precision: could not find end of precision specifier".into(),
            );
        }
        // The digits are ASCII: a valid string.
        let digits = std::str::from_utf8(&rest[1..i]).unwrap_or_default();
        let n: i64 = digits.parse().map_err(|_| {
            let why = if digits.is_empty() {
                "invalid syntax"
            } else {
                "value out of range"
            };
            format!(
                "error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing {}: {why}",
                go_quote(digits)
            )
        })?;
        if n > MAX_PRECISION as i64 {
            return Err(format!(
                "error while parsing precision: precision {n} exceeds maximum allowed precision {MAX_PRECISION}"
            ));
        }
        precision = n as usize;
    }
    // Go reads the verb as one byte (a rune of that value when it is not ASCII).
    let Some(&verb) = rest.get(i) else {
        return Err(
            "error while parsing precision: could not find end of precision specifier".into(),
        );
    };
    let clause = match verb {
        b's' => Clause::String,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision),
        b'e' => Clause::Scientific(precision),
        b'b' => Clause::Binary,
        b'x' => Clause::Hex { upper: false },
        b'X' => Clause::Hex { upper: true },
        b'o' => Clause::Octal,
        other => {
            return Err(format!(
                "unrecognized formatting clause \"{}\"",
                char::from(other)
            ))
        }
    };
    Ok((clause, i + 1))
}

/// `f.format(args)`.
pub fn format(f: &str, args: &[Value]) -> Result<String, EvalError> {
    let b = f.as_bytes();
    let mut out = String::with_capacity(f.len());
    let (mut i, mut literal, mut next) = (0, 0, 0);
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        // `%` is ASCII: `i` and `literal` are character boundaries.
        out.push_str(&f[literal..i]);
        if b.get(i + 1) == Some(&b'%') {
            out.push('%');
            i += 2;
            literal = i;
            continue;
        }
        // cel-go fetches the argument before it looks for the clause.
        let Some(arg) = args.get(next) else {
            return Err(EvalError::new(format!("index {next} out of range")));
        };
        if i + 1 >= b.len() {
            return Err(EvalError::new("unexpected end of string"));
        }
        let (clause, len) = parse_clause(&b[i + 1..])
            .map_err(|m| EvalError::new(format!("could not parse formatting clause: {m}")))?;
        format_arg(clause, arg, &mut out)
            .map_err(|m| EvalError::new(format!("error during formatting: {m}")))?;
        i += 1 + len;
        literal = i;
        next += 1;
    }
    out.push_str(&f[literal..]);
    Ok(out)
}

/// Appends `arg` formatted by `clause`, or says why it cannot be.
fn format_arg(clause: Clause, arg: &Value, out: &mut String) -> Result<(), String> {
    let bad = || clause.error(&arg.type_name());
    match clause {
        Clause::String => string_clause(arg, out)?,
        Clause::Decimal => match arg {
            Value::Int(i) => write_display(out, i),
            Value::Uint(u) => write_display(out, u),
            Value::Double(d) => out.push_str(&double_shortest(*d)),
            _ => return Err(bad()),
        },
        Clause::Fixed(p) | Clause::Scientific(p) => {
            let d = match arg {
                Value::Int(i) => *i as f64,
                Value::Uint(u) => *u as f64,
                Value::Double(d) => *d,
                _ => return Err(bad()),
            };
            out.push_str(&match non_finite(d) {
                Some(s) => s.to_string(),
                None if matches!(clause, Clause::Fixed(_)) => go_float_fixed(d, p),
                None => go_float_exp(d, p),
            });
        }
        Clause::Binary => match arg {
            Value::Bool(b) => out.push(if *b { '1' } else { '0' }),
            Value::Int(i) => {
                if *i < 0 {
                    out.push('-');
                }
                let _ = write!(out, "{:b}", i.unsigned_abs());
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:b}");
            }
            _ => return Err(bad()),
        },
        Clause::Hex { upper } => {
            let start = out.len();
            match arg {
                Value::Int(i) => {
                    if *i < 0 {
                        out.push('-');
                    }
                    let _ = write!(out, "{:x}", i.unsigned_abs());
                }
                Value::Uint(u) => {
                    let _ = write!(out, "{u:x}");
                }
                Value::String(s) => hex_bytes(s.as_bytes(), out),
                Value::Bytes(b) => hex_bytes(b, out),
                _ => return Err(bad()),
            }
            if upper {
                out[start..].make_ascii_uppercase();
            }
        }
        Clause::Octal => match arg {
            Value::Int(i) => {
                if *i < 0 {
                    out.push('-');
                }
                let _ = write!(out, "{:o}", i.unsigned_abs());
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:o}");
            }
            _ => return Err(bad()),
        },
    }
    Ok(())
}

fn write_display(out: &mut String, v: impl std::fmt::Display) {
    let _ = write!(out, "{v}");
}

fn hex_bytes(b: &[u8], out: &mut String) {
    out.reserve(b.len() * 2);
    for byte in b {
        let _ = write!(out, "{byte:02x}");
    }
}

/// How cel-go writes a double that is not finite.
fn non_finite(d: f64) -> Option<&'static str> {
    if d.is_nan() {
        Some("NaN")
    } else if d.is_infinite() {
        Some(if d > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        None
    }
}

/// A double as `%s` and `%d` write it: `strconv.FormatFloat(d, 'f', -1, 64)`.
fn double_shortest(d: f64) -> String {
    match non_finite(d) {
        Some(s) => s.to_string(),
        None => go_float_fixed_shortest(d),
    }
}

/// A duration as `%s` writes it: Go's `Duration.Seconds()` (whole seconds plus the
/// nanoseconds over 1e9, in float64) with `s`.
fn duration_seconds(d: TimeDelta) -> String {
    let nanos = d.num_nanoseconds().unwrap_or(0);
    let secs = (nanos / 1_000_000_000) as f64 + (nanos % 1_000_000_000) as f64 / 1e9;
    format!("{}s", go_float_fixed_shortest(secs))
}

/// `%s` (cel-go's `appendingFormatterV2.format`): scalars in their plain text, lists and maps
/// with their elements formatted the same way (nothing quoted), map entries ordered by their
/// formatted keys (bytewise, stable).
fn string_clause(v: &Value, out: &mut String) -> Result<(), String> {
    stacker::maybe_grow(crate::parser::RED_ZONE, crate::parser::STACK_CHUNK, || {
        match v {
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => write_display(out, i),
            Value::Uint(u) => write_display(out, u),
            Value::Double(d) => out.push_str(&double_shortest(*d)),
            Value::Bytes(b) => push_bytes_as_go_string(b, out),
            Value::String(s) => out.push_str(s),
            Value::Duration(d) => out.push_str(&duration_seconds(*d)),
            Value::Timestamp(t) => out.push_str(&format_timestamp(*t)),
            Value::Null => out.push_str("null"),
            Value::Type(t) => out.push_str(t),
            Value::List(l) => {
                out.push('[');
                for (i, x) in l.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    string_clause(x, out)?;
                }
                out.push(']');
            }
            Value::Map(m) => {
                let mut entries = Vec::with_capacity(m.len());
                for (k, x) in m.entries.values() {
                    let mut key = String::new();
                    string_clause(k, &mut key)?;
                    let mut val = String::new();
                    string_clause(x, &mut val)?;
                    entries.push((key, val));
                }
                entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                out.push('{');
                for (i, (k, x)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    out.push_str(x);
                }
                out.push('}');
            }
            _ => return Err(Clause::String.error(&v.type_name())),
        }
        Ok(())
    })
}

/// Bytes appended to a Go string as they are: valid UTF-8 unchanged, and each byte of an
/// invalid sequence read back as U+FFFD, as Go decodes (and `size()` counts) such a string.
fn push_bytes_as_go_string(b: &[u8], out: &mut String) {
    for chunk in b.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push('\u{fffd}');
        }
    }
}

/// CEL's `string(timestamp)`: RFC 3339 in UTC, fractional seconds without trailing zeros.
pub fn format_timestamp(t: DateTime<Utc>) -> String {
    let nanos = t.timestamp_subsec_nanos();
    let base = t.format("%Y-%m-%dT%H:%M:%S").to_string();
    if nanos == 0 {
        format!("{base}Z")
    } else {
        let frac = format!("{nanos:09}");
        format!("{base}.{}Z", frac.trim_end_matches('0'))
    }
}

/// CEL's `string(duration)`: seconds with the fraction trimmed (`1.5s`, `-0.000000001s`).
pub fn format_duration(d: TimeDelta) -> String {
    let secs = d.num_seconds();
    let nanos = (d - TimeDelta::seconds(secs))
        .num_nanoseconds()
        .unwrap_or(0);
    if nanos == 0 {
        return format!("{secs}s");
    }
    let sign = if secs < 0 || nanos < 0 { "-" } else { "" };
    let frac = format!("{:09}", nanos.abs());
    format!("{sign}{}.{}s", secs.abs(), frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_parse_as_cel_go_reads_them() {
        assert_eq!(parse_clause(b"s"), Ok((Clause::String, 1)));
        assert_eq!(parse_clause(b".3f rest"), Ok((Clause::Fixed(3), 3)));
        assert_eq!(parse_clause(b"e"), Ok((Clause::Scientific(6), 1)));
        assert_eq!(parse_clause(b".100e"), Ok((Clause::Scientific(100), 5)));
        assert_eq!(parse_clause(b".0X"), Ok((Clause::Hex { upper: true }, 3)));
        // A precision is read before any clause, even one that ignores it.
        assert_eq!(parse_clause(b".2d"), Ok((Clause::Decimal, 3)));
        assert_eq!(
            parse_clause(b".101f"),
            Err("error while parsing precision: precision 101 exceeds maximum allowed precision 100".into())
        );
        assert_eq!(
            parse_clause(b".f"),
            Err("error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax".into())
        );
        assert_eq!(
            parse_clause(b".99999999999999999999f"),
            Err("error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"99999999999999999999\": value out of range".into())
        );
        assert_eq!(
            parse_clause(b".12"),
            Err("error while parsing precision: could not find end of precision specifier".into())
        );
        assert_eq!(
            parse_clause(b"E"),
            Err("unrecognized formatting clause \"E\"".into())
        );
        // The first byte of a multi-byte character, as Go's rune(formatStr[i]).
        assert_eq!(
            parse_clause("é".as_bytes()),
            Err("unrecognized formatting clause \"Ã\"".into())
        );
    }
}
