//! Raw HTTP helpers for watches and custom resources in tests.

use super::Server;
use serde_json::{json, Value};
use std::time::Duration;

pub(crate) const CT: &str = "/apis/stable.example.com/v1";

/// Reads a watch response line by line.
pub(crate) struct WatchReader {
    pub status: u16,
    resp: reqwest::Response,
    buf: Vec<u8>,
    ended: bool,
}

impl WatchReader {
    pub(crate) async fn open(s: &Server, path: &str) -> WatchReader {
        let resp = s
            .reqwest()
            .get(format!("{}{}", s.base, path))
            .send()
            .await
            .expect("watch request");
        WatchReader {
            status: resp.status().as_u16(),
            resp,
            buf: vec![],
            ended: false,
        }
    }

    /// The next event, or `None` when none arrives within `wait` or the stream ended.
    pub(crate) async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(serde_json::from_slice(&line).expect("watch event is JSON"));
            }
            if self.ended {
                return None;
            }
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(c))) => self.buf.extend_from_slice(&c),
                Ok(_) => self.ended = true,
                Err(_) => return None,
            }
        }
    }

    /// Every event until the stream ends (bounded by `wait`).
    pub(crate) async fn until_end(&mut self, wait: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut out = vec![];
        while let Some(ev) = self
            .next(deadline.saturating_duration_since(tokio::time::Instant::now()))
            .await
        {
            out.push(ev);
        }
        out
    }

    pub(crate) fn has_ended(&self) -> bool {
        self.ended
    }
}

/// `(type, name)` of events.
pub(crate) fn summary(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

pub(crate) fn rv_of(v: &Value) -> i64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {v}"))
}

pub(crate) fn crontab(name: &str, labels: Value) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "labels": labels},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"},
    })
}

/// Creates a CronTab; returns the created object.
pub(crate) async fn create_ct(s: &Server, ns: &str, name: &str, labels: Value) -> Value {
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{CT}/namespaces/{ns}/crontabs"),
            "application/json",
            Some(&crontab(name, labels)),
        )
        .await;
    assert_eq!(code, 201, "create {ns}/{name}: {v}");
    v
}

pub(crate) async fn patch_ct(s: &Server, ns: &str, name: &str, patch: Value) -> Value {
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CT}/namespaces/{ns}/crontabs/{name}"),
            "application/merge-patch+json",
            Some(&patch),
        )
        .await;
    assert_eq!(code, 200, "patch {ns}/{name}: {v}");
    v
}

/// Deletes a CronTab; returns the response body.
pub(crate) async fn delete_ct(s: &Server, ns: &str, name: &str) -> Value {
    let (code, v) = s
        .http_json(
            "DELETE",
            &format!("{CT}/namespaces/{ns}/crontabs/{name}"),
            "application/json",
            None,
        )
        .await;
    assert_eq!(code, 200, "delete {ns}/{name}: {v}");
    v
}

pub(crate) async fn get_json(s: &Server, path: &str) -> (u16, Value) {
    s.http_json("GET", path, "application/json", None).await
}

pub(crate) async fn create_namespace(s: &Server, name: &str) {
    let (code, v) = s
        .http_json(
            "POST",
            "/api/v1/namespaces",
            "application/json",
            Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
        )
        .await;
    assert_eq!(code, 201, "{v}");
}

/// The current resourceVersion of the CronTab collection.
pub(crate) async fn list_rv(s: &Server) -> i64 {
    let (code, v) = get_json(s, &format!("{CT}/crontabs")).await;
    assert_eq!(code, 200, "{v}");
    rv_of(&v)
}
