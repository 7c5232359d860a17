//! Server-side printing and categories (the CRD seed, 002: "Additional printer columns",
//! "Categories"): kubectl output against the seed's tables, `meta.k8s.io` Table shapes over raw
//! HTTP, and the CRD validation of printer columns and categories.

mod common;
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const TABLE_V1: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";
const TABLE_V1BETA1: &str = "application/json;as=Table;g=meta.k8s.io;v=v1beta1";

/// The seed's CRD with printer columns, plus a priority-1 column for `-o wide`, in the
/// category `all`.
const SEED_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
    categories:
    - all
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec:
                type: string
              image:
                type: string
              replicas:
                type: integer
    additionalPrinterColumns:
    - name: Spec
      type: string
      description: The cron spec defining the interval a CronJob is run
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      description: The number of jobs launched by the CronJob
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    - name: Image
      type: string
      priority: 1
      jsonPath: .spec.image
"#;

const SEED_CRONTAB: &str = r#"apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
  replicas: 1
"#;

/// [`SEED_CRD`] with a schemaless spec, for values of the wrong type.
fn loose_crd() -> String {
    SEED_CRD.replace(
        "            properties:\n              cronSpec:\n                type: string\n              image:\n                type: string\n              replicas:\n                type: integer\n",
        "            x-kubernetes-preserve-unknown-fields: true\n",
    )
}

/// kubectl's columns: cells are separated by at least two spaces (a cell may hold one).
fn columns(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

fn lines(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(columns)
        .collect()
}

fn is_age(s: &str) -> bool {
    s.strip_suffix('s')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

async fn get_as(s: &Server, path: &str, accept: &str) -> (u16, Value) {
    let (code, _, body) = s.http("GET", path, &[("Accept", accept)], None).await;
    let v = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    (code, v)
}

async fn create(s: &Server, path: &str, obj: Value) {
    let (code, v) = s
        .http_json("POST", path, "application/json", Some(&obj))
        .await;
    assert_eq!(code, 201, "{v}");
}

#[test]
fn seed_printer_columns_with_kubectl() {
    let s = Server::start();
    s.install_crd(SEED_CRD);
    s.apply_yaml(SEED_CRONTAB);

    // The seed: NAME SPEC REPLICAS AGE / my-new-cron-object * * * * * 1 7s
    let out = s.kubectl_ok(&["get", "crontab", "my-new-cron-object"]);
    let t = lines(&out);
    assert_eq!(t[0], ["NAME", "SPEC", "REPLICAS", "AGE"], "{out}");
    assert_eq!(t.len(), 2, "{out}");
    assert_eq!(
        t[1][..3],
        ["my-new-cron-object", "* * * * */5", "1"],
        "{out}"
    );
    assert!(is_age(&t[1][3]), "{out}");

    // Priority > 0 columns only in the wide view.
    let out = s.kubectl_ok(&["get", "ct", "-o", "wide"]);
    let t = lines(&out);
    assert_eq!(t[0], ["NAME", "SPEC", "REPLICAS", "AGE", "IMAGE"], "{out}");
    assert_eq!(t[1][4], "my-awesome-cron-image", "{out}");

    // A missing value (a null cell) prints as an empty cell.
    s.apply_yaml("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: bare\nspec:\n  cronSpec: \"1 2 3 4 5\"\n");
    let out = s.kubectl_ok(&["get", "ct", "--sort-by", ".metadata.name"]);
    let t = lines(&out);
    assert_eq!(t[1].len(), 3, "{out}");
    assert_eq!(t[1][..2], ["bare", "1 2 3 4 5"], "{out}");
    assert!(is_age(&t[1][2]), "{out}");
    assert_eq!(t[2][0], "my-new-cron-object", "{out}");
    s.stop();
}

#[test]
fn get_watch_prints_rows_from_watch_tables() {
    let s = Server::start();
    s.install_crd(SEED_CRD);
    s.apply_yaml(SEED_CRONTAB);
    let mut watch =
        std::process::Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .arg("--kubeconfig")
            .arg(&s.kubeconfig)
            .args(["get", "ct", "-w", "--request-timeout=20s"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("kubectl");
    std::thread::sleep(Duration::from_secs(2));
    s.kubectl_ok(&[
        "patch",
        "ct",
        "my-new-cron-object",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":7}}"#,
    ]);
    std::thread::sleep(Duration::from_secs(2));
    let _ = watch.kill();
    let out = String::from_utf8(watch.wait_with_output().expect("output").stdout).expect("utf8");
    let t = lines(&out);
    assert_eq!(t[0], ["NAME", "SPEC", "REPLICAS", "AGE"], "{out}");
    assert_eq!(
        t[1][..3],
        ["my-new-cron-object", "* * * * */5", "1"],
        "{out}"
    );
    assert_eq!(
        t[2][..3],
        ["my-new-cron-object", "* * * * */5", "7"],
        "{out}"
    );
    s.stop();
}

#[tokio::test]
async fn watch_tables_carry_headers_once() {
    let s = Server::start();
    s.install_crd(SEED_CRD);
    let (_, list) = get_as(&s, CT, "application/json").await;
    let rv0 = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    create(
        &s,
        CT,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "a"}, "spec": {"replicas": 1}}),
    )
    .await;
    create(
        &s,
        CT,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "b"}, "spec": {"replicas": 2}}),
    )
    .await;
    let path = format!("{CT}?watch=1&resourceVersion={rv0}&timeoutSeconds=1&includeObject=None");
    let (code, _, body) = s
        .http("GET", &path, &[("Accept", TABLE_V1BETA1)], None)
        .await;
    assert_eq!(code, 200);
    let events: Vec<Value> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("event"))
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    for (i, ev) in events.iter().enumerate() {
        assert_eq!(ev["type"], "ADDED");
        let t = &ev["object"];
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(t["rows"].as_array().map(Vec::len), Some(1));
        assert!(t["rows"][0].get("object").is_none(), "includeObject=None");
        assert_eq!(t["rows"][0]["cells"][2], i as i64 + 1);
        assert!(t["metadata"]["resourceVersion"].is_string());
        // kube-apiserver sends the column definitions with the first event only.
        if i == 0 {
            assert_eq!(t["columnDefinitions"].as_array().map(Vec::len), Some(5));
        } else {
            assert_eq!(t["columnDefinitions"], Value::Null);
        }
    }
    s.stop();
}

