//! Kubernetes' IP and CIDR libraries (apiserver `library/ip.go`, `library/cidr.go`) over a port
//! of Go's `netip.ParseAddr`/`ParsePrefix` parsing and wording: no leading zeros in IPv4
//! fields, zones and IPv4-mapped IPv6 addresses refused as Kubernetes refuses them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::types::Type;
use crest_cel::value::{OpaqueValue, Value};

use super::go_quote;

pub const IP_TYPE: &str = "net.IP";
pub const CIDR_TYPE: &str = "net.CIDR";

fn addr_error(input: &str, msg: &str, at: Option<&str>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!(
            "ParseAddr({}): {msg} (at {})",
            go_quote(input),
            go_quote(at)
        ),
        _ => format!("ParseAddr({}): {msg}", go_quote(input)),
    }
}

/// IPv4 fields of `input[off..]` (Go's `parseIPv4Fields`).
fn parse_v4_fields(input: &str, off: usize, end: usize) -> Result<[u8; 4], String> {
    let s = &input.as_bytes()[off..end];
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0);
    for (i, &c) in s.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err(addr_error(
                    input,
                    "IPv4 field has octet with leading zero",
                    None,
                ));
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err(addr_error(input, "IPv4 field has value >255", None));
            }
        } else if c == b'.' {
            if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' {
                let at = String::from_utf8_lossy(&s[i..]);
                return Err(addr_error(
                    input,
                    "IPv4 field must have at least one digit",
                    Some(&at),
                ));
            }
            if pos == 3 {
                return Err(addr_error(input, "IPv4 address too long", None));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            let at = String::from_utf8_lossy(&s[i..]);
            return Err(addr_error(input, "unexpected character", Some(&at)));
        }
    }
    if pos < 3 {
        return Err(addr_error(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// Go's `parseIPv6`; the zone (after `%`) is returned apart.
fn parse_v6(input: &str) -> Result<(Ipv6Addr, String), String> {
    let (mut s, zone) = match input.split_once('%') {
        Some((_, "")) => return Err(addr_error(input, "zone must be a non-empty string", None)),
        Some((a, z)) => (a, z.to_string()),
        None => (input, String::new()),
    };
    let addr_len = s.len();
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok((Ipv6Addr::UNSPECIFIED, zone));
        }
    }
    let mut i = 0;
    while i < 16 {
        let b = s.as_bytes();
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < b.len() {
            let Some(d) = (b[off] as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + d;
            if off > 3 {
                return Err(addr_error(
                    input,
                    "each colon-separated field must have at most 4 hex digits",
                    Some(s),
                ));
            }
            if acc > 0xffff {
                return Err(addr_error(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_error(
                input,
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if off < b.len() && b[off] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_error(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let f = parse_v4_fields(input, addr_len - s.len(), addr_len)?;
            ip[i..i + 4].copy_from_slice(&f);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(
                input,
                "unexpected character, want colon",
                Some(s),
            ));
        } else if s.len() == 1 {
            return Err(addr_error(
                input,
                "colon must be followed by more characters",
                Some(s),
            ));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(e) = ellipsis else {
            return Err(addr_error(input, "address string too short", None));
        };
        let n = 16 - i;
        for j in (e..i).rev() {
            ip[j + n] = ip[j];
        }
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(
            input,
            "the :: must expand to at least one field of zeros",
            Some(s),
        ));
    }
    Ok((Ipv6Addr::from(ip), zone))
}

/// Go's `netip.ParseAddr`: the address and its zone.
fn parse_addr(s: &str) -> Result<(IpAddr, String), String> {
    for c in s.bytes() {
        match c {
            b'.' => {
                return parse_v4_fields(s, 0, s.len())
                    .map(|f| (IpAddr::V4(Ipv4Addr::from(f)), String::new()))
            }
            b':' => return parse_v6(s).map(|(a, z)| (IpAddr::V6(a), z)),
            b'%' => return Err(addr_error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_error(s, "unable to parse IP", None))
}

fn is_4in6(a: &IpAddr) -> bool {
    matches!(a, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// Kubernetes' `parseIPAddr`.
pub fn parse_ip(raw: &str) -> Result<IpAddr, String> {
    let (addr, zone) = parse_addr(raw).map_err(|e| {
        format!(
            "IP Address {} parse error during conversion from string: {e}",
            go_quote(raw)
        )
    })?;
    if !zone.is_empty() {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            go_quote(raw)
        ));
    }
    if is_4in6(&addr) {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        ));
    }
    Ok(addr)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub addr: IpAddr,
    pub bits: u8,
}

fn prefix_error(input: &str, msg: &str) -> String {
    format!("netip.ParsePrefix({}): {msg}", go_quote(input))
}

/// Go's `netip.ParsePrefix` and Kubernetes' `parseCIDR`.
pub fn parse_cidr(raw: &str) -> Result<Cidr, String> {
    let wrap =
        |e: String| format!("network address parse error during conversion from string: {e}");
    let Some(i) = raw.rfind('/') else {
        return Err(wrap(prefix_error(raw, "no '/'")));
    };
    let (addr, zone) = parse_addr(&raw[..i]).map_err(|e| wrap(prefix_error(raw, &e)))?;
    if addr.is_ipv6() && !zone.is_empty() {
        return Err(wrap(prefix_error(
            raw,
            "IPv6 zones cannot be present in a prefix",
        )));
    }
    let bits_str = &raw[i + 1..];
    let bad = || {
        wrap(prefix_error(
            raw,
            &format!("bad bits after slash: {}", go_quote(bits_str)),
        ))
    };
    if bits_str.len() > 1 && !(b'1'..=b'9').contains(&bits_str.as_bytes()[0]) {
        return Err(bad());
    }
    let bits: i64 = super::go_atoi(bits_str).ok_or_else(bad)?;
    let max = if addr.is_ipv6() { 128 } else { 32 };
    if !(0..=max).contains(&bits) {
        return Err(wrap(prefix_error(raw, "prefix length out of range")));
    }
    if is_4in6(&addr) {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        ));
    }
    Ok(Cidr {
        addr,
        bits: bits as u8,
    })
}

fn mask(addr: IpAddr, bits: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(bits))
            };
            IpAddr::V4(Ipv4Addr::from(u32::from(a) & m))
        }
        IpAddr::V6(a) => {
            let m = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(bits))
            };
            IpAddr::V6(Ipv6Addr::from(u128::from(a) & m))
        }
    }
}

