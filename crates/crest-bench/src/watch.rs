//! Watch rows: fan-out latency to many watchers, writes while watchers get bookmarks and
//! re-watch under compaction, and the memory of idle watches.
//!
//! The receiving side is kept cheap so it does not starve the server on a small machine: every
//! watch is a bare HTTP/1.1 connection driven by the bench's one-thread runtime, and an event is
//! not parsed as JSON: its type, name and resourceVersion are found by byte search.

use crate::{
    create_crd, crontab, max_open_files, rss_mib, start, start_with, Conn, Row, COLLECTION,
};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sizes of the watch rows.
pub(crate) struct Params {
    /// Watchers of the fan-out and bookmark rows.
    pub watchers: usize,
    /// Creates in the fan-out row.
    pub writes: usize,
    /// Creates per second (fan-out and bookmark rows).
    pub rate: f64,
    /// How long the bookmark row writes (with and without watchers).
    pub bookmark_seconds: u64,
    /// Idle watches.
    pub idle: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            watchers: 1_000,
            writes: 200,
            rate: 20.0,
            bookmark_seconds: 10,
            idle: 10_000,
        }
    }
}

/// A watch response streaming on its own HTTP/1.1 connection (over TLS to an HTTPS server).
pub(crate) struct WatchConn {
    _tx: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    body: hyper::body::Incoming,
    /// The start of a line whose end has not arrived yet.
    carry: Vec<u8>,
}

impl WatchConn {
    /// Opens a watch of `path` on the server at `base`, as its admin.
    async fn open(base: &str, path: &str) -> Result<WatchConn, String> {
        let (mut tx, authorization) = crate::connect(base).await?;
        let req = hyper::Request::get(path)
            .header("Host", crate::host_of(base))
            .header("Authorization", authorization)
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let resp = tx
            .send_request(req)
            .await
            .map_err(|e| format!("watch request: {e}"))?;
        if resp.status() != 200 {
            return Err(format!("watch answered {}", resp.status()));
        }
        Ok(WatchConn {
            _tx: tx,
            body: resp.into_body(),
            carry: vec![],
        })
    }

    /// Waits for the next data and calls `f` with each line it completes; `false` once the
    /// stream has ended.
    pub(crate) async fn lines(&mut self, mut f: impl FnMut(&[u8])) -> bool {
        loop {
            let data = match self.body.frame().await {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(d) => d,
                    Err(_) => continue,
                },
                _ => return false,
            };
            let mut rest: &[u8] = &data;
            if !self.carry.is_empty() {
                let Some(i) = rest.iter().position(|&b| b == b'\n') else {
                    self.carry.extend_from_slice(rest);
                    return true;
                };
                self.carry.extend_from_slice(&rest[..i]);
                f(&self.carry);
                self.carry.clear();
                rest = &rest[i + 1..];
            }
            while let Some(i) = rest.iter().position(|&b| b == b'\n') {
                f(&rest[..i]);
                rest = &rest[i + 1..];
            }
            self.carry.extend_from_slice(rest);
            return true;
        }
    }
}

