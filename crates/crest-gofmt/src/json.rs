//! JSON text as Go's two encoders in Kubernetes write it: `encoding/json.Marshal`, and
//! json-iterator's `ConfigCompatibleWithStandardLibrary`, which structured-merge-diff uses for
//! the keys of managedFields' FieldsV1. Both write compact JSON with map keys sorted and `<`,
//! `>`, `&`, U+2028 and U+2029 escaped; they differ in two details, which [`Encoder`] holds.

use serde_json::Value;
use std::fmt::Write;

use crate::{exponent_form, go_float_fixed_shortest, go_json_float};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoder {
    /// `encoding/json` (Go 1.22 and later: `\b` and `\f`; floats' exponents as `e-7`); numbers
    /// as Kubernetes decodes them (int64, else float64).
    Std,
    /// json-iterator: `\u0008` and `\u000c`, exponents of at least two digits (`1e-07`), as
    /// `strconv.AppendFloat(f, 'e', -1, 64)` writes them; integers that fit a uint64 as written.
    Jsoniter,
}

/// Go's `encoding/json.Marshal` of a decoded JSON value: sorted keys, Go float form, HTML-safe
/// escaping of `<`, `>`, `&`.
pub fn go_json(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v, Encoder::Std);
    s
}

/// `v` as json-iterator (`ConfigCompatibleWithStandardLibrary`) writes it: what
/// structured-merge-diff writes for a value in a FieldsV1 key (`v:<value>`, `k:{..}`).
pub fn go_jsoniter(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v, Encoder::Jsoniter);
    s
}

/// [`go_jsoniter`], appended to `out`.
pub fn write_go_jsoniter(out: &mut String, v: &Value) {
    write_value(out, v, Encoder::Jsoniter);
}

/// `s` as a quoted JSON string, escaped as json-iterator escapes it.
pub fn write_go_jsoniter_string(out: &mut String, s: &str) {
    write_string(out, s, Encoder::Jsoniter);
}

/// The text `encoding/json.Marshal` writes for a `json.RawMessage` holding `raw` (valid JSON):
/// `raw` compacted (whitespace between tokens dropped) with `<`, `>`, `&`, U+2028 and U+2029
/// escaped (`\u003c`, ...), everything else, number forms and other escapes included, as it
/// was. This is what evanphx/json-patch's deep copy of a patch's value measures and keeps.
pub fn go_marshal_raw(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in raw.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            _ => out.push(c),
        }
    }
    out
}

fn write_value(out: &mut String, v: &Value, enc: Encoder) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let (Encoder::Jsoniter, Some(u)) = (enc, n.as_u64()) {
                let _ = write!(out, "{u}");
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                match enc {
                    Encoder::Std => out.push_str(&go_json_float(f)),
                    Encoder::Jsoniter => write_jsoniter_float(out, f),
                }
            }
        }
        Value::String(s) => write_string(out, s, enc),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, x, enc);
            }
            out.push(']');
        }
        Value::Object(m) => {
            // serde_json's map is ordered by key, which is what Go's encoders do.
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k, enc);
                out.push(':');
                write_value(out, x, enc);
            }
            out.push('}');
        }
    }
}

/// json-iterator's `WriteFloat64`: `strconv.AppendFloat(f, 'f', -1, 64)`, or `'e'` when the
/// magnitude is < 1e-6 or >= 1e21 (the exponent of at least two digits, as Go's `'e'` writes
/// it, not cleaned to one digit as encoding/json does).
fn write_jsoniter_float(out: &mut String, f: f64) {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (neg, digits, exp) = crate::shortest(f);
        if neg {
            out.push('-');
        }
        exponent_form(out, &digits, exp, 2);
    } else {
        out.push_str(&go_float_fixed_shortest(f));
    }
}

fn write_string(out: &mut String, s: &str, enc: Encoder) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' if enc == Encoder::Std => "\\b",
            '\u{c}' if enc == Encoder::Std => "\\f",
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => "",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push_str(escape);
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encoding_json() {
        assert_eq!(
            go_json(&json!({"b": [1.0, "<"], "a": null})),
            r#"{"a":null,"b":[1,"\u003c"]}"#
        );
        // Go 1.26's json.Marshal of the same string.
        assert_eq!(
            go_json(&json!(
                "a\u{8}\u{c}\u{1}<>&\u{2028}\u{2029}\"\\\n\r\t\u{7f}é"
            )),
            concat!(
                r#""a\b\f\u0001\u003c\u003e\u0026\u2028\u2029\"\\\n\r\t"#,
                "\u{7f}é\""
            )
        );
        // json.Marshal(float64): what Go 1.26 printed.
        for (f, want) in [
            (1e-7, "1e-7"),
            (-2.5e-9, "-2.5e-9"),
            (1e21, "1e+21"),
            (1e-6, "0.000001"),
            (2f64.powi(60), "1152921504606847000"),
        ] {
            assert_eq!(go_json(&json!(f)), want, "{f}");
        }
    }

    #[test]
    fn marshal_raw_message() {
        // json.Marshal(json.RawMessage(...)) in Go 1.23.
        assert_eq!(
            go_marshal_raw("{ \"a<\" : [1.0, \"x &\\\" y\"],\n\t\"b\": 1e2 }"),
            r#"{"a\u003c":[1.0,"x \u0026\" y"],"b":1e2}"#
        );
        assert_eq!(go_marshal_raw("\"\u{2028}\\u0041\""), r#""\u2028\u0041""#);
    }

    #[test]
    fn json_iterator() {
        assert_eq!(
            go_jsoniter(&json!({"b": [1, 1.5, 1e-7, 1e21], "a": "<&>"})),
            r#"{"a":"\u003c\u0026\u003e","b":[1,1.5,1e-07,1e+21]}"#
        );
        assert_eq!(go_jsoniter(&json!(2.0)), "2");
        assert_eq!(go_jsoniter(&json!(u64::MAX)), "18446744073709551615");
        let mut s = String::new();
        write_go_jsoniter_string(&mut s, "a\u{8}\u{c}\u{1f}\u{2028}é\"");
        assert_eq!(s, r#""a\u0008\u000c\u001f\u2028é\"""#);
        // strconv.AppendFloat(f, 'f' or 'e', -1, 64) as json-iterator calls it, from Go 1.26.
        for (f, want) in [
            (1.5, "1.5"),
            (-0.5, "-0.5"),
            (1e-7, "1e-07"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (123456789.125, "123456789.125"),
            (2f64.powi(60), "1152921504606847000"),
            (1e20, "100000000000000000000"),
            (-2.5e-9, "-2.5e-09"),
            (0.1, "0.1"),
        ] {
            assert_eq!(go_jsoniter(&json!(f)), want, "{f}");
        }
    }
}
