//! apiextensions.k8s.io/v1 CustomResourceDefinition: types, defaulting, validation, naming and
//! conditions, with kube-apiserver 1.32's behaviour and wording.
//!
//! Everything here is a pure function over CRDs held as `serde_json::Value` (the server keeps the
//! JSON so unknown fields survive); [`types::parse`] gives a typed view when one is handier.
//!
//! - [`defaults::set_defaults`]: v1 defaulting.
//! - [`validation::validate_create`] / [`validation::validate_update`]: `ValidateCustomResourceDefinition[Update]`
//!   (the ObjectMeta part is the generic one in crest-api; [`validation::validate_create_with_meta`] includes it).
//! - [`naming`]: accepted names, NamesAccepted / Established / API-approval conditions, stored versions.
//! - [`conditions`]: condition constructors and `SetCRDCondition` semantics.
//! - [`helpers`]: served/storage versions and accepted-name lookups for serving.
//! - [`customresource`]: what happens to a custom resource between decoding and storage (prune,
//!   default, validate with its version's compiled schema and CEL rules) and its `/scale`.
//! - [`schema_validation`]: OpenAPI schema and structural-schema validation of `openAPIV3Schema`.
//! - [`v1beta1`]: CRDs kube-apiserver stored as v1beta1 (before 1.22), read as v1.

mod conditions;
pub mod conversion;
pub mod customresource;
mod defaults;
mod gofmt;
mod helpers;
mod naming;
mod schema_validation;
mod types;
mod url;
pub mod v1beta1;
mod validation;

pub use conditions::{
    is_established, is_names_accepted, is_terminating, non_structural_schema, set_condition,
    update_non_structural_schema,
};
pub use defaults::set_defaults;
pub use helpers::{
    accepted_kind, accepted_names, accepted_plural, served_versions, storage_version,
};
pub use naming::{accept_and_establish, add_stored_version};
pub use schema_validation::{
    is_structural, structural_violations, validate_custom_resource_validation,
    SchemaValidationOptions,
};
pub use types::{parse, CustomResourceDefinition};
pub use validation::{
    validate_create, validate_create_with_meta, validate_status_update, validate_update,
};

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{json, Value};

    /// The CRD of the seed walkthrough (`crontabs.stable.example.com`).
    pub(crate) fn seed_crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "versions": [{
                    "name": "v1",
                    "served": true,
                    "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object", "properties": {
                            "cronSpec": {"type": "string"},
                            "image": {"type": "string"},
                            "replicas": {"type": "integer"},
                        }}},
                    }},
                }],
                "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
            },
        })
    }
}
