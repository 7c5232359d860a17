//! Deletion as kube-apiserver does it: finalizers (deletionTimestamp, only removal afterwards,
//! deleted once the last one goes), DELETE answers and codes, DeleteOptions (preconditions,
//! propagationPolicy, gracePeriodSeconds, body or query, JSON or YAML), ownerReferences
//! validation and namespace deletion waiting for finalizers. With kubectl, kube-rs and raw HTTP.

mod common;
use common::watch::{create_namespace, get_json, summary, WatchReader};
use common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const HOLD: &str = "example.com/hold";

fn crontab(name: &str, finalizers: &[&str]) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "finalizers": finalizers},
        "spec": {"cronSpec": "* * * * */5", "image": "img"},
    })
}

async fn create(s: &Server, path: &str, obj: &Value) -> Value {
    let (code, v) = s
        .http_json("POST", path, "application/json", Some(obj))
        .await;
    assert_eq!(code, 201, "{v}");
    v
}

/// DELETE with a JSON body (`None`: no body) and optional query.
async fn delete(s: &Server, path: &str, body: Option<Value>) -> (u16, Value) {
    s.http_json("DELETE", path, "application/json", body.as_ref())
        .await
}

fn assert_failure(v: &Value, code: u16, reason: &str, message: &str) {
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["status"], "Failure", "{v}");
    assert_eq!(v["code"], code, "{v}");
    assert_eq!(v["reason"], reason, "{v}");
    assert_eq!(v["message"], message, "{v}");
}

