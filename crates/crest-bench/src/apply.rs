//! `apply`: server-side apply against the equivalent merge patch, in one server: the same
//! 2 KiB CronTab document (a new image each time, so every request writes) sent to existing
//! objects as `application/apply-patch+yaml` by one field manager and as
//! `application/merge-patch+json` (the applies forced, as the merge patches in between take
//! the image from the applier), from 64 keep-alive clients, alternated over rounds,
//! medians compared. The target: an apply costs at most 2x the merge patch (both
//! requests run the same decode, validation and durable write; the difference is the typed
//! merge and the managedFields bookkeeping).

use crate::{create_crd, crontab, load, median, start, Row, COLLECTION};
use std::path::Path;

const ROUNDS: usize = 3;
const OBJECTS: usize = 1000;

pub(crate) async fn compare(binary: &Path, clients: usize, seconds: u64) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    create_crd(&client, &base).await;
    load(&base, clients, 3600, OBJECTS, |i| {
        let body = crontab(&format!("ap-{i}"));
        ("POST", COLLECTION.to_string(), Some(body), 201)
    })
    .await;
    // Each object is applied once first, so the applies below update an object bench owns.
    load(&base, clients, 3600, OBJECTS, |i| {
        let body = crontab(&format!("ap-{i}"));
        let path = format!("{COLLECTION}/ap-{i}?fieldManager=bench");
        ("APPLY", path, Some(body), 200)
    })
    .await;
    let (mut applies, mut merges) = (vec![], vec![]);
    for round in 0..ROUNDS {
        for apply_first in [round % 2 == 0, round % 2 != 0] {
            let (method, query) = if apply_first {
                // Forced, as controllers apply: the merge patches in between take the image.
                ("APPLY", "?fieldManager=bench&force=true")
            } else {
                ("MERGE", "")
            };
            let rate = load(&base, clients, seconds, usize::MAX, move |i| {
                let name = format!("ap-{}", i % OBJECTS);
                let body = crontab(&name).replace(
                    "my-awesome-cron-image",
                    &format!("image-{round}-{method}-{i}"),
                );
                (
                    method,
                    format!("{COLLECTION}/{name}{query}"),
                    Some(body),
                    200,
                )
            })
            .await;
            if apply_first {
                applies.push(rate);
            } else {
                merges.push(rate);
            }
        }
    }
    let (a, m) = (median(applies), median(merges));
    vec![(
        format!("server-side apply vs merge patch of a 2 KiB CronTab, {clients} clients (median of {ROUNDS})"),
        format!("{a:.0} /s vs {m:.0} /s: apply costs {:.2}x", m / a),
        "<= 2x".into(),
    )]
}