impl Cidr {
    pub fn masked(&self) -> Cidr {
        Cidr {
            addr: mask(self.addr, self.bits),
            bits: self.bits,
        }
    }

    pub fn contains(&self, ip: &IpAddr) -> bool {
        self.addr.is_ipv4() == ip.is_ipv4() && mask(*ip, self.bits) == mask(self.addr, self.bits)
    }

    /// Upstream: the other prefix's address masked to this length equals this network, and
    /// this prefix is no longer than the other.
    pub fn contains_cidr(&self, o: &Cidr) -> bool {
        self.addr.is_ipv4() == o.addr.is_ipv4()
            && mask(self.addr, self.bits) == mask(o.addr, self.bits)
            && self.bits <= o.bits
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip(pub IpAddr);

impl OpaqueValue for Ip {
    fn type_name(&self) -> &str {
        IP_TYPE
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<Ip>() == Some(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl OpaqueValue for Cidr {
    fn type_name(&self) -> &str {
        CIDR_TYPE
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<Cidr>() == Some(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn ip_ty() -> Type {
    Type::Opaque(IP_TYPE.into(), vec![])
}

pub fn cidr_ty() -> Type {
    Type::Opaque(CIDR_TYPE.into(), vec![])
}

fn no_overload() -> EvalError {
    EvalError::new("no such overload")
}

fn as_ip(v: &Value) -> Option<IpAddr> {
    match v {
        Value::Opaque(o) => o.as_any().downcast_ref::<Ip>().map(|i| i.0),
        _ => None,
    }
}

fn as_cidr(v: &Value) -> Option<Cidr> {
    match v {
        Value::Opaque(o) => o.as_any().downcast_ref::<Cidr>().copied(),
        _ => None,
    }
}

fn string_fn(
    id: &str,
    result: Type,
    f: impl Fn(&str) -> Result<Value, EvalError> + Send + Sync + 'static,
) -> Overload {
    Overload::global(id, vec![Type::String], result).implement(move |a| match a {
        [Value::String(s)] => f(s),
        _ => Err(no_overload()),
    })
}

fn ip_member(id: &str, result: Type, f: fn(IpAddr) -> Value) -> Overload {
    Overload::member(id, vec![ip_ty()], result).implement(move |a| match a {
        [v] => as_ip(v).map(f).ok_or_else(no_overload),
        _ => Err(no_overload()),
    })
}

/// A CIDR member overload; `other` is the argument type (`Type::Null`: none).
fn cidr_member(
    id: &str,
    other: Type,
    result: Type,
    f: fn(Cidr, &Value) -> Result<Value, EvalError>,
) -> Overload {
    let params = if other == Type::Null {
        vec![cidr_ty()]
    } else {
        vec![cidr_ty(), other]
    };
    Overload::member(id, params, result).implement(move |a| match a {
        [c, rest @ ..] => f(
            as_cidr(c).ok_or_else(no_overload)?,
            rest.first().unwrap_or(&Value::Null),
        ),
        _ => Err(no_overload()),
    })
}

fn is_link_local_multicast(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v) => v.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v) => v.segments()[0] & 0xff0f == 0xff02,
    }
}

fn is_link_local_unicast(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v) => v.octets()[..2] == [169, 254],
        IpAddr::V6(v) => v.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// Go's `Addr.IsGlobalUnicast`.
fn is_global_unicast(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v) => {
            !v.is_unspecified()
                && !v.is_broadcast()
                && !v.is_loopback()
                && !v.is_multicast()
                && !is_link_local_unicast(a)
        }
        IpAddr::V6(v) => {
            !v.is_unspecified()
                && !v.is_loopback()
                && !v.is_multicast()
                && !is_link_local_unicast(a)
        }
    }
}

pub fn ip_library() -> Library {
    let wrap_ip = |a: IpAddr| Value::Opaque(Arc::new(Ip(a)));
    Library::new("kubernetes.net.ip")
        .function(
            "ip",
            [
                string_fn("string_to_ip", ip_ty(), move |s| {
                    parse_ip(s).map(wrap_ip).map_err(EvalError::new)
                }),
                cidr_member("cidr_ip", Type::Null, ip_ty(), |c, _| {
                    Ok(Value::Opaque(Arc::new(Ip(c.addr))))
                }),
            ],
        )
        .function(
            "family",
            [ip_member("ip_family", Type::Int, |a| {
                Value::Int(if a.is_ipv4() { 4 } else { 6 })
            })],
        )
        .function(
            "ip.isCanonical",
            [string_fn("ip_is_canonical", Type::Bool, |s| {
                let a = parse_ip(s).map_err(EvalError::new)?;
                Ok(Value::Bool(a.to_string() == s))
            })],
        )
        .function(
            "isUnspecified",
            [ip_member("ip_is_unspecified", Type::Bool, |a| {
                Value::Bool(a.is_unspecified())
            })],
        )
        .function(
            "isLoopback",
            [ip_member("ip_is_loopback", Type::Bool, |a| {
                Value::Bool(a.is_loopback())
            })],
        )
        .function(
            "isLinkLocalMulticast",
            [ip_member("ip_is_link_local_multicast", Type::Bool, |a| {
                Value::Bool(is_link_local_multicast(a))
            })],
        )
        .function(
            "isLinkLocalUnicast",
            [ip_member("ip_is_link_local_unicast", Type::Bool, |a| {
                Value::Bool(is_link_local_unicast(a))
            })],
        )
        .function(
            "isGlobalUnicast",
            [ip_member("ip_is_global_unicast", Type::Bool, |a| {
                Value::Bool(is_global_unicast(a))
            })],
        )
        .function(
            "isIP",
            [string_fn("is_ip", Type::Bool, |s| {
                Ok(Value::Bool(parse_ip(s).is_ok()))
            })],
        )
        .function(
            "string",
            [
                Overload::global("ip_to_string", vec![ip_ty()], Type::String).implement(
                    |a| match a {
                        [v] => as_ip(v)
                            .map(|a| Value::string(&a.to_string()))
                            .ok_or_else(no_overload),
                        _ => Err(no_overload()),
                    },
                ),
                Overload::global("cidr_to_string", vec![cidr_ty()], Type::String).implement(|a| {
                    match a {
                        [v] => as_cidr(v)
                            .map(|c| Value::string(&c.to_string()))
                            .ok_or_else(no_overload),
                        _ => Err(no_overload()),
                    }
                }),
            ],
        )
}

/// Upstream's `stringToCIDR` wraps `parseCIDR`'s already wrapped error once more.
fn string_to_cidr(s: &str) -> Result<Cidr, EvalError> {
    parse_cidr(s).map_err(|e| {
        EvalError::new(format!(
            "network address parse error during conversion from string: {e}"
        ))
    })
}

pub fn cidr_library() -> Library {
    let wrap = |c: Cidr| Value::Opaque(Arc::new(c));
    let t = Type::Bool;
    Library::new("net.cidr")
        .function(
            "cidr",
            [string_fn("string_to_cidr", cidr_ty(), move |s| {
                string_to_cidr(s).map(wrap)
            })],
        )
        .function(
            "containsIP",
            [
                // A string that does not parse makes upstream report "no such overload".
                cidr_member(
                    "cidr_contains_ip_string",
                    Type::String,
                    t.clone(),
                    |c, v| match v {
                        Value::String(s) => match parse_ip(s) {
                            Ok(a) => Ok(Value::Bool(c.contains(&a))),
                            Err(_) => Err(no_overload()),
                        },
                        _ => Err(no_overload()),
                    },
                ),
                cidr_member("cidr_contains_ip_ip", ip_ty(), t.clone(), |c, v| {
                    Ok(Value::Bool(c.contains(&as_ip(v).ok_or_else(no_overload)?)))
                }),
            ],
        )
        .function(
            "containsCIDR",
            [
                cidr_member(
                    "cidr_contains_cidr_string",
                    Type::String,
                    t.clone(),
                    |c, v| match v {
                        Value::String(s) => {
                            let o = string_to_cidr(s)?;
                            Ok(Value::Bool(c.contains_cidr(&o)))
                        }
                        _ => Err(no_overload()),
                    },
                ),
                cidr_member("cidr_contains_cidr", cidr_ty(), t, |c, v| {
                    let o = as_cidr(v).ok_or_else(no_overload)?;
                    Ok(Value::Bool(c.contains_cidr(&o)))
                }),
            ],
        )
        .function(
            "prefixLength",
            [cidr_member(
                "cidr_prefix_length",
                Type::Null,
                Type::Int,
                |c, _| Ok(Value::Int(i64::from(c.bits))),
            )],
        )
        .function(
            "masked",
            [cidr_member("cidr_masked", Type::Null, cidr_ty(), |c, _| {
                Ok(Value::Opaque(Arc::new(c.masked())))
            })],
        )
        .function(
            "isCIDR",
            [string_fn("is_cidr", Type::Bool, |s| {
                Ok(Value::Bool(parse_cidr(s).is_ok()))
            })],
        )
}
