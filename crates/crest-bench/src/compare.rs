//! `compare` (only when named, with `--baseline PATH`): the binary under test against another
//! build of Crest (e.g. the previous commit's) in the same run: start -> /readyz on an empty
//! data dir, durable 2 KiB creates from `--clients` connections, and GETs by name, each binary
//! on a fresh data dir, alternated over `--rounds` rounds; medians and the ratio to the
//! baseline (target: no measurable cost, i.e. within run-to-run noise).

use crate::{client, create_crd, crontab, load, median, start, Row, COLLECTION};
use std::path::Path;
use std::time::Duration;

/// One round of one binary: (start ms, creates/s, GETs/s).
async fn round(binary: &Path, clients: usize, seconds: u64) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, started) = start(binary, dir.path());
    let base = server.base.clone();
    create_crd(&client(&base), &base).await;
    let creates = load(&base, clients, seconds, usize::MAX, |i| {
        (
            "POST",
            COLLECTION.to_string(),
            Some(crontab(&format!("ct-{i}"))),
            201,
        )
    })
    .await;
    let gets = load(&base, clients, seconds, usize::MAX, |i| {
        ("GET", format!("{COLLECTION}/ct-{}", i % 1000), None, 200)
    })
    .await;
    drop(server);
    (started.as_secs_f64() * 1e3, creates, gets)
}

pub(crate) async fn compare(
    baseline: &Path,
    binary: &Path,
    clients: usize,
    seconds: u64,
    rounds: usize,
) -> Vec<Row> {
    let mut base = (vec![], vec![], vec![]);
    let mut this = (vec![], vec![], vec![]);
    for _ in 0..rounds.max(1) {
        for (bin, out) in [(baseline, &mut base), (binary, &mut this)] {
            let (s, c, g) = round(bin, clients, seconds).await;
            out.0.push(s);
            out.1.push(c);
            out.2.push(g);
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    let row = |what: &str, unit: &str, b: Vec<f64>, t: Vec<f64>| {
        let (b, t) = (median(b), median(t));
        (
            format!("{what}: this build vs baseline (median of {rounds})"),
            format!("{t:.1} {unit} vs {b:.1} {unit} ({:.2}x)", t / b),
            "no measurable cost".to_string(),
        )
    };
    vec![
        row("start -> /readyz, empty", "ms", base.0, this.0),
        row(
            &format!("durable creates, 2 KiB, {clients} clients"),
            "/s",
            base.1,
            this.1,
        ),
        row("GET by name", "/s", base.2, this.2),
    ]
}
