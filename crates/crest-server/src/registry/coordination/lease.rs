//! coordination.k8s.io/v1 Lease (upstream pkg/registry/coordination/lease): its resource and
//! strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{Strategy, Validation};
use crate::store::keys::LEASE_PREFIX;
use crest_api::ApiResource;
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin("coordination.k8s.io", "v1", "leases", "Lease", true);
    vec![ResourceDef::builtin(
        api,
        LEASE_PREFIX,
        Arc::new(LeaseStrategy),
        TableStyle::Builtin(&crest_table::printers::LEASE),
        "io.k8s.api.coordination.v1.Lease",
    )]
}

/// coordination.k8s.io/v1 Lease: no generation, no status, updates conditional on
/// resourceVersion; validated by `crest_core_api::lease`.
pub(crate) struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn allow_create_on_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn prepare_create(&self, obj: &mut Value) {
        crest_core_api::lease::prepare_create(obj);
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        crest_core_api::lease::prepare_update(new, old);
    }
    fn validation(&self) -> Option<&'static Validation> {
        Some(&Validation {
            create: crest_core_api::lease::validate,
            update: crest_core_api::lease::validate_update,
        })
    }
}
