//! Storage faults and file permissions (issue 19, items 6 and 7): on a full disk every failing
//! write answers a 500 `Status` naming the cause (as kube-apiserver answers etcd's `mvcc: database
//! space exceeded`), reads go on, `/readyz` fails its `etcd` check and the server logs the fault a
//! bounded number of times; once space is freed writes work again without a restart and nothing
//! acknowledged is lost. Starting on a full disk fails clearly and leaves no half-written file.
//! The data dir is 0700 and every file in it 0600 (the CA certificate may be 0644).
//!
//! The full disk is a small tmpfs, which needs root to mount: these tests fail, rather than skip,
//! when mounting is not permitted.

mod common;
#[path = "../../crest-storage/tests/support/tmpfs.rs"]
mod tmpfs;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tmpfs::{fill, Tmpfs};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
/// The store's fault flags: retries and fault log lines at a pace a test can watch.
const FAST: &[&str] = &[
    "--storage-retry-max",
    "200ms",
    "--storage-fault-log-interval",
    "1s",
];

fn configmap(name: &str, payload: usize) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"payload": "p".repeat(payload)},
    })
}

/// Every file under `dir` (recursively), with its permission bits.
fn files(dir: &Path) -> Vec<(PathBuf, u32, u64)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let e = e.expect("entry");
            let m = e.metadata().expect("metadata");
            if m.is_dir() {
                todo.push(e.path());
            }
            out.push((e.path(), m.permissions().mode() & 0o777, m.len()));
        }
    }
    out
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
}

/// kubectl against `s`, with its cache in `cache` rather than in the data dir (where the harness
/// puts it): on the full disk only the server's files may take or free space, and the data dir
/// holds only the server's files.
fn kubectl(s: &Server, cache: &Path, args: &[&str]) -> (bool, String, String) {
    let flag = format!("--cache-dir={}", cache.display());
    let mut all = vec![flag.as_str()];
    all.extend_from_slice(args);
    s.kubectl(&all)
}

