//! core/v1 Service: `SetDefaults_Service`, what the service REST storage does before the
//! strategy (`begin_create` / `begin_update`: storage.go's `normalizeClusterIPs` and
//! `patchAllocatedValues`, alloc.go's `initIPFamilyFields`), the strategy's `PrepareFor*`
//! (`dropTypeDependentFields`), `ValidateService`, `ValidateServiceUpdate`,
//! `ValidateServiceStatusUpdate`.
//!
//! Crest has no cluster network: it allocates no cluster IPs, node ports or load balancers. A
//! Service is stored as written; what kube-apiserver's allocator would add beyond an address is
//! filled in as a dual-stack cluster whose primary family is IPv4 fills it: `ipFamilyPolicy`
//! (`SingleStack`, or `RequireDualStack` for a headless Service without selector) and
//! `ipFamilies` (from the cluster IPs given, else `IPv4`, both families unless SingleStack).
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

/// `isHeadlessService`: the one cluster IP is `None`.
fn is_headless(obj: &Value) -> bool {
    let ips = list_of(spec(obj), "clusterIPs");
    ips.len() == 1 && ips[0].as_str() == Some("None")
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

fn needs_cluster_ip(obj: &Value) -> bool {
    service_type(obj) != "ExternalName"
}

fn needs_node_port(obj: &Value) -> bool {
    matches!(service_type(obj), "NodePort" | "LoadBalancer")
}

/// `apiservice.NeedsHealthCheck` (the registry's `needsHCNodePort`).
fn needs_health_check(obj: &Value) -> bool {
    service_type(obj) == "LoadBalancer" && str_of(spec(obj), "externalTrafficPolicy") == "Local"
}

fn policy_of(obj: &Value) -> Option<&str> {
    spec(obj).get("ipFamilyPolicy").and_then(Value::as_str)
}

/// `sameClusterIPs` of the allocator (the plural field only; absent and empty are alike).
fn same_cluster_ips(a: &Value, b: &Value) -> bool {
    list_of(spec(a), "clusterIPs") == list_of(spec(b), "clusterIPs")
}

fn same_ip_families(a: &Value, b: &Value) -> bool {
    list_of(spec(a), "ipFamilies") == list_of(spec(b), "ipFamilies")
}

/// What kube-apiserver does to a Service before its strategy sees a create: the decoder's
/// `SetDefaults_Service`, then the REST storage's `BeginCreate` (`normalizeClusterIPs` and the
/// allocator's `initIPFamilyFields`, without allocating). Errors refuse the create at once, as
/// the allocator's do (before any other validation).
pub fn begin_create(obj: &mut Value) -> FieldErrors {
    set_defaults(obj);
    normalize_cluster_ips(obj, None);
    let errs = init_ip_family_fields(obj, None);
    if !errs.is_empty() {
        return errs;
    }
    init_node_ports(obj).into_iter().collect()
}

/// upstream's `PrepareForCreate`: the status is the server's.
pub fn prepare_create(obj: &mut Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("status".into(), json!({"loadBalancer": {}}));
    }
    drop_external_name_internal_traffic_policy(obj);
}

/// The REST storage's `defaultOnReadInternalTrafficPolicy`: an ExternalName Service never shows
/// an `internalTrafficPolicy` (upstream keeps it stored and drops it on every read; Crest drops
/// a valid one before storing, which reads the same; an invalid one is left to validation).
fn drop_external_name_internal_traffic_policy(obj: &mut Value) {
    if service_type(obj) != "ExternalName" {
        return;
    }
    if let Some(s) = spec_mut(obj) {
        let valid = s
            .get("internalTrafficPolicy")
            .and_then(Value::as_str)
            .is_some_and(|p| INTERNAL_TRAFFIC_POLICIES.contains(&p));
        if valid {
            s.remove("internalTrafficPolicy");
        }
    }
}

/// What kube-apiserver does to a Service update before its strategy sees it: the decoder's
/// defaults, then the REST storage's `BeginUpdate`: `patchAllocatedValues` (cluster IPs, node
/// ports and the health check node port a client left out are carried over, so a manifest
/// without them can be re-applied), `normalizeClusterIPs`, and the allocator's
/// `initIPFamilyFields` (whose errors refuse the update before validation).
pub fn begin_update(new: &mut Value, old: &Value) -> FieldErrors {
    set_defaults(new);
    patch_allocated_values(new, old);
    normalize_cluster_ips(new, Some(old));
    let errs = init_ip_family_fields(new, Some(old));
    if !errs.is_empty() {
        return errs;
    }
    update_node_ports(new, old).into_iter().collect()
}

/// kube-apiserver's default `--service-node-port-range`.
const NODE_PORT_RANGE: (i64, i64) = (30000, 32767);

