//! Per-resource behaviour plugged into the one generic pipeline in [`crate::registry`]
//! (kube-apiserver's RESTCreateStrategy / RESTUpdateStrategy / deletion hooks).

use crate::cache::Cache;
use crate::customresource::CrSchema;
use crate::scale::ScalePaths;
use crest_api::validation::{name_is_dns_label, name_is_dns_subdomain, NameValidator};
use crest_api::{meta, ApiError, ApiResource, FieldErrors, GroupResource};
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

    /// Errors refuse the write; `warnings` become Warning headers of a successful one.
    fn validate_create(&self, _obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        vec![]
    }

    /// Carries fields the client may not change over from `old`.
    fn prepare_update(&self, _new: &mut Value, _old: &Value) {}

    fn validate_update(
        &self,
        _new: &Value,
        _old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        vec![]
    }

    /// Validation of a `/status` write (the status strategy's); by default the update's.
    fn validate_status_update(
        &self,
        new: &Value,
        old: &Value,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        self.validate_update(new, old, warnings)
    }

    /// The scale subresource's paths, when the resource has one.
    fn scale(&self) -> Option<&ScalePaths> {
        None
    }

    /// What a DELETE does to the stored object `obj` (changing it when it stays). The default is
    /// the generic store's: an object with finalizers is marked for deletion and stays, any other
    /// is removed.
    fn delete_step(&self, obj: &mut Value) -> DeleteStep {
        generic_delete_step(obj)
    }

    /// Whether a failed delete precondition is worded as the namespace and CRD REST Deletes word
    /// it (`Precondition failed: UID in precondition: ...`) rather than as the generic store does.
    fn custom_delete_preconditions(&self) -> bool {
        false
    }

    /// Delete admission (run when a DELETE changes or removes the object).
    fn admit_delete(&self, _gr: &GroupResource, _name: &str) -> Result<(), ApiError> {
        Ok(())
    }

    /// Whether an immediate DELETE answers with the deleted object rather than a Status.
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// Whether an object marked for deletion has no finalization left and can be removed.
    fn finalized(&self, obj: &Value) -> bool {
        meta::finalizers(obj).is_empty()
    }

    /// Whether finalizer names follow the core API group's rule (a name without a domain must be
    /// a standard finalizer), as for namespaces.
    fn kube_finalizer_names(&self) -> bool {
        false
    }

    /// Whether added finalizers with suspicious names get warnings (custom resources).
    fn warns_finalizer_names(&self) -> bool {
        false
    }
}

/// What a DELETE does to a stored object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteStep {
    /// The object stays as it is and is returned (e.g. a namespace still being emptied).
    Unchanged,
    /// The object stays, marked for deletion (written when that changed it).
    Mark,
    /// The object is removed now.
    Remove,
}

/// The generic store's DELETE: an object with finalizers is marked (`markAsDeleting`), any other
/// is removed.
pub fn generic_delete_step(obj: &mut Value) -> DeleteStep {
    if meta::finalizers(obj).is_empty() {
        return DeleteStep::Remove;
    }
    mark_as_deleting(obj);
    DeleteStep::Mark
}

/// kube-apiserver's `markAsDeleting`: the first time, generation is bumped (when the resource
/// keeps one) and deletionTimestamp set; deletionGracePeriodSeconds becomes 0.
pub fn mark_as_deleting(obj: &mut Value) {
    if meta::deletion_timestamp(obj).is_none() {
        let generation = obj
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if generation > 0 {
            meta::set(obj, "generation", generation + 1);
        }
        meta::set(obj, "deletionTimestamp", meta::now_rfc3339());
    }
    meta::set(obj, "deletionGracePeriodSeconds", 0);
}

