//! Authorization cost with and without 10,000 unrelated RoleBindings (issue 17: the cost must
//! not grow with roles and bindings in other namespaces or for other subjects).

use crest_api::UserInfo;
use crest_rbac::{
    bootstrap_cluster_role_bindings, bootstrap_cluster_roles, Attributes, Decision, RbacIndex,
};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use std::time::Duration;

fn rb(ns: &str, name: &str, role: &str, user: &str) -> Value {
    json!({"kind": "RoleBinding", "metadata": {"name": name, "namespace": ns},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
           "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}]})
}

fn base() -> Vec<Value> {
    let mut objs = bootstrap_cluster_roles();
    objs.extend(bootstrap_cluster_role_bindings());
    objs.push(rb("default", "alice-view", "view", "alice"));
    objs
}

fn bench(c: &mut Criterion) {
    let alice = UserInfo {
        name: "alice".into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    };
    let get = Attributes::resource(&alice, "get", "default", "", "v1", "pods", "", "web");
    let denied = Attributes::resource(&alice, "delete", "default", "", "v1", "pods", "", "web");

    let empty = RbacIndex::from_objects(&base());
    let mut others = base();
    for i in 0..10_000 {
        others.push(rb(
            &format!("ns-{}", i / 10),
            &format!("b-{i}"),
            "edit",
            &format!("user-{i}"),
        ));
    }
    let elsewhere = RbacIndex::from_objects(&others);
    let mut same_ns = base();
    for i in 0..10_000 {
        same_ns.push(rb(
            "default",
            &format!("b-{i}"),
            "edit",
            &format!("user-{i}"),
        ));
    }
    let same_ns = RbacIndex::from_objects(&same_ns);
    for ix in [&empty, &elsewhere, &same_ns] {
        assert_eq!(ix.authorize(&get).0, Decision::Allow);
        assert_eq!(ix.authorize(&denied).0, Decision::NoOpinion);
    }

    let mut g = c.benchmark_group("authorize");
    for (label, ix) in [
        ("no-other-bindings", &empty),
        ("10k-bindings-other-namespaces", &elsewhere),
        ("10k-bindings-same-namespace-other-users", &same_ns),
    ] {
        g.bench_function(format!("allowed/{label}"), |b| {
            b.iter(|| black_box(ix.authorize(black_box(&get))))
        });
        g.bench_function(format!("allowed-fast/{label}"), |b| {
            b.iter(|| black_box(ix.authorize_fast(black_box(&get))))
        });
        g.bench_function(format!("denied/{label}"), |b| {
            b.iter(|| black_box(ix.authorize(black_box(&denied))))
        });
    }
    g.finish();
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
