//! Go's text forms of values, as they appear in kube-apiserver messages: `%v` of a float64,
//! `%q` of a string, and `encoding/json` output.

use serde_json::{Number, Value};
use std::fmt::Write;

/// Go's `%v` (`strconv.FormatFloat(f, 'g', -1, 64)`): shortest digits, exponent form when the
/// decimal exponent is < -4 or >= 6 (Go's precision for that decision with shortest digits).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (neg, digits, exp) = shortest(f);
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if !(-4..6).contains(&exp) {
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(s, "{:02}", exp.abs());
    } else {
        fixed(&mut s, &digits, exp);
    }
    s
}

/// Go's `encoding/json` form of a float64: `'f'` format unless the magnitude is < 1e-6 or
/// >= 1e21, then `'e'` with a short exponent (`1e-7`, `1e+21`).
pub fn go_json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (neg, digits, exp) = shortest(f);
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(s, "{}", exp.abs());
    } else {
        fixed(&mut s, &digits, exp);
    }
    s
}

/// Shortest round-trip decimal digits and the decimal exponent of the first digit.
fn shortest(f: f64) -> (bool, String, i32) {
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (f < 0.0, digits.to_string(), exp.parse().unwrap_or(0))
}

fn fixed(s: &mut String, digits: &str, exp: i32) {
    if exp < 0 {
        s.push_str("0.");
        for _ in 0..(-exp - 1) {
            s.push('0');
        }
        s.push_str(digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            s.push_str(digits);
            for _ in digits.len()..int_len {
                s.push('0');
            }
        } else {
            s.push_str(&digits[..int_len]);
            s.push('.');
            s.push_str(&digits[int_len..]);
        }
    }
}

/// Go's `%v` of a JSON number as Kubernetes decodes it (int64, else float64).
pub fn go_number(n: &Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => go_float(n.as_f64().unwrap_or(0.0)),
    }
}

/// The JSON kind `encoding/json` names in `json: cannot unmarshal KIND into Go ...`
/// (`UnmarshalTypeError.Value`).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `%T` of a JSON value decoded into `interface{}` (numbers as Kubernetes decodes them:
/// int64, else float64).
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0B' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint` good enough for messages: control and
/// formatting characters and non-ASCII spaces are escaped.
fn is_go_printable(c: char) -> bool {
    if c.is_control() {
        return false;
    }
    if c != ' ' && c.is_whitespace() {
        return false;
    }
    !matches!(c as u32, 0xAD | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF)
}

/// Go's `encoding/json.Marshal` of a decoded JSON value: sorted keys, Go float form, HTML-safe
/// escaping of `<`, `>`, `&`.
pub fn go_json(v: &Value) -> String {
    let mut s = String::new();
    write_go_json(&mut s, v);
    s
}

fn write_go_json(s: &mut String, v: &Value) {
    match v {
        Value::Null => s.push_str("null"),
        Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => {
                let _ = write!(s, "{i}");
            }
            None => s.push_str(&go_json_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(t) => write_go_json_string(s, t),
        Value::Array(a) => {
            s.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                write_go_json(s, x);
            }
            s.push(']');
        }
        Value::Object(m) => {
            // serde_json's map is ordered by key, which is what Go's encoder does.
            s.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                write_go_json_string(s, k);
                s.push(':');
                write_go_json(s, x);
            }
            s.push('}');
        }
    }
}

fn write_go_json_string(s: &mut String, t: &str) {
    s.push('"');
    for c in t.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            // Go 1.22 and later (Kubernetes 1.32 is built with 1.23).
            '\u{8}' => s.push_str("\\b"),
            '\u{c}' => s.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_like_go() {
        assert_eq!(go_float(10.0), "10");
        assert_eq!(go_float(10.5), "10.5");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(100000.0), "100000");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5), "-2.5");
        assert_eq!(go_json_float(1e21), "1e+21");
        assert_eq!(go_json_float(1e-7), "1e-7");
        assert_eq!(go_json_float(1.0), "1");
        assert_eq!(
            go_json(&json!({"b": [1.0, "<"], "a": null})),
            r#"{"a":null,"b":[1,"\u003c"]}"#
        );
        assert_eq!(go_quote("a\"b\n"), r#""a\"b\n""#);
    }
}
