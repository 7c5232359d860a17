//! `crest serve --plain-http`: plain HTTP, only on a loopback address, still authenticated
//! (the kubeconfig carries the admin's token; kubectl sends credentials only over TLS).

mod common;

use common::Server;
use std::process::{Command, Stdio};

#[test]
fn plain_http_on_loopback_serves_authenticated_requests() {
    let s = Server::start_with(&["--plain-http"]);
    assert!(s.base.starts_with("http://127.0.0.1:"), "{}", s.base);
    let config = std::fs::read_to_string(&s.kubeconfig).expect("kubeconfig");
    assert!(
        config.contains(&format!("token: {}", s.admin_token())),
        "{config}"
    );
    assert!(!config.contains("certificate-authority-data"), "{config}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&s.kubeconfig)
            .expect("kubeconfig")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Raw HTTP as the admin (the harness's curl sends the admin token).
    let review = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let out = s
        .curl(&[
            "-fsS",
            "-H",
            "Content-Type: application/json",
            "-d",
            review,
            &format!(
                "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                s.base
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
    let out = s
        .curl(&["-fsS", &format!("{}/api/v1/namespaces/default", s.base)])
        .expect("curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A bad token is a 401 over plain HTTP too.
    let out = s
        .curl(&[
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            "Authorization: Bearer wrong",
            &format!("{}/api/v1/namespaces", s.base),
        ])
        .expect("curl");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "401");
    // Anonymous: /version answers.
    let out = s
        .curl(&["--anonymous", "-fsS", &format!("{}/version", s.base)])
        .expect("curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["gitVersion"].is_string(), "{v}");
    // No TLS on this port.
    let tls = s.base.replacen("http://", "https://", 1);
    let out = s
        .curl(&["-sS", "-k", "-m", "5", &format!("{tls}/version")])
        .expect("curl");
    assert!(
        !out.status.success(),
        "TLS must not be served with --plain-http"
    );
    s.stop();
}

/// `--plain-http` on an address other machines reach is refused before anything is bound or
/// written.
#[test]
fn plain_http_is_refused_off_loopback() {
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new(env!("CARGO_BIN_EXE_crest"))
            .args(["serve", "--plain-http", "--listen", listen, "--data-dir"])
            .arg(dir.path())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("run crest");
        assert!(!out.status.success(), "{listen}: crest must refuse");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--plain-http") && err.contains("loopback"),
            "{listen}: {err}"
        );
        assert!(!dir.path().join("kubeconfig").exists(), "{listen}");
    }
}
