//! core/v1 Endpoints: `SetDefaults_Endpoints`, `ValidateEndpoints`, and the strategy's
//! `Canonicalize` (`endpoints.RepackSubsets`, which kube-apiserver applies to every write, not
//! only the endpoints controller).

use crate::network::{
    int_of, list_of, port_num_errors, str_of, validate_dns1123_label, validate_ip,
    validate_node_name, validate_non_special_ip, validate_protocol, validate_qualified_name,
};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// `SetDefaults_Endpoints`: every port's protocol defaults to TCP.
pub fn set_defaults(obj: &mut Value) {
    let Some(subsets) = obj.get_mut("subsets").and_then(Value::as_array_mut) else {
        return;
    };
    for ss in subsets {
        let Some(ports) = ss.get_mut("ports").and_then(Value::as_array_mut) else {
            continue;
        };
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            if p.get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                p.insert("protocol".into(), "TCP".into());
            }
        }
    }
}

/// `ValidateEndpoints` without the ObjectMeta part (`validateEndpointSubsets`).
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let path = FieldPath::new("subsets");
    for (i, ss) in list_of(obj, "subsets").iter().enumerate() {
        let p = path.index(i);
        let (ready, not_ready) = (list_of(ss, "addresses"), list_of(ss, "notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                &p,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (j, a) in ready.iter().enumerate() {
            validate_address(a, &p.child("addresses").index(j), &mut errs);
        }
        for (j, a) in not_ready.iter().enumerate() {
            validate_address(a, &p.child("notReadyAddresses").index(j), &mut errs);
        }
        let ports = list_of(ss, "ports");
        for (j, port) in ports.iter().enumerate() {
            validate_port(port, ports.len() > 1, &p.child("ports").index(j), &mut errs);
        }
    }
    errs
}

/// `ValidateEndpointsUpdate`: the new object's validation (ObjectMeta's update checks are the
/// registry's).
pub fn validate_update(new: &Value, _old: &Value) -> FieldErrors {
    validate(new)
}

/// `validateEndpointAddress`.
fn validate_address(a: &Value, path: &FieldPath, errs: &mut FieldErrors) {
    let ip = str_of(a, "ip");
    validate_ip(ip, &path.child("ip"), errs);
    let host = str_of(a, "hostname");
    if !host.is_empty() {
        validate_dns1123_label(host, &path.child("hostname"), errs);
    }
    if let Some(node) = a.get("nodeName").and_then(Value::as_str) {
        validate_node_name(node, &path.child("nodeName"), errs);
    }
    validate_non_special_ip(ip, &path.child("ip"), true, errs);
}

/// `validateEndpointPort`.
fn validate_port(port: &Value, require_name: bool, path: &FieldPath, errs: &mut FieldErrors) {
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        validate_dns1123_label(name, &path.child("name"), errs);
    }
    let num = int_of(port, "port");
    for m in port_num_errors(num) {
        errs.push(FieldError::invalid(&path.child("port"), num, m));
    }
    validate_protocol(port.get("protocol"), &path.child("protocol"), errs);
    if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
        validate_qualified_name(app, &path.child("appProtocol"), errs);
    }
}

/// The addresses offering a port (indices into the addresses seen), each with its readiness.
type AddressSet = Vec<(usize, bool)>;