/// The port allocator's refusal of a requested node port outside its range (`ErrNotInRange`).
fn node_port_error(index: usize, port: i64) -> Option<FieldError> {
    let (lo, hi) = NODE_PORT_RANGE;
    (port < lo || port > hi).then(|| {
        FieldError::invalid(
            &FieldPath::new("spec")
                .child("ports")
                .index(index)
                .child("nodePort"),
            port,
            format!(
                "provided port is not in the valid range. The range of valid ports is {lo}-{hi}"
            ),
        )
    })
}

/// `shouldAllocateNodePorts`.
fn allocates_node_ports(obj: &Value) -> bool {
    match service_type(obj) {
        "NodePort" => true,
        "LoadBalancer" => spec(obj)
            .get("allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

/// The allocator's `initNodePorts` on create, for the node ports a client asked for (Crest
/// allocates none itself): each must be in the node port range; a port number served over two
/// protocols shares the node port requested for either.
fn init_node_ports(obj: &mut Value) -> Option<FieldError> {
    if !needs_node_port(obj) {
        return None;
    }
    let allocate = allocates_node_ports(obj);
    let ports = spec_mut(obj)?.get_mut("ports")?.as_array_mut()?;
    let requested: Vec<(i64, i64)> = ports
        .iter()
        .map(|p| (int_of(p, "port"), int_of(p, "nodePort")))
        .collect();
    // findRequestedNodePort: the first port of that number with a node port (indexed once:
    // a scan per port would be quadratic in the number of ports).
    let mut first_requested: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
    for (port, np) in &requested {
        if *np != 0 {
            first_requested.entry(*port).or_insert(*np);
        }
    }
    let mut by_port: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
    for (i, p) in ports.iter_mut().enumerate() {
        let (port, node_port) = requested[i];
        if node_port == 0 && !allocate {
            continue;
        }
        match by_port.get(&port).copied() {
            None => {
                let np = first_requested.get(&port).copied().unwrap_or(0);
                if np != 0 {
                    if let Some(e) = node_port_error(i, np) {
                        return Some(e);
                    }
                    if let Some(p) = p.as_object_mut() {
                        p.insert("nodePort".into(), np.into());
                    }
                    by_port.insert(port, np);
                }
            }
            Some(shared) if node_port == 0 => {
                if let Some(p) = p.as_object_mut() {
                    p.insert("nodePort".into(), shared.into());
                }
            }
            Some(shared) if node_port != shared => {
                if let Some(e) = node_port_error(i, node_port) {
                    return Some(e);
                }
            }
            Some(_) => {}
        }
    }
    None
}

/// The allocator's `updateNodePorts`: a node port the old object did not have must be in the
/// node port range.
fn update_node_ports(new: &Value, old: &Value) -> Option<FieldError> {
    if !needs_node_port(new) {
        return None;
    }
    let allocate = allocates_node_ports(new);
    let old_ports: HashSet<i64> = list_of(spec(old), "ports")
        .iter()
        .map(|p| int_of(p, "nodePort"))
        .filter(|n| *n != 0)
        .collect();
    for (i, p) in list_of(spec(new), "ports").iter().enumerate() {
        let np = int_of(p, "nodePort");
        if np == 0 && !allocate {
            continue;
        }
        if np != 0 && !old_ports.contains(&np) {
            if let Some(e) = node_port_error(i, np) {
                return Some(e);
            }
        }
    }
    None
}

/// `patchAllocatedValues`.
fn patch_allocated_values(new: &mut Value, old: &Value) {
    let both_ip = needs_cluster_ip(old) && needs_cluster_ip(new);
    let both_node_port = needs_node_port(old) && needs_node_port(new);
    let both_hc = needs_health_check(old) && needs_health_check(new);
    let os = spec(old);
    let Some(s) = spec_mut(new) else {
        return;
    };
    if both_ip {
        let ip = str_of(os, "clusterIP");
        if s.get("clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
            && !ip.is_empty()
        {
            s.insert("clusterIP".into(), ip.into());
        }
        let old_ips = list_of(os, "clusterIPs");
        let new_empty = s
            .get("clusterIPs")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if new_empty && !old_ips.is_empty() {
            s.insert("clusterIPs".into(), Value::Array(old_ips.to_vec()));
        }
    }
    if both_node_port {
        let node_ports = |ports: &[Value]| -> HashSet<i64> {
            ports
                .iter()
                .map(|p| int_of(p, "nodePort"))
                .filter(|n| *n != 0)
                .collect()
        };
        let old_ports = list_of(os, "ports");
        let new_ports = s
            .get("ports")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        // NodePorts the new object already uses may not be patched in again.
        let used: HashSet<i64> = node_ports(old_ports)
            .intersection(&node_ports(new_ports))
            .copied()
            .collect();
        // By port name; a later port of the same name wins, as a Go map assignment does.
        let by_name: std::collections::HashMap<&str, i64> = old_ports
            .iter()
            .map(|p| (str_of(p, "name"), int_of(p, "nodePort")))
            .collect();
        if let Some(ports) = s.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut() {
                if int_of(p, "nodePort") != 0 {
                    continue;
                }
                let was = by_name.get(str_of(p, "name")).copied().unwrap_or(0);
                if was != 0 && !used.contains(&was) {
                    if let Some(p) = p.as_object_mut() {
                        p.insert("nodePort".into(), was.into());
                    }
                }
            }
        }
    }
    if both_hc
        && s.get("healthCheckNodePort")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
    {
        let hc = int_of(os, "healthCheckNodePort");
        if hc != 0 {
            s.insert("healthCheckNodePort".into(), hc.into());
        }
    }
}

/// `normalizeClusterIPs`: `clusterIPs` kept in step with `clusterIP` (the singular field is
/// what older clients send).
fn normalize_cluster_ips(new: &mut Value, old: Option<&Value>) {
    let new_ip = str_of(spec(new), "clusterIP").to_string();
    let Some(old) = old else {
        if !new_ip.is_empty() && list_of(spec(new), "clusterIPs").is_empty() {
            if let Some(s) = spec_mut(new) {
                s.insert("clusterIPs".into(), json!([new_ip]));
            }
        }
        return;
    };
    let old_ip = str_of(spec(old), "clusterIP");
    let old_ips = list_of(spec(old), "clusterIPs");
    if !old_ips.is_empty() && list_of(spec(new), "clusterIPs").is_empty() && old_ip == new_ip {
        // An old client patching something else, without the plural field.
        if let Some(s) = spec_mut(new) {
            s.insert("clusterIPs".into(), Value::Array(old_ips.to_vec()));
        }
    }
    if old_ip != new_ip {
        let same = same_cluster_ips(old, new);
        let Some(s) = spec_mut(new) else {
            return;
        };
        if !old_ip.is_empty() && new_ip.is_empty() {
            // A client clearing it: the plural field goes too if it was left as it was.
            if same {
                s.remove("clusterIPs");
            }
        } else if same {
            s.insert("clusterIPs".into(), json!([new_ip]));
        }
    }
}

/// `isMatchingPreferDualStackClusterIPFields`: an update of a PreferDualStack Service that
/// leaves its IP fields alone is not upgraded or downgraded.
fn matching_prefer_dual_stack(new: &Value, old: Option<&Value>) -> bool {
    let Some(old) = old else {
        return false;
    };
    let Some(policy) = policy_of(new) else {
        return false;
    };
    service_type(old) == service_type(new)
        && matches!(service_type(new), "ClusterIP" | "NodePort" | "LoadBalancer")
        && policy == "PreferDualStack"
        && policy_of(old).is_none_or(|p| p == "PreferDualStack")
        && same_cluster_ips(old, new)
        && same_ip_families(old, new)
}

fn other_family(f: &str) -> &'static str {
    if f == "IPv4" {
        "IPv6"
    } else {
        "IPv4"
    }
}

/// The allocator's `initIPFamilyFields` on a dual-stack cluster whose primary family is IPv4
/// (what Crest serves as): `ipFamilyPolicy` defaulted (the old one on update; RequireDualStack
/// for a headless Service without selector; else SingleStack), the cluster IP fields checked
/// (`ValidateServiceClusterIPsRelatedFields`), a secondary IP or family released only under
/// SingleStack, `ipFamilies` inferred from the cluster IPs, else IPv4, both families unless
/// SingleStack.
///
/// Crest allocates no addresses, so a Service may have no cluster IPs to infer its families
/// from; on update such a Service keeps the families it had (those its addresses would have
/// been allocated in, had there been any).
fn init_ip_family_fields(new: &mut Value, old: Option<&Value>) -> FieldErrors {
    if service_type(new) == "ExternalName" || matching_prefer_dual_stack(new, old) {
        return vec![];
    }
    let headless_without_selector = str_of(spec(new), "clusterIP") == "None" && !has_selector(new);
    if policy_of(new).is_none() {
        let policy = match old.and_then(policy_of) {
            Some(p) => p.to_string(),
            None if headless_without_selector => "RequireDualStack".into(),
            None => "SingleStack".into(),
        };
        if let Some(s) = spec_mut(new) {
            s.insert("ipFamilyPolicy".into(), policy.into());
        }
    }
    let mut errs = vec![];
    validate_cluster_ips_related(new, &mut errs);
    if !errs.is_empty() {
        return errs;
    }
    let policy_path = FieldPath::new("spec").child("ipFamilyPolicy");
    let policy = policy_of(new).unwrap_or("").to_string();
    let single = policy == "SingleStack";
    if let Some(old) = old {
        if single {
            // Setting the policy to SingleStack while leaving the rest is clear intent.
            let (same_ips, same_families) =
                (same_cluster_ips(old, new), same_ip_families(old, new));
            if let Some(s) = spec_mut(new) {
                for (key, same) in [("clusterIPs", same_ips), ("ipFamilies", same_families)] {
                    if let Some(list) = s.get_mut(key).and_then(Value::as_array_mut) {
                        if same && list.len() > 1 {
                            list.truncate(1);
                        }
                    }
                }
            }
        } else {
            let reduced = |key: &str| {
                let n = list_of(spec(new), key).len();
                n != 0 && n < list_of(spec(old), key).len()
            };
            if reduced("clusterIPs") {
                errs.push(FieldError::invalid(
                    &policy_path,
                    policy.as_str(),
                    "must be 'SingleStack' to release the secondary cluster IP",
                ));
            }
            if reduced("ipFamilies") {
                errs.push(FieldError::invalid(
                    &policy_path,
                    policy.as_str(),
                    "must be 'SingleStack' to release the secondary IP family",
                ));
            }
        }
    }
    if single {
        if list_of(spec(new), "clusterIPs").len() == 2 {
            errs.push(FieldError::invalid(
                &policy_path,
                policy.as_str(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if list_of(spec(new), "ipFamilies").len() == 2 {
            errs.push(FieldError::invalid(
                &policy_path,
                policy.as_str(),
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    // Families inferred from the cluster IPs (validated above) that name none.
    let ips: Vec<String> = list_of(spec(new), "clusterIPs")
        .iter()
        .map(|v| v.as_str().unwrap_or("").to_string())
        .take_while(|ip| ip != "None")
        .collect();
    let mut families: Vec<Value> = list_of(spec(new), "ipFamilies").to_vec();
    for (i, ip) in ips.iter().enumerate() {
        if i >= families.len() {
            families.push(if is_ipv6(ip) { "IPv6" } else { "IPv4" }.into());
        }
    }
    if !errs.is_empty() {
        return errs;
    }
    if let Some(old) = old {
        let unallocated = ips.is_empty() && str_of(spec(new), "clusterIP") != "None";
        if families.is_empty() && unallocated && needs_cluster_ip(old) {
            families = list_of(spec(old), "ipFamilies").to_vec();
            if single {
                families.truncate(1);
            }
        }
    }
    if families.is_empty() {
        families.push("IPv4".into());
    }
    // Dual-stack unless SingleStack (the headless, selector-less special case included).
    if !single && families.len() == 1 {
        let other = other_family(families[0].as_str().unwrap_or(""));
        families.push(other.into());
    }
    if let Some(s) = spec_mut(new) {
        s.insert("ipFamilies".into(), Value::Array(families));
    }
    errs
}

/// upstream's `PrepareForUpdate`: the status is the stored one; `dropTypeDependentFields`.
pub fn prepare_update(new: &mut Value, old: &Value) {
    if let Some(o) = new.as_object_mut() {
        match old.get("status") {
            Some(st) => o.insert("status".into(), st.clone()),
            None => o.remove("status"),
        };
    }
    drop_type_dependent_fields(new, old);
    drop_external_name_internal_traffic_policy(new);
}

/// `dropTypeDependentFields`: what the old type needed and the new one does not is dropped,
/// when the client left it as it was (a changed value is for validation to refuse).
fn drop_type_dependent_fields(new: &mut Value, old: &Value) {
    let os = spec(old).clone();
    let same = |s: &Map<String, Value>, k: &str| {
        let v = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
        v(s.get(k)) == v(os.get(k))
    };
    let drop_ips = needs_cluster_ip(old) && !needs_cluster_ip(new);
    let node_ports_of = |ports: &[Value]| -> HashSet<i64> {
        ports
            .iter()
            .map(|p| int_of(p, "nodePort"))
            .filter(|n| *n != 0)
            .collect()
    };
    let drop_node_ports = needs_node_port(old)
        && !needs_node_port(new)
        && node_ports_of(list_of(&os, "ports"))
            .is_superset(&node_ports_of(list_of(spec(new), "ports")));
    let drop_hc = needs_health_check(old) && !needs_health_check(new);
    let lb_gone = service_type(old) == "LoadBalancer" && service_type(new) != "LoadBalancer";
    let drop_etp = externally_accessible(old) && !externally_accessible(new);
    let lb_status_goes = service_type(new) != "LoadBalancer";
    let Some(s) = spec_mut(new) else {
        return;
    };
    if drop_ips {
        let ip = |s: &Map<String, Value>| {
            s.get("clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let list = |s: &Map<String, Value>, k: &str| {
            s.get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let old_obj = os.as_object().cloned().unwrap_or_default();
        if ip(s) == ip(&old_obj) && list(s, "clusterIPs") == list(&old_obj, "clusterIPs") {
            s.remove("clusterIP");
            s.remove("clusterIPs");
        }
        if list(s, "ipFamilies") == list(&old_obj, "ipFamilies") {
            s.remove("ipFamilies");
        }
        let policy = |s: &Map<String, Value>| {
            s.get("ipFamilyPolicy")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if policy(s) == policy(&old_obj) {
            s.remove("ipFamilyPolicy");
        }
    }
    if drop_node_ports {
        if let Some(ports) = s.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                p.remove("nodePort");
            }
        }
    }
    let int = |s: &Map<String, Value>, k: &str| s.get(k).and_then(Value::as_i64).unwrap_or(0);
    if drop_hc && int(s, "healthCheckNodePort") == int_of(&os, "healthCheckNodePort") {
        s.remove("healthCheckNodePort");
    }
    if lb_gone {
        let (n, o) = (
            s.get("allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool),
            os.get("allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool),
        );
        if n.is_some() && n == o {
            s.remove("allocateLoadBalancerNodePorts");
        }
        if same(s, "loadBalancerClass") {
            s.remove("loadBalancerClass");
        }
    }
    let etp = s
        .get("externalTrafficPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if drop_etp && etp == str_of(&os, "externalTrafficPolicy") {
        s.remove("externalTrafficPolicy");
    }
    if lb_status_goes {
        if let Some(o) = new.as_object_mut() {
            let st = o.entry("status").or_insert_with(|| json!({}));
            if let Some(st) = st.as_object_mut() {
                st.insert("loadBalancer".into(), json!({}));
            }
        }
    }
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
    validate_load_balancer_class(obj, None, &mut errs);
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
    if items.is_empty() {
        return "[]string(nil)".into();
    }
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

/// `ValidateServiceUpdate` without the ObjectMeta part: the cluster IPs and IP families may be
/// upgraded (a secondary one added) or downgraded (the secondary one released) but not changed,
/// unless the Service is or becomes ExternalName; `loadBalancerClass` is immutable while the
/// Service stays a LoadBalancer, `healthCheckNodePort` while it needs one; then the new object
/// as on create.
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = vec![];
    upgrade_downgrade_cluster_ips(new, old, &mut errs);
    upgrade_downgrade_ip_families(new, old, &mut errs);
    validate_load_balancer_class(new, Some(old), &mut errs);
    // validateServiceExternalTrafficFieldsUpdate.
    if needs_health_check(old)
        && needs_health_check(new)
        && int_of(spec(new), "healthCheckNodePort") != int_of(spec(old), "healthCheckNodePort")
    {
        errs.push(FieldError::forbidden(
            &FieldPath::new("spec").child("healthCheckNodePort"),
            "field is immutable",
        ));
    }
    errs.extend(validate(new));
    errs
}

/// An `ipFamilyPolicy` as a field error prints it (a `*IPFamilyPolicy`: its value, or null).
fn policy_value(obj: &Value) -> Value {
    policy_of(obj).map_or(Value::Null, Value::from)
}

/// `[]core.IPFamily{...}` as Go's `%#v` prints it.
fn families_repr(items: &[Value]) -> String {
    if items.is_empty() {
        return "[]core.IPFamily(nil)".into();
    }
    let quoted: Vec<String> = items
        .iter()
        .map(|v| format!("{:?}", v.as_str().unwrap_or("")))
        .collect();
    format!("[]core.IPFamily{{{}}}", quoted.join(", "))
}

/// `validateUpgradeDowngradeClusterIPs`. The value reported is the whole new list.
fn upgrade_downgrade_cluster_ips(new: &Value, old: &Value, errs: &mut FieldErrors) {
    if !needs_cluster_ip(new) || !needs_cluster_ip(old) || (is_headless(old) && is_headless(new)) {
        return;
    }
    let path = FieldPath::new("spec").child("clusterIPs");
    let (o, n) = (
        list_of(spec(old), "clusterIPs"),
        list_of(spec(new), "clusterIPs"),
    );
    let changed = "may not change once set";
    match o.len().cmp(&n.len()) {
        std::cmp::Ordering::Equal => {
            for (i, (ov, nv)) in o.iter().zip(n).enumerate() {
                if ov != nv {
                    errs.push(invalid_list(&path.index(i), n, changed));
                }
            }
        }
        std::cmp::Ordering::Greater => {
            if n.is_empty() {
                errs.push(invalid_list(
                    &path.index(0),
                    n,
                    "primary clusterIP can not be unset",
                ));
            }
            if !o.is_empty() && !n.is_empty() && n[0] != o[0] {
                errs.push(invalid_list(&path.index(0), n, changed));
            }
            if n.len() == 1 && policy_of(new) != Some("SingleStack") {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec").child("ipFamilyPolicy"),
                    policy_value(new),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        }
        std::cmp::Ordering::Less => {
            if !o.is_empty() && n[0] != o[0] {
                errs.push(invalid_list(&path.index(0), n, changed));
            }
        }
    }
}

/// `validateUpgradeDowngradeIPFamilies`. Upstream reports the new families where they changed
/// in step and, where they were released or added, the new cluster IPs (as here).
fn upgrade_downgrade_ip_families(new: &Value, old: &Value, errs: &mut FieldErrors) {
    let (new_headless, old_headless) = (is_headless(new), is_headless(old));
    // Headless Services may change families.
    if !needs_cluster_ip(new) || !needs_cluster_ip(old) || new_headless || old_headless {
        return;
    }
    let path = FieldPath::new("spec").child("ipFamilies").index(0);
    let (o, n) = (
        list_of(spec(old), "ipFamilies"),
        list_of(spec(new), "ipFamilies"),
    );
    let ips = list_of(spec(new), "clusterIPs");
    let changed = "may not change once set";
    match o.len().cmp(&n.len()) {
        std::cmp::Ordering::Equal => {
            for (ov, nv) in o.iter().zip(n) {
                if ov != nv {
                    errs.push(FieldError::invalid_repr(&path, &families_repr(n), changed));
                }
            }
        }
        std::cmp::Ordering::Greater => {
            // Upstream tests the cluster IPs here, which an allocating server has always set
            // by now; a Service Crest allocated no address for has none, so the families
            // themselves are what is tested (and they are always set by now, too).
            if ips.is_empty() && n.is_empty() {
                errs.push(FieldError::invalid_repr(
                    &path,
                    &families_repr(n),
                    "primary ipFamily can not be unset",
                ));
            }
            if !n.is_empty() && n[0] != o[0] {
                errs.push(invalid_list(&path, ips, changed));
            }
            if n.len() == 1 && policy_of(new) != Some("SingleStack") {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec").child("ipFamilyPolicy"),
                    policy_value(new),
                    "must be set to 'SingleStack' when releasing the secondary ipFamily",
                ));
            }
        }
        std::cmp::Ordering::Less => {
            if !o.is_empty() && n[0] != o[0] {
                errs.push(invalid_list(&path, ips, changed));
            }
        }
    }
}

/// `validateLoadBalancerClassField`: immutable from LoadBalancer to LoadBalancer (on update),
/// a qualified name on a LoadBalancer, forbidden on other types. An update runs it twice (once
/// with the old object, once within `ValidateService`), so its errors are reported twice.
fn validate_load_balancer_class(new: &Value, old: Option<&Value>, errs: &mut FieldErrors) {
    let path = FieldPath::new("spec").child("loadBalancerClass");
    let class = |o: &Value| {
        spec(o)
            .get("loadBalancerClass")
            .filter(|v| !v.is_null())
            .cloned()
    };
    let lb = service_type(new) == "LoadBalancer";
    if let Some(old) = old {
        if lb && service_type(old) == "LoadBalancer" && class(old) != class(new) {
            errs.push(FieldError::invalid(
                &path,
                class(new).unwrap_or(Value::Null),
                "may not change once set",
            ));
        }
    }
    match class(new) {
        Some(c) if lb => validate_qualified_name(c.as_str().unwrap_or(""), &path, errs),
        Some(_) => errs.push(FieldError::forbidden(
            &path,
            "may only be used when `type` is 'LoadBalancer'",
        )),
        None => {}
    }
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
        let errs = begin_create(&mut svc);
        assert!(errs.is_empty(), "{:?}", messages(&errs));
        prepare_create(&mut svc);
        svc
    }

    /// An update as the REST storage and strategy run it: begin, prepare, validate.
    fn update(old: &Value, spec: Value) -> (Value, Vec<String>) {
        let mut new = json!({"metadata": {"name": "a"}, "spec": spec});
        let begun = begin_update(&mut new, old);
        if !begun.is_empty() {
            return (new, messages(&begun));
        }
        prepare_update(&mut new, old);
        let errs = validate_update(&new, old);
        (new, messages(&errs))
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
        let (new, errs) = update(&old, json!({"ports": [{"port": 81}]}));
        assert_eq!(new["spec"]["clusterIP"], "10.0.0.10");
        assert_eq!(new["spec"]["clusterIPs"], json!(["10.0.0.10"]));
        assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4"]));
        assert!(errs.is_empty(), "{errs:?}");
        // Clearing the singular field alone clears both, and the address may not go.
        let (new, errs) = update(
            &old,
            json!({"clusterIP": "", "clusterIPs": ["10.0.0.10"], "ports": [{"port": 81}]}),
        );
        assert_eq!(new["spec"]["clusterIP"], "10.0.0.10", "patched back: {new}");
        assert!(errs.is_empty(), "{errs:?}");
        let (_, errs) = update(
            &old,
            json!({"clusterIP": "10.0.0.11", "clusterIPs": ["10.0.0.11"], "ports": [{"port": 81}]}),
        );
        assert_eq!(
            errs,
            ["spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.11\"}: may not change once set"]
        );
        // Only the singular field changed: the plural one follows it (normalizeClusterIPs).
        let (new, errs) = update(
            &old,
            json!({"clusterIP": "10.0.0.12", "ports": [{"port": 81}]}),
        );
        assert_eq!(new["spec"]["clusterIPs"], json!(["10.0.0.12"]));
        assert_eq!(
            errs,
            ["spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.12\"}: may not change once set"]
        );
        // Becoming ExternalName drops the IP fields the client left as they were.
        let (new, errs) = update(
            &old,
            json!({"type": "ExternalName", "externalName": "x.example.com",
                   "clusterIP": "10.0.0.10", "clusterIPs": ["10.0.0.10"],
                   "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}),
        );
        assert!(new["spec"].get("clusterIP").is_none(), "{new}");
        assert!(new["spec"].get("ipFamilies").is_none(), "{new}");
        assert!(new["spec"].get("ipFamilyPolicy").is_none(), "{new}");
        assert!(errs.is_empty(), "{errs:?}");
        // ... and refuses those the client changed.
        let (_, errs) = update(
            &old,
            json!({"type": "ExternalName", "externalName": "x.example.com",
                   "clusterIP": "10.0.0.9", "clusterIPs": ["10.0.0.9"], "ipFamilyPolicy": "PreferDualStack"}),
        );
        assert_eq!(
            errs,
            [
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                "spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services",
            ]
        );
        // Back from ExternalName: no address to keep, the families start afresh.
        let ext = created(json!({"type": "ExternalName", "externalName": "x.example.com"}));
        let (new, errs) = update(&ext, json!({"ports": [{"port": 80}]}));
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(new["spec"]["ipFamilyPolicy"], "SingleStack");
    }

    #[test]
    fn upgrades_and_downgrades_of_ip_families() {
        let old = created(json!({"clusterIP": "10.0.0.10", "ports": [{"port": 80}]}));
        assert_eq!(old["spec"]["ipFamilyPolicy"], "SingleStack");
        // Two addresses need a dual-stack policy (the allocator's check, before validation).
        let (_, errs) = update(
            &old,
            json!({"clusterIPs": ["10.0.0.10", "fd00::10"], "ports": [{"port": 80}]}),
        );
        assert_eq!(
            errs,
            ["spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"]
        );
        // Upgraded: the secondary family is inferred from the address.
        let (up, errs) = update(
            &old,
            json!({"clusterIPs": ["10.0.0.10", "fd00::10"], "ipFamilyPolicy": "RequireDualStack",
                   "ports": [{"port": 80}]}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(up["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
        // The primary family may not change.
        let (_, errs) = update(
            &old,
            json!({"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}),
        );
        assert_eq!(
            errs,
            ["spec.clusterIPs[0]: Invalid value: \"10.0.0.10\": expected an IPv6 value as indicated by `ipFamilies[0]`"]
        );
        let (_, errs) = update(
            &old,
            json!({"clusterIPs": ["fd00::10", "10.0.0.10"], "clusterIP": "fd00::10",
                   "ipFamilyPolicy": "RequireDualStack", "ports": [{"port": 80}]}),
        );
        assert_eq!(
            errs,
            [
                "spec.clusterIPs[0]: Invalid value: []string{\"fd00::10\", \"10.0.0.10\"}: may not change once set",
                "spec.ipFamilies[0]: Invalid value: []string{\"fd00::10\", \"10.0.0.10\"}: may not change once set",
            ]
        );
        // Releasing the secondary address needs SingleStack ...
        let (_, errs) = update(
            &up,
            json!({"clusterIPs": ["10.0.0.10"], "ports": [{"port": 80}]}),
        );
        assert_eq!(
            errs,
            ["spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": must be 'SingleStack' to release the secondary cluster IP"]
        );
        // ... which alone is enough: the rest follows.
        let (down, errs) = update(
            &up,
            json!({"ipFamilyPolicy": "SingleStack", "clusterIP": "10.0.0.10",
                   "clusterIPs": ["10.0.0.10", "fd00::10"], "ipFamilies": ["IPv4", "IPv6"],
                   "ports": [{"port": 80}]}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(down["spec"]["clusterIPs"], json!(["10.0.0.10"]));
        assert_eq!(down["spec"]["ipFamilies"], json!(["IPv4"]));
        // A PreferDualStack Service left as it was is neither upgraded nor downgraded.
        let pref = created(
            json!({"ipFamilyPolicy": "PreferDualStack", "ipFamilies": ["IPv6"],
                                  "ports": [{"port": 80}]}),
        );
        assert_eq!(pref["spec"]["ipFamilies"], json!(["IPv6", "IPv4"]));
        let (same, errs) = update(&pref, pref["spec"].clone());
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(same["spec"]["ipFamilies"], json!(["IPv6", "IPv4"]));
        // Without addresses (Crest allocates none) a manifest without families keeps them.
        let (kept, errs) = update(&pref, json!({"ports": [{"port": 80}]}));
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(kept["spec"]["ipFamilies"], json!(["IPv6", "IPv4"]));
        assert_eq!(kept["spec"]["ipFamilyPolicy"], "PreferDualStack");
        let (_, errs) = update(
            &pref,
            json!({"ipFamilies": ["IPv4", "IPv6"], "ports": [{"port": 80}]}),
        );
        assert_eq!(
            errs,
            [
                "spec.ipFamilies[0]: Invalid value: []core.IPFamily{\"IPv4\", \"IPv6\"}: may not change once set",
                "spec.ipFamilies[0]: Invalid value: []core.IPFamily{\"IPv4\", \"IPv6\"}: may not change once set",
            ]
        );
        // Releasing the secondary family with the policy left dual-stack.
        let (_, errs) = update(
            &pref,
            json!({"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}),
        );
        assert_eq!(
            errs,
            ["spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be 'SingleStack' to release the secondary IP family"]
        );
        let (single, errs) = update(
            &pref,
            json!({"ipFamilyPolicy": "SingleStack", "ports": [{"port": 80}]}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(single["spec"]["ipFamilies"], json!(["IPv6"]));
        // Headless Services may change families.
        let headless = created(json!({"clusterIP": "None", "selector": {"a": "b"}}));
        assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4"]));
        let (_, errs) = update(
            &headless,
            json!({"clusterIP": "None", "ipFamilies": ["IPv6"], "selector": {"a": "b"}}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        // On create, the allocator's checks come alone, before validation.
        let mut svc = json!({"metadata": {"name": "a"},
                             "spec": {"clusterIPs": ["10.0.0.1", "10.0.0.2"], "clusterIP": "10.0.0.1"}});
        assert_eq!(
            messages(&begin_create(&mut svc)),
            ["spec.clusterIPs: Invalid value: []string{\"10.0.0.1\", \"10.0.0.2\"}: may specify no more than one IP for each IP family"]
        );
    }

    #[test]
    fn node_ports_health_check_and_load_balancer_class() {
        let lb = created(
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30100, "loadBalancerClass": "example.com/lb",
            "ports": [{"name": "a", "port": 80, "nodePort": 30080}, {"name": "b", "port": 81, "nodePort": 30081}]}),
        );
        // Left out: carried over (patchAllocatedValues), by port name.
        let (new, errs) = update(
            &lb,
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "loadBalancerClass": "example.com/lb",
            "ports": [{"name": "b", "port": 82}, {"name": "a", "port": 80}]}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30081);
        assert_eq!(new["spec"]["ports"][1]["nodePort"], 30080);
        assert_eq!(new["spec"]["healthCheckNodePort"], 30100);
        // Changed: refused.
        let (_, errs) = update(
            &lb,
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30101, "loadBalancerClass": "example.com/other",
            "ports": [{"name": "a", "port": 80}]}),
        );
        assert_eq!(
            errs,
            [
                "spec.loadBalancerClass: Invalid value: \"example.com/other\": may not change once set",
                "spec.healthCheckNodePort: Forbidden: field is immutable",
            ]
        );
        let (_, errs) = update(
            &lb,
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "ports": [{"name": "a", "port": 80}]}),
        );
        assert_eq!(
            errs,
            ["spec.loadBalancerClass: Invalid value: \"null\": may not change once set"]
        );
        // An invalid class on update is reported by both of upstream's calls.
        let mut bad = lb.clone();
        bad["spec"]["loadBalancerClass"] = json!("-bad");
        let (_, errs) = update(
            &bad,
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
            "loadBalancerClass": "-bad", "ports": [{"name": "a", "port": 80}]}),
        );
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0], errs[1]);
        // To ClusterIP: node ports, health check port, class, LB-only fields and the load
        // balancer status go when left as they were.
        let mut with_status = lb.clone();
        with_status["status"] =
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1", "ipMode": "VIP"}]}});
        let (new, errs) = update(
            &with_status,
            json!({"type": "ClusterIP", "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 30100, "loadBalancerClass": "example.com/lb", "allocateLoadBalancerNodePorts": true,
            "ports": [{"name": "a", "port": 80, "nodePort": 30080}]}),
        );
        assert!(errs.is_empty(), "{errs:?}");
        for k in [
            "externalTrafficPolicy",
            "healthCheckNodePort",
            "loadBalancerClass",
            "allocateLoadBalancerNodePorts",
        ] {
            assert!(new["spec"].get(k).is_none(), "{k}: {new}");
        }
        assert!(new["spec"]["ports"][0].get("nodePort").is_none(), "{new}");
        assert_eq!(new["status"], json!({"loadBalancer": {}}));
        // Node ports outside the allocator's range are refused, new ones on update only.
        let mut svc = json!({"metadata": {"name": "a"}, "spec": {"type": "NodePort",
            "ports": [{"name": "a", "port": 53, "protocol": "UDP"},
                      {"name": "b", "port": 53, "protocol": "TCP", "nodePort": 30053},
                      {"name": "c", "port": 80, "nodePort": 80}]}});
        assert_eq!(
            messages(&begin_create(&mut svc)),
            ["spec.ports[2].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"]
        );
        // The port served over two protocols shares the node port asked for.
        assert_eq!(svc["spec"]["ports"][0]["nodePort"], 30053);
        let np = created(json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}));
        let (_, errs) = update(
            &np,
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 8080}]}),
        );
        assert_eq!(
            errs,
            ["spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767"]
        );
        // A node port the old object did not have stays (and is refused for ClusterIP).
        let (_, errs) = update(
            &lb,
            json!({"type": "ClusterIP", "ports": [{"name": "a", "port": 80, "nodePort": 30090}]}),
        );
        assert_eq!(
            errs,
            ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
        );
    }

    #[test]
    fn names() {
        assert!(name_validator("web", false).is_empty());
        assert_eq!(name_validator("1web", false).len(), 1);
        assert!(name_validator("web-", true).is_empty());
    }
}
