//! Checks the network kinds (Service, Endpoints, EndpointSlice) share, worded as apimachinery's
//! `util/validation` and core validation's helpers word them.

use crest_api::validation::{is_dns1123_label, is_qualified_name, is_valid_label_value};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{Map, Value};
use std::net::IpAddr;

/// `supportedPortProtocols`, sorted as `sets.List` prints them.
pub const PORT_PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// The string at `key` of an object (empty when absent or not a string).
pub(crate) fn str_of<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The array at `key` (empty when absent).
pub(crate) fn list_of<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The integer at `key` (0 when absent, as Go's zero value).
pub(crate) fn int_of(obj: &Value, key: &str) -> i64 {
    obj.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// `IsValidPortNum`'s message for a number outside 1..65535.
pub fn port_num_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        vec![]
    } else {
        vec!["must be between 1 and 65535, inclusive".into()]
    }
}

/// `IsValidPortName`: an IANA service name.
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errs = vec![];
    if port.len() > 15 {
        errs.push(crest_api::validation::max_len_error(15));
    }
    let charset = !port.is_empty()
        && port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !charset {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// `ValidatePortNumOrName` of an IntOrString.
pub fn validate_port_num_or_name(port: &Value, path: &FieldPath, errs: &mut FieldErrors) {
    match port {
        Value::String(s) => {
            for m in port_name_errors(s) {
                errs.push(FieldError::invalid(path, s.as_str(), m));
            }
        }
        v => {
            let n = v.as_i64().unwrap_or(0);
            for m in port_num_errors(n) {
                errs.push(FieldError::invalid(path, n, m));
            }
        }
    }
}

/// `ValidateDNS1123Label`.
pub fn validate_dns1123_label(v: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for m in is_dns1123_label(v) {
        errs.push(FieldError::invalid(path, v, m));
    }
}

/// `ValidateQualifiedName`.
pub fn validate_qualified_name(v: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for m in is_qualified_name(v) {
        errs.push(FieldError::invalid(path, v, m));
    }
}

/// `ValidateLabels` of a string map (`spec.selector`, `deprecatedTopology`): errors at the
/// map's own path, as upstream reports them.
pub fn validate_label_map(map: &Map<String, Value>, path: &FieldPath, errs: &mut FieldErrors) {
    for (k, v) in map {
        for m in is_qualified_name(k) {
            errs.push(FieldError::invalid(path, k.as_str(), m));
        }
        let v = v.as_str().unwrap_or("");
        for m in is_valid_label_value(v) {
            errs.push(FieldError::invalid(path, v, m));
        }
    }
}

/// `ValidateNodeName` (a DNS subdomain) at `path`.
pub fn validate_node_name(v: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for m in crest_api::validation::is_dns1123_subdomain(v) {
        errs.push(FieldError::invalid(path, v, m));
    }
}

/// Go's `netutils.ParseIPSloppy`: an IPv4 or IPv6 address (IPv4 parts may have leading zeros).
pub fn parse_ip(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    // Sloppy IPv4: four decimal parts, leading zeros allowed (as the legacy parser does).
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::from(octets))
}

/// `IsValidIP`.
pub fn validate_ip(v: &str, path: &FieldPath, errs: &mut FieldErrors) -> bool {
    if parse_ip(v).is_none() {
        errs.push(FieldError::invalid(
            path,
            v,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
        return false;
    }
    true
}

/// Whether the address is IPv6 (`netutils.IsIPv6String`).
pub fn is_ipv6(v: &str) -> bool {
    matches!(parse_ip(v), Some(IpAddr::V6(_)))
}

/// Whether Crest refuses loopback endpoint addresses as kube-apiserver does. It does not: a
/// Crest API server has no pod network, so the webhooks and other backends its Services route
/// to run on the host, where the loopback address is the one to reach them by.
const ALLOW_LOOPBACK_ENDPOINTS: bool = true;

/// `ValidateNonSpecialIP` (Endpoints, EndpointSlices, external IPs): unspecified, link-local
/// and link-local multicast addresses are refused. Loopback addresses are refused for external
/// IPs; for endpoints only when [`ALLOW_LOOPBACK_ENDPOINTS`] is off.
pub fn validate_non_special_ip(v: &str, path: &FieldPath, endpoint: bool, errs: &mut FieldErrors) {
    let Some(ip) = parse_ip(v) else {
        errs.push(FieldError::invalid(path, v, "must be a valid IP address"));
        return;
    };
    let (unspecified, loopback, link_local, ll_multicast) = match ip {
        IpAddr::V4(a) => (
            a.is_unspecified(),
            a.is_loopback(),
            a.is_link_local(),
            a.octets()[..3] == [224, 0, 0],
        ),
        IpAddr::V6(a) => {
            let s = a.segments();
            (
                a.is_unspecified(),
                a.is_loopback(),
                (s[0] & 0xffc0) == 0xfe80,
                (s[0] & 0xff0f) == 0xff02,
            )
        }
    };
    if unspecified {
        errs.push(FieldError::invalid(
            path,
            v,
            format!("may not be unspecified ({v})"),
        ));
    }
    if loopback && !(endpoint && ALLOW_LOOPBACK_ENDPOINTS) {
        errs.push(FieldError::invalid(
            path,
            v,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(FieldError::invalid(
            path,
            v,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if ll_multicast {
        errs.push(FieldError::invalid(
            path,
            v,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

/// A protocol: required, one of TCP, UDP, SCTP.
pub fn validate_protocol(v: Option<&Value>, path: &FieldPath, errs: &mut FieldErrors) {
    match v.and_then(Value::as_str).unwrap_or("") {
        "" => errs.push(FieldError::required(path, "")),
        p if PORT_PROTOCOLS.contains(&p) => {}
        p => errs.push(FieldError::not_supported(path, p, &PORT_PROTOCOLS)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names() {
        assert!(port_name_errors("http").is_empty());
        assert!(port_name_errors("h2-c").is_empty());
        assert_eq!(
            port_name_errors("80"),
            ["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name_errors("-A--"),
            [
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must contain at least one letter (a-z)",
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen"
            ]
        );
    }

    #[test]
    fn ips() {
        assert_eq!(
            parse_ip("10.0.0.01").map(|i| i.to_string()),
            Some("10.0.0.1".into())
        );
        assert!(parse_ip("10.0.0").is_none());
        let mut errs = vec![];
        validate_non_special_ip("0.0.0.0", &FieldPath::new("ip"), true, &mut errs);
        validate_non_special_ip("169.254.1.1", &FieldPath::new("ip"), true, &mut errs);
        validate_non_special_ip("127.0.0.1", &FieldPath::new("ip"), true, &mut errs);
        validate_non_special_ip("127.0.0.1", &FieldPath::new("ext"), false, &mut errs);
        let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            [
                "ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
                "ip: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "ext: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
            ]
        );
    }
}
