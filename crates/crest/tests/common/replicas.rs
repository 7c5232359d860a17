//! Helpers for tests of several Crest replicas on one etcd cluster (`replicas.rs`,
//! `etcd_faults.rs`): one admin HTTP client for every replica sharing a pki dir, the controller
//! Lease and which replica holds it.

use super::Server;
#[allow(unused_imports)]
pub(crate) use crest_storage_etcd::testing::EtcdCluster;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The controllers' Lease.
pub(crate) const LEASE: &str =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/crest-controller-manager";

/// Short leader-election timings, so that fail-over tests take seconds.
pub(crate) const FAST_ELECTION: &[&str] = &[
    "--leader-elect-lease-duration",
    "3s",
    "--leader-elect-renew-deadline",
    "2s",
    "--leader-elect-retry-period",
    "500ms",
];

/// A small runtime (two workers) for the async parts of a plain `#[test]`.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A reqwest client for every replica sharing `pki`: it trusts their CA and sends the admin
/// token; each request times out after `timeout`.
pub(crate) fn admin_client(pki: &Path, timeout: Duration) -> reqwest::Client {
    let token = std::fs::read_to_string(pki.join("admin.token")).expect("pki/admin.token");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {}", token.trim()).parse().expect("header"),
    );
    let mut builder = reqwest::Client::builder()
        .default_headers(headers)
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(2));
    if let Ok(pem) = std::fs::read(pki.join("ca.crt")) {
        builder = builder.add_root_certificate(reqwest::Certificate::from_pem(&pem).expect("CA"));
    }
    builder.build().expect("reqwest client")
}

/// A JSON request; (status, body) or the transport error.
pub(crate) async fn request(
    c: &reqwest::Client,
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let mut req = c.request(method.parse().expect("method"), url);
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(serde_json::to_vec(b).expect("json"));
    }
    let resp = req.send().await.map_err(|e| format!("{e:?}"))?;
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await.map_err(|e| format!("{e:?}"))?;
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Ok((status, v))
}

/// A JSON request that must get an answer; (status, body).
pub(crate) async fn call(
    c: &reqwest::Client,
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    request(c, method, url, body)
        .await
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"))
}

/// `metadata.resourceVersion` as a number.
pub(crate) fn rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no numeric resourceVersion in {v}"))
}

/// The Lease's holder (a non-empty `spec.holderIdentity`), asked of the replica at `base`.
pub(crate) async fn lease_holder(c: &reqwest::Client, base: &str) -> Option<String> {
    match request(c, "GET", &format!("{base}{LEASE}"), None).await {
        Ok((200, v)) => v["spec"]["holderIdentity"]
            .as_str()
            .filter(|h| !h.is_empty())
            .map(str::to_string),
        _ => None,
    }
}

/// Which of `replicas` has `identity` (its log names it at startup: "storing in etcd").
pub(crate) fn replica_of(replicas: &[&Server], identity: &str) -> Option<usize> {
    replicas.iter().position(|s| s.log().contains(identity))
}

/// How many of `replicas` logged "became leader".
pub(crate) fn leaders_logged(replicas: &[&Server]) -> usize {
    replicas
        .iter()
        .filter(|s| s.log().contains("became leader"))
        .count()
}

/// Waits (up to `within`) until the Lease, asked of `base`, names one of `replicas`; its
/// index and identity.
pub(crate) async fn wait_leader(
    c: &reqwest::Client,
    base: &str,
    replicas: &[&Server],
    within: Duration,
) -> (usize, String) {
    let deadline = Instant::now() + within;
    loop {
        if let Some(h) = lease_holder(c, base).await {
            if let Some(i) = replica_of(replicas, &h) {
                return (i, h);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no replica holds the Lease after {within:?}; last holder: {:?}\n{}",
            lease_holder(c, base).await,
            logs(replicas)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every replica's log, for failure messages.
pub(crate) fn logs(replicas: &[&Server]) -> String {
    replicas
        .iter()
        .enumerate()
        .map(|(i, s)| format!("--- replica {i} ({}) log:\n{}", s.base, tail(&s.log(), 60)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last `n` lines of `text`.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A ConfigMap named `name` whose `data.value` is `value`.
pub(crate) fn configmap(name: &str, value: i64) -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"value": value.to_string()},
    })
}

/// `data.value` of a ConfigMap.
pub(crate) fn value_of(v: &Value) -> Option<i64> {
    v["data"]["value"].as_str().and_then(|s| s.parse().ok())
}
