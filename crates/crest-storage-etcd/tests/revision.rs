//! `current_revision` under concurrency (callers share requests, yet each sees its own
//! acknowledged writes) and `connect` with nothing listening.

use bytes::Bytes;
use crest_storage::{Storage, StorageError, WriteOutcome};
use crest_storage_etcd::testing::EtcdCluster;
use crest_storage_etcd::{EtcdOptions, EtcdStore};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_see_their_own_writes() {
    let cluster = tokio::task::block_in_place(|| EtcdCluster::start(1));
    let s = EtcdStore::connect(EtcdOptions {
        endpoints: cluster.client_urls(),
        ..Default::default()
    })
    .await
    .expect("connect");
    let mut tasks = vec![];
    for t in 0..32 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..20 {
                let rev = match s
                    .create(&format!("/registry/r/{t}-{i}"), Bytes::from_static(b"v"))
                    .await
                    .expect("create")
                {
                    WriteOutcome::Done(kv) => kv.mod_revision,
                    other => panic!("{other:?}"),
                };
                let now = s.current_revision().await.expect("current revision");
                assert!(now >= rev, "current revision {now} after my write at {rev}");
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    // Many readers at once, none writing: all answer the same revision.
    let want = s.current_revision().await.expect("current");
    let revs = futures::future::join_all((0..100).map(|_| s.current_revision())).await;
    assert!(revs.into_iter().all(|r| r == Ok(want)));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_with_nothing_listening_fails_promptly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let t0 = Instant::now();
    let got = EtcdStore::connect(EtcdOptions {
        endpoints: vec![format!("http://127.0.0.1:{port}")],
        dial_timeout: Duration::from_secs(1),
        ..Default::default()
    })
    .await;
    assert!(
        matches!(
            got,
            Err(StorageError::Unavailable(_) | StorageError::Timeout(_))
        ),
        "{:?}",
        got.err()
    );
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

/// etcd's count of watchers, from its `/metrics`.
fn etcd_watchers(url: &str) -> u64 {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).expect("connect to etcd");
    write!(
        c,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut body = String::new();
    c.read_to_string(&mut body).expect("metrics");
    body.lines()
        .find_map(|l| l.strip_prefix("etcd_debugging_mvcc_watcher_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as u64)
        .expect("etcd_debugging_mvcc_watcher_total in /metrics")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_watch_cancels_it_in_etcd() {
    let cluster = tokio::task::block_in_place(|| EtcdCluster::start(1));
    let url = cluster.client_urls()[0].clone();
    let s = EtcdStore::connect(EtcdOptions {
        endpoints: cluster.client_urls(),
        ..Default::default()
    })
    .await
    .expect("connect");
    let before = etcd_watchers(&url);
    let watches = futures::future::join_all(
        (0..5).map(|_| s.watch(crest_storage::WatchRequest::new("/registry/w/", 0))),
    )
    .await;
    assert_eq!(etcd_watchers(&url), before + 5);
    drop(watches);
    let deadline = Instant::now() + Duration::from_secs(5);
    while etcd_watchers(&url) != before {
        assert!(Instant::now() < deadline, "etcd still has the watchers");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.close().await;
}
