//! OpenAPI publishing (seed: "Publish Validation Schema in OpenAPI"): kubectl explain on the
//! seed's CronTab, the v2 and v3 documents' shapes over raw HTTP, kube-openapi's caching
//! headers, and documents following CRD changes.

mod common;

use common::{crontab_crd_with_schema, Server};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The seed's CronTab schema with descriptions, plus the shapes the publishing rules touch.
const SCHEMA: &str = r#"          type: object
          description: CronTab runs a container image on a cron schedule.
          properties:
            spec:
              type: object
              description: The desired schedule and workload.
              required: ["cronSpec"]
              properties:
                cronSpec:
                  type: string
                  description: The cron spec defining the interval a CronJob is run.
                  pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
                image:
                  type: string
                  description: The container image the CronJob runs.
                replicas:
                  type: integer
                  description: The number of jobs launched by the CronJob.
                  minimum: 1
                  maximum: 10
                port:
                  x-kubernetes-int-or-string: true
                  description: A port number or name.
                note:
                  type: string
                  nullable: true
                  description: An optional note.
                mode:
                  type: string
                  anyOf:
                  - enum: ["a"]
                  - enum: ["b"]
                template:
                  type: object
                  x-kubernetes-embedded-resource: true
                  x-kubernetes-preserve-unknown-fields: true
            status:
              type: object
              properties:
                replicas:
                  type: integer
"#;

fn setup() -> Server {
    let s = Server::start();
    let crd = crontab_crd_with_schema(SCHEMA).replace(
        "      storage: true\n",
        "      storage: true\n      subresources:\n        status: {}\n        scale:\n          specReplicasPath: .spec.replicas\n          statusReplicasPath: .status.replicas\n",
    );
    s.apply_yaml(&crd);
    s
}

