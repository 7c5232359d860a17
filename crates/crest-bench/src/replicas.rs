//! `replicas` (only when named; needs `etcd` on PATH): Crest on etcd against raw etcd and
//! against the embedded store, in the same run on the same machine.
//!
//! - Durable creates of 2 KiB CronTabs through one Crest replica on a one-member etcd against
//!   raw etcd puts of the same values from as many gRPC clients (target: Crest >= 0.8x etcd).
//! - GETs by name and LISTs (100 objects) from keep-alive connections against a replica on etcd
//!   and against the embedded store holding the same objects (target: within 10%).
//! - Server CPU per GET of replica A alone, then while a second replica B on the same etcd
//!   serves the same load at the same time (target: A's CPU per GET does not grow).
//! - The latency of a consistent LIST (no resourceVersion: etcd's current revision, then the
//!   cache) against a LIST from the cache (`resourceVersion=0`) and a raw etcd round trip
//!   (target: the difference at most one etcd round trip).
//!
//! Each measurement alternates the two sides over rounds and keeps the best of each, as the
//! other sections do; the client runs on one thread beside the servers on this machine.

use crate::etcd::{cpu_seconds, etcd_version, start_etcd};
use crate::{client, create_crd, crontab, load, start_with, Row, Server, COLLECTION};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

const OBJECTS: usize = 100;
const ROUNDS: usize = 2;

/// How raw etcd is written to.
#[derive(Clone, Copy)]
enum Write {
    /// A plain put.
    Put,
    /// kube-apiserver's create: a transaction that puts only if the key is absent.
    TxnCreate,
}

