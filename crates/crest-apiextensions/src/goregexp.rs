//! A syntax check of regular expressions as Go's `regexp.Compile` does it (RE2 syntax with Perl
//! extensions), returning Go's error text, e.g. "error parsing regexp: missing closing ): `a(`".
//!
//! Schemas carry Go patterns: Rust's regex syntax differs in places (literal `{`, `[` inside
//! classes, `\Q..\E`, flag letters, repeat limits), so accepting or rejecting by the regex crate
//! would turn valid CRDs away and let invalid ones in. Only validity is checked here.

const MAX_REPEAT: u64 = 1000;
const MAX_NESTING: usize = 1000;

const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// Go's `unicode.Categories` keys.
const CATEGORIES: [&str; 36] = [
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

/// Go's `unicode.Scripts` keys (Unicode 15.0).
const SCRIPTS: [&str; 163] = [
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

fn err(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

/// One open group: whether the current concatenation ends in something a repetition can apply
/// to, and the largest product of counted repetitions seen inside (Go limits it to 1000).
struct Frame {
    has_operand: bool,
    last_rep: u64,
    max_rep: u64,
}

impl Frame {
    fn new() -> Self {
        Frame {
            has_operand: false,
            last_rep: 0,
            max_rep: 0,
        }
    }

    fn push_operand(&mut self, rep: u64) {
        self.max_rep = self.max_rep.max(self.last_rep);
        self.last_rep = rep;
        self.has_operand = true;
    }

    fn rep(&self) -> u64 {
        self.max_rep.max(self.last_rep)
    }
}

/// Checks `pattern` as Go's `regexp.Compile` parses it; the error is Go's message.
pub(crate) fn check(pattern: &str) -> Result<(), String> {
    let mut stack = vec![Frame::new()];
    let mut t = pattern;
    // The text from the previous repetition operator on, if the last token was one.
    let mut last_repeat: Option<&str> = None;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        match c {
            '(' => {
                if t.as_bytes().get(1) == Some(&b'?') {
                    let (rest, opens) = perl_flags(t)?;
                    if opens {
                        stack.push(Frame::new());
                    }
                    t = rest;
                } else {
                    stack.push(Frame::new());
                    t = &t[1..];
                }
                if stack.len() > MAX_NESTING {
                    return Err(err("expression nests too deeply", pattern));
                }
            }
            '|' => {
                if let Some(f) = stack.last_mut() {
                    f.max_rep = f.max_rep.max(f.last_rep);
                    f.last_rep = 0;
                    f.has_operand = false;
                }
                t = &t[1..];
            }
            ')' => {
                if stack.len() < 2 {
                    return Err(err("unexpected )", pattern));
                }
                let rep = stack.pop().map(|f| f.rep()).unwrap_or(0);
                if let Some(f) = stack.last_mut() {
                    f.push_operand(rep);
                }
                t = &t[1..];
            }
            '[' => {
                t = class(t)?;
                push_literal(&mut stack);
            }
            '*' | '+' | '?' => {
                let before = t;
                let after = &t[1..];
                t = apply_repeat(&mut stack, before, after, last_repeat, None)?;
                repeat = Some(before);
            }
            '{' => {
                let before = t;
                match parse_repeat(t) {
                    None => {
                        // Not a well-formed repetition: a literal '{'.
                        push_literal(&mut stack);
                        t = &t[1..];
                    }
                    Some((min, max, after)) => {
                        let too_big =
                            min > MAX_REPEAT || max.is_some_and(|m| m > MAX_REPEAT || min > m);
                        if too_big {
                            return Err(err(
                                "invalid repeat count",
                                &before[..before.len() - after.len()],
                            ));
                        }
                        t = apply_repeat(&mut stack, before, after, last_repeat, Some((min, max)))?;
                        repeat = Some(before);
                    }
                }
            }
            '\\' => {
                t = escape_atom(t, &mut stack)?;
            }
            _ => {
                push_literal(&mut stack);
                t = &t[c.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    if stack.len() != 1 {
        return Err(err("missing closing )", pattern));
    }
    Ok(())
}

fn push_literal(stack: &mut [Frame]) {
    if let Some(f) = stack.last_mut() {
        f.push_operand(1);
    }
}

/// Applies `*`, `+`, `?` (`counted` is None) or `{min,max}` ending where `after` starts; returns
/// the rest of the pattern.
fn apply_repeat<'a>(
    stack: &mut [Frame],
    before: &'a str,
    after: &'a str,
    last_repeat: Option<&'a str>,
    counted: Option<(u64, Option<u64>)>,
) -> Result<&'a str, String> {
    // A trailing '?' makes the repetition non-greedy.
    let after = after.strip_prefix('?').unwrap_or(after);
    if let Some(last) = last_repeat {
        // Perl forbids stacking repetition operators (a**).
        return Err(err(
            "invalid nested repetition operator",
            &last[..last.len() - after.len()],
        ));
    }
    let Some(f) = stack.last_mut().filter(|f| f.has_operand) else {
        return Err(err(
            "missing argument to repetition operator",
            &before[..before.len() - after.len()],
        ));
    };
    if let Some((min, max)) = counted {
        let m = max.unwrap_or(min);
        if m == 0 {
            // The operand can never match; Go skips checking inside it.
            f.last_rep = 1;
        } else {
            let product = m.saturating_mul(f.last_rep.max(1));
            if (min >= 2 || max.is_some_and(|x| x >= 2)) && product > MAX_REPEAT {
                return Err(err(
                    "invalid repeat count",
                    &before[..before.len() - after.len()],
                ));
            }
            f.last_rep = product;
        }
    }
    Ok(after)
}

/// Go's `parseInt`: digits without leading zeros; `Some(None)` for a value too large.
fn parse_int(s: &str) -> Option<(Option<u64>, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && s.starts_with('0')) {
        return None;
    }
    let (num, rest) = s.split_at(digits);
    let value = if digits > 8 { None } else { num.parse().ok() };
    Some((value, rest))
}

/// `{n}`, `{n,}` or `{n,m}` at the start of `s`: (min, max, rest). A number too large for Go
/// comes back as `u64::MAX` so that it fails the size check.
fn parse_repeat(s: &str) -> Option<(u64, Option<u64>, &str)> {
    let s = s.strip_prefix('{')?;
    let (min, mut s) = parse_int(s)?;
    let min = min.unwrap_or(u64::MAX);
    let max;
    if let Some(rest) = s.strip_prefix(',') {
        if let Some(rest2) = rest.strip_prefix('}') {
            return Some((min, None, rest2));
        }
        let (m, rest) = parse_int(rest)?;
        max = Some(m.unwrap_or(u64::MAX));
        s = rest;
    } else {
        max = Some(min);
    }
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

/// `(?` at the start of `s`: a named group, a flag group or a flag change. Returns the rest and
/// whether a group was opened.
fn perl_flags(s: &str) -> Result<(&str, bool), String> {
    let b = s.as_bytes();
    let with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
    let with_name = b.len() > 3 && b[2] == b'<';
    if with_p || with_name {
        let start = if with_p { 4 } else { 3 };
        let Some(end) = s.find('>') else {
            return Err(err("invalid named capture", s));
        };
        let name = s.get(start..end).unwrap_or("");
        let valid = !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !valid {
            return Err(err("invalid named capture", &s[..=end]));
        }
        return Ok((&s[end + 1..], true));
    }
    let mut t = &s[2..];
    let mut negated = false;
    let mut saw_flag = false;
    while let Some(c) = t.chars().next() {
        t = &t[c.len_utf8()..];
        match c {
            'i' | 'm' | 's' | 'U' => saw_flag = true,
            '-' if !negated => {
                negated = true;
                saw_flag = false;
            }
            ':' | ')' if !negated || saw_flag => return Ok((t, c == ':')),
            _ => break,
        }
    }
    Err(err(
        "invalid or unsupported Perl syntax",
        &s[..s.len() - t.len()],
    ))
}

/// A backslash outside a class: assertions, `\Q..\E`, classes or a single escaped character.
fn escape_atom<'a>(t: &'a str, stack: &mut [Frame]) -> Result<&'a str, String> {
    match t.as_bytes().get(1) {
        Some(b'A' | b'b' | b'B' | b'z') => {
            push_literal(stack);
            return Ok(&t[2..]);
        }
        Some(b'C') => return Err(err("invalid escape sequence", &t[..2])),
        Some(b'Q') => {
            let body = &t[2..];
            let (lit, rest) = match body.find("\\E") {
                Some(i) => (&body[..i], &body[i + 2..]),
                None => (body, ""),
            };
            if !lit.is_empty() {
                push_literal(stack);
            }
            return Ok(rest);
        }
        _ => {}
    }
    if let Some(rest) = unicode_class(t)? {
        push_literal(stack);
        return Ok(rest);
    }
    if let Some(rest) = perl_class(t) {
        push_literal(stack);
        return Ok(rest);
    }
    let (_, rest) = escape(t)?;
    push_literal(stack);
    Ok(rest)
}

/// `\d`, `\s`, `\w` and their negations.
fn perl_class(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    (b.len() >= 2 && b[0] == b'\\' && matches!(b[1], b'd' | b'D' | b's' | b'S' | b'w' | b'W'))
        .then(|| &t[2..])
}

/// `\pL`, `\p{Name}`, `\P{^Name}`; `None` if `t` is not one.
fn unicode_class(t: &str) -> Result<Option<&str>, String> {
    let b = t.as_bytes();
    if b.len() < 2 || b[0] != b'\\' || (b[1] != b'p' && b[1] != b'P') {
        return Ok(None);
    }
    let after = &t[2..];
    let (seq, name, rest) = match after.chars().next() {
        Some('{') => {
            let Some(end) = t.find('}') else {
                return Err(err("invalid character class range", t));
            };
            (&t[..=end], t.get(3..end).unwrap_or(""), &t[end + 1..])
        }
        Some(c) => {
            let n = 2 + c.len_utf8();
            (&t[..n], &t[2..n], &t[n..])
        }
        None => (t, "", ""),
    };
    let name = name.strip_prefix('^').unwrap_or(name);
    let known = name == "Any" || CATEGORIES.contains(&name) || SCRIPTS.contains(&name);
    if !known {
        return Err(err("invalid character class range", seq));
    }
    Ok(Some(rest))
}

/// Go's `parseEscape`: one escaped character at the start of `s` (which starts with `\`).
fn escape(s: &str) -> Result<(char, &str), String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(err("trailing backslash at end of expression", ""));
    };
    let mut t = &t[c.len_utf8()..];
    let invalid = |t: &str| Err(err("invalid escape sequence", &s[..s.len() - t.len()]));
    match c {
        '1'..='7' if !t.starts_with(|d: char| ('0'..='7').contains(&d)) => invalid(t),
        '0'..='7' => {
            // Up to two more octal digits.
            for _ in 0..2 {
                if t.starts_with(|d: char| ('0'..='7').contains(&d)) {
                    t = &t[1..];
                }
            }
            Ok((c, t))
        }
        'x' => {
            let Some(c2) = t.chars().next() else {
                return invalid(t);
            };
            t = &t[c2.len_utf8()..];
            if c2 == '{' {
                let mut value: u32 = 0;
                let mut digits = 0;
                loop {
                    let Some(d) = t.chars().next() else {
                        return invalid(t);
                    };
                    t = &t[d.len_utf8()..];
                    if d == '}' {
                        break;
                    }
                    let Some(v) = d.to_digit(16) else {
                        return invalid(t);
                    };
                    value = value.saturating_mul(16).saturating_add(v);
                    if value > 0x10FFFF {
                        return invalid(t);
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return invalid(t);
                }
                return Ok((char::from_u32(value).unwrap_or('\u{FFFD}'), t));
            }
            let Some(c3) = t.chars().next() else {
                return invalid(t);
            };
            t = &t[c3.len_utf8()..];
            if c2.is_ascii_hexdigit() && c3.is_ascii_hexdigit() {
                Ok(('x', t))
            } else {
                invalid(t)
            }
        }
        'a' | 'f' | 'n' | 'r' | 't' | 'v' => Ok((c, t)),
        // Escaped punctuation stands for itself.
        _ if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, t)),
        _ => invalid(t),
    }
}

