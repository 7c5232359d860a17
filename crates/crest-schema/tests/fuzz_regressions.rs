//! Inputs found by the fuzz targets in ../../fuzz that once misbehaved.

use crest_api::field::FieldPath;
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
