//! `--only shape`: the create shape of issue 27's outside load client, next to etcd 3.4's puts
//! of the same bytes in the same run, with each server's CPU per write.
//!
//! Crest gets creates from 64 keep-alive HTTP/1.1 TLS connections that authenticate with the
//! kubeconfig's client certificate (no token), of the seed's CronTab CRD with its schema
//! (cronSpec's pattern, replicas' bounds), each body 2,624 bytes with `metadata.generateName`
//! and an annotation of random letters making up its bulk. etcd gets the same bodies as puts
//! from as many gRPC connections (etcd-client, as `--only etcd`). The server's CPU (utime +
//! stime of /proc/PID/stat) is read around the writes; so is this client's. Rounds alternate
//! etcd and a fresh Crest; the rows have the medians and every round's figures.
//!
//! `callgrind/profile.sh` runs the same shape against a server under callgrind, for instruction
//! counts per create that a noisy machine does not disturb.

use crate::etcd::{cpu_seconds, cpu_split, etcd_puts, etcd_version};
use crate::{median, serve_crd, Row};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The seed's CronTab CRD (shared/seeds/002: cronSpec's pattern, image, replicas 1..10).
const SHAPE_CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"cronSpec":{"type":"string","pattern":"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},"image":{"type":"string"},"replicas":{"type":"integer","minimum":1,"maximum":10}}}}}}}]}}"#;

const COLLECTION: &str = crate::COLLECTION;

/// The size of every body, as the outside client sent.
pub(crate) const BODY_BYTES: usize = 2624;

/// Body `i`: a CronTab with `generateName` whose annotation of random letters (seeded by `i`)
/// brings the JSON to [`BODY_BYTES`].
pub(crate) fn body(i: usize) -> String {
    const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let with = |pad: &str| {
        format!(
            r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{{"generateName":"ct-","namespace":"default","annotations":{{"bench.example.com/pad":"{pad}"}}}},"spec":{{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":5}}}}"#
        )
    };
    let len = BODY_BYTES - with("").len();
    // splitmix64 of the index seeds an xorshift64: the same index, the same letters.
    let mut x = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x = (x ^ (x >> 31)) | 1;
    let pad: String = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            LETTERS[(x % 52) as usize] as char
        })
        .collect();
    with(&pad)
}

/// A value of the kubeconfig's user (`client-certificate-data` ...), base64-decoded.
fn kubeconfig_data(kubeconfig: &str, field: &str) -> Vec<u8> {
    use base64::Engine;
    let value = kubeconfig
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("kubeconfig has no {field}"));
    base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .unwrap_or_else(|e| panic!("kubeconfig {field}: {e}"))
}

/// TLS as a kubeconfig client: the kubeconfig's CA and client certificate, no ALPN (HTTP/1.1).
fn client_tls(kubeconfig: &str) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let ca = kubeconfig_data(kubeconfig, "certificate-authority-data");
    let cert = kubeconfig_data(kubeconfig, "client-certificate-data");
    let key = kubeconfig_data(kubeconfig, "client-key-data");
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&ca) {
        roots.add(c.expect("CA PEM")).expect("CA");
    }
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert)
        .map(|c| c.expect("client certificate PEM"))
        .collect();
    let key = PrivateKeyDer::from_pem_slice(&key).expect("client key PEM");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(chain, key)
    .expect("client certificate");
    Arc::new(config)
}

type Sender = hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>;

