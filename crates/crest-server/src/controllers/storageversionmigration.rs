//! The storage version migrator (kube-controller-manager's `storageversionmigrator`, 1.30+):
//! for each StorageVersionMigration not yet finished, every object of the resource it names is
//! rewritten in the resource's current storage version, then the migration is marked Succeeded
//! (or Failed when the resource is not served).
//!
//! Each rewrite is conditioned on the revision read, so a concurrent write is never lost (it
//! stored the object in the current version itself). A migration interrupted by a restart runs
//! again from the start: objects already in the storage version are not written again.

use crate::controllers::managers::KUBE_CONTROLLER_MANAGER;
use crate::registry::storagemigration::storageversionmigration::{GROUP, PLURAL, VERSION};
use crate::registry::{Registry, UpdateMode};
use crate::store::keys::STORAGEVERSIONMIGRATION_PREFIX;
use crest_api::{meta, ApiError};
use crest_core_api::storagemigration::{condition_true, FAILED, RUNNING, SUCCEEDED};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How often unfinished migrations are retried without events (after a storage error).
const RESYNC: Duration = Duration::from_secs(2);

const RUNNING_REASON: &str = "StorageVersionMigrationInProgress";
const SUCCEEDED_REASON: &str = "StorageVersionMigrationSucceeded";
const FAILED_REASON: &str = "StorageVersionMigrationFailed";

/// Runs the migrator until `shutdown` fires.
pub(crate) async fn run(registry: Arc<Registry>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut events = registry.reads().subscribe();
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = resync.tick() => {}
            ev = events.recv() => match ev {
                Ok(e) if !e.key.starts_with(STORAGEVERSIONMIGRATION_PREFIX) => continue,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
        if let Err(e) = pass(&registry).await {
            tracing::warn!(error = %e, "storage version migration pass failed; will retry");
        }
    }
}

/// Runs every unfinished migration.
async fn pass(registry: &Registry) -> Result<(), ApiError> {
    let pending: Vec<Value> = registry
        .reads()
        .snapshot(STORAGEVERSIONMIGRATION_PREFIX)
        .objects
        .iter()
        .filter_map(|o| o.value().ok())
        .filter(|svm| {
            meta::deletion_timestamp(svm).is_none()
                && !condition_true(svm, SUCCEEDED)
                && !condition_true(svm, FAILED)
        })
        .collect();
    for svm in pending {
        migrate(registry, &svm).await?;
    }
    Ok(())
}

async fn migrate(registry: &Registry, svm: &Value) -> Result<(), ApiError> {
    let res = registry.resources();
    let Some(svm_def) = res.lookup(GROUP, VERSION, PLURAL) else {
        return Ok(());
    };
    let name = meta::name(svm).to_string();
    // The resource version the migration starts from, and Running.
    if !condition_true(svm, RUNNING) {
        let rv = registry.reads().revision().to_string();
        registry
            .update_with(
                &svm_def,
                None,
                &name,
                UpdateMode::Status,
                KUBE_CONTROLLER_MANAGER,
                move |v| {
                    if v.pointer("/status/resourceVersion")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        set_status_field(v, "resourceVersion", json!(rv));
                    }
                    set_condition(v, RUNNING, RUNNING_REASON, "");
                },
            )
            .await?;
    }
    let field = |f: &str| {
        svm.pointer(&format!("/spec/resource/{f}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let Some(def) = res.lookup(&field("group"), &field("version"), &field("resource")) else {
        registry
            .update_with(
                &svm_def,
                None,
                &name,
                UpdateMode::Status,
                KUBE_CONTROLLER_MANAGER,
                |v| {
                    set_condition(
                        v,
                        FAILED,
                        FAILED_REASON,
                        "resource does not exist in discovery",
                    );
                },
            )
            .await?;
        return Ok(());
    };
    let snapshot = registry.reads().snapshot(&def.list_prefix(None));
    let (mut rewritten, mut raced) = (0usize, 0usize);
    for obj in snapshot.objects.iter() {
        if registry.rewrite_in_storage_version(&def, obj).await? {
            rewritten += 1;
        } else {
            raced += 1;
        }
    }
    tracing::info!(migration = %name, resource = %def.api.group_resource(), rewritten, raced, "storage version migration done");
    registry
        .update_with(
            &svm_def,
            None,
            &name,
            UpdateMode::Status,
            KUBE_CONTROLLER_MANAGER,
            |v| {
                set_condition(v, SUCCEEDED, SUCCEEDED_REASON, "");
            },
        )
        .await?;
    Ok(())
}

fn set_status_field(v: &mut Value, field: &str, value: Value) {
    if let Some(o) = v.as_object_mut() {
        let status = o.entry("status").or_insert_with(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            s.insert(field.into(), value);
        }
    }
}

/// `setStatusConditions`: condition `kind` is added True unless it already is; Succeeded or
/// Failed set Running to False.
fn set_condition(v: &mut Value, kind: &str, reason: &str, message: &str) {
    if condition_true(v, kind) {
        return;
    }
    let mut conds = v
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if kind == SUCCEEDED || kind == FAILED {
        for c in conds.iter_mut().filter(|c| c["type"] == RUNNING) {
            c["status"] = json!("False");
        }
    }
    conds.retain(|c| c["type"] != kind);
    let mut c = json!({"type": kind, "status": "True", "lastUpdateTime": meta::now_rfc3339(), "reason": reason});
    if !message.is_empty() {
        c["message"] = json!(message);
    }
    conds.push(c);
    set_status_field(v, "conditions", Value::Array(conds));
}
