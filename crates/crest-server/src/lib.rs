//! The Crest API server: one generic resource pipeline behind a Kubernetes-compatible HTTP API.
//!
//! The crate's only interface is [`start`] with a [`Config`] and a `crest_storage::Storage`,
//! giving a [`Running`] server. Inside, one folder per layer, each importing only the layers
//! below it (ARCHITECTURE.md has the map):
//!
//! - [`http`]: connections, routing, request paths, verbs -> registry calls, watch streams,
//!   response rendering (formats from `crest_codec::negotiate`).
//! - [`views`]: discovery and OpenAPI documents built from the served resources.
//! - [`registry`]: the generic pipeline (create/update/patch/delete, dry run, finalizers),
//!   per-kind strategies, the served resource set, list/get with resourceVersion semantics, the
//!   cache feed.
//! - [`store`]: the in-memory cache every read is served from, and the storage key layout.
//! - [`controllers`]: CRD naming and cleanup, namespace deletion, garbage collection,
//!   compaction; they act through the registry as clients do.
//! - [`webhook`]: calling webhooks addressed through a Service (endpoint routing over the
//!   stored EndpointSlices/Endpoints, TLS verified against the caBundle). Tests reach its
//!   client directly only through the `testing` feature's `Running::service_resolver`.

mod authn;
pub use authn::Authentication;
mod authz;
mod controllers;
mod http;
mod registry;
mod store;
mod views;
mod webhook;

pub use controllers::kubernetesservice::first_service_ip;
pub use controllers::leaderelection::LeaderElection;
use crest_storage::Storage;
use http::app::App;
pub use http::server::ConnectionLimits;
use registry::Registry;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use store::cache::{self, Cache};

/// Server settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    /// How long watch history is kept before compaction (etcd clusters keep 5 minutes).
    pub history_retention: Duration,
    /// At most this many recent changes are kept in memory for watches and chunked lists;
    /// older ones are read from storage.
    pub watch_history_capacity: usize,
    /// How long an Event lives after its last write (kube-apiserver's `--event-ttl`).
    pub event_ttl: Duration,
    /// Serve HTTPS with this configuration (ALPN h2 and http/1.1, as kube-apiserver): clients
    /// that negotiate h2 multiplex all their requests and watches over one connection.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Who requests are from (tokens, anonymous); `None` takes every request as anonymous.
    pub authenticator: Option<Authentication>,
    /// Run the controllers only while this replica holds the controller Lease (several
    /// replicas on one shared store); `None`: this server is the only one on its store and
    /// runs them from the start.
    pub leader_election: Option<LeaderElection>,
    /// How long a request that is not long-running (not a watch) may take, reading its body
    /// included, before it is answered 504 (kube-apiserver's `--request-timeout`, 60 s).
    pub request_timeout: Duration,
    /// A watch without `timeoutSeconds` (or with 0) ends after a random time between this and
    /// twice this (kube-apiserver's `--min-request-timeout`, 1800 s), spreading re-lists out;
    /// zero: never.
    pub min_request_timeout: Duration,
    /// Connection timeouts and HTTP/2 limits (kube-apiserver's by default).
    pub connections: ConnectionLimits,
    /// The `default/kubernetes` Service's ClusterIP: the first address of the service range
    /// (kube-apiserver's `--service-cluster-ip-range`, `10.0.0.0/24` by default).
    pub kubernetes_service_ip: std::net::IpAddr,
    /// The address the Service's Endpoints and EndpointSlice name (kube-apiserver's
    /// `--advertise-address`); `None`: the listen address, or the default route's interface
    /// address when listening on all interfaces.
    pub advertise_address: Option<std::net::IpAddr>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 6443)),
            history_retention: Duration::from_secs(300),
            watch_history_capacity: 10_000,
            event_ttl: Duration::from_secs(3600),
            tls: None,
            authenticator: None,
            leader_election: None,
            request_timeout: Duration::from_secs(60),
            min_request_timeout: Duration::from_secs(1800),
            connections: ConnectionLimits::default(),
            kubernetes_service_ip: std::net::IpAddr::from([10, 0, 0, 1]),
            advertise_address: None,
        }
    }
}

