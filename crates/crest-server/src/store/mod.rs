//! Below the registry: the in-memory view every read is served from, and the storage key
//! layout. Nothing here knows about HTTP or strategies.

pub(crate) mod cache;
pub(crate) mod keys;
mod longlived;
