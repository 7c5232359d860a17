//! Hostile sizes (issue 19, item 3): requests that carry 30,000 entries in one list-valued
//! place — ownerReferences, finalizers, managedFields, labels and annotations, a
//! `x-kubernetes-list-type: set` / `map` array, a large enum, a CEL rule's list, a label
//! selector's `in` set, a field selector's requirements, a Table's cells — answer in time
//! linear in their size, with kube-apiserver's answer.
//!
//! Each case asserts an absolute bound ([`BOUND`]) that a debug build on a loaded 2-core machine
//! meets with room to spare when the work is linear (a fraction of a second to a few seconds),
//! while quadratic work over 30,000 entries (9e8 steps) takes minutes there. The cases run one
//! at a time ([`SERIAL`]) so that they do not slow each other down.

mod common;
use common::*;
use serde_json::{json, Value};
use std::future::Future;
use std::time::{Duration, Instant};

/// How many entries each hostile request carries.
const N: usize = 30_000;

/// What one request over N entries may take. Linear work answers well within it; quadratic
/// work is two orders of magnitude slower.
const BOUND: Duration = Duration::from_secs(15);

/// One case at a time: timings are not shared with another case's server.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs one case on its own runtime, after the previous case finished.
fn serial<F: Future>(f: F) -> F::Output {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// Awaits `f`, failing when it took longer than [`BOUND`].
async fn timed<T>(what: &str, f: impl Future<Output = T>) -> T {
    let start = Instant::now();
    let out = f.await;
    let took = start.elapsed();
    eprintln!("{what}: {took:?}");
    assert!(
        took < BOUND,
        "{what} took {took:?} (bound {BOUND:?}): work grows faster than the request"
    );
    out
}

const CM: &str = "/api/v1/namespaces/default/configmaps";

/// A raw JSON request as the admin over HTTP/1.1: (status, headers, body as JSON). HTTP/1.1
/// because a request line may then be as long as a URI's 64 KiB and the answer's headers may be
/// long (HTTP/2 header lists are capped lower by default, on both ends here).
async fn req(
    s: &Server,
    method: &str,
    path: &str,
    ctype: &str,
    body: Option<&Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let client = s
        .reqwest_builder()
        .http1_only()
        .build()
        .expect("reqwest client");
    let mut r = client
        .request(
            method.parse().expect("method"),
            format!("{}{}", s.base, path),
        )
        .header("Content-Type", ctype);
    if let Some(body) = body {
        let b = serde_json::to_vec(body).expect("json");
        assert!(
            b.len() < 3 << 20,
            "{method} {path}: body of {} bytes",
            b.len()
        );
        r = r.body(b);
    }
    let resp = r.send().await.expect("http request");
    let code = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.expect("body");
    let v = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
        Value::String(String::from_utf8_lossy(&bytes).chars().take(2000).collect())
    });
    (code, headers, v)
}

/// [`req`] with a JSON body.
async fn json_req(
    s: &Server,
    method: &str,
    path: &str,
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    req(s, method, path, "application/json", Some(body)).await
}

/// A GET of `path` (as [`req`]): (status, body as JSON).
async fn get_http1(s: &Server, path: &str) -> (u16, Value) {
    let (code, _, v) = req(s, "GET", path, "application/json", None).await;
    (code, v)
}

/// A short view of a (possibly huge) answer for assertion messages.
fn short(v: &Value) -> String {
    v.to_string().chars().take(1500).collect()
}

/// The group of the custom resources below.
const GROUP: &str = "hostile.example.com";

/// Installs a namespaced CRD `<plural>.hostile.example.com` (kind `kind`) whose `spec` has the
/// properties `props` (YAML indented 16 spaces); returns the collection's path.
fn install(s: &Server, plural: &str, kind: &str, props: &str) -> String {
    let schema = format!(
        r#"          type: object
          properties:
            spec:
              type: object
              properties:
{props}"#
    );
    s.install_crd(&crd_with_schema(GROUP, plural, kind, &schema));
    format!("/apis/{GROUP}/v1/namespaces/default/{plural}")
}

fn custom(kind: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": kind, "metadata": {"name": name}, "spec": spec})
}

