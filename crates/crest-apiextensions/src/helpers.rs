//! Lookups the server needs on CRDs held as JSON (served/storage versions, the accepted names it
//! serves under), and the API-approval rules for protected groups (`apihelpers`).

use crate::types::CustomResourceDefinitionNames;
use serde_json::Value;

/// The annotation protected groups must carry (`v1beta1.KubeAPIApprovedAnnotation`).
pub(crate) const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

fn versions(crd: &Value) -> impl Iterator<Item = &Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn version_name(v: &Value) -> Option<&str> {
    v.get("name").and_then(Value::as_str)
}

/// Names of the versions with `served: true`, in spec order.
pub fn served_versions(crd: &Value) -> Vec<String> {
    versions(crd)
        .filter(|v| v.get("served") == Some(&Value::Bool(true)))
        .filter_map(version_name)
        .map(str::to_string)
        .collect()
}

/// The version custom resources are stored in (the first with `storage: true`).
pub fn storage_version(crd: &Value) -> Option<&str> {
    versions(crd)
        .find(|v| v.get("storage") == Some(&Value::Bool(true)))
        .and_then(version_name)
}

#[cfg(test)]
/// The `spec.versions[]` entry with that name.
pub(crate) fn version<'a>(crd: &'a Value, name: &str) -> Option<&'a Value> {
    versions(crd).find(|v| version_name(v) == Some(name))
}

#[cfg(test)]
/// Whether `name` is a served version (`HasServedCRDVersion`).
pub(crate) fn is_served_version(crd: &Value, name: &str) -> bool {
    version(crd, name).is_some_and(|v| v.get("served") == Some(&Value::Bool(true)))
}

#[cfg(test)]
/// `status.storedVersions`.
pub(crate) fn stored_versions(crd: &Value) -> Vec<String> {
    crd.pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `status.acceptedNames`: the names the server serves (not `spec.names`, which may conflict).
pub fn accepted_names(crd: &Value) -> CustomResourceDefinitionNames {
    crd.pointer("/status/acceptedNames")
        .and_then(|n| serde_json::from_value(n.clone()).ok())
        .unwrap_or_default()
}

fn accepted<'a>(crd: &'a Value, field: &str) -> Option<&'a str> {
    crd.pointer("/status/acceptedNames")
        .and_then(|n| n.get(field))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The accepted kind, if any.
pub fn accepted_kind(crd: &Value) -> Option<&str> {
    accepted(crd, "kind")
}

#[cfg(test)]
/// The accepted list kind, if any.
pub(crate) fn accepted_list_kind(crd: &Value) -> Option<&str> {
    accepted(crd, "listKind")
}

/// The accepted plural (the resource name in URLs), if any.
pub fn accepted_plural(crd: &Value) -> Option<&str> {
    accepted(crd, "plural")
}

#[cfg(test)]
/// The accepted singular, if any.
pub(crate) fn accepted_singular(crd: &Value) -> Option<&str> {
    accepted(crd, "singular")
}

#[cfg(test)]
/// `spec.group`.
pub(crate) fn group(crd: &Value) -> &str {
    crd.pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("")
}

#[cfg(test)]
/// Whether custom resources are namespaced (`spec.scope: Namespaced`).
pub(crate) fn is_namespaced(crd: &Value) -> bool {
    crd.pointer("/spec/scope").and_then(Value::as_str) == Some("Namespaced")
}

/// `IsProtectedCommunityGroup`: groups reserved for APIs approved by the Kubernetes community.
pub(crate) fn is_protected_community_group(group: &str) -> bool {
    group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io")
}

/// The state of the API-approval annotation (`APIApprovalState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ApprovalState {
    Invalid,
    Approved,
    Bypassed,
    Missing,
}

/// `GetAPIApprovalState`: the state of the annotation value and upstream's explanation.
pub(crate) fn api_approval_state(annotation: &str) -> (ApprovalState, String) {
    if annotation.is_empty() {
        return (
            ApprovalState::Missing,
            format!("protected groups must have approval annotation {API_APPROVED_ANNOTATION:?}, see https://github.com/kubernetes/enhancements/pull/1111"),
        );
    }
    if annotation.starts_with("unapproved") {
        return (
            ApprovalState::Bypassed,
            format!("not approved: {annotation:?}"),
        );
    }
    if crate::url::parse_request_uri(annotation)
        .is_ok_and(|u| !u.host.is_empty() && !u.scheme.is_empty())
    {
        return (ApprovalState::Approved, format!("approved in {annotation}"));
    }
    (
        ApprovalState::Invalid,
        format!(
            "protected groups must have approval annotation {API_APPROVED_ANNOTATION:?} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn version_lookups() {
        let crd = json!({"spec": {"scope": "Namespaced", "group": "g.example.com", "versions": [
            {"name": "v1beta1", "served": true, "storage": false},
            {"name": "v1", "served": true, "storage": true},
            {"name": "v0", "served": false, "storage": false},
        ]}, "status": {"storedVersions": ["v1beta1", "v1"], "acceptedNames": {"plural": "foos", "kind": "Foo", "listKind": "FooList", "singular": ""}}});
        assert_eq!(served_versions(&crd), vec!["v1beta1", "v1"]);
        assert_eq!(storage_version(&crd), Some("v1"));
        assert!(is_served_version(&crd, "v1beta1"));
        assert!(!is_served_version(&crd, "v0"));
        assert!(!is_served_version(&crd, "v9"));
        assert_eq!(stored_versions(&crd), vec!["v1beta1", "v1"]);
        assert_eq!(accepted_kind(&crd), Some("Foo"));
        assert_eq!(accepted_list_kind(&crd), Some("FooList"));
        assert_eq!(accepted_plural(&crd), Some("foos"));
        assert_eq!(accepted_singular(&crd), None);
        assert_eq!(accepted_names(&crd).kind, "Foo");
        assert_eq!(group(&crd), "g.example.com");
        assert!(is_namespaced(&crd));
        assert_eq!(storage_version(&json!({})), None);
        assert!(served_versions(&json!({"spec": {"versions": "x"}})).is_empty());
    }

    #[test]
    fn approval_states() {
        assert!(is_protected_community_group("k8s.io"));
        assert!(is_protected_community_group("x.kubernetes.io"));
        assert!(!is_protected_community_group("xk8s.io"));
        assert_eq!(api_approval_state("").0, ApprovalState::Missing);
        assert_eq!(
            api_approval_state("unapproved, testing"),
            (
                ApprovalState::Bypassed,
                "not approved: \"unapproved, testing\"".to_string()
            )
        );
        assert_eq!(
            api_approval_state("https://github.com/kubernetes/kubernetes/pull/1").0,
            ApprovalState::Approved
        );
        assert_eq!(api_approval_state("approved").0, ApprovalState::Invalid);
    }
}
