//! rbac.authorization.k8s.io/v1 Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as
//! built-in kinds: kubectl's typed create commands (protobuf both ways), discovery, upstream's
//! printers, defaulting and validation wording, the immutable roleRef, server-side apply, and
//! the ClusterRole aggregation controller.

mod common;
use common::*;
use k8s_pb::api::rbac::v1::{ClusterRole, RoleBinding, RoleRef, Subject};
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost_k8s::Message;
use serde_json::Value;

const GROUP: &str = "rbac.authorization.k8s.io";

fn fields(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The `kubectl get -o wide` line of one object (the header excluded).
fn row(out: &str, name: &str) -> String {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{out}"))
        .to_string()
}

#[tokio::test]
async fn discovery_lists_the_group_after_events() {
    let s = Server::start();
    let out = s.kubectl_ok(&["api-resources", "--api-group", GROUP]);
    let lines: Vec<Vec<&str>> = out.lines().skip(1).map(fields).collect();
    assert_eq!(
        lines,
        vec![
            vec![
                "clusterrolebindings",
                "rbac.authorization.k8s.io/v1",
                "false",
                "ClusterRoleBinding"
            ],
            vec![
                "clusterroles",
                "rbac.authorization.k8s.io/v1",
                "false",
                "ClusterRole"
            ],
            vec![
                "rolebindings",
                "rbac.authorization.k8s.io/v1",
                "true",
                "RoleBinding"
            ],
            vec!["roles", "rbac.authorization.k8s.io/v1", "true", "Role"],
        ],
        "{out}"
    );
    let (code, _, body) = s
        .http(
            "GET",
            "/apis",
            &[(
                "Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let d: Value = serde_json::from_slice(&body).expect("json");
    let groups: Vec<&str> = d["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|g| g["metadata"]["name"].as_str())
        .collect();
    let at = |g: &str| groups.iter().position(|x| *x == g);
    let rbac = at(GROUP).unwrap_or_else(|| panic!("no {GROUP} in {groups:?}"));
    assert!(at("events.k8s.io").is_some_and(|e| e < rbac), "{groups:?}");
    assert!(
        at("apiextensions.k8s.io").is_some_and(|a| rbac < a),
        "{groups:?}"
    );
    let rbac_group = &d["items"][rbac];
    let roles = rbac_group["versions"][0]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["resource"] == "roles")
        .expect("roles");
    assert_eq!(roles["scope"], "Namespaced", "{roles}");
    assert!(roles.get("shortNames").is_none(), "{roles}");
    let verbs: Vec<&str> = roles["verbs"]
        .as_array()
        .expect("verbs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    // Sorted, as upstream's installer sorts a built-in resource's verbs.
    assert_eq!(
        verbs,
        [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ]
    );
    // The published schema: kubectl explain reads it.
    let out = s.kubectl_ok(&["explain", "rolebindings.roleRef"]);
    assert!(out.contains("This field is immutable."), "{out}");
    let out = s.kubectl_ok(&["explain", "clusterroles.aggregationRule", "--recursive"]);
    for field in [
        "clusterRoleSelectors",
        "matchExpressions",
        "operator",
        "matchLabels",
    ] {
        assert!(out.contains(field), "{out}");
    }
}

#[test]
fn kubectl_creates_and_prints_the_four_kinds() {
    let s = Server::start();
    // kubectl's typed create commands send protobuf and read protobuf answers.
    let out = s.kubectl_ok(&[
        "create",
        "role",
        "cm-reader",
        "--verb=get,list",
        "--resource=configmaps",
    ]);
    assert_eq!(
        out.trim(),
        "role.rbac.authorization.k8s.io/cm-reader created"
    );
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "secret-reader",
        "--verb=get",
        "--resource=secrets",
        "--resource-name=one",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "rb",
        "--role=cm-reader",
        "--user=alice",
        "--user=bob",
        "--group=devs",
        "--serviceaccount=default:builder",
    ]);
    let out = s.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "crb",
        "--clusterrole=secret-reader",
        "--group=ops",
    ]);
    assert_eq!(
        out.trim(),
        "clusterrolebinding.rbac.authorization.k8s.io/crb created"
    );

    let out = s.kubectl_ok(&["get", "roles"]);
    let header = out.lines().next().unwrap_or_default();
    assert_eq!(fields(header), ["NAME", "CREATED", "AT"], "{out}");
    let r = row(&out, "cm-reader");
    let created = fields(&r)[1].to_string();
    assert!(
        created.len() == 20 && created.ends_with('Z') && created.contains('T'),
        "{out}"
    );
    let out = s.kubectl_ok(&["get", "clusterroles", "-o", "wide"]);
    assert_eq!(
        fields(out.lines().next().unwrap_or_default()),
        ["NAME", "CREATED", "AT"]
    );
    row(&out, "secret-reader");

    let out = s.kubectl_ok(&["get", "rolebindings", "-o", "wide"]);
    assert_eq!(
        fields(out.lines().next().unwrap_or_default()),
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"],
        "{out}"
    );
    let r = row(&out, "rb");
    assert!(r.contains("Role/cm-reader"), "{out}");
    assert!(r.contains("alice, bob"), "{out}");
    assert!(r.contains(" devs "), "{out}");
    assert!(r.trim_end().ends_with("default/builder"), "{out}");
    let out = s.kubectl_ok(&["get", "rolebindings"]);
    assert_eq!(
        fields(out.lines().next().unwrap_or_default()),
        ["NAME", "ROLE", "AGE"]
    );
    let out = s.kubectl_ok(&["get", "clusterrolebindings", "-o", "wide"]);
    let r = fields(&row(&out, "crb")).join(" ");
    assert!(r.starts_with("crb ClusterRole/secret-reader "), "{out}");
    assert!(r.ends_with(" ops"), "{out}");

    // What was stored: v1 defaulting filled in the subjects' and roleRef's apiGroup.
    let rb: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "rolebinding", "rb", "-o", "json"]))
            .expect("json");
    assert_eq!(
        rb["roleRef"],
        serde_json::json!({"apiGroup": GROUP, "kind": "Role", "name": "cm-reader"})
    );
    assert_eq!(
        rb["subjects"],
        serde_json::json!([
            {"apiGroup": GROUP, "kind": "User", "name": "alice"},
            {"apiGroup": GROUP, "kind": "User", "name": "bob"},
            {"apiGroup": GROUP, "kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "builder", "namespace": "default"},
        ])
    );
    assert!(rb["metadata"].get("generation").is_none(), "{rb}");
    let cr: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "clusterrole", "secret-reader", "-o", "json"]))
            .expect("json");
    assert_eq!(
        cr["rules"],
        serde_json::json!([{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["one"], "verbs": ["get"]}])
    );

    // kubectl describe reads them through its typed clients (protobuf).
    let out = s.kubectl_ok(&["describe", "rolebinding", "rb"]);
    assert!(
        out.contains("Role:\n  Kind:  Role\n  Name:  cm-reader\n"),
        "{out}"
    );
    assert!(out.contains("ServiceAccount  builder  default"), "{out}");
    let out = s.kubectl_ok(&["describe", "clusterrole", "secret-reader"]);
    assert!(
        out.lines()
            .any(|l| fields(l) == ["secrets", "[]", "[one]", "[get]"]),
        "{out}"
    );

    // -o yaml round trip: what kubectl printed replaces the object unchanged.
    let yaml = s.kubectl_ok(&["get", "role", "cm-reader", "-o", "yaml"]);
    let (ok, out, err) = s.kubectl_stdin(&["replace", "-f", "-"], Some(&yaml));
    assert!(ok, "{out}{err}");
    assert_eq!(
        out.trim(),
        "role.rbac.authorization.k8s.io/cm-reader replaced"
    );
    let again = s.kubectl_ok(&["get", "role", "cm-reader", "-o", "yaml"]);
    let strip = |y: &str| -> Value {
        let mut v: Value = serde_yaml_ng::from_str(y).expect("yaml");
        v["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("resourceVersion");
        v
    };
    assert_eq!(strip(&yaml), strip(&again));

    // A create on update (PUT of a missing object) is allowed.
    let (ok, out, err) = s.kubectl_stdin(
        &["replace", "-f", "-"],
        Some("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: fresh\nrules: []\n"),
    );
    assert!(ok, "{out}{err}");
    s.kubectl_ok(&["get", "role", "fresh"]);
    s.kubectl_ok(&["delete", "role", "fresh"]);
    let (ok, _, err) = s.kubectl(&["get", "role", "fresh"]);
    assert!(!ok);
    assert!(
        err.contains("roles.rbac.authorization.k8s.io \"fresh\" not found"),
        "{err}"
    );
}

