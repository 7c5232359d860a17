//! core/v1 Service: `SetDefaults_Service`, the cluster-IP fields the service REST storage fills
//! in, `ValidateService`, `ValidateServiceUpdate`, `ValidateServiceStatusUpdate`.
//!
//! Crest has no cluster network: it allocates no cluster IPs, node ports or load balancers. A
//! Service is stored as written; what kube-apiserver's allocator would add beyond an address is
//! filled in as a single-stack IPv4 cluster (with dual-stack support) fills it: `ipFamilyPolicy`
//! (`SingleStack`, or `RequireDualStack` for a headless Service without selector) and
//! `ipFamilies` (from the cluster IPs given, else `IPv4`, both families for dual stack).
//! `clusterIP` stays unset unless the client sets it (`None` for headless Services, or an
//! address of its choosing): selector-less Services with manually managed Endpoints, which is
//! what Services in Crest are for, need no virtual IP.

use crate::network::{
    int_of, is_ipv6, list_of, parse_ip, str_of, validate_dns1123_label, validate_ip,
    validate_label_map, validate_non_special_ip, validate_port_num_or_name, validate_protocol,
    validate_qualified_name,
};
use crest_api::validation::{is_dns1035_label, is_dns1123_subdomain};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

const SESSION_AFFINITIES: [&str; 2] = ["ClientIP", "None"];
const SERVICE_TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const INTERNAL_TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
const EXTERNAL_TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
const IP_FAMILIES: [&str; 2] = ["IPv4", "IPv6"];
const IP_FAMILY_POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];
const LB_IP_MODES: [&str; 2] = ["Proxy", "VIP"];
/// `v1.DefaultClientIPServiceAffinitySeconds`.
const DEFAULT_CLIENT_IP_TIMEOUT: i64 = 10800;
const MAX_CLIENT_IP_TIMEOUT: i64 = 86400;

/// `ValidateServiceName`: a DNS-1035 label (`prefix`: a generateName, trailing dash masked).
pub fn name_validator(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        return is_dns1035_label(&crest_api::validation::mask_trailing_dash(name));
    }
    is_dns1035_label(name)
}

fn spec(obj: &Value) -> &Value {
    static EMPTY: Value = Value::Null;
    obj.get("spec").unwrap_or(&EMPTY)
}

fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let o = obj.as_object_mut()?;
    let s = o.entry("spec").or_insert_with(|| json!({}));
    if !s.is_object() {
        *s = json!({});
    }
    s.as_object_mut()
}

fn service_type(obj: &Value) -> &str {
    str_of(spec(obj), "type")
}

/// `isHeadlessService`: the first cluster IP is `None`.
fn is_headless(obj: &Value) -> bool {
    list_of(spec(obj), "clusterIPs")
        .first()
        .and_then(Value::as_str)
        == Some("None")
}

