//! core/v1 Secrets and ServiceAccounts: kubectl's typed client (protobuf bodies), the built-in
//! printers, `stringData` merged into `data`, base64 data, upstream's validation per secret
//! type, immutability, the field selector on `type`, typed decoding, warnings, and garbage
//! collection with a custom resource as owner.

mod common;
use common::*;
use k8s_pb::api::core::v1::Secret;
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{json, Value};

const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const SAS: &str = "/api/v1/namespaces/default/serviceaccounts";

fn b64(s: &str) -> String {
    // Standard base64, padded (as Go encodes []byte).
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A request with a JSON body: status, headers and the parsed answer.
async fn send(
    s: &Server,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let (code, headers, bytes) = s
        .http(
            method,
            path,
            &[("Content-Type", content_type)],
            Some(serde_json::to_vec(body).expect("json")),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("json body: {}", String::from_utf8_lossy(&bytes)));
    (code, headers, v)
}

/// A GET: status, headers (none needed) and the parsed answer.
async fn get(s: &Server, path: &str) -> (u16, (), Value) {
    let (code, v) = s.http_json("GET", path, "application/json", None).await;
    (code, (), v)
}

fn secret(name: &str, extra: Value) -> Value {
    let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}});
    if let (Some(o), Some(e)) = (s.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    s
}