#[test]
fn invalid_objects_and_roleref_changes_are_refused() {
    let s = Server::start();
    let refused = |yaml: &str| -> String {
        let (ok, out, err) = s.kubectl_stdin(&["create", "-f", "-"], Some(yaml));
        assert!(!ok, "{out}");
        err.trim().to_string()
    };
    assert_eq!(
        refused("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: noverbs\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n"),
        "The Role \"noverbs\" is invalid: rules[0].verbs: Required value: verbs must contain at least one value"
    );
    assert_eq!(
        refused("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: urls\nrules:\n- verbs: [get]\n  apiGroups: [\"\"]\n  nonResourceURLs: [/healthz]\n"),
        "The Role \"urls\" is invalid: \n* rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs\n* rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: rules cannot apply to both regular resources and non-resource URLs"
    );
    assert_eq!(
        refused("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: bad\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: x\nsubjects:\n- kind: ServiceAccount\n  name: sa\n- kind: Robot\n  name: r\n"),
        "The ClusterRoleBinding \"bad\" is invalid: \n* roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"\n* subjects[0].namespace: Required value\n* subjects[1].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""
    );
    assert_eq!(
        refused("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: emptyagg\naggregationRule:\n  clusterRoleSelectors: []\n"),
        "The ClusterRole \"emptyagg\" is invalid: aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
    );
    // A name that is not a DNS subdomain is fine (names only have to be path segments);
    // a path separator is not.
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "system:Odd_Name",
        "--verb=get",
        "--resource=secrets",
    ]);
    let (ok, _, err) = s.kubectl_stdin(
        &["create", "-f", "-"],
        Some(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: a%b\n",
        ),
    );
    assert!(!ok);
    assert!(
        err.contains("metadata.name: Invalid value: \"a%b\": may not contain '%'"),
        "{err}"
    );

    // The roleRef is immutable.
    s.kubectl_ok(&[
        "create",
        "role",
        "r1",
        "--verb=get",
        "--resource=configmaps",
    ]);
    s.kubectl_ok(&["create", "rolebinding", "rb", "--role=r1", "--user=alice"]);
    let json = s.kubectl_ok(&["get", "rolebinding", "rb", "-o", "json"]);
    let changed = json.replace("\"name\": \"r1\"", "\"name\": \"r2\"");
    assert_ne!(json, changed);
    let (ok, _, err) = s.kubectl_stdin(&["replace", "-f", "-"], Some(&changed));
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "The RoleBinding \"rb\" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"r2\"}: cannot change roleRef"
    );
    // Subjects may change.
    s.kubectl_ok(&[
        "patch",
        "rolebinding",
        "rb",
        "--type=merge",
        "-p",
        r#"{"subjects":[{"kind":"Group","name":"devs"}]}"#,
    ]);
    let subjects = s.kubectl_ok(&["get", "rolebinding", "rb", "-o", "jsonpath={.subjects}"]);
    assert_eq!(
        subjects,
        r#"[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"devs"}]"#
    );
}