fn has_selector(obj: &Value) -> bool {
    spec(obj)
        .get("selector")
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

/// `service.ExternallyAccessible`: LoadBalancer, NodePort, or ClusterIP with external IPs.
fn externally_accessible(obj: &Value) -> bool {
    match service_type(obj) {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => !list_of(spec(obj), "externalIPs").is_empty(),
        _ => false,
    }
}

/// `SetDefaults_Service`.
pub fn set_defaults(obj: &mut Value) {
    let lb = service_type(obj) == "LoadBalancer";
    // The type is defaulted first: a Service without one but with external IPs is an
    // externally accessible ClusterIP Service.
    let accessible = match service_type(obj) {
        "" => !list_of(spec(obj), "externalIPs").is_empty(),
        _ => externally_accessible(obj),
    };
    let Some(s) = spec_mut(obj) else {
        return;
    };
    let affinity = s
        .get("sessionAffinity")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if affinity.is_empty() || affinity == "None" {
        s.insert("sessionAffinity".into(), "None".into());
        s.remove("sessionAffinityConfig");
    } else if affinity == "ClientIP"
        && s.get("sessionAffinityConfig")
            .and_then(|c| c.pointer("/clientIP/timeoutSeconds"))
            .is_none_or(Value::is_null)
    {
        s.insert(
            "sessionAffinityConfig".into(),
            json!({"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}}),
        );
    }
    let ty = match s.get("type").and_then(Value::as_str) {
        None | Some("") => {
            s.insert("type".into(), "ClusterIP".into());
            "ClusterIP".to_string()
        }
        Some(t) => t.to_string(),
    };
    if let Some(ports) = s.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            if p.get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                p.insert("protocol".into(), "TCP".into());
            }
            let unset = match p.get("targetPort") {
                None | Some(Value::Null) => true,
                Some(Value::String(t)) => t.is_empty(),
                Some(v) => v.as_i64() == Some(0),
            };
            if unset {
                let port = p.get("port").cloned().unwrap_or(json!(0));
                p.insert("targetPort".into(), port);
            }
        }
    }
    if (accessible || ty == "LoadBalancer" || ty == "NodePort")
        && s.get("externalTrafficPolicy")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
    {
        s.insert("externalTrafficPolicy".into(), "Cluster".into());
    }
    if s.get("internalTrafficPolicy").is_none_or(Value::is_null)
        && matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        s.insert("internalTrafficPolicy".into(), "Cluster".into());
    }
    if ty == "LoadBalancer"
        && s.get("allocateLoadBalancerNodePorts")
            .is_none_or(Value::is_null)
    {
        s.insert("allocateLoadBalancerNodePorts".into(), true.into());
    }
    if lb || ty == "LoadBalancer" {
        default_ip_modes(obj);
    }
}

/// LoadBalancer ingress points with an IP get `ipMode: VIP`.
fn default_ip_modes(obj: &mut Value) {
    if let Some(ingress) = obj
        .pointer_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut)
    {
        for i in ingress.iter_mut().filter_map(Value::as_object_mut) {
            let has_ip = i
                .get("ip")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty());
            if has_ip && i.get("ipMode").is_none_or(Value::is_null) {
                i.insert("ipMode".into(), "VIP".into());
            }
        }
    }
}

/// What the REST storage does before a create validates (upstream's PrepareForCreate,
/// `normalizeClusterIPs` and the allocator's `initIPFamilyFields`, without allocating): status
/// cleared, `clusterIPs` from `clusterIP`, IP family fields filled in.
pub fn prepare_create(obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("status".into(), json!({"loadBalancer": {}}));
    }
    set_defaults(obj);
    let Some(s) = spec_mut(obj) else {
        return;
    };
    let ip = s
        .get("clusterIP")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let ips_empty = s
        .get("clusterIPs")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if !ip.is_empty() && ips_empty {
        s.insert("clusterIPs".into(), json!([ip]));
    }
    init_ip_families(obj);
}

