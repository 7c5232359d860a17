//! Benchmarks of the real `crest` binary, printed as a table:
//!
//!     cargo build --release -p crest -p crest-bench
//!     cargo run --release -p crest-bench -- [--objects N] [--only SECTIONS]
//!
//! Sections (all run by default; `--only core,list` or `--only watch` picks some):
//!
//! - `core`: process start to /readyz (empty and with N stored objects), CRD create -> first
//!   custom resource create, durable creates of 2 KiB objects from 64 keep-alive clients (plain
//!   and with a validating, defaulting schema), GET by name, LIST of 10,000 objects, and RSS idle
//!   and with N objects.
//! - `list`: a paginated LIST (limit=500, following metadata.continue) of the N objects, end to
//!   end, checking the item count and that every page has the same resourceVersion.
//! - `fanout` (in `watch`): 1,000 watchers on one resource, each on its own connection; paced
//!   creates from another connection; latency from sending each create to each watcher having
//!   its event (p50/p99/max over all pairs) and the number of missed events.
//! - `bookmarks` (in `watch`): paced creates while 1,000 watchers with allowWatchBookmarks get
//!   bookmarks and re-watch from their resourceVersion, with compaction every second: write
//!   latency against the same writes without watchers, and no event lost across re-watches.
//! - `openapi`: a group-version's OpenAPI v3 document from the cache, and CRD create -> served
//!   (and published in OpenAPI) with 500 CRDs installed.
//! - `builtin`: ConfigMaps against CronTabs of the same size in one server: durable creates and
//!   GETs by name, alternated over rounds (a built-in kind within 10% of a custom resource); then
//!   ConfigMap GETs and LISTs as protobuf against JSON.
//! - `events`: CR create p50/p99 (100/s, paced) on a quiet server and while other clients post
//!   core/v1 Events at 1,000/s: Events must not slow other writes (target: p99 within 2x).
//! - `versions`: GETs through a non-storage version of a `None` CRD against the storage version.
//! - `webhook`: a LIST of 10,000 objects through a conversion webhook on loopback against the
//!   same LIST without conversion (plus the webhook's own time).
//! - `hang`: CR create p99 while requests wait on a conversion webhook that never answers.
//! - `tls`: GETs by name over HTTPS (the default; keep-alive HTTP/1.1 connections, so handshakes
//!   are amortized) against the same server and data on `--plain-http` (target: HTTPS at least
//!   80% of plain HTTP), alternated over 2 rounds, best of each.
//! - `authz`: GETs by name as a token user whose access comes from a RoleBinding against the
//!   admin's (target: at least 90%), and the user's again after 10,000 RoleBindings in other
//!   namespaces were created (target: within 5%).
//! - `apply`: server-side apply of a 2 KiB CronTab against the same document as a merge patch
//!   (target: apply at most 2x the merge patch's cost).
//! - `table`: a Table LIST (kubectl's Accept) of 10,000 objects with 3 printer columns.
//! - `etcd` (only when named): Crest next to etcd 3.4 (`etcd` on PATH: Debian's etcd-server) in
//!   the same run: durable 2 KiB creates of N objects from 64 clients against etcd's puts of the
//!   same values from 64 gRPC clients, and each data dir after compaction (etcd: + defrag);
//!   `--rounds R` (default 3) alternates them R times and reports medians. See `etcd.rs`.
//! - `shape` (only when named, with etcd on PATH): issue 27's outside client in the same run as
//!   etcd: creates of 2,624-byte CronTabs of the seed's schema with `generateName` and a
//!   random-letter annotation from 64 TLS connections authenticated by the kubeconfig's client
//!   certificate, against etcd puts of the same bodies; server CPU per write of each and the
//!   ratio, over `--rounds`; N is `--objects` up to 30,000. See `shape.rs`.
//! - `replicas` (only when named): Crest on etcd (one member) against raw etcd puts (durable 2 KiB
//!   creates, target >= 0.8x), GET and LIST per replica against the embedded store (within
//!   10%), server CPU per GET with a second replica (no growth), and a consistent LIST's
//!   latency against a cached one and an etcd round trip. See `replicas.rs`.
//! - `soak` (only when named): `--soak-seconds` (600) of paced mixed load (create, GET, merge
//!   patch, update, LIST, delete at `--soak-rate` cycles/s) with `--watchers` (1,000) watches:
//!   RSS after the warm-up against the end, errors, missed watch events, p50/p99 per verb
//!   (`CREST_SOAK_SERVER_ARGS` adds server flags). See `soak.rs`.
//! - `attack` (only when named): issue 19's hostile clients against one server while a probe
//!   GETs: each attack's answer, RSS before/peak/after, probe latency before and during.
//! - `startup`: process spawn -> kubeconfig written -> first 200 from /readyz over HTTPS, on an
//!   empty data dir and on a restart, medians of `--starts N` (21), with the server's own phase
//!   timings; `--baseline PATH` measures that binary too, alternated. See `startup.rs`.
//! - `compare` (only when named, `--baseline PATH`): this build against another in the same
//!   run: start time, durable creates, GETs, alternated over `--rounds`.
//! - `CREST_BENCH_ETCD_CPUS` / `CREST_BENCH_SERVER_CPUS`: pin etcd / the servers to these CPUs
//!   (`taskset -c` lists), to measure them as if on machines of their own.
//! - `--payload repeated|random`: what fills each object's 1,800-character payload: `x`s (the
//!   default, as every figure so far) or characters compression cannot shrink.
//! - `idle` (in `watch`): server RSS growth for 10,000 idle watch connections (and, to compare,
//!   for as many idle keep-alive connections without a watch).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod apply;
mod attack;
mod authz;
mod builtin;
mod compare;
mod etcd;
mod events;
mod openapi;
mod replicas;
mod shape;
mod soak;
mod startup;
mod table;
mod versions;
mod watch;
mod webhook;

