//! In-process controllers (apiextensions-apiserver's naming/establishing and finalizer
//! controllers, the namespace controller, the service accounts controller and the root CA
//! publisher). They react to cache events and act through the same registry pipeline as
//! clients do.

pub(crate) mod clusterroleaggregation;
pub(crate) mod compaction;
pub(crate) mod endpointslicemirroring;
pub(crate) mod event_ttl;
pub(crate) mod gc;
pub(crate) mod kubernetesservice;
pub(crate) mod leaderelection;
pub(crate) mod managers;
pub(crate) mod namespace;
pub(crate) mod rbacbootstrap;
pub(crate) mod rootcacertpublisher;
pub(crate) mod serviceaccounts;
pub(crate) mod storageversionmigration;

use crate::registry::customresourcedefinition::CRD_CLEANUP_FINALIZER;
use crate::registry::resources::ResourceDef;
use crate::registry::{Preconditions, Registry, UpdateMode, WriteOptions};
use crate::store::keys::{
    CONFIGMAP_PREFIX, CRD_GROUP, CRD_PREFIX, NAMESPACE_PREFIX, SERVICEACCOUNT_PREFIX,
};
use crest_api::meta;
use managers::KUBE_APISERVER;
use namespace::finalize_namespace;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How often controllers re-check everything even without events (retries after errors).
const RESYNC: Duration = Duration::from_secs(2);

/// Runs the controllers until `shutdown` fires. `root_ca`: the CA bundle published in every
/// namespace's `kube-root-ca.crt` (none without TLS).
pub(crate) async fn run(
    registry: Arc<Registry>,
    root_ca: Option<String>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut events = registry.reads().subscribe();
    let mut resync = tokio::time::interval(RESYNC);
    // While a CRD or namespace is being deleted, every write may be progress (its contents
    // going), so every change starts a pass.
    let mut finalizing = true;
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = resync.tick() => {}
            ev = events.recv() => match ev {
                // Only CRDs, namespaces, ServiceAccounts and the root CA ConfigMaps concern
                // these controllers: other writes (an operator's Events at 1,000/s) start no
                // pass.
                Ok(e) if !finalizing && !concerns(&e.key) => continue,
                Ok(_) | Err(RecvError::Lagged(_)) => {
                    // Coalesce a burst of events into one pass.
                    while let Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) = events.try_recv() {}
                }
                Err(RecvError::Closed) => return,
            },
        }
        match reconcile(&registry, root_ca.as_deref()).await {
            Ok(f) => finalizing = f,
            Err(e) => tracing::warn!(error = %e, "controller pass failed; will retry"),
        }
    }
}

/// Whether a change of `key` can give these controllers work.
fn concerns(key: &str) -> bool {
    [CRD_PREFIX, NAMESPACE_PREFIX, SERVICEACCOUNT_PREFIX]
        .iter()
        .any(|p| key.starts_with(p))
        || key.starts_with(CONFIGMAP_PREFIX)
            && key.ends_with(&format!("/{}", rootcacertpublisher::ROOT_CA_CONFIG_MAP))
}