/// Lines of `log` about the store's fault.
fn fault_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("the store"))
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn a_full_disk_fails_writes_with_the_cause_and_writes_resume_once_space_is_freed() {
    // Declared first, dropped last: the servers are gone before it is unmounted.
    let fs = Tmpfs::mount("48m");
    let logs = tempfile::tempdir().expect("tempdir");
    let data = fs.path().join("data");
    let log = logs.path().join("crest.log");
    let s = Server::start_in_logged(&data, FAST, &log, "warn");

    let mut acked: Vec<String> = vec![];
    for i in 0..10 {
        let name = format!("before-{i}");
        let (code, v) = s
            .http_json(
                "POST",
                CMS,
                "application/json",
                Some(&configmap(&name, 4096)),
            )
            .await;
        assert_eq!(code, 201, "{v}");
        acked.push(name);
    }

    let filler = fill(fs.path());
    // The store's file may still have free pages: write until a write fails.
    let mut failed = None;
    for i in 0..5000 {
        let name = format!("full-{i}");
        let (code, v) = s
            .http_json(
                "POST",
                CMS,
                "application/json",
                Some(&configmap(&name, 8192)),
            )
            .await;
        if code == 201 {
            acked.push(name);
        } else {
            failed = Some((code, v));
            break;
        }
    }
    let (code, status) = failed.expect("a write failed on the full disk");
    let faulted = Instant::now();
    // kube-apiserver's answer to a storage error it has no status for: 500, no reason, the
    // cause as the message.
    assert_eq!(code, 500, "{status}");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["status"], "Failure", "{status}");
    assert_eq!(status["code"], 500, "{status}");
    assert!(status.get("reason").is_none(), "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains("No space left on device"), "{status}");

    // Every write fails the same way while the disk is full: creates, updates, deletes.
    for i in 0..50 {
        let (code, v) = s
            .http_json(
                "POST",
                CMS,
                "application/json",
                Some(&configmap(&format!("refused-{i}"), 10)),
            )
            .await;
        assert_eq!(code, 500, "{v}");
        assert!(
            v["message"]
                .as_str()
                .unwrap_or_default()
                .contains("No space left on device"),
            "{v}"
        );
    }
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CMS}/before-0"),
            "application/merge-patch+json",
            Some(&json!({"data": {"more": "x"}})),
        )
        .await;
    assert_eq!(code, 500, "{v}");
    let (code, v) = s
        .http_json("DELETE", &format!("{CMS}/before-1"), "", None)
        .await;
    assert_eq!(code, 500, "{v}");
    // As kubectl shows it.
    let (ok, _, err) = kubectl(
        &s,
        logs.path(),
        &["create", "configmap", "by-kubectl", "--from-literal=a=b"],
    );
    assert!(!ok);
    assert!(err.contains("No space left on device"), "{err}");

    // Reads go on.
    for name in &acked {
        let (code, v) = s.http_json("GET", &format!("{CMS}/{name}"), "", None).await;
        assert_eq!(code, 200, "{name}: {v}");
    }
    // (Besides the namespace's kube-root-ca.crt, which the root CA publisher writes when it can.)
    let (code, list) = s
        .http_json(
            "GET",
            &format!("{CMS}?fieldSelector=metadata.name!=kube-root-ca.crt"),
            "",
            None,
        )
        .await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(
        list["items"].as_array().map(Vec::len),
        Some(acked.len()),
        "only what was acknowledged is listed"
    );
    let (ok, out, err) = kubectl(
        &s,
        logs.path(),
        &["get", "configmap", "before-0", "-o", "name"],
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "configmap/before-0");

    // Readiness reports the fault while it lasts; liveness does not (a restart would not help).
    let (code, _, body) = s.http("GET", "/readyz?verbose", &[], None).await;
    let body = String::from_utf8_lossy(&body).into_owned();
    assert_eq!(code, 500, "{body}");
    assert!(body.contains("[-]etcd failed"), "{body}");
    assert!(body.contains("readyz check failed"), "{body}");
    let (code, _, body) = s.http("GET", "/readyz/etcd", &[], None).await;
    let body = String::from_utf8_lossy(&body).into_owned();
    assert_eq!(code, 500, "{body}");
    assert!(body.contains("No space left on device"), "{body}");
    let (code, _, _) = s.http("GET", "/livez", &[], None).await;
    assert_eq!(code, 200);

    // Logged: the first failure at once, then one count per interval (1s here), not a line per
    // failed write.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let lines = fault_lines(&log);
    assert!(
        lines.iter().any(
            |l| l.contains("the store failed a write") && l.contains("No space left on device")
        ),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("the store still cannot write")),
        "{lines:#?}"
    );
    assert!(
        // The first failure, one count a second, one for the readiness probe, and slack; on a
        // loaded machine the seconds grow, but stay far below one line per failed write.
        lines.len() as u64 <= faulted.elapsed().as_secs() + 5,
        "{} fault lines for about 55 failed writes in {:?}:\n{lines:#?}",
        lines.len(),
        faulted.elapsed()
    );

    // Space freed: writes work again, without a restart.
    std::fs::remove_file(&filler).expect("remove filler");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, v) = s
            .http_json(
                "POST",
                CMS,
                "application/json",
                Some(&configmap("after", 10)),
            )
            .await;
        if code == 201 {
            break;
        }
        assert_eq!(code, 500, "{v}");
        assert!(
            Instant::now() < deadline,
            "writes did not work again within 60s of freeing space: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    acked.push("after".into());
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CMS}/before-0"),
            "application/merge-patch+json",
            Some(&json!({"data": {"more": "x"}})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    let (code, _, body) = s.http("GET", "/readyz?verbose", &[], None).await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert!(fault_lines(&log)
        .iter()
        .any(|l| l.contains("the store writes again")));

    // Everything acknowledged is there, and only that, also after a restart.
    let check = |s: &Server, acked: Vec<String>| {
        let (ok, out, err) = kubectl(s, logs.path(), &["get", "configmaps", "-o", "name"]);
        assert!(ok, "{err}");
        let mut got: Vec<String> = out
            .lines()
            .filter_map(|l| l.strip_prefix("configmap/"))
            .filter(|n| *n != "kube-root-ca.crt")
            .map(String::from)
            .collect();
        let mut want = acked;
        got.sort();
        want.sort();
        assert_eq!(got, want);
    };
    check(&s, acked.clone());
    s.stop();
    let log2 = logs.path().join("crest-2.log");
    let s = Server::start_in_logged(&data, FAST, &log2, "warn");
    check(&s, acked.clone());
    let (code, v) = s
        .http_json("GET", &format!("{CMS}/before-0"), "", None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["data"]["more"], "x", "{v}");
    s.stop();
    // No probe or temporary file stays behind.
    for (path, _, _) in files(&data) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        assert!(
            !name.contains("tmp") && !name.contains("probe"),
            "{}",
            path.display()
        );
    }
}

