//! The default policy: plugin/pkg/auth/authorizer/rbac/bootstrappolicy (`ClusterRoles`,
//! `ClusterRoleBindings`), transcribed from upstream's testdata as data files
//! (`data/cluster-roles.json`, `data/cluster-role-bindings.json`).
//!
//! At startup the server creates each object that does not exist yet (upstream reconciles
//! objects annotated `rbac.authorization.kubernetes.io/autoupdate: "true"`, adding missing
//! rules and subjects), then runs [`crate::aggregation`] so admin, edit and view carry the rules
//! of every ClusterRole labelled `rbac.authorization.k8s.io/aggregate-to-<x>: "true"`.

use crate::aggregation::aggregate_in_place;
use crate::rule::{PolicyRule, GROUP};
use serde_json::{json, Map, Value};

const CLUSTER_ROLES: &str = include_str!("../data/cluster-roles.json");
const CLUSTER_ROLE_BINDINGS: &str = include_str!("../data/cluster-role-bindings.json");
const ROLES: &str = include_str!("../data/namespace-roles.json");
const ROLE_BINDINGS: &str = include_str!("../data/namespace-role-bindings.json");

/// The label every bootstrap object carries.
pub(crate) const BOOTSTRAPPING_LABEL: (&str, &str) =
    ("kubernetes.io/bootstrapping", "rbac-defaults");
/// The annotation telling the server it may reconcile the object at startup.
pub(crate) const AUTOUPDATE_ANNOTATION: (&str, &str) =
    ("rbac.authorization.kubernetes.io/autoupdate", "true");

fn list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

fn rule(v: &Value) -> PolicyRule {
    if let Some(urls) = v.get("urls").and_then(Value::as_str) {
        return PolicyRule {
            verbs: list(v.get("verbs").and_then(Value::as_str).unwrap_or_default()),
            non_resource_urls: list(urls),
            ..Default::default()
        };
    }
    let part = |i: usize| v.get(i).and_then(Value::as_str).map(list);
    PolicyRule {
        api_groups: part(0).unwrap_or_default(),
        resources: part(1).unwrap_or_default(),
        verbs: part(2).unwrap_or_default(),
        resource_names: part(3).unwrap_or_default(),
        non_resource_urls: vec![],
    }
}

fn metadata(name: &str, namespace: &str, extra_labels: Option<&Value>) -> Value {
    let mut labels = Map::new();
    labels.insert(BOOTSTRAPPING_LABEL.0.into(), BOOTSTRAPPING_LABEL.1.into());
    if let Some(Value::Object(extra)) = extra_labels {
        labels.extend(extra.clone());
    }
    let mut m = json!({
        "name": name,
        "labels": labels,
        "annotations": {AUTOUPDATE_ANNOTATION.0: AUTOUPDATE_ANNOTATION.1},
    });
    if !namespace.is_empty() {
        m["namespace"] = namespace.into();
    }
    m
}

fn str_of<'v>(e: &'v Value, k: &str) -> &'v str {
    e.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn role_objects(data: &str, kind: &str) -> Vec<Value> {
    entries(data, "roles")
        .iter()
        .map(|e| {
            let rules: Vec<Value> = e
                .get("rules")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|r| rule(r).to_value()).collect())
                .unwrap_or_default();
            let mut o = json!({
                "apiVersion": format!("{GROUP}/v1"),
                "kind": kind,
                "metadata": metadata(str_of(e, "name"), str_of(e, "namespace"), e.get("labels")),
                "rules": rules,
            });
            if let Some(to) = e.get("aggregate").and_then(Value::as_str) {
                o["aggregationRule"] = json!({"clusterRoleSelectors": [
                    {"matchLabels": {format!("{GROUP}/aggregate-to-{to}"): "true"}}
                ]});
            }
            o
        })
        .collect()
}

