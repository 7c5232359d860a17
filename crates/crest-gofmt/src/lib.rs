//! Go's text forms of values, as they appear in kube-apiserver and cel-go messages and
//! results: `strconv.Quote` (`%q`) of strings and byte slices, `%v`, `%e` and `%f` of a
//! float64, `%T` and `%v` of decoded JSON, and the JSON that `encoding/json` and json-iterator
//! write; and Go's `strconv.Atoi`, base64 and JSON checks and `time.ParseDuration`, whose
//! errors clients see. One copy, shared by the CEL engine (which must know nothing of
//! Kubernetes) and the Kubernetes crates.

use serde_json::{Number, Value};
use std::fmt::Write;

mod decode;
mod duration;
mod isprint;
mod json;

pub use decode::{
    base64_error, go_base64_decode, go_base64_decode_raw_url, go_json_map_error,
    go_json_syntax_error,
};
pub use duration::go_parse_duration;
pub use json::{go_json, go_jsoniter, go_marshal_raw, write_go_jsoniter, write_go_jsoniter_string};

/// Go's `%v` (`strconv.FormatFloat(f, 'g', -1, 64)`): shortest digits, exponent form when the
/// decimal exponent is < -4 or >= 6 (Go's precision for that decision with shortest digits).
pub fn go_float(f: f64) -> String {
    let (mut s, digits, exp) = match signed_shortest(f) {
        Ok(parts) => parts,
        Err(text) => return special(f).map_or(text, str::to_string),
    };
    if !(-4..6).contains(&exp) {
        exponent_form(&mut s, &digits, exp, 2);
    } else {
        fixed(&mut s, &digits, exp);
    }
    s
}

/// `d.ddde±XX`: the shortest digits with one before the point, the exponent at least `width`
/// digits (`%v` pads it to two, `encoding/json` does not).
fn exponent_form(s: &mut String, digits: &str, exp: i32, width: usize) {
    s.push_str(&digits[..1]);
    if digits.len() > 1 {
        s.push('.');
        s.push_str(&digits[1..]);
    }
    s.push('e');
    s.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(s, "{:0width$}", exp.abs());
}

/// The start of a finite, non-zero float's text (its sign) with its shortest digits and decimal
/// exponent; `Err` with the whole text for ±0 (`0`, `-0`), and for NaN and ±Inf (which callers
/// print their own way).
fn signed_shortest(f: f64) -> Result<(String, String, i32), String> {
    if !f.is_finite() {
        return Err(String::new());
    }
    if f == 0.0 {
        return Err(if f.is_sign_negative() { "-0" } else { "0" }.to_string());
    }
    let (neg, digits, exp) = shortest(f);
    Ok((if neg { "-".into() } else { String::new() }, digits, exp))
}