async fn get_json(s: &Server, path: &str) -> (u16, reqwest::header::HeaderMap, Value) {
    let (code, headers, body) = s.http("GET", path, &[], None).await;
    (
        code,
        headers,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

#[test]
fn kubectl_explain_crontab() {
    let s = setup();
    let out = s.kubectl_ok(&["explain", "crontab"]);
    let expected = "GROUP:      stable.example.com
KIND:       CronTab
VERSION:    v1

DESCRIPTION:
    CronTab runs a container image on a cron schedule.
    
FIELDS:
  apiVersion\t<string>
    APIVersion defines the versioned schema of this representation of an object.
    Servers should convert recognized schemas to the latest internal value, and
    may reject unrecognized values. More info:
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources

  kind\t<string>
    Kind is a string value representing the REST resource this object
    represents. Servers may infer this from the endpoint the client submits
    requests to. Cannot be updated. In CamelCase. More info:
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds

  metadata\t<ObjectMeta>
    Standard object's metadata. More info:
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata

  spec\t<Object>
    The desired schedule and workload.

  status\t<Object>
    <no description>


";
    assert_eq!(out, expected);

    let out = s.kubectl_ok(&["explain", "crontab.spec"]);
    for line in [
        "FIELD: spec <Object>",
        "  cronSpec\t<string> -required-\n    The cron spec defining the interval a CronJob is run.",
        "  image\t<string>\n    The container image the CronJob runs.",
        "  replicas\t<integer>\n    The number of jobs launched by the CronJob.",
        "  port\t<Object>\n    A port number or name.",
        "  note\t<string>\n    An optional note.",
    ] {
        assert!(out.contains(line), "{line:?} missing in:\n{out}");
    }

    let out = s.kubectl_ok(&["explain", "crontab.metadata.labels"]);
    assert!(out.contains("FIELD: labels <map[string]string>"), "{out}");
    assert!(
        out.contains("Map of string keys and values that can be used to organize"),
        "{out}"
    );
}

#[test]
fn kubectl_explain_recursive() {
    let s = setup();
    let out = s.kubectl_ok(&["explain", "crontab", "--recursive"]);
    let fields = out.split("FIELDS:\n").nth(1).unwrap_or_default();
    let expected = "  apiVersion\t<string>
  kind\t<string>
  metadata\t<ObjectMeta>
    annotations\t<map[string]string>
    creationTimestamp\t<string>
    deletionGracePeriodSeconds\t<integer>
    deletionTimestamp\t<string>
    finalizers\t<[]string>
    generateName\t<string>
    generation\t<integer>
    labels\t<map[string]string>
    managedFields\t<[]ManagedFieldsEntry>
      apiVersion\t<string>
      fieldsType\t<string>
      fieldsV1\t<FieldsV1>
      manager\t<string>
      operation\t<string>
      subresource\t<string>
      time\t<string>
    name\t<string>
    namespace\t<string>
    ownerReferences\t<[]OwnerReference>
      apiVersion\t<string> -required-
      blockOwnerDeletion\t<boolean>
      controller\t<boolean>
      kind\t<string> -required-
      name\t<string> -required-
      uid\t<string> -required-
    resourceVersion\t<string>
    selfLink\t<string>
    uid\t<string>
  spec\t<Object>
    cronSpec\t<string> -required-
    image\t<string>
    mode\t<string>
    note\t<string>
    port\t<Object>
    replicas\t<integer>
    template\t<Object>
      apiVersion\t<string> -required-
      kind\t<string> -required-
      metadata\t<ObjectMeta>
";
    assert!(fields.starts_with(expected), "got:\n{fields}");
    assert!(
        fields.ends_with("  status\t<Object>\n    replicas\t<integer>\n\n"),
        "got:\n{fields}"
    );
    // The embedded resource gets TypeMeta and ObjectMeta, and requires kind and apiVersion.
    let out = s.kubectl_ok(&["explain", "crontab.spec.template"]);
    assert!(out.contains("  apiVersion\t<string> -required-"), "{out}");
    assert!(out.contains("  metadata\t<ObjectMeta>"), "{out}");

    // Built-in types are published too.
    let out = s.kubectl_ok(&["explain", "namespace.status.phase"]);
    assert!(out.contains("FIELD: phase <string>"), "{out}");
    let out = s.kubectl_ok(&["explain", "crd.spec.names.kind"]);
    assert!(
        out.contains("kind is the serialized kind of the resource."),
        "{out}"
    );
}

#[tokio::test]
async fn v3_document_shape() {
    let s = setup();
    let (code, headers, root) = get_json(&s, "/openapi/v3").await;
    assert_eq!(code, 200);
    assert_eq!(headers["cache-control"], "no-cache, private");
    for p in [
        "api/v1",
        "apis/apiextensions.k8s.io/v1",
        "apis/stable.example.com/v1",
    ] {
        let url = root["paths"][p]["serverRelativeURL"]
            .as_str()
            .unwrap_or_default();
        assert!(
            url.starts_with(&format!("/openapi/v3/{p}?hash=")),
            "{p}: {root}"
        );
    }
    let (code, _, doc) = get_json(&s, "/openapi/v3/apis/stable.example.com/v1").await;
    assert_eq!(code, 200);
    assert_eq!(doc["openapi"], "3.0.0");
    let schemas = &doc["components"]["schemas"];
    let ct = &schemas["com.example.stable.v1.CronTab"];
    assert_eq!(
        ct["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
    );
    assert_eq!(
        ct["properties"]["metadata"],
        json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
               "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"})
    );
    assert_eq!(ct["properties"]["apiVersion"]["type"], "string");
    assert_eq!(ct["properties"]["kind"]["type"], "string");
    let spec = &ct["properties"]["spec"]["properties"];
    // int-or-string unfolds; value validations and nullable stay in v3.
    assert_eq!(
        spec["port"]["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    assert_eq!(spec["port"]["x-kubernetes-int-or-string"], true);
    assert_eq!(spec["note"]["nullable"], true);
    assert_eq!(
        spec["mode"]["anyOf"],
        json!([{"enum": ["a"]}, {"enum": ["b"]}])
    );
    assert_eq!(spec["replicas"]["maximum"], 10);
    assert_eq!(spec["template"]["required"], json!(["kind", "apiVersion"]));
    // The list kind.
    let list = &schemas["com.example.stable.v1.CronTabList"];
    assert_eq!(list["required"], json!(["items"]));
    assert_eq!(
        list["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/com.example.stable.v1.CronTab"
    );
    assert_eq!(
        list["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "CronTabList", "version": "v1"}])
    );
    // Referenced built-in definitions are in the document.
    for n in [
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.api.autoscaling.v1.Scale",
    ] {
        assert!(schemas[n].is_object(), "{n}");
    }
    // Paths and verbs, with the subresources the CRD declares.
    let paths = &doc["paths"];
    let ns = "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs";
    assert_eq!(
        paths["/apis/stable.example.com/v1/crontabs"]["get"]["operationId"],
        "listStableExampleComV1CronTabForAllNamespaces"
    );
    for (path, verbs) in [
        (ns.to_string(), vec!["get", "post", "delete"]),
        (
            format!("{ns}/{{name}}"),
            vec!["get", "put", "patch", "delete"],
        ),
        (format!("{ns}/{{name}}/status"), vec!["get", "put", "patch"]),
        (format!("{ns}/{{name}}/scale"), vec!["get", "put", "patch"]),
    ] {
        for v in verbs {
            let op = &paths[&path][v];
            assert!(op.is_object(), "{v} {path}");
            assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "CronTab");
        }
    }
    let patch = &paths[&format!("{ns}/{{name}}")]["patch"];
    assert_eq!(
        patch["operationId"],
        "patchStableExampleComV1NamespacedCronTab"
    );
    assert_eq!(patch["x-kubernetes-action"], "patch");
    assert!(patch["parameters"]
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p["name"] == "fieldValidation")));
    assert_eq!(
        paths[&format!("{ns}/{{name}}/scale")]["get"]["responses"]["200"]["content"]
            ["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"
    );
}

#[tokio::test]
async fn v2_lossy_conversion() {
    let s = setup();
    let (code, _, doc) = get_json(&s, "/openapi/v2").await;
    assert_eq!(code, 200);
    assert_eq!(doc["swagger"], "2.0");
    let ct = &doc["definitions"]["com.example.stable.v1.CronTab"];
    assert_eq!(
        ct["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    let spec = &ct["properties"]["spec"]["properties"];
    // No junctors in v2: the int-or-string anyOf and the anyOf of `mode` are gone.
    assert_eq!(
        spec["port"],
        json!({"description": "A port number or name.", "x-kubernetes-int-or-string": true})
    );
    assert_eq!(spec["mode"], json!({"type": "string"}));
    // nullable: true drops type and nullable.
    assert_eq!(spec["note"], json!({"description": "An optional note."}));
    // Preserved unknown fields: no properties (kubectl would reject the others).
    assert!(spec["template"].get("properties").is_none());
    assert!(doc["definitions"]["com.example.stable.v1.CronTabList"].is_object());
    assert!(doc["definitions"]["io.k8s.api.core.v1.Namespace"].is_object());
    assert!(doc["paths"]
        ["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status"]["put"]
        .is_object());
    // Built-in definitions carry their references in v2 form.
    assert_eq!(
        doc["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
            ["creationTimestamp"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"
    );
    // client-go's protobuf Accept gets gnostic's protobuf form (openapi_protobuf.rs reads it);
    // a JSON-only one still gets JSON.
    let (code, h, _) = s
        .http(
            "GET",
            "/openapi/v2",
            &[(
                "Accept",
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        h["content-type"],
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    let (code, h, _) = s
        .http(
            "GET",
            "/openapi/v2",
            &[("Accept", "application/json")],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(h["content-type"], "application/json");
}

#[tokio::test]
async fn hash_etag_and_caching_headers() {
    let s = setup();
    let (_, _, root) = get_json(&s, "/openapi/v3").await;
    let url = root["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let hash = url.split("hash=").nth(1).unwrap_or_default().to_string();
    assert_eq!(hash.len(), 128, "SHA-512, upper-case hex: {hash}");

    // Hashed URL: immutable, ETag is the hash.
    let (code, h, _) = s.http("GET", &url, &[], None).await;
    assert_eq!(code, 200);
    assert_eq!(h["cache-control"], "public, immutable");
    assert!(h.contains_key("expires"));
    assert_eq!(h["etag"], format!("\"{hash}\"").as_str());
    assert_eq!(h["content-type"], "application/json");
    assert_eq!(h["vary"], "Accept");

    // Without the hash: the same ETag, revalidated on each use.
    let plain = "/openapi/v3/apis/stable.example.com/v1";
    let (code, h, _) = s.http("GET", plain, &[], None).await;
    assert_eq!(code, 200);
    assert_eq!(h["cache-control"], "no-cache, private");
    assert_eq!(h["etag"], format!("\"{hash}\"").as_str());

    // If-None-Match -> 304 with no body.
    let etag = format!("\"{hash}\"");
    let (code, _, body) = s
        .http("GET", plain, &[("If-None-Match", &etag)], None)
        .await;
    assert_eq!(code, 304);
    assert!(body.is_empty());
    let (code, _, _) = s
        .http("GET", plain, &[("If-None-Match", "\"other\"")], None)
        .await;
    assert_eq!(code, 200);

    // A stale hash redirects to the current URL.
    let client = s
        .reqwest_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let r = client
        .get(format!("{}{plain}?hash=0123", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(r.status().as_u16(), 301);
    assert_eq!(r.headers()["location"], url.as_str());

    // Unknown group-version: 404. Protobuf only: 406.
    let (code, _, _) = s
        .http("GET", "/openapi/v3/apis/nope.example.com/v1", &[], None)
        .await;
    assert_eq!(code, 404);
    let (code, _, _) = s
        .http(
            "GET",
            plain,
            &[(
                "Accept",
                "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
            )],
            None,
        )
        .await;
    assert_eq!(code, 406);

    // The discovery root has its own ETag and answers 304 too.
    let (_, h, _) = s.http("GET", "/openapi/v3", &[], None).await;
    let root_etag = h["etag"].to_str().unwrap_or_default().to_string();
    let (code, _, _) = s
        .http("GET", "/openapi/v3", &[("If-None-Match", &root_etag)], None)
        .await;
    assert_eq!(code, 304);
}

#[tokio::test]
async fn documents_follow_crd_changes() {
    let s = setup();
    let (_, _, root) = get_json(&s, "/openapi/v3").await;
    let before = root["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"].clone();
    let builtin_before = root["paths"]["api/v1"]["serverRelativeURL"].clone();

    // A new field in the schema shows within a second (here: on the next request).
    let t0 = Instant::now();
    let crd = crontab_crd_with_schema(&SCHEMA.replace(
        "                image:\n",
        "                schedule:\n                  type: string\n                  description: Added later.\n                image:\n",
    ));
    s.apply_yaml(&crd);
    loop {
        let (_, _, doc) = get_json(&s, "/openapi/v3/apis/stable.example.com/v1").await;
        let added = &doc["components"]["schemas"]["com.example.stable.v1.CronTab"]["properties"]
            ["spec"]["properties"]["schedule"];
        if added["description"] == "Added later." {
            // The subresources were dropped by that apply: so were their paths.
            assert!(doc["paths"]
                ["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale"]
                .is_null());
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(1),
            "schema change not published"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, _, root) = get_json(&s, "/openapi/v3").await;
    assert_ne!(
        root["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"],
        before
    );
    // Other group-versions keep their documents (and hashes).
    assert_eq!(root["paths"]["api/v1"]["serverRelativeURL"], builtin_before);
    let out = s.kubectl_ok(&["explain", "crontab.spec.schedule"]);
    assert!(out.contains("Added later."), "{out}");

    // A second version is published in its own document; deleting the CRD unpublishes both.
    let crd2 = crd.replace(
        "  versions:\n",
        "  versions:\n    - name: v2\n      served: true\n      storage: false\n      schema:\n        openAPIV3Schema:\n          type: object\n",
    );
    s.apply_yaml(&crd2);
    let (code, _, doc) = get_json(&s, "/openapi/v3/apis/stable.example.com/v2").await;
    assert_eq!(code, 200);
    assert!(doc["components"]["schemas"]["com.example.stable.v2.CronTab"].is_object());
    s.kubectl_ok(&["delete", "crd", "crontabs.stable.example.com"]);
    let t0 = Instant::now();
    loop {
        let (_, _, root) = get_json(&s, "/openapi/v3").await;
        if root["paths"].get("apis/stable.example.com/v1").is_none()
            && root["paths"].get("apis/stable.example.com/v2").is_none()
        {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "deleted CRD still published"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (code, _, _) = s
        .http("GET", "/openapi/v3/apis/stable.example.com/v1", &[], None)
        .await;
    assert_eq!(code, 404);
    let (_, _, v2) = get_json(&s, "/openapi/v2").await;
    assert!(v2["definitions"]
        .get("com.example.stable.v1.CronTab")
        .is_none());
}
