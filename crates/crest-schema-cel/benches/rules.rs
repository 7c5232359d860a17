//! The seed's three replica rules on a CronTab, evaluated per request (compiled once).

use crest_schema::Structural;
use crest_schema_cel::Validator;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::json;

fn crontab_rules(c: &mut Criterion) {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "self.minReplicas <= self.replicas", "message": "replicas should be greater than or equal to minReplicas."},
                    {"rule": "self.replicas <= self.maxReplicas", "message": "replicas should be smaller than or equal to maxReplicas."},
                    {"rule": "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas"}
                ],
                "properties": {
                    "cronSpec": {"type": "string"},
                    "image": {"type": "string"},
                    "minReplicas": {"type": "integer"},
                    "replicas": {"type": "integer"},
                    "maxReplicas": {"type": "integer"}
                },
                "required": ["minReplicas", "replicas", "maxReplicas"]
            }
        }
    });
    let structural = Structural::from_json(&schema).expect("schema");
    let validator = Validator::new(&structural).expect("rules");
    let obj = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object", "namespace": "default"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image",
                 "minReplicas": 0, "replicas": 5, "maxReplicas": 10}
    });
    assert!(validator.validate(&obj, None).is_empty());
    c.bench_function("crontab_replica_rules_create", |b| {
        b.iter(|| validator.validate(black_box(&obj), None))
    });
    let old = obj.clone();
    c.bench_function("crontab_replica_rules_update", |b| {
        b.iter(|| validator.validate(black_box(&obj), Some(black_box(&old))))
    });
}

criterion_group!(benches, crontab_rules);
criterion_main!(benches);
