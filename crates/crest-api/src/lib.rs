//! Kubernetes API machinery shared by every Crest crate.
//!
//! Nothing here does I/O. It owns the vocabulary of the API: [`ApiError`] (rendered as a
//! `meta/v1 Status`), [`field::FieldError`] lists with Kubernetes' exact wording, name and label
//! validation ([`validation`]), group/version/kind identifiers ([`gvk`]) and accessors for the
//! `metadata` of objects held as `serde_json::Value` ([`meta`]), and who a request is from
//! ([`user::UserInfo`]).

mod error;
mod field;
mod gvk;
pub mod meta;
mod user;
pub mod validation;

pub use error::{success_status, ApiError, Reason};
pub use field::{aggregate, ErrorType, FieldError, FieldErrors, FieldPath};
pub use gvk::{all_verbs, ApiResource, GroupKind, GroupResource, GroupVersion, GroupVersionKind};
pub use user::{names, UserInfo};
