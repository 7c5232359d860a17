//! Durability: clean restarts keep everything; kill -9 during concurrent writes loses nothing
//! that was acknowledged and corrupts nothing.

mod common;
use common::*;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

async fn install_crd(s: &Server) {
    let crd: Value = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd");
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 201, "{v}");
}

fn list_rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .expect("list resourceVersion")
}

#[tokio::test]
async fn restart_keeps_objects_and_revisions_grow() {
    let tmp = tempfile::tempdir().expect("tmp");
    let s = Server::start_in(tmp.path());
    install_crd(&s).await;
    let (code, _) = s.http_json("POST", CT, "application/json", Some(&json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "keep"}, "spec": {"image": "x"}}))).await;
    assert_eq!(code, 201);
    let (_, before) = s.http_json("GET", CT, "", None).await;
    let rv_before = list_rv(&before);
    s.stop();

    let s = Server::start_in(tmp.path());
    let (code, obj) = s.http_json("GET", &format!("{CT}/keep"), "", None).await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(obj["spec"]["image"], "x");
    let (code, crd) = s
        .http_json(
            "GET",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
            "",
            None,
        )
        .await;
    assert_eq!(code, 200, "{crd}");
    let (code, created) = s.http_json("POST", CT, "application/json", Some(&json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "after"}}))).await;
    assert_eq!(code, 201);
    let rv_after: u64 = created["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .expect("rv");
    assert!(rv_after > rv_before, "{rv_after} > {rv_before}");
    s.stop();
}

#[tokio::test]
async fn kill9_loses_no_acknowledged_write() {
    let tmp = tempfile::tempdir().expect("tmp");
    let s = Server::start_in(tmp.path());
    install_crd(&s).await;
    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::new(Mutex::new(vec![]));
    let base = s.base.clone();
    let client = s.reqwest();
    let stop_at = Instant::now() + Duration::from_millis(1500);
    let mut writers = vec![];
    for w in 0..16 {
        let (acked, base, client) = (acked.clone(), base.clone(), client.clone());
        writers.push(tokio::spawn(async move {
            // Bounded: at most 2,000 writes per writer, or until the server dies.
            for i in 0..2000 {
                let name = format!("w{w}-{i}");
                let body = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": {"image": format!("img-{w}-{i}")}});
                let r = client.post(format!("{base}{CT}")).header("Content-Type", "application/json").body(body.to_string()).send().await;
                match r {
                    Ok(r) if r.status().as_u16() == 201 => acked.lock().expect("lock").push((name, format!("img-{w}-{i}"))),
                    Ok(r) => panic!("unexpected status {}", r.status()),
                    Err(_) => return,
                }
                if Instant::now() > stop_at + Duration::from_secs(10) {
                    return;
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    s.kill9();
    for w in writers {
        let _ = w.await;
    }
    let acked = acked.lock().expect("lock").clone();
    assert!(
        acked.len() > 50,
        "too few writes before the kill: {}",
        acked.len()
    );

    let s = Server::start_in(tmp.path());
    let (code, list) = s.http_json("GET", CT, "", None).await;
    assert_eq!(code, 200);
    let items = list["items"].as_array().expect("items");
    let stored: std::collections::HashMap<&str, &Value> = items
        .iter()
        .map(|i| (i["metadata"]["name"].as_str().unwrap_or(""), i))
        .collect();
    for (name, image) in &acked {
        let obj = stored.get(name.as_str()).unwrap_or_else(|| {
            panic!(
                "acknowledged {name} lost ({} acked, {} stored)",
                acked.len(),
                items.len()
            )
        });
        assert_eq!(obj["spec"]["image"], image.as_str());
    }
    // The store is writable and consistent after recovery.
    let (code, _) = s.http_json("POST", CT, "application/json", Some(&json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "post-crash"}}))).await;
    assert_eq!(code, 201);
    s.stop();
}
