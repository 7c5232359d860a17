//! `attack` (only when named): the hostile clients of issue 19 against one server, while a
//! probe GETs an object every 50 ms: bodies trickled one byte per TCP segment, JSON patch
//! copy amplification, a patch of 10,001 operations, YAML nested 100,000 levels, a YAML
//! "billion laughs", an object with 30,000 ownerReferences, and 200 idle HTTP/2 connections.
//! Reported: each attack's answer and time, the server's RSS before, at its peak and after,
//! and the probe's p50/p99 before and during the attacks (target: flat).

use crate::{access, client, create_crd, host_of, percentile, rss_mib, start, Row, COLLECTION};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// A raw TLS connection to the server at `base`, offering `alpn`.
async fn tls(
    base: &str,
    alpn: &[&[u8]],
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    let a = access(base);
    let mut config = (*a.tls.ok_or("the attack section needs an HTTPS server")?).clone();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = tokio::net::TcpStream::connect(host_of(base))
        .await
        .map_err(|e| e.to_string())?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())
}

/// `n` connections that each send a create's head and then its body one byte every 10 ms for
/// `seconds`, each byte in a TCP segment (and TLS record) of its own.
async fn trickle(base: &str, n: usize, seconds: u64) -> String {
    let authorization = access(base).authorization;
    let mut tasks = vec![];
    for _ in 0..n {
        let (base, authorization) = (base.to_string(), authorization.clone());
        tasks.push(tokio::spawn(async move {
            let Ok(mut s) = tls(&base, &[b"http/1.1"]).await else {
                return 0usize;
            };
            let head = format!(
                "POST {COLLECTION} HTTP/1.1\r\nHost: x\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
            );
            if s.write_all(head.as_bytes()).await.is_err() {
                return 0;
            }
            let end = Instant::now() + Duration::from_secs(seconds);
            let mut sent = 0;
            while Instant::now() < end {
                if s.write_all(b"x").await.is_err() || s.flush().await.is_err() {
                    break;
                }
                sent += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            sent
        }));
    }
    let mut bytes = 0;
    for t in tasks {
        bytes += t.await.unwrap_or(0);
    }
    format!("{n} connections sent {bytes} bytes one at a time")
}

/// `n` TLS connections that negotiate HTTP/2, send the preface and SETTINGS, and then nothing;
/// held until `release` is set.
async fn idle_h2(base: &str, n: usize, release: Arc<AtomicBool>) -> String {
    let mut conns = vec![];
    for _ in 0..n {
        if let Ok(mut s) = tls(base, &[b"h2"]).await {
            let mut preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
            preface.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
            if s.write_all(&preface).await.is_ok() {
                conns.push(s);
            }
        }
    }
    let opened = conns.len();
    while !release.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(conns);
    format!("{opened} idle HTTP/2 connections held")
}

/// Sends one request and describes its answer: status, the Status message's start, time.
async fn one(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    ctype: &str,
    body: Vec<u8>,
) -> String {
    let t0 = Instant::now();
    let r = c
        .request(method, url)
        .header("Content-Type", ctype)
        .body(body)
        .send()
        .await;
    let took = t0.elapsed();
    match r {
        Ok(r) => {
            let status = r.status().as_u16();
            let text = r.text().await.unwrap_or_default();
            let msg = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_string))
                .unwrap_or_default();
            let msg: String = msg.chars().take(90).collect();
            format!("{status} in {:.0} ms {msg:?}", took.as_secs_f64() * 1e3)
        }
        Err(e) => format!("error {e} after {:.0} ms", took.as_secs_f64() * 1e3),
    }
}