/// Opens `n` watches, `parallel` handshakes at a time; `path(i)` is the i-th watch's request.
pub(crate) async fn open_watches(
    base: &str,
    n: usize,
    parallel: usize,
    path: impl Fn(usize) -> String,
) -> Vec<WatchConn> {
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let mut set = tokio::task::JoinSet::new();
        for j in i..(i + parallel).min(n) {
            let (base, path) = (base.to_string(), path(j));
            set.spawn(async move { WatchConn::open(&base, &path).await });
        }
        while let Some(r) = set.join_next().await {
            let w = r
                .expect("watch task")
                .unwrap_or_else(|e| panic!("watch {} of {n}: {e}", out.len()));
            out.push(w);
        }
        i += parallel;
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The string value of the first `"key":"...` in `line` (no JSON parsing; the values read here
/// hold no escapes).
fn str_field<'a>(line: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = find(line, key)? + key.len();
    let rest = &line[at..];
    Some(&rest[..rest.iter().position(|&b| b == b'"')?])
}

/// The event type of a watch line, whichever of `type` and `object` comes first.
fn event_type(line: &[u8]) -> &[u8] {
    const KEY: &[u8] = b"\"type\":\"";
    let at = if line.starts_with(b"{\"type\":\"") {
        Some(KEY.len() + 1)
    } else {
        line.windows(KEY.len())
            .rposition(|w| w == KEY)
            .map(|i| i + KEY.len())
    };
    let Some(at) = at else { return b"" };
    let rest = &line[at..];
    &rest[..rest.iter().position(|&b| b == b'"').unwrap_or(0)]
}

/// Creates are numbered; when the i-th was sent, in ns after `base` (0: not yet).
struct Sent {
    base: Instant,
    at: Vec<AtomicU64>,
}

impl Sent {
    fn new(n: usize) -> Arc<Sent> {
        Arc::new(Sent {
            base: Instant::now(),
            at: (0..n).map(|_| AtomicU64::new(0)).collect(),
        })
    }
}

/// What one watcher saw.
#[derive(Default)]
struct Received {
    /// Send -> receive of each create it saw, in µs.
    latencies: Vec<u32>,
    /// Distinct creates seen.
    seen: usize,
    bookmarks: usize,
    /// Watches that ended (timeoutSeconds) and were opened again from the last resourceVersion.
    rewatches: usize,
    /// ERROR events, failed re-watches, and streams that ended when they should not have.
    errors: usize,
    /// Each watch: the revision it started after, and the last revision it delivered.
    segments: Vec<(u64, u64)>,
    /// The creates never seen.
    missing: Vec<usize>,
    /// The revision of every BOOKMARK.
    bookmark_revs: Vec<u64>,
}

/// Reads one watcher's events until it has seen every create `{prefix}-{i}`, `stop` fires or
/// (without `rewatch`) the stream ends. With `rewatch` (the request path without
/// resourceVersion), an ended watch is opened again from the last resourceVersion it got from
/// an event or bookmark, as a reflector does.
async fn receive(
    mut w: WatchConn,
    start_rv: u64,
    base: String,
    prefix: &'static str,
    sent: Arc<Sent>,
    rewatch: Option<String>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Received {
    let n = sent.at.len();
    let mut got = vec![false; n];
    let mut r = Received::default();
    let mut last_rv = start_rv;
    r.segments.push((start_rv, start_rv));
    let tag = format!("{prefix}-");
    loop {
        if r.seen == n {
            break;
        }
        let on_line = |line: &[u8]| {
            let now = Instant::now();
            let ty = event_type(line);
            if !matches!(ty, b"ADDED" | b"MODIFIED" | b"DELETED" | b"BOOKMARK") {
                r.errors += 1;
                return;
            }
            if let Some(rv) = str_field(line, b"\"resourceVersion\":\"")
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.parse().ok())
            {
                last_rv = rv;
                if let Some(s) = r.segments.last_mut() {
                    s.1 = rv;
                }
                if ty == b"BOOKMARK" {
                    r.bookmark_revs.push(rv);
                }
            }
            if ty == b"BOOKMARK" {
                r.bookmarks += 1;
                return;
            }
            let Some(name) = str_field(line, b"\"name\":\"") else {
                return;
            };
            let Some(i) = name
                .strip_prefix(tag.as_bytes())
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| d.parse::<usize>().ok())
                .filter(|&i| i < n)
            else {
                return;
            };
            if !got[i] {
                got[i] = true;
                r.seen += 1;
                let at = sent.at[i].load(Ordering::Acquire);
                let now = now.duration_since(sent.base).as_nanos() as u64;
                r.latencies
                    .push((now.saturating_sub(at) / 1_000).min(u32::MAX as u64) as u32);
            }
        };
        let more = tokio::select! {
            more = w.lines(on_line) => more,
            _ = stop.changed() => break,
        };
        if more {
            continue;
        }
        let Some(path) = &rewatch else {
            r.errors += 1;
            break;
        };
        let path = format!("{path}&resourceVersion={last_rv}");
        match WatchConn::open(&base, &path).await {
            Ok(next) => {
                w = next;
                r.rewatches += 1;
                r.segments.push((last_rv, last_rv));
            }
            Err(_) => {
                r.errors += 1;
                break;
            }
        }
    }
    r.missing = (0..n).filter(|&i| !got[i]).collect();
    r
}

