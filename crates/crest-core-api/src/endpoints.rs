//! core/v1 Endpoints: `SetDefaults_Endpoints`, `ValidateEndpoints`.

use crate::network::{
    int_of, list_of, port_num_errors, str_of, validate_dns1123_label, validate_ip,
    validate_node_name, validate_non_special_ip, validate_protocol, validate_qualified_name,
};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::Value;

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
}
