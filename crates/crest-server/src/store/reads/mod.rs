//! The read layer: every read at a resourceVersion (get, list, watch) is decided here: the
//! resourceVersion and resourceVersionMatch rules, paging and continue tokens, the choice between
//! the cache, its change history and storage, and the 410 Expired and 504 answers. The layers
//! above hand in typed options, a resource's key prefix and what they know of its schema; they
//! never reach the cache or the store themselves.

mod handle;
mod list;
mod schema;
mod watch;

pub(crate) use handle::{storage_error, Reads};
pub(crate) use list::{ListOptions, ListPage, ListedResource};
pub(crate) use schema::{read_stored, StoredSchema, StoredSchemas};
pub(crate) use watch::{WatchChanges, WatchStart, Woken};