/// `crest serve` on `dir`, expected to fail: waits (60 s at most) for it to exit; its stderr.
fn serve_fails(dir: &Path) -> String {
    let err = tempfile::NamedTempFile::new().expect("tempfile");
    let mut child = Command::new(env!("CARGO_BIN_EXE_crest"))
        .args(["serve", "--data-dir"])
        .arg(dir)
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err.reopen().expect("stderr file"))
        .spawn()
        .expect("spawn crest");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("crest kept running on a full disk");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(err.path()).unwrap_or_default();
    assert!(!status.success(), "crest exited 0 on a full disk\n{stderr}");
    stderr
}

fn assert_nothing_half_written(dir: &Path) {
    for (path, _, len) in files(dir) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        assert!(!name.contains(".tmp"), "{} left behind", path.display());
        if !path.is_dir() {
            assert!(len > 0, "empty file {} left behind", path.display());
        }
    }
}

#[test]
fn starting_on_a_full_disk_fails_clearly_and_leaves_no_half_written_file() {
    let logs = tempfile::tempdir().expect("tempdir");
    // A fresh data dir.
    let fs = Tmpfs::mount("4m");
    let data = fs.path().join("data");
    fill(fs.path());
    let stderr = serve_fails(&data);
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_nothing_half_written(&data);
    drop(fs);

    // A data dir a server wrote before the disk filled up.
    let fs = Tmpfs::mount("48m");
    let data = fs.path().join("data");
    let s = Server::start_in(&data);
    let (ok, _, err) = kubectl(
        &s,
        logs.path(),
        &["create", "configmap", "kept", "--from-literal=a=b"],
    );
    assert!(ok, "{err}");
    s.stop();
    let before: Vec<_> = files(&data);
    fill(fs.path());
    let stderr = serve_fails(&data);
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_nothing_half_written(&data);
    // The files it had stay (none was truncated).
    for (path, _, len) in before {
        if !path.is_dir() && !path.ends_with("kubeconfig") {
            let now = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            assert!(now >= len.min(1), "{} shrank", path.display());
        }
    }
    std::fs::remove_file(fs.path().join("filler")).expect("remove filler");
    let s = Server::start_in(&data);
    let (ok, out, err) = kubectl(&s, logs.path(), &["get", "configmap", "kept", "-o", "name"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "configmap/kept");
    s.stop();
}

#[test]
fn the_data_dir_is_owner_only_and_a_wider_one_is_narrowed() {
    use std::os::unix::fs::PermissionsExt;
    let check = |data: &Path| {
        assert_eq!(mode(data), 0o700, "data dir");
        for (path, m, _) in files(data) {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                assert_eq!(m, 0o700, "{}", path.display());
            } else if name == "ca.crt" {
                // The public CA certificate may stay readable, never writable by others.
                assert_eq!(m & 0o022, 0, "{}: {m:o}", path.display());
            } else {
                assert_eq!(m, 0o600, "{}: {m:o}", path.display());
            }
        }
    };
    let logs = tempfile::tempdir().expect("tempdir");
    // Created by crest, parents included.
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let data = tmp.path().join("new").join("data");
    let s = Server::start_in(&data);
    let (ok, _, err) = kubectl(
        &s,
        logs.path(),
        &["create", "secret", "generic", "s", "--from-literal=a=b"],
    );
    assert!(ok, "{err}");
    s.stop();
    check(&data);
    let names: Vec<String> = files(&data)
        .iter()
        .map(|(p, _, _)| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for expected in [
        "crest.redb",
        "kubeconfig",
        "pki",
        "ca.key",
        "ca.crt",
        "sa.key",
        "admin.token",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }

    // Opened up by someone (or an older Crest): narrowed again at start, and said so.
    let open = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod")
    };
    open(&data, 0o755);
    open(&data.join("pki"), 0o755);
    for f in [
        "crest.redb",
        "kubeconfig",
        "pki/ca.key",
        "pki/sa.key",
        "pki/admin.token",
    ] {
        open(&data.join(f), 0o644);
    }
    let log = logs.path().join("crest.log");
    let s = Server::start_in_logged(&data, &[], &log, "warn");
    check(&data);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    for what in [
        "data dir",
        "pki dir",
        "admin.token",
        "sa.key",
        "ca.key",
        "crest.redb",
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains("narrowed") && l.contains(what)),
            "no log line about narrowing {what}:\n{text}"
        );
    }
    s.stop();
}
