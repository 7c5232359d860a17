use super::*;
use serde_json::json;

/// A lookup over a small description: `{"field": {"strategy": "merge", "key": "port",
/// "fields": {...}}}`; a described field's `fields` describe its elements (lists) or its own
/// fields (objects).
#[derive(Clone)]
struct Desc(Value);

impl PatchMeta for Desc {
    fn field(&self, name: &str) -> Option<(Self, FieldMeta)> {
        let f = self.0.get(name)?;
        let fm = FieldMeta::parse(
            f.get("strategy").and_then(Value::as_str),
            f.get("key").and_then(Value::as_str),
        );
        Some((Desc(f.get("fields").cloned().unwrap_or(json!({}))), fm))
    }
    fn elements(&self) -> Option<Self> {
        Some(self.clone())
    }
}

fn service() -> Desc {
    Desc(json!({
        "metadata": {"fields": {
            "finalizers": {"strategy": "merge"},
            "ownerReferences": {"strategy": "merge", "key": "uid"},
        }},
        "spec": {"fields": {
            "ports": {"strategy": "merge", "key": "port"},
            "selector": {"strategy": "replace"},
            "strategy": {"strategy": "retainKeys"},
        }},
    }))
}

fn apply_ok(original: Value, patch: Value) -> Value {
    apply(&original, &patch, &service()).expect("patch applies")
}

#[test]
fn maps_merge_and_nulls_delete() {
    let got = apply_ok(
        json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"type": "ClusterIP"}}),
        json!({"metadata": {"labels": {"b": null, "c": "3"}}, "spec": {"missing": null}}),
    );
    assert_eq!(
        got,
        json!({"metadata": {"labels": {"a": "1", "c": "3"}}, "spec": {"type": "ClusterIP"}})
    );
}

#[test]
fn lists_with_a_merge_key_merge_by_it() {
    let original = json!({"spec": {"ports": [
        {"port": 80, "name": "http"},
        {"port": 443, "name": "https"},
    ]}});
    // What client-side `kubectl apply` sends after changing the 443 port's target.
    let got = apply_ok(
        original.clone(),
        json!({"spec": {
            "$setElementOrder/ports": [{"port": 80}, {"port": 443}],
            "ports": [{"port": 443, "targetPort": 8443}],
        }}),
    );
    assert_eq!(
        got["spec"]["ports"],
        json!([{"port": 80, "name": "http"}, {"port": 443, "name": "https", "targetPort": 8443}])
    );
    // A new element is added; `$patch: delete` removes by merge key.
    let got = apply_ok(
        original,
        json!({"spec": {"ports": [{"port": 8080}, {"$patch": "delete", "port": 80}]}}),
    );
    assert_eq!(
        got["spec"]["ports"],
        json!([{"port": 8080}, {"port": 443, "name": "https"}])
    );
}

#[test]
fn scalar_merge_lists_are_unions_and_parallel_deletion_lists_remove() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let got = apply_ok(
        original.clone(),
        json!({"metadata": {"finalizers": ["b", "d"]}}),
    );
    // mergeSortedSlice: a server-only element goes first only when it preceded the patch
    // element in the live list; `d` is new, so it goes before `c`.
    assert_eq!(got["metadata"]["finalizers"], json!(["a", "b", "d", "c"]));
    let got = apply_ok(
        original,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
    );
    assert_eq!(got["metadata"]["finalizers"], json!(["a", "c"]));
}

#[test]
fn lists_without_the_merge_strategy_are_replaced() {
    let got = apply_ok(
        json!({"spec": {"externalIPs": ["1.1.1.1", "2.2.2.2"]}}),
        json!({"spec": {"externalIPs": ["3.3.3.3"]}}),
    );
    assert_eq!(got["spec"]["externalIPs"], json!(["3.3.3.3"]));
}