/// Polls a GET of `path` until it answers 200 (15 s at most).
async fn wait_ok(s: &Server, path: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let (code, v) = s.http_json("GET", path, "application/json", None).await;
        if code == 200 {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{path}: {code} {v}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn table(out: &str) -> Vec<Vec<&str>> {
    out.lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
}

#[tokio::test]
async fn kubectl_creates_lists_and_selects_secrets() {
    let s = Server::start();
    // kubectl's typed client sends the Secret as protobuf.
    s.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=user=admin",
        "--from-literal=pass=s3cret",
    ]);
    s.kubectl_ok(&[
        "create",
        "secret",
        "docker-registry",
        "reg",
        "--docker-server=r.example.com",
        "--docker-username=u",
        "--docker-password=p",
    ]);
    let out = s.kubectl_ok(&["get", "secrets"]);
    let lines = table(&out);
    assert_eq!(lines[0], ["NAME", "TYPE", "DATA", "AGE"], "{out}");
    assert_eq!(&lines[1][..3], ["creds", "Opaque", "2"], "{out}");
    assert_eq!(
        &lines[2][..3],
        ["reg", "kubernetes.io/dockerconfigjson", "1"],
        "{out}"
    );
    // Data is served in base64.
    let user = s.kubectl_ok(&["get", "secret", "creds", "-o", "jsonpath={.data.user}"]);
    assert_eq!(user, b64("admin"));
    // Discovery: no short name, as upstream.
    let out = s.kubectl_ok(&["api-resources", "--api-group="]);
    let rows = table(&out);
    assert!(
        rows.iter()
            .any(|f| f[..] == ["secrets", "v1", "true", "Secret"]),
        "{out}"
    );
    assert!(
        rows.iter()
            .any(|f| f[..] == ["serviceaccounts", "sa", "v1", "true", "ServiceAccount"]),
        "{out}"
    );
    let out = s.kubectl_ok(&["explain", "secret.stringData"]);
    assert!(out.contains("KIND:       Secret"), "{out}");
    // The field selector on type (AddFieldLabelConversionsForSecret).
    let out = s.kubectl_ok(&[
        "get",
        "secrets",
        "--field-selector=type=kubernetes.io/dockerconfigjson",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "secret/reg");
    let out = s.kubectl_ok(&[
        "get",
        "secrets",
        "--field-selector=type!=kubernetes.io/dockerconfigjson,metadata.namespace=default",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "secret/creds");
    let (code, _, bytes) = s
        .http(
            "GET",
            &format!("{SECRETS}?fieldSelector=data.user%3Dx"),
            &[],
            None,
        )
        .await;
    let e: Value = serde_json::from_slice(&bytes).expect("status");
    assert_eq!(code, 400, "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("field label not supported: data.user")),
        "{e}"
    );
    s.kubectl_ok(&["delete", "secret", "creds"]);
    let (code, _, _) = s.http("GET", &format!("{SECRETS}/creds"), &[], None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn a_protobuf_body_is_decoded() {
    let s = Server::start();
    let msg = Secret {
        metadata: Some(ObjectMeta {
            name: Some("pb".into()),
            ..Default::default()
        }),
        data: [("bin".to_string(), vec![0u8, 255, 118])].into(),
        string_data: [("plain".to_string(), "text".to_string())].into(),
        ..Default::default()
    };
    let (code, _, bytes) = s
        .http(
            "POST",
            SECRETS,
            &[("Content-Type", "application/vnd.kubernetes.protobuf")],
            Some(pb_body("v1", "Secret", &msg)),
        )
        .await;
    let v: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["data"],
        json!({"bin": "AP92", "plain": b64("text")}),
        "{v}"
    );
    assert_eq!(v["type"], "Opaque", "{v}");
    assert!(v.get("stringData").is_none(), "{v}");
}

#[tokio::test]
async fn string_data_is_merged_into_data_and_never_returned() {
    let s = Server::start();
    let body = secret(
        "merged",
        json!({"data": {"a": b64("1"), "b": b64("2")}, "stringData": {"b": "two", "c": "3"}}),
    );
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{v}");
    let want = json!({"a": b64("1"), "b": b64("two"), "c": b64("3")});
    assert_eq!(v["data"], want, "{v}");
    assert_eq!(v["type"], "Opaque", "{v}");
    assert!(v.get("stringData").is_none(), "{v}");
    let (code, _, v) = get(&s, &format!("{SECRETS}/merged")).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["data"], want, "{v}");
    assert!(v.get("stringData").is_none(), "{v}");

    // An update's stringData overrides data too.
    let mut put = v.clone();
    put["stringData"] = json!({"a": "uno"});
    let (code, _, v) = send(
        &s,
        "PUT",
        &format!("{SECRETS}/merged"),
        "application/json",
        &put,
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["data"]["a"], b64("uno"), "{v}");
    assert!(v.get("stringData").is_none(), "{v}");
    // And a patch's.
    let (code, _, v) = send(
        &s,
        "PATCH",
        &format!("{SECRETS}/merged"),
        "application/merge-patch+json",
        &json!({"stringData": {"d": "4"}}),
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["data"]["d"], b64("4"), "{v}");
    assert_eq!(v["data"]["a"], b64("uno"), "{v}");
    assert!(v.get("stringData").is_none(), "{v}");
    // The list too.
    let (_, _, list) = get(&s, SECRETS).await;
    assert!(list["items"][0].get("stringData").is_none(), "{list}");
    assert_eq!(list["items"][0]["data"]["d"], b64("4"), "{list}");
    // Empty data is omitted, as Go's encoding omits an empty map.
    let body = secret("empty", json!({"data": {}, "stringData": {}}));
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{v}");
    assert!(v.get("data").is_none(), "{v}");
    let out = s.kubectl_ok(&["get", "secret", "empty", "--no-headers"]);
    assert_eq!(&table(&out)[0][..3], ["empty", "Opaque", "0"], "{out}");
}

#[tokio::test]
async fn data_must_be_base64() {
    let s = Server::start();
    let body = secret("b64", json!({"data": {"a": "not base64"}}));
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["reason"], "BadRequest", "{v}");
    assert_eq!(
        v["message"],
        r#"Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3"#
    );
    // Even when unknown fields would be refused too: the decoding fails first.
    let body = secret("b64", json!({"data": {"a": "YQ"}, "bogus": 1}));
    let (code, _, v) = send(
        &s,
        "POST",
        &format!("{SECRETS}?fieldValidation=Strict"),
        "application/json",
        &body,
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0"#
    );
    // A patch that leaves invalid data is refused on the field `patch`.
    let body = secret("ok", json!({"data": {"a": b64("x")}}));
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{v}");
    let (code, _, v) = send(
        &s,
        "PATCH",
        &format!("{SECRETS}/ok"),
        "application/merge-patch+json",
        &json!({"data": {"a": "!"}}),
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["details"]["causes"][0]["field"], "patch", "{v}");
    let cause = v["details"]["causes"][0]["message"].as_str().unwrap_or("");
    assert!(
        cause.ends_with(": illegal base64 data at input byte 0"),
        "{v}"
    );
}

#[tokio::test]
async fn validation_per_type_size_and_immutability() {
    let s = Server::start();
    let cases = [
        (
            secret(
                "sat",
                json!({"type": "kubernetes.io/service-account-token"}),
            ),
            r#"Secret "sat" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value"#,
        ),
        (
            secret("dcfg", json!({"type": "kubernetes.io/dockercfg"})),
            r#"Secret "dcfg" is invalid: data[.dockercfg]: Required value"#,
        ),
        (
            secret(
                "dcj",
                json!({"type": "kubernetes.io/dockerconfigjson", "stringData": {".dockerconfigjson": "{nope"}}),
            ),
            r#"Secret "dcj" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character 'n' looking for beginning of object key string"#,
        ),
        (
            secret("ba", json!({"type": "kubernetes.io/basic-auth"})),
            r#"Secret "ba" is invalid: [data[username]: Required value, data[password]: Required value]"#,
        ),
        (
            secret(
                "ssh",
                json!({"type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": ""}}),
            ),
            r#"Secret "ssh" is invalid: data[ssh-privatekey]: Required value"#,
        ),
        (
            secret(
                "tls",
                json!({"type": "kubernetes.io/tls", "stringData": {"tls.key": "k"}}),
            ),
            r#"Secret "tls" is invalid: data[tls.crt]: Required value"#,
        ),
        (
            secret("keys", json!({"stringData": {"a b": "x"}})),
            r#"Secret "keys" is invalid: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"#,
        ),
        (
            secret(
                "big",
                json!({"stringData": {"a": "x".repeat(1024 * 1024), "b": "y"}}),
            ),
            r#"Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes"#,
        ),
    ];
    for (body, want) in cases {
        let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
        assert_eq!(code, 422, "{v}");
        assert_eq!(v["reason"], "Invalid", "{v}");
        assert_eq!(v["message"], want);
    }
    // Exactly 1 MiB is fine.
    let body = secret(
        "full",
        json!({"stringData": {"a": "x".repeat(1024 * 1024)}}),
    );
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{}", v["message"]);

    // A TLS Secret whose certificate is no PEM is created, with tls.X509KeyPair's complaint.
    let body = secret(
        "badpem",
        json!({"type": "kubernetes.io/tls", "stringData": {"tls.crt": "c", "tls.key": "k"}}),
    );
    let (code, headers, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        warnings(&headers),
        [r#"299 - "tls: failed to find any PEM data in certificate input""#]
    );

    // type is immutable; an immutable Secret keeps its data and its immutability.
    let body = secret(
        "frozen",
        json!({"stringData": {"a": "1"}, "immutable": true}),
    );
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{v}");
    let mut changed = v.clone();
    changed["type"] = json!("example.com/other");
    changed["immutable"] = json!(false);
    changed["data"]["a"] = json!(b64("2"));
    let (code, _, e) = send(
        &s,
        "PUT",
        &format!("{SECRETS}/frozen"),
        "application/json",
        &changed,
    )
    .await;
    assert_eq!(code, 422, "{e}");
    assert_eq!(
        e["message"],
        r#"Secret "frozen" is invalid: [type: Invalid value: "example.com/other": field is immutable, immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"#
    );
    // stringData counts as a data change.
    let (code, _, e) = send(
        &s,
        "PATCH",
        &format!("{SECRETS}/frozen"),
        "application/merge-patch+json",
        &json!({"stringData": {"b": "2"}}),
    )
    .await;
    assert_eq!(code, 422, "{e}");
    assert_eq!(
        e["message"],
        r#"Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set"#
    );
    // Metadata still changes.
    let (code, _, e) = send(
        &s,
        "PATCH",
        &format!("{SECRETS}/frozen"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"x": "y"}}}),
    )
    .await;
    assert_eq!(code, 200, "{e}");
}

