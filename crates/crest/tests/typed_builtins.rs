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
    // Listed in the order the decoder meets them in the document, not in key order.
    let raw = r#"{"apiVersion":"v1","kind":"Namespace","spec":{"bogus":true},"metadata":{"name":"strict","zz":1},"bogus2":true}"#;
    let (code, _, body) = s
        .http("POST", &path, &JSON, Some(raw.as_bytes().to_vec()))
        .await;
    let v: Value = serde_json::from_slice(&body).expect("status");
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"Namespace in version "v1" cannot be handled as a Namespace: strict decoding error: unknown field "spec.bogus", unknown field "metadata.zz", unknown field "bogus2""#
    );

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

/// POSTs `body` (JSON or YAML) to `path`; returns (status, Status or object).
async fn post(s: &Server, path: &str, ctype: &str, body: &str) -> (u16, Value) {
    let (code, _, resp) = s
        .http(
            "POST",
            path,
            &[("Content-Type", ctype)],
            Some(body.as_bytes().to_vec()),
        )
        .await;
    let v = serde_json::from_slice(&resp).expect("json answer");
    (code, v)
}

#[tokio::test]
async fn wrong_json_types_are_refused_with_the_go_decoders_message() {
    let s = Server::start();
    const CMS: &str = "/api/v1/namespaces/default/configmaps";
    let cm = |rest: &str| {
        format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c"}},{rest}}}"#)
    };
    let prefix = r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: "#;
    let cases = [
        (r#""data":{"a":1}"#, "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
        (r#""data":"a""#, "json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"),
        (r#""immutable":"true""#, "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"),
        (r#""binaryData":{"b":"A==="}"#, "illegal base64 data at input byte 1"),
        (r#""data":{},"metadata":{"name":"c","labels":{"tier":1}}"#, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
        (r#""data":{},"metadata":{"name":"c","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"o","uid":"u","controller":"yes"}]}"#, "json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool"),
        (r#""data":{},"metadata":{"name":"c","generation":{"a":1}}"#, "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.generation of type int64"),
    ];
    for (rest, want) in cases {
        // Whatever fieldValidation says: the decode error comes before strict errors.
        for query in ["", "?fieldValidation=Ignore", "?fieldValidation=Strict"] {
            let body = cm(&format!(r#"{rest},"bogus":1"#));
            let (code, v) = post(&s, &format!("{CMS}{query}"), "application/json", &body).await;
            assert_eq!(code, 400, "{body}: {v}");
            assert_eq!(v["reason"], "BadRequest", "{v}");
            assert_eq!(v["message"], format!("{prefix}{want}"), "{body}");
        }
    }
    let (code, _, _) = s.http("GET", &format!("{CMS}/c"), &[], None).await;
    assert_eq!(code, 404, "nothing was stored");

    // Of several, the first the decoder meets in the document (clients that send fields in
    // their struct order, as client-go's JSON does: immutable before data), not in key order.
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"immutable":"yes","data":{"a":1}}"#;
    let (code, v) = post(&s, CMS, "application/json", body).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        format!("{prefix}json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool")
    );
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"a":1},"metadata":{"name":"c","labels":{"x":2}}}"#;
    let (code, v) = post(&s, CMS, "application/json", body).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        format!("{prefix}json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
    );
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"x":2},"name":"c"},"data":{"a":1}}"#;
    let (code, v) = post(&s, CMS, "application/json", body).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        format!("{prefix}json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string")
    );

    // apiVersion and kind are read first, into strings.
    let (code, v) = post(
        &s,
        CMS,
        "application/json",
        r#"{"apiVersion":"v1","kind":1,"metadata":{"name":"c"},"data":{"a":1}}"#,
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"apiVersion":"v1","kind":1,"m ...)"#
    );

    // YAML bodies are decoded the same way (YAML to JSON first).
    let (code, v) = post(
        &s,
        CMS,
        "application/yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  port: 8080\n",
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        format!("{prefix}json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
    );

    // Namespaces and CRDs: their Go types too (int32 overflow, a named string type).
    let (code, v) = post(
        &s,
        "/api/v1/namespaces",
        "application/json",
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"spec":{"finalizers":[true]}}"#,
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal bool into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName"#
    );
    let mut crd: Value = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd yaml");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["maxProperties"] =
        json!(10_000_000_000_000_000_000u64);
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal number 10000000000000000000 into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.maxProperties of type int64"#
    );
    let lease = r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"leaseDurationSeconds":2147483648}}"#;
    let (code, v) = post(
        &s,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        "application/json",
        lease,
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number 2147483648 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"#
    );

    // kubectl shows the server's message.
    let (ok, _, stderr) = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k\ndata:\n  enabled: true\n"),
    );
    assert!(!ok);
    assert!(
        stderr.contains(&format!("{prefix}json: cannot unmarshal bool into Go struct field ConfigMap.data of type string")),
        "{stderr}"
    );

    // A patch that makes the object undecodable: 422, as upstream's patcher words it.
    s.kubectl_ok(&["create", "configmap", "p", "--from-literal=a=1"]);
    let (code, _, resp) = s
        .http(
            "PATCH",
            &format!("{CMS}/p"),
            &[("Content-Type", "application/merge-patch+json")],
            Some(br#"{"data":{"a":2}}"#.to_vec()),
        )
        .await;
    let v: Value = serde_json::from_slice(&resp).expect("json");
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    let msg = v["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with(r#" "" is invalid: patch: Invalid value: "{"#)
            && msg.ends_with(": json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
        "{msg}"
    );
    let a = s.kubectl_ok(&["get", "cm", "p", "-o", "jsonpath={.data.a}"]);
    assert_eq!(a, "1", "the patch was not applied");

    // A strategic merge patch (kubectl patch's default for built-in kinds): the patched object
    // is converted from its unstructured form, with that converter's errors, the patch printed
    // as Go prints the map.
    let (ok, _, stderr) = s.kubectl(&["patch", "cm", "p", "-p", r#"{"data":{"a":2,"b":"x"}}"#]);
    assert!(!ok);
    assert!(
        stderr.contains(r#"The request is invalid: patch: Invalid value: "map[data:map[a:2 b:x]]": cannot convert int64 to string"#),
        "{stderr}"
    );
    let (code, _, resp) = s
        .http(
            "PATCH",
            &format!("{CMS}/p"),
            &[("Content-Type", "application/strategic-merge-patch+json")],
            Some(br#"{"immutable":"yes"}"#.to_vec()),
        )
        .await;
    let v: Value = serde_json::from_slice(&resp).expect("json");
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#" "" is invalid: patch: Invalid value: "map[immutable:yes]": unrecognized type: bool"#
    );
    // What the conversion allows (an integral float into an int32) is stored as the integer.
    let leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    let (code, v) = post(
        &s,
        leases,
        "application/json",
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"}}"#,
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let (code, _, resp) = s
        .http(
            "PATCH",
            &format!("{leases}/l"),
            &[("Content-Type", "application/strategic-merge-patch+json")],
            Some(br#"{"spec":{"leaseDurationSeconds":15.0}}"#.to_vec()),
        )
        .await;
    let v: Value = serde_json::from_slice(&resp).expect("json");
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["leaseDurationSeconds"], 15, "{v}");
}
