//! core/v1 Secret (upstream pkg/registry/core/secret): its resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::Strategy;
use crate::store::keys::SECRET_PREFIX;
use crest_api::{ApiResource, FieldErrors};
use crest_core_api::secret;
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin("", "v1", "secrets", "Secret", true);
    let mut def = ResourceDef::builtin(
        api,
        SECRET_PREFIX,
        Arc::new(SecretStrategy),
        TableStyle::Builtin(&crest_table::printers::SECRET),
        "io.k8s.api.core.v1.Secret",
    );
    // AddFieldLabelConversionsForSecret.
    def.field_labels = Some(&[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("type", "type"),
    ]);
    vec![def]
}

/// core/v1 Secret: no generation, no status. The v1 decoding's defaulting and `stringData`
/// conversion run as the first step of preparing a write (after the typed decoding, before
/// validation, as upstream's codec runs them before the strategy); validated by
/// `crest_core_api::secret`.
pub(crate) struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn defaults(&self, obj: &mut Value) {
        // The type default, and stringData merged into data as the v1 -> internal conversion
        // does: both before the field manager, which sees the data keys.
        secret::default_and_convert(obj);
    }
    fn validate_create(&self, obj: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        warnings.extend(secret::warnings(obj));
        secret::validate(obj)
    }
    fn validate_update(&self, new: &Value, old: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        warnings.extend(secret::warnings(new));
        secret::validate_update(new, old)
    }
}
