//! Crest as envtest's control plane: the one binary started as `kube-apiserver` or `etcd` (by the
//! name it runs under, a symlink, or as `crest kube-apiserver` / `crest etcd`), taking the flags
//! controller-runtime's envtest passes those binaries; and `crest envtest-assets DIR`, which lays
//! out such a `KUBEBUILDER_ASSETS` directory.
//!
//! The state lives where envtest expects it, in the `etcd` process's `--data-dir`, but that
//! process speaks no etcd protocol: it answers `GET /health` (envtest's readiness probe) and
//! `GET /crest/v1/store` with its data dir. `kube-apiserver` asks its `--etcd-servers` for that
//! first: a Crest `etcd` answers, and the API server opens the embedded store in that data dir
//! (the store's lock keeps a second server out); anything else is taken for a real etcd and
//! stored in with the etcd backend. So objects outlive a restart of `kube-apiserver` while `etcd`
//! runs, and two environments are as isolated as their data dirs.

use crate::tls;
use clap::{ArgAction, Parser};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The path a Crest `etcd` names its data dir under.
const STORE_PATH: &str = "/crest/v1/store";

/// A boolean flag as pflag takes it: `--flag`, `--flag=true`, `--flag=false`.
fn pflag_bool(s: &str) -> Result<bool, String> {
    match s {
        "true" | "1" | "t" | "T" | "TRUE" | "True" => Ok(true),
        "false" | "0" | "f" | "F" | "FALSE" | "False" => Ok(false),
        _ => Err(format!("strconv.ParseBool: parsing {s:?}: invalid syntax")),
    }
}

/// kube-apiserver's flags, by their real names: the ones envtest passes and the ones users add
/// through envtest's `Configure()`.
#[derive(Parser, Debug)]
#[command(
    name = "kube-apiserver",
    about = "The Kubernetes API server (Crest). Serves the Kubernetes API on Crest's store: the \
             embedded one in a Crest etcd's data dir, or a real etcd.",
    disable_version_flag = true
)]
pub(crate) struct ApiserverFlags {
    /// The port HTTPS is served on.
    #[arg(long, default_value_t = 6443)]
    secure_port: u16,
    /// The address HTTPS is served on.
    #[arg(long, default_value = "0.0.0.0")]
    bind_address: IpAddr,
    /// The directory of the serving certificate (apiserver.crt, apiserver.key); a self-signed
    /// pair is generated there when absent.
    #[arg(long, default_value = "/var/run/kubernetes")]
    cert_dir: PathBuf,
    /// The serving certificate (default: CERT_DIR/apiserver.crt).
    #[arg(long, requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The serving certificate's key (default: CERT_DIR/apiserver.key).
    #[arg(long, requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// Client certificates signed by one of these CAs authenticate (CN the user, O the groups).
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// The store: a Crest etcd's client URL, or a real etcd's (comma-separated).
    #[arg(long, value_delimiter = ',', required = true)]
    etcd_servers: Vec<String>,
    /// The prefix of every key in a real etcd.
    #[arg(long, default_value = "/registry")]
    etcd_prefix: String,
    /// The issuer of ServiceAccount tokens (repeatable: the first signs, all are accepted).
    #[arg(long, action = ArgAction::Append)]
    service_account_issuer: Vec<String>,
    /// PEM files of the keys ServiceAccount tokens are verified with (public keys, private
    /// keys or certificates; repeatable).
    #[arg(long, action = ArgAction::Append)]
    service_account_key_file: Vec<PathBuf>,
    /// The private key ServiceAccount tokens are signed with.
    #[arg(long)]
    service_account_signing_key_file: Option<PathBuf>,
    /// The audiences of the API (default: the issuers).
    #[arg(long, value_delimiter = ',')]
    api_audiences: Vec<String>,
    /// Static bearer tokens (`token,user,uid,"group1,group2"`).
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
    /// Requests without credentials are served as `system:anonymous`.
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true",
          value_parser = pflag_bool)]
    anonymous_auth: bool,
    /// Only RBAC is served (`RBAC`, optionally with `Node` or `AlwaysAllow` named too).
    #[arg(long, value_delimiter = ',', default_value = "RBAC")]
    authorization_mode: Vec<String>,
    /// The range Service cluster IPs come from; its first address is the `kubernetes` Service's.
    #[arg(long, default_value = "10.0.0.0/24")]
    service_cluster_ip_range: String,
    /// The address the `kubernetes` Service's Endpoints name.
    #[arg(long)]
    advertise_address: Option<IpAddr>,
    /// How long a request that is not a watch may take.
    #[arg(long, default_value = "1m0s", value_parser = crate::parse_go_duration)]
    request_timeout: Duration,
    /// The minimum seconds a watch is kept open before it is timed out.
    #[arg(long, default_value_t = 1800)]
    min_request_timeout: u64,
    /// How long an Event is kept after its last write.
    #[arg(long, default_value = "1h", value_parser = crate::parse_go_duration)]
    event_ttl: Duration,
    /// Accepted; Crest admits no privileged containers (it serves no Pods).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_parser = pflag_bool)]
    allow_privileged: Option<bool>,
    /// Accepted; Crest has no admission plugins of these names to turn off.
    #[arg(long, value_delimiter = ',')]
    disable_admission_plugins: Vec<String>,
    /// Accepted; Crest's admission is built in.
    #[arg(long, value_delimiter = ',')]
    enable_admission_plugins: Vec<String>,
    /// Accepted (`Gate=true,...`); Crest's features are on.
    #[arg(long)]
    feature_gates: Option<String>,
    /// Accepted (`api/all=true,...`); Crest serves its APIs always.
    #[arg(long)]
    runtime_config: Option<String>,
    /// Log verbosity (accepted; RUST_LOG sets Crest's).
    #[arg(long = "v")]
    verbosity: Option<String>,
    /// Accepted: front-proxy authentication is not served.
    #[arg(long)]
    requestheader_client_ca_file: Option<PathBuf>,
    #[arg(long, value_delimiter = ',')]
    requestheader_allowed_names: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    requestheader_username_headers: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    requestheader_group_headers: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    requestheader_extra_headers_prefix: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    requestheader_uid_headers: Vec<String>,
}

