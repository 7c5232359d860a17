//! StorageVersionMigration (storagemigration.k8s.io/v1alpha1): the server rewrites every object
//! of a resource in its current storage version, without losing concurrent writes, then the old
//! version can be dropped from the CRD's storedVersions (issue 15, item 4).

mod common;
use common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const V1BETA1: &str = "/apis/example.com/v1beta1/namespaces/default/crontabs";
const V1: &str = "/apis/example.com/v1/namespaces/default/crontabs";
const SVMS: &str = "/apis/storagemigration.k8s.io/v1alpha1/storageversionmigrations";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd(storage_v1: bool) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
        "versions": [
            {"name": "v1beta1", "served": true, "storage": !storage_v1, "schema": schema},
            {"name": "v1", "served": true, "storage": storage_v1, "schema": schema},
        ]}})
}

fn rv(v: &Value) -> i64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_default()
}

async fn create(s: &Server, path: &str, version: &str, name: &str) -> i64 {
    let body = json!({"apiVersion": format!("example.com/{version}"), "kind": "CronTab",
        "metadata": {"name": name}, "spec": {"n": 0}});
    let (code, v) = s
        .http_json("POST", path, "application/json", Some(&body))
        .await;
    assert_eq!(code, 201, "{v}");
    rv(&v)
}

async fn wait_for_condition(s: &Server, name: &str, cond: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, v) = s
            .http_json("GET", &format!("{SVMS}/{name}"), "", None)
            .await;
        assert_eq!(code, 200, "{v}");
        let done = v["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == cond && c["status"] == "True")
        });
        if done {
            return v;
        }
        assert!(Instant::now() < deadline, "no {cond} condition: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn migration_rewrites_old_objects_and_keeps_concurrent_writes() {
    let s = Server::start();
    let (code, v) = s.post_crd(&crd(false)).await;
    assert_eq!(code, 201, "{v}");
    s.wait_established("crontabs.example.com");
    let mut old = vec![];
    for i in 0..40 {
        old.push(create(&s, V1BETA1, "v1beta1", &format!("old-{i}")).await);
    }
    // v1 becomes the storage version; objects created from now on are stored in it.
    let (code, mut current) = s
        .http_json("GET", &format!("{CRDS}/crontabs.example.com"), "", None)
        .await;
    assert_eq!(code, 200);
    current["spec"] = crd(true)["spec"].clone();
    let (code, v) = s
        .http_json(
            "PUT",
            &format!("{CRDS}/crontabs.example.com"),
            "application/json",
            Some(&current),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    let mut new = vec![];
    for i in 0..5 {
        new.push(create(&s, V1, "v1", &format!("new-{i}")).await);
    }

    // Concurrent writes through v1 while the migration runs.
    let writer = {
        let base = s.base.clone();
        let client = s.reqwest();
        tokio::spawn(async move {
            for i in 0..20 {
                let r = client
                    .patch(format!("{base}{V1}/old-{i}"))
                    .header("Content-Type", "application/merge-patch+json")
                    .body(json!({"metadata": {"labels": {"n": i.to_string()}}}).to_string())
                    .send()
                    .await
                    .expect("patch");
                assert_eq!(r.status().as_u16(), 200);
            }
        })
    };
    let svm = json!({"apiVersion": "storagemigration.k8s.io/v1alpha1", "kind": "StorageVersionMigration",
        "metadata": {"name": "crontabs"},
        "spec": {"resource": {"group": "example.com", "version": "v1", "resource": "crontabs"}}});
    let (code, v) = s
        .http_json("POST", SVMS, "application/json", Some(&svm))
        .await;
    assert_eq!(code, 201, "{v}");
    let done = wait_for_condition(&s, "crontabs", "Succeeded").await;
    writer.await.expect("writer");
    let conds = done["status"]["conditions"].as_array().expect("conditions");
    assert!(
        conds
            .iter()
            .any(|c| c["type"] == "Running" && c["status"] == "False"),
        "{done}"
    );
    assert!(rv(&json!({"metadata": {"resourceVersion": done["status"]["resourceVersion"]}})) > 0);

    // Every object stored in v1beta1 was written again; those already in v1 were not.
    for (i, before) in old.iter().enumerate() {
        let (_, v) = s.http_json("GET", &format!("{V1}/old-{i}"), "", None).await;
        assert!(rv(&v) > *before, "old-{i} not rewritten: {v}");
        if i < 20 {
            assert_eq!(
                v["metadata"]["labels"]["n"],
                i.to_string(),
                "lost write: {v}"
            );
        }
    }
    for (i, before) in new.iter().enumerate() {
        let (_, v) = s.http_json("GET", &format!("{V1}/new-{i}"), "", None).await;
        assert_eq!(rv(&v), *before, "new-{i} rewritten needlessly");
    }

    // The old version can now be dropped from storedVersions, then from the CRD.
    s.kubectl_ok(&[
        "patch",
        "crd",
        "crontabs.example.com",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"storedVersions":["v1"]}}"#,
    ]);
    s.kubectl_ok(&[
        "patch",
        "crd",
        "crontabs.example.com",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/versions/0"}]"#,
    ]);
    let (code, list) = s.http_json("GET", V1, "", None).await;
    assert_eq!(code, 200);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(45));
}

#[tokio::test]
async fn migrations_are_validated_and_fail_for_unknown_resources() {
    let s = Server::start();
    let out = s.kubectl_ok(&["api-resources", "--api-group=storagemigration.k8s.io"]);
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == [
                "storageversionmigrations",
                "storagemigration.k8s.io/v1alpha1",
                "false",
                "StorageVersionMigration"
            ]),
        "{out}"
    );
    let bad = json!({"apiVersion": "storagemigration.k8s.io/v1alpha1", "kind": "StorageVersionMigration",
        "metadata": {"name": "bad"}, "spec": {"resource": {"group": "example.com"}}});
    let (code, v) = s
        .http_json("POST", SVMS, "application/json", Some(&bad))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "StorageVersionMigration.storagemigration.k8s.io \"bad\" is invalid: [spec.resource.resource: Required value: resource is required, spec.resource.version: Required value: version is required]"
    );
    let svm = json!({"apiVersion": "storagemigration.k8s.io/v1alpha1", "kind": "StorageVersionMigration",
        "metadata": {"name": "nothing"},
        "spec": {"resource": {"group": "example.com", "version": "v1", "resource": "gadgets"}}});
    let (code, v) = s
        .http_json("POST", SVMS, "application/json", Some(&svm))
        .await;
    assert_eq!(code, 201, "{v}");
    assert!(
        v.get("status")
            .is_none_or(|st| st.get("conditions").is_none()),
        "{v}"
    );
    let failed = wait_for_condition(&s, "nothing", "Failed").await;
    let c = failed["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Failed"))
        .cloned()
        .expect("Failed");
    assert_eq!(c["reason"], "StorageVersionMigrationFailed");
    assert_eq!(c["message"], "resource does not exist in discovery");
    // The spec is immutable.
    let patch = json!({"spec": {"resource": {"resource": "other"}}});
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{SVMS}/nothing"),
            "application/merge-patch+json",
            Some(&patch),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or_default()
            .contains("resource: Invalid value: \"other\": field is immutable"),
        "{v}"
    );
}