/// A second resource in `all`, so kubectl prefixes each row with its kind.
const WIDGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    categories: [all, gadgets]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

#[tokio::test]
async fn categories_in_discovery_and_kubectl_get_all() {
    let s = Server::start();
    s.install_crd(SEED_CRD);
    s.apply_yaml(SEED_CRONTAB);

    // `kubectl get all` finds the CronTab through its category. Services are in `all` too
    // (as upstream): the `default/kubernetes` Service's table comes first, so rows are named
    // kind.group/name.
    let out = s.kubectl_ok(&["get", "all"]);
    let t = lines(&out);
    assert_eq!(
        t[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE"
        ],
        "{out}"
    );
    assert_eq!(t[1][..2], ["service/kubernetes", "ClusterIP"], "{out}");
    let at = t
        .iter()
        .position(|l| l.first().map(String::as_str) == Some("NAME") && l.len() == 4)
        .expect("the CronTab table");
    assert_eq!(t[at], ["NAME", "SPEC", "REPLICAS", "AGE"], "{out}");
    assert_eq!(
        t[at + 1][..3],
        [
            "crontab.stable.example.com/my-new-cron-object",
            "* * * * */5",
            "1"
        ],
        "{out}"
    );

    // With two kinds in the category, rows are named kind.group/name, one table per kind.
    s.install_crd(WIDGET_CRD);
    s.apply_yaml("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n");
    let out = s.kubectl_ok(&["get", "all"]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("crontab.stable.example.com/my-new-cron-object")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("widget.example.com/w1")),
        "{out}"
    );
    let out = s.kubectl_ok(&["get", "gadgets", "-o", "name"]);
    assert_eq!(out.trim(), "widget.example.com/w1");

    // Legacy discovery.
    let (code, v) = get_as(&s, "/apis/stable.example.com/v1", "application/json").await;
    assert_eq!(code, 200);
    let ct = v["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "crontabs"))
        .expect("crontabs")
        .clone();
    assert_eq!(ct["categories"], json!(["all"]));
    // Aggregated discovery.
    let (code, v) = get_as(
        &s,
        "/apis",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    )
    .await;
    assert_eq!(code, 200);
    let widget = v["items"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["metadata"]["name"] == "example.com"))
        .map(|g| g["versions"][0]["resources"][0].clone())
        .expect("example.com group");
    assert_eq!(widget["resource"], "widgets");
    assert_eq!(widget["categories"], json!(["all", "gadgets"]));
    s.stop();
}

