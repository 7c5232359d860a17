//! The cache feed: one storage watch keeps the cache current. What the layers above derive from
//! the cached objects (the served resources, rebuilt when a CRD changes; the RBAC index) is
//! updated through a [`Publish`] hook before a change becomes visible.

use crate::store::cache::{Cache, CacheEvent, CachedObject};
use crate::store::keys::{self, CRD_PREFIX, REGISTRY_PREFIX};
use crate::store::reads::{read_stored, StoredSchemas};
use crest_storage::{
    RangeRequest, Revision, Storage, StorageError, WatchEvent, WatchRequest, WatchStream,
};
use serde_json::Value;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

/// Stored objects read per storage range while loading or re-listing the cache.
const LOAD_PAGE: usize = 1000;

/// How long the feed waits before trying the store again, after `failures` attempts in a row
/// that failed (at least 1): 10 ms after a watch that was cut (it usually fell behind),
/// doubling to 2 s while the store refuses watches.
fn retry_delay(failures: u32) -> Duration {
    Duration::from_millis(5u64 << failures.clamp(1, 9)).min(Duration::from_secs(2))
}

/// Whether the cache is being fed; `/readyz` and `/healthz` fail with the reason while not.
#[derive(Default)]
pub(crate) struct FeedHealth(Mutex<Option<String>>);

impl FeedHealth {
    /// Why the cache is not being fed, if it is not.
    pub(crate) fn problem(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, problem: Option<String>) {
        let mut p = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if p.is_none() && problem.is_some() {
            tracing::error!(
                reason = problem.as_deref().unwrap_or_default(),
                "the cache is not being fed"
            );
        } else if p.is_some() && problem.is_none() {
            tracing::info!("the cache is being fed again");
        }
        *p = problem;
    }
}

/// What the layer above keeps from the cached objects, updated by the feed before readers see
/// a change (inside [`Cache::apply`] and [`Cache::resync`]).
pub(crate) trait Publish: Send + Sync {
    /// The storage schemas of the served resources now (read once per batch of changes).
    fn stored_schemas(&self) -> Arc<dyn StoredSchemas>;
    /// A batch was applied; `changed_crds`: the key prefixes of the resources whose CRD changed.
    fn applied(&self, events: &[Arc<CacheEvent>], changed_crds: &[String]);
    /// The cache was re-listed from storage.
    fn resynced(&self);
}

/// What the feed works with: the store it watches, the cache it keeps, where it reports its
/// health, and the hook that publishes derived state.
pub(crate) struct Feed {
    pub storage: Arc<dyn Storage>,
    pub cache: Arc<Cache>,
    pub health: Arc<FeedHealth>,
    pub publish: Arc<dyn Publish>,
}

/// Every object under `/registry/`, paged at one revision (so only one page of stored bytes
/// exists beside what is kept), and that revision.
pub(crate) async fn list_all(
    storage: &dyn Storage,
) -> Result<(Vec<CachedObject>, Revision), StorageError> {
    let mut objects: Vec<CachedObject> = vec![];
    let mut revision = 0;
    let mut start_after = None;
    loop {
        let page = storage
            .range(RangeRequest {
                prefix: REGISTRY_PREFIX.into(),
                start_after: start_after.take(),
                limit: LOAD_PAGE,
                revision,
                count: false,
            })
            .await?;
        revision = page.revision;
        start_after = page.kvs.last().map(|kv| kv.key.clone());
        objects.extend(page.kvs.into_iter().map(|kv| {
            CachedObject::from_stored(kv.key, &kv.value, kv.create_revision, kv.mod_revision)
        }));
        if !page.more {
            return Ok((objects, revision));
        }
    }
}

/// Keeps the cache current from one storage watch; rebuilds the served resources when a CRD
/// changes, before the change becomes visible.
///
/// The feed never ends before shutdown. A watch that is cut is re-established from the last
/// revision applied; while the store refuses watches (unavailable, timing out) the feed retries
/// with backoff and [`FeedHealth`] reports it; when the revision to resume from has been
/// compacted (the store moved on while the feed was down), the cache is re-listed from the
/// store and the changes in between are lost to watchers, who get 410 Expired and re-list, as
/// with kube-apiserver's watch cache.
pub(crate) async fn feed_cache(
    feed: Feed,
    from: Revision,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut from = from;
    let mut failures = 0u32;
    loop {
        if *shutdown.borrow() {
            return;
        }
        // The cache holds every key's state at `from` and applies the changes in order, so it
        // knows each change's previous state itself: etcd need not read it for every event.
        let mut request = WatchRequest::new(REGISTRY_PREFIX, from);
        request.without_prev_kv = true;
        let ended = match feed.storage.watch(request).await {
            Ok(stream) => {
                // The store takes watches again: a later cut is a fresh failure.
                feed.health.set(None);
                failures = 0;
                follow(&feed, stream, &mut from, &mut shutdown).await
            }
            Err(e) => Some(e),
        };
        match ended {
            // Shutdown.
            None => return,
            Some(StorageError::Closed) => {
                feed.health.set(Some("storage is closed".into()));
                return;
            }
            Some(StorageError::Compacted { .. }) => match resync(&feed).await {
                Ok(rev) => {
                    from = rev;
                    failures = 0;
                    continue;
                }
                Err(e) => feed
                    .health
                    .set(Some(format!("re-listing from storage failed: {e}"))),
            },
            // A cut watch (the feed fell behind) is resumed at once without alarm; a watch the
            // store refuses is reported.
            Some(e) if failures > 0 => feed.health.set(Some(format!("storage watch: {e}"))),
            Some(e) => tracing::debug!(error = %e, "cache watch ended; watching again"),
        }
        failures += 1;
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = tokio::time::sleep(retry_delay(failures)) => {}
        }
    }
}