/// etcd's flags as envtest passes them (and a few more that are commonly given).
#[derive(Parser, Debug)]
#[command(
    name = "etcd",
    about = "The store of a Crest control plane started as etcd: it keeps the data dir that \
             Crest's kube-apiserver stores in, and answers /health. It speaks no etcd protocol.",
    disable_version_flag = true
)]
pub(crate) struct EtcdShimFlags {
    /// Where the store lives.
    #[arg(long, default_value = "default.etcd")]
    data_dir: PathBuf,
    /// The URLs to answer on (http, comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "http://localhost:2379")]
    listen_client_urls: Vec<String>,
    /// Accepted.
    #[arg(long, value_delimiter = ',')]
    advertise_client_urls: Vec<String>,
    /// Accepted: there are no peers.
    #[arg(long, value_delimiter = ',')]
    listen_peer_urls: Vec<String>,
    /// Accepted: Crest's store always syncs.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_parser = pflag_bool)]
    unsafe_no_fsync: Option<bool>,
    /// Accepted.
    #[arg(long)]
    name: Option<String>,
    /// Accepted.
    #[arg(long)]
    log_level: Option<String>,
}

/// Parses `args` (the program name first) as pflag would: `--help` prints the flags and exits
/// 0, an unknown flag exits 1 naming it (`Error: unknown flag: --x`).
pub(crate) fn parse<P: Parser>(args: Vec<String>) -> Result<P, std::process::ExitCode> {
    use clap::error::{ContextKind, ErrorKind};
    match P::try_parse_from(args) {
        Ok(p) => Ok(p),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                let _ = e.print();
                Err(std::process::ExitCode::SUCCESS)
            }
            ErrorKind::UnknownArgument => {
                let flag = e
                    .get(ContextKind::InvalidArg)
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let flag = flag.split('=').next().unwrap_or_default();
                eprintln!("Error: unknown flag: {flag}");
                Err(std::process::ExitCode::FAILURE)
            }
            _ => {
                let _ = e.print();
                Err(std::process::ExitCode::FAILURE)
            }
        },
    }
}