/// A character class starting at `s` (`[`); returns the rest after `]`.
fn class(s: &str) -> Result<&str, String> {
    let mut t = &s[1..];
    if let Some(rest) = t.strip_prefix('^') {
        t = rest;
    }
    let mut first = true;
    while t.is_empty() || !t.starts_with(']') || first {
        first = false;
        if t.len() > 2 && t.starts_with("[:") {
            if let Some(i) = t[2..].find(":]") {
                let name = &t[..i + 4];
                let inner = &name[2..name.len() - 2];
                let inner = inner.strip_prefix('^').unwrap_or(inner);
                if !POSIX_CLASSES.contains(&inner) {
                    return Err(err("invalid character class range", name));
                }
                t = &t[i + 4..];
                continue;
            }
        }
        if let Some(rest) = unicode_class(t)? {
            t = rest;
            continue;
        }
        if let Some(rest) = perl_class(t) {
            t = rest;
            continue;
        }
        let range = t;
        let (lo, rest) = class_char(t, s)?;
        t = rest;
        if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
            let (hi, rest) = class_char(&t[1..], s)?;
            t = rest;
            if hi < lo {
                return Err(err(
                    "invalid character class range",
                    &range[..range.len() - t.len()],
                ));
            }
        }
    }
    Ok(&t[1..])
}

