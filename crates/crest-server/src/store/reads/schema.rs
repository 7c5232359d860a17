//! The storage schema of a custom resource, which objects read from storage are read through.

use crate::store::cache::CachedObject;
use crate::store::own_writes::Layout;
use crest_apiextensions::customresource::CrSchema;
use std::collections::HashMap;
use std::sync::Arc;

/// The schemas objects of one custom resource are read through from storage.
#[derive(Clone)]
pub(crate) struct StoredSchema {
    /// The storage version's: what objects written now are stored in.
    pub schema: Arc<CrSchema>,
    /// Every version's in `spec.versions` (served or not), by apiVersion (`group/version`):
    /// an object stored in an older version is read through that version's schema, as
    /// upstream's decoder coerces and defaults an object in the version it names.
    pub versions: Arc<HashMap<String, Arc<CrSchema>>>,
    /// Objects may have been written through another version, with another schema.
    pub multi_version: bool,
    /// The CRD's resourceVersion: objects written after it were normalized by this schema
    /// when they were written (for a single-version CRD).
    pub crd_revision: i64,
}

impl StoredSchema {
    /// Whether reading through these schemas may change an object (some version's prunes or
    /// defaults).
    pub(crate) fn normalizes(&self) -> bool {
        self.schema.normalizes() || self.versions.values().any(|s| s.normalizes())
    }

    /// The schema `obj` is read through: its own version's (the storage version's when that
    /// is not known).
    pub(crate) fn schema_of(&self, obj: &CachedObject) -> &CrSchema {
        obj.api_version()
            .and_then(|v| self.versions.get(v.as_ref()))
            .unwrap_or(&self.schema)
    }

    /// `obj` as read through its version's schema; `None` when that changes nothing.
    pub(crate) fn normalize(&self, obj: &CachedObject) -> Option<CachedObject> {
        let schema = self.schema_of(obj);
        if !schema.normalizes() {
            return None;
        }
        obj.normalized(schema)
    }
}

/// The storage schemas of the served resources, by stored key (the registry's served set).
pub(crate) trait StoredSchemas: Send + Sync {
    /// The storage schema for a stored key (`/registry/<group>/<plural>/...`).
    fn stored_schema(&self, key: &str) -> Option<&StoredSchema>;
}

/// A stored key-value as the cache holds it: served bytes, read through the schema of the
/// version it was stored in when the object may have been written through another version
/// (`stored` is its resource's). `layout`: where the bytes' metadata starts, when this process
/// wrote them.
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
        Some(ss) if ss.multi_version => ss.normalize(&o).unwrap_or(o),
        _ => o,
    }
}
