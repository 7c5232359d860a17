//! Startup reconciliation of the bootstrap policy: pkg/registry/rbac/reconciliation
//! (`computeReconciledRole`, `computeReconciledRoleBinding`) in the "union" mode the
//! kube-apiserver's `rbac/bootstrap-roles` post-start hook uses: existing objects keep their
//! extra rules and subjects and gain the missing ones; labels and annotations are merged (the
//! existing values win); an object annotated `rbac.authorization.kubernetes.io/autoupdate:
//! "false"` is protected and left alone.

use crate::escalation::covers;
use crate::rule::{rules_of, PolicyRule, RoleRef};
use serde_json::{Map, Value};

/// What to do with one bootstrap object.
#[derive(Debug, Clone, PartialEq)]
pub enum Reconcile {
    /// Nothing to change.
    None,
    /// It does not exist: create this object.
    Create(Value),
    /// Update the stored object to this one (the stored object with additions).
    Update(Value),
    /// A binding whose roleRef differs (immutable): delete the stored one, create this one.
    Recreate(Value),
    /// The object needs changes but carries `autoupdate: "false"`: leave it (upstream logs it).
    Protected,
}

fn meta_map<'v>(obj: &'v Value, k: &str) -> Option<&'v Map<String, Value>> {
    obj.get("metadata")
        .and_then(|m| m.get(k))
        .and_then(Value::as_object)
}

fn protected(existing: &Value) -> bool {
    meta_map(existing, "annotations")
        .and_then(|a| a.get("rbac.authorization.kubernetes.io/autoupdate"))
        .and_then(Value::as_str)
        == Some("false")
}

/// `merge(expected, existing)` of labels or annotations: the existing values win. Returns
/// whether the result differs from the existing map.
fn merge_meta(result: &mut Value, expected: &Value, existing: &Value, key: &str) -> bool {
    let (exp, ex) = (meta_map(expected, key), meta_map(existing, key));
    if exp.is_none() && ex.is_none() {
        return false;
    }
    let mut merged = exp.cloned().unwrap_or_default();
    if let Some(ex) = ex {
        merged.extend(ex.clone());
    }
    let changed = Some(&merged) != ex;
    if let Some(m) = result.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert(key.into(), Value::Object(merged));
    }
    changed
}