/// Raw etcd: `n` writes of CronTab JSON under `prefix` from `clients` connections; writes/s.
async fn etcd_writes(endpoint: &str, prefix: &str, n: usize, clients: usize, how: Write) -> f64 {
    use etcd_client::{Compare, CompareOp, Txn, TxnOp};
    let next = Arc::new(AtomicUsize::new(0));
    let mut conns = vec![];
    for _ in 0..clients {
        conns.push(
            etcd_client::Client::connect([endpoint], None)
                .await
                .expect("etcd connect"),
        );
    }
    let t0 = Instant::now();
    let mut tasks = vec![];
    for mut c in conns {
        let (next, prefix) = (next.clone(), prefix.to_string());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let key = format!("{prefix}/stable.example.com/crontabs/default/ct-{i}");
                let value = crontab(&format!("ct-{i}"));
                match how {
                    Write::Put => {
                        c.put(key, value, None).await.expect("etcd put");
                    }
                    Write::TxnCreate => {
                        let txn = Txn::new()
                            .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
                            .and_then([TxnOp::put(key.clone(), value, None)])
                            .or_else([TxnOp::get(key, None)]);
                        c.txn(txn).await.expect("etcd txn");
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("etcd client");
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// Raw etcd as `etcd_writes`, with or without one watch (with previous values) following the
/// prefix, as an API server's cache does. kube-apiserver's pattern is transaction creates with
/// the watch: what any API server on etcd costs it; plain puts are the lower bound.
async fn etcd_pattern(
    endpoint: &str,
    prefix: &str,
    n: usize,
    clients: usize,
    how: Write,
    watch: bool,
) -> f64 {
    let mut seen = None;
    if watch {
        let mut watcher = etcd_client::Client::connect([endpoint], None)
            .await
            .expect("etcd connect");
        let mut events = watcher
            .watch(
                format!("{prefix}/"),
                Some(
                    etcd_client::WatchOptions::new()
                        .with_prefix()
                        .with_prev_key(),
                ),
            )
            .await
            .expect("etcd watch");
        seen = Some(tokio::spawn(async move {
            let _watcher = watcher;
            let mut count = 0usize;
            while count < n {
                match events.message().await {
                    Ok(Some(r)) => count += r.events().len(),
                    _ => break,
                }
            }
            count
        }));
    }
    let rate = etcd_writes(endpoint, prefix, n, clients, how).await;
    if let Some(seen) = seen {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), seen).await;
    }
    rate
}

/// Starts a replica on etcd `endpoint` under `prefix`, sharing `pki`.
fn replica(binary: &Path, dir: &Path, endpoint: &str, prefix: &str, pki: &Path) -> Server {
    let pki = pki.to_string_lossy().to_string();
    start_with(
        binary,
        dir,
        &[
            "--etcd-servers",
            endpoint,
            "--etcd-prefix",
            prefix,
            "--pki-dir",
            &pki,
        ],
    )
    .0
}

/// How a read is asked for: from the cache as it is (`resourceVersion=0`), or consistent (no
/// resourceVersion: the store's current revision first).
const CACHED: &str = "?resourceVersion=0";
const CONSISTENT: &str = "";

/// GETs by name per second.
async fn gets(base: &str, clients: usize, seconds: u64, query: &'static str) -> f64 {
    load(base, clients, seconds, usize::MAX, move |i| {
        (
            "GET",
            format!("{COLLECTION}/r-{}{query}", i % OBJECTS),
            None,
            200,
        )
    })
    .await
}

/// LISTs of the collection per second.
async fn lists(base: &str, clients: usize, seconds: u64, query: &'static str) -> f64 {
    load(base, clients, seconds, usize::MAX, move |_| {
        ("GET", format!("{COLLECTION}{query}"), None, 200)
    })
    .await
}

async fn fill(base: &str, clients: usize, prefix: &'static str) {
    create_crd(&client(base), base).await;
    load(base, clients, 3600, OBJECTS - 1, move |i| {
        (
            "POST",
            COLLECTION.to_string(),
            Some(crontab(&format!("{prefix}-{}", i + 1))),
            201,
        )
    })
    .await;
    // `create_crd` created `first`; the GETs read `<prefix>-0` too.
    load(base, 1, 60, 1, move |_| {
        (
            "POST",
            COLLECTION.to_string(),
            Some(crontab(&format!("{prefix}-0"))),
            201,
        )
    })
    .await;
}

/// Median of sequential request latencies in microseconds.
async fn latency_us(base: &str, path: &str, n: usize) -> f64 {
    let mut conn = crate::Conn::open(base).await;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        assert_eq!(conn.send("GET", path, None).await, 200, "{path}");
        v.push(t.elapsed().as_secs_f64() * 1e6);
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median latency of etcd's keys-only limit-1 range, the round trip a consistent read adds.
async fn etcd_round_trip_us(endpoint: &str, n: usize) -> f64 {
    let mut c = etcd_client::Client::connect([endpoint], None)
        .await
        .expect("etcd connect");
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        c.get(
            "/",
            Some(
                etcd_client::GetOptions::new()
                    .with_keys_only()
                    .with_limit(1),
            ),
        )
        .await
        .expect("etcd range");
        v.push(t.elapsed().as_secs_f64() * 1e6);
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(crate) async fn replicas(binary: &Path, n: usize, clients: usize, seconds: u64) -> Vec<Row> {
    let version = etcd_version();
    let etcd_dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(etcd_dir.path()).await;
    let endpoint = etcd.endpoint.clone();
    let pki = tempfile::tempdir().expect("tempdir");
    let mut rows = vec![];

    // Durable creates: raw etcd puts against Crest creates, alternated, best of each; the CPU
    // each side costs per write (etcd's, and Crest's on top of it).
    let n = n.min(20_000);
    // The four raw patterns: a put or a transaction create, without or with a watch; the best
    // rate and the lowest etcd CPU per write of each.
    let patterns = [
        (Write::Put, false, "puts"),
        (Write::Put, true, "puts + one prefix watch"),
        (Write::TxnCreate, false, "transaction creates"),
        (
            Write::TxnCreate,
            true,
            "transaction creates + one prefix watch (kube-apiserver's pattern)",
        ),
    ];
    let mut best = [(0f64, f64::MAX); 4];
    let (mut through, mut crest_cpu, mut etcd_cpu_crest) = (0f64, f64::MAX, f64::MAX);
    for round in 0..ROUNDS {
        for (i, (how, watch, _)) in patterns.iter().enumerate() {
            let e0 = cpu_seconds(etcd.child.id());
            let prefix = format!("/raw-{round}-{i}");
            let rate = etcd_pattern(&endpoint, &prefix, n, clients, *how, *watch).await;
            let cpu = (cpu_seconds(etcd.child.id()) - e0) * 1e6 / n as f64;
            best[i] = (best[i].0.max(rate), best[i].1.min(cpu));
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let a = replica(
            binary,
            dir.path(),
            &endpoint,
            &format!("/creates-{round}"),
            pki.path(),
        );
        create_crd(&client(&a.base), &a.base).await;
        let (e0, c0) = (cpu_seconds(etcd.child.id()), cpu_seconds(a.child.id()));
        let rate = load(&a.base, clients, 3600, n, |i| {
            let body = crontab(&format!("ct-{i}"));
            ("POST", COLLECTION.to_string(), Some(body), 201)
        })
        .await;
        etcd_cpu_crest = etcd_cpu_crest.min((cpu_seconds(etcd.child.id()) - e0) * 1e6 / n as f64);
        crest_cpu = crest_cpu.min((cpu_seconds(a.child.id()) - c0) * 1e6 / n as f64);
        through = through.max(rate);
        eprintln!(
            "round {}: etcd {:.0} puts/s, Crest on etcd {rate:.0} creates/s",
            round + 1,
            best[0].0
        );
    }
    let (raw, txn) = (best[0].0, best[3].0);
    for (i, (_, _, what)) in patterns.iter().enumerate() {
        let (rate, cpu) = best[i];
        rows.push((
            format!(
                "{version}: {what}, {n} 2 KiB values, {clients} gRPC clients (best of {ROUNDS})"
            ),
            format!(
                "{rate:.0} /s = {:.2}x puts, {cpu:.0} us etcd CPU per write",
                rate / raw
            ),
            "reference".into(),
        ));
    }
    rows.push((
        format!("Crest on etcd: durable creates of {n} 2 KiB CronTabs, {clients} HTTP clients"),
        format!(
            "{through:.0} /s = {:.2}x raw etcd puts, {:.2}x kube-apiserver's pattern; per create {crest_cpu:.0} us Crest CPU + {etcd_cpu_crest:.0} us etcd CPU",
            through / raw,
            through / txn
        ),
        ">= 0.8x etcd".into(),
    ));

    // Reads per replica against the embedded store, the same objects.
    let emb_dir = tempfile::tempdir().expect("tempdir");
    let (embedded, _) = start_with(binary, emb_dir.path(), &[]);
    fill(&embedded.base, clients, "r").await;
    let a_dir = tempfile::tempdir().expect("tempdir");
    let a = replica(binary, a_dir.path(), &endpoint, "/reads", pki.path());
    fill(&a.base, clients, "r").await;
    gets(&a.base, clients, 1, CACHED).await;
    gets(&embedded.base, clients, 1, CACHED).await;
    for (what, query) in [
        ("from cache (rv=0)", CACHED),
        ("consistent (no rv)", CONSISTENT),
    ] {
        let (mut e_get, mut a_get, mut e_list, mut a_list) = (0f64, 0f64, 0f64, 0f64);
        for _ in 0..ROUNDS {
            a_get = a_get.max(gets(&a.base, clients, seconds, query).await);
            e_get = e_get.max(gets(&embedded.base, clients, seconds, query).await);
            e_list = e_list.max(lists(&embedded.base, clients, seconds, query).await);
            a_list = a_list.max(lists(&a.base, clients, seconds, query).await);
        }
        let target = if query == CACHED {
            "within 10%"
        } else {
            "(for comparison)"
        };
        rows.push((
            format!("GET by name {what}, {clients} clients: replica on etcd vs embedded store"),
            format!(
                "{a_get:.0} /s vs {e_get:.0} /s = {:.0}%",
                a_get / e_get * 100.0
            ),
            target.into(),
        ));
        rows.push((
            format!(
                "LIST of {OBJECTS} CronTabs {what}, {clients} clients: replica on etcd vs embedded"
            ),
            format!(
                "{a_list:.0} /s vs {e_list:.0} /s = {:.0}%",
                a_list / e_list * 100.0
            ),
            target.into(),
        ));
    }
    // The embedded store's own difference between a consistent and a cached LIST, for the
    // latency comparison below.
    let emb_consistent_us = latency_us(&embedded.base, COLLECTION, 500).await;
    let emb_cached_us = latency_us(&embedded.base, &format!("{COLLECTION}{CACHED}"), 500).await;
    drop(embedded);

    // CPU per GET on A, alone and with a second replica serving the same load at the same time.
    let b_dir = tempfile::tempdir().expect("tempdir");
    let mut b = None;
    let mut figures = vec![];
    for (what, query) in [("from cache", CACHED), ("consistent", CONSISTENT)] {
        let c0 = cpu_seconds(a.child.id());
        let t0 = Instant::now();
        let rate = gets(&a.base, clients / 2, seconds, query).await;
        let alone = (cpu_seconds(a.child.id()) - c0) * 1e6 / (rate * t0.elapsed().as_secs_f64());
        let b =
            b.get_or_insert_with(|| replica(binary, b_dir.path(), &endpoint, "/reads", pki.path()));
        gets(&b.base, clients / 2, 1, query).await;
        let (c0, e0) = (cpu_seconds(a.child.id()), cpu_seconds(etcd.child.id()));
        let t0 = Instant::now();
        let (ra, rb) = tokio::join!(
            gets(&a.base, clients / 2, seconds, query),
            gets(&b.base, clients / 2, seconds, query)
        );
        let secs = t0.elapsed().as_secs_f64();
        let with_b = (cpu_seconds(a.child.id()) - c0) * 1e6 / (ra * secs);
        let etcd_per_get = (cpu_seconds(etcd.child.id()) - e0) * 1e6 / ((ra + rb) * secs);
        figures.push(format!(
            "{what}: {alone:.1} us vs {with_b:.1} us ({:.0}%; A {ra:.0} /s + B {rb:.0} /s; etcd {etcd_per_get:.1} us per GET)",
            with_b / alone * 100.0
        ));
    }
    rows.push((
        format!("server CPU per GET on replica A ({} clients): alone vs with replica B under the same load", clients / 2),
        figures.join("; "),
        "no growth".into(),
    ));
    drop(b);

    // What consistency costs a LIST.
    let consistent_us = latency_us(&a.base, COLLECTION, 500).await;
    let cached_us = latency_us(&a.base, &format!("{COLLECTION}{CACHED}"), 500).await;
    let rtt_us = etcd_round_trip_us(&endpoint, 500).await;
    // The same round trip from a multi-threaded runtime, as the server's (its wakeups cross
    // threads).
    let rtt_mt_us = {
        let endpoint = endpoint.clone();
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(etcd_round_trip_us(&endpoint, 500))
        })
        .join()
        .expect("round trip thread")
    };
    rows.push((
        format!("LIST of {OBJECTS}, one client, median: consistent vs from cache (rv=0)"),
        format!(
            "on etcd {consistent_us:.0} us vs {cached_us:.0} us: +{:.0} us; embedded {emb_consistent_us:.0} vs {emb_cached_us:.0} us: +{:.0} us; an etcd round trip {rtt_us:.0} us ({rtt_mt_us:.0} us from a multi-threaded runtime)",
            consistent_us - cached_us,
            emb_consistent_us - emb_cached_us
        ),
        "at most one etcd round trip more".into(),
    ));
    drop(a);
    drop(etcd);
    rows
}
