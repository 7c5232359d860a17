//! The authorization.k8s.io/v1 review APIs (upstream pkg/registry/authorization/*): create-only,
//! nothing stored; each answers with the review and its `status`.
//!
//! - SelfSubjectAccessReview: may the requester do this (`kubectl auth can-i`)?
//! - SelfSubjectRulesReview: what may the requester do in a namespace (`can-i --list`)?
//! - SubjectAccessReview: may the user named in the spec do this?
//! - LocalSubjectAccessReview: the same, confined to the request's namespace.

use crate::registry::Registry;
use crest_api::FieldPath;
use crest_api::{ApiError, FieldError, GroupKind, UserInfo};
use serde_json::{json, Value};

pub(crate) const GROUP: &str = "authorization.k8s.io";

/// One of the review resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Review {
    SelfSubjectAccess,
    SelfSubjectRules,
    SubjectAccess,
    LocalSubjectAccess,
}

impl Review {
    /// The review served at `resource` of authorization.k8s.io/v1 (namespaced: only
    /// LocalSubjectAccessReview).
    pub(crate) fn from_resource(resource: &str, namespaced: bool) -> Option<Review> {
        Some(match (resource, namespaced) {
            ("selfsubjectaccessreviews", false) => Review::SelfSubjectAccess,
            ("selfsubjectrulesreviews", false) => Review::SelfSubjectRules,
            ("subjectaccessreviews", false) => Review::SubjectAccess,
            ("localsubjectaccessreviews", true) => Review::LocalSubjectAccess,
            _ => return None,
        })
    }

    pub(crate) fn kind(self) -> &'static str {
        match self {
            Review::SelfSubjectAccess => "SelfSubjectAccessReview",
            Review::SelfSubjectRules => "SelfSubjectRulesReview",
            Review::SubjectAccess => "SubjectAccessReview",
            Review::LocalSubjectAccess => "LocalSubjectAccessReview",
        }
    }
}

/// Go's `%#v` of the internal attribute structs, as an `Invalid value` prints them.
fn go_struct(name: &str, v: Option<&Value>, fields: &[(&str, &str)]) -> String {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return "null".into();
    };
    let body: Vec<String> = fields
        .iter()
        .map(|(go, json)| {
            let s = v.get(*json).and_then(Value::as_str).unwrap_or_default();
            format!("{go}:{}", crest_gofmt::go_quote(s))
        })
        .collect();
    format!("authorization.{name}{{{}}}", body.join(", "))
}

fn non_resource_repr(spec: &Value) -> String {
    go_struct(
        "NonResourceAttributes",
        spec.get("nonResourceAttributes"),
        &[("Path", "path"), ("Verb", "verb")],
    )
}

fn present(spec: &Value, k: &str) -> bool {
    spec.get(k).is_some_and(|v| !v.is_null())
}

