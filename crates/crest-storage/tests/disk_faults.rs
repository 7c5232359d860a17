//! The embedded store on a disk that fills up: writes fail with the cause, reads go on, and once
//! space is freed writes work again without reopening the store by hand, with nothing
//! acknowledged lost. Runs on a small tmpfs, so it needs root (CAP_SYS_ADMIN) to mount one; it
//! fails, rather than skips, when it cannot.

use bytes::Bytes;
use crest_storage::{
    EmbeddedOptions, EmbeddedStore, Storage, StorageError, WatchEvent, WatchRequest, WriteOutcome,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "support/tmpfs.rs"]
mod tmpfs;
use tmpfs::{fill, Tmpfs};

fn opts() -> EmbeddedOptions {
    EmbeddedOptions {
        retry_min: Duration::from_millis(20),
        retry_max: Duration::from_millis(200),
        fault_log_interval: Duration::from_secs(1),
        ..Default::default()
    }
}

fn done(o: WriteOutcome) -> i64 {
    match o {
        WriteOutcome::Done(kv) => kv.mod_revision,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_writes_with_the_cause_and_the_store_recovers_when_space_is_freed() {
    let fs = Tmpfs::mount("8m");
    let data = fs.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let store = EmbeddedStore::open(&data, opts()).unwrap();
    let mut watch = store.watch(WatchRequest::new("/k/", 0)).await.unwrap();
    // What was acknowledged, by key.
    let mut acked: BTreeMap<String, (i64, Bytes)> = BTreeMap::new();
    let value = |i: usize| Bytes::from(format!("{i:08}").repeat(256));
    for i in 0..20 {
        let key = format!("/k/{i:05}");
        let rev = done(store.create(&key, value(i)).await.unwrap());
        acked.insert(key, (rev, value(i)));
    }
    assert!(store.problem().is_none());

    let filler = fill(fs.path());
    // redb may still have free pages in its file: write until a write fails.
    let mut failure = None;
    for i in 20..20_000 {
        let key = format!("/k/{i:05}");
        match store.create(&key, value(i)).await {
            Ok(o) => {
                acked.insert(key, (done(o), value(i)));
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let failure = failure.expect("a write on the full disk failed");
    match &failure {
        StorageError::Io(m) => assert!(m.contains("No space left on device"), "{m}"),
        other => panic!("a failed write is an I/O error naming its cause: {other:?}"),
    }
    let problem = store.problem().expect("the store reports its fault");
    assert!(problem.contains("No space left on device"), "{problem}");

    // Later writes fail too (at once), and nothing failed is acknowledged.
    for i in 0..5 {
        let err = store
            .create(&format!("/k/failed-{i}"), Bytes::from("x"))
            .await
            .expect_err("the disk is still full");
        assert!(matches!(err, StorageError::Io(_)), "{err:?}");
    }
    // Reads go on (once the writer has reopened the database).
    let (some_key, (some_rev, some_value)) = acked.iter().next().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match store.get(some_key, 0).await {
            Ok(Some(kv)) => {
                assert_eq!((kv.mod_revision, &kv.value), (*some_rev, some_value));
                break;
            }
            other => assert!(
                Instant::now() < deadline,
                "reads did not work again on the full disk: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        store.problem().is_some(),
        "still faulted while the disk is full"
    );

    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let rev = loop {
        match store.create("/k/after", Bytes::from("after")).await {
            Ok(o) => break done(o),
            Err(StorageError::Io(_)) => {}
            Err(e) => panic!("{e:?}"),
        }
        assert!(
            Instant::now() < deadline,
            "writes did not work again after space was freed: {:?}",
            store.problem()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    acked.insert("/k/after".into(), (rev, Bytes::from("after")));
    assert!(store.problem().is_none(), "{:?}", store.problem());
    // Revisions went on from the last acknowledged one: nothing failed took one.
    let last_before = acked.values().map(|(r, _)| *r).filter(|r| *r != rev).max();
    assert_eq!(Some(rev - 1), last_before);

    // The watch saw every acknowledged write, in order, and nothing else.
    let mut seen = vec![];
    while seen.len() < acked.len() {
        match tokio::time::timeout(Duration::from_secs(10), watch.next()).await {
            Ok(Some(Ok(WatchEvent::Change(ev)))) => seen.push((ev.kv.key, ev.kv.mod_revision)),
            other => panic!("after {} events: {other:?}", seen.len()),
        }
    }
    let mut expected: Vec<(String, i64)> =
        acked.iter().map(|(k, (r, _))| (k.clone(), *r)).collect();
    expected.sort_by_key(|(_, r)| *r);
    assert_eq!(seen, expected);

    let check = |store: std::sync::Arc<EmbeddedStore>, acked: BTreeMap<String, (i64, Bytes)>| async move {
        for (key, (rev, value)) in &acked {
            let kv = store
                .get(key, 0)
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{key} lost"));
            assert_eq!((kv.mod_revision, &kv.value), (*rev, value), "{key}");
        }
        let all = store
            .range(crest_storage::RangeRequest {
                prefix: "/k/".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(
            all.kvs.len(),
            acked.len(),
            "only what was acknowledged is stored"
        );
    };
    check(store.clone(), acked.clone()).await;
    store.close().await;
    drop(watch);
    drop(store);
    // And after a restart.
    let store = EmbeddedStore::open(&data, opts()).unwrap();
    check(store.clone(), acked.clone()).await;
    store.close().await;
    drop(store);
    let leftovers: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, vec!["crest.redb".to_string()]);
}

/// Creating the store on a full disk fails with the cause and leaves no file behind.
#[test]
fn creating_the_store_on_a_full_disk_fails_cleanly() {
    let fs = Tmpfs::mount("1m");
    let data = fs.path().join("data");
    std::fs::create_dir(&data).unwrap();
    fill(fs.path());
    let err = EmbeddedStore::open(&data, opts()).err().expect("no space");
    assert!(err.to_string().contains("No space left on device"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[cfg(unix)]
#[test]
fn the_store_file_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let file = dir.path().join("crest.redb");
    {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let store = EmbeddedStore::open(dir.path(), opts()).unwrap();
        assert_eq!(mode(&file), 0o600);
        rt.block_on(store.close());
    }
    // A file an older Crest left readable by everyone is narrowed.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = EmbeddedStore::open(dir.path(), opts()).unwrap();
    assert_eq!(mode(&file), 0o600);
    rt.block_on(store.close());
}