fn selectors(obj: &Value) -> Option<Vec<Value>> {
    obj.get("aggregationRule")
        .filter(|v| !v.is_null())
        .map(|a| {
            a.get("clusterRoleSelectors")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
}

/// `computeReconciledRole` (union mode) for a Role or ClusterRole. The rules of an expected
/// aggregated role are not compared (the aggregation controller owns them).
pub fn reconcile_role(existing: Option<&Value>, expected: &Value) -> Reconcile {
    let Some(existing) = existing else {
        return Reconcile::Create(expected.clone());
    };
    let mut result = existing.clone();
    let mut update = merge_meta(&mut result, expected, existing, "annotations");
    update |= merge_meta(&mut result, expected, existing, "labels");

    // The rules of an aggregated role belong to the aggregation controller (upstream's
    // expected aggregated roles carry none; ours come pre-aggregated).
    let expected_rules = if selectors(expected).is_some() {
        vec![]
    } else {
        rules_of(expected)
    };
    let (_, missing) = covers(&rules_of(existing), &expected_rules);
    if !missing.is_empty() {
        let mut rules: Vec<Value> = existing
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        rules.extend(missing.iter().map(PolicyRule::to_value));
        result["rules"] = Value::Array(rules);
        update = true;
    }

    match (selectors(expected), selectors(existing)) {
        (None, Some(_)) => {
            if let Some(m) = result.as_object_mut() {
                m.remove("aggregationRule");
            }
            update = true;
        }
        (Some(exp), ex) => {
            let ex = ex.unwrap_or_default();
            let missing: Vec<Value> = exp.into_iter().filter(|s| !ex.contains(s)).collect();
            if !missing.is_empty() {
                let mut all = ex;
                all.extend(missing);
                result["aggregationRule"] = serde_json::json!({"clusterRoleSelectors": all});
                update = true;
            }
        }
        (None, None) => {}
    }
    finish(existing, result, update)
}

fn finish(existing: &Value, result: Value, update: bool) -> Reconcile {
    match (update, protected(existing)) {
        (false, _) => Reconcile::None,
        (true, true) => Reconcile::Protected,
        (true, false) => Reconcile::Update(result),
    }
}

/// `computeReconciledRoleBinding` (union mode) for a RoleBinding or ClusterRoleBinding.
pub fn reconcile_binding(existing: Option<&Value>, expected: &Value) -> Reconcile {
    let Some(existing) = existing else {
        return Reconcile::Create(expected.clone());
    };
    if RoleRef::of(existing) != RoleRef::of(expected) {
        return if protected(existing) {
            Reconcile::Protected
        } else {
            Reconcile::Recreate(expected.clone())
        };
    }
    let mut result = existing.clone();
    let mut update = merge_meta(&mut result, expected, existing, "annotations");
    update |= merge_meta(&mut result, expected, existing, "labels");
    let subjects = |o: &Value| -> Vec<Value> {
        o.get("subjects")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let have = subjects(existing);
    let mut missing: Vec<Value> = vec![];
    for s in subjects(expected) {
        if !have.contains(&s) && !missing.contains(&s) {
            missing.push(s);
        }
    }
    if !missing.is_empty() {
        let mut all = have;
        all.extend(missing);
        result["subjects"] = Value::Array(all);
        update = true;
    }
    finish(existing, result, update)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles() {
        let expected = json!({"kind": "ClusterRole", "metadata": {"name": "r", "labels": {"a": "1"}, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]});
        assert_eq!(
            reconcile_role(None, &expected),
            Reconcile::Create(expected.clone())
        );
        assert_eq!(reconcile_role(Some(&expected), &expected), Reconcile::None);
        // A user's extra rule and label stay; the missing verb comes back broken down.
        let existing = json!({"kind": "ClusterRole", "metadata": {"name": "r", "labels": {"a": "2", "b": "x"}, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]});
        let Reconcile::Update(u) = reconcile_role(Some(&existing), &expected) else {
            panic!("expected an update");
        };
        assert_eq!(u["metadata"]["labels"], json!({"a": "2", "b": "x"}));
        assert_eq!(u["rules"].as_array().unwrap().len(), 3);
        assert_eq!(
            u["rules"][2],
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]})
        );
        let mut prot = existing.clone();
        prot["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] =
            "false".into();
        assert_eq!(reconcile_role(Some(&prot), &expected), Reconcile::Protected);
    }

    #[test]
    fn aggregation_rules() {
        let sel = json!({"matchLabels": {"x": "true"}});
        let expected = json!({"metadata": {"name": "admin"}, "aggregationRule": {"clusterRoleSelectors": [sel]}, "rules": []});
        let existing = json!({"metadata": {"name": "admin"}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]});
        let Reconcile::Update(u) = reconcile_role(Some(&existing), &expected) else {
            panic!("expected an update");
        };
        assert_eq!(u["aggregationRule"]["clusterRoleSelectors"], json!([sel]));
        let plain = json!({"metadata": {"name": "admin"}, "rules": []});
        let Reconcile::Update(u) = reconcile_role(Some(&expected), &plain) else {
            panic!("expected an update");
        };
        assert!(u.get("aggregationRule").is_none());
        // The bootstrap roles reconcile to nothing against themselves, aggregated or not.
        for r in crate::bootstrap_cluster_roles() {
            assert_eq!(reconcile_role(Some(&r), &r), Reconcile::None);
            let mut emptied = r.clone();
            if r.get("aggregationRule").is_some() {
                emptied["rules"] = json!([]);
                assert_eq!(reconcile_role(Some(&emptied), &r), Reconcile::None);
            }
        }
    }

    #[test]
    fn bindings() {
        let expected = json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g"}]});
        assert_eq!(
            reconcile_binding(Some(&expected), &expected),
            Reconcile::None
        );
        let mut other = expected.clone();
        other["subjects"] =
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "u"}]);
        let Reconcile::Update(u) = reconcile_binding(Some(&other), &expected) else {
            panic!("expected an update");
        };
        assert_eq!(u["subjects"].as_array().unwrap().len(), 2);
        let mut moved = expected.clone();
        moved["roleRef"]["name"] = "other".into();
        assert_eq!(
            reconcile_binding(Some(&moved), &expected),
            Reconcile::Recreate(expected.clone())
        );
    }
}
