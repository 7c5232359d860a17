//! The v2 OpenAPI document as protobuf (issue 28): kubectl validates a `kind: List` from
//! `GET /openapi/v2` with `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
//! (kube-openapi serves gnostic's `openapi.v2.Document` for it), so `kubectl apply -f` of a List
//! works and refuses unknown fields client-side as against kube-apiserver; over raw HTTP the
//! protobuf body carries the JSON document's definitions and paths, with kube-openapi's headers.

mod common;

use common::{crontab_crd_with_schema, Server};
use prost::Message;
use serde_json::Value;

const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const PROTOBUF_CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

const SCHEMA: &str = r#"          type: object
          description: CronTab runs a container image on a cron schedule.
          properties:
            spec:
              type: object
              required: ["cronSpec"]
              properties:
                cronSpec:
                  type: string
                  description: The cron spec.
                  default: "* * * * */5"
                replicas:
                  type: integer
                  minimum: 1
                  maximum: 10
                mode:
                  type: string
                  enum: ["a: b", "yes", "1", "two\nlines"]
                port:
                  x-kubernetes-int-or-string: true
                tags:
                  type: array
                  x-kubernetes-list-type: set
                  items:
                    type: string
                selector:
                  type: object
                  additionalProperties:
                    type: string
"#;

fn setup() -> Server {
    let s = Server::start();
    s.install_crd(&crontab_crd_with_schema(SCHEMA));
    s
}