/// A started server.
pub struct Running {
    pub local_addr: SocketAddr,
    /// How long each step of [`start`] took, in order (for the startup log line).
    pub phases: Vec<(&'static str, Duration)>,
    app: Arc<App>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// What serving needs that [`start_with`] may wait for while it loads the store and writes the
/// bootstrap policy: the TLS configuration and the authenticator (whose keys may still be being
/// generated). They replace [`Config::tls`] and [`Config::authenticator`].
pub struct Security {
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub authenticator: Option<Authentication>,
    /// The CA bundle (PEM) that verifies the server's certificate, published in every
    /// namespace's `kube-root-ca.crt` ConfigMap (kube-controller-manager's `--root-ca-file`).
    pub root_ca: Option<String>,
}

impl Running {
    /// Test-only (feature `testing`): the resolver webhooks addressed through a Service are
    /// called with, as the server's own webhook callers hold it.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn service_resolver(&self) -> testing::ServiceResolver {
        testing::ServiceResolver(webhook::ServiceResolver::new(self.app.registry.clone()))
    }

    /// Stops accepting, ends watches, lets in-flight requests finish (bounded), closes storage.
    pub async fn shutdown(self) {
        let _ = self.app.shutdown.send(true);
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
        self.app.registry.close_storage().await;
    }
}

/// Test-only access (feature `testing`) to the client of webhooks addressed through a
/// Service, for the tests that call one directly rather than through a CRD's conversion: not
/// part of the crate's interface.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod testing {
    use serde_json::Value;
    use std::time::Duration;

    /// A webhook's answer: status code and body.
    #[derive(Clone, Debug)]
    pub struct WebhookResponse {
        pub status: u16,
        pub body: bytes::Bytes,
    }

    /// The server's webhook client ([`crate::Running::service_resolver`]).
    #[derive(Clone)]
    pub struct ServiceResolver(pub(crate) crate::webhook::ServiceResolver);

    impl ServiceResolver {
        /// POSTs `body` to the webhook a `clientConfig.service` (`service`, as the API holds
        /// it) names, with the CA bundle `ca_bundle` (PEM), within `timeout`; the error worded
        /// as kube-apiserver's webhook client words it.
        pub async fn post(
            &self,
            service: &Value,
            ca_bundle: &[u8],
            body: Vec<u8>,
            timeout: Duration,
        ) -> Result<WebhookResponse, String> {
            let svc = crate::webhook::ServiceReference::from_json(service);
            self.0
                .post(&svc, ca_bundle, body, timeout)
                .await
                .map(|r| WebhookResponse {
                    status: r.status,
                    body: r.body,
                })
                .map_err(|e| e.to_string())
        }

        /// Converts `objects` to `desired` through the webhook of the CRD conversion
        /// `conversion` (`spec.conversion`), as the registry does.
        pub async fn convert(
            &self,
            conversion: &Value,
            objects: &mut [Value],
            desired: &str,
            input: &str,
            list: bool,
        ) -> Result<(), String> {
            self.0
                .convert(conversion, objects, desired, input, list)
                .await
        }
    }
}

/// How long [`start`] waits for a store that does not answer.
const STORAGE_STARTUP_WAIT: Duration = Duration::from_secs(60);

/// Loads the cache, ensures the default namespaces, binds and starts serving.
pub async fn start(config: Config, storage: Arc<dyn Storage>) -> std::io::Result<Running> {
    let security = Security {
        tls: config.tls.clone(),
        authenticator: config.authenticator.clone(),
        root_ca: None,
    };
    start_with(config, storage, None, std::future::ready(Ok(security))).await
}

