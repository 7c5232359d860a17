//! The crest binary as envtest's `kube-apiserver` and `etcd` (tests/go runs envtest itself on
//! them): the names it dispatches on, pflag's `--help` and unknown-flag exits, the etcd
//! stand-in's `/health`, and SIGTERM.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CREST: &str = env!("CARGO_BIN_EXE_crest");

fn assets() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(CREST)
        .arg("envtest-assets")
        .arg(dir.path().join("bin"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    dir
}

#[test]
fn envtest_assets_are_this_binary_under_two_names() {
    let dir = assets();
    let bin = dir.path().join("bin");
    for name in ["kube-apiserver", "etcd"] {
        let target = std::fs::read_link(bin.join(name)).unwrap();
        assert_eq!(target, std::path::Path::new(CREST), "{name}");
    }
    // Under the name kube-apiserver it is kube-apiserver: --help exits 0 listing its flags,
    // without --insecure-port (removed in 1.24; envtest looks for it there).
    let help = Command::new(bin.join("kube-apiserver"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--secure-port",
        "--bind-address",
        "--cert-dir",
        "--client-ca-file",
        "--etcd-servers",
        "--service-account-issuer",
        "--service-account-key-file",
        "--service-account-signing-key-file",
        "--service-cluster-ip-range",
        "--authorization-mode",
        "--disable-admission-plugins",
        "--allow-privileged",
    ] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(flag)),
            "{flag} missing from:\n{text}"
        );
    }
    assert!(!text.contains("--insecure-port"));
    let etcd_help = Command::new(bin.join("etcd"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(etcd_help.status.success());
    assert!(String::from_utf8_lossy(&etcd_help.stdout).contains("--unsafe-no-fsync"));
}

#[test]
fn an_unknown_flag_exits_1_naming_it_as_pflag_does() {
    for (mode, flag) in [("kube-apiserver", "--insecure-port=0"), ("etcd", "--bogus")] {
        let out = Command::new(CREST).args([mode, flag]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{mode} {flag}");
        let name = flag.split('=').next().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            format!("Error: unknown flag: {name}")
        );
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

#[test]
fn the_etcd_stand_in_answers_health_and_names_its_data_dir_until_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("etcd");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(CREST)
        .args(["etcd", "--data-dir"])
        .arg(&data)
        .args([
            &format!("--listen-client-urls={url}"),
            &format!("--advertise-client-urls={url}"),
            "--listen-peer-urls=http://127.0.0.1:0",
            "--unsafe-no-fsync=true",
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let health = loop {
        if let Some(r) = get(port, "/health") {
            break r;
        }
        assert!(Instant::now() < deadline, "etcd did not answer");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(
        health.ends_with(r#"{"health":"true","reason":""}"#),
        "{health}"
    );
    let store = get(port, "/crest/v1/store").unwrap();
    let canonical = std::fs::canonicalize(&data).unwrap();
    assert!(
        store.contains(&format!(
            "\"dataDir\":{:?}",
            canonical.display().to_string()
        )),
        "{store}"
    );
    assert!(get(port, "/v3/kv/range")
        .unwrap()
        .starts_with("HTTP/1.1 404"));
    let pid = child.id().to_string();
    let began = Instant::now();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
}
