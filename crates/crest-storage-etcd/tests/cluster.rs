//! [`EtcdStore`] against a 3-member cluster losing members, against a cluster with every member
//! down (calls fail promptly, the store heals when they return), and against a hung member.

use bytes::Bytes;
use crest_storage::{
    RangeRequest, Revision, Storage, StorageError, WatchEvent, WatchRequest, WatchStream,
    WriteOutcome,
};
use crest_storage_etcd::testing::EtcdCluster;
use crest_storage_etcd::{EtcdOptions, EtcdStore};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(2);

async fn connect(cluster: &EtcdCluster) -> Arc<EtcdStore> {
    EtcdStore::connect(EtcdOptions {
        endpoints: cluster.client_urls(),
        request_timeout: TIMEOUT,
        ..Default::default()
    })
    .await
    .expect("connect")
}

async fn create(s: &EtcdStore, key: &str) -> Revision {
    match s.create(key, Bytes::from_static(b"v")).await {
        Ok(WriteOutcome::Done(kv)) => kv.mod_revision,
        other => panic!("create {key}: {other:?}"),
    }
}

/// Writes, reads and a watch from `after`; returns the revision of the last write.
async fn exercise(s: &EtcdStore, tag: &str, w: &mut Watcher) {
    for i in 0..20 {
        let key = format!("/registry/c/{tag}-{i}");
        let rev = create(s, &key).await;
        let got = s.get(&key, 0).await.expect("get").expect("present");
        assert_eq!(got.mod_revision, rev);
        assert!(s.current_revision().await.expect("current") >= rev);
        w.expect(s, &key, rev).await;
    }
    let r = s
        .range(RangeRequest {
            prefix: "/registry/c/".into(),
            count: true,
            ..Default::default()
        })
        .await
        .expect("range");
    assert!(r
        .kvs
        .iter()
        .any(|kv| kv.key.starts_with(&format!("/registry/c/{tag}-"))));
}

/// A watch of `/registry/c/` that re-watches from the last revision received when its stream
/// is cut (a member it was attached to died), checking there is no gap.
struct Watcher {
    stream: WatchStream,
    last: Revision,
    last_key: String,
}

impl Watcher {
    async fn new(s: &EtcdStore, after: Revision) -> Watcher {
        let stream = s
            .watch(WatchRequest::new("/registry/c/", after))
            .await
            .expect("watch");
        Watcher {
            stream,
            last: after,
            last_key: String::new(),
        }
    }

    async fn expect(&mut self, s: &EtcdStore, key: &str, rev: Revision) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(Instant::now() < deadline, "{key} at {rev} not watched");
            match tokio::time::timeout(Duration::from_secs(5), self.stream.next()).await {
                Ok(Some(Ok(WatchEvent::Change(ev)))) => {
                    assert_eq!(ev.kv.mod_revision, self.last + 1, "no gap in the changes");
                    self.last = ev.kv.mod_revision;
                    self.last_key = ev.kv.key.clone();
                    if ev.kv.mod_revision == rev {
                        assert_eq!(ev.kv.key, key);
                        return;
                    }
                }
                Ok(Some(Ok(WatchEvent::Progress(_)))) => {}
                Ok(Some(Err(StorageError::Unavailable(_)))) | Ok(None) | Err(_) => {
                    // Cut off (or silent): watch again from where we are.
                    match s.watch(WatchRequest::new("/registry/c/", self.last)).await {
                        Ok(w) => self.stream = w,
                        Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                }
                Ok(Some(Err(e))) => panic!("watch: {e}"),
            }
        }
    }
}

/// When the member lost was the leader, the others elect a new one (election timeout 500 ms):
/// requests meanwhile may fail. Waits until a write goes through again, then everything must.
static SETTLE: AtomicUsize = AtomicUsize::new(0);

