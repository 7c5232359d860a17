//! Structural OpenAPI v3 schemas of CustomResourceDefinitions (apiextensions-apiserver's
//! `pkg/apiserver/schema`): compiled once per CRD version, then used for every request to prune,
//! default and validate custom resources. No HTTP, no storage: pure functions over
//! `serde_json::Value`.
//!
//! - [`Structural`]: the compiled schema ([`Structural::from_json`]).
//! - [`pruning`]: drop unknown fields.
//! - [`defaulting`]: apply `default`s, drop non-nullable nulls.
//! - [`validation`]: OpenAPI value validation, formats, ratcheting.
//! - [`listtype`]: uniqueness of `x-kubernetes-list-type` sets and maps.
//! - [`objectmeta`]: `metadata` of embedded resources (coercion and validation).
//!
//! The server composes them per request as kube-apiserver does: on decode
//! [`objectmeta::coerce`] (embedded resources), [`pruning::prune`] (resource root),
//! [`defaulting::prune_non_nullable_nulls_without_defaults`] and [`defaulting::default`]; then
//! on create [`validation::validate`], on update [`validation::validate_update`] (ratcheting),
//! plus [`objectmeta::validate`] and [`listtype::validate_list_sets_and_maps`]. Root `metadata`
//! is validated as ObjectMeta by the caller (crest-api's `validate_object_meta`).

pub mod correlation;
pub mod defaulting;
mod enums;
pub mod listtype;
pub mod objectmeta;
mod pattern;
pub mod pruning;
mod structural;
pub mod validation;

pub use enums::EnumIndex;
pub use pattern::Pattern;
pub use structural::{
    Extensions, Generic, NestedValueValidation, Structural, StructuralOrBool, ValueValidation,
};
