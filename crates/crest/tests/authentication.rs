//! Authentication (issue 17, first part): every request is authenticated — the admin's token
//! from the kubeconfig, `--token-auth-file` users, anonymous without credentials — and a bad
//! credential is a 401 with kube-apiserver's Status. `kubectl auth whoami` (SelfSubjectReview)
//! says who a request is (anonymous requests may not ask: tests/rbac.rs has authorization).

mod common;
use common::*;
use serde_json::{json, Value};

const REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

fn admin_token(s: &Server) -> String {
    s.admin_token()
}

async fn whoami(s: &Server, token: Option<&str>) -> (u16, Value) {
    let headers = [("Content-Type", "application/json")];
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let (code, _, bytes) = s
        .http_as(
            token,
            "POST",
            REVIEWS,
            &headers,
            Some(serde_json::to_vec(&body).unwrap()),
        )
        .await;
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn tokens_anonymous_and_unauthorized() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.csv"),
        "alice-token,alice,uid-1,\"dev,ops\"\n",
    )
    .unwrap();
    let file = dir.path().join("tokens.csv");
    let data = dir.path().join("data");
    let s = Server::start_in_with(&data, &["--token-auth-file", file.to_str().unwrap()]);

    // The pki dir's credentials are owner-only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in ["pki/admin.token", "pki/sa.key", "kubeconfig"] {
            let mode = std::fs::metadata(s.dir.join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{f}");
        }
    }
    let kubeconfig = std::fs::read_to_string(&s.kubeconfig).unwrap();
    assert!(kubeconfig.contains(&format!("token: {}", admin_token(&s))));

    let (code, v) = whoami(&s, Some(&admin_token(&s))).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["status"]["userInfo"],
        json!({"username": "crest-admin", "groups": ["system:masters", "system:authenticated"]})
    );
    let (code, v) = whoami(&s, Some("alice-token")).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["status"]["userInfo"],
        json!({"username": "alice", "uid": "uid-1", "groups": ["dev", "ops", "system:authenticated"]})
    );
    // Anonymous requests authenticate (as system:anonymous) but may not ask who they are:
    // system:basic-user is bound to system:authenticated only.
    let (code, v) = whoami(&s, None).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"system:anonymous\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope"
    );
    // A credential that does not authenticate is a 401, anonymous access or not.
    let (code, v) = whoami(&s, Some("wrong")).await;
    assert_eq!(code, 401, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );
    let (code, _, _) = s
        .http(
            "GET",
            "/api/v1/namespaces",
            &[("Authorization", "Bearer wrong")],
            None,
        )
        .await;
    assert_eq!(code, 401);
    // The admin token survives a restart (the kubeconfig stays valid).
    let token = admin_token(&s);
    s.stop();
    let s = Server::start_in(&data);
    assert_eq!(admin_token(&s), token);
    let (code, v) = whoami(&s, Some(&token)).await;
    assert_eq!(
        (code, &v["status"]["userInfo"]["username"]),
        (201, &json!("crest-admin"))
    );
    s.stop();
}

#[tokio::test]
async fn anonymous_auth_can_be_turned_off() {
    let s = Server::start_with(&["--anonymous-auth=false"]);
    let (code, _, _) = s
        .http_as(None, "GET", "/api/v1/namespaces", &[], None)
        .await;
    assert_eq!(code, 401);
    let token = admin_token(&s);
    let auth = format!("Bearer {token}");
    let (code, _, _) = s
        .http(
            "GET",
            "/api/v1/namespaces",
            &[("Authorization", &auth)],
            None,
        )
        .await;
    assert_eq!(code, 200);
    s.stop();
}

fn kubectl_whoami(kubeconfig: &std::path::Path) -> Value {
    let out = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["auth", "whoami", "-o", "json"])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Over HTTPS (the default) kubectl sends the kubeconfig's credentials: `kubectl auth whoami` is the admin, by
