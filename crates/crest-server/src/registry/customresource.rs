//! Custom resources (apiextensions-apiserver pkg/registry/customresource): the strategy of one
//! CRD version, with its compiled schema and `/status` and `/scale` subresources.

use super::strategy::{copy_field, Strategy};
use crest_api::{ApiResource, FieldErrors};
use crest_apiextensions::customresource::scale::ScalePaths;
use crest_apiextensions::customresource::{self, CrSchema};
use serde_json::Value;
use std::sync::Arc;

/// A custom resource of one CRD version.
pub(crate) struct CustomResourceStrategy {
    status: bool,
    scale: Option<ScalePaths>,
    schema: Option<Arc<CrSchema>>,
}

impl CustomResourceStrategy {
    pub(crate) fn new(_api: &ApiResource, version: &Value, schema: Option<Arc<CrSchema>>) -> Self {
        CustomResourceStrategy {
            status: version
                .pointer("/subresources/status")
                .is_some_and(|s| !s.is_null()),
            scale: ScalePaths::from_version(version),
            schema,
        }
    }
}

impl Strategy for CustomResourceStrategy {
    fn status_subresource(&self) -> bool {
        self.status
    }
    fn scale(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()
    }
    fn warns_finalizer_names(&self) -> bool {
        true
    }
    fn prepare_create(&self, obj: &mut Value) {
        if self.status {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        if self.status {
            copy_field(new, old, "status");
        }
    }
    fn validate_create(&self, obj: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        customresource::validate(
            self.schema.as_deref(),
            self.scale.as_ref(),
            obj,
            None,
            warnings,
        )
    }
    fn validate_update(&self, new: &Value, old: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        customresource::validate(
            self.schema.as_deref(),
            self.scale.as_ref(),
            new,
            Some(old),
            warnings,
        )
    }
    fn validate_status_update(
        &self,
        new: &Value,
        old: &Value,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        customresource::validate_status(
            self.schema.as_deref(),
            self.scale.as_ref(),
            new,
            old,
            warnings,
        )
    }
}
