//! Per-resource behaviour plugged into the one generic pipeline in [`crate::registry`]
//! (kube-apiserver's RESTCreateStrategy / RESTUpdateStrategy / deletion hooks).

use crest_api::validation::{name_is_dns_subdomain, NameValidator};
use crest_api::{meta, ApiError, FieldErrors, GroupResource};
use crest_apiextensions::customresource::scale::ScalePaths;
use serde_json::{Map, Value};

/// What [`Strategy::authorize_write`] knows of a write: who makes it, the request's namespace
/// and name (empty on a create), and the RBAC state to judge it by.
pub(crate) struct WriteAuthz<'a> {
    pub user: &'a crest_api::UserInfo,
    pub rbac: &'a crate::store::rbac::RbacCache,
    pub namespace: &'a str,
    pub request_name: &'a str,
}

pub(crate) trait Strategy: Send + Sync {
    /// Checks of a client's write beyond the request's own authorization (upstream's
    /// policy-based RBAC storages: a user may grant only what it holds), on the object about
    /// to be written (defaulted; `old` on a main-resource update), before preparation and
    /// validation. The error (a 403) refuses the write.
    fn authorize_write(
        &self,
        _ctx: &WriteAuthz<'_>,
        _new: &Value,
        _old: Option<&Value>,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// How `metadata.name` and `generateName` are validated.
    fn name_validator(&self) -> NameValidator {
        name_is_dns_subdomain
    }

    /// Whether a PUT without `metadata.resourceVersion` overwrites unconditionally.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Whether a PUT to a missing object creates it (upstream `AllowCreateOnUpdate`).
    fn allow_create_on_update(&self) -> bool {
        false
    }

    /// Whether `metadata.generation` is maintained.
    fn uses_generation(&self) -> bool {
        true
    }

    /// Whether a change of the labels alone bumps `generation` too (EndpointSlices).
    fn generation_counts_labels(&self) -> bool {
        false
    }

    /// Whether `status` is a subresource (then main-resource writes ignore it and it does not
    /// count towards `generation`).
    fn status_subresource(&self) -> bool {
        false
    }

    /// What the kind's REST storage does to a create before the strategy sees it (upstream's
    /// `BeginCreate` hook, e.g. the Service allocator's IP family fields): errors refuse the
    /// write as Invalid at once, before `prepare_create` and any other validation.
    fn begin_create(&self, _obj: &mut Value) -> FieldErrors {
        Vec::new()
    }

    /// The kind's scheme defaults (upstream's `SetDefaults_*`, run by the decoder): applied to
    /// every written object before the field manager records the write, so managedFields
    /// show defaulted fields as kube-apiserver's do. Custom resources are defaulted by their
    /// schema when decoded.
    fn defaults(&self, _obj: &mut Value) {}

    /// Resets fields the client may not set on create (after generic metadata handling).
    fn prepare_create(&self, _obj: &mut Value) {}

    /// The kind's own validation, for a kind whose checks are a pure function of the object
    /// (the default `validate_create` / `validate_update` call it).
    fn validation(&self) -> Option<&'static Validation> {
        None
    }

    /// Errors refuse the write; `warnings` become Warning headers of a successful one.
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        self.validation().map_or_else(Vec::new, |v| (v.create)(obj))
    }

    /// What the kind's REST storage does to an update of the main resource before the strategy
    /// sees it (upstream's `BeginUpdate` hook, e.g. the Service's carrying over of allocated
    /// values): errors refuse the write as Invalid at once, before `prepare_update`.
    fn begin_update(&self, _new: &mut Value, _old: &Value) -> FieldErrors {
        Vec::new()
    }

    /// Normalizes a validated object before it is admitted and stored (upstream's
    /// `Canonicalize`, the last step of `BeforeCreate` / `BeforeUpdate`), e.g. Endpoints'
    /// `RepackSubsets`.
    fn canonicalize(&self, _obj: &mut Value) {}

    /// Carries fields the client may not change over from `old`.
    fn prepare_update(&self, _new: &mut Value, _old: &Value) {}

    /// Fills in what a `/status` write leaves to the server (its defaults), after the rest of
    /// the object was taken from `old`.
    fn prepare_status_update(&self, _new: &mut Value, _old: &Value) {}

    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        self.validation()
            .map_or_else(Vec::new, |v| (v.update)(new, old))
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

    /// Whether a DELETE's propagationPolicy / orphanDependents set the orphan and
    /// foregroundDeletion finalizers (false: upstream's `rest.Unsupported` garbage collection
    /// policy, as Events have: the options are ignored and the object goes at once).
    fn garbage_collection_policy_supported(&self) -> bool {
        true
    }

    /// Whether added finalizers with suspicious names get warnings (custom resources).
    fn warns_finalizer_names(&self) -> bool {
        false
    }
}

/// A kind's validation of a create and of an update (new, old), upstream's
/// `Validate<Kind>` / `Validate<Kind>Update` in crest-core-api.
pub(crate) struct Validation {
    pub create: fn(&Value) -> FieldErrors,
    pub update: fn(&Value, &Value) -> FieldErrors,
}

/// What a DELETE does to a stored object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeleteStep {
    /// The object stays as it is and is returned (e.g. a namespace still being emptied).
    Unchanged,
    /// The object stays, marked for deletion (written when that changed it).
    Mark,
    /// The object is removed now.
    Remove,
}

/// The generic store's DELETE: an object with finalizers is marked (`markAsDeleting`), any other
/// is removed.
pub(crate) fn generic_delete_step(obj: &mut Value) -> DeleteStep {
    if meta::finalizers(obj).is_empty() {
        return DeleteStep::Remove;
    }
    mark_as_deleting(obj);
    DeleteStep::Mark
}

/// kube-apiserver's `markAsDeleting`: the first time, generation is bumped (when the resource
/// keeps one) and deletionTimestamp set; deletionGracePeriodSeconds becomes 0.
pub(crate) fn mark_as_deleting(obj: &mut Value) {
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
pub(crate) fn set_deletion_timestamp(obj: &mut Value) {
    if meta::deletion_timestamp(obj).is_none() {
        meta::set(obj, "deletionTimestamp", meta::now_rfc3339());
    }
}

/// Everything except `metadata` (and `status` when it is a subresource): what `generation` tracks.
pub(crate) fn spec_part(obj: &Value, skip_status: bool) -> Map<String, Value> {
    let mut m = obj.as_object().cloned().unwrap_or_default();
    m.remove("metadata");
    if skip_status {
        m.remove("status");
    }
    m
}

pub(crate) fn copy_field(new: &mut Value, old: &Value, field: &str) {
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
