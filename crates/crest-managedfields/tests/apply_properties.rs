//! Properties of apply on random configurations with every list type (bounded randomized runs):
//! the configuration's values are in the result; applying the same configuration again changes
//! nothing; a second manager applying the same values shares them without conflict; what the
//! first manager stops applying is gone unless the second applies it; managed field sets
//! round-trip through FieldsV1.

use crest_managedfields::{FieldManager, ManagedFields, Schema, Set};
use serde_json::{json, Map, Value};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn schema() -> Schema {
    let item = json!({"type": "object", "properties": {
        "name": {"type": "string"}, "v": {"type": "integer"},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["port", "protocol"],
            "items": {"type": "object", "properties": {
                "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"},
                "label": {"type": "string"}}}}}});
    Schema::from_crd(
        Some(&json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "integer"},
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
            "atomic": {"type": "array", "items": {"type": "string"}},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "items": item},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }}}})),
        &Map::new(),
    )
    .unwrap()
}

fn gen_item(rng: &mut Rng) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(format!("n{}", rng.below(4))));
    if rng.below(2) == 0 {
        m.insert("v".into(), json!(rng.below(3)));
    }
    if rng.below(2) == 0 {
        let mut tags: Vec<String> = (0..rng.below(3))
            .map(|_| format!("t{}", rng.below(4)))
            .collect();
        tags.sort();
        tags.dedup();
        m.insert("tags".into(), json!(tags));
    }
    if rng.below(2) == 0 {
        let mut ports = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..rng.below(3) {
            let port = 80 + rng.below(3);
            let proto = if rng.below(2) == 0 { None } else { Some("UDP") };
            let key = (port, proto.unwrap_or("TCP"));
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let mut p = json!({"port": port});
            if let Some(proto) = proto {
                p["protocol"] = json!(proto);
            }
            if rng.below(2) == 0 {
                p["label"] = json!(format!("l{}", rng.below(3)));
            }
            ports.push(p);
        }
        m.insert("ports".into(), Value::Array(ports));
    }
    Value::Object(m)
}

fn gen_spec(rng: &mut Rng) -> Map<String, Value> {
    let mut m = Map::new();
    if rng.below(2) == 0 {
        m.insert("a".into(), json!(format!("s{}", rng.below(3))));
    }
    if rng.below(2) == 0 {
        m.insert("b".into(), json!(rng.below(3)));
    }
    if rng.below(2) == 0 {
        let mut s: Vec<u64> = (0..1 + rng.below(3)).map(|_| rng.below(5)).collect();
        s.dedup();
        let mut uniq = Vec::new();
        for x in s {
            if !uniq.contains(&x) {
                uniq.push(x);
            }
        }
        m.insert("set".into(), json!(uniq));
    }
    if rng.below(3) == 0 {
        m.insert("atomic".into(), json!(["x", format!("y{}", rng.below(2))]));
    }
    if rng.below(2) == 0 {
        let mut items = Vec::new();
        let mut names = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let it = gen_item(rng);
            if names.contains(&it["name"]) {
                continue;
            }
            names.push(it["name"].clone());
            items.push(it);
        }
        m.insert("items".into(), Value::Array(items));
    }
    if rng.below(2) == 0 {
        let mut l = Map::new();
        for _ in 0..1 + rng.below(2) {
            l.insert(
                format!("k{}", rng.below(3)),
                json!(format!("v{}", rng.below(2))),
            );
        }
        m.insert("labels".into(), Value::Object(l));
    }
    m
}

fn config(spec: &Map<String, Value>) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "namespace": "ns"}, "spec": spec})
}

/// Whether every value `config` sets is in `obj` (list items found by their keys). An empty
/// object may have become null (upstream leaves null where removals emptied a map), and an
/// empty list or object configured where a previous apply had items may be gone (an empty
/// granular list or map records no field, so its removed items take it along).
fn contains(config: &Value, obj: &Value) -> bool {
    let empty = |v: &Value| {
        matches!(v, Value::Array(a) if a.is_empty())
            || matches!(v, Value::Object(m) if m.is_empty())
    };
    match (config, obj) {
        (c, Value::Null) if empty(c) => true,
        (Value::Object(c), Value::Object(o)) => c.iter().all(|(k, v)| match o.get(k) {
            Some(ov) => contains(v, ov),
            None => empty(v),
        }),
        (Value::Array(c), Value::Array(o)) => c.iter().all(|ci| match ci {
            Value::Object(cm) => o.iter().any(|oi| {
                ["name", "port"]
                    .iter()
                    .filter(|k| cm.contains_key(**k))
                    .all(|k| oi.get(*k) == cm.get(*k))
                    && contains(ci, oi)
            }),
            other => o.contains(other),
        }),
        (c, o) => c == o,
    }
}

