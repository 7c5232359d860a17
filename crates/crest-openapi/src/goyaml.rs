//! The YAML text go-yaml v3 (`gopkg.in/yaml.v3`, which gnostic uses) writes for a value read
//! from JSON: gnostic keeps vendor extensions, defaults, enums and examples as that text
//! (`Any.yaml`), and clients (kube-openapi's `pkg/util/proto`, kubectl) parse it back.
//!
//! The value is marshalled as go-yaml marshals the node tree it parsed from the JSON document,
//! with styles cleared: block collections with an indent of 4 (2 inside a sequence item), empty
//! ones in flow style, scalars in the first style the emitter allows of plain, single- or
//! double-quoted (strings that would read back as another type double-quoted), and strings with
//! line breaks as literal blocks. Numbers keep their JSON text. go-yaml v3 does not wrap long
//! lines.

use serde_json::Value;

const BEST_INDENT: i32 = 4;

/// `yaml.Marshal` of the node go-yaml parses from `v`'s JSON text.
pub(crate) fn marshal(v: &Value) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
    };
    e.node(v, -1, Place::Other);
    // The document end starts a new line.
    e.write_indent(-1);
    e.out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// An item of a block sequence: its collection or scalar indents 2 past the `- `.
    SeqItem,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    whitespace: bool,
    indention: bool,
}