struct Args {
    binary: PathBuf,
    objects: usize,
    clients: usize,
    seconds: u64,
    keep: Option<PathBuf>,
    /// Sections to run (empty: all).
    only: Vec<String>,
    watch: watch::Params,
    /// Rounds of the etcd comparison.
    rounds: usize,
    soak: soak::Params,
    /// The binary `compare` (and `startup`) measures against.
    baseline: Option<PathBuf>,
    /// Starts of each kind in `startup`.
    starts: usize,
}

impl Args {
    fn wants(&self, section: &str) -> bool {
        // The etcd comparison needs etcd installed: only when asked for.
        if matches!(
            section,
            "etcd" | "shape" | "replicas" | "soak" | "compare" | "attack"
        ) {
            return self.only.iter().any(|s| s == section);
        }
        self.only.is_empty()
            || self.only.iter().any(|s| {
                s == section || (s == "watch" && matches!(section, "fanout" | "bookmarks" | "idle"))
            })
    }
}

const SECTIONS: [&str; 23] = [
    "etcd",
    "shape",
    "replicas",
    "tls",
    "authz",
    "events",
    "core",
    "list",
    "watch",
    "fanout",
    "bookmarks",
    "idle",
    "table",
    "openapi",
    "builtin",
    "versions",
    "webhook",
    "hang",
    "apply",
    "soak",
    "compare",
    "attack",
    "startup",
];

fn num<T: std::str::FromStr>(v: Option<String>, flag: &str) -> T {
    v.and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{flag} needs a number"))
}

fn parse_args() -> Args {
    let mut args = Args {
        binary: default_binary(),
        objects: 100_000,
        clients: 64,
        seconds: 5,
        keep: None,
        only: vec![],
        watch: watch::Params::default(),
        rounds: 3,
        soak: soak::Params::default(),
        baseline: None,
        starts: 21,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--binary" => args.binary = it.next().map(PathBuf::from).unwrap_or(args.binary),
            "--objects" => {
                args.objects = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.objects)
            }
            "--clients" => {
                args.clients = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.clients)
            }
            "--seconds" => {
                args.seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.seconds)
            }
            "--keep" => args.keep = it.next().map(PathBuf::from),
            "--payload" => match it.next().as_deref() {
                Some("repeated") => PAYLOAD_RANDOM.store(false, Ordering::Relaxed),
                Some("random") => PAYLOAD_RANDOM.store(true, Ordering::Relaxed),
                _ => {
                    eprintln!("--payload takes repeated or random");
                    std::process::exit(2);
                }
            },
            "--only" => {
                let v = it.next().unwrap_or_default();
                for s in v.split(',').filter(|s| !s.is_empty()) {
                    if !SECTIONS.contains(&s) {
                        eprintln!("unknown section {s}; sections: {}", SECTIONS.join(", "));
                        std::process::exit(2);
                    }
                    args.only.push(s.to_string());
                }
            }
            "--watchers" => args.watch.watchers = num(it.next(), &a),
            "--writes" => args.watch.writes = num(it.next(), &a),
            "--rate" => args.watch.rate = num(it.next(), &a),
            "--bookmark-seconds" => args.watch.bookmark_seconds = num(it.next(), &a),
            "--idle-watches" => args.watch.idle = num(it.next(), &a),
            "--rounds" => args.rounds = num(it.next(), &a),
            "--soak-seconds" => args.soak.seconds = num(it.next(), &a),
            "--soak-rate" => args.soak.rate = num(it.next(), &a),
            "--baseline" => args.baseline = it.next().map(PathBuf::from),
            "--starts" => args.starts = num(it.next(), &a),
            "--help" | "-h" => {
                println!(
                    "crest-bench [--binary PATH] [--objects N] [--clients N] [--seconds S] [--keep DIR]\n\
                     \x20           [--only {}]\n\
                     \x20           [--watchers N] [--writes N] [--rate PER_S] [--bookmark-seconds S]\n\
                     \x20           [--idle-watches N] [--rounds N (etcd comparison)]",
                    SECTIONS.join(",")
                );
                std::process::exit(0);
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    args
}