/// Re-lists everything from storage into the cache (the revision to resume from is gone).
async fn resync(feed: &Feed) -> Result<Revision, StorageError> {
    tracing::warn!("cache watch revision compacted; re-listing from storage");
    let (objects, revision) = list_all(feed.storage.as_ref()).await?;
    feed.cache
        .resync(objects, revision, || feed.publish.resynced());
    Ok(revision)
}

/// Applies one watch's events to the cache until it ends: `Some(why)`, or `None` at shutdown.
async fn follow(
    feed: &Feed,
    mut stream: WatchStream,
    from: &mut Revision,
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> Option<StorageError> {
    loop {
        let first = tokio::select! {
            _ = shutdown.changed() => return None,
            _ = feed.cache.progress_wanted() => {
                stream.request_progress();
                continue;
            }
            ev = stream.next() => ev,
        };
        let first = match first {
            Some(Ok(WatchEvent::Change(ev))) => ev,
            Some(Ok(WatchEvent::Progress(rev))) => {
                // Everything up to `rev` has been delivered: reads waiting for a revision
                // reached by writes outside the watched prefix need not wait for a change.
                feed.cache.advance(rev);
                *from = (*from).max(rev);
                continue;
            }
            Some(Err(e)) => return Some(e),
            None => return Some(StorageError::Unavailable("the watch ended".into())),
        };
        if first.kv.mod_revision <= feed.cache.revision() {
            // A change older than a progress notification already applied: etcd before 3.4.25
            // and 3.5.8 can notify progress past the events it still has to send a watcher
            // that is catching up (etcd-io/etcd#15220). The cache may have answered reads at
            // that revision without the change; re-list so it holds the store's state again.
            tracing::error!(
                revision = first.kv.mod_revision,
                cache = feed.cache.revision(),
                "the storage watch delivered a change older than its progress notification; \
                 re-listing"
            );
            return Some(match resync(feed).await {
                Ok(rev) => {
                    *from = rev;
                    StorageError::Unavailable("re-listed after an out-of-order watch".into())
                }
                Err(e) => e,
            });
        }
        let mut batch = vec![first];
        let mut ended = None;
        while batch.len() < 1024 {
            match stream.try_next() {
                Some(Ok(WatchEvent::Change(ev))) => batch.push(ev),
                Some(Ok(WatchEvent::Progress(_))) => continue,
                Some(Err(e)) => {
                    ended = Some(e);
                    break;
                }
                None => break,
            }
        }
        // The previous state is in the cache, or earlier in this batch: `latest` holds each
        // key's state after the batch's events so far (`None`: deleted). The watch's prev_kv is
        // not asked for; a backend that sends it anyway is checked against it.
        let mut latest: std::collections::HashMap<String, Option<Arc<CachedObject>>> =
            std::collections::HashMap::new();
        let schemas = feed.publish.stored_schemas();
        let events: Vec<CacheEvent> = batch
            .into_iter()
            .map(|ev| {
                let rev = ev.kv.mod_revision;
                let known = match latest.get(&ev.kv.key) {
                    Some(state) => state.clone(),
                    None => feed.cache.get(&ev.kv.key),
                };
                let prev = match &ev.prev_kv {
                    None => known,
                    Some(p) => known
                        .filter(|c| c.mod_revision == p.mod_revision)
                        .or_else(|| {
                            Some(Arc::new(CachedObject::from_stored(
                                p.key.clone(),
                                &p.value,
                                p.create_revision,
                                p.mod_revision,
                            )))
                        }),
                };
                let object = match ev.event_type {
                    // Written through another version: read it as the storage version.
                    crest_storage::EventType::Put => {
                        let layout = feed.cache.own_writes().take(&ev.kv.key, &ev.kv.value);
                        Arc::new(read_stored(
                            &ev.kv,
                            schemas.stored_schema(&ev.kv.key),
                            layout,
                        ))
                    }
                    crest_storage::EventType::Delete => prev.clone().unwrap_or_else(|| {
                        Arc::new(CachedObject::from_stored(ev.kv.key.clone(), b"{}", 0, rev))
                    }),
                };
                let after =
                    (ev.event_type == crest_storage::EventType::Put).then(|| object.clone());
                latest.insert(ev.kv.key.clone(), after);
                CacheEvent {
                    event_type: ev.event_type,
                    key: ev.kv.key,
                    revision: rev,
                    object,
                    prev,
                }
            })
            .collect();
        *from = events.last().map(|e| e.revision).unwrap_or(*from);
        let changed_crds: Vec<String> = events
            .iter()
            .filter(|e| e.key.starts_with(CRD_PREFIX))
            .filter_map(|e| e.object.value().ok())
            .map(|crd| {
                let plural = crd
                    .pointer("/status/acceptedNames/plural")
                    .or_else(|| crd.pointer("/spec/names/plural"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let group = crd
                    .pointer("/spec/group")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                keys::resource_prefix(group, &plural)
            })
            .collect();
        feed.cache.apply(events, |applied| {
            feed.publish.applied(applied, &changed_crds)
        });
        if ended.is_some() {
            return ended;
        }
    }
}
