//! JSON text as Go's encoders write it (compact, map keys sorted, `<`, `>`, `&`, U+2028 and
//! U+2029 escaped, floats as `strconv.FormatFloat(f, 'g'-like)` of encoding/json).

use serde_json::Value;
use std::fmt::Write as _;

/// `s` as a quoted JSON string, escaped as Go's encoder escapes it.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_float(out: &mut String, f: f64) {
    let abs = f.abs();
    if f == f.trunc() && abs < 1e21 {
        let _ = write!(out, "{f:.0}");
    } else if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Go: exponent form with at least two exponent digits (1e-07).
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                let _ = write!(out, "{m}e{sign}{digits:0>2}");
            }
            None => out.push_str(&s),
        }
    } else {
        let _ = write!(out, "{f}");
    }
}

/// `v` as Go's encoder writes it.
pub(crate) fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                let _ = write!(out, "{n}");
            } else {
                write_float(out, n.as_f64().unwrap_or(0.0));
            }
        }
        Value::String(s) => write_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, x);
            }
            out.push('}');
        }
    }
}

/// `v` as Go's encoder writes it.
pub(crate) fn to_string(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_forms() {
        assert_eq!(
            to_string(&json!({"b": [1, 1.5, 1e-7, 1e21], "a": "<&>"})),
            r#"{"a":"\u003c\u0026\u003e","b":[1,1.5,1e-07,1e+21]}"#
        );
        assert_eq!(to_string(&json!(2.0)), "2");
    }
}
