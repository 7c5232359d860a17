//! The core (legacy, `/api/v1`) group's built-in kinds (upstream pkg/registry/core/<kind>): one
//! module each with its resource description and strategy.

pub(crate) mod configmap;
pub(crate) mod endpoints;
pub(crate) mod event;
pub(crate) mod namespace;
pub(crate) mod secret;
pub(crate) mod service;
pub(crate) mod serviceaccount;
