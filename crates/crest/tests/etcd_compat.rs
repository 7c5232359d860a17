//! Crest on an etcd that kube-apiserver wrote: the CRD and custom resources stored as JSON, and
//! built-in kinds stored as protobuf (kube-apiserver's default storage media type), under
//! kube-apiserver's key layout, are served; what Crest writes back is JSON without a
//! resourceVersion, which kube-apiserver reads as well. And `--etcd-prefix` keeps two Crest
//! clusters on one etcd apart.

mod common;

use common::replicas::runtime;
use common::Server;
use crest_storage::Storage;
use crest_storage_etcd::testing::EtcdCluster;
use crest_storage_etcd::{EtcdOptions, EtcdStore};
use serde_json::{json, Value};
use std::sync::Arc;

/// The CRD as kube-apiserver stores it: JSON, no resourceVersion, status set by its controllers.
fn stored_crd() -> Value {
    json!({
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {
            "name": "crontabs.stable.example.com",
            "uid": "6a5e0f6e-5a55-4c43-9d3d-2f1d1c6b0b71",
            "generation": 1,
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "managedFields": [{"manager": "kubectl-create", "operation": "Update",
                               "apiVersion": "apiextensions.k8s.io/v1",
                               "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {"f:group": {}}}}]
        },
        "spec": {
            "group": "stable.example.com",
            "names": {"plural": "crontabs", "singular": "crontab", "shortNames": ["ct"],
                      "kind": "CronTab", "listKind": "CronTabList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"}, "image": {"type": "string"},
                        "replicas": {"type": "integer"}}}}}}
            }],
            "conversion": {"strategy": "None"}
        },
        "status": {
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z",
                 "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z",
                 "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
            ],
            "acceptedNames": {"plural": "crontabs", "singular": "crontab", "shortNames": ["ct"],
                              "kind": "CronTab", "listKind": "CronTabList"},
            "storedVersions": ["v1"]
        }
    })
}

fn stored_crontab(ns: &str, name: &str, image: &str) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}"),
                     "generation": 1, "creationTimestamp": "2024-05-01T10:01:00Z"},
        "spec": {"cronSpec": "* * * * */5", "image": image, "replicas": 2}
    })
}

fn stored_namespace(name: &str) -> Vec<u8> {
    crest_codec::protobuf::encode_object(&json!({
        "kind": "Namespace", "apiVersion": "v1",
        "metadata": {"name": name, "uid": format!("uid-ns-{name}"),
                     "creationTimestamp": "2024-05-01T09:59:00Z",
                     "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"}
    }))
    .expect("Namespace has a protobuf message")
}

async fn connect(cluster: &EtcdCluster, prefix: &str) -> Arc<EtcdStore> {
    EtcdStore::connect(EtcdOptions {
        endpoints: cluster.client_urls(),
        prefix: prefix.into(),
        ..Default::default()
    })
    .await
    .expect("connect to etcd")
}

