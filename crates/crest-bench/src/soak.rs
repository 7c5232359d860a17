//! `soak` (only when named): one server under mixed load for `--soak-seconds` (default 600):
//! workers paced at `--soak-rate` cycles per second, each cycle on its own CronTab: create,
//! GET, merge patch, update (PUT with the patched resourceVersion), LIST (limit 100) and
//! delete; plus `--watchers` (default 1,000) watches of the collection, each on its own
//! connection, counting every event. Reported: RSS after the warm-up (minute 2, or a fifth of a
//! shorter run) against RSS at the end (target: within 10%), errors (target: none), watch
//! events missed (target: none), and p50/p99 per verb.

use crate::{client, create_crd, percentile, rss_mib, Conn, Row, COLLECTION};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct Params {
    pub seconds: u64,
    pub rate: f64,
    pub watchers: usize,
    /// CronTabs that stay for the whole run (what the LISTs read).
    pub population: usize,
    pub workers: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            seconds: 600,
            rate: 20.0,
            watchers: 1_000,
            population: 500,
            workers: 8,
        }
    }
}

/// A small CronTab (the soak is about the mix and time, not bandwidth: 1,000 watchers get
/// every write).
fn small_crontab(name: &str, replicas: u32, rv: Option<&str>) -> String {
    let rv = rv
        .map(|rv| format!(r#","resourceVersion":"{rv}""#))
        .unwrap_or_default();
    format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{{"name":"{name}","namespace":"default","labels":{{"app":"soak"}}{rv}}},"spec":{{"cronSpec":"*/5 * * * *","image":"soak-image","replicas":{replicas}}}}}"#
    )
}

const VERBS: [&str; 6] = ["create", "get", "patch", "update", "list", "delete"];

/// One worker's record: latencies (µs) and errors per verb, writes that succeeded.
#[derive(Default)]
struct Record {
    latencies: [Vec<u32>; 6],
    errors: [u64; 6],
    error_samples: Vec<String>,
    writes: u64,
}

impl Record {
    fn note(&mut self, verb: usize, t0: Instant, status: u16, ok: u16, body: &[u8]) -> bool {
        self.latencies[verb].push(t0.elapsed().as_micros().min(u32::MAX as u128) as u32);
        if status == ok {
            if verb != 1 && verb != 4 {
                self.writes += 1;
            }
            return true;
        }
        self.errors[verb] += 1;
        if self.error_samples.len() < 5 {
            self.error_samples.push(format!(
                "{} -> {status}: {}",
                VERBS[verb],
                String::from_utf8_lossy(&body[..body.len().min(300)])
            ));
        }
        false
    }
}

