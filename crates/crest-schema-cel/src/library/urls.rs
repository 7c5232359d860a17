//! Kubernetes' URL library (apiserver `library/urls.go`) over a port of the parts of Go's
//! `net/url` it relies on: `url()`/`isURL` accept what `url.ParseRequestURI` accepts (an
//! absolute URI or an absolute path) with Go's error wording, and the accessors read the
//! components as `url.Parse` splits them.

use std::sync::Arc;

use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::types::Type;
use crest_cel::value::{Key, MapValue, OpaqueValue, Value};
use indexmap::IndexMap;

use super::go_quote;

pub const TYPE_NAME: &str = "kubernetes.URL";

/// The components of a parsed URL (Go's `url.URL`, the fields the library reads).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Url {
    pub scheme: String,
    pub opaque: String,
    pub host: String,
    pub path: String,
    pub raw_path: String,
    pub raw_query: String,
    pub fragment: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Mode::Path => c == b'?',
                Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Mode::QueryComponent => true,
                Mode::Fragment => false,
                Mode::Host | Mode::Zone => true,
            };
        }
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// Go's `unescape`, with its `EscapeError` / `InvalidHostError` wording.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    let end = (i + 3).min(b.len());
                    return Err(format!(
                        "invalid URL escape {}",
                        crest_gofmt::go_quote_bytes(&b[i..end])
                    ));
                }
                let esc = &s[i..i + 3];
                if mode == Mode::Host && unhex(b[i + 1]) < 8 && esc != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(esc)));
                }
                if mode == Mode::Zone {
                    let v = (unhex(b[i + 1]) << 4) | unhex(b[i + 2]);
                    if esc != "%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(format!("invalid URL escape {}", go_quote(esc)));
                    }
                }
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&s[i..i + 1])
                    ));
                }
                i += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                out.push((unhex(b[i + 1]) << 4) | unhex(b[i + 2]));
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if should_escape(c, mode) {
            if c == b' ' && mode == Mode::QueryComponent {
                out.push('+');
            } else {
                out.push_str(&format!("%{c:02X}"));
            }
        } else {
            out.push(c as char);
        }
    }
    out
}

fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        _ if port.is_empty() => true,
        Some(digits) => digits.bytes().all(|c| c.is_ascii_digit()),
        None => false,
    }
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
        if let Some(zone) = host[..i].find("%25") {
            let h1 = unescape(&host[..zone], Mode::Host)?;
            let h2 = unescape(&host[zone..i], Mode::Zone)?;
            let h3 = unescape(&host[i..], Mode::Host)?;
            return Ok(h1 + &h2 + &h3);
        }
    } else if let Some(i) = host.rfind(':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_userinfo(s: &str) -> bool {
    s.bytes().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b':'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b'@'
            )
    })
}

fn parse_authority(authority: &str) -> Result<String, String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    if let Some(u) = userinfo {
        if !valid_userinfo(u) {
            return Err("net/url: invalid userinfo".into());
        }
        let (name, pass) = u.split_once(':').unwrap_or((u, ""));
        unescape(name, Mode::UserPassword)?;
        unescape(pass, Mode::UserPassword)?;
    }
    Ok(host)
}

fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parse(rawURL, viaRequest)`.
fn parse_inner(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|c| c < 0x20 || c == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut u = Url::default();
    if raw == "*" {
        u.path = "*".into();
        return Ok(u);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    u.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        u.raw_query = q.to_string();
        rest = r;
    }
    if !rest.starts_with('/') {
        if !u.scheme.is_empty() {
            u.opaque = rest.to_string();
            return Ok(u);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest.split('/').next().is_some_and(|seg| seg.contains(':')) {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!u.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//")
    {
        let authority = &rest[2..];
        let (auth, path) = match authority.find('/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        };
        u.host = parse_authority(auth)?;
        rest = path;
    }
    u.path = unescape(rest, Mode::Path)?;
    if escape(&u.path, Mode::Path) != rest {
        u.raw_path = rest.to_string();
    }
    Ok(u)
}

fn parse_error(raw: &str, e: String) -> String {
    format!("parse {}: {e}", go_quote(raw))
}

/// Go's `url.ParseRequestURI`.
pub fn parse_request_uri(raw: &str) -> Result<Url, String> {
    parse_inner(raw, true).map_err(|e| parse_error(raw, e))
}

/// Go's `url.Parse`: the fragment is cut off first.
pub fn parse(raw: &str) -> Result<Url, String> {
    let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = parse_inner(u, false).map_err(|e| parse_error(u, e))?;
    url.fragment = unescape(frag, Mode::Fragment).map_err(|e| parse_error(raw, e))?;
    Ok(url)
}

fn valid_encoded(s: &str) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, Mode::Path)
    })
}

impl Url {
    fn split_host_port(&self) -> (&str, &str) {
        let mut host = self.host.as_str();
        let mut port = "";
        if let Some(i) = host.rfind(':') {
            if valid_optional_port(&host[i..]) {
                port = &host[i + 1..];
                host = &host[..i];
            }
        }
        if host.starts_with('[') && host.ends_with(']') && host.len() >= 2 {
            host = &host[1..host.len() - 1];
        }
        (host, port)
    }

    pub fn hostname(&self) -> &str {
        self.split_host_port().0
    }

    pub fn port(&self) -> &str {
        self.split_host_port().1
    }

    /// Go's `EscapedPath`: the path as written when that is a valid encoding of it.
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }

    /// Go's `url.ParseQuery`, ignoring malformed pairs: key -> values in order.
    pub fn query(&self) -> IndexMap<String, Vec<String>> {
        let mut out: IndexMap<String, Vec<String>> = IndexMap::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(k), Ok(v)) = (
                unescape(k, Mode::QueryComponent),
                unescape(v, Mode::QueryComponent),
            ) else {
                continue;
            };
            out.entry(k).or_default().push(v);
        }
        out
    }
}

impl OpaqueValue for Url {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<Url>() == Some(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn ty() -> Type {
    Type::Opaque(TYPE_NAME.into(), vec![])
}

fn to_url(s: &str) -> Result<Url, String> {
    // ParseRequestURI checks; Parse splits (it keeps a fragment apart).
    let conv = |e: String| format!("URL parse error during conversion from string: {e}");
    parse_request_uri(s).map_err(conv)?;
    parse(s).map_err(conv)
}

fn accessor(name: &str, id: &str, f: fn(&Url) -> String) -> (String, Overload) {
    (
        name.to_string(),
        Overload::member(id, vec![ty()], Type::String).implement(move |a| match a {
            [Value::Opaque(o)] => match o.as_any().downcast_ref::<Url>() {
                Some(u) => Ok(Value::string(&f(u))),
                None => Err(EvalError::new("no such overload")),
            },
            _ => Err(EvalError::new("no such overload")),
        }),
    )
}

pub fn library() -> Library {
    let mut lib = Library::new("kubernetes.urls")
        .function(
            "url",
            [
                Overload::global("string_to_url", vec![Type::String], ty()).implement(
                    |a| match a {
                        [Value::String(s)] => to_url(s)
                            .map(|u| Value::Opaque(Arc::new(u)))
                            .map_err(EvalError::new),
                        _ => Err(EvalError::new("no such overload")),
                    },
                ),
            ],
        )
        .function(
            "isURL",
            [
                Overload::global("is_url_string", vec![Type::String], Type::Bool).implement(|a| {
                    match a {
                        [Value::String(s)] => Ok(Value::Bool(parse_request_uri(s).is_ok())),
                        _ => Err(EvalError::new("no such overload")),
                    }
                }),
            ],
        )
        .function(
            "getQuery",
            [Overload::member(
                "url_get_query",
                vec![ty()],
                Type::map(Type::String, Type::list(Type::String)),
            )
            .implement(|a| match a {
                [Value::Opaque(o)] => match o.as_any().downcast_ref::<Url>() {
                    Some(u) => {
                        let mut m = MapValue::default();
                        for (k, vs) in u.query() {
                            let key: Arc<str> = k.as_str().into();
                            let vals = vs.iter().map(|v| Value::string(v)).collect();
                            m.entries.insert(
                                Key::String(key.clone()),
                                (Value::String(key), Value::list(vals)),
                            );
                        }
                        Ok(Value::Map(Arc::new(m)))
                    }
                    None => Err(EvalError::new("no such overload")),
                },
                _ => Err(EvalError::new("no such overload")),
            })],
        );
    for (name, o) in [
        accessor("getScheme", "url_get_scheme", |u| u.scheme.clone()),
        accessor("getHost", "url_get_host", |u| u.host.clone()),
        accessor("getHostname", "url_get_hostname", |u| u.hostname().into()),
        accessor("getPort", "url_get_port", |u| u.port().into()),
        accessor("getEscapedPath", "url_get_escaped_path", |u| {
            u.escaped_path()
        }),
    ] {
        lib = lib.function(&name, [o]);
    }
    lib
}
