//! crest-schema-cel: Kubernetes' CEL validation rules (`x-kubernetes-validations`) over
//! structural schemas, mirroring apiextensions-apiserver `pkg/apiserver/schema/cel` on top of
//! the Kubernetes-agnostic `crest-cel` engine.
//!
//! - [`escape`]: property names as CEL identifiers (`__dash__`, `__namespace__`, ...).
//! - [`fieldpath`]: parsing of rules' `fieldPath`.
//! - [`library`]: Kubernetes' CEL libraries (lists, regex, URLs, quantity, IP/CIDR, format)
//!   and their costs.
//! - [`model`]: CEL types of schema nodes ([`model::Types`] is the engine's `TypeProvider`) and
//!   the size bounds the cost estimator uses.
//! - [`values`]: JSON values as CEL values, guided by the node's type.
//! - [`compile`]: one node's rules compiled (type-checked, bool result, cost, messageExpression,
//!   fieldPath).
//! - [`crd`]: the checks at CRD write (compilation errors, cost limits, uncorrelatable
//!   `oldSelf`), used by crest-apiextensions.
//! - [`validator`]: the rules evaluated on custom resource writes, compiled once per CRD
//!   version ([`Validator::new`]) and run per request ([`Validator::validate`]).

pub mod compile;
pub mod crd;
pub mod escape;
pub mod fieldpath;
pub mod library;
pub mod model;
mod validator;
pub mod values;

pub use validator::{Outcome, Validator, RUNTIME_COST_BUDGET};
