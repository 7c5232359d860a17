//! Table tests across the modules, after upstream's rbac_test.go, rule_test.go,
//! policy_comparator_test.go and validation_test.go (cases rewritten as our own data).

use crate::authorizer::{Attributes, Decision, Kind, NotFoundWording, RbacIndex};
use crate::escalation::*;
use crate::rule::PolicyRule;
use crate::validation::*;
use crest_api::aggregate;
use crest_api::UserInfo;
use serde_json::{json, Value};

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    }
}

fn rule(verbs: &str, groups: &str, resources: &str) -> Value {
    json!({"verbs": verbs.split(',').collect::<Vec<_>>(),
           "apiGroups": groups.split(',').collect::<Vec<_>>(),
           "resources": resources.split(',').collect::<Vec<_>>()})
}

fn url_rule(verbs: &str, urls: &str) -> Value {
    json!({"verbs": verbs.split(',').collect::<Vec<_>>(),
           "nonResourceURLs": urls.split(',').collect::<Vec<_>>()})
}

fn cluster_role(name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name}, "rules": rules})
}

fn role(ns: &str, name: &str, rules: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": ns}, "rules": rules})
}

/// Subjects as `User:alice`, `Group:g`, `ServiceAccount:name` or `ServiceAccount:ns:name`.
fn subjects(subjects: &[&str]) -> Vec<Value> {
    subjects
        .iter()
        .map(|s| {
            let (kind, rest) = s.split_once(':').unwrap();
            match kind {
                "ServiceAccount" => match rest.split_once(':') {
                    Some((ns, n)) => json!({"kind": kind, "name": n, "namespace": ns}),
                    None => json!({"kind": kind, "name": rest}),
                },
                _ => json!({"kind": kind, "apiGroup": "rbac.authorization.k8s.io", "name": rest}),
            }
        })
        .collect()
}

fn crb(name: &str, role: &str, subs: &[&str]) -> Value {
    json!({"kind": "ClusterRoleBinding", "metadata": {"name": name},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
           "subjects": subjects(subs)})
}

fn rb(ns: &str, name: &str, kind: &str, role: &str, subs: &[&str]) -> Value {
    json!({"kind": "RoleBinding", "metadata": {"name": name, "namespace": ns},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": subjects(subs)})
}

fn res<'a>(
    u: &'a UserInfo,
    verb: &'a str,
    ns: &'a str,
    group: &'a str,
    resource: &'a str,
) -> Attributes<'a> {
    Attributes::resource(u, verb, ns, group, "v1", resource, "", "")
}

#[test]
fn bindings_grant_in_their_namespace() {
    let ix = RbacIndex::from_objects(&[
        cluster_role("admin", vec![rule("*", "*", "*")]),
        rb(
            "ns1",
            "b",
            "ClusterRole",
            "admin",
            &["User:admin", "Group:admins"],
        ),
    ]);
    let admin = user("admin", &[]);
    let admin_g1 = user("admin", &["group1"]);
    let joe = user("joe", &["admins"]);
    let joe2 = user("joe", &["group1", "admins"]);
    for (u, verb, ns, resource, ok) in [
        (&admin, "get", "ns1", "pods", true),
        (&admin, "watch", "ns1", "pods", true),
        (&admin_g1, "watch", "ns1", "foobar", true),
        (&joe, "watch", "ns1", "foobar", true),
        (&joe2, "watch", "ns1", "foobar", true),
        (&admin, "get", "ns2", "pods", false),
        (&admin, "get", "", "nodes", false),
        (&joe, "get", "ns2", "pods", false),
        (&joe, "get", "", "nodes", false),
    ] {
        let d = ix.authorize(&res(u, verb, ns, "", resource)).0;
        assert_eq!(
            d == Decision::Allow,
            ok,
            "{} {verb} {ns} {resource}",
            u.name
        );
    }
}

