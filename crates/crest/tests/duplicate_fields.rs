//! Duplicate fields in request bodies under fieldValidation (Strict 400, Warn headers, Ignore),
//! with kube-apiserver's wording: decoder errors (duplicates) before pruning's unknown fields.

mod common;
use common::*;
use serde_json::Value;

const COLLECTION: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn crontab(name: &str) -> Vec<u8> {
    format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab",
            "metadata":{{"name":"dupename","name":"{name}"}},
            "spec":{{"image":"a","replicas":1,"replicas":2,"bogus":true}}}}"#
    )
    .into_bytes()
}

fn message(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).expect("status json");
    v["message"].as_str().unwrap_or_default().to_string()
}

const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

#[tokio::test]
async fn custom_resource_duplicates_strict_warn_ignore() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);

    // Strict: 400, duplicates first, then the unknown fields; nothing stored.
    let path = format!("{COLLECTION}?fieldValidation=Strict");
    let (code, _, body) = s.http("POST", &path, &JSON, Some(crontab("a"))).await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        message(&body),
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: duplicate field "metadata.name", duplicate field "spec.replicas", unknown field "spec.bogus""#
    );
    let (code, _, _) = s.http("GET", &format!("{COLLECTION}/a"), &[], None).await;
    assert_eq!(code, 404);

    // Warn (the default): stored with the last value, one header per finding, in order.
    let (code, headers, body) = s.http("POST", COLLECTION, &JSON, Some(crontab("a"))).await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        warnings(&headers),
        [
            r#"299 - "duplicate field \"metadata.name\"""#,
            r#"299 - "duplicate field \"spec.replicas\"""#,
            r#"299 - "unknown field \"spec.bogus\"""#,
        ]
    );
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["metadata"]["name"], "a");
    assert_eq!(v["spec"]["replicas"], 2);

    // Ignore: no warnings.
    let path = format!("{COLLECTION}?fieldValidation=Ignore");
    let (code, headers, body) = s.http("POST", &path, &JSON, Some(crontab("b"))).await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    assert!(warnings(&headers).is_empty());

    // An update (PUT) under Strict words it as decoding the body does.
    let put = format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab",
            "metadata":{{"name":"a","resourceVersion":{rv}}},
            "spec":{{"image":"a","image":"b"}}}}"#,
        rv = v["metadata"]["resourceVersion"]
    );
    let path = format!("{COLLECTION}/a?fieldValidation=Strict");
    let (code, _, body) = s.http("PUT", &path, &JSON, Some(put.into_bytes())).await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        message(&body),
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: duplicate field "spec.image""#
    );

    // YAML: one strict error for all lines, one warning per line.
    let yaml = "apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: y
spec:
  image: a
  image: b
  cronSpec: x
  cronSpec: y
";
    let ytype = [("Content-Type", "application/yaml")];
    let path = format!("{COLLECTION}?fieldValidation=Strict");
    let (code, _, body) = s
        .http("POST", &path, &ytype, Some(yaml.as_bytes().to_vec()))
        .await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        message(&body),
        "CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: yaml: unmarshal errors:\n  line 7: key \"image\" already set in map\n  line 9: key \"cronSpec\" already set in map"
    );
    let (code, headers, _) = s
        .http("POST", COLLECTION, &ytype, Some(yaml.as_bytes().to_vec()))
        .await;
    assert_eq!(code, 201);
    assert_eq!(
        warnings(&headers),
        [
            r#"299 - "line 7: key \"image\" already set in map""#,
            r#"299 - "line 9: key \"cronSpec\" already set in map""#,
        ]
    );

    // A merge patch: the patch body's duplicates, bare.
    let path = format!("{COLLECTION}/a?fieldValidation=Strict");
    let merge = [("Content-Type", "application/merge-patch+json")];
    let patch = br#"{"spec":{"image":"x","image":"y","nope":1}}"#.to_vec();
    let (code, _, body) = s.http("PATCH", &path, &merge, Some(patch.clone())).await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        message(&body),
        r#"strict decoding error: duplicate field "spec.image", unknown field "spec.nope""#
    );
    let (code, headers, _) = s
        .http("PATCH", &format!("{COLLECTION}/a"), &merge, Some(patch))
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        warnings(&headers),
        [
            r#"299 - "duplicate field \"spec.image\"""#,
            r#"299 - "unknown field \"spec.nope\"""#,
        ]
    );

    // A JSON patch: its operations are checked (`json patch ...`).
    let jp = [("Content-Type", "application/json-patch+json")];
    let patch =
        br#"[{"op":"replace","path":"/spec/image","path":"/spec/image","value":"z","x":1}]"#;
    let (code, _, body) = s.http("PATCH", &path, &jp, Some(patch.to_vec())).await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        message(&body),
        r#"strict decoding error: json patch duplicate field "[0].path", json patch unknown field "[0].x""#
    );
}

#[tokio::test]
async fn namespace_create_with_duplicate_field() {
    let s = Server::start();
    let body = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"x","name":"{name}"}}}}"#
        )
        .into_bytes()
    };
    let (code, _, resp) = s
        .http(
            "POST",
            "/api/v1/namespaces?fieldValidation=Strict",
            &JSON,
            Some(body("dup-strict")),
        )
        .await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&resp));
    let v: Value = serde_json::from_slice(&resp).expect("json");
    assert_eq!(v["reason"], "BadRequest");
    assert_eq!(
        v["message"],
        r#"Namespace in version "v1" cannot be handled as a Namespace: strict decoding error: duplicate field "metadata.name""#
    );
    let (code, _, _) = s
        .http("GET", "/api/v1/namespaces/dup-strict", &[], None)
        .await;
    assert_eq!(code, 404);

    let (code, headers, _) = s
        .http("POST", "/api/v1/namespaces", &JSON, Some(body("dup-warn")))
        .await;
    assert_eq!(code, 201);
    assert_eq!(
        warnings(&headers),
        [r#"299 - "duplicate field \"metadata.name\"""#]
    );

    // kubectl (client-side YAML -> JSON drops the duplicate) creates it without a warning.
    let (ok, _, err) = s.kubectl_stdin(
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: via-kubectl\n"),
    );
    assert!(ok, "{err}");
}
