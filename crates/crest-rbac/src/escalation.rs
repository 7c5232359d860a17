//! Escalation prevention on Role, ClusterRole, RoleBinding and ClusterRoleBinding writes:
//! pkg/registry/rbac/validation/rule.go (`ConfirmNoEscalation`), policy_comparator.go
//! (`Covers`, `BreakdownRule`, `ruleCovers`), policy_compact.go (`CompactRules`),
//! pkg/registry/rbac/escalation_check.go (`EscalationAllowed`, `RoleEscalationAuthorized`,
//! `BindingAuthorized`) and the policy-based storages of pkg/registry/rbac/*/policybased.
//!
//! The server calls [`check_role_write`] before it stores a Role or ClusterRole (create and
//! update) and [`check_binding_write`] before it stores a RoleBinding or ClusterRoleBinding.

use crate::authorizer::{Attributes, Kind, NotFoundWording, RbacIndex};
use crate::forbidden::new_forbidden;
use crate::rule::{go_quote_slice, rules_of, PolicyRule, RoleRef, ALL, GROUP};
use crest_api::names;
use crest_api::{ApiError, GroupResource, UserInfo};
use serde_json::Value;
use std::collections::BTreeSet;

/// `BreakdownRule`: one rule per (group, resource, verb[, resourceName]) and per
/// (nonResourceURL, verb).
pub(crate) fn breakdown_rule(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = vec![];
    for g in &rule.api_groups {
        for r in &rule.resources {
            for v in &rule.verbs {
                let base = PolicyRule {
                    api_groups: vec![g.clone()],
                    resources: vec![r.clone()],
                    verbs: vec![v.clone()],
                    ..Default::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(base);
                } else {
                    for n in &rule.resource_names {
                        out.push(PolicyRule {
                            resource_names: vec![n.clone()],
                            ..base.clone()
                        });
                    }
                }
            }
        }
    }
    for u in &rule.non_resource_urls {
        for v in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: vec![u.clone()],
                verbs: vec![v.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn has(set: &[String], e: &str) -> bool {
    set.iter().any(|s| s == e)
}

fn has_all(set: &[String], contains: &[String]) -> bool {
    contains.iter().all(|c| has(set, c))
}

fn resource_covers_all(set: &[String], covers: &[String]) -> bool {
    if has(set, ALL) || has_all(set, covers) {
        return true;
    }
    covers.iter().all(|path| {
        if has(set, path) {
            return true;
        }
        match path.split_once('/') {
            None => false,
            Some((_, sub)) => has(set, &format!("*/{sub}")),
        }
    })
}

fn non_resource_url_covers(owner: &str, sub: &str) -> bool {
    owner == sub || (owner.ends_with('*') && sub.starts_with(owner.trim_end_matches('*')))
}

fn non_resource_urls_cover_all(set: &[String], covers: &[String]) -> bool {
    covers
        .iter()
        .all(|p| set.iter().any(|o| non_resource_url_covers(o, p)))
}

/// `ruleCovers`: whether `owner` grants everything `sub` grants.
pub(crate) fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = non_resource_urls_cover_all(&owner.non_resource_urls, &sub.non_resource_urls);
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// `Covers`: whether `owner` rules cover all `servant` rules, and the broken-down rules they
/// do not cover.
pub(crate) fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let uncovered: Vec<PolicyRule> = servant
        .iter()
        .flat_map(breakdown_rule)
        .filter(|s| !owner.iter().any(|o| rule_covers(o, s)))
        .collect();
    (uncovered.is_empty(), uncovered)
}

/// `simpleResource`: group, resource and the one resourceName of a simple rule.
type SimpleResource = (String, String, Option<String>);

/// `CompactRules`: rules naming one group and one resource (and at most one resourceName)
/// merged by (group, resource, resourceName) with their verbs unioned in order; other rules
/// kept as they are. (Upstream appends the merged ones in map order; its callers sort.)
pub(crate) fn compact_rules(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut compacted: Vec<PolicyRule> = vec![];
    let mut simple: Vec<(SimpleResource, PolicyRule)> = vec![];
    for r in rules {
        let is_simple = r.resource_names.len() <= 1
            && r.non_resource_urls.is_empty()
            && r.api_groups.len() == 1
            && r.resources.len() == 1;
        if !is_simple {
            compacted.push(r.clone());
            continue;
        }
        let key = (
            r.api_groups[0].clone(),
            r.resources[0].clone(),
            r.resource_names.first().cloned(),
        );
        match simple.iter_mut().find(|(k, _)| *k == key) {
            Some((_, existing)) => {
                for v in &r.verbs {
                    if !existing.verbs.contains(v) {
                        existing.verbs.push(v.clone());
                    }
                }
            }
            None => simple.push((key, r.clone())),
        }
    }
    compacted.extend(simple.into_iter().map(|(_, r)| r));
    compacted
}

/// `EscalationAllowed`: members of `system:masters` may grant anything.
pub(crate) fn escalation_allowed(user: &UserInfo) -> bool {
    user.in_group(names::SYSTEM_MASTERS)
}

/// `ConfirmNoEscalation` given the owner's rules (`RulesFor(user, namespace)`) and the errors
/// met resolving them: `Err` with upstream's message (`user "alice" (groups=["g"]) is attempting
/// to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"],
/// Verbs:["get"]}`) when the requested rules are not covered.
pub fn confirm_no_escalation(
    user: &UserInfo,
    owner_rules: &[PolicyRule],
    resolution_errors: &[String],
    requested: &[PolicyRule],
) -> Result<(), String> {
    let (ok, missing) = covers(owner_rules, requested);
    if ok {
        return Ok(());
    }
    let descriptions: BTreeSet<String> = compact_rules(&missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    let mut msg = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        crate::rule::go_quote(&user.name),
        go_quote_slice(&user.groups),
        descriptions.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !resolution_errors.is_empty() {
        // Go's `%v` of a one-element `[]error` holding the aggregate.
        msg.push_str(&format!(
            "; resolution errors: [{}]",
            crate::authorizer::aggregate_errors(resolution_errors)
        ));
    }
    Err(msg)
}

/// The attributes `RoleEscalationAuthorized` asks the authorizer about before a Role or
/// ClusterRole write: verb `escalate` on the resource being written, with the request's
/// namespace and name (`name` is empty on a create, as the request URL names none).
pub fn escalate_attributes<'a>(
    user: &'a UserInfo,
    kind: Kind,
    namespace: &'a str,
    request_name: &'a str,
) -> Attributes<'a> {
    Attributes::resource(
        user,
        "escalate",
        namespace,
        GROUP,
        "*",
        kind.resource(),
        "",
        request_name,
    )
}

/// The attributes `BindingAuthorized` asks the authorizer about before a binding write: verb
/// `bind` on the referenced role (`roles`/`clusterroles` named by the roleRef) in the binding's
/// namespace (empty for a ClusterRoleBinding). `None` for a roleRef kind that is neither.
pub fn bind_attributes<'a>(
    user: &'a UserInfo,
    role_ref: &'a RoleRef,
    binding_namespace: &'a str,
) -> Option<Attributes<'a>> {
    let resource = match role_ref.kind.as_str() {
        "ClusterRole" => "clusterroles",
        "Role" => "roles",
        _ => return None,
    };
    Some(Attributes {
        user,
        verb: "bind",
        namespace: binding_namespace,
        api_group: &role_ref.api_group,
        api_version: "",
        resource,
        subresource: "",
        name: &role_ref.name,
        resource_request: true,
        path: "",
    })
}

