//! The discovery.k8s.io group's built-in kinds (upstream pkg/registry/discovery/<kind>).

pub(crate) mod endpointslice;
