//! Crest's storage contract, shaped like etcd v3, and its embedded backend.
//!
//! Everything above this crate talks to [`Storage`] only. The contract:
//! - One global, strictly increasing revision (`i64`, starting at 1 for the first write). Every
//!   successful write (create, update, delete) gets its own revision; revisions are never reused,
//!   also across restarts.
//! - Each key carries `create_revision`, `mod_revision` and `version` (number of writes since
//!   creation), exactly as etcd's `KeyValue`.
//! - Writes are conditional, as etcd transactions are used by kube-apiserver: create only if the key
//!   is absent, update and delete only if the key's `mod_revision` equals the expected one.
//! - A write that returned `Ok` is durable: it survives a crash (`kill -9`) of the process.
//! - Reads can be at the latest revision or at any revision not older than the compacted one.
//! - A watch from revision `r` delivers every event with revision `> r` in revision order, for the
//!   keys under its prefix, with no gaps; a watch from a compacted revision fails with
//!   [`StorageError::Compacted`].
//! - Compaction drops history older than a revision; the latest state of every key stays.
//!
//! Keys are UTF-8 strings (`/registry/<group>/<resource>/<namespace>/<name>`); values are opaque bytes.

mod embedded;

pub use embedded::{EmbeddedOptions, EmbeddedStore};

use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;

/// A global store revision.
pub type Revision = i64;

/// A key and its value at some revision, as etcd's `mvccpb.KeyValue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: Bytes,
    pub create_revision: Revision,
    pub mod_revision: Revision,
    pub version: i64,
}

/// What a range read returns.
#[derive(Clone, Debug, Default)]
pub struct RangeResult {
    /// Matching keys in key order, at most `limit` of them.
    pub kvs: Vec<KeyValue>,
    /// The revision the read was served at.
    pub revision: Revision,
    /// Whether more keys matched than were returned.
    pub more: bool,
    /// How many keys matched in total (including the returned ones) when the request asked
    /// for a count; otherwise the number returned.
    pub count: usize,
}

/// A range request: keys with `prefix`, strictly after `start_after` when given, at most `limit`
/// (0 = unlimited), at `revision` (0 = latest). Paging through a large prefix with `limit` and
/// `start_after` at one fixed `revision` reads a consistent snapshot with bounded memory.
#[derive(Clone, Debug, Default)]
pub struct RangeRequest {
    pub prefix: String,
    pub start_after: Option<String>,
    pub limit: usize,
    pub revision: Revision,
    /// Also count every matching key (etcd's `count`); backends may have to scan for it.
    pub count: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Put,
    Delete,
}

/// One change, as etcd's `mvccpb.Event` with `prev_kv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub event_type: EventType,
    /// For `Put` the new key-value; for `Delete` the key with an empty value and
    /// `mod_revision` = the deletion revision.
    pub kv: KeyValue,
    /// The previous value of the key, if it existed.
    pub prev_kv: Option<KeyValue>,
}

/// Why a conditional write did not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The write happened; the key's new state (for delete: the deleted key-value with
    /// `mod_revision` = the delete revision).
    Done(KeyValue),
    /// The condition failed; the key's current state (`None` when absent).
    Conflict(Option<KeyValue>),
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error(
        "the requested revision {requested} has been compacted (compacted revision {compacted})"
    )]
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    #[error("the requested revision {requested} is in the future (current revision {current})")]
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    #[error("storage is closed")]
    Closed,
    #[error("storage backend error: {0}")]
    Backend(String),
}

pub type Result<T> = std::result::Result<T, StorageError>;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A stream of watch events in revision order. Closed when the store shuts down or the watcher
/// falls too far behind (the next `recv` then returns `Err`), after which the client re-lists.
pub struct WatchStream {
    pub rx: tokio::sync::mpsc::Receiver<Result<Event>>,
}

impl WatchStream {
    pub async fn recv(&mut self) -> Option<Result<Event>> {
        self.rx.recv().await
    }
}

/// The etcd-v3-shaped storage interface. Implementations: [`EmbeddedStore`]; an etcd backend later.
pub trait Storage: Send + Sync + 'static {
    /// The latest committed revision (0 for an empty store).
    fn current_revision(&self) -> Revision;

    /// The oldest revision reads and watches may ask for (0 when nothing was compacted).
    fn compacted_revision(&self) -> Revision;

    fn get<'a>(
        &'a self,
        key: &'a str,
        revision: Revision,
    ) -> BoxFuture<'a, Result<Option<KeyValue>>>;

    fn range<'a>(&'a self, req: RangeRequest) -> BoxFuture<'a, Result<RangeResult>>;

    /// Stores `value` under `key` if the key does not exist.
    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, Result<WriteOutcome>>;

    /// Replaces the value if the key exists with `mod_revision == expected`.
    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>>;

    /// Deletes the key if it exists with `mod_revision == expected` (`expected == 0`: whatever it holds).
    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>>;

    /// Events for keys under `prefix` with revision `> after`.
    fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream>;

    /// Drops history older than `revision`.
    fn compact<'a>(&'a self, revision: Revision) -> BoxFuture<'a, Result<()>>;

    /// Flushes and stops background work; later calls fail with `Closed`.
    fn close<'a>(&'a self) -> BoxFuture<'a, ()>;
}