#[test]
fn serves_what_kube_apiserver_stored() {
    let cluster = EtcdCluster::start(1);
    let rt = runtime();
    rt.block_on(async {
        let store = connect(&cluster, "/registry").await;
        let put = |key: &'static str, value: Vec<u8>| {
            let store = store.clone();
            async move {
                store.create(key, value.into()).await.expect("etcd put");
            }
        };
        put(
            "/registry/apiextensions.k8s.io/customresourcedefinitions/crontabs.stable.example.com",
            serde_json::to_vec(&stored_crd()).unwrap(),
        )
        .await;
        put("/registry/namespaces/default", stored_namespace("default")).await;
        put("/registry/namespaces/legacy", stored_namespace("legacy")).await;
        put(
            "/registry/stable.example.com/crontabs/default/cron-a",
            serde_json::to_vec(&stored_crontab("default", "cron-a", "img-a")).unwrap(),
        )
        .await;
        put(
            "/registry/stable.example.com/crontabs/legacy/cron-b",
            serde_json::to_vec(&stored_crontab("legacy", "cron-b", "img-b")).unwrap(),
        )
        .await;
        store.close().await;
    });

    let endpoints = cluster.endpoints_arg();
    let s = Server::start_with(&["--etcd-servers", &endpoints]);
    // The CRD is served as stored; its objects in both namespaces are listed.
    let out = s.kubectl_ok(&[
        "get",
        "crontabs",
        "-A",
        "-o",
        "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}={.spec.image} {end}",
    ]);
    assert_eq!(out.trim(), "default/cron-a=img-a legacy/cron-b=img-b");
    // The protobuf namespace reads as JSON, with its uid and labels.
    let ns = s.kubectl_ok(&["get", "namespace", "legacy", "-o", "json"]);
    let ns: Value = serde_json::from_str(&ns).unwrap();
    assert_eq!(ns["metadata"]["uid"], "uid-ns-legacy");
    assert_eq!(ns["status"]["phase"], "Active");
    // A write through Crest is stored back as JSON without a resourceVersion.
    s.kubectl_ok(&[
        "patch",
        "crontab",
        "cron-b",
        "-n",
        "legacy",
        "--type=merge",
        "-p",
        r#"{"spec":{"image":"img-b2"}}"#,
    ]);
    let stored = rt.block_on(async {
        let store = connect(&cluster, "/registry").await;
        let kv = store
            .get("/registry/stable.example.com/crontabs/legacy/cron-b", 0)
            .await
            .expect("etcd get")
            .expect("the object is there");
        store.close().await;
        kv
    });
    let v: Value = serde_json::from_slice(&stored.value).expect("stored as JSON");
    assert_eq!(v["spec"]["image"], "img-b2");
    assert_eq!(v["metadata"]["uid"], "uid-legacy-cron-b");
    assert!(v["metadata"].get("resourceVersion").is_none(), "{v}");
    assert_eq!(v["metadata"]["generation"], 2);
}

/// A CRD kube-apiserver 1.21 or older stored as v1beta1 (kubernetes#102855), written from a v1beta1
/// manifest with `version`, a spec-wide schema and a printer column, and never written since.
fn stored_v1beta1_crd() -> Value {
    json!({
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "metadata": {"name": "widgets.legacy.example.com", "uid": "uid-crd-widgets",
                     "generation": 1, "creationTimestamp": "2021-03-01T10:00:00Z"},
        "spec": {
            "group": "legacy.example.com",
            "version": "v1",
            "names": {"plural": "widgets", "kind": "Widget"},
            "validation": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
            "subresources": {"status": {}},
            "additionalPrinterColumns": [
                {"name": "Size", "type": "integer", "JSONPath": ".spec.size"}
            ]
        },
        "status": {
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "2021-03-01T10:00:00Z",
                 "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": "2021-03-01T10:00:00Z",
                 "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
            ],
            "acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                              "listKind": "WidgetList"},
            "storedVersions": ["v1"]
        }
    })
}

