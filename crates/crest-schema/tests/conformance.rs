//! Runs the upstream-derived conformance cases in `shared/conformance/` (see its README) against
//! crest-schema. Any mismatch fails the test, except the known gaps listed (with a reason) in
//! `KNOWN_GAPS`; a listed gap that starts passing fails too, so the table stays honest. The
//! further cases of the same upstream tables, restated in the same format, are in
//! `tests/upstream/` and run alongside.

use crest_api::{aggregate, ErrorType, FieldError, FieldPath};
use crest_schema::{defaulting, listtype, objectmeta, pruning, validation, Structural};
use serde_json::Value;

const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/")
}

/// The cases of `file`: the shared ones, then the further cases of the same upstream tables
/// restated in this crate's `tests/upstream/<file>` (same format), when that file exists.
fn load(file: &str) -> Vec<Value> {
    let read = |path: &std::path::Path| -> Vec<Value> {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
    };
    let mut cases = read(&dir().join(file));
    let extra = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/upstream")
        .join(file);
    if extra.exists() {
        cases.extend(read(&extra));
    }
    cases
}

fn schema(case: &Value) -> Option<Structural> {
    match &case["schema"] {
        Value::Null => None,
        s => Some(Structural::from_json(s).unwrap_or_else(|e| panic!("schema: {e}"))),
    }
}

fn opt(case: &Value, key: &str) -> bool {
    case["options"][key].as_bool().unwrap_or(false)
}

/// The field-error kind as the conformance files name it.
fn kind(e: &FieldError) -> &'static str {
    match e.error_type {
        ErrorType::Required => "Required",
        // TypeInvalid prints "Invalid value" like Invalid; the files name both Invalid.
        ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid",
        ErrorType::NotSupported => "NotSupported",
        ErrorType::Duplicate => "Duplicate",
        ErrorType::TooMany => "TooMany",
        ErrorType::TooLong => "TooLong",
        ErrorType::Forbidden => "Forbidden",
        ErrorType::NotFound => "NotFound",
        ErrorType::Internal => "Internal",
    }
}