/// The part of gnostic's OpenAPIv2.proto these tests read, declared here with its field numbers
/// (independently of the server's messages); prost skips the fields left out.
mod gnostic {
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Document {
        #[prost(string, tag = "1")]
        pub swagger: String,
        #[prost(message, optional, tag = "2")]
        pub info: Option<Info>,
        #[prost(message, optional, tag = "8")]
        pub paths: Option<Paths>,
        #[prost(message, optional, tag = "9")]
        pub definitions: Option<Definitions>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Info {
        #[prost(string, tag = "1")]
        pub title: String,
        #[prost(string, tag = "2")]
        pub version: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Paths {
        #[prost(message, repeated, tag = "2")]
        pub path: Vec<NamedPathItem>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct NamedPathItem {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<PathItem>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct PathItem {
        #[prost(message, optional, tag = "2")]
        pub get: Option<Operation>,
        #[prost(message, optional, tag = "3")]
        pub put: Option<Operation>,
        #[prost(message, optional, tag = "4")]
        pub post: Option<Operation>,
        #[prost(message, optional, tag = "5")]
        pub delete: Option<Operation>,
        #[prost(message, optional, tag = "8")]
        pub patch: Option<Operation>,
        #[prost(message, repeated, tag = "9")]
        pub parameters: Vec<ParametersItem>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Operation {
        #[prost(string, tag = "5")]
        pub operation_id: String,
        #[prost(message, repeated, tag = "8")]
        pub parameters: Vec<ParametersItem>,
        #[prost(message, repeated, tag = "13")]
        pub vendor_extension: Vec<NamedAny>,
    }

    /// ParametersItem > Parameter > (BodyParameter | NonBodyParameter > sub-schemas): only the
    /// parameter's name is read, which is field 2 of BodyParameter and field 4 of every
    /// non-body sub-schema.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ParametersItem {
        #[prost(message, optional, tag = "1")]
        pub parameter: Option<Parameter>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Parameter {
        #[prost(message, optional, tag = "1")]
        pub body: Option<BodyParameter>,
        #[prost(message, optional, tag = "2")]
        pub non_body: Option<NonBodyParameter>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct BodyParameter {
        #[prost(string, tag = "2")]
        pub name: String,
        #[prost(string, tag = "3")]
        pub r#in: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct NonBodyParameter {
        #[prost(message, optional, tag = "1")]
        pub header: Option<SubSchema>,
        #[prost(message, optional, tag = "2")]
        pub form_data: Option<SubSchema>,
        #[prost(message, optional, tag = "3")]
        pub query: Option<SubSchema>,
        #[prost(message, optional, tag = "4")]
        pub path: Option<SubSchema>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct SubSchema {
        #[prost(string, tag = "2")]
        pub r#in: String,
        #[prost(string, tag = "4")]
        pub name: String,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Definitions {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedSchema>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct NamedSchema {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Schema>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Schema {
        #[prost(string, tag = "1")]
        pub _ref: String,
        #[prost(string, tag = "2")]
        pub format: String,
        #[prost(string, tag = "4")]
        pub description: String,
        #[prost(message, optional, tag = "5")]
        pub default: Option<Any>,
        #[prost(double, tag = "7")]
        pub maximum: f64,
        #[prost(double, tag = "9")]
        pub minimum: f64,
        #[prost(string, repeated, tag = "19")]
        pub required: Vec<String>,
        #[prost(message, repeated, tag = "20")]
        pub r#enum: Vec<Any>,
        #[prost(message, optional, boxed, tag = "21")]
        pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
        #[prost(message, optional, tag = "22")]
        pub r#type: Option<TypeItem>,
        #[prost(message, optional, tag = "23")]
        pub items: Option<ItemsItem>,
        #[prost(message, optional, tag = "25")]
        pub properties: Option<Properties>,
        #[prost(message, repeated, tag = "31")]
        pub vendor_extension: Vec<NamedAny>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct AdditionalPropertiesItem {
        #[prost(message, optional, tag = "1")]
        pub schema: Option<Schema>,
        #[prost(bool, optional, tag = "2")]
        pub boolean: Option<bool>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct TypeItem {
        #[prost(string, repeated, tag = "1")]
        pub value: Vec<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct ItemsItem {
        #[prost(message, repeated, tag = "1")]
        pub schema: Vec<Schema>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Properties {
        #[prost(message, repeated, tag = "1")]
        pub additional_properties: Vec<NamedSchema>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct NamedAny {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Any>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Any {
        #[prost(string, tag = "2")]
        pub yaml: String,
    }
}

/// The value of an `Any` (its YAML text), as JSON.
fn yaml_value(a: Option<&gnostic::Any>) -> Value {
    let text = a.map(|a| a.yaml.as_str()).unwrap_or_default();
    serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("YAML {text:?}: {e}"))
}

/// Checks that the protobuf schema `pb` says what the JSON schema `json` says, for every field
/// kubectl's openapi models read, recursively.
fn same_schema(pb: &gnostic::Schema, json: &Value, at: &str) {
    let text = |k: &str| json.get(k).and_then(Value::as_str).unwrap_or_default();
    assert_eq!(pb._ref, text("$ref"), "{at}: $ref");
    assert_eq!(pb.description, text("description"), "{at}: description");
    assert_eq!(pb.format, text("format"), "{at}: format");
    let types: Vec<String> = match json.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => vec![],
    };
    assert_eq!(
        pb.r#type
            .as_ref()
            .map(|t| t.value.clone())
            .unwrap_or_default(),
        types,
        "{at}: type"
    );
    let required: Vec<String> = json
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(pb.required, required, "{at}: required");
    assert_eq!(
        pb.minimum,
        json.get("minimum")
            .and_then(Value::as_f64)
            .unwrap_or_default(),
        "{at}: minimum"
    );
    assert_eq!(
        pb.maximum,
        json.get("maximum")
            .and_then(Value::as_f64)
            .unwrap_or_default(),
        "{at}: maximum"
    );
    if let Some(d) = json.get("default") {
        assert_eq!(&yaml_value(pb.default.as_ref()), d, "{at}: default");
    }
    let e: Vec<Value> = pb.r#enum.iter().map(|a| yaml_value(Some(a))).collect();
    let want: Vec<Value> = json
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    assert_eq!(e, want, "{at}: enum");
    let extensions: Vec<(String, Value)> = pb
        .vendor_extension
        .iter()
        .map(|x| (x.name.clone(), yaml_value(x.value.as_ref())))
        .collect();
    let want: Vec<(String, Value)> = json
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.starts_with("x-"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(extensions, want, "{at}: vendor extensions");
    let props = pb
        .properties
        .as_ref()
        .map(|p| p.additional_properties.as_slice())
        .unwrap_or_default();
    let want = json.get("properties").and_then(Value::as_object);
    let names: Vec<&str> = props.iter().map(|p| p.name.as_str()).collect();
    let want_names: Vec<&str> = want
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(names, want_names, "{at}: properties");
    for p in props {
        let sub = p.value.as_ref().expect("property schema");
        same_schema(
            sub,
            &want.expect("properties")[&p.name],
            &format!("{at}.{}", p.name),
        );
    }
    match (pb.items.as_ref(), json.get("items")) {
        (Some(items), Some(j)) => {
            assert_eq!(items.schema.len(), 1, "{at}: items");
            same_schema(&items.schema[0], j, &format!("{at}[]"));
        }
        (None, None) => {}
        (pb, j) => panic!("{at}: items {pb:?} vs {j:?}"),
    }
    match (
        pb.additional_properties.as_deref(),
        json.get("additionalProperties"),
    ) {
        (Some(a), Some(Value::Bool(b))) => assert_eq!(a.boolean, Some(*b), "{at}"),
        (Some(a), Some(j)) => {
            let s = a.schema.as_ref().expect("additionalProperties schema");
            same_schema(s, j, &format!("{at}{{}}"));
        }
        (None, None) => {}
        (pb, j) => panic!("{at}: additionalProperties {pb:?} vs {j:?}"),
    }
}

fn parameter_names(items: &[gnostic::ParametersItem]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| i.parameter.as_ref())
        .map(|p| {
            if let Some(b) = &p.body {
                return format!("{}:{}", b.r#in, b.name);
            }
            let nb = p.non_body.as_ref().expect("a body or non-body parameter");
            let s = [&nb.header, &nb.form_data, &nb.query, &nb.path]
                .into_iter()
                .find_map(|s| s.as_ref())
                .expect("a sub-schema");
            format!("{}:{}", s.r#in, s.name)
        })
        .collect()
}

fn json_parameter_names(v: &Value) -> Vec<String> {
    v.get("parameters")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    format!(
                        "{}:{}",
                        p["in"].as_str().unwrap_or_default(),
                        p["name"].as_str().unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `kubectl apply -f` of a List validates it against the protobuf v2 document: custom and
/// built-in objects are created, and an unknown field is refused client-side (kubectl 1.32 has
/// no server-side validation for a List: it validates each item with the v2 models), before
/// anything is written.
#[test]
fn kubectl_applies_a_list() {
    let s = setup();
    let list = r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    namespace: default
  data:
    mode: fast
- apiVersion: stable.example.com/v1
  kind: CronTab
  metadata:
    name: numbered
    namespace: default
  spec:
    cronSpec: "* * * * */5"
    replicas: 2
    port: 8080
    tags: [a, b]
    selector: {tier: fe}
- apiVersion: stable.example.com/v1
  kind: CronTab
  metadata:
    name: named
    namespace: default
  spec:
    cronSpec: "*/2 * * * *"
    port: http
    mode: "yes"
"#;
    let (ok, out, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(list));
    assert!(
        ok,
        "kubectl apply of a List failed:\nstdout: {out}\nstderr: {err}"
    );
    for line in [
        "configmap/settings created",
        "crontab.stable.example.com/numbered created",
        "crontab.stable.example.com/named created",
    ] {
        assert!(out.contains(line), "{line:?} missing in:\n{out}");
    }
    let names = s.kubectl_ok(&["get", "crontabs,configmaps", "-o", "name"]);
    for n in [
        "crontab.stable.example.com/numbered",
        "crontab.stable.example.com/named",
        "configmap/settings",
    ] {
        assert!(names.lines().any(|l| l == n), "{n} missing in:\n{names}");
    }
    assert_eq!(
        s.kubectl_ok(&["get", "crontab", "numbered", "-o", "jsonpath={.spec.port}"]),
        "8080"
    );
    // Applying it again: unchanged, validated again.
    let (ok, out, err) = s.kubectl_stdin(&["apply", "--validate=strict", "-f", "-"], Some(list));
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(out.contains("configmap/settings unchanged"), "{out}");

    // An unknown field in a built-in item: refused with kubectl's client-side message, and
    // the other items are not written either.
    let bad_builtin = r#"apiVersion: v1
kind: List
items:
- apiVersion: stable.example.com/v1
  kind: CronTab
  metadata:
    name: not-written
    namespace: default
  spec:
    cronSpec: "* * * * */5"
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: also-not-written
    namespace: default
  data:
    a: b
  bogus: 1
"#;
    let (ok, out, err) = s.kubectl_stdin(
        &["apply", "--validate=strict", "-f", "-"],
        Some(bad_builtin),
    );
    assert!(!ok, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains(
            r#"ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap"#
        ),
        "{err}"
    );
    let (ok, _, err) = s.kubectl(&["get", "crontab", "not-written"]);
    assert!(!ok && err.contains("NotFound"), "{err}");
    let (ok, _, err) = s.kubectl(&["get", "configmap", "also-not-written"]);
    assert!(!ok && err.contains("NotFound"), "{err}");

    // And in a custom resource, by its published schema (the default validation is strict).
    let bad_custom = r#"apiVersion: v1
kind: List
items:
- apiVersion: stable.example.com/v1
  kind: CronTab
  metadata:
    name: not-written
    namespace: default
  spec:
    cronSpec: "* * * * */5"
    someRandomField: 1
"#;
    let (ok, out, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(bad_custom));
    assert!(!ok, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains(
            r#"ValidationError(CronTab.spec): unknown field "someRandomField" in com.example.stable.v1.CronTab.spec"#
        ),
        "{err}"
    );
    // --validate=false skips the document: the server prunes the field.
    let (ok, out, err) =
        s.kubectl_stdin(&["apply", "--validate=false", "-f", "-"], Some(bad_custom));
    assert!(ok, "stdout: {out}\nstderr: {err}");
}

/// kubectl's openapi v2 explain reads the protobuf document too; the default (v3) explain is
/// unchanged.
#[test]
fn kubectl_explain_from_v2() {
    let s = setup();
    let out = s.kubectl_ok(&["explain", "crontab.spec", "--output=plaintext-openapiv2"]);
    for line in [
        "KIND:     CronTab",
        "VERSION:  stable.example.com/v1",
        "RESOURCE: spec <Object>",
        "   cronSpec\t<string> -required-\n     The cron spec.",
        "   replicas\t<integer>",
        "   selector\t<map[string]string>",
        "   tags\t<[]string>",
    ] {
        assert!(out.contains(line), "{line:?} missing in:\n{out}");
    }
    let out = s.kubectl_ok(&["explain", "configmap.data", "--output=plaintext-openapiv2"]);
    assert!(out.contains("FIELD:    data <map[string]string>"), "{out}");
    let out = s.kubectl_ok(&["explain", "crontab.spec"]);
    assert!(out.contains("FIELD: spec <Object>"), "{out}");
}

/// Over raw HTTP: the protobuf body decodes to the JSON document's definitions and paths, with
/// kube-openapi's headers (its content type for both accepted subtypes, the JSON's ETag, Vary,
/// kube-apiserver's Cache-Control), 304 on a matching If-None-Match, and 406 for an Accept that
/// matches nothing.
#[tokio::test]
async fn protobuf_document_over_http() {
    let s = setup();
    let (code, jh, json) = s.http("GET", "/openapi/v2", &[], None).await;
    assert_eq!(code, 200);
    assert_eq!(jh["content-type"], "application/json");
    let json: Value = serde_json::from_slice(&json).expect("JSON document");

    let (code, h, body) = s
        .http("GET", "/openapi/v2", &[("Accept", PROTOBUF)], None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(h["content-type"], PROTOBUF_CONTENT_TYPE);
    assert_eq!(h["etag"], jh["etag"], "the JSON form's ETag");
    assert_eq!(h["vary"], "Accept");
    assert_eq!(h["cache-control"], "no-cache, private");
    assert!(h.contains_key("last-modified"));
    let (code, h2, body2) = s
        .http(
            "GET",
            "/openapi/v2",
            &[("Accept", PROTOBUF_CONTENT_TYPE)],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(h2["content-type"], PROTOBUF_CONTENT_TYPE);
    assert_eq!(body2, body);
    // Protobuf first wins; JSON first too.
    let both = format!("{PROTOBUF}, application/json");
    let (_, h3, _) = s
        .http("GET", "/openapi/v2", &[("Accept", &both)], None)
        .await;
    assert_eq!(h3["content-type"], PROTOBUF_CONTENT_TYPE);
    let both = format!("application/json, {PROTOBUF}");
    let (_, h3, _) = s
        .http("GET", "/openapi/v2", &[("Accept", &both)], None)
        .await;
    assert_eq!(h3["content-type"], "application/json");

    let etag = h["etag"].to_str().expect("etag").to_string();
    let (code, h304, empty) = s
        .http(
            "GET",
            "/openapi/v2",
            &[("Accept", PROTOBUF), ("If-None-Match", &etag)],
            None,
        )
        .await;
    assert_eq!(code, 304);
    assert!(empty.is_empty());
    assert_eq!(h304["etag"], etag.as_str());

    let (code, h406, _) = s
        .http(
            "GET",
            "/openapi/v2",
            &[("Accept", "application/yaml")],
            None,
        )
        .await;
    assert_eq!(code, 406);
    assert_eq!(h406["vary"], "Accept");

    let doc = gnostic::Document::decode(body.as_slice()).expect("an openapi.v2.Document");
    assert_eq!(doc.swagger, "2.0");
    let info = doc.info.as_ref().expect("info");
    assert_eq!(info.title, "Kubernetes");
    assert_eq!(
        info.version,
        json["info"]["version"].as_str().unwrap_or_default()
    );

    // The same definitions, in the same order, saying the same.
    let defs = doc.definitions.as_ref().expect("definitions");
    let json_defs = json["definitions"].as_object().expect("JSON definitions");
    let names: Vec<&str> = defs
        .additional_properties
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    let json_names: Vec<&str> = json_defs.keys().map(String::as_str).collect();
    assert_eq!(names, json_names);
    for d in &defs.additional_properties {
        let schema = d.value.as_ref().expect("schema");
        same_schema(schema, &json_defs[&d.name], &d.name);
    }
    let ct = defs
        .additional_properties
        .iter()
        .find(|d| d.name == "com.example.stable.v1.CronTab")
        .and_then(|d| d.value.as_ref())
        .expect("CronTab");
    let gvk = ct
        .vendor_extension
        .iter()
        .find(|x| x.name == "x-kubernetes-group-version-kind")
        .expect("GVK extension");
    assert_eq!(
        gvk.value.as_ref().map(|v| v.yaml.as_str()),
        Some("- group: stable.example.com\n  kind: CronTab\n  version: v1\n"),
        "go-yaml's text"
    );

    // The same paths, operations and parameters.
    let paths = doc.paths.as_ref().expect("paths");
    let json_paths = json["paths"].as_object().expect("JSON paths");
    let names: Vec<&str> = paths.path.iter().map(|p| p.name.as_str()).collect();
    let json_names: Vec<&str> = json_paths.keys().map(String::as_str).collect();
    assert_eq!(names, json_names);
    for p in &paths.path {
        let item = p.value.as_ref().expect("path item");
        let j = &json_paths[&p.name];
        assert_eq!(
            parameter_names(&item.parameters),
            json_parameter_names(j),
            "{}",
            p.name
        );
        for (method, op) in [
            ("get", &item.get),
            ("put", &item.put),
            ("post", &item.post),
            ("delete", &item.delete),
            ("patch", &item.patch),
        ] {
            let jop = j.get(method);
            assert_eq!(op.is_some(), jop.is_some(), "{} {method}", p.name);
            let (Some(op), Some(jop)) = (op, jop) else {
                continue;
            };
            assert_eq!(
                op.operation_id,
                jop["operationId"].as_str().unwrap_or_default()
            );
            assert_eq!(
                parameter_names(&op.parameters),
                json_parameter_names(jop),
                "{} {method}",
                p.name
            );
            let action = op
                .vendor_extension
                .iter()
                .find(|x| x.name == "x-kubernetes-action")
                .map(|x| yaml_value(x.value.as_ref()));
            assert_eq!(action.as_ref(), jop.get("x-kubernetes-action"));
        }
    }
}
