//! Watch at a resourceVersion: where a watch starts, and where its changes come from.
//!
//! Every watcher reads the cache's change history (no per-watcher storage watch, no copy of the
//! events per watcher): it wakes when the cache publishes a revision and takes the changes after
//! the last revision it sent. A watcher whose resourceVersion is older than the history (or that
//! fell that far behind) continues from a storage watch, which replays any retained revision;
//! older than the storage's compaction is `410 Expired`. Encoding the events is the caller's.

use crate::store::cache::{CacheEvent, CachedObject};
use crate::store::reads::handle::{parse_rv, storage_error, Reads};
use crate::store::reads::schema::{read_stored, StoredSchema};
use crest_api::ApiError;
use crest_storage::{EventType, Revision, StorageError, WatchEvent, WatchRequest, WatchStream};
use std::sync::Arc;
use tokio::time::Instant;

/// Events taken from the history per wake-up (bounds one chunk).
const BATCH: usize = 256;

/// The 410 a watch from a revision older than the retained history gets.
fn too_old(requested: Revision, oldest: Revision) -> ApiError {
    ApiError::expired(format!("too old resource version: {requested} ({oldest})"))
}

/// Where a watch starts, as [`Reads::watch`] decided it.
pub(crate) struct WatchStart {
    /// The state to send first as ADDED events (empty unless asked for).
    pub initial: Vec<Arc<CachedObject>>,
    /// The revision `initial` reflects; the changes after it follow.
    pub start: Revision,
    /// The changes after `start`, or the error a watch from a compacted revision gets (sent
    /// as the one event of a 200 response, so that clients re-list, as kube-apiserver does).
    pub changes: Result<WatchChanges, ApiError>,
}

/// Where a watcher reads changes from.
enum Source {
    History,
    Storage(WatchStream),
}

/// The changes one watcher has not sent yet, from the cache's history or, once that moved past
/// the watcher, from a storage watch; read through the resource's current schema.
pub(crate) struct WatchChanges {
    reads: Reads,
    prefix: String,
    stored: Option<StoredSchema>,
    /// The last revision whose changes were all handed out.
    sent_through: Revision,
    source: Source,
    revisions: tokio::sync::watch::Receiver<Revision>,
}

/// What [`WatchChanges::wait`] woke up for.
pub(crate) enum Woken {
    /// Look for changes again (a new revision, the wake-up time, a progress notification).
    Again,
    /// The server is shutting down.
    Shutdown,
    /// One change from the storage watch.
    Change(Arc<CacheEvent>),
    /// The watch cannot go on: the error to send, or none (it fell behind or the store closed:
    /// the response ends and the client re-lists).
    Ended(Option<ApiError>),
}

impl Reads {
    /// A watch under `prefix` from resourceVersion `rv` (objects of a custom resource stored
    /// under `stored`).
    ///
    /// Legacy semantics (`send_initial` unset): no resourceVersion or "0" starts with the
    /// current state; N starts after N. `Some(true)` (streaming list) sends the state at least
    /// as new as N, then the changes; `Some(false)` starts after N (or now) without a state.
    pub(crate) async fn watch(
        &self,
        prefix: String,
        stored: Option<StoredSchema>,
        rv: &str,
        send_initial: Option<bool>,
    ) -> Result<WatchStart, ApiError> {
        let requested = if rv.is_empty() || rv == "0" {
            None
        } else {
            Some(parse_rv(rv)?)
        };
        let mut revisions = self.cache.revisions();
        revisions.borrow_and_update();
        let initial_state = match send_initial {
            Some(s) => s,
            None => requested.is_none(),
        };
        let mut initial = vec![];
        let start = if initial_state {
            match requested {
                Some(n) => self.wait_fresh(n).await?,
                None if rv.is_empty() => self.sync().await?,
                None => {}
            }
            let snap = self.cache.list(&prefix);
            initial = snap.objects;
            snap.revision
        } else {
            match requested {
                Some(n) => n,
                None => {
                    if rv.is_empty() {
                        self.sync().await?;
                    }
                    self.cache.revision()
                }
            }
        };
        let compacted = self.storage.compacted_revision();
        let source = if start < compacted {
            Err(too_old(start, compacted))
        } else if start < self.cache.history_floor() {
            match self
                .storage
                .watch(WatchRequest::new(prefix.clone(), start))
                .await
            {
                Ok(s) => Ok(Source::Storage(s)),
                Err(StorageError::Compacted { .. }) => Err(too_old(start, compacted)),
                Err(e) => return Err(storage_error(e)),
            }
        } else {
            Ok(Source::History)
        };
        let changes = source.map(|source| WatchChanges {
            reads: self.clone(),
            prefix,
            stored,
            sent_through: start,
            source,
            revisions,
        });
        Ok(WatchStart {
            initial,
            start,
            changes,
        })
    }
}

impl WatchChanges {
    /// The last revision whose changes were all handed out (a bookmark's revision).
    pub(crate) fn sent_through(&self) -> Revision {
        self.sent_through
    }