#[test]
fn non_resource_urls() {
    let ix = RbacIndex::from_objects(&[
        cluster_role("getter", vec![url_rule("get", "/apis")]),
        cluster_role("all", vec![url_rule("*", "/apis")]),
        cluster_role("prefix", vec![url_rule("get", "/apis/*")]),
        crb("getter", "getter", &["User:foo", "Group:bar"]),
        crb("all", "all", &["User:admin", "Group:admin"]),
        crb("prefix", "prefix", &["User:prefixed", "Group:prefixed"]),
    ]);
    let cases: &[(UserInfo, &str, &str, bool)] = &[
        (user("foo", &[]), "get", "/apis", true),
        (user("", &["bar"]), "get", "/apis", true),
        (user("admin", &[]), "watch", "/apis", true),
        (user("", &["admin"]), "watch", "/apis", true),
        (user("prefixed", &[]), "get", "/apis/v1", true),
        (user("", &["prefixed"]), "get", "/apis/v1/foobar", true),
        (user("foo", &[]), "watch", "/apis", false),
        (user("foo", &[]), "get", "/api/v1", false),
        (user("admin", &[]), "get", "/api/v1", false),
        (user("prefixed", &[]), "get", "/api/v1", false),
        (user("prefixed", &[]), "get", "/apis", false),
    ];
    for (u, verb, path, ok) in cases {
        let d = ix.authorize(&Attributes::non_resource(u, verb, path)).0;
        assert_eq!(d == Decision::Allow, *ok, "{u:?} {verb} {path}");
    }
}

#[test]
fn subresources_need_their_own_rule() {
    let ix = RbacIndex::from_objects(&[
        cluster_role("pods", vec![rule("*", "*", "pods")]),
        cluster_role("status", vec![rule("*", "*", "pods/status")]),
        rb("ns1", "a", "ClusterRole", "pods", &["User:a"]),
        rb("ns1", "b", "ClusterRole", "status", &["User:b"]),
    ]);
    let (a, b) = (user("a", &[]), user("b", &[]));
    let sub = |u, s| Attributes::resource(u, "get", "ns1", "", "v1", "pods", s, "");
    assert!(ix.allows(&sub(&a, "")));
    assert!(!ix.allows(&sub(&a, "status")));
    assert!(ix.allows(&sub(&b, "status")));
    assert!(!ix.allows(&sub(&b, "")));
}

#[test]
fn service_account_subjects() {
    let ix = RbacIndex::from_objects(&[
        cluster_role("view", vec![rule("get,list", "", "pods")]),
        // Namespace defaults to the binding's.
        rb(
            "ns1",
            "local",
            "ClusterRole",
            "view",
            &["ServiceAccount:builder"],
        ),
        rb(
            "ns2",
            "other",
            "ClusterRole",
            "view",
            &["ServiceAccount:ns1:builder"],
        ),
        // A ClusterRoleBinding subject without namespace matches nobody.
        crb("nons", "view", &["ServiceAccount:builder"]),
    ]);
    let sa = user(
        "system:serviceaccount:ns1:builder",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:ns1",
            "system:authenticated",
        ],
    );
    assert!(ix.allows(&res(&sa, "get", "ns1", "", "pods")));
    assert!(ix.allows(&res(&sa, "list", "ns2", "", "pods")));
    assert!(!ix.allows(&res(&sa, "get", "ns3", "", "pods")));
    assert!(!ix.allows(&res(&sa, "get", "", "", "pods")));
    let other = user("system:serviceaccount:ns2:builder", &[]);
    assert!(!ix.allows(&res(&other, "get", "ns1", "", "pods")));
    let (d, reason) = ix.authorize(&res(&sa, "get", "ns2", "", "pods"));
    assert_eq!(d, Decision::Allow);
    assert_eq!(
        reason,
        r#"RBAC: allowed by RoleBinding "other/ns2" of ClusterRole "view" to ServiceAccount "builder/ns1""#
    );
}

