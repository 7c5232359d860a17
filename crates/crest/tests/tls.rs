//! `crest serve --tls`: HTTPS with ALPN (h2 and HTTP/1.1) and a kubeconfig that trusts the
//! server's private CA, so kubectl works over TLS without prompts or flags.

mod common;

use common::{Server, CRONTAB_CRD, MY_CRONTAB};

/// curl's negotiated HTTP version for `path`, with extra curl flags.
fn http_version(server: &Server, path: &str, flags: &[&str]) -> String {
    let url = format!("{}{path}", server.base);
    let mut args = vec!["-fsS", "-o", "/dev/null", "-w", "%{http_version}"];
    args.extend_from_slice(flags);
    args.push(&url);
    let out = server
        .curl(&args)
        .expect("curl is required for these tests");
    assert!(
        out.status.success(),
        "curl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn kubectl_works_over_tls_with_the_written_kubeconfig() {
    let server = Server::start_with(&["--tls"]);
    assert!(
        server.base.starts_with("https://127.0.0.1:"),
        "{}",
        server.base
    );
    let config = std::fs::read_to_string(&server.kubeconfig).expect("kubeconfig");
    assert!(config.contains("certificate-authority-data: "), "{config}");
    assert!(config.contains("client-certificate-data: "), "{config}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&server.kubeconfig)
            .expect("kubeconfig metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the kubeconfig holds a client key");
        let mode = std::fs::metadata(server.dir.join("pki/ca.key"))
            .expect("ca.key")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // stdin is closed: a kubeconfig without credentials would make kubectl prompt and fail.
    let out = server.kubectl_ok(&["get", "namespaces", "-o", "name"]);
    assert!(out.contains("namespace/default"), "{out}");
    server.install_crd(CRONTAB_CRD);
    server.apply_yaml(MY_CRONTAB);
    let out = server.kubectl_ok(&["get", "crontabs", "-o", "name"]);
    assert_eq!(out.trim(), "crontab.stable.example.com/my-new-cron-object");
}

#[test]
fn alpn_offers_h2_and_http1() {
    let server = Server::start_with(&["--tls"]);
    assert_eq!(http_version(&server, "/version", &[]), "2");
    assert_eq!(http_version(&server, "/version", &["--http1.1"]), "1.1");
    // A plain-HTTP request to the TLS port is refused, not answered in clear text.
    let plain = server.base.replacen("https://", "http://", 1);
    let out = std::process::Command::new("curl")
        .args(["-sS", "-m", "5", &format!("{plain}/version")])
        .output()
        .expect("curl");
    assert!(!out.status.success(), "plain HTTP must not be served");
}

#[test]
fn the_ca_survives_restarts_so_old_kubeconfigs_stay_valid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_in_with(dir.path(), &["--tls"]);
    let ca = std::fs::read(dir.path().join("pki/ca.crt")).expect("ca.crt");
    let kept = dir.path().join("old-ca.crt");
    std::fs::write(&kept, &ca).expect("copy ca");
    server.stop();

    let server = Server::start_in_with(dir.path(), &["--tls"]);
    assert_eq!(
        std::fs::read(dir.path().join("pki/ca.crt")).expect("ca.crt"),
        ca,
        "the CA is kept across restarts"
    );
    // The new serving certificate verifies against the CA saved before the restart.
    let out = std::process::Command::new("curl")
        .arg("--cacert")
        .arg(&kept)
        .args(["-fsS", &format!("{}/readyz", server.base)])
        .output()
        .expect("curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok");
    server.kubectl_ok(&["get", "namespaces"]);
}

/// Seconds until the server closes `conn` while the client sends nothing (None: still open
/// after `limit` seconds).
fn seconds_until_closed(conn: &mut impl std::io::Read, limit: u64) -> Option<u64> {
    let started = std::time::Instant::now();
    let mut buf = [0u8; 64];
    loop {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) if started.elapsed().as_secs() < limit => {
                return Some(started.elapsed().as_secs())
            }
            Ok(_) => continue,
            Err(_) => return None,
        }
    }
}

#[test]
fn silent_clients_are_disconnected() {
    use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName};
    use std::net::TcpStream;
    use std::sync::Arc;
    use std::time::Duration;

    let server = Server::start_with(&["--tls"]);
    let addr = server.base.trim_start_matches("https://").to_string();
    let limit = 45;

    // No ClientHello at all: the handshake times out.
    let mut raw = TcpStream::connect(&addr).expect("connect");
    raw.set_read_timeout(Some(Duration::from_secs(limit)))
        .expect("timeout");
    let closed = seconds_until_closed(&mut raw, limit);
    assert!(closed.is_some_and(|s| s <= 12), "no handshake: {closed:?}");

    // A finished handshake and then no request: the header read timeout closes it.
    let ca = CertificateDer::from_pem_file(server.dir.join("pki/ca.crt")).expect("ca.crt");
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).expect("root");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = ServerName::try_from("localhost").expect("name");
    let conn = rustls::ClientConnection::new(Arc::new(config), name).expect("client");
    let sock = TcpStream::connect(&addr).expect("connect");
    sock.set_read_timeout(Some(Duration::from_secs(limit)))
        .expect("timeout");
    let mut tls = rustls::StreamOwned::new(conn, sock);
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .expect("TLS handshake with the server");
    }
    let closed = seconds_until_closed(&mut tls, limit);
    assert!(closed.is_some(), "an idle TLS connection stays open");
}
