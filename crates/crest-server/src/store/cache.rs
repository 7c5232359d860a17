//! The in-memory view of the store that every read is served from (kube-apiserver's watch cache).
//!
//! It is filled by one range at startup and then kept current by one storage watch on
//! `/registry/`. Objects are held as the JSON bytes clients receive (resourceVersion already set),
//! so a GET or LIST copies bytes and never re-encodes. Reads that must be consistent call
//! [`Cache::wait_for`] with the store's current revision first; the watch is in-process, so this
//! wait is short and replaces a quorum read.
//!
//! It also keeps a bounded history of recent changes (kube-apiserver's watch cache), from which
//! watches resume and paginated lists read the state at an earlier revision (the current state
//! with the later changes undone). What is older than the history is read from storage.

use super::own_writes::{Layout, OwnWrites};
use bytes::Bytes;
use crest_storage::{EventType, Revision};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, watch};

/// One object as served: its JSON with `metadata.resourceVersion` set.
#[derive(Debug)]
pub(crate) struct CachedObject {
    /// Shared with the cache's index, so each key is held once.
    pub key: Arc<str>,
    pub json: Bytes,
    pub create_revision: Revision,
    pub mod_revision: Revision,
}

impl CachedObject {
    /// Builds the served form from stored bytes (stored objects carry no resourceVersion).
    pub(crate) fn from_stored(
        key: String,
        stored: &[u8],
        create_revision: Revision,
        mod_revision: Revision,
    ) -> Self {
        Self::from_stored_with(key, stored, None, create_revision, mod_revision)
    }

    /// As [`CachedObject::from_stored`], for bytes whose layout is known (this process wrote
    /// them, see [`super::own_writes`]): the resourceVersion is spliced in without reading them.
    pub(crate) fn from_stored_with(
        key: String,
        stored: &[u8],
        layout: Option<Layout>,
        create_revision: Revision,
        mod_revision: Revision,
    ) -> Self {
        // A CRD kube-apiserver stored as v1beta1 (before 1.22) is served as v1; CRDs are few, so
        // every one takes the full parse.
        let is_crd = key.starts_with(super::keys::CRD_PREFIX);
        let fast = match layout {
            _ if is_crd => None,
            Some(l) => splice_resource_version(stored, l, mod_revision)
                .or_else(|| with_resource_version(stored, mod_revision)),
            None => with_resource_version(stored, mod_revision),
        };
        let json = fast
            .or_else(|| {
                let mut v = serde_json::from_slice::<Value>(stored)
                    .ok()
                    // A built-in kind kube-apiserver stored (protobuf), serving its etcd.
                    .or_else(|| crest_codec::protobuf::decode_stored(stored))?;
                if is_crd {
                    crest_apiextensions::v1beta1::upgrade_stored(&mut v);
                }
                crest_api::meta::set(&mut v, "resourceVersion", mod_revision.to_string());
                Some(crest_codec::json::to_vec(&v))
            })
            .map(|v| super::longlived::copy(&v))
            // Not JSON: keep it verbatim so nothing is lost; readers report it as a decode error.
            .unwrap_or_else(|| super::longlived::copy(stored));
        CachedObject {
            key: Arc::from(key),
            json,
            create_revision,
            mod_revision,
        }
    }

    /// The object as read through `schema` (pruned and defaulted, see
    /// [`crest_apiextensions::customresource::CrSchema::decode_stored`]); `None` when that changes nothing.
    pub(crate) fn normalized(
        &self,
        schema: &crest_apiextensions::customresource::CrSchema,
    ) -> Option<CachedObject> {
        let mut v: Value = serde_json::from_slice(&self.json).ok()?;
        let before = v.clone();
        schema.decode_stored(&mut v);
        if v == before {
            return None;
        }
        crest_api::meta::set(&mut v, "resourceVersion", self.mod_revision.to_string());
        let json = crest_codec::json::to_vec(&v);
        Some(CachedObject {
            key: self.key.clone(),
            json: super::longlived::copy(&json),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
        })
    }

