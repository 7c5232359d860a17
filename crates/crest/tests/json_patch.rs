//! JSON patches (`application/json-patch+json`) as kube-apiserver applies them: with
//! evanphx/json-patch v4's semantics, not RFC 6902's. kube-runtime's `finalizer()` helper
//! relies on them (its first finalizer is `test /metadata/finalizers == null`, then `add`), so
//! it runs here against the real server, on a custom resource and on a ConfigMap; then raw
//! patches where v4 and RFC 6902 answer differently.

mod common;
use common::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{finalizer, Event};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

const FINALIZER: &str = "example.com/cleanup";
const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const CMS: &str = "/api/v1/namespaces/default/configmaps";
const JSON_PATCH: &str = "application/json-patch+json";

/// One pass of kube-runtime's `finalizer()` over the object as it is now: which event it
/// handed to the reconciler (`None` when it only added the finalizer).
macro_rules! finalizer_pass {
    ($api:expr, $name:expr) => {{
        let obj = $api.get($name).await.expect("get");
        let seen: Mutex<Option<&'static str>> = Mutex::new(None);
        finalizer($api, FINALIZER, Arc::new(obj), |event| {
            let what = match event {
                Event::Apply(_) => "apply",
                Event::Cleanup(_) => "cleanup",
            };
            *seen.lock().expect("lock") = Some(what);
            futures::future::ready(Ok::<_, std::io::Error>(Action::await_change()))
        })
        .await
        .expect("finalizer() patches the object");
        seen.into_inner().expect("lock")
    }};
}

#[tokio::test]
async fn kube_runtime_finalizer_helper() {
    let s = Server::start();
    let client = s.client().await;
    let crd: Value = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd yaml");
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 201, "{v}");

    // A custom resource, as kube-rs controllers manage them.
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("stable.example.com", "v1", "CronTab"),
        "crontabs",
    );
    let cts: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let ct: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "fin"}, "spec": {"cronSpec": "* * * * */5", "image": "img"}
    }))
    .expect("object");
    cts.create(&PostParams::default(), &ct)
        .await
        .expect("create");
    // The first pass adds the finalizer (test null, add [name]); the next one reconciles.
    assert_eq!(finalizer_pass!(&cts, "fin"), None);
    let got = cts.get("fin").await.expect("get");
    assert_eq!(got.metadata.finalizers, Some(vec![FINALIZER.to_string()]));
    assert_eq!(finalizer_pass!(&cts, "fin"), Some("apply"));
    // Deleted, it waits for the finalizer; cleanup removes it (test, remove) and it is gone.
    cts.delete("fin", &DeleteParams::default())
        .await
        .expect("delete");
    let got = cts.get("fin").await.expect("still there");
    assert!(got.metadata.deletion_timestamp.is_some());
    assert_eq!(finalizer_pass!(&cts, "fin"), Some("cleanup"));
    s.wait_gone(&format!("{CT}/fin")).await;

    // A built-in kind.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("fin".into());
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    assert_eq!(finalizer_pass!(&cms, "fin"), None);
    assert_eq!(
        cms.get("fin").await.expect("get").metadata.finalizers,
        Some(vec![FINALIZER.to_string()])
    );
    assert_eq!(finalizer_pass!(&cms, "fin"), Some("apply"));
    // Another controller's finalizer: kube-runtime tests the list and appends (`/-`).
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CMS}/fin"),
            JSON_PATCH,
            Some(&json!([
                {"op": "test", "path": "/metadata/finalizers", "value": [FINALIZER]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/other"}
            ])),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["metadata"]["finalizers"],
        json!([FINALIZER, "example.com/other"])
    );
    cms.delete("fin", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(finalizer_pass!(&cms, "fin"), Some("cleanup"));
    let got = cms.get("fin").await.expect("kept by the other finalizer");
    assert_eq!(
        got.metadata.finalizers,
        Some(vec!["example.com/other".to_string()])
    );
}

/// The Status of any JSON patch that does not apply: upstream's generic 422.
fn assert_generic_422(code: u16, v: &Value) {
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    assert_eq!(
        v["message"], "the server rejected our request due to an error in our request",
        "{v}"
    );
    assert_eq!(v["details"], json!({}), "{v}");
}