/// One pass of the controllers; answers whether a CRD or namespace is being deleted.
async fn reconcile(
    registry: &Registry,
    root_ca: Option<&str>,
) -> Result<bool, crest_api::ApiError> {
    let mut finalizing = false;
    let crds: Vec<Value> = registry
        .reads()
        .snapshot(CRD_PREFIX)
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
        .collect();
    let res = registry.resources();
    let Some(crd_def) = res.lookup(CRD_GROUP, "v1", "customresourcedefinitions") else {
        return Ok(false);
    };
    let mut by_group: std::collections::HashMap<&str, Vec<Value>> = Default::default();
    for crd in &crds {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or_default();
        by_group.entry(group).or_default().push(crd.clone());
    }
    for crd in &crds {
        let name = meta::name(crd).to_string();
        if meta::deletion_timestamp(crd).is_some() {
            finalizing = true;
            if meta::finalizers(crd)
                .iter()
                .any(|f| f == CRD_CLEANUP_FINALIZER)
            {
                finalize_crd(registry, &crd_def, crd, &name).await?;
            }
            continue;
        }
        // Names of CRDs that were not accepted (conflicts) are re-checked when others change.
        // Only CRDs of the same group can conflict; the CRD itself is among them and the naming
        // check skips its own name (a pass stays linear in the number of CRDs: 500 installed
        // made per-CRD copies of all the others the cost of every CRD change).
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let same_group = by_group.get(group).map(Vec::as_slice).unwrap_or_default();
        let mut updated = crd.clone();
        crest_apiextensions::accept_and_establish(&mut updated, same_group);
        if updated.get("status") != crd.get("status") {
            let status = updated.get("status").cloned().unwrap_or(json!({}));
            registry
                .update_with(
                    &crd_def,
                    None,
                    &name,
                    UpdateMode::Status,
                    KUBE_APISERVER,
                    move |v| {
                        if let Some(o) = v.as_object_mut() {
                            o.insert("status".into(), status.clone());
                        }
                    },
                )
                .await?;
        }
    }
    for ns in registry
        .reads()
        .snapshot(NAMESPACE_PREFIX)
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
    {
        if meta::deletion_timestamp(&ns).is_some() {
            finalizing = true;
            finalize_namespace(registry, &ns).await?;
        }
    }
    serviceaccounts::ensure_default_service_accounts(registry).await?;
    if let Some(ca) = root_ca {
        rootcacertpublisher::publish(registry, ca).await?;
    }
    Ok(finalizing)
}

/// Deletes every instance of a deleting CRD, then drops its cleanup finalizer (which deletes it).
async fn finalize_crd(
    registry: &Registry,
    crd_def: &ResourceDef,
    crd: &Value,
    name: &str,
) -> Result<(), crest_api::ApiError> {
    let in_progress = crd
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Terminating" && c["reason"] == "InstanceDeletionInProgress")
        });
    if !in_progress {
        registry
            .update_with(
                crd_def,
                None,
                name,
                UpdateMode::Status,
                KUBE_APISERVER,
                |v| {
                    crest_apiextensions::set_condition(
                        v,
                        "Terminating",
                        "True",
                        "InstanceDeletionInProgress",
                        "CustomResource deletion is in progress",
                    );
                },
            )
            .await?;
    }
    let defs: Vec<Arc<ResourceDef>> = registry
        .resources()
        .storage_defs()
        .into_iter()
        .filter(|d| d.crd_name.as_deref() == Some(name))
        .collect();
    let mut remaining = 0;
    for def in &defs {
        let snap = registry.reads().snapshot(&def.key_prefix);
        for o in snap.objects {
            let v = o.value()?;
            remaining += 1;
            if meta::deletion_timestamp(&v).is_some() {
                continue;
            }
            let ns = meta::namespace(&v).to_string();
            let ns = if def.api.namespaced {
                Some(ns.as_str())
            } else {
                None
            };
            match registry
                .delete(
                    def,
                    ns,
                    meta::name(&v),
                    &Preconditions::default(),
                    &WriteOptions::by(KUBE_APISERVER),
                )
                .await
            {
                Ok(d) if d.gone => remaining -= 1,
                Ok(_) => {}
                Err(e) if e.code == 404 => remaining -= 1,
                Err(e) => return Err(e),
            }
        }
    }
    if remaining > 0 {
        return Ok(());
    }
    registry
        .update_with(crd_def, None, name, UpdateMode::Main, KUBE_APISERVER, |v| {
            let fins: Vec<String> = meta::finalizers(v)
                .into_iter()
                .filter(|f| f != CRD_CLEANUP_FINALIZER)
                .collect();
            meta::set(v, "finalizers", json!(fins));
        })
        .await
        .map(|_| ())
        .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })
}