    /// The object's `apiVersion`: the version it was stored in (a custom resource keeps the
    /// version it was written in until it is written again, whatever its CRD's storage version
    /// is now). Read without building a tree: the stored bytes start with it (serde_json
    /// writes keys in order); other documents are scanned for their top-level field.
    pub(crate) fn api_version(&self) -> Option<std::borrow::Cow<'_, str>> {
        leading_api_version(&self.json)
            .map(std::borrow::Cow::Borrowed)
            .or_else(|| {
                #[derive(serde::Deserialize)]
                struct Top<'a> {
                    #[serde(borrow, rename = "apiVersion")]
                    api_version: Option<std::borrow::Cow<'a, str>>,
                }
                serde_json::from_slice::<Top>(&self.json).ok()?.api_version
            })
    }

    /// Parses the object (callers that change it need an owned tree).
    pub(crate) fn value(&self) -> Result<Value, crest_api::ApiError> {
        serde_json::from_slice(&self.json).map_err(|e| {
            crest_api::ApiError::internal(format!(
                "stored object {} is not valid JSON: {e}",
                self.key
            ))
        })
    }
}

/// The `apiVersion` a JSON object starts with (`{"apiVersion":"..."`, no escapes in it), as
/// custom resources are stored (keys sorted); `None` for any other shape.
pub(crate) fn leading_api_version(json: &[u8]) -> Option<&str> {
    let rest = json.strip_prefix(b"{\"apiVersion\":\"")?;
    let end = rest.iter().position(|b| *b == b'"' || *b == b'\\')?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

/// `stored` with `"resourceVersion":"<rev>"` inserted in its top-level metadata, without
/// building a tree, when its keys are in the order the served form needs (a built-in kind in
/// Go's field order, a custom resource sorted; see `crest_codec::json::stored_slot`). `None`
/// otherwise (no metadata object, a resourceVersion already present, bytes another writer
/// ordered otherwise): the caller then goes through a full parse and re-encodes.
fn with_resource_version(stored: &[u8], rev: Revision) -> Option<Vec<u8>> {
    let at = crest_codec::json::stored_slot(stored)?;
    splice_resource_version(stored, at, rev)
}

/// `stored` with `"resourceVersion":"<rev>"` inserted at `at` (in the top-level metadata
/// object, which must not hold a resourceVersion already).
pub(crate) fn splice_resource_version(stored: &[u8], at: Layout, rev: Revision) -> Option<Vec<u8>> {
    at.splice(stored, &rev.to_string())
}

/// A change as the cache applied it.
#[derive(Clone, Debug)]
pub(crate) struct CacheEvent {
    pub event_type: EventType,
    pub key: String,
    pub revision: Revision,
    /// The new object for puts; the last state for deletes.
    pub object: Arc<CachedObject>,
    pub prev: Option<Arc<CachedObject>>,
}

#[derive(Default)]
struct State {
    objects: BTreeMap<Arc<str>, Arc<CachedObject>>,
    revision: Revision,
    /// Recent changes in revision order, with when they were applied.
    history: VecDeque<(Instant, Arc<CacheEvent>)>,
    /// Every change after this revision is in `history`.
    history_floor: Revision,
}

/// How much change history the cache keeps: at most `capacity` events, none older than `max_age`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HistoryLimits {
    pub capacity: usize,
    pub max_age: Duration,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits {
            capacity: 10_000,
            max_age: Duration::from_secs(300),
        }
    }
}

/// How long a reader waits for the feed to deliver a revision before asking for progress.
const PROGRESS_AFTER: Duration = Duration::from_millis(50);

pub(crate) struct Cache {
    state: RwLock<State>,
    revision_tx: watch::Sender<Revision>,
    events_tx: broadcast::Sender<Arc<CacheEvent>>,
    limits: HistoryLimits,
    /// Readers waiting for a revision the feed's watch has not delivered ask here for a
    /// progress notification (the revision may have been reached by writes outside the watched
    /// prefix: another application, or another `--etcd-prefix`, on the same etcd).
    progress_wanted: tokio::sync::Notify,
    /// The layouts of this process's writes, for the feed (see [`super::own_writes`]).
    own_writes: OwnWrites,
}

/// The history no longer holds the changes after the requested revision (they start after
/// `floor`): read from storage instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HistoryGap {
    pub floor: Revision,
}

/// Changes after a revision, as [`Cache::events_after`] returns them.
pub(crate) struct Changes {
    /// The matching events, in revision order.
    pub events: Vec<Arc<CacheEvent>>,
    /// Every change up to this revision was looked at (resume after it).
    pub through: Revision,
}