#[tokio::test]
async fn json_patches_follow_evanphx_json_patch_v4() {
    let s = Server::start();
    let (code, v) = s
        .http_json(
            "POST",
            CMS,
            "application/json",
            Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "p", "labels": {"a": "1"}}, "data": {"k": "v"}})),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let path = format!("{CMS}/p");
    let patch = |ops: Value| {
        let path = path.clone();
        let s = &s;
        async move { s.http_json("PATCH", &path, JSON_PATCH, Some(&ops)).await }
    };

    // A missing member tests equal to null (RFC 6902: an error).
    let (code, v) = patch(json!([
        {"op": "test", "path": "/metadata/annotations", "value": null},
        {"op": "test", "path": "/data/k", "value": "v"}
    ]))
    .await;
    assert_eq!(code, 200, "{v}");
    // `replace` of a missing member adds it (RFC 6902: an error); `add` at -1 appends (RFC:
    // not an index).
    let (code, v) = patch(json!([
        {"op": "replace", "path": "/data/new", "value": "x"},
        {"op": "add", "path": "/metadata/finalizers", "value": ["a.io/x"]},
        {"op": "add", "path": "/metadata/finalizers/-1", "value": "a.io/y"}
    ]))
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["data"], json!({"k": "v", "new": "x"}));
    assert_eq!(v["metadata"]["finalizers"], json!(["a.io/x", "a.io/y"]));
    // Strings compare by their JSON text: an escaped "v" is not "v".
    let (code, v) = patch(json!([{"op": "remove", "path": "/metadata/finalizers"}])).await;
    assert_eq!(code, 200, "{v}");
    let (code, _, body) = s
        .http(
            "PATCH",
            &path,
            &[("Content-Type", JSON_PATCH)],
            Some(br#"[{"op":"test","path":"/data/k","value":"\u0076"}]"#.to_vec()),
        )
        .await;
    assert_generic_422(code, &serde_json::from_slice(&body).expect("status"));
    // An unknown operation decodes, and fails when applied.
    let (code, v) = patch(json!([{"op": "frobnicate", "path": "/data/k"}])).await;
    assert_generic_422(code, &v);
    // A test without value of an existing member fails ...
    let (code, v) = patch(json!([{"op": "test", "path": "/data/k"}])).await;
    assert_generic_422(code, &v);
    // ... and of a missing one makes kube-apiserver panic: its plain-text 500.
    let (code, headers, body) = s
        .http(
            "PATCH",
            &path,
            &[("Content-Type", JSON_PATCH)],
            Some(br#"[{"op":"test","path":"/data/missing"}]"#.to_vec()),
        )
        .await;
    assert_eq!(code, 500, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        String::from_utf8_lossy(&body),
        "This request caused apiserver to panic. Look in the logs for details.\n"
    );

    // Decoding: typed operations unless fieldValidation=Ignore (upstream's messages, 400).
    let (code, v) = patch(json!([{"op": 5, "path": "/data/k"}])).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"
    );
    let ignore = format!("{path}?fieldValidation=Ignore");
    let (code, v) = s
        .http_json("PATCH", &ignore, JSON_PATCH, Some(&json!([{"op": 5}])))
        .await;
    assert_generic_422(code, &v);
    let (code, v) = s
        .http_json("PATCH", &ignore, JSON_PATCH, Some(&json!([1])))
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "json: cannot unmarshal number into Go value of type jsonpatch.Operation"
    );
    let (code, v) = s
        .http_json("PATCH", &path, JSON_PATCH, Some(&json!({"op": "add"})))
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
    );

    // Only the patches that applied changed the object, and the server still serves.
    let (code, v) = s.http_json("GET", &path, "", None).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["data"], json!({"k": "v", "new": "x"}));
    assert!(v["metadata"].get("finalizers").is_none(), "{v}");

    // Numbers compare by their JSON text too: 3 is not 3.0.
    let crd: Value = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd yaml");
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = s
        .http_json(
            "POST",
            CT,
            "application/json",
            Some(
                &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "n"}, "spec": {"replicas": 3}}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let ct = format!("{CT}/n");
    let (code, _, body) = s
        .http(
            "PATCH",
            &ct,
            &[("Content-Type", JSON_PATCH)],
            Some(br#"[{"op":"test","path":"/spec/replicas","value":3.0}]"#.to_vec()),
        )
        .await;
    assert_generic_422(code, &serde_json::from_slice(&body).expect("status"));
    let (code, v) = s
        .http_json(
            "PATCH",
            &ct,
            JSON_PATCH,
            Some(
                &json!([{"op": "test", "path": "/spec/replicas", "value": 3},
                         {"op": "copy", "from": "/spec/replicas", "path": "/spec/copied"},
                         {"op": "move", "from": "/spec/copied", "path": "/spec/replicas"}]),
            ),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"], json!({"replicas": 3}));
}
