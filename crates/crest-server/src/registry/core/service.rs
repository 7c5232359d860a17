//! core/v1 Service (upstream pkg/registry/core/service): its resource and strategy. Stored as
//! an object: no cluster IPs, node ports or load balancers are allocated (see
//! `crest_core_api::service` for what is filled in instead).

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{Strategy, Validation};
use crate::store::keys::SERVICE_PREFIX;
use crest_api::validation::NameValidator;
use crest_api::{ApiResource, FieldErrors};
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin("", "v1", "services", "Service", true)
        .with_short_names(&["svc"])
        .with_categories(&["all"])
        .with_subresources(&["status"]);
    let mut def = ResourceDef::builtin(
        api,
        SERVICE_PREFIX,
        Arc::new(ServiceStrategy),
        TableStyle::Builtin(&crest_table::printers::SERVICE),
        "io.k8s.api.core.v1.Service",
    );
    // AddFieldLabelConversionsForService.
    def.field_labels = Some(&[
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ]);
    vec![def]
}

/// core/v1 Service: no generation; `status` is a subresource.
pub(crate) struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    // Upstream's strategy allows create on update (a PUT of a missing object creates it).
    fn allow_create_on_update(&self) -> bool {
        true
    }
    fn name_validator(&self) -> NameValidator {
        crest_core_api::service::name_validator
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn status_subresource(&self) -> bool {
        true
    }
    // The REST storage's BeginCreate / BeginUpdate (storage.go, alloc.go): defaults, cluster
    // IPs kept in step and carried over, IP family fields, without allocating.
    fn defaults(&self, obj: &mut Value) {
        crest_core_api::service::set_defaults(obj);
    }
    fn begin_create(&self, obj: &mut Value) -> FieldErrors {
        crest_core_api::service::begin_create(obj)
    }
    fn begin_update(&self, new: &mut Value, old: &Value) -> FieldErrors {
        crest_core_api::service::begin_update(new, old)
    }
    fn prepare_create(&self, obj: &mut Value) {
        crest_core_api::service::prepare_create(obj);
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        crest_core_api::service::prepare_update(new, old);
    }
    fn prepare_status_update(&self, new: &mut Value, _old: &Value) {
        crest_core_api::service::prepare_status_update(new);
    }
    fn validation(&self) -> Option<&'static Validation> {
        Some(&Validation {
            create: crest_core_api::service::validate,
            update: crest_core_api::service::validate_update,
        })
    }
    fn validate_status_update(
        &self,
        new: &Value,
        _old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_core_api::service::validate_status_update(new)
    }
}
