//! The managed fields of the `/scale` subresource, as apimachinery's `managedfields.ScaleHandler`:
//! a Scale (autoscaling/v1) shows the entries of the parent that own its replicas field, as
//! owning `.spec.replicas`; after a write through /scale the Scale's entries go back into the
//! parent's, the replicas path translated back.
//!
//! `mappings` maps each apiVersion of the parent to its replicas path (`None`: that version
//! has no scale subresource), e.g. `apps/v1` → `.spec.replicas`, or a custom resource
//! version → its `specReplicasPath`.

use crate::fieldpath::{Path, Set};
use crate::managed::{Entry, ManagedFields, ManagerId, Operation};
use std::collections::BTreeMap;

/// The Scale's apiVersion.
pub const SCALE_GROUP_VERSION: &str = "autoscaling/v1";

/// The replicas path of each parent apiVersion (`None`: no scale subresource in that version).
pub type ResourcePathMappings = BTreeMap<String, Option<Path>>;

fn scale_replicas() -> Path {
    Path::fields(&["spec", "replicas"])
}

/// The key an entry has once encoded with `api_version` and decoded again.
fn rekey(id: &ManagerId, api_version: &str) -> ManagerId {
    let mut id = id.clone();
    if id.operation == Operation::Update {
        id.api_version = api_version.to_string();
    }
    id
}

/// The Scale's managed fields (upstream's `ToSubresource`): the parent's entries owning the
/// replicas path of their version, each as owning `.spec.replicas` in autoscaling/v1.
pub fn to_subresource(parent: &ManagedFields, mappings: &ResourcePathMappings) -> ManagedFields {
    let mut out = ManagedFields::default();
    let replicas = Set::from_paths([scale_replicas()]);
    for (id, e) in &parent.entries {
        let Some(Some(path)) = mappings.get(&e.api_version) else {
            continue;
        };
        if e.set.has(&path.0) {
            out.entries.insert(
                rekey(id, SCALE_GROUP_VERSION),
                Entry::new(replicas.clone(), SCALE_GROUP_VERSION, e.time.clone()),
            );
        }
    }
    out
}

/// The parent's managed fields after a write through /scale (upstream's `ToParent`): the
/// parent's entries with the replicas path taken from those the Scale no longer lists, the
/// Scale's entries owning `.spec.replicas` added as owning the parent's replicas path in
/// `group_version` (the parent's apiVersion of the request). Entries of unknown versions are
/// dropped.
pub fn to_parent(
    parent: &ManagedFields,
    scale: &ManagedFields,
    group_version: &str,
    mappings: &ResourcePathMappings,
) -> ManagedFields {
    let mut out = ManagedFields::default();
    let mut scale_entries = scale.entries.clone();
    for (id, e) in &parent.entries {
        let Some(path) = mappings.get(&e.api_version) else {
            continue;
        };
        let Some(path) = path.as_ref().filter(|p| e.set.has(&p.0)) else {
            out.entries.insert(id.clone(), e.clone());
            continue;
        };
        if scale_entries.remove(id).is_some() {
            // Not taken: kept as it is.
            out.entries.insert(id.clone(), e.clone());
        } else {
            let mut kept = e.clone();
            kept.subtract(&Set::from_paths([path.clone()]));
            if !kept.set().is_empty() {
                out.entries.insert(id.clone(), kept);
            }
        }
    }
    let parent_path = mappings.get(group_version).cloned().flatten();
    for (id, e) in scale_entries {
        if !e.set.has(&scale_replicas().0) {
            continue;
        }
        let Some(path) = &parent_path else {
            continue;
        };
        // As upstream: the time is looked up among the parent's entries.
        let time = parent.entries.get(&id).and_then(|p| p.time.clone());
        out.entries.insert(
            id,
            Entry::new(Set::from_paths([path.clone()]), group_version, time),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managed::ManagedFields;
    use serde_json::json;

    fn mappings() -> ResourcePathMappings {
        let mut m = ResourcePathMappings::new();
        m.insert("apps/v1".into(), Some(Path::fields(&["spec", "replicas"])));
        m
    }

    #[test]
    fn scale_round_trip() {
        let parent = ManagedFields::decode(Some(&json!([
            {"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "time": "2024-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}},
            {"manager": "ctrl", "operation": "Update", "apiVersion": "apps/v1", "time": "2024-01-01T00:00:01Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:replicas": {}}}},
        ])))
        .unwrap();
        let sub = to_subresource(&parent, &mappings());
        assert_eq!(
            sub.encode().unwrap(),
            json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "autoscaling/v1",
                "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}}}}])
        );
        // `kubectl scale` (an Update through /scale) takes replicas.
        let scale = ManagedFields::decode(Some(&json!([
            {"manager": "kubectl", "operation": "Update", "apiVersion": "autoscaling/v1", "subresource": "scale",
             "time": "2024-01-01T00:00:02Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
        ])))
        .unwrap();
        let back = to_parent(&parent, &scale, "apps/v1", &mappings());
        let enc = back.encode().unwrap();
        assert_eq!(enc[0]["manager"], "kubectl");
        assert_eq!(enc[0]["operation"], "Apply");
        assert_eq!(enc[0]["fieldsV1"], json!({"f:spec": {"f:template": {}}}));
        let scaler = enc
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["subresource"] == "scale")
            .unwrap();
        assert_eq!(scaler["apiVersion"], "apps/v1");
        assert_eq!(scaler["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    }
}
