//! Server-side apply and managedFields through the real binary: kubectl's `apply
//! --server-side` (conflicts, `--force-conflicts`, dry run), the options' validation and the
//! 409 Status with its causes by raw HTTP, Update entries of ordinary writes, /status applies,
//! and a built-in kind's removal of fields an applier stops applying.

mod common;
use common::*;
use serde_json::{json, Value};

const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const APPLY: &str = "application/apply-patch+yaml";

/// An object as `kubectl get -o json --show-managed-fields` prints it.
fn shown(s: &Server, kind: &str, name: &str) -> Value {
    let out = s.kubectl_ok(&["get", kind, name, "-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&out).expect("json")
}

fn managed(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
    obj.pointer("/metadata/managedFields")?
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
}

#[test]
fn kubectl_server_side_apply_conflicts_and_force() {
    let s = Server::start();
    let (ok, out, err) = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(CRONTAB_CRD));
    assert!(ok, "{out}{err}");
    assert!(out.contains("serverside-applied"), "{out}");
    s.wait_established("crontabs.stable.example.com");
    let (ok, out, err) = s.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=deployer",
            "-f",
            "-",
        ],
        Some(MY_CRONTAB),
    );
    assert!(ok, "{out}{err}");
    let (ok, out, err) = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(MY_CRONTAB));
    assert!(ok, "{out}{err}");
    let v: Value = shown(&s, "crontab", "my-new-cron-object");
    let e = entry(&v, "kubectl", "Apply").expect("an Apply entry for kubectl");
    // The same values applied by two managers: both own them.
    let d = entry(&v, "deployer", "Apply").expect("an Apply entry for deployer");
    assert_eq!(d["fieldsV1"], e["fieldsV1"]);
    assert_eq!(e["apiVersion"], "stable.example.com/v1");
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:spec": {"f:cronSpec": {}, "f:image": {}}})
    );
    // Hidden by kubectl unless asked for.
    let plain = s.kubectl_ok(&["get", "crontab", "my-new-cron-object", "-o", "yaml"]);
    assert!(!plain.contains("managedFields"), "{plain}");

    // Another manager changes the image; re-applying another value conflicts.
    s.kubectl_ok(&[
        "patch",
        "crontab",
        "my-new-cron-object",
        "--type=merge",
        "-p",
        r#"{"spec":{"image":"theirs"}}"#,
    ]);
    let mine = MY_CRONTAB.replace("my-awesome-cron-image", "mine");
    let (ok, _, err) = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&mine));
    assert!(!ok);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "kubectl-patch" using stable.example.com/v1: .spec.image"#),
        "{err}"
    );
    // The same value is shared ownership, no conflict.
    let same = MY_CRONTAB.replace("my-awesome-cron-image", "theirs");
    let (ok, _, err) = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&same));
    assert!(ok, "{err}");
    // Dry run: answered, nothing stored.
    let (ok, _, err) = s.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--dry-run=server",
            "-f",
            "-",
        ],
        Some(&mine),
    );
    assert!(ok, "{err}");
    let image = s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.image}",
    ]);
    assert_eq!(image, "theirs");
    // kubectl diff: a server-side dry-run apply shows the change (exit status 1), stores
    // nothing.
    let (ok, out, err) = s.kubectl_stdin(
        &["diff", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&mine),
    );
    assert!(!ok, "diff found no change: {out}{err}");
    assert!(
        out.contains("-  image: theirs") && out.contains("+  image: mine"),
        "{out}{err}"
    );
    // Forced: the field changes hands; kubectl-patch owned nothing else and is gone.
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&mine),
    );
    assert!(ok, "{err}");
    let v: Value = shown(&s, "crontab", "my-new-cron-object");
    assert_eq!(v["spec"]["image"], "mine");
    assert!(entry(&v, "kubectl-patch", "Update").is_none(), "{v}");
    s.stop();
}

