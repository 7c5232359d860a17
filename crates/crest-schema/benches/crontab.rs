//! prune + default + validate of a ~2 KiB CronTab against the documentation's CronTab schema
//! (cronSpec pattern, image, replicas 1..10) with extra string fields for size.

use crest_api::FieldPath;
use crest_schema::{defaulting, pruning, validation, Structural};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::{json, Map, Value};

const EXTRA: usize = 13;

fn schema() -> Structural {
    let mut spec_props = Map::new();
    spec_props.insert(
        "cronSpec".into(),
        json!({"type": "string", "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$", "default": "5 0 * * *"}),
    );
    spec_props.insert("image".into(), json!({"type": "string"}));
    spec_props.insert(
        "replicas".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 10, "default": 1}),
    );
    for i in 0..EXTRA {
        spec_props.insert(
            format!("field{i}"),
            json!({"type": "string", "maxLength": 256}),
        );
    }
    Structural::from_json(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": spec_props},
            "status": {"type": "object", "properties": {"lastScheduleTime": {"type": "string"}}},
        },
    }))
    .expect("schema")
}

fn object() -> Value {
    let mut spec = Map::new();
    spec.insert("cronSpec".into(), json!("*/5 * * * *"));
    spec.insert(
        "image".into(),
        json!("registry.example.com/team/my-awesome-cron-image:v1.2.3"),
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
            "uid": "e14d79e7-91f9-11e7-a598-f0761cb232d1",
            "resourceVersion": "12345",
            "creationTimestamp": "2017-09-05T05:20:07Z",
        },
        "spec": spec,
        "status": {"lastScheduleTime": "2017-09-05T05:25:00Z"},
    })
}

fn bench(c: &mut Criterion) {
    let s = schema();
    let obj = object();
    eprintln!(
        "object size: {} bytes",
        serde_json::to_string(&obj).map(|t| t.len()).unwrap_or(0)
    );
    let root = FieldPath::root();
    c.bench_function("crontab prune+default+validate", |b| {
        b.iter_batched(
            || obj.clone(),
            |mut o| {
                let pruned = pruning::prune(&mut o, &s, true);
                defaulting::prune_non_nullable_nulls_without_defaults(&mut o, &s);
                defaulting::default(&mut o, &s);
                let errs = validation::validate(&o, &s, &root);
                black_box((pruned, errs, o))
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
