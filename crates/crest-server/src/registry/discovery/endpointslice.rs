//! discovery.k8s.io/v1 EndpointSlice (upstream pkg/registry/discovery/endpointslice): its
//! resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::Strategy;
use crate::store::keys::ENDPOINTSLICE_PREFIX;
use crest_api::gvk::all_verbs;
use crest_api::{ApiResource, FieldErrors};
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource {
        group: "discovery.k8s.io".into(),
        version: "v1".into(),
        plural: "endpointslices".into(),
        singular: "endpointslice".into(),
        kind: "EndpointSlice".into(),
        list_kind: "EndpointSliceList".into(),
        namespaced: true,
        verbs: all_verbs(),
        short_names: vec![],
        categories: vec![],
        subresources: vec![],
    };
    vec![ResourceDef::builtin(
        api,
        ENDPOINTSLICE_PREFIX,
        Arc::new(EndpointSliceStrategy),
        TableStyle::Builtin(&crest_table::printers::ENDPOINTSLICE),
        "io.k8s.api.discovery.v1.EndpointSlice",
    )]
}

/// discovery.k8s.io/v1 EndpointSlice: generation tracks changes of the endpoints, ports and
/// address type (everything but metadata); defaulted and validated by
/// `crest_core_api::endpointslice`.
pub(crate) struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_create(&self, obj: &mut Value) {
        crest_core_api::endpointslice::set_defaults(obj);
    }
    fn prepare_update(&self, new: &mut Value, _old: &Value) {
        crest_core_api::endpointslice::set_defaults(new);
    }
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        crest_core_api::endpointslice::validate(obj)
    }
    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_core_api::endpointslice::validate_update(new, old)
    }
}