#[test]
fn owner_references_dedup_in_linear_time() {
    serial(async {
        let s = Server::start();
        // Upstream's worst case: one uid throughout (its dedup then compares whole entries),
        // every entry twice. The first of each stays, in order.
        let unique: Vec<Value> = (0..N / 2)
            .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": format!("o{i}"), "uid": "u"}))
            .collect();
        let refs: Vec<Value> = unique.iter().chain(unique.iter()).cloned().collect();
        // Dry runs: the owners do not exist, so the garbage collector would delete a stored
        // dependent (the answers are the same).
        let cm = json!({"metadata": {"name": "owned", "ownerReferences": refs}});
        let (code, h, v) = timed(
            "create with 30,000 ownerReferences",
            json_req(&s, "POST", &format!("{CM}?dryRun=All"), &cm),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        assert_eq!(
            v["metadata"]["ownerReferences"],
            Value::from(unique.clone())
        );
        let w = warnings(&h);
        assert_eq!(w.len(), 1, "{w:?}");
        // The text names every duplicate's uid, and kube-apiserver's warning recorder cuts it
        // to 256 characters (past 4 Ki of warnings), so the header stays small.
        let expected = "299 - \".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u, u, u, u";
        assert!(
            w[0].starts_with(expected),
            "{}",
            &w[0][..300.min(w[0].len())]
        );
        assert!(
            w[0].len() <= 256 + 10,
            "a {}-byte Warning header",
            w[0].len()
        );

        // A patch is deduplicated after admission, and says so.
        let plain = json!({"metadata": {"name": "owned"}});
        let (code, _, v) = json_req(&s, "POST", CM, &plain).await;
        assert_eq!(code, 201, "{}", short(&v));
        let patch = json!({"metadata": {"ownerReferences": refs}, "data": {"k": "v"}});
        let (code, h, v) = timed(
            "merge patch with 30,000 ownerReferences",
            req(
                &s,
                "PATCH",
                &format!("{CM}/owned?dryRun=All"),
                "application/merge-patch+json",
                Some(&patch),
            ),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(v["metadata"]["ownerReferences"], Value::from(unique));
        let w = warnings(&h);
        assert!(
            w.len() == 1
                && w[0].starts_with("299 - \".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+"),
            "{:?}",
            w.iter().map(|w| &w[..200.min(w.len())]).collect::<Vec<_>>()
        );
    });
}

#[test]
fn many_controller_owner_references_in_linear_time() {
    serial(async {
        let s = Server::start();
        let refs: Vec<Value> = (0..N)
            .map(|i| json!({"apiVersion": "v1", "kind": "K", "name": format!("o{i}"), "uid": format!("u{i}"), "controller": true}))
            .collect();
        let cm = json!({"metadata": {"name": "owned", "ownerReferences": refs}});
        let (code, _, v) = timed(
            "create with 30,000 controller ownerReferences",
            json_req(&s, "POST", CM, &cm),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        assert_eq!(v["reason"], "Invalid", "{}", short(&v));
        let causes = v["details"]["causes"].as_array().expect("causes");
        // Upstream's error per further controller, each naming the first one.
        assert_eq!(causes.len(), N - 1);
        let last = causes[N - 2]["message"].as_str().unwrap_or_default();
        assert!(
            last.ends_with(r#"Only one reference can have Controller set to true. Found "true" in references for K/o0 and K/o29999"#),
            "{}",
            &last[last.len().saturating_sub(300)..]
        );
        assert_eq!(causes[0]["field"], "metadata.ownerReferences");
        // The list is shown (once at least: the first error is upstream's), not 30,000 times.
        let first = causes[0]["message"].as_str().unwrap_or_default();
        assert!(
            first.starts_with(r#"Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", Kind:"K", Name:"o0", UID:"u0", Controller:(*bool)(0xc"#),
            "{}",
            &first[..300.min(first.len())]
        );
        assert_eq!(
            causes[N - 2]["message"],
            r#"Invalid value: Only one reference can have Controller set to true. Found "true" in references for K/o0 and K/o29999"#
        );
        assert!(
            v.to_string().len() < 32 << 20,
            "an answer of {} bytes",
            v.to_string().len()
        );
    });
}

#[test]
fn finalizers_in_linear_time() {
    serial(async {
        let s = Server::start();
        let path = install(
            &s,
            "finals",
            "Final",
            "                x:\n                  type: string\n",
        );
        let fins: Vec<String> = (0..N).map(|i| format!("f.io/{i}")).collect();
        let mut o = custom("Final", "f", json!({"x": "a"}));
        o["metadata"]["finalizers"] = json!(fins);
        let (code, h, v) = timed(
            "create with 30,000 finalizers",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        assert!(warnings(&h).is_empty(), "{:?}", warnings(&h));
        assert_eq!(v["metadata"]["finalizers"], json!(fins));

        // An update that adds one finalizer (warned about: it has no domain) and reorders.
        let mut changed: Vec<String> = fins.iter().rev().cloned().collect();
        changed.push("plain".into());
        let mut o = v.clone();
        o["metadata"]["finalizers"] = json!(changed);
        let (code, h, v) = timed(
            "update with 30,000 finalizers",
            json_req(&s, "PUT", &format!("{path}/f"), &o),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(
            warnings(&h),
            [
                r#"299 - "metadata.finalizers: \"plain\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers""#
            ]
        );

        // DELETE with orphan propagation: the orphan finalizer joins the 30,001 others.
        let (code, _, v) = timed(
            "delete (orphan) with 30,001 finalizers",
            json_req(
                &s,
                "DELETE",
                &format!("{path}/f"),
                &json!({"propagationPolicy": "Orphan"}),
            ),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        let now = v["metadata"]["finalizers"].as_array().expect("finalizers");
        assert_eq!(now.len(), N + 2);
        assert_eq!(now[N + 1], "orphan");
        assert!(v["metadata"]["deletionTimestamp"].is_string());

        // No finalizer may join an object being deleted.
        let mut o = v.clone();
        let mut more = changed.clone();
        more.push("g.io/new".into());
        o["metadata"]["finalizers"] = json!(more);
        let (code, _, v) = timed(
            "update adding a finalizer while deleting",
            json_req(&s, "PUT", &format!("{path}/f"), &o),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        assert_eq!(
            v["message"],
            r#"Final.hostile.example.com "f" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"g.io/new"}"#
        );
    });
}

#[test]
fn labels_and_annotations_in_linear_time() {
    serial(async {
        let s = Server::start();
        let labels: serde_json::Map<String, Value> =
            (0..N).map(|i| (format!("l{i}"), json!("v"))).collect();
        let annotations: serde_json::Map<String, Value> =
            (0..N).map(|i| (format!("a{i}"), json!(""))).collect();
        let cm =
            json!({"metadata": {"name": "labelled", "labels": labels, "annotations": annotations}});
        let (code, _, v) = timed(
            "create with 30,000 labels and 30,000 annotations",
            json_req(&s, "POST", CM, &cm),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        assert_eq!(
            v["metadata"]["labels"].as_object().map(|m| m.len()),
            Some(N)
        );

        // 30,000 invalid keys: one error each, in upstream's wording.
        let bad: serde_json::Map<String, Value> =
            (0..N).map(|i| (format!("-l{i}"), json!("v"))).collect();
        let cm = json!({"metadata": {"name": "bad", "labels": bad}});
        let (code, _, v) = timed(
            "create with 30,000 invalid labels",
            json_req(&s, "POST", CM, &cm),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        let causes = v["details"]["causes"].as_array().expect("causes");
        assert_eq!(causes.len(), N);
        assert_eq!(causes[0]["field"], "metadata.labels");

        // A custom resource's labels count for its generation; an update changing one label.
        let path = install(
            &s,
            "labelleds",
            "Labelled",
            "                x:\n                  type: string\n",
        );
        let mut o = custom("Labelled", "l", json!({"x": "a"}));
        o["metadata"]["labels"] = json!(labels);
        o["metadata"]["annotations"] = json!(annotations);
        let (code, _, v) = timed(
            "create a custom resource with 30,000 labels",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        let mut o = v.clone();
        o["metadata"]["labels"]["l0"] = json!("w");
        let (code, _, v) = timed(
            "update of a custom resource with 30,000 labels",
            json_req(&s, "PUT", &format!("{path}/l"), &o),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(v["metadata"]["labels"]["l0"], "w");
    });
}

#[test]
fn managed_fields_in_linear_time() {
    serial(async {
        let s = Server::start();
        // Server-side apply of 30,000 data keys: 30,000 fields owned by one manager.
        let data: serde_json::Map<String, Value> =
            (0..N).map(|i| (format!("k{i}"), json!("v"))).collect();
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": data});
        let (code, _, v) = timed(
            "apply of 30,000 fields",
            req(
                &s,
                "PATCH",
                &format!("{CM}/m?fieldManager=one"),
                "application/apply-patch+yaml",
                Some(&cm),
            ),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        let owned = &v["metadata"]["managedFields"][0]["fieldsV1"]["f:data"];
        assert_eq!(owned.as_object().map(|m| m.len()), Some(N));

        // Another manager applying different values: 30,000 conflicts, one per field.
        let mut other = cm.clone();
        for (_, x) in other["data"].as_object_mut().expect("data").iter_mut() {
            *x = json!("w");
        }
        let (code, _, v) = timed(
            "conflicting apply of 30,000 fields",
            req(
                &s,
                "PATCH",
                &format!("{CM}/m?fieldManager=two"),
                "application/apply-patch+yaml",
                Some(&other),
            ),
        )
        .await;
        assert_eq!(code, 409, "{}", short(&v));
        assert_eq!(
            v["details"]["causes"].as_array().map(Vec::len),
            Some(N),
            "{}",
            short(&v)
        );

        // An update (PUT) changing every value: the fields move to the updater.
        let put = json!({"metadata": {"name": "m"}, "data": other["data"].clone()});
        let (code, _, v) = timed(
            "update of 30,000 managed fields",
            json_req(&s, "PUT", &format!("{CM}/m?fieldManager=three"), &put),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        let managers: Vec<&str> = v["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .filter_map(|m| m["manager"].as_str())
            .collect();
        assert_eq!(
            managers,
            ["three"],
            "{}",
            short(&v["metadata"]["managedFields"])
        );

        // A client sending managedFields entries of its own (distinct managers, each owning a
        // field; 25,000 of them, as 30,000 do not fit in a 3 MiB body): the Update managers
        // beyond ten are merged into `ancient-changes`.
        const ENTRIES: usize = 25_000;
        let entries: Vec<Value> = (0..ENTRIES)
            .map(|i| json!({"manager": format!("{i:x}"), "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {format!("f:{i:x}"): {}}}}))
            .collect();
        let cm =
            json!({"metadata": {"name": "entries", "managedFields": entries}, "data": {"a": "b"}});
        let (code, _, v) = timed(
            "create with 25,000 managedFields entries",
            json_req(&s, "POST", CM, &cm),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        let managed = v["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields");
        assert!(
            managed.len() <= 12,
            "{}",
            short(&v["metadata"]["managedFields"])
        );
        let ancient = managed
            .iter()
            .find(|m| m["manager"] == "ancient-changes")
            .unwrap_or_else(|| panic!("{}", short(&v["metadata"]["managedFields"])));
        let fields = ancient["fieldsV1"]["f:data"]
            .as_object()
            .map_or(0, |m| m.len());
        assert!(fields > ENTRIES - 20, "{fields}");
    });
}

const SET_AND_MAP: &str = r#"                set:
                  type: array
                  x-kubernetes-list-type: set
                  items:
                    type: string
                map:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [name]
                  items:
                    type: object
                    required: [name]
                    properties:
                      name:
                        type: string
                      v:
                        type: integer
"#;

#[test]
fn list_type_set_and_map_in_linear_time() {
    serial(async {
        let s = Server::start();
        let path = install(&s, "lists", "List", SET_AND_MAP);
        let set: Vec<String> = (0..N).map(|i| format!("s{i}")).collect();
        let o = custom("List", "set", json!({"set": set}));
        let (code, _, v) = timed(
            "create with a set of 30,000 items",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        let mut dup = set.clone();
        dup.push("s17".into());
        let o = custom("List", "dup", json!({"set": dup}));
        let (code, _, v) = timed(
            "create with a duplicate in a set of 30,000 items",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        assert_eq!(
            v["message"],
            r#"List.hostile.example.com "dup" is invalid: spec.set[30000]: Duplicate value: "s17""#
        );

        let map: Vec<Value> = (0..N)
            .map(|i| json!({"name": format!("k{i}"), "v": i}))
            .collect();
        let o = custom("List", "map", json!({"map": map}));
        let (code, _, v) = timed(
            "create with a map list of 30,000 items",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        // The same items in reverse key order (every item sorts before the previous ones).
        let reversed: Vec<Value> = map.iter().rev().cloned().collect();
        let o = custom("List", "reversed", json!({"map": reversed}));
        let (code, _, v2) = timed(
            "create with a map list of 30,000 items in reverse order",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v2));
        assert_eq!(v2["spec"]["map"][0]["name"], "k29999");
        // An update that shifts every item (one prepended): each is correlated with its old
        // item by key, not by position.
        let mut o = v.clone();
        o["spec"]["map"]
            .as_array_mut()
            .expect("map")
            .insert(0, json!({"name": "first", "v": -1}));
        let (code, _, v) = timed(
            "update prepending to a map list of 30,000 items",
            json_req(&s, "PUT", &format!("{path}/map"), &o),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(v["spec"]["map"].as_array().map(Vec::len), Some(N + 1));

        let mut dup = map.clone();
        dup.push(json!({"name": "k5", "v": 0}));
        let o = custom("List", "dupmap", json!({"map": dup}));
        let (code, _, v) = timed(
            "create with a duplicate key in a map list of 30,000 items",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        // Upstream prints the key as Go's %#v of a map; Crest names composite values by type.
        assert_eq!(
            v["message"],
            r#"List.hostile.example.com "dupmap" is invalid: spec.map[30000]: Duplicate value: "object""#
        );
        assert_eq!(v["details"]["causes"].as_array().map(Vec::len), Some(1));
    });
}

#[test]
fn large_enum_in_linear_time() {
    serial(async {
        let s = Server::start();
        let values: Vec<String> = (0..N).map(|i| format!("e{i}")).collect();
        let props = format!(
            "                items:\n                  type: array\n                  items:\n                    type: string\n                    enum: {}\n",
            serde_json::to_string(&values).expect("json")
        );
        let path = install(&s, "enums", "Enum", &props);
        // Every item the last enum value: a linear scan per item would be quadratic.
        let items = vec!["e29999"; N];
        let o = custom("Enum", "e", json!({"items": items}));
        let (code, _, v) = timed(
            "create with 30,000 items of a 30,000-value enum",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));

        // Every item outside the enum: one error each, the enum listed in the first ones only
        // (upstream lists it in each: 30,000 copies of a 30,000-value list).
        let items = vec!["x"; N];
        let o = custom("Enum", "bad", json!({"items": items}));
        let (code, _, v) = timed(
            "create with 30,000 items outside a 30,000-value enum",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        let causes = v["details"]["causes"].as_array().expect("causes");
        assert_eq!(causes.len(), N);
        let first = causes[0]["message"].as_str().unwrap_or_default();
        assert!(
            first.starts_with(r#"Unsupported value: "x": supported values: "e0", "e1", "e2", "#)
                && first.ends_with(r#", "e29999""#),
            "{}",
            &first[..200.min(first.len())]
        );
        assert_eq!(causes[N - 1]["message"], r#"Unsupported value: "x""#);
        assert_eq!(causes[N - 1]["field"], "spec.items[29999]");
        assert!(
            v.to_string().len() < 16 << 20,
            "an answer of {} bytes",
            v.to_string().len()
        );
    });
}

#[test]
fn cel_over_30000_items_is_bounded() {
    serial(async {
        let s = Server::start();
        let props = r#"                items:
                  type: array
                  maxItems: 30000
                  x-kubernetes-list-type: set
                  items:
                    type: string
                    maxLength: 8
                  x-kubernetes-validations:
                  - rule: "self.all(x, x.startsWith('v'))"
                    message: every item starts with v
                  - rule: "self == oldSelf"
                    message: items are immutable
"#;
        let path = install(&s, "rules", "Rule", props);
        let items: Vec<String> = (0..N).map(|i| format!("v{i}")).collect();
        let o = custom("Rule", "r", json!({"items": items}));
        let (code, _, v) = timed(
            "create with a rule over 30,000 items",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 201, "{}", short(&v));
        // The same set in another order is equal (sets compare unordered).
        let mut o = v.clone();
        o["spec"]["items"] = json!(items.iter().rev().collect::<Vec<_>>());
        let (code, _, v) = timed(
            "update comparing two sets of 30,000 items",
            json_req(&s, "PUT", &format!("{path}/r"), &o),
        )
        .await;
        assert_eq!(code, 200, "{}", short(&v));
        let mut o = v.clone();
        o["spec"]["items"][0] = json!("w");
        let (code, _, v) = timed(
            "update failing rules over 30,000 items",
            json_req(&s, "PUT", &format!("{path}/r"), &o),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        assert_eq!(
            v["message"],
            r#"Rule.hostile.example.com "r" is invalid: [spec.items: Invalid value: "array": every item starts with v, spec.items: Invalid value: "array": items are immutable]"#
        );

        // A quadratic rule over an unbounded list is refused when the CRD is written, by its
        // estimated cost.
        let quadratic = r#"                items:
                  type: array
                  items:
                    type: string
                  x-kubernetes-validations:
                  - rule: "self.all(x, self.exists_one(y, y == x))"
"#;
        let schema = format!(
            "          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n{quadratic}"
        );
        let (ok, out, err) = s.kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&crd_with_schema(GROUP, "squares", "Square", &schema)),
        );
        assert!(!ok, "{out}");
        assert!(
            err.contains("x-kubernetes-validations[0].rule: Forbidden: CEL rule exceeded budget by more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are used)"),
            "{err}"
        );

        // The same rule passes the 10M estimate limit with a bound on the list's length (1,000
        // items is just over it, 900 within), but one evaluation stops at the 1M per-call limit
        // (about 3M for 900 distinct items): upstream's answer, without running the rule to its
        // end.
        let bounded = |max: usize| {
            format!(
                r#"                items:
                  type: array
                  maxItems: {max}
                  items:
                    type: string
                    maxLength: 8
                  x-kubernetes-validations:
                  - rule: "self.all(x, self.exists(y, y == x))"
"#
            )
        };
        let schema = |props: &str| {
            format!("          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n{props}")
        };
        let (ok, out, err) = s.kubectl_stdin(
            &["apply", "-f", "-"],
            Some(&crd_with_schema(
                GROUP,
                "overs",
                "Over",
                &schema(&bounded(1000)),
            )),
        );
        assert!(!ok, "{out}");
        assert!(
            err.contains("x-kubernetes-validations[0].rule: Forbidden: CEL rule exceeded budget by 1.000500x (try simplifying"),
            "{err}"
        );
        let path = install(&s, "bounds", "Bound", &bounded(900));
        let items: Vec<String> = (0..900).map(|i| format!("v{i}")).collect();
        let o = custom("Bound", "b", json!({"items": items}));
        let (code, _, v) = timed(
            "create stopped at the per-call cost limit",
            json_req(&s, "POST", &path, &o),
        )
        .await;
        assert_eq!(code, 422, "{}", short(&v));
        assert_eq!(
            v["message"],
            r#"Bound.hostile.example.com "b" is invalid: spec.items: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.exists(y, y == x))"#
        );
    });
}

/// The names in a list answer.
fn item_names(v: &Value) -> Vec<String> {
    v["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| o["metadata"]["name"].as_str())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The 62 one-character label keys and values: 30,000 selector entries drawn from them fit the
/// 64 KiB a request line may have (the Rust `http` crate's limit, on both ends here).
fn one_char(i: usize) -> char {
    const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    ALNUM[i % ALNUM.len()] as char
}

#[test]
fn label_selector_with_30000_values_in_linear_time() {
    serial(async {
        let s = Server::start();
        let all: serde_json::Map<String, Value> = (0..62)
            .map(|i| (one_char(i).to_string(), json!("xx")))
            .collect();
        for (name, labels) in [
            ("a", json!({"k": "q"})),
            ("b", json!({"k": "Z"})),
            ("c", json!({"k": "qq"})),
            ("every", Value::Object(all)),
        ] {
            let cm = json!({"metadata": {"name": name, "labels": labels}});
            let (code, _, v) = json_req(&s, "POST", CM, &cm).await;
            assert_eq!(code, 201, "{}", short(&v));
        }
        let values: Vec<String> = (0..N).map(|i| one_char(i).to_string()).collect();
        let url = format!("{CM}?labelSelector=k%20in%20({})", values.join(","));
        let (code, v) = timed("list with a 30,000-value in set", get_http1(&s, &url)).await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(item_names(&v), ["a", "b"]);
        // (Not the namespace's kube-root-ca.crt, which has no label k either.)
        let url = format!(
            "{CM}?labelSelector=k%20notin%20({})&fieldSelector=metadata.name!=kube-root-ca.crt",
            values.join(",")
        );
        let (code, v) = timed("list with a 30,000-value notin set", get_http1(&s, &url)).await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(item_names(&v), ["c", "every"]);
        // 30,000 requirements (each key must exist).
        let url = format!("{CM}?labelSelector={}", values.join(","));
        let (code, v) = timed("list with 30,000 label requirements", get_http1(&s, &url)).await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(item_names(&v), ["every"]);
        // An invalid value among 30,000: upstream's 400.
        let url = format!("{CM}?labelSelector=k%20in%20({},-)", values.join(","));
        let (code, v) = timed(
            "list with an invalid value among 30,000",
            get_http1(&s, &url),
        )
        .await;
        assert_eq!(code, 400, "{}", short(&v));
        assert_eq!(v["reason"], "BadRequest", "{}", short(&v));
    });
}

#[test]
fn field_selector_with_many_requirements_in_linear_time() {
    serial(async {
        let s = Server::start();
        for name in ["a", "b", "c"] {
            let cm = json!({"metadata": {"name": name}});
            let (code, _, v) = json_req(&s, "POST", CM, &cm).await;
            assert_eq!(code, 201, "{}", short(&v));
        }
        // As many requirements as a request line holds (30,000 are in crest-selectors' unit
        // tests): metadata.name!=n0,... and ones that exclude b and the namespace's
        // kube-root-ca.crt.
        let many: Vec<String> = (0..2_800).map(|i| format!("metadata.name!=n{i}")).collect();
        let url = format!(
            "{CM}?fieldSelector={},metadata.name!=b,metadata.name!=kube-root-ca.crt",
            many.join(",")
        );
        assert!(url.len() < 65_000, "{}", url.len());
        let (code, v) = timed("list with 2,800 field requirements", get_http1(&s, &url)).await;
        assert_eq!(code, 200, "{}", short(&v));
        assert_eq!(item_names(&v), ["a", "c"]);
    });
}

#[test]
fn table_of_30000_cells_in_linear_time() {
    serial(async {
        let s = Server::start();
        let crd = format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tables.{GROUP}
spec:
  group: {GROUP}
  scope: Namespaced
  names:
    plural: tables
    singular: table
    kind: Table
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
              rows:
                type: array
                items:
                  type: object
                  properties:
                    name:
                      type: string
    additionalPrinterColumns:
    - jsonPath: .spec.rows[*].name
      name: Names
      type: string
"#
        );
        s.install_crd(&crd);
        let path = format!("/apis/{GROUP}/v1/namespaces/default/tables");
        let rows: Vec<Value> = (0..N).map(|i| json!({"name": format!("r{i}")})).collect();
        let o = custom("Table", "t", json!({"rows": rows}));
        let (code, _, v) = json_req(&s, "POST", &path, &o).await;
        assert_eq!(code, 201, "{}", short(&v));
        let (code, _, bytes) = timed(
            "a Table of a 30,000-item column",
            s.http(
                "GET",
                &format!("{path}/t"),
                &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
                None,
            ),
        )
        .await;
        assert_eq!(code, 200);
        let v: Value = serde_json::from_slice(&bytes).expect("table");
        // Upstream's column shows the first result of the path.
        assert_eq!(v["rows"][0]["cells"], json!(["t", "r0"]), "{}", short(&v));
    });
}