#[test]
fn replace_strategy_and_directives() {
    // selector has the replace strategy: the map is not merged.
    let got = apply_ok(
        json!({"spec": {"selector": {"a": "1"}}}),
        json!({"spec": {"selector": {"b": "2"}}}),
    );
    assert_eq!(got["spec"]["selector"], json!({"b": "2"}));
    // `$patch: replace` in a map replaces it; `$patch: delete` empties it.
    let got = apply_ok(
        json!({"metadata": {"labels": {"a": "1"}, "annotations": {"x": "y"}}}),
        json!({"metadata": {"labels": {"$patch": "replace", "b": "2"}, "annotations": {"$patch": "delete"}}}),
    );
    assert_eq!(
        got["metadata"],
        json!({"labels": {"b": "2"}, "annotations": {}})
    );
    // `{"$patch": "replace"}` as a list element replaces the list.
    let got = apply_ok(
        json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}}),
        json!({"spec": {"ports": [{"$patch": "replace"}, {"port": 9000}]}}),
    );
    assert_eq!(got["spec"]["ports"], json!([{"port": 9000}]));
    // $retainKeys clears the fields it does not name.
    let got = apply_ok(
        json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}}),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    );
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn errors_are_upstreams() {
    let e = apply(
        &json!({"spec": {"ports": [{"port": 80}]}}),
        &json!({"spec": {"ports": [{"name": "x"}]}}),
        &service(),
    )
    .unwrap_err();
    assert_eq!(
        e.0,
        "map: map[name:x] does not contain declared merge key: port"
    );
    let e = apply(
        &json!({"metadata": {}}),
        &json!({"metadata": {"$patch": "bogus"}}),
        &service(),
    )
    .unwrap_err();
    assert_eq!(e.0, "unknown patch type: bogus in map: map[$patch:bogus]");
    let e = apply(&json!({}), &json!([1]), &service()).unwrap_err();
    assert_eq!(
        e.0,
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
}

#[test]
fn unknown_fields_merge_as_json_merge_patch() {
    let got = apply(
        &json!({"a": [1, 2], "b": {"c": 1}}),
        &json!({"a": [3], "b": {"d": 2}}),
        &NoMeta,
    )
    .expect("applies");
    assert_eq!(got, json!({"a": [3], "b": {"c": 1, "d": 2}}));
}

#[test]
fn deep_patches_are_refused_not_overflowed() {
    let mut patch = json!({});
    for _ in 0..500 {
        patch = json!({ "a": patch });
    }
    assert!(apply(&json!({}), &patch, &NoMeta).is_err());
}

/// Merging long lists is near-linear: every lookup by merge key, set membership and ordering
/// position goes through an index (the naive scans took minutes for lists this long).
#[test]
fn long_lists_merge_in_near_linear_time() {
    const N: usize = 30_000;
    let original = json!({"spec": {"ports": (0..N).map(|i| json!({"port": i, "name": format!("p{i}")})).collect::<Vec<_>>()},
        "metadata": {"finalizers": (0..N).map(|i| json!(format!("f{i}"))).collect::<Vec<_>>()}});
    // Every entry but the first 100 patched (in reverse order), as many new ones, the first
    // 100 deleted and an order list.
    let mut ports: Vec<Value> = (100..N)
        .rev()
        .map(|i| json!({"port": i, "targetPort": i + 1}))
        .collect();
    ports.extend((N..2 * N).map(|i| json!({"port": i})));
    ports.extend((0..100).map(|i| json!({"port": i, "$patch": "delete"})));
    let order: Vec<Value> = (0..2 * N).rev().map(|i| json!({"port": i})).collect();
    let patch = json!({
        "spec": {"ports": ports, "$setElementOrder/ports": order},
        "metadata": {"finalizers": (N..2 * N).rev().map(|i| json!(format!("f{i}"))).collect::<Vec<_>>(),
                     "$deleteFromPrimitiveList/finalizers": (0..N).step_by(2).map(|i| json!(format!("f{i}"))).collect::<Vec<_>>()},
    });
    let start = std::time::Instant::now();
    let got = apply_ok(original, patch);
    let took = start.elapsed();
    let ports = got["spec"]["ports"].as_array().expect("ports");
    assert_eq!(ports.len(), 2 * N - 100);
    // The order list puts the highest port first.
    assert_eq!(ports[0], json!({"port": 2 * N - 1}));
    assert_eq!(
        ports[2 * N - 101],
        json!({"port": 100, "name": "p100", "targetPort": 101})
    );
    assert_eq!(
        got["metadata"]["finalizers"]
            .as_array()
            .expect("finalizers")
            .len(),
        2 * N - N / 2
    );
    // Quadratic merging took minutes here; near-linear takes well under a second even in a
    // debug build on a loaded machine.
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
}

#[test]
fn null_merge_keys_are_found_once_each() {
    let meta = Desc(json!({"items": {"strategy": "merge", "key": "k"}}));
    let original = json!({"items": [{"k": null, "a": 1}, {"k": "x"}, {"k": null, "b": 2}]});
    let patch = json!({"items": [{"k": null, "c": 3}]});
    // The null key is dropped by the merge, so the element lacks its merge key afterwards.
    let err = apply(&original, &patch, &meta).expect_err("an element without its key");
    assert!(
        err.to_string()
            .contains("does not contain declared merge key"),
        "{err}"
    );
}
