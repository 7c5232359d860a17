//! The one generic resource pipeline (kube-apiserver's generic registry `Store`), used by the HTTP
//! handlers and the controllers alike, for built-in and custom resources:
//!
//! decode (in `http`) -> prepare (system metadata, generation, strategy) -> validate ->
//! storage compare-and-swap -> served object. The writes are in `write.rs`: each one
//! read-modify-write through `Registry::guaranteed_update`.
//!
//! Reads are the read layer's ([`Reads`], `store/reads/`): from the [`Cache`] after it has
//! caught up with the store's current revision, so a client always reads its own writes; the
//! registry hands it a resource's key prefix and storage schema ([`Registry::get_at`],
//! [`Registry::list_at`], [`Registry::watch_at`]). The store and the cache are private: other
//! layers read through [`Registry::reads`].

pub(crate) mod builtin;
pub(crate) mod conversion;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod customresource;
pub(crate) mod customresourcedefinition;
pub(crate) mod deletion;
pub(crate) mod discovery;
pub(crate) mod options;
pub(crate) mod rbac;
pub(crate) mod resources;
mod served;
pub(crate) mod storagemigration;
pub(crate) mod strategy;
mod write;

use crate::store::cache::{self, Cache, CacheEvent, CachedObject, Snapshot};
use crate::store::feed::{Feed, FeedHealth, Publish};
use crate::store::keys::{CRD_PREFIX, NAMESPACE_PREFIX};
use crate::store::own_writes::Layout;
use crate::store::reads::{
    storage_error, ListOptions, ListPage, ListedResource, Reads, StoredSchema, WatchStart,
};
use bytes::Bytes;
use conversion::WebhookConverter;
use crest_api::validation::{
    finalizer_warnings, name_is_path_segment, validate_kube_finalizer_names, validate_object_meta,
    validate_object_meta_update,
};
use crest_api::FieldPath;
use crest_api::{meta, ApiError, FieldError, GroupResource};
use crest_storage::{Revision, Storage, StorageError, WriteOutcome};
use customresourcedefinition::CrdStrategy;
use resources::{ResourceDef, Resources};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use strategy::{spec_part, DeleteStep, Strategy};

pub(crate) struct Registry {
    /// The store, written through [`Watermarked`] (the revision of this server's own writes).
    storage: Arc<dyn Storage>,
    watermark: Arc<crate::store::watermark::Watermarked>,
    cache: Arc<Cache>,
    /// Every read at a resourceVersion, over `storage` and `cache`.
    reads: Reads,
    resources: RwLock<Arc<Resources>>,
    /// Whether the cache is being fed from storage (`/readyz`).
    pub feed: Arc<FeedHealth>,
    /// The conversion webhook caller (`webhook/`), handed over at startup.
    webhook: std::sync::OnceLock<Arc<dyn WebhookConverter>>,
    /// The cached RBAC objects indexed for authorization (kept current by the feed).
    pub rbac: Arc<crate::store::rbac::RbacCache>,
    /// Whether each namespace is being terminated, as last read from its cached object (by
    /// name: the object's mod_revision and the answer), so that a create does not read its
    /// namespace's JSON every time.
    terminating: std::sync::Mutex<std::collections::HashMap<String, (Revision, bool)>>,
}

/// Which part of an object an update may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UpdateMode {
    /// The main resource: everything but what the strategy protects (e.g. status).
    Main,
    /// `/status`: only `status`.
    Status,
    /// `namespaces/NAME/finalize`: only `spec.finalizers`.
    Finalize,
}

impl UpdateMode {
    pub(crate) fn from_subresource(sub: Option<&str>) -> Self {
        match sub {
            Some("status") => UpdateMode::Status,
            Some("finalize") => UpdateMode::Finalize,
            _ => UpdateMode::Main,
        }
    }
}

/// Options of one write.
#[derive(Debug, Default)]
pub(crate) struct WriteOptions {
    /// `dryRun=All`: every stage runs, nothing is persisted.
    pub dry_run: bool,
    /// Warnings the write produced (Warning headers of the response).
    pub warnings: std::sync::Mutex<Vec<String>>,
    /// DELETE: how dependents go (sets the orphan / foregroundDeletion finalizers).
    pub cascade: deletion::Cascade,
    /// The field manager the write is recorded for in `metadata.managedFields` (the
    /// request's `fieldManager`, or its User-Agent's product); `None` records nothing (the
    /// server's own writes).
    pub manager: Option<String>,
    /// The subresource the write is recorded under when it is not the update mode's own
    /// (`scale`: a /scale write changes the object as a main-resource update does).
    pub managed_subresource: Option<&'static str>,
    /// The requesting user, for the checks a strategy makes beyond the request's own
    /// authorization (RBAC's escalation prevention); `None` for the server's own writes.
    pub user: Option<Arc<crest_auth::cache::Authenticated>>,
    /// The object's namespace is created in the same batch (one commit: the server's own
    /// bootstrap): namespace lifecycle admission does not ask for it in the cache.
    pub namespace_in_batch: bool,
}