/// The endpoints strategy's `Canonicalize`: `RepackSubsets` (pkg/api/endpoints), run after
/// validation on every create and update. Each port is mapped to the addresses that offer it
/// (an address is one per IP and `targetRef.uid`, the first occurrence's fields kept; not
/// ready in any subset means not ready for that port); ports offered by the same addresses
/// form one subset. Addresses are sorted by IP, then `targetRef.uid`; ports and subsets by the
/// MD5 of their spew dump (`hashutil.DeepHashObject`, as upstream orders them). Addresses
/// without ports and ports without addresses go; no subsets left means no `subsets`.
pub fn repack_subsets(obj: &mut Value) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    let subsets = match o.remove("subsets") {
        Some(Value::Array(s)) => s,
        _ => vec![],
    };
    // Addresses by (ip, uid); ports by their key, each with its addresses and readiness.
    let mut addrs: Vec<Value> = vec![];
    let mut addr_index: HashMap<(String, String), usize> = HashMap::new();
    let mut ports: Vec<(Value, HashMap<usize, bool>)> = vec![];
    let mut port_index: HashMap<(String, i64, String), usize> = HashMap::new();
    for (si, ss) in subsets.iter().enumerate() {
        for (pi, port) in list_of(ss, "ports").iter().enumerate() {
            // A port with an appProtocol is keyed by its pointer upstream: never merged.
            let key = match port.get("appProtocol").filter(|v| !v.is_null()) {
                Some(_) => (format!("\u{0}{si}/{pi}"), 0, String::new()),
                None => (
                    str_of(port, "name").to_string(),
                    int_of(port, "port"),
                    str_of(port, "protocol").to_string(),
                ),
            };
            for (list, ready) in [("addresses", true), ("notReadyAddresses", false)] {
                for a in list_of(ss, list) {
                    let akey = (
                        str_of(a, "ip").to_string(),
                        a.pointer("/targetRef/uid")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    );
                    let ai = *addr_index.entry(akey).or_insert_with(|| {
                        addrs.push(a.clone());
                        addrs.len() - 1
                    });
                    let pi = *port_index.entry(key.clone()).or_insert_with(|| {
                        ports.push((port.clone(), HashMap::new()));
                        ports.len() - 1
                    });
                    // Not ready trumps ready.
                    let was = ports[pi].1.entry(ai).or_insert(ready);
                    *was = *was && ready;
                }
            }
        }
    }
    // Ports offered by the same addresses (with the same readiness) share a subset.
    let mut groups: Vec<(AddressSet, Vec<Value>)> = vec![];
    let mut group_index: HashMap<AddressSet, usize> = HashMap::new();
    for (port, set) in ports {
        let mut set: AddressSet = set.into_iter().collect();
        set.sort_unstable();
        match group_index.get(&set) {
            Some(&g) => groups[g].1.push(port),
            None => {
                group_index.insert(set.clone(), groups.len());
                groups.push((set, vec![port]));
            }
        }
    }
    let mut repacked: Vec<(Vec<u8>, Value)> = groups
        .into_iter()
        .map(|(set, mut ports)| {
            let pick = |ready: bool| {
                let mut list: Vec<&Value> = set
                    .iter()
                    .filter(|(_, r)| *r == ready)
                    .map(|(i, _)| &addrs[*i])
                    .collect();
                list.sort_by(|a, b| less_address(a, b));
                list.into_iter().cloned().collect::<Vec<Value>>()
            };
            let (ready, not_ready) = (pick(true), pick(false));
            ports.sort_by_cached_key(|p| crate::md5::digest(spew_port(p, true).as_bytes()));
            let dump = spew_subset(&ready, &not_ready, &ports);
            let mut ss = Map::new();
            if !ready.is_empty() {
                ss.insert("addresses".into(), Value::Array(ready));
            }
            if !not_ready.is_empty() {
                ss.insert("notReadyAddresses".into(), Value::Array(not_ready));
            }
            ss.insert("ports".into(), Value::Array(ports));
            (
                crate::md5::digest(dump.as_bytes()).to_vec(),
                Value::Object(ss),
            )
        })
        .collect();
    repacked.sort_by(|a, b| a.0.cmp(&b.0));
    if !repacked.is_empty() {
        o.insert(
            "subsets".into(),
            Value::Array(repacked.into_iter().map(|(_, s)| s).collect()),
        );
    }
}

