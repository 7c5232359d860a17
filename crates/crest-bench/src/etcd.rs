//! `--only etcd`: Crest's durable creates and data dir size next to etcd's on the same machine,
//! in the same run.
//!
//! Each round starts `etcd` (Debian's etcd-server, 3.4) on 127.0.0.1 with a fresh data dir and
//! puts N values (the same ~2 KiB CronTab JSON Crest gets) from 64 gRPC clients, each on its own
//! connection (etcd-client); then compacts to the last revision, defragments and measures the data
//! dir (`du`). Then a fresh Crest gets the same N objects as creates from 64 HTTP keep-alive
//! connections, runs with one second of history retention so it compacts too, and its data dir is
//! measured the same way. Rounds alternate the two; the table has the medians and every round's
//! figures. Both servers are stopped by PID (their `Child`).

use crate::{create_crd, crontab, load, median, Row, COLLECTION};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct Etcd {
    pub(crate) child: Child,
    pub(crate) endpoint: String,
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Fails the bench with a clear message when `etcd` is not installed.
pub(crate) fn etcd_version() -> String {
    match Command::new("etcd").arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .replace("etcd Version:", "etcd")
            .trim()
            .to_string(),
        _ => {
            eprintln!(
                "crest-bench --only etcd,replicas needs the etcd server binary on PATH \
                 (Debian: apt-get install etcd-server)"
            );
            std::process::exit(2);
        }
    }
}

