//! The in-memory view of the store that every read is served from (kube-apiserver's watch cache).
//!
//! It is filled by one range at startup and then kept current by one storage watch on
//! `/registry/`. Objects are held as the JSON bytes clients receive (resourceVersion already set),
//! so a GET or LIST copies bytes and never re-encodes. Reads that must be consistent call
//! [`Cache::wait_for`] with the store's current revision first; the watch is in-process, so this
//! wait is short and replaces a quorum read.

use bytes::Bytes;
use crest_storage::{EventType, Revision};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// One object as served: its JSON with `metadata.resourceVersion` set.
#[derive(Debug)]
pub struct CachedObject {
    /// Shared with the cache's index, so each key is held once.
    pub key: Arc<str>,
    pub json: Bytes,
    pub create_revision: Revision,
    pub mod_revision: Revision,
}

impl CachedObject {
    /// Builds the served form from stored bytes (stored objects carry no resourceVersion).
    pub fn from_stored(
        key: String,
        stored: &[u8],
        create_revision: Revision,
        mod_revision: Revision,
    ) -> Self {
        let json = with_resource_version(stored, mod_revision)
            .or_else(|| {
                let mut v = serde_json::from_slice::<Value>(stored).ok()?;
                crest_api::meta::set(&mut v, "resourceVersion", mod_revision.to_string());
                serde_json::to_vec(&v).ok()
            })
            .map(|v| crate::longlived::copy(&v))
            // Not JSON: keep it verbatim so nothing is lost; readers report it as a decode error.
            .unwrap_or_else(|| crate::longlived::copy(stored));
        CachedObject {
            key: Arc::from(key),
            json,
            create_revision,
            mod_revision,
        }
    }

    /// The object as read through `schema` (pruned and defaulted, see
    /// [`crate::customresource::CrSchema::decode_stored`]); `None` when that changes nothing.
    pub fn normalized(&self, schema: &crate::customresource::CrSchema) -> Option<CachedObject> {
        let mut v: Value = serde_json::from_slice(&self.json).ok()?;
        let before = v.clone();
        schema.decode_stored(&mut v);
        if v == before {
            return None;
        }
        crest_api::meta::set(&mut v, "resourceVersion", self.mod_revision.to_string());
        let json = serde_json::to_vec(&v).ok()?;
        Some(CachedObject {
            key: self.key.clone(),
            json: crate::longlived::copy(&json),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
        })
    }

    /// Parses the object (callers that change it need an owned tree).
    pub fn value(&self) -> Result<Value, crest_api::ApiError> {
        serde_json::from_slice(&self.json).map_err(|e| {
            crest_api::ApiError::internal(format!(
                "stored object {} is not valid JSON: {e}",
                self.key
            ))
        })
    }
}

/// `stored` with `"resourceVersion":"<rev>"` inserted at the start of its top-level metadata,
/// without building a tree: the whole document is still validated, but nothing nested is
/// allocated. `None` when the fast path does not apply (no metadata object, a resourceVersion
/// already present, escaped keys): the caller then goes through a full parse.
fn with_resource_version(stored: &[u8], rev: Revision) -> Option<Vec<u8>> {
    use serde_json::value::RawValue;
    use std::collections::HashMap;
    let top: HashMap<&str, &RawValue> = serde_json::from_slice(stored).ok()?;
    let raw = top.get("metadata")?.get();
    let fields: HashMap<&str, &RawValue> = serde_json::from_str(raw).ok()?;
    if fields.contains_key("resourceVersion") {
        return None;
    }
    // `raw` borrows from `stored`, so its address gives its offset; it starts with '{'.
    let start = (raw.as_ptr() as usize).checked_sub(stored.as_ptr() as usize)?;
    if stored.get(start) != Some(&b'{') {
        return None;
    }
    Some(splice_resource_version(
        stored,
        start,
        fields.is_empty(),
        rev,
    ))
}

