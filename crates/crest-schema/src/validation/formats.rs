//! String formats (kube-openapi's `strfmt.Default` registry as CRDs use it) and which formats a
//! schema may use (apiextensions' supported formats: unsupported ones are ignored).

use chrono::NaiveDate;
use regex::Regex;
use std::net::Ipv6Addr;
use std::sync::OnceLock;

/// A format the validator checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    BsonObjectId,
    Uri,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Isbn,
    Isbn10,
    Isbn13,
    CreditCard,
    Ssn,
    HexColor,
    RgbColor,
    Byte,
    Password,
    Date,
    Duration,
    DateTime,
    Quantity,
}

/// Formats supported since Kubernetes 1.0 (normalized: dashes removed).
const FORMATS_1_0: &[(&str, Format)] = &[
    ("bsonobjectid", Format::BsonObjectId),
    ("uri", Format::Uri),
    ("email", Format::Email),
    ("hostname", Format::Hostname),
    ("ipv4", Format::Ipv4),
    ("ipv6", Format::Ipv6),
    ("cidr", Format::Cidr),
    ("mac", Format::Mac),
    ("uuid", Format::Uuid),
    ("uuid3", Format::Uuid3),
    ("uuid4", Format::Uuid4),
    ("uuid5", Format::Uuid5),
    ("isbn", Format::Isbn),
    ("isbn10", Format::Isbn10),
    ("isbn13", Format::Isbn13),
    ("creditcard", Format::CreditCard),
    ("ssn", Format::Ssn),
    ("hexcolor", Format::HexColor),
    ("rgbcolor", Format::RgbColor),
    ("byte", Format::Byte),
    ("password", Format::Password),
    ("date", Format::Date),
    ("duration", Format::Duration),
    ("datetime", Format::DateTime),
    ("quantity", Format::Quantity),
];

/// Formats introduced later, with the Kubernetes minor version (1.x) that introduced them.
const VERSIONED_FORMATS: &[(&str, u32)] = &[("k8sshortname", 34), ("k8slongname", 34)];

fn normalize(format: &str) -> String {
    format.replace('-', "")
}

/// Whether a string format is recognized at Kubernetes `major.minor`.
pub fn supported_at(format: &str, major: u32, minor: u32) -> bool {
    let n = normalize(format);
    if FORMATS_1_0.iter().any(|(name, _)| *name == n) {
        return major >= 1;
    }
    VERSIONED_FORMATS
        .iter()
        .any(|(name, since)| *name == n && (major > 1 || (major == 1 && minor >= *since)))
}

/// The format the validator uses for a schema node: upstream strips formats unsupported by
/// every Kubernetes version (the 1.0 set for strings, int32/int64, float/double) to "".
/// Returns the kept format name (for the type check) and the string format to check.
pub fn effective(type_: &str, int_or_string: bool, format: &str) -> (String, Option<Format>) {
    if format.is_empty() {
        return (String::new(), None);
    }
    // int-or-string schemas have two types, which upstream treats like no type.
    let t = if int_or_string { "" } else { type_ };
    match t {
        "" | "string" => {
            let n = normalize(format);
            match FORMATS_1_0.iter().find(|(name, _)| *name == n) {
                Some((_, f)) => (format.to_string(), Some(*f)),
                None => (String::new(), None),
            }
        }
        "integer" if format == "int32" || format == "int64" => (format.to_string(), None),
        "number" if format == "float" || format == "double" => (format.to_string(), None),
        _ => (String::new(), None),
    }
}

fn re(cell: &'static OnceLock<Option<Regex>>, src: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(src).ok()).as_ref()
}

macro_rules! rx {
    ($name:ident, $src:expr) => {
        fn $name(s: &str) -> bool {
            static R: OnceLock<Option<Regex>> = OnceLock::new();
            re(&R, $src).is_some_and(|r| r.is_match(s))
        }
    };
}

