//! kube-apiserver's bootstrap controller for the `default/kubernetes` Service
//! (pkg/controlplane/controller/kubernetesservice, and the Endpoints and EndpointSlice its
//! endpoint reconciler keeps, pkg/controlplane/reconcilers/endpointsadapter.go): client
//! libraries' in-cluster configuration and event recorders look it up.
//!
//! - The Service is created when missing and then left alone (upstream no longer reconciles it
//!   after creation): labels `component=apiserver` and `provider=kubernetes`, the first address
//!   of the service range as its ClusterIP, port 443 named `https` targeting the secure port.
//! - The Endpoints (label `endpointslice.kubernetes.io/skip-mirror: "true"`, so the mirroring
//!   controller leaves it alone) and the EndpointSlice (label `kubernetes.io/service-name`)
//!   name this server's address and port; they are put back whenever they differ, every
//!   [`ENDPOINT_INTERVAL`] (kube-apiserver's `--endpoint-reconciler-interval` default).

use super::managers::KUBE_APISERVER;
use crate::registry::{Registry, UpdateMode, WriteOptions};
use crest_api::ApiError;
use serde_json::{json, Value};
use std::net::IpAddr;
use std::time::Duration;

/// The Service's name and namespace.
const NAME: &str = "kubernetes";
const NAMESPACE: &str = "default";
/// How often the Endpoints and EndpointSlice are checked.
pub(crate) const ENDPOINT_INTERVAL: Duration = Duration::from_secs(10);

/// What the `kubernetes` Service publishes.
#[derive(Clone, Debug)]
pub(crate) struct Apiserver {
    /// The Service's ClusterIP: the first address of the service range.
    pub(crate) service_ip: IpAddr,
    /// The address clients reach this server at (Endpoints, EndpointSlice).
    pub(crate) public_ip: IpAddr,
    /// The secure port.
    pub(crate) port: u16,
}

impl Apiserver {
    fn service(&self) -> Value {
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": NAME, "namespace": NAMESPACE,
                            "labels": {"component": "apiserver", "provider": "kubernetes"}},
               "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443,
                                   "targetPort": self.port}],
                        "clusterIP": self.service_ip.to_string(),
                        "clusterIPs": [self.service_ip.to_string()],
                        "ipFamilies": [family(self.service_ip)],
                        "ipFamilyPolicy": "SingleStack",
                        "sessionAffinity": "None",
                        "type": "ClusterIP"}})
    }

    /// endpointsadapter.go `updateEndpoints`: one subset, this server's address and port.
    fn endpoints(&self) -> Value {
        json!({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": NAME, "namespace": NAMESPACE,
                            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
               "subsets": [{"addresses": [{"ip": self.public_ip.to_string()}],
                            "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}]})
    }

    /// endpointsadapter.go `updateEndpointSlice`.
    fn endpoint_slice(&self) -> Value {
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": NAME, "namespace": NAMESPACE,
                            "labels": {"kubernetes.io/service-name": NAME}},
               "addressType": family(self.public_ip),
               "endpoints": [{"addresses": [self.public_ip.to_string()],
                              "conditions": {"ready": true}}],
               "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]})
    }
}

fn family(ip: IpAddr) -> &'static str {
    if ip.is_ipv4() {
        "IPv4"
    } else {
        "IPv6"
    }
}

/// Keeps the Service, its Endpoints and its EndpointSlice until `stop` fires.
pub(crate) async fn run(
    registry: std::sync::Arc<Registry>,
    apiserver: Apiserver,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(ENDPOINT_INTERVAL);
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {}
        }
        if let Err(e) = reconcile(&registry, &apiserver).await {
            tracing::warn!(error = %e, "unable to sync the kubernetes service; will retry");
        }
    }
}

