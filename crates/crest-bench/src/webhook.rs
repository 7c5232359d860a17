//! `webhook`: a LIST of 10,000 2 KiB objects through a conversion webhook on loopback (an
//! HTTPS webhook in this process that only rewrites apiVersion) against the same LIST through
//! the storage version. Issue 15's target: at most 3x the LIST without conversion plus the
//! webhook's own processing time.

use crate::{load, median, payload, serve_crd, start, Row};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const OBJECTS: usize = 10_000;
const RUNS: usize = 5;
const V1: &str = "/apis/hooked.example.com/v1/namespaces/default/crontabs";
const V2: &str = "/apis/hooked.example.com/v2/namespaces/default/crontabs";

fn crontab(name: &str) -> String {
    let pad = payload(name);
    format!(
        r#"{{"apiVersion":"hooked.example.com/v1","kind":"CronTab","metadata":{{"name":"{name}","namespace":"default"}},"spec":{{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":1,"payload":"{pad}"}}}}"#
    )
}

/// A CA (PEM) and a TLS server configuration for 127.0.0.1 it signed.
fn certificates() -> (String, rustls::ServerConfig) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let key = KeyPair::generate().expect("key");
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
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

/// The webhook's answer: every object in the desired version, nothing else changed.
fn convert(review: &[u8]) -> Vec<u8> {
    let v: serde_json::Value = serde_json::from_slice(review).unwrap_or_default();
    let req = &v["request"];
    let desired = req["desiredAPIVersion"].clone();
    let objects: Vec<serde_json::Value> = req["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut o| {
            o["apiVersion"] = desired.clone();
            o
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": req["uid"], "result": {"status": "Success"}, "convertedObjects": objects}}))
    .unwrap_or_default()
}

/// Serves the webhook on 127.0.0.1; returns its port. `busy` accumulates the nanoseconds
/// spent reading, converting and answering.
async fn serve_webhook(config: rustls::ServerConfig, busy: Arc<AtomicU64>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, busy) = (acceptor.clone(), busy.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let busy = busy.clone();
                        async move {
                            let t0 = Instant::now();
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let out = convert(&body);
                            busy.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                                Bytes::from(out),
                            )))
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    port
}

/// A CRD of two versions converted by the webhook at `port` (trusted through `ca`).
fn hooked_crd(port: u16, ca: &str) -> String {
    use base64::Engine;
    let schema = serde_json::json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.hooked.example.com"},
        "spec": {"group": "hooked.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema},
                         {"name": "v2", "served": true, "storage": false, "schema": schema}],
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": format!("https://127.0.0.1:{port}/"),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)}}}}})
    .to_string()
}

pub(crate) async fn list_through_webhook(binary: &Path, clients: usize) -> Vec<Row> {
    let (ca, config) = certificates();
    let busy = Arc::new(AtomicU64::new(0));
    let port = serve_webhook(config, busy.clone()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    let crd = hooked_crd(port, &ca);
    serve_crd(&client, &base, &crd, V1).await;
    load(&base, clients, 3600, OBJECTS, |i| {
        (
            "POST",
            V1.to_string(),
            Some(crontab(&format!("ct-{i}"))),
            201,
        )
    })
    .await;
    let timed = |path: &'static str| {
        let client = client.clone();
        let base = base.clone();
        async move {
            let t0 = Instant::now();
            let r = client
                .get(format!("{base}{path}"))
                .send()
                .await
                .expect("list");
            assert!(r.status().is_success(), "LIST {path}: {}", r.status());
            let n = r.bytes().await.expect("body").len();
            assert!(n > OBJECTS * 2000, "short LIST {path}: {n} bytes");
            t0.elapsed().as_secs_f64() * 1e3
        }
    };
    let (mut plain, mut hooked, mut hook_ms) = (vec![], vec![], vec![]);
    for _ in 0..RUNS {
        plain.push(timed(V1).await);
        let before = busy.load(Ordering::Relaxed);
        hooked.push(timed(V2).await);
        hook_ms.push((busy.load(Ordering::Relaxed) - before) as f64 / 1e6);
    }
    let (p, h, w) = (median(plain), median(hooked), median(hook_ms));
    vec![(
        format!("LIST of {OBJECTS} 2 KiB objects through a conversion webhook vs without (median of {RUNS})"),
        format!(
            "{h:.0} ms vs {p:.0} ms + webhook {w:.0} ms = {:.2}x",
            h / (p + w)
        ),
        "<= 3x".into(),
    )]
}

/// While requests wait on a conversion webhook that never answers (16 connections reading
/// through the converted version), CR creates on another resource: p99 against the quiet p99.
/// Issue 15's target: within 2x.
pub(crate) async fn hanging_webhook(binary: &Path) -> Vec<Row> {
    use crate::events::{ms, pct, timed_creates};
    let (ca, _) = certificates();
    // Accepts connections and never answers (not even the TLS handshake).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let mut held = vec![];
        while let Ok((tcp, _)) = listener.accept().await {
            held.push(tcp);
        }
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    crate::create_crd(&client, &base).await;
    let crd = hooked_crd(port, &ca);
    serve_crd(&client, &base, &crd, V1).await;
    let r = client
        .post(format!("{base}{V1}"))
        .header("Content-Type", "application/json")
        .body(crontab("stuck"))
        .send()
        .await
        .expect("create");
    assert_eq!(r.status().as_u16(), 201);
    timed_creates(&base, "warm").await;
    let quiet = timed_creates(&base, "quiet").await;
    let mut waiting = vec![];
    for _ in 0..16 {
        let (client, url) = (client.clone(), format!("{base}{V2}/stuck"));
        waiting.push(tokio::spawn(async move {
            let _ = client.get(url).send().await;
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let loaded = timed_creates(&base, "hung").await;
    // They were waiting on the webhook the whole time.
    assert!(
        waiting.iter().all(|w| !w.is_finished()),
        "a request through the hung webhook returned"
    );
    for w in waiting {
        w.abort();
    }
    let (q99, l99) = (pct(&quiet, 0.99), pct(&loaded, 0.99));
    vec![(
        "CR create p99 while 16 requests wait on a webhook that never answers, vs quiet".into(),
        format!(
            "{} vs {} ({:.2}x)",
            ms(l99),
            ms(q99),
            l99.as_secs_f64() / q99.as_secs_f64()
        ),
        "<= 2x".into(),
    )]
}
