//! `crest serve` serves HTTPS by default: ALPN (h2 and HTTP/1.1), a kubeconfig that trusts the
//! server's private CA and authenticates as the admin (client certificate and token), so kubectl
//! works over TLS without prompts or flags; client certificates are verified by the
//! authenticator (a foreign CA's is a 401, not a failed handshake); keys are owner-only.

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
fn kubectl_works_over_https_by_default_with_the_written_kubeconfig() {
    let server = Server::start();
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
    let server = Server::start();
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
    let server = Server::start_in(dir.path());
    let ca = std::fs::read(dir.path().join("pki/ca.crt")).expect("ca.crt");
    let kept = dir.path().join("old-ca.crt");
    std::fs::write(&kept, &ca).expect("copy ca");
    server.stop();

    // `--tls`, HTTPS before it was the default, is still accepted.
    let server = Server::start_in_with(dir.path(), &["--tls"]);
    assert!(server.base.starts_with("https://"), "{}", server.base);
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
        .arg("-H")
        .arg(format!("Authorization: Bearer {}", server.admin_token()))
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

    let server = Server::start();
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

/// Every key and credential the server keeps, and the admin kubeconfig, are owner-only.
#[cfg(unix)]
#[test]
fn keys_and_the_kubeconfig_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let server = Server::start();
    for f in ["kubeconfig", "pki/ca.key", "pki/sa.key", "pki/admin.token"] {
        let mode = std::fs::metadata(server.dir.join(f))
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{f}");
    }
    // Whatever else pki/ keeps that is a key is owner-only too.
    for entry in std::fs::read_dir(server.dir.join("pki")).expect("pki") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".key") || name.ends_with(".token") {
            let mode = std::fs::metadata(&path)
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
    }
    let config = std::fs::read_to_string(&server.kubeconfig).expect("kubeconfig");
    assert!(
        config.contains(&format!("token: {}", server.admin_token())),
        "{config}"
    );
    server.stop();
}

