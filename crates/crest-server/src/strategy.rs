//! Per-resource behaviour plugged into the one generic pipeline in [`crate::registry`]
//! (kube-apiserver's RESTCreateStrategy / RESTUpdateStrategy / deletion hooks).

use crate::cache::Cache;
use crate::customresource::CrSchema;
use crest_api::validation::{name_is_dns_label, name_is_dns_subdomain, NameValidator};
use crest_api::{meta, ApiResource, FieldErrors};
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub trait Strategy: Send + Sync {
    /// How `metadata.name` and `generateName` are validated.
    fn name_validator(&self) -> NameValidator {
        name_is_dns_subdomain
    }

    /// Whether a PUT without `metadata.resourceVersion` overwrites unconditionally.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Whether `metadata.generation` is maintained.
    fn uses_generation(&self) -> bool {
        true
    }

    /// Whether `status` is a subresource (then main-resource writes ignore it and it does not
    /// count towards `generation`).
    fn status_subresource(&self) -> bool {
        false
    }

    /// Resets fields the client may not set on create (after generic metadata handling).
    fn prepare_create(&self, _obj: &mut Value) {}

    fn validate_create(&self, _obj: &Value) -> FieldErrors {
        vec![]
    }

    /// Carries fields the client may not change over from `old`.
    fn prepare_update(&self, _new: &mut Value, _old: &Value) {}

    fn validate_update(&self, _new: &Value, _old: &Value) -> FieldErrors {
        vec![]
    }

    /// Marks `obj` for graceful deletion on the first DELETE. Returns whether the object must stay
    /// (finalization pending); `false` deletes it at once.
    fn begin_delete(&self, obj: &mut Value) -> bool {
        let pending = !meta::finalizers(obj).is_empty();
        if pending {
            mark_deleting(obj);
        }
        pending
    }

    /// Whether an object marked for deletion has no finalization left and can be removed.
    fn finalized(&self, obj: &Value) -> bool {
        meta::finalizers(obj).is_empty()
    }
}

/// Sets deletionTimestamp (once) and deletionGracePeriodSeconds 0, as a graceful delete does.
pub fn mark_deleting(obj: &mut Value) {
    if meta::deletion_timestamp(obj).is_none() {
        meta::set(obj, "deletionTimestamp", meta::now_rfc3339());
        meta::set(obj, "deletionGracePeriodSeconds", 0);
    }
}

/// Everything except `metadata` (and `status` when it is a subresource): what `generation` tracks.
pub fn spec_part(obj: &Value, skip_status: bool) -> Map<String, Value> {
    let mut m = obj.as_object().cloned().unwrap_or_default();
    m.remove("metadata");
    if skip_status {
        m.remove("status");
    }
    m
}

fn copy_field(new: &mut Value, old: &Value, field: &str) {
    if let Some(o) = new.as_object_mut() {
        match old.get(field) {
            Some(v) => {
                o.insert(field.to_string(), v.clone());
            }
            None => {
                o.remove(field);
            }
        }
    }
}

/// core/v1 Namespace.
pub struct NamespaceStrategy;

const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn canonicalize_namespace(obj: &mut Value) {
    let name = meta::name(obj).to_string();
    if let Some(m) = meta::meta_mut(obj) {
        let labels = m.entry("labels").or_insert_with(|| json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        if let Some(l) = labels.as_object_mut() {
            l.insert(NAMESPACE_NAME_LABEL.into(), name.into());
        }
    }
}

impl Strategy for NamespaceStrategy {
    fn name_validator(&self) -> NameValidator {
        name_is_dns_label
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn status_subresource(&self) -> bool {
        true
    }
    fn prepare_create(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            o.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
            o.insert("status".into(), json!({"phase": "Active"}));
        }
        canonicalize_namespace(obj);
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        copy_field(new, old, "spec");
        copy_field(new, old, "status");
        canonicalize_namespace(new);
    }
    fn begin_delete(&self, obj: &mut Value) -> bool {
        mark_deleting(obj);
        if let Some(o) = obj.as_object_mut() {
            o.insert("status".into(), json!({"phase": "Terminating"}));
        }
        !self.finalized(obj)
    }
    fn finalized(&self, obj: &Value) -> bool {
        let spec_finalizers = obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        meta::finalizers(obj).is_empty() && !spec_finalizers
    }
}

/// apiextensions.k8s.io/v1 CustomResourceDefinition.
pub struct CrdStrategy {
    pub cache: Arc<Cache>,
}

pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

impl CrdStrategy {
    fn other_crds(&self, name: &str) -> Vec<Value> {
        self.cache
            .list(crate::resources::CRD_PREFIX)
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
    fn prepare_create(&self, obj: &mut Value) {
        crest_apiextensions::set_defaults(obj);
        if let Some(o) = obj.as_object_mut() {
            o.insert("status".into(), json!({}));
        }
        // Names are accepted and the CRD established right here rather than by a later
        // controller pass, so the new API is served as soon as the create returns.
        let others = self.other_crds(meta::name(obj));
        crest_apiextensions::accept_and_establish(obj, &others);
        crest_apiextensions::conditions::update_non_structural_schema(obj);
    }
    fn validate_create(&self, obj: &Value) -> FieldErrors {
        crest_apiextensions::validate_create(obj)
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        crest_apiextensions::set_defaults(new);
        copy_field(new, old, "status");
        crest_apiextensions::add_stored_version(new);
        // A schema that was stored before the structural rules applied is reported, not refused.
        crest_apiextensions::conditions::update_non_structural_schema(new);
    }
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        crest_apiextensions::validate_update(new, old)
    }
    fn begin_delete(&self, obj: &mut Value) -> bool {
        mark_deleting(obj);
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
        true
    }
}

/// A custom resource of one CRD version.
pub struct CustomResourceStrategy {
    status: bool,
    schema: Option<Arc<CrSchema>>,
}

impl CustomResourceStrategy {
    pub fn new(_api: &ApiResource, version: &Value, schema: Option<Arc<CrSchema>>) -> Self {
        CustomResourceStrategy {
            status: version
                .pointer("/subresources/status")
                .is_some_and(|s| !s.is_null()),
            schema,
        }
    }
}

impl Strategy for CustomResourceStrategy {
    fn status_subresource(&self) -> bool {
        self.status
    }
    fn prepare_create(&self, obj: &mut Value) {
        if self.status {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        if self.status {
            copy_field(new, old, "status");
        }
    }
    fn validate_create(&self, obj: &Value) -> FieldErrors {
        self.schema
            .as_ref()
            .map(|s| s.validate(obj))
            .unwrap_or_default()
    }
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        self.schema
            .as_ref()
            .map(|s| s.validate_update(new, old))
            .unwrap_or_default()
    }
}
