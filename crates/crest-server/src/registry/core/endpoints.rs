//! core/v1 Endpoints (upstream pkg/registry/core/endpoint): its resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::Strategy;
use crate::store::keys::ENDPOINTS_PREFIX;
use crest_api::gvk::all_verbs;
use crest_api::{ApiResource, FieldErrors};
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource {
        group: String::new(),
        version: "v1".into(),
        plural: "endpoints".into(),
        singular: "endpoints".into(),
        kind: "Endpoints".into(),
        list_kind: "EndpointsList".into(),
        namespaced: true,
        verbs: all_verbs(),
        short_names: vec!["ep".into()],
        categories: vec![],
        subresources: vec![],
    };
    vec![ResourceDef::builtin(
        api,
        ENDPOINTS_PREFIX,
        Arc::new(EndpointsStrategy),
        TableStyle::Builtin(&crest_table::printers::ENDPOINTS),
        "io.k8s.api.core.v1.Endpoints",
    )]
}

/// core/v1 Endpoints: no generation, no status; defaulted and validated by
/// `crest_core_api::endpoints`.
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
    fn prepare_create(&self, obj: &mut Value) {
        crest_core_api::endpoints::set_defaults(obj);
    }
    fn prepare_update(&self, new: &mut Value, _old: &Value) {
        crest_core_api::endpoints::set_defaults(new);
    }
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        crest_core_api::endpoints::validate(obj)
    }
    fn validate_update(
        &self,
        new: &Value,
        _old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_core_api::endpoints::validate(new)
    }
}
