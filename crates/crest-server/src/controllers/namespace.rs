//! The namespace controller: a deleting namespace's content is deleted, its conditions report
//! what remains, then its `kubernetes` finalizer is dropped. Also the default namespaces every
//! cluster has.

use crate::controllers::managers::{KUBE_APISERVER, KUBE_CONTROLLER_MANAGER};
use crate::registry::{self, Preconditions, Registry, UpdateMode, WriteOptions};
use crate::store::keys::NAMESPACE_PREFIX;
use crest_api::meta;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The creates of the default namespaces that are missing, to be issued together with the
/// bootstrap policy's writes (see [`super::rbacbootstrap::ensure_bootstrap`]).
pub(crate) fn default_namespace_creates(
    registry: &Registry,
) -> Vec<impl std::future::Future<Output = Result<(), crest_api::ApiError>> + '_> {
    let res = registry.resources();
    let Some(def) = res.lookup("", "v1", "namespaces") else {
        return vec![];
    };
    DEFAULT_NAMESPACES
        .into_iter()
        .filter(|name| registry.reads().get(&def.key(None, name)).is_none())
        .map(|name| {
            let def = def.clone();
            async move {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
                match registry
                    .create(&def, None, obj, &registry::WriteOptions::by(KUBE_APISERVER))
                    .await
                {
                    Err(e) if e.code != 409 => Err(e),
                    _ => Ok(()),
                }
            }
        })
        .collect()
}

/// The namespaces every cluster has (kube-apiserver's system namespaces controller).
pub(crate) const DEFAULT_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

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
pub(crate) async fn finalize_namespace(
    registry: &Registry,
    ns: &Value,
) -> Result<(), crest_api::ApiError> {
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
        let snap = registry.reads().snapshot(&def.list_prefix(Some(&name)));
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
                        &WriteOptions::by(KUBE_CONTROLLER_MANAGER),
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
            .update_with(
                &ns_def,
                None,
                &name,
                UpdateMode::Status,
                KUBE_CONTROLLER_MANAGER,
                |v| {
                    if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) {
                        let mut conds = status.get("conditions").cloned().unwrap_or(json!([]));
                        update_namespace_conditions(&mut conds, &failing);
                        status.insert("conditions".into(), conds);
                    }
                },
            )
            .await
            .map(|_| ())
            .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })?;
    }
    if !remaining.is_empty() {
        return Ok(());
    }
    registry
        .update_with(
            &ns_def,
            None,
            &name,
            UpdateMode::Finalize,
            KUBE_CONTROLLER_MANAGER,
            |v| {
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
            },
        )
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

/// The names of the namespaces that are not terminating (no deletionTimestamp, phase not
/// `Terminating`): where the per-namespace controllers (ServiceAccounts, the root CA) create.
pub(crate) fn active_namespaces(registry: &Registry) -> Result<Vec<String>, crest_api::ApiError> {
    let mut active = vec![];
    for ns in registry.reads().snapshot(NAMESPACE_PREFIX).objects {
        let Some(name) = ns.key.strip_prefix(NAMESPACE_PREFIX) else {
            continue;
        };
        let v = ns.value()?;
        let terminating = meta::deletion_timestamp(&v).is_some()
            || v.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating");
        if !terminating {
            active.push(name.to_string());
        }
    }
    Ok(active)
}
