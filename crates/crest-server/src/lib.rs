//! The Crest API server: one generic resource pipeline behind a Kubernetes-compatible HTTP API.
//!
//! Module map (request order): [`http`] routes and renders -> [`negotiate`] picks formats ->
//! [`handlers`] maps verbs to the [`registry`] pipeline (with a per-resource [`strategy`]) ->
//! `crest_storage::Storage`. Reads are served from the [`cache`]; [`resources`] is the served set
//! derived from CRDs; [`discovery`], [`table`], [`watch`], [`selectors`] and [`openapi`] render
//! the API's views; [`controllers`] run CRD naming/finalization and namespace deletion.

pub mod cache;
pub mod controllers;
pub mod customresource;
pub mod discovery;
pub mod duplicates;
pub mod gc;
pub mod handlers;
pub mod http;
pub mod list;
mod longlived;
pub mod negotiate;
pub mod openapi;
pub mod protobuf;
pub mod registry;
pub mod request;
pub mod resources;
pub mod scale;
pub mod selectors;
pub mod strategy;
pub mod table;
pub mod watch;

use cache::{Cache, CacheEvent, CachedObject};
use crest_storage::{RangeRequest, Revision, Storage};
use hyper_util::rt::{TokioExecutor, TokioIo};
use registry::Registry;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The Kubernetes version Crest's API behaves as.
pub const KUBERNETES_VERSION: &str = "v1.32.0";

pub fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": KUBERNETES_VERSION,
        "gitCommit": "crest",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": format!("crest-{}", env!("CARGO_PKG_VERSION")),
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if std::env::consts::ARCH == "x86_64" { "amd64" } else { std::env::consts::ARCH }),
    })
}

/// Server settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    /// How long watch history is kept before compaction (etcd clusters keep 5 minutes).
    pub history_retention: Duration,
    /// At most this many recent changes are kept in memory for watches and chunked lists;
    /// older ones are read from storage.
    pub watch_history_capacity: usize,
    /// Serve HTTPS with this configuration (ALPN h2 and http/1.1, as kube-apiserver): clients
    /// that negotiate h2 multiplex all their requests and watches over one connection.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 6443)),
            history_retention: Duration::from_secs(300),
            watch_history_capacity: 10_000,
            tls: None,
        }
    }
}

/// Shared state of a running server.
pub struct App {
    pub registry: Arc<Registry>,
    pub openapi: openapi::OpenApiCache,
    /// `host:port` clients reach the server at.
    pub address: String,
    pub shutdown: tokio::sync::watch::Sender<bool>,
}

/// A started server.
pub struct Running {
    pub local_addr: SocketAddr,
    app: Arc<App>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops accepting, ends watches, lets in-flight requests finish (bounded), closes storage.
    pub async fn shutdown(self) {
        let _ = self.app.shutdown.send(true);
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
        self.app.registry.storage.close().await;
    }
}

const REGISTRY_PREFIX: &str = "/registry/";

/// Stored objects read per storage range while loading the cache.
const LOAD_PAGE: usize = 1000;

/// Loads the cache, ensures the default namespaces, binds and starts serving.
pub async fn start(config: Config, storage: Arc<dyn Storage>) -> std::io::Result<Running> {
    let cache = Cache::with_history(cache::HistoryLimits {
        capacity: config.watch_history_capacity,
        max_age: config.history_retention,
    });
    let io_err = |e: crest_api::ApiError| std::io::Error::other(e.message);
    // Paged at one revision, so only one page of stored bytes exists beside the cache.
    let mut objects: Vec<CachedObject> = vec![];
    let mut revision = 0;
    let mut start_after = None;
    loop {
        let page = storage
            .range(RangeRequest {
                prefix: REGISTRY_PREFIX.into(),
                start_after: start_after.take(),
                limit: LOAD_PAGE,
                revision,
                count: false,
            })
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        revision = page.revision;
        start_after = page.kvs.last().map(|kv| kv.key.clone());
        objects.extend(page.kvs.into_iter().map(|kv| {
            CachedObject::from_stored(kv.key, &kv.value, kv.create_revision, kv.mod_revision)
        }));
        if !page.more {
            break;
        }
    }
    cache.load(objects, revision);
    let registry = Registry::new(storage.clone(), cache.clone());
    registry.rebuild_resources();
    // Objects stored under an older schema are served as read through the current one.
    registry.normalize_stored(None);

    let (shutdown, _) = tokio::sync::watch::channel(false);
    let mut tasks = vec![];
    tasks.push(tokio::spawn(feed_cache(
        registry.clone(),
        revision,
        shutdown.subscribe(),
    )));
    ensure_default_namespaces(&registry).await.map_err(io_err)?;

    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let local_addr = listener.local_addr()?;
    let app = Arc::new(App {
        registry: registry.clone(),
        openapi: openapi::OpenApiCache::default(),
        address: local_addr.to_string(),
        shutdown,
    });
    tasks.push(tokio::spawn(controllers::run(
        registry.clone(),
        app.shutdown.subscribe(),
    )));
    tasks.push(tokio::spawn(gc::run(
        registry.clone(),
        app.shutdown.subscribe(),
    )));
    tasks.push(tokio::spawn(compact_history(
        registry.clone(),
        config.history_retention,
        app.shutdown.subscribe(),
    )));
    let tls = config.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    tasks.push(tokio::spawn(accept_loop(app.clone(), listener, tls)));
    Ok(Running {
        local_addr,
        app,
        tasks,
    })
}

