//! Label and field selectors through real clients: the seed's (000) "shirts" selectableFields
//! example with kubectl, `-l` with every operator, a watch and a deletecollection filtered by
//! selectors over raw HTTP, kube-apiserver's 400s for bad selectors and unsupported fields, and
//! the 422 for invalid selectableFields.

mod common;
use common::watch::{summary, WatchReader};
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

/// The seed's shirt-resource-definition.yaml.
const SHIRT_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shirts.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: shirts
    singular: shirt
    kind: Shirt
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
              color:
                type: string
              size:
                type: string
    selectableFields:
    - jsonPath: .spec.color
    - jsonPath: .spec.size
    additionalPrinterColumns:
    - jsonPath: .spec.color
      name: Color
      type: string
    - jsonPath: .spec.size
      name: Size
      type: string
"#;

/// The seed's shirt-resources.yaml.
const SHIRTS: &str = r#"---
apiVersion: stable.example.com/v1
kind: Shirt
metadata:
  name: example1
spec:
  color: blue
  size: S
---
apiVersion: stable.example.com/v1
kind: Shirt
metadata:
  name: example2
spec:
  color: blue
  size: M
---
apiVersion: stable.example.com/v1
kind: Shirt
metadata:
  name: example3
spec:
  color: green
  size: M
"#;

const SHIRTS_PATH: &str = "/apis/stable.example.com/v1/namespaces/default/shirts";

/// The rows kubectl prints, each split on whitespace.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn table(lines: &[&str]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// `kubectl get shirts -o name` with extra arguments: the shirt names.
fn names(s: &Server, args: &[&str]) -> Vec<String> {
    let mut all = vec!["get", "shirts", "-o", "name"];
    all.extend_from_slice(args);
    s.kubectl_ok(&all)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("shirt.stable.example.com/"))
        .map(str::to_string)
        .collect()
}

fn assert_bad_request(code: u16, v: &Value, message: &str) {
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["status"], "Failure", "{v}");
    assert_eq!(v["reason"], "BadRequest", "{v}");
    assert_eq!(v["code"], 400, "{v}");
    assert_eq!(v["message"], message, "{v}");
}

/// Percent-encodes a query parameter value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn seed_shirts_field_selectors_with_kubectl() {
    let s = Server::start();
    s.install_crd(SHIRT_CRD);
    s.apply_yaml(SHIRTS);

    let all = s.kubectl_ok(&["get", "shirts.stable.example.com"]);
    assert_eq!(
        rows(&all),
        table(&[
            "NAME COLOR SIZE",
            "example1 blue S",
            "example2 blue M",
            "example3 green M",
        ]),
        "{all}"
    );

    let blue = s.kubectl_ok(&[
        "get",
        "shirts.stable.example.com",
        "--field-selector",
        "spec.color=blue",
    ]);
    assert_eq!(
        rows(&blue),
        table(&["NAME COLOR SIZE", "example1 blue S", "example2 blue M"]),
        "{blue}"
    );

    // The seed prints example2 here, a typo: green and M is example3.
    let green_m = s.kubectl_ok(&[
        "get",
        "shirts.stable.example.com",
        "--field-selector",
        "spec.color=green,spec.size=M",
    ]);
    assert_eq!(
        rows(&green_m),
        table(&["NAME COLOR SIZE", "example3 green M"]),
        "{green_m}"
    );

    assert_eq!(
        names(&s, &["--field-selector", "spec.color!=blue"]),
        ["example3"]
    );
    assert_eq!(
        names(
            &s,
            &["--field-selector", "spec.size==M,metadata.name!=example3"]
        ),
        ["example2"]
    );
    assert_eq!(
        names(
            &s,
            &["--field-selector", "metadata.namespace=default,spec.size=S"]
        ),
        ["example1"]
    );
    assert_eq!(
        names(&s, &["--field-selector", "spec.color=red"]),
        Vec::<String>::new()
    );
    let (ok, out, err) = s.kubectl(&["get", "shirts", "--field-selector", "spec.color=red"]);
    assert!(ok, "{out}{err}");
    assert!(
        err.contains("No resources found in default namespace."),
        "{err}"
    );

    // A field the version does not declare.
    let (ok, _, err) = s.kubectl(&["get", "shirts", "--field-selector", "spec.material=cotton"]);
    assert!(!ok);
    assert!(err.contains("Error from server (BadRequest)"), "{err}");
    assert!(
        err.contains("field label not supported: spec.material"),
        "{err}"
    );

    // CRDs themselves select on metadata only.
    let crds = s.kubectl_ok(&[
        "get",
        "crd",
        "-o",
        "name",
        "--field-selector",
        "metadata.name=shirts.stable.example.com",
    ]);
    assert_eq!(
        crds.trim(),
        "customresourcedefinition.apiextensions.k8s.io/shirts.stable.example.com"
    );
}