/// One page of a range read, see [`Cache::range_at`].
pub(crate) struct Page {
    pub revision: Revision,
    pub objects: Vec<Arc<CachedObject>>,
    /// Whether keys after the page exist.
    pub more: bool,
    /// How many keys follow the page (when counted).
    pub remaining: usize,
}

/// A consistent copy of the objects under one prefix.
pub(crate) struct Snapshot {
    pub revision: Revision,
    pub objects: Vec<Arc<CachedObject>>,
}

impl Cache {
    pub(crate) fn with_history(limits: HistoryLimits) -> Arc<Self> {
        let (revision_tx, _) = watch::channel(0);
        let (events_tx, _) = broadcast::channel(4096);
        Arc::new(Cache {
            state: RwLock::new(State::default()),
            revision_tx,
            events_tx,
            limits,
            progress_wanted: tokio::sync::Notify::new(),
            own_writes: OwnWrites::default(),
        })
    }

    /// The layouts of this process's writes whose events the feed has not applied yet.
    pub(crate) fn own_writes(&self) -> &OwnWrites {
        &self.own_writes
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn revision(&self) -> Revision {
        self.read().revision
    }

    /// Loads the initial state (startup).
    pub(crate) fn load(&self, objects: Vec<CachedObject>, revision: Revision) {
        let mut st = self.write();
        for o in objects {
            st.objects.insert(o.key.clone(), Arc::new(o));
        }
        st.revision = revision;
        st.history_floor = revision;
        drop(st);
        self.revision_tx.send_replace(revision);
    }

    /// Replaces the whole state by a fresh list from storage at `revision` (the feed lost its
    /// place: the revision to resume from was compacted). The change history is dropped, so a
    /// watcher from before `revision` is told it is too old and re-lists; subscribers (the
    /// controllers) get the difference as events: puts at their objects' revisions, then
    /// deletions at `revision`. `before_publish` sees the new state before
    /// readers do.
    pub(crate) fn resync(
        &self,
        objects: Vec<CachedObject>,
        revision: Revision,
        before_publish: impl FnOnce(),
    ) {
        let mut events = vec![];
        {
            let mut st = self.write();
            let mut fresh: BTreeMap<Arc<str>, Arc<CachedObject>> = BTreeMap::new();
            for o in objects {
                let old = st.objects.remove(&*o.key);
                let object = match old {
                    // Unchanged: keep the cached (possibly normalized) object.
                    Some(old) if old.mod_revision == o.mod_revision => old,
                    old => {
                        let object = Arc::new(o);
                        events.push(CacheEvent {
                            event_type: EventType::Put,
                            key: object.key.to_string(),
                            revision: object.mod_revision,
                            object: object.clone(),
                            prev: old,
                        });
                        object
                    }
                };
                fresh.insert(object.key.clone(), object);
            }
            // What is left was deleted while the feed was away.
            for (key, old) in std::mem::take(&mut st.objects) {
                events.push(CacheEvent {
                    event_type: EventType::Delete,
                    key: key.to_string(),
                    revision,
                    object: old.clone(),
                    prev: Some(old),
                });
            }
            st.objects = fresh;
            st.revision = st.revision.max(revision);
            st.history.clear();
            st.history_floor = st.revision;
        }
        before_publish();
        // Subscribers see the difference in revision order (deletions last, at `revision`).
        events.sort_by_key(|e| e.revision);
        for e in events {
            let _ = self.events_tx.send(Arc::new(e));
        }
        self.revision_tx.send_replace(self.revision());
    }

    /// Marks the cache current up to `revision` with no change (a watch progress notification:
    /// every change up to it has been applied).
    pub(crate) fn advance(&self, revision: Revision) {
        let mut st = self.write();
        if revision > st.revision {
            st.revision = revision;
            drop(st);
            self.revision_tx.send_replace(revision);
        }
    }

    /// Applies one batch of storage events (in revision order), runs `before_publish` (which sees
    /// the new state), then makes the new revision visible to waiting readers and subscribers.
    pub(crate) fn apply(
        &self,
        events: Vec<CacheEvent>,
        before_publish: impl FnOnce(&[Arc<CacheEvent>]),
    ) {
        let Some(last) = events.last().map(|e| e.revision) else {
            return;
        };
        let now = Instant::now();
        let events: Vec<Arc<CacheEvent>> = events.into_iter().map(Arc::new).collect();
        {
            // Objects, revision and history change together: a reader never sees a revision
            // whose changes are not in the history yet (a watcher would skip them).
            let mut st = self.write();
            for e in &events {
                match e.event_type {
                    EventType::Put => {
                        st.objects.insert(e.object.key.clone(), e.object.clone());
                    }
                    EventType::Delete => {
                        st.objects.remove(e.key.as_str());
                    }
                }
            }
            st.revision = st.revision.max(last);
            st.history.extend(events.iter().map(|e| (now, e.clone())));
            self.trim(&mut st, now);
        }
        before_publish(&events);
        for e in events {
            // No receivers is fine: controllers subscribe when they start.
            let _ = self.events_tx.send(e);
        }
        self.revision_tx.send_replace(last);
    }

    /// Drops history beyond the limits.
    fn trim(&self, st: &mut State, now: Instant) {
        while let Some((at, e)) = st.history.front() {
            let too_many = st.history.len() > self.limits.capacity;
            if !too_many && now.duration_since(*at) < self.limits.max_age {
                break;
            }
            st.history_floor = e.revision;
            st.history.pop_front();
        }
    }

    /// Drops history older than the age limit (called periodically, so an idle server frees it).
    pub(crate) fn expire_history(&self) {
        let mut st = self.write();
        self.trim(&mut st, Instant::now());
    }

    /// The oldest revision watches and lists can resume from without storage.
    pub(crate) fn history_floor(&self) -> Revision {
        self.read().history_floor
    }

    /// Up to `max` changes to keys under `prefix` after revision `after`.
    pub(crate) fn events_after(
        &self,
        prefix: &str,
        after: Revision,
        max: usize,
    ) -> Result<Changes, HistoryGap> {
        let st = self.read();
        if after < st.history_floor {
            return Err(HistoryGap {
                floor: st.history_floor,
            });
        }
        let start = st.history.partition_point(|(_, e)| e.revision <= after);
        let mut events = vec![];
        let mut through = st.revision.max(after);
        for (_, e) in st.history.range(start..) {
            if e.key.starts_with(prefix) {
                if events.len() == max {
                    through = events
                        .last()
                        .map_or(after, |l: &Arc<CacheEvent>| l.revision);
                    break;
                }
                events.push(e.clone());
            }
        }
        Ok(Changes { events, through })
    }

    /// The objects under `prefix` as of `revision` (0: the current state), in key order, from
    /// key `from` (inclusive) on, at most `limit` of them (0: all). With `count`, also counts the
    /// keys after the page. Earlier revisions are rebuilt by undoing the history's later changes.
    pub(crate) fn range_at(
        &self,
        prefix: &str,
        revision: Revision,
        from: Option<&str>,
        limit: usize,
        count: bool,
    ) -> Result<Page, HistoryGap> {
        let st = self.read();
        let revision = if revision == 0 { st.revision } else { revision };
        let lower: &str = match from {
            Some(f) if f > prefix => f,
            _ => prefix,
        };
        // The state at `revision` of every key changed after it: the first later change's prev.
        let mut undo: BTreeMap<Arc<str>, Option<Arc<CachedObject>>> = BTreeMap::new();
        if revision < st.revision {
            if revision < st.history_floor {
                return Err(HistoryGap {
                    floor: st.history_floor,
                });
            }
            let start = st.history.partition_point(|(_, e)| e.revision <= revision);
            for (_, e) in st.history.range(start..) {
                if e.key.starts_with(prefix) && e.key.as_str() >= lower {
                    undo.entry(e.object.key.clone())
                        .or_insert_with(|| e.prev.clone());
                }
            }
        }
        let mut current = st
            .objects
            .range::<str, _>((Bound::Included(lower), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .peekable();
        let mut undone = undo.iter().peekable();
        let mut page = Page {
            revision,
            objects: vec![],
            more: false,
            remaining: 0,
        };
        loop {
            // Keys in order; where a key changed after `revision`, its undone state wins.
            let order = match (current.peek(), undone.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((ck, _)), Some((uk, _))) => ck.as_ref().cmp(uk.as_ref()),
            };
            if order == Ordering::Equal {
                current.next();
            }
            let next = match order {
                Ordering::Less => current.next().map(|(_, v)| v.clone()),
                _ => undone.next().and_then(|(_, v)| v.clone()),
            };
            let Some(obj) = next else { continue };
            if limit == 0 || page.objects.len() < limit {
                page.objects.push(obj);
            } else {
                page.more = true;
                if !count {
                    break;
                }
                page.remaining += 1;
            }
        }
        Ok(page)
    }

    /// Replaces objects by their normalized form (no new revision, no events): only where the
    /// cache still holds the same revision of the object.
    pub(crate) fn replace(&self, objects: Vec<CachedObject>) {
        let mut st = self.write();
        for o in objects {
            if st
                .objects
                .get(&*o.key)
                .is_some_and(|cur| cur.mod_revision == o.mod_revision)
            {
                st.objects.insert(o.key.clone(), Arc::new(o));
            }
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<CacheEvent>> {
        self.events_tx.subscribe()
    }

    /// Waits until the cache has applied `revision`. Fails after a generous timeout rather than
    /// hanging a request forever if the storage watch broke.
    pub(crate) async fn wait_for(&self, revision: Revision) -> Result<(), crest_api::ApiError> {
        self.wait_for_within(revision, Duration::from_secs(10))
            .await
    }

    /// Waits up to `timeout` for `revision` (kube-apiserver's watch cache waits 3 s for a
    /// resourceVersion it has not seen, then answers "Too large resource version").
    pub(crate) async fn wait_for_within(
        &self,
        revision: Revision,
        timeout: Duration,
    ) -> Result<(), crest_api::ApiError> {
        let mut rx = self.revision_tx.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        // Changes usually arrive within milliseconds; past 50 ms, the revision may have been
        // reached by writes outside the watched prefix, which only a progress notification
        // brings: ask for one, and again every 100 ms (a watch re-established meanwhile loses
        // the request).
        let mut wait = PROGRESS_AFTER;
        loop {
            let until = (tokio::time::Instant::now() + wait).min(deadline);
            match tokio::time::timeout_at(until, rx.wait_for(|r| *r >= revision)).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(_)) => break,
                Err(_) if until >= deadline => break,
                Err(_) => {
                    self.progress_wanted.notify_one();
                    wait = Duration::from_millis(100);
                }
            }
        }
        Err(crest_api::ApiError::too_large_resource_version(
            revision,
            self.revision(),
        ))
    }

    /// Resolves when a reader wants the feed to ask its watch for progress.
    pub(crate) async fn progress_wanted(&self) {
        self.progress_wanted.notified().await
    }

    /// Notified with the new revision after every applied batch.
    pub(crate) fn revisions(&self) -> watch::Receiver<Revision> {
        self.revision_tx.subscribe()
    }

    pub(crate) fn get(&self, key: &str) -> Option<Arc<CachedObject>> {
        self.read().objects.get(key).cloned()
    }

    /// All objects whose key starts with `prefix`, in key order, with the revision they reflect.
    pub(crate) fn list(&self, prefix: &str) -> Snapshot {
        let st = self.read();
        let objects = st
            .objects
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v.clone())
            .collect();
        Snapshot {
            revision: st.revision,
            objects,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(stored: &str, rev: Revision) -> Value {
        let o = CachedObject::from_stored("k".into(), stored.as_bytes(), 1, rev);
        serde_json::from_slice(&o.json).expect("served JSON")
    }

    #[test]
    fn the_version_an_object_is_stored_in() {
        let api_version = |json: &str| {
            CachedObject::from_stored("k".into(), json.as_bytes(), 1, 2)
                .api_version()
                .map(|v| v.into_owned())
        };
        assert_eq!(
            api_version(r#"{"apiVersion":"example.com/v1","kind":"K","metadata":{}}"#).as_deref(),
            Some("example.com/v1")
        );
        // Not first (or escaped): read from the top level.
        assert_eq!(
            api_version(r#"{"Kind":"K","apiVersion":"example.com/v2","metadata":{}}"#).as_deref(),
            Some("example.com/v2")
        );
        assert_eq!(
            api_version(r#"{"apiVersion":"a\u002fb","metadata":{}}"#).as_deref(),
            Some("a/b")
        );
        assert_eq!(api_version(r#"{"metadata":{}}"#), None);
        assert_eq!(leading_api_version(br#"{"apiVersion":"v1""#), Some("v1"));
        assert_eq!(leading_api_version(br#"{"apiVersion":"v1"#), None);
    }

    fn obj(key: &str, rev: Revision) -> Arc<CachedObject> {
        Arc::new(CachedObject::from_stored(
            key.into(),
            format!(r#"{{"metadata":{{"name":"{key}"}}}}"#).as_bytes(),
            rev,
            rev,
        ))
    }

    fn put(key: &str, rev: Revision, prev: Option<Arc<CachedObject>>) -> CacheEvent {
        CacheEvent {
            event_type: EventType::Put,
            key: key.into(),
            revision: rev,
            object: obj(key, rev),
            prev,
        }
    }

    fn keys(p: &Page) -> Vec<(String, Revision)> {
        p.objects
            .iter()
            .map(|o| (o.key.to_string(), o.mod_revision))
            .collect()
    }

    #[test]
    fn resync_replaces_the_state_drops_history_and_reports_the_difference() {
        let cache = Cache::with_history(HistoryLimits {
            capacity: 100,
            max_age: Duration::from_secs(60),
        });
        cache.load(vec![], 0);
        cache.apply(
            vec![
                put("/p/a", 1, None),
                put("/p/b", 2, None),
                put("/p/c", 3, None),
            ],
            |_| {},
        );
        let kept = cache.get("/p/a").expect("a");
        let mut events = cache.subscribe();
        // Meanwhile in storage: b changed (7), c was deleted, d was created (6); list at 9.
        let fresh = |key: &str, rev| {
            CachedObject::from_stored(
                key.into(),
                format!(r#"{{"metadata":{{"name":"{key}"}}}}"#).as_bytes(),
                rev,
                rev,
            )
        };
        let mut published = None;
        cache.resync(
            vec![fresh("/p/a", 1), fresh("/p/b", 7), fresh("/p/d", 6)],
            9,
            || published = Some(cache.get("/p/d").is_some()),
        );
        assert_eq!(published, Some(true), "before_publish sees the new state");
        assert_eq!(cache.revision(), 9);
        assert_eq!(cache.history_floor(), 9, "older watchers must re-list");
        assert!(
            Arc::ptr_eq(&cache.get("/p/a").expect("a"), &kept),
            "unchanged kept"
        );
        assert!(cache.get("/p/c").is_none());
        let mut got = vec![];
        while let Ok(e) = events.try_recv() {
            got.push((e.event_type, e.key.clone(), e.revision, e.prev.is_some()));
        }
        assert_eq!(
            got,
            [
                (EventType::Put, "/p/d".to_string(), 6, false),
                (EventType::Put, "/p/b".to_string(), 7, true),
                (EventType::Delete, "/p/c".to_string(), 9, true),
            ]
        );
    }

    #[test]
    fn pages_at_an_older_revision_undo_later_changes() {
        let cache = Cache::with_history(HistoryLimits {
            capacity: 100,
            max_age: Duration::from_secs(60),
        });
        cache.load(vec![], 0);
        cache.apply(
            vec![
                put("/p/a", 1, None),
                put("/p/b", 2, None),
                put("/p/c", 3, None),
            ],
            |_| {},
        );
        // After revision 3: b changes, c is deleted, d is created.
        let b3 = cache.get("/p/b");
        let c3 = cache.get("/p/c").expect("c");
        cache.apply(
            vec![
                put("/p/b", 4, b3),
                CacheEvent {
                    event_type: EventType::Delete,
                    key: "/p/c".into(),
                    revision: 5,
                    object: c3.clone(),
                    prev: Some(c3),
                },
                put("/p/d", 6, None),
            ],
            |_| {},
        );
        let at3 = cache
            .range_at("/p/", 3, None, 0, false)
            .expect("in history");
        assert_eq!(
            keys(&at3),
            [("/p/a".into(), 1), ("/p/b".into(), 2), ("/p/c".into(), 3)]
        );
        let now = cache.range_at("/p/", 0, None, 0, false).expect("current");
        assert_eq!(now.revision, 6);
        assert_eq!(
            keys(&now),
            [("/p/a".into(), 1), ("/p/b".into(), 4), ("/p/d".into(), 6)]
        );
        // Pages with a start key and a count of what follows.
        let p = cache
            .range_at("/p/", 3, Some("/p/a\0"), 1, true)
            .expect("page");
        assert_eq!(keys(&p), [("/p/b".into(), 2)]);
        assert!(p.more);
        assert_eq!(p.remaining, 1);
        // Changes after a revision, by prefix.
        let ch = cache.events_after("/p/", 4, 10).expect("changes");
        let revs: Vec<Revision> = ch.events.iter().map(|e| e.revision).collect();
        assert_eq!((revs, ch.through), (vec![5, 6], 6));
    }

    #[test]
    fn history_is_bounded_and_older_reads_report_a_gap() {
        let cache = Cache::with_history(HistoryLimits {
            capacity: 3,
            max_age: Duration::from_secs(60),
        });
        cache.load(vec![], 0);
        for r in 1..=10 {
            cache.apply(vec![put(&format!("/p/{r:02}"), r, None)], |_| {});
        }
        assert_eq!(cache.history_floor(), 7);
        assert_eq!(
            cache.events_after("/p/", 5, 10).err(),
            Some(HistoryGap { floor: 7 })
        );
        assert!(cache.range_at("/p/", 6, None, 0, false).is_err());
        assert_eq!(
            cache
                .range_at("/p/", 7, None, 0, false)
                .expect("covered")
                .objects
                .len(),
            7
        );
        // Age: everything older than max_age goes, even under the capacity.
        let aged = Cache::with_history(HistoryLimits {
            capacity: 100,
            max_age: Duration::from_millis(1),
        });
        aged.load(vec![], 0);
        aged.apply(vec![put("/p/x", 1, None)], |_| {});
        std::thread::sleep(Duration::from_millis(5));
        aged.expire_history();
        assert_eq!(aged.history_floor(), 1);
        assert!(aged.events_after("/p/", 0, 10).is_err());
        assert_eq!(
            aged.events_after("/p/", 1, 10)
                .expect("current")
                .events
                .len(),
            0
        );
    }

    #[test]
    fn resource_version_is_spliced_into_metadata() {
        let v = served(
            r#"{"kind":"X","metadata":{"name":"a"},"spec":{"metadata":{}}}"#,
            42,
        );
        assert_eq!(v["metadata"]["resourceVersion"], "42");
        assert_eq!(v["metadata"]["name"], "a");
        assert!(v["spec"]["metadata"].get("resourceVersion").is_none());
        let v = served(r#"{ "metadata" : { } }"#, 7);
        assert_eq!(v["metadata"], serde_json::json!({"resourceVersion": "7"}));
    }

    #[test]
    fn bytes_in_another_order_are_served_in_the_encoders_order() {
        // A built-in kind an older Crest stored with sorted keys: Go's field order.
        let o = CachedObject::from_stored(
            "/registry/configmaps/d/a".into(),
            br#"{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"uid":"u","name":"a"}}"#,
            1,
            5,
        );
        assert_eq!(
            std::str::from_utf8(&o.json).unwrap(),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"u","resourceVersion":"5"},"data":{"k":"v"}}"#
        );
        // A custom resource: sorted, resourceVersion among the metadata keys.
        let o = CachedObject::from_stored(
            "/registry/a.io/xs/d/a".into(),
            br#"{"apiVersion":"a.io/v1","kind":"X","metadata":{"name":"a","uid":"u"}}"#,
            1,
            6,
        );
        assert_eq!(
            std::str::from_utf8(&o.json).unwrap(),
            r#"{"apiVersion":"a.io/v1","kind":"X","metadata":{"name":"a","resourceVersion":"6","uid":"u"}}"#
        );
    }

    #[test]
    fn odd_documents_take_the_slow_path_or_stay_verbatim() {
        // An existing resourceVersion is replaced, not duplicated.
        let v = served(r#"{"metadata":{"resourceVersion":"1","name":"a"}}"#, 9);
        assert_eq!(v["metadata"]["resourceVersion"], "9");
        // No metadata: one is made.
        let v = served(r#"{"kind":"X"}"#, 3);
        assert_eq!(v["metadata"]["resourceVersion"], "3");
        // Not JSON: kept as is.
        let o = CachedObject::from_stored("k".into(), b"not json", 1, 2);
        assert_eq!(&o.json[..], b"not json");
    }
}
