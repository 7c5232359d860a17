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
    server.apply_yaml(CRONTAB_CRD);
    server.kubectl_ok(&[
        "wait",
        "--for",
        "condition=established",
        "crd/crontabs.stable.example.com",
    ]);
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
