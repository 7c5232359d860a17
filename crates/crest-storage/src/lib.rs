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
//! - Several writes can be issued together ([`Storage::write_batch`]), each with its own
//!   condition, outcome and revision; the embedded backend commits them in one durable commit.
//! - A write that returned `Ok` is durable: it survives a crash (`kill -9`) of the process.
//! - Reads can be at the latest revision or at any revision not older than the compacted one.
//! - A watch from revision `r` delivers every event with revision `> r` in revision order, for the
//!   keys under its prefix, with no gaps; a watch from a compacted revision fails with
//!   [`StorageError::Compacted`].
//! - Compaction drops history older than a revision; the latest state of every key stays.
//! - `current_revision` is cheap (called before every consistent read); progress notifications
//!   ([`WatchEvent::Progress`]) tell a watcher it has seen everything up to a revision.
//!
//! Keys are UTF-8 strings (`/registry/<group>/<resource>/<namespace>/<name>`); values are opaque bytes.
//! The trait and its types are in [`api`]; backends: [`embedded`]. With the `conformance`
//! feature, [`conformance`] is the suite every backend must pass.

mod api;
#[cfg(feature = "conformance")]
pub mod conformance;
mod embedded;

pub use api::{
    BoxFuture, Event, EventType, KeyValue, ProgressRequester, RangeRequest, RangeResult, Result,
    Revision, Storage, StorageError, WatchEvent, WatchRequest, WatchStream, Write, WriteOutcome,
};
pub use embedded::{EmbeddedOptions, EmbeddedStore};
