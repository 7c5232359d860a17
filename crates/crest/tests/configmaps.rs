//! core/v1 ConfigMaps, the first built-in kind beyond namespaces and CRDs: kubectl's typed
//! client (protobuf bodies), the built-in printer, upstream's validation and immutability,
//! typed decoding, and garbage collection with a custom resource as owner.

mod common;
use common::*;
use serde_json::{json, Value};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

#[tokio::test]
async fn kubectl_creates_lists_and_reads_configmaps() {
    let s = Server::start();
    // kubectl's typed client sends the ConfigMap as protobuf.
    s.kubectl_ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=a=1",
        "--from-literal=b=two",
    ]);
    let out = s.kubectl_ok(&["get", "cm", "settings"]);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "DATA", "AGE"], "{out}");
    assert_eq!(&lines[1][..2], ["settings", "2"], "{out}");
    let b = s.kubectl_ok(&["get", "configmap", "settings", "-o", "jsonpath={.data.b}"]);
    assert_eq!(b, "two");
    // Discovery: kubectl api-resources lists it with its short name.
    let out = s.kubectl_ok(&["api-resources", "--api-group="]);
    assert!(
        out.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f == ["configmaps", "cm", "v1", "true", "ConfigMap"]
        }),
        "{out}"
    );
    // The published schema: kubectl explain.
    let out = s.kubectl_ok(&["explain", "configmap.data"]);
    assert!(out.contains("KIND:       ConfigMap"), "{out}");
    assert!(
        out.contains("Data contains the configuration data."),
        "{out}"
    );
    // Field selectors on metadata.name, and deletion.
    let out = s.kubectl_ok(&[
        "get",
        "cm",
        "--field-selector=metadata.name=settings",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "configmap/settings");
    s.kubectl_ok(&["delete", "cm", "settings"]);
    let (code, _, _) = s.http("GET", &format!("{CMS}/settings"), &[], None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn validation_immutability_and_typed_decoding() {
    let s = Server::start();
    let post = |body: Value, query: &'static str| {
        let s = &s;
        async move {
            let (code, headers, bytes) = s
                .http(
                    "POST",
                    &format!("{CMS}{query}"),
                    &JSON,
                    Some(serde_json::to_vec(&body).expect("json")),
                )
                .await;
            let v: Value = serde_json::from_slice(&bytes).expect("json body");
            (code, headers, v)
        }
    };

    let (code, _, v) = post(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"},
               "data": {"a b": "x", "dup": "1"}, "binaryData": {"dup": "AA=="}}),
        "",
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    assert_eq!(
        v["message"],
        "ConfigMap \"bad\" is invalid: [data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+'), data[dup]: Invalid value: \"dup\": duplicate of key present in binaryData]"
    );

    // Unknown fields are refused under Strict, dropped with a warning otherwise.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen"},
                    "data": {"a": "1"}, "immutable": true, "bogus": 1});
    let (code, _, v) = post(cm.clone(), "?fieldValidation=Strict").await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus""#
    );
    let (code, headers, v) = post(cm, "").await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        headers.get("warning").and_then(|w| w.to_str().ok()),
        Some(r#"299 - "unknown field \"bogus\"""#)
    );
    assert!(v.get("bogus").is_none(), "{v}");
    assert!(v["metadata"].get("generation").is_none(), "{v}");

    // Immutable: data and immutability stay; labels may change.
    let mut changed = v.clone();
    changed["data"]["a"] = json!("2");
    changed["immutable"] = json!(false);
    let (code, _, bytes) = s
        .http(
            "PUT",
            &format!("{CMS}/frozen"),
            &JSON,
            Some(serde_json::to_vec(&changed).expect("json")),
        )
        .await;
    let e: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(code, 422, "{e}");
    assert_eq!(
        e["message"],
        "ConfigMap \"frozen\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"
    );
    let mut labelled = v.clone();
    labelled["metadata"]["labels"] = json!({"x": "y"});
    let (code, _, bytes) = s
        .http(
            "PUT",
            &format!("{CMS}/frozen"),
            &JSON,
            Some(serde_json::to_vec(&labelled).expect("json")),
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&bytes));
}

#[tokio::test]
async fn a_configmap_owned_by_a_custom_resource_goes_with_it() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let ct = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                    "metadata": {"name": "owner"}, "spec": {"cronSpec": "* * * * *", "image": "i"}});
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            "application/json",
            Some(&ct),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let uid = v["metadata"]["uid"].as_str().expect("uid").to_string();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "owned", "ownerReferences": [
                        {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "name": "owner", "uid": uid}]},
                    "data": {"a": "1"}});
    let (code, v) = s
        .http_json("POST", CMS, "application/json", Some(&cm))
        .await;
    assert_eq!(code, 201, "{v}");
    s.kubectl_ok(&["delete", "crontab", "owner"]);
    s.wait_gone(&format!("{CMS}/owned")).await;
}
