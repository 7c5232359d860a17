//! The /status and /scale subresources of custom resources, as kube-apiserver serves them: status
//! ignored by main-resource writes and only status changed (and validated) through /status,
//! generation, conflicts, dry run and fieldValidation on subresources, autoscaling/v1 Scale
//! mapped through the CRD's paths, CRD validation of those paths, discovery, `kubectl scale`,
//! `kubectl get --subresource`, and a kube-rs controller writing status while a user edits spec.

mod common;
use common::watch::{get_json, WatchReader};
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// The seed's CRD with status and scale subresources, plus `num` fields capped at 10 in spec
/// and status (to see which part a write validates).
const SUBRESOURCES_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
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
                cronSpec:
                  type: string
                image:
                  type: string
                replicas:
                  type: integer
                num:
                  type: integer
                  maximum: 10
            status:
              type: object
              properties:
                replicas:
                  type: integer
                labelSelector:
                  type: string
                num:
                  type: integer
                  maximum: 10
                observedGeneration:
                  type: integer
      subresources:
        status: {}
        scale:
          specReplicasPath: .spec.replicas
          statusReplicasPath: .status.replicas
          labelSelectorPath: .status.labelSelector
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
"#;

const SEED_CRONTAB: &str = r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
  replicas: 3
"#;

fn crontab(name: &str, spec: Value, status: Value) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": spec,
        "status": status,
    })
}

async fn send(s: &Server, method: &str, path: &str, ctype: &str, body: &Value) -> (u16, Value) {
    s.http_json(method, path, ctype, Some(body)).await
}

async fn create(s: &Server, obj: &Value) -> Value {
    let (code, v) = send(s, "POST", CT, "application/json", obj).await;
    assert_eq!(code, 201, "{v}");
    v
}

fn assert_failure(v: &Value, code: u16, reason: Option<&str>, message: &str) {
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["code"], code, "{v}");
    match reason {
        Some(r) => assert_eq!(v["reason"], r, "{v}"),
        None => assert!(v.get("reason").is_none(), "{v}"),
    }
    assert_eq!(v["message"], message, "{v}");
}

fn generation(v: &Value) -> i64 {
    v["metadata"]["generation"].as_i64().expect("generation")
}

fn rv(v: &Value) -> String {
    v["metadata"]["resourceVersion"]
        .as_str()
        .expect("resourceVersion")
        .to_string()
}

