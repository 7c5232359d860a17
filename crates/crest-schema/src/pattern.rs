//! `pattern` regexes, compiled once with Go's syntax and semantics (`crest_goregexp`): Go's
//! `\d`, `\w`, `\s` and `\b` are ASCII, its classes and case folding are Go's, and an invalid
//! pattern carries Go's `regexp.Compile` error, as kube-openapi reports it.

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
        let compiled = crest_goregexp::compile(source).map_err(|e| e.to_string());
        Pattern {
            source: source.to_string(),
            compiled,
        }
    }

    /// The compiled regex, or Go's compile error ("error parsing regexp: ...").
    pub fn regex(&self) -> Result<&Regex, &str> {
        self.compiled.as_ref().map_err(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_semantics() {
        let p = Pattern::new(r"^\d+$");
        let re = p.regex().unwrap();
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"));
        let p = Pattern::new(r"^[\w.]+$");
        assert!(p.regex().unwrap().is_match("a_b.c"));
        assert!(!p.regex().unwrap().is_match("é"));
        let p = Pattern::new(r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$");
        assert!(p.regex().unwrap().is_match("* * * * */5"));
        assert!(Pattern::new(r"[]a]").regex().unwrap().is_match("]"));
        assert!(Pattern::new(r"[[]").regex().unwrap().is_match("["));
        assert_eq!(
            Pattern::new("(").regex().unwrap_err(),
            "error parsing regexp: missing closing ): `(`"
        );
        assert_eq!(
            Pattern::new("a{2}{3}").regex().unwrap_err(),
            "error parsing regexp: invalid nested repetition operator: `{2}{3}`"
        );
    }
}
