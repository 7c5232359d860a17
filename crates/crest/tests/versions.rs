//! Several served versions with the `None` conversion strategy: every answer carries the version
//! asked for, each version's schema prunes and defaults in that version (on write and on read),
//! and requests through a deprecated version get its warning (issue 15, items 1 and 2).

mod common;
use common::watch::WatchReader;
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1beta1
    served: true
    storage: true
    deprecated: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string, default: dflt}
  - name: v2alpha1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: "v2alpha1 is going away"
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

const V1: &str = "/apis/example.com/v1/namespaces/default/crontabs";
const V1BETA1: &str = "/apis/example.com/v1beta1/namespaces/default/crontabs";
const V2ALPHA1: &str = "/apis/example.com/v2alpha1/namespaces/default/crontabs";
const DEFAULT_WARNING: &str =
    "example.com/v1beta1 CronTab is deprecated; use example.com/v1 CronTab";

/// The texts of a response's Warning headers.
fn texts(h: &reqwest::header::HeaderMap) -> Vec<String> {
    warnings(h)
        .iter()
        .map(|w| {
            w.strip_prefix("299 - \"")
                .and_then(|w| w.strip_suffix('"'))
                .unwrap_or(w)
                .replace("\\\"", "\"")
        })
        .collect()
}

async fn get(s: &Server, path: &str) -> (u16, Vec<String>, Value) {
    let (code, headers, body) = s.http("GET", path, &[], None).await;
    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (code, texts(&headers), v)
}

#[tokio::test]
async fn every_version_reads_and_writes_in_its_own_schema() {
    let s = Server::start();
    s.install_crd(CRD);
    // Written through the storage version, which keeps unknown fields in spec.
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: example.com/v1beta1\nkind: CronTab\nmetadata: {name: old}\nspec: {x: 1}\n",
        ),
    );
    assert!(ok, "{err}");
    // kubectl prints the deprecated version's warning.
    assert!(
        err.contains(&format!("Warning: {DEFAULT_WARNING}")),
        "{err}"
    );

    // Read through v1: v1's apiVersion, pruned by v1's schema, defaulted by it.
    let (code, warns, v) = get(&s, &format!("{V1}/old")).await;
    assert_eq!(code, 200, "{v}");
    assert!(warns.is_empty(), "{warns:?}");
    assert_eq!(v["apiVersion"], "example.com/v1");
    assert_eq!(v["spec"], json!({"a": "dflt"}));
    // The storage version still has what it stored.
    let (_, warns, v) = get(&s, &format!("{V1BETA1}/old")).await;
    assert_eq!(warns, [DEFAULT_WARNING]);
    assert_eq!(v["apiVersion"], "example.com/v1beta1");
    assert_eq!(v["spec"], json!({"x": 1}));
    // A version whose schema neither prunes nor defaults: only apiVersion changes.
    let (_, _, v) = get(&s, &format!("{V2ALPHA1}/old")).await;
    assert_eq!(v["apiVersion"], "example.com/v2alpha1");
    assert_eq!(v["spec"], json!({"x": 1}));
    assert_eq!(v["metadata"]["name"], "old");
    // Lists: every item in the version asked for.
    let (_, _, list) = get(&s, V1).await;
    assert_eq!(list["apiVersion"], "example.com/v1");
    assert_eq!(list["items"][0]["apiVersion"], "example.com/v1");
    assert_eq!(list["items"][0]["spec"], json!({"a": "dflt"}));

    // Watch through v1 sees v1 objects.
    let mut watch = WatchReader::open(&s, &format!("{V1}?watch=1")).await;
    let first = watch.next(Duration::from_secs(5)).await.expect("event");
    assert_eq!(first["object"]["apiVersion"], "example.com/v1", "{first}");

    // Written through v1: pruned by v1's schema, stored in v1beta1, answered as v1.
    let body = json!({"apiVersion": "example.com/v1", "kind": "CronTab",
        "metadata": {"name": "new"}, "spec": {"a": "set", "y": 2}});
    let (code, created) = s
        .http_json("POST", V1, "application/json", Some(&body))
        .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["apiVersion"], "example.com/v1");
    assert_eq!(created["spec"], json!({"a": "set"}));
    let ev = watch.next(Duration::from_secs(5)).await.expect("event");
    assert_eq!(ev["type"], "ADDED", "{ev}");
    assert_eq!(ev["object"]["apiVersion"], "example.com/v1", "{ev}");
    let (_, _, v) = get(&s, &format!("{V1BETA1}/new")).await;
    assert_eq!(v["apiVersion"], "example.com/v1beta1");
    assert_eq!(v["spec"], json!({"a": "set"}));

    // kubectl reads through a named version.
    let out = s.kubectl_ok(&[
        "get",
        "crontabs.v1.example.com",
        "new",
        "-o",
        "jsonpath={.apiVersion}",
    ]);
    assert_eq!(out, "example.com/v1");
}