#[test]
fn label_selectors_with_every_operator() {
    let s = Server::start();
    s.install_crd(SHIRT_CRD);
    s.apply_yaml(SHIRTS);
    s.kubectl_ok(&["label", "shirt", "example1", "tier=a", "n=1"]);
    s.kubectl_ok(&["label", "shirt", "example2", "tier=b", "n=5"]);
    s.kubectl_ok(&["label", "shirt", "example3", "n=10"]);

    for (selector, want) in [
        ("tier=a", vec!["example1"]),
        ("tier==a", vec!["example1"]),
        ("tier!=a", vec!["example2", "example3"]),
        ("tier in (a,b)", vec!["example1", "example2"]),
        ("tier in (a, x)", vec!["example1"]),
        ("tier notin (a)", vec!["example2", "example3"]),
        ("tier", vec!["example1", "example2"]),
        ("!tier", vec!["example3"]),
        ("n>4", vec!["example2", "example3"]),
        ("n<5", vec!["example1"]),
        ("n > 1, n < 10", vec!["example2"]),
        ("tier, n>1", vec!["example2"]),
        ("!tier,n", vec!["example3"]),
        ("missing", vec![]),
        ("tier=", vec![]),
    ] {
        assert_eq!(names(&s, &["-l", selector]), want, "-l {selector:?}");
    }
    // Labels and fields together.
    assert_eq!(
        names(&s, &["-l", "n>1", "--field-selector", "spec.color=green"]),
        ["example3"]
    );
}

#[tokio::test]
async fn bad_selectors_are_bad_requests() {
    let s = Server::start();
    s.install_crd(SHIRT_CRD);
    s.apply_yaml(SHIRTS);
    let get = |q: String| {
        let s = &s;
        async move {
            s.http_json(
                "GET",
                &format!("{SHIRTS_PATH}?{q}"),
                "application/json",
                None,
            )
            .await
        }
    };

    for (selector, message) in [
        (
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
        ),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        (
            "a>b",
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a=b c",
            "found 'c', expected: ',' or 'end of string'",
        ),
        (
            "a/b/c",
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
        (
            "app=-x",
            "unable to parse requirement: values[0][app]: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ] {
        let (code, v) = get(format!("labelSelector={}", enc(selector))).await;
        assert_bad_request(code, &v, message);
    }

    for (selector, message) in [
        ("spec.foo=x", "field label not supported: spec.foo"),
        ("status.phase=x", "field label not supported: status.phase"),
        (
            "spec.color",
            "invalid selector: 'spec.color'; can't understand 'spec.color'",
        ),
        (
            "spec.color=a=b",
            "invalid field selector: unescaped character in value: 61",
        ),
        (
            r"spec.color=a\b",
            r"invalid field selector: invalid escape sequence: \b",
        ),
    ] {
        let (code, v) = get(format!("fieldSelector={}", enc(selector))).await;
        assert_bad_request(code, &v, message);
    }
    // Watch and deletecollection answer the same, and nothing is deleted.
    let (code, v) = get(format!("watch=1&fieldSelector={}", enc("spec.foo=x"))).await;
    assert_bad_request(code, &v, "field label not supported: spec.foo");
    let (code, v) = s
        .http_json(
            "DELETE",
            &format!("{SHIRTS_PATH}?labelSelector={}", enc("a b")),
            "application/json",
            None,
        )
        .await;
    assert_bad_request(
        code,
        &v,
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    let (code, v) = get(String::new()).await;
    assert_eq!(code, 200);
    assert_eq!(v["items"].as_array().map(Vec::len), Some(3), "{v}");

    // Built-in resources: their own field label conversions.
    let (code, v) = s
        .http_json(
            "GET",
            &format!(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector={}",
                enc("spec.group=stable.example.com")
            ),
            "application/json",
            None,
        )
        .await;
    assert_bad_request(
        code,
        &v,
        r#""spec.group" is not a known field selector: only "metadata.name", "metadata.namespace""#,
    );
    let (code, v) = s
        .http_json(
            "GET",
            &format!(
                "/api/v1/namespaces?fieldSelector={}",
                enc("metadata.namespace=x")
            ),
            "application/json",
            None,
        )
        .await;
    assert_bad_request(code, &v, "field label not supported: metadata.namespace");
    let (code, v) = s
        .http_json(
            "GET",
            &format!(
                "/api/v1/namespaces?fieldSelector={}",
                enc("status.phase=Active,metadata.name=default")
            ),
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["items"][0]["metadata"]["name"], "default", "{v}");

    // kubectl shows the server's message.
    let (ok, _, err) = s.kubectl(&["get", "shirts", "-l", "a b"]);
    assert!(!ok);
    assert!(
        err.contains(
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        ),
        "{err}"
    );
}

/// A shirts CRD with integer and boolean selectable fields too.
fn typed_shirt_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "shirts.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "shirts", "singular": "shirt", "kind": "Shirt"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {
                        "color": {"type": "string"},
                        "size": {"type": "string", "enum": ["S", "M", "L"]},
                        "count": {"type": "integer"},
                        "onSale": {"type": "boolean"},
                    },
                }}}},
                "selectableFields": [
                    {"jsonPath": ".spec.color"},
                    {"jsonPath": ".spec.size"},
                    {"jsonPath": ".spec.count"},
                    {"jsonPath": ".spec.onSale"},
                ],
            }],
        },
    })
}

