//! kube-rs watchers and reflectors against Crest: streaming lists, and a watcher that is cut off
//! long enough for its resourceVersion to be compacted gets 410 and re-lists.

mod common;
use common::watch::*;
use common::*;
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;
use kube::runtime::{reflector, watcher, WatchStreamExt};
use serde_json::json;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A loopback TCP proxy that can drop every connection and refuse new ones, to cut a client
/// off from the server without stopping either.
struct Proxy {
    addr: SocketAddr,
    blocked: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let blocked = Arc::new(AtomicBool::new(false));
        let conns: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let (b, c) = (blocked.clone(), conns.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if b.load(Ordering::SeqCst) {
                    continue; // dropped: the client sees a reset connection
                }
                let task = tokio::spawn(async move {
                    if let Ok(mut out) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                    }
                });
                c.lock().expect("conns").push(task);
            }
        });
        Proxy {
            addr,
            blocked,
            conns,
            accept,
        }
    }

    fn cut(&self) {
        self.blocked.store(true, Ordering::SeqCst);
        for t in self.conns.lock().expect("conns").drain(..) {
            t.abort();
        }
    }

    fn restore(&self) {
        self.blocked.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

fn crontab_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("stable.example.com", "v1", "CronTab"),
        "crontabs",
    )
}

fn crontabs(client: kube::Client) -> Api<DynamicObject> {
    Api::namespaced_with(client, "default", &crontab_resource())
}

/// A reflector store for dynamic CronTabs.
fn store() -> (
    reflector::Store<DynamicObject>,
    reflector::store::Writer<DynamicObject>,
) {
    let writer = reflector::store::Writer::new(crontab_resource());
    (writer.as_reader(), writer)
}

/// A kube-rs client of `s` (its CA, as the admin) that connects through `addr`.
async fn client_at(s: &Server, addr: SocketAddr) -> kube::Client {
    let mut config = s.kube_config().await;
    config.cluster_url = format!("https://{addr}").parse().expect("url");
    kube::Client::try_from(config).expect("client")
}

fn names_in(store: &reflector::Store<DynamicObject>) -> BTreeSet<String> {
    store
        .state()
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect()
}

async fn server_names(s: &Server) -> BTreeSet<String> {
    let (code, v) = get_json(s, &format!("{CT}/namespaces/default/crontabs")).await;
    assert_eq!(code, 200);
    v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn reflector_survives_a_forced_410_and_relists() {
    let s = Server::start_with(&["--history-retention-seconds", "1"]);
    s.apply_yaml(CRONTAB_CRD);
    for n in ["a", "b", "c"] {
        create_ct(&s, "default", n, json!({})).await;
    }
    let upstream: SocketAddr = s
        .base
        .trim_start_matches("https://")
        .parse()
        .expect("server addr");
    let proxy = Proxy::start(upstream).await;
    let api = crontabs(client_at(&s, proxy.addr).await);

    let (reader, writer) = store();
    let gone = Arc::new(AtomicUsize::new(0));
    let g = gone.clone();
    let driver = tokio::spawn(async move {
        let mut stream = reflector(writer, watcher(api, watcher::Config::default())).boxed();
        while let Some(ev) = stream.next().await {
            if let Err(watcher::Error::WatchError(status)) = &ev {
                if status.code == 410 {
                    g.fetch_add(1, Ordering::SeqCst);
                }
            }
            if ev.is_err() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    reader.wait_until_ready().await.expect("store ready");
    eventually("the initial list", || names_in(&reader).len() == 3).await;
    let last_seen = list_rv(&s).await;

    // Cut the watcher off; change things and let storage compact past what it saw.
    proxy.cut();
    create_ct(&s, "default", "d", json!({})).await;
    delete_ct(&s, "default", "a").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        patch_ct(&s, "default", "b", json!({"spec": {"replicas": 1}})).await;
        patch_ct(&s, "default", "b", json!({"spec": {"replicas": 2}})).await;
        let (code, _) = get_json(
            &s,
            &format!("{CT}/namespaces/default/crontabs?resourceVersion={last_seen}&resourceVersionMatch=Exact"),
        )
        .await;
        if code == 410 {
            break;
        }
        assert!(Instant::now() < deadline, "storage never compacted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    proxy.restore();

    // The watcher resumes from a compacted revision, gets 410 Expired, re-lists and converges.
    let want = server_names(&s).await;
    assert_eq!(
        want,
        ["b", "c", "d"].iter().map(|n| n.to_string()).collect()
    );
    eventually("the relisted state", || names_in(&reader) == want).await;
    assert!(gone.load(Ordering::SeqCst) >= 1, "the watcher saw a 410");
    // And keeps watching afterwards.
    create_ct(&s, "default", "e", json!({})).await;
    eventually("a change after the relist", || {
        names_in(&reader).contains("e")
    })
    .await;
    driver.abort();
    s.stop();
}

#[tokio::test]
async fn streaming_list_watcher_gets_state_then_changes() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    for i in 0..20 {
        create_ct(&s, "default", &format!("s-{i:02}"), json!({})).await;
    }
    let api = crontabs(s.client().await);
    let (reader, writer) = store();
    let cfg = watcher::Config::default().streaming_lists();
    let driver = tokio::spawn(async move {
        let mut stream = reflector(writer, watcher(api, cfg))
            .default_backoff()
            .boxed();
        while stream.next().await.is_some() {}
    });
    // Ready only after the initial-events-end bookmark.
    tokio::time::timeout(Duration::from_secs(20), reader.wait_until_ready())
        .await
        .expect("streaming list finished")
        .expect("store ready");
    assert_eq!(names_in(&reader).len(), 20);
    delete_ct(&s, "default", "s-00").await;
    create_ct(&s, "default", "s-99", json!({})).await;
    let want = server_names(&s).await;
    eventually("the watched changes", || names_in(&reader) == want).await;
    driver.abort();
    s.stop();
}