fn default_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent()
        .map(|p| p.join("crest"))
        .unwrap_or_else(|| PathBuf::from("target/release/crest"))
}

struct Server {
    child: Child,
    base: String,
}

/// How to reach a server this run started, as its admin: its CA (HTTPS, the default) and the
/// admin token of its data dir.
#[derive(Clone)]
struct Access {
    /// `None` for a `--plain-http` server.
    ca: Option<reqwest::Certificate>,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// `Bearer <admin token>`.
    authorization: String,
}

/// The servers of this run by base URL.
static SERVERS: std::sync::Mutex<Vec<(String, Access)>> = std::sync::Mutex::new(Vec::new());

/// The `server:` URL of the kubeconfig at `path`, once the server has written it.
fn kubeconfig_server(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("server:"))?;
    Some(
        line.trim_start()
            .trim_start_matches("server:")
            .trim()
            .to_string(),
    )
}

/// Reads how to reach the server whose pki dir is `pki` (HTTPS: `ca.crt`; `admin.token`).
fn read_access(base: &str, pki: &Path) -> Access {
    let token = std::fs::read_to_string(pki.join("admin.token")).expect("pki/admin.token");
    let authorization = format!("Bearer {}", token.trim());
    if !base.starts_with("https://") {
        return Access {
            ca: None,
            tls: None,
            authorization,
        };
    }
    let pem = std::fs::read(pki.join("ca.crt")).expect("pki/ca.crt");
    let mut roots = rustls::RootCertStore::empty();
    use rustls::pki_types::pem::PemObject;
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
        roots.add(cert.expect("ca.crt")).expect("CA");
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    Access {
        ca: Some(reqwest::Certificate::from_pem(&pem).expect("ca.crt")),
        tls: Some(Arc::new(tls)),
        authorization,
    }
}

/// How to reach the server at `base` (a server this run started).
fn access(base: &str) -> Access {
    SERVERS
        .lock()
        .expect("servers")
        .iter()
        .rev()
        .find(|(b, _)| base.starts_with(b.as_str()))
        .map(|(_, a)| a.clone())
        .unwrap_or_else(|| panic!("no server of this run at {base}"))
}

/// A reqwest client for the server at `base`: trusts its CA, sends its admin token.
fn client(base: &str) -> reqwest::Client {
    let a = access(base);
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        a.authorization.parse().expect("token header"),
    );
    let mut builder = reqwest::Client::builder().default_headers(headers);
    if let Some(ca) = a.ca {
        builder = builder.add_root_certificate(ca);
    }
    builder.build().expect("client")
}

/// `host:port` of a base URL.
fn host_of(base: &str) -> String {
    base.trim_start_matches("https://")
        .trim_start_matches("http://")
        .to_string()
}

/// An HTTP/1.1 connection to the server at `base` (TLS unless it is a `--plain-http` server),
/// driven by a task of its own; the `Authorization` value to send.
async fn connect(
    base: &str,
) -> Result<
    (
        hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
        String,
    ),
    String,
> {
    let a = access(base);
    let host = host_of(base);
    let stream = tokio::net::TcpStream::connect(&host)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let tx = match a.tls {
        Some(config) => {
            // No ALPN: HTTP/1.1, one request at a time per connection (as wrk).
            let name =
                rustls::pki_types::ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, stream)
                .await
                .map_err(|e| format!("TLS handshake: {e}"))?;
            let (tx, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                    .await
                    .map_err(|e| format!("handshake: {e}"))?;
            tokio::spawn(conn);
            tx
        }
        None => {
            let (tx, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                    .await
                    .map_err(|e| format!("handshake: {e}"))?;
            tokio::spawn(conn);
            tx
        }
    };
    Ok((tx, a.authorization))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts crest on `dir`, returns it and the time from spawn to the first 200 from /readyz.
fn start(binary: &Path, dir: &Path) -> (Server, Duration) {
    start_with(binary, dir, &[])
}

/// [`start`] with extra `crest serve` flags.
fn start_with(binary: &Path, dir: &Path, extra: &[&str]) -> (Server, Duration) {
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    // Owner-only, as the server wants its data dir (it would narrow a wider one, and say so).
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let t0 = Instant::now();
    let child = pinned("CREST_BENCH_SERVER_CPUS", &binary.to_string_lossy())
        .args(["serve", "--data-dir"])
        .arg(dir)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {}: {e} (build it with cargo build --release -p crest)",
                binary.display()
            )
        });
    let base = loop {
        if let Some(server) = kubeconfig_server(&kubeconfig) {
            break server;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "server did not start"
        );
        std::thread::sleep(Duration::from_micros(500));
    };
    // HTTPS (the default): trust the CA the server keeps in its pki dir; as the admin.
    let pki = extra
        .iter()
        .position(|a| *a == "--pki-dir")
        .and_then(|i| extra.get(i + 1))
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("pki"));
    let access = read_access(&base, &pki);
    let mut client = reqwest::blocking::Client::builder();
    if let Some(ca) = &access.ca {
        client = client.add_root_certificate(ca.clone());
    }
    let client = client.build().expect("readiness client");
    loop {
        if client
            .get(format!("{base}/readyz"))
            .header("Authorization", &access.authorization)
            .send()
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let elapsed = t0.elapsed();
    SERVERS
        .lock()
        .expect("servers")
        .push((base.clone(), access));
    (Server { child, base }, elapsed)
}