async fn ensure_default_namespaces(registry: &Registry) -> Result<(), crest_api::ApiError> {
    let res = registry.resources();
    let Some(def) = res.lookup("", "v1", "namespaces") else {
        return Ok(());
    };
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        if registry.cache.get(&def.key(None, name)).is_some() {
            continue;
        }
        let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match registry
            .create(&def, None, obj, &registry::WriteOptions::default())
            .await
        {
            Ok(_) => {}
            Err(e) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Keeps the cache current from one storage watch; rebuilds the served resources when a CRD
/// changes, before the change becomes visible.
async fn feed_cache(
    registry: Arc<Registry>,
    from: Revision,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut from = from;
    loop {
        let mut stream = match registry.storage.watch(REGISTRY_PREFIX, from) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "cache watch failed");
                return;
            }
        };
        loop {
            let first = tokio::select! {
                _ = shutdown.changed() => return,
                ev = stream.recv() => ev,
            };
            let Some(Ok(first)) = first else { break };
            let mut batch = vec![first];
            while batch.len() < 1024 {
                match stream.rx.try_recv() {
                    Ok(Ok(ev)) => batch.push(ev),
                    _ => break,
                }
            }
            // The previous state is already in the cache (or earlier in this batch): reuse it
            // instead of decoding the store's prev_kv again.
            let mut latest: std::collections::HashMap<String, Arc<CachedObject>> =
                std::collections::HashMap::new();
            let resources = registry.resources();
            let events: Vec<CacheEvent> = batch
                .into_iter()
                .map(|ev| {
                    let rev = ev.kv.mod_revision;
                    let prev = ev.prev_kv.as_ref().map(|p| {
                        latest
                            .get(&p.key)
                            .cloned()
                            .or_else(|| registry.cache.get(&p.key))
                            .filter(|c| c.mod_revision == p.mod_revision)
                            .unwrap_or_else(|| {
                                Arc::new(CachedObject::from_stored(
                                    p.key.clone(),
                                    &p.value,
                                    p.create_revision,
                                    p.mod_revision,
                                ))
                            })
                    });
                    let object = match ev.event_type {
                        // Written through another version: read it as the storage version.
                        crest_storage::EventType::Put => Arc::new(crate::resources::read_stored(
                            &ev.kv,
                            resources.stored_schema(&ev.kv.key),
                        )),
                        crest_storage::EventType::Delete => prev.clone().unwrap_or_else(|| {
                            Arc::new(CachedObject::from_stored(ev.kv.key.clone(), b"{}", 0, rev))
                        }),
                    };
                    latest.insert(ev.kv.key.clone(), object.clone());
                    CacheEvent {
                        event_type: ev.event_type,
                        key: ev.kv.key,
                        revision: rev,
                        object,
                        prev,
                    }
                })
                .collect();
            from = events.last().map(|e| e.revision).unwrap_or(from);
            let changed_crds: Vec<String> = events
                .iter()
                .filter(|e| e.key.starts_with(resources::CRD_PREFIX))
                .filter_map(|e| e.object.value().ok())
                .map(|crd| {
                    let plural = crd
                        .pointer("/status/acceptedNames/plural")
                        .or_else(|| crd.pointer("/spec/names/plural"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let group = crd
                        .pointer("/spec/group")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    format!("/registry/{group}/{plural}/")
                })
                .collect();
            registry.cache.apply(events, |_| {
                if !changed_crds.is_empty() {
                    registry.rebuild_resources();
                    // Objects of a changed CRD are read through its new schema from now on.
                    registry.normalize_stored(Some(&changed_crds));
                }
            });
        }
        // The watch ended (fell behind or store closed): resume from the last applied revision.
        if *shutdown.borrow() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Compacts history older than `retention`, sampling the revision once a minute.
async fn compact_history(
    registry: Arc<Registry>,
    retention: Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let step = (retention / 5).max(Duration::from_secs(1));
    let mut samples: std::collections::VecDeque<(Instant, Revision)> = Default::default();
    let mut ticker = tokio::time::interval(step);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = ticker.tick() => {}
        }
        let now = Instant::now();
        // The in-memory history ages out on the same clock.
        registry.cache.expire_history();
        samples.push_back((now, registry.storage.current_revision()));
        let mut target = None;
        while let Some(&(t, rev)) = samples.front() {
            if now.duration_since(t) >= retention {
                target = Some(rev);
                samples.pop_front();
            } else {
                break;
            }
        }
        if let Some(rev) = target {
            compact_in_steps(&registry, rev).await;
        }
    }
}

/// Revisions compacted per storage transaction: compaction shares the store's writer with client
/// writes, so a minute of history is dropped in small steps that interleave with them rather than
/// in one long transaction that would stall writers.
const COMPACTION_STEP: Revision = 2_000;

async fn compact_in_steps(registry: &Registry, target: Revision) {
    loop {
        let from = registry.storage.compacted_revision();
        if from >= target {
            return;
        }
        let next = (from + COMPACTION_STEP).min(target);
        if let Err(e) = registry.storage.compact(next).await {
            tracing::warn!(error = %e, "compaction failed");
            return;
        }
        tokio::task::yield_now().await;
    }
}

/// Serves one plain-TCP connection with the protocol its first bytes announce: an HTTP/2
/// prior-knowledge preface gets HTTP/2, anything else HTTP/1.1.
async fn serve_tcp(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    watcher: hyper_util::server::graceful::Watcher,
) {
    let mut first = [0u8; 3];
    // A peer that connects and sends nothing must not hold a task forever.
    let peeked = tokio::time::timeout(HEADER_READ_TIMEOUT, stream.peek(&mut first)).await;
    let h2 = match peeked {
        Ok(n) => matches!(n, Ok(3) if &first == b"PRI"),
        Err(_) => {
            tracing::debug!("connection sent nothing: closed");
            return;
        }
    };
    serve_connection(app, stream, h2, watcher);
}

/// Serves one TLS connection with the protocol negotiated by ALPN (h2 preferred, as
/// kube-apiserver offers it; clients without ALPN get HTTP/1.1).
async fn serve_tls(
    app: Arc<App>,
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    watcher: hyper_util::server::graceful::Watcher,
) {
    // A peer that never finishes its handshake must not hold a task forever.
    let accepted = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
    let stream = match accepted {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!("TLS handshake timed out");
            return;
        }
    };
    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
    serve_connection(app, stream, h2, watcher);
}