#[test]
fn aggregated_cluster_roles_follow_their_selectors() {
    let s = Server::start();
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "monitoring",
        "--aggregation-rule=rbac.example.com/aggregate-to-monitoring=true",
    ]);
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "b-secrets",
        "--verb=get,list",
        "--resource=secrets",
    ]);
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "a-configmaps",
        "--verb=watch",
        "--resource=configmaps",
    ]);
    let rules = || {
        s.kubectl_ok(&[
            "get",
            "clusterrole",
            "monitoring",
            "-o",
            "jsonpath={.rules}",
        ])
    };
    assert_eq!(rules(), "");
    for role in ["b-secrets", "a-configmaps"] {
        s.kubectl_ok(&[
            "label",
            "clusterrole",
            role,
            "rbac.example.com/aggregate-to-monitoring=true",
        ]);
    }
    // Both roles' rules, in role name order.
    let want = r#"[{"apiGroups":[""],"resources":["configmaps"],"verbs":["watch"]},{"apiGroups":[""],"resources":["secrets"],"verbs":["get","list"]}]"#;
    wait_until("aggregated rules", || rules() == want);
    // Recorded as upstream's controller applies them.
    let cr: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "clusterrole",
        "monitoring",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .expect("json");
    let entry = cr["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|e| e["manager"] == "clusterrole-aggregation-controller")
        .unwrap_or_else(|| panic!("no controller entry in {cr}"));
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["fieldsV1"], serde_json::json!({"f:rules": {}}));

    // A change of an aggregated role's rules is followed.
    s.kubectl_ok(&[
        "patch",
        "clusterrole",
        "a-configmaps",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/rules/0/verbs","value":["watch","get"]}]"#,
    ]);
    let want = r#"[{"apiGroups":[""],"resources":["configmaps"],"verbs":["watch","get"]},{"apiGroups":[""],"resources":["secrets"],"verbs":["get","list"]}]"#;
    wait_until("followed rule change", || rules() == want);
    // Direct changes of the aggregated rules are stomped.
    s.kubectl_ok(&[
        "patch",
        "clusterrole",
        "monitoring",
        "--type=merge",
        "-p",
        r#"{"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}"#,
    ]);
    wait_until("stomped direct change", || rules() == want);
    // Labels removed: the rules go.
    for role in ["b-secrets", "a-configmaps"] {
        s.kubectl_ok(&[
            "label",
            "clusterrole",
            role,
            "rbac.example.com/aggregate-to-monitoring-",
        ]);
    }
    wait_until("rules removed", || rules().is_empty());
}

