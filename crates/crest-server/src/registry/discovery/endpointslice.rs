//! discovery.k8s.io/v1 EndpointSlice (upstream pkg/registry/discovery/endpointslice): its
//! resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{Strategy, Validation};
use crate::store::keys::ENDPOINTSLICE_PREFIX;
use crest_api::{ApiResource, FieldErrors};
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        "EndpointSlice",
        true,
    );
    vec![ResourceDef::builtin(
        api,
        ENDPOINTSLICE_PREFIX,
        Arc::new(EndpointSliceStrategy),
        TableStyle::Builtin(&crest_table::printers::ENDPOINTSLICE),
        "io.k8s.api.discovery.v1.EndpointSlice",
    )]
}

/// discovery.k8s.io/v1 EndpointSlice: generation tracks changes of the endpoints, ports,
/// address type and labels; defaulted and validated by
/// `crest_core_api::endpointslice`.
pub(crate) struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn defaults(&self, obj: &mut Value) {
        crest_core_api::endpointslice::set_defaults(obj);
    }
    fn prepare_create(&self, obj: &mut Value) {
        crest_core_api::endpointslice::drop_topology_on_v1(obj, None);
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        crest_core_api::endpointslice::drop_topology_on_v1(new, Some(old));
    }
    fn generation_counts_labels(&self) -> bool {
        true
    }
    fn validate_create(&self, obj: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        warnings.extend(crest_core_api::endpointslice::warnings_on_create(obj));
        crest_core_api::endpointslice::validate(obj)
    }
    fn validation(&self) -> Option<&'static Validation> {
        Some(&Validation {
            create: crest_core_api::endpointslice::validate,
            update: crest_core_api::endpointslice::validate_update,
        })
    }
}
