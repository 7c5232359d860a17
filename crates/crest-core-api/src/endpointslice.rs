//! discovery.k8s.io/v1 EndpointSlice: `SetDefaults_EndpointPort`, `ValidateEndpointSlice`,
//! `ValidateEndpointSliceUpdate` (pkg/apis/discovery/validation).

use crate::network::{
    list_of, parse_ip, str_of, validate_dns1123_label, validate_label_map, validate_node_name,
    validate_non_special_ip, validate_qualified_name, PORT_PROTOCOLS,
};
use crest_api::validation::{is_dns1123_subdomain, FIELD_IMMUTABLE};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::Value;
use std::collections::HashSet;
use std::net::IpAddr;

const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ENDPOINTS: usize = 1000;
const MAX_ZONE_HINTS: usize = 8;

/// `SetDefaults_EndpointPort`: name `""` and protocol TCP when unset.
pub fn set_defaults(obj: &mut Value) {
    let Some(ports) = obj.get_mut("ports").and_then(Value::as_array_mut) else {
        return;
    };
    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
        if p.get("name").is_none_or(Value::is_null) {
            p.insert("name".into(), "".into());
        }
        if p.get("protocol").is_none_or(Value::is_null) {
            p.insert("protocol".into(), "TCP".into());
        }
    }
}

/// `ValidateEndpointSlice` without the ObjectMeta part.
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let address_type = str_of(obj, "addressType");
    match address_type {
        "" => errs.push(FieldError::required(&FieldPath::new("addressType"), "")),
        t if ADDRESS_TYPES.contains(&t) => {}
        t => errs.push(FieldError::not_supported(
            &FieldPath::new("addressType"),
            t,
            &ADDRESS_TYPES,
        )),
    }
    validate_endpoints(list_of(obj, "endpoints"), address_type, &mut errs);
    validate_ports(list_of(obj, "ports"), &mut errs);
    errs
}

fn validate_endpoints(endpoints: &[Value], address_type: &str, errs: &mut FieldErrors) {
    let path = FieldPath::new("endpoints");
    if endpoints.len() > MAX_ENDPOINTS {
        errs.push(FieldError::too_many(&path, endpoints.len(), MAX_ENDPOINTS));
        return;
    }
    for (i, ep) in endpoints.iter().enumerate() {
        let p = path.index(i);
        let addr_path = p.child("addresses");
        let addresses = list_of(ep, "addresses");
        if addresses.is_empty() {
            errs.push(FieldError::required(
                &addr_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errs.push(FieldError::too_many(
                &addr_path,
                addresses.len(),
                MAX_ADDRESSES,
            ));
        }
        for (j, a) in addresses.iter().enumerate() {
            let a = a.as_str().unwrap_or("");
            let ap = addr_path.index(j);
            match address_type {
                "IPv4" => {
                    if !matches!(parse_ip(a), Some(IpAddr::V4(_))) {
                        errs.push(FieldError::invalid(&ap, a, "must be a valid IPv4 address"));
                    }
                    validate_non_special_ip(a, &ap, true, errs);
                }
                "IPv6" => {
                    if !matches!(parse_ip(a), Some(IpAddr::V6(_))) {
                        errs.push(FieldError::invalid(&ap, a, "must be a valid IPv6 address"));
                    }
                    validate_non_special_ip(a, &ap, true, errs);
                }
                "FQDN" => validate_fqdn(a, &ap, errs),
                _ => {}
            }
        }
        if let Some(node) = ep.get("nodeName").and_then(Value::as_str) {
            validate_node_name(node, &p.child("nodeName"), errs);
        }
        if let Some(topology) = ep.get("deprecatedTopology").and_then(Value::as_object) {
            let tp = p.child("deprecatedTopology");
            if topology.len() > MAX_TOPOLOGY_LABELS {
                errs.push(FieldError::too_many(
                    &tp,
                    topology.len(),
                    MAX_TOPOLOGY_LABELS,
                ));
            }
            validate_label_map(topology, &tp, errs);
        }
        if let Some(host) = ep.get("hostname").and_then(Value::as_str) {
            validate_dns1123_label(host, &p.child("hostname"), errs);
        }
        if let Some(hints) = ep.get("hints").filter(|h| !h.is_null()) {
            let zp = p.child("hints").child("forZones");
            let zones = list_of(hints, "forZones");
            if zones.len() > MAX_ZONE_HINTS {
                errs.push(FieldError::too_many(&zp, zones.len(), MAX_ZONE_HINTS));
            } else {
                let mut seen = HashSet::new();
                for (j, z) in zones.iter().enumerate() {
                    let name = str_of(z, "name");
                    if !seen.insert(name) {
                        errs.push(FieldError::duplicate(&zp.index(j), name));
                    } else {
                        for m in crest_api::validation::is_valid_label_value(name) {
                            errs.push(FieldError::invalid(&zp.index(j).child("name"), name, m));
                        }
                    }
                }
            }
        }
    }
}

/// `IsFullyQualifiedDomainName`: the name without a trailing dot must be a DNS-1123
/// subdomain of at least two labels, each a DNS-1123 label; errors name the stripped name (or
/// the failing label), their messages joined by ",".
fn validate_fqdn(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let n = name.strip_suffix('.').unwrap_or(name);
    let sub = is_dns1123_subdomain(n);
    if !sub.is_empty() {
        errs.push(FieldError::invalid(path, n, sub.join(",")));
        return;
    }
    if n.split('.').count() < 2 {
        errs.push(FieldError::invalid(
            path,
            n,
            "should be a domain with at least two segments separated by dots",
        ));
        return;
    }
    for label in n.split('.') {
        let e = crest_api::validation::is_dns1123_label(label);
        if !e.is_empty() {
            errs.push(FieldError::invalid(path, label, e.join(",")));
            return;
        }
    }
}

fn validate_ports(ports: &[Value], errs: &mut FieldErrors) {
    let path = FieldPath::new("ports");
    if ports.len() > MAX_PORTS {
        errs.push(FieldError::too_many(&path, ports.len(), MAX_PORTS));
        return;
    }
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = path.index(i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            validate_dns1123_label(name, &p.child("name"), errs);
        }
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&p.child("name"), name));
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errs.push(FieldError::required(&p.child("protocol"), "")),
            Some(proto) if !PORT_PROTOCOLS.contains(&proto) => errs.push(
                FieldError::not_supported(&p.child("protocol"), proto, &PORT_PROTOCOLS),
            ),
            _ => {}
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            validate_qualified_name(app, &p.child("appProtocol"), errs);
        }
    }
}

