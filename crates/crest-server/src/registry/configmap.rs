//! core/v1 ConfigMap (upstream pkg/registry/core/configmap): its strategy.

use super::strategy::Strategy;
use crest_api::FieldErrors;
use serde_json::Value;

/// core/v1 ConfigMap: no generation, no status; validated by `crest_core_api::configmap`.
pub(crate) struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        crest_core_api::configmap::validate(obj)
    }
    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        crest_core_api::configmap::validate_update(new, old)
    }
}
