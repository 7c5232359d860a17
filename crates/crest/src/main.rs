//! `crest serve`: starts the API server on the embedded store and writes an admin kubeconfig.
//!
//! The CLI (`serve`, `--data-dir`, `--listen`, `DIR/kubeconfig`) is a stable contract that outside
//! tooling relies on.

// jemalloc: measured against glibc and mimalloc on the create path it costs the least CPU per
// request and keeps RSS lowest with 100,000 cached objects (see crest-bench).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options (its `malloc_conf` global, read before `main`): a background thread hands
/// freed pages back to the OS a second after a burst instead of ten, so RSS follows the live data.
#[allow(unsafe_code)] // the symbol jemalloc reads its options from; nothing else exports it
#[export_name = "_rjem_malloc_conf"]
#[used]
static JEMALLOC_CONF: &u8 =
    &b"background_thread:true,max_background_threads:1,dirty_decay_ms:1000,muzzy_decay_ms:0\0"[0];

mod auth;
mod envtest;
mod pki;
mod tls;

use clap::{Parser, Subcommand};
use crest_storage::{EmbeddedOptions, EmbeddedStore};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "crest",
    version,
    about = "A Kubernetes-compatible API server for CustomResourceDefinitions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at startup: the size of the serve variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Serve the Kubernetes API on the embedded store, or on etcd with --etcd-servers.
    Serve {
        /// Where objects and the kubeconfig are kept.
        #[arg(long, default_value = "./crest-data")]
        data_dir: PathBuf,
        /// Address to listen on (port 0 picks a free port; the kubeconfig names the real one).
        #[arg(long, default_value = "127.0.0.1:6443")]
        listen: SocketAddr,
        /// How long watch history is kept before compaction, in seconds.
        #[arg(long, default_value_t = 300)]
        history_retention_seconds: u64,
        /// How many recent changes are kept in memory for watches and chunked lists (older ones
        /// are read from storage).
        #[arg(long, default_value_t = 10_000)]
        watch_history_capacity: usize,
        /// How long an Event is kept after its last write, as a Go duration (`1h`, `90s`,
        /// `1h30m`): kube-apiserver's `--event-ttl`.
        #[arg(long, default_value = "1h", value_parser = parse_go_duration)]
        event_ttl: Duration,
        /// Accepted for compatibility: HTTPS is the default.
        #[arg(long, hide = true, conflicts_with = "plain_http")]
        tls: bool,
        /// Serve plain HTTP instead of HTTPS (only on a loopback --listen address; requests are
        /// still authenticated, with the admin token the kubeconfig carries).
        #[arg(long)]
        plain_http: bool,
        /// Static bearer tokens, kube-apiserver's CSV format (`token,user,uid,"group1,group2"`).
        #[arg(long)]
        token_auth_file: Option<PathBuf>,
        /// Requests without credentials are served as `system:anonymous`
        /// (`--anonymous-auth=false`: they get 401).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        anonymous_auth: bool,
        /// The CA, the admin token and the ServiceAccount signing key (created on first use).
        /// Replicas on one etcd share it, so they trust the same clients and tokens.
        /// Default: DATA_DIR/pki.
        #[arg(long)]
        pki_dir: Option<PathBuf>,
        /// How long a request that is not a watch may take, reading its body included, before
        /// it is answered 504 (kube-apiserver's `--request-timeout`); a request's own
        /// `?timeout=` can only shorten it.
        #[arg(long, default_value = "1m0s", value_parser = parse_go_duration)]
        request_timeout: Duration,
        /// The minimum number of seconds a handler must keep a request open before timing it
        /// out (kube-apiserver's flag): a watch without timeoutSeconds ends after a random time
        /// between this and twice this, to spread out the re-lists; 0: never.
        #[arg(long, default_value_t = 1800)]
        min_request_timeout: u64,
        /// The range Service cluster IPs come from (kube-apiserver's flag); its first address is
        /// the ClusterIP of the `default/kubernetes` Service.
        #[arg(long, default_value = "10.0.0.0/24", value_parser = parse_service_range)]
        service_cluster_ip_range: std::net::IpAddr,
        /// The address the `default/kubernetes` Service's Endpoints and EndpointSlice name
        /// (kube-apiserver's flag); by default the --listen address, or the address of the
        /// default route's interface when listening on all interfaces.
        #[arg(long)]
        advertise_address: Option<std::net::IpAddr>,
        #[command(flatten)]
        etcd: EtcdFlags,
        #[command(flatten)]
        connections: ConnectionFlags,
        #[command(flatten)]
        store: StoreFlags,
    },
    /// Run as envtest's kube-apiserver (as when started under that name): kube-apiserver's
    /// flags; see `crest kube-apiserver --help`.
    #[command(name = "kube-apiserver", disable_help_flag = true)]
    KubeApiserver {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run as envtest's etcd (as when started under that name): keeps the data dir the
    /// kube-apiserver stores in; see `crest etcd --help`.
    #[command(name = "etcd", disable_help_flag = true)]
    Etcd {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Lay out a KUBEBUILDER_ASSETS directory for controller-runtime's envtest: kube-apiserver
    /// and etcd (this binary) and kubectl (the one on PATH).
    EnvtestAssets {
        /// The directory to write.
        dir: PathBuf,
    },
}

/// How long connections may take and hold the server, and the limits of an HTTP/2 connection
/// (kube-apiserver's values by default; the hidden timeouts are for tests).
#[derive(clap::Args, Clone, Debug)]
struct ConnectionFlags {
    /// The limit that the server gives to clients for the maximum number of streams in an
    /// HTTP/2 connection (0: the default, 100).
    #[arg(long, default_value_t = 100)]
    http2_max_streams_per_connection: u32,
    /// How long an HTTP/2 connection without an open stream is kept before a GOAWAY closes it.
    #[arg(long, hide = true, default_value = "90s", value_parser = parse_go_duration)]
    http2_idle_timeout: Duration,
    /// How long a client may take to send a request's headers (and, on a plain port, its first
    /// bytes).
    #[arg(long, hide = true, default_value = "32s", value_parser = parse_go_duration)]
    read_header_timeout: Duration,
    /// How long a TLS handshake may take.
    #[arg(long, hide = true, default_value = "10s", value_parser = parse_go_duration)]
    tls_handshake_timeout: Duration,
}

impl ConnectionFlags {
    fn limits(&self) -> crest_server::ConnectionLimits {
        crest_server::ConnectionLimits {
            read_header_timeout: self.read_header_timeout,
            tls_handshake_timeout: self.tls_handshake_timeout,
            http2_idle_timeout: self.http2_idle_timeout,
            http2_max_streams: self.http2_max_streams_per_connection,
        }
    }
}

/// How the embedded store rides out a failing disk (hidden: tests shorten them).
#[derive(clap::Args, Clone, Debug)]
struct StoreFlags {
    /// After writes failed (a full disk, an I/O error), the longest wait between attempts to
    /// write again.
    #[arg(long, hide = true, default_value = "5s", value_parser = parse_go_duration)]
    storage_retry_max: Duration,
    /// While writes fail, one log line per this interval counts them.
    #[arg(long, hide = true, default_value = "30s", value_parser = parse_go_duration)]
    storage_fault_log_interval: Duration,
}

/// Storing in etcd instead of the embedded store (kube-apiserver's flags), and the controllers'
/// leader election that several replicas on one etcd need (kube-controller-manager's flags).
#[derive(clap::Args, Clone, Debug)]
struct EtcdFlags {
    /// Store in etcd (v3 API) at these endpoints (comma-separated URLs, e.g.
    /// `http://127.0.0.1:2379,http://127.0.0.1:22379`) instead of the embedded store; any
    /// number of Crest replicas can share one etcd.
    #[arg(long, value_delimiter = ',')]
    etcd_servers: Vec<String>,
    /// The prefix of every key in etcd (kube-apiserver's layout below it).
    #[arg(long, default_value = "/registry")]
    etcd_prefix: String,
    /// The CA that signed etcd's serving certificate.
    #[arg(long, requires = "etcd_servers")]
    etcd_cafile: Option<PathBuf>,
    /// The client certificate Crest presents to etcd (with --etcd-keyfile).
    #[arg(long, requires_all = ["etcd_servers", "etcd_keyfile"])]
    etcd_certfile: Option<PathBuf>,
    /// The client certificate's key.
    #[arg(long, requires_all = ["etcd_servers", "etcd_certfile"])]
    etcd_keyfile: Option<PathBuf>,
    /// How long a request to etcd may take before it fails with a 504.
    #[arg(long, default_value = "5s", value_parser = parse_go_duration)]
    etcd_request_timeout: Duration,
    /// With --etcd-servers: how long a controller Lease not renewed stays another replica's.
    #[arg(long, default_value = "15s", value_parser = parse_go_duration)]
    leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops its controllers.
    #[arg(long, default_value = "10s", value_parser = parse_go_duration)]
    leader_elect_renew_deadline: Duration,
    /// How often replicas try to acquire the Lease and the leader renews it.
    #[arg(long, default_value = "2s", value_parser = parse_go_duration)]
    leader_elect_retry_period: Duration,
}

fn kubeconfig(server: &str, tls: Option<&tls::Tls>, token: &str) -> String {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    let (ca, user) = match tls {
        Some(t) => (
            format!(
                "\n    certificate-authority-data: {}",
                STANDARD.encode(&t.ca_pem)
            ),
            format!(
                "\n    client-certificate-data: {}\n    client-key-data: {}\n    token: {token}",
                STANDARD.encode(&t.client_cert_pem),
                STANDARD.encode(&t.client_key_pem)
            ),
        ),
        None => (String::new(), format!("\n    token: {token}")),
    };
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: crest
  cluster:
    server: {server}{ca}
contexts:
- name: crest
  context:
    cluster: crest
    user: crest-admin
    namespace: default
current-context: crest
users:
- name: crest-admin
  user:{user}
preferences: {{}}
"
    )
}

