//! Rule `fieldPath`s (`.spec.x`, `.m['key']`): upstream's `cel.ValidFieldPath` parsing, shared
//! by the CRD-write checks over raw schemas and the compiled rules over structural ones.

/// Walks `json_path`, calling `step` with each property name in order; fails with upstream's
/// messages on malformed paths, or on `['key']` steps unless `allow_array_notation` (what a
/// step reports is returned as is).
pub fn walk(
    json_path: &str,
    allow_array_notation: bool,
    mut step: impl FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let tokens = path_tokens(json_path);
    let mut it = tokens.into_iter();
    while let Some(tok) = it.next() {
        match tok {
            "[" if !allow_array_notation => return Err("array notation is not allowed".into()),
            "[" => {
                let tok = it.next().ok_or("unexpected end of JSON path")?;
                if tok.len() < 2 || !tok.starts_with('\'') || !tok.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {tok}"));
                }
                let name = unescape_single_quote(&tok[1..tok.len() - 1])
                    .map_err(|e| format!("invalid string literal: {e}"))?;
                step(&name)?;
                let close = it.next().ok_or("unexpected end of JSON path")?;
                if close != "]" {
                    return Err(format!("expected ] but got {close}"));
                }
            }
            "." => {
                let name = it.next().ok_or("unexpected end of JSON path")?;
                step(name)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(())
}

/// Splits a JSON path into `.`, `[`, `]` and the text between (single-quoted strings whole).
fn path_tokens(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let mut j = i + 1;
            while j < b.len() && !(b[j] == b'\'' && b[j - 1] != b'\\') {
                j += 1;
            }
            let end = (j + 1).min(b.len());
            out.push(s.get(i..end).unwrap_or(""));
            i = end;
        } else if matches!(b[i], b'.' | b'[' | b']') {
            out.push(s.get(i..i + 1).unwrap_or(""));
            i += 1;
        } else {
            let start = i;
            while i < b.len() && !matches!(b[i], b'.' | b'[' | b']') {
                i += 1;
            }
            out.push(s.get(start..i).unwrap_or(""));
        }
    }
    out
}

/// `unescapeSingleQuote`: the escapes of a single-quoted Go string.
fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        out.push(match e {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            _ => return Err(format!("invalid escape char \\{e}")),
        });
    }
    Ok(out)
}