/// For creates some watcher never got: which watch should have delivered them (one that
/// started before the create's revision and delivered later revisions). Empty if none missed.
async fn explain_misses(base: &str, prefix: &str, got: &[Received]) -> String {
    if got.iter().all(|r| r.missing.is_empty()) {
        return String::new();
    }
    let mut conn = Conn::open(base).await;
    let (_, body) = conn.request("GET", COLLECTION, None).await;
    let list: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let rev_of = |name: &str| -> Option<u64> {
        list["items"].as_array()?.iter().find_map(|o| {
            (o["metadata"]["name"] == name)
                .then(|| o["metadata"]["resourceVersion"].as_str()?.parse().ok())?
        })
    };
    let mut out = vec![];
    for (k, r) in got.iter().enumerate() {
        for &i in &r.missing {
            if out.len() == 3 {
                break;
            }
            let name = format!("{prefix}-{i}");
            let Some(rev) = rev_of(&name) else {
                out.push(format!("watcher {k}: {name} (not found)"));
                continue;
            };
            let gap = r.segments.iter().find(|s| s.0 < rev && rev <= s.1);
            out.push(match gap {
                Some((from, to)) => format!(
                    "watcher {k}: {name} (rev {rev}) skipped by its watch from rev {from}, \
                     which delivered through rev {to}{}",
                    if r.bookmark_revs.contains(&rev) {
                        format!(" and sent a BOOKMARK at rev {rev}")
                    } else {
                        String::new()
                    }
                ),
                None => format!("watcher {k}: {name} (rev {rev}); watches {:?}", r.segments),
            });
        }
    }
    format!(" [{}]", out.join("; "))
}

/// Creates `{prefix}-0..n` at `rate` per second from one connection, on a thread of its own
/// (so the receivers' work does not delay the sends); records each send in `sent` just before
/// the request goes out. Returns each create's latency in µs.
async fn write_paced(base: &str, prefix: &'static str, rate: f64, sent: Arc<Sent>) -> Vec<u32> {
    let base = base.to_string();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("writer runtime");
        let lat = rt.block_on(async {
            let mut conn = Conn::open(&base).await;
            let period = Duration::from_secs_f64(1.0 / rate);
            let t0 = tokio::time::Instant::now();
            let mut lat = vec![];
            for i in 0..sent.at.len() {
                tokio::time::sleep_until(t0 + period.mul_f64(i as f64)).await;
                let body = crontab(&format!("{prefix}-{i}"));
                let t = Instant::now();
                sent.at[i].store(
                    t.duration_since(sent.base).as_nanos() as u64,
                    Ordering::Release,
                );
                let status = conn.send("POST", COLLECTION, Some(body)).await;
                assert_eq!(status, 201, "create {prefix}-{i}");
                lat.push(t.elapsed().as_micros() as u32);
            }
            lat
        });
        let _ = tx.send(lat);
    });
    rx.await.expect("writer thread")
}

/// p50, p99 and max of µs samples, in ms.
fn percentiles(v: &mut [u32]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
    (at(0.5), at(0.99), at(1.0))
}

/// CPU time (user + system) process `pid` ("self": this one) has used, in seconds.
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name: state is the 3rd field, utime and stime the 14th and 15th.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // USER_HZ is 100 on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

/// The resourceVersion of a list of the collection.
pub(crate) async fn list_rv(base: &str) -> String {
    let mut conn = Conn::open(base).await;
    let (status, body) = conn
        .request("GET", &format!("{COLLECTION}?limit=1"), None)
        .await;
    assert_eq!(status, 200, "list");
    let v: serde_json::Value = serde_json::from_slice(&body).expect("list JSON");
    v["metadata"]["resourceVersion"]
        .as_str()
        .expect("list resourceVersion")
        .to_string()
}

/// Runs the receivers of `watches` while `sent.at.len()` creates go out at `rate`; returns the
/// create latencies and what each watcher saw (waiting at most 10 s after the last create).
async fn watch_writes(
    base: &str,
    watches: Vec<WatchConn>,
    start_rv: u64,
    prefix: &'static str,
    rate: f64,
    sent: Arc<Sent>,
    rewatch: Option<String>,
) -> (Vec<u32>, Vec<Received>) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let tasks: Vec<_> = watches
        .into_iter()
        .map(|w| {
            tokio::spawn(receive(
                w,
                start_rv,
                base.to_string(),
                prefix,
                sent.clone(),
                rewatch.clone(),
                stop_rx.clone(),
            ))
        })
        .collect();
    let writes = write_paced(base, prefix, rate, sent).await;
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(10)).await;
        let _ = stop_tx.send(true);
    });
    let mut got = vec![];
    for t in tasks {
        got.push(t.await.expect("receiver"));
    }
    (writes, got)
}

