//! storagemigration.k8s.io/v1alpha1 StorageVersionMigration: `ValidateStorageVersionMigration`,
//! its update and status update (upstream `pkg/apis/storagemigration/validation`, 1.30+).
//! ObjectMeta is validated by the registry.

use crest_api::validation::{is_qualified_name, regex_error};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::Value;

/// The condition types the migrator sets.
pub const RUNNING: &str = "Running";
pub const SUCCEEDED: &str = "Succeeded";
pub const FAILED: &str = "Failed";

fn resource_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/spec/resource/{field}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `ValidateStorageVersionMigration`: the resource and version are required.
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let path = FieldPath::new("spec").child("resource");
    for (field, message) in [
        ("resource", "resource is required"),
        ("version", "version is required"),
    ] {
        if resource_field(obj, field).is_empty() {
            errs.push(FieldError::required(&path.child(field), message));
        }
    }
    errs
}

/// `ValidateStorageVersionMigrationUpdate`: the group, version and resource are immutable (at
/// upstream's paths, which name the fields alone).
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate(new);
    for field in ["group", "version", "resource"] {
        let value = resource_field(new, field);
        if value != resource_field(old, field) {
            errs.push(FieldError::invalid(
                &FieldPath::new(field),
                value,
                "field is immutable",
            ));
        }
    }
    errs
}