/// `program`, pinned to the CPUs the environment variable `var` lists (`taskset -c`, which
/// execs it: the child's pid is the program's) when set, e.g. `CREST_BENCH_ETCD_CPUS=0
/// CREST_BENCH_SERVER_CPUS=1 taskset -c 1 crest-bench --only replicas` gives etcd and Crest a
/// core each, as on separate machines.
fn pinned(var: &str, program: &str) -> Command {
    match std::env::var(var) {
        Ok(cpus) if !cpus.is_empty() => {
            let mut c = Command::new("taskset");
            c.args(["-c", &cpus, program]);
            c
        }
        _ => Command::new(program),
    }
}

/// The median of some measurements (the upper one of an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The `q` quantile (0..=1, nearest rank) of some measurements; 0 for none.
fn percentile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;

/// What fills the 1,800-character `spec.payload` of [`crontab`]: `repeated` (`x`s: every
/// figure so far was measured with it; it compresses to almost nothing) or `random` (base64-like
/// characters from a generator seeded by the name: what compression cannot shrink, the
/// store's worst case). `--payload`.
static PAYLOAD_RANDOM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn payload(name: &str) -> String {
    if !PAYLOAD_RANDOM.load(Ordering::Relaxed) {
        return "x".repeat(1800);
    }
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    // FNV-1a of the name seeds an xorshift64: the same name, the same payload.
    let mut x = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }) | 1;
    (0..1800)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            CHARS[(x % 64) as usize] as char
        })
        .collect()
}

/// A CronTab whose JSON is about 2 KiB.
fn crontab(name: &str) -> String {
    let pad = payload(name);
    format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{{"name":"{name}","namespace":"default","labels":{{"app":"bench"}}}},"spec":{{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":1,"payload":"{pad}"}}}}"#
    )
}

const COLLECTION: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// The seed's CronTab schema (pattern, bounds, defaults) plus the payload field of [`crontab`].
const VALIDATED_CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.validated.example.com"},"spec":{"group":"validated.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"cronSpec":{"type":"string","pattern":"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$","default":"5 0 * * *"},"image":{"type":"string"},"replicas":{"type":"integer","minimum":1,"maximum":10,"default":1},"payload":{"type":"string","maxLength":4096}}}}}}}]}}"#;

const VALIDATED_COLLECTION: &str = "/apis/validated.example.com/v1/namespaces/default/crontabs";

