//! Authorization (issue 17): RBAC enforced on every request, as kube-apiserver with
//! `--authorization-mode=RBAC`, for users from the static token file, client certificates,
//! ServiceAccount tokens, impersonation and anonymous requests; escalation prevention on RBAC
//! writes; the review APIs behind `kubectl auth can-i`; upstream's 403 wording throughout.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::PathBuf;

/// A server with `alice` (group `dev`) and `bob` in its static token file, and kubeconfigs
/// for both (bearer token only).
struct Users {
    s: Server,
    alice: PathBuf,
    bob: PathBuf,
    _tokens: tempfile::TempDir,
}

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789";

fn start() -> Users {
    let tokens = tempfile::tempdir().unwrap();
    let file = tokens.path().join("tokens.csv");
    std::fs::write(
        &file,
        format!("{ALICE},alice,uid-alice,\"dev\"\n{BOB},bob,uid-bob\n"),
    )
    .unwrap();
    let s = Server::start_with(&["--token-auth-file", file.to_str().unwrap()]);
    let alice = s.kubeconfig_for_token("alice", ALICE);
    let bob = s.kubeconfig_for_token("bob", BOB);
    Users {
        s,
        alice,
        bob,
        _tokens: tokens,
    }
}

impl Users {
    fn alice(&self, args: &[&str]) -> (bool, String, String) {
        self.s.kubectl_with(&self.alice, args)
    }
    fn bob(&self, args: &[&str]) -> (bool, String, String) {
        self.s.kubectl_with(&self.bob, args)
    }
}

async fn get_as(s: &Server, token: Option<&str>, path: &str) -> (u16, Value) {
    let (code, _, body) = s.http_as(token, "GET", path, &[], None).await;
    (
        code,
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned())),
    )
}

/// Anonymous requests reach /healthz, /livez, /readyz and /version only
/// (system:public-info-viewer); everything else is a 403 naming the path or resource.
#[tokio::test]
async fn anonymous_requests_see_health_and_version_only() {
    let s = Server::start();
    for p in [
        "/healthz",
        "/livez",
        "/readyz",
        "/version",
        "/readyz?verbose",
    ] {
        let (code, v) = get_as(&s, None, p).await;
        assert_eq!(code, 200, "{p}: {v}");
    }
    let (code, v) = get_as(&s, None, "/api").await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "forbidden: User \"system:anonymous\" cannot get path \"/api\"",
               "reason": "Forbidden", "details": {}, "code": 403})
    );
    let (code, v) = get_as(&s, None, "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(v["details"], json!({"kind": "configmaps"}));
    let (code, v) = get_as(&s, None, "/api/v1/namespaces/kube-system").await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "namespaces \"kube-system\" is forbidden: User \"system:anonymous\" cannot get resource \"namespaces\" in API group \"\" in the namespace \"kube-system\""
    );
    // The bootstrap policy is stored and readable by the admin.
    let out = s.kubectl_ok(&["get", "clusterrole", "cluster-admin", "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["rules"],
        json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
               {"nonResourceURLs": ["*"], "verbs": ["*"]}])
    );
    s.kubectl_ok(&["get", "clusterrolebinding", "system:public-info-viewer"]);
}