/// One pass: the Service created when missing (never corrected: upstream stopped reconciling
/// it after creation), the Endpoints and EndpointSlice created or put back when their labels or
/// the fields the reconciler owns differ. A namespace `default` that is missing or terminating,
/// or a concurrent write, is no error: the next pass sees it.
pub(crate) async fn reconcile(registry: &Registry, a: &Apiserver) -> Result<(), ApiError> {
    let owned = [
        ("", "services", a.service(), &[][..]),
        ("", "endpoints", a.endpoints(), &["subsets"][..]),
        (
            "discovery.k8s.io",
            "endpointslices",
            a.endpoint_slice(),
            &["addressType", "endpoints", "ports"][..],
        ),
    ];
    for (group, plural, desired, fields) in owned {
        let Some(def) = registry.resources().lookup(group, "v1", plural) else {
            continue;
        };
        let result = keep(registry, &def, desired, fields).await;
        match result {
            Err(e) if !matches!(e.code, 403 | 404 | 409) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Creates `desired` when missing; else, when `fields` is not empty and its labels or one of
/// `fields` differ, writes them over the stored object. An EndpointSlice's `addressType` cannot
/// change: a slice of the other family is deleted, and the next pass creates it again.
async fn keep(
    registry: &Registry,
    def: &crate::registry::resources::ResourceDef,
    desired: Value,
    fields: &[&str],
) -> Result<(), ApiError> {
    let opts = WriteOptions::by(KUBE_APISERVER);
    let current = registry
        .reads()
        .get(&def.key(Some(NAMESPACE), NAME))
        .and_then(|o| o.value().ok());
    let Some(current) = current else {
        return registry
            .create(def, Some(NAMESPACE), desired, &opts)
            .await
            .map(|_| ());
    };
    let labels = desired.pointer("/metadata/labels").cloned();
    let differs = |f: &str| current.get(f) != desired.get(f);
    if fields.is_empty()
        || (current.pointer("/metadata/labels") == labels.as_ref()
            && !fields.iter().any(|f| differs(f)))
    {
        return Ok(());
    }
    if fields.contains(&"addressType") && differs("addressType") {
        let pre = Default::default();
        return registry
            .delete(def, Some(NAMESPACE), NAME, &pre, &opts)
            .await
            .map(|_| ());
    }
    let update = move |v: &mut Value| {
        if let Some(l) = &labels {
            crest_api::meta::set(v, "labels", l.clone());
        }
        if let Some(o) = v.as_object_mut() {
            for f in fields {
                if let Some(d) = desired.get(*f) {
                    o.insert((*f).to_string(), d.clone());
                }
            }
        }
    };
    registry
        .update_with(
            def,
            Some(NAMESPACE),
            NAME,
            UpdateMode::Main,
            KUBE_APISERVER,
            update,
        )
        .await
        .map(|_| ())
}

/// The address a server listening on `listen` publishes: the listen address itself, unless it
/// is unspecified (`0.0.0.0`, `::`); then, as kube-apiserver's `ChooseHostInterface`, the
/// address of the interface the default route leaves by (found by connecting a UDP socket,
/// which sends nothing), or loopback when there is no route.
pub(crate) fn public_ip(listen: IpAddr) -> IpAddr {
    if !listen.is_unspecified() {
        return listen;
    }
    let probe = std::net::UdpSocket::bind(("0.0.0.0", 0))
        .and_then(|s| s.connect(("192.0.2.1", 443)).map(|()| s))
        .and_then(|s| s.local_addr());
    match probe {
        Ok(a) if !a.ip().is_unspecified() => a.ip(),
        _ => IpAddr::from([127, 0, 0, 1]),
    }
}

/// The first address of a service range `CIDR` (`10.0.0.0/24` gives `10.0.0.1`), as the
/// service IP allocator reserves it for the `kubernetes` Service.
pub fn first_service_ip(cidr: &str) -> Option<IpAddr> {
    let (base, bits) = cidr.split_once('/')?;
    let bits: u32 = bits.parse().ok()?;
    match base.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) if bits <= 30 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            Some(IpAddr::V4(std::net::Ipv4Addr::from(
                (u32::from(v4) & mask) + 1,
            )))
        }
        IpAddr::V6(v6) if bits <= 126 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            Some(IpAddr::V6(std::net::Ipv6Addr::from(
                (u128::from(v6) & mask) + 1,
            )))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_address_of_the_service_range() {
        let ip = |s: &str| first_service_ip(s).map(|i| i.to_string());
        assert_eq!(ip("10.0.0.0/24").as_deref(), Some("10.0.0.1"));
        assert_eq!(ip("10.96.0.0/12").as_deref(), Some("10.96.0.1"));
        assert_eq!(ip("10.96.3.7/12").as_deref(), Some("10.96.0.1"));
        assert_eq!(ip("fd00:10:96::/112").as_deref(), Some("fd00:10:96::1"));
        assert_eq!(ip("10.0.0.0/31"), None);
        assert_eq!(ip("10.0.0.0"), None);
        assert_eq!(ip("nonsense/8"), None);
    }

    #[test]
    fn a_listen_address_is_published_as_it_is_unless_unspecified() {
        assert_eq!(
            public_ip("127.0.0.1".parse().unwrap()).to_string(),
            "127.0.0.1"
        );
        assert!(!public_ip("0.0.0.0".parse().unwrap()).is_unspecified());
    }
}
