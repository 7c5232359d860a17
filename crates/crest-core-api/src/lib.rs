//! The built-in kinds' validation, as `k8s.io/kubernetes/pkg/apis/core/validation` words it:
//! pure functions over the object as JSON (already decoded against its type, so unknown fields
//! are gone), one module per kind. The generic ObjectMeta rules run in the registry; these are
//! the kind's own.

pub mod configmap;
mod data;
pub mod endpoints;
pub mod endpointslice;
pub mod event;
pub mod lease;
mod md5;
pub mod network;
pub mod secret;
pub mod service;
pub mod serviceaccount;
pub mod storagemigration;
pub mod x509keypair;
