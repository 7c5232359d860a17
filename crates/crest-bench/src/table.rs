//! `table`: server-side printing. A LIST of 10,000 custom resources as kubectl asks for it
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...`), with the seed's three printer
//! columns (Spec, Replicas, Age), end to end: request to the last byte of the Table.

use crate::{load, serve_crd, start, Row};
use std::path::Path;
use std::time::Instant;

const OBJECTS: usize = 10_000;
const RUNS: usize = 7;

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"cronSpec":{"type":"string"},"image":{"type":"string"},"replicas":{"type":"integer"}}}}}},"additionalPrinterColumns":[{"name":"Spec","type":"string","description":"The cron spec defining the interval a CronJob is run","jsonPath":".spec.cronSpec"},{"name":"Replicas","type":"integer","description":"The number of jobs launched by the CronJob","jsonPath":".spec.replicas"},{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]}]}}"#;

const COLLECTION: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// What `kubectl get` sends.
const ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

fn crontab(i: usize) -> String {
    format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{{"name":"cron-{i}","namespace":"default","labels":{{"app":"bench","shard":"s{}"}}}},"spec":{{"cronSpec":"*/{} * * * *","image":"my-awesome-cron-image:v{}","replicas":{}}}}}"#,
        i % 16,
        1 + i % 59,
        i % 7,
        i % 5
    )
}

pub(crate) async fn table_list(binary: &Path) -> Row {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    serve_crd(&client, &base, CRD, COLLECTION).await;
    load(&base, 32, 3600, OBJECTS, |i| {
        ("POST", COLLECTION.to_string(), Some(crontab(i)), 201)
    })
    .await;

    let mut times = vec![];
    let mut size = 0;
    for run in 0..=RUNS {
        let t0 = Instant::now();
        let r = client
            .get(format!("{base}{COLLECTION}"))
            .header("Accept", ACCEPT)
            .send()
            .await
            .expect("table list");
        let body = r.bytes().await.expect("body");
        let elapsed = t0.elapsed();
        let v: serde_json::Value = serde_json::from_slice(&body).expect("Table JSON");
        assert_eq!(v["kind"], "Table");
        assert_eq!(v["columnDefinitions"].as_array().map(Vec::len), Some(4));
        let rows = v["rows"].as_array().map(Vec::len).unwrap_or(0);
        assert_eq!(rows, OBJECTS, "every object is a row");
        size = body.len();
        // The first run warms up the connection.
        if run > 0 {
            times.push(elapsed);
        }
    }
    times.sort();
    drop(server);
    (
        format!(
            "Table LIST of 10,000 objects, 3 printer columns ({:.1} MiB, median of {RUNS})",
            size as f64 / (1024.0 * 1024.0)
        ),
        format!("{:.1} ms", times[RUNS / 2].as_secs_f64() * 1e3),
        "< 200 ms".into(),
    )
}
