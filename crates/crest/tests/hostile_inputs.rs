//! Request bodies that expand: JSON patches that copy their own results, patches of too many
//! operations, YAML nested far too deep or made of aliases to aliases, and strategic merge
//! patches and applies of very long lists. Each is answered as kube-apiserver answers it, in
//! about the time an ordinary request takes, with bounded memory; the server keeps serving.

mod common;
use common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const JSON_PATCH: &str = "application/json-patch+json";
const YAML: &str = "application/yaml";
const APPLY: &str = "application/apply-patch+yaml";
const SMP: &str = "application/strategic-merge-patch+json";

/// How long a refused or near-linear request may take in a debug build on a loaded machine:
/// an order of magnitude below what the unbounded cases took (minutes, or memory exhaustion).
const FAST: Duration = Duration::from_secs(8);

/// Sends `body` and returns (status, decoded body, how long the request took).
async fn send(
    s: &Server,
    method: &str,
    path: &str,
    ctype: &str,
    body: Vec<u8>,
) -> (u16, Value, Duration) {
    let start = Instant::now();
    let (code, _, bytes) = s
        .http(method, path, &[("Content-Type", ctype)], Some(body))
        .await;
    let took = start.elapsed();
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (code, v, took)
}

async fn create_cm(s: &Server, cm: Value) {
    let (code, body) = s
        .http_json("POST", CMS, "application/json", Some(&cm))
        .await;
    assert_eq!(code, 201, "{body}");
}

/// The server still answers ordinary requests.
async fn still_serving(s: &Server) {
    let (code, body) = s.http_json("GET", CMS, "application/json", None).await;
    assert_eq!(code, 200, "{body}");
}

fn assert_status(body: &Value, code: u16, reason: &str, message: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
    assert_eq!(body["message"], message, "{body}");
}

/// 25 `copy` operations that each copy the object's annotations into themselves would double
/// it 25 times (gigabytes from a 2 KB patch); upstream's JSONPatchMaxCopyBytes (3 MiB of
/// copies per patch) refuses the patch with its generic 422 before memory grows past that.
#[tokio::test]
async fn json_patch_copies_are_limited() {
    let s = Server::start();
    create_cm(
        &s,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "copies", "annotations": {"a": "x".repeat(1000)}},
            "data": {"k": "v"}}),
    )
    .await;
    let path = format!("{CMS}/copies");
    let doubling: Vec<Value> = (0..25)
        .map(|i| {
            json!({"op": "copy", "from": "/metadata/annotations",
                   "path": format!("/metadata/annotations/c{i}")})
        })
        .collect();
    let body = serde_json::to_vec(&doubling).expect("json");
    let (code, status, took) = send(&s, "PATCH", &path, JSON_PATCH, body).await;
    assert_eq!(code, 422, "{status}");
    assert_status(
        &status,
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    );
    assert_eq!(status["details"], json!({}), "{status}");
    assert!(took < FAST, "{took:?}");

    // Nothing was written; copies within the limit apply.
    let (code, cm) = s.http_json("GET", &path, "application/json", None).await;
    assert_eq!(code, 200, "{cm}");
    assert_eq!(
        cm["metadata"]["annotations"].as_object().map(|m| m.len()),
        Some(1)
    );
    let small = json!([{"op": "copy", "from": "/data/k", "path": "/data/k2"}]);
    let (code, cm, _) = send(
        &s,
        "PATCH",
        &path,
        JSON_PATCH,
        serde_json::to_vec(&small).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{cm}");
    assert_eq!(cm["data"], json!({"k": "v", "k2": "v"}));
    still_serving(&s).await;
}