rx!(
    hostname_re,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
);
rx!(
    uuid_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
rx!(
    uuid3_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
);
rx!(
    uuid4_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
rx!(
    uuid5_re,
    r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
rx!(
    credit_card_re,
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
);
rx!(ssn_re, r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
rx!(hexcolor_re, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
rx!(
    rgbcolor_re,
    r"^rgb\([\t\n\x0C\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\x0C\r ]*,[\t\n\x0C\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\x0C\r ]*,[\t\n\x0C\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\x0C\r ]*\)$"
);
rx!(
    base64_re,
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
rx!(
    datetime_time_re,
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
);
rx!(
    duration_re,
    r"^[\t\n\x0C\r ]*(?:[0-9]+[\t\n\x0C\r ]*[A-Za-zµ]+[\t\n\x0C\r ]*)+$"
);
rx!(
    quantity_re,
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
);
rx!(
    email_local_re,
    r#"^([A-Za-z0-9!#$%&'*+/=?^_`{|}~\x{80}-\x{10FFFF}-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\x{80}-\x{10FFFF}-]+)*|"([^"\\]|\\.)*")$"#
);
rx!(
    email_domain_re,
    r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\x{80}-\x{10FFFF}-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\x{80}-\x{10FFFF}-]+)*$"
);

/// Whether `s` is valid in `format`.
pub fn validates(format: Format, s: &str) -> bool {
    match format {
        Format::BsonObjectId => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        Format::Uri => is_request_uri(s),
        Format::Email => is_email(s),
        Format::Hostname => hostname_re(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63),
        Format::Ipv4 => parse_ip(s).is_some() && s.contains('.'),
        Format::Ipv6 => parse_ip(s).is_some() && s.contains(':'),
        Format::Cidr => is_cidr(s),
        Format::Mac => is_mac(s),
        Format::Uuid => uuid_re(s),
        Format::Uuid3 => uuid3_re(s),
        Format::Uuid4 => uuid4_re(s),
        Format::Uuid5 => uuid5_re(s),
        Format::Isbn => is_isbn10(s) || is_isbn13(s),
        Format::Isbn10 => is_isbn10(s),
        Format::Isbn13 => is_isbn13(s),
        Format::CreditCard => is_credit_card(s),
        Format::Ssn => s.len() == 11 && ssn_re(s),
        Format::HexColor => hexcolor_re(s),
        Format::RgbColor => rgbcolor_re(s),
        Format::Byte => base64_re(s),
        Format::Password => true,
        Format::Date => is_date(s),
        Format::Duration => is_duration(s),
        Format::DateTime => is_date_time(s),
        Format::Quantity => quantity_re(s),
    }
}

/// Go's `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// strfmt's `IsDateTime`: a date, a `t`, and a time with zone, split on the first `t`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) || !datetime_time_re(time) {
        return false;
    }
    let b = time.as_bytes();
    b[0..2] <= b"23"[..] && b[3..5] <= b"59"[..] && b[6..8] <= b"59"[..]
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, else a sequence of `<n> <unit>`.
fn is_duration(s: &str) -> bool {
    if crest_gofmt::go_parse_duration(s).is_ok() {
        return true;
    }
    if !duration_re(s) {
        return false;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    static MATCHER: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(m) = re(&MATCHER, r"(([0-9]+)[\t\n\x0C\r ]*([A-Za-zµ]+))") else {
        return false;
    };
    let mut ok = false;
    for c in m.captures_iter(s) {
        if c.get(2)
            .and_then(|d| d.as_str().parse::<i64>().ok())
            .is_none()
        {
            return false;
        }
        let unit = c
            .get(3)
            .map(|u| u.as_str().to_lowercase())
            .unwrap_or_default();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `net.ParseIP` with the sloppy IPv4 parsing Kubernetes uses (leading zeros allowed).
fn parse_ip(s: &str) -> Option<()> {
    if parse_ipv4_sloppy(s) {
        return Some(());
    }
    if s.contains('%') {
        return None;
    }
    s.parse::<Ipv6Addr>().ok().map(|_| ())
}

fn parse_ipv4_sloppy(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 8
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|n| n <= 255)
        })
}

fn is_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let bits = if parse_ipv4_sloppy(addr) {
        32
    } else if !addr.contains('%') && addr.parse::<Ipv6Addr>().is_ok() {
        128
    } else {
        return false;
    };
    !mask.is_empty()
        && mask.len() <= 8
        && mask.bytes().all(|b| b.is_ascii_digit())
        && mask.parse::<u32>().is_ok_and(|n| n <= bits)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx:..`, `xx-xx-..` or `xxxx.xxxx.xxxx`.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let hex = |x: &[u8]| x.iter().all(u8::is_ascii_hexdigit);
    if b[2] == b':' || b[2] == b'-' {
        if (b.len() + 1) % 3 != 0 {
            return false;
        }
        let n = (b.len() + 1) / 3;
        if !matches!(n, 6 | 8 | 20) {
            return false;
        }
        (0..n).all(|i| {
            let x = i * 3;
            hex(&b[x..x + 2]) && (i + 1 == n || b[x + 2] == b[2])
        })
    } else if b[4] == b'.' {
        if (b.len() + 1) % 5 != 0 {
            return false;
        }
        let n = 2 * (b.len() + 1) / 5;
        if !matches!(n, 6 | 8 | 20) {
            return false;
        }
        (0..n / 2).all(|i| {
            let x = i * 5;
            hex(&b[x..x + 4]) && (i + 1 == n / 2 || b[x + 4] == b'.')
        })
    } else {
        false
    }
}

fn isbn_sanitized(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r' | '-'))
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let s = isbn_sanitized(s);
    let b = s.as_bytes();
    if b.len() != 10
        || !b[..9].iter().all(u8::is_ascii_digit)
        || !(b[9].is_ascii_digit() || b[9] == b'X')
    {
        return false;
    }
    let mut sum: u32 = (0..9)
        .map(|i| (i as u32 + 1) * u32::from(b[i] - b'0'))
        .sum();
    sum += 10
        * if b[9] == b'X' {
            10
        } else {
            u32::from(b[9] - b'0')
        };
    sum % 11 == 0
}

fn is_isbn13(s: &str) -> bool {
    let s = isbn_sanitized(s);
    let b = s.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12)
        .map(|i| [1, 3][i % 2] * u32::from(b[i] - b'0'))
        .sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !credit_card_re(&digits) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for c in digits.bytes().rev() {
        let mut d = u32::from(c - b'0');
        if double {
            d *= 2;
            sum += if d >= 10 { d % 10 + 1 } else { d };
        } else {
            sum += d;
        }
        double = !double;
    }
    sum % 10 == 0
}

/// Go's `net/mail.ParseAddress` for the common forms: `addr@domain` or `Name <addr@domain>`.
fn is_email(s: &str) -> bool {
    let t = s.trim_matches([' ', '\t']);
    let addr = match (t.rfind('<'), t.ends_with('>')) {
        (Some(i), true) => &t[i + 1..t.len() - 1],
        (None, false) => t,
        _ => return false,
    };
    let Some(at) = addr.rfind('@') else {
        return false;
    };
    let (local, domain) = (&addr[..at], &addr[at + 1..]);
    !local.is_empty() && email_local_re(local) && email_domain_re(domain)
}

/// Go's `url.ParseRequestURI` acceptance: an absolute URI or an absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s == "*" {
        return true;
    }
    let mut scheme = "";
    let mut rest = s;
    for (i, c) in s.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' => {
                if i == 0 {
                    return false;
                }
                scheme = &s[..i];
                rest = &s[i + 1..];
                break;
            }
            _ => break,
        }
    }
    let rest = rest.split_once('?').map_or(rest, |(r, _)| r);
    if !rest.starts_with('/') {
        return !scheme.is_empty();
    }
    let path = if let (false, Some(auth)) = (scheme.is_empty(), rest.strip_prefix("//")) {
        let end = auth.find('/').unwrap_or(auth.len());
        if !valid_authority(&auth[..end]) {
            return false;
        }
        &auth[end..]
    } else {
        rest
    };
    valid_escapes(path)
}

fn valid_escapes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

fn valid_authority(auth: &str) -> bool {
    let host_port = match auth.rfind('@') {
        Some(i) => {
            let user = &auth[..i];
            if !user.bytes().all(|b| {
                b.is_ascii_alphanumeric() || b >= 0x80 || b"-._:~!$&'()*+,;=%@".contains(&b)
            }) {
                return false;
            }
            &auth[i + 1..]
        }
        None => auth,
    };
    let (host, port) = if let Some(h) = host_port.strip_prefix('[') {
        let Some(end) = h.find(']') else {
            return false;
        };
        (&h[..end], &h[end + 1..])
    } else {
        match host_port.rfind(':') {
            Some(i) => (&host_port[..i], &host_port[i..]),
            None => (host_port, ""),
        }
    };
    if !port.is_empty() {
        let Some(p) = port.strip_prefix(':') else {
            return false;
        };
        if !p.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    valid_escapes(host)
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || b >= 0x80 || b"-._~!$&'()*+,;=:[]<>\"%".contains(&b)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(validates(Format::DateTime, "2006-01-02T15:04:05Z"));
        assert!(validates(Format::DateTime, "2006-01-02T15:04:05.123+01:00"));
        assert!(!validates(Format::DateTime, "2006-01-02"));
        assert!(!validates(Format::DateTime, "2006-01-02T25:04:05Z"));
        assert!(validates(Format::Date, "2020-02-29"));
        assert!(!validates(Format::Date, "2021-02-29"));
        assert!(validates(Format::Ipv4, "010.1.1.1"));
        assert!(!validates(Format::Ipv4, "::1"));
        assert!(validates(Format::Ipv6, "::1"));
        assert!(validates(Format::Cidr, "10.0.0.0/8"));
        assert!(!validates(Format::Cidr, "10.0.0.0/33"));
        assert!(validates(Format::Mac, "00:1a:2b:3c:4d:5e"));
        assert!(validates(Format::Mac, "001a.2b3c.4d5e"));
        assert!(!validates(Format::Mac, "00:1a:2b:3c:4d"));
        assert!(validates(
            Format::Uuid,
            "123e4567-e89b-12d3-a456-426614174000"
        ));
        assert!(validates(Format::Byte, "aGVsbG8="));
        assert!(!validates(Format::Byte, "aGVsbG8"));
        assert!(validates(Format::Duration, "1h30m"));
        assert!(validates(Format::Duration, "3 days"));
        assert!(!validates(Format::Duration, "abc"));
        assert!(validates(Format::Email, "a.b@example.com"));
        assert!(validates(Format::Email, "Joe <joe@example.com>"));
        assert!(!validates(Format::Email, "joe"));
        assert!(validates(Format::Hostname, "example.com"));
        assert!(!validates(Format::Hostname, "-bad"));
        assert!(validates(Format::Uri, "https://example.com/a?b=c"));
        assert!(validates(Format::Uri, "/path"));
        assert!(!validates(Format::Uri, "relative"));
        assert!(validates(Format::Isbn10, "0-321-75104-3"));
        assert!(validates(Format::Isbn13, "978-0321751041"));
        assert!(validates(Format::CreditCard, "4111 1111 1111 1111"));
        assert!(validates(Format::Ssn, "123-45-6789"));
        assert!(validates(Format::Quantity, "10Gi"));
        assert!(!validates(Format::Quantity, "10Gb"));
        assert!(validates(Format::RgbColor, "rgb(255, 0, 3)"));
    }

    #[test]
    fn supported_versions() {
        assert!(supported_at("email", 1, 0));
        assert!(!supported_at("k8s-short-name", 1, 33));
        assert!(supported_at("k8sshortname", 1, 34));
        assert!(!supported_at("unknown", 1, 40));
        assert_eq!(effective("integer", false, "int32").0, "int32");
        assert_eq!(effective("integer", false, "foo").0, "");
        assert_eq!(
            effective("string", false, "date-time").1,
            Some(Format::DateTime)
        );
    }
}
