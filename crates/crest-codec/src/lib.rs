//! Crest's request codecs. Pure: bytes in, `serde_json::Value` or an `ApiError` out, no I/O.
//!
//! - [`negotiate`]: `Accept` / `Content-Type` parsing, the output formats a request may get and
//!   the body formats a request may carry (kube-apiserver's `negotiation` package).
//! - [`duplicates`]: duplicate fields in JSON and YAML bodies, worded as kube-apiserver's strict
//!   decoders word them (`fieldValidation=Strict|Warn`).
//! - [`protobuf`]: Kubernetes protobuf bodies (built-in kinds, DeleteOptions) decoded into the
//!   JSON a typed client would have sent.
//! - [`yaml`]: YAML bodies decoded with bounded work and memory (nesting and alias expansion
//!   refused before the decoder does quadratic or exponential work).

pub mod duplicates;
pub mod json;
mod libyaml;
pub mod negotiate;
pub mod protobuf;
pub mod yaml;