/// More than 10,000 operations: 413 with upstream's message (checked before the operations
/// are looked at); 10,000 apply.
#[tokio::test]
async fn json_patch_operations_are_limited() {
    let s = Server::start();
    create_cm(
        &s,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ops"}}),
    )
    .await;
    let path = format!("{CMS}/ops");
    let test_op = json!({"op": "test", "path": "/metadata/name", "value": "ops"});
    let ops = |n: usize| serde_json::to_vec(&vec![test_op.clone(); n]).expect("json");

    let (code, status, took) = send(&s, "PATCH", &path, JSON_PATCH, ops(10_001)).await;
    assert_eq!(code, 413, "{status}");
    assert_status(
        &status,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    );
    assert!(took < FAST, "{took:?}");

    // Counted as upstream counts them: the raw list, before any operation is decoded.
    let junk = serde_json::to_vec(&vec![json!({"op": "nonsense"}); 10_005]).expect("json");
    let (code, status, _) = send(&s, "PATCH", &path, JSON_PATCH, junk).await;
    assert_eq!(code, 413, "{status}");
    assert_eq!(
        status["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10005"
    );

    let (code, cm, _) = send(&s, "PATCH", &path, JSON_PATCH, ops(10_000)).await;
    assert_eq!(code, 200, "{cm}");
    assert_eq!(cm["metadata"]["name"], "ops");
}

/// 200,000 levels of nesting, in the shapes libyaml scans quadratically (over a minute each in
/// a debug build before) and in block style: refused as soon as the nesting passes the
/// decoder's 128 levels, as JSON is, for a create and for an apply.
#[tokio::test]
async fn deep_yaml_is_refused_fast() {
    let s = Server::start();
    let n = 200_000;
    let docs = [
        (
            "flow mapping",
            format!("{}x{}", "{a: ".repeat(n), "}".repeat(n)),
        ),
        (
            "flow in block",
            format!("kind: ConfigMap\ndata: {}", "[".repeat(n)),
        ),
        (
            "flow sequence",
            format!("{}{}", "[".repeat(n), "]".repeat(n)),
        ),
        ("block sequence", format!("{}x\n", "- ".repeat(n))),
    ];
    for (shape, doc) in &docs {
        let (code, status, took) = send(&s, "POST", CMS, YAML, doc.clone().into_bytes()).await;
        assert_eq!(code, 400, "{shape}: {status}");
        assert_eq!(status["reason"], "BadRequest", "{shape}: {status}");
        let msg = status["message"].as_str().unwrap_or_default();
        assert!(
            msg.starts_with("error converting YAML to JSON: recursion limit exceeded at line "),
            "{shape}: {msg}"
        );
        assert!(took < FAST, "{shape}: {took:?}");

        let (code, status, took) = send(
            &s,
            "PATCH",
            &format!("{CMS}/deep?fieldManager=t"),
            APPLY,
            doc.clone().into_bytes(),
        )
        .await;
        assert_eq!(code, 400, "{shape}: {status}");
        let msg = status["message"].as_str().unwrap_or_default();
        assert!(
            msg.starts_with("error decoding YAML: error converting YAML to JSON: recursion limit exceeded at line "),
            "{shape}: {msg}"
        );
        assert!(took < FAST, "{shape}: {took:?}");
    }
    // JSON is refused at the same depth.
    let deep_json = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let (code, status, took) =
        send(&s, "POST", CMS, "application/json", deep_json.into_bytes()).await;
    assert_eq!(code, 400, "{status}");
    assert!(took < FAST, "{took:?}");

    // At the limit a document still decodes (and is then judged as a ConfigMap).
    let ok = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n  annotations:\n    a: x\ndata: {{k: {}v{}}}\n",
        "[".repeat(124),
        "]".repeat(124)
    );
    let (code, status, _) = send(&s, "POST", CMS, YAML, ok.into_bytes()).await;
    assert_eq!(code, 400, "{status}");
    let msg = status["message"].as_str().unwrap_or_default();
    assert!(!msg.contains("recursion limit"), "{msg}");
    still_serving(&s).await;
}

