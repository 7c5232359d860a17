//! Objects stored in a version that is no longer the storage version, or no longer served
//! (issue 28, item 1): every answer carries the version asked for, whatever version the object
//! was stored in. As upstream's crConverter converts on every decode (apiextensions-apiserver
//! `pkg/apiserver/conversion/converter.go`, the versioned codec of `customresource_handler.go`):
//! GET, LIST (chunked, Table), watch (from history, from the cache, WatchList, live), the
//! answers of create, update, every patch type, delete and deletecollection, /status and /scale.
//! The `None` strategy here; tests/conversion_webhook.rs has the webhook's case.

mod common;
use common::watch::WatchReader;
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

/// v1 and v2 of one kind, same schema and subresources, a printer column showing apiVersion.
/// `storage` names the storage version, `v1_served` whether v1 is served.
fn crd(storage: &str, v1_served: bool) -> String {
    let version = |name: &str, served: bool| {
        format!(
            r#"
  - name: {name}
    served: {served}
    storage: {}
    schema:
      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
    subresources:
      status: {{}}
      scale: {{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    additionalPrinterColumns:
    - {{name: Version, type: string, jsonPath: .apiVersion}}"#,
            name == storage
        )
    };
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget}}
  versions:{}{}
"#,
        version("v1", v1_served),
        version("v2", true)
    )
}

const V1: &str = "/apis/example.com/v1/namespaces/default/widgets";
const V2: &str = "/apis/example.com/v2/namespaces/default/widgets";
const AV1: &str = "example.com/v1";
const AV2: &str = "example.com/v2";

/// The objects created while v1 is the storage version.
const NAMES: &[&str] = &[
    "get", "put", "merge", "json", "apply", "status", "scale", "fin", "gone", "coll-1", "coll-2",
];

async fn json_at(s: &Server, method: &str, path: &str, ctype: &str, body: Option<&Value>) -> Value {
    let (code, v) = s.http_json(method, path, ctype, body).await;
    assert!((200..300).contains(&code), "{method} {path}: {code} {v}");
    v
}

async fn raw(s: &Server, method: &str, path: &str, ctype: &str, body: &str) -> Value {
    let (code, _, b) = s
        .http(
            method,
            path,
            &[("Content-Type", ctype)],
            Some(body.as_bytes().to_vec()),
        )
        .await;
    let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
    assert!(
        (200..300).contains(&code),
        "{method} {path}: {code} {}",
        String::from_utf8_lossy(&b)
    );
    v
}

