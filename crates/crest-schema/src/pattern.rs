//! `pattern` regexes, compiled once with Go RE2 semantics.
//!
//! Go's `\d`, `\w`, `\s` and `\b` are ASCII-only while the regex crate's are Unicode-aware, so
//! those escapes are rewritten to explicit ASCII classes before compiling.

use regex::Regex;

/// A compiled `pattern`; `source` is what the schema says (and what messages quote).
#[derive(Clone, Debug)]
pub struct Pattern {
    pub source: String,
    compiled: Result<Regex, String>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Pattern {
    pub fn new(source: &str) -> Self {
        let compiled = Regex::new(&translate(source)).map_err(|e| compile_error(&e));
        Pattern {
            source: source.to_string(),
            compiled,
        }
    }

    /// The compiled regex, or the compile error.
    pub fn regex(&self) -> Result<&Regex, &str> {
        self.compiled.as_ref().map_err(String::as_str)
    }
}

fn compile_error(e: &regex::Error) -> String {
    // The regex crate's message spans several lines; the first meaningful line is enough.
    let text = e.to_string();
    text.lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .unwrap_or(text)
}

/// Rewrites Go-only-ASCII escapes for the Unicode-aware regex crate.
pub fn translate(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 16);
    let mut in_class = 0usize;
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let rep = match (n, in_class > 0) {
                    ('d', false) => Some("[0-9]"),
                    ('d', true) => Some("0-9"),
                    ('D', _) => Some("[^0-9]"),
                    ('w', false) => Some("[0-9A-Za-z_]"),
                    ('w', true) => Some("0-9A-Za-z_"),
                    ('W', _) => Some("[^0-9A-Za-z_]"),
                    ('s', false) => Some("[\\t\\n\\x0C\\r ]"),
                    ('s', true) => Some("\\t\\n\\x0C\\r "),
                    ('S', _) => Some("[^\\t\\n\\x0C\\r ]"),
                    ('b', false) => Some("(?-u:\\b)"),
                    _ => None,
                };
                match rep {
                    Some(r) => out.push_str(r),
                    None => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' => {
                if in_class > 0 && chars.peek() == Some(&':') {
                    // POSIX class like [:alpha:] inside a bracket expression.
                    out.push('[');
                    for d in chars.by_ref() {
                        out.push(d);
                        if d == ']' {
                            break;
                        }
                    }
                    continue;
                }
                in_class += 1;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                // A `]` right after `[` or `[^` is a literal.
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_classes_like_go() {
        let p = Pattern::new(r"^\d+$");
        let re = p.regex().unwrap();
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"));
        let p = Pattern::new(r"^[\w.]+$");
        assert!(p.regex().unwrap().is_match("a_b.c"));
        assert!(!p.regex().unwrap().is_match("é"));
        let p = Pattern::new(r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$");
        assert!(p.regex().unwrap().is_match("* * * * */5"));
        assert!(Pattern::new("(").regex().is_err());
        assert!(Pattern::new(r"[]a]").regex().unwrap().is_match("]"));
    }
}
