//! `startup`: process spawn -> kubeconfig written -> first 200 from `/readyz` over HTTPS (the
//! default, as a client would check: the CA and admin token of the pki dir), on an empty data
//! dir and on a restart of the same data dir after a clean shutdown (SIGTERM), medians of
//! `--starts N` (default 21) runs each; and the phases the server times itself (its
//! `crest is serving` log line: `startup_ms` and `phases_ms`), medians per phase. With
//! `--baseline PATH` the other binary is measured too, alternated run by run, so that a noisy
//! machine weighs on both alike. Targets: < 20 ms on an empty data dir, < 10 ms on a restart.

use crate::{median, pinned, Row};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One start: ms from spawn to the kubeconfig, to the first 200 from /readyz, and the server's
/// own phases (ms; `startup` is its total).
struct Sample {
    kubeconfig: f64,
    ready: f64,
    phases: Vec<(String, f64)>,
}

/// The phases of a `crest is serving` log line: `startup_ms=N` and `phases_ms="a=1.2 b=3.4"`.
fn phases_of(log: &str) -> Vec<(String, f64)> {
    let Some(line) = log.lines().find(|l| l.contains("crest is serving")) else {
        return vec![];
    };
    let mut out = vec![];
    if let Some(ms) = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("startup_ms="))
        .and_then(|v| v.parse().ok())
    {
        out.push(("startup".to_string(), ms));
    }
    if let Some(rest) = line.split("phases_ms=\"").nth(1) {
        let list = rest.split('"').next().unwrap_or_default();
        for part in list.split_whitespace() {
            if let Some((name, v)) = part.split_once('=') {
                if let Ok(v) = v.parse() {
                    out.push((name.to_string(), v));
                }
            }
        }
    }
    out
}

/// GET /readyz over TLS (trusting `tls`'s roots) with the admin's token; its status.
async fn readyz(
    addr: &str,
    tls: &Arc<rustls::ClientConfig>,
    authorization: &str,
) -> Result<u16, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(tls.clone())
        .connect(name, stream)
        .await
        .map_err(|e| e.to_string())?;
    let (mut tx, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let req = hyper::Request::get("/readyz")
        .header("host", addr)
        .header("authorization", authorization)
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .map_err(|e| e.to_string())?;
    let resp = tx.send_request(req).await.map_err(|e| e.to_string())?;
    Ok(resp.status().as_u16())
}

/// The TLS client configuration trusting the CA of `pki`, and the admin's `Authorization`.
fn client_of(pki: &Path) -> (Arc<rustls::ClientConfig>, String) {
    let access = crate::read_access("https://", pki);
    (
        access.tls.expect("an HTTPS server's TLS config"),
        access.authorization,
    )
}

/// Starts `binary` on `dir`, times it to the kubeconfig and to ready, and stops it with SIGTERM
/// (waiting for it to exit, so that the next start on `dir` is a clean restart).
async fn one(binary: &Path, dir: &Path, logs: &Path) -> Sample {
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let log_path = logs.join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let t0 = Instant::now();
    let mut child = pinned("CREST_BENCH_SERVER_CPUS", &binary.to_string_lossy())
        .args(["serve", "--data-dir"])
        .arg(dir)
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let addr = loop {
        if let Some(server) = crate::kubeconfig_server(&kubeconfig) {
            break server.trim_start_matches("https://").to_string();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "server did not start"
        );
        std::thread::sleep(Duration::from_micros(100));
    };
    let kubeconfig_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (tls, authorization) = client_of(&dir.join("pki"));
    loop {
        if readyz(&addr, &tls, &authorization).await == Ok(200) {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "server never ready");
        tokio::time::sleep(Duration::from_micros(100)).await;
    }
    let ready_ms = t0.elapsed().as_secs_f64() * 1e3;
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    Sample {
        kubeconfig: kubeconfig_ms,
        ready: ready_ms,
        phases: phases_of(&text),
    }
}