fn strip(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    v
}

#[test]
fn apply_properties_with_lists() {
    let s = schema();
    let fm = FieldManager {
        schema: &s,
        api_version: "example.com/v1",
        kind: "Thing",
        subresource: "",
        reset_fields: None,
    };
    let t0 = "2024-01-01T00:00:00Z";
    let t1 = "2024-01-01T00:00:01Z";
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for _ in 0..1500 {
        let a = gen_spec(&mut rng);
        let b = gen_spec(&mut rng);
        let mut live = fm.apply(None, &config(&a), "one", false, t0).unwrap();
        live["metadata"]["uid"] = json!("u");
        assert!(contains(&config(&a), &live), "A={a:?}\nlive={live}");
        // Idempotent.
        let again = fm
            .apply(Some(&live), &config(&a), "one", false, t1)
            .unwrap();
        assert_eq!(again, live, "re-applying A={a:?}");
        // Shared values: no conflict.
        let shared = fm
            .apply(Some(&live), &config(&a), "two", false, t1)
            .unwrap();
        assert_eq!(strip(&shared), strip(&live));
        // "one" applies B: its config is in the result; B's fields are all its own.
        let next = fm
            .apply(Some(&live), &config(&b), "one", false, t1)
            .unwrap();
        assert!(
            contains(&config(&b), &next),
            "A={a:?}\nB={b:?}\nnext={next}"
        );
        // With "two" sharing A, "one" applying B may conflict with nothing but keeps A's
        // values where they differ only when forced.
        match fm.apply(Some(&shared), &config(&b), "one", false, t1) {
            Ok(v) => assert!(contains(&config(&a), &v) || contains(&config(&b), &v)),
            Err(e) => assert_eq!(e.code(), 409, "{e}"),
        }
        let forced = fm
            .apply(Some(&shared), &config(&b), "one", true, t1)
            .unwrap();
        assert!(contains(&config(&b), &forced));
        // Field sets round-trip through FieldsV1 text.
        let mf = ManagedFields::decode(forced["metadata"].get("managedFields")).unwrap();
        for e in mf.entries.values() {
            let text = e.set().to_fields_v1_string();
            assert_eq!(&Set::from_fields_v1_str(&text).unwrap(), e.set());
            assert_eq!(
                serde_json::from_str::<Value>(&text).unwrap(),
                e.set().to_fields_v1()
            );
        }
    }
}

#[test]
fn large_lists() {
    let s = schema();
    let fm = FieldManager {
        schema: &s,
        api_version: "example.com/v1",
        kind: "Thing",
        subresource: "",
        reset_fields: None,
    };
    // Items in descending key order (the worst case for sets built by insertion).
    let items: Vec<Value> = (0..3000)
        .rev()
        .map(|i| json!({"name": format!("n{i:05}"), "v": i}))
        .collect();
    let set: Vec<Value> = (0..3000).rev().map(|i| json!(i)).collect();
    let mut spec = Map::new();
    spec.insert("items".into(), Value::Array(items.clone()));
    spec.insert("set".into(), Value::Array(set));
    let start = std::time::Instant::now();
    let mut live = fm
        .apply(None, &config(&spec), "one", false, "2024-01-01T00:00:00Z")
        .unwrap();
    live["metadata"]["uid"] = json!("u");
    spec.insert("items".into(), Value::Array(items[..1500].to_vec()));
    let out = fm
        .apply(
            Some(&live),
            &config(&spec),
            "one",
            false,
            "2024-01-01T00:00:01Z",
        )
        .unwrap();
    assert_eq!(out["spec"]["items"].as_array().map(Vec::len), Some(1500));
    let mut edited = out.clone();
    edited["spec"]["items"][0]["v"] = json!(-1);
    fm.update(Some(&out), &mut edited, "editor", "2024-01-01T00:00:02Z");
    assert_eq!(
        edited["metadata"]["managedFields"].as_array().map(Vec::len),
        Some(2)
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}