/// Aliases to aliases ("billion laughs", 9^9 strings from 1 KB) and n aliases of an n-element
/// list are refused with goyaml.v2's message before anything is expanded; an alias inside its
/// own anchor too. Ordinary anchors still work.
#[tokio::test]
async fn yaml_alias_expansion_is_bounded() {
    let s = Server::start();
    let mut laughs = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n");
    laughs.push_str("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..9 {
        let refs = vec![format!("*l{}", i - 1); 9].join(", ");
        laughs.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    let n = 20_000;
    let quadratic = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: q}}\na: &a [{}]\nb: [{}]\n",
        vec!["1"; n].join(","),
        vec!["*a"; n].join(",")
    );
    for (what, doc) in [("billion laughs", &laughs), ("quadratic", &quadratic)] {
        let (code, status, took) = send(&s, "POST", CMS, YAML, doc.clone().into_bytes()).await;
        assert_eq!(code, 400, "{what}: {status}");
        assert_status(
            &status,
            400,
            "BadRequest",
            "error converting YAML to JSON: yaml: document contains excessive aliasing",
        );
        assert!(took < FAST, "{what}: {took:?}");

        let (code, status, took) = send(
            &s,
            "PATCH",
            &format!("{CMS}/lol?fieldManager=t"),
            APPLY,
            doc.clone().into_bytes(),
        )
        .await;
        assert_eq!(code, 400, "{what}: {status}");
        assert_eq!(
            status["message"],
            "error decoding YAML: error converting YAML to JSON: yaml: document contains excessive aliasing",
            "{what}"
        );
        assert!(took < FAST, "{what}: {took:?}");
    }

    let recursive = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: r}}\na: &a [{}, *a]\n",
        vec!["1"; 10_000].join(",")
    );
    let (code, status, took) = send(&s, "POST", CMS, YAML, recursive.into_bytes()).await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "error converting YAML to JSON: yaml: anchor 'a' value contains itself"
    );
    assert!(took < FAST, "{took:?}");

    let anchors = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchors\n  labels: &l {app: x}\n  annotations: *l\ndata: *l\n";
    let (code, cm, _) = send(&s, "POST", CMS, YAML, anchors.as_bytes().to_vec()).await;
    assert_eq!(code, 201, "{cm}");
    assert_eq!(cm["data"], json!({"app": "x"}));
    still_serving(&s).await;
}

/// How much slower than an ordinary write of the same object a long-list merge may be: it
/// does a few times the work, near-linearly; the quadratic merges took minutes (hundreds of
/// times an ordinary write) in a debug build.
fn near_linear(took: Duration, baseline: Duration) -> bool {
    took < baseline * 10 + FAST
}

/// A trivial strategic merge patch of the object at `path`: what any write of it costs.
async fn label_patch(s: &Server, path: &str, value: &str) -> Duration {
    let patch = json!({"metadata": {"labels": {"touched": value}}});
    let (code, body, took) = send(
        s,
        "PATCH",
        path,
        SMP,
        serde_json::to_vec(&patch).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    took
}

/// A strategic merge patch of 30,000 finalizers (a list merged as a set) into 30,000 others,
/// with a deletion list and an order list, and one of 30,000 Service ports (merged by their
/// `port` key) followed by an apply of them all by another manager: each costs a small multiple
/// of an ordinary write of the same object.
#[tokio::test]
async fn long_lists_merge_and_apply_fast() {
    let s = Server::start();
    let n = 30_000;
    let fin = |i: usize| format!("example.com/f{i}");
    create_cm(
        &s,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "many", "finalizers": (0..n).map(fin).collect::<Vec<_>>()}}),
    )
    .await;
    let path = format!("{CMS}/many");
    let baseline = label_patch(&s, &path, "a").await;
    let patch = json!({"metadata": {
        "finalizers": (n..2 * n).rev().map(fin).collect::<Vec<_>>(),
        "$deleteFromPrimitiveList/finalizers": (0..n).step_by(2).map(fin).collect::<Vec<_>>(),
        "$setElementOrder/finalizers": (0..2 * n).rev().map(fin).collect::<Vec<_>>(),
    }});
    let (code, cm, took) = send(
        &s,
        "PATCH",
        &path,
        SMP,
        serde_json::to_vec(&patch).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{cm}");
    let got = cm["metadata"]["finalizers"].as_array().expect("finalizers");
    assert_eq!(got.len(), n + n / 2);
    assert_eq!(got[0], fin(2 * n - 1));
    assert!(
        near_linear(took, baseline),
        "{took:?} (an ordinary write: {baseline:?})"
    );
    // The finalizers would keep it: drop them.
    let clear = json!({"metadata": {"finalizers": null}});
    let (code, cm, _) = send(
        &s,
        "PATCH",
        &path,
        SMP,
        serde_json::to_vec(&clear).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{cm}");

    let svcs = "/api/v1/namespaces/default/services";
    let path = format!("{svcs}/ports");
    let port = |i: usize| json!({"name": format!("p{i}"), "port": i + 1});
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ports"},
        "spec": {"ports": (0..n).map(port).collect::<Vec<_>>()}});
    let (code, body, _) = send(
        &s,
        "POST",
        svcs,
        "application/json",
        serde_json::to_vec(&svc).expect("json"),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let baseline = label_patch(&s, &path, "b").await;
    let patch = json!({"spec": {"ports": (0..n).rev()
        .map(|i| json!({"port": i + 1, "targetPort": i + 2})).collect::<Vec<_>>()}});
    let (code, body, took) = send(
        &s,
        "PATCH",
        &path,
        SMP,
        serde_json::to_vec(&patch).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let ports = body["spec"]["ports"].as_array().expect("ports");
    assert_eq!(ports.len(), n);
    assert_eq!(
        ports[0],
        json!({"name": format!("p{}", n - 1), "port": n, "protocol": "TCP", "targetPort": n + 1})
    );
    assert!(
        near_linear(took, baseline),
        "{took:?} (an ordinary write: {baseline:?})"
    );

    // Ports are a list map (keys port and protocol) to server-side apply.
    let applied = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ports"},
        "spec": {"ports": (0..n).map(|i| json!({"port": i + 1, "protocol": "TCP", "targetPort": i + 3})).collect::<Vec<_>>()}});
    let (code, body, took) = send(
        &s,
        "PATCH",
        &format!("{path}?fieldManager=two&force=true"),
        APPLY,
        serde_json::to_vec(&applied).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["ports"][0]["targetPort"], 3);
    assert!(
        near_linear(took, baseline),
        "{took:?} (an ordinary write: {baseline:?})"
    );
}

