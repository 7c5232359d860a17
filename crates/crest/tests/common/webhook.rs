//! A real HTTPS webhook on 127.0.0.1 (certificates from a test CA) and a Crest server in the
//! test's process, for the webhook resolver and conversion webhooks.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::sync::Arc;

/// A CA named `ca_name` (its PEM) and a server configuration with a certificate it issued for
/// `names`.
pub(crate) fn issue(ca_name: &str, names: &[&str]) -> (String, rustls::ServerConfig) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        .expect("params")
        .signed_by(&key, &ca_cert, &ca_key)
        .expect("leaf");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .expect("server config");
    (ca_cert.pem(), config)
}

/// What a test webhook answers: from the request path, Host header and JSON body.
pub(crate) type Handler = fn(&str, &str, &Value) -> Value;

/// A handler answering `{"path": ..., "host": ..., "got": <body>}`.
pub(crate) fn echo(path: &str, host: &str, got: &Value) -> Value {
    json!({"path": path, "host": host, "got": got})
}

/// An HTTPS server on 127.0.0.1 answering every POST with what `handler` makes of it.
pub(crate) fn https_server(config: rustls::ServerConfig, handler: Handler) -> u16 {
    https_server_counted(config, handler).0
}

/// [`https_server`], keeping connections alive, with the number of connections it accepted.
pub(crate) fn https_server_counted(
    config: rustls::ServerConfig,
    handler: Handler,
) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let config = Arc::new(config);
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let config = config.clone();
            std::thread::spawn(move || {
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // One request after another on the connection, until the client closes it.
                loop {
                    let (head_end, length) = loop {
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (i + 4, length);
                        }
                        let Ok(n) = tls.read(&mut chunk) else { return };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    };
                    while buf.len() < head_end + length {
                        let Ok(n) = tls.read(&mut chunk) else { return };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                    let host = head
                        .lines()
                        .find_map(|l| {
                            l.strip_prefix("host: ")
                                .or_else(|| l.strip_prefix("Host: "))
                        })
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    let got: Value = serde_json::from_slice(&buf[head_end..head_end + length])
                        .unwrap_or_default();
                    buf.drain(..head_end + length);
                    let body = handler(&path, &host, &got).to_string();
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if tls.write_all(resp.as_bytes()).is_err() || tls.flush().is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, accepted)
}

/// A Crest server in this process, so its resolver can be called: HTTPS with a certificate of
/// a test CA, requests authenticated (an admin token); [`super::client_for`] its base URL gives
/// a client trusting that CA, as the admin.
pub(crate) async fn in_process() -> (crest_server::Running, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = crest_storage::EmbeddedStore::open(dir.path(), Default::default()).expect("store");
    let (ca, mut tls) = issue("in-process-ca", &["127.0.0.1", "localhost"]);
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let token = crest_auth::tokenfile::random_token().expect("token");
    let mut tokens = crest_auth::tokenfile::TokenFile::default();
    tokens.insert(
        token.clone(),
        crest_api::UserInfo {
            name: "crest-admin".into(),
            groups: vec!["system:masters".into()],
            ..Default::default()
        },
    );
    let signer = crest_auth::keys::SigningKey::generate().expect("signing key");
    let issuer = "https://kubernetes.default.svc.cluster.local".to_string();
    let mut authenticator =
        crest_auth::authenticator::Authenticator::new(crest_auth::serviceaccount::Verifier {
            issuers: vec![issuer.clone()],
            keys: vec![signer.public_key().clone()],
            api_audiences: vec![issuer.clone()],
        });
    authenticator.token_file = Some(tokens);
    let config = crest_server::Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        tls: Some(Arc::new(tls)),
        authenticator: Some(crest_server::Authentication {
            authenticator: Arc::new(authenticator),
            signer: Some(Arc::new(signer)),
            issuer,
        }),
        ..Default::default()
    };
    let running = crest_server::start(config, store).await.expect("start");
    let base = format!("https://127.0.0.1:{}", running.local_addr.port());
    super::register(&base, Some(ca.into_bytes()), &token);
    (running, dir, base)
}