#[tokio::test]
async fn options_conflict_status_and_status_subresource() {
    let s = Server::start();
    s.install_crd(
        &CRONTAB_CRD
            .replace(
                "      served: true",
                "      served: true\n      subresources:\n        status: {}",
            )
            .replace(
                "            spec:\n              type: object",
                "            status:\n              type: object\n              x-kubernetes-preserve-unknown-fields: true\n            spec:\n              type: object",
            ),
    );
    let body = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nspec:\n  image: one\n";
    let path = format!("{CRONTABS}/a");
    let apply = |query: &str| format!("{path}{query}");
    // fieldManager is required.
    let (code, _, bytes) = s
        .http(
            "PATCH",
            &apply(""),
            &[("Content-Type", APPLY)],
            Some(body.into()),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#
    );
    // force belongs to apply.
    let (code, _, bytes) = s
        .http(
            "PATCH",
            &apply("?force=true"),
            &[("Content-Type", "application/merge-patch+json")],
            Some(b"{}".to_vec()),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch"#
    );
    // Bodies that are not an object, as upstream's applyPatcher reads them into a map.
    for (body, message) in [
        ("[1]", "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("null", "invalid object type: /, Kind="),
    ] {
        let (code, _, bytes) = s
            .http(
                "PATCH",
                &apply("?fieldManager=alice"),
                &[("Content-Type", APPLY)],
                Some(body.into()),
            )
            .await;
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!((code, v["message"].as_str()), (400, Some(message)), "{v}");
    }
    // Apply creates (201), then updates (200).
    let (code, _, bytes) = s
        .http(
            "PATCH",
            &apply("?fieldManager=alice"),
            &[("Content-Type", APPLY)],
            Some(body.into()),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&bytes));
    let (code, _, _) = s
        .http(
            "PATCH",
            &apply("?fieldManager=alice"),
            &[("Content-Type", APPLY)],
            Some(body.into()),
        )
        .await;
    assert_eq!(code, 200);
    // Another applier, another value: 409 with causes.
    let bob = body.replace("one", "two");
    let (code, _, bytes) = s
        .http(
            "PATCH",
            &apply("?fieldManager=bob"),
            &[("Content-Type", APPLY)],
            Some(bob.clone().into()),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, 409, "{v}");
    assert_eq!(v["reason"], "Conflict");
    assert_eq!(
        v["message"],
        r#"Apply failed with 1 conflict: conflict with "alice": .spec.image"#
    );
    assert_eq!(
        v["details"],
        json!({"causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.image"}]})
    );
    // A controller applies status through /status; the main resource ignores status.
    let status = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nstatus:\n  phase: Running\n";
    let (code, _, bytes) = s
        .http(
            "PATCH",
            &format!("{path}/status?fieldManager=ctrl"),
            &[("Content-Type", APPLY)],
            Some(status.into()),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["phase"], "Running");
    let e = entry(&v, "ctrl", "Apply").expect("status apply entry");
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
    assert!(entry(&v, "alice", "Apply").is_some());
    // Ordinary writes are Update entries, named after fieldManager or the User-Agent.
    let (code, v) = s
        .http_json(
            "POST",
            CRONTABS,
            "application/json",
            Some(
                &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                        "metadata": {"name": "b"}, "spec": {"image": "x"}}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let m = managed(&v);
    assert_eq!(m.len(), 1, "{v}");
    assert_eq!(m[0]["operation"], "Update");
    assert_eq!(m[0]["apiVersion"], "stable.example.com/v1");
    assert!(m[0]["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert_eq!(
        m[0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:image": {}}})
    );
    // A client clears managedFields with [{}] (an empty entry), as the docs describe.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CRONTABS}/b"),
            "application/merge-patch+json",
            Some(&json!({"metadata": {"managedFields": [{}]}})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert!(managed(&v).is_empty(), "{v}");
    // 415 lists apply among the patch types.
    let (code, _, bytes) = s
        .http(
            "PATCH",
            &path,
            &[("Content-Type", "text/plain")],
            Some(b"x".to_vec()),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, 415, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("application/apply-patch+yaml"),
        "{v}"
    );
    s.stop();
}

/// kubectl create records an Update by kubectl-create; a built-in kind's apply removes the
/// keys its applier stops applying.
#[tokio::test]
async fn builtin_kinds_apply_and_record_updates() {
    let s = Server::start();
    s.kubectl_ok(&["create", "configmap", "made", "--from-literal=a=b"]);
    let v: Value = shown(&s, "configmap", "made");
    let e = entry(&v, "kubectl-create", "Update").expect("kubectl-create's Update entry");
    assert_eq!(e["fieldsV1"], json!({"f:data": {".": {}, "f:a": {}}}));
    // Defaults come before the field manager, as the decoder's: the namespace label, a
    // Service port's protocol (a list-map key), as kube-apiserver records them.
    s.kubectl_ok(&["create", "namespace", "made"]);
    let (_, ns) = s
        .http_json("GET", "/api/v1/namespaces/made", "application/json", None)
        .await;
    let e = entry(&ns, "kubectl-create", "Update").expect("namespace entry");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})
    );
    s.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    let (_, svc) = s
        .http_json(
            "GET",
            "/api/v1/namespaces/default/services/web",
            "application/json",
            None,
        )
        .await;
    let e = entry(&svc, "kubectl-create", "Update").expect("service entry");
    let ports = &e["fieldsV1"]["f:spec"]["f:ports"];
    assert!(
        ports.get(r#"k:{"port":80,"protocol":"TCP"}"#).is_some(),
        "{e}"
    );
    let cm = |keys: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n{keys}")
    };
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "--server-side", "-f", "-"],
        Some(&cm("  one: \"1\"\n  two: \"2\"\n")),
    );
    assert!(ok, "{err}");
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "--server-side", "-f", "-"],
        Some(&cm("  one: \"1\"\n")),
    );
    assert!(ok, "{err}");
    let data = s.kubectl_ok(&["get", "configmap", "applied", "-o", "jsonpath={.data}"]);
    assert_eq!(data, r#"{"one":"1"}"#);
    s.stop();
}