/// A RoleBinding grants a user a Role's rules in its namespace, at once; deleting it takes
/// them away. Every verb class is checked, as kubectl shows the 403s.
#[test]
fn role_bindings_grant_and_revoke() {
    let u = start();
    let s = &u.s;
    let (ok, _, err) = u.alice(&["get", "configmaps"]);
    assert!(!ok);
    assert!(
        err.contains("Error from server (Forbidden): configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""),
        "{err}"
    );
    s.kubectl_ok(&[
        "create",
        "role",
        "cm-reader",
        "--verb=get,list,watch",
        "--resource=configmaps",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "alice-cm",
        "--role=cm-reader",
        "--user=alice",
    ]);
    s.kubectl_ok(&["create", "configmap", "settings", "--from-literal=a=1"]);
    let out = u.alice(&["get", "configmaps", "-o", "name"]);
    assert!(out.0, "{}", out.2);
    assert!(out.1.contains("configmap/settings"), "{}", out.1);
    assert!(u.alice(&["get", "configmap", "settings"]).0);
    // Not in another namespace, not other verbs, not for bob.
    let (ok, _, err) = u.alice(&["get", "configmaps", "-n", "kube-system"]);
    assert!(!ok);
    assert!(err.contains("in the namespace \"kube-system\""), "{err}");
    let (ok, _, err) = u.alice(&["delete", "configmap", "settings"]);
    assert!(!ok);
    assert!(
        err.contains("configmaps \"settings\" is forbidden: User \"alice\" cannot delete resource \"configmaps\" in API group \"\" in the namespace \"default\""),
        "{err}"
    );
    let (ok, _, err) = u.alice(&["create", "configmap", "x"]);
    assert!(!ok);
    assert!(
        err.contains(
            "configmaps is forbidden: User \"alice\" cannot create resource \"configmaps\""
        ),
        "{err}"
    );
    let (ok, _, err) = u.alice(&[
        "patch",
        "configmap",
        "settings",
        "-p",
        "{\"data\":{\"b\":\"2\"}}",
    ]);
    assert!(!ok);
    assert!(
        err.contains("cannot patch resource \"configmaps\""),
        "{err}"
    );
    let (ok, _, err) = u.alice(&["delete", "configmaps", "--all"]);
    assert!(!ok);
    assert!(
        err.contains("cannot deletecollection resource \"configmaps\"")
            || err.contains("cannot delete"),
        "{err}"
    );
    assert!(!u.bob(&["get", "configmaps"]).0);
    // Group subjects count too.
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "dev-edit",
        "--clusterrole=edit",
        "--group=dev",
    ]);
    let out = u.alice(&["create", "configmap", "made-by-alice"]);
    assert!(out.0, "{}", out.2);
    // Revoked.
    s.kubectl_ok(&["delete", "rolebinding", "alice-cm", "dev-edit"]);
    let (ok, _, err) = u.alice(&["get", "configmaps"]);
    assert!(!ok, "still allowed after the bindings were deleted");
    assert!(err.contains("Forbidden"), "{err}");
}

const CRONTAB_WITH_STATUS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

/// Subresources are their own resources (`crontabs/status`); resourceNames confine a rule to
/// named objects; a CRD's aggregate-to-view ClusterRole joins the bootstrap `view` role.
#[test]
fn subresources_resource_names_and_aggregation() {
    let u = start();
    let s = &u.s;
    s.install_crd(CRONTAB_WITH_STATUS);
    s.apply_yaml(
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: nightly}\nspec: {cronSpec: '* * * * */5'}\n",
    );
    s.apply_yaml(
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: hourly}\nspec: {cronSpec: '0 * * * *'}\n",
    );
    s.apply_yaml(
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: status-writer}
rules:
- apiGroups: [stable.example.com]
  resources: [crontabs/status]
  verbs: [get, patch, update]
- apiGroups: [stable.example.com]
  resources: [crontabs]
  resourceNames: [nightly]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-status}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: status-writer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
"#,
    );
    let out = u.alice(&[
        "patch",
        "crontab",
        "nightly",
        "--subresource=status",
        "--type=merge",
        "-p",
        "{\"status\":{\"lastRun\":\"now\"}}",
    ]);
    assert!(out.0, "{}", out.2);
    let (ok, _, err) = u.alice(&[
        "patch",
        "crontab",
        "nightly",
        "--type=merge",
        "-p",
        "{\"spec\":{\"cronSpec\":\"x\"}}",
    ]);
    assert!(!ok);
    assert!(
        err.contains("crontabs.stable.example.com \"nightly\" is forbidden: User \"alice\" cannot patch resource \"crontabs\" in API group \"stable.example.com\" in the namespace \"default\""),
        "{err}"
    );
    // resourceNames: the named object only, and no list.
    assert!(u.alice(&["get", "crontab", "nightly"]).0);
    let (ok, _, err) = u.alice(&["get", "crontab", "hourly"]);
    assert!(!ok);
    assert!(
        err.contains("crontabs.stable.example.com \"hourly\" is forbidden"),
        "{err}"
    );
    let (ok, _, err) = u.alice(&["get", "crontabs"]);
    assert!(!ok);
    assert!(
        err.contains("crontabs.stable.example.com is forbidden: User \"alice\" cannot list resource \"crontabs\" in API group \"stable.example.com\" in the namespace \"default\""),
        "{err}"
    );
    // Aggregation: bob gets `view`, which gains the CRD's rules once a labelled ClusterRole
    // grants them.
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "bob-view",
        "--clusterrole=view",
        "--user=bob",
    ]);
    assert!(u.bob(&["get", "configmaps"]).0);
    assert!(!u.bob(&["get", "crontabs"]).0);
    s.apply_yaml(
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: crontab-viewer
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}
rules:
- apiGroups: [stable.example.com]
  resources: [crontabs]
  verbs: [get, list, watch]
