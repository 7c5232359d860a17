//! Server-side apply's pure core: what kube-apiserver computes on every write to keep
//! `metadata.managedFields` and to merge applied configurations. No I/O; works on
//! `serde_json::Value` objects.
//!
//! - [`schema`]: the type description merges follow ([`Schema`]), from a CRD's structural
//!   schema or a built-in OpenAPI definition (kube-openapi's `schemaconv`).
//! - [`fieldpath`]: paths and field sets with their FieldsV1 encoding (structured-merge-diff's
//!   `fieldpath`).
//! - [`typed`]: validation, field sets, comparison, merge and removal by a schema
//!   (structured-merge-diff's `typed`).
//! - [`managed`]: `metadata.managedFields` entries decoded, validated and encoded
//!   (apimachinery's `util/managedfields/internal`).
//! - [`scale`]: the managed fields of `/scale` (apimachinery's `ScaleHandler`).
//! - [`fieldmanager`]: the Update and Apply operations with ownership, pruning and conflicts
//!   (structured-merge-diff's `merge`), wrapped in the apiserver's field manager layers
//!   ([`FieldManager`]: the calls the server makes).
//!
//! # How the server uses it
//!
//! Once per resource version (cached): [`Schema::from_crd`] with the version's
//! `openAPIV3Schema` (or `None`), or [`Schema::from_definition`] with the built-in kind's
//! definition name, both with the published built-in definitions by name (for ObjectMeta).
//! Per request: a [`FieldManager`] with the request's `group/version`, kind, subresource (`""`,
//! `"status"`, `"scale"`) and the strategy's reset fields (e.g. `status` on the main resource
//! of a kind with a status subresource, `spec` on a custom resource's /status; see
//! [`fieldmanager::reset_fields`]); the manager is [`manager_or_user_agent`] of the
//! `fieldManager` query parameter and the User-Agent; `now` is [`managed::format_time`].
//!
//! - create, update, and patches other than apply: [`FieldManager::update`] on the object
//!   about to be stored (`live`: `None` on create, else the stored object); it sets
//!   `metadata.managedFields`.
//! - `application/apply-patch+yaml`: [`FieldManager::apply`] with the decoded body (`live`:
//!   `None` when the object does not exist; the server then creates it); the result is the
//!   object to default, validate and store; [`ApplyError`] carries the HTTP status, and
//!   [`Conflicts::causes`] the 409's `causes`. PATCH options are checked first with
//!   [`fieldmanager::validate_patch_options`] (422, `PatchOptions.meta.k8s.io "" is invalid`).
//! - `/scale`: [`scale::to_subresource`] gives a Scale's managed fields from the parent's;
//!   after the Scale went through its own field manager (Scale schema, subresource `scale`),
//!   [`scale::to_parent`] gives the parent's.
//! - `metadata.managedFields` of a request is validated with
//!   [`managed::validate_managed_fields`] as part of ObjectMeta.

mod fieldmanager;
mod fieldpath;
mod managed;
pub mod scale;
mod schema;
pub mod typed;

pub use fieldmanager::{
    manager_or_user_agent, reset_fields, validate_patch_options, ApplyError, Conflict,
    ConflictCause, Conflicts, FieldManager,
};
pub use fieldpath::{Path, PathElement, Set};
pub use managed::{
    validate_field_manager, validate_managed_fields, ManagedFields, ManagerId, Operation,
};
pub use schema::Schema;

#[cfg(test)]
mod tests {
    /// The server caches schemas and shares them across request threads.
    #[test]
    fn schemas_are_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<crate::Schema>();
        assert_send_sync::<crate::ManagedFields>();
        assert_send_sync::<crate::ApplyError>();
    }
}
