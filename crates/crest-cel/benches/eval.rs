//! Evaluation of typical validation rules on a compiled program (compilation excluded: it
//! happens once per CRD version). `self` is a map, as the Kubernetes binding builds objects.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use indexmap::IndexMap;

use crest_cel::env::Env;
use crest_cel::eval::{FnActivation, Program};
use crest_cel::types::Type;
use crest_cel::value::{Key, MapValue, Value};

fn map(entries: Vec<(&str, Value)>) -> Value {
    let mut m = IndexMap::new();
    for (k, v) in entries {
        m.insert(Key::String(k.into()), (Value::string(k), v));
    }
    Value::Map(Arc::new(MapValue { entries: m }))
}

fn spec() -> Value {
    map(vec![
        ("replicas", Value::Int(3)),
        ("minReplicas", Value::Int(1)),
        ("maxReplicas", Value::Int(10)),
        ("cronSpec", Value::string("*/5 * * * *")),
        ("image", Value::string("registry.example.com/app:v1.2.3")),
        (
            "ports",
            Value::list((0..10).map(|i| Value::Int(8000 + i)).collect()),
        ),
        (
            "labels",
            map(vec![
                ("app", Value::string("web")),
                ("tier", Value::string("frontend")),
            ]),
        ),
    ])
}

fn program(src: &str) -> Program {
    let mut env = Env::standard();
    env.add_variable("self", Type::map(Type::String, Type::Dyn));
    let checked = env.compile(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    Program::new(&checked)
}

fn bench(c: &mut Criterion) {
    let s = spec();
    let act = FnActivation(|n: &str| (n == "self").then(|| s.clone()));
    let replica_rules = [
        "self.minReplicas <= self.replicas",
        "self.replicas <= self.maxReplicas",
        "self.minReplicas <= self.maxReplicas",
    ]
    .map(program);
    c.bench_function("three replica rules", |b| {
        b.iter(|| {
            for p in &replica_rules {
                black_box(p.eval(&act).ok());
            }
        })
    });
    let cases = [
        ("string matches", "self.cronSpec.matches('^(\\\\d+|\\\\*)(/\\\\d+)?(\\\\s+(\\\\d+|\\\\*)(/\\\\d+)?){4}$')"),
        ("string funcs", "self.image.startsWith('registry.example.com/') && self.image.split(':').size() == 2"),
        ("list all", "self.ports.all(p, p > 1024 && p < 65536)"),
        ("list map filter", "self.ports.filter(p, p % 2 == 0).map(p, p + 1).size() == 5"),
        ("map exists", "self.labels.exists(k, k == 'app') && self.labels['tier'] != ''"),
    ];
    for (name, src) in cases {
        let p = program(src);
        assert_eq!(p.eval(&act), Ok(Value::Bool(true)), "{src}");
        c.bench_function(name, |b| b.iter(|| black_box(p.eval(&act).ok())));
    }
    let _ = HashMap::<String, Value>::new();
}

criterion_group!(benches, bench);
criterion_main!(benches);