/// `kubectl scale` is recorded as an Update of the replicas under subresource "scale".
#[test]
fn scale_writes_are_recorded_under_the_scale_subresource() {
    let s = Server::start();
    s.install_crd(
        &CRONTAB_CRD
            .replace(
                "      served: true",
                "      served: true\n      subresources:\n        status: {}\n        scale:\n          specReplicasPath: .spec.replicas\n          statusReplicasPath: .status.replicas",
            )
            .replace(
                "            spec:\n              type: object",
                "            status:\n              type: object\n              properties:\n                replicas:\n                  type: integer\n            spec:\n              type: object",
            ),
    );
    s.apply_yaml(MY_CRONTAB);
    s.kubectl_ok(&["scale", "crontab", "my-new-cron-object", "--replicas=3"]);
    let v: Value = shown(&s, "crontab", "my-new-cron-object");
    assert_eq!(v["spec"]["replicas"], 3);
    let scale = managed(&v)
        .into_iter()
        .find(|e| e["subresource"] == "scale")
        .unwrap_or_else(|| panic!("no scale entry: {v}"));
    assert_eq!(scale["operation"], "Update");
    assert_eq!(scale["manager"], "kubectl");
    assert_eq!(scale["apiVersion"], "stable.example.com/v1");
    assert_eq!(scale["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));

    // Apply through /scale: an autoscaler owning the replicas.
    let body = r#"{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"my-new-cron-object","namespace":"default"},"spec":{"replicas":5}}"#;
    let out = s
        .curl(&[
            "-s",
            "-X",
            "PATCH",
            "-H",
            "Content-Type: application/apply-patch+yaml",
            "--data",
            body,
            &format!(
                "{}/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object/scale?fieldManager=hpa&force=true",
                s.base
            ),
        ])
        .expect("curl");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["kind"], "Scale", "{answer}");
    assert_eq!(answer["spec"]["replicas"], 5, "{answer}");
    let v: Value = shown(&s, "crontab", "my-new-cron-object");
    assert_eq!(v["spec"]["replicas"], 5);
    let hpa = entry(&v, "hpa", "Apply").unwrap_or_else(|| panic!("no hpa entry: {v}"));
    assert_eq!(hpa["subresource"], "scale");
    assert_eq!(hpa["apiVersion"], "stable.example.com/v1");
    assert_eq!(hpa["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    // The replicas changed hands: kubectl's scale entry no longer owns them.
    assert!(
        managed(&v)
            .iter()
            .all(|e| e["manager"] != "kubectl" || e["subresource"] != "scale"),
        "{v}"
    );
    s.stop();
}

/// An object made with client-side `kubectl apply` moves to server-side apply without
/// conflicts: kubectl rewrites the client-side manager's entry, the server takes the
/// last-applied annotation into account.
#[test]
fn client_side_apply_upgrades_to_server_side() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    s.apply_yaml(MY_CRONTAB);
    let changed = MY_CRONTAB.replace("my-awesome-cron-image", "ssa-image");
    let (ok, out, err) = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&changed));
    assert!(ok, "{out}{err}");
    let v: Value = shown(&s, "crontab", "my-new-cron-object");
    assert_eq!(v["spec"]["image"], "ssa-image");
    let e = entry(&v, "kubectl", "Apply").expect("kubectl's Apply entry");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:spec": {"f:cronSpec": {}, "f:image": {}}})
    );
    assert!(
        entry(&v, "kubectl-client-side-apply", "Update").is_none(),
        "{v}"
    );
    s.stop();
}