async fn settle(s: &EtcdStore) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match s
            .create(
                &format!(
                    "/registry/c/settle-{}",
                    SETTLE.fetch_add(1, Ordering::Relaxed)
                ),
                Bytes::from_static(b"v"),
            )
            .await
        {
            Ok(_) => return,
            Err(e) if Instant::now() < deadline => {
                eprintln!("settling: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("no write went through within 10 s: {e}"),
        }
    }
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_one_member_of_three_keeps_everything_working() {
    let mut cluster = blocking(|| EtcdCluster::start(3));
    let s = connect(&cluster).await;
    let start = s.current_revision().await.expect("current");
    let mut w = Watcher::new(&s, start).await;
    exercise(&s, "all", &mut w).await;
    for down in 0..3 {
        blocking(|| cluster.kill(down));
        settle(&s).await;
        exercise(&s, &format!("without-{down}"), &mut w).await;
        blocking(|| cluster.restart(down));
        settle(&s).await;
        exercise(&s, &format!("with-{down}"), &mut w).await;
    }
    // A watch started now replays all of it without a gap.
    let mut again = Watcher::new(&s, start).await;
    again.expect(&s, &w.last_key, w.last).await;
    s.close().await;
}

fn unavailable(e: &StorageError) -> bool {
    matches!(e, StorageError::Unavailable(_) | StorageError::Timeout(_))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_member_down_calls_fail_promptly_and_the_store_heals() {
    let mut cluster = blocking(|| EtcdCluster::start(3));
    let s = connect(&cluster).await;
    let rev = create(&s, "/registry/c/before").await;
    let mut w = s
        .watch(WatchRequest::new("/registry/c/", rev))
        .await
        .expect("watch");
    blocking(|| {
        for i in 0..3 {
            cluster.kill(i);
        }
    });
    let bound = TIMEOUT + Duration::from_secs(1);
    let t0 = Instant::now();
    let e = s
        .create("/registry/c/during", Bytes::from_static(b"v"))
        .await
        .expect_err("create with etcd down");
    assert!(unavailable(&e), "{e}");
    assert!(t0.elapsed() < bound, "create took {:?}", t0.elapsed());
    let t0 = Instant::now();
    let e = s.get("/registry/c/before", 0).await.expect_err("get");
    assert!(unavailable(&e), "{e}");
    assert!(t0.elapsed() < bound, "get took {:?}", t0.elapsed());
    let t0 = Instant::now();
    let e = s.current_revision().await.expect_err("current revision");
    assert!(unavailable(&e), "{e}");
    assert!(
        t0.elapsed() < bound,
        "current revision took {:?}",
        t0.elapsed()
    );
    let t0 = Instant::now();
    let e = s
        .watch(WatchRequest::new("/registry/c/", rev))
        .await
        .err()
        .expect("a watch with etcd down");
    assert!(unavailable(&e), "{e}");
    assert!(t0.elapsed() < bound, "watch took {:?}", t0.elapsed());
    // The open watch ends with an error.
    match tokio::time::timeout(Duration::from_secs(15), w.next()).await {
        Ok(Some(Err(e))) => assert!(unavailable(&e), "{e}"),
        other => panic!("the watch did not end: {other:?}"),
    }
    // Back up: the same store works again.
    blocking(|| cluster.restart_all());
    let deadline = Instant::now() + Duration::from_secs(20);
    let rev = loop {
        match s
            .create("/registry/c/after", Bytes::from_static(b"v"))
            .await
        {
            Ok(WriteOutcome::Done(kv)) => break kv.mod_revision,
            Ok(other) => panic!("{other:?}"),
            Err(e) if unavailable(&e) && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("the store did not heal: {e}"),
        }
    };
    assert_eq!(
        s.get("/registry/c/before", 0)
            .await
            .expect("get")
            .map(|kv| kv.value),
        Some(Bytes::from_static(b"v")),
        "acknowledged writes survive"
    );
    assert!(s.current_revision().await.expect("current") >= rev);
    let mut w = s
        .watch(WatchRequest::new("/registry/c/", 0))
        .await
        .expect("watch");
    let mut seen = vec![];
    while seen.len() < 2 {
        match tokio::time::timeout(Duration::from_secs(5), w.next()).await {
            Ok(Some(Ok(WatchEvent::Change(ev)))) => seen.push(ev.kv.key),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(seen, ["/registry/c/before", "/registry/c/after"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_member_times_out() {
    let cluster = blocking(|| EtcdCluster::start(1));
    let s = connect(&cluster).await;
    create(&s, "/registry/c/a").await;
    cluster.pause(0);
    let bound = TIMEOUT + Duration::from_secs(1);
    let t0 = Instant::now();
    let e = s
        .get("/registry/c/a", 0)
        .await
        .expect_err("get from a hung etcd");
    assert!(matches!(e, StorageError::Timeout(_)), "{e}");
    assert!(t0.elapsed() < bound, "took {:?}", t0.elapsed());
    let t0 = Instant::now();
    let e = s
        .create("/registry/c/b", Bytes::from_static(b"v"))
        .await
        .expect_err("create on a hung etcd");
    assert!(matches!(e, StorageError::Timeout(_)), "{e}");
    assert!(t0.elapsed() < bound, "took {:?}", t0.elapsed());
    let t0 = Instant::now();
    let e = s.current_revision().await.expect_err("current revision");
    assert!(matches!(e, StorageError::Timeout(_)), "{e}");
    assert!(t0.elapsed() < bound, "took {:?}", t0.elapsed());
    cluster.resume(0);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match s.get("/registry/c/a", 0).await {
            Ok(got) => {
                assert!(got.is_some());
                break;
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("after resume: {e}"),
        }
    }
    s.close().await;
}

/// etcd's backend quota exhausted (its NOSPACE alarm): writes fail at once with
/// [`StorageError::Io`] carrying etcd's message (not retried as an outage), reads go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_etcd_quota_fails_writes_with_etcds_message_and_reads_go_on() {
    // 4 MiB: a few hundred KiB values fill it quickly.
    let cluster =
        blocking(|| EtcdCluster::start_with_args(1, &["--quota-backend-bytes", "4194304"]));
    let s = connect(&cluster).await;
    let first = create(&s, "/registry/c/first").await;
    let value = Bytes::from(vec![b'x'; 512 * 1024]);
    let mut refused = None;
    for i in 0..64 {
        match s
            .create(&format!("/registry/c/big-{i}"), value.clone())
            .await
        {
            Ok(WriteOutcome::Done(_)) => {}
            Err(e) => {
                refused = Some(e);
                break;
            }
            Ok(other) => panic!("big-{i}: {other:?}"),
        }
    }
    let started = Instant::now();
    let e = refused.expect("a 4 MiB quota must run out within 32 MiB of writes");
    match &e {
        StorageError::Io(m) => assert!(m.contains("database space exceeded"), "{m}"),
        other => panic!("expected Io (etcd's NOSPACE), got {other:?}"),
    }
    // Every later write fails the same way, promptly (no retries until the timeout).
    match s
        .create("/registry/c/small", Bytes::from_static(b"v"))
        .await
    {
        Err(StorageError::Io(m)) => assert!(m.contains("database space exceeded"), "{m}"),
        other => panic!("a write under the alarm: {other:?}"),
    }
    assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
    // Reads go on.
    let got = s
        .get("/registry/c/first", 0)
        .await
        .expect("a read under the alarm")
        .expect("present");
    assert_eq!(got.mod_revision, first);
}
