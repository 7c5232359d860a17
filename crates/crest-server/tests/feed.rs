//! The cache feed survives storage faults: while the store refuses watches `/readyz` fails with
//! the reason, reads fail instead of pretending; when the store is back the feed resumes by
//! itself, and when the revision it would resume from was compacted meanwhile it re-lists.
//! Faults are injected by a `Storage` wrapper around the embedded store.

use bytes::Bytes;
use crest_storage::{
    BoxFuture, EmbeddedOptions, EmbeddedStore, KeyValue, ProgressRequester, RangeRequest,
    RangeResult, Result, Revision, Storage, StorageError, WatchEvent, WatchRequest, WatchStream,
    WriteOutcome,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The embedded store, with watches that can be refused and open watches that can be cut.
struct Faulty {
    inner: Arc<EmbeddedStore>,
    refuse_watches: AtomicBool,
    cut: tokio::sync::watch::Sender<u64>,
}

struct NoProgress;
impl ProgressRequester for NoProgress {
    fn request_progress(&self) {}
}

impl Faulty {
    /// Cuts every open watch (their streams end with `Unavailable`) and refuses new ones.
    fn go_down(&self) {
        self.refuse_watches.store(true, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    fn come_back(&self) {
        self.refuse_watches.store(false, Ordering::SeqCst);
    }
}

impl Storage for Faulty {
    fn current_revision(&self) -> BoxFuture<'_, Result<Revision>> {
        self.inner.current_revision()
    }
    fn compacted_revision(&self) -> Revision {
        self.inner.compacted_revision()
    }
    fn get<'a>(
        &'a self,
        key: &'a str,
        revision: Revision,
    ) -> BoxFuture<'a, Result<Option<KeyValue>>> {
        self.inner.get(key, revision)
    }
    fn range(&self, req: RangeRequest) -> BoxFuture<'_, Result<RangeResult>> {
        self.inner.range(req)
    }
    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, Result<WriteOutcome>> {
        self.inner.create(key, value)
    }
    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        self.inner.update(key, expected, value)
    }
    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        self.inner.delete(key, expected)
    }
    fn watch(&self, req: WatchRequest) -> BoxFuture<'_, Result<WatchStream>> {
        Box::pin(async move {
            if self.refuse_watches.load(Ordering::SeqCst) {
                return Err(StorageError::Unavailable("injected: no connection".into()));
            }
            let mut inner = self.inner.watch(req).await?;
            let mut cut = self.cut.subscribe();
            let (tx, rx) = tokio::sync::mpsc::channel::<Result<WatchEvent>>(64);
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        _ = cut.changed() => {
                            let _ = tx.send(Err(StorageError::Unavailable("injected: cut".into()))).await;
                            return;
                        }
                        ev = inner.next() => match ev {
                            Some(ev) => if tx.send(ev).await.is_err() { return },
                            None => return,
                        },
                    }
                }
            });
            Ok(WatchStream::new(rx, Arc::new(NoProgress)))
        })
    }
    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<()>> {
        self.inner.compact(revision)
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }
}