/// Go's `encoding/json` form of a float64: `'f'` format unless the magnitude is < 1e-6 or
/// >= 1e21, then `'e'` with a short exponent (`1e-7`, `1e+21`).
pub fn go_json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    let (mut s, digits, exp) = match signed_shortest(f) {
        Ok(parts) => parts,
        Err(text) => return text,
    };
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        exponent_form(&mut s, &digits, exp, 1);
    } else {
        fixed(&mut s, &digits, exp);
    }
    s
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)`: the shortest digits that read back as `f`,
/// never with an exponent (`1e21` is `1000000000000000000000`, `2e-9` is `0.000000002`).
pub fn go_float_fixed_shortest(f: f64) -> String {
    let (mut s, digits, exp) = match signed_shortest(f) {
        Ok(parts) => parts,
        Err(text) => return special(f).map_or(text, str::to_string),
    };
    fixed(&mut s, &digits, exp);
    s
}

/// Go's `%.Nf` (`strconv.FormatFloat(f, 'f', N, 64)`): exactly rounded, ties to even.
pub fn go_float_fixed(f: f64, precision: usize) -> String {
    if let Some(s) = special(f) {
        return s.to_string();
    }
    format!("{f:.precision$}")
}

/// Go's `%.Ne` (`strconv.FormatFloat(f, 'e', N, 64)`): `d.ddde+XX`, the exponent signed and of
/// at least two digits.
pub fn go_float_exp(f: f64, precision: usize) -> String {
    if let Some(s) = special(f) {
        return s.to_string();
    }
    let sci = format!("{:.precision$e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{mant}e{esign}{:02}", exp.unsigned_abs())
}

/// What Go's float formatting prints for NaN and the infinities.
fn special(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" })
    } else {
        None
    }
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

/// Go's `strconv.Atoi`: an optional sign, then ASCII decimal digits, within int64 (no spaces,
/// underscores or base prefixes).
pub fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
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

/// Go's `strconv.Quote` (and `fmt`'s `%q` of a string).
pub fn go_quote(s: &str) -> String {
    go_quote_bytes(s.as_bytes())
}

/// Go's `strconv.Quote(string(b))`, which is also `fmt`'s `%q` of a `[]byte`: printable
/// characters (`unicode.IsPrint`) as they are, `\a \b \f \n \r \t \v \\ \"` escaped, other
/// ASCII controls and DEL as `\xNN`, other non-printable characters as `\uNNNN` or
/// `\UNNNNNNNN`, and every byte that is not part of valid UTF-8 as `\xNN` (Go decodes one
/// byte at a time there).
pub fn go_quote_bytes(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 2);
    out.push('"');
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_escaped(&mut out, c);
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        c if is_print(c) => out.push(c),
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
        c if (c as u32) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\U{:08x}", c as u32);
        }
    }
}

