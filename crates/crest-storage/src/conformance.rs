//! The storage contract as tests, written once against `dyn Storage` and run for every backend.
//!
//! A backend's test file describes how to open it and expands one `#[test]` per case:
//!
//! ```ignore
//! fn backend() -> crest_storage::conformance::Backend {
//!     crest_storage::conformance::Backend::new(|dir| {
//!         Box::pin(async move { Ok(MyStore::open(&dir).await? as std::sync::Arc<dyn Storage>) })
//!     })
//! }
//! crest_storage::conformance_tests!(backend());
//! ```
//!
//! Each case gets a fresh empty directory and may open the backend on it more than once (after
//! `close`, to check what survives a restart). Cases panic on a violation.

use crate::api::{
    BoxFuture, EventType, KeyValue, RangeRequest, Revision, Storage, StorageError, WatchEvent,
    WatchRequest, WatchStream, Write, WriteOutcome,
};
use bytes::Bytes;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

type OpenFn =
    dyn Fn(PathBuf) -> BoxFuture<'static, crate::Result<Arc<dyn Storage>>> + Send + Sync + 'static;

type FixtureFn = dyn Fn(&Path) -> Box<dyn Any + Send> + Send + Sync + 'static;

/// How the suite reaches one backend.
#[derive(Clone)]
pub struct Backend {
    open: Arc<OpenFn>,
    /// How long an idle `progress_notify` watch may wait for its notification (the backend's
    /// interval plus slack). `None` skips that check.
    pub progress_within: Option<Duration>,
    /// The revision of an empty store: 0 for the embedded backend, 1 for etcd (whose first
    /// write gets revision 2). Cases check revisions relative to it.
    pub empty_revision: Revision,
    fixture: Option<Arc<FixtureFn>>,
}

impl Backend {
    /// `open(dir)` opens the backend on the data in `dir` (empty at first).
    pub fn new(
        open: impl Fn(PathBuf) -> BoxFuture<'static, crate::Result<Arc<dyn Storage>>>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Backend {
            open: Arc::new(open),
            progress_within: None,
            empty_revision: 0,
            fixture: None,
        }
    }

    /// The revision of an empty store (see [`Backend::empty_revision`]).
    pub fn empty_revision(mut self, r: Revision) -> Self {
        self.empty_revision = r;
        self
    }

    /// Per-case state: `fixture(dir)` runs before the case (outside its runtime) and what it
    /// returns is dropped after the case, before `dir` is removed. An external backend starts
    /// its server here (leaving what `open` needs in `dir`) and stops it on drop.
    pub fn fixture(
        mut self,
        fixture: impl Fn(&Path) -> Box<dyn Any + Send> + Send + Sync + 'static,
    ) -> Self {
        self.fixture = Some(Arc::new(fixture));
        self
    }

    pub fn progress_within(mut self, d: Duration) -> Self {
        self.progress_within = Some(d);
        self
    }
}

/// What a case gets: the backend and its own directory.
pub struct Ctx {
    pub backend: Backend,
    pub dir: PathBuf,
}

impl Ctx {
    pub async fn open(&self) -> Arc<dyn Storage> {
        (self.backend.open)(self.dir.clone())
            .await
            .expect("open the backend")
    }

    /// The revision `n` writes after an empty store's.
    pub fn rev(&self, n: Revision) -> Revision {
        self.backend.empty_revision + n
    }
}

pub type Case = fn(Arc<Ctx>) -> BoxFuture<'static, ()>;

/// Runs one case on a fresh directory in its own multi-threaded runtime.
pub fn run(backend: Backend, case: Case) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = backend.fixture.clone();
    let _fixture = fixture.map(|f| f(dir.path()));
    let ctx = Arc::new(Ctx {
        backend,
        dir: dir.path().to_path_buf(),
    });
    rt.block_on(async move {
        tokio::time::timeout(Duration::from_secs(120), case(ctx))
            .await
            .expect("the case finished within 2 minutes")
    });
}

/// One `#[test]` per case of the suite for the backend `$backend` (an expression giving a
/// [`Backend`]).
#[macro_export]
macro_rules! conformance_tests {
    ($backend:expr) => {
        $crate::conformance_tests!(@cases $backend;
            revisions_are_global_and_strictly_increasing,
            create_only_if_absent,
            update_only_at_the_expected_revision,
            delete_only_at_the_expected_revision,
            reads_at_latest_and_past_revisions,
            paging_reads_one_snapshot,
            count_and_more,
            prefixes_are_isolated,
            watch_delivers_changes_in_order_with_prev_kv,
            watch_replays_long_history_then_follows,
            watch_from_a_future_revision_waits,
            watch_from_a_compacted_revision_fails,
            compaction_keeps_the_latest_state,
            future_revisions_are_refused,
            progress_on_request,
            progress_when_idle,
            concurrent_writes_get_distinct_revisions,
            batched_writes_have_their_own_conditions_and_revisions,
            restart_keeps_data_and_revisions,
            close_ends_writes_and_watches,
        );
    };
    (@cases $backend:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::conformance::run($backend, |ctx| ::std::boxed::Box::pin($crate::conformance::$case(ctx)))
            }
        )*
    };
}

