//! Inputs found by the fuzz targets in ../../fuzz that once misbehaved.

use crest_api::FieldPath;
use crest_schema::{validation, Structural};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// `uniqueItems` on a large array was quadratic (30k items took many seconds).
#[test]
fn unique_items_on_large_array_is_not_quadratic() {
    let s = Structural::from_json(&json!({
        "type": "object",
        "properties": {"a": {"type": "array", "uniqueItems": true,
            "items": {"x-kubernetes-preserve-unknown-fields": true}}},
    }))
    .unwrap();
    let items: Vec<Value> = (0..30_000).map(|i| json!({"x": [i]})).collect();
    let mut obj = json!({"a": items});
    let start = Instant::now();
    assert!(validation::validate(&obj, &s, &FieldPath::root()).is_empty());
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // Duplicates are still found, and int vs float still differ (Go's DeepEqual).
    obj["a"][29_999] = json!({"x": [0]});
    assert!(!validation::validate(&obj, &s, &FieldPath::root()).is_empty());
    let ints = json!({"a": [1, 1.0]});
    assert!(validation::validate(&ints, &s, &FieldPath::root()).is_empty());
}

/// Found while fuzzing: ratcheting a 50,000-item map list searched the old list for every
/// item (quadratic; minutes). Same-order updates are linear now.
#[test]
fn ratcheting_a_large_map_list_is_not_quadratic() {
    use crest_schema::{validation, Structural};
    use serde_json::json;
    let s = Structural::from_json(&json!({
        "type": "object",
        "properties": {"l": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["a", "b"],
            "items": {"type": "object", "required": ["a", "b"], "properties": {
                "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "string", "maxLength": 1},
            }},
        }},
    }))
    .expect("schema");
    let items: Vec<_> = (0..50_000)
        .map(|i| json!({"a": format!("k{i}"), "b": i, "c": "too long"}))
        .collect();
    let obj = json!({"l": items});
    let t0 = std::time::Instant::now();
    let errs = validation::validate_update(&obj, &obj, &s, &crest_api::FieldPath::root());
    assert!(
        errs.is_empty(),
        "unchanged items are ratcheted: {:?}",
        errs.first()
    );
    assert!(t0.elapsed().as_secs() < 20, "took {:?}", t0.elapsed());
}
