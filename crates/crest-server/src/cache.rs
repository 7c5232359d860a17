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
    pub key: String,
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
        let json = match serde_json::from_slice::<Value>(stored) {
            Ok(mut v) => {
                crest_api::meta::set(&mut v, "resourceVersion", mod_revision.to_string());
                serde_json::to_vec(&v)
                    .map(Bytes::from)
                    .unwrap_or_else(|_| Bytes::copy_from_slice(stored))
            }
            // Not JSON: keep it verbatim so nothing is lost; readers report it as a decode error.
            Err(_) => Bytes::copy_from_slice(stored),
        };
        CachedObject {
            key,
            json,
            create_revision,
            mod_revision,
        }
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
    objects: BTreeMap<String, Arc<CachedObject>>,
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
                        st.objects.insert(e.key.clone(), e.object.clone());
                    }
                    EventType::Delete => {
                        st.objects.remove(&e.key);
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