"#,
    );
    wait_until("view aggregates the crontab rules", || {
        u.bob(&["get", "crontabs"]).0
    });
    let out = u.bob(&["get", "crontabs", "-o", "name"]);
    assert!(
        out.1.contains("crontab.stable.example.com/hourly"),
        "{}",
        out.1
    );
    // bob can view, not edit.
    let (ok, _, err) = u.bob(&["delete", "crontab", "hourly"]);
    assert!(!ok);
    assert!(err.contains("cannot delete resource \"crontabs\""), "{err}");
}

/// A user may only grant what it holds: creating a Role with rules it lacks, or binding a
/// role whose rules it lacks, is refused with upstream's message, unless it may `escalate`
/// or `bind`.
#[test]
fn escalation_is_prevented() {
    let u = start();
    let s = &u.s;
    s.apply_yaml(
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-manager}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create, get, list, update, patch, delete]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-rbac}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rbac-manager}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
"#,
    );
    // Rules alice holds: fine.
    let out = u.alice(&[
        "create",
        "role",
        "cm-reader",
        "--verb=get,list",
        "--resource=configmaps",
    ]);
    assert!(out.0, "{}", out.2);
    // Rules she lacks: refused.
    let (ok, _, err) = u.alice(&[
        "create",
        "role",
        "secret-deleter",
        "--verb=delete",
        "--resource=secrets",
    ]);
    assert!(!ok);
    assert!(
        err.contains("roles.rbac.authorization.k8s.io \"secret-deleter\" is forbidden: user \"alice\" (groups=[\"dev\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"delete\"]}"),
        "{err}"
    );
    // Binding a role she holds the rules of: fine; binding cluster-admin: refused.
    let out = u.alice(&[
        "create",
        "rolebinding",
        "bob-cm",
        "--role=cm-reader",
        "--user=bob",
    ]);
    assert!(out.0, "{}", out.2);
    assert!(u.bob(&["get", "configmaps"]).0);
    let (ok, _, err) = u.alice(&[
        "create",
        "rolebinding",
        "bob-admin",
        "--clusterrole=cluster-admin",
        "--user=bob",
    ]);
    assert!(!ok);
    assert!(
        err.contains("rolebindings.rbac.authorization.k8s.io \"bob-admin\" is forbidden: user \"alice\" (groups=[\"dev\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:"),
        "{err}"
    );
    // With `bind` on cluster-admin she may.
    s.apply_yaml(
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bind-admin}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  resourceNames: [cluster-admin]
  verbs: [bind]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-bind}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: bind-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
"#,
    );
    let out = u.alice(&[
        "create",
        "rolebinding",
        "bob-admin",
        "--clusterrole=cluster-admin",
        "--user=bob",
    ]);
    assert!(out.0, "{}", out.2);
    assert!(u.bob(&["delete", "configmap", "--all"]).0);
}

/// Impersonation (`kubectl --as`) needs the `impersonate` verb; the request then runs as the
/// impersonated user.
#[test]
fn impersonation() {
    let u = start();
    let s = &u.s;
    // The admin may impersonate anyone; alice has no access.
    let (ok, _, err) = s.kubectl(&["get", "configmaps", "--as", "alice"]);
    assert!(!ok);
    assert!(
        err.contains("configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\""),
        "{err}"
    );
    let (ok, _, err) = s.kubectl(&[
        "get",
        "configmaps",
        "--as",
        "alice",
        "--as-group",
        "system:masters",
    ]);
    assert!(ok, "{err}");
    // bob may not impersonate.
    let (ok, _, err) = u.bob(&["get", "configmaps", "--as", "alice"]);
    assert!(!ok);
    assert!(
        err.contains("users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
        "{err}"
    );
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "impersonate-alice",
        "--verb=impersonate",
        "--resource=users",
        "--resource-name=alice",
    ]);
    s.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "bob-impersonates",
        "--clusterrole=impersonate-alice",
        "--user=bob",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "alice-view",
        "--clusterrole=view",
        "--user=alice",
    ]);
    let out = u.bob(&["get", "configmaps", "--as", "alice"]);
    assert!(out.0, "{}", out.2);
    let out = u.bob(&["auth", "whoami", "--as", "alice", "-o", "json"]);
    assert!(out.0, "{}", out.2);
    let v: Value = serde_json::from_str(&out.1).unwrap();
    assert_eq!(v["status"]["userInfo"]["username"], "alice");
    // A group bob may not impersonate.
    let (ok, _, err) = u.bob(&["get", "configmaps", "--as", "alice", "--as-group", "admins"]);
    assert!(!ok);
    assert!(
        err.contains(
            "groups \"admins\" is forbidden: User \"bob\" cannot impersonate resource \"groups\""
        ),
        "{err}"
    );
}