/// Medians of one binary's samples of one kind: the rows.
fn rows(label: &str, what: &str, target: &str, samples: &[Sample]) -> Vec<Row> {
    let n = samples.len();
    let kubeconfig = median(samples.iter().map(|s| s.kubeconfig).collect());
    let ready = median(samples.iter().map(|s| s.ready).collect());
    let mut by_phase: BTreeMap<String, (usize, Vec<f64>)> = BTreeMap::new();
    for s in samples {
        for (i, (name, v)) in s.phases.iter().enumerate() {
            let e = by_phase.entry(name.clone()).or_insert((i, vec![]));
            e.1.push(*v);
        }
    }
    let mut phases: Vec<(usize, String, f64)> = by_phase
        .into_iter()
        .map(|(name, (order, v))| (order, name, median(v)))
        .collect();
    phases.sort_by_key(|p| p.0);
    let mut out = vec![(
        format!("{label}start -> /readyz 200 over HTTPS, {what} (median of {n})"),
        format!("{ready:.1} ms (kubeconfig written at {kubeconfig:.1} ms)"),
        target.to_string(),
    )];
    if !phases.is_empty() {
        let list: Vec<String> = phases
            .iter()
            .map(|(_, name, v)| format!("{name} {v:.2}"))
            .collect();
        out.push((
            format!("{label}server's own phases, {what} (median ms of {n})"),
            list.join(", "),
            String::new(),
        ));
    }
    out
}

/// The section: this build (and `baseline`, alternated) `starts` times on empty data dirs, then
/// `starts` restarts of one data dir.
pub(crate) async fn startup(binary: &Path, baseline: Option<&Path>, starts: usize) -> Vec<Row> {
    let starts = starts.max(1);
    let mut binaries: Vec<(&str, &Path)> = vec![("", binary)];
    if let Some(b) = baseline {
        binaries.push(("baseline: ", b));
    }
    let logs = tempfile::tempdir().expect("tempdir");
    let mut empty: Vec<Vec<Sample>> = binaries.iter().map(|_| vec![]).collect();
    let mut restart: Vec<Vec<Sample>> = binaries.iter().map(|_| vec![]).collect();
    // One warm-up start each (page cache, binary loaded), not counted.
    for (_, bin) in &binaries {
        let d = tempfile::tempdir().expect("tempdir");
        one(bin, d.path(), logs.path()).await;
    }
    for _ in 0..starts {
        for (i, (_, bin)) in binaries.iter().enumerate() {
            let d = tempfile::tempdir().expect("tempdir");
            empty[i].push(one(bin, d.path(), logs.path()).await);
        }
    }
    let dirs: Vec<tempfile::TempDir> = binaries
        .iter()
        .map(|_| tempfile::tempdir().expect("tempdir"))
        .collect();
    for ((_, bin), d) in binaries.iter().zip(&dirs) {
        one(bin, d.path(), logs.path()).await;
    }
    for _ in 0..starts {
        for (i, (_, bin)) in binaries.iter().enumerate() {
            restart[i].push(one(bin, dirs[i].path(), logs.path()).await);
        }
    }
    let mut out = vec![];
    for (i, (label, _)) in binaries.iter().enumerate() {
        out.extend(rows(label, "empty data dir", "< 20 ms", &empty[i]));
        out.extend(rows(label, "restart", "< 10 ms", &restart[i]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::phases_of;

    #[test]
    fn phases_are_read_from_the_log_line() {
        let log = "2026-12-01T00:00:00Z  INFO crest: crest is serving; use: kubectl \
                   listen=127.0.0.1:1 kubeconfig=/d/kubeconfig startup_ms=12.5 \
                   phases_ms=\"pki=1.25 store_open=0.5\"\n";
        let p = phases_of(log);
        assert_eq!(
            p,
            vec![
                ("startup".to_string(), 12.5),
                ("pki".to_string(), 1.25),
                ("store_open".to_string(), 0.5)
            ]
        );
        assert!(phases_of("nothing here").is_empty());
    }
}
