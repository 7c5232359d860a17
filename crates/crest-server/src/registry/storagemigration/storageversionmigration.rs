//! storagemigration.k8s.io/v1alpha1 StorageVersionMigration (upstream
//! pkg/registry/storagemigration/storageversionmigration): its resource and strategy. The
//! migration itself is `controllers::storageversionmigration`.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{copy_field, Strategy, Validation};
use crate::store::keys::STORAGEVERSIONMIGRATION_PREFIX;
use crest_api::{ApiResource, FieldErrors};
use crest_core_api::storagemigration;
use crest_table::TableStyle;
use serde_json::Value;
use std::sync::Arc;

pub(crate) const GROUP: &str = "storagemigration.k8s.io";
pub(crate) const VERSION: &str = "v1alpha1";
pub(crate) const PLURAL: &str = "storageversionmigrations";

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin(GROUP, VERSION, PLURAL, "StorageVersionMigration", false)
        .with_subresources(&["status"]);
    vec![ResourceDef::builtin(
        api,
        STORAGEVERSIONMIGRATION_PREFIX,
        Arc::new(StorageVersionMigrationStrategy),
        // No printer is registered upstream: the default table convertor.
        TableStyle::Default,
        "io.k8s.api.storagemigration.v1alpha1.StorageVersionMigration",
    )]
}

/// Cluster-scoped, status as a subresource (reset on create, kept by main-resource updates).
pub(crate) struct StorageVersionMigrationStrategy;

impl Strategy for StorageVersionMigrationStrategy {
    fn status_subresource(&self) -> bool {
        true
    }
    fn prepare_create(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        copy_field(new, old, "status");
    }
    fn prepare_status_update(&self, new: &mut Value, old: &Value) {
        copy_field(new, old, "spec");
    }
    fn validation(&self) -> Option<&'static Validation> {
        Some(&Validation {
            create: storagemigration::validate,
            update: storagemigration::validate_update,
        })
    }
    fn validate_status_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        storagemigration::validate_status_update(new, old)
    }
}
