//! Below the registry: the in-memory view every read is served from, and the storage key
//! layout. Nothing here knows about HTTP or strategies.

pub(crate) mod cache;
pub(crate) mod feed;
pub(crate) mod keys;
pub(crate) mod own_writes;
pub(crate) mod rbac;
pub(crate) mod reads;
pub(crate) mod watermark;
// The crate's one use of `unsafe`: cached bytes on the C allocator (SAFETY comments inside).
#[allow(unsafe_code)]
mod longlived;
