//! Runs the cases of upstream's TestValidateCustomResourceDefinitionValidation
//! (shared/conformance/structural-validation.json) against
//! `schema_validation::validate_custom_resource_validation` and fails on any mismatch of the
//! (type, field) multiset, except the known gaps listed below with their reasons.

use crest_api::{ErrorType, FieldPath};
use crest_apiextensions::{validate_custom_resource_validation, SchemaValidationOptions};
use serde_json::Value;
use std::path::PathBuf;

/// Cases whose expected errors need what is not implemented, with the reason.
const KNOWN_GAPS: &[(&str, &str)] = &[];

fn type_name(t: ErrorType) -> &'static str {
    match t {
        ErrorType::NotFound => "NotFound",
        ErrorType::Required => "Required",
        ErrorType::Duplicate => "Duplicate",
        ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid",
        ErrorType::NotSupported => "NotSupported",
        ErrorType::Forbidden => "Forbidden",
        ErrorType::TooLong => "TooLong",
        ErrorType::TooMany => "TooMany",
        ErrorType::Internal => "InternalError",
    }
}

fn flag(options: &Value, key: &str) -> bool {
    options.get(key).and_then(Value::as_bool).unwrap_or(false)
}

#[test]
fn structural_validation_conformance() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/structural-validation.json");
    let text = std::fs::read_to_string(&file).expect("conformance file");
    let mut cases: Vec<Value> = serde_json::from_str(&text).expect("conformance JSON");
    assert_eq!(cases.len(), 88);
    // The further cases of the same upstream table, restated in the same format.
    let extra =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/upstream/structural-validation.json");
    if extra.exists() {
        let text = std::fs::read_to_string(&extra).expect("upstream cases");
        cases.extend(serde_json::from_str::<Vec<Value>>(&text).expect("upstream cases JSON"));
    }

    let mut passed = 0;
    let mut gaps = vec![];
    let mut failures = vec![];
    let mut gap_passes = vec![];
    for case in &cases {
        let name = case["name"].as_str().unwrap_or_default();
        let options = &case["options"];
        let opts = SchemaValidationOptions {
            status_enabled: flag(options, "statusEnabled"),
            allow_defaults: flag(options, "allowDefaults"),
            require_valid_property_type: flag(options, "requireValidPropertyType"),
            require_structural_schema: flag(options, "requireStructuralSchema"),
            require_pruned_defaults: flag(options, "requirePrunedDefaults"),
            require_atomic_set_type: flag(options, "requireAtomicSetType"),
            require_map_list_keys_map_set_validation: flag(
                options,
                "requireMapListKeysMapSetValidation",
            ),
        };
        let base = options["basePath"].as_str().unwrap_or("spec.validation");
        let schema = &case["schema"];
        let errs = validate_custom_resource_validation(
            (!schema.is_null()).then_some(schema),
            &opts,
            &FieldPath::new(base),
        );
        let mut got: Vec<(String, String)> = errs
            .iter()
            .map(|e| (type_name(e.error_type).to_string(), e.field.to_string()))
            .collect();
        let mut want: Vec<(String, String)> = case["expected"]["errors"]
            .as_array()
            .expect("expected.errors")
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or_default().to_string(),
                    e["field"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        got.sort();
        want.sort();
        let gap = KNOWN_GAPS.iter().find(|(n, _)| *n == name);
        match (got == want, gap) {
            (true, None) => passed += 1,
            (true, Some(_)) => gap_passes.push(name.to_string()),
            (false, Some((_, reason))) => gaps.push(format!("{name}: {reason}")),
            (false, None) => failures.push(format!(
                "{name}\n  want {want:?}\n  got  {got:?}\n  messages: {:?}",
                errs.iter().map(ToString::to_string).collect::<Vec<_>>()
            )),
        }
    }
    println!(
        "structural-validation conformance: {passed} passed, {} known gaps",
        gaps.len()
    );
    for g in &gaps {
        println!("  known gap: {g}");
    }
    assert!(
        gap_passes.is_empty(),
        "listed as known gaps but passing: {gap_passes:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