#[tokio::test]
async fn status_is_written_only_through_the_status_subresource() {
    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    let path = format!("{CT}/a");
    let status_path = format!("{path}/status");

    // Create drops status.
    let created = create(&s, &crontab("a", json!({"num": 1}), json!({"num": 1}))).await;
    assert!(created.get("status").is_none(), "{created}");
    assert_eq!(generation(&created), 1);

    // GET /status is the whole object.
    let (code, got) = get_json(&s, &status_path).await;
    assert_eq!(code, 200);
    assert_eq!(got, created);

    // PUT /status changes status only: spec and metadata (labels) come from the stored object.
    let mut body = created.clone();
    body["spec"]["num"] = json!(7);
    body["status"] = json!({"num": 2});
    body["metadata"]["labels"] = json!({"app": "x"});
    let (code, updated) = send(&s, "PUT", &status_path, "application/json", &body).await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["status"], json!({"num": 2}));
    assert_eq!(updated["spec"], json!({"num": 1}));
    assert!(updated["metadata"].get("labels").is_none(), "{updated}");
    assert_eq!(generation(&updated), 1);
    assert_ne!(rv(&updated), rv(&created));

    // PUT of the main resource keeps the stored status and bumps generation for spec changes.
    let mut body = updated.clone();
    body["spec"]["num"] = json!(3);
    body["status"] = json!({"num": 9});
    let (code, main) = send(&s, "PUT", &path, "application/json", &body).await;
    assert_eq!(code, 200, "{main}");
    assert_eq!(main["status"], json!({"num": 2}));
    assert_eq!(main["spec"], json!({"num": 3}));
    assert_eq!(generation(&main), 2);

    // A metadata-only change leaves generation alone.
    let (code, labeled) = send(
        &s,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"team": "a"}}}),
    )
    .await;
    assert_eq!(code, 200, "{labeled}");
    assert_eq!(generation(&labeled), 2);

    // PATCH of the main resource ignores status.
    let (code, patched) = send(
        &s,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &json!({"status": {"num": 5}}),
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["status"], json!({"num": 2}));
    assert_eq!(rv(&patched), rv(&labeled), "a no-op writes nothing");

    // Merge patch on /status: spec in the patch is ignored.
    let (code, patched) = send(
        &s,
        "PATCH",
        &status_path,
        "application/merge-patch+json",
        &json!({"spec": {"num": 999}, "status": {"num": 4}}),
    )
    .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["status"], json!({"num": 4}));
    assert_eq!(patched["spec"], json!({"num": 3}));
    assert_eq!(generation(&patched), 2);
    // The same patch again changes nothing, so the resourceVersion stays.
    let (_, again) = send(
        &s,
        "PATCH",
        &status_path,
        "application/merge-patch+json",
        &json!({"spec": {"num": 999}, "status": {"num": 4}}),
    )
    .await;
    assert_eq!(rv(&again), rv(&patched));

    // JSON patch on /status.
    let (code, jp) = send(
        &s,
        "PATCH",
        &status_path,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/status/num", "value": 6}]),
    )
    .await;
    assert_eq!(code, 200, "{jp}");
    assert_eq!(jp["status"]["num"], 6);

    // Custom resources take no strategic merge patch, on /status neither.
    let (code, v) = send(
        &s,
        "PATCH",
        &status_path,
        "application/strategic-merge-patch+json",
        &json!({"status": {"num": 1}}),
    )
    .await;
    assert_eq!(code, 415, "{v}");
    assert_failure(
        &v,
        415,
        Some("UnsupportedMediaType"),
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    );

    // A stale resourceVersion on /status is a conflict.
    let mut stale = created.clone();
    stale["status"] = json!({"num": 1});
    let (code, v) = send(&s, "PUT", &status_path, "application/json", &stale).await;
    assert_eq!(code, 409, "{v}");
    assert_failure(
        &v,
        409,
        Some("Conflict"),
        "Operation cannot be fulfilled on crontabs.stable.example.com \"a\": the object has been modified; please apply your changes to the latest version and try again",
    );

    // Other verbs on /status are not supported.
    let (code, v) = s
        .http_json("DELETE", &status_path, "application/json", None)
        .await;
    assert_eq!(code, 405, "{v}");
    let (code, _) = send(&s, "POST", &status_path, "application/json", &jp).await;
    assert_eq!(code, 405);
}

#[tokio::test]
async fn status_writes_validate_only_status() {
    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    let status_path = format!("{CT}/v/status");
    let created = create(&s, &crontab("v", json!({"num": 10}), json!({}))).await;

    // Spec in a /status body is ignored, so an invalid value there does not matter.
    let mut body = created.clone();
    body["spec"]["num"] = json!(15);
    body["status"] = json!({"num": 10});
    let (code, ok) = send(&s, "PUT", &status_path, "application/json", &body).await;
    assert_eq!(code, 200, "{ok}");
    assert_eq!(ok["spec"]["num"], 10);

    // Status is validated with the status schema.
    let mut body = ok.clone();
    body["status"]["num"] = json!(15);
    let (code, v) = send(&s, "PUT", &status_path, "application/json", &body).await;
    assert_eq!(code, 422, "{v}");
    assert_failure(
        &v,
        422,
        Some("Invalid"),
        "CronTab.stable.example.com \"v\" is invalid: status.num: Invalid value: 15: num in body should be less than or equal to 10",
    );
    assert_eq!(v["details"]["causes"][0]["field"], "status.num");

    // The main resource validates spec (status there is ignored).
    let mut body = ok.clone();
    body["spec"]["num"] = json!(11);
    body["status"]["num"] = json!(99);
    let (code, v) = send(&s, "PUT", &format!("{CT}/v"), "application/json", &body).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "CronTab.stable.example.com \"v\" is invalid: spec.num: Invalid value: 11: spec.num in body should be less than or equal to 10"
    );

    // Scale status is checked on /status writes: replicas non-negative, the selector a string.
    let mut body = ok.clone();
    body["status"] = json!({"replicas": -1});
    let (code, v) = send(&s, "PUT", &status_path, "application/json", &body).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "CronTab.stable.example.com \"v\" is invalid: .status.replicas: Invalid value: -1: should be a non-negative integer"
    );
}