#[tokio::test]
async fn kubectl_finalizer_lifecycle_and_watch() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    let obj = MY_CRONTAB.replace(
        "  name: my-new-cron-object\n",
        "  name: my-new-cron-object\n  finalizers:\n  - example.com/hold\n",
    );
    let out = s.apply_yaml(&obj);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object created"
    );
    let path = format!("{CT}/my-new-cron-object");
    let (_, created) = get_json(&s, &path).await;
    let mut w = WatchReader::open(
        &s,
        &format!(
            "{CT}?watch=1&resourceVersion={}",
            created["metadata"]["resourceVersion"].as_str().expect("rv")
        ),
    )
    .await;

    let out = s.kubectl_ok(&["delete", "crontab", "my-new-cron-object", "--wait=false"]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com \"my-new-cron-object\" deleted"
    );
    let got: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "-o",
        "json",
    ]))
    .expect("json");
    let m = &got["metadata"];
    assert!(m["deletionTimestamp"].as_str().is_some(), "{got}");
    assert_eq!(m["deletionGracePeriodSeconds"], 0, "{got}");
    assert_eq!(m["finalizers"], json!([HOLD]), "{got}");
    // Marking for deletion bumps the generation, as markAsDeleting does.
    assert_eq!(m["generation"], 2, "{got}");
    let ev = w
        .next(Duration::from_secs(5))
        .await
        .expect("MODIFIED event");
    assert_eq!(ev["type"], "MODIFIED", "{ev}");
    assert!(ev["object"]["metadata"]["deletionTimestamp"].is_string());

    // A second delete changes nothing.
    s.kubectl_ok(&["delete", "crontab", "my-new-cron-object", "--wait=false"]);
    let (_, mut again) = get_json(&s, &path).await;
    // kubectl's output hides managedFields; the raw read has them.
    let managed = again["metadata"]["managedFields"].take();
    assert!(managed.is_array(), "{again}");
    again["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    assert_eq!(again["metadata"], got["metadata"]);

    // Finalizers may only be removed now.
    let (ok, _, err) = s.kubectl(&[
        "patch",
        "crontab",
        "my-new-cron-object",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold","example.com/other"]}}"#,
    ]);
    assert!(!ok);
    assert!(
        err.contains(r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}"#),
        "{err}"
    );
    // Nor can the deletion be undone.
    let (code, v) = s
        .http_json(
            "PATCH",
            &path,
            "application/merge-patch+json",
            Some(&json!({"metadata": {"deletionTimestamp": null}})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["metadata"]["deletionTimestamp"],
        got["metadata"]["deletionTimestamp"]
    );

    // Patching the last finalizer away deletes the object.
    s.kubectl_ok(&[
        "patch",
        "crontab",
        "my-new-cron-object",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let (ok, _, err) = s.kubectl(&["get", "crontab", "my-new-cron-object"]);
    assert!(!ok);
    assert!(
        err.contains(r#"crontabs.stable.example.com "my-new-cron-object" not found"#),
        "{err}"
    );
    let ev = w.next(Duration::from_secs(5)).await.expect("DELETED event");
    assert_eq!(
        summary(&[ev]),
        [("DELETED".to_string(), "my-new-cron-object".to_string())]
    );
}

#[tokio::test]
async fn delete_answers_preconditions_and_options() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);

    // Deleted at once: 200 and a Success Status naming the resource.
    let a = create(&s, CT, &crontab("a", &[])).await;
    let (code, v) = delete(&s, &format!("{CT}/a"), None).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
               "details": {"name": "a", "group": "stable.example.com", "kind": "crontabs",
                           "uid": a["metadata"]["uid"]}})
    );
    let (code, v) = delete(&s, &format!("{CT}/a"), None).await;
    assert_failure(
        &v,
        404,
        "NotFound",
        r#"crontabs.stable.example.com "a" not found"#,
    );
    assert_eq!(code, 404);

    // Preconditions: 409 worded as the generic registry words them, naming the kind.
    let b = create(&s, CT, &crontab("b", &[])).await;
    let uid = b["metadata"]["uid"].as_str().expect("uid").to_string();
    let rv = b["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let (code, v) = delete(
        &s,
        &format!("{CT}/b"),
        Some(json!({"preconditions": {"uid": "not-the-uid"}})),
    )
    .await;
    assert_eq!(code, 409);
    assert_failure(&v, 409, "Conflict", &format!("Operation cannot be fulfilled on CronTab.stable.example.com \"b\": the UID in the precondition (not-the-uid) does not match the UID in record ({uid}). The object might have been deleted and then recreated"));
    assert_eq!(
        v["details"],
        json!({"name": "b", "group": "stable.example.com", "kind": "CronTab"})
    );
    let (code, v) = delete(
        &s,
        &format!("{CT}/b"),
        Some(json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "preconditions": {"resourceVersion": "1"}})),
    )
    .await;
    assert_eq!(code, 409);
    assert_failure(&v, 409, "Conflict", &format!("Operation cannot be fulfilled on CronTab.stable.example.com \"b\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified"));
    // YAML bodies are decoded by Content-Type.
    let yaml = "apiVersion: v1\nkind: DeleteOptions\npreconditions:\n  uid: nope\n";
    let (code, _, body) = s
        .http(
            "DELETE",
            &format!("{CT}/b"),
            &[("Content-Type", "application/yaml")],
            Some(yaml.as_bytes().to_vec()),
        )
        .await;
    assert_eq!(code, 409, "{}", String::from_utf8_lossy(&body));
    // Matching preconditions delete.
    let (code, v) = delete(
        &s,
        &format!("{CT}/b"),
        Some(json!({"preconditions": {"uid": uid, "resourceVersion": rv}, "propagationPolicy": "Foreground", "gracePeriodSeconds": 30})),
    )
    .await;
    // Foreground: the object stays, marked, until the garbage collector has deleted its
    // dependents (none here), as kube-apiserver answers.
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["metadata"]["finalizers"],
        json!(["foregroundDeletion"]),
        "{v}"
    );
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    s.wait_gone(&format!("{CT}/b")).await;

    // Invalid options: 422 for DeleteOptions, 400 for what does not decode.
    let c = create(&s, CT, &crontab("c", &[HOLD])).await;
    let cpath = format!("{CT}/c");
    let (code, v) = delete(&s, &cpath, Some(json!({"propagationPolicy": "Sideways"}))).await;
    assert_eq!(code, 422);
    assert_failure(
        &v,
        422,
        "Invalid",
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#,
    );
    let (_, v) = delete(
        &s,
        &cpath,
        Some(json!({"propagationPolicy": "Orphan", "orphanDependents": true, "dryRun": ["Some"]})),
    )
    .await;
    assert_failure(
        &v,
        422,
        "Invalid",
        r#"DeleteOptions.meta.k8s.io "" is invalid: [propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set, dryRun: Unsupported value: []string{"Some"}: supported values: "All"]"#,
    );
    let (_, v) = delete(&s, &format!("{cpath}?dryRun=Nope"), None).await;
    assert_failure(
        &v,
        422,
        "Invalid",
        r#"DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Nope"}: supported values: "All""#,
    );
    let (_, v) = delete(&s, &format!("{cpath}?gracePeriodSeconds=soon"), None).await;
    assert_failure(
        &v,
        400,
        "BadRequest",
        r#"strconv.ParseInt: parsing "soon": invalid syntax"#,
    );
    let (_, v) = delete(&s, &cpath, Some(json!({"dryRun": "All"}))).await;
    assert_failure(
        &v,
        400,
        "BadRequest",
        "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string",
    );
    let (_, v) = delete(&s, &cpath, Some(json!({"kind": "Pod", "apiVersion": "v1"}))).await;
    assert_eq!(v["code"], 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .starts_with(r#"no kind "Pod" is registered for version "v1" in scheme"#),
        "{v}"
    );
    // A body wins over the query: this is not a dry run, and with orphanDependents=false a
    // pending deletion answers 202 with the object.
    let (code, v) = delete(
        &s,
        &format!("{cpath}?dryRun=All"),
        Some(json!({"orphanDependents": false})),
    )
    .await;
    assert_eq!(code, 202, "{v}");
    assert_eq!(v["kind"], "CronTab", "{v}");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    // No garbage collector: no orphan/foregroundDeletion finalizer is added.
    assert_eq!(v["metadata"]["finalizers"], json!([HOLD]), "{v}");
    assert_ne!(
        v["metadata"]["resourceVersion"],
        c["metadata"]["resourceVersion"]
    );
    // Deleting again: 200 with the unchanged object.
    let (code, again) = delete(
        &s,
        &format!("{cpath}?propagationPolicy=Background&gracePeriodSeconds=-5"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{again}");
    assert_eq!(again, v);

    // Namespaces word preconditions as their REST Delete does; system namespaces are immortal.
    let (_, ns) = s
        .http_json(
            "POST",
            "/api/v1/namespaces",
            "application/json",
            Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})),
        )
        .await;
    let (code, v) = delete(
        &s,
        "/api/v1/namespaces/team",
        Some(json!({"preconditions": {"uid": "u-1"}})),
    )
    .await;
    assert_eq!(code, 409);
    assert_failure(&v, 409, "Conflict", &format!("Operation cannot be fulfilled on namespaces \"team\": Precondition failed: UID in precondition: u-1, UID in object meta: {}", ns["metadata"]["uid"].as_str().expect("uid")));
    assert_eq!(v["details"], json!({"name": "team", "kind": "namespaces"}));
    for name in ["default", "kube-system", "kube-public"] {
        let (code, v) = delete(&s, &format!("/api/v1/namespaces/{name}"), None).await;
        assert_eq!(code, 403);
        assert_failure(
            &v,
            403,
            "Forbidden",
            &format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted"),
        );
    }
    // So do CRDs.
    let crd_path =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com";
    let (_, crd) = get_json(&s, crd_path).await;
    let (code, v) = delete(
        &s,
        crd_path,
        Some(json!({"preconditions": {"resourceVersion": "1"}})),
    )
    .await;
    assert_eq!(code, 409);
    assert_failure(&v, 409, "Conflict", &format!("Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io \"crontabs.stable.example.com\": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: {}", crd["metadata"]["resourceVersion"].as_str().expect("rv")));
    let (ok, _, err) = s.kubectl(&["delete", "namespace", "kube-system", "--wait=false"]);
    assert!(!ok);
    assert!(
        err.contains(r#"namespaces "kube-system" is forbidden: this namespace may not be deleted"#),
        "{err}"
    );
}

