//! Printers of the network kinds: core/v1 Service and Endpoints (upstream `printService`,
//! `printEndpoints`), discovery.k8s.io/v1 EndpointSlice (`printEndpointSlice`).

use super::{age, name, string_column, AGE, NAME};
use crate::{Cell, Printer};
use serde_json::Value;
use std::borrow::Cow;

const SERVICE_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const SERVICE_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const SERVICE_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const SERVICE_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const SERVICE_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";
const ENDPOINTS_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";
const SLICE_ADDRESS_TYPE: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.";
const SLICE_PORTS: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.";
const SLICE_ENDPOINTS: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";

/// Name, Type, Cluster-IP, External-IP, Port(s), Age, and Selector (wide).
pub static SERVICE: Printer = Printer {
    columns: &[
        NAME,
        string_column("Type", SERVICE_TYPE, 0),
        string_column("Cluster-IP", SERVICE_CLUSTER_IP, 0),
        string_column("External-IP", SERVICE_EXTERNAL_IPS, 0),
        string_column("Port(s)", SERVICE_PORTS, 0),
        AGE,
        string_column("Selector", SERVICE_SELECTOR, 1),
    ],
    cells: service_cells,
};

fn strs(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn int(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn service_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let ty = spec.get("type").and_then(Value::as_str).unwrap_or("");
    let cluster_ip = strs(spec.get("clusterIPs"))
        .first()
        .copied()
        .unwrap_or("<none>")
        .to_string();
    let ports: Vec<String> = spec
        .get("ports")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("");
                    match int(p, "nodePort") {
                        n if n > 0 => format!("{}:{n}/{proto}", int(p, "port")),
                        _ => format!("{}/{proto}", int(p, "port")),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    let selector: Vec<String> = spec
        .get("selector")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    // `labels.FormatLabels`: sorted k=v pairs, `<none>` when empty.
    let selector = if selector.is_empty() {
        "<none>".to_string()
    } else {
        selector.join(",")
    };
    vec![
        name(obj),
        Cell::Str(Cow::Borrowed(ty)),
        Cell::Str(Cow::Owned(cluster_ip)),
        Cell::Str(Cow::Owned(external_ip(obj, spec, ty))),
        Cell::Str(Cow::Owned(ports)),
        age(obj, now_ms),
        Cell::Str(Cow::Owned(selector)),
    ]
}

/// `getServiceExternalIP` as the server prints it (wide).
fn external_ip(obj: &Value, spec: &Value, ty: &str) -> String {
    let external = strs(spec.get("externalIPs"));
    match ty {
        "ClusterIP" | "NodePort" if !external.is_empty() => external.join(","),
        "ClusterIP" | "NodePort" => "<none>".into(),
        "LoadBalancer" => {
            // `loadBalancerStatusStringer`: each ingress point's IP (else hostname), as a sorted
            // set; then the external IPs.
            let ingress: std::collections::BTreeSet<&str> = obj
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .map(|ing| {
                    ing.iter()
                        .filter_map(|i| {
                            let ip = i.get("ip").and_then(Value::as_str).unwrap_or("");
                            let host = i.get("hostname").and_then(Value::as_str).unwrap_or("");
                            [ip, host].into_iter().find(|s| !s.is_empty())
                        })
                        .collect()
                })
                .unwrap_or_default();
            let mut all: Vec<&str> = ingress.into_iter().collect();
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => spec
            .get("externalName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => "<unknown>".into(),
    }
}

/// Name, Endpoints (the first three address:port pairs), Age.
pub static ENDPOINTS: Printer = Printer {
    columns: &[NAME, string_column("Endpoints", ENDPOINTS_SUBSETS, 0), AGE],
    cells: endpoints_cells,
};

fn endpoints_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    vec![
        name(obj),
        Cell::Str(Cow::Owned(format_endpoints(obj))),
        age(obj, now_ms),
    ]
}

/// `formatEndpoints` with no port filter.
fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let subsets = obj
        .get("subsets")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if subsets.is_empty() {
        return "<none>".into();
    }
    let mut list: Vec<String> = vec![];
    let (mut more, mut count) = (false, 0usize);
    for ss in subsets {
        let addresses: Vec<&str> = ss
            .get("addresses")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|x| x.get("ip").and_then(Value::as_str).unwrap_or(""))
                    .collect()
            })
            .unwrap_or_default();
        let ports = ss
            .get("ports")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if ports.is_empty() {
            count += addresses.len();
            for ip in &addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                list.push(ip.to_string());
            }
            continue;
        }
        for port in ports {
            count += addresses.len();
            for ip in &addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                let p = int(port, "port");
                list.push(if ip.contains(':') {
                    format!("[{ip}]:{p}")
                } else {
                    format!("{ip}:{p}")
                });
            }
        }
    }
    let ret = list.join(",");
    if more {
        format!("{ret} + {} more...", count - MAX)
    } else {
        ret
    }
}

