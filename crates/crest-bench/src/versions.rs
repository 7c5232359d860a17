//! `versions`: reads through a non-storage version of a `None`-strategy CRD (converted on
//! read: apiVersion, then the served version's schema) against reads through the storage
//! version, in the same server, alternated over rounds. Issue 15's target: within 10%.

use crate::{load, median, payload, serve_crd, start, Row};
use std::path::Path;

const ROUNDS: usize = 3;
const OBJECTS: usize = 1000;
const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.versions.example.com"},"spec":{"group":"versions.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;
const V1: &str = "/apis/versions.example.com/v1/namespaces/default/crontabs";
const V2: &str = "/apis/versions.example.com/v2/namespaces/default/crontabs";

fn crontab(name: &str) -> String {
    let pad = payload(name);
    format!(
        r#"{{"apiVersion":"versions.example.com/v1","kind":"CronTab","metadata":{{"name":"{name}","namespace":"default"}},"spec":{{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":1,"payload":"{pad}"}}}}"#
    )
}

pub(crate) async fn compare(binary: &Path, clients: usize) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    serve_crd(&client, &base, CRD, V2).await;
    load(&base, clients, 3600, OBJECTS, |i| {
        (
            "POST",
            V1.to_string(),
            Some(crontab(&format!("ct-{i}"))),
            201,
        )
    })
    .await;
    let (mut storage, mut other) = (vec![], vec![]);
    for round in 0..ROUNDS {
        for first_storage in [round % 2 == 0, round % 2 != 0] {
            let path = if first_storage { V1 } else { V2 };
            let rate = load(&base, clients, 2, usize::MAX, move |i| {
                ("GET", format!("{path}/ct-{}", i % OBJECTS), None, 200)
            })
            .await;
            if first_storage {
                storage.push(rate);
            } else {
                other.push(rate);
            }
        }
    }
    let (s, o) = (median(storage), median(other));
    vec![(
        format!("GET by name through a non-storage version (None) vs the storage version (median of {ROUNDS})"),
        format!("{o:.0} /s vs {s:.0} /s = {:.2}x", o / s),
        ">= 0.90x".into(),
    )]
}