/// One character of a class; `whole` is the class for the missing-bracket error.
fn class_char<'a>(t: &'a str, whole: &str) -> Result<(char, &'a str), String> {
    let Some(c) = t.chars().next() else {
        return Err(err("missing closing ]", whole));
    };
    if c == '\\' {
        return escape(t);
    }
    Ok((c, &t[c.len_utf8()..]))
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn valid_go_patterns() {
        for p in [
            "^[a-z]$",
            "abc",
            "^a",
            "my-finalizer",
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
            "a{",
            "{",
            "a{,5}",
            "x{abc}",
            "a{01}",
            "[[]",
            "[]a]",
            "[^]a]",
            "[a-]",
            "[[:alpha:]_]",
            "[[:^digit:]]",
            "\\pL\\p{Greek}\\P{^Han}",
            "(?i)abc",
            "(?i:a)(?-s:b)",
            "(?P<name>x)(?<other>y)",
            "\\Qa.b*\\E+",
            "\\Q*",
            "^*",
            "a*?",
            "(a{500}){2}",
            "a{1000}",
            "\\x41\\x{263a}\\0\\012",
            "[\\d\\s\\-]",
            "\\<\\>",
            "(a|)",
            "()",
            "a|*b",
        ] {
            let r = check(p);
            // `a|*b` is the one invalid entry in this list (missing argument).
            if p == "a|*b" {
                assert!(r.is_err(), "{p}");
            } else {
                assert_eq!(r, Ok(()), "{p}");
            }
        }
    }

    #[test]
    fn invalid_go_patterns_with_go_messages() {
        for (p, msg) in [
            ("abc(", "missing closing ): `abc(`"),
            ("abc)", "unexpected ): `abc)`"),
            ("[a", "missing closing ]: `[a`"),
            ("*a", "missing argument to repetition operator: `*`"),
            ("a**", "invalid nested repetition operator: `**`"),
            ("a*?*", "invalid nested repetition operator: `*?*`"),
            ("a{1001}", "invalid repeat count: `{1001}`"),
            ("a{2,1}", "invalid repeat count: `{2,1}`"),
            ("(a{500}){3}", "invalid repeat count: `{3}`"),
            ("\\8", "invalid escape sequence: `\\8`"),
            ("\\1", "invalid escape sequence: `\\1`"),
            ("\\Z", "invalid escape sequence: `\\Z`"),
            ("\\C", "invalid escape sequence: `\\C`"),
            ("a\\", "trailing backslash at end of expression: ``"),
            ("[z-a]", "invalid character class range: `z-a`"),
            ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
            ("\\p{Foo}", "invalid character class range: `\\p{Foo}`"),
            ("(?x)a", "invalid or unsupported Perl syntax: `(?x`"),
            ("(?P<na-me>a)", "invalid named capture: `(?P<na-me>`"),
            ("[\\b]", "invalid escape sequence: `\\b`"),
        ] {
            assert_eq!(check(p), Err(format!("error parsing regexp: {msg}")), "{p}");
        }
    }
}