/// `LessEndpointAddress`: by IP (as bytes), then by `targetRef.uid`, no targetRef first.
fn less_address(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let by_ip = str_of(a, "ip").as_bytes().cmp(str_of(b, "ip").as_bytes());
    if by_ip != Ordering::Equal {
        return by_ip;
    }
    let uid = |v: &Value| {
        v.get("targetRef")
            .filter(|r| !r.is_null())
            .map(|r| str_of(r, "uid").to_string())
    };
    match (uid(a), uid(b)) {
        (None, None) => Ordering::Equal,
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

/// spew's `%#v` of a `*string` field's value: `(*string)<nil>` or `(*string)value`.
fn spew_string_ptr(v: Option<&Value>) -> String {
    match v.filter(|v| !v.is_null()) {
        Some(s) => format!("(*string){}", s.as_str().unwrap_or("")),
        None => "(*string)<nil>".into(),
    }
}

/// spew's `%#v` of a `core.EndpointPort` (`typed`: with its type, as at the top level).
fn spew_port(p: &Value, typed: bool) -> String {
    format!(
        "{}{{Name:(string){} Port:(int32){} Protocol:(core.Protocol){} AppProtocol:{}}}",
        if typed { "(core.EndpointPort)" } else { "" },
        str_of(p, "name"),
        int_of(p, "port"),
        str_of(p, "protocol"),
        spew_string_ptr(p.get("appProtocol")),
    )
}

/// spew's `%#v` of a `core.EndpointAddress` as a slice element (no type).
fn spew_address(a: &Value) -> String {
    let target = match a.get("targetRef").filter(|r| !r.is_null()) {
        Some(r) => format!(
            "(*core.ObjectReference){{Kind:(string){} Namespace:(string){} Name:(string){} UID:(types.UID){} APIVersion:(string){} ResourceVersion:(string){} FieldPath:(string){}}}",
            str_of(r, "kind"),
            str_of(r, "namespace"),
            str_of(r, "name"),
            str_of(r, "uid"),
            str_of(r, "apiVersion"),
            str_of(r, "resourceVersion"),
            str_of(r, "fieldPath"),
        ),
        None => "(*core.ObjectReference)<nil>".into(),
    };
    format!(
        "{{IP:(string){} Hostname:(string){} NodeName:{} TargetRef:{}}}",
        str_of(a, "ip"),
        str_of(a, "hostname"),
        spew_string_ptr(a.get("nodeName")),
        target
    )
}

/// spew's `%#v` of a slice field: `([]T)<nil>` when empty (upstream builds them by append, so
/// an empty one is nil), else `([]T)[a b]`.
fn spew_slice(ty: &str, items: Vec<String>) -> String {
    if items.is_empty() {
        return format!("([]{ty})<nil>");
    }
    format!("([]{ty})[{}]", items.join(" "))
}

/// spew's `%#v` of a `core.EndpointSubset`, the input of its sort hash.
fn spew_subset(ready: &[Value], not_ready: &[Value], ports: &[Value]) -> String {
    let addresses = |list: &[Value]| {
        spew_slice(
            "core.EndpointAddress",
            list.iter().map(spew_address).collect(),
        )
    };
    format!(
        "(core.EndpointSubset){{Addresses:{} NotReadyAddresses:{} Ports:{}}}",
        addresses(ready),
        addresses(not_ready),
        spew_slice(
            "core.EndpointPort",
            ports.iter().map(|p| spew_port(p, false)).collect()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_messages() {
        let mut ep = json!({"subsets": [
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 8443}]},
            {"ports": [{"port": 0, "name": "a"}, {"port": 1, "protocol": "ICMP"}]},
            {"addresses": [{"ip": "nope", "hostname": "A"}], "notReadyAddresses": [{"ip": "0.0.0.0"}]},
        ]});
        set_defaults(&mut ep);
        assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");
        let msgs: Vec<String> = validate(&ep).iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            [
                "subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`",
                "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "subsets[1].ports[1].name: Required value",
                "subsets[1].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "subsets[2].addresses[0].ip: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "subsets[2].addresses[0].hostname: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[2].addresses[0].ip: Invalid value: \"nope\": must be a valid IP address",
                "subsets[2].notReadyAddresses[0].ip: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
            ]
        );
    }

    fn hex(d: [u8; 16]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn spew_dumps_and_their_hashes() {
        // The digests were computed apart from this code (Python's hashlib over the dumps).
        let port = json!({"name": "http", "port": 80, "protocol": "TCP"});
        let dump = spew_port(&port, true);
        assert_eq!(
            dump,
            "(core.EndpointPort){Name:(string)http Port:(int32)80 Protocol:(core.Protocol)TCP AppProtocol:(*string)<nil>}"
        );
        assert_eq!(
            hex(crate::md5::digest(dump.as_bytes())),
            "76747a3a56cb5d96e2b0d34ea6ee337f"
        );
        let app = json!({"port": 1, "protocol": "UDP", "appProtocol": "dns"});
        assert_eq!(
            spew_port(&app, false),
            "{Name:(string) Port:(int32)1 Protocol:(core.Protocol)UDP AppProtocol:(*string)dns}"
        );
        let a = |ip: &str| json!({"ip": ip});
        let dump = spew_subset(
            &[a("10.0.0.1")],
            &[a("10.0.0.2")],
            &[json!({"name": "https", "port": 443, "protocol": "TCP"})],
        );
        assert_eq!(
            dump,
            "(core.EndpointSubset){Addresses:([]core.EndpointAddress)[{IP:(string)10.0.0.1 Hostname:(string) NodeName:(*string)<nil> TargetRef:(*core.ObjectReference)<nil>}] NotReadyAddresses:([]core.EndpointAddress)[{IP:(string)10.0.0.2 Hostname:(string) NodeName:(*string)<nil> TargetRef:(*core.ObjectReference)<nil>}] Ports:([]core.EndpointPort)[{Name:(string)https Port:(int32)443 Protocol:(core.Protocol)TCP AppProtocol:(*string)<nil>}]}"
        );
        assert_eq!(
            hex(crate::md5::digest(dump.as_bytes())),
            "3b59c96df9f7dcd9a4b512c1fe6f2785"
        );
        let target = json!({"ip": "10.0.0.3", "hostname": "h", "nodeName": "n",
            "targetRef": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u1"}});
        assert_eq!(
            spew_address(&target),
            "{IP:(string)10.0.0.3 Hostname:(string)h NodeName:(*string)n TargetRef:(*core.ObjectReference){Kind:(string)Pod Namespace:(string)default Name:(string)p UID:(types.UID)u1 APIVersion:(string) ResourceVersion:(string) FieldPath:(string)}}"
        );
    }

    #[test]
    fn repacked_as_upstream() {
        let http = json!({"name": "http", "port": 80, "protocol": "TCP"});
        let https = json!({"name": "https", "port": 443, "protocol": "TCP"});
        let mut ep = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.2"}, {"ip": "10.0.0.1"}], "ports": [http, https]},
            {"notReadyAddresses": [{"ip": "10.0.0.2", "hostname": "later"}], "ports": [https]},
        ]});
        repack_subsets(&mut ep);
        // https: 10.0.0.2 is not ready in one subset, so not ready; http keeps both ready. The
        // subset hashes order them (3b59c96d... < cad65b87...).
        assert_eq!(
            ep["subsets"],
            json!([
                {"addresses": [{"ip": "10.0.0.1"}], "notReadyAddresses": [{"ip": "10.0.0.2"}], "ports": [https]},
                {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [http]},
            ])
        );
        // Ports of one subset in hash order (6206a1cd... < 76747a3a...); repacking is stable.
        let mut ep =
            json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [http, https]}]});
        repack_subsets(&mut ep);
        assert_eq!(ep["subsets"][0]["ports"], json!([https, http]));
        let again = ep.clone();
        repack_subsets(&mut ep);
        assert_eq!(ep, again);
        // The same IP with another targetRef uid is another address, after the one without.
        let mut ep = json!({"subsets": [{"addresses": [
            {"ip": "10.0.0.1", "targetRef": {"kind": "Pod", "name": "a", "uid": "u"}},
            {"ip": "10.0.0.1"}], "ports": [http]}]});
        repack_subsets(&mut ep);
        assert_eq!(ep["subsets"][0]["addresses"][0], json!({"ip": "10.0.0.1"}));
        assert_eq!(
            ep["subsets"][0]["addresses"].as_array().map(Vec::len),
            Some(2)
        );
        // Addresses without ports go, and with them the subsets.
        let mut ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]});
        repack_subsets(&mut ep);
        assert!(ep.get("subsets").is_none(), "{ep}");
    }
}