fn binding_objects(data: &str, kind: &str, role_kind: &str) -> Vec<Value> {
    entries(data, "bindings")
        .iter()
        .map(|e| {
            let name = str_of(e, "name");
            let role = match str_of(e, "role") {
                "" => name,
                r => r,
            };
            let subjects: Vec<Value> = e
                .get("subjects")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .filter_map(|s| {
                            let (kind, rest) = s.split_once(':')?;
                            Some(match kind {
                                "ServiceAccount" => {
                                    let (ns, n) = rest.split_once(':')?;
                                    json!({"kind": kind, "name": n, "namespace": ns})
                                }
                                _ => json!({"apiGroup": GROUP, "kind": kind, "name": rest}),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            let mut o = json!({
                "apiVersion": format!("{GROUP}/v1"),
                "kind": kind,
                "metadata": metadata(name, str_of(e, "namespace"), None),
                "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role},
            });
            if !subjects.is_empty() {
                o["subjects"] = Value::Array(subjects);
            }
            o
        })
        .collect()
}

fn entries(data: &str, key: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v.get(key).and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// The default ClusterRoles as full objects ready to store, in name order, with the
/// aggregated roles (admin, edit, view) already carrying their aggregated rules.
pub fn bootstrap_cluster_roles() -> Vec<Value> {
    let mut roles = role_objects(CLUSTER_ROLES, "ClusterRole");
    aggregate_in_place(&mut roles);
    roles
}

/// The default ClusterRoleBindings as full objects ready to store, in name order.
pub fn bootstrap_cluster_role_bindings() -> Vec<Value> {
    binding_objects(CLUSTER_ROLE_BINDINGS, "ClusterRoleBinding", "ClusterRole")
}

/// The default Roles (in kube-system and kube-public) as full objects ready to store, once
/// their namespace exists.
pub fn bootstrap_roles() -> Vec<Value> {
    role_objects(ROLES, "Role")
}

/// The default RoleBindings (in kube-system and kube-public) as full objects ready to store.
pub fn bootstrap_role_bindings() -> Vec<Value> {
    binding_objects(ROLE_BINDINGS, "RoleBinding", "Role")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(v: &'a [Value], name: &str) -> &'a Value {
        v.iter()
            .find(|o| o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"))
    }

    #[test]
    fn roles_parse_and_carry_labels() {
        let roles = bootstrap_cluster_roles();
        assert_eq!(roles.len(), 31);
        for r in &roles {
            assert_eq!(
                r["metadata"]["labels"]["kubernetes.io/bootstrapping"],
                "rbac-defaults"
            );
            assert_eq!(
                r["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
                "true"
            );
        }
        let ca = find(&roles, "cluster-admin");
        assert_eq!(
            ca["rules"],
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                   {"nonResourceURLs": ["*"], "verbs": ["*"]}])
        );
        let disc = find(&roles, "system:discovery");
        assert_eq!(disc["rules"][0]["nonResourceURLs"][0], "/api");
        let kcm = find(&roles, "system:kube-controller-manager");
        assert_eq!(kcm["rules"][0]["apiGroups"], json!(["", "events.k8s.io"]));
        assert_eq!(
            kcm["rules"][2]["resourceNames"],
            json!(["kube-controller-manager"])
        );
        let edit = find(&roles, "edit");
        assert_eq!(
            edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"],
            "true"
        );
        assert_eq!(
            edit["aggregationRule"],
            json!({"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]})
        );
    }

    #[test]
    fn aggregated_roles_are_filled() {
        let roles = bootstrap_cluster_roles();
        let n = |name: &str| find(&roles, name)["rules"].as_array().map_or(0, Vec::len);
        // view = aggregate-to-view; edit = aggregate-to-edit + view; admin = aggregate-to-admin + edit.
        assert_eq!(n("view"), n("system:aggregate-to-view"));
        assert_eq!(n("edit"), n("system:aggregate-to-edit") + n("view"));
        assert_eq!(n("admin"), n("system:aggregate-to-admin") + n("edit"));
        // Selected roles in name order: "edit" comes before "system:aggregate-to-admin".
        assert_eq!(
            find(&roles, "admin")["rules"][0],
            find(&roles, "edit")["rules"][0]
        );
        assert_eq!(
            find(&roles, "admin")["rules"][n("edit")]["resources"],
            json!(["localsubjectaccessreviews"])
        );
    }

    #[test]
    fn namespaced() {
        let roles = bootstrap_roles();
        assert_eq!(roles.len(), 7);
        assert_eq!(roles[1]["metadata"]["namespace"], "kube-system");
        assert_eq!(
            roles[1]["rules"],
            json!([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["extension-apiserver-authentication"], "verbs": ["get", "list", "watch"]}])
        );
        let b = bootstrap_role_bindings();
        assert_eq!(b.len(), 7);
        assert_eq!(b[0]["metadata"]["namespace"], "kube-public");
        assert_eq!(
            b[1]["roleRef"],
            json!({"apiGroup": GROUP, "kind": "Role", "name": "extension-apiserver-authentication-reader"})
        );
        assert_eq!(
            b[2]["subjects"][1],
            json!({"kind": "ServiceAccount", "name": "kube-controller-manager", "namespace": "kube-system"})
        );
        for o in roles.iter().chain(&b) {
            assert!(crate::validation::validate(
                crate::Kind::from_kind(o["kind"].as_str().unwrap()).unwrap(),
                o,
                None
            )
            .is_empty());
        }
    }

    #[test]
    fn bindings() {
        let b = bootstrap_cluster_role_bindings();
        assert_eq!(b.len(), 12);
        let ca = find(&b, "cluster-admin");
        assert_eq!(
            ca["subjects"],
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}])
        );
        assert_eq!(
            ca["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"})
        );
        assert_eq!(
            find(&b, "system:kube-dns")["subjects"],
            json!([{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}])
        );
        assert_eq!(
            find(&b, "system:public-info-viewer")["subjects"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert!(find(&b, "system:node").get("subjects").is_none());
        for o in bootstrap_cluster_roles().iter().chain(&b) {
            let kind = crate::Kind::from_kind(o["kind"].as_str().unwrap()).unwrap();
            let errs = crate::validation::validate(kind, o, None);
            assert!(errs.is_empty(), "{}: {errs:?}", o["metadata"]["name"]);
        }
    }
}
