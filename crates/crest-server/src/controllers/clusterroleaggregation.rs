//! The ClusterRole aggregation controller (kube-controller-manager's
//! `clusterrole-aggregation` controller, pkg/controller/clusterroleaggregation): whenever a
//! ClusterRole changes, every ClusterRole with an `aggregationRule` gets as `rules` the rules
//! of the ClusterRoles its selectors select (selector by selector, roles in name order, each
//! rule once: `crest_rbac::aggregate`), written only when they differ, as upstream's
//! server-side apply of `rules` alone with field manager `clusterrole-aggregation-controller`
//! and `force`.

use crate::registry::{Registry, UpdateMode, WriteOptions};
use crate::store::keys::CLUSTER_ROLE_PREFIX;
use crest_api::{meta, ApiError};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// The field manager the aggregated rules are applied for.
pub(crate) const MANAGER: &str = "clusterrole-aggregation-controller";

/// Runs the controller until `shutdown` fires: one pass at start, then one after every batch
/// of changes that touches a ClusterRole (a pass's own writes start the next, which finds
/// nothing to do unless an aggregated role is itself aggregated).
pub(crate) async fn run(registry: Arc<Registry>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut events = registry.reads().subscribe();
    let mut dirty = true;
    loop {
        if std::mem::take(&mut dirty) {
            sync(&registry).await;
        }
        tokio::select! {
            _ = shutdown.changed() => return,
            ev = events.recv() => match ev {
                Ok(ev) => {
                    dirty = ev.key.starts_with(CLUSTER_ROLE_PREFIX);
                    loop {
                        match events.try_recv() {
                            Ok(ev) => dirty |= ev.key.starts_with(CLUSTER_ROLE_PREFIX),
                            Err(TryRecvError::Lagged(_)) => dirty = true,
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => dirty = true,
                Err(RecvError::Closed) => return,
            },
        }
    }
}

/// One pass over every ClusterRole (upstream's `syncClusterRole` of each aggregated one).
async fn sync(registry: &Registry) {
    let roles: Vec<Value> = registry
        .reads()
        .snapshot(CLUSTER_ROLE_PREFIX)
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
        .collect();
    for (name, rules) in crest_rbac::aggregate(&roles) {
        if let Err(e) = apply_rules(registry, &name, rules).await {
            tracing::warn!(clusterrole = %name, error = %e.message, "aggregating ClusterRole rules failed");
        }
    }
}

/// `applyClusterRoles`: `ClusterRole(name).WithRules(rules...)` applied with force (no rules:
/// the field is left out of the configuration, so the controller's ownership of it ends).
async fn apply_rules(registry: &Registry, name: &str, rules: Vec<Value>) -> Result<(), ApiError> {
    let res = registry.resources();
    let Some(def) = res.lookup(crate::registry::rbac::GROUP, "v1", "clusterroles") else {
        return Ok(());
    };
    let Some(m) = def.managed() else {
        return Err(ApiError::internal("no merge schema for clusterroles"));
    };
    let mut config = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
    });
    if !rules.is_empty() {
        config["rules"] = Value::Array(rules);
    }
    let fm = crest_managedfields::FieldManager {
        schema: &m.schema,
        api_version: &m.api_version,
        kind: &def.api.kind,
        subresource: "",
        reset_fields: m.reset_fields(""),
    };
    // The merge records the write in managedFields: the registry records nothing more.
    let opts = WriteOptions::new(false);
    match registry
        .patch(&def, None, name, UpdateMode::Main, &opts, |current| {
            fm.apply(Some(current), &config, MANAGER, true, &meta::now_rfc3339())
                .map_err(|e| e.to_api_error())
        })
        .await
    {
        // Deleted meanwhile: nothing to aggregate into.
        Err(e) if e.code == 404 => Ok(()),
        r => r.map(|_| ()),
    }
}
