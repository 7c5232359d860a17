//! Validation of the four RBAC kinds: pkg/apis/rbac/validation (`ValidateRole`,
//! `ValidateClusterRole`, `ValidateRoleBinding`, `ValidateClusterRoleBinding`, their `Update`
//! variants, `ValidatePolicyRule`, `ValidateRoleBindingSubject`), apimachinery's
//! `ValidateLabelSelector`, and the defaulting of pkg/apis/rbac/v1 (`SetDefaults_*`) that runs
//! before it.

use crate::authorizer::Kind;
use crate::rule::{PolicyRule, RoleRef, Subject, GROUP};
use crest_api::validation::{
    go_string_slice, is_qualified_name, is_valid_label_value, name_is_dns_subdomain,
    name_is_path_segment, validate_labels, validate_object_meta, validate_object_meta_update,
};
use crest_api::ApiError;
use crest_api::GroupKind;
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{Map, Value};

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` / `SetDefaults_Subject`: an
/// empty `roleRef.apiGroup` becomes `rbac.authorization.k8s.io`, as does the `apiGroup` of a
/// User or Group subject. Roles have nothing to default.
pub fn set_defaults(kind: Kind, obj: &mut Value) {
    if !matches!(kind, Kind::RoleBinding | Kind::ClusterRoleBinding) {
        return;
    }
    if let Some(r) = obj.get_mut("roleRef").and_then(Value::as_object_mut) {
        if r.get("apiGroup")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
        {
            r.insert("apiGroup".into(), GROUP.into());
        }
    }
    if let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) {
        for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
            let empty = s
                .get("apiGroup")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .is_empty();
            let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
            if empty && matches!(kind, "User" | "Group") {
                s.insert("apiGroup".into(), GROUP.into());
            }
        }
    }
}

fn metadata(obj: &Value) -> Map<String, Value> {
    obj.get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// `ValidateRBACName`: names only have to be valid path segments.
pub fn validate_rbac_name(name: &str, prefix: bool) -> Vec<String> {
    name_is_path_segment(name, prefix)
}

fn rules(obj: &Value) -> Vec<(PolicyRule, usize)> {
    match obj.get("rules") {
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, r)| (PolicyRule::from_value(r), i))
            .collect(),
        _ => vec![],
    }
}

/// `ValidatePolicyRule`.
pub fn validate_policy_rule(rule: &PolicyRule, namespaced: bool, path: &FieldPath) -> FieldErrors {
    let mut errs = vec![];
    if rule.verbs.is_empty() {
        errs.push(FieldError::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    if !rule.non_resource_urls.is_empty() {
        let urls = go_string_slice(&rule.non_resource_urls);
        if namespaced {
            errs.push(FieldError::invalid_repr(
                &path.child("nonResourceURLs"),
                &urls,
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if !rule.api_groups.is_empty()
            || !rule.resources.is_empty()
            || !rule.resource_names.is_empty()
        {
            errs.push(FieldError::invalid_repr(
                &path.child("nonResourceURLs"),
                &urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if rule.api_groups.is_empty() {
        errs.push(FieldError::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if rule.resources.is_empty() {
        errs.push(FieldError::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// `ValidateRole`.
pub fn validate_role(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(
        &metadata(obj),
        true,
        validate_rbac_name,
        &FieldPath::new("metadata"),
    );
    for (r, i) in rules(obj) {
        errs.extend(validate_policy_rule(
            &r,
            true,
            &FieldPath::new("rules").index(i),
        ));
    }
    errs
}

/// `ValidateRoleUpdate`.
pub fn validate_role_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate_role(new);
    errs.extend(validate_object_meta_update(
        &metadata(new),
        &metadata(old),
        &FieldPath::new("metadata"),
    ));
    errs
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => vec![],
    }
}

/// apimachinery's `ValidateLabelSelector` (meta/v1 validation).
pub fn validate_label_selector(
    sel: &Value,
    allow_invalid_label_value: bool,
    path: &FieldPath,
) -> FieldErrors {
    let mut errs = vec![];
    if let Some(m) = sel.as_object() {
        let mut wrapper = Map::new();
        if let Some(l) = m.get("matchLabels") {
            wrapper.insert("labels".into(), l.clone());
        }
        validate_labels(&wrapper, &path.child("matchLabels"), &mut errs);
    }
    let exprs = sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, e) in exprs.iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let op = e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let values = strings(e.get("values"));
        match op {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errs.push(FieldError::required(
                        &p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errs.push(FieldError::forbidden(
                        &p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            _ => errs.push(FieldError::invalid(
                &p.child("operator"),
                op,
                "not a valid selector operator",
            )),
        }
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        for m in is_qualified_name(key) {
            errs.push(FieldError::invalid(&p.child("key"), key, m));
        }
        if !allow_invalid_label_value {
            for (vi, v) in values.iter().enumerate() {
                for m in is_valid_label_value(v) {
                    errs.push(FieldError::invalid(
                        &p.child("values").index(vi),
                        v.as_str(),
                        m,
                    ));
                }
            }
        }
    }
    errs
}

/// `ValidateClusterRole`. `allow_invalid_label_value_in_selector` is upstream's
/// `ClusterRoleValidationOptions` (true on an update of an object that already had one).
pub fn validate_cluster_role(
    obj: &Value,
    allow_invalid_label_value_in_selector: bool,
) -> FieldErrors {
    let mut errs = validate_object_meta(
        &metadata(obj),
        false,
        validate_rbac_name,
        &FieldPath::new("metadata"),
    );
    for (r, i) in rules(obj) {
        errs.extend(validate_policy_rule(
            &r,
            false,
            &FieldPath::new("rules").index(i),
        ));
    }
    if let Some(agg) = obj.get("aggregationRule").filter(|v| !v.is_null()) {
        let path = FieldPath::new("aggregationRule").child("clusterRoleSelectors");
        let selectors = agg
            .get("clusterRoleSelectors")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if selectors.is_empty() {
            errs.push(FieldError::required(
                &path,
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
        for (i, s) in selectors.iter().enumerate() {
            let p = path.index(i);
            errs.extend(validate_label_selector(
                s,
                allow_invalid_label_value_in_selector,
                &p,
            ));
            // LabelSelectorAsSelector refuses what strict validation refuses.
            if !validate_label_selector(s, false, &p).is_empty() {
                errs.push(FieldError::invalid(&p, "null", "invalid label selector."));
            }
        }
    }
    errs
}

/// Whether a ClusterRole's selectors carry label values strict validation refuses (what the
/// strategy reads to set `allow_invalid_label_value_in_selector` on update).
pub fn has_invalid_label_value_in_selector(obj: &Value) -> bool {
    obj.get("aggregationRule")
        .and_then(|a| a.get("clusterRoleSelectors"))
        .and_then(Value::as_array)
        .is_some_and(|sels| {
            sels.iter().any(|s| {
                s.get("matchExpressions")
                    .and_then(Value::as_array)
                    .is_some_and(|es| {
                        es.iter().any(|e| {
                            strings(e.get("values"))
                                .iter()
                                .any(|v| !is_valid_label_value(v).is_empty())
                        })
                    })
            })
        })
}

/// `ValidateClusterRoleUpdate`.
pub fn validate_cluster_role_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate_cluster_role(new, has_invalid_label_value_in_selector(old));
    errs.extend(validate_object_meta_update(
        &metadata(new),
        &metadata(old),
        &FieldPath::new("metadata"),
    ));
    errs
}

/// `ValidateRoleBindingSubject`.
pub fn validate_subject(s: &Subject, namespaced: bool, path: &FieldPath) -> FieldErrors {
    let mut errs = vec![];
    if s.name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    }
    match s.kind.as_str() {
        "ServiceAccount" => {
            if !s.name.is_empty() {
                for m in name_is_dns_subdomain(&s.name, false) {
                    errs.push(FieldError::invalid(&path.child("name"), s.name.as_str(), m));
                }
            }
            if !s.api_group.is_empty() {
                errs.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    s.api_group.as_str(),
                    &[""],
                ));
            }
            if !namespaced && s.namespace.is_empty() {
                errs.push(FieldError::required(&path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if s.api_group != GROUP {
                errs.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    s.api_group.as_str(),
                    &[GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            &path.child("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

fn validate_binding(obj: &Value, namespaced: bool) -> FieldErrors {
    let mut errs = validate_object_meta(
        &metadata(obj),
        namespaced,
        validate_rbac_name,
        &FieldPath::new("metadata"),
    );
    let r = RoleRef::of(obj);
    let rp = FieldPath::new("roleRef");
    if r.api_group != GROUP {
        errs.push(FieldError::not_supported(
            &rp.child("apiGroup"),
            r.api_group.as_str(),
            &[GROUP],
        ));
    }
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&r.kind.as_str()) {
        errs.push(FieldError::not_supported(
            &rp.child("kind"),
            r.kind.as_str(),
            kinds,
        ));
    }
    if r.name.is_empty() {
        errs.push(FieldError::required(&rp.child("name"), ""));
    } else {
        for m in validate_rbac_name(&r.name, false) {
            errs.push(FieldError::invalid(&rp.child("name"), r.name.as_str(), m));
        }
    }
    for (i, s) in Subject::list_of(obj).iter().enumerate() {
        errs.extend(validate_subject(
            s,
            namespaced,
            &FieldPath::new("subjects").index(i),
        ));
    }
    errs
}

fn validate_binding_update(new: &Value, old: &Value, namespaced: bool) -> FieldErrors {
    let mut errs = validate_binding(new, namespaced);
    errs.extend(validate_object_meta_update(
        &metadata(new),
        &metadata(old),
        &FieldPath::new("metadata"),
    ));
    let (n, o) = (RoleRef::of(new), RoleRef::of(old));
    if n != o {
        errs.push(FieldError::invalid_repr(
            &FieldPath::new("roleRef"),
            &n.go_repr(),
            "cannot change roleRef",
        ));
    }
    errs
}

/// `ValidateRoleBinding`.
pub fn validate_role_binding(obj: &Value) -> FieldErrors {
    validate_binding(obj, true)
}

/// `ValidateRoleBindingUpdate` (the roleRef is immutable).
pub fn validate_role_binding_update(new: &Value, old: &Value) -> FieldErrors {
    validate_binding_update(new, old, true)
}

/// `ValidateClusterRoleBinding`.
pub fn validate_cluster_role_binding(obj: &Value) -> FieldErrors {
    validate_binding(obj, false)
}

/// `ValidateClusterRoleBindingUpdate` (the roleRef is immutable).
pub fn validate_cluster_role_binding_update(new: &Value, old: &Value) -> FieldErrors {
    validate_binding_update(new, old, false)
}

/// Create (`old` = None) or update validation of any of the four kinds, as the registry's
/// strategies run it: on update, `Validate*` of the new object followed by `Validate*Update`
/// (which validates the new object again: upstream reports those errors twice in the Status'
/// causes; the message drops the duplicates).
pub fn validate(kind: Kind, new: &Value, old: Option<&Value>) -> FieldErrors {
    let Some(o) = old else {
        return match kind {
            Kind::Role => validate_role(new),
            Kind::ClusterRole => validate_cluster_role(new, false),
            Kind::RoleBinding => validate_role_binding(new),
            Kind::ClusterRoleBinding => validate_cluster_role_binding(new),
        };
    };
    let (mut errs, update) = match kind {
        Kind::Role => (validate_role(new), validate_role_update(new, o)),
        Kind::ClusterRole => (
            validate_cluster_role(new, has_invalid_label_value_in_selector(o)),
            validate_cluster_role_update(new, o),
        ),
        Kind::RoleBinding => (
            validate_role_binding(new),
            validate_role_binding_update(new, o),
        ),
        Kind::ClusterRoleBinding => (
            validate_cluster_role_binding(new),
            validate_cluster_role_binding_update(new, o),
        ),
    };
    errs.extend(update);
    errs
}

/// [`validate`] as the 422 to answer with (`Role.rbac.authorization.k8s.io "x" is invalid:
/// ...`), or `Ok` when there is nothing to report.
pub fn validate_to_error(kind: Kind, new: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let errs = validate(kind, new, old);
    if errs.is_empty() {
        return Ok(());
    }
    let name = new
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(ApiError::invalid(
        &GroupKind::new(GROUP, kind.as_str()),
        name,
        &errs,
    ))
}