/// Compares errors as a multiset of (type, field), and of full messages where the case has them.
fn check_errors(expected: &Value, got: &[FieldError]) -> Result<(), String> {
    let expected = expected.as_array().ok_or("expected.errors is not a list")?;
    let mut want: Vec<(String, String)> = expected
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["field"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let mut have: Vec<(String, String)> = got
        .iter()
        .map(|e| (kind(e).to_string(), e.field.as_str().to_string()))
        .collect();
    want.sort();
    have.sort();
    if want != have {
        let msgs: Vec<String> = got.iter().map(ToString::to_string).collect();
        return Err(format!("errors: want {want:?}, got {have:?} ({msgs:?})"));
    }
    let mut want_msgs: Vec<String> = expected
        .iter()
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect();
    if want_msgs.len() == expected.len() {
        let mut have_msgs: Vec<String> = got.iter().map(ToString::to_string).collect();
        want_msgs.sort();
        have_msgs.sort();
        if want_msgs != have_msgs {
            return Err(format!("messages: want {want_msgs:?}, got {have_msgs:?}"));
        }
    }
    Ok(())
}

fn expect_object(want: &Value, got: &Value) -> Result<(), String> {
    if want != got {
        return Err(format!("object: want {want}, got {got}"));
    }
    Ok(())
}

fn run_pruning(case: &Value) -> Result<(), String> {
    let mut obj = case["input"].clone();
    let root = opt(case, "isResourceRoot");
    let paths = match schema(case) {
        Some(s) => pruning::prune(&mut obj, &s, root),
        None => pruning::prune_without_schema(&mut obj, root),
    };
    expect_object(&case["expected"]["object"], &obj)?;
    let mut want: Vec<String> = case["expected"]["pruned_paths"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    want.sort();
    if want != paths {
        return Err(format!("pruned paths: want {want:?}, got {paths:?}"));
    }
    Ok(())
}

fn run_defaulting(case: &Value) -> Result<(), String> {
    let mut obj = case["input"].clone();
    if let Some(s) = schema(case) {
        match case["operation"].as_str() {
            Some("default") => defaulting::default(&mut obj, &s),
            Some("pruneNonNullableNullsWithoutDefaults") => {
                defaulting::prune_non_nullable_nulls_without_defaults(&mut obj, &s)
            }
            other => return Err(format!("unknown operation {other:?}")),
        }
    }
    expect_object(&case["expected"]["object"], &obj)
}

fn run_value_validation(case: &Value) -> Result<(), String> {
    // getUnrecognizedFormats reads the JSON schema itself (its cases use a `type` list).
    let s = if case["operation"] == "getUnrecognizedFormats" {
        Structural::default()
    } else {
        schema(case).unwrap_or_default()
    };
    let input = &case["input"];
    match case["operation"].as_str() {
        Some("validate") => {
            let mut errs = validation::validate(input, &s, &FieldPath::root());
            // Upstream's TestValidateCustomResource runs the CEL rules after value validation.
            if let Some(rules) = crest_schema_cel::Validator::new(&s) {
                let old = case.get("old_input").filter(|o| !o.is_null());
                errs.extend(rules.validate(input, old));
            }
            check_errors(&case["expected"]["errors"], &errs)
        }
        Some("validateUpdateRatcheting") => {
            let errs =
                validation::validate_update(input, &case["old_input"], &s, &FieldPath::root());
            let want = case["expected"]["valid"].as_bool().unwrap_or(false);
            if errs.is_empty() != want {
                let msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
                return Err(format!("valid: want {want}, got {msgs:?}"));
            }
            Ok(())
        }
        Some("getUnrecognizedFormats") => {
            let v = case["options"]["compatibilityVersion"]
                .as_str()
                .unwrap_or("1.0");
            let (major, minor) = v.split_once('.').unwrap_or((v, "0"));
            let (major, minor) = (major.parse().unwrap_or(1), minor.parse().unwrap_or(0));
            let mut got = validation::unrecognized_formats(&case["schema"], major, minor);
            let mut want: Vec<String> = case["expected"]["unrecognizedFormats"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            got.sort();
            want.sort();
            if got != want {
                return Err(format!("formats: want {want:?}, got {got:?}"));
            }
            Ok(())
        }
        Some("validateCustomResourceObject") => {
            // The composition the server does: ObjectMeta validation, then the schema.
            let namespaced = opt(case, "namespaceScoped");
            let empty = serde_json::Map::new();
            let meta = input["metadata"].as_object().unwrap_or(&empty);
            let mut errs = crest_api::validation::validate_object_meta(
                meta,
                namespaced,
                crest_api::validation::name_is_dns_subdomain,
                &FieldPath::new("metadata"),
            );
            errs.extend(validation::validate(input, &s, &FieldPath::root()));
            if let Some(sub) = case["expected"]["errorContains"].as_str() {
                let text = aggregate(&errs);
                if !text.contains(sub) {
                    return Err(format!("want error containing {sub:?}, got {text:?}"));
                }
                return Ok(());
            }
            check_errors(&case["expected"]["errors"], &errs)
        }
        other => Err(format!("unknown operation {other:?}")),
    }
}

fn run_listtype(case: &Value) -> Result<(), String> {
    let base = case["options"]["basePath"].as_str().unwrap_or("");
    let errs = match schema(case) {
        Some(s) => listtype::validate_list_sets_and_maps(&FieldPath::new(base), &s, &case["input"]),
        None => vec![],
    };
    check_errors(&case["expected"]["errors"], &errs)
}

fn run_objectmeta(case: &Value) -> Result<(), String> {
    let s = schema(case).unwrap_or_default();
    let input = &case["input"];
    match case["operation"].as_str() {
        Some("coerce") => {
            let mut obj = input.clone();
            let res = objectmeta::coerce(
                &FieldPath::root(),
                &mut obj,
                &s,
                opt(case, "includeRoot"),
                opt(case, "dropInvalidFields"),
            );
            let want_err = case["expected"]["error"].as_bool().unwrap_or(false);
            if res.is_err() != want_err {
                return Err(format!("error: want {want_err}, got {res:?}"));
            }
            expect_object(&case["expected"]["object"], &obj)
        }
        Some("validateEmbeddedResource") => {
            let errs = objectmeta::validate_embedded_resource(&FieldPath::root(), input);
            check_errors(&case["expected"]["errors"], &errs)
        }
        Some("validate") => {
            let errs =
                objectmeta::validate(&FieldPath::root(), input, &s, opt(case, "includeRoot"));
            check_errors(&case["expected"]["errors"], &errs)
        }
        Some("getObjectMeta") => {
            let empty = serde_json::Map::new();
            let obj = input.as_object().unwrap_or(&empty);
            let res = objectmeta::get_object_meta(
                obj,
                opt(case, "dropMalformedFields"),
                opt(case, "returnUnknownFieldPaths"),
            );
            let want = &case["expected"];
            match (res, want["error"].is_null()) {
                (Err(e), true) => Err(format!("unexpected error {e}")),
                (Ok(r), false) => Err(format!("want an error, got {r:?}")),
                (Err(_), false) => Ok(()),
                (Ok(r), true) => {
                    let meta = r.meta.map(Value::Object).unwrap_or(Value::Null);
                    expect_object(&want["objectMeta"], &meta)?;
                    let want_paths: Vec<String> = want["unknownFieldPaths"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|p| p.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    if want_paths != r.unknown_field_paths {
                        return Err(format!(
                            "unknown paths: want {want_paths:?}, got {:?}",
                            r.unknown_field_paths
                        ));
                    }
                    Ok(())
                }
            }
        }
        other => Err(format!("unknown operation {other:?}")),
    }
}

#[test]
fn conformance() {
    type Runner = fn(&Value) -> Result<(), String>;
    let files: &[(&str, Runner)] = &[
        ("pruning.json", run_pruning),
        ("defaulting.json", run_defaulting),
        ("value-validation.json", run_value_validation),
        ("listtype.json", run_listtype),
        ("objectmeta.json", run_objectmeta),
    ];
    let mut failures = Vec::new();
    let (mut passed, mut gaps) = (0, 0);
    for (file, run) in files {
        for case in load(file) {
            let name = case["name"].as_str().unwrap_or_default().to_string();
            let gap = KNOWN_GAPS.iter().find(|(f, n, _)| f == file && *n == name);
            let result = std::panic::catch_unwind(|| run(&case))
                .unwrap_or_else(|_| Err("panicked".to_string()));
            match (result, gap) {
                (Ok(()), None) => passed += 1,
                (Err(e), None) => failures.push(format!("{file} / {name}: {e}")),
                (Err(_), Some(_)) => gaps += 1,
                (Ok(()), Some((_, _, reason))) => failures.push(format!(
                    "{file} / {name}: listed as a known gap ({reason}) but passes; remove it"
                )),
            }
        }
    }
    println!("conformance: {passed} passed, {gaps} known gaps");
    for (file, name, reason) in KNOWN_GAPS {
        println!("  known gap: {file} / {name}: {reason}");
    }
    assert!(
        failures.is_empty(),
        "{} conformance failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