/// The allocator's IP family defaults, for the types that have cluster IPs.
fn init_ip_families(obj: &mut Value) {
    if service_type(obj) == "ExternalName" {
        return;
    }
    let headless = is_headless(obj);
    let selector = has_selector(obj);
    let ips: Vec<String> = list_of(spec(obj), "clusterIPs")
        .iter()
        .filter_map(Value::as_str)
        .filter(|ip| *ip != "None")
        .map(str::to_string)
        .collect();
    let Some(s) = spec_mut(obj) else {
        return;
    };
    if s.get("ipFamilyPolicy").is_none_or(Value::is_null) {
        let families = s
            .get("ipFamilies")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let policy = if (headless && !selector) || families > 1 || ips.len() > 1 {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        s.insert("ipFamilyPolicy".into(), policy.into());
    }
    let families_empty = s
        .get("ipFamilies")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if families_empty {
        let mut families: Vec<&str> = ips
            .iter()
            .map(|ip| if is_ipv6(ip) { "IPv6" } else { "IPv4" })
            .collect();
        if families.is_empty() {
            families.push("IPv4");
        }
        let dual = s.get("ipFamilyPolicy").and_then(Value::as_str) != Some("SingleStack");
        if dual && families.len() == 1 {
            families.push(if families[0] == "IPv4" {
                "IPv6"
            } else {
                "IPv4"
            });
        }
        s.insert("ipFamilies".into(), json!(families));
    }
}

/// What an update keeps from the stored Service (upstream's PrepareForUpdate,
/// `dropTypeDependentFields` and the REST update's carrying over of allocated fields): status
/// from `old`; cluster IPs and IP families a client left out (e.g. `kubectl apply` of a
/// manifest without them) carried over; fields a change to ExternalName makes meaningless
/// dropped when the client did not change them.
pub fn prepare_update(new: &mut Value, old: &Value) {
    if let Some(o) = new.as_object_mut() {
        match old.get("status") {
            Some(st) => o.insert("status".into(), st.clone()),
            None => o.remove("status"),
        };
    }
    set_defaults(new);
    let old_spec = spec(old).clone();
    let (old_type, new_type) = (service_type(old).to_string(), service_type(new).to_string());
    let Some(s) = spec_mut(new) else {
        return;
    };
    let unset = |s: &Map<String, Value>, k: &str| match s.get(k) {
        None | Some(Value::Null) => true,
        Some(Value::String(v)) => v.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    };
    if old_type != "ExternalName" && new_type != "ExternalName" {
        for k in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if unset(s, k) {
                if let Some(v) = old_spec.get(k) {
                    s.insert(k.into(), v.clone());
                }
            }
        }
    }
    // dropTypeDependentFields: what the old type needed and the new one does not, when the
    // client left it as it was.
    let same = |s: &Map<String, Value>, k: &str| s.get(k) == old_spec.get(k);
    if new_type == "ExternalName" && old_type != "ExternalName" {
        for k in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if same(s, k) {
                s.remove(k);
            }
        }
    }
    let node_ports = |t: &str| matches!(t, "NodePort" | "LoadBalancer");
    if node_ports(&old_type) && !node_ports(&new_type) {
        let old_ports = list_of(&old_spec, "ports");
        if let Some(ports) = s.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                let was = old_ports
                    .iter()
                    .find(|o| {
                        o.get("port") == p.get("port") && o.get("protocol") == p.get("protocol")
                    })
                    .and_then(|o| o.get("nodePort"));
                if p.get("nodePort") == was {
                    p.remove("nodePort");
                }
            }
        }
        if same(s, "healthCheckNodePort") {
            s.remove("healthCheckNodePort");
        }
    }
    if old_type == "LoadBalancer" && new_type != "LoadBalancer" {
        for k in ["allocateLoadBalancerNodePorts", "loadBalancerClass"] {
            if same(s, k) {
                s.remove(k);
            }
        }
    }
    let accessible_type = |t: &str, spec: &Map<String, Value>| match t {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => spec
            .get("externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty()),
        _ => false,
    };
    let old_accessible = old_spec
        .as_object()
        .is_some_and(|o| accessible_type(&old_type, o));
    if old_accessible && !accessible_type(&new_type, s) && same(s, "externalTrafficPolicy") {
        s.remove("externalTrafficPolicy");
    }
    let lb_status_goes = old_type == "LoadBalancer" && new_type != "LoadBalancer";
    let ip = s
        .get("clusterIP")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if !ip.is_empty() && unset(s, "clusterIPs") {
        s.insert("clusterIPs".into(), json!([ip]));
    }
    if lb_status_goes {
        if let Some(st) = new.get_mut("status").and_then(Value::as_object_mut) {
            st.insert("loadBalancer".into(), json!({}));
        }
    }
    init_ip_families(new);
}

/// What a `/status` write gets: the defaults of the status it sends.
pub fn prepare_status_update(new: &mut Value) {
    if service_type(new) == "LoadBalancer" {
        default_ip_modes(new);
    }
}