#[tokio::test]
async fn unknown_fields_strict_warn_ignore() {
    let s = Server::start();
    let body = |name: &str| secret(name, json!({"stringData": {"a": "1"}, "bogus": 1}));
    let (code, _, v) = send(
        &s,
        "POST",
        &format!("{SECRETS}?fieldValidation=Strict"),
        "application/json",
        &body("strict"),
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"Secret in version "v1" cannot be handled as a Secret: strict decoding error: unknown field "bogus""#
    );
    let (code, headers, v) = send(&s, "POST", SECRETS, "application/json", &body("warn")).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(warnings(&headers), [r#"299 - "unknown field \"bogus\"""#]);
    assert!(v.get("bogus").is_none(), "{v}");
    let (code, headers, v) = send(
        &s,
        "POST",
        &format!("{SECRETS}?fieldValidation=Ignore"),
        "application/json",
        &body("ignore"),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    assert!(warnings(&headers).is_empty());
    assert!(v.get("bogus").is_none(), "{v}");
    let (_, _, v) = get(&s, &format!("{SECRETS}/ignore")).await;
    assert!(v.get("bogus").is_none(), "{v}");
    assert_eq!(v["data"]["a"], b64("1"), "{v}");
    // Through kubectl too.
    let (ok, _, err) = s.kubectl_stdin(
        &["create", "-f", "-", "--validate=strict"],
        Some("apiVersion: v1\nkind: Secret\nmetadata:\n  name: kstrict\nstringData:\n  a: b\nbogus: 1\n"),
    );
    assert!(!ok);
    assert!(err.contains(r#"unknown field "bogus""#), "{err}");
}

#[tokio::test]
async fn kubectl_creates_and_lists_service_accounts() {
    let s = Server::start();
    s.kubectl_ok(&["create", "serviceaccount", "robot"]);
    let out = s.kubectl_ok(&["get", "sa", "robot"]);
    let lines = table(&out);
    assert_eq!(lines[0], ["NAME", "SECRETS", "AGE"], "{out}");
    assert_eq!(&lines[1][..2], ["robot", "0"], "{out}");

    // Secret references keep their names only; the deprecated annotation warns.
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "builder", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
        "secrets": [{"name": "tok", "namespace": "elsewhere", "uid": "u"}, {"name": "other"}],
        "imagePullSecrets": [{"name": "pull"}],
        "automountServiceAccountToken": false});
    let (code, headers, v) = send(&s, "POST", SAS, "application/json", &sa).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["secrets"],
        json!([{"name": "tok"}, {"name": "other"}]),
        "{v}"
    );
    assert_eq!(v["imagePullSecrets"], json!([{"name": "pull"}]), "{v}");
    assert_eq!(v["automountServiceAccountToken"], false, "{v}");
    assert_eq!(
        warnings(&headers),
        [
            r#"299 - "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets""#
        ]
    );
    let out = s.kubectl_ok(&["get", "serviceaccount", "builder", "--no-headers"]);
    assert_eq!(&table(&out)[0][..2], ["builder", "2"], "{out}");
    // Unknown fields, as for every built-in kind.
    let mut bad = sa.clone();
    bad["metadata"]["name"] = json!("strict");
    bad["secrets"][0]["bogus"] = json!(true);
    let (code, _, v) = send(
        &s,
        "POST",
        &format!("{SAS}?fieldValidation=Strict"),
        "application/json",
        &bad,
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: unknown field "secrets[0].bogus""#
    );
    // Names are DNS subdomains.
    let mut bad = sa.clone();
    bad["metadata"] = json!({"name": "Bad_Name"});
    let (code, _, v) = send(&s, "POST", SAS, "application/json", &bad).await;
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(r#"ServiceAccount "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain"#)),
        "{v}"
    );
    s.kubectl_ok(&["delete", "sa", "robot"]);
    let (code, _, _) = s.http("GET", &format!("{SAS}/robot"), &[], None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn a_secret_owned_by_a_custom_resource_goes_with_it() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let ct = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                    "metadata": {"name": "owner"}, "spec": {"cronSpec": "* * * * *", "image": "i"}});
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            "application/json",
            Some(&ct),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let uid = v["metadata"]["uid"].as_str().expect("uid").to_string();
    let owned = |name: &str, kind: &str| {
        json!({"apiVersion": "v1", "kind": kind,
               "metadata": {"name": name, "ownerReferences": [
                   {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "name": "owner", "uid": uid}]}})
    };
    let (code, v) = s
        .http_json(
            "POST",
            SECRETS,
            "application/json",
            Some(&owned("owned", "Secret")),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = s
        .http_json(
            "POST",
            SAS,
            "application/json",
            Some(&owned("owned", "ServiceAccount")),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    s.kubectl_ok(&["delete", "crontab", "owner"]);
    s.wait_gone(&format!("{SECRETS}/owned")).await;
    s.wait_gone(&format!("{SAS}/owned")).await;
}

#[tokio::test]
async fn every_namespace_has_a_default_service_account() {
    let s = Server::start();
    for ns in ["default", "kube-system"] {
        wait_ok(
            &s,
            &format!("/api/v1/namespaces/{ns}/serviceaccounts/default"),
        )
        .await;
    }
    s.kubectl_ok(&["create", "namespace", "team"]);
    let path = "/api/v1/namespaces/team/serviceaccounts/default";
    wait_ok(&s, path).await;
    let out = s.kubectl_ok(&["get", "sa", "-n", "team", "--no-headers"]);
    assert_eq!(&table(&out)[0][..2], ["default", "0"], "{out}");
    // Deleted, it comes back (with a new uid).
    let (_, old) = s.http_json("GET", path, "application/json", None).await;
    s.kubectl_ok(&["delete", "sa", "default", "-n", "team"]);
    wait_ok(&s, path).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let (code, new) = s.http_json("GET", path, "application/json", None).await;
        if code == 200 && new["metadata"]["uid"] != old["metadata"]["uid"] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not recreated: {new}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // A deleted namespace goes with it, and nothing recreates it there.
    s.kubectl_ok(&["delete", "namespace", "team"]);
    s.wait_gone("/api/v1/namespaces/team").await;
    let (code, _) = s.http_json("GET", path, "application/json", None).await;
    assert_eq!(code, 404);
}

/// Line-wrapped base64 (what `base64` prints) is stored as Go re-encodes the decoded bytes, so an
/// immutable Secret accepts a canonical re-send of the same data.
#[tokio::test]
async fn wrapped_base64_is_stored_canonically() {
    let s = Server::start();
    let body = secret(
        "wrapped",
        json!({"immutable": true, "data": {"k": "YWJj\nZGVm"}}),
    );
    let (code, _, v) = send(&s, "POST", SECRETS, "application/json", &body).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["data"]["k"], "YWJjZGVm", "{v}");
    let mut again = v.clone();
    again["data"]["k"] = json!("YWJjZGVm");
    let (code, _, v) = send(
        &s,
        "PUT",
        &format!("{SECRETS}/wrapped"),
        "application/json",
        &again,
    )
    .await;
    assert_eq!(code, 200, "{v}");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bin"},
        "binaryData": {"b": "YWJj\r\nZGVm"}});
    let (code, _, v) = send(
        &s,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        &cm,
    )
    .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["binaryData"]["b"], "YWJjZGVm", "{v}");
}