/// its client certificate alone too; a certificate the CA issued for another user (CN = user,
/// O = groups) authenticates as that user.
#[test]
fn kubectl_auth_whoami_over_https() {
    let s = Server::start();
    let v = kubectl_whoami(&s.kubeconfig);
    assert_eq!(v["kind"], "SelfSubjectReview");
    assert_eq!(v["status"]["userInfo"]["username"], "crest-admin");
    assert_eq!(
        v["status"]["userInfo"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    // The client certificate alone.
    let text = std::fs::read_to_string(&s.kubeconfig).unwrap();
    let cert_only: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("token:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let path = s.dir.join("cert-only.kubeconfig");
    std::fs::write(&path, &cert_only).unwrap();
    let v = kubectl_whoami(&path);
    assert_eq!(v["status"]["userInfo"]["username"], "crest-admin", "{v}");
    // Another user's certificate from the same CA.
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let ca_pem = std::fs::read_to_string(s.dir.join("pki/ca.crt")).unwrap();
    let ca_der = rustls_pem_der(&ca_pem);
    let ca_key = crest_auth::keys::SigningKey::from_pem(
        &std::fs::read_to_string(s.dir.join("pki/ca.key")).unwrap(),
    )
    .expect("CA key");
    let now = 1_700_000_000;
    let alice = crest_auth::x509::issue_client_cert(
        &ca_der,
        &ca_key,
        "alice",
        &["dev"],
        now,
        now + 100 * 365 * 86_400,
    )
    .expect("issue");
    let alice_config: String = cert_only
        .lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("client-certificate-data:") {
                format!(
                    "    client-certificate-data: {}\n",
                    b64.encode(&alice.cert_pem)
                )
            } else if t.starts_with("client-key-data:") {
                format!("    client-key-data: {}\n", b64.encode(&alice.key_pem))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let path = s.dir.join("alice.kubeconfig");
    std::fs::write(&path, alice_config).unwrap();
    let v = kubectl_whoami(&path);
    assert_eq!(
        v["status"]["userInfo"],
        json!({"username": "alice", "groups": ["dev", "system:authenticated"],
               "extra": v["status"]["userInfo"]["extra"].clone()}),
        "{v}"
    );
    s.stop();
}

/// The DER of the first PEM block.
fn rustls_pem_der(pem: &str) -> Vec<u8> {
    use base64::Engine;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("base64")
}

/// `kubectl create token` (TokenRequest through serviceaccounts/token, protobuf both ways):
/// the token authenticates as the ServiceAccount until the account is deleted.
#[test]
fn service_account_tokens() {
    let s = Server::start();
    s.kubectl_ok(&["create", "serviceaccount", "builder"]);
    let token = s
        .kubectl_ok(&["create", "token", "builder"])
        .trim()
        .to_string();
    let whoami = |token: &str| -> (bool, Value) {
        let out = s
            .curl(&[
                "-s",
                "-w",
                "\n%{http_code}",
                "-X",
                "POST",
                "-H",
                &format!("Authorization: Bearer {token}"),
                "-H",
                "Content-Type: application/json",
                "-d",
                "{}",
                &format!("{}{REVIEWS}", s.base),
            ])
            .expect("curl");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let (body, code) = text.rsplit_once('\n').unwrap_or((&text, ""));
        (
            code == "201",
            serde_json::from_str(body).unwrap_or(Value::Null),
        )
    };
    let (ok, v) = whoami(&token);
    assert!(ok, "{v}");
    let user = &v["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:builder");
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    // TokenReview says the same about the token, and refuses a bogus one.
    let review = |token: &str| -> Value {
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                          "spec": {"token": token}})
        .to_string();
        let out = s
            .curl(&[
                "-s",
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                &body,
                &format!("{}/apis/authentication.k8s.io/v1/tokenreviews", s.base),
            ])
            .expect("curl");
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let r = review(&token);
    assert_eq!(r["kind"], "TokenReview", "{r}");
    assert_eq!(r["status"]["authenticated"], true, "{r}");
    assert_eq!(
        r["status"]["user"]["username"],
        "system:serviceaccount:default:builder"
    );
    let r = review("bogus");
    assert_ne!(r["status"]["authenticated"], true, "{r}");
    assert!(
        r["status"]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{r}"
    );
    // Too short a duration, and a missing account, as kube-apiserver answers them.
    let (ok, _, err) = s.kubectl(&["create", "token", "builder", "--duration=5m"]);
    assert!(!ok);
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );
    let (ok, _, err) = s.kubectl(&["create", "token", "nobody"]);
    assert!(!ok);
    assert!(
        err.contains(r#"serviceaccounts "nobody" not found"#),
        "{err}"
    );
    // Deleting the account revokes its tokens (after the authentication cache's 10 s).
    s.kubectl_ok(&["delete", "serviceaccount", "builder"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (ok, _) = whoami(&token);
        if !ok {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the token still works 20 s after its account was deleted"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    s.stop();
}

/// The harness's helpers for other users: a kubeconfig with only a user's token (kubectl over
/// HTTPS sends it), raw requests with a token or none.
#[tokio::test]
async fn helpers_for_other_users() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.csv");
    std::fs::write(&file, "alice-token,alice,uid-1,\"dev\"\n").unwrap();
    let s = Server::start_in_with(
        &dir.path().join("data"),
        &["--token-auth-file", file.to_str().unwrap()],
    );
    let config = s.kubeconfig_for_token("alice", "alice-token");
    let (ok, out, err) = s.kubectl_with(&config, &["auth", "whoami", "-o", "json"]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"]["userInfo"]["username"], "alice", "{v}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(!text.contains("client-certificate"), "{text}");
    let (code, v) = whoami(&s, Some("alice-token")).await;
    assert_eq!(
        (code, &v["status"]["userInfo"]["username"]),
        (201, &json!("alice"))
    );
    let (code, _, body) = s.http_as(None, "GET", "/version", &[], None).await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    let (code, _, _) = s
        .http_as(Some("wrong"), "GET", "/api/v1/namespaces", &[], None)
        .await;
    assert_eq!(code, 401);
    assert!(s.ca_path().exists());
    assert_eq!(s.admin_token().len(), admin_token(&s).len());
    s.stop();
}
