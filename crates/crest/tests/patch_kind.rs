//! A PATCH cannot change an object's kind or apiVersion, as kube-apiserver refuses it
//! (k8s.io/apiserver pkg/endpoints/handlers/patch.go; apiextensions-apiserver
//! pkg/registry/customresource/validator.go):
//!
//! - built-in kinds, JSON and merge patches: `jsonPatcher` decodes the patched JSON into the
//!   kind's type (`runtime.DecodeInto` through the versioning codec). A foreign kind is decoded
//!   as its own type and then fails to convert to the resource's internal type (`converting
//!   (v1.Secret) to (core.ConfigMap): unknown conversion`), or is not registered at all; either
//!   is a 422 `patch: Invalid value: "<patched JSON>": ...`, the JSON as evanphx/json-patch v4
//!   writes it (top-level keys sorted, the rest as the typed encoder wrote the object).
//! - built-in kinds, strategic merge patches: the result is converted from unstructured into
//!   the kind's Go type and on through its conversion, which ignores TypeMeta: the object stays
//!   what it is (200).
//! - custom resources: update validation (`ValidateTypeMeta`) answers 422 naming the patched
//!   kind, as the unstructured typer reads it from the object.
//! - server-side apply: the field manager's version check, 400 `invalid object type: ...`.

mod common;
use common::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashMap;

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const CTS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const JSON_PATCH: &str = "application/json-patch+json";
const MERGE: &str = "application/merge-patch+json";
const SMP: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

async fn patch(s: &Server, path: &str, ctype: &str, body: &str) -> (u16, Value) {
    let (code, _, b) = s
        .http(
            "PATCH",
            path,
            &[("Content-Type", ctype)],
            Some(body.as_bytes().to_vec()),
        )
        .await;
    let v = serde_json::from_slice(&b)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&b).into_owned()));
    (code, v)
}

/// The raw text of the top-level `metadata` of an answer (as the server wrote it).
fn raw_metadata(body: &[u8]) -> String {
    let raw: HashMap<String, Box<RawValue>> = serde_json::from_slice(body).expect("json");
    raw["metadata"].get().to_string()
}

/// kube-apiserver's 422 for a patched built-in object that does not decode into its type.
fn patch_invalid(patched: &str, detail: &str) -> Value {
    let quoted = serde_json::to_string(patched).expect("quote");
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!(" \"\" is invalid: patch: Invalid value: {quoted}: {detail}"),
        "reason": "Invalid",
        "details": {"causes": [{"reason": "FieldValueInvalid",
            "message": format!("Invalid value: {quoted}: {detail}"), "field": "patch"}]},
        "code": 422,
    })
}