/// `stored` with `"resourceVersion":"<rev>"` inserted right after the `{` at `metadata_start`
/// (the top-level metadata object, which must not hold a resourceVersion already).
pub(crate) fn splice_resource_version(
    stored: &[u8],
    metadata_start: usize,
    metadata_empty: bool,
    rev: Revision,
) -> Vec<u8> {
    let rv = format!(
        "\"resourceVersion\":\"{rev}\"{}",
        if metadata_empty { "" } else { "," }
    );
    let mut out = Vec::with_capacity(stored.len() + rv.len());
    out.extend_from_slice(&stored[..=metadata_start]);
    out.extend_from_slice(rv.as_bytes());
    out.extend_from_slice(&stored[metadata_start + 1..]);
    out
}

/// A change as the cache applied it.
#[derive(Clone, Debug)]
pub struct CacheEvent {
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
}

pub struct Cache {
    state: RwLock<State>,
    revision_tx: watch::Sender<Revision>,
    events_tx: broadcast::Sender<Arc<CacheEvent>>,
}

/// A consistent copy of the objects under one prefix.
pub struct Snapshot {
    pub revision: Revision,
    pub objects: Vec<Arc<CachedObject>>,
}

impl Cache {
    pub fn new() -> Arc<Self> {
        let (revision_tx, _) = watch::channel(0);
        let (events_tx, _) = broadcast::channel(4096);
        Arc::new(Cache {
            state: RwLock::new(State::default()),
            revision_tx,
            events_tx,
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn revision(&self) -> Revision {
        self.read().revision
    }

    /// Loads the initial state (startup).
    pub fn load(&self, objects: Vec<CachedObject>, revision: Revision) {
        let mut st = self.write();
        for o in objects {
            st.objects.insert(o.key.clone(), Arc::new(o));
        }
        st.revision = revision;
        drop(st);
        self.revision_tx.send_replace(revision);
    }

    /// Applies one batch of storage events (in revision order), runs `before_publish` (which sees
    /// the new state), then makes the new revision visible to waiting readers and subscribers.
    pub fn apply(&self, events: Vec<CacheEvent>, before_publish: impl FnOnce(&[CacheEvent])) {
        let Some(last) = events.last().map(|e| e.revision) else {
            return;
        };
        {
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
        }
        before_publish(&events);
        for e in events {
            // No receivers is fine: controllers subscribe when they start.
            let _ = self.events_tx.send(Arc::new(e));
        }
        self.revision_tx.send_replace(last);
    }

    /// Replaces objects by their normalized form (no new revision, no events): only where the
    /// cache still holds the same revision of the object.
    pub fn replace(&self, objects: Vec<CachedObject>) {
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

    /// Marks the cache current up to `revision` without events (e.g. writes outside `/registry/`).
    pub fn advance(&self, revision: Revision) {
        let mut st = self.write();
        if revision > st.revision {
            st.revision = revision;
            drop(st);
            self.revision_tx.send_replace(revision);
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<CacheEvent>> {
        self.events_tx.subscribe()
    }

    /// Waits until the cache has applied `revision`. Fails after a generous timeout rather than
    /// hanging a request forever if the storage watch broke.
    pub async fn wait_for(&self, revision: Revision) -> Result<(), crest_api::ApiError> {
        let mut rx = self.revision_tx.subscribe();
        let waited =
            tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|r| *r >= revision)).await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            _ => Err(crest_api::ApiError::new(
                504,
                crest_api::Reason::Timeout,
                format!(
                    "Too large resource version: {revision}, current: {}",
                    self.revision()
                ),
            )),
        }
    }

    pub fn get(&self, key: &str) -> Option<Arc<CachedObject>> {
        self.read().objects.get(key).cloned()
    }

    /// All objects whose key starts with `prefix`, in key order, with the revision they reflect.
    pub fn list(&self, prefix: &str) -> Snapshot {
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

    /// Whether any key starts with `prefix`.
    pub fn any(&self, prefix: &str) -> bool {
        let st = self.read();
        let found = st
            .objects
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .next()
            .is_some_and(|(k, _)| k.starts_with(prefix));
        found
    }

    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
