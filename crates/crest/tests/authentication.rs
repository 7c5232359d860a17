//! Authentication (issue 17, first part): every request is authenticated — the admin's token
//! from the kubeconfig, `--token-auth-file` users, anonymous without credentials — and a bad
//! credential is a 401 with kube-apiserver's Status. `kubectl auth whoami` (SelfSubjectReview)
//! says who a request is. Authorization is not enforced yet.

mod common;
use common::*;
use serde_json::{json, Value};

const REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

fn admin_token(s: &Server) -> String {
    std::fs::read_to_string(s.dir.join("pki/admin.token"))
        .expect("admin token")
        .trim()
        .to_string()
}

async fn whoami(s: &Server, token: Option<&str>) -> (u16, Value) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let (code, _, bytes) = s
        .http(
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
    let (code, v) = whoami(&s, None).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["status"]["userInfo"],
        json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
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
    let (code, _, _) = s.http("GET", "/api/v1/namespaces", &[], None).await;
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

/// Over TLS kubectl sends the kubeconfig's credentials: `kubectl auth whoami` is the admin.
#[test]
fn kubectl_auth_whoami_over_tls() {
    let s = Server::start_with(&["--tls"]);
    let out = s.kubectl_ok(&["auth", "whoami", "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kind"], "SelfSubjectReview");
    assert_eq!(v["status"]["userInfo"]["username"], "crest-admin");
    assert_eq!(
        v["status"]["userInfo"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    s.stop();
}