/// kubernetes.io/tls Secrets warn with tls.X509KeyPair's error (the strategy's
/// WarningsOnCreate / WarningsOnUpdate), past the PEM stage: a key that is not the
/// certificate's is stored, with a Warning.
#[tokio::test]
async fn tls_secrets_warn_when_the_key_is_not_the_certificates() {
    const CRT: &str = include_str!("../../crest-core-api/testdata/tls/p256.crt");
    const KEY: &str = include_str!("../../crest-core-api/testdata/tls/p256.key");
    const OTHER: &str = include_str!("../../crest-core-api/testdata/tls/rsa.key");
    let s = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (crt, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    std::fs::write(&crt, CRT).expect("write");
    std::fs::write(&key, KEY).expect("write");
    // A matching pair: no warning.
    let (ok, _, err) = s.kubectl(&[
        "create",
        "secret",
        "tls",
        "good",
        &format!("--cert={}", crt.display()),
        &format!("--key={}", key.display()),
    ]);
    assert!(ok, "{err}");
    assert!(!err.contains("Warning"), "{err}");
    // kubectl apply of a Secret whose key is another one's: created, with the warning.
    let yaml = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: mixed\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {}\n  tls.key: {}\n",
        b64(CRT),
        b64(OTHER)
    );
    let (ok, out, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&yaml));
    assert!(ok, "{out}{err}");
    assert!(
        err.contains("Warning: tls: private key type does not match public key type"),
        "{err}"
    );
    // An update that swaps the key in warns too.
    let (code, _, v) = get(&s, &format!("{SECRETS}/good")).await;
    assert_eq!(code, 200, "{v}");
    let mut changed = v.clone();
    changed["data"]["tls.key"] = json!(b64(include_str!(
        "../../crest-core-api/testdata/tls/p256-other.key"
    )));
    let (code, headers, v) = send(
        &s,
        "PUT",
        &format!("{SECRETS}/good"),
        "application/json",
        &changed,
    )
    .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        warnings(&headers),
        [r#"299 - "tls: private key does not match public key""#]
    );
}