/// [`start`], with the TLS configuration and the authenticator given by `security`, which is
/// awaited only once the cache is loaded and the default namespaces and bootstrap policy are
/// written, right before listening: preparing them (generating keys) overlaps that work. The
/// server accepts connections, and so answers `/readyz`, only after both. `listener`: a socket
/// already bound to [`Config::listen`] (so that its port is known early), used instead of
/// binding one then.
pub async fn start_with(
    config: Config,
    storage: Arc<dyn Storage>,
    listener: Option<std::net::TcpListener>,
    security: impl std::future::Future<Output = std::io::Result<Security>>,
) -> std::io::Result<Running> {
    let mut phases = Phases::new();
    let cache = Cache::with_history(cache::HistoryLimits {
        capacity: config.watch_history_capacity,
        max_age: config.history_retention,
    });
    let io_err = |e: crest_api::ApiError| std::io::Error::other(e.message);
    // A store that is not there yet (etcd starting with its replicas) is waited for, a
    // minute at most, as kube-apiserver waits for etcd before serving.
    let waited = std::time::Instant::now();
    let (objects, revision) = loop {
        match store::feed::list_all(storage.as_ref()).await {
            Ok(loaded) => break loaded,
            Err(
                e @ (crest_storage::StorageError::Unavailable(_)
                | crest_storage::StorageError::Timeout(_)),
            ) if waited.elapsed() < STORAGE_STARTUP_WAIT => {
                tracing::warn!(error = %e, "waiting for storage");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        }
    };
    cache.load(objects, revision);
    phases.end("load");
    let registry = Registry::new(storage.clone(), cache.clone());
    registry.rbac.rebuild(&cache);
    registry.rebuild_resources();
    // Objects stored under an older schema are served as read through the current one.
    registry.normalize_stored(None);
    phases.end("registry");

    let (shutdown, _) = tokio::sync::watch::channel(false);
    let mut tasks = vec![];
    tasks.push(tokio::spawn(store::feed::feed_cache(
        registry.cache_feed(),
        revision,
        shutdown.subscribe(),
    )));
    controllers::rbacbootstrap::ensure_bootstrap(&registry)
        .await
        .map_err(io_err)?;
    phases.end("bootstrap");
    let Security {
        tls,
        authenticator,
        root_ca,
    } = security.await?;
    phases.end("security_wait");

    let listener = match listener {
        Some(l) => {
            l.set_nonblocking(true)?;
            tokio::net::TcpListener::from_std(l)?
        }
        None => tokio::net::TcpListener::bind(config.listen).await?,
    };
    let local_addr = listener.local_addr()?;
    registry.set_webhook_converter(Arc::new(webhook::conversion::RegistryConverter(
        Arc::downgrade(&registry),
    )));
    let app = Arc::new(App {
        registry: registry.clone(),
        openapi: views::openapi::OpenApiCache::default(),
        address: local_addr.to_string(),
        shutdown,
        authn: authenticator.map(authn::Authn::new),
        request_timeout: config.request_timeout,
        min_request_timeout: config.min_request_timeout,
    });
    // The controllers: on every start with a store of its own; under leader election when
    // replicas share one (exactly one replica runs them at a time).
    let start_controllers = {
        let registry = registry.clone();
        let (retention, event_ttl) = (config.history_retention, config.event_ttl);
        let cluster = Cluster {
            root_ca,
            apiserver: controllers::kubernetesservice::Apiserver {
                service_ip: config.kubernetes_service_ip,
                public_ip: config
                    .advertise_address
                    .unwrap_or_else(|| controllers::kubernetesservice::public_ip(local_addr.ip())),
                port: local_addr.port(),
            },
        };
        move |stop: tokio::sync::watch::Receiver<bool>| {
            spawn_controllers(registry.clone(), &cluster, retention, event_ttl, stop)
        }
    };
    match config.leader_election.clone() {
        None => tasks.extend(start_controllers(app.shutdown.subscribe())),
        Some(election) => {
            tasks.push(tokio::spawn(controllers::compaction::expire_history(
                registry.clone(),
                config.history_retention,
                app.shutdown.subscribe(),
            )));
            tasks.push(tokio::spawn(controllers::leaderelection::run(
                registry.clone(),
                election,
                app.shutdown.subscribe(),
                start_controllers,
            )));
        }
    }
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    tasks.push(tokio::spawn(http::server::accept_loop(
        app.clone(),
        listener,
        tls,
        config.connections.clone(),
    )));
    phases.end("listen");
    Ok(Running {
        local_addr,
        phases: phases.done,
        app,
        tasks,
    })
}

/// The steps of [`start_with`] timed one after the other.
struct Phases {
    last: std::time::Instant,
    done: Vec<(&'static str, Duration)>,
}

impl Phases {
    fn new() -> Self {
        Phases {
            last: std::time::Instant::now(),
            done: vec![],
        }
    }

    /// Ends the step `name` now; the next one starts.
    fn end(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.done.push((name, now - self.last));
        self.last = now;
    }
}

/// Starts every controller; each stops when `stop` fires.
/// What the controllers publish about this server.
struct Cluster {
    root_ca: Option<String>,
    apiserver: controllers::kubernetesservice::Apiserver,
}

fn spawn_controllers(
    registry: Arc<Registry>,
    cluster: &Cluster,
    retention: Duration,
    event_ttl: Duration,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    vec![
        tokio::spawn(controllers::run(
            registry.clone(),
            cluster.root_ca.clone(),
            stop.clone(),
        )),
        tokio::spawn(controllers::kubernetesservice::run(
            registry.clone(),
            cluster.apiserver.clone(),
            stop.clone(),
        )),
        tokio::spawn(controllers::gc::run(registry.clone(), stop.clone())),
        tokio::spawn(controllers::event_ttl::run(
            registry.clone(),
            event_ttl,
            stop.clone(),
        )),
        tokio::spawn(controllers::storageversionmigration::run(
            registry.clone(),
            stop.clone(),
        )),
        tokio::spawn(controllers::endpointslicemirroring::run(
            registry.clone(),
            stop.clone(),
        )),
        tokio::spawn(controllers::clusterroleaggregation::run(
            registry.clone(),
            stop.clone(),
        )),
        tokio::spawn(controllers::compaction::compact_history(
            registry, retention, stop,
        )),
    ]
}