/// A merge patch of a ConfigMap of 30,000 entries, and server-side apply of one, created then
/// changed by a second manager: each a small multiple of writing it.
#[tokio::test]
async fn large_apply_configurations_apply_fast() {
    let s = Server::start();
    let n = 30_000;
    let data = |v: &str, step: usize| -> serde_json::Map<String, Value> {
        (0..n)
            .step_by(step)
            .map(|i| (format!("k{i}"), json!(format!("{v}{i}"))))
            .collect()
    };
    let start = Instant::now();
    create_cm(
        &s,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}, "data": data("v", 1)}),
    )
    .await;
    let baseline = start.elapsed();

    // A JSON merge patch of every entry (half of them removed) merges key by key: its result is
    // never larger than the object and the patch together, and it costs about a write.
    let mut changes = data("x", 1);
    for i in (0..n).step_by(2) {
        changes.insert(format!("k{i}"), Value::Null);
    }
    let merge = json!({"data": changes});
    let (code, cm, took) = send(
        &s,
        "PATCH",
        &format!("{CMS}/plain"),
        "application/merge-patch+json",
        serde_json::to_vec(&merge).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{cm}");
    assert_eq!(cm["data"].as_object().map(|m| m.len()), Some(n / 2));
    assert_eq!(cm["data"]["k1"], "x1");
    assert!(
        near_linear(took, baseline),
        "{took:?} (an ordinary write: {baseline:?})"
    );

    let mut yaml = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n");
    for i in 0..n {
        yaml.push_str(&format!("  k{i}: v{i}\n"));
    }
    let path = format!("{CMS}/big?fieldManager=one");
    let (code, cm, took) = send(&s, "PATCH", &path, APPLY, yaml.into_bytes()).await;
    assert_eq!(code, 201, "{cm}");
    assert_eq!(cm["data"].as_object().map(|m| m.len()), Some(n));
    assert!(
        near_linear(took, baseline),
        "{took:?} (an ordinary write: {baseline:?})"
    );

    let second = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": data("w", 2)});
    let path = format!("{CMS}/big?fieldManager=two&force=true");
    let (code, cm, took) = send(
        &s,
        "PATCH",
        &path,
        APPLY,
        serde_json::to_vec(&second).expect("json"),
    )
    .await;
    assert_eq!(code, 200, "{cm}");
    assert_eq!(cm["data"]["k0"], "w0");
    assert_eq!(cm["data"]["k1"], "v1");
    assert!(
        near_linear(took, baseline),
        "{took:?} (an ordinary write: {baseline:?})"
    );
}