#[test]
fn role_bindings_to_roles_and_reasons() {
    let mut ix = RbacIndex::from_objects(&[
        role("ns1", "pod-reader", vec![rule("get", "", "pods")]),
        rb("ns1", "read", "Role", "pod-reader", &["Group:readers"]),
        crb("lists", "lister", &["User:alice"]),
    ]);
    let alice = user("alice", &["readers", "system:authenticated"]);
    let (d, reason) = ix.authorize(&res(&alice, "get", "ns1", "", "pods"));
    assert_eq!(d, Decision::Allow);
    assert_eq!(
        reason,
        r#"RBAC: allowed by RoleBinding "read/ns1" of Role "pod-reader" to Group "readers""#
    );
    // The missing ClusterRole is reported when nothing allows.
    let (d, reason) = ix.authorize(&res(&alice, "list", "ns1", "", "pods"));
    assert_eq!(d, Decision::NoOpinion);
    assert_eq!(
        reason,
        r#"RBAC: clusterrole.rbac.authorization.k8s.io "lister" not found"#
    );
    ix.upsert(
        Kind::RoleBinding,
        &rb("ns1", "gone", "Role", "gone", &["User:alice"]),
    );
    let (_, reason) = ix.authorize(&res(&alice, "list", "ns1", "", "pods"));
    assert_eq!(
        reason,
        r#"RBAC: [clusterrole.rbac.authorization.k8s.io "lister" not found, role.rbac.authorization.k8s.io "gone" not found]"#
    );
    // Creating the role fixes it; removing the binding revokes.
    ix.upsert(
        Kind::ClusterRole,
        &cluster_role("lister", vec![rule("list", "", "pods")]),
    );
    let (d, reason) = ix.authorize(&res(&alice, "list", "ns1", "", "pods"));
    assert_eq!(d, Decision::Allow);
    assert_eq!(
        reason,
        r#"RBAC: allowed by ClusterRoleBinding "lists" of ClusterRole "lister" to User "alice""#
    );
    ix.remove(Kind::ClusterRoleBinding, "", "lists");
    assert!(!ix.allows(&res(&alice, "list", "ns1", "", "pods")));
    ix.remove(Kind::RoleBinding, "ns1", "read");
    assert!(!ix.allows(&res(&alice, "get", "ns1", "", "pods")));
    // An update that changes the subjects re-indexes the binding.
    ix.upsert(
        Kind::RoleBinding,
        &rb("ns1", "read", "Role", "pod-reader", &["User:bob"]),
    );
    assert!(!ix.allows(&res(&alice, "get", "ns1", "", "pods")));
    assert!(ix.allows(&res(&user("bob", &[]), "get", "ns1", "", "pods")));
    assert_eq!(ix.counts(), (1, 1, 2, 0));
}