#[tokio::test]
async fn a_patch_cannot_change_a_builtin_objects_kind() {
    let s = Server::start();
    let (code, _, _) = s
        .http(
            "POST",
            CMS,
            &[("Content-Type", "application/json")],
            Some(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"b"}}"#.to_vec()),
        )
        .await;
    assert_eq!(code, 201);
    let (_, _, current) = s.http("GET", &format!("{CMS}/cm"), &[], None).await;
    let meta = raw_metadata(&current);
    let path = format!("{CMS}/cm");
    // What evanphx/json-patch v4 makes of the object: top-level keys sorted, metadata as the
    // typed encoder wrote it.
    let patched = |av: &str, kind: &str| {
        format!(r#"{{"apiVersion":"{av}","data":{{"a":"b"}},"kind":"{kind}","metadata":{meta}}}"#)
    };

    let (code, v) = patch(
        &s,
        &path,
        JSON_PATCH,
        r#"[{"op":"replace","path":"/apiVersion","value":"v1"},{"op":"replace","path":"/kind","value":"Secret"}]"#,
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        patch_invalid(
            &patched("v1", "Secret"),
            "converting (v1.Secret) to (core.ConfigMap): unknown conversion"
        )
    );

    let (code, v) = patch(&s, &path, MERGE, r#"{"kind":"Secret"}"#).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        patch_invalid(
            &patched("v1", "Secret"),
            "converting (v1.Secret) to (core.ConfigMap): unknown conversion"
        )
    );

    // Another group's kind; a kind no scheme registers.
    let (code, v) = patch(
        &s,
        &path,
        MERGE,
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease"}"#,
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        patch_invalid(
            &patched("coordination.k8s.io/v1", "Lease"),
            "converting (v1.Lease) to (core.ConfigMap): unknown conversion"
        )
    );
    let (code, v) = patch(
        &s,
        &path,
        JSON_PATCH,
        r#"[{"op":"replace","path":"/apiVersion","value":"example.com/v1"},{"op":"replace","path":"/kind","value":"Widget"}]"#,
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        patch_invalid(
            &patched("example.com/v1", "Widget"),
            r#"no kind "Widget" is registered for version "example.com/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#
        )
    );
    let (code, v) = patch(&s, &path, MERGE, r#"{"apiVersion":"v2"}"#).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        patch_invalid(
            &patched("v2", "ConfigMap"),
            r#"no kind "ConfigMap" is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30""#
        )
    );

    // A strategic merge patch goes through the Go type, which keeps its own kind.
    let (code, v) = patch(&s, &path, SMP, r#"{"kind":"Secret","data":{"c":"d"}}"#).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["kind"], "ConfigMap");
    assert_eq!(v["apiVersion"], "v1");
    assert_eq!(v["data"], json!({"a": "b", "c": "d"}));

    // Server-side apply: the field manager's version check.
    let (code, v) = patch(
        &s,
        &format!("{path}?fieldManager=m"),
        APPLY,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cm\n",
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["reason"], "BadRequest");
    assert_eq!(v["message"], "invalid object type: /v1, Kind=Secret");

    // Nothing foreign was stored: get, list and watch see a ConfigMap.
    let (_, v) = s.http_json("GET", &path, "", None).await;
    assert_eq!(v["kind"], "ConfigMap");
    let (_, l) = s.http_json("GET", CMS, "", None).await;
    assert!(l["items"]
        .as_array()
        .expect("items")
        .iter()
        .all(|i| i["kind"] == "ConfigMap"));
    let (_, _, w) = s
        .http(
            "GET",
            &format!("{CMS}?watch=1&resourceVersion=1&timeoutSeconds=1"),
            &[],
            None,
        )
        .await;
    for line in w.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let e: Value = serde_json::from_slice(line).expect("event");
        assert_eq!(e["object"]["kind"], "ConfigMap", "{e}");
    }
}

#[tokio::test]
async fn a_patch_cannot_change_a_custom_resources_kind() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let (code, _, b) = s
        .http(
            "POST",
            CTS,
            &[("Content-Type", "application/json")],
            Some(br#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"ct"},"spec":{"image":"i"}}"#.to_vec()),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&b));
    let path = format!("{CTS}/ct");
    let kind_cause = json!({"reason": "FieldValueInvalid",
        "message": "Invalid value: \"Secret\": must be CronTab", "field": "kind"});

    let (code, v) = patch(
        &s,
        &path,
        JSON_PATCH,
        r#"[{"op":"replace","path":"/apiVersion","value":"v1"},{"op":"replace","path":"/kind","value":"Secret"}]"#,
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Secret \"ct\" is invalid: [kind: Invalid value: \"Secret\": must be CronTab, apiVersion: Invalid value: \"v1\": must be stable.example.com/v1]",
            "reason": "Invalid",
            "details": {"name": "ct", "kind": "Secret", "causes": [kind_cause,
                {"reason": "FieldValueInvalid",
                 "message": "Invalid value: \"v1\": must be stable.example.com/v1",
                 "field": "apiVersion"}]},
            "code": 422})
    );

    let (code, v) = patch(&s, &path, MERGE, r#"{"kind":"Secret"}"#).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Secret.stable.example.com \"ct\" is invalid: kind: Invalid value: \"Secret\": must be CronTab",
            "reason": "Invalid",
            "details": {"name": "ct", "group": "stable.example.com", "kind": "Secret",
                "causes": [kind_cause]},
            "code": 422})
    );

    let (code, v) = patch(
        &s,
        &format!("{path}?fieldManager=m"),
        APPLY,
        "apiVersion: stable.example.com/v1\nkind: Secret\nmetadata:\n  name: ct\n",
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "invalid object type: stable.example.com/v1, Kind=Secret"
    );

    let (_, v) = s.http_json("GET", &path, "", None).await;
    assert_eq!(v["kind"], "CronTab");
    assert_eq!(v["apiVersion"], "stable.example.com/v1");
}