    /// The changes available now (at most a batch), and the error that ends the watch after
    /// them, if any.
    pub(crate) async fn available(&mut self) -> (Vec<Arc<CacheEvent>>, Option<ApiError>) {
        self.revisions.borrow_and_update();
        match &mut self.source {
            Source::History => {
                let changes = self
                    .reads
                    .cache
                    .events_after(&self.prefix, self.sent_through, BATCH);
                match changes {
                    Ok(c) => {
                        self.sent_through = c.through;
                        let events = c.events.into_iter().map(|e| self.read_event(e)).collect();
                        (events, None)
                    }
                    Err(_) => {
                        // The history moved past this watcher: continue from storage.
                        let storage = &self.reads.storage;
                        let req = WatchRequest::new(self.prefix.clone(), self.sent_through);
                        let failed = match storage.watch(req).await {
                            Ok(s) => {
                                self.source = Source::Storage(s);
                                None
                            }
                            Err(StorageError::Compacted { .. }) => {
                                Some(too_old(self.sent_through, storage.compacted_revision()))
                            }
                            Err(e) => Some(storage_error(e)),
                        };
                        (vec![], failed)
                    }
                }
            }
            Source::Storage(stream) => {
                let mut got = vec![];
                let mut failed = None;
                while got.len() < BATCH {
                    match stream.try_next() {
                        Some(Ok(WatchEvent::Change(ev))) => got.push(ev),
                        Some(Ok(WatchEvent::Progress(_))) => {}
                        Some(Err(StorageError::Compacted {
                            requested,
                            compacted,
                        })) => {
                            failed = Some(too_old(requested, compacted));
                            break;
                        }
                        // Fell behind or the store closed: the stream has ended, and so does the
                        // response (the client re-lists).
                        Some(Err(StorageError::Unavailable(_) | StorageError::Closed)) | None => {
                            break
                        }
                        Some(Err(e)) => {
                            failed = Some(storage_error(e));
                            break;
                        }
                    }
                }
                let events: Vec<Arc<CacheEvent>> =
                    got.into_iter().map(|ev| self.storage_event(ev)).collect();
                if let Some(last) = events.last() {
                    self.sent_through = last.revision;
                }
                (events, failed)
            }
        }
    }

    /// Waits until changes may be available, `wake` or shutdown (a storage watch hands its
    /// next change over at once).
    pub(crate) async fn wait(
        &mut self,
        wake: Instant,
        shutdown: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Woken {
        match &mut self.source {
            Source::History => {
                tokio::select! {
                    _ = self.revisions.changed() => Woken::Again,
                    _ = tokio::time::sleep_until(wake) => Woken::Again,
                    _ = shutdown.changed() => Woken::Shutdown,
                }
            }
            Source::Storage(stream) => {
                let got = tokio::select! {
                    ev = stream.next() => ev,
                    _ = tokio::time::sleep_until(wake) => return Woken::Again,
                    _ = shutdown.changed() => return Woken::Shutdown,
                };
                match got {
                    Some(Ok(WatchEvent::Progress(_))) => Woken::Again,
                    Some(Ok(WatchEvent::Change(ev))) => {
                        let ev = self.storage_event(ev);
                        self.sent_through = ev.revision;
                        Woken::Change(ev)
                    }
                    Some(Err(StorageError::Compacted {
                        requested,
                        compacted,
                    })) => Woken::Ended(Some(too_old(requested, compacted))),
                    // Fell behind or the store closed: the client re-lists.
                    Some(Err(_)) | None => Woken::Ended(None),
                }
            }
        }
    }

    /// A storage event in the cache's form (served bytes, read as the storage version), read
    /// through the current schema.
    fn storage_event(&self, ev: crest_storage::Event) -> Arc<CacheEvent> {
        let stored = self.stored.as_ref();
        let rev = ev.kv.mod_revision;
        let read = |kv: &crest_storage::KeyValue| Arc::new(read_stored(kv, stored, None));
        let prev = ev.prev_kv.as_ref().map(read);
        let object = match ev.event_type {
            EventType::Put => read(&ev.kv),
            EventType::Delete => prev.clone().unwrap_or_else(|| {
                Arc::new(CachedObject::from_stored(ev.kv.key.clone(), b"{}", 0, rev))
            }),
        };
        self.read_event(Arc::new(CacheEvent {
            event_type: ev.event_type,
            key: ev.kv.key,
            revision: rev,
            object,
            prev,
        }))
    }

    /// A change with its objects read through the current schema (see [`Self::read_through`]).
    fn read_event(&self, ev: Arc<CacheEvent>) -> Arc<CacheEvent> {
        let stale = |o: &CachedObject| {
            self.stored
                .as_ref()
                .is_some_and(|ss| ss.normalizes() && o.mod_revision < ss.crd_revision)
        };
        if !stale(&ev.object) && !ev.prev.as_deref().is_some_and(stale) {
            return ev;
        }
        Arc::new(CacheEvent {
            event_type: ev.event_type,
            key: ev.key.clone(),
            revision: ev.revision,
            object: self.read_through(&ev.object),
            prev: ev.prev.as_ref().map(|p| self.read_through(p)),
        })
    }

    /// An object written before its CRD last changed is served through the current schema.
    fn read_through(&self, obj: &Arc<CachedObject>) -> Arc<CachedObject> {
        match &self.stored {
            Some(ss) if ss.normalizes() && obj.mod_revision < ss.crd_revision => ss
                .normalize(obj)
                .map(Arc::new)
                .unwrap_or_else(|| obj.clone()),
            _ => obj.clone(),
        }
    }
}