pub(crate) async fn attack(binary: &Path) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let pid = server.child.id();
    let c = client(&base);
    create_crd(&c, &base).await;
    let victim = format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{{"name":"victim"}},"spec":{{"a":"{}"}}}}"#,
        "x".repeat(1000)
    );
    let created = c
        .post(format!("{base}{COLLECTION}"))
        .header("Content-Type", "application/json")
        .body(victim)
        .send()
        .await
        .expect("create victim");
    assert_eq!(created.status(), 201, "victim");

    // The probe: a GET by name every 50 ms, (elapsed since start, latency ms).
    let probe: Arc<Mutex<Vec<(f64, f64)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let probe_task = {
        let (probe, stop, c, url) = (
            probe.clone(),
            stop.clone(),
            c.clone(),
            format!("{base}{COLLECTION}/victim"),
        );
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let s = Instant::now();
                let ok = c
                    .get(&url)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                let ms = if ok {
                    s.elapsed().as_secs_f64() * 1e3
                } else {
                    f64::INFINITY
                };
                probe
                    .lock()
                    .expect("probe")
                    .push((t0.elapsed().as_secs_f64(), ms));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    // The peak RSS, sampled every 100 ms.
    let peak = Arc::new(Mutex::new(0f64));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let r = rss_mib(pid);
                {
                    let mut p = peak.lock().expect("peak");
                    *p = p.max(r);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    let rss_before = rss_mib(pid);
    let attacks_from = t0.elapsed().as_secs_f64();

    let item = format!("{base}{COLLECTION}/victim");
    let mut rows: Vec<Row> = vec![];
    // The peak over the whole run, and the growth each single request causes at its peak.
    let overall = Arc::new(Mutex::new(0f64));
    let segment_start = std::cell::Cell::new(rss_before);
    // Ends a segment: its growth at its peak over the RSS it started at; starts the next.
    let mark = |peak: &Arc<Mutex<f64>>, overall: &Arc<Mutex<f64>>| {
        let mut p = peak.lock().expect("peak");
        let mut o = overall.lock().expect("overall");
        *o = o.max(*p);
        let grown = *p - segment_start.get();
        let now = rss_mib(pid);
        *p = now;
        segment_start.set(now);
        grown
    };
    let release = Arc::new(AtomicBool::new(false));
    let idle = tokio::spawn({
        let (base, release) = (base.clone(), release.clone());
        async move { idle_h2(&base, 200, release).await }
    });
    let trickled = tokio::spawn({
        let base = base.clone();
        async move { trickle(&base, 50, 10).await }
    });

    // One request per attack, each measured alone: (row, method, URL, Content-Type, body,
    // target).
    let patch = reqwest::Method::PATCH;
    let post = reqwest::Method::POST;
    let collection = format!("{base}{COLLECTION}");
    // JSON patch: each copy doubles spec (25 of them: 32 GiB unbounded).
    let copies: Vec<serde_json::Value> = (0..25)
        .map(|i| serde_json::json!({"op": "copy", "from": "/spec", "path": format!("/spec/c{i}")}))
        .collect();
    let ops: Vec<serde_json::Value> = (0..10_001)
        .map(|_| serde_json::json!({"op": "test", "path": "/metadata/name", "value": "victim"}))
        .collect();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut laughs = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let (prev, next) = (w[0], w[1]);
        laughs.push_str(&format!(
            "{next}: &{next} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    let refs: Vec<serde_json::Value> = (0..30_000)
        .map(|i| serde_json::json!({"apiVersion": "v1", "kind": "K", "name": "n", "uid": format!("u{i}")}))
        .collect();
    let owned = serde_json::json!({
        "apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "owned", "ownerReferences": refs},
    });
    let json_patch = "application/json-patch+json";
    let attacks = [
        (
            "attack: JSON patch, 25 doubling copies",
            patch.clone(),
            item.clone(),
            json_patch,
            serde_json::to_vec(&copies).expect("patch"),
            "4xx, fast",
        ),
        (
            "attack: JSON patch of 10,001 operations",
            patch,
            item.clone(),
            json_patch,
            serde_json::to_vec(&ops).expect("patch"),
            "413",
        ),
        (
            "attack: YAML nested 100,000 levels",
            post.clone(),
            collection.clone(),
            "application/yaml",
            deep.into_bytes(),
            "400, fast",
        ),
        (
            "attack: YAML billion laughs",
            post.clone(),
            collection.clone(),
            "application/yaml",
            laughs.into_bytes(),
            "400, fast",
        ),
        (
            "attack: 30,000 ownerReferences",
            post,
            collection,
            "application/json",
            serde_json::to_vec(&owned).expect("body"),
            "fast",
        ),
    ];
    for (row, method, url, ctype, body, target) in attacks {
        mark(&peak, &overall);
        let r = one(&c, method, url, ctype, body).await;
        rows.push((
            row.into(),
            format!("{r}; RSS +{:.0} MiB at its peak", mark(&peak, &overall)),
            target.into(),
        ));
    }

    let r = trickled.await.unwrap_or_default();
    rows.push((
        "attack: bodies trickled a byte per segment for 10 s".into(),
        r,
        "-".into(),
    ));
    release.store(true, Ordering::Relaxed);
    let r = idle.await.unwrap_or_default();
    rows.push(("attack: idle HTTP/2 connections".into(), r, "-".into()));
    let attacks_to = t0.elapsed().as_secs_f64();
    // The object with 30,000 ownerReferences was a valid create: it is data, not a leftover
    // of an attack. Deleted, and the allocator given its decay time (10 s) to return memory.
    let _ = c.delete(format!("{base}{COLLECTION}/owned")).send().await;
    tokio::time::sleep(Duration::from_secs(15)).await;
    let rss_after = rss_mib(pid);
    stop.store(true, Ordering::Relaxed);
    let _ = probe_task.await;
    let _ = sampler.await;
    let peak = peak
        .lock()
        .expect("peak")
        .max(*overall.lock().expect("overall"));
    let samples = probe.lock().expect("probe").clone();
    let mut before: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| *t < attacks_from)
        .map(|s| s.1)
        .collect();
    let mut during: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| *t >= attacks_from && *t <= attacks_to)
        .map(|s| s.1)
        .collect();
    rows.push((
        "attack: server RSS before / peak / 15 s after (the valid big object deleted)".into(),
        format!("{rss_before:.0} / {peak:.0} / {rss_after:.0} MiB"),
        "flat".into(),
    ));
    rows.push((
        "attack: probe GET p50 / p99 before -> during".into(),
        format!(
            "{:.2} / {:.2} ms -> {:.2} / {:.2} ms ({} probes during)",
            percentile(&mut before, 0.5),
            percentile(&mut before, 0.99),
            percentile(&mut during, 0.5),
            percentile(&mut during, 0.99),
            during.len()
        ),
        "flat".into(),
    ));
    drop(server);
    rows
}