/// The indent of a node below one at `parent` (go-yaml's `yaml_emitter_increase_indent`; a
/// scalar counts as flow there).
fn child_indent(parent: i32, place: Place, flow: bool) -> i32 {
    if parent < 0 {
        if flow {
            BEST_INDENT
        } else {
            0
        }
    } else if place == Place::SeqItem {
        parent + 2
    } else {
        BEST_INDENT * ((parent + BEST_INDENT) / BEST_INDENT)
    }
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
    }

    fn write_indent(&mut self, indent: i32) {
        let indent = indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
    }

    fn indicator(&mut self, s: &str, need_whitespace: bool, is_whitespace: bool, indention: bool) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && indention;
    }

    fn node(&mut self, v: &Value, parent: i32, place: Place) {
        match v {
            Value::Array(items) if items.is_empty() => self.empty("[", "]"),
            Value::Object(m) if m.is_empty() => self.empty("{", "}"),
            Value::Array(items) => {
                let indent = child_indent(parent, place, false);
                for item in items {
                    self.write_indent(indent);
                    self.indicator("-", true, false, true);
                    self.node(item, indent, Place::SeqItem);
                }
            }
            Value::Object(m) => {
                let indent = child_indent(parent, place, false);
                for (k, v) in m {
                    self.write_indent(indent);
                    let a = analyze(k);
                    if k.len() <= 128 && !a.multiline {
                        self.string(k, indent, Place::Other, true);
                        self.indicator(":", false, false, false);
                    } else {
                        self.indicator("?", true, false, true);
                        self.string(k, indent, Place::Other, false);
                        self.write_indent(indent);
                        self.indicator(":", true, false, true);
                    }
                    self.node(v, indent, Place::Other);
                }
            }
            Value::String(s) => self.string(s, parent, place, false),
            Value::Null => self.plain("null"),
            Value::Bool(b) => self.plain(if *b { "true" } else { "false" }),
            Value::Number(n) => self.plain(&n.to_string()),
        }
    }

    fn empty(&mut self, open: &str, close: &str) {
        self.indicator(open, true, true, false);
        self.indicator(close, false, false, false);
    }

    fn plain(&mut self, s: &str) {
        if !s.is_empty() && !self.whitespace {
            self.put(' ');
        }
        for c in s.chars() {
            self.put(c);
        }
        if !s.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
    }

    fn string(&mut self, s: &str, parent: i32, place: Place, simple_key: bool) {
        match string_style(s, simple_key) {
            Style::Plain => self.plain(s),
            Style::Single => {
                self.indicator("'", true, false, false);
                for c in s.chars() {
                    if c == '\'' {
                        self.put('\'');
                    }
                    self.put(c);
                }
                self.indicator("'", false, false, false);
                self.whitespace = false;
                self.indention = false;
            }
            Style::Double => {
                self.indicator("\"", true, false, false);
                for c in s.chars() {
                    if printable(c) && !is_break(c) && c != '"' && c != '\\' {
                        self.put(c);
                    } else {
                        for e in escape(c).chars() {
                            self.put(e);
                        }
                    }
                }
                self.indicator("\"", false, false, false);
                self.whitespace = false;
                self.indention = false;
            }
            Style::Literal => self.literal(s, child_indent(parent, place, true)),
        }
    }

    fn literal(&mut self, s: &str, indent: i32) {
        self.indicator("|", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        if chars.first().is_some_and(|c| *c == ' ' || is_break(*c)) {
            self.indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let n = chars.len();
        let chomp = match chars.last() {
            None => Some("-"),
            Some(c) if !is_break(*c) => Some("-"),
            Some(_) if n == 1 || is_break(chars[n - 2]) => Some("+"),
            Some(_) => None,
        };
        if let Some(h) = chomp {
            self.indicator(h, false, false, false);
        }
        self.whitespace = true;
        let mut breaks = true;
        for c in chars {
            if is_break(c) {
                if c == '\n' {
                    self.put_break();
                } else {
                    self.out.push(c);
                    self.column = 0;
                    self.indention = true;
                }
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's `is_printable`: what may appear unescaped (4-byte UTF-8 may not).
fn printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{FEFF}'
}

fn escape(c: char) -> String {
    let short = match c {
        '\0' => "0",
        '\u{07}' => "a",
        '\u{08}' => "b",
        '\t' => "t",
        '\n' => "n",
        '\u{0B}' => "v",
        '\u{0C}' => "f",
        '\r' => "r",
        '\u{1B}' => "e",
        '"' => "\"",
        '\\' => "\\",
        '\u{85}' => "N",
        '\u{A0}' => "_",
        '\u{2028}' => "L",
        '\u{2029}' => "P",
        _ => "",
    };
    if !short.is_empty() {
        return format!("\\{short}");
    }
    let v = c as u32;
    if v <= 0xFF {
        format!("\\x{v:02X}")
    } else if v <= 0xFFFF {
        format!("\\u{v:04X}")
    } else {
        format!("\\U{v:08X}")
    }
}

/// What the emitter's scalar analysis allows in block context.
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// libyaml's `yaml_emitter_analyze_scalar`, for block context.
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut line_breaks, mut special, mut tabs) = (false, false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_whitespace = i + 1 >= n || matches!(chars[i + 1], ' ' | '\t');
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if c == '\t' {
            tabs = true;
        } else if !printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= i + 1 == n;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= i + 1 == n;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space || space_break || tabs || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// The style go-yaml writes a string node in: the encoder asks for a literal block when the
/// string has a newline, double quotes when plain text would resolve to another type, plain
/// otherwise; the emitter then falls back as its analysis requires.
fn string_style(s: &str, simple_key: bool) -> Style {
    let a = analyze(s);
    let mut style = if s.contains('\n') {
        Style::Literal
    } else if resolves_to_other_than_string(s) {
        Style::Double
    } else {
        Style::Plain
    };
    if simple_key && a.multiline {
        style = Style::Double;
    }
    if style == Style::Plain && (!a.block_plain_allowed || (s.is_empty() && simple_key)) {
        style = Style::Single;
    }
    if style == Style::Single && !a.single_quoted_allowed {
        style = Style::Double;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::Double;
    }
    style
}

/// Whether go-yaml v3 resolves the plain scalar `s` to a tag other than `!!str` (its `resolve`
/// with no tag: the null, bool, float words, ints in Go's base-0 syntax, floats, timestamps).
fn resolves_to_other_than_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "true", "True", "TRUE", "false", "False", "FALSE", "", "~", "null", "Null", "NULL", ".nan",
        ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
        "-.INF",
    ];
    let Some(first) = s.bytes().next() else {
        return true;
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            WORDS.contains(&s)
        }
        b'.' => WORDS.contains(&s) || go_float(s, false),
        b'+' | b'-' | b'0'..=b'9' => {
            if WORDS.contains(&s) || timestamp(s) {
                return true;
            }
            let plain = s.replace('_', "");
            go_int(&plain) || go_float(&plain, true)
        }
        _ => false,
    }
}

fn digits(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

/// Go's `strconv.ParseInt(s, 0, 64)` or `ParseUint(s, 0, 64)` succeeds (underscores removed).
fn go_int(s: &str) -> bool {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, ds) = if let Some(h) = lower.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (2, b)
    } else if let Some(o) = lower.strip_prefix("0o") {
        (8, o)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if !digits(ds, radix) {
        return false;
    }
    // ParseInt's range with a sign, ParseUint's without.
    match u64::from_str_radix(ds, radix) {
        Ok(v) if neg => v <= 1 << 63,
        Ok(v) if s.starts_with('+') => v < 1 << 63,
        Ok(_) => true,
        Err(_) => false,
    }
}

/// go-yaml's float forms: `.5`-like (Go's ParseFloat after a leading dot), or its
/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` with a finite value.
fn go_float(s: &str, allow_sign: bool) -> bool {
    let mut rest = s;
    if allow_sign {
        rest = rest.strip_prefix(['+', '-']).unwrap_or(rest);
    }
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac, 10),
        Some((int, frac)) => digits(int, 10) && (frac.is_empty() || digits(frac, 10)),
        None => digits(mantissa, 10),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e), 10));
    mantissa_ok && exponent_ok && s.parse::<f64>().is_ok_and(f64::is_finite)
}

/// One to `max` ASCII digits at the start of `s`: their value and the rest.
fn number(s: &str, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// `15:4:5.999999999` at the start of `s` (hour, minute, second of one or two digits, an
/// optional fraction): the rest.
fn clock(s: &str) -> Option<&str> {
    let (h, rest) = number(s, 2)?;
    let (m, rest) = number(rest.strip_prefix(':')?, 2)?;
    let (sec, mut rest) = number(rest.strip_prefix(':')?, 2)?;
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    if let Some(frac) = rest.strip_prefix(['.', ',']) {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n > 0 {
            rest = &frac[n..];
        }
    }
    Some(rest)
}

/// go-yaml's timestamps: `time.Parse` with `2006-1-2T15:4:5.999999999Z07:00` (or a lower-case
/// `t`), `2006-1-2 15:4:5.999999999` or `2006-1-2`.
fn timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let Ok(year) = s[..4].parse::<u32>() else {
        return false;
    };
    let Some((month, rest)) = number(&s[5..], 2) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix('-') else {
        return false;
    };
    let Some((day, rest)) = number(rest, 2) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days {
        return false;
    }
    if rest.is_empty() {
        return true;
    }
    let (zoned, rest) = match rest.as_bytes()[0] {
        b'T' | b't' => (true, &rest[1..]),
        b' ' => (false, &rest[1..]),
        _ => return false,
    };
    let Some(rest) = clock(rest) else {
        return false;
    };
    if !zoned {
        return rest.is_empty();
    }
    if rest == "Z" {
        return true;
    }
    let z = rest.as_bytes();
    z.len() == 6
        && (z[0] == b'+' || z[0] == b'-')
        && z[1..3].iter().all(u8::is_ascii_digit)
        && z[3] == b':'
        && z[4..6].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn y(v: Value) -> String {
        marshal(&v)
    }

    /// Outputs of go-yaml v3.0.1 for the same values (gnostic-models v0.6.8's `Any.yaml`).
    #[test]
    fn matches_go_yaml() {
        assert_eq!(
            y(json!([{"group": "", "kind": "ConfigMap", "version": "v1"}])),
            "- group: \"\"\n  kind: ConfigMap\n  version: v1\n"
        );
        assert_eq!(
            y(json!({"group": "apps", "kind": "Deployment", "version": "v1"})),
            "group: apps\nkind: Deployment\nversion: v1\n"
        );
        assert_eq!(
            y(json!({"a": [1, "x: y", "", true, null, "multi\nline", "#c", "- x", "true",
                "1.5", "  sp", "tab\tx", "quote\"d", "it's", {"k": "v", "n": {"m": []}}, {}, [],
                ["a", ["b"]]], "b": "héllo"})),
            "a:\n    - 1\n    - 'x: y'\n    - \"\"\n    - true\n    - null\n    - |-\n      multi\n      line\n    - '#c'\n    - '- x'\n    - \"true\"\n    - \"1.5\"\n    - '  sp'\n    - \"tab\\tx\"\n    - quote\"d\n    - it's\n    - k: v\n      n:\n        m: []\n    - {}\n    - []\n    - - a\n      - - b\nb: héllo\n"
        );
        let cases: &[(&str, &str)] = &[
            ("a", "a\n"),
            ("null", "\"null\"\n"),
            ("~", "\"~\"\n"),
            ("yes", "yes\n"),
            ("0x1f", "\"0x1f\"\n"),
            ("012", "\"012\"\n"),
            ("1_000", "\"1_000\"\n"),
            (".inf", "\".inf\"\n"),
            ("2001-12-14", "\"2001-12-14\"\n"),
            ("a: b", "'a: b'\n"),
            ("a #b", "'a #b'\n"),
            ("@x", "'@x'\n"),
            ("x,y", "x,y\n"),
            ("x]", "x]\n"),
            ("?x", "?x\n"),
            ("? x", "'? x'\n"),
            (":x", ":x\n"),
            ("x:", "'x:'\n"),
            ("x ", "'x '\n"),
            ("", "\"\"\n"),
            (" ", "' '\n"),
            ("\u{1}", "\"\\x01\"\n"),
            ("line\n", "|\n    line\n"),
            ("a\n\nb\n\n", "|+\n    a\n\n    b\n\n"),
        ];
        for (s, want) in cases {
            assert_eq!(&y(json!(s)), want, "{s:?}");
        }
        assert_eq!(y(json!(2.5)), "2.5\n");
        assert_eq!(y(json!([])), "[]\n");
        assert_eq!(y(json!({})), "{}\n");
    }
}