// ---- helpers ----

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

async fn create(s: &dyn Storage, key: &str, value: &str) -> KeyValue {
    match s.create(key, b(value)).await.expect("create") {
        WriteOutcome::Done(kv) => kv,
        other => panic!("create {key}: {other:?}"),
    }
}

async fn update(s: &dyn Storage, key: &str, expected: Revision, value: &str) -> KeyValue {
    match s.update(key, expected, b(value)).await.expect("update") {
        WriteOutcome::Done(kv) => kv,
        other => panic!("update {key}: {other:?}"),
    }
}

async fn delete(s: &dyn Storage, key: &str, expected: Revision) -> KeyValue {
    match s.delete(key, expected).await.expect("delete") {
        WriteOutcome::Done(kv) => kv,
        other => panic!("delete {key}: {other:?}"),
    }
}

async fn current(s: &dyn Storage) -> Revision {
    s.current_revision().await.expect("current revision")
}

async fn range(s: &dyn Storage, prefix: &str, revision: Revision) -> Vec<(String, String)> {
    s.range(RangeRequest {
        prefix: prefix.into(),
        revision,
        ..Default::default()
    })
    .await
    .expect("range")
    .kvs
    .into_iter()
    .map(|kv| (kv.key, String::from_utf8_lossy(&kv.value).into_owned()))
    .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn watch(s: &dyn Storage, prefix: &str, after: Revision) -> WatchStream {
    s.watch(WatchRequest::new(prefix, after))
        .await
        .expect("watch")
}

/// The next item within 10 s.
async fn next(w: &mut WatchStream) -> Option<crate::Result<WatchEvent>> {
    tokio::time::timeout(Duration::from_secs(10), w.next())
        .await
        .expect("a watch item within 10 s")
}

async fn next_change(w: &mut WatchStream) -> crate::Event {
    loop {
        match next(w).await {
            Some(Ok(WatchEvent::Change(ev))) => return ev,
            Some(Ok(WatchEvent::Progress(_))) => continue,
            other => panic!("expected a change, got {other:?}"),
        }
    }
}

/// Nothing arrives within `ms`.
async fn quiet(w: &mut WatchStream, ms: u64) {
    if let Ok(item) = tokio::time::timeout(Duration::from_millis(ms), w.next()).await {
        panic!("expected nothing, got {item:?}");
    }
}

async fn reopen(ctx: &Ctx, s: Arc<dyn Storage>) -> Arc<dyn Storage> {
    s.close().await;
    drop(s);
    // A backend may let go of its files a moment after close (tasks finishing).
    let mut last = None;
    for _ in 0..200 {
        match (ctx.backend.open)(ctx.dir.clone()).await {
            Ok(s) => return s,
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("reopen: {last:?}")
}

// ---- cases ----

/// One global revision: the backend's `empty_revision` when empty, +1 for every successful write
/// of any key, unchanged by a failed condition.
pub async fn revisions_are_global_and_strictly_increasing(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    assert_eq!(current(&*s).await, ctx.rev(0));
    assert!(
        range(&*s, "/registry/", 0).await.is_empty(),
        "empty at first"
    );
    let a = create(&*s, "/registry/r/a", "1").await;
    assert_eq!(a.mod_revision, ctx.rev(1));
    let bkv = create(&*s, "/registry/r/b", "1").await;
    assert_eq!(bkv.mod_revision, ctx.rev(2));
    let a2 = update(&*s, "/registry/r/a", a.mod_revision, "2").await;
    assert_eq!(a2.mod_revision, ctx.rev(3));
    assert!(matches!(
        s.create("/registry/r/a", b("x")).await.expect("create"),
        WriteOutcome::Conflict(_)
    ));
    assert_eq!(current(&*s).await, ctx.rev(3));
    let d = delete(&*s, "/registry/r/b", bkv.mod_revision).await;
    assert_eq!(d.mod_revision, ctx.rev(4));
    assert_eq!(current(&*s).await, ctx.rev(4));
    let r = s
        .range(RangeRequest {
            prefix: "/registry/r/".into(),
            ..Default::default()
        })
        .await
        .expect("range");
    assert_eq!(
        r.revision,
        ctx.rev(4),
        "a latest read is served at the current revision"
    );
    s.close().await;
}

pub async fn create_only_if_absent(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let kv = create(&*s, "/registry/c/a", "one").await;
    assert_eq!(
        (kv.create_revision, kv.mod_revision, kv.version),
        (ctx.rev(1), ctx.rev(1), 1)
    );
    assert_eq!(kv.value, b("one"));
    match s.create("/registry/c/a", b("two")).await.expect("create") {
        WriteOutcome::Conflict(Some(cur)) => assert_eq!(cur, kv),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.get("/registry/c/a", 0)
            .await
            .expect("get")
            .map(|k| k.value),
        Some(b("one"))
    );
    s.close().await;
}

pub async fn update_only_at_the_expected_revision(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let kv = create(&*s, "/registry/u/a", "1").await;
    create(&*s, "/registry/u/other", "x").await;
    match s
        .update("/registry/u/a", kv.mod_revision + 1, b("2"))
        .await
        .expect("update")
    {
        WriteOutcome::Conflict(Some(cur)) => assert_eq!(cur, kv),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.update("/registry/u/missing", 1, b("2"))
            .await
            .expect("update"),
        WriteOutcome::Conflict(None)
    );
    let up = update(&*s, "/registry/u/a", kv.mod_revision, "2").await;
    assert_eq!(
        (up.create_revision, up.mod_revision, up.version),
        (ctx.rev(1), ctx.rev(3), 2)
    );
    // The old revision no longer matches.
    assert!(matches!(
        s.update("/registry/u/a", kv.mod_revision, b("3"))
            .await
            .expect("update"),
        WriteOutcome::Conflict(Some(_))
    ));
    assert_eq!(s.get("/registry/u/a", 0).await.expect("get"), Some(up));
    s.close().await;
}

pub async fn delete_only_at_the_expected_revision(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let kv = create(&*s, "/registry/d/a", "1").await;
    match s.delete("/registry/d/a", 7).await.expect("delete") {
        WriteOutcome::Conflict(Some(cur)) => assert_eq!(cur, kv),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.delete("/registry/d/missing", 0).await.expect("delete"),
        WriteOutcome::Conflict(None)
    );
    let gone = delete(&*s, "/registry/d/a", kv.mod_revision).await;
    assert_eq!(
        gone.mod_revision,
        ctx.rev(2),
        "a delete answers its own revision"
    );
    assert_eq!(gone.value, b("1"), "and the deleted value");
    assert_eq!(s.get("/registry/d/a", 0).await.expect("get"), None);
    // Created again: a new life (create revision, version 1).
    let again = create(&*s, "/registry/d/a", "2").await;
    assert_eq!(
        (again.create_revision, again.mod_revision, again.version),
        (ctx.rev(3), ctx.rev(3), 1)
    );
    // expected 0 deletes whatever is there.
    update(&*s, "/registry/d/a", ctx.rev(3), "3").await;
    let gone = delete(&*s, "/registry/d/a", 0).await;
    assert_eq!((gone.mod_revision, gone.value), (ctx.rev(5), b("3")));
    s.close().await;
}

pub async fn reads_at_latest_and_past_revisions(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let a = create(&*s, "/registry/h/a", "a1").await; // 1
    let bkv = create(&*s, "/registry/h/b", "b1").await; // 2
    update(&*s, "/registry/h/a", a.mod_revision, "a2").await; // 3
    delete(&*s, "/registry/h/b", bkv.mod_revision).await; // 4
    create(&*s, "/registry/h/c", "c1").await; // 5
    let expect: [&[(&str, &str)]; 5] = [
        &[("/registry/h/a", "a1")],
        &[("/registry/h/a", "a1"), ("/registry/h/b", "b1")],
        &[("/registry/h/a", "a2"), ("/registry/h/b", "b1")],
        &[("/registry/h/a", "a2")],
        &[("/registry/h/a", "a2"), ("/registry/h/c", "c1")],
    ];
    for (i, want) in expect.iter().enumerate() {
        let rev = ctx.rev(i as Revision + 1);
        assert_eq!(
            range(&*s, "/registry/h/", rev).await,
            pairs(want),
            "range at {rev}"
        );
        let r = s
            .range(RangeRequest {
                prefix: "/registry/h/".into(),
                revision: rev,
                ..Default::default()
            })
            .await
            .expect("range");
        assert_eq!(r.revision, rev);
        for key in ["/registry/h/a", "/registry/h/b", "/registry/h/c"] {
            let got = s.get(key, rev).await.expect("get");
            let want = want.iter().find(|(k, _)| *k == key).map(|(_, v)| b(v));
            assert_eq!(got.map(|k| k.value), want, "{key} at {rev}");
        }
    }
    // A past value carries its own revisions.
    let old = s
        .get("/registry/h/a", ctx.rev(2))
        .await
        .expect("get")
        .expect("present");
    assert_eq!(
        (old.create_revision, old.mod_revision, old.version),
        (ctx.rev(1), ctx.rev(1), 1)
    );
    assert_eq!(range(&*s, "/registry/h/", 0).await, pairs(expect[4]));
    s.close().await;
}

pub async fn paging_reads_one_snapshot(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut revs = std::collections::HashMap::new();
    for i in 0..25 {
        let k = format!("/registry/p/{i:02}");
        revs.insert(k.clone(), create(&*s, &k, "v1").await.mod_revision);
    }
    let at = current(&*s).await;
    let mut seen = vec![];
    let mut start_after = None;
    loop {
        let page = s
            .range(RangeRequest {
                prefix: "/registry/p/".into(),
                start_after: start_after.clone(),
                limit: 10,
                revision: at,
                count: true,
            })
            .await
            .expect("page");
        assert_eq!(page.revision, at);
        assert_eq!(
            page.count,
            25 - seen.len(),
            "count: every key after start_after"
        );
        seen.extend(page.kvs.iter().map(|kv| {
            assert_eq!(kv.value, b("v1"), "{} read at the snapshot", kv.key);
            kv.key.clone()
        }));
        // Writes between pages are not seen by the later pages.
        let k = format!("/registry/p/{:02}", seen.len() + 2);
        if let Some(r) = revs.get(&k).copied() {
            let kv = update(&*s, &k, r, "v2").await;
            revs.insert(k, kv.mod_revision);
        }
        create(&*s, &format!("/registry/p/{:02}x", seen.len()), "new").await;
        if !page.more {
            break;
        }
        start_after = seen.last().cloned();
    }
    let want: Vec<String> = (0..25).map(|i| format!("/registry/p/{i:02}")).collect();
    assert_eq!(seen, want);
    s.close().await;
}

pub async fn count_and_more(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    for i in 0..5 {
        create(&*s, &format!("/registry/n/{i}"), "v").await;
    }
    let r = s
        .range(RangeRequest {
            prefix: "/registry/n/".into(),
            limit: 2,
            count: true,
            ..Default::default()
        })
        .await
        .expect("range");
    assert_eq!((r.kvs.len(), r.more, r.count), (2, true, 5));
    let r = s
        .range(RangeRequest {
            prefix: "/registry/n/".into(),
            limit: 5,
            count: true,
            ..Default::default()
        })
        .await
        .expect("range");
    assert_eq!((r.kvs.len(), r.more, r.count), (5, false, 5));
    let r = s
        .range(RangeRequest {
            prefix: "/registry/n/".into(),
            start_after: Some("/registry/n/3".into()),
            count: true,
            ..Default::default()
        })
        .await
        .expect("range");
    assert_eq!((r.kvs.len(), r.more, r.count), (1, false, 1));
    assert_eq!(r.kvs[0].key, "/registry/n/4");
    let r = s
        .range(RangeRequest {
            prefix: "/registry/n/".into(),
            limit: 3,
            ..Default::default()
        })
        .await
        .expect("range");
    assert_eq!((r.kvs.len(), r.more), (3, true));
    s.close().await;
}

pub async fn prefixes_are_isolated(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut w = watch(&*s, "/registry/a/", 0).await;
    create(&*s, "/registry/a", "parent").await;
    create(&*s, "/registry/a/1", "in").await;
    create(&*s, "/registry/ab/1", "sibling").await;
    create(&*s, "/registry/a/2", "in").await;
    create(&*s, "/registry/b/1", "other").await;
    assert_eq!(
        range(&*s, "/registry/a/", 0).await,
        pairs(&[("/registry/a/1", "in"), ("/registry/a/2", "in")])
    );
    assert_eq!(
        range(&*s, "/registry/ab/", 0).await,
        pairs(&[("/registry/ab/1", "sibling")])
    );
    assert_eq!(next_change(&mut w).await.kv.key, "/registry/a/1");
    assert_eq!(next_change(&mut w).await.kv.key, "/registry/a/2");
    quiet(&mut w, 200).await;
    // Paging from a key outside the prefix stays inside it.
    let r = s
        .range(RangeRequest {
            prefix: "/registry/a/".into(),
            start_after: Some("/registry/".into()),
            ..Default::default()
        })
        .await
        .expect("range");
    assert_eq!(r.kvs.len(), 2);
    s.close().await;
}

pub async fn watch_delivers_changes_in_order_with_prev_kv(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut w = watch(&*s, "/registry/w/", 0).await;
    let c = create(&*s, "/registry/w/a", "1").await;
    let u = update(&*s, "/registry/w/a", c.mod_revision, "2").await;
    let d = delete(&*s, "/registry/w/a", u.mod_revision).await;

    let ev = next_change(&mut w).await;
    assert_eq!(ev.event_type, EventType::Put);
    assert_eq!(ev.kv, c);
    assert_eq!(ev.prev_kv, None);

    let ev = next_change(&mut w).await;
    assert_eq!(ev.event_type, EventType::Put);
    assert_eq!(ev.kv, u);
    assert_eq!(ev.prev_kv, Some(c.clone()));

    let ev = next_change(&mut w).await;
    assert_eq!(ev.event_type, EventType::Delete);
    assert_eq!(
        (ev.kv.key.as_str(), ev.kv.mod_revision),
        ("/registry/w/a", d.mod_revision)
    );
    assert!(ev.kv.value.is_empty());
    assert_eq!(ev.prev_kv, Some(u.clone()));

    // The same from history.
    let mut h = watch(&*s, "/registry/w/", 0).await;
    for want in [&c, &u] {
        assert_eq!(&next_change(&mut h).await.kv, want);
    }
    let ev = next_change(&mut h).await;
    assert_eq!((ev.event_type, ev.prev_kv), (EventType::Delete, Some(u)));
    s.close().await;
}

pub async fn watch_replays_long_history_then_follows(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    // Far more history than a replay chunk (and than a watch buffer holds), mixed with keys of
    // another prefix, and writes still going on while the watch catches up.
    const N: usize = 3000;
    let mut tasks = vec![];
    for t in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..N / 8 {
                let prefix = if i % 3 == 0 {
                    "/registry/other/"
                } else {
                    "/registry/long/"
                };
                create(&*s, &format!("{prefix}{t}-{i}"), "v").await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    let at = current(&*s).await;
    let want: Vec<Revision> = {
        let mut v = vec![];
        for item in s
            .range(RangeRequest {
                prefix: "/registry/long/".into(),
                ..Default::default()
            })
            .await
            .expect("range")
            .kvs
        {
            v.push(item.mod_revision);
        }
        v.sort();
        v
    };
    let mut w = watch(&*s, "/registry/long/", 10).await;
    let more = {
        let s = s.clone();
        tokio::spawn(async move {
            let mut revs = vec![];
            for i in 0..200 {
                revs.push(
                    create(&*s, &format!("/registry/long/z{i}"), "v")
                        .await
                        .mod_revision,
                );
            }
            revs
        })
    };
    let live = more.await.expect("live writer");
    let mut last = 10;
    let mut got = vec![];
    while got.len() < want.iter().filter(|&&r| r > 10).count() + live.len() {
        let ev = next_change(&mut w).await;
        assert!(ev.kv.mod_revision > last, "in revision order, no repeats");
        assert!(ev.kv.key.starts_with("/registry/long/"));
        last = ev.kv.mod_revision;
        got.push(last);
    }
    let mut expected: Vec<Revision> = want.into_iter().filter(|&r| r > 10).collect();
    expected.extend(live);
    assert_eq!(
        got, expected,
        "every change after 10 up to {at} and the live ones"
    );
    quiet(&mut w, 200).await;
    s.close().await;
}

/// As etcd: a watch may start after the current revision; it gets the changes from there.
pub async fn watch_from_a_future_revision_waits(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    create(&*s, "/registry/f/a", "1").await; // 1
    let mut w = watch(&*s, "/registry/f/", ctx.rev(3)).await;
    create(&*s, "/registry/f/b", "1").await; // 2
    create(&*s, "/registry/f/c", "1").await; // 3
    create(&*s, "/registry/f/d", "1").await; // 4
    let ev = next_change(&mut w).await;
    assert_eq!(
        (ev.kv.key.as_str(), ev.kv.mod_revision),
        ("/registry/f/d", ctx.rev(4))
    );
    s.close().await;
}

pub async fn watch_from_a_compacted_revision_fails(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut rev = create(&*s, "/registry/x/a", "0").await.mod_revision;
    for i in 1..10 {
        rev = update(&*s, "/registry/x/a", rev, &i.to_string())
            .await
            .mod_revision;
    }
    s.compact(ctx.rev(6)).await.expect("compact");
    assert_eq!(s.compacted_revision(), ctx.rev(6));
    match s.watch(WatchRequest::new("/registry/x/", ctx.rev(2))).await {
        Err(StorageError::Compacted {
            requested,
            compacted,
        }) => {
            assert_eq!((requested, compacted), (ctx.rev(2), ctx.rev(6)))
        }
        // A backend may accept the watch and fail it as its first item (etcd's cancel).
        Ok(mut w) => match next(&mut w).await {
            Some(Err(StorageError::Compacted { .. })) => assert!(next(&mut w).await.is_none()),
            other => panic!("expected Compacted, got {other:?}"),
        },
        Err(e) => panic!("expected Compacted, got {e}"),
    }
    // From the compacted revision on, history is there.
    let mut w = watch(&*s, "/registry/x/", ctx.rev(6)).await;
    let ev = next_change(&mut w).await;
    assert_eq!(ev.kv.mod_revision, ctx.rev(7));
    assert_eq!(ev.prev_kv.map(|p| p.mod_revision), Some(ctx.rev(6)));
    s.close().await;
}

pub async fn compaction_keeps_the_latest_state(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut live = std::collections::BTreeMap::new();
    for i in 0..30 {
        let k = format!("/registry/k/{i:02}");
        let mut kv = create(&*s, &k, "0").await;
        for v in 1..(i % 4) {
            kv = update(&*s, &k, kv.mod_revision, &v.to_string()).await;
        }
        if i % 5 == 0 {
            delete(&*s, &k, kv.mod_revision).await;
        } else {
            live.insert(k, kv);
        }
    }
    let mid = current(&*s).await;
    let at_mid = range(&*s, "/registry/k/", mid).await;
    // More changes after the compaction point.
    let first = live.keys().next().cloned().expect("a live key");
    let kv = live[&first].clone();
    let newer = update(&*s, &first, kv.mod_revision, "newer").await;
    s.compact(mid).await.expect("compact");
    assert_eq!(
        range(&*s, "/registry/k/", mid).await,
        at_mid,
        "the compacted revision still reads"
    );
    assert!(matches!(
        s.get(&first, mid - 1).await,
        Err(StorageError::Compacted { .. })
    ));
    assert!(matches!(
        s.range(RangeRequest {
            prefix: "/registry/k/".into(),
            revision: ctx.rev(1),
            ..Default::default()
        })
        .await,
        Err(StorageError::Compacted { .. })
    ));
    live.insert(first.clone(), newer);
    let latest = s
        .range(RangeRequest {
            prefix: "/registry/k/".into(),
            ..Default::default()
        })
        .await
        .expect("range")
        .kvs;
    let want: Vec<KeyValue> = live.values().cloned().collect();
    assert_eq!(latest, want, "every key's latest state, revisions included");
    // Compacting everything keeps it too; compacting again or lower is a no-op.
    let now = current(&*s).await;
    s.compact(now).await.expect("compact");
    s.compact(mid).await.expect("compact lower");
    assert_eq!(s.compacted_revision(), now);
    let after = s
        .range(RangeRequest {
            prefix: "/registry/k/".into(),
            ..Default::default()
        })
        .await
        .expect("range")
        .kvs;
    assert_eq!(after, want);
    let mut w = watch(&*s, "/registry/k/", now).await;
    let kv = update(&*s, &first, live[&first].mod_revision, "last").await;
    let ev = next_change(&mut w).await;
    assert_eq!(ev.kv, kv);
    assert_eq!(
        ev.prev_kv,
        Some(live[&first].clone()),
        "prev_kv after compaction"
    );
    s.close().await;
}

pub async fn future_revisions_are_refused(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    create(&*s, "/registry/fr/a", "1").await;
    let now = current(&*s).await;
    match s.get("/registry/fr/a", now + 1).await {
        Err(StorageError::FutureRevision { requested, current }) => {
            assert_eq!((requested, current), (now + 1, now))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.range(RangeRequest {
            prefix: "/registry/fr/".into(),
            revision: now + 5,
            ..Default::default()
        })
        .await,
        Err(StorageError::FutureRevision { .. })
    ));
    s.close().await;
}

pub async fn progress_on_request(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut w = watch(&*s, "/registry/pg/", 0).await;
    let kv = create(&*s, "/registry/pg/a", "1").await;
    // Writes elsewhere move the revision without events for this watch.
    create(&*s, "/registry/elsewhere/a", "1").await;
    let now = create(&*s, "/registry/elsewhere/b", "1").await.mod_revision;
    w.request_progress();
    // The change first, then the progress: everything up to its revision was delivered.
    match next(&mut w).await {
        Some(Ok(WatchEvent::Change(ev))) => assert_eq!(ev.kv, kv),
        other => panic!("{other:?}"),
    }
    match next(&mut w).await {
        Some(Ok(WatchEvent::Progress(r))) => assert_eq!(r, now),
        other => panic!("{other:?}"),
    }
    quiet(&mut w, 200).await;
    // Asked while replaying history: answered after it.
    let mut h = watch(&*s, "/registry/pg/", 0).await;
    h.request_progress();
    let ev = next_change(&mut h).await;
    assert_eq!(ev.kv, kv);
    match next(&mut h).await {
        Some(Ok(WatchEvent::Progress(r))) => assert!(r >= kv.mod_revision && r <= now),
        other => panic!("{other:?}"),
    }
    s.close().await;
}

pub async fn progress_when_idle(ctx: Arc<Ctx>) {
    let Some(within) = ctx.backend.progress_within else {
        return;
    };
    let s = ctx.open().await;
    create(&*s, "/registry/idle/a", "1").await;
    let mut w = s
        .watch(WatchRequest {
            prefix: "/registry/idle/".into(),
            after: ctx.rev(1),
            progress_notify: true,
            without_prev_kv: false,
        })
        .await
        .expect("watch");
    let plain = watch(&*s, "/registry/idle/", ctx.rev(1)).await;
    let now = create(&*s, "/registry/busy/a", "1").await.mod_revision;
    // Notifications may come before the write elsewhere lands; one must then carry its revision.
    let deadline = tokio::time::Instant::now() + within * 2;
    let mut last = 0;
    while last < now {
        let got = tokio::time::timeout_at(deadline, w.next())
            .await
            .expect("a progress notification within the interval");
        match got {
            Some(Ok(WatchEvent::Progress(r))) => {
                assert!(
                    r >= last && r <= now,
                    "progress {r} after {last}, now {now}"
                );
                last = r;
            }
            other => panic!("{other:?}"),
        }
    }
    // A watch that did not ask gets none.
    let mut plain = plain;
    quiet(&mut plain, within.as_millis() as u64).await;
    s.close().await;
}

pub async fn concurrent_writes_get_distinct_revisions(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let mut tasks = vec![];
    for t in 0..16 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let mut revs = vec![];
            for i in 0..25 {
                revs.push(
                    create(&*s, &format!("/registry/cc/{t}/{i}"), "v")
                        .await
                        .mod_revision,
                );
            }
            // Everyone races for the same key: exactly one wins each round.
            revs
        }));
    }
    let mut all = vec![];
    for t in tasks {
        all.extend(t.await.expect("task"));
    }
    all.sort();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n, "no revision given twice");
    assert_eq!(
        all,
        (ctx.rev(1)..=ctx.rev(n as Revision)).collect::<Vec<_>>(),
        "no gaps"
    );
    let race = create(&*s, "/registry/cc/race", "0").await;
    let mut tasks = vec![];
    for t in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            s.update("/registry/cc/race", race.mod_revision, b(&t.to_string()))
                .await
                .expect("update")
        }));
    }
    let mut won = 0;
    for t in tasks {
        if matches!(t.await.expect("task"), WriteOutcome::Done(_)) {
            won += 1;
        }
    }
    assert_eq!(won, 1, "one compare-and-swap wins");
    s.close().await;
}

