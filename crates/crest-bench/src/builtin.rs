//! `builtin`: a built-in kind against a custom resource of the same size, in the same server.
//! ConfigMaps (typed decoding against the published definition, ConfigMap validation) and
//! CronTabs (a CRD without a schema) of about 2 KiB each: durable creates from 64 keep-alive
//! clients and GETs by name, alternated over several rounds, medians compared. The issue's
//! target: a built-in create or GET costs within 10% of a custom resource's. Then the same
//! ConfigMaps read as protobuf (what client-go's typed clients ask for) against JSON: GETs by
//! name from 64 concurrent requests, and LISTs of all of them.

use crate::{create_crd, crontab, load, median, payload, start, Row, COLLECTION};
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

pub(crate) async fn compare(
    binary: &Path,
    objects: usize,
    clients: usize,
    seconds: u64,
) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
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
    let (pb_get, json_get) = (
        rate(
            &base,
            "application/vnd.kubernetes.protobuf",
            per_round.clamp(1, 1000),
            clients,
        )
        .await,
        rate(&base, "application/json", per_round.clamp(1, 1000), clients).await,
    );
    let (pb_list, json_list) = (
        list_ms(&base, "application/vnd.kubernetes.protobuf").await,
        list_ms(&base, "application/json").await,
    );
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
        (
            format!("ConfigMap GET by name, protobuf vs JSON, {clients} concurrent"),
            format!("{pb_get:.0} /s vs {json_get:.0} /s = {:.2}x", pb_get / json_get),
            "(no target)".into(),
        ),
        (
            format!("ConfigMap LIST of {} objects, protobuf vs JSON (median of 5)", objects),
            format!("{pb_list:.1} ms vs {json_list:.1} ms = {:.2}x", pb_list / json_list),
            "(no target)".into(),
        ),
    ]
}

/// GETs by name per second with `accept`, `concurrency` at a time, for 2 seconds.
async fn rate(base: &str, accept: &str, names: usize, concurrency: usize) -> f64 {
    use futures::StreamExt;
    let client = crate::client(base);
    let t0 = std::time::Instant::now();
    let deadline = t0 + std::time::Duration::from_secs(2);
    let done = futures::stream::iter(0..)
        .take_while(|_| futures::future::ready(std::time::Instant::now() < deadline))
        .map(|i: usize| {
            let url = format!("{base}{CONFIGMAPS}/cm-{}", i % names);
            let req = client.get(url).header("Accept", accept);
            async move {
                match req.send().await {
                    Ok(r) if r.status() == 200 => r.bytes().await.is_ok(),
                    _ => false,
                }
            }
        })
        .buffer_unordered(concurrency)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await;
    done as f64 / t0.elapsed().as_secs_f64()
}

/// The median time of 5 LISTs of every ConfigMap with `accept`.
async fn list_ms(base: &str, accept: &str) -> f64 {
    let client = crate::client(base);
    let mut times = vec![];
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let r = client
            .get(format!("{base}{CONFIGMAPS}"))
            .header("Accept", accept)
            .send()
            .await
            .expect("list");
        assert_eq!(r.status(), 200);
        r.bytes().await.expect("list body");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    median(times)
}