#[tokio::test]
async fn status_dry_run_field_validation_and_watch() {
    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    let status_path = format!("{CT}/w/status");
    let created = create(&s, &crontab("w", json!({"num": 1}), json!({}))).await;
    let mut watch = WatchReader::open(
        &s,
        &format!("{CT}?watch=1&resourceVersion={}", rv(&created)),
    )
    .await;

    // Dry run answers what would be written and writes nothing.
    let mut body = created.clone();
    body["status"] = json!({"num": 3});
    let (code, dry) = send(
        &s,
        "PUT",
        &format!("{status_path}?dryRun=All"),
        "application/json",
        &body,
    )
    .await;
    assert_eq!(code, 200, "{dry}");
    assert_eq!(dry["status"]["num"], 3);
    let (_, stored) = get_json(&s, &format!("{CT}/w")).await;
    assert!(stored.get("status").is_none(), "{stored}");
    let (code, dry) = send(
        &s,
        "PATCH",
        &format!("{status_path}?dryRun=All"),
        "application/merge-patch+json",
        &json!({"status": {"num": 4}}),
    )
    .await;
    assert_eq!(code, 200, "{dry}");
    assert_eq!(dry["status"]["num"], 4);

    // fieldValidation applies to the whole body of a /status write.
    let mut body = created.clone();
    body["status"] = json!({"num": 3, "bogus": true});
    let (code, v) = send(
        &s,
        "PUT",
        &format!("{status_path}?fieldValidation=Strict"),
        "application/json",
        &body,
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_failure(
        &v,
        400,
        Some("BadRequest"),
        "CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: unknown field \"status.bogus\"",
    );
    let (code, headers, bytes) = s
        .http(
            "PUT",
            &status_path,
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(&body).expect("json")),
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(
        headers
            .get("warning")
            .and_then(|h| h.to_str().ok())
            .unwrap_or(""),
        "299 - \"unknown field \\\"status.bogus\\\"\""
    );
    let written: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(written["status"], json!({"num": 3}));

    // Only the real write reaches watchers: one MODIFIED event with the new status.
    let ev = watch
        .next(Duration::from_secs(5))
        .await
        .expect("watch event");
    assert_eq!(ev["type"], "MODIFIED");
    assert_eq!(ev["object"]["status"], json!({"num": 3}));
    assert_eq!(ev["object"]["metadata"]["resourceVersion"], rv(&written));
    assert!(watch.next(Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn without_the_status_subresource_status_is_an_ordinary_field() {
    let s = Server::start();
    s.apply_yaml(&crontab_crd_with_schema(
        "          type: object\n          x-kubernetes-preserve-unknown-fields: true",
    ));
    let created = create(
        &s,
        &crontab("plain", json!({"a": 1}), json!({"phase": "new"})),
    )
    .await;
    assert_eq!(created["status"], json!({"phase": "new"}));
    let (code, v) = send(
        &s,
        "PATCH",
        &format!("{CT}/plain"),
        "application/merge-patch+json",
        &json!({"status": {"phase": "done"}}),
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["phase"], "done");
    // A status change is a change like any other: generation moves.
    assert_eq!(generation(&v), 2);
    for sub in ["status", "scale", "bogus"] {
        let (code, v) = get_json(&s, &format!("{CT}/plain/{sub}")).await;
        assert_eq!(code, 404, "{v}");
        assert_failure(
            &v,
            404,
            Some("NotFound"),
            "crontabs.stable.example.com \"plain\" not found",
        );
        assert_eq!(
            v["details"],
            json!({"name": "plain", "group": "stable.example.com", "kind": "crontabs"})
        );
    }
}

#[tokio::test]
async fn scale_subresource_over_http() {
    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    let path = format!("{CT}/sc");
    let scale_path = format!("{path}/scale");

    // Without spec replicas, GET fails as upstream's internal error.
    let created = create(&s, &crontab("sc", json!({}), json!({}))).await;
    let (code, v) = get_json(&s, &scale_path).await;
    assert_eq!(code, 500, "{v}");
    assert_failure(
        &v,
        500,
        Some("InternalError"),
        "Internal error occurred: the spec replicas field \".spec.replicas\" does not exist",
    );
    assert_eq!(
        v["details"]["causes"],
        json!([{"message": "the spec replicas field \".spec.replicas\" does not exist"}])
    );
    // A PATCH that does not set replicas cannot fill the gap.
    let (code, v) = send(
        &s,
        "PATCH",
        &scale_path,
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_failure(
        &v,
        400,
        Some("BadRequest"),
        "the spec replicas field \".spec.replicas\" cannot be empty",
    );

    // PATCH sets spec replicas; status replicas default to 0, the selector to "".
    let (code, scale) = send(
        &s,
        "PATCH",
        &scale_path,
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 3}}),
    )
    .await;
    assert_eq!(code, 200, "{scale}");
    let (_, cr) = get_json(&s, &path).await;
    assert_eq!(cr["spec"]["replicas"], 3);
    assert_eq!(generation(&cr), 2);
    assert_eq!(
        scale,
        json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": "sc",
                "namespace": "default",
                "uid": created["metadata"]["uid"],
                "resourceVersion": cr["metadata"]["resourceVersion"],
                "creationTimestamp": created["metadata"]["creationTimestamp"],
            },
            "spec": {"replicas": 3},
            "status": {"replicas": 0},
        })
    );

    // Status replicas and the selector come from the status paths.
    let mut body = cr.clone();
    body["status"] = json!({"replicas": 2, "labelSelector": "app=sc"});
    let (code, v) = send(
        &s,
        "PUT",
        &format!("{path}/status"),
        "application/json",
        &body,
    )
    .await;
    assert_eq!(code, 200, "{v}");
    let (code, scale) = get_json(&s, &scale_path).await;
    assert_eq!(code, 200, "{scale}");
    assert_eq!(
        scale["status"],
        json!({"replicas": 2, "selector": "app=sc"})
    );
    assert_eq!(
        scale["metadata"]["resourceVersion"],
        v["metadata"]["resourceVersion"]
    );

    // PUT: only spec.replicas is taken; the Scale's status is ignored.
    let mut put = scale.clone();
    put["spec"]["replicas"] = json!(5);
    put["status"] = json!({"replicas": 9, "selector": "x"});
    let (code, updated) = send(&s, "PUT", &scale_path, "application/json", &put).await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["spec"]["replicas"], 5);
    assert_eq!(
        updated["status"],
        json!({"replicas": 2, "selector": "app=sc"})
    );
    let (_, cr) = get_json(&s, &path).await;
    assert_eq!(cr["spec"]["replicas"], 5);
    assert_eq!(
        cr["status"],
        json!({"replicas": 2, "labelSelector": "app=sc"})
    );
    assert_eq!(generation(&cr), 3);

    // The Scale's resourceVersion is a precondition: stale is a conflict.
    let (code, v) = send(&s, "PUT", &scale_path, "application/json", &put).await;
    assert_eq!(code, 409, "{v}");
    assert_failure(
        &v,
        409,
        Some("Conflict"),
        "Operation cannot be fulfilled on crontabs.stable.example.com \"sc\": the object has been modified; please apply your changes to the latest version and try again",
    );
    // Without one, the update is unconditional.
    let mut unconditional = put.clone();
    unconditional["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("resourceVersion");
    unconditional["spec"]["replicas"] = json!(6);
    let (code, v) = send(&s, "PUT", &scale_path, "application/json", &unconditional).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["replicas"], 6);

    // JSON patch against the Scale.
    let (code, v) = send(
        &s,
        "PATCH",
        &scale_path,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/replicas", "value": 7}]),
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["replicas"], 7);

    // Scale writes are validated as updates of the object.
    let (code, v) = send(
        &s,
        "PATCH",
        &scale_path,
        "application/merge-patch+json",
        &json!({"spec": {"replicas": -1}}),
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_failure(
        &v,
        422,
        Some("Invalid"),
        "CronTab.stable.example.com \"sc\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer",
    );
    // The main resource is checked the same way (int32 range).
    let mut big = cr.clone();
    big["spec"]["replicas"] = json!(2147483648i64);
    let (_, latest) = get_json(&s, &path).await;
    big["metadata"]["resourceVersion"] = latest["metadata"]["resourceVersion"].clone();
    let (code, v) = send(&s, "PUT", &path, "application/json", &big).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "CronTab.stable.example.com \"sc\" is invalid: .spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"
    );

    // Dry run answers the new Scale and writes nothing.
    let (code, v) = send(
        &s,
        "PATCH",
        &format!("{scale_path}?dryRun=All"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": 1}}),
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["replicas"], 1);
    let (_, cr) = get_json(&s, &path).await;
    assert_eq!(cr["spec"]["replicas"], 7);

    // Bodies: wrong name, wrong kind, wrong types, unknown fields.
    let mut wrong = v.clone();
    wrong["metadata"]["name"] = json!("other");
    let (code, e) = send(&s, "PUT", &scale_path, "application/json", &wrong).await;
    assert_eq!(code, 400, "{e}");
    assert_eq!(
        e["message"],
        "the name of the object (other) does not match the name on the URL (sc)"
    );
    let (code, e) = send(
        &s,
        "PUT",
        &scale_path,
        "application/json",
        &json!({"metadata": {"name": "sc"}, "spec": {"replicas": "3"}}),
    )
    .await;
    assert_eq!(code, 400, "{e}");
    assert_eq!(
        e["message"],
        "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"
    );
    let (code, e) = send(
        &s,
        "PUT",
        &format!("{scale_path}?fieldValidation=Strict"),
        "application/json",
        &json!({"metadata": {"name": "sc"}, "spec": {"replicas": 3, "extra": 1}}),
    )
    .await;
    assert_eq!(code, 400, "{e}");
    assert_eq!(
        e["message"],
        "Scale in version \"v1\" cannot be handled as a Scale: strict decoding error: unknown field \"spec.extra\""
    );
    let (code, e) = send(
        &s,
        "PATCH",
        &scale_path,
        "application/strategic-merge-patch+json",
        &json!({"spec": {"replicas": 3}}),
    )
    .await;
    assert_eq!(code, 415, "{e}");

    // A patch that leaves no Scale behind is refused as upstream's patcher does.
    let (code, e) = send(
        &s,
        "PATCH",
        &scale_path,
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/replicas", "value": "x"}]),
    )
    .await;
    assert_eq!(code, 422, "{e}");
    let msg = e["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
        "{msg}"
    );
    assert!(
        msg.ends_with("\": json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"),
        "{msg}"
    );

    // Table output of a Scale uses the resource's columns (Name, Age here).
    let (code, _, bytes) = s
        .http(
            "GET",
            &scale_path,
            &[("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let table: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(table["kind"], "Table", "{table}");
    assert_eq!(table["rows"][0]["cells"][0], "sc");
}

#[tokio::test]
async fn crd_scale_paths_are_validated() {
    let s = Server::start();
    let crd = SUBRESOURCES_CRD
        .replace(
            "specReplicasPath: .spec.replicas",
            "specReplicasPath: foo,bar",
        )
        .replace(
            "statusReplicasPath: .status.replicas",
            "statusReplicasPath: .spec.replicas",
        )
        .replace(
            "labelSelectorPath: .status.labelSelector",
            "labelSelectorPath: .metadata.labels",
        );
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&crd));
    assert!(!ok);
    assert!(
        err.contains(r#"spec.subresources.scale.specReplicasPath: Invalid value: "foo,bar": must be a simple json path starting with ."#),
        "{err}"
    );
    assert!(
        err.contains(r#"spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status"#),
        "{err}"
    );
    assert!(
        err.contains(r#"spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status"#),
        "{err}"
    );
    let crd =
        SUBRESOURCES_CRD.replace("specReplicasPath: .spec.replicas", "specReplicasPath: \"\"");
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&crd));
    assert!(!ok);
    assert!(
        err.contains("spec.subresources.scale.specReplicasPath: Required value"),
        "{err}"
    );
}

#[tokio::test]
async fn discovery_lists_status_and_scale() {
    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    let (code, v) = get_json(&s, "/apis/stable.example.com/v1").await;
    assert_eq!(code, 200);
    let resources = v["resources"].as_array().expect("resources");
    let names: Vec<&str> = resources
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["crontabs", "crontabs/status", "crontabs/scale"]);
    assert_eq!(
        resources[1],
        json!({"name": "crontabs/status", "singularName": "", "namespaced": true,
            "kind": "CronTab", "verbs": ["get", "patch", "update"]})
    );
    assert_eq!(
        resources[2],
        json!({"name": "crontabs/scale", "singularName": "", "namespaced": true,
            "group": "autoscaling", "version": "v1", "kind": "Scale",
            "verbs": ["get", "patch", "update"]})
    );
    let out = s.kubectl_ok(&[
        "api-resources",
        "--api-group=stable.example.com",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "crontabs.stable.example.com");
}

#[tokio::test]
async fn kubectl_scale_and_subresource_gets() {
    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    s.apply_yaml(SEED_CRONTAB);

    // The seed's walkthrough.
    let out = s.kubectl_ok(&["scale", "--replicas=5", "crontabs/my-new-cron-object"]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object scaled"
    );
    let out = s.kubectl_ok(&[
        "get",
        "crontabs",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(out, "5");

    // With a precondition kubectl reads the Scale and PUTs it back.
    let out = s.kubectl_ok(&[
        "scale",
        "--current-replicas=5",
        "--replicas=2",
        "crontab/my-new-cron-object",
    ]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object scaled"
    );
    let (ok, _, err) = s.kubectl(&[
        "scale",
        "--current-replicas=5",
        "--replicas=1",
        "crontab/my-new-cron-object",
    ]);
    assert!(!ok);
    assert!(err.contains("Expected replicas to be 5, was 2"), "{err}");
    let out = s.kubectl_ok(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(out, "2");

    // kubectl get --subresource.
    let out = s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "--subresource=scale",
        "-o",
        "jsonpath={.kind} {.spec.replicas} {.status.replicas}",
    ]);
    assert_eq!(out, "Scale 2 0");
    let status = r#"{"status":{"replicas":2,"labelSelector":"app=cron"}}"#;
    s.kubectl_ok(&[
        "patch",
        "crontab",
        "my-new-cron-object",
        "--subresource=status",
        "--type=merge",
        "-p",
        status,
    ]);
    let out = s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "--subresource=status",
        "-o",
        "jsonpath={.status.labelSelector} {.spec.replicas}",
    ]);
    assert_eq!(out, "app=cron 2");
    let out = s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "--subresource=status",
    ]);
    assert!(out.starts_with("NAME"), "{out}");
    assert!(out.contains("my-new-cron-object"), "{out}");
    // kubectl apply of status does nothing to it.
    s.apply_yaml(&format!(
        "{SEED_CRONTAB}status:\n  replicas: 9\n  labelSelector: other\n"
    ));
    let out = s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "-o",
        "jsonpath={.status.replicas} {.status.labelSelector} {.spec.replicas}",
    ]);
    assert_eq!(out, "2 app=cron 3");
}

