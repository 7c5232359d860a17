//! Kubernetes API machinery shared by every Crest crate.
//!
//! Nothing here does I/O. It owns the vocabulary of the API: [`ApiError`] (rendered as a
//! `meta/v1 Status`), [`field::FieldError`] lists with Kubernetes' exact wording, name and label
//! validation ([`validation`]), group/version/kind identifiers ([`gvk`]) and accessors for the
//! `metadata` of objects held as `serde_json::Value` ([`meta`]), and who a request is from
//! ([`user::UserInfo`]).

pub mod error;
pub mod field;
pub mod gvk;
pub mod meta;
pub mod user;
pub mod validation;

pub use error::{ApiError, Reason};
pub use field::{FieldError, FieldErrors, FieldPath};
pub use gvk::{ApiResource, GroupKind, GroupResource, GroupVersion, GroupVersionKind};
pub use user::UserInfo;