pub async fn batched_writes_have_their_own_conditions_and_revisions(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    assert_eq!(s.write_batch(vec![]).await.expect("empty batch"), vec![]);
    let a = create(&*s, "/registry/wb/a", "a1").await;
    let bk = create(&*s, "/registry/wb/b", "b1").await;
    let d = create(&*s, "/registry/wb/d", "d1").await;
    let before = current(&*s).await;
    let mut w = watch(&*s, "/registry/wb/", before).await;
    let outcomes = s
        .write_batch(vec![
            Write::Create {
                key: "/registry/wb/c".into(),
                value: b("c1"),
            },
            // Exists: this one conflicts, the others still happen.
            Write::Create {
                key: "/registry/wb/a".into(),
                value: b("a2"),
            },
            Write::Update {
                key: "/registry/wb/b".into(),
                expected: bk.mod_revision,
                value: b("b2"),
            },
            Write::Delete {
                key: "/registry/wb/d".into(),
                expected: d.mod_revision,
            },
            Write::Update {
                key: "/registry/wb/e".into(),
                expected: a.mod_revision,
                value: b("e1"),
            },
            Write::Delete {
                key: "/registry/wb/f".into(),
                expected: 0,
            },
        ])
        .await
        .expect("write_batch");
    assert_eq!(outcomes.len(), 6, "{outcomes:?}");
    let done = |o: &WriteOutcome| match o {
        WriteOutcome::Done(kv) => kv.clone(),
        other => panic!("expected done, got {other:?}"),
    };
    let c = done(&outcomes[0]);
    assert_eq!((c.value.as_ref(), c.version), (&b"c1"[..], 1));
    assert_eq!(c.create_revision, c.mod_revision);
    match &outcomes[1] {
        WriteOutcome::Conflict(Some(kv)) => assert_eq!(kv, &a),
        other => panic!("create of an existing key: {other:?}"),
    }
    let b2 = done(&outcomes[2]);
    assert_eq!((b2.value.as_ref(), b2.version), (&b"b2"[..], 2));
    assert_eq!(b2.create_revision, bk.create_revision);
    let gone = done(&outcomes[3]);
    assert_eq!(gone.key, "/registry/wb/d");
    assert_eq!(
        outcomes[4],
        WriteOutcome::Conflict(None),
        "update of an absent key"
    );
    assert_eq!(
        outcomes[5],
        WriteOutcome::Conflict(None),
        "delete of an absent key"
    );
    // Each done write has a revision of its own, after the batch started, up to the current.
    let mut revs = vec![c.mod_revision, b2.mod_revision, gone.mod_revision];
    revs.sort();
    revs.dedup();
    assert_eq!(revs.len(), 3, "distinct revisions: {revs:?}");
    assert!(revs[0] > before, "{revs:?} after {before}");
    let now = current(&*s).await;
    assert_eq!(now, before + 3, "three writes happened");
    assert_eq!(
        range(&*s, "/registry/wb/", 0).await,
        vec![
            ("/registry/wb/a".to_string(), "a1".to_string()),
            ("/registry/wb/b".to_string(), "b2".to_string()),
            ("/registry/wb/c".to_string(), "c1".to_string()),
        ]
    );
    // A watch sees the three changes, in revision order, and nothing of the conflicts.
    let mut seen = vec![];
    for _ in 0..3 {
        let ev = next_change(&mut w).await;
        seen.push((ev.kv.mod_revision, ev.kv.key.clone(), ev.event_type));
    }
    assert!(seen.windows(2).all(|p| p[0].0 < p[1].0), "{seen:?}");
    seen.sort_by(|x, y| x.1.cmp(&y.1));
    assert_eq!(
        seen.iter()
            .map(|(_, k, t)| (k.as_str(), *t))
            .collect::<Vec<_>>(),
        vec![
            ("/registry/wb/b", EventType::Put),
            ("/registry/wb/c", EventType::Put),
            ("/registry/wb/d", EventType::Delete),
        ]
    );
    quiet(&mut w, 200).await;
    // Durable like any write.
    let s = reopen(&ctx, s).await;
    assert_eq!(current(&*s).await, now);
    assert_eq!(
        range(&*s, "/registry/wb/", 0).await.len(),
        3,
        "the batch survives a restart"
    );
    s.close().await;
}