#[tokio::test]
async fn table_shapes_over_http() {
    let s = Server::start();
    s.install_crd(&loose_crd());
    create(
        &s,
        CT,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "a", "labels": {"l": "1"}},
        "spec": {"cronSpec": "* * * * */5", "image": "img", "replicas": 3}}),
    )
    .await;
    // Values of the wrong type: a number in a string column prints as its text, a string in
    // an integer column is omitted (null).
    create(
        &s,
        CT,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "b"}, "spec": {"cronSpec": 5, "image": {"k": "<v>"}}}),
    )
    .await;
    create(
        &s,
        CT,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "c"}, "spec": {"replicas": "three"}}),
    )
    .await;

    // GET: one row, the object's resourceVersion, PartialObjectMetadata by default.
    let (code, t) = get_as(&s, &format!("{CT}/a"), TABLE_V1).await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    let cols = t["columnDefinitions"].as_array().expect("columns");
    let names: Vec<&str> = cols.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["Name", "Spec", "Replicas", "Age", "Image"]);
    assert_eq!(
        cols[0],
        json!({"name": "Name", "type": "string", "format": "name", "priority": 0,
            "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"})
    );
    assert_eq!(
        cols[2],
        json!({"name": "Replicas", "type": "integer", "format": "", "priority": 0,
            "description": "The number of jobs launched by the CronJob"})
    );
    assert_eq!(
        cols[3]["description"],
        "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"
    );
    assert_eq!(cols[4]["priority"], 1);
    let rows = t["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1);
    let cells = rows[0]["cells"].as_array().expect("cells");
    assert_eq!(cells[..3], [json!("a"), json!("* * * * */5"), json!(3)][..]);
    assert!(cells[3].as_str().is_some_and(is_age), "{cells:?}");
    assert_eq!(cells[4], "img");
    let obj = &rows[0]["object"];
    assert_eq!(obj["kind"], "PartialObjectMetadata");
    assert_eq!(obj["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(obj["metadata"]["labels"], json!({"l": "1"}));
    assert_eq!(
        t["metadata"]["resourceVersion"],
        obj["metadata"]["resourceVersion"]
    );

    // v1beta1 answers as v1beta1, with v1beta1 PartialObjectMetadata.
    let (_, t) = get_as(&s, &format!("{CT}/a"), TABLE_V1BETA1).await;
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(t["rows"][0]["object"]["apiVersion"], "meta.k8s.io/v1beta1");
    // kubectl's Accept: Table v1, v1beta1, then JSON.
    let kubectl_accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let (_, t) = get_as(&s, &format!("{CT}/a"), kubectl_accept).await;
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");

    // includeObject.
    let (_, t) = get_as(&s, &format!("{CT}/a?includeObject=None"), TABLE_V1).await;
    assert!(t["rows"][0].get("object").is_none(), "{t}");
    let (_, t) = get_as(&s, &format!("{CT}/a?includeObject=Object"), TABLE_V1).await;
    assert_eq!(t["rows"][0]["object"]["kind"], "CronTab");
    assert_eq!(t["rows"][0]["object"]["spec"]["image"], "img");
    let (code, t) = get_as(&s, &format!("{CT}/a?includeObject=All"), TABLE_V1).await;
    assert_eq!(code, 400, "{t}");
    assert_eq!(
        t["message"],
        "Unable to convert to Table as requested: includeObject: Unsupported value: \"All\": supported values: \"Metadata\", \"None\", \"Object\""
    );
    assert_eq!(t["reason"], "BadRequest");

    // LIST: a row per object; wrong-typed values.
    let (code, t) = get_as(&s, &format!("{CT}?includeObject=Object"), TABLE_V1).await;
    assert_eq!(code, 200);
    let rows = t["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["cells"][0], "b");
    assert_eq!(
        rows[1]["cells"][1], "5",
        "a number in a string column prints as text"
    );
    assert_eq!(rows[1]["cells"][2], Value::Null, "missing");
    assert_eq!(
        rows[1]["cells"][4], "{\"k\":\"\\u003cv\\u003e\"}",
        "maps print as Go JSON"
    );
    assert_eq!(
        rows[2]["cells"][2],
        Value::Null,
        "a string in an integer column"
    );
    assert_eq!(rows[2]["object"]["spec"]["replicas"], "three");
    assert!(t["metadata"]["resourceVersion"].is_string());
    assert!(t["metadata"].get("continue").is_none());

    // limit/continue: the Table carries the list's metadata.
    let (_, t) = get_as(&s, &format!("{CT}?limit=2"), TABLE_V1).await;
    assert_eq!(t["rows"].as_array().map(Vec::len), Some(2));
    let token = t["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    assert_eq!(t["metadata"]["remainingItemCount"], 1);
    let rv = t["metadata"]["resourceVersion"].clone();
    let (_, t2) = get_as(&s, &format!("{CT}?limit=2&continue={token}"), TABLE_V1).await;
    assert_eq!(t2["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(t2["rows"][0]["cells"][0], "c");
    assert_eq!(t2["metadata"]["resourceVersion"], rv);
    assert!(t2["metadata"].get("continue").is_none());

    // An empty list is a Table with no rows.
    let (_, t) = get_as(
        &s,
        "/apis/stable.example.com/v1/namespaces/empty/crontabs",
        TABLE_V1,
    )
    .await;
    assert_eq!(t["rows"], json!([]));
    assert_eq!(t["columnDefinitions"].as_array().map(Vec::len), Some(5));

    // A Table of another version, or of another group, is not acceptable.
    for accept in [
        "application/json;as=Table;g=meta.k8s.io;v=v2",
        "application/json;as=Table;g=example.com;v=v1",
    ] {
        let (code, t) = get_as(&s, CT, accept).await;
        assert_eq!(code, 406, "{accept}: {t}");
        assert_eq!(t["reason"], "NotAcceptable");
        assert!(
            t["message"].as_str().is_some_and(|m| m.starts_with(
                "only the following media types are accepted: application/json, application/yaml"
            )),
            "{t}"
        );
    }

    // Built-in printers: namespaces (Name, Status, Age) and CRDs (Name, Created At).
    let (_, t) = get_as(&s, "/api/v1/namespaces/default", TABLE_V1).await;
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["Name", "Status", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], "Active");
    let (_, t) = get_as(&s, CRDS, TABLE_V1).await;
    assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
    assert!(t["rows"][0]["cells"][1]
        .as_str()
        .is_some_and(|c| c.ends_with('Z')));
    s.stop();
}

#[tokio::test]
async fn versions_without_columns_print_name_and_age() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    s.apply_yaml(MY_CRONTAB);
    let (code, t) = get_as(&s, CT, TABLE_V1).await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(
        t["columnDefinitions"],
        json!([
            {"name": "Name", "type": "string", "format": "name", "priority": 0,
             "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"},
            {"name": "Age", "type": "date", "format": "", "priority": 0,
             "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
        ])
    );
    assert_eq!(t["rows"][0]["cells"][0], "my-new-cron-object");
    assert!(t["rows"][0]["cells"][1].as_str().is_some_and(is_age));
    let out = s.kubectl_ok(&["get", "crontabs"]);
    let t = lines(&out);
    assert_eq!(t[0], ["NAME", "AGE"], "{out}");
    s.stop();
}

#[tokio::test]
async fn jsonpath_columns_evaluate_as_kubectl() {
    let s = Server::start();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.example.com"},
    "spec": {"group": "example.com", "scope": "Cluster",
        "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
        "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            "additionalPrinterColumns": [
                {"name": "First", "type": "string", "jsonPath": ".spec.items[*].name"},
                {"name": "Last", "type": "string", "jsonPath": ".spec.items[-1].name"},
                {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                {"name": "Count", "type": "number", "jsonPath": ".spec.count"},
                {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
                {"name": "List", "type": "string", "jsonPath": ".spec.items"},
                {"name": "Null", "type": "string", "jsonPath": ".spec.nothing"},
                {"name": "When", "type": "date", "jsonPath": ".spec.when"},
                {"name": "Key", "type": "string", "jsonPath": ".metadata.labels['app\\.kubernetes\\.io/name']"}
            ]}]}});
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 201, "{v}");
    s.wait_established("things.example.com");
    create(&s, "/apis/example.com/v1/things", json!({"apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "labels": {"app.kubernetes.io/name": "web"}},
        "spec": {"items": [{"name": "x"}, {"name": "y"}], "count": 2, "on": true,
            "nothing": null, "when": "not a date"},
        "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}}))
    .await;
    let (code, t) = get_as(&s, "/apis/example.com/v1/things/t", TABLE_V1).await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(
        t["rows"][0]["cells"],
        json!([
            "t",
            "x",
            "y",
            "True",
            2,
            true,
            "[{\"name\":\"x\"},{\"name\":\"y\"}]",
            "<no value>",
            "<invalid>",
            "web"
        ])
    );
    s.stop();
}

#[tokio::test]
async fn crd_writes_validate_columns_and_categories() {
    let s = Server::start();
    let crd = |columns: Value, categories: Value| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "bads.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "bads", "singular": "bad", "kind": "Bad", "categories": categories},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object"}},
                 "additionalPrinterColumns": columns},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object"}},
                 "additionalPrinterColumns": [{"name": "A", "type": "string", "jsonPath": ".a"}]}
            ]}})
    };
    let (code, v) = s
        .post_crd(&crd(
            json!([
                {"name": "T", "type": "int", "jsonPath": ".a"},
                {"name": "F", "type": "string", "format": "uint8", "jsonPath": ".a"},
                {"name": "P", "type": "string", "jsonPath": "spec.a"},
                {"name": "", "type": "", "jsonPath": ""}
            ]),
            json!(["all", "Bad_Cat"]),
        ))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid");
    let causes: Vec<(String, String)> = v["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or_default().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expect = |field: &str, message: &str| {
        assert!(
            causes.iter().any(|(f, m)| f == field && m == message),
            "{field}: {message} not in {causes:#?}"
        );
    };
    let types = "must be one of boolean,date,integer,number,string";
    let col = "spec.versions[0].additionalPrinterColumns";
    expect(
        &format!("{col}[0].type"),
        &format!("Invalid value: \"int\": {types}"),
    );
    expect(
        &format!("{col}[1].format"),
        "Invalid value: \"uint8\": must be one of byte,date,date-time,double,float,int32,int64,password",
    );
    expect(
        &format!("{col}[2].JSONPath"),
        "Invalid value: \"spec.a\": must be a simple json path starting with .",
    );
    expect(&format!("{col}[3].name"), "Required value");
    expect(
        &format!("{col}[3].type"),
        &format!("Required value: {types}"),
    );
    expect(&format!("{col}[3].JSONPath"), "Required value");
    expect(
        "spec.names.categories[1]",
        "Invalid value: \"Bad_Cat\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
    assert_eq!(causes.len(), 7, "{causes:#?}");

    // Identical columns in every version are validated as the top-level columns upstream's
    // internal type holds them.
    let same = json!([{"name": "A", "type": "strin", "jsonPath": ".a"}]);
    let mut body = crd(same.clone(), json!([]));
    body["spec"]["versions"][1]["additionalPrinterColumns"] = same;
    let (code, v) = s.post_crd(&body).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["details"]["causes"][0]["field"],
        "spec.additionalPrinterColumns[0].type"
    );

    // kubectl shows the same messages.
    let (ok, _, err) = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(
            &serde_json::to_string(&crd(
                json!([{"name": "A", "type": "date", "format": "time", "jsonPath": ".a"}]),
                json!(["all"]),
            ))
            .expect("json"),
        ),
    );
    assert!(!ok);
    assert!(
        err.contains("spec.versions[0].additionalPrinterColumns[0].format: Invalid value: \"time\": must be one of byte,date,date-time,double,float,int32,int64,password"),
        "{err}"
    );
    s.stop();
}

