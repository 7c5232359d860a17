//! Endpoint routing (upstream `proxy.ResolveEndpoint`): a Service, its port, and a ready
//! address of that port's endpoints. Pure: the objects come in as JSON.

use serde_json::Value;
use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// Why a Service reference resolves to no address, worded as upstream's resolver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResolveError(pub(crate) String);

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResolveError {}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The address to dial for port `port` of Service `name`: the Service must exist and be of a
/// type with endpoints (ClusterIP, NodePort, LoadBalancer) and have that port; the endpoints
/// are its EndpointSlices (`kubernetes.io/service-name`) when there are any, else its
/// Endpoints. The first ready address of the port (matched by the Service port's name) wins, so
/// calls are deterministic; upstream picks one at random.
pub(crate) fn resolve_endpoint(
    name: &str,
    service: Option<&Value>,
    endpoints: Option<&Value>,
    slices: &[Value],
    port: i32,
) -> Result<SocketAddr, ResolveError> {
    let Some(svc) = service else {
        return Err(ResolveError(format!("service {name:?} not found")));
    };
    let spec = svc.get("spec").unwrap_or(&Value::Null);
    match text(spec, "type") {
        "ClusterIP" | "NodePort" | "LoadBalancer" => {}
        other => {
            return Err(ResolveError(format!("unsupported service type {other:?}")));
        }
    }
    let Some(svc_port) = list(spec, "ports")
        .iter()
        .find(|p| p.get("port").and_then(Value::as_i64) == Some(i64::from(port)))
    else {
        return Err(ResolveError(format!(
            "no service port {port} found for service {name:?}"
        )));
    };
    let port_name = text(svc_port, "name");
    let none = || ResolveError(format!("no endpoints available for service {name:?}"));
    if !slices.is_empty() {
        return from_slices(slices, port_name).ok_or_else(none);
    }
    let Some(eps) = endpoints else {
        return Err(ResolveError(format!("endpoints {name:?} not found")));
    };
    for ss in list(eps, "subsets") {
        let addresses = list(ss, "addresses");
        let Some(ip) = addresses
            .iter()
            .find_map(|a| a.get("ip").and_then(Value::as_str)?.parse::<IpAddr>().ok())
        else {
            continue;
        };
        if let Some(p) = list(ss, "ports")
            .iter()
            .find(|p| text(p, "name") == port_name)
            .and_then(|p| p.get("port").and_then(Value::as_i64))
            .and_then(|p| u16::try_from(p).ok())
        {
            return Ok(SocketAddr::new(ip, p));
        }
    }
    Err(none())
}

/// A ready endpoint of the EndpointSlices for the port named `port_name` (`ready` unset counts
/// as ready, as the API documents it).
fn from_slices(slices: &[Value], port_name: &str) -> Option<SocketAddr> {
    for slice in slices {
        if !matches!(text(slice, "addressType"), "IPv4" | "IPv6") {
            continue;
        }
        let Some(port) = list(slice, "ports")
            .iter()
            .find(|p| text(p, "name") == port_name)
            .and_then(|p| p.get("port").and_then(Value::as_i64))
            .and_then(|p| u16::try_from(p).ok())
        else {
            continue;
        };
        for ep in list(slice, "endpoints") {
            if ep.pointer("/conditions/ready").and_then(Value::as_bool) == Some(false) {
                continue;
            }
            if let Some(ip) = list(ep, "addresses")
                .iter()
                .find_map(|a| a.as_str()?.parse::<IpAddr>().ok())
            {
                return Some(SocketAddr::new(ip, port));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svc(ty: &str) -> Value {
        json!({"spec": {"type": ty, "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}})
    }

    fn err(r: Result<SocketAddr, ResolveError>) -> String {
        r.unwrap_err().0
    }

    #[test]
    fn services_and_ports() {
        assert_eq!(
            err(resolve_endpoint("w", None, None, &[], 443)),
            "service \"w\" not found"
        );
        assert_eq!(
            err(resolve_endpoint(
                "w",
                Some(&svc("ExternalName")),
                None,
                &[],
                443
            )),
            "unsupported service type \"ExternalName\""
        );
        assert_eq!(
            err(resolve_endpoint(
                "w",
                Some(&svc("ClusterIP")),
                None,
                &[],
                80
            )),
            "no service port 80 found for service \"w\""
        );
        assert_eq!(
            err(resolve_endpoint(
                "w",
                Some(&svc("ClusterIP")),
                None,
                &[],
                443
            )),
            "endpoints \"w\" not found"
        );
    }

    #[test]
    fn endpoints() {
        let s = svc("ClusterIP");
        let eps = json!({"subsets": [
            {"notReadyAddresses": [{"ip": "10.0.0.9"}], "ports": [{"name": "https", "port": 1}]},
            {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "other", "port": 2}, {"name": "https", "port": 8443}]},
        ]});
        assert_eq!(
            resolve_endpoint("w", Some(&s), Some(&eps), &[], 443).unwrap(),
            "127.0.0.1:8443".parse().unwrap()
        );
        let empty = json!({"subsets": [{"notReadyAddresses": [{"ip": "10.0.0.9"}], "ports": [{"name": "https", "port": 1}]}]});
        assert_eq!(
            err(resolve_endpoint("w", Some(&s), Some(&empty), &[], 443)),
            "no endpoints available for service \"w\""
        );
    }

    #[test]
    fn slices_come_first() {
        let s = svc("ClusterIP");
        let eps = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "https", "port": 1}]}]});
        let slices = [
            json!({"addressType": "IPv4", "ports": [{"name": "https", "port": 9443}],
                   "endpoints": [{"addresses": ["10.0.0.2"], "conditions": {"ready": false}},
                                 {"addresses": ["10.0.0.3"]}]}),
        ];
        assert_eq!(
            resolve_endpoint("w", Some(&s), Some(&eps), &slices, 443).unwrap(),
            "10.0.0.3:9443".parse().unwrap()
        );
        let unready = [
            json!({"addressType": "IPv4", "ports": [{"name": "https", "port": 9443}],
            "endpoints": [{"addresses": ["10.0.0.2"], "conditions": {"ready": false}}]}),
        ];
        assert_eq!(
            err(resolve_endpoint("w", Some(&s), Some(&eps), &unready, 443)),
            "no endpoints available for service \"w\""
        );
    }
}