pub async fn restart_keeps_data_and_revisions(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    let a = create(&*s, "/registry/rs/a", "1").await;
    update(&*s, "/registry/rs/a", a.mod_revision, "2").await;
    let bkv = create(&*s, "/registry/rs/b", "1").await;
    delete(&*s, "/registry/rs/b", bkv.mod_revision).await;
    create(&*s, "/registry/rs/c", "1").await; // 5
    s.compact(ctx.rev(2)).await.expect("compact");
    let before = range(&*s, "/registry/rs/", 0).await;
    let s = reopen(&ctx, s).await;
    assert_eq!(current(&*s).await, ctx.rev(5));
    assert_eq!(s.compacted_revision(), ctx.rev(2));
    assert_eq!(range(&*s, "/registry/rs/", 0).await, before);
    assert_eq!(
        range(&*s, "/registry/rs/", ctx.rev(3)).await,
        pairs(&[("/registry/rs/a", "2"), ("/registry/rs/b", "1")])
    );
    // History from before the restart replays.
    let mut w = watch(&*s, "/registry/rs/", ctx.rev(2)).await;
    assert_eq!(next_change(&mut w).await.kv.mod_revision, ctx.rev(3));
    assert_eq!(next_change(&mut w).await.event_type, EventType::Delete);
    assert_eq!(next_change(&mut w).await.kv.key, "/registry/rs/c");
    // Revisions continue, never reused.
    let d = create(&*s, "/registry/rs/d", "1").await;
    assert_eq!(d.mod_revision, ctx.rev(6));
    assert_eq!(next_change(&mut w).await.kv, d);
    drop(w);
    let s = reopen(&ctx, s).await;
    assert_eq!(
        create(&*s, "/registry/rs/e", "1").await.mod_revision,
        ctx.rev(7)
    );
    s.close().await;
}

pub async fn close_ends_writes_and_watches(ctx: Arc<Ctx>) {
    let s = ctx.open().await;
    create(&*s, "/registry/cl/a", "1").await;
    let mut w = watch(&*s, "/registry/cl/", 0).await;
    assert_eq!(next_change(&mut w).await.kv.key, "/registry/cl/a");
    s.close().await;
    assert!(matches!(
        s.create("/registry/cl/b", b("1")).await,
        Err(StorageError::Closed)
    ));
    assert!(matches!(
        s.current_revision().await,
        Err(StorageError::Closed)
    ));
    assert!(matches!(
        next(&mut w).await,
        Some(Err(StorageError::Closed))
    ));
    assert!(
        next(&mut w).await.is_none(),
        "the stream ends after its error"
    );
}