/// `kubectl auth can-i` (SelfSubjectAccessReview, SelfSubjectRulesReview) and
/// SubjectAccessReview answer as the authorizer decides.
#[tokio::test]
async fn access_reviews() {
    let u = start();
    let s = &u.s;
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "alice-view",
        "--clusterrole=view",
        "--user=alice",
    ]);
    let (ok, out, _) = u.alice(&["auth", "can-i", "list", "configmaps"]);
    assert!(ok);
    assert_eq!(out.trim(), "yes");
    let (ok, out, _) = u.alice(&["auth", "can-i", "delete", "configmaps"]);
    assert!(!ok);
    assert_eq!(out.trim(), "no");
    let (ok, out, _) = u.alice(&["auth", "can-i", "list", "configmaps", "-n", "kube-system"]);
    assert!(!ok);
    assert_eq!(out.trim(), "no");
    let (ok, out, _) = s.kubectl(&["auth", "can-i", "delete", "nodes"]);
    assert!(ok);
    assert_eq!(out.trim(), "yes");
    let (ok, out, err) = u.alice(&["auth", "can-i", "--list"]);
    assert!(ok, "{err}");
    assert!(out.contains("configmaps"), "{out}");
    assert!(
        out.contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "{out}"
    );
    // SubjectAccessReview (the admin asks about alice).
    let sar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "configmaps"}}});
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            "application/json",
            Some(&sar),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["status"]["allowed"], true, "{v}");
    assert_eq!(
        v["status"]["reason"],
        "RBAC: allowed by RoleBinding \"alice-view/default\" of ClusterRole \"view\" to User \"alice\""
    );
    let bad =
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {}});
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            "application/json",
            Some(&bad),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "SubjectAccessReview.authorization.k8s.io \"\" is invalid: [spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: \"\": at least one of user or group must be specified]"
    );
    // alice may not ask about others.
    let (code, _, body) = s
        .http_as(
            Some(ALICE),
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(&sar).unwrap()),
        )
        .await;
    assert_eq!(code, 403, "{}", String::from_utf8_lossy(&body));
}

/// A ServiceAccount's token is authorized as the account (and its groups).
#[test]
fn service_account_tokens_are_authorized() {
    let s = Server::start();
    s.kubectl_ok(&["create", "serviceaccount", "robot"]);
    let token = s
        .kubectl_ok(&["create", "token", "robot"])
        .trim()
        .to_string();
    let kc = s.kubeconfig_for_token("robot", &token);
    let (ok, _, err) = s.kubectl_with(&kc, &["get", "configmaps"]);
    assert!(!ok);
    assert!(
        err.contains(
            "User \"system:serviceaccount:default:robot\" cannot list resource \"configmaps\""
        ),
        "{err}"
    );
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "robot-view",
        "--clusterrole=view",
        "--serviceaccount=default:robot",
    ]);
    let out = s.kubectl_with(&kc, &["get", "configmaps"]);
    assert!(out.0, "{}", out.2);
    // Every ServiceAccount of the namespace, through its group.
    s.kubectl_ok(&["create", "serviceaccount", "other"]);
    let other = s
        .kubectl_ok(&["create", "token", "other"])
        .trim()
        .to_string();
    let kc2 = s.kubeconfig_for_token("other", &other);
    assert!(!s.kubectl_with(&kc2, &["get", "secrets"]).0);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "all-sa-edit",
        "--clusterrole=edit",
        "--group=system:serviceaccounts:default",
    ]);
    let out = s.kubectl_with(&kc2, &["get", "secrets"]);
    assert!(out.0, "{}", out.2);
    // A bogus token is a 401, not a 403.
    let bad = s.kubeconfig_for_token("bad", "not-a-token");
    let (ok, _, err) = s.kubectl_with(&bad, &["get", "configmaps"]);
    assert!(!ok);
    assert!(err.contains("Unauthorized"), "{err}");
}