/// `ValidateSubjectAccessReviewSpec` / `ValidateSelfSubjectAccessReviewSpec`.
fn validate_spec(spec: &Value, with_subject: bool) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errs = vec![];
    let (res, non) = (
        present(spec, "resourceAttributes"),
        present(spec, "nonResourceAttributes"),
    );
    if res && non {
        errs.push(FieldError::invalid_repr(
            &path.child("nonResourceAttributes"),
            &non_resource_repr(spec),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if !res && !non {
        // Go prints the nil pointer as the string "null".
        errs.push(FieldError::invalid(
            &path.child("resourceAttributes"),
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    if with_subject {
        let user = spec.get("user").and_then(Value::as_str).unwrap_or_default();
        let groups = spec
            .get("groups")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty());
        if user.is_empty() && !groups {
            errs.push(FieldError::invalid(
                &path.child("user"),
                user,
                "at least one of user or group must be specified",
            ));
        }
    }
    errs
}

/// Whether `metadata` is empty but for `managedFields` (and `namespace` when allowed).
fn metadata_empty(review: &Value, allow_namespace: bool) -> bool {
    review
        .get("metadata")
        .and_then(Value::as_object)
        .is_none_or(|m| {
            m.iter().all(|(k, v)| {
                v.is_null()
                    || k == "managedFields"
                    || (allow_namespace && k == "namespace")
                    || v.as_str() == Some("")
                    || v.as_object().is_some_and(|o| o.is_empty())
                    || v.as_array().is_some_and(|a| a.is_empty())
            })
        })
}

/// Creates a review: `review` is the decoded body, `user` the requester, `namespace` the
/// request's (LocalSubjectAccessReview). The answer is the review with its status (201).
pub(crate) async fn create(
    registry: &Registry,
    which: Review,
    user: &UserInfo,
    namespace: Option<&str>,
    review: Value,
) -> Result<Value, ApiError> {
    let gk = GroupKind::new(GROUP, which.kind());
    let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut meta_ns = review
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // The create handler's `EnsureObjectNamespaceMatchesRequestNamespace`: an object without
    // a namespace takes the request's; another one is refused before validation.
    if let Some(ns) = namespace {
        if meta_ns.is_empty() {
            meta_ns = ns.to_string();
        } else if meta_ns != ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    if which == Review::SelfSubjectRules {
        // Answered from the index after catching up with acknowledged writes.
        super::catch_up(registry).await;
        let index = registry.rbac.read();
        return crest_rbac::review::self_subject_rules_review(&index, user, &review);
    }
    let mut errs = validate_spec(
        &spec,
        matches!(which, Review::SubjectAccess | Review::LocalSubjectAccess),
    );
    let mut metadata = json!({"creationTimestamp": null});
    match which {
        Review::LocalSubjectAccess => {
            if !metadata_empty(&review, true) {
                errs.push(FieldError::invalid_repr(
                    &FieldPath::new("metadata"),
                    "v1.ObjectMeta{...}",
                    "must be empty except for namespace",
                ));
            }
            let spec_ns = spec
                .pointer("/resourceAttributes/namespace")
                .and_then(Value::as_str);
            if let Some(spec_ns) = spec_ns.filter(|_| present(&spec, "resourceAttributes")) {
                if spec_ns != meta_ns {
                    errs.push(FieldError::invalid(
                        &FieldPath::new("spec.resourceAttributes.namespace"),
                        spec_ns,
                        "must match metadata.namespace",
                    ));
                }
            } else if present(&spec, "resourceAttributes") && !meta_ns.is_empty() {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec.resourceAttributes.namespace"),
                    "",
                    "must match metadata.namespace",
                ));
            }
            if present(&spec, "nonResourceAttributes") {
                errs.push(FieldError::invalid_repr(
                    &FieldPath::new("spec.nonResourceAttributes"),
                    &non_resource_repr(&spec),
                    "disallowed on this kind of request",
                ));
            }
            metadata["namespace"] = meta_ns.clone().into();
        }
        _ => {
            if !metadata_empty(&review, false) {
                errs.push(FieldError::invalid_repr(
                    &FieldPath::new("metadata"),
                    "v1.ObjectMeta{...}",
                    "must be empty",
                ));
            }
        }
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid(&gk, "", &errs));
    }
    if which == Review::LocalSubjectAccess {
        let ns = namespace.unwrap_or_default();
        if ns.is_empty() {
            return Err(ApiError::bad_request(format!(
                "namespace is required on this type: {ns}"
            )));
        }
        if ns != meta_ns {
            return Err(ApiError::bad_request(format!(
                "spec.resourceAttributes.namespace must match namespace: {ns}"
            )));
        }
    }
    let subject;
    let who = match which {
        Review::SubjectAccess | Review::LocalSubjectAccess => {
            subject = crest_rbac::review::user_from_spec(&spec);
            &subject
        }
        _ => user,
    };
    let a = crest_rbac::review::access_review_attributes(who, &spec);
    let (mut decision, mut reason) = registry.rbac.read().authorize(&a);
    if decision != crest_rbac::Decision::Allow {
        // A binding written just before the review counts.
        super::catch_up(registry).await;
        (decision, reason) = registry.rbac.read().authorize(&a);
    }
    Ok(json!({
        "kind": which.kind(),
        "apiVersion": format!("{GROUP}/v1"),
        "metadata": metadata,
        "spec": spec,
        "status": crest_rbac::review::access_review_status(decision, &reason),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_validation_messages() {
        let errs = validate_spec(&json!({}), true);
        let gk = GroupKind::new(GROUP, "SubjectAccessReview");
        let e = ApiError::invalid(&gk, "", &errs);
        assert_eq!(
            e.message,
            "SubjectAccessReview.authorization.k8s.io \"\" is invalid: [spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: \"\": at least one of user or group must be specified]"
        );
        let errs = validate_spec(
            &json!({"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            false,
        );
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].value_repr.as_deref(),
            Some("authorization.NonResourceAttributes{Path:\"/x\", Verb:\"get\"}")
        );
    }
}