/// POSTs a CustomResourceDefinition (JSON), which must succeed.
async fn post_crd(client: &reqwest::Client, base: &str, crd: &str) {
    let r = client
        .post(format!(
            "{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        ))
        .header("Content-Type", "application/json")
        .body(crd.to_string())
        .send()
        .await
        .expect("crd create");
    assert!(r.status().is_success(), "CRD create: {}", r.status());
}

/// POSTs a CRD and waits until `collection` (a resource it defines) is served.
async fn serve_crd(client: &reqwest::Client, base: &str, crd: &str, collection: &str) {
    post_crd(client, base, crd).await;
    loop {
        let r = client
            .get(format!("{base}{collection}"))
            .send()
            .await
            .expect("list");
        if r.status().is_success() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn create_crd(client: &reqwest::Client, base: &str) -> Duration {
    let t0 = Instant::now();
    post_crd(client, base, CRD).await;
    loop {
        let r = client
            .post(format!("{base}{COLLECTION}"))
            .header("Content-Type", "application/json")
            .body(crontab("first"))
            .send()
            .await
            .expect("create");
        if r.status().is_success() {
            return t0.elapsed();
        }
        tokio::task::yield_now().await;
    }
}

/// One keep-alive HTTP/1.1 connection (over TLS to an HTTPS server), as the admin.
struct Conn {
    tx: hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    host: String,
    authorization: String,
}

impl Conn {
    async fn open(base: &str) -> Conn {
        let (tx, authorization) = connect(base).await.expect("connection");
        Conn {
            tx,
            host: host_of(base),
            authorization,
        }
    }

    /// A connection that sends `authorization` instead of the admin's.
    async fn open_as(base: &str, authorization: &str) -> Conn {
        let mut c = Conn::open(base).await;
        c.authorization = authorization.to_string();
        c
    }

    /// Sends a request and reads the whole response; returns its status code.
    async fn send(&mut self, method: &str, path: &str, body: Option<String>) -> u16 {
        self.request(method, path, body).await.0
    }

    /// Sends a request and reads the whole response; returns its status code (0: the connection
    /// failed) and body.
    async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> (u16, bytes::Bytes) {
        use http_body_util::BodyExt;
        // `APPLY` and `MERGE` are PATCHes with those bodies' media types.
        let (method, ctype) = match method {
            "APPLY" => ("PATCH", "application/apply-patch+yaml"),
            "MERGE" => ("PATCH", "application/merge-patch+json"),
            m => (m, "application/json"),
        };
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("Host", &self.host)
            .header("Authorization", &self.authorization);
        if body.is_some() {
            req = req.header("Content-Type", ctype);
        }
        let req = req
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.unwrap_or_default(),
            )))
            .expect("request");
        if self.tx.ready().await.is_err() {
            return (0, bytes::Bytes::new());
        }
        match self.tx.send_request(req).await {
            Ok(resp) => {
                let status = resp.status().as_u16();
                match resp.into_body().collect().await {
                    Ok(b) => (status, b.to_bytes()),
                    Err(_) => (0, bytes::Bytes::new()),
                }
            }
            Err(_) => (0, bytes::Bytes::new()),
        }
    }
}

/// Runs `clients` connections for `seconds` (or until `limit` requests); `f(i)` gives the
/// request (method, path, body) and the status that counts as success. Returns requests/s.
async fn load<F>(base: &str, clients: usize, seconds: u64, limit: usize, f: F) -> f64
where
    F: Fn(usize) -> (&'static str, String, Option<String>, u16) + Send + Sync + 'static,
{
    load_as(base, None, clients, seconds, limit, f).await
}

/// [`load`] as the user whose `Authorization` header value is given (`None`: the admin).
async fn load_as<F>(
    base: &str,
    authorization: Option<&str>,
    clients: usize,
    seconds: u64,
    limit: usize,
    f: F,
) -> f64
where
    F: Fn(usize) -> (&'static str, String, Option<String>, u16) + Send + Sync + 'static,
{
    let f = Arc::new(f);
    let done = Arc::new(AtomicUsize::new(0));
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let t0 = Instant::now();
    let mut tasks = vec![];
    for _ in 0..clients {
        let (f, done, next) = (f.clone(), done.clone(), next.clone());
        let mut conn = match authorization {
            Some(a) => Conn::open_as(base, a).await,
            None => Conn::open(base).await,
        };
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= limit {
                    break;
                }
                let (method, path, body, ok) = f(i);
                if conn.send(method, &path, body).await == ok {
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    done.load(Ordering::Relaxed) as f64 / t0.elapsed().as_secs_f64()
}

type Row = (String, String, String);

/// The JSON size of a stored CronTab, and the same without its managedFields.
async fn stored_size(base: &str) -> (usize, usize) {
    let bytes = client(base)
        .get(format!("{base}{COLLECTION}/ct-0"))
        .send()
        .await
        .expect("get")
        .bytes()
        .await
        .expect("body");
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    if let Some(m) = v
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    {
        m.remove("managedFields");
    }
    let without = serde_json::to_vec(&v)
        .map(|b| b.len())
        .unwrap_or(bytes.len());
    (bytes.len(), without)
}

fn main() {
    let mut args = parse_args();
    // 10,000 idle watches need as many sockets here and in the server (which inherits this).
    raise_nofile_limit();
    // One client thread, like `wrk -t1`: the server gets the rest of the machine.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut rows: Vec<Row> = vec![];
    if args.wants("core") {
        core(&args, &rt, &mut rows);
    } else if args.wants("list") {
        // The list alone: a fresh server with N objects.
        let dir = tempfile::tempdir().expect("tempdir");
        let (server, _) = start(&args.binary, dir.path());
        let total = rt.block_on(async {
            let client = client(&server.base);
            create_crd(&client, &server.base).await;
            let n = args.objects.saturating_sub(1);
            load(&server.base, args.clients, 3600, n, |i| {
                let body = crontab(&format!("fill-{i}"));
                ("POST", COLLECTION.to_string(), Some(body), 201)
            })
            .await;
            count(&client, &server.base).await
        });
        rows.push(rt.block_on(paginated_list(&server.base, total)));
    }
    if args.wants("etcd") {
        rows.extend(rt.block_on(etcd::compare(
            &args.binary,
            args.objects,
            args.clients,
            args.rounds,
        )));
    }
    if args.wants("shape") {
        rows.extend(rt.block_on(shape::compare(
            &args.binary,
            args.objects.min(30_000),
            args.clients,
            args.rounds,
        )));
    }
    if args.wants("replicas") {
        rows.extend(rt.block_on(replicas::replicas(
            &args.binary,
            args.objects,
            args.clients,
            args.seconds,
        )));
    }
    if args.wants("fanout") {
        rows.push(rt.block_on(watch::fanout(&args.binary, &args.watch)));
    }
    if args.wants("bookmarks") {
        rows.push(rt.block_on(watch::bookmarks(&args.binary, &args.watch)));
    }
    if args.wants("idle") {
        rows.push(rt.block_on(watch::idle(&args.binary, &args.watch)));
    }
    if args.wants("builtin") {
        rows.extend(rt.block_on(builtin::compare(
            &args.binary,
            args.objects.min(60_000),
            args.clients,
            args.seconds,
        )));
    }
    if args.wants("versions") {
        rows.extend(rt.block_on(versions::compare(&args.binary, args.clients)));
    }
    if args.wants("webhook") {
        rows.extend(rt.block_on(webhook::list_through_webhook(&args.binary, args.clients)));
    }
    if args.wants("hang") {
        rows.extend(rt.block_on(webhook::hanging_webhook(&args.binary)));
    }
    if args.wants("table") {
        rows.push(rt.block_on(table::table_list(&args.binary)));
    }
    if args.wants("openapi") {
        rows.extend(rt.block_on(openapi::openapi(&args.binary)));
    }
    if args.wants("events") {
        rows.extend(rt.block_on(events::events_load(&args.binary)));
    }
    if args.wants("tls") {
        rows.extend(rt.block_on(tls_overhead(&args.binary, args.clients, args.seconds)));
    }
    if args.wants("authz") {
        rows.extend(rt.block_on(authz::authz(&args.binary, args.clients, args.seconds)));
    }
    if args.wants("soak") {
        let mut p = std::mem::take(&mut args.soak);
        p.watchers = args.watch.watchers;
        rows.extend(rt.block_on(soak::soak(&args.binary, &p)));
    }
    if args.wants("attack") {
        rows.extend(rt.block_on(attack::attack(&args.binary)));
    }
    if args.wants("compare") {
        let baseline = args
            .baseline
            .clone()
            .expect("compare needs --baseline PATH (the binary to compare against)");
        rows.extend(rt.block_on(compare::compare(
            &baseline,
            &args.binary,
            args.clients,
            args.seconds,
            args.rounds,
        )));
    }
    if args.wants("startup") {
        rows.extend(rt.block_on(startup::startup(
            &args.binary,
            args.baseline.as_deref(),
            args.starts,
        )));
    }
    if args.wants("apply") {
        rows.extend(rt.block_on(apply::compare(&args.binary, args.clients, args.seconds)));
    }

    println!("| measurement | result | target |");
    println!("| --- | --- | --- |");
    for (m, r, t) in rows {
        println!("| {m} | {r} | {t} |");
    }
}

/// GETs by name per second over HTTPS (the default) and over `--plain-http`, the same binary and
/// data dir (1,000 CronTabs), `clients` keep-alive HTTP/1.1 connections for `seconds`, after a
/// second of warm-up; two rounds of each, alternated, best of each.
async fn tls_overhead(binary: &Path, clients: usize, seconds: u64) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (server, _) = start(binary, dir.path());
        create_crd(&client(&server.base), &server.base).await;
        load(&server.base, clients, 3600, 999, |i| {
            (
                "POST",
                COLLECTION.to_string(),
                Some(crontab(&format!("ct-{}", i + 1))),
                201,
            )
        })
        .await;
    }
    let gets = |i: usize| ("GET", format!("{COLLECTION}/ct-{}", i % 1000), None, 200);
    let (mut https, mut plain) = (0f64, 0f64);
    for _ in 0..2 {
        for plain_http in [false, true] {
            let flags: &[&str] = if plain_http { &["--plain-http"] } else { &[] };
            let (server, _) = start_with(binary, dir.path(), flags);
            load(&server.base, clients, 1, usize::MAX, gets).await;
            let rate = load(&server.base, clients, seconds, usize::MAX, gets).await;
            let best = if plain_http { &mut plain } else { &mut https };
            *best = best.max(rate);
        }
    }
    vec![
        (
            format!("GET by name over HTTPS ({clients} keep-alive connections)"),
            format!("{https:.0} /s"),
            ">= 80% of plain HTTP".into(),
        ),
        (
            format!("GET by name over --plain-http ({clients} keep-alive connections)"),
            format!("{plain:.0} /s"),
            String::new(),
        ),
        (
            "HTTPS / plain HTTP GET throughput".into(),
            format!("{:.0}%", https / plain * 100.0),
            ">= 80%".into(),
        ),
    ]
}

/// The original rows (start, creates, GET, LIST, RSS); with the `list` section, the paginated
/// LIST runs on the restarted server holding all N objects.
fn core(args: &Args, rt: &tokio::runtime::Runtime, out: &mut Vec<Row>) {
    let mut rows: Vec<Row> = vec![];
    // 1. Empty start and idle RSS.
    // --keep DIR keeps the main server's data for later inspection.
    let tmp = tempfile::tempdir().expect("tempdir");
    let main_dir = args
        .keep
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let mut starts = vec![];
    for _ in 0..5 {
        let d = tempfile::tempdir().expect("tempdir");
        let (_s, t) = start(&args.binary, d.path());
        starts.push(t);
    }
    starts.sort();
    rows.push((
        "start -> /readyz, empty data dir (median of 5)".into(),
        format!("{:.1} ms", starts[2].as_secs_f64() * 1e3),
        "< 50 ms".into(),
    ));

    let (server, _) = start(&args.binary, &main_dir);
    std::thread::sleep(Duration::from_millis(300));
    rows.push((
        "idle RSS".into(),
        format!("{:.1} MiB", rss_mib(server.child.id())),
        "< 20 MiB".into(),
    ));
    let base = server.base.clone();

    rt.block_on(async {
        let client = client(&base);
        let t = create_crd(&client, &base).await;
        rows.push((
            "CRD create -> first CR create".into(),
            format!("{:.1} ms", t.as_secs_f64() * 1e3),
            "< 50 ms".into(),
        ));

        let creates = load(&base, args.clients, args.seconds, args.objects, |i| {
            let body = crontab(&format!("ct-{i}"));
            ("POST", COLLECTION.to_string(), Some(body), 201)
        })
        .await;
        rows.push((
            format!("durable creates, 2 KiB, {} clients", args.clients),
            format!("{creates:.0} /s"),
            ">= 10,000 /s".into(),
        ));

        // Fill up to the requested object count.
        let existing = count(&client, &base).await;
        if existing < args.objects {
            let offset = existing + 1_000_000;
            load(
                &base,
                args.clients,
                3600,
                args.objects - existing,
                move |i| {
                    let body = crontab(&format!("fill-{}", i + offset));
                    ("POST", COLLECTION.to_string(), Some(body), 201)
                },
            )
            .await;
        }
        let gets = load(&base, args.clients, args.seconds, usize::MAX, |i| {
            ("GET", format!("{COLLECTION}/ct-{}", i % 1000), None, 200)
        })
        .await;
        rows.push((
            "GET by name".into(),
            format!("{gets:.0} /s"),
            ">= 30,000 /s".into(),
        ));
    });

    // RSS first: the LIST that counts the objects would itself allocate a response.
    let rss = rss_mib(server.child.id());
    let total = rt.block_on(count(&client(&base), &base));
    // The objects' stored size: the 2 KiB body plus what the server adds (system metadata,
    // managedFields), from one object read back.
    let (stored, without_managed) = rt.block_on(stored_size(&base));
    rows.push((
        "managedFields' share of a stored 2 KiB object".into(),
        format!(
            "{stored} bytes, {without_managed} without managedFields (+{:.0}%)",
            (stored as f64 / without_managed as f64 - 1.0) * 100.0
        ),
        "<= +25%".into(),
    ));
    let raw = total as f64 * stored as f64 / (1024.0 * 1024.0);
    rows.push((
        format!("RSS with {total} 2 KiB objects"),
        format!("{rss:.0} MiB ({:.2}x raw {raw:.0} MiB)", rss / raw),
        "< 1.5x raw".into(),
    ));
    drop(server);

    // The same creates against the seed's validated, defaulted schema (pruning, defaulting and
    // validation on every write), on a fresh server like the plain ones above.
    let validated_dir = tempfile::tempdir().expect("tempdir");
    let (sv, _) = start(&args.binary, validated_dir.path());
    let validated = rt.block_on(async {
        post_crd(&client(&sv.base), &sv.base, VALIDATED_CRD).await;
        load(&sv.base, args.clients, args.seconds, args.objects, |i| {
            let body =
                crontab(&format!("v-{i}")).replace("stable.example.com", "validated.example.com");
            ("POST", VALIDATED_COLLECTION.to_string(), Some(body), 201)
        })
        .await
    });
    drop(sv);
    rows.insert(
        4,
        (
            "durable creates, 2 KiB, with the seed's schema".into(),
            format!("{validated:.0} /s"),
            "within 15% of plain creates".into(),
        ),
    );

    // LIST of 10,000 objects on a fresh server.
    let list_dir = tempfile::tempdir().expect("tempdir");
    let (s2, _) = start(&args.binary, list_dir.path());
    let list_ms = rt.block_on(async {
        let client = client(&s2.base);
        create_crd(&client, &s2.base).await;
        load(&s2.base, args.clients, 3600, 9_999, |i| {
            let body = crontab(&format!("l-{i}"));
            ("POST", COLLECTION.to_string(), Some(body), 201)
        })
        .await;
        let mut times = vec![];
        for _ in 0..10 {
            let t0 = Instant::now();
            let r = client
                .get(format!("{}{COLLECTION}", s2.base))
                .send()
                .await
                .expect("list");
            let body = r.bytes().await.expect("body");
            assert!(body.len() > 10_000 * 2000);
            times.push(t0.elapsed());
        }
        times.sort();
        times[5].as_secs_f64() * 1e3
    });
    rows.push((
        "LIST of 10,000 2 KiB objects (median)".into(),
        format!("{list_ms:.1} ms"),
        "<= 80 ms".into(),
    ));
    drop(s2);

    // Restart with everything stored.
    let (s3, t) = start(&args.binary, &main_dir);
    rows.push((
        format!("start -> /readyz with {total} objects"),
        format!("{:.0} ms", t.as_secs_f64() * 1e3),
        "< 3 s".into(),
    ));
    std::thread::sleep(Duration::from_millis(300));
    let rss = rss_mib(s3.child.id());
    rows.push((
        format!("RSS after restart with {total} objects"),
        format!("{rss:.0} MiB ({:.2}x raw {raw:.0} MiB)", rss / raw),
        "< 1.5x raw".into(),
    ));
    if args.wants("list") {
        rows.push(rt.block_on(paginated_list(&s3.base, total)));
    }
    drop(s3);
    out.append(&mut rows);
}

/// Raises this process's soft RLIMIT_NOFILE to the hard limit (children inherit it; a no-op
/// where the struct and constant below are not the platform's).
#[allow(unsafe_code)] // getrlimit/setrlimit through FFI (SAFETY comment inside).
fn raise_nofile_limit() {
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "x86",
            target_arch = "arm",
            target_arch = "riscv64"
        )
    ))]
    {
        // libc's struct rlimit; declared here rather than adding the libc crate for two calls.
        #[repr(C)]
        struct Rlimit {
            cur: std::ffi::c_ulong,
            max: std::ffi::c_ulong,
        }
        extern "C" {
            fn getrlimit(resource: std::ffi::c_int, rlim: *mut Rlimit) -> std::ffi::c_int;
            fn setrlimit(resource: std::ffi::c_int, rlim: *const Rlimit) -> std::ffi::c_int;
        }
        const RLIMIT_NOFILE: std::ffi::c_int = 7;
        let mut lim = Rlimit { cur: 0, max: 0 };
        // SAFETY: `lim` is a valid, writable struct rlimit for the duration of the calls.
        unsafe {
            if getrlimit(RLIMIT_NOFILE, &mut lim) == 0 && lim.cur < lim.max {
                lim.cur = lim.max;
                setrlimit(RLIMIT_NOFILE, &lim);
            }
        }
    }
}

