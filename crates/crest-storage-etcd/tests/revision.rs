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