#[tokio::test]
async fn kube_rs_delete_answers() {
    use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Preconditions};
    use kube::core::GroupVersionKind;
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    create(&s, CT, &crontab("held", &[HOLD])).await;
    create(&s, CT, &crontab("free", &[])).await;
    let client = s.client().await;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("stable.example.com", "v1", "CronTab"),
        "crontabs",
    );
    let cts: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    // Pending finalization: the object (Left); deleted: a Status (Right).
    let held = cts
        .delete("held", &DeleteParams::background())
        .await
        .expect("delete held");
    let obj = held
        .left()
        .expect("the object while finalizers are pending");
    assert!(obj.metadata.deletion_timestamp.is_some());
    let mismatch = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("other".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match cts.delete("free", &mismatch).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"), "{e:?}")
        }
        other => panic!("expected a 409: {other:?}"),
    }
    let free = cts
        .delete("free", &DeleteParams::default())
        .await
        .expect("delete free");
    let status = free.right().expect("a Status once deleted");
    assert_eq!(status.details.expect("details").name, "free");
}

#[tokio::test]
async fn namespace_deletion_waits_for_finalizers() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    create_namespace(&s, "team").await;
    let path = "/apis/stable.example.com/v1/namespaces/team/crontabs";
    create(&s, path, &crontab("held", &[HOLD])).await;
    create(&s, path, &crontab("free", &[])).await;
    let out = s.kubectl_ok(&["delete", "namespace", "team", "--wait=false"]);
    assert_eq!(out.trim(), "namespace \"team\" deleted");

    // The namespace waits, reporting what remains.
    let deadline = Instant::now() + Duration::from_secs(15);
    let ns = loop {
        let (code, ns) = get_json(&s, "/api/v1/namespaces/team").await;
        assert_eq!(code, 200, "{ns}");
        let conds = ns["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conds
            .iter()
            .any(|c| c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True")
        {
            break ns;
        }
        assert!(Instant::now() < deadline, "no conditions: {ns}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(ns["status"]["phase"], "Terminating", "{ns}");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]), "{ns}");
    let cond = |ty: &str| -> Value {
        ns["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == ty).cloned())
            .unwrap_or_else(|| panic!("{ty} missing in {ns}"))
    };
    let c = cond("NamespaceContentRemaining");
    assert_eq!(
        (&c["status"], &c["reason"], &c["message"]),
        (
            &json!("True"),
            &json!("SomeResourcesRemain"),
            &json!("Some resources are remaining: crontabs.stable.example.com has 1 resource instances")
        )
    );
    let c = cond("NamespaceFinalizersRemaining");
    assert_eq!(
        (&c["reason"], &c["message"]),
        (
            &json!("SomeFinalizerRemain"),
            &json!("Some finalizers are remaining: example.com/hold in 1 resource instances")
        )
    );
    let c = cond("NamespaceDeletionContentFailure");
    assert_eq!(
        (&c["status"], &c["reason"]),
        (&json!("False"), &json!("ContentDeleted"))
    );
    // Content without finalizers is gone, the rest is marked; nothing new may be created.
    let (code, _) = get_json(&s, &format!("{path}/free")).await;
    assert_eq!(code, 404);
    let (_, held) = get_json(&s, &format!("{path}/held")).await;
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    let (code, v) = s
        .http_json(
            "POST",
            path,
            "application/json",
            Some(&crontab("late", &[])),
        )
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "crontabs.stable.example.com \"late\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );
    // Still there a while later.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (code, _) = get_json(&s, "/api/v1/namespaces/team").await;
    assert_eq!(code, 200);

    // Releasing the finalizer lets the namespace go.
    s.kubectl_ok(&[
        "patch",
        "crontab",
        "held",
        "-n",
        "team",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    s.wait_gone("/api/v1/namespaces/team").await;
}

#[tokio::test]
async fn owner_references_are_validated_and_stored() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    let with_refs = |name: &str, refs: Value| {
        let mut o = crontab(name, &[]);
        o["metadata"]["ownerReferences"] = refs;
        o
    };
    let owner = |name: &str, controller: bool| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": format!("uid-{name}"), "controller": controller});

    let (code, v) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(&with_refs(
                "o1",
                json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"}]),
            )),
        )
        .await;
    assert_eq!(code, 422);
    assert_failure(
        &v,
        422,
        "Invalid",
        r#"CronTab.stable.example.com "o1" is invalid: metadata.ownerReferences.uid: Invalid value: "": uid must not be empty"#,
    );
    assert_eq!(
        v["details"]["causes"],
        json!([{"reason": "FieldValueInvalid", "message": "Invalid value: \"\": uid must not be empty", "field": "metadata.ownerReferences.uid"}])
    );

    let (_, v) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(&with_refs(
                "o2",
                json!([{"apiVersion": "apps/", "name": ""}]),
            )),
        )
        .await;
    assert_eq!(
        v["message"],
        r#"CronTab.stable.example.com "o2" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty, metadata.ownerReferences.kind: Invalid value: "": kind must not be empty, metadata.ownerReferences.name: Invalid value: "": name must not be empty, metadata.ownerReferences.uid: Invalid value: "": uid must not be empty]"#
    );

    let (code, v) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(&with_refs(
                "o3",
                json!([owner("a", true), owner("b", false), owner("c", true)]),
            )),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    let msg = v["message"].as_str().expect("message");
    assert!(
        msg.starts_with(r#"CronTab.stable.example.com "o3" is invalid: metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", Kind:"ConfigMap", Name:"a", UID:"uid-a", Controller:(*bool)(0xc"#),
        "{msg}"
    );
    assert!(
        msg.ends_with(r#": Only one reference can have Controller set to true. Found "true" in references for ConfigMap/a and ConfigMap/c"#),
        "{msg}"
    );

    let (_, v) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(&with_refs(
                "o4",
                json!([{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]),
            )),
        )
        .await;
    assert_eq!(
        v["message"],
        r#"CronTab.stable.example.com "o4" is invalid: metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", UID:"u", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(nil)}: /v1, Kind=Event is disallowed from being an owner"#
    );

    // Valid references are stored as sent, blockOwnerDeletion included. The CronTab owner
    // exists (the garbage collector would drop a reference to an absent one); Widgets are
    // not served, so the collector leaves that reference alone.
    let other = create(&s, CT, &crontab("other", &[])).await;
    let refs = json!([
        {"apiVersion": "unserved.example.com/v1", "kind": "Widget", "name": "a", "uid": "uid-a", "controller": true, "blockOwnerDeletion": true},
        {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "name": "other", "uid": other["metadata"]["uid"]}
    ]);
    let created = create(&s, CT, &with_refs("ok", refs.clone())).await;
    assert_eq!(created["metadata"]["ownerReferences"], refs);
    let (_, got) = get_json(&s, &format!("{CT}/ok")).await;
    assert_eq!(got["metadata"]["ownerReferences"], refs);

    // Exact duplicates are dropped, with a warning.
    let dup = json!({"apiVersion": "unserved.example.com/v1", "kind": "Widget", "name": "d", "uid": "uid-d"});
    let (code, headers, body) = s
        .http(
            "POST",
            CT,
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(&with_refs("dup", json!([dup, dup]))).expect("json")),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["metadata"]["ownerReferences"], json!([dup]));
    let warning = headers
        .get("warning")
        .and_then(|w| w.to_str().ok())
        .unwrap_or_default();
    assert_eq!(
        warning,
        r#"299 - ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: uid-d""#
    );

    // Updates are validated too, with kubectl's rendering of the error.
    let (ok, _, err) = s.kubectl(&[
        "patch",
        "crontab",
        "ok",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/metadata/ownerReferences/1/controller","value":true}]"#,
    ]);
    assert!(!ok);
    assert!(
        err.contains(r#"Only one reference can have Controller set to true. Found "true" in references for Widget/a and CronTab/other"#),
        "{err}"
    );
    // A client may not change the uid.
    let mut put = got.clone();
    put["metadata"]["uid"] = json!("another-uid");
    let (code, v) = s
        .http_json("PUT", &format!("{CT}/ok"), "application/json", Some(&put))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"CronTab.stable.example.com "ok" is invalid: metadata.uid: Invalid value: "another-uid": field is immutable"#
    );
}

#[tokio::test]
async fn finalizer_names_are_validated_and_warned() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    // A finalizer without a domain gets a warning on custom resources.
    let (code, headers, body) = s
        .http(
            "POST",
            CT,
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(&crontab("w", &["cleanup", HOLD])).expect("json")),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let warnings: Vec<&str> = headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(
        warnings,
        [
            r#"299 - "metadata.finalizers: \"cleanup\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers""#
        ]
    );
    let (_, v) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(&crontab(
                "x",
                &["bad name!", "orphan", "foregroundDeletion"],
            )),
        )
        .await;
    assert_eq!(v["code"], 422, "{v}");
    assert_eq!(
        v["message"],
        r#"CronTab.stable.example.com "x" is invalid: [metadata.finalizers: Invalid value: "bad name!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), metadata.finalizers: Invalid value: []string{"bad name!", "orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set]"#
    );
    // Namespaces follow the core group's rule.
    let (_, v) = s
        .http_json(
            "POST",
            "/api/v1/namespaces",
            "application/json",
            Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "finalizers": ["kubernetes", "mine"]}})),
        )
        .await;
    assert_eq!(
        v["message"],
        r#"Namespace "n" is invalid: metadata.finalizers[1]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified"#
    );
}