/// `IsOnlyMutatingGCFields`: whether an update changes nothing but ownerReferences and
/// finalizers (what the garbage collector writes). resourceVersion and managedFields, which
/// the server itself maintains, are ignored too.
pub(crate) fn is_only_mutating_gc_fields(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in [
                "ownerReferences",
                "finalizers",
                "selfLink",
                "resourceVersion",
                "managedFields",
            ] {
                m.remove(k);
            }
        }
        v
    };
    strip(new) == strip(old)
}

/// The full authority an aggregationRule requires (`fullAuthority`).
pub(crate) fn full_authority() -> Vec<PolicyRule> {
    vec![
        PolicyRule::resource(&[ALL], &[ALL], &[ALL]),
        PolicyRule::non_resource(&[ALL], &[ALL]),
    ]
}

fn has_aggregation_rule(obj: &Value) -> bool {
    obj.get("aggregationRule")
        .and_then(|a| a.get("clusterRoleSelectors"))
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
}

fn name_of(obj: &Value) -> &str {
    obj.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn confirm(
    index: &RbacIndex,
    user: &UserInfo,
    namespace: &str,
    requested: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = index.rules_for(user, namespace, NotFoundWording::Storage);
    confirm_no_escalation(user, &owner, &errors, requested)
}

/// The escalation check of a Role or ClusterRole create (`old` = None) or update, as the
/// policy-based storages do it: allowed for `system:masters` and for a user allowed to
/// `escalate` roles/clusterroles; an update touching only GC fields passes; otherwise the
/// user must already hold every rule it writes (in `namespace`, empty for a ClusterRole), and
/// setting (or having had) an aggregationRule needs full authority. The error is the 403 to
/// answer with.
pub fn check_role_write(
    index: &RbacIndex,
    user: &UserInfo,
    kind: Kind,
    namespace: &str,
    request_name: &str,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    if escalation_allowed(user)
        || index.allows(&escalate_attributes(user, kind, namespace, request_name))
    {
        return Ok(());
    }
    if let Some(old) = old {
        if is_only_mutating_gc_fields(new, old) {
            return Ok(());
        }
    }
    let name = name_of(new);
    let resource = kind.resource();
    confirm(index, user, namespace, &rules_of(new))
        .map_err(|e| new_forbidden(GROUP, resource, name, &e))?;
    if kind == Kind::ClusterRole
        && (has_aggregation_rule(new) || old.is_some_and(has_aggregation_rule))
        && confirm(index, user, namespace, &full_authority()).is_err()
    {
        return Err(new_forbidden(
            GROUP,
            resource,
            name,
            "must have cluster-admin privileges to use the aggregationRule",
        ));
    }
    Ok(())
}

/// The escalation check of a RoleBinding or ClusterRoleBinding create (`old` = None) or
/// update: allowed for `system:masters`; an update touching only GC fields passes; allowed
/// when the user may `bind` the referenced role ([`bind_attributes`]); otherwise the user must
/// hold every rule of the referenced role in the binding's namespace (empty for a
/// ClusterRoleBinding). A missing role is the storage's 404 (`clusterroles.rbac.authorization.k8s.io
/// "x" not found`), as upstream returns the getter's error as it is.
pub fn check_binding_write(
    index: &RbacIndex,
    user: &UserInfo,
    kind: Kind,
    namespace: &str,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    if escalation_allowed(user) {
        return Ok(());
    }
    if let Some(old) = old {
        if is_only_mutating_gc_fields(new, old) {
            return Ok(());
        }
    }
    let role_ref = RoleRef::of(new);
    if bind_attributes(user, &role_ref, namespace).is_some_and(|a| index.allows(&a)) {
        return Ok(());
    }
    let name = name_of(new);
    let resource = kind.resource();
    // The storage's own error, unwrapped: a 404 for a missing role.
    let rules = match role_ref.kind.as_str() {
        "Role" => index.role_rules(namespace, &role_ref.name).ok_or_else(|| {
            ApiError::not_found(&GroupResource::new(GROUP, "roles"), &role_ref.name)
        })?,
        "ClusterRole" => index.cluster_role_rules(&role_ref.name).ok_or_else(|| {
            ApiError::not_found(&GroupResource::new(GROUP, "clusterroles"), &role_ref.name)
        })?,
        other => {
            // A plain error: the handler answers 500 with no reason (validation, which would
            // refuse the kind, runs later upstream).
            return Err(ApiError::unknown(format!(
                "unsupported role reference kind: {}",
                crate::rule::go_quote(other)
            )));
        }
    };
    confirm(index, user, namespace, rules).map_err(|e| new_forbidden(GROUP, resource, name, &e))
}