/// Watch fan-out: `watchers` watches of one collection, then paced creates; latency from just
/// before each create is sent to each watcher having its event.
pub(crate) async fn fanout(binary: &Path, p: &Params) -> Row {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    create_crd(&crate::client(&base), &base).await;
    let rv = list_rv(&base).await;
    let path = format!("{COLLECTION}?watch=1&resourceVersion={rv}");
    let watches = open_watches(&base, p.watchers, 100, |_| path.clone()).await;
    let sent = Sent::new(p.writes);
    let pid = server.child.id().to_string();
    let (cpu0, own0, t0) = (cpu_seconds(&pid), cpu_seconds("self"), Instant::now());
    let (mut writes, got) = watch_writes(
        &base,
        watches,
        rv.parse().unwrap_or(0),
        "fan",
        p.rate,
        sent,
        None,
    )
    .await;
    let misses = explain_misses(&base, "fan", &got).await;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = (cpu_seconds(&pid) - cpu0) / wall * 100.0;
    let own = (cpu_seconds("self") - own0) / wall * 100.0;
    drop(server);

    let expected = p.writes * p.watchers;
    let delivered: usize = got.iter().map(|r| r.seen).sum();
    let errors: usize = got.iter().map(|r| r.errors).sum();
    let mut lat: Vec<u32> = got.into_iter().flat_map(|r| r.latencies).collect();
    let (p50, p99, max) = percentiles(&mut lat);
    let (_, wp99, _) = percentiles(&mut writes);
    (
        format!(
            "watch fan-out: {} watchers (1 connection each), {} creates at {}/s from another \
             connection; create sent -> event at each watcher (client: 1 thread, event name \
             found by byte search, no JSON parsing)",
            p.watchers, p.writes, p.rate
        ),
        format!(
            "p50 {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms; missed {} of {expected}{misses}{}; \
             create p99 {wp99:.1} ms; CPU while writing: crest {cpu:.0}%, bench {own:.0}% (of \
             one core)",
            expected - delivered,
            if errors > 0 {
                format!(", {errors} watches failed")
            } else {
                String::new()
            }
        ),
        "p99 < 100 ms, 0 missed".into(),
    )
}

/// Writers while watchers get bookmarks and re-watch, with compaction every second: paced
/// creates without watchers, then the same with `watchers` watches (allowWatchBookmarks,
/// timeoutSeconds 4..=9, so each gets a bookmark 2 s before its end and re-watches from it).
pub(crate) async fn bookmarks(binary: &Path, p: &Params) -> Row {
    let dir = tempfile::tempdir().expect("tempdir");
    // History kept 5 s: the server compacts every second (retention / 5).
    let (server, _) = start_with(binary, dir.path(), &["--history-retention-seconds", "5"]);
    let base = server.base.clone();
    create_crd(&crate::client(&base), &base).await;
    let n = (p.rate * p.bookmark_seconds as f64).round() as usize;

    let mut alone = write_paced(&base, "alone", p.rate, Sent::new(n)).await;
    let (a50, a99, amax) = percentiles(&mut alone);

    let rv = list_rv(&base).await;
    let path = format!("{COLLECTION}?watch=1&allowWatchBookmarks=true");
    let timeout = |i: usize| 4 + i % 6;
    let watches = open_watches(&base, p.watchers, 100, |i| {
        format!("{path}&timeoutSeconds={}&resourceVersion={rv}", timeout(i))
    })
    .await;
    // Every re-watch gets a timeout from the same spread.
    let rewatch = format!("{path}&timeoutSeconds=6");
    let (mut writes, got) = watch_writes(
        &base,
        watches,
        rv.parse().unwrap_or(0),
        "bm",
        p.rate,
        Sent::new(n),
        Some(rewatch),
    )
    .await;
    let misses = explain_misses(&base, "bm", &got).await;
    let end_rv = list_rv(&base).await;

    // The revision compacted by now, from the 410 a watch from revision 2 gets.
    let mut w = WatchConn::open(&base, &format!("{COLLECTION}?watch=1&resourceVersion=2"))
        .await
        .expect("watch from revision 2");
    let mut compacted = String::new();
    let probe = w.lines(|line| {
        const TOO_OLD: &[u8] = b"too old resource version: 2 (";
        if let Some(at) = find(line, TOO_OLD) {
            let rest = &line[at + TOO_OLD.len()..];
            let end = rest.iter().position(|&b| b == b')').unwrap_or(0);
            compacted = String::from_utf8_lossy(&rest[..end]).into_owned();
        }
    });
    let _ = tokio::time::timeout(Duration::from_secs(5), probe).await;
    drop(server);

    let (w50, w99, wmax) = percentiles(&mut writes);
    let expected = n * p.watchers;
    let delivered: usize = got.iter().map(|r| r.seen).sum();
    let bookmarks: usize = got.iter().map(|r| r.bookmarks).sum();
    let rewatches: usize = got.iter().map(|r| r.rewatches).sum();
    let errors: usize = got.iter().map(|r| r.errors).sum();
    let mut lat: Vec<u32> = got.into_iter().flat_map(|r| r.latencies).collect();
    let (_, e99, _) = percentiles(&mut lat);
    (
        format!(
            "bookmarks and compaction do not stall writers: {n} creates at {}/s, alone and with \
             {} watchers (allowWatchBookmarks, timeoutSeconds 4-9, then 6, re-watching from \
             the last resourceVersion), history retention 5 s (compaction every 1 s)",
            p.rate, p.watchers
        ),
        format!(
            "create p50/p99/max {w50:.1}/{w99:.1}/{wmax:.1} ms with watchers vs \
             {a50:.1}/{a99:.1}/{amax:.1} ms alone; {bookmarks} bookmarks, {rewatches} re-watches, \
             missed {} of {expected}{misses}, {errors} errors, event p99 {e99:.1} ms; compacted through \
             {} (watches ran from rev {rv} to {end_rv})",
            expected - delivered,
            if compacted.is_empty() {
                "nothing yet".to_string()
            } else {
                format!("rev {compacted}")
            }
        ),
        "create p99 < 100 ms, 0 missed".into(),
    )
}

