//! Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`): what kubectl's
//! typed clientset sends for built-in kinds (`kubectl create namespace`), decoded into the same
//! pipeline as JSON; malformed bodies and custom resources answered as kube-apiserver does.

mod common;
use common::*;
use k8s_pb::api::core::v1::Namespace;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{DeleteOptions, ObjectMeta, Preconditions};
use serde_json::{json, Value};

const PB: &str = "application/vnd.kubernetes.protobuf";

fn namespace(name: &str) -> Namespace {
    Namespace {
        metadata: Some(ObjectMeta {
            name: Some(name.into()),
            labels: [("team".to_string(), "a".to_string())].into(),
            annotations: [("note".to_string(), "hello world".to_string())].into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

async fn send(s: &Server, method: &str, path: &str, body: Vec<u8>) -> (u16, String, Value) {
    let (code, headers, bytes) = s
        .http(
            method,
            path,
            // JSON answers, to read them here; protobuf answers are tests/protobuf_responses.rs'.
            &[("Content-Type", PB), ("Accept", "application/json")],
            Some(body),
        )
        .await;
    let ctype = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (code, ctype, v)
}

#[test]
fn kubectl_create_label_delete_namespace() {
    let s = Server::start();
    // kubectl's typed clientset POSTs the Namespace as protobuf.
    let out = s.kubectl_ok(&["create", "namespace", "pb1"]);
    assert_eq!(out.trim(), "namespace/pb1 created");
    let out = s.kubectl_ok(&["create", "namespace", "pb2", "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"]["phase"], "Active");
    assert_eq!(v["spec"]["finalizers"], json!(["kubernetes"]));

    // Server-side dry run: answered, nothing stored.
    let out = s.kubectl_ok(&[
        "create",
        "namespace",
        "pbdry",
        "--dry-run=server",
        "-o",
        "jsonpath={.metadata.name}",
    ]);
    assert_eq!(out, "pbdry");
    let (ok, _, err) = s.kubectl(&["get", "namespace", "pbdry"]);
    assert!(!ok && err.contains("not found"), "{err}");

    // An existing name: kube's AlreadyExists, not a decoding error.
    let (ok, _, err) = s.kubectl(&["create", "namespace", "pb1"]);
    assert!(!ok && err.contains("AlreadyExists"), "{err}");

    assert_eq!(
        s.kubectl_ok(&["label", "namespace", "pb1", "tier=be"])
            .trim(),
        "namespace/pb1 labeled"
    );
    let label = s.kubectl_ok(&[
        "get",
        "namespace",
        "pb1",
        "-o",
        "jsonpath={.metadata.labels.tier}",
    ]);
    assert_eq!(label, "be");

    let out = s.kubectl_ok(&["delete", "namespace", "pb2", "--wait=false"]);
    assert_eq!(out.trim(), "namespace \"pb2\" deleted");
    // Waits until the namespace controller has finished.
    let out = s.kubectl_ok(&["delete", "namespace", "pb1"]);
    assert_eq!(out.trim(), "namespace \"pb1\" deleted");
    let (ok, _, err) = s.kubectl(&["get", "namespace", "pb1"]);
    assert!(!ok && err.contains("not found"), "{err}");
    s.stop();
}

#[tokio::test]
async fn raw_protobuf_namespace_round_trips_labels_and_annotations() {
    let s = Server::start();
    let body = pb_body("v1", "Namespace", &namespace("pbraw"));
    let (code, ctype, v) = send(&s, "POST", "/api/v1/namespaces", body).await;
    assert_eq!(code, 201, "{v}");
    assert!(ctype.starts_with("application/json"), "{ctype}");
    assert_eq!(v["metadata"]["labels"]["team"], "a");
    assert_eq!(v["metadata"]["annotations"]["note"], "hello world");
    let (code, got) = s
        .http_json("GET", "/api/v1/namespaces/pbraw", "application/json", None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(got["metadata"]["labels"]["team"], "a");
    assert_eq!(got["metadata"]["annotations"]["note"], "hello world");

    // Update (PUT) as protobuf, with the resourceVersion read back.
    let mut ns = namespace("pbraw");
    let meta = ns.metadata.as_mut().unwrap();
    meta.resource_version = got["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_string);
    meta.labels.insert("team".into(), "b".into());
    let body = pb_body("v1", "Namespace", &ns);
    let (code, _, v) = send(&s, "PUT", "/api/v1/namespaces/pbraw", body).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"]["team"], "b");

    // DeleteOptions as protobuf: a wrong uid precondition is a conflict; dry run keeps it.
    let opts = |uid: Option<&str>, dry: bool| {
        let o = DeleteOptions {
            preconditions: uid.map(|u| Preconditions {
                uid: Some(u.into()),
                resource_version: None,
            }),
            dry_run: if dry { vec!["All".into()] } else { vec![] },
            ..Default::default()
        };
        pb_body("meta.k8s.io/v1", "DeleteOptions", &o)
    };
    let (code, _, v) = send(
        &s,
        "DELETE",
        "/api/v1/namespaces/pbraw",
        opts(Some("nope"), false),
    )
    .await;
    assert_eq!(code, 409, "{v}");
    let (code, _, v) = send(&s, "DELETE", "/api/v1/namespaces/pbraw", opts(None, true)).await;
    assert_eq!(code, 200, "{v}");
    let (code, got) = s
        .http_json("GET", "/api/v1/namespaces/pbraw", "application/json", None)
        .await;
    assert_eq!(code, 200);
    assert!(got["metadata"]["deletionTimestamp"].is_null(), "{got}");
    let uid = got["metadata"]["uid"].as_str().unwrap().to_string();
    let (code, _, v) = send(
        &s,
        "DELETE",
        "/api/v1/namespaces/pbraw",
        opts(Some(&uid), false),
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    s.stop();
}

#[tokio::test]
async fn malformed_protobuf_is_a_bad_request() {
    let s = Server::start();
    let mut body = pb_body("v1", "Namespace", &namespace("cut"));
    body.truncate(body.len() - 3);
    let (code, _, v) = send(&s, "POST", "/api/v1/namespaces", body).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["kind"], "Status");
    assert_eq!(v["reason"], "BadRequest");
    let msg = v["message"].as_str().unwrap();
    assert!(
        msg.starts_with("the object provided is unrecognized (must be of type Namespace): unexpected EOF (6b387300"),
        "{msg}"
    );
    // Not protobuf at all, though labelled so.
    let (code, _, v) = send(&s, "POST", "/api/v1/namespaces", b"{}".to_vec()).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "the object provided is unrecognized (must be of type Namespace): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({})"
    );
    let (code, _, v) = send(
        &s,
        "DELETE",
        "/api/v1/namespaces/default",
        b"k8s\0\x0a".to_vec(),
    )
    .await;
    assert_eq!(
        (code, v["message"].as_str()),
        (400, Some("unexpected EOF")),
        "{v}"
    );
    s.stop();
}

#[tokio::test]
async fn protobuf_for_a_custom_resource_is_unsupported() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let body = pb_body("stable.example.com/v1", "CronTab", &namespace("x"));
    let (code, _, v) = send(
        &s,
        "POST",
        "/apis/stable.example.com/v1/namespaces/default/crontabs",
        body,
    )
    .await;
    assert_eq!(code, 415, "{v}");
    assert_eq!(v["reason"], "UnsupportedMediaType");
    assert_eq!(
        v["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
    // DeleteOptions are meta.k8s.io's, so protobuf is fine for them on any resource.
    s.apply_yaml(MY_CRONTAB);
    let o = DeleteOptions {
        propagation_policy: Some("Background".into()),
        ..Default::default()
    };
    let body = pb_body("meta.k8s.io/v1", "DeleteOptions", &o);
    let path = "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object";
    let (code, _, v) = send(&s, "DELETE", path, body).await;
    assert_eq!(code, 200, "{v}");
    s.stop();
}