impl WriteOptions {
    /// The options of a write the server makes itself, recorded in managedFields for
    /// `manager` as upstream's components are (`kube-apiserver` for its own controllers,
    /// `kube-controller-manager` for the controllers kube-controller-manager runs).
    pub(crate) fn by(manager: &str) -> Self {
        let mut o = Self::new(false);
        o.manager = Some(manager.to_string());
        o
    }

    pub(crate) fn new(dry_run: bool) -> Self {
        WriteOptions {
            dry_run,
            warnings: Default::default(),
            cascade: Default::default(),
            manager: None,
            managed_subresource: None,
            user: None,
            namespace_in_batch: false,
        }
    }

    fn warn(&self, w: impl IntoIterator<Item = String>) {
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(w);
    }

    /// Takes the warnings collected so far.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// `DeleteOptions.preconditions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

/// A resource as a list reads it: its storage schema, and its objects served through the
/// registry.
struct Listed<'a> {
    registry: &'a Registry,
    def: &'a ResourceDef,
}

impl ListedResource for Listed<'_> {
    fn stored_schema(&self) -> Option<StoredSchema> {
        self.registry
            .resources()
            .stored_schema(&self.def.key_prefix)
            .cloned()
    }

    fn selects_served(&self) -> bool {
        self.def.webhook_conversion.is_some()
    }

    fn serve<'a>(
        &'a self,
        objects: &'a [Arc<CachedObject>],
    ) -> futures::future::BoxFuture<'a, Result<Vec<Bytes>, ApiError>> {
        Box::pin(self.registry.serve_many(self.def, objects))
    }
}

/// The feed publishes through the registry: the RBAC index follows every batch, the served
/// resources are rebuilt when a CRD changes, before the change becomes visible.
impl Publish for Registry {
    fn stored_schemas(&self) -> Arc<dyn crate::store::reads::StoredSchemas> {
        self.resources()
    }

    fn applied(&self, events: &[Arc<CacheEvent>], changed_crds: &[String]) {
        self.rbac.apply(events);
        if !changed_crds.is_empty() {
            self.rebuild_resources();
            // Objects of a changed CRD are read through its new schema from now on.
            self.normalize_stored(Some(changed_crds));
        }
    }

    fn resynced(&self) {
        self.rbac.rebuild(&self.cache);
        self.rebuild_resources();
        // Read through the storage version's schema before anyone sees them, as the feed
        // reads every object it applies.
        self.normalize_stored(None);
    }
}

/// The result of a delete: the object, and whether it is gone (false: finalization pending).
pub(crate) struct Deleted {
    pub object: Value,
    pub gone: bool,
}

fn to_bytes(obj: &Value) -> Result<Bytes, ApiError> {
    // Built-in kinds in Go's field order, anything else sorted (crest_codec::json).
    let mut v = crest_codec::json::to_vec(obj);
    // Bytes keeps the Vec's spare capacity; objects live long in the store's queue.
    v.shrink_to_fit();
    Ok(Bytes::from(v))
}

/// The stored form (no resourceVersion: it is removed from `obj`, the store's mod revision is
/// the resourceVersion) plus where in its top-level `metadata` the resourceVersion belongs, so
/// the served form can be made by splicing it in instead of encoding twice (the response, and
/// the cache's copy: `store::own_writes`). The bytes are what kube-apiserver's encoder writes:
/// a built-in kind in Go's field order, a custom resource sorted (`crest_codec::json`).
fn stored_bytes_with_metadata(obj: &mut Value) -> Result<(Bytes, Option<Layout>), ApiError> {
    meta::remove(obj, "resourceVersion");
    let mut out = Vec::with_capacity(2048);
    let slot = crest_codec::json::write_with_slot(&mut out, obj);
    out.shrink_to_fit();
    Ok((Bytes::from(out), slot))
}

