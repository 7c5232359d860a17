//! The EndpointSlice mirroring controller (kube-controller-manager's
//! `endpointslicemirroring`): the Endpoints of a Service without a selector — the manually
//! managed endpoints Services in Crest are for — are mirrored into EndpointSlices labelled
//! with the Service's name and owned by the Endpoints, so clients that read EndpointSlices
//! (`kubectl describe service`, proxies, webhook routing) see them, as on a cluster. The
//! garbage collector removes the slices with their Endpoints; this controller updates them and
//! removes them when the Service goes or gets a selector.

use crate::controllers::managers::KUBE_CONTROLLER_MANAGER;
use crate::registry::{Preconditions, Registry, WriteOptions};
use crate::store::keys::{self, ENDPOINTSLICE_PREFIX, ENDPOINTS_PREFIX, SERVICE_PREFIX};
use crest_api::meta;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER: &str = "endpointslicemirroring-controller.k8s.io";
const SERVICE_NAME: &str = "kubernetes.io/service-name";
const SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";

/// Runs the controller until `shutdown` fires.
pub(crate) async fn run(registry: Arc<Registry>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut events = registry.reads().subscribe();
    let mut queue = everything(&registry);
    loop {
        for (ns, name) in std::mem::take(&mut queue) {
            if let Err(e) = reconcile(&registry, &ns, &name).await {
                tracing::warn!(namespace = %ns, name = %name, error = %e.message, "mirroring endpoints failed");
            }
        }
        tokio::select! {
            _ = shutdown.changed() => return,
            ev = events.recv() => match ev {
                Ok(ev) => {
                    queue.extend(affected(&ev.key));
                    loop {
                        match events.try_recv() {
                            Ok(ev) => queue.extend(affected(&ev.key)),
                            Err(TryRecvError::Lagged(_)) => queue.extend(everything(&registry)),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => queue.extend(everything(&registry)),
                Err(RecvError::Closed) => return,
            },
        }
    }
}

/// The (namespace, name) a changed key concerns: a Service's or an Endpoints' own, or for a
/// mirrored slice its Service's (so one edited or deleted by hand is restored).
fn affected(key: &str) -> Option<(String, String)> {
    for prefix in [ENDPOINTS_PREFIX, SERVICE_PREFIX] {
        if let Some(rest) = key.strip_prefix(prefix) {
            let (ns, name) = rest.split_once('/')?;
            return Some((ns.to_string(), name.to_string()));
        }
    }
    None
}

/// Every Endpoints object and every mirrored slice's Service.
fn everything(registry: &Registry) -> BTreeSet<(String, String)> {
    let mut all: BTreeSet<(String, String)> = registry
        .reads()
        .snapshot(ENDPOINTS_PREFIX)
        .objects
        .iter()
        .filter_map(|o| affected(&o.key))
        .collect();
    for o in registry
        .reads()
        .snapshot(ENDPOINTSLICE_PREFIX)
        .objects
        .iter()
    {
        if let Ok(v) = o.value() {
            if label(&v, MANAGED_BY) == Some(CONTROLLER) {
                if let Some(svc) = label(&v, SERVICE_NAME) {
                    all.insert((meta::namespace(&v).to_string(), svc.to_string()));
                }
            }
        }
    }
    all
}

fn label<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    meta::labels(v)?.get(key)?.as_str()
}

async fn reconcile(registry: &Registry, ns: &str, name: &str) -> Result<(), crest_api::ApiError> {
    let res = registry.resources();
    let Some(def) = res.lookup("discovery.k8s.io", "v1", "endpointslices") else {
        return Ok(());
    };
    let get = |prefix: &str| {
        registry
            .reads()
            .get(&keys::object_key(prefix, Some(ns), name))
            .and_then(|o| o.value().ok())
    };
    let service = get(SERVICE_PREFIX);
    let endpoints = get(ENDPOINTS_PREFIX);
    let mirrored = match (&service, &endpoints) {
        (Some(svc), Some(ep)) => {
            let selector = svc
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty());
            !selector
                && label(ep, SKIP_MIRROR) != Some("true")
                && meta::deletion_timestamp(ep).is_none()
        }
        _ => false,
    };
    let desired = match (&endpoints, mirrored) {
        (Some(ep), true) => desired_slices(ep, name),
        _ => vec![],
    };
    let existing: Vec<Value> = registry
        .reads()
        .snapshot(&keys::list_prefix(ENDPOINTSLICE_PREFIX, Some(ns)))
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
        .filter(|s| {
            label(s, MANAGED_BY) == Some(CONTROLLER) && label(s, SERVICE_NAME) == Some(name)
        })
        .collect();
    let opts = WriteOptions::by(KUBE_CONTROLLER_MANAGER);
    for want in &desired {
        let slice_name = meta::name(want);
        match existing.iter().find(|s| meta::name(s) == slice_name) {
            None => match registry.create(&def, Some(ns), want.clone(), &opts).await {
                Ok(_) => {}
                // Already there (a race with ourselves), or the namespace is being deleted.
                Err(e) if e.code == 409 || e.code == 403 => {}
                Err(e) => return Err(e),
            },
            Some(have) if differs(have, want) => {
                let mut update = want.clone();
                if let Some(m) = meta::meta_mut(&mut update) {
                    m.insert("uid".into(), meta::uid(have).into());
                }
                registry
                    .update(
                        &def,
                        Some(ns),
                        slice_name,
                        update,
                        crate::registry::UpdateMode::Main,
                        &opts,
                    )
                    .await?;
            }
            Some(_) => {}
        }
    }
    for have in &existing {
        if !desired.iter().any(|d| meta::name(d) == meta::name(have)) {
            match registry
                .delete(
                    &def,
                    Some(ns),
                    meta::name(have),
                    &Preconditions::default(),
                    &opts,
                )
                .await
            {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Whether a mirrored slice is out of date: its data, labels or owner differ.
fn differs(have: &Value, want: &Value) -> bool {
    ["addressType", "endpoints", "ports"]
        .iter()
        .any(|k| have.get(*k) != want.get(*k))
        || have.pointer("/metadata/labels") != want.pointer("/metadata/labels")
        || have.pointer("/metadata/ownerReferences") != want.pointer("/metadata/ownerReferences")
}

/// The slices mirroring `ep`: one per subset and address family (`<name>-<n>`), with the
/// subset's ports, ready addresses as ready endpoints and not-ready ones as not ready.
fn desired_slices(ep: &Value, name: &str) -> Vec<Value> {
    let mut labels: Map<String, Value> = meta::labels(ep).cloned().unwrap_or_default();
    labels.remove(SKIP_MIRROR);
    labels.insert(SERVICE_NAME.into(), name.into());
    labels.insert(MANAGED_BY.into(), CONTROLLER.into());
    let owner = json!([{
        "apiVersion": "v1", "kind": "Endpoints", "name": name, "uid": meta::uid(ep),
        "controller": true, "blockOwnerDeletion": true,
    }]);
    let mut out = vec![];
    let subsets = ep
        .get("subsets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for ss in &subsets {
        let ports: Vec<Value> = ss
            .get("ports")
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .map(|p| {
                        let mut x = Map::new();
                        x.insert("name".into(), p.get("name").cloned().unwrap_or(json!("")));
                        x.insert(
                            "protocol".into(),
                            p.get("protocol").cloned().unwrap_or(json!("TCP")),
                        );
                        if let Some(n) = p.get("port") {
                            x.insert("port".into(), n.clone());
                        }
                        if let Some(a) = p.get("appProtocol") {
                            x.insert("appProtocol".into(), a.clone());
                        }
                        Value::Object(x)
                    })
                    .collect()
            })
            .unwrap_or_default();
        for family in ["IPv4", "IPv6"] {
            let mut endpoints = vec![];
            for (field, ready) in [("addresses", true), ("notReadyAddresses", false)] {
                for a in ss
                    .get(field)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let ip = a.get("ip").and_then(Value::as_str).unwrap_or("");
                    let v6 = ip.contains(':');
                    if (family == "IPv6") != v6 {
                        continue;
                    }
                    let mut e = Map::new();
                    e.insert("addresses".into(), json!([ip]));
                    e.insert(
                        "conditions".into(),
                        json!({"ready": ready, "serving": ready, "terminating": false}),
                    );
                    for k in ["hostname", "nodeName", "targetRef"] {
                        if let Some(v) = a.get(k) {
                            e.insert(k.into(), v.clone());
                        }
                    }
                    endpoints.push(Value::Object(e));
                }
            }
            if endpoints.is_empty() {
                continue;
            }
            out.push(json!({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {
                    "name": format!("{name}-{}", out.len()),
                    "labels": labels.clone(),
                    "ownerReferences": owner.clone(),
                },
                "addressType": family,
                "endpoints": endpoints,
                "ports": ports.clone(),
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_per_subset_and_family() {
        let ep = json!({"metadata": {"name": "web", "uid": "u1", "labels": {"team": "a"}},
        "subsets": [
            {"addresses": [{"ip": "10.0.0.1", "hostname": "h"}, {"ip": "fd00::1"}],
             "notReadyAddresses": [{"ip": "10.0.0.2"}],
             "ports": [{"name": "https", "port": 8443, "protocol": "TCP"}]},
        ]});
        let slices = desired_slices(&ep, "web");
        assert_eq!(slices.len(), 2);
        assert_eq!(slices[0]["metadata"]["name"], "web-0");
        assert_eq!(
            slices[0]["metadata"]["labels"],
            json!({"team": "a", SERVICE_NAME: "web", MANAGED_BY: CONTROLLER})
        );
        assert_eq!(slices[0]["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert_eq!(slices[0]["addressType"], "IPv4");
        assert_eq!(
            slices[0]["endpoints"],
            json!([
                {"addresses": ["10.0.0.1"], "hostname": "h",
                 "conditions": {"ready": true, "serving": true, "terminating": false}},
                {"addresses": ["10.0.0.2"],
                 "conditions": {"ready": false, "serving": false, "terminating": false}},
            ])
        );
        assert_eq!(
            slices[0]["ports"],
            json!([{"name": "https", "port": 8443, "protocol": "TCP"}])
        );
        assert_eq!(slices[1]["addressType"], "IPv6");
        assert_eq!(
            affected("/registry/services/endpoints/ns/web"),
            Some(("ns".into(), "web".into()))
        );
        assert_eq!(
            affected("/registry/services/specs/ns/web"),
            Some(("ns".into(), "web".into()))
        );
        assert_eq!(affected("/registry/configmaps/ns/web"), None);
    }
}
