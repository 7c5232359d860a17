//! Server-side apply of a ~2 KiB CronTab with one manager (the object created by a previous
//! apply of the same manager, the new configuration changing the image) against the
//! equivalent JSON merge patch (json-patch's `merge` on a copy of the live object). Also the
//! Update bookkeeping of a create. The target: apply at most 2x the merge patch.

use crest_managedfields::{FieldManager, Schema};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::{json, Map, Value};
use std::time::Duration;

const EXTRA: usize = 13;

fn defs() -> Map<String, Value> {
    match serde_json::from_str(include_str!("../../crest-openapi/src/meta.json")) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn schema() -> Schema {
    let mut spec_props = Map::new();
    spec_props.insert("cronSpec".into(), json!({"type": "string"}));
    spec_props.insert("image".into(), json!({"type": "string"}));
    spec_props.insert("replicas".into(), json!({"type": "integer"}));
    for i in 0..EXTRA {
        spec_props.insert(format!("field{i}"), json!({"type": "string"}));
    }
    Schema::from_crd(
        Some(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": spec_props},
                "status": {"type": "object", "properties": {"lastScheduleTime": {"type": "string"}}},
            },
        })),
        &defs(),
    )
    .unwrap_or_else(|_| Schema::deduced())
}

fn config(image: &str) -> Value {
    let mut spec = Map::new();
    spec.insert("cronSpec".into(), json!("*/5 * * * *"));
    spec.insert(
        "image".into(),
        json!(format!(
            "registry.example.com/team/my-awesome-cron-image:{image}"
        )),
    );
    spec.insert("replicas".into(), json!(3));
    for i in 0..EXTRA {
        spec.insert(
            format!("field{i}"),
            json!(format!("value {i}: {}", "x".repeat(100))),
        );
    }
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {
            "name": "my-new-cron-object",
            "namespace": "default",
            "labels": {"app": "cron", "team": "platform"},
        },
        "spec": spec,
    })
}

fn bench(c: &mut Criterion) {
    let s = schema();
    let fm = FieldManager {
        schema: &s,
        api_version: "stable.example.com/v1",
        kind: "CronTab",
        subresource: "",
        reset_fields: None,
    };
    let now = "2024-05-01T10:00:00Z";
    let mut live = fm
        .apply(None, &config("v1.2.3"), "ctrl", false, now)
        .unwrap_or_else(|_| config("v1.2.3"));
    live["metadata"]["uid"] = json!("e14d79e7-91f9-11e7-a598-f0761cb232d1");
    live["metadata"]["resourceVersion"] = json!("12345");
    live["metadata"]["creationTimestamp"] = json!("2017-09-05T05:20:07Z");
    let size = |v: &Value| serde_json::to_string(v).map(|t| t.len()).unwrap_or(0);
    let mut bare = live.clone();
    if let Some(m) = bare["metadata"].as_object_mut() {
        m.remove("managedFields");
    }
    eprintln!(
        "object size: {} bytes, {} without managedFields",
        size(&live),
        size(&bare)
    );
    let cfg = config("v1.2.4");
    c.bench_function("crontab apply (one manager)", |b| {
        b.iter(|| black_box(fm.apply(Some(black_box(&live)), black_box(&cfg), "ctrl", false, now)))
    });
    c.bench_function("crontab merge patch", |b| {
        b.iter(|| {
            let mut o = black_box(&live).clone();
            json_patch::merge(&mut o, black_box(&cfg));
            black_box(o)
        })
    });
    c.bench_function("crontab merge patch + update bookkeeping", |b| {
        b.iter(|| {
            let mut o = black_box(&live).clone();
            json_patch::merge(&mut o, black_box(&cfg));
            fm.update(Some(&live), &mut o, "kubectl-patch", now);
            black_box(o)
        })
    });
    if std::env::var_os("APPLY_BENCH_STEPS").is_some() {
        use crest_managedfields::{typed, ManagedFields};
        let mf = live["metadata"]["managedFields"].clone();
        c.bench_function("step validate", |b| {
            b.iter(|| black_box(typed::validate(&s, black_box(&cfg))))
        });
        c.bench_function("step to_field_set", |b| {
            b.iter(|| black_box(typed::to_field_set(&s, black_box(&cfg))))
        });
        c.bench_function("step merge", |b| {
            b.iter(|| black_box(typed::merge(&s, Some(&live), Some(black_box(&cfg)))))
        });
        c.bench_function("step compare", |b| {
            b.iter(|| black_box(typed::compare(&s, Some(&live), Some(black_box(&cfg)))))
        });
        c.bench_function("step decode", |b| {
            b.iter(|| black_box(ManagedFields::decode(Some(black_box(&mf)))))
        });
        let m = ManagedFields::decode(Some(&mf)).unwrap_or_default();
        c.bench_function("step encode", |b| {
            b.iter(|| black_box(black_box(&m).encode()))
        });
    }
    c.bench_function("crontab create (update bookkeeping)", |b| {
        b.iter_batched(
            || cfg.clone(),
            |mut o| {
                fm.update(None, &mut o, "kubectl-create", now);
                black_box(o)
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = bench
}
criterion_main!(benches);
