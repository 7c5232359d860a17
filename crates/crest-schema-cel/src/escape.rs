//! Property name escaping (apiserver `cel.Escape`): a property is accessible from CEL only if its
//! name can be written as an identifier once `__`, `.`, `-` and `/` are spelled out and CEL's
//! reserved words are wrapped in underscores.

use crest_cel::parser::RESERVED;

/// The identifier a property is accessed by, or None when the name is not accessible.
pub fn escape(ident: &str) -> Option<String> {
    let first = *ident.as_bytes().first()?;
    if first.is_ascii_digit() {
        return None;
    }
    // apiserver's celReservedSymbols: the literal keywords and the parser's reserved words.
    if matches!(ident, "true" | "false" | "null" | "in") || RESERVED.contains(&ident) {
        return Some(format!("__{ident}__"));
    }
    let b = ident.as_bytes();
    let plain = b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') && !ident.contains("__");
    if plain {
        return Some(ident.to_string());
    }
    let mut out = String::with_capacity(ident.len() + 16);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'_' && b.get(i + 1) == Some(&b'_') {
            out.push_str("__underscores__");
            i += 2;
            continue;
        }
        match c {
            b'.' => out.push_str("__dot__"),
            b'-' => out.push_str("__dash__"),
            b'/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == b'_' => out.push(c as char),
            _ => return None,
        }
        i += 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_as_kubernetes() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("x-prop").as_deref(), Some("x__dash__prop"));
        assert_eq!(
            escape("redact__d").as_deref(),
            Some("redact__underscores__d")
        );
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("sprint").as_deref(), Some("sprint"));
        assert_eq!(escape("int").as_deref(), Some("int"));
        assert_eq!(escape("self").as_deref(), Some("self"));
        assert_eq!(escape("f@2"), None);
        assert_eq!(escape("1a"), None);
        assert_eq!(escape(""), None);
        assert_eq!(escape("___a").as_deref(), Some("__underscores___a"));
    }
}
