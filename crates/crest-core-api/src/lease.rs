//! coordination.k8s.io/v1 Lease: `ValidateLease`, `ValidateLeaseUpdate` (upstream
//! `pkg/apis/coordination/validation`), and the CoordinatedLeaderElection feature gate's field
//! dropping (`pkg/registry/coordination/lease`).

use crest_api::validation::is_qualified_name;
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::Value;

/// `validLeaseStrategies`: the Kubernetes-defined coordinated lease strategies.
const VALID_STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// `ValidateLeaseSpec` at `spec` (ObjectMeta is validated by the registry).
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let Some(spec) = obj.get("spec").filter(|s| s.is_object()) else {
        return errs;
    };
    let path = FieldPath::new("spec");
    if let Some(d) = spec.get("leaseDurationSeconds").and_then(Value::as_i64) {
        if d <= 0 {
            errs.push(FieldError::invalid(
                &path.child("leaseDurationSeconds"),
                d,
                "must be greater than 0",
            ));
        }
    }
    if let Some(t) = spec.get("leaseTransitions").and_then(Value::as_i64) {
        if t < 0 {
            errs.push(FieldError::invalid(
                &path.child("leaseTransitions"),
                t,
                "must be greater than or equal to 0",
            ));
        }
    }
    let strategy = spec.get("strategy").and_then(Value::as_str);
    if let Some(s) = strategy {
        // Upstream passes `spec.strategy` and adds `strategy` again: the errors are reported at
        // `spec.strategy.strategy`.
        errs.extend(validate_strategy(s, &path.child("strategy")));
    }
    let preferred = spec.get("preferredHolder").and_then(Value::as_str);
    if preferred.is_some_and(|p| !p.is_empty()) && strategy.unwrap_or_default().is_empty() {
        errs.push(FieldError::forbidden(
            &path.child("preferredHolder"),
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}

/// `ValidateCoordinatedLeaseStrategy`: a name without `/` must be Kubernetes-defined, one with a
/// `/` a qualified name.
fn validate_strategy(strategy: &str, path: &FieldPath) -> FieldErrors {
    let at = path.child("strategy");
    if !strategy.contains('/') {
        if VALID_STRATEGIES.contains(&strategy) {
            return vec![];
        }
        return vec![FieldError::not_supported(&at, strategy, VALID_STRATEGIES)];
    }
    is_qualified_name(strategy)
        .into_iter()
        .map(|m| FieldError::invalid(&at, strategy, m))
        .collect()
}

/// `ValidateLeaseUpdate` without the ObjectMeta part: the spec as on create.
pub fn validate_update(new: &Value, _old: &Value) -> FieldErrors {
    validate(new)
}

/// `PrepareForCreate` with CoordinatedLeaderElection off (1.32's default: the gate is alpha):
/// `spec.strategy` and `spec.preferredHolder` are dropped.
pub fn prepare_create(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("strategy");
        spec.remove("preferredHolder");
    }
}

/// `PrepareForUpdate` with the gate off: each of the two fields is dropped unless the stored
/// Lease has it.
pub fn prepare_update(new: &mut Value, old: &Value) {
    let had = |f: &str| {
        old.pointer(&format!("/spec/{f}"))
            .is_some_and(|v| !v.is_null())
    };
    let (strategy, preferred) = (had("strategy"), had("preferredHolder"));
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        if !strategy {
            spec.remove("strategy");
        }
        if !preferred {
            spec.remove("preferredHolder");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn spec() {
        let ok = json!({"spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                                 "leaseTransitions": 0,
                                 "renewTime": "2024-01-01T00:00:00.000000Z"}});
        assert!(validate(&ok).is_empty());
        let bad = json!({"spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1,
                                  "preferredHolder": "b"}});
        assert_eq!(
            messages(&validate(&bad)),
            [
                "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
                "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
                "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined",
            ]
        );
        assert!(validate(&json!({})).is_empty());
    }

    #[test]
    fn strategy() {
        let with = |s: &str| json!({"spec": {"strategy": s, "preferredHolder": "b"}});
        assert!(validate(&with("OldestEmulationVersion")).is_empty());
        assert!(validate(&with("example.com/mine")).is_empty());
        assert_eq!(
            messages(&validate(&with("Newest"))),
            ["spec.strategy.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""]
        );
        assert_eq!(
            messages(&validate(&with("a/b/c"))).len(),
            1,
            "a qualified name has at most one '/'"
        );
    }

    #[test]
    fn gated_fields_are_dropped() {
        let mut l = json!({"spec": {"strategy": "OldestEmulationVersion", "preferredHolder": "b", "holderIdentity": "a"}});
        prepare_create(&mut l);
        assert_eq!(l, json!({"spec": {"holderIdentity": "a"}}));
        let old = json!({"spec": {"preferredHolder": "x"}});
        let mut l = json!({"spec": {"strategy": "OldestEmulationVersion", "preferredHolder": "b"}});
        prepare_update(&mut l, &old);
        assert_eq!(l, json!({"spec": {"preferredHolder": "b"}}));
    }
}
