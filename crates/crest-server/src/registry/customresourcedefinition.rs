//! apiextensions.k8s.io/v1 CustomResourceDefinition (apiextensions-apiserver
//! pkg/registry/customresourcedefinition): its strategy.

use super::strategy::{
    copy_field, generic_delete_step, set_deletion_timestamp, DeleteStep, Strategy,
};
use crate::store::cache::Cache;
use crest_api::{meta, FieldErrors};
use serde_json::{json, Value};
use std::sync::Arc;

/// apiextensions.k8s.io/v1 CustomResourceDefinition.
pub(crate) struct CrdStrategy {
    pub cache: Arc<Cache>,
}

pub(crate) const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

impl CrdStrategy {
    fn other_crds(&self, name: &str) -> Vec<Value> {
        self.cache
            .list(crate::store::keys::CRD_PREFIX)
            .objects
            .iter()
            .filter_map(|o| o.value().ok())
            .filter(|v| meta::name(v) != name)
            .collect()
    }
}

impl Strategy for CrdStrategy {
    fn status_subresource(&self) -> bool {
        true
    }
    fn defaults(&self, obj: &mut Value) {
        crest_apiextensions::set_defaults(obj);
    }
    fn prepare_create(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            o.insert("status".into(), json!({}));
        }
        // Names are accepted and the CRD established right here rather than by a later
        // controller pass, so the new API is served as soon as the create returns.
        let others = self.other_crds(meta::name(obj));
        crest_apiextensions::accept_and_establish(obj, &others);
        crest_apiextensions::update_non_structural_schema(obj);
    }
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        crest_apiextensions::validate_create(obj)
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        copy_field(new, old, "status");
        crest_apiextensions::add_stored_version(new);
        // A schema that was stored before the structural rules applied is reported, not refused.
        crest_apiextensions::update_non_structural_schema(new);
    }
    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_apiextensions::validate_update(new, old)
    }
    /// `/status`: the status alone is validated (its accepted names), as upstream's status
    /// strategy calls `ValidateUpdateCustomResourceDefinitionStatus`.
    fn validate_status_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_apiextensions::validate_status_update(new, old)
    }
    fn custom_delete_preconditions(&self) -> bool {
        true
    }
    fn delete_step(&self, obj: &mut Value) -> DeleteStep {
        if meta::deletion_timestamp(obj).is_some() {
            return generic_delete_step(obj);
        }
        // The first DELETE adds the cleanup finalizer; the CRD finalizer controller deletes the
        // instances and then removes it.
        set_deletion_timestamp(obj);
        let mut fins = meta::finalizers(obj);
        if !fins.iter().any(|f| f == CRD_CLEANUP_FINALIZER) {
            fins.push(CRD_CLEANUP_FINALIZER.to_string());
            meta::set(obj, "finalizers", json!(fins));
        }
        crest_apiextensions::set_condition(
            obj,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
        DeleteStep::Mark
    }
}
