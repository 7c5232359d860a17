//! Structural schemas through real clients: the seed's (002) Validation, pruning, Defaulting,
//! "Defaulting and Nullable" and "Controlling pruning" examples with kubectl, fieldValidation
//! (Strict, Warn, Ignore) and validation ratcheting over raw HTTP.

mod common;
use common::*;
use serde_json::{json, Value};

/// The seed's CRD with the schema of a section (`properties` of `spec`, indented for the YAML).
fn crd(spec_properties: &str) -> String {
    crontab_crd_with_schema(&format!(
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
{spec_properties}"#
    ))
}

const VALIDATED: &str = r#"                cronSpec:
                  type: string
                  pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
                image:
                  type: string
                replicas:
                  type: integer
                  minimum: 1
                  maximum: 10"#;

const DEFAULTED: &str = r#"                cronSpec:
                  type: string
                  pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
                  default: "5 0 * * *"
                image:
                  type: string
                replicas:
                  type: integer
                  minimum: 1
                  maximum: 10
                  default: 1"#;

const NULLABLE: &str = r#"                foo:
                  type: string
                  nullable: false
                  default: "default"
                bar:
                  type: string
                  nullable: true
                baz:
                  type: string"#;

fn get_json(s: &Server, name: &str) -> Value {
    let out = s.kubectl_ok(&["get", "crontab", name, "-o", "json"]);
    serde_json::from_str(&out).expect("json")
}

const COLLECTION: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

#[test]
fn seed_validation_rejects_invalid_values_with_every_error() {
    let s = Server::start();
    s.install_crd(&crd(VALIDATED));
    let invalid = r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * *"
  image: my-awesome-cron-image
  replicas: 15
"#;
    let (ok, out, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(invalid));
    assert!(!ok, "{out}");
    for want in [
        r#"The CronTab "my-new-cron-object" is invalid"#,
        r#"spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#,
        "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
    // The valid object of the seed is accepted.
    s.apply_yaml(
        r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
  replicas: 5
"#,
    );
}

#[test]
fn seed_pruning_and_strict_field_validation() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let with_unknown = r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
  someRandomField: 42
"#;
    // kubectl asks for Strict by default: the server refuses the unknown field.
    let (ok, out, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(with_unknown));
    assert!(!ok, "{out}");
    assert!(
        err.contains(r#"strict decoding error: unknown field "spec.someRandomField""#),
        "{err}"
    );
    // Without client validation the seed's output: stored, pruned.
    let (ok, out, err) = s.kubectl_stdin(
        &["create", "--validate=false", "-f", "-", "-o", "yaml"],
        Some(with_unknown),
    );
    assert!(ok, "{err}");
    let v: Value = serde_yaml_ng::from_str(&out).expect("yaml");
    assert_eq!(
        v["spec"],
        json!({"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"})
    );
    assert_eq!(v["metadata"]["generation"], 1);
    assert_eq!(get_json(&s, "my-new-cron-object")["spec"], v["spec"]);
}

#[tokio::test]
async fn field_validation_warn_and_ignore_over_http() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let obj = |name: &str| {
        serde_json::to_vec(&json!({
            "apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": name, "bogus": true},
            "spec": {"image": "x", "someRandomField": 42},
        }))
        .expect("json")
    };
    let ctype = [("Content-Type", "application/json")];
    // Warn is the default: stored pruned, one Warning header per field.
    let (code, headers, body) = s.http("POST", COLLECTION, &ctype, Some(obj("a"))).await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let mut warnings: Vec<&str> = headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    warnings.sort();
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"metadata.bogus\"""#,
            r#"299 - "unknown field \"spec.someRandomField\"""#,
        ]
    );
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["spec"], json!({"image": "x"}));
    assert!(v["metadata"].get("bogus").is_none());
    // Ignore: no warnings.
    let path = format!("{COLLECTION}?fieldValidation=Ignore");
    let (code, headers, _) = s.http("POST", &path, &ctype, Some(obj("b"))).await;
    assert_eq!(code, 201);
    assert!(headers.get("warning").is_none());
    // Strict: 400 with the decoder's wording, nothing stored.
    let path = format!("{COLLECTION}?fieldValidation=Strict");
    let (code, _, body) = s.http("POST", &path, &ctype, Some(obj("c"))).await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["reason"], "BadRequest");
    assert_eq!(
        v["message"],
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "metadata.bogus", unknown field "spec.someRandomField""#
    );
    let (code, _) = s
        .http_json("GET", &format!("{COLLECTION}/c"), "application/json", None)
        .await;
    assert_eq!(code, 404);
    // A merge patch adding an unknown field under Strict: the bare strict error.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{COLLECTION}/a?fieldValidation=Strict"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"nope": 1}})),
        )
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"strict decoding error: unknown field "spec.nope""#
    );
}