/// A controller writes only status (kube-rs `patch_status`) in a loop while a user edits spec:
/// neither write undoes the other, and generation counts only the spec edits.
#[tokio::test]
async fn kube_rs_controller_status_and_user_spec_do_not_overwrite_each_other() {
    use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};

    let s = Server::start();
    s.apply_yaml(SUBRESOURCES_CRD);
    s.apply_yaml(SEED_CRONTAB);
    let client = s.client().await;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("stable.example.com", "v1", "CronTab"),
        "crontabs",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let name = "my-new-cron-object";

    // The controller: observes the object and reports status.replicas = spec.replicas and
    // status.observedGeneration, through /status only.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let controller = {
        let api = api.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut writes = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let obj = api.get(name).await.expect("controller get");
                let spec_replicas = obj.data["spec"]["replicas"].as_i64().unwrap_or(0);
                let generation = obj.metadata.generation.unwrap_or(0);
                let patch = json!({
                    // Spec in a status patch is ignored by the server.
                    "spec": {"image": "controller-must-not-win"},
                    "status": {"replicas": spec_replicas, "observedGeneration": generation},
                });
                let updated = api
                    .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .expect("patch_status");
                assert_ne!(updated.data["spec"]["image"], "controller-must-not-win");
                assert!(
                    updated.metadata.generation >= Some(generation),
                    "generation never goes back"
                );
                assert!(updated.data["status"]["replicas"].as_i64().unwrap_or(-1) >= 0);
                writes += 1;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            writes
        })
    };

    // The user edits spec, alternately with kube-rs and kubectl, and tries to set status.
    for i in 0..10i64 {
        if i % 2 == 0 {
            let patch = json!({"spec": {"replicas": i + 10, "image": format!("img-{i}")}, "status": {"replicas": -5}});
            let v = api
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("user patch");
            assert_eq!(v.data["spec"]["image"], format!("img-{i}"));
        } else {
            let patch =
                json!({"spec": {"replicas": i + 10, "image": format!("img-{i}")}}).to_string();
            s.kubectl_ok(&["patch", "crontab", name, "--type=merge", "-p", &patch]);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let writes = controller.await.expect("controller task");
    assert!(writes > 0);

    // One last controller pass settles status on the final spec.
    let obj = api.get(name).await.expect("get");
    let generation = obj.metadata.generation.expect("generation");
    // Created at 1, then ten spec edits.
    assert_eq!(generation, 11);
    assert_eq!(obj.data["spec"]["image"], "img-9");
    assert_eq!(obj.data["spec"]["replicas"], 19);
    let patch = json!({"status": {"replicas": 19, "observedGeneration": generation}});
    let after = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch_status");
    assert_eq!(
        after.metadata.generation,
        Some(11),
        "status writes leave generation"
    );
    assert_eq!(
        after.data["spec"]["image"], "img-9",
        "status writes leave spec"
    );
    assert_eq!(
        after.data["status"],
        json!({"replicas": 19, "observedGeneration": 11})
    );
    // A user edit after that keeps the controller's status, and the user's status is ignored.
    let patch = json!({"spec": {"image": "final"}, "status": {"replicas": -5}});
    let v = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("user patch");
    assert_eq!(
        v.data["status"],
        json!({"replicas": 19, "observedGeneration": 11})
    );
    assert_eq!(v.metadata.generation, Some(12));
    let status = api.get_status(name).await.expect("get_status");
    assert_eq!(status.data["spec"]["image"], "final");

    // kube-rs' typed Scale calls.
    let scale = api.get_scale(name).await.expect("get_scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(19));
    assert_eq!(scale.status.map(|s| s.replicas), Some(19));
    let scale = api
        .patch_scale(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("patch_scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    let obj = api.get(name).await.expect("get");
    assert_eq!(obj.data["spec"]["replicas"], 4);
    assert_eq!(obj.metadata.generation, Some(13));
}
