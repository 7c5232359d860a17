//! The coordination.k8s.io group's built-in kinds (upstream pkg/registry/coordination/<kind>).

pub(crate) mod lease;