/// One HTTP/1.1 request on its own connection: (status, body).
async fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = vec![];
    s.read_to_end(&mut out).await.expect("read");
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn namespace(name: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{name}"}}}}"#)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn feed_reports_outages_resumes_and_relists_after_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inner = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).expect("open store");
    let (cut, _) = tokio::sync::watch::channel(0);
    let store = Arc::new(Faulty {
        inner,
        refuse_watches: AtomicBool::new(false),
        cut,
    });
    let config = crest_server::Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        ..Default::default()
    };
    let running = crest_server::start(config, store.clone())
        .await
        .expect("start");
    let addr = running.local_addr;

    assert_eq!(
        request(addr, "GET", "/readyz", "").await,
        (200, "ok".into())
    );
    let (code, _) = request(addr, "POST", "/api/v1/namespaces", &namespace("before")).await;
    assert_eq!(code, 201);
    // The service accounts controller's writes (a `default` ServiceAccount per namespace; its
    // passes go through the namespaces in order) land before the outage.
    for ns in ["before", "kube-system"] {
        let path = format!("/api/v1/namespaces/{ns}/serviceaccounts/default");
        eventually("default service accounts", async || {
            request(addr, "GET", &path, "").await.0 == 200
        })
        .await;
    }

    // The store goes away for watches: readiness says why, liveness does not.
    store.go_down();
    eventually("readyz fails", async || {
        request(addr, "GET", "/readyz", "").await.0 == 500
    })
    .await;
    let (_, body) = request(addr, "GET", "/readyz", "").await;
    assert_eq!(
        body,
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[-]cache-feed failed: reason withheld\nreadyz check failed\n"
    );
    // The reason is given where the one check is asked for.
    assert_eq!(
        request(addr, "GET", "/readyz/cache-feed", "").await,
        (
            500,
            "internal server error: storage watch: storage unavailable: injected: no connection\n"
                .into()
        )
    );
    assert_eq!(
        request(addr, "GET", "/readyz/etcd", "").await,
        (200, "ok".into())
    );
    // Excluded, the failing check does not fail readiness.
    assert_eq!(
        request(addr, "GET", "/readyz?exclude=cache-feed", "").await,
        (200, "ok".into())
    );
    let (code, body) = request(addr, "GET", "/readyz?exclude=cache-feed&verbose", "").await;
    assert_eq!(code, 200, "{body}");
    assert!(
        body.ends_with("[+]cache-feed excluded: ok\nreadyz check passed\n"),
        "{body}"
    );
    assert_eq!(request(addr, "GET", "/healthz", "").await.0, 500);
    assert_eq!(request(addr, "GET", "/livez", "").await, (200, "ok".into()));

    // A write still reaches the store, but a read cannot see it: it times out rather than
    // answering from a stale cache.
    let (code, _) = request(addr, "POST", "/api/v1/namespaces", &namespace("during")).await;
    assert_eq!(code, 201);
    let (code, body) = request(addr, "GET", "/api/v1/namespaces/during", "").await;
    assert_eq!(code, 504, "{body}");

    // Back: the feed resumes from where it was, by itself.
    store.come_back();
    eventually("readyz passes", async || {
        request(addr, "GET", "/readyz", "").await.0 == 200
    })
    .await;
    let (code, body) = request(addr, "GET", "/api/v1/namespaces/during", "").await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = request(addr, "GET", "/readyz?exclude=nope&verbose", "").await;
    assert_eq!(code, 200, "{body}");
    assert!(
        body.ends_with(
            "warn: some health checks cannot be excluded: no matches for \"nope\"\nreadyz check passed\n"
        ),
        "{body}"
    );
    let (code, body) = request(addr, "GET", "/readyz?verbose", "").await;
    assert_eq!(
        (code, body.as_str()),
        (
            200,
            "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]cache-feed ok\nreadyz check passed\n"
        )
    );

    // Down again; meanwhile the store changes and compacts past the feed's revision.
    store.go_down();
    eventually("readyz fails", async || {
        request(addr, "GET", "/readyz", "").await.0 == 500
    })
    .await;
    let (code, _) = request(
        addr,
        "POST",
        "/api/v1/namespaces",
        &namespace("while-compacted"),
    )
    .await;
    assert_eq!(code, 201);
    // Deleted behind the feed's back (a namespace deletion goes through its finalizer; the key
    // is removed from the store directly).
    let key = "/registry/namespaces/before";
    let kv = store.inner.get(key, 0).await.expect("get").expect("stored");
    let gone = store
        .inner
        .delete(key, kv.mod_revision)
        .await
        .expect("delete");
    assert!(matches!(gone, WriteOutcome::Done(_)));
    let rev = store.inner.current_revision().await.expect("revision");
    store.inner.compact(rev).await.expect("compact");

    // Back: the resume revision is compacted, so the cache re-lists.
    store.come_back();
    eventually("readyz passes after re-list", async || {
        request(addr, "GET", "/readyz", "").await.0 == 200
    })
    .await;
    let (code, body) = request(addr, "GET", "/api/v1/namespaces/while-compacted", "").await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = request(addr, "GET", "/api/v1/namespaces/before", "").await;
    assert_eq!(code, 404, "{body}");
    // A watch from before the re-list is told to re-list (410 Expired).
    let (code, body) = request(
        addr,
        "GET",
        "/api/v1/namespaces?watch=1&resourceVersion=2&timeoutSeconds=1",
        "",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"code\":410"), "{body}");
    // And writes flow through the feed again.
    let (code, _) = request(addr, "POST", "/api/v1/namespaces", &namespace("after")).await;
    assert_eq!(code, 201);
    let (code, body) = request(addr, "GET", "/api/v1/namespaces/after", "").await;
    assert_eq!(code, 200, "{body}");

    running.shutdown().await;
}
