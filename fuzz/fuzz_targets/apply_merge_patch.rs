//! Server-side apply against JSON merge patch where the two must agree (crest-managedfields):
//! objects without lists, one manager. The input is two configurations A NUL B (JSON, or byte
//! programs, see `src/lib.rs`), reduced to what both semantics share: objects of objects and
//! scalars, no lists, nulls or empty objects. A first apply creates the object from A (no
//! schema: types deduced, as for a custom resource without one); applying B must then equal
//! merge-patching that object with B plus a null for every field A set and B does not.

#![no_main]

use crest_managedfields::{FieldManager, Schema};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

/// Only objects and scalars; empty objects dropped.
fn reduce(v: &Value, depth: usize) -> Option<Value> {
    match v {
        Value::Null | Value::Array(_) => None,
        Value::Object(m) => {
            if depth > 8 {
                return None;
            }
            let out: Map<String, Value> = m
                .iter()
                .filter_map(|(k, x)| reduce(x, depth + 1).map(|x| (k.clone(), x)))
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Number(n) if n.is_f64() => None,
        other => Some(other.clone()),
    }
}

fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

fn patch_between(a: &Map<String, Value>, b: &Map<String, Value>) -> Value {
    let mut p = Map::new();
    for (k, bv) in b {
        match (a.get(k), bv) {
            (Some(Value::Object(am)), Value::Object(bm)) => {
                p.insert(k.clone(), patch_between(am, bm));
            }
            _ => {
                p.insert(k.clone(), bv.clone());
            }
        }
    }
    for k in a.keys() {
        if !b.contains_key(k) {
            p.insert(k.clone(), Value::Null);
        }
    }
    Value::Object(p)
}

fn config(spec: &Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "namespace": "ns"}, "spec": spec})
}

fuzz_target!(|data: &[u8]| {
    let parts = crest_fuzz::split(data, 2);
    let (Some(Value::Object(a)), Some(Value::Object(b))) = (
        reduce(&crest_fuzz::value(parts[0]), 0),
        reduce(&crest_fuzz::value(parts[1]), 0),
    ) else {
        return;
    };
    let schema = Schema::deduced();
    let fm = FieldManager {
        schema: &schema,
        api_version: "example.com/v1",
        kind: "Thing",
        subresource: "",
        reset_fields: None,
    };
    let t = "2024-01-01T00:00:00Z";
    let Ok(mut first) = fm.apply(None, &config(&Value::Object(a.clone())), "m", false, t) else {
        panic!("first apply failed");
    };
    first["metadata"]["uid"] = json!("u");
    let second = match fm.apply(Some(&first), &config(&Value::Object(b.clone())), "m", false, t) {
        Ok(v) => v,
        Err(e) => panic!("second apply failed: {e}"),
    };
    let mut expected = first.clone();
    merge_patch(&mut expected, &json!({"spec": patch_between(&a, &b)}));
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v["metadata"].as_object_mut() {
            m.remove("managedFields");
        }
        v
    };
    assert_eq!(strip(&second), strip(&expected), "A={a:?} B={b:?}");
});
