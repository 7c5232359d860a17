//! The read handle: the cache's current state, catching up with the store, and reads of one
//! object at a resourceVersion.

use crate::store::cache::{Cache, CacheEvent, CachedObject, Snapshot};
use crest_api::ApiError;
use crest_storage::{Revision, Storage, StorageError};
use std::sync::Arc;
use std::time::Duration;

/// How long a read waits for a resourceVersion the server has not reached (as kube-apiserver's
/// watch cache), before "Too large resource version".
const FRESH_WAIT: Duration = Duration::from_secs(3);

/// The reads of one store through its cache: every read at a resourceVersion, and the cache's
/// current state for the registry's admission, the controllers and authentication (reached
/// through the registry's `reads()`).
#[derive(Clone)]
pub(crate) struct Reads {
    pub(super) storage: Arc<dyn Storage>,
    pub(super) cache: Arc<Cache>,
}

impl Reads {
    pub(crate) fn new(storage: Arc<dyn Storage>, cache: Arc<Cache>) -> Reads {
        Reads { storage, cache }
    }

    /// The cached object at `key` now (the cache may not have caught up with the latest
    /// writes: see [`Reads::sync`]).
    pub(crate) fn get(&self, key: &str) -> Option<Arc<CachedObject>> {
        self.cache.get(key)
    }

    /// The cached objects under `prefix` now, with the revision they reflect.
    pub(crate) fn snapshot(&self, prefix: &str) -> Snapshot {
        self.cache.list(prefix)
    }

    /// The revision the cache reflects.
    pub(crate) fn revision(&self) -> Revision {
        self.cache.revision()
    }

    /// Every change the cache applies from now on.
    pub(crate) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<CacheEvent>> {
        self.cache.subscribe()
    }

    /// Waits until the cache reflects every write acknowledged so far.
    pub(crate) async fn sync(&self) -> Result<(), ApiError> {
        let rev = self
            .storage
            .current_revision()
            .await
            .map_err(storage_error)?;
        self.cache.wait_for(rev).await
    }

    /// The objects under `prefix` once the cache reflects every write acknowledged so far.
    pub(crate) async fn list_latest(&self, prefix: &str) -> Result<Snapshot, ApiError> {
        self.sync().await?;
        Ok(self.cache.list(prefix))
    }

    /// Waits (briefly) until the cache has reached `rev`; 504 "Too large resource version"
    /// otherwise.
    pub(crate) async fn wait_fresh(&self, rev: Revision) -> Result<(), ApiError> {
        if self.cache.revision() >= rev {
            return Ok(());
        }
        self.cache.wait_for_within(rev, FRESH_WAIT).await
    }

    /// GET of `key` with resourceVersion `rv`: unset reads the latest state, "0" any, N at
    /// least N. `None`: not found.
    pub(crate) async fn get_at(
        &self,
        key: &str,
        rv: &str,
    ) -> Result<Option<Arc<CachedObject>>, ApiError> {
        match rv {
            "" => self.sync().await?,
            "0" => {}
            n => self.wait_fresh(parse_rv(n)?).await?,
        }
        Ok(self.cache.get(key))
    }

    /// Why the store cannot serve, if it knows (`/readyz`).
    pub(crate) fn storage_problem(&self) -> Option<String> {
        self.storage.problem()
    }

    /// The store's current revision (asks the store).
    pub(crate) async fn current_revision(&self) -> Result<Revision, StorageError> {
        self.storage.current_revision().await
    }

    /// The oldest revision the store still serves reads and watches at.
    pub(crate) fn compacted_revision(&self) -> Revision {
        self.storage.compacted_revision()
    }

    /// Drops the store's revisions before `revision`: reads and watches before it get 410.
    pub(crate) async fn compact(&self, revision: Revision) -> Result<(), StorageError> {
        self.storage.compact(revision).await
    }

    /// Ages out the cache's change history (watches from before it read from storage).
    pub(crate) fn expire_history(&self) {
        self.cache.expire_history()
    }
}

/// Parses a non-zero resourceVersion parameter.
pub(crate) fn parse_rv(rv: &str) -> Result<Revision, ApiError> {
    match rv.parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(ApiError::bad_request(format!(
            "invalid resource version: {rv:?}"
        ))),
    }
}

/// A storage error as the API answers it.
pub(crate) fn storage_error(e: StorageError) -> ApiError {
    match e {
        StorageError::Compacted { requested, compacted } => ApiError::gone(format!(
            "The resourceVersion for the provided list is too old (requested {requested}, compacted {compacted})."
        )),
        StorageError::FutureRevision { requested, current } => ApiError::new(
            504,
            crest_api::Reason::Timeout,
            format!("Too large resource version: {requested}, current: {current}"),
        ),
        StorageError::Closed => ApiError::service_unavailable("the server is shutting down"),
        StorageError::Unavailable(m) => ApiError::service_unavailable(m),
        // As kube-apiserver answers a storage deadline: 504 Timeout.
        StorageError::Timeout(m) => ApiError::new(504, crest_api::Reason::Timeout, m),
        // As kube-apiserver answers a storage error it has no status for (etcd's `mvcc: database
        // space exceeded`): the cause as the message.
        StorageError::Io(m) => ApiError::unknown(m),
        StorageError::DataDir(m) | StorageError::Internal(m) => ApiError::internal(m),
    }
}