/// Name, AddressType, Ports, Endpoints, Age.
pub static ENDPOINTSLICE: Printer = Printer {
    columns: &[
        NAME,
        string_column("AddressType", SLICE_ADDRESS_TYPE, 0),
        string_column("Ports", SLICE_PORTS, 0),
        string_column("Endpoints", SLICE_ENDPOINTS, 0),
        AGE,
    ],
    cells: endpointslice_cells,
};

/// `listWithMoreString`.
fn list_with_more(list: &[String], more: bool, count: usize, max: usize) -> String {
    let ret = list.join(",");
    if more {
        return format!("{ret} + {} more...", count - max);
    }
    if ret.is_empty() {
        return "<unset>".into();
    }
    ret
}

fn endpointslice_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    const MAX: usize = 3;
    let (mut ports, mut more, mut count) = (vec![], false, 0);
    for p in obj
        .get("ports")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        if ports.len() < MAX {
            ports.push(
                match (p.get("port").and_then(Value::as_i64), p.get("name")) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(Value::String(n))) => n.clone(),
                    _ => "*".into(),
                },
            );
        } else if ports.len() == MAX {
            more = true;
        }
        count += 1;
    }
    let ports = list_with_more(&ports, more, count, MAX);
    let (mut addrs, mut more, mut count) = (vec![], false, 0);
    for ep in obj
        .get("endpoints")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        for a in ep
            .get("addresses")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
        {
            if addrs.len() < MAX {
                addrs.push(a.as_str().unwrap_or("").to_string());
            } else if addrs.len() == MAX {
                more = true;
            }
            count += 1;
        }
    }
    let endpoints = list_with_more(&addrs, more, count, MAX);
    vec![
        name(obj),
        Cell::Str(Cow::Borrowed(
            obj.get("addressType").and_then(Value::as_str).unwrap_or(""),
        )),
        Cell::Str(Cow::Owned(ports)),
        Cell::Str(Cow::Owned(endpoints)),
        age(obj, now_ms),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strings(cells: Vec<Cell<'_>>) -> Vec<String> {
        cells
            .into_iter()
            .map(|c| match c {
                Cell::Str(s) => s.into_owned(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn services() {
        let svc = json!({"metadata": {"name": "web"}, "spec": {
            "type": "ClusterIP", "clusterIPs": ["10.0.0.1"],
            "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP", "nodePort": 30053}],
            "selector": {"b": "2", "a": "1"}}});
        let c = strings(service_cells(&svc, 0));
        assert_eq!(
            c[..5],
            [
                "web",
                "ClusterIP",
                "10.0.0.1",
                "<none>",
                "80/TCP,53:30053/UDP"
            ]
        );
        assert_eq!(c[6], "a=1,b=2");
        let svc = json!({"metadata": {"name": "x"}, "spec": {"type": "ExternalName", "externalName": "example.com"}});
        let c = strings(service_cells(&svc, 0));
        assert_eq!(c[1..5], ["ExternalName", "<none>", "example.com", "<none>"]);
        assert_eq!(c[6], "<none>");
        let svc = json!({"metadata": {"name": "x"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 1, "protocol": "TCP"}]}});
        assert_eq!(strings(service_cells(&svc, 0))[3], "<pending>");
        let svc = json!({"metadata": {"name": "x"},
            "spec": {"type": "LoadBalancer", "externalIPs": ["192.0.2.9"]},
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.2"}, {"hostname": "lb.example.com"}, {"ip": "192.0.2.2"}]}}});
        assert_eq!(
            strings(service_cells(&svc, 0))[3],
            "192.0.2.2,lb.example.com,192.0.2.9"
        );
    }

    #[test]
    fn endpoints() {
        assert_eq!(format_endpoints(&json!({})), "<none>");
        let ep = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}], "ports": [{"port": 80}, {"port": 443}]},
        ]});
        assert_eq!(
            format_endpoints(&ep),
            "10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 1 more..."
        );
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]});
        assert_eq!(format_endpoints(&ep), "10.0.0.1");
    }

    #[test]
    fn endpointslices() {
        let s = json!({"metadata": {"name": "s"}, "addressType": "IPv4",
            "ports": [{"port": 80}, {"name": "x"}, {}, {"port": 1}],
            "endpoints": [{"addresses": ["10.0.0.1"]}]});
        assert_eq!(
            strings(endpointslice_cells(&s, 0))[..4],
            ["s", "IPv4", "80,x,* + 1 more...", "10.0.0.1"]
        );
        let s = json!({"metadata": {"name": "s"}, "addressType": "IPv4"});
        assert_eq!(
            strings(endpointslice_cells(&s, 0))[2..4],
            ["<unset>", "<unset>"]
        );
    }
}
