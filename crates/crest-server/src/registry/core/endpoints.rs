//! core/v1 Endpoints (upstream pkg/registry/core/endpoint): its resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{Strategy, Validation};
use crate::store::keys::ENDPOINTS_PREFIX;
use crest_api::ApiResource;
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api =
        ApiResource::builtin("", "v1", "endpoints", "Endpoints", true).with_short_names(&["ep"]);
    vec![ResourceDef::builtin(
        api,
        ENDPOINTS_PREFIX,
        Arc::new(EndpointsStrategy),
        TableStyle::Builtin(&crest_table::printers::ENDPOINTS),
        "io.k8s.api.core.v1.Endpoints",
    )]
}

/// core/v1 Endpoints: no generation, no status; defaulted, validated and repacked (subsets in
/// upstream's canonical layout) by `crest_core_api::endpoints`.
pub(crate) struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    // Upstream's strategy allows create on update (a PUT of a missing object creates it).
    fn allow_create_on_update(&self) -> bool {
        true
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn defaults(&self, obj: &mut Value) {
        crest_core_api::endpoints::set_defaults(obj);
    }
    fn canonicalize(&self, obj: &mut Value) {
        crest_core_api::endpoints::repack_subsets(obj);
    }
    fn validation(&self) -> Option<&'static Validation> {
        Some(&Validation {
            create: crest_core_api::endpoints::validate,
            update: crest_core_api::endpoints::validate_update,
        })
    }
}