/// `ValidateService` without the ObjectMeta part.
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let s = spec(obj);
    let sp = FieldPath::new("spec");
    let ty = service_type(obj);
    let headless = is_headless(obj);
    let ports = list_of(s, "ports");
    if ports.is_empty() && !headless && ty != "ExternalName" {
        errs.push(FieldError::required(&sp.child("ports"), ""));
    }
    let first_ip = list_of(s, "clusterIPs")
        .first()
        .and_then(Value::as_str)
        .unwrap_or("");
    match ty {
        "LoadBalancer" | "NodePort" if headless => errs.push(FieldError::invalid(
            &sp.child("clusterIPs").index(0),
            first_ip,
            format!("may not be set to 'None' for {ty} services"),
        )),
        "ExternalName" => {
            if !list_of(s, "clusterIPs").is_empty() {
                errs.push(FieldError::forbidden(
                    &sp.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            if !list_of(s, "ipFamilies").is_empty() {
                errs.push(FieldError::forbidden(
                    &sp.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            if s.get("ipFamilyPolicy").is_some_and(|v| !v.is_null()) {
                errs.push(FieldError::forbidden(
                    &sp.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            let name = str_of(s, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(FieldError::required(&sp.child("externalName"), ""));
            } else {
                for m in is_dns1123_subdomain(cname) {
                    errs.push(FieldError::invalid(&sp.child("externalName"), cname, m));
                }
            }
        }
        _ => {}
    }
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        validate_service_port(
            port,
            ports.len() > 1,
            &mut names,
            &sp.child("ports").index(i),
            &mut errs,
        );
    }
    if let Some(sel) = s.get("selector").and_then(Value::as_object) {
        validate_label_map(sel, &sp.child("selector"), &mut errs);
    }
    match str_of(s, "sessionAffinity") {
        "" => errs.push(FieldError::required(&sp.child("sessionAffinity"), "")),
        "ClientIP" => validate_client_ip_config(
            s.get("sessionAffinityConfig"),
            &sp.child("sessionAffinityConfig"),
            &mut errs,
        ),
        "None" => {
            if s.get("sessionAffinityConfig").is_some_and(|v| !v.is_null()) {
                errs.push(FieldError::forbidden(
                    &sp.child("sessionAffinityConfig"),
                    "must not be set when session affinity is None",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            &sp.child("sessionAffinity"),
            other,
            &SESSION_AFFINITIES,
        )),
    }
    validate_cluster_ips_related(obj, &mut errs);
    for (i, ip) in list_of(s, "externalIPs").iter().enumerate() {
        let ip = ip.as_str().unwrap_or("");
        let path = sp.child("externalIPs").index(i);
        if validate_ip(ip, &path, &mut errs) {
            validate_non_special_ip(ip, &path, false, &mut errs);
        }
    }
    match ty {
        "" => errs.push(FieldError::required(&sp.child("type"), "")),
        t if SERVICE_TYPES.contains(&t) => {}
        t => errs.push(FieldError::not_supported(
            &sp.child("type"),
            t,
            &SERVICE_TYPES,
        )),
    }
    if ty == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if int_of(port, "nodePort") != 0 {
                errs.push(FieldError::forbidden(
                    &sp.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let np = int_of(port, "nodePort");
        if np != 0 && !node_ports.insert((str_of(port, "protocol"), np)) {
            errs.push(FieldError::duplicate(
                &sp.child("ports").index(i).child("nodePort"),
                np,
            ));
        }
    }
    let mut seen = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let (proto, num) = (str_of(port, "protocol"), int_of(port, "port"));
        if !seen.insert((proto, num)) {
            // Go's %#v of the `core.ServicePort{Protocol, Port}` key.
            let mut e = FieldError::duplicate(&sp.child("ports").index(i), Value::Null);
            e.value = None;
            e.value_repr = Some(format!(
                "core.ServicePort{{Name:\"\", Protocol:{proto:?}, AppProtocol:(*string)(nil), Port:{num}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}"
            ));
            errs.push(e);
        }
    }
    let ranges = list_of(s, "loadBalancerSourceRanges");
    if !ranges.is_empty() {
        let path = sp.child("LoadBalancerSourceRanges");
        if ty != "LoadBalancer" {
            errs.push(FieldError::forbidden(
                &path,
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
        for (i, r) in ranges.iter().enumerate() {
            let r = r.as_str().unwrap_or("").trim();
            if !valid_cidr(r) {
                errs.push(FieldError::invalid(
                    &path.index(i),
                    r,
                    "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                ));
            }
        }
    }
    let alloc = s
        .get("allocateLoadBalancerNodePorts")
        .filter(|v| !v.is_null());
    if alloc.is_some() && ty != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            &sp.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if ty == "LoadBalancer" && alloc.is_none() {
        errs.push(FieldError::required(
            &FieldPath::new("allocateLoadBalancerNodePorts"),
            "",
        ));
    }
    if let Some(class) = s.get("loadBalancerClass").and_then(Value::as_str) {
        if ty != "LoadBalancer" {
            errs.push(FieldError::forbidden(
                &sp.child("loadBalancerClass"),
                "may only be used when `type` is 'LoadBalancer'",
            ));
        } else {
            validate_qualified_name(class, &sp.child("loadBalancerClass"), &mut errs);
        }
    }
    validate_external_traffic_policy(obj, &mut errs);
    match s.get("internalTrafficPolicy").and_then(Value::as_str) {
        None if matches!(ty, "NodePort" | "LoadBalancer" | "ClusterIP") => {
            errs.push(FieldError::required(&sp.child("internalTrafficPolicy"), ""))
        }
        Some(p) if !INTERNAL_TRAFFIC_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
            &sp.child("internalTrafficPolicy"),
            p,
            &INTERNAL_TRAFFIC_POLICIES,
        )),
        _ => {}
    }
    if let Some(d) = s.get("trafficDistribution").and_then(Value::as_str) {
        if d != "PreferClose" {
            errs.push(FieldError::not_supported(
                &sp.child("trafficDistribution"),
                d,
                &["PreferClose"],
            ));
        }
    }
    errs
}

fn valid_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match parse_ip(ip) {
        Some(std::net::IpAddr::V4(_)) => bits <= 32,
        Some(std::net::IpAddr::V6(_)) => bits <= 128,
        None => false,
    }
}

/// `validateServicePort`.
fn validate_service_port<'a>(
    port: &'a Value,
    require_name: bool,
    names: &mut HashSet<&'a str>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = str_of(port, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        validate_dns1123_label(name, &path.child("name"), errs);
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&path.child("name"), name));
        }
    }
    let num = int_of(port, "port");
    for m in crate::network::port_num_errors(num) {
        errs.push(FieldError::invalid(&path.child("port"), num, m));
    }
    validate_protocol(port.get("protocol"), &path.child("protocol"), errs);
    validate_port_num_or_name(
        port.get("targetPort").unwrap_or(&Value::Null),
        &path.child("targetPort"),
        errs,
    );
    if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
        validate_qualified_name(app, &path.child("appProtocol"), errs);
    }
}

/// `validateClientIPAffinityConfig`.
fn validate_client_ip_config(config: Option<&Value>, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(config) = config.filter(|c| !c.is_null()) else {
        errs.push(FieldError::required(
            path,
            "when session affinity type is ClientIP",
        ));
        return;
    };
    let Some(client) = config.get("clientIP").filter(|c| !c.is_null()) else {
        errs.push(FieldError::required(
            &path.child("clientIP"),
            "when session affinity type is ClientIP",
        ));
        return;
    };
    let tpath = path.child("clientIP").child("timeoutSeconds");
    match client.get("timeoutSeconds").and_then(Value::as_i64) {
        None => errs.push(FieldError::required(
            &tpath,
            "when session affinity type is ClientIP",
        )),
        Some(t) if t <= 0 || t > MAX_CLIENT_IP_TIMEOUT => errs.push(FieldError::invalid(
            &tpath,
            t,
            format!("must be greater than 0 and less than {MAX_CLIENT_IP_TIMEOUT}"),
        )),
        _ => {}
    }
}

/// `validateServiceExternalTrafficPolicy`.
fn validate_external_traffic_policy(obj: &Value, errs: &mut FieldErrors) {
    let s = spec(obj);
    let sp = FieldPath::new("spec");
    let policy = str_of(s, "externalTrafficPolicy");
    if !externally_accessible(obj) {
        if !policy.is_empty() {
            errs.push(FieldError::invalid(
                &sp.child("externalTrafficPolicy"),
                policy,
                "may only be set for externally-accessible services",
            ));
        }
    } else if policy.is_empty() {
        errs.push(FieldError::required(&sp.child("externalTrafficPolicy"), ""));
    } else if !EXTERNAL_TRAFFIC_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported(
            &sp.child("externalTrafficPolicy"),
            policy,
            &EXTERNAL_TRAFFIC_POLICIES,
        ));
    }
    let needs_health_check = service_type(obj) == "LoadBalancer" && policy == "Local";
    let hc = int_of(s, "healthCheckNodePort");
    if !needs_health_check {
        if hc != 0 {
            errs.push(FieldError::invalid(
                &sp.child("healthCheckNodePort"),
                hc,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if hc != 0 {
        // Upstream allocates one when unset (and then requires it); Crest allocates no node
        // ports, so an unset one stays unset.
        for m in crate::network::port_num_errors(hc) {
            errs.push(FieldError::invalid(&sp.child("healthCheckNodePort"), hc, m));
        }
    }
}

/// A string slice as field errors print it (Go's `%#v`): `[]string{"a", "b"}`.
fn string_slice_repr(items: &[Value]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|v| format!("{:?}", v.as_str().unwrap_or("")))
        .collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

fn invalid_list(path: &FieldPath, items: &[Value], detail: &str) -> FieldError {
    FieldError::invalid_repr(path, &string_slice_repr(items), detail)
}

/// `ValidateServiceClusterIPsRelatedFields`.
fn validate_cluster_ips_related(obj: &Value, errs: &mut FieldErrors) {
    if service_type(obj) == "ExternalName" {
        return;
    }
    let s = spec(obj);
    let sp = FieldPath::new("spec");
    let ips_path = sp.child("clusterIPs");
    let ips = list_of(s, "clusterIPs");
    let ip = str_of(s, "clusterIP");
    if !ip.is_empty() {
        if ips.is_empty() {
            errs.push(FieldError::required(&ips_path, ""));
        } else if ips[0].as_str() != Some(ip) {
            errs.push(invalid_list(
                &ips_path,
                ips,
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(invalid_list(
            &ips_path,
            ips,
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let families = list_of(s, "ipFamilies");
    let mut seen = HashSet::new();
    for (i, f) in families.iter().enumerate() {
        let f = f.as_str().unwrap_or("");
        let path = sp.child("ipFamilies").index(i);
        if !IP_FAMILIES.contains(&f) {
            errs.push(FieldError::not_supported(&path, f, &IP_FAMILIES));
        }
        if !seen.insert(f) {
            errs.push(FieldError::duplicate(&path, f));
        }
    }
    if let Some(p) = s.get("ipFamilyPolicy").and_then(Value::as_str) {
        if !IP_FAMILY_POLICIES.contains(&p) {
            errs.push(FieldError::not_supported(
                &sp.child("ipFamilyPolicy"),
                p,
                &IP_FAMILY_POLICIES,
            ));
        }
    }
    let mut invalid = false;
    for (i, v) in ips.iter().enumerate() {
        let v = v.as_str().unwrap_or("");
        if i == 0 && v == "None" {
            if ips.len() > 1 {
                invalid = true;
                errs.push(invalid_list(
                    &ips_path,
                    ips,
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        invalid |= !validate_ip(v, &ips_path.index(i), errs);
    }
    if ips.len() > 2 {
        errs.push(invalid_list(&ips_path, ips, "may only hold up to 2 values"));
    }
    if invalid {
        return;
    }
    if ips.len() > 1 {
        let v6: Vec<bool> = ips
            .iter()
            .map(|v| is_ipv6(v.as_str().unwrap_or("")))
            .collect();
        let dual = ips.len() == 2 && v6[0] != v6[1];
        if !dual {
            errs.push(invalid_list(
                &ips_path,
                ips,
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(obj) {
        for (i, (ip, family)) in ips.iter().zip(families).enumerate() {
            let ip = ip.as_str().unwrap_or("");
            let v6 = is_ipv6(ip);
            match family.as_str() {
                Some("IPv4") if v6 => errs.push(FieldError::invalid(
                    &ips_path.index(i),
                    ip,
                    format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                )),
                Some("IPv6") if !v6 => errs.push(FieldError::invalid(
                    &ips_path.index(i),
                    ip,
                    format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                )),
                _ => {}
            }
        }
    }
}

/// `ValidateServiceUpdate` without the ObjectMeta part: a cluster IP or the primary IP family
/// may not change once set (unless the Service is or becomes ExternalName); then the new
/// object as on create.
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = vec![];
    let external = service_type(new) == "ExternalName" || service_type(old) == "ExternalName";
    if !external {
        let (n, o) = (
            list_of(spec(new), "clusterIPs"),
            list_of(spec(old), "clusterIPs"),
        );
        for (i, (nv, ov)) in n.iter().zip(o).enumerate() {
            if nv != ov {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec").child("clusterIPs").index(i),
                    nv.clone(),
                    "may not change once set",
                ));
            }
        }
        let (n, o) = (
            list_of(spec(new), "ipFamilies"),
            list_of(spec(old), "ipFamilies"),
        );
        if let (Some(nf), Some(of)) = (n.first(), o.first()) {
            if nf != of {
                // Upstream reports the whole list, printed as Go's `%#v` of it.
                let items: Vec<String> = n
                    .iter()
                    .map(|f| format!("{:?}", f.as_str().unwrap_or("")))
                    .collect();
                errs.push(FieldError::invalid_repr(
                    &FieldPath::new("spec").child("ipFamilies").index(0),
                    &format!("[]core.IPFamily{{{}}}", items.join(", ")),
                    "may not change once set",
                ));
            }
        }
    }
    // loadBalancerClass is immutable while the Service stays a LoadBalancer.
    if service_type(old) == "LoadBalancer" && service_type(new) == "LoadBalancer" {
        let (n, o) = (
            spec(new).get("loadBalancerClass"),
            spec(old).get("loadBalancerClass"),
        );
        if n != o {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec").child("loadBalancerClass"),
                n.cloned().unwrap_or(Value::Null),
                "may not change once set",
            ));
        }
    }
    errs.extend(validate(new));
    errs
}

/// `ValidateServiceStatusUpdate` without the ObjectMeta part: `ValidateLoadBalancerStatus`.
pub fn validate_status_update(new: &Value) -> FieldErrors {
    let mut errs = vec![];
    let path = FieldPath::new("status")
        .child("loadBalancer")
        .child("ingress");
    let ingress = new
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if service_type(new) != "LoadBalancer" && !ingress.is_empty() {
        errs.push(FieldError::forbidden(
            &path,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errs;
    }
    for (i, ing) in ingress.iter().enumerate() {
        let p = path.index(i);
        let ip = str_of(ing, "ip");
        if !ip.is_empty() {
            validate_ip(ip, &p.child("ip"), &mut errs);
        }
        match ing.get("ipMode").and_then(Value::as_str) {
            None if !ip.is_empty() => errs.push(FieldError::required(
                &p.child("ipMode"),
                "must be specified when `ip` is set",
            )),
            Some(_) if ip.is_empty() => errs.push(FieldError::forbidden(
                &p.child("ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some(m) if !LB_IP_MODES.contains(&m) => errs.push(FieldError::not_supported(
                &p.child("ipMode"),
                m,
                &LB_IP_MODES,
            )),
            _ => {}
        }
        let host = str_of(ing, "hostname");
        if !host.is_empty() {
            for m in is_dns1123_subdomain(host) {
                errs.push(FieldError::invalid(&p.child("hostname"), host, m));
            }
            if parse_ip(host).is_some() {
                errs.push(FieldError::invalid(
                    &p.child("hostname"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn created(spec: Value) -> Value {
        let mut svc = json!({"metadata": {"name": "a"}, "spec": spec});
        prepare_create(&mut svc);
        svc
    }

    #[test]
    fn defaults_without_a_cluster_network() {
        let svc = created(json!({"ports": [{"port": 80}], "selector": {"app": "a"}}));
        assert_eq!(
            svc["spec"],
            json!({
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                "selector": {"app": "a"},
                "type": "ClusterIP", "sessionAffinity": "None",
                "internalTrafficPolicy": "Cluster",
                "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"],
            })
        );
        assert_eq!(svc["status"], json!({"loadBalancer": {}}));
        assert!(validate(&svc).is_empty(), "{:?}", messages(&validate(&svc)));
        // Headless without selector: dual stack; an explicit address names its family.
        let svc = created(json!({"clusterIP": "None"}));
        assert_eq!(svc["spec"]["clusterIPs"], json!(["None"]));
        assert_eq!(svc["spec"]["ipFamilyPolicy"], "RequireDualStack");
        assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
        assert!(validate(&svc).is_empty(), "{:?}", messages(&validate(&svc)));
        let svc = created(json!({"clusterIP": "fd00::10", "ports": [{"port": 1}]}));
        assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv6"]));
        // ExternalName gets no IP fields.
        let svc = created(json!({"type": "ExternalName", "externalName": "example.com"}));
        assert!(svc["spec"].get("ipFamilies").is_none());
        assert!(svc["spec"].get("internalTrafficPolicy").is_none());
        assert!(validate(&svc).is_empty(), "{:?}", messages(&validate(&svc)));
    }

    #[test]
    fn validation_messages() {
        let svc = created(json!({
            "type": "Bogus",
            "ports": [{"port": 80}, {"name": "b", "port": 80, "protocol": "TCP"},
                      {"name": "Bad", "port": 70000, "protocol": "ICMP", "targetPort": "x--"}],
            "selector": {"a b": "c"},
        }));
        assert_eq!(
            messages(&validate(&svc)),
            [
                "spec.ports[0].name: Required value",
                "spec.ports[2].name: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.ports[2].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ports[2].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ports[2].targetPort: Invalid value: \"x--\": must not contain consecutive hyphens",
                "spec.ports[2].targetPort: Invalid value: \"x--\": must not begin or end with a hyphen",
                "spec.selector: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
                "spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
            ]
        );
        let svc = created(json!({"type": "ExternalName"}));
        assert_eq!(
            messages(&validate(&svc)),
            ["spec.externalName: Required value"]
        );
        let svc = created(json!({"ports": []}));
        assert_eq!(messages(&validate(&svc)), ["spec.ports: Required value"]);
    }

    #[test]
    fn updates_keep_cluster_ips() {
        let old = created(json!({"clusterIP": "10.0.0.10", "ports": [{"port": 80}]}));
        // A manifest without the IP fields keeps them.
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"ports": [{"port": 81}]}});
        prepare_update(&mut new, &old);
        assert_eq!(new["spec"]["clusterIP"], "10.0.0.10");
        assert_eq!(new["spec"]["clusterIPs"], json!(["10.0.0.10"]));
        assert!(validate_update(&new, &old).is_empty());
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"clusterIP": "10.0.0.11", "clusterIPs": ["10.0.0.11"], "ports": [{"port": 81}]}});
        prepare_update(&mut new, &old);
        assert_eq!(
            messages(&validate_update(&new, &old)),
            ["spec.clusterIPs[0]: Invalid value: \"10.0.0.11\": may not change once set"]
        );
        // Becoming ExternalName drops the IP fields.
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"type": "ExternalName", "externalName": "x.example.com"}});
        prepare_update(&mut new, &old);
        assert!(new["spec"].get("clusterIP").is_none());
        assert!(
            validate_update(&new, &old).is_empty(),
            "{:?}",
            messages(&validate_update(&new, &old))
        );
    }

    #[test]
    fn names() {
        assert!(name_validator("web", false).is_empty());
        assert_eq!(name_validator("1web", false).len(), 1);
        assert!(name_validator("web-", true).is_empty());
    }
}