/// Events are written in one version and stored in the other: their writes are recorded in
/// the request's version, and read the same through both.
#[tokio::test]
async fn events_record_managed_fields_in_the_request_version() {
    let s = Server::start();
    let ev = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "default", "apiVersion": "v1"},
        "reason": "Made", "message": "hello", "type": "Normal", "source": {"component": "me"},
        "count": 1, "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z"});
    let (code, v) = s
        .http_json(
            "POST",
            "/api/v1/namespaces/default/events?fieldManager=recorder",
            "application/json",
            Some(&ev),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let e = entry(&v, "recorder", "Update").expect("recorder entry");
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["fieldsV1"]["f:message"], json!({}));
    let (code, modern) = s
        .http_json(
            "GET",
            "/apis/events.k8s.io/v1/namespaces/default/events/e1",
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(managed(&modern), managed(&v));
    let (code, v) = s
        .http_json(
            "PATCH",
            "/api/v1/namespaces/default/events/e1?fieldManager=editor",
            "application/merge-patch+json",
            Some(&json!({"message": "changed"})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    let e = entry(&v, "editor", "Update").expect("editor entry");
    assert_eq!(e["fieldsV1"], json!({"f:message": {}}));
    let r = entry(&v, "recorder", "Update").expect("recorder entry");
    assert!(r["fieldsV1"].get("f:message").is_none(), "{v}");
    s.stop();
}

/// Issue 28 item 2: re-applying the same configuration is a no-op even when the merge sees a
/// change before defaulting (an atomic list whose items the schema defaults): upstream keeps
/// the managedFields times when nothing else changed (IgnoreManagedFieldsTimestampsTransformer),
/// so neither resourceVersion nor managedFields move. A real change still moves both.
#[test]
fn a_reapply_that_only_defaulting_changed_writes_nothing() {
    let s = Server::start();
    s.install_crd(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 3}
              items:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    proto: {type: string, default: TCP}
"#,
    );
    let config = |items: &str| {
        format!(
            "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {{name: g1, namespace: default}}\nspec: {{items: [{items}]}}\n"
        )
    };
    let apply = |yaml: &str| {
        let (ok, out, err) = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(yaml));
        assert!(ok, "{out}{err}");
    };
    apply(&config("{name: a}"));
    let first = shown(&s, "gadget", "g1");
    assert_eq!(
        first["spec"]["items"],
        json!([{"name": "a", "proto": "TCP"}])
    );
    // managedFields times have a one-second resolution: a second apply in a later second.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    apply(&config("{name: a}"));
    let second = shown(&s, "gadget", "g1");
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    assert_eq!(managed(&second), managed(&first));
    // A change is written, with a new time.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    apply(&config("{name: b}"));
    let third = shown(&s, "gadget", "g1");
    assert_ne!(
        third["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    assert_eq!(
        third["spec"]["items"],
        json!([{"name": "b", "proto": "TCP"}])
    );
    let t = |o: &Value| entry(o, "kubectl", "Apply").expect("entry")["time"].clone();
    assert_ne!(t(&third), t(&first));
}
