//! In-process controllers (apiextensions-apiserver's naming/establishing and finalizer
//! controllers, and the namespace controller). They react to cache events and act through the
//! same registry pipeline as clients do.

use crate::registry::{Preconditions, Registry, UpdateMode, WriteOptions};
use crate::resources::{ResourceDef, CRD_PREFIX, NAMESPACE_PREFIX};
use crate::strategy::CRD_CLEANUP_FINALIZER;
use crest_api::meta;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How often controllers re-check everything even without events (retries after errors).
const RESYNC: Duration = Duration::from_secs(2);

/// Runs the controllers until `shutdown` fires.
pub async fn run(registry: Arc<Registry>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut events = registry.cache.subscribe();
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = resync.tick() => {}
            ev = events.recv() => match ev {
                Ok(_) | Err(RecvError::Lagged(_)) => {
                    // Coalesce a burst of events into one pass.
                    while let Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) = events.try_recv() {}
                }
                Err(RecvError::Closed) => return,
            },
        }
        if let Err(e) = reconcile(&registry).await {
            tracing::warn!(error = %e, "controller pass failed; will retry");
        }
    }
}

async fn reconcile(registry: &Registry) -> Result<(), crest_api::ApiError> {
    let crds: Vec<Value> = registry
        .cache
        .list(CRD_PREFIX)
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
        .collect();
    let res = registry.resources();
    let Some(crd_def) = res.lookup(
        crate::resources::CRD_GROUP,
        "v1",
        "customresourcedefinitions",
    ) else {
        return Ok(());
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
                .update_with(&crd_def, None, &name, UpdateMode::Status, move |v| {
                    if let Some(o) = v.as_object_mut() {
                        o.insert("status".into(), status.clone());
                    }
                })
                .await?;
        }
    }
    for ns in registry
        .cache
        .list(NAMESPACE_PREFIX)
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
    {
        if meta::deletion_timestamp(&ns).is_some() {
            finalize_namespace(registry, &ns).await?;
        }
    }
    Ok(())
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
            .update_with(crd_def, None, name, UpdateMode::Status, |v| {
                crest_apiextensions::set_condition(
                    v,
                    "Terminating",
                    "True",
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                );
            })
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
        let snap = registry.cache.list(&def.key_prefix);
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
                    &WriteOptions::default(),
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
        .update_with(crd_def, None, name, UpdateMode::Main, |v| {
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

/// The namespace controller's finalizer token in `spec.finalizers`.
const NAMESPACE_FINALIZER: &str = "kubernetes";

/// The namespace deletion condition types, in the order upstream maintains them, with the reason
/// and message each has when all is well.
const NAMESPACE_CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
];

/// Deletes everything in a deleting namespace; objects with finalizers are marked and waited
/// for. The namespace's status conditions report what remains (as the namespace controller's
/// do); once nothing does, the namespace is finalized (which deletes it).
async fn finalize_namespace(registry: &Registry, ns: &Value) -> Result<(), crest_api::ApiError> {
    let name = meta::name(ns).to_string();
    let ours = ns
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|f| f == NAMESPACE_FINALIZER));
    if !ours {
        return Ok(());
    }
    // "<resource>.<group>" -> instances left; finalizer -> instances holding it.
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for def in registry
        .resources()
        .storage_defs()
        .iter()
        .filter(|d| d.api.namespaced)
    {
        let snap = registry.cache.list(&def.list_prefix(Some(&name)));
        let mut left = 0;
        for o in snap.objects {
            let v = o.value()?;
            let state = if meta::deletion_timestamp(&v).is_some() {
                Some(v)
            } else {
                match registry
                    .delete(
                        def,
                        Some(&name),
                        meta::name(&v),
                        &Preconditions::default(),
                        &WriteOptions::default(),
                    )
                    .await
                {
                    Ok(d) if d.gone => None,
                    Ok(d) => Some(d.object),
                    Err(e) if e.code == 404 => None,
                    Err(e) => return Err(e),
                }
            };
            if let Some(v) = state {
                left += 1;
                for f in meta::finalizers(&v) {
                    *finalizers.entry(f).or_default() += 1;
                }
            }
        }
        if left > 0 {
            *remaining
                .entry(format!("{}.{}", def.api.plural, def.api.group))
                .or_default() += left;
        }
    }
    let res = registry.resources();
    let Some(ns_def) = res.lookup("", "v1", "namespaces") else {
        return Ok(());
    };
    let failing = namespace_conditions(&remaining, &finalizers);
    let current = ns
        .pointer("/status/conditions")
        .cloned()
        .unwrap_or(json!([]));
    if update_namespace_conditions(&mut current.clone(), &failing) {
        registry
            .update_with(&ns_def, None, &name, UpdateMode::Status, |v| {
                if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) {
                    let mut conds = status.get("conditions").cloned().unwrap_or(json!([]));
                    update_namespace_conditions(&mut conds, &failing);
                    status.insert("conditions".into(), conds);
                }
            })
            .await
            .map(|_| ())
            .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })?;
    }
    if !remaining.is_empty() {
        return Ok(());
    }
    registry
        .update_with(&ns_def, None, &name, UpdateMode::Finalize, |v| {
            if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
                let left: Vec<Value> = spec
                    .get("finalizers")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter(|f| *f != NAMESPACE_FINALIZER)
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                spec.insert("finalizers".into(), Value::Array(left));
            }
        })
        .await
        .map(|_| ())
        .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })
}

