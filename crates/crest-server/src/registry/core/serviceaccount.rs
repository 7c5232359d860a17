//! core/v1 ServiceAccount (upstream pkg/registry/core/serviceaccount): its resource and
//! strategy. Token issuing (the `token` subresource) is not served.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::Strategy;
use crate::store::keys::SERVICEACCOUNT_PREFIX;
use crest_api::{ApiResource, FieldErrors};
use crest_core_api::serviceaccount;
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin("", "v1", "serviceaccounts", "ServiceAccount", true)
        .with_short_names(&["sa"]);
    vec![ResourceDef::builtin(
        api,
        SERVICEACCOUNT_PREFIX,
        Arc::new(ServiceAccountStrategy),
        TableStyle::Builtin(&crest_table::printers::SERVICEACCOUNT),
        "io.k8s.api.core.v1.ServiceAccount",
    )]
}

/// core/v1 ServiceAccount: no generation, no status; `ValidateServiceAccount` is the ObjectMeta
/// validation alone (no checks of the secret references).
pub(crate) struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn prepare_create(&self, obj: &mut Value) {
        serviceaccount::clean_secret_references(obj);
    }
    fn prepare_update(&self, new: &mut Value, _old: &Value) {
        serviceaccount::clean_secret_references(new);
    }
    fn validate_create(&self, obj: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        warnings.extend(serviceaccount::warnings(obj, None));
        vec![]
    }
    fn validate_update(&self, new: &Value, old: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        warnings.extend(serviceaccount::warnings(new, Some(old)));
        vec![]
    }
}
