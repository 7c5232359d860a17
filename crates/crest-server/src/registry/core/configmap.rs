//! core/v1 ConfigMap (upstream pkg/registry/core/configmap): its resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{Strategy, Validation};
use crate::store::keys::CONFIGMAP_PREFIX;
use crest_api::ApiResource;
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api =
        ApiResource::builtin("", "v1", "configmaps", "ConfigMap", true).with_short_names(&["cm"]);
    vec![ResourceDef::builtin(
        api,
        CONFIGMAP_PREFIX,
        Arc::new(ConfigMapStrategy),
        TableStyle::Builtin(&crest_table::printers::CONFIGMAP),
        "io.k8s.api.core.v1.ConfigMap",
    )]
}

/// core/v1 ConfigMap: no generation, no status; validated by `crest_core_api::configmap`.
pub(crate) struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn prepare_create(&self, obj: &mut Value) {
        crest_core_api::configmap::canonicalize(obj);
    }
    fn prepare_update(&self, new: &mut Value, _old: &Value) {
        crest_core_api::configmap::canonicalize(new);
    }
    fn validation(&self) -> Option<&'static Validation> {
        Some(&Validation {
            create: crest_core_api::configmap::validate,
            update: crest_core_api::configmap::validate_update,
        })
    }
}
