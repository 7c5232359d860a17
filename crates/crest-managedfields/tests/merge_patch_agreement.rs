//! Apply and JSON merge patch must agree where their semantics meet: objects without lists,
//! one manager. A first apply creates the object from configuration A; applying B then equals
//! merge-patching the object with B plus a null for every field A set and B does not (the
//! removal of fields an applier stops applying). Bounded randomized runs (the fuzz target
//! `apply_merge_patch` explores further).

use crest_managedfields::{FieldManager, Schema};
use serde_json::{json, Map, Value};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random map without lists, nulls or empty maps. `typed`: keys k0, k1 hold maps above the
/// last level, k2 strings (as the typed schema declares); otherwise anything goes.
fn gen_map(rng: &mut Rng, depth: u32, typed: bool) -> Map<String, Value> {
    let mut m = Map::new();
    let n = 1 + rng.below(3);
    for _ in 0..n {
        let k = rng.below(4);
        let key = format!("k{k}");
        let as_map = if typed {
            depth < 2 && k < 2
        } else {
            depth < 2 && rng.below(3) == 0
        };
        let v = if as_map {
            Value::Object(gen_map(rng, depth + 1, typed))
        } else if typed {
            Value::from(format!("s{}", rng.below(3)))
        } else {
            match rng.below(3) {
                0 => Value::from(rng.below(3) as i64),
                1 => Value::from(format!("s{}", rng.below(3))),
                _ => Value::from(rng.below(2) == 0),
            }
        };
        if typed && k == 3 {
            continue;
        }
        m.insert(key, v);
    }
    if m.is_empty() {
        m.insert("k2".into(), Value::from("s0"));
    }
    m
}

fn config(spec: Map<String, Value>) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "namespace": "ns"}, "spec": spec})
}

/// The merge patch turning what `a` configured into what `b` configures.
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

fn typed_schema() -> Schema {
    fn level(depth: u32) -> Value {
        if depth == 2 {
            return json!({"type": "object", "properties": {
                "k0": {"type": "string"}, "k1": {"type": "string"}, "k2": {"type": "string"}}});
        }
        json!({"type": "object", "properties": {
            "k0": level(depth + 1), "k1": level(depth + 1), "k2": {"type": "string"}}})
    }
    Schema::from_crd(
        Some(&json!({"type": "object", "properties": {"spec": level(0)}})),
        &Map::new(),
    )
    .unwrap()
}

/// Checks one pair; returns a description of the disagreement.
pub fn check(schema: &Schema, a: Map<String, Value>, b: Map<String, Value>) -> Result<(), String> {
    let fm = FieldManager {
        schema,
        api_version: "example.com/v1",
        kind: "Thing",
        subresource: "",
        reset_fields: None,
    };
    let t = "2024-01-01T00:00:00Z";
    let mut first = fm
        .apply(None, &config(a.clone()), "m", false, t)
        .map_err(|e| format!("first apply: {e}"))?;
    first["metadata"]["uid"] = json!("u");
    let second = fm
        .apply(Some(&first), &config(b.clone()), "m", false, t)
        .map_err(|e| format!("second apply: {e}"))?;
    let mut expected = first.clone();
    let patch = json!({"spec": patch_between(&a, &b)});
    json_patch::merge(&mut expected, &patch);
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v["metadata"].as_object_mut() {
            m.remove("managedFields");
        }
        v
    };
    if strip(&second) != strip(&expected) {
        return Err(format!(
            "A={}\nB={}\napply={}\nmerge patch={}",
            Value::Object(a),
            Value::Object(b),
            strip(&second),
            strip(&expected)
        ));
    }
    Ok(())
}

#[test]
fn apply_agrees_with_merge_patch_untyped() {
    let schema = Schema::deduced();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2000 {
        let a = gen_map(&mut rng, 0, false);
        let b = gen_map(&mut rng, 0, false);
        if let Err(e) = check(&schema, a, b) {
            panic!("{e}");
        }
    }
}

#[test]
fn apply_agrees_with_merge_patch_typed() {
    let schema = typed_schema();
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for _ in 0..2000 {
        let a = gen_map(&mut rng, 0, true);
        let b = gen_map(&mut rng, 0, true);
        if let Err(e) = check(&schema, a, b) {
            panic!("{e}");
        }
    }
}