/// The kubeconfig for a server listening on `addr`.
fn kubeconfig_for(addr: SocketAddr, tls: Option<&tls::Tls>, token: &str) -> String {
    let host = match addr.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        ip => ip.to_string(),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let server = format!("{scheme}://{host}:{}", addr.port());
    kubeconfig(&server, tls, token)
}

/// A kubeconfig written beside its place (`kubeconfig.tmp`), not in it yet: removed
/// again unless [`Staged::publish`] puts it there, so that none is left behind.
struct Staged {
    tmp: PathBuf,
    path: PathBuf,
}

impl Staged {
    fn write(dir: &Path, contents: &str) -> std::io::Result<Staged> {
        let staged = Staged {
            tmp: dir.join("kubeconfig.tmp"),
            path: dir.join("kubeconfig"),
        };
        // Owner-only, as kubeadm's admin.conf: it holds the admin's token (and client key). A
        // new file, so that a leftover one's wider permissions do not carry over. Not synced:
        // every start writes it again (a sync cost 1-20 ms of the start here).
        let _ = std::fs::remove_file(&staged.tmp);
        pki::write_new_unsynced(&staged.tmp, contents.as_bytes(), 0o600)?;
        Ok(staged)
    }

    /// Puts the kubeconfig in place atomically: a reader never sees a half-written file.
    fn publish(self) -> std::io::Result<PathBuf> {
        std::fs::rename(&self.tmp, &self.path)?;
        Ok(self.path.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Gone already once published.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Writes the kubeconfig atomically so a reader never sees a half-written file, and leaves no
/// temporary file behind when it cannot (a full disk).
fn write_kubeconfig(
    dir: &Path,
    addr: SocketAddr,
    tls: Option<&tls::Tls>,
    token: &str,
) -> std::io::Result<PathBuf> {
    Staged::write(dir, &kubeconfig_for(addr, tls, token))?.publish()
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// What `crest serve` was asked for.
struct ServeOptions {
    data_dir: PathBuf,
    listen: SocketAddr,
    retention: Duration,
    watch_history_capacity: usize,
    event_ttl: Duration,
    plain_http: bool,
    token_auth_file: Option<PathBuf>,
    anonymous_auth: bool,
    pki_dir: Option<PathBuf>,
    request_timeout: Duration,
    min_request_timeout: Duration,
    kubernetes_service_ip: std::net::IpAddr,
    advertise_address: Option<std::net::IpAddr>,
    etcd: EtcdFlags,
    connections: ConnectionFlags,
    store: StoreFlags,
}

/// `--service-cluster-ip-range`: a CIDR, taken as its first address (the `kubernetes`
/// Service's ClusterIP).
fn parse_service_range(s: &str) -> Result<std::net::IpAddr, String> {
    crest_server::first_service_ip(s)
        .ok_or_else(|| format!("{s:?} is not a CIDR with room for a service address"))
}

/// `--plain-http` only where nobody else can listen in: a loopback address.
fn check_plain_http(listen: SocketAddr) -> Result<(), String> {
    if listen.ip().is_loopback() {
        Ok(())
    } else {
        Err(format!(
            "--plain-http serves credentials in clear text and is only allowed on a loopback \
             --listen address (127.0.0.0/8 or [::1]), not {listen}; drop --plain-http to serve HTTPS"
        ))
    }
}

async fn serve(o: ServeOptions) -> Result<(), String> {
    let ServeOptions {
        data_dir,
        listen,
        retention,
        watch_history_capacity,
        event_ttl,
        plain_http,
        token_auth_file,
        anonymous_auth,
        pki_dir,
        request_timeout,
        min_request_timeout,
        kubernetes_service_ip,
        advertise_address,
        etcd,
        connections,
        store,
    } = o;
    let started = Instant::now();
    if plain_http {
        check_plain_http(listen)?;
    }
    pki::private_dir(&data_dir, "data dir")?;
    let pki = pki_dir.unwrap_or_else(|| data_dir.join("pki"));
    pki::private_dir(&pki, "pki dir")?;
    let mut phases = vec![("dirs", started.elapsed())];
    // On the embedded store the port is bound now (if that fails, it fails again where it did
    // before, when the server starts), so that the kubeconfig, which names it, can be written
    // and synced while the store loads; it is put in place once the server is ready.
    let early = etcd
        .etcd_servers
        .is_empty()
        .then(|| std::net::TcpListener::bind(listen).ok())
        .flatten();
    let early_addr = early.as_ref().and_then(|l| l.local_addr().ok());
    // The kubeconfig is staged only once the store is open: the store's lock keeps a second
    // server on the same data dir from touching it.
    let (opened_tx, opened_rx) = std::sync::mpsc::channel::<bool>();
    // The keys, certificates and tokens of the pki dir are prepared on a thread of their own,
    // while the store opens and the server loads it and writes the bootstrap policy; the server
    // waits for them only before it listens.
    let (pki_tx, pki_rx) = tokio::sync::oneshot::channel();
    let (staged_tx, staged_rx) = tokio::sync::oneshot::channel();
    {
        let data_dir = data_dir.clone();
        std::thread::Builder::new()
            .name("crest-pki".into())
            .spawn(move || {
                let t = Instant::now();
                let prepared = prepare_credentials(
                    &pki,
                    listen,
                    plain_http,
                    token_auth_file.as_deref(),
                    anonymous_auth,
                );
                let contents = match (&prepared, early_addr) {
                    (Ok(p), Some(addr)) => Some(kubeconfig_for(
                        addr,
                        p.tls.as_ref(),
                        &p.credentials.admin_token,
                    )),
                    _ => None,
                };
                let _ = pki_tx.send(prepared.map(|p| (p, t.elapsed())));
                let staged = contents.filter(|_| opened_rx.recv() == Ok(true)).map(|c| {
                    let t = Instant::now();
                    (Staged::write(&data_dir, &c), t.elapsed())
                });
                let _ = staged_tx.send(staged);
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
    }
    let pki_result = |got: Result<Result<(Prepared, Duration), String>, _>| {
        got.unwrap_or_else(|_| Err("the pki dir could not be prepared".into()))
    };
    let t = Instant::now();
    let opened = open_storage(&data_dir, &etcd, &store).await;
    phases.push(("store_open", t.elapsed()));
    let (storage, leader_election) = match opened {
        Ok(s) => s,
        Err(e) => {
            drop(opened_tx);
            // A failing pki dir is reported first, as when it was prepared before the store.
            return Err(pki_result(pki_rx.await).err().unwrap_or(e));
        }
    };
    let _ = opened_tx.send(true);
    let config = crest_server::Config {
        listen,
        history_retention: retention,
        watch_history_capacity,
        event_ttl,
        tls: None,
        authenticator: None,
        leader_election,
        request_timeout,
        min_request_timeout,
        connections: connections.limits(),
        kubernetes_service_ip,
        advertise_address,
    };
    // What the kubeconfig needs of the pki dir (and how long preparing it took), once
    // prepared; or why it could not be.
    type Kept = Result<(Option<tls::Tls>, String, Duration), String>;
    let prepared: std::sync::Mutex<Option<Kept>> = std::sync::Mutex::new(None);
    let keep = |p: Kept| *prepared.lock().unwrap_or_else(|p| p.into_inner()) = Some(p);
    let security = async {
        match pki_result(pki_rx.await) {
            Ok((Prepared { tls, credentials }, took)) => {
                let security = crest_server::Security {
                    tls: tls.as_ref().map(|t| t.config.clone()),
                    authenticator: Some(crest_server::Authentication {
                        authenticator: Arc::new(credentials.authenticator),
                        signer: Some(Arc::new(credentials.signer)),
                        issuer: auth::ISSUER.into(),
                    }),
                    root_ca: tls.as_ref().map(|t| t.ca_pem.clone()),
                };
                keep(Ok((tls, credentials.admin_token, took)));
                Ok(security)
            }
            Err(e) => {
                keep(Err(e));
                Err(std::io::Error::other("the pki dir could not be prepared"))
            }
        }
    };
    let started_server = crest_server::start_with(config, storage.clone(), early, security).await;
    let prepared = prepared.into_inner().unwrap_or_else(|p| p.into_inner());
    // The kubeconfig staged for the early-bound port (which the server then serves on).
    let staged = match early_addr {
        Some(_) => staged_rx.await.ok().flatten(),
        None => None,
    };
    let running = match (started_server, prepared) {
        (Ok(r), Some(Ok(p))) => (r, p),
        (Ok(r), _) => {
            r.shutdown().await;
            return Err("the pki dir could not be prepared".into());
        }
        (Err(_), Some(Err(e))) => {
            storage.close().await;
            return Err(e);
        }
        (Err(e), _) => return Err(format!("cannot start: {e}")),
    };
    let (running, (tls, admin_token, pki_took)) = running;
    phases.push(("pki_overlapped", pki_took));
    if let Some((_, took)) = &staged {
        phases.push(("kubeconfig_write_overlapped", *took));
    }
    phases.extend(running.phases.iter().copied());
    let t = Instant::now();
    let written = match staged {
        Some((staged, _)) => staged.and_then(Staged::publish),
        None => write_kubeconfig(&data_dir, running.local_addr, tls.as_ref(), &admin_token),
    };
    let kubeconfig = match written {
        Ok(k) => k,
        Err(e) => {
            running.shutdown().await;
            return Err(format!(
                "cannot write the kubeconfig in {}: {e}",
                data_dir.display()
            ));
        }
    };
    phases.push(("kubeconfig", t.elapsed()));
    let phases_ms: Vec<String> = phases
        .iter()
        .map(|(name, d)| format!("{name}={:.2}", d.as_secs_f64() * 1e3))
        .collect();
    tracing::info!(
        listen = %running.local_addr,
        kubeconfig = %kubeconfig.display(),
        startup_ms = started.elapsed().as_millis() as u64,
        phases_ms = phases_ms.join(" "),
        "crest is serving; use: kubectl --kubeconfig {}",
        kubeconfig.display()
    );
    shutdown_signal().await;
    tracing::info!("shutting down");
    running.shutdown().await;
    Ok(())
}

/// What serving needs of the pki dir.
struct Prepared {
    /// `None` with --plain-http.
    tls: Option<tls::Tls>,
    credentials: auth::Credentials,
}

/// Reads (creating them on first use) the CA and serving certificate (unless `plain_http`) and
/// the credentials of the pki dir.
fn prepare_credentials(
    pki: &Path,
    listen: SocketAddr,
    plain_http: bool,
    token_auth_file: Option<&Path>,
    anonymous_auth: bool,
) -> Result<Prepared, String> {
    let tls = if plain_http {
        None
    } else {
        Some(tls::prepare(pki, listen)?)
    };
    let mut credentials = auth::prepare(pki, token_auth_file, anonymous_auth)?;
    if let Some(t) = &tls {
        // Client certificates are taken at the TLS level whoever issued them, and verified here
        // (chain to the CA, validity, client usage): a foreign one is a 401, as upstream.
        credentials.authenticator.client_ca = Some(
            crest_auth::x509::ClientCa::from_pem(&t.ca_pem)
                .map_err(|e| format!("the CA in {}: {}", pki.display(), e.message()))?,
        );
    }
    Ok(Prepared { tls, credentials })
}

/// The store: etcd with --etcd-servers (and leader election for the controllers, since other
/// replicas may share it), else the embedded store in the data dir (which one process owns).
async fn open_storage(
    data_dir: &Path,
    etcd: &EtcdFlags,
    store: &StoreFlags,
) -> Result<
    (
        Arc<dyn crest_storage::Storage>,
        Option<crest_server::LeaderElection>,
    ),
    String,
> {
    if etcd.etcd_servers.is_empty() {
        let options = EmbeddedOptions {
            retry_max: store.storage_retry_max,
            fault_log_interval: store.storage_fault_log_interval,
            ..Default::default()
        };
        let store = EmbeddedStore::open(data_dir, options)
            .map_err(|e| format!("cannot open the store in {}: {e}", data_dir.display()))?;
        return Ok((store, None));
    }
    let tls = match (&etcd.etcd_cafile, &etcd.etcd_certfile, &etcd.etcd_keyfile) {
        (None, None, None) => None,
        (ca, cert, key) => Some(crest_storage_etcd::EtcdTls {
            ca_file: ca.clone(),
            cert_file: cert.clone(),
            key_file: key.clone(),
        }),
    };
    let prefix = format!("/{}", etcd.etcd_prefix.trim_matches('/'));
    let options = crest_storage_etcd::EtcdOptions {
        endpoints: etcd.etcd_servers.clone(),
        prefix,
        tls,
        request_timeout: etcd.etcd_request_timeout,
        ..Default::default()
    };
    let store = crest_storage_etcd::EtcdStore::connect(options)
        .await
        .map_err(|e| format!("cannot reach etcd at {}: {e}", etcd.etcd_servers.join(",")))?;
    let mut election = crest_server::LeaderElection::new(identity());
    election.lease_duration = etcd.leader_elect_lease_duration;
    election.renew_deadline = etcd.leader_elect_renew_deadline;
    election.retry_period = etcd.leader_elect_retry_period;
    if election.renew_deadline >= election.lease_duration
        || election.retry_period >= election.renew_deadline
    {
        return Err(
            "--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline, \
             and that shorter than --leader-elect-lease-duration"
                .into(),
        );
    }
    tracing::info!(
        identity = election.identity.as_str(),
        endpoints = etcd.etcd_servers.join(","),
        prefix = etcd.etcd_prefix.as_str(),
        "storing in etcd"
    );
    Ok((store, Some(election)))
}

/// This replica's holder identity in the controller Lease, as kube-controller-manager's:
/// `hostname_uuid`.
fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "crest".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Go's `time.ParseDuration` (`crest_gofmt::go_parse_duration`) for the non-negative
/// durations flags take: `1h`, `1.5m`, `1h0m0s`, `500ms`; `0` alone.
fn parse_go_duration(text: &str) -> Result<Duration, String> {
    let nanos = crest_gofmt::go_parse_duration(text)?;
    u64::try_from(nanos)
        .map(Duration::from_nanos)
        .map_err(|_| format!("a duration may not be negative: {text:?}"))
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let argv: Vec<String> = std::env::args().collect();
    let invoked_as = argv
        .first()
        .and_then(|a| Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("crest")
        .to_string();
    let cli = match invoked_as.as_str() {
        "kube-apiserver" => Cli {
            command: Command::KubeApiserver {
                args: argv[1..].to_vec(),
            },
        },
        "etcd" => Cli {
            command: Command::Etcd {
                args: argv[1..].to_vec(),
            },
        },
        _ => Cli::parse(),
    };
    // The etcd stand-in only answers /health: one thread, for a small footprint per envtest
    // environment.
    let mut builder = match cli.command {
        Command::Etcd { .. } => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("crest: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let with_name =
        |name: &str, args: Vec<String>| std::iter::once(name.to_string()).chain(args).collect();
    let result = match cli.command {
        Command::KubeApiserver { args } => {
            match envtest::parse::<envtest::ApiserverFlags>(with_name("kube-apiserver", args)) {
                Ok(flags) => runtime.block_on(envtest::run_kube_apiserver(flags)),
                Err(code) => return code,
            }
        }
        Command::Etcd { args } => {
            match envtest::parse::<envtest::EtcdShimFlags>(with_name("etcd", args)) {
                Ok(flags) => runtime.block_on(envtest::run_etcd(flags)),
                Err(code) => return code,
            }
        }
        Command::EnvtestAssets { dir } => envtest::write_assets(&dir),
        Command::Serve {
            data_dir,
            listen,
            history_retention_seconds,
            watch_history_capacity,
            event_ttl,
            tls: _,
            plain_http,
            token_auth_file,
            anonymous_auth,
            pki_dir,
            request_timeout,
            min_request_timeout,
            service_cluster_ip_range,
            advertise_address,
            etcd,
            connections,
            store,
        } => runtime.block_on(serve(ServeOptions {
            data_dir,
            listen,
            retention: Duration::from_secs(history_retention_seconds),
            watch_history_capacity,
            event_ttl,
            plain_http,
            token_auth_file,
            anonymous_auth,
            pki_dir,
            request_timeout,
            min_request_timeout: Duration::from_secs(min_request_timeout),
            kubernetes_service_ip: service_cluster_ip_range,
            advertise_address,
            etcd,
            connections,
            store,
        })),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crest: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_go_duration("1h0m0s"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_go_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("0"), Ok(Duration::ZERO));
        assert!(parse_go_duration("10").is_err());
        assert!(parse_go_duration("1d").is_err());
        assert!(parse_go_duration("").is_err());
    }

    #[test]
    fn plain_http_only_on_loopback() {
        for ok in ["127.0.0.1:6443", "127.1.2.3:0", "[::1]:0"] {
            assert_eq!(check_plain_http(ok.parse().unwrap()), Ok(()), "{ok}");
        }
        for refused in [
            "0.0.0.0:0",
            "[::]:0",
            "10.0.0.1:6443",
            "[::ffff:127.0.0.1]:0",
        ] {
            let err = check_plain_http(refused.parse().unwrap()).unwrap_err();
            assert!(
                err.contains("--plain-http") && err.contains("loopback"),
                "{err}"
            );
        }
    }
}