const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an HTTP/1.1 client may take to send a request's headers, the first or the next on
/// a kept-alive connection (kube-apiserver's `ReadHeaderTimeout`): a connection that sends
/// nothing, or half a request, is closed instead of held forever.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// HTTP/2 streams one connection may carry at once (kube-apiserver's
/// --http2-max-streams-per-connection default): a client's informers share one connection.
const HTTP2_MAX_STREAMS: u32 = 1000;

/// Each protocol runs in a task of its own type, so an HTTP/1.1 connection (every watch of a
/// plain-HTTP client) does not carry the size of an HTTP/2 connection's state: idle watches
/// cost less memory.
fn serve_connection<S>(
    app: Arc<App>,
    stream: S,
    h2: bool,
    watcher: hyper_util::server::graceful::Watcher,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // The request future is boxed: hyper keeps a slot of the service future's size for a
    // connection's (HTTP/1.1) or stream's (HTTP/2) whole life, and the pipeline's future is
    // 4 KiB, which every idle watch would otherwise carry after its headers are sent.
    let service = hyper::service::service_fn(move |req| Box::pin(http::serve(app.clone(), req)));
    let io = TokioIo::new(stream);
    if h2 {
        let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .max_concurrent_streams(HTTP2_MAX_STREAMS)
            .serve_connection(io, service);
        tokio::spawn(async move {
            let _ = watcher.watch(conn).await;
        });
    } else {
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(io, service);
        tokio::spawn(async move {
            let _ = watcher.watch(conn).await;
        });
    }
}

async fn accept_loop(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = app.shutdown.subscribe();
    loop {
        let (stream, _) = tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let watcher = graceful.watcher();
        match &tls {
            Some(acceptor) => tokio::spawn(serve_tls(app, stream, acceptor.clone(), watcher)),
            None => tokio::spawn(serve_tcp(app, stream, watcher)),
        };
    }
    let _ = tokio::time::timeout(Duration::from_secs(3), graceful.shutdown()).await;
}