/// `host:port` of an `http://host:port` URL (localhost as 127.0.0.1).
fn url_host_port(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url:?}: only http:// URLs are served"))?;
    let host_port = rest.split('/').next().unwrap_or_default();
    let host_port = match host_port.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => host_port.to_string(),
    };
    Ok(host_port)
}

/// `crest etcd`: keeps the data dir and answers on every client URL until SIGTERM.
pub(crate) async fn run_etcd(f: EtcdShimFlags) -> Result<(), String> {
    std::fs::create_dir_all(&f.data_dir)
        .map_err(|e| format!("cannot create {}: {e}", f.data_dir.display()))?;
    crate::pki::private_dir(&f.data_dir, "data dir")?;
    let dir =
        std::fs::canonicalize(&f.data_dir).map_err(|e| format!("{}: {e}", f.data_dir.display()))?;
    let answer = Arc::new(serde_json::json!({ "dataDir": dir }).to_string());
    for url in &f.listen_client_urls {
        let addr = url_host_port(url)?;
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        tokio::spawn(serve_shim(listener, answer.clone()));
    }
    if f.unsafe_no_fsync == Some(true) {
        tracing::info!("--unsafe-no-fsync is accepted without effect: Crest's store syncs");
    }
    tracing::info!(data_dir = %dir.display(), urls = f.listen_client_urls.join(","), "crest etcd is serving");
    crate::shutdown_signal().await;
    Ok(())
}