#[tokio::test]
async fn writes_answer_with_tables_when_asked() {
    let s = Server::start();
    s.install_crd(SEED_CRD);
    let body = serde_json::to_vec(
        &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "w"}, "spec": {"cronSpec": "1 * * * *", "replicas": 4}}),
    )
    .expect("json");
    let (code, _, b) = s
        .http(
            "POST",
            CT,
            &[("Content-Type", "application/json"), ("Accept", TABLE_V1)],
            Some(body),
        )
        .await;
    assert_eq!(code, 201);
    let t: Value = serde_json::from_slice(&b).expect("json");
    assert_eq!(t["kind"], "Table");
    assert_eq!(
        t["rows"][0]["cells"],
        json!(["w", "1 * * * *", 4, t["rows"][0]["cells"][3], null])
    );
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    let patch = br#"{"spec":{"replicas":5}}"#.to_vec();
    let (code, _, b) = s
        .http(
            "PATCH",
            &format!("{CT}/w?includeObject=None"),
            &[
                ("Content-Type", "application/merge-patch+json"),
                ("Accept", TABLE_V1BETA1),
            ],
            Some(patch),
        )
        .await;
    assert_eq!(code, 200);
    let t: Value = serde_json::from_slice(&b).expect("json");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(t["rows"][0]["cells"][2], 5);
    assert!(t["rows"][0].get("object").is_none());

    let (code, _, b) = s
        .http(
            "DELETE",
            &format!("{CT}/w"),
            &[(
                "Accept",
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    // A custom resource's delete answers with a Status, which is never transformed.
    let m: Value = serde_json::from_slice(&b).expect("json");
    assert_eq!(m["kind"], "Status");
    assert_eq!(m["status"], "Success");
    let (code, _, b) = s
        .http(
            "DELETE",
            "/api/v1/namespaces/default",
            &[("Accept", TABLE_V1)],
            None,
        )
        .await;
    assert_eq!(code, 403, "default is immortal");
    let m: Value = serde_json::from_slice(&b).expect("json");
    assert_eq!(m["kind"], "Status");
    s.stop();
}

#[tokio::test]
async fn deletecollection_answers_with_a_table_of_the_deleted() {
    let s = Server::start();
    s.install_crd(SEED_CRD);
    for n in ["d1", "d2"] {
        create(
            &s,
            CT,
            json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": n}, "spec": {"replicas": 1}}),
        )
        .await;
    }
    let (code, _, b) = s.http("DELETE", CT, &[("Accept", TABLE_V1)], None).await;
    assert_eq!(code, 200);
    let t: Value = serde_json::from_slice(&b).expect("json");
    assert_eq!(t["kind"], "Table");
    let names: Vec<&Value> = t["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| &r["cells"][0])
        .collect();
    assert_eq!(names, [&json!("d1"), &json!("d2")]);
    s.stop();
}