#[test]
fn seed_defaulting_and_nullable() {
    let s = Server::start();
    s.install_crd(&crd(DEFAULTED));
    s.apply_yaml(
        r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  image: my-awesome-cron-image
"#,
    );
    assert_eq!(
        get_json(&s, "my-new-cron-object")["spec"],
        json!({"cronSpec": "5 0 * * *", "image": "my-awesome-cron-image", "replicas": 1})
    );

    s.apply_yaml(&crd(NULLABLE));
    let (ok, out, err) = s.kubectl_stdin(
        &["create", "-f", "-", "-o", "json"],
        Some(
            r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: nulls
spec:
  foo: null
  bar: null
  baz: null
"#,
        ),
    );
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["spec"], json!({"foo": "default", "bar": null}));
}

#[tokio::test]
async fn controlling_pruning_with_preserve_unknown_fields() {
    let s = Server::start();
    s.install_crd(&crd(r#"                json:
                  x-kubernetes-preserve-unknown-fields: true
                  type: object
                  properties:
                    spec:
                      type: object
                      properties:
                        foo:
                          type: string
                        bar:
                          type: string"#));
    let (code, v) = s
        .http_json(
            "POST",
            COLLECTION,
            "application/json",
            Some(&json!({
                "apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "p"},
                "spec": {"json": {
                    "spec": {"foo": "abc", "bar": "def", "something": "x"},
                    "status": {"something": "x"},
                }},
            })),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["spec"]["json"],
        json!({"spec": {"foo": "abc", "bar": "def"}, "status": {"something": "x"}})
    );
}

#[tokio::test]
async fn updates_ratchet_errors_in_unchanged_fields() {
    let s = Server::start();
    s.install_crd(&crd(VALIDATED));
    let (code, v) = s
        .http_json(
            "POST",
            COLLECTION,
            "application/json",
            Some(
                &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "r"}, "spec": {"image": "a", "replicas": 8}}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    // Tighten the schema: the stored replicas 8 is now invalid.
    s.install_crd(&crd(&VALIDATED.replace("maximum: 10", "maximum: 5")));
    let path = format!("{COLLECTION}/r");
    let merge = "application/merge-patch+json";
    let (code, v) = s
        .http_json(
            "PATCH",
            &path,
            merge,
            Some(&json!({"spec": {"image": "b"}})),
        )
        .await;
    assert_eq!(code, 200, "unchanged replicas is ratcheted: {v}");
    let (code, v) = s
        .http_json(
            "PATCH",
            &path,
            merge,
            Some(&json!({"spec": {"replicas": 9}})),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["details"]["causes"][0]["field"], "spec.replicas", "{v}");
    assert!(v["message"]
        .as_str()
        .unwrap_or_default()
        .contains("spec.replicas in body should be less than or equal to 5"));
}

#[tokio::test]
async fn crd_with_a_non_structural_schema_is_refused_with_every_violation() {
    let s = Server::start();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "foo": {"type": "string", "pattern": "("},
                    "bar": {"description": "no type"},
                    "baz": {"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}}},
                }}},
            }}}],
        },
    });
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid");
    let fields: Vec<&str> = v["details"]["causes"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["field"].as_str()).collect())
        .unwrap_or_default();
    // One schema shared by every version is reported where the internal CRD type holds it.
    let base = "spec.validation.openAPIV3Schema.properties[spec].properties";
    for f in [
        format!("{base}[foo].pattern"),
        format!("{base}[bar].type"),
        format!("{base}[baz].additionalProperties"),
    ] {
        assert!(fields.contains(&f.as_str()), "{f} not in {fields:?}");
    }
}

#[tokio::test]
async fn reads_apply_the_current_storage_schema_without_writing_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Server::start_in(dir.path());
    s.install_crd(&crd(VALIDATED));
    let (code, created) = s
        .http_json(
            "POST",
            COLLECTION,
            "application/json",
            Some(
                &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "d"}, "spec": {"image": "a"}}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{created}");
    assert!(created["spec"].get("replicas").is_none());
    // The schema gains defaults: the stored object is read with them, but not rewritten.
    s.install_crd(&crd(DEFAULTED));
    let path = format!("{COLLECTION}/d");
    let check = |v: &Value| {
        assert_eq!(
            v["spec"],
            json!({"image": "a", "replicas": 1, "cronSpec": "5 0 * * *"}),
            "{v}"
        );
        assert_eq!(
            v["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]
        );
    };
    let (code, v) = s.http_json("GET", &path, "application/json", None).await;
    assert_eq!(code, 200);
    check(&v);
    // Also after a restart, from what is stored.
    s.stop();
    let s = Server::start_in(dir.path());
    let (code, v) = s.http_json("GET", &path, "application/json", None).await;
    assert_eq!(code, 200);
    check(&v);
    let out = s.kubectl_ok(&["get", "crontabs", "-o", "json"]);
    let list: Value = serde_json::from_str(&out).expect("json");
    check(&list["items"][0]);
}

