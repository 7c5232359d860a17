//! Dry run (`dryRun=All`) as kube-apiserver does it: every stage runs (defaulting, validation,
//! namespace admission, conflict checks) and the answer is what would have been written, with
//! the usual status code, but nothing is persisted and no watch event is sent. With kubectl's
//! `--dry-run=server` and raw HTTP.

mod common;
use common::watch::{create_namespace, get_json, WatchReader};
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// The CronTab CRD with a defaulted, validated field.
fn crd() -> String {
    crontab_crd_with_schema(
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
                cronSpec:
                  type: string
                image:
                  type: string
                replicas:
                  type: integer
                  minimum: 1
                  default: 1"#,
    )
}

fn crontab(name: &str, finalizers: &[&str]) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "finalizers": finalizers},
        "spec": {"cronSpec": "* * * * */5", "image": "img"},
    })
}

#[test]
fn kubectl_server_dry_run() {
    let s = Server::start();
    s.apply_yaml(&crd());

    let (ok, out, err) =
        s.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], Some(MY_CRONTAB));
    assert!(ok, "{err}");
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object created (server dry run)"
    );
    let (ok, out, err) = s.kubectl(&["get", "crontabs"]);
    assert!(ok && out.is_empty(), "{out}{err}");
    assert_eq!(err.trim(), "No resources found in default namespace.");

    // The would-be object is defaulted and has its system metadata.
    let (ok, out, err) = s.kubectl_stdin(
        &["create", "--dry-run=server", "-o", "json", "-f", "-"],
        Some(MY_CRONTAB),
    );
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["spec"]["replicas"], 1, "{v}");
    assert!(v["metadata"]["uid"].is_string() && v["metadata"]["creationTimestamp"].is_string());
    assert_eq!(v["metadata"]["generation"], 1);

    s.apply_yaml(MY_CRONTAB);
    let changed = MY_CRONTAB.replace("my-awesome-cron-image", "another-image");
    let (ok, out, err) = s.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], Some(&changed));
    assert!(ok, "{err}");
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object configured (server dry run)"
    );
    let image = s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.image}",
    ]);
    assert_eq!(image, "my-awesome-cron-image");

    // Validation runs: an invalid change fails as it would for real.
    let invalid = MY_CRONTAB.replace(
        "  image: my-awesome-cron-image\n",
        "  image: my-awesome-cron-image\n  replicas: 0\n",
    );
    let (ok, _, err) = s.kubectl_stdin(&["apply", "--dry-run=server", "-f", "-"], Some(&invalid));
    assert!(!ok);
    assert!(
        err.contains("spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
        "{err}"
    );

    let out = s.kubectl_ok(&[
        "delete",
        "crontab",
        "my-new-cron-object",
        "--dry-run=server",
    ]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com \"my-new-cron-object\" deleted (server dry run)"
    );
    s.kubectl_ok(&["get", "crontab", "my-new-cron-object"]);

    // Admission runs: no content in a namespace that does not exist.
    let (ok, _, err) = s.kubectl_stdin(
        &["create", "--dry-run=server", "-n", "nowhere", "-f", "-"],
        Some(MY_CRONTAB),
    );
    assert!(!ok);
    assert!(err.contains(r#"namespaces "nowhere" not found"#), "{err}");
}

#[tokio::test]
async fn raw_dry_run_writes_nothing_and_sends_no_event() {
    let s = Server::start();
    s.apply_yaml(&crd());
    let (_, held) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(&crontab("held", &["example.com/hold"])),
        )
        .await;
    let (_, free) = s
        .http_json("POST", CT, "application/json", Some(&crontab("free", &[])))
        .await;
    let (_, list) = get_json(&s, CT).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let mut w = WatchReader::open(
        &s,
        &format!("{CT}?watch=1&resourceVersion={rv}&timeoutSeconds=3"),
    )
    .await;
    assert_eq!(w.status, 200);

    // POST: 201 with the would-be object; conflicts and admission as for real.
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{CT}?dryRun=All"),
            "application/json",
            Some(&crontab("new", &[])),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["replicas"], 1, "{v}");
    assert!(v["metadata"]["uid"].is_string(), "{v}");
    let (code, _) = get_json(&s, &format!("{CT}/new")).await;
    assert_eq!(code, 404);
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{CT}?dryRun=All"),
            "application/json",
            Some(&crontab("held", &[])),
        )
        .await;
    assert_eq!(code, 409, "{v}");
    assert_eq!(v["reason"], "AlreadyExists");
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/stable.example.com/v1/namespaces/nowhere/crontabs?dryRun=All",
            "application/json",
            Some(&crontab("x", &[])),
        )
        .await;
    assert_eq!(code, 404, "{v}");
    assert_eq!(v["message"], r#"namespaces "nowhere" not found"#);
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{CT}?dryRun=Yes"),
            "application/json",
            Some(&crontab("x", &[])),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All""#
    );

    // PUT: a stale resourceVersion conflicts; a good one answers the updated object.
    let mut put = free.clone();
    put["spec"]["image"] = json!("other");
    put["metadata"]["resourceVersion"] = json!("1");
    let (code, v) = s
        .http_json(
            "PUT",
            &format!("{CT}/free?dryRun=All"),
            "application/json",
            Some(&put),
        )
        .await;
    assert_eq!(code, 409, "{v}");
    assert_eq!(v["reason"], "Conflict");
    put["metadata"]["resourceVersion"] = free["metadata"]["resourceVersion"].clone();
    let (code, v) = s
        .http_json(
            "PUT",
            &format!("{CT}/free?dryRun=All"),
            "application/json",
            Some(&put),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        (&v["spec"]["image"], &v["metadata"]["generation"]),
        (&json!("other"), &json!(2))
    );

    // PATCH.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CT}/free?dryRun=All"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"image": "patched"}})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["image"], "patched");
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CT}/free?dryRun=All"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"replicas": 0}})),
        )
        .await;
    assert_eq!(code, 422, "{v}");

    // DELETE of an object with finalizers: the object as it would be marked.
    let (code, v) = s
        .http_json("DELETE", &format!("{CT}/held?dryRun=All"), "", None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    assert_eq!(v["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        v["metadata"]["resourceVersion"],
        held["metadata"]["resourceVersion"]
    );
    // DELETE of one without: the Success Status, from a body's dryRun.
    let (code, v) = s
        .http_json(
            "DELETE",
            &format!("{CT}/free"),
            "application/json",
            Some(&json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"], "Success", "{v}");
    // deletecollection answers what it would delete.
    let (code, v) = s
        .http_json("DELETE", &format!("{CT}?dryRun=All"), "", None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["kind"], "CronTabList");
    let names: Vec<&str> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["free", "held"]);

    // Nothing changed, nothing was announced.
    for (name, before) in [("held", &held), ("free", &free)] {
        let (code, now) = get_json(&s, &format!("{CT}/{name}")).await;
        assert_eq!(code, 200, "{name}");
        assert_eq!(&now, before, "{name}");
    }
    let events = w.until_end(Duration::from_secs(10)).await;
    assert!(events.is_empty(), "dry runs sent events: {events:?}");
    assert!(w.has_ended());

    // Dry runs against a terminating namespace are refused as real creates are.
    create_namespace(&s, "going").await;
    let path = "/apis/stable.example.com/v1/namespaces/going/crontabs";
    let (code, _) = s
        .http_json(
            "POST",
            path,
            "application/json",
            Some(&crontab("stay", &["example.com/hold"])),
        )
        .await;
    assert_eq!(code, 201);
    s.kubectl_ok(&["delete", "namespace", "going", "--wait=false"]);
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{path}?dryRun=All"),
            "application/json",
            Some(&crontab("x", &[])),
        )
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(v["details"]["causes"][0]["reason"], "NamespaceTerminating");
    // A dry-run delete of a namespace answers it terminating and leaves it active.
    create_namespace(&s, "calm").await;
    let (code, v) = s
        .http_json("DELETE", "/api/v1/namespaces/calm?dryRun=All", "", None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["phase"], "Terminating", "{v}");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    let (_, ns) = get_json(&s, "/api/v1/namespaces/calm").await;
    assert_eq!(ns["status"]["phase"], "Active", "{ns}");
    assert!(ns["metadata"].get("deletionTimestamp").is_none(), "{ns}");
}