/// Server RSS growth for `idle` idle watches, each on its own connection; then one create,
/// which every one of them must get.
pub(crate) async fn idle(binary: &Path, p: &Params) -> Row {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let pid = server.child.id();
    let need = p.idle as u64 + 100;
    for (who, id) in [
        ("the bench", "self".to_string()),
        ("crest", pid.to_string()),
    ] {
        let limit = max_open_files(&id).unwrap_or(u64::MAX);
        assert!(
            limit >= need,
            "{who} may open only {limit} files, {need} are needed for {} watches \
             (raise the hard limit: ulimit -Hn)",
            p.idle
        );
    }
    create_crd(&crate::client(&base), &base).await;
    let rv = list_rv(&base).await;
    let path = format!("{COLLECTION}?watch=1&resourceVersion={rv}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_mib(pid);
    let t0 = Instant::now();
    let watches = open_watches(&base, p.idle, 64, |_| path.clone()).await;
    let opened = t0.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_mib(pid);

    // Every watch is live: one create reaches all of them.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let sent = Sent::new(1);
    let tasks: Vec<_> = watches
        .into_iter()
        .map(|w| {
            tokio::spawn(receive(
                w,
                rv.parse().unwrap_or(0),
                base.clone(),
                "idle",
                sent.clone(),
                None,
                stop_rx.clone(),
            ))
        })
        .collect();
    write_paced(&base, "idle", 1.0, sent).await;
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        let _ = stop_tx.send(true);
    });
    let mut reached = 0;
    let mut lat = vec![];
    for t in tasks {
        let r = t.await.expect("receiver");
        reached += r.seen;
        lat.extend(r.latencies);
    }
    let (_, _, last) = percentiles(&mut lat);
    drop(server);

    let grown = after - before;
    let plain = idle_connections(binary, p.idle).await;
    let h2 = idle_h2_watches(binary, p.idle).await;
    (
        format!(
            "RSS growth for {} idle watches (1 TLS connection each, HTTP/1.1)",
            p.idle
        ),
        format!(
            "{grown:.1} MiB ({:.1} KiB per watch; {before:.1} -> {after:.1} MiB); opened in \
             {:.1} s; then one create reached {reached} of them, the last after {last:.0} ms; \
             for comparison, as many idle keep-alive connections after one GET /healthz: \
             {plain:.1} MiB ({:.1} KiB each); the same watches over HTTP/2 by \
             ALPN, {H2_STREAMS} per connection as client-go multiplexes them: \
             {h2:.1} MiB ({:.1} KiB per watch)",
            grown * 1024.0 / p.idle as f64,
            opened.as_secs_f64(),
            plain * 1024.0 / p.idle as f64,
            h2 * 1024.0 / p.idle as f64,
        ),
        "< 50 MiB".into(),
    )
}