#[test]
fn resource_names_and_masters() {
    let ix = RbacIndex::from_objects(&[
        cluster_role(
            "one",
            vec![
                json!({"verbs": ["get", "update", "create", "list"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cm1"]}),
            ],
        ),
        crb("one", "one", &["User:alice"]),
    ]);
    let alice = user("alice", &[]);
    let named =
        |verb, name| Attributes::resource(&alice, verb, "ns", "", "v1", "configmaps", "", name);
    assert!(ix.allows(&named("get", "cm1")));
    assert!(ix.allows(&named("update", "cm1")));
    assert!(!ix.allows(&named("get", "cm2")));
    assert!(!ix.allows(&named("create", "")));
    assert!(!ix.allows(&named("list", "")));
    let root = user("root", &["system:masters"]);
    assert_eq!(
        ix.authorize(&res(&root, "delete", "", "", "nodes")),
        (Decision::Allow, String::new())
    );
    assert_eq!(
        ix.authorize_rbac(&res(&root, "delete", "", "", "nodes")).0,
        Decision::NoOpinion
    );
}

#[test]
fn bootstrap_policy_authorizes() {
    let mut objs = crate::bootstrap_cluster_roles();
    objs.extend(crate::bootstrap_cluster_role_bindings());
    objs.push(rb("dev", "edit", "ClusterRole", "edit", &["User:dev"]));
    objs.push(rb("dev", "view", "ClusterRole", "view", &["User:viewer"]));
    let ix = RbacIndex::from_objects(&objs);
    let anon = user("system:anonymous", &["system:unauthenticated"]);
    for path in ["/healthz", "/readyz", "/livez", "/version"] {
        assert!(
            ix.allows(&Attributes::non_resource(&anon, "get", path)),
            "{path}"
        );
    }
    assert!(!ix.allows(&Attributes::non_resource(&anon, "get", "/api")));
    assert!(!ix.allows(&res(&anon, "get", "default", "", "pods")));
    let dev = user("dev", &["system:authenticated"]);
    assert!(ix.allows(&Attributes::non_resource(&dev, "get", "/apis/apps/v1")));
    assert!(ix.allows(&Attributes::non_resource(&dev, "get", "/openapi/v3")));
    assert!(ix.allows(&res(
        &dev,
        "create",
        "",
        "authorization.k8s.io",
        "selfsubjectrulesreviews"
    )));
    assert!(ix.allows(&res(&dev, "create", "dev", "apps", "deployments")));
    assert!(ix.allows(&res(&dev, "get", "dev", "", "secrets")));
    assert!(!ix.allows(&res(
        &dev,
        "create",
        "dev",
        "rbac.authorization.k8s.io",
        "roles"
    )));
    assert!(!ix.allows(&res(&dev, "create", "other", "apps", "deployments")));
    let viewer = user("viewer", &["system:authenticated"]);
    assert!(ix.allows(&res(&viewer, "list", "dev", "", "pods")));
    assert!(!ix.allows(&res(&viewer, "get", "dev", "", "secrets")));
    assert!(!ix.allows(&res(&viewer, "delete", "dev", "", "pods")));
    let admin = user(
        "kubernetes-admin",
        &["system:masters", "system:authenticated"],
    );
    let (d, reason) = ix.authorize_rbac(&res(&admin, "delete", "", "", "nodes"));
    assert_eq!(d, Decision::Allow);
    assert_eq!(
        reason,
        r#"RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters""#
    );
}

#[test]
fn rules_review_lists_rules() {
    let ix = RbacIndex::from_objects(&[
        cluster_role(
            "mixed",
            vec![rule("get", "", "pods"), url_rule("get", "/healthz")],
        ),
        crb("mixed", "mixed", &["Group:g"]),
        rb("ns1", "r", "Role", "missing", &["Group:g"]),
        rb("ns1", "c", "ClusterRole", "mixed", &["User:u"]),
    ]);
    let u = user("u", &["g"]);
    let r = ix.rules_review(&u, "ns1");
    assert_eq!(r.resource_rules.len(), 2);
    assert_eq!(r.non_resource_rules.len(), 2);
    assert!(!r.incomplete);
    assert_eq!(
        r.evaluation_error,
        r#"role.rbac.authorization.k8s.io "missing" not found"#
    );
    assert_eq!(
        r.to_status(),
        json!({
            "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                              {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
                                 {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
            "incomplete": false,
            "evaluationError": "role.rbac.authorization.k8s.io \"missing\" not found"
        })
    );
    let other = ix.rules_review(&user("nobody", &[]), "ns1");
    assert_eq!(
        other.to_status(),
        json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false})
    );
}

fn pr(v: Value) -> PolicyRule {
    PolicyRule::from_value(&v)
}

#[test]
fn covers_table() {
    // (owner, requested, covered)
    let cases: Vec<(Vec<Value>, Vec<Value>, bool)> = vec![
        (
            vec![rule("*", "*", "*")],
            vec![rule("get,list", "apps", "deployments")],
            true,
        ),
        (
            vec![rule("get", "", "pods")],
            vec![rule("get,list", "", "pods")],
            false,
        ),
        (
            vec![rule("get,list", "", "pods,services")],
            vec![rule("get", "", "pods"), rule("list", "", "services")],
            true,
        ),
        (
            vec![rule("get", "*", "pods")],
            vec![rule("get", "", "pods")],
            true,
        ),
        (
            vec![rule("get", "", "*/status")],
            vec![rule("get", "", "pods/status")],
            true,
        ),
        (
            vec![rule("get", "", "*/status")],
            vec![rule("get", "", "pods")],
            false,
        ),
        (
            vec![rule("get", "", "pods")],
            vec![rule("get", "", "pods/status")],
            false,
        ),
        (
            vec![url_rule("get", "/api/*")],
            vec![url_rule("get", "/api/v1")],
            true,
        ),
        (
            vec![url_rule("get", "/api/*")],
            vec![url_rule("get", "/apis")],
            false,
        ),
        (
            vec![url_rule("*", "*")],
            vec![url_rule("get,post", "/anything")],
            true,
        ),
        (
            vec![
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a", "b"]}),
            ],
            vec![
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
            ],
            true,
        ),
        (
            vec![
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
            ],
            vec![rule("get", "", "pods")],
            false,
        ),
        (
            vec![rule("get", "", "pods")],
            vec![
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
            ],
            true,
        ),
        (vec![rule("get", "", "pods")], vec![], true),
    ];
    for (i, (owner, req, ok)) in cases.into_iter().enumerate() {
        let owner: Vec<PolicyRule> = owner.into_iter().map(pr).collect();
        let req: Vec<PolicyRule> = req.into_iter().map(pr).collect();
        assert_eq!(covers(&owner, &req).0, ok, "case {i}");
    }
}

#[test]
fn escalation_message() {
    let alice = user("alice", &["system:authenticated"]);
    let owner = vec![pr(rule("get", "", "pods"))];
    let req = vec![
        pr(rule("get,list,watch", "", "pods,secrets")),
        pr(url_rule("get", "/metrics")),
    ];
    let err = confirm_no_escalation(&alice, &owner, &[], &req).unwrap_err();
    assert_eq!(
        err,
        "user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\" \"watch\"]}\n\
         {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\" \"watch\"]}\n\
         {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
    );
    let err = confirm_no_escalation(&alice, &owner, &["e1".into(), "e2".into()], &req).unwrap_err();
    assert!(err.ends_with("; resolution errors: [[e1, e2]]"), "{err}");
    assert!(confirm_no_escalation(&alice, &owner, &[], &owner).is_ok());
}

fn escalation_index() -> RbacIndex {
    RbacIndex::from_objects(&[
        cluster_role("pods", vec![rule("get,list", "", "pods")]),
        cluster_role("secrets", vec![rule("get", "", "secrets")]),
        cluster_role(
            "escalator",
            vec![rule("escalate", "rbac.authorization.k8s.io", "roles")],
        ),
        cluster_role(
            "binder",
            vec![
                json!({"verbs": ["bind"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "resourceNames": ["secrets"]}),
            ],
        ),
        rb("ns1", "alice-pods", "ClusterRole", "pods", &["User:alice"]),
        rb("ns1", "esc", "ClusterRole", "escalator", &["User:esc"]),
        rb("ns1", "bind", "ClusterRole", "binder", &["User:binder"]),
    ])
}

#[test]
fn role_writes() {
    let ix = escalation_index();
    let alice = user("alice", &["system:authenticated"]);
    let ok = role("ns1", "r", vec![rule("get", "", "pods")]);
    assert!(check_role_write(&ix, &alice, Kind::Role, "ns1", "", &ok, None).is_ok());
    // Held in ns1, not in ns2.
    let mut elsewhere = ok.clone();
    elsewhere["metadata"]["namespace"] = "ns2".into();
    let e = check_role_write(&ix, &alice, Kind::Role, "ns2", "", &elsewhere, None).unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        "roles.rbac.authorization.k8s.io \"r\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}"
    );
    assert_eq!(
        e.to_status()["details"],
        json!({"name": "r", "group": "rbac.authorization.k8s.io", "kind": "roles"})
    );
    let bad = role("ns1", "r", vec![rule("get", "", "secrets")]);
    assert!(check_role_write(&ix, &alice, Kind::Role, "ns1", "", &bad, None).is_err());
    // The escalate verb bypasses the check; so does system:masters.
    let esc = user("esc", &[]);
    assert!(check_role_write(&ix, &esc, Kind::Role, "ns1", "", &bad, None).is_ok());
    assert!(check_role_write(&ix, &esc, Kind::Role, "ns2", "", &bad, None).is_err());
    let root = user("root", &["system:masters"]);
    assert!(check_role_write(&ix, &root, Kind::Role, "ns2", "", &bad, None).is_ok());
    // An update touching only ownerReferences passes.
    let mut gc = bad.clone();
    gc["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "1"}]);
    assert!(check_role_write(&ix, &alice, Kind::Role, "ns1", "r", &gc, Some(&bad)).is_ok());
    // An aggregationRule needs full authority.
    let mut agg = cluster_role("agg", vec![]);
    agg["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]});
    let e = check_role_write(&ix, &alice, Kind::ClusterRole, "", "", &agg, None).unwrap_err();
    assert_eq!(
        e.message,
        "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
    );
    let plain = cluster_role("agg", vec![]);
    assert!(check_role_write(
        &ix,
        &alice,
        Kind::ClusterRole,
        "",
        "agg",
        &plain,
        Some(&agg)
    )
    .is_err());
    assert!(check_role_write(
        &ix,
        &alice,
        Kind::ClusterRole,
        "",
        "agg",
        &plain,
        Some(&plain)
    )
    .is_ok());
}

#[test]
fn binding_writes() {
    let ix = escalation_index();
    let alice = user("alice", &[]);
    let b = rb("ns1", "x", "ClusterRole", "pods", &["User:bob"]);
    assert!(check_binding_write(&ix, &alice, Kind::RoleBinding, "ns1", &b, None).is_ok());
    let b2 = rb("ns2", "x", "ClusterRole", "pods", &["User:bob"]);
    let e = check_binding_write(&ix, &alice, Kind::RoleBinding, "ns2", &b2, None).unwrap_err();
    assert!(e.message.starts_with(
        "rolebindings.rbac.authorization.k8s.io \"x\" is forbidden: user \"alice\" (groups=[]) is attempting to grant RBAC permissions not currently held:\n"
    ), "{}", e.message);
    let missing = rb("ns1", "x", "ClusterRole", "nope", &["User:bob"]);
    let e = check_binding_write(&ix, &alice, Kind::RoleBinding, "ns1", &missing, None).unwrap_err();
    assert_eq!(e.code, 404);
    assert_eq!(
        e.message,
        "clusterroles.rbac.authorization.k8s.io \"nope\" not found"
    );
    // bind on the named clusterrole in ns1 bypasses.
    let binder = user("binder", &[]);
    let s = rb("ns1", "s", "ClusterRole", "secrets", &["User:bob"]);
    assert!(check_binding_write(&ix, &binder, Kind::RoleBinding, "ns1", &s, None).is_ok());
    let p = rb("ns1", "p", "ClusterRole", "pods", &["User:bob"]);
    assert!(check_binding_write(&ix, &binder, Kind::RoleBinding, "ns1", &p, None).is_err());
    let c = crb("c", "secrets", &["User:bob"]);
    assert!(check_binding_write(&ix, &binder, Kind::ClusterRoleBinding, "", &c, None).is_err());
    let sref = crate::RoleRef::of(&s);
    let rr = bind_attributes(&binder, &sref, "ns1").unwrap();
    assert_eq!(
        (rr.verb, rr.resource, rr.name, rr.namespace),
        ("bind", "clusterroles", "secrets", "ns1")
    );
    let ea = escalate_attributes(&binder, Kind::ClusterRole, "", "");
    assert_eq!(
        (ea.verb, ea.api_group, ea.resource),
        ("escalate", "rbac.authorization.k8s.io", "clusterroles")
    );
    assert!(ix
        .role_reference_rules(&crate::RoleRef::of(&s), "ns1", NotFoundWording::Lister)
        .is_ok());
}

fn errs(e: crest_api::FieldErrors) -> String {
    aggregate(&e)
}

#[test]
fn validate_roles() {
    assert!(validate_role(&role("ns", "r", vec![rule("get", "", "pods")])).is_empty());
    let r = role(
        "ns",
        "a/b",
        vec![
            json!({"apiGroups": [""], "resources": ["pods"]}),
            json!({"verbs": ["get"]}),
            url_rule("get", "/api"),
        ],
    );
    assert_eq!(
        errs(validate_role(&r)),
        "[metadata.name: Invalid value: \"a/b\": may not contain '/', rules[0].verbs: Required value: verbs must contain at least one value, rules[1].apiGroups: Required value: resource rules must supply at least one api group, rules[1].resources: Required value: resource rules must supply at least one resource, rules[2].nonResourceURLs: Invalid value: []string{\"/api\"}: namespaced rules cannot apply to non-resource URLs]"
    );
    let cr = cluster_role(
        "system:x",
        vec![json!({"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]})],
    );
    assert_eq!(
        errs(validate_cluster_role(&cr, false)),
        "rules[0].nonResourceURLs: Invalid value: []string{\"/x\"}: rules cannot apply to both regular resources and non-resource URLs"
    );
    let mut agg = cluster_role("a", vec![]);
    agg["aggregationRule"] = json!({"clusterRoleSelectors": []});
    assert_eq!(
        errs(validate_cluster_role(&agg, false)),
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
    );
    agg["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]});
    assert_eq!(
        errs(validate_cluster_role(&agg, false)),
        "[aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.]"
    );
    let r = role("", "r", vec![]);
    assert_eq!(
        errs(validate_role(&r)),
        "metadata.namespace: Required value"
    );
}

#[test]
fn validate_bindings() {
    let mut b = rb(
        "ns",
        "b",
        "ClusterRole",
        "view",
        &["User:u", "ServiceAccount:sa", "Group:g"],
    );
    assert!(validate_role_binding(&b).is_empty());
    b["roleRef"] = json!({"apiGroup": "foo", "kind": "Thing", "name": ""});
    b["subjects"] = json!([
        {"kind": "User", "name": "u"},
        {"kind": "ServiceAccount", "name": "Bad_Name", "apiGroup": "x"},
        {"kind": "Robot", "name": ""}
    ]);
    assert_eq!(
        errs(validate_role_binding(&b)),
        "[roleRef.apiGroup: Unsupported value: \"foo\": supported values: \"rbac.authorization.k8s.io\", roleRef.kind: Unsupported value: \"Thing\": supported values: \"Role\", \"ClusterRole\", roleRef.name: Required value, subjects[0].apiGroup: Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\", subjects[1].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), subjects[1].apiGroup: Unsupported value: \"x\": supported values: \"\", subjects[2].name: Required value, subjects[2].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"]"
    );
    // Defaulting fills the apiGroups validation asks for.
    let mut d = json!({"kind": "RoleBinding", "metadata": {"name": "b", "namespace": "ns"},
        "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s"}]});
    set_defaults(Kind::RoleBinding, &mut d);
    assert_eq!(d["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(d["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(d["subjects"][1].get("apiGroup").is_none());
    assert!(validate_role_binding(&d).is_empty());

    let c = crb("c", "view", &["ServiceAccount:sa"]);
    assert_eq!(
        errs(validate_cluster_role_binding(&c)),
        "subjects[0].namespace: Required value"
    );
    let mut c = crb("c", "view", &["ServiceAccount:ns:sa"]);
    c["roleRef"]["kind"] = "Role".into();
    assert_eq!(
        errs(validate_cluster_role_binding(&c)),
        "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""
    );

    let old = crb("c", "view", &["User:u"]);
    let new = crb("c", "edit", &["User:u"]);
    assert_eq!(
        errs(validate_cluster_role_binding_update(&new, &old)),
        "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"
    );
    let e = validate_to_error(Kind::ClusterRoleBinding, &new, Some(&old)).unwrap_err();
    assert_eq!(
        e.message,
        "ClusterRoleBinding.rbac.authorization.k8s.io \"c\" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"
    );
    // The strategy validates the new object twice on update: duplicated causes, one message.
    let mut bad = new.clone();
    bad["roleRef"]["name"] = "view".into();
    bad["subjects"] = json!([{"kind": "Robot", "name": "r"}]);
    let e = validate_to_error(Kind::ClusterRoleBinding, &bad, Some(&old)).unwrap_err();
    assert_eq!(
        e.to_status()["details"]["causes"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        e.message,
        "ClusterRoleBinding.rbac.authorization.k8s.io \"c\" is invalid: subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""
    );
    let new_subjects = crb("c", "view", &["User:v"]);
    assert!(validate(Kind::ClusterRoleBinding, &new_subjects, Some(&old)).is_empty());
}

#[test]
fn non_resource_url_covers_table() {
    for (owner, requested, want) in [
        ("*", "/api", true),
        ("/api", "/api", true),
        ("/apis", "/api", false),
        ("/api/v1", "/api", false),
        ("/api/v1", "/api/v1", true),
        ("/api/*", "/api/v1", true),
        ("/api/*", "/api", false),
        ("/api/*/*", "/api/v1", false),
        ("/*/v1/*", "/api/v1", false),
    ] {
        let o = vec![pr(url_rule("get", owner))];
        let r = vec![pr(url_rule("get", requested))];
        assert_eq!(covers(&o, &r).0, want, "{owner} covers {requested}");
    }
}

#[test]
fn binding_error_fields() {
    // (binding, field of every error)
    let base = || crb("master", "valid", &[]);
    let mut cases: Vec<(Value, bool, &str)> = vec![];
    let mut b = base();
    b["roleRef"]["apiGroup"] = "rbac.GroupName".into();
    cases.push((b, false, "roleRef.apiGroup"));
    let mut b = base();
    b["roleRef"]["kind"] = "Type".into();
    cases.push((b, false, "roleRef.kind"));
    let mut b = base();
    b["metadata"] = json!({});
    cases.push((b, false, "metadata.name"));
    let mut b = base();
    b["roleRef"]["name"] = "".into();
    cases.push((b, false, "roleRef.name"));
    let mut b = base();
    b["subjects"] = json!([{"name": "subject"}]);
    cases.push((b, false, "subjects[0].kind"));
    let mut b = base();
    b["subjects"] = json!([{"namespace": "foo", "name": "subject:bad", "kind": "ServiceAccount"}]);
    cases.push((b.clone(), false, "subjects[0].name"));
    b["metadata"]["namespace"] = "default".into();
    b["subjects"] = json!([{"name": "subject:bad", "kind": "ServiceAccount"}]);
    cases.push((b, true, "subjects[0].name"));
    let mut b = base();
    b["subjects"] = json!([{"name": "good", "kind": "ServiceAccount"}]);
    cases.push((b, false, "subjects[0].namespace"));
    let mut b = base();
    b["subjects"] = json!([{"namespace": "foo", "kind": "ServiceAccount"}]);
    cases.push((b, false, "subjects[0].name"));
    for (b, namespaced, field) in cases {
        let errs = if namespaced {
            validate_role_binding(&b)
        } else {
            validate_cluster_role_binding(&b)
        };
        assert!(!errs.is_empty(), "{field}");
        for e in &errs {
            assert_eq!(e.field.as_str(), field, "{e}");
        }
    }
    let ok = json!({"metadata": {"name": "master"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "valid"},
        "subjects": [{"name": "validsaname", "namespace": "foo", "kind": "ServiceAccount"},
                     {"name": "valid@username", "kind": "User", "apiGroup": "rbac.authorization.k8s.io"},
                     {"name": "valid@groupname", "kind": "Group", "apiGroup": "rbac.authorization.k8s.io"}]});
    assert!(validate_cluster_role_binding(&ok).is_empty());
}

#[test]
fn a_binding_naming_the_user_twice_is_visited_once() {
    let ix = RbacIndex::from_objects(&[
        cluster_role("r", vec![rule("get", "", "pods")]),
        crb("b", "r", &["User:u", "Group:g", "Group:h"]),
        rb("ns", "b", "ClusterRole", "r", &["Group:h", "User:u"]),
    ]);
    let u = user("u", &["g", "h"]);
    assert_eq!(ix.rules_for(&u, "ns", NotFoundWording::Lister).0.len(), 2);
    // The first matching subject names the source, in the binding's order.
    let (_, reason) = ix.authorize(&res(&u, "get", "", "", "pods"));
    assert_eq!(
        reason,
        r#"RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u""#
    );
}
