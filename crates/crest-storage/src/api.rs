//! The storage contract: the [`Storage`] trait and its types, shaped as an etcd v3 client needs
//! them. Backends ([`crate::EmbeddedStore`]; `EtcdStore` in the crate `crest-storage-etcd`)
//! implement it; everything above this crate uses nothing else. `crate::conformance` (feature `conformance`) checks a backend
//! against it.

use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

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
    /// for a count; otherwise the number returned (plus one when `more`).
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

/// What a watch delivers, in revision order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// A change of a key under the watched prefix.
    Change(Event),
    /// Every change with a revision `<=` this one has been delivered (etcd's WatchResponse with
    /// no events and the header revision). Sent on [`WatchStream::request_progress`], and, with
    /// [`WatchRequest::progress_notify`], when the watch has been idle for the backend's interval.
    /// The revision may be higher than the last change delivered (writes elsewhere).
    Progress(Revision),
}

impl WatchEvent {
    /// The revision this item brings the watcher to.
    pub fn revision(&self) -> Revision {
        match self {
            WatchEvent::Change(ev) => ev.kv.mod_revision,
            WatchEvent::Progress(r) => *r,
        }
    }
}

/// A watch: changes of keys under `prefix` with revision `> after`.
#[derive(Clone, Debug, Default)]
pub struct WatchRequest {
    pub prefix: String,
    pub after: Revision,
    /// Send [`WatchEvent::Progress`] when the watch has been idle for the backend's progress
    /// interval (etcd's `progress_notify`).
    pub progress_notify: bool,
    /// The consumer does not need [`Event::prev_kv`] (it keeps the previous state itself, as
    /// the cache feed does): a backend may leave it `None`, which spares etcd a read of the
    /// previous revision for every event.
    pub without_prev_kv: bool,
}

impl WatchRequest {
    pub fn new(prefix: impl Into<String>, after: Revision) -> Self {
        WatchRequest {
            prefix: prefix.into(),
            after,
            progress_notify: false,
            without_prev_kv: false,
        }
    }
}

/// Why a conditional write did not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The write happened; the key's new state (for delete: the deleted key-value with
    /// `mod_revision` = the delete revision).
    Done(KeyValue),
    /// The condition failed; the key's current state (`None` when absent). A conflict is an
    /// outcome, not an error, as an etcd transaction whose compare failed (`succeeded: false`).
    Conflict(Option<KeyValue>),
}

/// One write of [`Storage::write_batch`]: what [`Storage::create`], [`Storage::update`] and
/// [`Storage::delete`] do, with the same conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Stores `value` under `key` if the key does not exist.
    Create { key: String, value: Bytes },
    /// Replaces the value if the key exists with `mod_revision == expected`.
    Update {
        key: String,
        expected: Revision,
        value: Bytes,
    },
    /// Deletes the key if it exists with `mod_revision == expected` (`0`: whatever it holds).
    Delete { key: String, expected: Revision },
}

impl Write {
    pub fn key(&self) -> &str {
        match self {
            Write::Create { key, .. } | Write::Update { key, .. } | Write::Delete { key, .. } => {
                key
            }
        }
    }
}

/// What can go wrong talking to storage. Callers decide by variant: `Compacted` -> 410 and
/// re-list, `FutureRevision` -> wait or 504, `Unavailable`/`Timeout` -> retry, `Io` -> the
/// disk failed (retry later), `Closed` -> shutting down.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// The revision asked for (read or watch start) is older than the compacted one
    /// (etcd's `ErrCompacted`).
    #[error(
        "the requested revision {requested} has been compacted (compacted revision {compacted})"
    )]
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    /// The revision asked for is newer than the store's (etcd's `ErrFutureRev`).
    #[error("the requested revision {requested} is in the future (current revision {current})")]
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    /// The backend cannot serve now but may later (no leader, connection lost, a watch cut
    /// because its consumer fell behind). Retrying, or re-watching from the last revision
    /// received, is the answer.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The request did not finish in time; whether a write happened is unknown
    /// (etcd's `ErrTimeout`).
    #[error("storage request timed out: {0}")]
    Timeout(String),
    /// The store was closed; nothing more will succeed.
    #[error("storage is closed")]
    Closed,
    /// The data dir holds something this backend will not read (another format); opening fails
    /// with this rather than misreading it.
    #[error("{0}")]
    DataDir(String),
    /// The backend's disk failed a write (no space left, an I/O error, a quota exceeded, ...):
    /// writes fail with this until the backend has recovered, which it does by itself once the
    /// cause is gone; reads may still work. The message names the cause, as etcd's
    /// `mvcc: database space exceeded` does.
    #[error("{0}")]
    Io(String),
    /// A genuinely unexpected backend failure (corrupt record, an unexpected engine error).
    #[error("storage backend error: {0}")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, StorageError>;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The backend side of a [`WatchStream`]: how a consumer asks for a progress notification.
pub trait ProgressRequester: Send + Sync {
    fn request_progress(&self);
}

/// The events of one watch, in revision order, with no gaps. A stream ends (`None`) after an
/// `Err`: [`StorageError::Compacted`] (the start was compacted while replaying),
/// [`StorageError::Unavailable`] (cut off, e.g. the consumer fell too far behind: re-watch from
/// the last revision received) or [`StorageError::Closed`]. Dropping it cancels the watch.
pub struct WatchStream {
    rx: tokio::sync::mpsc::Receiver<Result<WatchEvent>>,
    progress: Arc<dyn ProgressRequester>,
    ended: bool,
}

