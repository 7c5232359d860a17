//! Built-in kinds are decoded against their published types, as kube-apiserver decodes into Go
//! structs: fields the type does not have are refused (fieldValidation=Strict, 400), reported
//! (Warn, the default: Warning headers) or dropped silently (Ignore), and never stored.

mod common;
use common::*;
use serde_json::{json, Value};

const NAMESPACES: &str = "/api/v1/namespaces";

fn namespace(name: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name},
        "spec": {"bogus": true},
        "bogus2": true,
    }))
    .expect("json")
}

const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

#[tokio::test]
async fn namespace_unknown_fields_strict_warn_ignore() {
    let s = Server::start();

    let path = format!("{NAMESPACES}?fieldValidation=Strict");
    let (code, _, body) = s
        .http("POST", &path, &JSON, Some(namespace("strict")))
        .await;
    let v: Value = serde_json::from_slice(&body).expect("status");
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["reason"], "BadRequest", "{v}");
    assert_eq!(
        v["message"],
        r#"Namespace in version "v1" cannot be handled as a Namespace: strict decoding error: unknown field "bogus2", unknown field "spec.bogus""#
    );
    let (code, _, _) = s
        .http("GET", &format!("{NAMESPACES}/strict"), &[], None)
        .await;
    assert_eq!(code, 404);

    // Warn (the default): created, the fields dropped and reported.
    let (code, headers, body) = s
        .http("POST", NAMESPACES, &JSON, Some(namespace("warn")))
        .await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        warnings(&headers),
        [
            r#"299 - "unknown field \"bogus2\"""#,
            r#"299 - "unknown field \"spec.bogus\"""#,
        ]
    );
    assert!(v.get("bogus2").is_none(), "{v}");
    assert!(v["spec"].get("bogus").is_none(), "{v}");
    // Never stored: a later read does not have them either.
    let (_, _, body) = s
        .http("GET", &format!("{NAMESPACES}/warn"), &[], None)
        .await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert!(v.get("bogus2").is_none(), "{v}");

    // Ignore: created, dropped, no warnings.
    let path = format!("{NAMESPACES}?fieldValidation=Ignore");
    let (code, headers, body) = s
        .http("POST", &path, &JSON, Some(namespace("ignore")))
        .await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(code, 201, "{v}");
    assert!(warnings(&headers).is_empty());
    assert!(v.get("bogus2").is_none(), "{v}");

    // kubectl validates strictly by default, then warns with --validate=warn, as against
    // kube-apiserver.
    const YAML: &str =
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubectl\nspec:\n  bogus: true\n";
    let (ok, _, stderr) = s.kubectl_stdin(&["apply", "-f", "-"], Some(YAML));
    assert!(!ok);
    assert!(
        stderr.contains(r#"Error from server (BadRequest): error when creating "STDIN": Namespace in version "v1" cannot be handled as a Namespace: strict decoding error: unknown field "spec.bogus""#),
        "{stderr}"
    );
    let (ok, _, stderr) = s.kubectl_stdin(&["apply", "--validate=warn", "-f", "-"], Some(YAML));
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(r#"Warning: unknown field "spec.bogus""#),
        "{stderr}"
    );
}

#[tokio::test]
async fn crd_schema_fields_outside_json_schema_props() {
    let s = Server::start();
    let mut crd: Value = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd yaml");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["readOnly"] = json!(true);
    let body = serde_json::to_vec(&crd).expect("json");

    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict";
    let (code, _, resp) = s.http("POST", path, &JSON, Some(body.clone())).await;
    let v: Value = serde_json::from_slice(&resp).expect("status");
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: strict decoding error: unknown field "spec.versions[0].schema.openAPIV3Schema.readOnly""#
    );

    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, headers, resp) = s.http("POST", path, &JSON, Some(body)).await;
    let v: Value = serde_json::from_slice(&resp).expect("json");
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        warnings(&headers),
        [r#"299 - "unknown field \"spec.versions[0].schema.openAPIV3Schema.readOnly\"""#]
    );
    assert!(
        v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            .get("readOnly")
            .is_none(),
        "{v}"
    );
}
