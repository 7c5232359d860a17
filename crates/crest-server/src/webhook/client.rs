//! The HTTPS call: TLS verified against the configuration's CA bundle with the Service's DNS
//! name, HTTP/1.1 only (as upstream's webhook client, which turns HTTP/2 off), errors worded as
//! Go's TLS and HTTP clients word them.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// A webhook's answer: status code and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WebhookResponse {
    pub(crate) status: u16,
    pub(crate) body: Bytes,
}

/// Where the system's trust roots are read from when a configuration has no CA bundle.
const SYSTEM_ROOTS: [&str; 3] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// The client configuration trusting `ca_bundle` (PEM), or the system's roots when it is empty
/// (as Go's TLS client does without CA data).
pub(crate) fn tls_config(ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    if ca_bundle.iter().all(u8::is_ascii_whitespace) {
        let system = std::env::var("SSL_CERT_FILE")
            .ok()
            .into_iter()
            .chain(SYSTEM_ROOTS.iter().map(|s| s.to_string()))
            .find_map(|p| std::fs::read(p).ok())
            .unwrap_or_default();
        for cert in CertificateDer::pem_slice_iter(&system).flatten() {
            let _ = roots.add(cert);
        }
    } else {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(ca_bundle)
            .collect::<Result<_, _>>()
            .map_err(|_| "unable to load root certificates: unable to parse bytes as PEM block")?;
        if certs.is_empty() {
            return Err(
                "unable to load root certificates: unable to parse bytes as PEM block".into(),
            );
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| format!("unable to load root certificates: {e}"))?;
        }
    }
    let pinned: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(ca_bundle)
        .flatten()
        .collect();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chains = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .map_err(|e| format!("unable to load root certificates: {e}"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(BundleVerifier { chains, pinned }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Go's certificate verification, which the webhook configuration's `caBundle` means: a chain
/// to one of the bundle's certificates, or the server's certificate itself in the bundle (Go's
/// `x509.Verify` takes a leaf found in the roots as its own chain; envtest's webhook server
/// relies on it, its `caBundle` being the serving certificate). Either way the name and the
/// validity period are checked.
#[derive(Debug)]
struct BundleVerifier {
    chains: Arc<rustls::client::WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl rustls::client::danger::ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let chained = self.chains.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match chained {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer))
                if self
                    .pinned
                    .iter()
                    .any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                let (not_before, not_after) = crest_auth::x509::validity(end_entity.as_ref())
                    .map_err(|_| {
                        rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)
                    })?;
                let at = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
                if at < not_before {
                    return Err(rustls::Error::InvalidCertificate(
                        rustls::CertificateError::NotValidYet,
                    ));
                }
                if at > not_after {
                    return Err(rustls::Error::InvalidCertificate(
                        rustls::CertificateError::Expired,
                    ));
                }
                Ok(rustls::client::danger::ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.chains.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.chains.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.chains.supported_verify_schemes()
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Idle keep-alive connections to webhooks, by address, server name and CA bundle: a
/// conversion webhook called for every read does not pay a TCP and TLS handshake each time.
/// At most [`IDLE_PER_KEY`] idle connections are kept per key; closed ones are dropped.
static IDLE: std::sync::OnceLock<std::sync::Mutex<HashMap<PoolKey, Vec<Sender>>>> =
    std::sync::OnceLock::new();
const IDLE_PER_KEY: usize = 8;

#[derive(Clone, PartialEq, Eq, Hash)]
struct PoolKey {
    addr: SocketAddr,
    server_name: String,
    ca: u64,
}

fn idle() -> std::sync::MutexGuard<'static, HashMap<PoolKey, Vec<Sender>>> {
    IDLE.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// An idle connection for `key` (`true`: reused), or a new one.
async fn connect(
    key: &PoolKey,
    tls: Arc<rustls::ClientConfig>,
    reuse: bool,
) -> Result<(Sender, bool), String> {
    if reuse {
        loop {
            // The pool's lock is released before any await.
            let pooled = idle().get_mut(key).and_then(Vec::pop);
            let Some(mut s) = pooled else { break };
            if !s.is_closed() && s.ready().await.is_ok() {
                return Ok((s, true));
            }
        }
    }
    let tcp = tokio::net::TcpStream::connect(key.addr)
        .await
        .map_err(|e| dial_error(key.addr, &e))?;
    let name = ServerName::try_from(key.server_name.clone()).map_err(|e| e.to_string())?;
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .map_err(|e| tls_error(&e, &key.server_name))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok((sender, false))
}

/// POSTs `body` to `addr` over TLS verified for `server_name` (on an idle keep-alive
/// connection of the same address, name and CA bundle when there is one).
pub(crate) async fn post(
    addr: SocketAddr,
    tls: Arc<rustls::ClientConfig>,
    ca_bundle: &[u8],
    server_name: &str,
    host: &str,
    path_and_query: &str,
    body: Vec<u8>,
) -> Result<WebhookResponse, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ca_bundle.hash(&mut h);
    let key = PoolKey {
        addr,
        server_name: server_name.to_string(),
        ca: h.finish(),
    };
    let body = Bytes::from(body);
    let (mut sender, mut reused) = connect(&key, tls.clone(), true).await?;
    let resp = loop {
        let req = http::Request::post(path_and_query)
            .header(http::header::HOST, host)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, */*")
            .header(http::header::USER_AGENT, "crest")
            .body(Full::new(body.clone()))
            .map_err(|e| e.to_string())?;
        match sender.send_request(req).await {
            Ok(r) => break r,
            // An idle connection the webhook closed meanwhile: once more on a new one.
            Err(_) if reused => {
                (sender, reused) = connect(&key, tls.clone(), false).await?;
            }
            Err(e) => return Err(e.to_string()),
        }
    };
    let keep_alive = !resp
        .headers()
        .get(http::header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if keep_alive && !sender.is_closed() {
        let mut pool = idle();
        let conns = pool.entry(key).or_default();
        if conns.len() < IDLE_PER_KEY {
            conns.push(sender);
        }
    }
    Ok(WebhookResponse { status, body })
}

/// Go's dial error: `dial tcp 127.0.0.1:1: connect: connection refused`.
fn dial_error(addr: SocketAddr, e: &std::io::Error) -> String {
    let what = match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        std::io::ErrorKind::TimedOut => "connection timed out".to_string(),
        _ => e.to_string(),
    };
    format!("dial tcp {addr}: connect: {what}")
}

/// A failed handshake as Go's TLS client words it (`tls: failed to verify certificate:
/// x509: ...`).
fn tls_error(e: &std::io::Error, server_name: &str) -> String {
    use rustls::CertificateError as C;
    let Some(rustls::Error::InvalidCertificate(cert)) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return match e.get_ref() {
            Some(inner) => format!("remote error: {inner}"),
            None => e.to_string(),
        };
    };
    let x509 = match cert {
        // A CA of the same name but another key fails the signature check: to Go, too, the
        // certificate's authority is unknown.
        C::UnknownIssuer | C::BadSignature => {
            "x509: certificate signed by unknown authority".to_string()
        }
        C::NotValidForNameContext { presented, .. } => {
            // Go lists the certificate's DNS names (webpki prints them as `DnsName("x")`).
            let names: Vec<&str> = presented
                .iter()
                .filter_map(|p| p.strip_prefix("DnsName(\"")?.strip_suffix("\")"))
                .collect();
            if names.is_empty() {
                format!("x509: certificate is not valid for any names, but wanted to match {server_name}")
            } else {
                format!(
                    "x509: certificate is valid for {}, not {server_name}",
                    names.join(", ")
                )
            }
        }
        C::NotValidForName => format!("x509: certificate is not valid for {server_name}"),
        C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. } => {
            "x509: certificate has expired or is not yet valid".to_string()
        }
        other => format!("x509: {other:?}"),
    };
    format!("tls: failed to verify certificate: {x509}")
}