#[tokio::test]
async fn watch_events_read_objects_through_the_storage_schema() {
    let s = Server::start();
    s.install_crd(&crd(VALIDATED));
    let (code, created) = s
        .http_json(
            "POST",
            COLLECTION,
            "application/json",
            Some(
                &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "w"}, "spec": {"image": "a"}}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{created}");
    s.install_crd(&crd(DEFAULTED));
    let (code, _) = s
        .http_json(
            "DELETE",
            &format!("{COLLECTION}/w"),
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200);
    // Replay from the create: the DELETED event carries the object as read today.
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    let (code, _, body) = s
        .http(
            "GET",
            &format!("{COLLECTION}?watch=1&resourceVersion={rv}&timeoutSeconds=1"),
            &[],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let events: Vec<Value> = String::from_utf8_lossy(&body)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "DELETED");
    assert_eq!(
        events[0]["object"]["spec"],
        json!({"image": "a", "replicas": 1, "cronSpec": "5 0 * * *"})
    );
}

#[test]
fn seed_structural_examples_with_kubectl() {
    let s = Server::start();
    // Non-structural example 3 (002) as the whole schema: all six violations are reported.
    let example3 = r#"          properties:
            foo:
              pattern: "abc"
            metadata:
              type: object
              properties:
                name:
                  type: string
                  pattern: "^a"
                finalizers:
                  type: array
                  items:
                    type: string
                    pattern: "my-finalizer"
          anyOf:
          - properties:
              bar:
                type: integer
                minimum: 42
            required: ["bar"]
            description: "foo bar object""#;
    let (ok, out, err) = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(&crontab_crd_with_schema(example3)),
    );
    assert!(!ok, "{out}");
    let base = "spec.validation.openAPIV3Schema";
    for want in [
        format!("{base}.anyOf[0].description: Forbidden: must be empty to be structural"),
        format!("{base}.anyOf[0].properties[bar].type: Forbidden: must be empty to be structural"),
        format!("{base}.properties[bar]: Required value: because it is defined in {base}.anyOf[0].properties[bar]"),
        format!("{base}.properties[foo].type: Required value: must not be empty for specified object fields"),
        format!("{base}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"),
        format!("{base}.type: Required value: must not be empty at the root"),
    ] {
        assert!(err.contains(&want), "missing {want:?} in:\n{err}");
    }
    // The structural counterpart is accepted.
    let structural = r#"          type: object
          description: "foo bar object"
          properties:
            foo:
              type: string
              pattern: "abc"
            bar:
              type: integer
            metadata:
              type: object
              properties:
                name:
                  type: string
                  pattern: "^a"
          anyOf:
          - properties:
              bar:
                minimum: 42
            required: ["bar"]"#;
    s.apply_yaml(&crontab_crd_with_schema(structural));
}

#[tokio::test]
async fn seed_int_or_string_and_raw_extension() {
    let s = Server::start();
    s.install_crd(&crd(r#"                foo:
                  x-kubernetes-int-or-string: true
                port:
                  x-kubernetes-int-or-string: true
                  anyOf:
                  - type: integer
                  - type: string
                  pattern: "^[a-z]+$"
                embedded:
                  x-kubernetes-embedded-resource: true
                  x-kubernetes-preserve-unknown-fields: true
                  type: object"#));
    let post = |name: &str, spec: Value| {
        let body = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": name}, "spec": spec});
        let s = &s;
        async move {
            s.http_json("POST", COLLECTION, "application/json", Some(&body))
                .await
        }
    };
    for (i, foo) in [json!(1), json!("1")].into_iter().enumerate() {
        let (code, v) = post(
            &format!("ios{i}"),
            json!({"foo": foo.clone(), "port": 8080}),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        assert_eq!(v["spec"]["foo"], foo);
    }
    let (code, v) = post("bad", json!({"foo": true})).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["details"]["causes"][0]["field"], "spec.foo", "{v}");
    let (code, v) = post("badport", json!({"port": "HTTP"})).await;
    assert_eq!(code, 422, "{v}");

    // RawExtension: a complete object is kept as it is.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let (code, v) = post("raw", json!({"embedded": pod.clone()})).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["embedded"], pod);
    // ... and its apiVersion and kind are required.
    let (code, v) = post("rawbad", json!({"embedded": {"spec": {}}})).await;
    assert_eq!(code, 422, "{v}");
    let fields: Vec<&str> = v["details"]["causes"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["field"].as_str()).collect())
        .unwrap_or_default();
    assert!(fields.contains(&"spec.embedded.kind"), "{v}");
    assert!(fields.contains(&"spec.embedded.apiVersion"), "{v}");
}