/// kube-apiserver reads a v1beta1-stored CRD with v1beta1's defaults and serves it as v1; so
/// does Crest: the spec-wide schema, subresources and printer columns move into the version,
/// and `preserveUnknownFields` (v1beta1's default, true) keeps fields the schema does not name.
#[test]
fn serves_a_crd_stored_as_v1beta1() {
    let cluster = EtcdCluster::start(1);
    let rt = runtime();
    rt.block_on(async {
        let store = connect(&cluster, "/registry").await;
        for (key, value) in [
            // Older than its CRD's revision, so read through its schema (as a stored object
            // written before a schema change is), which must keep the unknown field.
            (
                "/registry/legacy.example.com/widgets/default/w1",
                json!({"apiVersion": "legacy.example.com/v1", "kind": "Widget",
                       "metadata": {"name": "w1", "namespace": "default", "uid": "uid-w1",
                                    "creationTimestamp": "2021-03-01T10:01:00Z"},
                       "spec": {"size": 3, "color": "red"}}),
            ),
            (
                "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.legacy.example.com",
                stored_v1beta1_crd(),
            ),
        ] {
            let value = serde_json::to_vec(&value).unwrap();
            store.create(key, value.into()).await.expect("etcd put");
        }
        store.close().await;
    });
    let endpoints = cluster.endpoints_arg();
    let s = Server::start_with(&["--etcd-servers", &endpoints]);
    let crd = s.kubectl_ok(&["get", "crd", "widgets.legacy.example.com", "-o", "json"]);
    let crd: Value = serde_json::from_str(&crd).unwrap();
    assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1", "{crd}");
    let spec = &crd["spec"];
    assert_eq!(spec["scope"], "Namespaced");
    assert_eq!(spec["preserveUnknownFields"], true);
    assert_eq!(spec.get("version"), None);
    assert_eq!(spec.get("validation"), None);
    assert_eq!(
        spec["versions"],
        json!([{
            "name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
            "subresources": {"status": {}},
            "additionalPrinterColumns": [
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
            ]
        }])
    );
    assert_eq!(crd["metadata"]["uid"], "uid-crd-widgets");
    // Served: the stored object keeps its unknown field, the printer column reads the version's.
    let w1 = s.kubectl_ok(&[
        "get",
        "widget",
        "w1",
        "-o",
        "jsonpath={.spec.color}/{.spec.size}",
    ]);
    assert_eq!(w1, "red/3");
    let table = s.kubectl_ok(&["get", "widgets"]);
    let columns = |line: Option<&str>| -> Vec<String> {
        line.unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        columns(table.lines().next())[..2],
        ["NAME", "SIZE"],
        "{table}"
    );
    assert_eq!(columns(table.lines().nth(1))[..2], ["w1", "3"], "{table}");
    // New objects keep unknown fields too (nothing is pruned), and the schema still validates.
    s.apply_yaml(
        "apiVersion: legacy.example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {size: 5, shape: round}\n",
    );
    let w2 = s.kubectl_ok(&["get", "widget", "w2", "-o", "jsonpath={.spec.shape}"]);
    assert_eq!(w2, "round");
    // Server-side apply treats the unknown fields as deduced rather than refusing them.
    let (ok, out, err) = s.kubectl_stdin(
        &["apply", "--server-side", "-f", "-"],
        Some("apiVersion: legacy.example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {size: 6, shape: square}\n"),
    );
    assert!(ok, "{out}{err}");
    let w2 = s.kubectl_ok(&[
        "get",
        "widget",
        "w2",
        "-o",
        "jsonpath={.spec.shape}/{.spec.size}",
    ]);
    assert_eq!(w2, "square/6");
    // OpenAPI v2 publishes only the type (client-side validation would refuse unknown fields);
    // v3 the schema.
    let v2 = s.kubectl_ok(&["get", "--raw", "/openapi/v2"]);
    let v2: Value = serde_json::from_str(&v2).unwrap();
    let widget = &v2["definitions"]["com.example.legacy.v1.Widget"];
    assert_eq!(widget["type"], "object", "{widget}");
    assert_eq!(widget.get("properties"), None, "{widget}");
    let v3 = s.kubectl_ok(&["get", "--raw", "/openapi/v3/apis/legacy.example.com/v1"]);
    let v3: Value = serde_json::from_str(&v3).unwrap();
    let widget = &v3["components"]["schemas"]["com.example.legacy.v1.Widget"];
    assert!(
        widget["properties"]["spec"]["properties"]["size"].is_object(),
        "{widget}"
    );
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some("apiVersion: legacy.example.com/v1\nkind: Widget\nmetadata: {name: w3}\nspec: {size: big}\n"),
    );
    assert!(
        !ok && err.contains("spec.size: Invalid value: \"string\""),
        "{err}"
    );
    // Updating the CRD through Crest stores it as v1, as kube-apiserver 1.22+ does.
    s.kubectl_ok(&["label", "crd", "widgets.legacy.example.com", "touched=yes"]);
    let stored = rt.block_on(async {
        let store = connect(&cluster, "/registry").await;
        let kv = store
            .get(
                "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.legacy.example.com",
                0,
            )
            .await
            .expect("etcd get")
            .expect("the CRD is there");
        store.close().await;
        kv
    });
    let v: Value = serde_json::from_slice(&stored.value).expect("stored as JSON");
    assert_eq!(v["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(
        v["spec"]["versions"][0]["additionalPrinterColumns"][0]["jsonPath"],
        ".spec.size"
    );
}