/// Watch streams per HTTP/2 connection in the multiplexed idle measurement: the server's
/// stream limit (`--http2-max-streams-per-connection`, 100 by default as kube-apiserver's),
/// which client-go fills before it opens another connection. A client that opened more would
/// wait for a free stream.
const H2_STREAMS: usize = 100;

/// Server RSS growth (MiB) for `n` idle watches of a `crest serve` server (HTTPS), multiplexed
/// over HTTP/2 connections negotiated by ALPN, `H2_STREAMS` streams each: how client-go and
/// kubectl talk to kube-apiserver (and to Crest).
async fn idle_h2_watches(binary: &Path, n: usize) -> f64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = crate::start(binary, dir.path());
    let pid = server.child.id();
    let client = || crate::client(&server.base);
    create_crd(&client(), &server.base).await;
    let list = client()
        .get(format!("{}{COLLECTION}?limit=1", server.base))
        .send()
        .await
        .expect("list");
    let list: serde_json::Value =
        serde_json::from_slice(&list.bytes().await.expect("list body")).expect("list JSON");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    let url = format!("{}{COLLECTION}?watch=1&resourceVersion={rv}", server.base);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_mib(pid);
    let mut streams = Vec::with_capacity(n);
    while streams.len() < n {
        // One client is one connection; its requests share it as HTTP/2 streams.
        let client = client();
        let mut set = tokio::task::JoinSet::new();
        for _ in streams.len()..(streams.len() + H2_STREAMS).min(n) {
            let (client, url) = (client.clone(), url.clone());
            set.spawn(async move {
                let resp = client.get(&url).send().await.expect("h2 watch");
                assert_eq!(resp.status().as_u16(), 200, "h2 watch");
                assert_eq!(resp.version(), reqwest::Version::HTTP_2, "ALPN chose h2");
                resp
            });
        }
        while let Some(r) = set.join_next().await {
            streams.push(r.expect("h2 watch task"));
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let grown = rss_mib(pid) - before;
    drop(streams);
    grown
}

/// Server RSS growth (MiB) for `n` idle HTTP/1.1 keep-alive connections that each served one
/// GET /healthz: what a connection costs without a watch.
async fn idle_connections(binary: &Path, n: usize) -> f64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let pid = server.child.id();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_mib(pid);
    let mut conns = Vec::with_capacity(n);
    while conns.len() < n {
        let mut set = tokio::task::JoinSet::new();
        for _ in conns.len()..(conns.len() + 64).min(n) {
            let base = server.base.clone();
            set.spawn(async move {
                let mut c = Conn::open(&base).await;
                assert_eq!(c.send("GET", "/healthz", None).await, 200, "healthz");
                c
            });
        }
        while let Some(c) = set.join_next().await {
            conns.push(c.expect("connection task"));
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    rss_mib(pid) - before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lines_are_read_without_json_parsing() {
        let first = br#"{"type":"ADDED","object":{"kind":"CronTab","metadata":{"name":"fan-7","resourceVersion":"12"},"spec":{}}}"#;
        assert_eq!(event_type(first), b"ADDED");
        assert_eq!(str_field(first, b"\"name\":\""), Some(&b"fan-7"[..]));
        assert_eq!(
            str_field(first, b"\"resourceVersion\":\""),
            Some(&b"12"[..])
        );
        let last = br#"{"object":{"kind":"CronTab","metadata":{"resourceVersion":"40"}},"type":"BOOKMARK"}"#;
        assert_eq!(event_type(last), b"BOOKMARK");
        assert_eq!(str_field(last, b"\"name\":\""), None);
        assert_eq!(event_type(b"garbage"), b"");
    }

    #[test]
    fn percentiles_of_samples() {
        let mut v: Vec<u32> = (1..=100).rev().map(|i| i * 1000).collect();
        assert_eq!(percentiles(&mut v), (51.0, 99.0, 100.0));
        assert_eq!(percentiles(&mut []), (0.0, 0.0, 0.0));
    }
}