fn shirt(name: &str, labels: Value, spec: Value) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "Shirt",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    })
}

async fn create_typed(s: &Server) {
    let (code, v) = s.post_crd(&typed_shirt_crd()).await;
    assert_eq!(code, 201, "{v}");
    s.wait_established("shirts.stable.example.com");
    for (name, labels, spec) in [
        (
            "s1",
            json!({"tier": "a"}),
            json!({"color": "blue", "size": "S", "count": 1, "onSale": true}),
        ),
        (
            "s2",
            json!({"tier": "b"}),
            json!({"color": "blue", "size": "M", "count": 20}),
        ),
        (
            "s3",
            json!({"tier": "a"}),
            json!({"color": "green", "size": "M", "onSale": false}),
        ),
        ("s4", json!({}), json!({"size": "L"})),
    ] {
        let (code, v) = s
            .http_json(
                "POST",
                SHIRTS_PATH,
                "application/json",
                Some(&shirt(name, labels, spec)),
            )
            .await;
        assert_eq!(code, 201, "{v}");
    }
}

async fn list_names(s: &Server, query: &str) -> Vec<String> {
    let (code, v) = s
        .http_json(
            "GET",
            &format!("{SHIRTS_PATH}?{query}"),
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200, "{query}: {v}");
    v["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn typed_selectable_fields_watch_and_deletecollection() {
    let s = Server::start();
    create_typed(&s).await;

    // Integers print in decimal, booleans as true/false, absent fields as "".
    for (selector, want) in [
        ("spec.count=1", vec!["s1"]),
        ("spec.count=20", vec!["s2"]),
        ("spec.onSale=true", vec!["s1"]),
        ("spec.onSale=false", vec!["s3"]),
        ("spec.onSale=", vec!["s2", "s4"]),
        ("spec.color=", vec!["s4"]),
        ("spec.color!=", vec!["s1", "s2", "s3"]),
        ("spec.size=M,spec.color=blue", vec!["s2"]),
    ] {
        assert_eq!(
            list_names(&s, &format!("fieldSelector={}", enc(selector))).await,
            want,
            "{selector}"
        );
    }

    // A watch on a selectable field: the initial state, then objects entering (ADDED), changing
    // within (MODIFIED) and leaving (DELETED) the selection.
    let mut w = WatchReader::open(
        &s,
        &format!(
            "{SHIRTS_PATH}?watch=1&fieldSelector={}",
            enc("spec.color=green")
        ),
    )
    .await;
    assert_eq!(w.status, 200);
    let first = w.next(Duration::from_secs(5)).await.expect("initial event");
    assert_eq!(summary(&[first]), [("ADDED".to_string(), "s3".to_string())]);
    let patch = |name: &'static str, body: Value| {
        let s = &s;
        async move {
            let (code, v) = s
                .http_json(
                    "PATCH",
                    &format!("{SHIRTS_PATH}/{name}"),
                    "application/merge-patch+json",
                    Some(&body),
                )
                .await;
            assert_eq!(code, 200, "{v}");
        }
    };
    patch("s1", json!({"spec": {"color": "green"}})).await; // enters
    patch("s2", json!({"spec": {"count": 21}})).await; // not selected: no event
    patch("s3", json!({"spec": {"count": 3}})).await; // stays
    patch("s1", json!({"spec": {"color": "red"}})).await; // leaves
    let (code, v) = s
        .http_json(
            "POST",
            SHIRTS_PATH,
            "application/json",
            Some(&shirt("s5", json!({}), json!({"color": "green"}))),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let mut events = vec![];
    for _ in 0..4 {
        events.push(w.next(Duration::from_secs(5)).await.expect("event"));
    }
    assert_eq!(
        summary(&events),
        [
            ("ADDED".to_string(), "s1".to_string()),
            ("MODIFIED".to_string(), "s3".to_string()),
            ("DELETED".to_string(), "s1".to_string()),
            ("ADDED".to_string(), "s5".to_string()),
        ]
    );
    assert_eq!(events[1]["object"]["spec"]["count"], 3);
    assert!(w.next(Duration::from_millis(300)).await.is_none());

    // A watch with a label selector too.
    let mut w = WatchReader::open(
        &s,
        &format!(
            "{SHIRTS_PATH}?watch=1&labelSelector={}&fieldSelector={}",
            enc("tier in (a)"),
            enc("spec.size=M")
        ),
    )
    .await;
    let first = w.next(Duration::from_secs(5)).await.expect("initial event");
    assert_eq!(summary(&[first]), [("ADDED".to_string(), "s3".to_string())]);

    // deletecollection with a label selector deletes the selected objects only.
    let (code, v) = s
        .http_json(
            "DELETE",
            &format!("{SHIRTS_PATH}?labelSelector={}", enc("tier=a")),
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["kind"], "ShirtList", "{v}");
    let mut deleted: Vec<&str> = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    deleted.sort();
    assert_eq!(deleted, ["s1", "s3"]);
    let ev = w.next(Duration::from_secs(5)).await.expect("DELETED event");
    assert_eq!(summary(&[ev]), [("DELETED".to_string(), "s3".to_string())]);
    assert_eq!(list_names(&s, "").await, ["s2", "s4", "s5"]);

    // ... and with a field selector.
    let (code, v) = s
        .http_json(
            "DELETE",
            &format!("{SHIRTS_PATH}?fieldSelector={}", enc("spec.size!=L")),
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(list_names(&s, "").await, ["s4"]);
}

#[tokio::test]
async fn invalid_selectable_fields_are_refused() {
    let s = Server::start();
    let mut crd = typed_shirt_crd();
    crd["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.color"},
        {"jsonPath": ".spec.nope"},
        {"jsonPath": ".spec"},
        {"jsonPath": ""},
        {"jsonPath": ".spec.color"},
        {"jsonPath": "spec.size"},
        {"jsonPath": ".spec['size']"},
    ]);
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    let errors = [
        r#"spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#,
        r#"spec.selectableFields[2].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#,
        "spec.selectableFields[3].jsonPath: Required value",
        r#"spec.selectableFields[4].jsonPath: Duplicate value: ".spec.color""#,
        r#"spec.selectableFields[5].jsonPath: Invalid value: "spec.size": is an invalid path: expected [ or . but got: spec"#,
        r#"spec.selectableFields[6].jsonPath: Invalid value: ".spec['size']": is an invalid path: array notation is not allowed"#,
    ];
    assert_eq!(
        v["message"],
        format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"shirts.stable.example.com\" is invalid: [{}]",
            errors.join(", ")
        ),
        "{v}"
    );
    let causes: Vec<String> = v["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(causes, errors);

    // Nine distinct fields: too many.
    let mut crd = typed_shirt_crd();
    let props: serde_json::Map<String, Value> = (0..9)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] =
        Value::Object(props);
    crd["spec"]["versions"][0]["selectableFields"] = Value::Array(
        (0..9)
            .map(|i| json!({"jsonPath": format!(".spec.f{i}")}))
            .collect(),
    );
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"shirts.stable.example.com\" is invalid: spec.selectableFields: Too many: 9: must have at most 8 items",
        "{v}"
    );

    // kubectl prints each error.
    let yaml = SHIRT_CRD.replace(
        "- jsonPath: .spec.size\n    additional",
        "- jsonPath: .spec.weight\n    additional",
    );
    let (ok, _, err) = s.kubectl_stdin(&["apply", "-f", "-"], Some(&yaml));
    assert!(!ok);
    assert!(
        err.contains(r#"The CustomResourceDefinition "shirts.stable.example.com" is invalid: spec.selectableFields[1].jsonPath: Invalid value: ".spec.weight": is an invalid path: does not refer to a valid field"#),
        "{err}"
    );
}