/// Sets deletionTimestamp if it is not set yet (the namespace and CRD first DELETE, which set no
/// grace period).
fn set_deletion_timestamp(obj: &mut Value) {
    if meta::deletion_timestamp(obj).is_none() {
        meta::set(obj, "deletionTimestamp", meta::now_rfc3339());
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
    fn delete_step(&self, obj: &mut Value) -> DeleteStep {
        if meta::deletion_timestamp(obj).is_none() {
            // The first DELETE starts termination; the namespace controller empties the namespace.
            set_deletion_timestamp(obj);
            if let Some(o) = obj.as_object_mut() {
                let status = o.entry("status").or_insert_with(|| json!({}));
                if !status.is_object() {
                    *status = json!({});
                }
                if let Some(st) = status.as_object_mut() {
                    st.insert("phase".into(), "Terminating".into());
                }
            }
            return DeleteStep::Mark;
        }
        if spec_finalizers_pending(obj) {
            return DeleteStep::Unchanged;
        }
        generic_delete_step(obj)
    }
    fn custom_delete_preconditions(&self) -> bool {
        true
    }
    fn admit_delete(&self, gr: &GroupResource, name: &str) -> Result<(), ApiError> {
        // NamespaceLifecycle admission: the system namespaces are immortal.
        if IMMORTAL_NAMESPACES.contains(&name) {
            return Err(ApiError::forbidden(
                gr,
                name,
                "this namespace may not be deleted",
            ));
        }
        Ok(())
    }
    fn returns_deleted_object(&self) -> bool {
        true
    }
    fn kube_finalizer_names(&self) -> bool {
        true
    }
    fn finalized(&self, obj: &Value) -> bool {
        meta::finalizers(obj).is_empty() && !spec_finalizers_pending(obj)
    }
}

/// The namespaces NamespaceLifecycle admission never lets be deleted.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// Whether a namespace's `spec.finalizers` still lists a finalizer.
fn spec_finalizers_pending(obj: &Value) -> bool {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
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
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        crest_apiextensions::validate_create(obj)
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        crest_apiextensions::set_defaults(new);
        copy_field(new, old, "status");
        crest_apiextensions::add_stored_version(new);
        // A schema that was stored before the structural rules applied is reported, not refused.
        crest_apiextensions::conditions::update_non_structural_schema(new);
    }
    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_apiextensions::validate_update(new, old)
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

/// A custom resource of one CRD version.
pub struct CustomResourceStrategy {
    status: bool,
    scale: Option<ScalePaths>,
    schema: Option<Arc<CrSchema>>,
}

impl CustomResourceStrategy {
    pub fn new(_api: &ApiResource, version: &Value, schema: Option<Arc<CrSchema>>) -> Self {
        CustomResourceStrategy {
            status: version
                .pointer("/subresources/status")
                .is_some_and(|s| !s.is_null()),
            scale: ScalePaths::from_version(version),
            schema,
        }
    }

    /// Upstream's order: schema values, scale spec and status, then embedded resources and
    /// list types.
    fn validate_with(
        &self,
        new: &Value,
        old: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        let mut errs = match (&self.schema, old) {
            (Some(s), Some(old)) => s.validate_values_update(new, old),
            (Some(s), None) => s.validate_values(new),
            (None, _) => vec![],
        };
        if let Some(scale) = &self.scale {
            errs.extend(scale.validate_spec(new));
            errs.extend(scale.validate_status(new));
        }
        if let Some(s) = &self.schema {
            errs.extend(s.validate_structure(new));
            let rules = s.validate_rules(new, old, &errs, warnings);
            errs.extend(rules);
        }
        errs
    }
}

impl Strategy for CustomResourceStrategy {
    fn status_subresource(&self) -> bool {
        self.status
    }
    fn scale(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()
    }
    fn warns_finalizer_names(&self) -> bool {
        true
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
    fn validate_create(&self, obj: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        self.validate_with(obj, None, warnings)
    }
    fn validate_update(&self, new: &Value, old: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        self.validate_with(new, Some(old), warnings)
    }
    /// Only `status` is validated (with its own schema, ratcheted), then the scale status and
    /// list types when the old object had no list type errors.
    fn validate_status_update(
        &self,
        new: &Value,
        old: &Value,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        let mut errs = match (&self.schema, new.get("status")) {
            (Some(s), Some(status)) => s.validate_status_update(status, old.get("status")),
            _ => vec![],
        };
        if let Some(scale) = &self.scale {
            errs.extend(scale.validate_status(new));
        }
        if let Some(s) = &self.schema {
            errs.extend(s.validate_list_types_ratcheted(new, old));
            // The rules see the whole object; unchanged parts are ratcheted.
            let rules = s.validate_rules(new, Some(old), &errs, warnings);
            errs.extend(rules);
        }
        errs
    }
}