#[tokio::test]
async fn deprecated_versions_warn_on_every_answer() {
    let s = Server::start();
    s.install_crd(CRD);
    // The custom warning text, on a read that fails too.
    let (code, warns, _) = get(&s, &format!("{V2ALPHA1}/missing")).await;
    assert_eq!(code, 404);
    assert_eq!(warns, ["v2alpha1 is going away"]);
    // On writes, ahead of the request's own warnings (an unknown field under Warn).
    let body = json!({"apiVersion": "example.com/v1beta1", "kind": "CronTab",
        "metadata": {"name": "w"}, "bogus": true, "spec": {}});
    let (code, headers, body) = s
        .http(
            "POST",
            V1BETA1,
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(&body).expect("json")),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        texts(&headers),
        [DEFAULT_WARNING, "unknown field \"bogus\""]
    );
    // Not on the version that is not deprecated.
    let (code, warns, _) = get(&s, V1).await;
    assert_eq!(code, 200);
    assert!(warns.is_empty(), "{warns:?}");
}

const SUB_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Old, type: string, jsonPath: .spec.color}
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
"#;

/// Subresources, dry run, Table and PartialObjectMetadata through the non-storage version.
#[tokio::test]
async fn subresources_tables_and_dry_run_through_another_version() {
    let s = Server::start();
    s.install_crd(SUB_CRD);
    let base = "/apis/example.com/v1/namespaces/default/gadgets";
    let body = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g"}, "spec": {"replicas": 2, "color": "red"}});
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{base}?dryRun=All"),
            "application/json",
            Some(&body),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["apiVersion"], "example.com/v1");
    let (code, v) = s
        .http_json("POST", base, "application/json", Some(&body))
        .await;
    assert_eq!(code, 201, "{v}");
    // /status through v1: read and written as v1.
    let (code, mut st) = s
        .http_json("GET", &format!("{base}/g/status"), "", None)
        .await;
    assert_eq!(code, 200, "{st}");
    assert_eq!(st["apiVersion"], "example.com/v1");
    st["status"] = json!({"replicas": 1});
    let (code, v) = s
        .http_json(
            "PUT",
            &format!("{base}/g/status"),
            "application/json",
            Some(&st),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["apiVersion"], "example.com/v1");
    assert_eq!(v["status"]["replicas"], 1);
    // /scale through v1.
    let (code, v) = s
        .http_json("GET", &format!("{base}/g/scale"), "", None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["replicas"], 2);
    assert_eq!(v["status"]["replicas"], 1);
    // The v1 printer columns, and PartialObjectMetadata.
    let (code, _, body) = s
        .http(
            "GET",
            base,
            &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let t: Value = serde_json::from_slice(&body).expect("table");
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["Name", "Replicas"], "{t}");
    assert_eq!(t["rows"][0]["cells"], json!(["g", 2]), "{t}");
    let (code, _, body) = s
        .http(
            "GET",
            &format!("{base}/g"),
            &[(
                "Accept",
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let m: Value = serde_json::from_slice(&body).expect("metadata");
    assert_eq!(m["kind"], "PartialObjectMetadata", "{m}");
    assert_eq!(m["metadata"]["name"], "g");
    // The storage version reads the same object with its own columns.
    let out = s.kubectl_ok(&["get", "gadgets.v1beta1.example.com", "g"]);
    assert!(out.lines().next().unwrap_or("").contains("OLD"), "{out}");
}
