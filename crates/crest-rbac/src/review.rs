//! Helpers for the authorization review APIs: pkg/registry/authorization
//! (`selfsubjectrulesreview`, `selfsubjectaccessreview`, `subjectaccessreview`,
//! `localsubjectaccessreview`) and pkg/registry/authorization/util (`ResourceAttributesFrom`,
//! `NonResourceAttributesFrom`, `AuthorizationAttributesFrom`).

use crate::authorizer::{Attributes, Decision, RbacIndex};
use crest_api::{ApiError, UserInfo};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn s<'v>(v: Option<&'v Value>, k: &str) -> &'v str {
    v.and_then(|v| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The attributes an access review's `spec` asks about (`ResourceAttributesFrom` when
/// `spec.resourceAttributes` is set, else `NonResourceAttributesFrom`), for `user` (the
/// requester for the Self- kinds, [`user_from_spec`] for SubjectAccessReview).
pub fn access_review_attributes<'a>(user: &'a UserInfo, spec: &'a Value) -> Attributes<'a> {
    match spec.get("resourceAttributes").filter(|v| !v.is_null()) {
        Some(r) => Attributes {
            user,
            verb: s(Some(r), "verb"),
            namespace: s(Some(r), "namespace"),
            api_group: s(Some(r), "group"),
            api_version: s(Some(r), "version"),
            resource: s(Some(r), "resource"),
            subresource: s(Some(r), "subresource"),
            name: s(Some(r), "name"),
            resource_request: true,
            path: "",
        },
        None => {
            let n = spec.get("nonResourceAttributes");
            Attributes::non_resource(user, s(n, "verb"), s(n, "path"))
        }
    }
}

/// The user a SubjectAccessReview's `spec` names (`user`, `groups`, `uid`, `extra`).
pub fn user_from_spec(spec: &Value) -> UserInfo {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let extra: BTreeMap<String, Vec<String>> = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), strings(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        name: s(Some(spec), "user").to_string(),
        uid: s(Some(spec), "uid").to_string(),
        groups: strings(spec.get("groups")),
        extra,
    }
}

/// A review's `status` (`SubjectAccessReviewStatus`): `allowed`, `denied` when the decision
/// was Deny, `reason` when there is one.
pub fn access_review_status(decision: Decision, reason: &str) -> Value {
    let mut st = json!({"allowed": decision == Decision::Allow});
    if decision == Decision::Deny {
        st["denied"] = true.into();
    }
    if !reason.is_empty() {
        st["reason"] = reason.into();
    }
    st
}

/// SelfSubjectRulesReview's `Create`: the response object for a review (`spec.namespace`
/// required: `400 no namespace on request` otherwise). Upstream answers with a new object
/// carrying only the status.
pub fn self_subject_rules_review(
    index: &RbacIndex,
    user: &UserInfo,
    review: &Value,
) -> Result<Value, ApiError> {
    let namespace = s(review.get("spec"), "namespace");
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    Ok(json!({
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {},
        "status": index.rules_review(user, namespace).to_status(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_from_spec() {
        let u = UserInfo::default();
        let spec = json!({"resourceAttributes": {"verb": "list", "group": "apps", "resource": "deployments", "namespace": "ns", "subresource": "scale", "name": "d", "version": "v1"}});
        let a = access_review_attributes(&u, &spec);
        assert!(a.resource_request);
        assert_eq!(
            (
                a.verb,
                a.api_group,
                a.resource,
                a.subresource,
                a.name,
                a.namespace,
                a.api_version
            ),
            ("list", "apps", "deployments", "scale", "d", "ns", "v1")
        );
        let spec = json!({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}});
        let a = access_review_attributes(&u, &spec);
        assert!(!a.resource_request);
        assert_eq!((a.verb, a.path), ("get", "/healthz"));
        let spec = json!({"user": "bob", "groups": ["g"], "uid": "1", "extra": {"k": ["v"]}});
        let u = user_from_spec(&spec);
        assert_eq!(
            (u.name.as_str(), u.groups.clone(), u.uid.as_str()),
            ("bob", vec!["g".to_string()], "1")
        );
        assert_eq!(u.extra["k"], vec!["v".to_string()]);
    }

    #[test]
    fn statuses() {
        assert_eq!(
            access_review_status(Decision::NoOpinion, ""),
            json!({"allowed": false})
        );
        assert_eq!(
            access_review_status(Decision::Allow, "RBAC: allowed by x"),
            json!({"allowed": true, "reason": "RBAC: allowed by x"})
        );
        let ix = RbacIndex::new();
        let u = UserInfo::default();
        assert_eq!(
            self_subject_rules_review(&ix, &u, &json!({"spec": {}}))
                .unwrap_err()
                .message,
            "no namespace on request"
        );
        let r =
            self_subject_rules_review(&ix, &u, &json!({"spec": {"namespace": "default"}})).unwrap();
        assert_eq!(
            r["status"],
            json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false})
        );
    }
}
