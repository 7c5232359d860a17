//! The parts of Go's `net/url` parsing that CRD validation depends on: webhook URLs
//! (`url.Parse`) and the API-approval annotation (`url.ParseRequestURI`). Only the components and
//! errors those checks look at are produced.

/// The components of a parsed URL that validation inspects.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ParsedUrl {
    pub scheme: String,
    /// Host with port, as Go's `URL.Host`.
    pub host: String,
    /// `URL.User.String()`, when a userinfo part is present.
    pub user: Option<String>,
    pub fragment: String,
    pub raw_query: String,
    /// `scheme:opaque` URLs (no `//` authority).
    pub opaque: bool,
}

fn has_ctl_byte(s: &str) -> bool {
    s.bytes().any(|b| b < 0x20 || b == 0x7f)
}

/// `getScheme`: `Ok(None)` when the text before the first `:` is not a scheme.
fn split_scheme(raw: &str) -> Result<(String, &str), &'static str> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' => {
                if i == 0 {
                    return Err("missing protocol scheme");
                }
                return Ok((raw[..i].to_ascii_lowercase(), &raw[i + 1..]));
            }
            // Any other character: no scheme, the whole text is a path.
            _ => return Ok((String::new(), raw)),
        }
    }
    Ok((String::new(), raw))
}

/// Validates the port of `host[:port]` as Go's `parseHost` does.
fn check_host(host: &str) -> Result<(), String> {
    let port_part = if let Some(rest) = host.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return Err("missing ']' in host".to_string());
        };
        &rest[end + 1..]
    } else {
        match host.rfind(':') {
            Some(i) => &host[i..],
            None => "",
        }
    };
    if !port_part.is_empty() {
        let digits = port_part.strip_prefix(':').unwrap_or(port_part);
        if !port_part.starts_with(':') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("invalid port {port_part:?} after host"));
        }
    }
    Ok(())
}

fn parse_inner(raw: &str, via_request: bool) -> Result<ParsedUrl, String> {
    if has_ctl_byte(raw) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_string());
    }
    let mut u = ParsedUrl::default();
    let (scheme, rest) = split_scheme(raw)?;
    u.scheme = scheme;
    let mut rest = rest;
    if let Some(i) = rest.find('?') {
        u.raw_query = rest[i + 1..].to_string();
        rest = &rest[..i];
    }
    if !rest.starts_with('/') {
        if !u.scheme.is_empty() {
            u.opaque = true;
            return Ok(u);
        }
        if via_request {
            return Err("invalid URI for request".to_string());
        }
        let first_segment = rest.split('/').next().unwrap_or("");
        if first_segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".to_string());
        }
    }
    if (!u.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//")
    {
        let authority = &rest[2..];
        let authority = &authority[..authority.find('/').unwrap_or(authority.len())];
        let host = match authority.rfind('@') {
            Some(i) => {
                u.user = Some(authority[..i].to_string());
                &authority[i + 1..]
            }
            None => authority,
        };
        check_host(host)?;
        u.host = host.to_string();
    }
    Ok(u)
}

/// Go's `url.Parse`; the error reads as Go's `*url.Error`: `parse "<url>": <reason>`.
pub(crate) fn parse(raw: &str) -> Result<ParsedUrl, String> {
    let (main, frag) = match raw.find('#') {
        Some(i) => (&raw[..i], &raw[i + 1..]),
        None => (raw, ""),
    };
    let mut u = parse_inner(main, false).map_err(|e| format!("parse {main:?}: {e}"))?;
    u.fragment = frag.to_string();
    Ok(u)
}

/// Go's `url.ParseRequestURI` (no fragment handling: `#` stays part of the text).
pub(crate) fn parse_request_uri(raw: &str) -> Result<ParsedUrl, String> {
    parse_inner(raw, true).map_err(|e| format!("parse {raw:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_go() {
        let u = parse("https://user:pw@example.com:8443/p?q=1#frag").unwrap();
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, "example.com:8443");
        assert_eq!(u.user.as_deref(), Some("user:pw"));
        assert_eq!(u.raw_query, "q=1");
        assert_eq!(u.fragment, "frag");
        assert_eq!(
            parse(":x").unwrap_err(),
            "parse \":x\": missing protocol scheme"
        );
        assert_eq!(
            parse("https://h:x/").unwrap_err(),
            "parse \"https://h:x/\": invalid port \":x\" after host"
        );
        assert_eq!(
            parse("a\nb").unwrap_err(),
            "parse \"a\\nb\": net/url: invalid control character in URL"
        );
        let u = parse("example.com/path").unwrap();
        assert_eq!((u.scheme.as_str(), u.host.as_str()), ("", ""));
        assert!(
            parse_request_uri("https://github.com/kubernetes/kubernetes/pull/78458")
                .is_ok_and(|u| !u.host.is_empty())
        );
        assert!(parse_request_uri("foo").is_err());
        assert!(parse_request_uri("mailto:x").is_ok_and(|u| u.host.is_empty()));
    }
}