/// Every object in a list, Table rows' objects, or a watch's events is in `version`.
fn all_in(version: &str, objects: &[Value], what: &str) {
    assert!(!objects.is_empty(), "{what}: nothing returned");
    for o in objects {
        assert_eq!(o["apiVersion"], version, "{what}: {o}");
    }
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

/// The events of a watch until it times out, with the object of every one.
async fn events(s: &Server, query: &str) -> Vec<Value> {
    let mut w = WatchReader::open(s, &format!("{V2}?watch=1&timeoutSeconds=1&{query}")).await;
    assert_eq!(w.status, 200, "{query}");
    w.until_end(Duration::from_secs(10)).await
}

/// Creates the objects through v1 while it is the storage version, then moves storage to v2
/// (keeping v1 served or not) and reads and writes through v2 on every path.
async fn after_storage_moves(v1_served: bool) {
    let s = Server::start();
    s.install_crd(&crd("v1", true));
    let before = json_at(&s, "GET", V1, "", None).await;
    let before = before["metadata"]["resourceVersion"]
        .as_str()
        .expect("list rv")
        .to_string();
    for name in NAMES {
        let mut o = json!({"apiVersion": AV1, "kind": "Widget",
            "metadata": {"name": name}, "spec": {"replicas": 1}});
        if name.starts_with("coll") {
            o["metadata"]["labels"] = json!({"coll": "yes"});
        }
        if *name == "fin" {
            o["metadata"]["finalizers"] = json!(["example.com/keep"]);
        }
        let v = json_at(&s, "POST", V1, "application/json", Some(&o)).await;
        assert_eq!(v["apiVersion"], AV1);
    }
    s.apply_yaml(&crd("v2", v1_served));
    if !v1_served {
        let mut code = 0;
        for _ in 0..100 {
            code = s.http_json("GET", V1, "", None).await.0;
            if code == 404 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(code, 404, "v1 is no longer served");
    }

    // GET, as raw JSON, kubectl and a Table of one.
    let v = json_at(&s, "GET", &format!("{V2}/get"), "", None).await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    let out = s.kubectl_ok(&[
        "get",
        "widgets.v2.example.com",
        "get",
        "-o",
        "jsonpath={.apiVersion}",
    ]);
    assert_eq!(out, AV2);
    let table_of = |path: String| {
        let s = &s;
        async move {
            let (code, _, b) = s
                .http(
                    "GET",
                    &path,
                    &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
                    None,
                )
                .await;
            assert_eq!(code, 200, "{}", String::from_utf8_lossy(&b));
            let t: Value = serde_json::from_slice(&b).expect("table");
            t["rows"].as_array().cloned().unwrap_or_default()
        }
    };
    let rows = table_of(format!("{V2}/get?includeObject=Object")).await;
    let objects: Vec<Value> = rows.iter().map(|r| r["object"].clone()).collect();
    all_in(AV2, &objects, "table of one");
    assert_eq!(rows[0]["cells"][1], AV2, "{rows:?}");

    // LIST: raw, kubectl, chunked with continue, Table.
    let list = json_at(&s, "GET", V2, "", None).await;
    assert_eq!(list["apiVersion"], AV2);
    all_in(AV2, &items(&list), "list");
    assert_eq!(items(&list).len(), NAMES.len());
    let out = s.kubectl_ok(&["get", "widgets.v2.example.com", "-o", "json"]);
    let list: Value = serde_json::from_str(&out).expect("kubectl json");
    all_in(AV2, &items(&list), "kubectl list");
    let mut paged = vec![];
    let mut cont = String::new();
    loop {
        let page = json_at(
            &s,
            "GET",
            &format!("{V2}?limit=3&continue={cont}"),
            "",
            None,
        )
        .await;
        paged.extend(items(&page));
        match page["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() => cont = c.to_string(),
            _ => break,
        }
    }
    assert_eq!(paged.len(), NAMES.len());
    all_in(AV2, &paged, "chunked list");
    let rows = table_of(format!("{V2}?includeObject=Object")).await;
    let objects: Vec<Value> = rows.iter().map(|r| r["object"].clone()).collect();
    all_in(AV2, &objects, "table");
    let out = s.kubectl_ok(&["get", "widgets.v2.example.com", "--chunk-size=2"]);
    let printed: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(printed.len(), NAMES.len(), "{out}");
    for line in printed {
        assert!(line.ends_with(AV2), "kubectl's Version column: {out}");
    }

    // Watches: replayed from before the creates (history), from the cache (rv 0), WatchList.
    let replayed = events(&s, &format!("resourceVersion={before}")).await;
    let objects: Vec<Value> = replayed.iter().map(|e| e["object"].clone()).collect();
    assert_eq!(objects.len(), NAMES.len(), "{replayed:?}");
    all_in(AV2, &objects, "watch from history");
    let cached = events(&s, "resourceVersion=0").await;
    let objects: Vec<Value> = cached.iter().map(|e| e["object"].clone()).collect();
    all_in(AV2, &objects, "watch from the cache");
    let listed = events(
        &s,
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
    )
    .await;
    let objects: Vec<Value> = listed.iter().map(|e| e["object"].clone()).collect();
    all_in(AV2, &objects, "watch list (bookmark included)");
    assert!(listed.iter().any(|e| e["type"] == "BOOKMARK"), "{listed:?}");

    // Live events of what follows, in v2 whatever the object was stored in.
    let mut live = WatchReader::open(&s, &format!("{V2}?watch=1")).await;

    // Update: the object read through v2, sent back.
    let mut v = json_at(&s, "GET", &format!("{V2}/put"), "", None).await;
    v["spec"]["replicas"] = json!(2);
    let v = json_at(
        &s,
        "PUT",
        &format!("{V2}/put"),
        "application/json",
        Some(&v),
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    // Patches: merge, JSON, server-side apply.
    let v = raw(
        &s,
        "PATCH",
        &format!("{V2}/merge"),
        "application/merge-patch+json",
        r#"{"spec":{"replicas":5}}"#,
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    let v = raw(
        &s,
        "PATCH",
        &format!("{V2}/json"),
        "application/json-patch+json",
        r#"[{"op":"replace","path":"/spec/replicas","value":6}]"#,
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    let v = raw(
        &s,
        "PATCH",
        &format!("{V2}/apply?fieldManager=test&force=true"),
        "application/apply-patch+yaml",
        "apiVersion: example.com/v2\nkind: Widget\nmetadata: {name: apply}\nspec: {replicas: 7}\n",
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    // Create through v2 (stored in v2 now), and dry run.
    let o = json!({"apiVersion": AV2, "kind": "Widget", "metadata": {"name": "new"}, "spec": {"replicas": 1}});
    let v = json_at(&s, "POST", V2, "application/json", Some(&o)).await;
    assert_eq!(v["apiVersion"], AV2, "{v}");

    // /status: read, replaced, patched.
    let mut st = json_at(&s, "GET", &format!("{V2}/status/status"), "", None).await;
    assert_eq!(st["apiVersion"], AV2, "{st}");
    st["status"] = json!({"replicas": 1});
    let v = json_at(
        &s,
        "PUT",
        &format!("{V2}/status/status"),
        "application/json",
        Some(&st),
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    let v = raw(
        &s,
        "PATCH",
        &format!("{V2}/status/status"),
        "application/merge-patch+json",
        r#"{"status":{"replicas":2}}"#,
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    assert_eq!(v["status"]["replicas"], 2, "{v}");

    // /scale: the Scale of the object read through v2; written back through it.
    let sc = json_at(&s, "GET", &format!("{V2}/scale/scale"), "", None).await;
    assert_eq!(sc["apiVersion"], "autoscaling/v1", "{sc}");
    assert_eq!(sc["spec"]["replicas"], 1, "{sc}");
    let sc = raw(
        &s,
        "PATCH",
        &format!("{V2}/scale/scale"),
        "application/merge-patch+json",
        r#"{"spec":{"replicas":3}}"#,
    )
    .await;
    assert_eq!(sc["spec"]["replicas"], 3, "{sc}");
    let v = json_at(&s, "GET", &format!("{V2}/scale"), "", None).await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    assert_eq!(v["spec"]["replicas"], 3, "{v}");

    // Delete: a finalizer keeps the object, which is answered; one without is gone.
    let v = json_at(&s, "DELETE", &format!("{V2}/fin"), "", None).await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    let v = json_at(&s, "DELETE", &format!("{V2}/gone"), "", None).await;
    assert_eq!(v["kind"], "Status", "{v}");
    // Dry run of a delete that keeps the object answers it too.
    let v = json_at(&s, "DELETE", &format!("{V2}/fin?dryRun=All"), "", None).await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    // deletecollection answers the deleted objects.
    let v = json_at(
        &s,
        "DELETE",
        &format!("{V2}?labelSelector=coll%3Dyes"),
        "",
        None,
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    assert_eq!(items(&v).len(), 2, "{v}");
    all_in(AV2, &items(&v), "deletecollection");
    // Removing the last finalizer deletes the object; the answer is the object.
    let v = raw(
        &s,
        "PATCH",
        &format!("{V2}/fin"),
        "application/merge-patch+json",
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await;
    assert_eq!(v["apiVersion"], AV2, "{v}");

    // Every live event carried v2 (MODIFIED of the writes, DELETED with the last state).
    let mut seen = vec![];
    while let Some(ev) = live.next(Duration::from_millis(500)).await {
        seen.push(ev);
    }
    let kinds: Vec<&str> = seen.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(kinds.contains(&"DELETED"), "{seen:?}");
    let objects: Vec<Value> = seen.iter().map(|e| e["object"].clone()).collect();
    all_in(AV2, &objects, "live watch");

    // Everything left reads as v2, and (when still served) as v1.
    let list = json_at(&s, "GET", V2, "", None).await;
    all_in(AV2, &items(&list), "list after writes");
    if v1_served {
        let list = json_at(&s, "GET", V1, "", None).await;
        assert_eq!(list["apiVersion"], AV1);
        all_in(AV1, &items(&list), "list through v1");
        let v = json_at(&s, "GET", &format!("{V1}/merge"), "", None).await;
        assert_eq!(v["apiVersion"], AV1, "{v}");
        assert_eq!(v["spec"]["replicas"], 5, "{v}");
        let v = json_at(&s, "GET", &format!("{V1}/get"), "", None).await;
        assert_eq!(v["apiVersion"], AV1, "{v}");
        let out = s.kubectl_ok(&["get", "widgets.v1.example.com", "--no-headers"]);
        for line in out.lines() {
            assert!(line.ends_with(AV1), "kubectl through v1: {out}");
        }
    }
}

#[tokio::test]
async fn objects_stored_in_the_old_storage_version_read_in_the_version_asked_for() {
    after_storage_moves(true).await;
}

#[tokio::test]
async fn objects_stored_in_a_version_no_longer_served_read_in_the_version_asked_for() {
    after_storage_moves(false).await;
}

/// v1 (storage) knows `spec.old`, v2 only `spec.new`.
fn pruning_crd(storage: &str) -> String {
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: gizmos, singular: gizmo, kind: Gizmo}}
  versions:
  - name: v1
    served: true
    storage: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {{type: object, properties: {{old: {{type: string}}}}}}
  - name: v2
    served: true
    storage: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {{type: object, properties: {{new: {{type: string}}}}}}
"#,
        storage == "v1",
        storage == "v2"
    )
}

/// The cache reads an object through the schema of the version it is stored in, not the
/// storage version's (upstream's decoder coerces with the schema of the version the object
/// names): a field only the old version knows survives the storage version's move, and the
/// version asked for prunes by its own schema.
#[tokio::test]
async fn an_object_is_read_through_the_schema_of_the_version_it_is_stored_in() {
    let s = Server::start();
    s.install_crd(&pruning_crd("v1"));
    let base = "/apis/example.com/v1/namespaces/default/gizmos";
    let o = json!({"apiVersion": AV1, "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {"old": "kept"}});
    json_at(&s, "POST", base, "application/json", Some(&o)).await;
    s.apply_yaml(&pruning_crd("v2"));
    let v = json_at(&s, "GET", &format!("{base}/g"), "", None).await;
    assert_eq!(v["apiVersion"], AV1, "{v}");
    assert_eq!(v["spec"], json!({"old": "kept"}), "{v}");
    let v2 = "/apis/example.com/v2/namespaces/default/gizmos";
    let v = json_at(&s, "GET", &format!("{v2}/g"), "", None).await;
    assert_eq!(v["apiVersion"], AV2, "{v}");
    assert_eq!(v["spec"], json!({}), "{v}");
    let list = json_at(&s, "GET", base, "", None).await;
    assert_eq!(items(&list)[0]["spec"], json!({"old": "kept"}), "{list}");
}