/// `ValidateEndpointSliceUpdate` without the ObjectMeta part: as on create, and `addressType`
/// is immutable.
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate(new);
    let (n, o) = (str_of(new, "addressType"), str_of(old, "addressType"));
    if n != o {
        errs.push(FieldError::invalid(
            &FieldPath::new("addressType"),
            n,
            FIELD_IMMUTABLE,
        ));
    }
    errs
}

/// `warnOnDeprecatedAddressType`: the warning of a create with FQDN endpoints.
pub fn warnings_on_create(obj: &Value) -> Vec<String> {
    if str_of(obj, "addressType") == "FQDN" {
        return vec!["spec.addressType: FQDN endpoints are deprecated".into()];
    }
    vec![]
}

/// `dropTopologyOnV1`: a write through v1 drops each endpoint's `deprecatedTopology` (unless an
/// update leaves the endpoints as they were), first copying its hostname label into an unset
/// `nodeName` when that node name was already in the previous object's topology.
pub fn drop_topology_on_v1(new: &mut Value, old: Option<&Value>) {
    if let Some(old) = old {
        if old.get("endpoints") == new.get("endpoints") {
            return;
        }
    }
    let previous: Vec<String> = old
        .map(|o| list_of(o, "endpoints"))
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.pointer("/deprecatedTopology/kubernetes.io~1hostname"))
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let Some(endpoints) = new.get_mut("endpoints").and_then(Value::as_array_mut) else {
        return;
    };
    for ep in endpoints.iter_mut().filter_map(Value::as_object_mut) {
        let host = ep
            .get("deprecatedTopology")
            .and_then(|t| t.get("kubernetes.io/hostname"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(h) = host {
            let no_node = ep.get("nodeName").is_none_or(Value::is_null);
            if no_node
                && previous.contains(&h)
                && crest_api::validation::is_dns1123_subdomain(&h).is_empty()
            {
                ep.insert("nodeName".into(), h.into());
            }
        }
        ep.remove("deprecatedTopology");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn fqdn_addresses_as_is_fully_qualified_domain_name() {
        let check = |name: &str| {
            let mut errs = vec![];
            validate_fqdn(name, &FieldPath::new("a"), &mut errs);
            messages(&errs)
        };
        assert!(check("example.com.").is_empty());
        assert!(check("Example.COM")[0]
            .starts_with("a: Invalid value: \"Example.COM\": a lowercase RFC 1123 subdomain"));
        assert_eq!(
            check("localhost."),
            ["a: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots"]
        );
        let long = format!("{}.com", "a".repeat(64));
        assert!(check(&long)[0].starts_with(&format!(
            "a: Invalid value: \"{}\": must be no more than 63 characters",
            "a".repeat(64)
        )));
    }

    #[test]
    fn defaults_and_messages() {
        let mut s = json!({
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1", "fd00::1"]}, {"addresses": []}],
            "ports": [{"port": 443}, {"port": 80, "protocol": "ICMP"}],
        });
        set_defaults(&mut s);
        assert_eq!(
            s["ports"][0],
            json!({"name": "", "port": 443, "protocol": "TCP"})
        );
        assert_eq!(
            messages(&validate(&s)),
            [
                "endpoints[0].addresses[1]: Invalid value: \"fd00::1\": must be a valid IPv4 address",
                "endpoints[1].addresses: Required value: must contain at least 1 address",
                "ports[1].name: Duplicate value: \"\"",
                "ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
            ]
        );
        let bad = json!({"addressType": "IP"});
        assert_eq!(
            messages(&validate(&bad)),
            ["addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""]
        );
        let old = json!({"addressType": "IPv6"});
        let new = json!({"addressType": "IPv4"});
        assert_eq!(
            messages(&validate_update(&new, &old)),
            ["addressType: Invalid value: \"IPv4\": field is immutable"]
        );
    }
}