/// Whether a namespace's JSON says it is being deleted (a string `metadata.deletionTimestamp`,
/// or `status.phase` "Terminating"), read without building its tree: every create in the
/// namespace asks. `None` when the document is not of the simple shape this reads (a field of
/// another type, a duplicate field, invalid JSON): the caller then parses it whole.
fn namespace_terminating(json: &[u8]) -> Option<bool> {
    use serde_json::value::RawValue;
    use std::borrow::Cow;
    #[derive(serde::Deserialize)]
    struct Namespace<'a> {
        #[serde(borrow)]
        metadata: Option<&'a RawValue>,
        #[serde(borrow)]
        status: Option<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, rename = "deletionTimestamp")]
        deletion_timestamp: Option<Cow<'a, str>>,
    }
    #[derive(serde::Deserialize)]
    struct Status<'a> {
        #[serde(borrow)]
        phase: Option<Cow<'a, str>>,
    }
    // Objects only: a derived struct would also read a JSON array.
    fn object<'a, T: serde::Deserialize<'a>>(raw: &'a str) -> Option<T> {
        raw.starts_with('{')
            .then(|| serde_json::from_str(raw).ok())
            .flatten()
    }
    if json.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let ns: Namespace<'_> = serde_json::from_slice(json).ok()?;
    let deleting = match ns.metadata {
        Some(m) => object::<Meta<'_>>(m.get())?.deletion_timestamp.is_some(),
        None => false,
    };
    let phase_terminating = match ns.status {
        Some(s) => object::<Status<'_>>(s.get())?.phase.as_deref() == Some("Terminating"),
        None => false,
    };
    Some(deleting || phase_terminating)
}

/// A written object as the client receives it.
/// What a PUT did: replaced the object, or (create on update) created it.
pub(crate) enum Written {
    Updated(Value),
    Created(Served),
}

pub(crate) enum Served {
    /// A tree (dry run, conversion, or an object without metadata).
    Tree(Value),
    /// JSON ready to send: the stored bytes with the resourceVersion spliced in.
    Json(Bytes),
}

impl Registry {
    pub(crate) fn new(storage: Arc<dyn Storage>, cache: Arc<Cache>) -> Arc<Self> {
        let crd_strategy: Arc<dyn Strategy> = Arc::new(CrdStrategy {
            cache: cache.clone(),
        });
        let resources = Resources::build(Arc::new(builtin::builtins(crd_strategy)), &[]);
        let watermark = crate::store::watermark::Watermarked::new(storage);
        Arc::new(Registry {
            reads: Reads::new(watermark.clone(), cache.clone()),
            storage: watermark.clone(),
            watermark,
            cache,
            resources: RwLock::new(Arc::new(resources)),
            feed: Default::default(),
            webhook: Default::default(),
            rbac: crate::store::rbac::RbacCache::new(),
            terminating: Default::default(),
        })
    }

    /// The cache feed of this registry's store and cache, publishing through the registry.
    pub(crate) fn cache_feed(self: &Arc<Self>) -> Feed {
        Feed {
            storage: self.storage.clone(),
            cache: self.cache.clone(),
            health: self.feed.clone(),
            publish: self.clone(),
        }
    }

