//! Issue 28 item 15: paths are split as upstream's RequestInfo splits them (the decoded
//! `req.URL.Path`, so an escaped `/` separates segments), for authorization and routing alike;
//! the impersonation error quotes the request URI as Go's `RequestURI` (path and query).

mod common;
use common::*;
use serde_json::{json, Value};

const ALICE: &str = "alice-token-0123456789";

async fn as_json(body: &[u8]) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

#[tokio::test]
async fn an_escaped_slash_splits_the_path_for_authorization_and_routing() {
    let tokens = tempfile::tempdir().unwrap();
    let file = tokens.path().join("tokens.csv");
    std::fs::write(&file, format!("{ALICE},alice,uid-alice\n")).unwrap();
    let s = Server::start_with(&["--token-auth-file", file.to_str().unwrap()]);
    for ns in ["team-a", "team-b"] {
        s.kubectl_ok(&["create", "namespace", ns]);
        s.kubectl_ok(&["-n", ns, "create", "configmap", "x", "--from-literal=k=v"]);
    }
    // alice may read the configmaps of team-a only.
    s.kubectl_ok(&[
        "-n",
        "team-a",
        "create",
        "role",
        "read-cm",
        "--verb=get,list",
        "--resource=configmaps",
    ]);
    s.kubectl_ok(&[
        "-n",
        "team-a",
        "create",
        "rolebinding",
        "alice-read-cm",
        "--role=read-cm",
        "--user=alice",
    ]);
    let (code, _, body) = s
        .http_as(
            Some(ALICE),
            "GET",
            "/api/v1/namespaces/team-a/configmaps/x",
            &[],
            None,
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));

    // The decoded path has the segments `configmaps/../../team-b/configmaps/x`: name `..` and
    // subresource `..`, which alice's role does not grant.
    let sneaky = "/api/v1/namespaces/team-a/configmaps/..%2F..%2Fteam-b%2Fconfigmaps%2Fx";
    let (code, _, body) = s.http_as(Some(ALICE), "GET", sneaky, &[], None).await;
    let status = as_json(&body).await;
    assert_eq!(code, 403, "{status}");
    assert_eq!(
        status["message"],
        "configmaps \"..\" is forbidden: User \"alice\" cannot get resource \"configmaps/..\" in API group \"\" in the namespace \"team-a\""
    );
    assert_eq!(status["details"]["name"], "..");
    // The admin may do anything, and the path names no route.
    let (code, _, body) = s.http("GET", sneaky, &[], None).await;
    assert_eq!(code, 404, "{}", String::from_utf8_lossy(&body));
    // Escaped slashes are segments for the router too: this is team-b's configmap x, which
    // alice may not read.
    let escaped = "/api/v1/namespaces/team-b%2Fconfigmaps%2Fx";
    let (code, _, body) = s.http("GET", escaped, &[], None).await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(as_json(&body).await["metadata"]["namespace"], "team-b");
    let (code, _, body) = s.http_as(Some(ALICE), "GET", escaped, &[], None).await;
    let status = as_json(&body).await;
    assert_eq!(code, 403, "{status}");
    assert_eq!(
        status["message"],
        "configmaps \"x\" is forbidden: User \"alice\" cannot get resource \"configmaps\" in API group \"\" in the namespace \"team-b\""
    );
    // Other escapes decode as before.
    let (code, _, body) = s
        .http("GET", "/api/v1/namespaces/team-a/configmaps/%78", &[], None)
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(as_json(&body).await["metadata"]["name"], json!("x"));
}

#[tokio::test]
async fn the_impersonation_error_quotes_the_request_uri_over_http2() {
    let s = Server::start();
    let client = s
        .reqwest_builder()
        .http2_prior_knowledge()
        .build()
        .expect("client");
    let resp = client
        .get(format!("{}/api/v1/namespaces?limit=1", s.base))
        .bearer_auth(s.admin_token())
        .header("Impersonate-Group", "system:masters")
        .send()
        .await
        .expect("request");
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
    assert_eq!(resp.status().as_u16(), 500);
    let body = resp.text().await.unwrap();
    assert_eq!(
        body,
        "Internal Server Error: \"/api/v1/namespaces?limit=1\": requested [{Group  system:masters    }] without impersonating a user\n"
    );
}