/// The soft limit on open files of process `pid` (from /proc; `None` if unknown).
fn max_open_files(pid: &str) -> Option<u64> {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Lists the collection in pages of 500 over one keep-alive connection, following
/// metadata.continue until it is empty, three times; the row has the median.
async fn paginated_list(base: &str, expected: usize) -> Row {
    use serde_json::value::RawValue;
    use std::collections::HashMap;
    let mut conn = Conn::open(base).await;
    let mut runs = vec![];
    let mut pages = 0;
    let mut consistent = true;
    let mut page_times = vec![];
    for _ in 0..3 {
        let t0 = Instant::now();
        let mut parse = Duration::ZERO;
        let (mut items, mut token, mut rvs) = (0, String::new(), vec![]);
        pages = 0;
        loop {
            let path = if token.is_empty() {
                format!("{COLLECTION}?limit=500")
            } else {
                format!("{COLLECTION}?limit=500&continue={token}")
            };
            let t = Instant::now();
            let (status, body) = conn.request("GET", &path, None).await;
            page_times.push(t.elapsed());
            assert_eq!(
                status,
                200,
                "list page {pages}: {}",
                String::from_utf8_lossy(&body[..body.len().min(500)])
            );
            // Every item is read (as raw JSON, validated but not built into values).
            let p0 = Instant::now();
            let page: HashMap<&str, &RawValue> =
                serde_json::from_slice(&body).expect("list page is a JSON object");
            items += page.get("items").map_or(0, |r| {
                serde_json::from_str::<Vec<&RawValue>>(r.get())
                    .expect("items is an array")
                    .len()
            });
            let meta: serde_json::Value = page
                .get("metadata")
                .map(|r| serde_json::from_str(r.get()).expect("list metadata"))
                .unwrap_or_default();
            parse += p0.elapsed();
            pages += 1;
            rvs.push(meta["resourceVersion"].as_str().unwrap_or("").to_string());
            token = meta["continue"].as_str().unwrap_or("").to_string();
            if token.is_empty() {
                break;
            }
        }
        let took = t0.elapsed();
        assert_eq!(items, expected, "paginated list item count");
        consistent &= !rvs[0].is_empty() && rvs.iter().all(|r| *r == rvs[0]);
        runs.push((took, parse));
    }
    runs.sort();
    let (took, parse) = runs[1];
    page_times.sort();
    let page_ms = |q: f64| {
        page_times[((page_times.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3
    };
    (
        format!("paginated LIST of {expected} 2 KiB objects, limit=500 (median of 3)"),
        format!(
            "{:.0} ms, {pages} pages, {} (client JSON reading {:.0} ms of it; a page's \
             response p50 {:.1} ms, max {:.1} ms)",
            took.as_secs_f64() * 1e3,
            if consistent {
                "all pages at one resourceVersion"
            } else {
                "PAGES AT DIFFERENT resourceVersions"
            },
            parse.as_secs_f64() * 1e3,
            page_ms(0.5),
            page_ms(1.0),
        ),
        "< 2 s, one resourceVersion".into(),
    )
}

async fn count(client: &reqwest::Client, base: &str) -> usize {
    let r = client
        .get(format!("{base}{COLLECTION}"))
        .header(
            "Accept",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )
        .send()
        .await
        .expect("list");
    let v: serde_json::Value =
        serde_json::from_slice(&r.bytes().await.expect("body")).unwrap_or_default();
    v["items"].as_array().map(Vec::len).unwrap_or(0)
}