async fn open(host: &str, tls: Arc<rustls::ClientConfig>) -> Sender {
    let stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("server name");
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(name, stream)
        .await
        .expect("TLS handshake");
    let (tx, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .expect("HTTP/1.1 handshake");
    tokio::spawn(conn);
    tx
}

struct CrestFigures {
    rate: f64,
    cpu_us: f64,
    /// The system (kernel) part of `cpu_us`.
    sys_us: f64,
    client_cpu_us: f64,
}

/// N creates of [`body`] from `clients` certificate-authenticated connections to a fresh
/// server started from `binary`.
async fn crest_round(binary: &Path, n: usize, clients: usize) -> CrestFigures {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = crate::start(binary, dir.path());
    let admin = crate::client(&server.base);
    serve_crd(&admin, &server.base, SHAPE_CRD, COLLECTION).await;
    let kubeconfig = std::fs::read_to_string(dir.path().join("kubeconfig")).expect("kubeconfig");
    let tls = client_tls(&kubeconfig);
    let host = crate::host_of(&server.base);
    let mut conns = vec![];
    for _ in 0..clients {
        conns.push(open(&host, tls.clone()).await);
    }
    let next = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let (pid, me) = (server.child.id(), std::process::id());
    let ((user0, sys0), me0) = (cpu_split(pid), cpu_seconds(me));
    let t0 = Instant::now();
    let mut tasks = vec![];
    for mut tx in conns {
        let (next, failed, host) = (next.clone(), failed.clone(), host.clone());
        tasks.push(tokio::spawn(async move {
            use http_body_util::BodyExt;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let req = hyper::Request::post(COLLECTION)
                    .header("Host", &host)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json")
                    .body(http_body_util::Full::new(bytes::Bytes::from(body(i))))
                    .expect("request");
                let ok = match tx.ready().await {
                    Ok(()) => match tx.send_request(req).await {
                        Ok(resp) => {
                            let status = resp.status().as_u16();
                            resp.into_body().collect().await.is_ok() && status == 201
                        }
                        Err(_) => false,
                    },
                    Err(_) => false,
                };
                if !ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("client task");
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let (user1, sys1) = cpu_split(pid);
    let cpu_us = (user1 + sys1 - user0 - sys0) * 1e6 / n as f64;
    let sys_us = (sys1 - sys0) * 1e6 / n as f64;
    let client_cpu_us = (cpu_seconds(me) - me0) * 1e6 / n as f64;
    let failed = failed.load(Ordering::Relaxed);
    assert!(failed == 0, "{failed} of {n} creates failed");
    drop(server);
    CrestFigures {
        rate: n as f64 / elapsed,
        cpu_us,
        sys_us,
        client_cpu_us,
    }
}

pub(crate) async fn compare(binary: &Path, n: usize, clients: usize, rounds: usize) -> Vec<Row> {
    let version = etcd_version();
    let (mut etcd, mut crest) = (vec![], vec![]);
    for r in 0..rounds.max(1) {
        let e = etcd_puts(n, clients, body).await;
        eprintln!(
            "shape round {}: etcd {:.0} puts/s, {:.0} us CPU/put ({:.0} us system)",
            r + 1,
            e.rate,
            e.cpu_us,
            e.sys_us
        );
        let c = crest_round(binary, n, clients).await;
        eprintln!(
            "shape round {}: crest {:.0} creates/s = {:.2}x, {:.0} us CPU/create ({:.0} us system) = {:.2}x etcd's per put (client {:.0} us)",
            r + 1,
            c.rate,
            c.rate / e.rate,
            c.cpu_us,
            c.sys_us,
            c.cpu_us / e.cpu_us,
            c.client_cpu_us
        );
        etcd.push(e);
        crest.push(c);
    }
    let list = |v: Vec<f64>| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ratios = |f: &dyn Fn(usize) -> f64| {
        (0..crest.len())
            .map(|i| format!("{:.2}", f(i)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let e_rate = median(etcd.iter().map(|f| f.rate).collect());
    let e_cpu = median(etcd.iter().map(|f| f.cpu_us).collect());
    let c_rate = median(crest.iter().map(|f| f.rate).collect());
    let c_cpu = median(crest.iter().map(|f| f.cpu_us).collect());
    let cpu_ratio = median(
        (0..crest.len())
            .map(|i| crest[i].cpu_us / etcd[i].cpu_us)
            .collect(),
    );
    let rate_ratio = median(
        (0..crest.len())
            .map(|i| crest[i].rate / etcd[i].rate)
            .collect(),
    );
    let client = median(crest.iter().map(|f| f.client_cpu_us).collect());
    vec![
        (
            format!("{version}: puts of {n} {BODY_BYTES}-byte CronTabs, {clients} gRPC clients (median of {rounds})"),
            format!(
                "{e_rate:.0} /s, {e_cpu:.0} us server CPU per put (rounds: {} /s; {} us)",
                list(etcd.iter().map(|f| f.rate).collect()),
                list(etcd.iter().map(|f| f.cpu_us).collect())
            ),
            "reference".into(),
        ),
        (
            format!(
                "Crest: creates of {n} {BODY_BYTES}-byte CronTabs (seed schema, generateName, \
                 random-letter annotation), {clients} TLS keep-alive HTTP/1.1 clients with the \
                 kubeconfig's client certificate (median of {rounds})"
            ),
            format!(
                "{c_rate:.0} /s = {rate_ratio:.2}x etcd, {c_cpu:.0} us server CPU per create \
                 (rounds: {} /s; {} us; client {client:.0} us per create)",
                list(crest.iter().map(|f| f.rate).collect()),
                list(crest.iter().map(|f| f.cpu_us).collect())
            ),
            String::new(),
        ),
        (
            "Crest CPU per create / etcd CPU per put (same round)".into(),
            format!(
                "{cpu_ratio:.2}x (rounds: {})",
                ratios(&|i| crest[i].cpu_us / etcd[i].cpu_us)
            ),
            "<= 0.6x (goal 0.4x)".into(),
        ),
    ]
}
