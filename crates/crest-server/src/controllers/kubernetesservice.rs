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
        let family = family(self.service_ip);
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": NAME, "namespace": NAMESPACE,
                            "labels": {"component": "apiserver", "provider": "kubernetes"}},
               "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443,
                                   "targetPort": self.port}],
                        "clusterIP": self.service_ip.to_string(),
                        "clusterIPs": [self.service_ip.to_string()],
                        "ipFamilies": [family],
                        "ipFamilyPolicy": "SingleStack",
                        "sessionAffinity": "None",
                        "type": "ClusterIP"}})
    }

    fn endpoints_labels() -> Value {
        json!({"endpointslice.kubernetes.io/skip-mirror": "true"})
    }

    fn subsets(&self) -> Value {
        json!([{"addresses": [{"ip": self.public_ip.to_string()}],
                "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}]}])
    }

    fn slice_labels() -> Value {
        json!({"kubernetes.io/service-name": NAME})
    }

    fn slice_endpoints(&self) -> Value {
        json!([{"addresses": [self.public_ip.to_string()], "conditions": {"ready": true}}])
    }

    fn slice_ports(&self) -> Value {
        json!([{"name": "https", "port": self.port, "protocol": "TCP"}])
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

/// One pass: the Service created when missing, the Endpoints and EndpointSlice put back when
/// they differ. A namespace `default` that is missing or terminating is no error.
pub(crate) async fn reconcile(registry: &Registry, a: &Apiserver) -> Result<(), ApiError> {
    let tolerated = |e: ApiError| {
        if matches!(e.code, 403 | 404 | 409) {
            Ok(())
        } else {
            Err(e)
        }
    };
    let res = registry.resources();
    if let Some(def) = res.lookup("", "v1", "services") {
        if registry
            .reads()
            .get(&def.key(Some(NAMESPACE), NAME))
            .is_none()
        {
            let created = registry
                .create(
                    &def,
                    Some(NAMESPACE),
                    a.service(),
                    &WriteOptions::by(KUBE_APISERVER),
                )
                .await;
            created.map(|_| ()).or_else(tolerated)?;
        }
    }
    if let Some(def) = res.lookup("", "v1", "endpoints") {
        let (labels, subsets) = (Apiserver::endpoints_labels(), a.subsets());
        let current = stored(registry, &def.key(Some(NAMESPACE), NAME));
        match current {
            None => {
                let obj = json!({"apiVersion": "v1", "kind": "Endpoints",
                                 "metadata": {"name": NAME, "namespace": NAMESPACE,
                                              "labels": labels},
                                 "subsets": subsets});
                let created = registry
                    .create(
                        &def,
                        Some(NAMESPACE),
                        obj,
                        &WriteOptions::by(KUBE_APISERVER),
                    )
                    .await;
                created.map(|_| ()).or_else(tolerated)?;
            }
            Some(cur)
                if cur.pointer("/metadata/labels") != Some(&labels)
                    || cur.get("subsets") != Some(&subsets) =>
            {
                let updated = registry
                    .update_with(
                        &def,
                        Some(NAMESPACE),
                        NAME,
                        UpdateMode::Main,
                        KUBE_APISERVER,
                        move |v| {
                            crest_api::meta::set(v, "labels", labels.clone());
                            if let Some(o) = v.as_object_mut() {
                                o.insert("subsets".into(), subsets.clone());
                            }
                        },
                    )
                    .await;
                updated.map(|_| ()).or_else(tolerated)?;
            }
            Some(_) => {}
        }
    }
    if let Some(def) = res.lookup("discovery.k8s.io", "v1", "endpointslices") {
        let labels = Apiserver::slice_labels();
        let (endpoints, ports) = (a.slice_endpoints(), a.slice_ports());
        let address_type = family(a.public_ip);
        let current = stored(registry, &def.key(Some(NAMESPACE), NAME));
        match current {
            None => {
                let obj = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                                 "metadata": {"name": NAME, "namespace": NAMESPACE,
                                              "labels": labels},
                                 "addressType": address_type,
                                 "endpoints": endpoints, "ports": ports});
                let created = registry
                    .create(
                        &def,
                        Some(NAMESPACE),
                        obj,
                        &WriteOptions::by(KUBE_APISERVER),
                    )
                    .await;
                created.map(|_| ()).or_else(tolerated)?;
            }
            Some(cur)
                if cur.pointer("/metadata/labels") != Some(&labels)
                    || cur.get("endpoints") != Some(&endpoints)
                    || cur.get("ports") != Some(&ports)
                    || cur.get("addressType").and_then(Value::as_str) != Some(address_type) =>
            {
                // The address type cannot change: a slice of the other family is replaced.
                if cur.get("addressType").and_then(Value::as_str) != Some(address_type) {
                    let deleted = registry
                        .delete(
                            &def,
                            Some(NAMESPACE),
                            NAME,
                            &Default::default(),
                            &WriteOptions::by(KUBE_APISERVER),
                        )
                        .await;
                    return deleted.map(|_| ()).or_else(tolerated);
                }
                let updated = registry
                    .update_with(
                        &def,
                        Some(NAMESPACE),
                        NAME,
                        UpdateMode::Main,
                        KUBE_APISERVER,
                        move |v| {
                            crest_api::meta::set(v, "labels", labels.clone());
                            if let Some(o) = v.as_object_mut() {
                                o.insert("endpoints".into(), endpoints.clone());
                                o.insert("ports".into(), ports.clone());
                            }
                        },
                    )
                    .await;
                updated.map(|_| ()).or_else(tolerated)?;
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn stored(registry: &Registry, key: &str) -> Option<Value> {
    registry.reads().get(key).and_then(|o| o.value().ok())
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