async fn serve_shim(listener: tokio::net::TcpListener, answer: Arc<String>) {
    use http_body_util::Full;
    use hyper::body::Bytes;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, say: wait instead of spinning.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let answer = answer.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: hyper::Request<_>| {
                let (status, body) = match req.uri().path() {
                    "/health" | "/readyz" | "/livez" => {
                        (200, r#"{"health":"true","reason":""}"#.to_string())
                    }
                    "/version" => (
                        200,
                        r#"{"etcdserver":"3.5.0","etcdcluster":"3.5.0"}"#.into(),
                    ),
                    STORE_PATH => (200, answer.as_str().to_string()),
                    _ => (404, "404 page not found\n".into()),
                };
                let resp = hyper::Response::builder()
                    .status(status)
                    .header("Content-Type", "application/json")
                    .body(Full::new(Bytes::from(body)));
                async move { resp }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// The data dir a Crest `etcd` at `url` keeps, or `None` when something else answers there (a
/// real etcd). Fails when nothing answers.
async fn crest_etcd_data_dir(url: &str) -> Result<Option<PathBuf>, String> {
    use http_body_util::{BodyExt, Empty};
    let Ok(addr) = url_host_port(url) else {
        // https: a real etcd with TLS.
        return Ok(None);
    };
    let ask = async {
        let stream = tokio::net::TcpStream::connect(&addr).await?;
        let (mut tx, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(std::io::Error::other)?;
        tokio::spawn(conn);
        let req = hyper::Request::get(STORE_PATH)
            .header("Host", &addr)
            .body(Empty::<hyper::body::Bytes>::new())
            .map_err(std::io::Error::other)?;
        let resp = tx.send_request(req).await.map_err(std::io::Error::other)?;
        let ok = resp.status() == 200;
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(std::io::Error::other)?
            .to_bytes();
        Ok::<_, std::io::Error>((ok, body))
    };
    let (ok, body) = tokio::time::timeout(Duration::from_secs(5), ask)
        .await
        .map_err(|_| format!("{url} did not answer within 5s"))?
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    if !ok {
        return Ok(None);
    }
    // A real etcd's gRPC gateway does not serve this path; an answer without a data dir is not
    // Crest's either.
    Ok(serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("dataDir")?.as_str().map(PathBuf::from)))
}

/// The serving certificate and key (PEM): the flags', CERT_DIR's, or a self-signed pair
/// generated into CERT_DIR, as kube-apiserver does.
fn serving_pair(f: &ApiserverFlags) -> Result<(Vec<u8>, Vec<u8>), String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    if let (Some(c), Some(k)) = (&f.tls_cert_file, &f.tls_private_key_file) {
        return Ok((read(c)?, read(k)?));
    }
    let (cert, key) = (
        f.cert_dir.join("apiserver.crt"),
        f.cert_dir.join("apiserver.key"),
    );
    if cert.exists() && key.exists() {
        return Ok((read(&cert)?, read(&key)?));
    }
    std::fs::create_dir_all(&f.cert_dir)
        .map_err(|e| format!("cannot create {}: {e}", f.cert_dir.display()))?;
    let (cert_pem, key_pem) = tls::self_signed(f.bind_address)?;
    crate::pki::write_new(&cert, cert_pem.as_bytes(), 0o644)
        .map_err(|e| format!("cannot write {}: {e}", cert.display()))?;
    crate::pki::write_new(&key, key_pem.as_bytes(), 0o600)
        .map_err(|e| format!("cannot write {}: {e}", key.display()))?;
    Ok((cert_pem.into_bytes(), key_pem.into_bytes()))
}

/// The authenticator of the flags: client certificates of `--client-ca-file`, ServiceAccount
/// tokens of the key files and issuers, `--token-auth-file`, anonymous unless turned off.
fn authentication(f: &ApiserverFlags) -> Result<crest_server::Authentication, String> {
    use crest_auth::authenticator::Authenticator;
    use crest_auth::keys::{PublicKey, SigningKey};
    use crest_auth::serviceaccount::Verifier;
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let signer = match &f.service_account_signing_key_file {
        Some(p) => Some(
            SigningKey::from_pem(&read(p)?)
                .map_err(|e| format!("{}: {}", p.display(), e.message()))?,
        ),
        None => None,
    };
    let mut keys = vec![];
    for p in &f.service_account_key_file {
        keys.extend(
            PublicKey::many_from_pem(&read(p)?)
                .map_err(|e| format!("{}: {}", p.display(), e.message()))?,
        );
    }
    if keys.is_empty() {
        if let Some(s) = &signer {
            keys.push(s.public_key().clone());
        }
    }
    let issuers = if f.service_account_issuer.is_empty() {
        vec![crate::auth::ISSUER.to_string()]
    } else {
        f.service_account_issuer.clone()
    };
    let audiences = if f.api_audiences.is_empty() {
        issuers.clone()
    } else {
        f.api_audiences.clone()
    };
    let mut authenticator = Authenticator::new(Verifier {
        issuers: issuers.clone(),
        keys,
        api_audiences: audiences,
    });
    authenticator.anonymous = f.anonymous_auth;
    if let Some(p) = &f.token_auth_file {
        authenticator.token_file = Some(crest_auth::tokenfile::TokenFile::parse(
            &read(p)?,
            &p.display().to_string(),
        )?);
    }
    if let Some(p) = &f.client_ca_file {
        authenticator.client_ca = Some(
            crest_auth::x509::ClientCa::from_pem(&read(p)?)
                .map_err(|e| format!("{}: {}", p.display(), e.message()))?,
        );
    }
    Ok(crest_server::Authentication {
        authenticator: Arc::new(authenticator),
        signer: signer.map(Arc::new),
        issuer: issuers[0].clone(),
    })
}

/// Flags taken without effect in Crest, said once each in the log.
fn note_accepted(f: &ApiserverFlags) {
    let mut said = vec![];
    if f.allow_privileged.is_some() {
        said.push("--allow-privileged (Crest serves no Pods)".to_string());
    }
    if !f.disable_admission_plugins.is_empty() {
        said.push(format!(
            "--disable-admission-plugins={} (Crest has no such admission plugins)",
            f.disable_admission_plugins.join(",")
        ));
    }
    if !f.enable_admission_plugins.is_empty() {
        said.push(format!(
            "--enable-admission-plugins={} (Crest's admission is built in)",
            f.enable_admission_plugins.join(",")
        ));
    }
    if f.feature_gates.is_some() {
        said.push("--feature-gates (Crest's features are always on)".into());
    }
    if f.runtime_config.is_some() {
        said.push("--runtime-config (Crest serves all of its APIs)".into());
    }
    if f.requestheader_client_ca_file.is_some() {
        said.push("--requestheader-* (front-proxy authentication is not served)".into());
    }
    for mode in &f.authorization_mode {
        if mode != "RBAC" {
            said.push(format!("--authorization-mode={mode} (only RBAC is served)"));
        }
    }
    for s in said {
        tracing::info!("accepted without effect: {s}");
    }
}

/// `crest kube-apiserver`: serves until SIGTERM.
pub(crate) async fn run_kube_apiserver(f: ApiserverFlags) -> Result<(), String> {
    note_accepted(&f);
    let listen = SocketAddr::new(f.bind_address, f.secure_port);
    let kubernetes_service_ip = crate::parse_service_range(&f.service_cluster_ip_range)?;
    let first = f.etcd_servers.first().cloned().unwrap_or_default();
    let storage: Arc<dyn crest_storage::Storage> = match crest_etcd_data_dir(&first).await {
        Ok(Some(dir)) => {
            let store = crest_storage::EmbeddedStore::open(&dir, Default::default())
                .map_err(|e| format!("cannot open the store in {}: {e}", dir.display()))?;
            tracing::info!(data_dir = %dir.display(), "storing in the Crest etcd's data dir");
            store
        }
        Ok(None) | Err(_) => {
            let options = crest_storage_etcd::EtcdOptions {
                endpoints: f.etcd_servers.clone(),
                prefix: format!("/{}", f.etcd_prefix.trim_matches('/')),
                ..Default::default()
            };
            crest_storage_etcd::EtcdStore::connect(options)
                .await
                .map_err(|e| format!("cannot reach etcd at {}: {e}", f.etcd_servers.join(",")))?
        }
    };
    let (cert, key) = serving_pair(&f)?;
    let tls_config = tls::from_pems(&cert, &key, f.client_ca_file.is_some())?;
    let authn = authentication(&f)?;
    let config = crest_server::Config {
        listen,
        history_retention: Duration::from_secs(300),
        watch_history_capacity: 10_000,
        event_ttl: f.event_ttl,
        tls: None,
        authenticator: None,
        leader_election: None,
        request_timeout: f.request_timeout,
        min_request_timeout: Duration::from_secs(f.min_request_timeout),
        connections: crest_server::ConnectionLimits::default(),
        kubernetes_service_ip,
        advertise_address: f.advertise_address,
    };
    let security = crest_server::Security {
        tls: Some(tls_config),
        authenticator: Some(authn),
        root_ca: None,
    };
    let running = crest_server::start_with(config, storage, None, async { Ok(security) })
        .await
        .map_err(|e| format!("cannot start: {e}"))?;
    tracing::info!(listen = %running.local_addr, "crest kube-apiserver is serving");
    crate::shutdown_signal().await;
    tracing::info!("shutting down");
    running.shutdown().await;
    Ok(())
}

/// `crest envtest-assets DIR`: `kube-apiserver` and `etcd` as symlinks to this binary, and
/// `kubectl` to the one on PATH, if any.
pub(crate) fn write_assets(dir: &Path) -> Result<(), String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let link = |target: &Path, name: &str| -> Result<(), String> {
        let path = dir.join(name);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(target, &path)
            .map_err(|e| format!("cannot link {}: {e}", path.display()))
    };
    link(&me, "kube-apiserver")?;
    link(&me, "etcd")?;
    let kubectl = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("kubectl"))
            .find(|p| p.is_file())
    });
    if let Some(k) = kubectl {
        link(&k, "kubectl")?;
    }
    println!("{}", dir.display());
    Ok(())
}