    pub(crate) fn resources(&self) -> Arc<Resources> {
        self.resources
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Rebuilds the served resources from the CRDs in the cache (called by the cache feeder
    /// whenever a CRD changes, before the change becomes visible to readers).
    pub(crate) fn rebuild_resources(&self) {
        let previous = self.resources();
        // CRDs unchanged since the previous build are not decoded again (500 CRDs installed).
        let crds: Vec<Value> = self
            .cache
            .list(CRD_PREFIX)
            .objects
            .iter()
            .filter_map(|o| match o.key.strip_prefix(CRD_PREFIX) {
                Some(name) if previous.has_crd_at(name, o.mod_revision) => Some(serde_json::json!(
                    {"metadata": {"name": name, "resourceVersion": o.mod_revision.to_string()}}
                )),
                _ => o.value().ok(),
            })
            .collect();
        let built = Arc::new(previous.rebuild(&crds));
        *self.resources.write().unwrap_or_else(|p| p.into_inner()) = built;
    }

    /// Reads cached custom resources through their storage version's schema, as kube-apiserver
    /// does on every read from etcd (pruning and defaulting; not written back). Only objects the
    /// current schema may not have seen are visited: those of CRDs with several versions, and
    /// those written before the CRD last changed. `only`: restrict to these key prefixes.
    pub(crate) fn normalize_stored(&self, only: Option<&[String]>) {
        let resources = self.resources();
        for (prefix, stored) in resources.stored_schemas() {
            if !stored.normalizes() || only.is_some_and(|o| !o.contains(prefix)) {
                continue;
            }
            let objects = self.cache.list(prefix).objects;
            let changed: Vec<CachedObject> = objects
                .iter()
                .filter(|o| stored.multi_version || o.mod_revision < stored.crd_revision)
                .filter_map(|o| stored.normalize(o))
                .collect();
            if !changed.is_empty() {
                tracing::debug!(prefix, count = changed.len(), "normalized stored objects");
                self.cache.replace(changed);
            }
        }
    }

    /// Waits until the cache reflects every write acknowledged so far.
    pub(crate) async fn sync(&self) -> Result<(), ApiError> {
        self.reads.sync().await
    }

    /// The reads of this registry's store: the cache's current state, and reads at a
    /// resourceVersion.
    pub(crate) fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Runs `work` (writes issued together, e.g. the bootstrap objects) with the storage writes
    /// it issues on its first poll sent as one batch (`Storage::write_batch`: one commit and
    /// one sync on the embedded store); see `store::watermark::batched`.
    pub(crate) async fn batched<F: std::future::Future>(&self, work: F) -> F::Output {
        crate::store::watermark::batched(self.storage.as_ref(), work).await
    }

    /// GET of one object with resourceVersion `rv` (see [`Reads::get_at`]).
    pub(crate) async fn get_at(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        rv: &str,
    ) -> Result<Arc<CachedObject>, ApiError> {
        self.reads
            .get_at(&def.key(ns, name), rv)
            .await?
            .ok_or_else(|| ApiError::not_found(&def.api.group_resource(), name))
    }

    /// LIST of one resource with its list options (see [`Reads::list`]): the served items.
    pub(crate) async fn list_at(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        options: &ListOptions<'_>,
        filter: &crest_selectors::ListFilter,
    ) -> Result<ListPage, ApiError> {
        let listed = Listed {
            registry: self,
            def,
        };
        self.reads
            .list(&def.list_prefix(ns), options, filter, &listed)
            .await
    }

    /// Where a watch of one resource from resourceVersion `rv` starts (see [`Reads::watch`]).
    pub(crate) async fn watch_at(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        rv: &str,
        send_initial: Option<bool>,
    ) -> Result<WatchStart, ApiError> {
        let stored = self.resources().stored_schema(&def.key_prefix).cloned();
        self.reads
            .watch(def.list_prefix(ns), stored, rv, send_initial)
            .await
    }

    /// Deletes the stored `key` if it is still at `revision`, bypassing the resource pipeline
    /// (an Event whose time to live passed, as etcd's lease expiry).
    pub(crate) async fn expire_stored(
        &self,
        key: &str,
        revision: Revision,
    ) -> Result<WriteOutcome, StorageError> {
        self.storage.delete(key, revision).await
    }

    /// Closes the store (shutdown): writes and watches end.
    pub(crate) async fn close_storage(&self) {
        self.storage.close().await
    }

    /// Waits until the cache reflects every write this server acknowledged so far, without
    /// asking the store (for etcd a round trip). Enough for a create, which is a
    /// create-if-absent in storage whatever the cache holds: like kube-apiserver's admission
    /// informers, it may not have seen the newest writes of other replicas (a namespace a
    /// create does not find is looked up again after a full [`Registry::sync`]).
    pub(crate) async fn sync_own(&self) -> Result<(), ApiError> {
        self.cache.wait_for(self.watermark.written()).await
    }

    /// The current definition of a resource looked up before [`Registry::sync`]: a write
    /// right after a CRD change (a new storage version, schema) goes by the changed CRD.
    fn fresh(&self, def: &ResourceDef) -> Option<Arc<ResourceDef>> {
        def.crd_name.as_ref()?;
        let a = &def.api;
        self.resources().lookup(&a.group, &a.version, &a.plural)
    }

    /// Looks a resource up, catching up with recent writes first when it is not (yet) known, so a
    /// request right after a CRD create finds the new resource.
    pub(crate) async fn lookup(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<Option<Arc<ResourceDef>>, ApiError> {
        if let Some(d) = self.resources().lookup(group, version, plural) {
            return Ok(Some(d));
        }
        self.sync().await?;
        Ok(self.resources().lookup(group, version, plural))
    }

    /// Hands the registry the conversion webhook caller (set once, at startup).
    pub(crate) fn set_webhook_converter(&self, w: Arc<dyn WebhookConverter>) {
        let _ = self.webhook.set(w);
    }

    pub(crate) async fn list(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
    ) -> Result<Snapshot, ApiError> {
        self.reads.list_latest(&def.list_prefix(ns)).await
    }

    /// Rewrites a stored object in its resource's storage version (a storage version migration
    /// step): converted and normalized as a write through `def` would store it, written only
    /// when that changes the stored bytes, conditioned on the revision read (`false`: a
    /// concurrent write got there first, and stored the object in the current version itself).
    pub(crate) async fn rewrite_in_storage_version(
        &self,
        def: &ResourceDef,
        obj: &CachedObject,
    ) -> Result<bool, ApiError> {
        let mut v = obj.value()?;
        let before = v.clone();
        self.in_storage_version(def, &mut v).await?;
        if v == before {
            return Ok(true);
        }
        let (bytes, _) = stored_bytes_with_metadata(&mut v)?;
        match self
            .storage
            .update(&obj.key, obj.mod_revision, bytes)
            .await
            .map_err(storage_error)?
        {
            WriteOutcome::Done(_) => Ok(true),
            WriteOutcome::Conflict(_) => Ok(false),
        }
    }
}

/// The name and namespace in a body must match the URL.
pub(crate) fn check_identity(
    def: &ResourceDef,
    ns: Option<&str>,
    name: &str,
    obj: &Value,
) -> Result<(), ApiError> {
    let body_name = meta::name(obj);
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    check_namespace(def, ns, obj)
}

pub(crate) fn check_namespace(
    def: &ResourceDef,
    ns: Option<&str>,
    obj: &Value,
) -> Result<(), ApiError> {
    let body_ns = meta::namespace(obj);
    if def.api.namespaced && !body_ns.is_empty() && Some(body_ns) != ns {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn namespace_terminating_reads_as_the_full_parse_does() {
        let full = |doc: &str| {
            let v: Value = serde_json::from_str(doc).unwrap();
            meta::deletion_timestamp(&v).is_some()
                || v.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
        };
        for doc in [
            r#"{"metadata":{"name":"default","annotations":{"a":"b"}},"status":{"phase":"Active"}}"#,
            r#"{"metadata":{"name":"x","deletionTimestamp":"2024-01-01T00:00:00Z"}}"#,
            r#"{"metadata":{"deletionTimestamp":""},"spec":{"finalizers":["kubernetes"]}}"#,
            r#"{"metadata":{"deletionTimestamp":null},"status":{"phase":"Terminating"}}"#,
            r#"{"metadata":null,"status":null}"#,
            r#"{"status":{"phase":"Termin\u0061ting"}}"#,
            r#"{}"#,
        ] {
            assert_eq!(
                namespace_terminating(doc.as_bytes()),
                Some(full(doc)),
                "{doc}"
            );
        }
        // Shapes the fast path leaves to the full parse.
        for doc in [
            r#"{"metadata":{"deletionTimestamp":1}}"#,
            r#"{"metadata":["2024-01-01T00:00:00Z"]}"#,
            r#"{"status":["Terminating"]}"#,
            r#"{"status":{"phase":"Active"},"status":{"phase":"Terminating"}}"#,
            r#"["x"]"#,
            "not json",
        ] {
            assert_eq!(namespace_terminating(doc.as_bytes()), None, "{doc}");
        }
    }

    #[test]
    fn stored_bytes_are_in_the_served_order_and_splice_into_metadata() {
        for obj in [
            json!({"kind": "X", "metadata": {"name": "a", "resourceVersion": "3"}, "spec": {"x": "\"q\""}}),
            json!({"apiVersion": "v1", "metadata": {}, "z": [1, 2.5, null]}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"},
                "metadata": {"name": "a", "namespace": "n", "uid": "u", "resourceVersion": "3",
                    "creationTimestamp": "2024-01-01T00:00:00Z"}}),
        ] {
            let mut o = obj.clone();
            let (bytes, md) = stored_bytes_with_metadata(&mut o).expect("encode");
            assert_eq!(bytes.as_ref(), crest_codec::json::to_vec(&o).as_slice());
            let l = md.expect("metadata");
            let spliced = cache::splice_resource_version(&bytes, l, 42).expect("spliced");
            let mut with_rv = o.clone();
            meta::set(&mut with_rv, "resourceVersion", "42");
            assert_eq!(spliced, crest_codec::json::to_vec(&with_rv));
            let served: Value = serde_json::from_slice(&spliced).expect("served json");
            // What the feed makes of this write's event from the layout, without reading it.
            let fed = CachedObject::from_stored_with("/registry/x".into(), &bytes, md, 1, 42);
            assert_eq!(fed.json.as_ref(), spliced.as_slice());
            let mut expected = o.clone();
            meta::set(&mut expected, "resourceVersion", "42");
            assert_eq!(served, expected);
        }
        let (_, md) = stored_bytes_with_metadata(&mut json!({"metadata": 1})).expect("encode");
        assert!(md.is_none());
    }
}
