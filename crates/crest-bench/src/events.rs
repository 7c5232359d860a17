//! `events`: Events must not slow other writes. CR creates paced at 100/s from 4 keep-alive
//! connections, each timed (p50/p99), first on a quiet server, then while 20 other connections
//! post core/v1 Events at 1,000/s in all; reports both figures, their ratio (the issue's target:
//! within 2x) and the event rate achieved.

use crate::{create_crd, crontab, start, Conn, Row, COLLECTION};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECONDS: u64 = 10;
const CR_CLIENTS: usize = 4;
/// Creates per second per CR client (100/s in all).
const CR_RATE: u64 = 25;
const EVENT_CLIENTS: usize = 20;
/// Events per second per event client (1,000/s in all).
const EVENT_RATE: u64 = 50;
const EVENTS: &str = "/api/v1/namespaces/default/events";

fn event(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Event","metadata":{{"name":"{name}","namespace":"default"}},"involvedObject":{{"apiVersion":"stable.example.com/v1","kind":"CronTab","name":"load","namespace":"default","uid":"9c8a6f1e-0000-4000-8000-000000000000"}},"reason":"Reconciled","message":"reconciled the object after a change to its spec","type":"Normal","source":{{"component":"bench-operator"}},"firstTimestamp":"2024-01-01T00:00:00Z","lastTimestamp":"2024-01-01T00:00:00Z","count":1}}"#
    )
}

/// Paced CR creates for [`SECONDS`]; returns every latency, sorted.
pub(crate) async fn timed_creates(base: &str, round: &str) -> Vec<Duration> {
    let mut tasks = vec![];
    for c in 0..CR_CLIENTS {
        let mut conn = Conn::open(base).await;
        let round = round.to_string();
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / CR_RATE));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let mut lat = vec![];
            for i in 0..(SECONDS * CR_RATE) as usize {
                tick.tick().await;
                let body = crontab(&format!("{round}-{c}-{i}"));
                let t0 = Instant::now();
                let code = conn.send("POST", COLLECTION, Some(body)).await;
                assert_eq!(code, 201, "CR create");
                lat.push(t0.elapsed());
            }
            lat
        }));
    }
    let mut all = vec![];
    for t in tasks {
        all.extend(t.await.expect("create task"));
    }
    all.sort();
    all
}

pub(crate) fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub(crate) async fn events_load(binary: &Path) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    create_crd(&client, &base).await;
    // Warm up, then the quiet figure.
    timed_creates(&base, "warm").await;
    let quiet = timed_creates(&base, "quiet").await;

    // 1,000 events/s in the background.
    let stop = Arc::new(AtomicBool::new(false));
    let posted = Arc::new(AtomicUsize::new(0));
    let mut emitters = vec![];
    for c in 0..EVENT_CLIENTS {
        let mut conn = Conn::open(&base).await;
        let (stop, posted) = (stop.clone(), posted.clone());
        emitters.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / EVENT_RATE));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                if conn
                    .send("POST", EVENTS, Some(event(&format!("ev-{c}-{i}"))))
                    .await
                    == 201
                {
                    posted.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
        }));
    }
    // Let the event load settle before measuring.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = posted.load(Ordering::Relaxed);
    let t0 = Instant::now();
    let loaded = timed_creates(&base, "loaded").await;
    let rate = (posted.load(Ordering::Relaxed) - before) as f64 / t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for e in emitters {
        let _ = e.await;
    }
    drop(server);
    let (q99, l99) = (pct(&quiet, 0.99), pct(&loaded, 0.99));
    let ratio = l99.as_secs_f64() / q99.as_secs_f64().max(1e-9);
    vec![
        (
            format!(
                "CR create p50 / p99, {} creates/s, quiet",
                CR_CLIENTS as u64 * CR_RATE
            ),
            format!("{} / {}", ms(pct(&quiet, 0.5)), ms(q99)),
            "-".into(),
        ),
        (
            format!(
                "CR create p50 / p99, same, with events posted at {:.0}/s (asked: {})",
                rate,
                EVENT_CLIENTS as u64 * EVENT_RATE
            ),
            format!(
                "{} / {} ({ratio:.2}x the quiet p99)",
                ms(pct(&loaded, 0.5)),
                ms(l99)
            ),
            "p99 within 2x of quiet".into(),
        ),
    ]
}
