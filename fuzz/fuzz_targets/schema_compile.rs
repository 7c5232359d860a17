//! A schema (and an old schema) through every schema check: compilation to the structural form,
//! the OpenAPI schema validation of a CRD with every option on, the structural rules, and
//! whole-CRD create and update validation with the schemas embedded in an otherwise valid CRD.

#![no_main]

use crest_api::FieldPath;
use crest_apiextensions::{
    is_structural, structural_violations, validate_create, validate_custom_resource_validation,
    validate_update, SchemaValidationOptions,
};
use crest_schema::validation::unrecognized_formats;
use crest_schema::Structural;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn crd(schema: &Value, status: bool) -> Value {
    let mut version = json!({
        "name": "v1",
        "served": true,
        "storage": true,
        "schema": {"openAPIV3Schema": schema},
    });
    if status {
        version["subresources"] = json!({"status": {}});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com", "resourceVersion": "1"},
        "spec": {
            "group": "stable.example.com",
            "versions": [version],
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
        },
    })
}

fuzz_target!(|data: &[u8]| {
    let parts = crest_fuzz::split(data, 2);
    let schema = crest_fuzz::value(parts[0]);
    let status = data.len() % 2 == 1;

    let _ = Structural::from_json(&schema);
    let _ = unrecognized_formats(&schema, 1, 30);
    let path = FieldPath::new("spec").child("validation");
    for status_enabled in [false, true] {
        let opts = SchemaValidationOptions::create(status_enabled);
        let _ = validate_custom_resource_validation(Some(&schema), &opts, &path);
    }
    let _ = validate_custom_resource_validation(
        Some(&schema),
        &SchemaValidationOptions::default(),
        &path,
    );
    let _ = is_structural(&schema);
    let _ = structural_violations(&schema, &FieldPath::root());

    let new = crd(&schema, status);
    let _ = validate_create(&new);
    if !parts[1].is_empty() {
        let old_schema = crest_fuzz::value(parts[1]);
        let old = crd(&old_schema, status);
        let _ = validate_update(&new, &old);
    }
});