#[test]
fn server_side_apply_of_a_role() {
    let s = Server::start();
    let role = |verbs: &str| {
        format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: applied\n  labels:\n    team: a\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [{verbs}]\n")
    };
    let (ok, out, err) =
        s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&role("get")));
    assert!(ok, "{out}{err}");
    assert_eq!(
        out.trim(),
        "role.rbac.authorization.k8s.io/applied serverside-applied"
    );
    let v: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "role",
        "applied",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .expect("json");
    let mf = &v["metadata"]["managedFields"];
    assert_eq!(mf.as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(mf[0]["manager"], "kubectl");
    assert_eq!(mf[0]["operation"], "Apply");
    // rules is an atomic list: owned as a whole.
    assert_eq!(
        mf[0]["fieldsV1"],
        serde_json::json!({"f:metadata": {"f:labels": {"f:team": {}}}, "f:rules": {}})
    );
    // Another manager's different rules conflict on the whole list.
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        Some(&role("list")),
    );
    assert!(!ok);
    assert!(
        err.contains("Apply failed with 1 conflict: conflict with \"kubectl\": .rules"),
        "{err}"
    );
    // The owner replaces the list.
    let (ok, out, err) = s.kubectl_stdin(
        &["apply", "--server-side", "-f", "-"],
        Some(&role("get, watch")),
    );
    assert!(ok, "{out}{err}");
    assert_eq!(
        s.kubectl_ok(&["get", "role", "applied", "-o", "jsonpath={.rules[0].verbs}"]),
        r#"["get","watch"]"#
    );
}

#[tokio::test]
async fn protobuf_get_of_a_cluster_role() {
    let s = Server::start();
    s.kubectl_ok(&["create", "clusterrole", "agg", "--aggregation-rule=x=y"]);
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "plain",
        "--verb=get",
        "--non-resource-url=/healthz",
    ]);
    for (name, has_rule) in [("agg", true), ("plain", false)] {
        let (code, h, body) = s
            .http(
                "GET",
                &format!("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"),
                &[("Accept", "application/vnd.kubernetes.protobuf")],
                None,
            )
            .await;
        assert_eq!(code, 200);
        assert_eq!(
            h.get("content-type").and_then(|v| v.to_str().ok()),
            Some("application/vnd.kubernetes.protobuf")
        );
        assert_eq!(&body[..4], b"k8s\0");
        let u = Unknown::decode(&body[4..]).expect("runtime.Unknown");
        let tm = u.type_meta.unwrap_or_default();
        assert_eq!(
            tm.api_version.as_deref(),
            Some("rbac.authorization.k8s.io/v1")
        );
        assert_eq!(tm.kind.as_deref(), Some("ClusterRole"));
        let cr = ClusterRole::decode(u.raw.unwrap_or_default().as_slice()).expect("ClusterRole");
        assert_eq!(cr.metadata.and_then(|m| m.name).as_deref(), Some(name));
        assert_eq!(cr.aggregation_rule.is_some(), has_rule);
        if has_rule {
            let sel = &cr
                .aggregation_rule
                .unwrap_or_default()
                .cluster_role_selectors;
            assert_eq!(sel.len(), 1);
            assert_eq!(sel[0].match_labels.get("x").map(String::as_str), Some("y"));
        } else {
            assert_eq!(cr.rules.len(), 1);
            assert_eq!(cr.rules[0].verbs, ["get"]);
            assert_eq!(cr.rules[0].non_resource_ur_ls, ["/healthz"]);
        }
    }
}

#[tokio::test]
async fn protobuf_create_of_a_role_binding_is_defaulted() {
    let s = Server::start();
    let rb = RoleBinding {
        metadata: Some(ObjectMeta {
            name: Some("pb".into()),
            ..Default::default()
        }),
        subjects: vec![
            Subject {
                kind: Some("User".into()),
                name: Some("alice".into()),
                ..Default::default()
            },
            Subject {
                kind: Some("ServiceAccount".into()),
                name: Some("sa".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
        ],
        role_ref: Some(RoleRef {
            api_group: Some(String::new()),
            kind: Some("ClusterRole".into()),
            name: Some("view".into()),
        }),
    };
    let (code, _, body) = s
        .http(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            &[
                ("Content-Type", "application/vnd.kubernetes.protobuf"),
                ("Accept", "application/json"),
            ],
            Some(pb_body("rbac.authorization.k8s.io/v1", "RoleBinding", &rb)),
        )
        .await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["roleRef"],
        serde_json::json!({"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"})
    );
    assert_eq!(
        v["subjects"],
        serde_json::json!([
            {"apiGroup": GROUP, "kind": "User", "name": "alice"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "default"},
        ])
    );
}