#[test]
fn prefixes_keep_clusters_apart() {
    let cluster = EtcdCluster::start(1);
    let endpoints = cluster.endpoints_arg();
    let a = Server::start_with(&["--etcd-servers", &endpoints, "--etcd-prefix", "/crest-a"]);
    let b = Server::start_with(&["--etcd-servers", &endpoints, "--etcd-prefix", "/crest-b"]);
    a.kubectl_ok(&["create", "configmap", "only-in-a", "--from-literal=k=v"]);
    b.kubectl_ok(&["create", "configmap", "only-in-b", "--from-literal=k=v"]);
    let names = |s: &Server| {
        s.kubectl_ok(&[
            "get",
            "configmaps",
            "--field-selector=metadata.name!=kube-root-ca.crt",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name} {end}",
        ])
    };
    assert_eq!(names(&a).trim(), "only-in-a");
    assert_eq!(names(&b).trim(), "only-in-b");
    // Writes in one prefix advance etcd's revision for both: reads of the other must not wait
    // for a change of their own (the feed asks its watch for progress).
    let t0 = std::time::Instant::now();
    for i in 0..5 {
        a.kubectl_ok(&["create", "configmap", &format!("a-{i}")]);
        assert_eq!(names(&b).trim(), "only-in-b");
    }
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(10),
        "reads on b waited for a's revisions: {:?}",
        t0.elapsed()
    );
    // The keys are where kube-apiserver would put them under each prefix
    // (`/crest-a/configmaps/default/only-in-a`), and only there.
    let rt = runtime();
    rt.block_on(async {
        for (prefix, mine, theirs) in [
            ("/crest-a", "only-in-a", "only-in-b"),
            ("/crest-b", "only-in-b", "only-in-a"),
        ] {
            let raw = connect(&cluster, prefix).await;
            let key = |name: &str| format!("/registry/configmaps/default/{name}");
            assert!(
                raw.get(&key(mine), 0).await.expect("etcd get").is_some(),
                "{prefix}/configmaps/default/{mine}"
            );
            assert!(
                raw.get(&key(theirs), 0).await.expect("etcd get").is_none(),
                "{prefix}/configmaps/default/{theirs}"
            );
            raw.close().await;
        }
    });
}

/// `--etcd-cafile/--etcd-certfile/--etcd-keyfile`: Crest reaches an etcd that serves TLS and
/// requires client certificates; without the certificate it does not start, with a clear error.
#[test]
fn etcd_over_tls_with_client_certificates() {
    let cluster = EtcdCluster::start_tls(1);
    let tls = cluster.tls().expect("the cluster's TLS files");
    let endpoints = cluster.endpoints_arg();
    assert!(endpoints.starts_with("https://"), "{endpoints}");
    let path = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .expect("a TLS file")
            .to_string_lossy()
            .to_string()
    };
    let (ca, cert, key) = (
        path(&tls.ca_file),
        path(&tls.cert_file),
        path(&tls.key_file),
    );
    let s = Server::start_with(&[
        "--etcd-servers",
        &endpoints,
        "--etcd-cafile",
        &ca,
        "--etcd-certfile",
        &cert,
        "--etcd-keyfile",
        &key,
    ]);
    s.kubectl_ok(&["create", "configmap", "over-tls", "--from-literal=k=v"]);
    assert_eq!(
        s.kubectl_ok(&["get", "configmap", "over-tls", "-o", "jsonpath={.data.k}"]),
        "v"
    );
    drop(s);
    // Only the CA: etcd refuses the connection without a client certificate.
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crest"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .args(["--etcd-servers", &endpoints, "--etcd-cafile", &ca])
        .args(["--etcd-request-timeout", "1s"])
        .env("RUST_LOG", "error")
        .output()
        .expect("run crest");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach etcd at"), "{err}");
}