/// Go's `unicode.IsPrint` (= `strconv.IsPrint`) as of Unicode 15.0.0 (Go 1.21 to 1.23): letters,
/// marks, numbers, punctuation, symbols and the ASCII space.
pub fn is_print(c: char) -> bool {
    let c = c as u32;
    if c < 0x80 {
        return (0x20..0x7f).contains(&c);
    }
    isprint::PRINT
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Go's `%v` (and `%+v`) of a decoded JSON value (`map[string]interface{}` with int64s
/// preserved, as Kubernetes decodes a patch): `map[k:v ...]` with sorted keys, `[a b]`, strings
/// bare, `<nil>`.
pub fn go_v(v: &Value) -> String {
    let mut out = String::new();
    write_v(v, &mut out);
    out
}

fn write_v(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push_str("map[");
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(&m[k.as_str()], out);
            }
            out.push(']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_v_of_decoded_json() {
        let v = serde_json::json!({"data": {"b": [1, 2.5, "x", null, true]}, "a": {}, "n": 1e21});
        assert_eq!(
            go_v(&v),
            "map[a:map[] data:map[b:[1 2.5 x <nil> true]] n:1e+21]"
        );
    }
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

    #[test]
    fn quote_like_strconv_quote() {
        let cases: &[(&str, &str)] = &[
            ("", r#""""#),
            ("plain", r#""plain""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("\x07\x08\x0c\n\r\t\x0b", r#""\a\b\f\n\r\t\v""#),
            ("\0\x01\x1f\x7f", r#""\x00\x01\x1f\x7f""#),
            // Latin-1 controls and the no-break space are not printable; é is.
            ("\u{80}\u{9f}\u{a0}é", r#""\u0080\u009f\u00a0é""#),
            ("\u{ad}", r#""\u00ad""#),
            // Zero-width, bidi and other format characters, separators.
            (
                "\u{200b}\u{200d}\u{200e}\u{2028}\u{2029}\u{202e}",
                r#""\u200b\u200d\u200e\u2028\u2029\u202e""#,
            ),
            (
                "\u{2060}\u{feff}\u{3000}\u{1680}",
                r#""\u2060\ufeff\u3000\u1680""#,
            ),
            // Private use, unassigned, noncharacters, supplementary planes.
            (
                "\u{e000}\u{f8ff}\u{fffe}\u{ffff}\u{378}",
                r#""\ue000\uf8ff\ufffe\uffff\u0378""#,
            ),
            (
                "\u{10ffff}\u{e0001}\u{f0000}",
                r#""\U0010ffff\U000e0001\U000f0000""#,
            ),
            ("😀𝔸日本語\u{fffd}", "\"😀𝔸日本語\u{fffd}\""),
            // Unicode 15.0 additions are printable (Kawi, CJK extension H).
            ("\u{11f00}\u{31350}", "\"\u{11f00}\u{31350}\""),
            ("combining e\u{301}", "\"combining e\u{301}\""),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote(input), *want, "{input:?}");
        }
    }

    /// `strconv.Quote` (= `%q` of the string and of its bytes), as Go 1.26 printed it: the
    /// escapes Go has and Rust's `{:?}` or an ASCII-only rule lack (`\a \b \v \f`,
    /// `\u00a0`, `\U0010ffff`, format and separator characters, invalid UTF-8 byte by byte).
    #[test]
    fn quote_matches_go() {
        let cases: &[(&[u8], &str)] = &[
            (b"", r##""""##),
            (b"\x70\x6c\x61\x69\x6e", r##""plain""##),
            (b"\x61\x22\x62", r##""a\"b""##),
            (b"\x61\x5c\x62", r##""a\\b""##),
            (b"\x27\x73\x69\x6e\x67\x6c\x65\x27", r##""'single'""##),
            (b"\x60\x62\x61\x63\x6b\x60", r##""`back`""##),
            (b"\x0a\x0d\x09", r##""\n\r\t""##),
            (b"\x00", r##""\x00""##),
            (b"\x07\x08\x0b\x0c", r##""\a\b\v\f""##),
            (b"\x1b\x5b\x30\x6d", r##""\x1b[0m""##),
            (b"\x7f", r##""\x7f""##),
            (b"\x78\x7f\x79", r##""x\x7fy""##),
            (b"\xc3\xa9", r##""é""##),
            (b"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", r##""日本語""##),
            (b"\xf0\x9f\x98\x80", r##""😀""##),
            (b"\xf4\x8f\xbf\xbf", r##""\U0010ffff""##),
            (b"\xee\x80\x80", r##""\ue000""##),
            (b"\xc2\xa0", r##""\u00a0""##),
            (b"\xc2\xad", r##""\u00ad""##),
            (b"\xc2\x85", r##""\u0085""##),
            (b"\xc2\x80\xc2\x9f", r##""\u0080\u009f""##),
            (b"\xe2\x80\xa8", r##""\u2028""##),
            (b"\xe2\x80\xa9", r##""\u2029""##),
            (b"\xe2\x80\x8b", r##""\u200b""##),
            (b"\xe2\x80\x8e", r##""\u200e""##),
            (b"\xe2\x80\xae", r##""\u202e""##),
            (b"\xef\xbb\xbf", r##""\ufeff""##),
            (b"\xe3\x80\x80", r##""\u3000""##),
            (b"\xef\xbf\xbd", r##""�""##),
            (b"\xcd\xb8", r##""\u0378""##),
            (b"\xf3\xa0\x80\x81", r##""\U000e0001""##),
            (b"\x65\xcc\x81", r##""é""##),
            (b"\x73\x79\x73\x74\x65\x6d\x3a\x73\x65\x72\x76\x69\x63\x65\x61\x63\x63\x6f\x75\x6e\x74\x3a\x6e\x73\x3a\x6e\x61\x6d\x65", r##""system:serviceaccount:ns:name""##),
            (b"\x3c\x73\x63\x72\x69\x70\x74\x3e\x26", r##""<script>&""##),
            (b"\xff", r##""\xff""##),
            (b"\x61\xc3\x28\x62", r##""a\xc3(b""##),
            (b"\xed\xa0\x80", r##""\xed\xa0\x80""##),
            (b"\xf0\x9f\x98", r##""\xf0\x9f\x98""##),
            (b"\xc0\xaf", r##""\xc0\xaf""##),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote_bytes(input), *want, "{input:x?}");
            if let Ok(s) = std::str::from_utf8(input) {
                assert_eq!(go_quote(s), *want, "{s:?}");
            }
        }
    }

    /// `strconv.Atoi`, as Go 1.26 answered.
    #[test]
    fn atoi_matches_go() {
        let cases: &[(&str, Option<i64>)] = &[
            ("0", Some(0)),
            ("42", Some(42)),
            ("+7", Some(7)),
            ("-0", Some(0)),
            ("-12", Some(-12)),
            ("007", Some(7)),
            ("", None),
            ("+", None),
            ("-", None),
            (" 1", None),
            ("1 ", None),
            ("1_000", None),
            ("0x10", None),
            ("1e3", None),
            ("١", None),
            ("9223372036854775807", Some(9223372036854775807)),
            ("-9223372036854775808", Some(-9223372036854775808)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("99999999999999999999", None),
        ];
        for (input, want) in cases {
            assert_eq!(go_atoi(input), *want, "{input:?}");
        }
    }

    #[test]
    fn quote_bytes_escapes_each_invalid_byte() {
        assert_eq!(go_quote_bytes(b"ab\xffc"), r#""ab\xffc""#);
        // A truncated sequence, a surrogate's encoding and an overlong form: one escape a byte.
        assert_eq!(go_quote_bytes(b"\xf0\x9f\x98"), r#""\xf0\x9f\x98""#);
        assert_eq!(go_quote_bytes(b"\xed\xa0\x80"), r#""\xed\xa0\x80""#);
        assert_eq!(go_quote_bytes(b"\xc0\xaf"), r#""\xc0\xaf""#);
        assert_eq!(go_quote_bytes(b"\xe2\x82\xac\x80"), "\"€\\x80\"");
        assert_eq!(go_quote_bytes("\u{a0}".as_bytes()), r#""\u00a0""#);
    }

    #[test]
    fn is_print_matches_go_at_the_edges() {
        for c in [
            ' ',
            '~',
            '\u{a1}',
            '\u{377}',
            '\u{ffee}',
            '\u{1f600}',
            '\u{e0100}',
        ] {
            assert!(is_print(c), "{c:?}");
        }
        for c in [
            '\u{1f}',
            '\u{7f}',
            '\u{a0}',
            '\u{ad}',
            '\u{61c}',
            '\u{fff9}',
            '\u{e0000}',
        ] {
            assert!(!is_print(c), "{c:?}");
        }
    }

    #[test]
    fn float_forms_like_go() {
        assert_eq!(go_float_fixed_shortest(2.71825), "2.71825");
        assert_eq!(go_float_fixed_shortest(2e-9), "0.000000002");
        assert_eq!(go_float_fixed_shortest(1e21), "1000000000000000000000");
        assert_eq!(go_float_fixed_shortest(-0.0), "-0");
        assert_eq!(go_float_fixed_shortest(123456789.125), "123456789.125");
        assert_eq!(go_float_fixed_shortest(f64::MIN_POSITIVE).len(), 326);
        assert_eq!(go_float_fixed(1.2345, 3), "1.234");
        assert_eq!(go_float_fixed(2.5, 0), "2");
        assert_eq!(go_float_fixed(0.125, 2), "0.12");
        assert_eq!(go_float_fixed(-0.0004, 3), "-0.000");
        assert_eq!(go_float_fixed(1.0, 0), "1");
        assert_eq!(go_float_exp(1052.032911275, 6), "1.052033e+03");
        assert_eq!(go_float_exp(1052.0, 0), "1e+03");
        assert_eq!(go_float_exp(0.0, 2), "0.00e+00");
        assert_eq!(go_float_exp(-0.0, 1), "-0.0e+00");
        assert_eq!(go_float_exp(1e300, 3), "1.000e+300");
        assert_eq!(go_float_exp(-1.5e-7, 1), "-1.5e-07");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(123456.0), "123456");
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let want = go_float(f);
            assert_eq!(go_float_fixed(f, 2), want);
            assert_eq!(go_float_exp(f, 2), want);
            assert_eq!(go_float_fixed_shortest(f), want);
        }
    }
}