pub(crate) async fn start_etcd(dir: &Path) -> Etcd {
    let (client, peer) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = crate::pinned("CREST_BENCH_ETCD_CPUS", "etcd")
        .args(["--name", "bench", "--data-dir"])
        .arg(dir)
        .args(["--listen-client-urls", &client_url])
        .args(["--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url])
        .args(["--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("bench={peer_url}")])
        .args(["--quota-backend-bytes", &(8u64 << 30).to_string()])
        .args(["--log-level", "error"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start etcd");
    let etcd = Etcd {
        child,
        endpoint: client_url,
    };
    let t0 = Instant::now();
    loop {
        if let Ok(mut c) = etcd_client::Client::connect([&etcd.endpoint], None).await {
            if c.status().await.is_ok() {
                return etcd;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "etcd did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Disk usage of everything under `dir`, as `du` counts it (allocated blocks).
pub(crate) fn du(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                total += m.blocks() * 512;
            }
        }
    }
    total
}

pub(crate) struct Figures {
    pub(crate) rate: f64,
    disk: u64,
    raw: u64,
    /// Server CPU time (user + system) per write, in microseconds.
    pub(crate) cpu_us: f64,
    /// The system (kernel) part of `cpu_us`.
    pub(crate) sys_us: f64,
}

/// CPU time (user + system) process `pid` has used so far, in seconds.
pub(crate) fn cpu_seconds(pid: u32) -> f64 {
    let (user, system) = cpu_split(pid);
    user + system
}

/// A process's user and system CPU seconds so far (utime and stime of /proc/PID/stat).
pub(crate) fn cpu_split(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command (which may hold spaces) end with ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line: 12 and 13 after the command.
    (ticks(11) / 100.0, ticks(12) / 100.0)
}

/// N puts of the CronTab JSON from `clients` connections; then compact + defrag and `du`.
async fn etcd_round(n: usize, clients: usize) -> Figures {
    etcd_puts(n, clients, |i| crontab(&format!("ct-{i}"))).await
}

/// N puts of `value(i)` under CronTab keys from `clients` connections (etcd-client, one
/// connection each); then compact + defrag and `du`.
pub(crate) async fn etcd_puts(
    n: usize,
    clients: usize,
    value: impl Fn(usize) -> String + Send + Sync + 'static,
) -> Figures {
    let value = Arc::new(value);
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path()).await;
    let next = Arc::new(AtomicUsize::new(0));
    let raw = Arc::new(AtomicUsize::new(0));
    let mut conns = vec![];
    for _ in 0..clients {
        conns.push(
            etcd_client::Client::connect([&etcd.endpoint], None)
                .await
                .expect("etcd connect"),
        );
    }
    let (user0, sys0) = cpu_split(etcd.child.id());
    let cpu0 = user0 + sys0;
    let t0 = Instant::now();
    let mut tasks = vec![];
    for mut c in conns {
        let (next, raw, value) = (next.clone(), raw.clone(), value.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let key = format!("/registry/stable.example.com/crontabs/default/ct-{i}");
                let value = value(i);
                raw.fetch_add(key.len() + value.len(), Ordering::Relaxed);
                c.put(key, value, None).await.expect("etcd put");
            }
        }));
    }
    for t in tasks {
        t.await.expect("etcd client");
    }
    let rate = n as f64 / t0.elapsed().as_secs_f64();
    let (user1, sys1) = cpu_split(etcd.child.id());
    let cpu_us = (user1 + sys1 - cpu0) * 1e6 / n as f64;
    let sys_us = (sys1 - sys0) * 1e6 / n as f64;
    let mut c = etcd_client::Client::connect([&etcd.endpoint], None)
        .await
        .expect("etcd connect");
    let rev = c
        .status()
        .await
        .expect("status")
        .header()
        .map(|h| h.revision())
        .unwrap_or(0);
    c.compact(
        rev,
        Some(etcd_client::CompactionOptions::new().with_physical()),
    )
    .await
    .expect("compact");
    c.defragment().await.expect("defragment");
    let disk = du(dir.path());
    drop(etcd);
    Figures {
        rate,
        disk,
        raw: raw.load(Ordering::Relaxed) as u64,
        cpu_us,
        sys_us,
    }
}

/// N creates through Crest's API from `clients` connections; then, once the history of the last
/// second has been compacted, `du` of the data dir.
async fn crest_round(binary: &Path, n: usize, clients: usize) -> Figures {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = crate::start_with(binary, dir.path(), &["--history-retention-seconds", "1"]);
    let client = crate::client(&server.base);
    create_crd(&client, &server.base).await;
    let (user0, sys0) = cpu_split(server.child.id());
    let cpu0 = user0 + sys0;
    let rate = load(&server.base, clients, 3600, n - 1, |i| {
        let body = crontab(&format!("ct-{i}"));
        ("POST", COLLECTION.to_string(), Some(body), 201)
    })
    .await;
    let (user1, sys1) = cpu_split(server.child.id());
    let cpu_us = (user1 + sys1 - cpu0) * 1e6 / (n - 1) as f64;
    let sys_us = (sys1 - sys0) * 1e6 / (n - 1) as f64;
    // The stored objects as served (JSON with metadata), what the data dir holds the latest of.
    let list = client
        .get(format!("{}{COLLECTION}", server.base))
        .send()
        .await
        .expect("list");
    let body = list.bytes().await.expect("list body");
    let raw = body.len() as u64;
    // History retention is one second, sampled every second: after three, all is compacted.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let disk = du(dir.path());
    drop(server);
    Figures {
        rate,
        disk,
        raw,
        cpu_us,
        sys_us,
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

pub(crate) async fn compare(binary: &Path, n: usize, clients: usize, rounds: usize) -> Vec<Row> {
    let version = etcd_version();
    let mut etcd = vec![];
    let mut crest = vec![];
    for r in 0..rounds.max(1) {
        let e = etcd_round(n, clients).await;
        eprintln!(
            "round {}: etcd {:.0} puts/s, {:.0} us CPU/put, {:.0} MiB (raw {:.0} MiB)",
            r + 1,
            e.rate,
            e.cpu_us,
            mib(e.disk),
            mib(e.raw)
        );
        let c = crest_round(binary, n, clients).await;
        eprintln!(
            "round {}: crest {:.0} creates/s, {:.0} us CPU/create, {:.0} MiB (raw {:.0} MiB)",
            r + 1,
            c.rate,
            c.cpu_us,
            mib(c.disk),
            mib(c.raw)
        );
        etcd.push(e);
        crest.push(c);
    }
    let each = |v: &[Figures], f: &dyn Fn(&Figures) -> String| {
        v.iter().map(f).collect::<Vec<_>>().join(", ")
    };
    let e_rate = median(etcd.iter().map(|f| f.rate).collect());
    let c_rate = median(crest.iter().map(|f| f.rate).collect());
    let e_disk = median(etcd.iter().map(|f| mib(f.disk)).collect());
    let c_disk = median(crest.iter().map(|f| mib(f.disk)).collect());
    let e_cpu = median(etcd.iter().map(|f| f.cpu_us).collect());
    let c_cpu = median(crest.iter().map(|f| f.cpu_us).collect());
    let e_raw = median(etcd.iter().map(|f| mib(f.raw)).collect());
    let c_raw = median(crest.iter().map(|f| mib(f.raw)).collect());
    vec![
        (
            format!("{version}: puts of {n} 2 KiB values, {clients} gRPC clients (median of {rounds})"),
            format!(
                "{e_rate:.0} /s, {e_cpu:.0} us server CPU per put (rounds: {})",
                each(&etcd, &|f| format!("{:.0}", f.rate))
            ),
            "reference".into(),
        ),
        (
            format!("Crest: durable creates of {n} 2 KiB objects, {clients} HTTP clients (median of {rounds})"),
            format!(
                "{c_rate:.0} /s = {:.2}x etcd, {c_cpu:.0} us server CPU per create (rounds: {})",
                c_rate / e_rate,
                each(&crest, &|f| format!("{:.0}", f.rate))
            ),
            ">= 1.2x etcd".into(),
        ),
        (
            "etcd data dir after compact + defrag".into(),
            format!(
                "{e_disk:.0} MiB = {:.2}x raw {e_raw:.0} MiB (rounds: {})",
                e_disk / e_raw,
                each(&etcd, &|f| format!("{:.0}", mib(f.disk)))
            ),
            "reference".into(),
        ),
        (
            "Crest data dir after compaction".into(),
            format!(
                "{c_disk:.0} MiB = {:.2}x raw {c_raw:.0} MiB, {:.2}x etcd (rounds: {})",
                c_disk / c_raw,
                c_disk / e_disk,
                each(&crest, &|f| format!("{:.0}", mib(f.disk)))
            ),
            "<= 1.5x raw".into(),
        ),
    ]
}
