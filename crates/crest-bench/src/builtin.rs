//! `builtin`: a built-in kind against a custom resource of the same size, in the same server.
//! ConfigMaps (typed decoding against the published definition, ConfigMap validation) and
//! CronTabs (a CRD without a schema) of about 2 KiB each: durable creates from 64 keep-alive
//! clients and GETs by name, alternated over several rounds, medians compared. The issue's
//! target: a built-in create or GET costs within 10% of a custom resource's.

use crate::{create_crd, crontab, load, payload, start, Row, COLLECTION};
use std::path::Path;

const ROUNDS: usize = 3;
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A ConfigMap whose JSON is the size of [`crontab`]'s: the same metadata, the payload and the
/// CronTab's other spec fields as data keys.
fn configmap(name: &str) -> String {
    let pad = payload(name);
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default","labels":{{"app":"bench"}}}},"data":{{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":"1","payload":"{pad}"}}}}"#
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(crate) async fn compare(
    binary: &Path,
    objects: usize,
    clients: usize,
    seconds: u64,
) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = reqwest::Client::new();
    create_crd(&client, &base).await;
    let per_round = objects / ROUNDS;
    let (mut cm_create, mut cr_create, mut cm_get, mut cr_get) = (vec![], vec![], vec![], vec![]);
    for round in 0..ROUNDS {
        let offset = round * per_round;
        // Alternate which goes first, so neither always meets the fuller store.
        for first_builtin in [round % 2 == 0, round % 2 != 0] {
            if first_builtin {
                cm_create.push(
                    load(&base, clients, seconds, per_round, move |i| {
                        let body = configmap(&format!("cm-{}", i + offset));
                        ("POST", CONFIGMAPS.to_string(), Some(body), 201)
                    })
                    .await,
                );
            } else {
                cr_create.push(
                    load(&base, clients, seconds, per_round, move |i| {
                        let body = crontab(&format!("ct-{}", i + offset));
                        ("POST", COLLECTION.to_string(), Some(body), 201)
                    })
                    .await,
                );
            }
        }
        // GETs of objects that exist (the first 1,000 created this round).
        let n = per_round.clamp(1, 1000);
        for first_builtin in [round % 2 == 0, round % 2 != 0] {
            if first_builtin {
                cm_get.push(
                    load(&base, clients, 2, usize::MAX, move |i| {
                        let path = format!("{CONFIGMAPS}/cm-{}", offset + i % n);
                        ("GET", path, None, 200)
                    })
                    .await,
                );
            } else {
                cr_get.push(
                    load(&base, clients, 2, usize::MAX, move |i| {
                        let path = format!("{COLLECTION}/ct-{}", offset + i % n);
                        ("GET", path, None, 200)
                    })
                    .await,
                );
            }
        }
    }
    let (cmc, crc, cmg, crg) = (
        median(cm_create),
        median(cr_create),
        median(cm_get),
        median(cr_get),
    );
    vec![
        (
            format!("ConfigMap vs CronTab durable creates, 2 KiB, {clients} clients (median of {ROUNDS})"),
            format!("{cmc:.0} /s vs {crc:.0} /s = {:.2}x", cmc / crc),
            ">= 0.90x".into(),
        ),
        (
            format!("ConfigMap vs CronTab GET by name (median of {ROUNDS})"),
            format!("{cmg:.0} /s vs {crg:.0} /s = {:.2}x", cmg / crg),
            ">= 0.90x".into(),
        ),
    ]
}
