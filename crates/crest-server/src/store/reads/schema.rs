//! The storage schema of a custom resource, which objects read from storage are read through.

use crate::store::cache::CachedObject;
use crate::store::own_writes::Layout;
use crest_apiextensions::customresource::CrSchema;
use std::sync::Arc;

/// The schema objects of one custom resource are stored under.
#[derive(Clone)]
pub(crate) struct StoredSchema {
    pub schema: Arc<CrSchema>,
    /// Objects may have been written through another version, with another schema.
    pub multi_version: bool,
    /// The CRD's resourceVersion: objects written after it were normalized by this schema
    /// when they were written (for a single-version CRD).
    pub crd_revision: i64,
}

/// The storage schemas of the served resources, by stored key (the registry's served set).
pub(crate) trait StoredSchemas: Send + Sync {
    /// The storage schema for a stored key (`/registry/<group>/<plural>/...`).
    fn stored_schema(&self, key: &str) -> Option<&StoredSchema>;
}

/// A stored key-value as the cache holds it: served bytes, read as the storage version when
/// the object may have been written through another version (`stored` is its resource's).
/// `layout`: where the bytes' metadata starts, when this process wrote them.
pub(crate) fn read_stored(
    kv: &crest_storage::KeyValue,
    stored: Option<&StoredSchema>,
    layout: Option<Layout>,
) -> CachedObject {
    let o = CachedObject::from_stored_with(
        kv.key.clone(),
        &kv.value,
        layout,
        kv.create_revision,
        kv.mod_revision,
    );
    match stored {
        Some(ss) if ss.multi_version && ss.schema.normalizes() => {
            o.normalized(&ss.schema).unwrap_or(o)
        }
        _ => o,
    }
}
