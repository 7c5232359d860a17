//! Go's decoders where their errors reach clients: `encoding/base64`'s standard encoding (how
//! `encoding/json` decodes a `[]byte` field) and `encoding/json`'s syntax check and top-level
//! type check of `json.Unmarshal` into a `map[string]interface{}`.

use std::fmt::Write as _;

/// `base64.CorruptInputError`'s text.
pub fn base64_error(offset: usize) -> String {
    format!("illegal base64 data at input byte {offset}")
}

/// Which of Go's base64 encodings: `StdEncoding` (`+/`, padded) or `RawURLEncoding` (`-_`,
/// unpadded).
#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Std,
    RawUrl,
}

fn base64_value(c: u8, enc: Encoding) -> Option<u8> {
    match (c, enc) {
        (b'A'..=b'Z', _) => Some(c - b'A'),
        (b'a'..=b'z', _) => Some(c - b'a' + 26),
        (b'0'..=b'9', _) => Some(c - b'0' + 52),
        (b'+', Encoding::Std) | (b'-', Encoding::RawUrl) => Some(62),
        (b'/', Encoding::Std) | (b'_', Encoding::RawUrl) => Some(63),
        _ => None,
    }
}

fn skip_newlines(src: &[u8], mut si: usize) -> usize {
    while si < src.len() && matches!(src[si], b'\n' | b'\r') {
        si += 1;
    }
    si
}

/// `base64.StdEncoding.DecodeString`: padded, `\r` and `\n` ignored anywhere, trailing bits not
/// checked; `Err(offset)` where Go's `CorruptInputError` points (see [`base64_error`]).
pub fn go_base64_decode(src: &[u8]) -> Result<Vec<u8>, usize> {
    decode_base64(src, Encoding::Std)
}

/// `base64.RawURLEncoding.DecodeString` (how kube-apiserver decodes a continue token): as
/// [`go_base64_decode`] with `-_` for `+/`, and a final quantum of two or three characters
/// instead of padding (an `=` is corrupt input).
pub fn go_base64_decode_raw_url(src: &[u8]) -> Result<Vec<u8>, usize> {
    decode_base64(src, Encoding::RawUrl)
}

fn decode_base64(src: &[u8], enc: Encoding) -> Result<Vec<u8>, usize> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
    let mut si = 0;
    // One quantum (four characters, or fewer before padding) per round, as `decodeQuantum`.
    loop {
        let mut quantum = [0u8; 4];
        let mut len = 4;
        let mut trailing = None;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                if j == 1 || enc == Encoding::Std {
                    return Err(si - j);
                }
                // Unpadded: the last quantum ends here.
                len = j;
                break;
            }
            let c = src[si];
            si += 1;
            if let Some(v) = base64_value(c, enc) {
                quantum[j] = v;
                j += 1;
                continue;
            }
            if matches!(c, b'\n' | b'\r') {
                continue;
            }
            if c != b'=' || j < 2 || enc == Encoding::RawUrl {
                return Err(si - 1);
            }
            if j == 2 {
                // "==" is expected; the first "=" was just read.
                si = skip_newlines(src, si);
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            si = skip_newlines(src, si);
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let v = u32::from(quantum[0]) << 18
            | u32::from(quantum[1]) << 12
            | u32::from(quantum[2]) << 6
            | u32::from(quantum[3]);
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..len - 1]);
        if let Some(at) = trailing {
            return Err(at);
        }
        if len < 4 {
            return Ok(out);
        }
    }
}

