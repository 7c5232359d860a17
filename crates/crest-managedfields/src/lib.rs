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
//! The server calls, per write, with the [`Schema`] of the resource version (compiled once):
//! `FieldManager { schema, api_version, kind, subresource, reset_fields }` then
//! [`FieldManager::update`] for create / update / non-apply patch (on the object about to be
//! stored) or [`FieldManager::apply`] for `application/apply-patch+yaml`.

pub mod fieldmanager;
pub mod fieldpath;
mod gojson;
pub mod managed;
pub mod scale;
pub mod schema;
pub mod typed;

pub use fieldmanager::{
    manager_or_user_agent, ApplyError, Conflict, ConflictCause, Conflicts, FieldManager,
};
pub use fieldpath::{Path, PathElement, Set};
pub use managed::{ManagedFields, ManagerId, Operation};
pub use schema::Schema;