fn resource_version(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    v["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_string)
}

/// One create-get-patch-update-list-delete cycle on CronTab `soak-{k}`.
async fn cycle(conn: &mut Conn, k: u64, r: &mut Record) {
    let name = format!("soak-{k}");
    let item = format!("{COLLECTION}/{name}");
    let t = Instant::now();
    let (s, b) = conn
        .request("POST", COLLECTION, Some(small_crontab(&name, 1, None)))
        .await;
    if !r.note(0, t, s, 201, &b) {
        return;
    }
    let t = Instant::now();
    let (s, b) = conn.request("GET", &item, None).await;
    r.note(1, t, s, 200, &b);
    let t = Instant::now();
    let (s, b) = conn
        .request(
            "MERGE",
            &item,
            Some(r#"{"spec":{"replicas":2},"metadata":{"annotations":{"soak":"patched"}}}"#.into()),
        )
        .await;
    let rv = if r.note(2, t, s, 200, &b) {
        resource_version(&b)
    } else {
        None
    };
    let t = Instant::now();
    let (s, b) = conn
        .request("PUT", &item, Some(small_crontab(&name, 3, rv.as_deref())))
        .await;
    r.note(3, t, s, 200, &b);
    let t = Instant::now();
    let (s, b) = conn
        .request("GET", &format!("{COLLECTION}?limit=100"), None)
        .await;
    r.note(4, t, s, 200, &b);
    let t = Instant::now();
    let (s, b) = conn.request("DELETE", &item, None).await;
    r.note(5, t, s, 200, &b);
}

pub(crate) async fn soak(binary: &Path, p: &Params) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra: Vec<String> = std::env::var("CREST_SOAK_SERVER_ARGS")
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let (server, _) = crate::start_with(binary, dir.path(), &extra);
    let base = server.base.clone();
    let pid = server.child.id();
    create_crd(&client(&base), &base).await;
    crate::load(&base, 16, 3600, p.population, |i| {
        (
            "POST",
            COLLECTION.to_string(),
            Some(small_crontab(&format!("stay-{i}"), 1, None)),
            201,
        )
    })
    .await;
    let rv = crate::watch::list_rv(&base).await;

    // The watchers: each counts the events it gets until told to stop.
    let watches = crate::watch::open_watches(&base, p.watchers, 50, |_| {
        format!("{COLLECTION}?watch=true&resourceVersion={rv}&timeoutSeconds=7200")
    })
    .await;
    let counts: Arc<Vec<AtomicU64>> =
        Arc::new((0..p.watchers).map(|_| AtomicU64::new(0)).collect());
    let ended = Arc::new(AtomicU64::new(0));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut watcher_tasks = vec![];
    for (i, mut w) in watches.into_iter().enumerate() {
        let (counts, ended, mut stop) = (counts.clone(), ended.clone(), stop_rx.clone());
        watcher_tasks.push(tokio::spawn(async move {
            loop {
                let mut n = 0u64;
                let more = tokio::select! {
                    more = w.lines(|_| n += 1) => more,
                    _ = stop.changed() => break,
                };
                counts[i].fetch_add(n, Ordering::Relaxed);
                if !more {
                    ended.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }));
    }

    // RSS every 10 s; the warm-up sample at minute 2 (or a fifth of a shorter run).
    let warmup = Duration::from_secs((p.seconds / 5).min(120));
    let running = Arc::new(AtomicBool::new(true));
    let sampler = {
        let running = running.clone();
        tokio::spawn(async move {
            let t0 = Instant::now();
            let mut at_warmup = None;
            let mut samples = vec![];
            while running.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let e = t0.elapsed();
                if at_warmup.is_none() && e >= warmup {
                    at_warmup = Some(rss_mib(pid));
                }
                if e.as_secs() % 10 == 0 {
                    samples.push((e.as_secs(), rss_mib(pid)));
                }
            }
            (at_warmup, samples)
        })
    };

    // The workers, paced: cycle k starts at t0 + k / rate (at once when behind).
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs(p.seconds);
    let next = Arc::new(AtomicU64::new(0));
    let mut workers = vec![];
    for _ in 0..p.workers {
        let (base, next, rate) = (base.clone(), next.clone(), p.rate);
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(&base).await;
            let mut r = Record::default();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let at = t0 + Duration::from_secs_f64(k as f64 / rate);
                if at >= deadline {
                    break;
                }
                tokio::time::sleep_until(at.into()).await;
                cycle(&mut conn, k, &mut r).await;
            }
            r
        }));
    }
    let mut total = Record::default();
    for w in workers {
        let r = w.await.expect("worker");
        for v in 0..6 {
            total.latencies[v].extend_from_slice(&r.latencies[v]);
            total.errors[v] += r.errors[v];
        }
        total.writes += r.writes;
        total.error_samples.extend(r.error_samples);
    }
    let elapsed = t0.elapsed();
    let rss_end = rss_mib(pid);
    running.store(false, Ordering::Relaxed);
    let (rss_warm, samples) = sampler.await.expect("sampler");
    let rss_warm = rss_warm.unwrap_or(rss_end);

    // Every successful write is one event for every watcher: wait for them to arrive.
    let expected = total.writes;
    let wait = Instant::now();
    while wait.elapsed() < Duration::from_secs(60)
        && counts.iter().any(|c| c.load(Ordering::Relaxed) < expected)
        && ended.load(Ordering::Relaxed) == 0
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = stop_tx.send(true);
    for t in watcher_tasks {
        let _ = t.await;
    }
    let missed: u64 = counts
        .iter()
        .map(|c| expected.saturating_sub(c.load(Ordering::Relaxed)))
        .sum();
    let extra: u64 = counts
        .iter()
        .map(|c| c.load(Ordering::Relaxed).saturating_sub(expected))
        .sum();
    let errors: u64 = total.errors.iter().sum();
    for e in &total.error_samples {
        eprintln!("soak error: {e}");
    }
    eprintln!(
        "soak RSS samples (s, MiB): {}",
        samples
            .iter()
            .map(|(s, m)| format!("{s}:{m:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let requests: usize = total.latencies.iter().map(Vec::len).sum();
    let mut rows: Vec<Row> = vec![
        (
            format!(
                "soak: {:.0} s, {} watchers, {:.0} cycles/s of create/get/patch/update/list/delete",
                elapsed.as_secs_f64(),
                p.watchers,
                p.rate
            ),
            format!(
                "{requests} requests, {expected} writes, {} events delivered",
                expected * p.watchers as u64 - missed + extra
            ),
            "-".into(),
        ),
        (
            format!("soak: RSS after {} s -> at the end", warmup.as_secs()),
            format!(
                "{rss_warm:.0} MiB -> {rss_end:.0} MiB ({:+.1}%)",
                (rss_end / rss_warm - 1.0) * 100.0
            ),
            "within 10%".into(),
        ),
        (
            "soak: errors".into(),
            format!(
                "{errors} ({})",
                VERBS
                    .iter()
                    .zip(total.errors)
                    .map(|(v, e)| format!("{v} {e}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "0".into(),
        ),
        (
            "soak: watch events missed (and watches ended early)".into(),
            format!(
                "{missed} of {} ({} ended)",
                expected * p.watchers as u64,
                ended.load(Ordering::Relaxed)
            ),
            "0".into(),
        ),
    ];
    for (v, lat) in VERBS.iter().zip(&total.latencies) {
        let mut ms: Vec<f64> = lat.iter().map(|&us| f64::from(us) / 1e3).collect();
        let p50 = percentile(&mut ms, 0.5);
        let p99 = percentile(&mut ms, 0.99);
        rows.push((
            format!("soak: {v} latency p50 / p99"),
            format!("{p50:.2} ms / {p99:.2} ms"),
            "-".into(),
        ));
    }
    drop(server);
    rows
}