/// The failing (status True) namespace conditions for what remains: type -> (reason, message).
fn namespace_conditions(
    remaining: &BTreeMap<String, usize>,
    finalizers: &BTreeMap<String, usize>,
) -> BTreeMap<&'static str, (&'static str, String)> {
    let mut out = BTreeMap::new();
    if !remaining.is_empty() {
        let mut parts: Vec<String> = remaining
            .iter()
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        parts.sort();
        out.insert(
            "NamespaceContentRemaining",
            (
                "SomeResourcesRemain",
                format!("Some resources are remaining: {}", parts.join(", ")),
            ),
        );
    }
    if !finalizers.is_empty() {
        let mut parts: Vec<String> = finalizers
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        parts.sort();
        out.insert(
            "NamespaceFinalizersRemaining",
            (
                "SomeFinalizerRemain",
                format!("Some finalizers are remaining: {}", parts.join(", ")),
            ),
        );
    }
    out
}

/// Upstream's `updateConditions`: every maintained type is present, failing ones True with their
/// reason and message, the others False with the all-is-well ones; lastTransitionTime changes
/// only with the status. Returns whether anything changed.
fn update_namespace_conditions(
    conditions: &mut Value,
    failing: &BTreeMap<&'static str, (&'static str, String)>,
) -> bool {
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return false;
    };
    let mut changed = false;
    for (ty, ok_reason, ok_message) in NAMESPACE_CONDITIONS {
        let (status, reason, message) = match failing.get(ty) {
            Some((r, m)) => ("True", *r, m.clone()),
            None => ("False", ok_reason, ok_message.to_string()),
        };
        match list.iter_mut().find(|c| c["type"] == ty) {
            None => {
                list.push(json!({
                    "type": ty,
                    "status": status,
                    "lastTransitionTime": meta::now_rfc3339(),
                    "reason": reason,
                    "message": message,
                }));
                changed = true;
            }
            Some(c) => {
                if c["status"] != status || c["reason"] != reason || c["message"] != message {
                    if c["status"] != status {
                        c["lastTransitionTime"] = meta::now_rfc3339().into();
                    }
                    c["status"] = status.into();
                    c["reason"] = reason.into();
                    c["message"] = message.into();
                    changed = true;
                }
            }
        }
    }
    changed
}