impl WatchStream {
    /// For backends: a stream fed through `rx`, whose last item must be an `Err` unless the
    /// consumer dropped it first (a sender dropped without one reads as `Unavailable`).
    pub fn new(
        rx: tokio::sync::mpsc::Receiver<Result<WatchEvent>>,
        progress: Arc<dyn ProgressRequester>,
    ) -> Self {
        WatchStream {
            rx,
            progress,
            ended: false,
        }
    }

    fn settle(&mut self, got: Option<Result<WatchEvent>>) -> Option<Result<WatchEvent>> {
        if self.ended {
            return None;
        }
        match got {
            Some(Ok(ev)) => Some(Ok(ev)),
            Some(Err(e)) => {
                self.ended = true;
                self.rx.close();
                Some(Err(e))
            }
            None => {
                self.ended = true;
                Some(Err(StorageError::Unavailable("the watch ended".into())))
            }
        }
    }

    /// The next item; `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<Result<WatchEvent>> {
        if self.ended {
            return None;
        }
        let got = self.rx.recv().await;
        self.settle(got)
    }

    /// The next item if one is ready now (to batch what has arrived), without waiting.
    pub fn try_next(&mut self) -> Option<Result<WatchEvent>> {
        if self.ended {
            return None;
        }
        match self.rx.try_recv() {
            Ok(item) => self.settle(Some(item)),
            Err(tokio::sync::mpsc::error::TryRecvError::Empty) => None,
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => self.settle(None),
        }
    }

    /// Asks for a [`WatchEvent::Progress`] with the store's current revision, delivered after
    /// every change up to it (etcd's `RequestProgress`). Requests made before the answer may be
    /// answered together.
    pub fn request_progress(&self) {
        self.progress.request_progress();
    }
}

impl futures_core::Stream for WatchStream {
    type Item = Result<WatchEvent>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(got) => Poll::Ready(self.settle(got)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The etcd-v3-shaped storage interface. Implementations: [`crate::EmbeddedStore`], and
/// `crest_storage_etcd::EtcdStore`. Every backend passes `crate::conformance`.
pub trait Storage: Send + Sync + 'static {
    /// The latest committed revision (0 for an empty store): every write acknowledged before the
    /// call is at or below it. Called before every consistent read, so it must be cheap: the
    /// embedded backend answers from memory without blocking. An etcd backend asks etcd (a
    /// keys-only, limit-1 range whose response header carries the revision, as kube-apiserver's
    /// consistent reads from cache do), sharing one in-flight request among concurrent callers;
    /// the cache then waits until its watch has delivered that revision, asking the watch for
    /// progress so that writes outside its prefix do not stall it.
    fn current_revision(&self) -> BoxFuture<'_, Result<Revision>>;

    /// The newest revision known to be compacted (0 when none): a cheap, possibly stale lower
    /// bound for early answers. The authority is the `Compacted` error of a read or watch.
    fn compacted_revision(&self) -> Revision;

    /// The key at `revision` (0 = latest).
    fn get<'a>(
        &'a self,
        key: &'a str,
        revision: Revision,
    ) -> BoxFuture<'a, Result<Option<KeyValue>>>;

    fn range(&self, req: RangeRequest) -> BoxFuture<'_, Result<RangeResult>>;

    /// Stores `value` under `key` if the key does not exist.
    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, Result<WriteOutcome>>;

    /// Replaces the value if the key exists with `mod_revision == expected`.
    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>>;

    /// Deletes the key if it exists with `mod_revision == expected` (`expected == 0`: whatever it
    /// holds).
    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>>;

    /// Several writes of distinct keys, issued together: each is applied as by its own method
    /// (`create`, `update`, `delete`), with its own condition, outcome and revision, the
    /// outcomes in the order of `writes`. They are not one transaction: some may conflict while
    /// the others are done, and a backend may apply them in any order or concurrently (etcd:
    /// one request each, all at once). The embedded store applies them in the order given, in
    /// one batch with one durable commit: a first start writes its bootstrap policy so. On an
    /// error, some of the writes may have been done (for the embedded store: none).
    fn write_batch(&self, writes: Vec<Write>) -> BoxFuture<'_, Result<Vec<WriteOutcome>>> {
        Box::pin(async move {
            let mut outcomes = Vec::with_capacity(writes.len());
            for w in writes {
                outcomes.push(match w {
                    Write::Create { key, value } => self.create(&key, value).await?,
                    Write::Update {
                        key,
                        expected,
                        value,
                    } => self.update(&key, expected, value).await?,
                    Write::Delete { key, expected } => self.delete(&key, expected).await?,
                });
            }
            Ok(outcomes)
        })
    }

    /// Changes of keys under `req.prefix` with revision `> req.after`, history first. Fails with
    /// `Compacted` when `req.after` is older than the compacted revision (or ends with it as its
    /// first item). `req.after` may be newer than the current revision: as in etcd, the watch
    /// then waits for the changes after it.
    fn watch(&self, req: WatchRequest) -> BoxFuture<'_, Result<WatchStream>>;

    /// Drops history older than `revision`; the latest state of every key stays. Reads and
    /// watches at a revision below it fail with `Compacted` from then on.
    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<()>>;

    /// Flushes and stops background work; later calls fail with `Closed`, open watches end with
    /// `Closed`.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// What keeps the backend from working now, as the readiness check reports it (e.g. writes
    /// failing on a full disk until space is freed); `None` when it is healthy or cannot tell.
    /// Cheap and non-blocking: called by every readiness probe. A decorator of another backend
    /// must pass it on.
    fn problem(&self) -> Option<String> {
        None
    }
}