/// A client certificate's user (CN) and groups (O) are authorized as such; a watch needs the
/// `watch` verb; an expired ServiceAccount token is a 401 even where its account has access.
#[tokio::test]
async fn certificate_users_watches_and_expired_tokens() {
    use base64::Engine;
    let s = Server::start();
    let b64 = base64::engine::general_purpose::STANDARD;
    let der = |pem: &str| -> Vec<u8> {
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        b64.decode(body).expect("base64")
    };
    let ca_der = der(&std::fs::read_to_string(s.dir.join("pki/ca.crt")).unwrap());
    let ca_key = crest_auth::keys::SigningKey::from_pem(
        &std::fs::read_to_string(s.dir.join("pki/ca.key")).unwrap(),
    )
    .expect("CA key");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let carol = crest_auth::x509::issue_client_cert(
        &ca_der,
        &ca_key,
        "carol",
        &["devs"],
        now - 60,
        now + 86_400,
    )
    .expect("issue");
    let config: String = std::fs::read_to_string(&s.kubeconfig)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("token:"))
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("client-certificate-data:") {
                format!(
                    "    client-certificate-data: {}\n",
                    b64.encode(&carol.cert_pem)
                )
            } else if t.starts_with("client-key-data:") {
                format!("    client-key-data: {}\n", b64.encode(&carol.key_pem))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let carol_config = s.dir.join("carol.kubeconfig");
    std::fs::write(&carol_config, config).unwrap();
    let (ok, _, err) = s.kubectl_with(&carol_config, &["get", "secrets"]);
    assert!(!ok);
    assert!(
        err.contains("secrets is forbidden: User \"carol\" cannot list resource \"secrets\""),
        "{err}"
    );
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "devs-list",
        "--clusterrole=edit",
        "--group=devs",
    ]);
    let out = s.kubectl_with(&carol_config, &["get", "secrets"]);
    assert!(out.0, "{}", out.2);

    // list without watch: a watch is refused, as kube-apiserver words it.
    s.kubectl_ok(&["create", "serviceaccount", "lister"]);
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "cm-list",
        "--verb=list",
        "--resource=configmaps",
    ]);
    s.kubectl_ok(&[
        "create",
        "rolebinding",
        "lister-cm",
        "--clusterrole=cm-list",
        "--serviceaccount=default:lister",
    ]);
    let token = s
        .kubectl_ok(&["create", "token", "lister"])
        .trim()
        .to_string();
    let path = "/api/v1/namespaces/default/configmaps";
    let (code, _, _) = s.http_as(Some(&token), "GET", path, &[], None).await;
    assert_eq!(code, 200);
    let (code, _, body) = s
        .http_as(
            Some(&token),
            "GET",
            &format!("{path}?watch=true"),
            &[],
            None,
        )
        .await;
    assert_eq!(code, 403);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v["message"],
        "configmaps is forbidden: User \"system:serviceaccount:default:lister\" cannot watch resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );

    // A token signed with the server's key for the same account: valid now, 401 once expired.
    let sa: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "sa", "lister", "-o", "json"])).unwrap();
    let key = crest_auth::keys::SigningKey::from_pem(
        &std::fs::read_to_string(s.dir.join("pki/sa.key")).unwrap(),
    )
    .expect("sa key");
    let claims = crest_auth::serviceaccount::TokenClaims {
        issuer: "https://kubernetes.default.svc.cluster.local".into(),
        namespace: "default".into(),
        service_account: crest_auth::serviceaccount::ObjectRef {
            name: "lister".into(),
            uid: sa["metadata"]["uid"].as_str().unwrap().into(),
        },
        audiences: vec!["https://kubernetes.default.svc.cluster.local".into()],
        expiration_seconds: 3600,
        warn_after_seconds: 0,
        bound: None,
        jti: crest_auth::serviceaccount::new_jti(),
    };
    let fresh = crest_auth::serviceaccount::issue(&claims, now, &key).unwrap();
    let (code, _, body) = s.http_as(Some(&fresh), "GET", path, &[], None).await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    let expired = crest_auth::serviceaccount::issue(&claims, now - 7200, &key).unwrap();
    let (code, _, body) = s.http_as(Some(&expired), "GET", path, &[], None).await;
    assert_eq!(code, 401, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["reason"], "Unauthorized");
}
