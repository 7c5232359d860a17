//! Custom resources (apiextensions-apiserver pkg/registry/customresource): the strategy of one
//! CRD version, with its compiled schema and `/status` and `/scale` subresources.

use super::strategy::{copy_field, Strategy};
use crest_api::{ApiResource, FieldErrors};
use crest_apiextensions::customresource::scale::ScalePaths;
use crest_apiextensions::customresource::CrSchema;
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

    /// Upstream's order: schema values, scale spec and status, then embedded resources and
    /// list types.
    fn validate_with(
        &self,
        new: &Value,
        old: Option<&Value>,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        let mut errs = match (&self.schema, old) {
            (Some(s), Some(old)) => s.validate_values_update(new, old),
            (Some(s), None) => s.validate_values(new),
            (None, _) => vec![],
        };
        if let Some(scale) = &self.scale {
            errs.extend(scale.validate_spec(new));
            errs.extend(scale.validate_status(new));
        }
        if let Some(s) = &self.schema {
            errs.extend(s.validate_structure(new));
            let rules = s.validate_rules(new, old, &errs, warnings);
            errs.extend(rules);
        }
        errs
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
        self.validate_with(obj, None, warnings)
    }
    fn validate_update(&self, new: &Value, old: &Value, warnings: &mut Vec<String>) -> FieldErrors {
        self.validate_with(new, Some(old), warnings)
    }
    /// Only `status` is validated (with its own schema, ratcheted), then the scale status and
    /// list types when the old object had no list type errors.
    fn validate_status_update(
        &self,
        new: &Value,
        old: &Value,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        let mut errs = match (&self.schema, new.get("status")) {
            (Some(s), Some(status)) => s.validate_status_update(status, old.get("status")),
            _ => vec![],
        };
        if let Some(scale) = &self.scale {
            errs.extend(scale.validate_status(new));
        }
        if let Some(s) = &self.schema {
            errs.extend(s.validate_list_types_ratcheted(new, old));
            // The rules see the whole object; unchanged parts are ratcheted.
            let rules = s.validate_rules(new, Some(old), &errs, warnings);
            errs.extend(rules);
        }
        errs
    }
}