/// `quoteChar` of the JSON scanner: the byte as a Go rune, quoted with single quotes.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".into(),
        b'"' => "'\"'".into(),
        _ => {
            let q = crate::go_quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    Zero,
    One,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside `true`, `false` or `null`: the rest of the literal still expected.
    Literal(&'static [u8], &'static str),
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// encoding/json's scanner (`checkValid`): the first syntax error of `data`, worded as Go's.
fn check_valid(data: &[u8]) -> Result<(), String> {
    let mut stack: Vec<Parse> = vec![];
    let mut state = State::BeginValue;
    let err = |c: u8, ctx: &str| format!("invalid character {} {ctx}", quote_char(c));
    for &c in data {
        state = step(&mut stack, state, c).map_err(|ctx| err(c, &ctx))?;
    }
    if state == State::EndTop {
        return Ok(());
    }
    match step(&mut stack, state, b' ') {
        Ok(State::EndTop) => Ok(()),
        _ => Err("unexpected end of JSON input".into()),
    }
}

fn step(stack: &mut Vec<Parse>, state: State, c: u8) -> Result<State, String> {
    use State::*;
    Ok(match state {
        BeginValueOrEmpty if is_space(c) => BeginValueOrEmpty,
        BeginValueOrEmpty if c == b']' => return step(stack, EndValue, c),
        BeginValueOrEmpty => return step(stack, BeginValue, c),
        BeginValue => match c {
            c if is_space(c) => BeginValue,
            b'{' => {
                stack.push(Parse::ObjectKey);
                BeginStringOrEmpty
            }
            b'[' => {
                stack.push(Parse::ArrayValue);
                BeginValueOrEmpty
            }
            b'"' => InString,
            b'-' => Neg,
            b'0' => Zero,
            b'1'..=b'9' => One,
            b't' => Literal(b"rue", "true"),
            b'f' => Literal(b"alse", "false"),
            b'n' => Literal(b"ull", "null"),
            _ => return Err("looking for beginning of value".into()),
        },
        BeginStringOrEmpty if is_space(c) => BeginStringOrEmpty,
        BeginStringOrEmpty if c == b'}' => {
            if let Some(top) = stack.last_mut() {
                *top = Parse::ObjectValue;
            }
            return step(stack, EndValue, c);
        }
        BeginStringOrEmpty => return step(stack, BeginString, c),
        BeginString => match c {
            c if is_space(c) => BeginString,
            b'"' => InString,
            _ => return Err("looking for beginning of object key string".into()),
        },
        EndValue => {
            let Some(top) = stack.last().copied() else {
                return step(stack, EndTop, c);
            };
            if is_space(c) {
                return Ok(EndValue);
            }
            match (top, c) {
                (Parse::ObjectKey, b':') => {
                    stack.pop();
                    stack.push(Parse::ObjectValue);
                    BeginValue
                }
                (Parse::ObjectKey, _) => return Err("after object key".into()),
                (Parse::ObjectValue, b',') => {
                    stack.pop();
                    stack.push(Parse::ObjectKey);
                    BeginString
                }
                (Parse::ObjectValue, b'}') | (Parse::ArrayValue, b']') => {
                    stack.pop();
                    if stack.is_empty() {
                        EndTop
                    } else {
                        EndValue
                    }
                }
                (Parse::ObjectValue, _) => return Err("after object key:value pair".into()),
                (Parse::ArrayValue, b',') => BeginValue,
                (Parse::ArrayValue, _) => return Err("after array element".into()),
            }
        }
        EndTop if is_space(c) => EndTop,
        EndTop => return Err("after top-level value".into()),
        InString => match c {
            b'"' => EndValue,
            b'\\' => InStringEsc,
            c if c < 0x20 => return Err("in string literal".into()),
            _ => InString,
        },
        InStringEsc => match c {
            b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => InString,
            b'u' => InStringEscU(0),
            _ => return Err("in string escape code".into()),
        },
        InStringEscU(n) if c.is_ascii_hexdigit() => {
            if n == 3 {
                InString
            } else {
                InStringEscU(n + 1)
            }
        }
        InStringEscU(_) => return Err("in \\u hexadecimal character escape".into()),
        Neg => match c {
            b'0' => Zero,
            b'1'..=b'9' => One,
            _ => return Err("in numeric literal".into()),
        },
        One if c.is_ascii_digit() => One,
        One | Zero => match c {
            b'.' => Dot,
            b'e' | b'E' => E,
            _ => return step(stack, EndValue, c),
        },
        Dot if c.is_ascii_digit() => Dot0,
        Dot => return Err("after decimal point in numeric literal".into()),
        Dot0 => match c {
            c if c.is_ascii_digit() => Dot0,
            b'e' | b'E' => E,
            _ => return step(stack, EndValue, c),
        },
        E if matches!(c, b'+' | b'-') => ESign,
        E | ESign if c.is_ascii_digit() => E0,
        E | ESign => return Err("in exponent of numeric literal".into()),
        E0 if c.is_ascii_digit() => E0,
        E0 => return step(stack, EndValue, c),
        Literal(rest, word) => {
            if c != rest[0] {
                let mut m = String::new();
                let _ = write!(m, "in literal {word} (expecting '{}')", rest[0] as char);
                return Err(m);
            }
            if rest.len() == 1 {
                EndValue
            } else {
                Literal(&rest[1..], word)
            }
        }
    })
}

/// `encoding/json`'s syntax error for `data` (what `json.Valid` rejects), as `json.Unmarshal`
/// words it; `None` when `data` is one valid JSON value.
pub fn go_json_syntax_error(data: &[u8]) -> Option<String> {
    check_valid(data).err()
}

/// `json.Unmarshal(data, &map[string]interface{}{})`'s error: a syntax error, or a top-level
/// value that is not an object (null decodes to a nil map).
pub fn go_json_map_error(data: &[u8]) -> Option<String> {
    if let Err(e) = check_valid(data) {
        return Some(e);
    }
    let first = data.iter().copied().find(|c| !is_space(*c))?;
    let kind = match first {
        b'{' | b'n' => return None,
        b'[' => "array",
        b'"' => "string",
        b't' | b'f' => "bool",
        _ => "number",
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_go() {
        assert_eq!(go_base64_decode(b"aGVsbG8="), Ok(b"hello".to_vec()));
        assert_eq!(go_base64_decode(b"aGVs\nbG8="), Ok(b"hello".to_vec()));
        assert_eq!(go_base64_decode(b"aGk="), Ok(b"hi".to_vec()));
        assert_eq!(go_base64_decode(b"aA=="), Ok(b"h".to_vec()));
        assert_eq!(go_base64_decode(b""), Ok(vec![]));
        // Offsets as Go's CorruptInputError gives them.
        assert_eq!(go_base64_decode(b"!!!!"), Err(0));
        // RawURLEncoding: no padding, URL alphabet, trailing bits not checked.
        assert_eq!(go_base64_decode_raw_url(b"aGVsbG8"), Ok(b"hello".to_vec()));
        assert_eq!(go_base64_decode_raw_url(b"aGk"), Ok(b"hi".to_vec()));
        assert_eq!(go_base64_decode_raw_url(b"aB"), Ok(b"h".to_vec()));
        assert_eq!(
            go_base64_decode_raw_url(b"-_-_"),
            Ok(vec![0xfb, 0xff, 0xbf])
        );
        assert_eq!(go_base64_decode_raw_url(b"aGk="), Err(3));
        assert_eq!(go_base64_decode_raw_url(b"aGVsb"), Err(4));
        assert_eq!(go_base64_decode_raw_url(b"a+b/"), Err(1));
        assert_eq!(go_base64_decode(b"aGVsbG8"), Err(4));
        assert_eq!(go_base64_decode(b"abc"), Err(0));
        assert_eq!(go_base64_decode(b"a"), Err(0));
        assert_eq!(go_base64_decode(b"aGVsbG8=x"), Err(8));
        assert_eq!(go_base64_decode(b"aA="), Err(3));
        assert_eq!(go_base64_decode(b"aA=x"), Err(2));
        assert_eq!(go_base64_decode(b"a==="), Err(1));
        assert_eq!(go_base64_decode(b"hello world"), Err(5));
        assert_eq!(base64_error(5), "illegal base64 data at input byte 5");
    }

    #[test]
    fn json_errors_as_go() {
        assert_eq!(
            go_json_map_error(br#"{"auths": {"a": [1, 2.5e3, true, null]}}"#),
            None
        );
        assert_eq!(go_json_map_error(b" null "), None);
        assert_eq!(
            go_json_map_error(b"").as_deref(),
            Some("unexpected end of JSON input")
        );
        assert_eq!(
            go_json_map_error(b"{\"a\":").as_deref(),
            Some("unexpected end of JSON input")
        );
        assert_eq!(
            go_json_map_error(b"not json").as_deref(),
            Some("invalid character 'o' in literal null (expecting 'u')")
        );
        assert_eq!(
            go_json_map_error(b"hello").as_deref(),
            Some("invalid character 'h' looking for beginning of value")
        );
        assert_eq!(
            go_json_map_error(b"{a}").as_deref(),
            Some("invalid character 'a' looking for beginning of object key string")
        );
        assert_eq!(
            go_json_map_error(b"{\"a\" 1}").as_deref(),
            Some("invalid character '1' after object key")
        );
        assert_eq!(
            go_json_map_error(b"{\"a\":1 \"b\"}").as_deref(),
            Some("invalid character '\"' after object key:value pair")
        );
        assert_eq!(
            go_json_map_error(b"[1 2]").as_deref(),
            Some("invalid character '2' after array element")
        );
        assert_eq!(
            go_json_map_error(b"{} x").as_deref(),
            Some("invalid character 'x' after top-level value")
        );
        assert_eq!(
            go_json_map_error(b"\"a\nb\"").as_deref(),
            Some("invalid character '\\n' in string literal")
        );
        assert_eq!(
            go_json_map_error(b"1.x").as_deref(),
            Some("invalid character 'x' after decimal point in numeric literal")
        );
        assert_eq!(
            go_json_map_error(b"{'a':1}").as_deref(),
            Some(r"invalid character '\'' looking for beginning of object key string")
        );
        assert_eq!(
            go_json_map_error(b"[]").as_deref(),
            Some("json: cannot unmarshal array into Go value of type map[string]interface {}")
        );
        assert_eq!(
            go_json_map_error(b"12").as_deref(),
            Some("json: cannot unmarshal number into Go value of type map[string]interface {}")
        );
        assert_eq!(
            go_json_map_error(b"\"s\"").as_deref(),
            Some("json: cannot unmarshal string into Go value of type map[string]interface {}")
        );
    }
}