/// curl with a client certificate and key (PEM files written in the data dir) and no other
/// credentials; returns (HTTP status, body).
fn curl_with_cert(
    server: &Server,
    name: &str,
    cert_pem: &str,
    key_pem: &str,
    path: &str,
) -> (String, String) {
    let cert = server.dir.join(format!("{name}.crt"));
    let key = server.dir.join(format!("{name}.key"));
    std::fs::write(&cert, cert_pem).expect("write cert");
    std::fs::write(&key, key_pem).expect("write key");
    let url = format!("{}{path}", server.base);
    let out = server
        .curl(&[
            "-sS",
            "-w",
            "\n%{http_code}",
            "--cert",
            cert.to_str().expect("path"),
            "--key",
            key.to_str().expect("path"),
            &url,
        ])
        .expect("curl");
    assert!(
        out.status.success(),
        "the TLS handshake must succeed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or((&text, ""));
    (code.to_string(), body.to_string())
}

const UNAUTHORIZED: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#;

/// As kube-apiserver, client certificates are requested without being verified in the
/// handshake: one from another CA (even one named `crest-ca` too) completes the handshake and
/// gets a 401 Status; one of the server's CA that has expired too; the admin client
/// certificate of the kubeconfig authenticates on its own.
#[test]
fn client_certificates_of_other_cas_are_unauthorized() {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
    use rustls::pki_types::pem::PemObject;
    let server = Server::start();
    for ca_name in ["foreign-ca", "crest-ca"] {
        let ca_key = KeyPair::generate().expect("key");
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
        ca.distinguished_name.push(DnType::CommonName, ca_name);
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = ca.self_signed(&ca_key).expect("ca");
        let mut leaf = CertificateParams::new(Vec::<String>::new()).expect("params");
        leaf.distinguished_name
            .push(DnType::CommonName, "crest-admin");
        leaf.distinguished_name
            .push(DnType::OrganizationName, "system:masters");
        leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().expect("key");
        let cert = leaf.signed_by(&key, &ca, &ca_key).expect("leaf");
        let (code, body) = curl_with_cert(
            &server,
            ca_name,
            &cert.pem(),
            &key.serialize_pem(),
            "/api/v1/namespaces",
        );
        assert_eq!(code, "401", "{ca_name}: {body}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&body).expect("Status"),
            serde_json::from_str::<serde_json::Value>(UNAUTHORIZED).expect("json"),
            "{ca_name}"
        );
    }

    // The server's own CA, but expired.
    let ca_pem = std::fs::read_to_string(server.ca_path()).expect("ca.crt");
    let ca_der = rustls::pki_types::CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("der");
    let ca_key = crest_auth::keys::SigningKey::from_pem(
        &std::fs::read_to_string(server.dir.join("pki/ca.key")).expect("ca.key"),
    )
    .expect("CA key");
    let expired = crest_auth::x509::issue_client_cert(
        &ca_der,
        &ca_key,
        "old",
        &["dev"],
        1_600_000_000,
        1_600_000_600,
    )
    .expect("issue");
    let (code, body) = curl_with_cert(
        &server,
        "expired",
        &expired.cert_pem,
        &expired.key_pem,
        "/api/v1/namespaces",
    );
    assert_eq!(code, "401", "{body}");

    // The kubeconfig's admin certificate alone is the admin.
    let config: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(&server.kubeconfig).expect("kubeconfig"))
            .expect("yaml");
    let user = &config["users"][0]["user"];
    let decode = |field: &str| {
        use base64::Engine;
        let data = user[field].as_str().expect(field);
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .expect("base64"),
        )
        .expect("pem")
    };
    let review = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let cert = server.dir.join("admin.crt");
    let key = server.dir.join("admin.key");
    std::fs::write(&cert, decode("client-certificate-data")).expect("write");
    std::fs::write(&key, decode("client-key-data")).expect("write");
    let out = server
        .curl(&[
            "-fsS",
            "--cert",
            cert.to_str().expect("path"),
            "--key",
            key.to_str().expect("path"),
            "-H",
            "Content-Type: application/json",
            "-d",
            review,
            &format!(
                "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                server.base
            ),
        ])
        .expect("curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["status"]["userInfo"]["username"], "crest-admin", "{v}");
    assert_eq!(
        v["status"]["userInfo"]["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );
    server.stop();
}

/// The README's recipe for a certificate user, as written there: `openssl req` and
/// `openssl x509 -req` without extensions, which makes an X.509 version 1 certificate (Go
/// accepts those as client leaves, so kube-apiserver authenticates them; the handshake once
/// failed here with `certificate unknown`). The admin grants alice what the README grants her;
/// alice, through the README's `kubectl config` steps, is herself (`kubectl auth whoami`), may
/// list configmaps and not delete them, and curl with her certificate gets a 200.
#[test]
fn the_readme_openssl_recipe_makes_a_working_client_certificate() {
    let server = Server::start();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    // The recipe: the lines after `# or a certificate user`, up to the blank line, with their
    // `\` continuations joined.
    let start = readme
        .find("# or a certificate user")
        .expect("the README's certificate recipe");
    let block: Vec<&str> = readme[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let script = block
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\\n", " ");
    assert!(script.contains("openssl x509 -req"), "{script}");
    assert!(
        !script.contains("-extfile"),
        "the recipe makes a v1 certificate: {script}"
    );
    let data_dir = format!("{}/", server.dir.display());
    let script = script.replace("crest-data/", &data_dir);
    let work = server.dir.join("alice-work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let out = std::process::Command::new("sh")
        .args(["-ec", &script])
        .current_dir(&work)
        .output()
        .expect("sh and openssl are required for this test");
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::process::Command::new("openssl")
        .args(["x509", "-in", "alice.crt", "-noout", "-text"])
        .current_dir(&work)
        .output()
        .expect("openssl");
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("Version: 1 (0x0)"),
        "the recipe's certificate is version 1: {}",
        String::from_utf8_lossy(&text.stdout)
    );

    // As the admin: what alice may do (the README's commands).
    for line in readme.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("kubectl create role cm-reader ") {
            let mut args = vec!["create", "role", "cm-reader"];
            args.extend(rest.split_whitespace());
            server.kubectl_ok(&args);
        } else if let Some(rest) = line.strip_prefix("kubectl create rolebinding alice-cm ") {
            let mut args = vec!["create", "rolebinding", "alice-cm"];
            args.extend(rest.split_whitespace());
            server.kubectl_ok(&args);
        }
    }

    // As alice, through the README's kubectl config steps on a copy of the kubeconfig.
    let kubeconfig = work.join("kubeconfig");
    std::fs::copy(&server.kubeconfig, &kubeconfig).expect("copy kubeconfig");
    let crt = work.join("alice.crt");
    let key = work.join("alice.key");
    for args in [
        vec![
            "config".to_string(),
            "set-credentials".into(),
            "alice".into(),
            format!("--client-certificate={}", crt.display()),
            format!("--client-key={}", key.display()),
            "--embed-certs".into(),
        ],
        [
            "config",
            "set-context",
            "alice",
            "--cluster=crest",
            "--user=alice",
        ]
        .map(String::from)
        .to_vec(),
        ["config", "use-context", "alice"]
            .map(String::from)
            .to_vec(),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = server.kubectl_with(&kubeconfig, &args);
        assert!(ok, "kubectl {args:?}: {err}");
    }
    let (ok, out, err) = server.kubectl_with(&kubeconfig, &["auth", "whoami", "-o", "json"]);
    assert!(ok, "kubectl auth whoami: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["status"]["userInfo"]["username"], "alice", "{v}");
    assert_eq!(
        v["status"]["userInfo"]["groups"],
        serde_json::json!(["dev", "system:authenticated"]),
        "{v}"
    );
    let (_, out, _) = server.kubectl_with(&kubeconfig, &["auth", "can-i", "list", "configmaps"]);
    assert_eq!(out.trim(), "yes");
    let (_, out, _) = server.kubectl_with(&kubeconfig, &["auth", "can-i", "delete", "configmaps"]);
    assert_eq!(out.trim(), "no");

    // curl with the certificate: a 200 for what alice may list, a 403 for what she may not.
    let cert_pem = std::fs::read_to_string(&crt).expect("alice.crt");
    let key_pem = std::fs::read_to_string(&key).expect("alice.key");
    let (code, body) = curl_with_cert(
        &server,
        "alice",
        &cert_pem,
        &key_pem,
        "/api/v1/namespaces/default/configmaps",
    );
    assert_eq!(code, "200", "{body}");
    let (code, body) = curl_with_cert(&server, "alice", &cert_pem, &key_pem, "/api/v1/secrets");
    assert_eq!(code, "403", "{body}");
    assert!(
        body.contains(r#"User \"alice\" cannot list resource \"secrets\""#),
        "{body}"
    );
    server.stop();
}