/// Whether condition `kind` is there with status True.
pub fn condition_true(obj: &Value, kind: &str) -> bool {
    conditions(obj)
        .iter()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

fn conditions(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `ValidateStorageVersionMigrationStatusUpdate`.
pub fn validate_status_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = vec![];
    let path = FieldPath::new("status");
    let rv = |o: &Value| {
        o.pointer("/status/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (new_rv, old_rv) = (rv(new), rv(old));
    if !new_rv.is_empty() {
        match new_rv.parse::<i64>() {
            Err(_) => errs.push(FieldError::invalid(
                &path.child("resourceVersion"),
                new_rv.as_str(),
                format!(
                    "failed to parse resource version {new_rv:?}: strconv.ParseInt: parsing {new_rv:?}: invalid syntax"
                ),
            )),
            Ok(n) if n < 0 => errs.push(FieldError::invalid(
                &path.child("resourceVersion"),
                n,
                "must be greater than or equal to 0",
            )),
            Ok(_) => {}
        }
    }
    errs.extend(validate_conditions(
        conditions(new),
        &path.child("conditions"),
    ));
    if !old_rv.is_empty() && old_rv != new_rv {
        errs.push(FieldError::invalid(
            &path.child("resourceVersion"),
            new_rv.as_str(),
            "resourceVersion cannot be updated",
        ));
    }
    let all = Value::Array(conditions(new).to_vec());
    let cond_path = path.child("conditions");
    let (succeeded, failed, running) = (
        condition_true(new, SUCCEEDED),
        condition_true(new, FAILED),
        condition_true(new, RUNNING),
    );
    let mut check = |bad: bool, message: &str| {
        if bad {
            errs.push(FieldError::invalid(&cond_path, all.clone(), message));
        }
    };
    check(
        succeeded && failed,
        "Both success and failed conditions cannot be true at the same time",
    );
    check(
        succeeded && running,
        "Running condition cannot be true when success condition is true",
    );
    check(
        failed && running,
        "Running condition cannot be true when failed condition is true",
    );
    check(
        condition_true(old, SUCCEEDED) && !succeeded,
        "Success condition cannot be set to false once it is true",
    );
    check(
        condition_true(old, FAILED) && !failed,
        "Failed condition cannot be set to false once it is true",
    );
    errs
}

const REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
const REASON_MSG: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

fn valid_reason(r: &str) -> bool {
    let b = r.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    match b {
        [] => false,
        [first] => first.is_ascii_alphabetic(),
        [first, mid @ .., last] => {
            first.is_ascii_alphabetic()
                && mid.iter().all(inner)
                && (last.is_ascii_alphanumeric() || *last == b'_')
        }
    }
}

fn validate_conditions(conds: &[Value], path: &FieldPath) -> FieldErrors {
    let mut errs = vec![];
    let mut seen = std::collections::HashSet::new();
    for (i, c) in conds.iter().enumerate() {
        let at = path.index(i);
        let kind = c["type"].as_str().unwrap_or_default();
        if !seen.insert(kind) {
            errs.push(FieldError::duplicate(&at.child("type"), kind));
        }
        for e in is_qualified_name(kind) {
            errs.push(FieldError::invalid(&at.child("type"), kind, e));
        }
        let status = c["status"].as_str().unwrap_or_default();
        if !matches!(status, "True" | "False" | "Unknown") {
            errs.push(FieldError::not_supported(
                &at.child("status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if c["lastUpdateTime"].as_str().unwrap_or_default().is_empty() {
            errs.push(FieldError::required(
                &at.child("lastTransitionTime"),
                "must be set",
            ));
        }
        let reason = c["reason"].as_str().unwrap_or_default();
        if reason.is_empty() {
            errs.push(FieldError::required(&at.child("reason"), "must be set"));
        } else {
            if !valid_reason(reason) {
                errs.push(FieldError::invalid(
                    &at.child("reason"),
                    reason,
                    regex_error(
                        REASON_MSG,
                        REASON_FMT,
                        &[
                            "my_name",
                            "MY_NAME",
                            "MyName",
                            "ReasonA,ReasonB",
                            "ReasonA:ReasonB",
                        ],
                    ),
                ));
            }
            if reason.len() > 1024 {
                errs.push(FieldError::too_long(&at.child("reason"), 1024));
            }
        }
        if c["message"].as_str().unwrap_or_default().len() > 32 * 1024 {
            errs.push(FieldError::too_long(&at.child("message"), 32 * 1024));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn svm(conds: Value, rv: &str) -> Value {
        json!({"spec": {"resource": {"group": "example.com", "version": "v1", "resource": "crontabs"}},
               "status": {"resourceVersion": rv, "conditions": conds}})
    }

    fn cond(t: &str, s: &str) -> Value {
        json!({"type": t, "status": s, "reason": "R", "lastUpdateTime": "2024-01-01T00:00:00Z"})
    }

    #[test]
    fn spec_is_required_and_immutable() {
        let errs = validate(&json!({"spec": {"resource": {}}}));
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "spec.resource.resource: Required value: resource is required",
                "spec.resource.version: Required value: version is required"
            ]
        );
        let old = svm(json!([]), "");
        let mut new = old.clone();
        new["spec"]["resource"]["resource"] = json!("other");
        let text: Vec<String> = validate_update(&new, &old)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            text,
            ["resource: Invalid value: \"other\": field is immutable"]
        );
    }

    #[test]
    fn status_rules() {
        let old = svm(json!([cond(SUCCEEDED, "True")]), "5");
        assert!(validate_status_update(&old, &old).is_empty());
        let new = svm(json!([cond(SUCCEEDED, "False")]), "6");
        let text: Vec<String> = validate_status_update(&new, &old)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert!(
            text[0].starts_with(
                "status.resourceVersion: Invalid value: \"6\": resourceVersion cannot be updated"
            ),
            "{text:?}"
        );
        assert!(
            text[1].ends_with("Success condition cannot be set to false once it is true"),
            "{text:?}"
        );
        let both = svm(json!([cond(SUCCEEDED, "True"), cond(RUNNING, "True")]), "5");
        let text: Vec<String> = validate_status_update(&both, &old)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert!(
            text[0].ends_with("Running condition cannot be true when success condition is true"),
            "{text:?}"
        );
        let bad = svm(
            json!([{"type": "Running", "status": "Maybe", "reason": "1x"}]),
            "",
        );
        let text: Vec<String> = validate_status_update(&bad, &svm(json!([]), ""))
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0].starts_with("status.conditions[0].status: Unsupported value: \"Maybe\""),
            "{text:?}"
        );
        assert_eq!(
            text[1],
            "status.conditions[0].lastTransitionTime: Required value: must be set"
        );
        assert!(
            text[2].starts_with(
                "status.conditions[0].reason: Invalid value: \"1x\": a condition reason must start"
            ),
            "{text:?}"
        );
    }
}
