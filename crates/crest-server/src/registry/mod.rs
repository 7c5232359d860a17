//! The one generic resource pipeline (kube-apiserver's generic registry `Store`), used by the HTTP
//! handlers and the controllers alike, for built-in and custom resources:
//!
//! decode (in `http`) -> prepare (system metadata, generation, strategy) -> validate ->
//! storage compare-and-swap -> served object.
//!
//! Reads come from the [`Cache`] after it has caught up with the store's current revision, so a
//! client always reads its own writes.

pub(crate) mod builtin;
pub(crate) mod conversion;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod customresource;
pub(crate) mod customresourcedefinition;
pub(crate) mod deletion;
pub(crate) mod discovery;
pub(crate) mod feed;
pub(crate) mod list;
pub(crate) mod options;
pub(crate) mod rbac;
pub(crate) mod resources;
pub(crate) mod storagemigration;
pub(crate) mod strategy;

use crate::store::cache::{self, Cache, CachedObject, Snapshot};
use crate::store::keys::{CRD_PREFIX, NAMESPACE_PREFIX};
use bytes::Bytes;
use conversion::WebhookConverter;
use crest_api::field::FieldPath;
use crest_api::validation::{
    finalizer_warnings, name_is_path_segment, validate_kube_finalizer_names, validate_object_meta,
    validate_object_meta_update,
};
use crest_api::{meta, ApiError, FieldError, GroupResource};
use crest_storage::{Storage, StorageError, WriteOutcome};
use customresourcedefinition::CrdStrategy;
use resources::{ResourceDef, Resources};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use strategy::{spec_part, DeleteStep, Strategy};

/// How many times a patch or generateName create is retried on a write race.
const MAX_RETRIES: usize = 8;

pub(crate) struct Registry {
    /// The store, written through [`Watermarked`] (the revision of this server's own writes).
    pub storage: Arc<dyn Storage>,
    watermark: Arc<crate::store::watermark::Watermarked>,
    pub cache: Arc<Cache>,
    resources: RwLock<Arc<Resources>>,
    crd_strategy: Arc<dyn Strategy>,
    /// Whether the cache is being fed from storage (`/readyz`).
    pub feed: feed::FeedHealth,
    /// The conversion webhook caller (`webhook/`), handed over at startup.
    webhook: std::sync::OnceLock<Arc<dyn WebhookConverter>>,
    /// The cached RBAC objects indexed for authorization (kept current by the feed).
    pub rbac: Arc<crate::store::rbac::RbacCache>,
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

/// The result of a delete: the object, and whether it is gone (false: finalization pending).
pub(crate) struct Deleted {
    pub object: Value,
    pub gone: bool,
}

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

fn to_bytes(obj: &Value) -> Result<Bytes, ApiError> {
    serde_json::to_vec(obj)
        .map(|mut v| {
            // Bytes keeps the Vec's spare capacity; objects live long in the store's queue.
            v.shrink_to_fit();
            Bytes::from(v)
        })
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// The stored form: no resourceVersion (the store's mod revision is the resourceVersion).
/// Removes the resourceVersion in place (callers set the new one after the write).
fn stored_bytes(obj: &mut Value) -> Result<Bytes, ApiError> {
    meta::remove(obj, "resourceVersion");
    to_bytes(obj)
}

/// A `None` conversion that only changes `apiVersion` (the served version's schema neither
/// prunes nor defaults), done on the stored bytes: they start with the storage version's
/// `apiVersion` (serde_json writes keys in order), which is replaced, without parsing the
/// object. `None` when that does not apply (the object was stored in another version).
fn apiversion_only(def: &ResourceDef, json: &[u8]) -> Option<Bytes> {
    if def.crd_name.is_none() || def.webhook_conversion.is_some() {
        return None;
    }
    if def.cr_schema.as_deref().is_some_and(|s| s.normalizes()) {
        return None;
    }
    let stored = format!("{{\"apiVersion\":\"{}\"", def.storage_api_version);
    let rest = json.strip_prefix(stored.as_bytes())?;
    let served = format!("{{\"apiVersion\":\"{}\"", def.api.api_version());
    let mut out = Vec::with_capacity(served.len() + rest.len());
    out.extend_from_slice(served.as_bytes());
    out.extend_from_slice(rest);
    Some(Bytes::from(out))
}

/// The stored form plus where its top-level `metadata` object starts and whether it is empty,
/// so the served form can be made by splicing in the resourceVersion instead of encoding twice.
/// The bytes equal `serde_json::to_vec` of the same object (maps are key-ordered either way).
fn stored_bytes_with_metadata(obj: &mut Value) -> Result<(Bytes, Option<(usize, bool)>), ApiError> {
    meta::remove(obj, "resourceVersion");
    let Some(map) = obj.as_object() else {
        return Ok((to_bytes(obj)?, None));
    };
    let enc = |e: serde_json::Error| ApiError::internal(e.to_string());
    let mut out = Vec::with_capacity(2048);
    let mut metadata = None;
    out.push(b'{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, k).map_err(enc)?;
        out.push(b':');
        if k == "metadata" {
            if let Some(m) = v.as_object() {
                metadata = Some((out.len(), m.is_empty()));
            }
        }
        serde_json::to_writer(&mut out, v).map_err(enc)?;
    }
    out.push(b'}');
    out.shrink_to_fit();
    Ok((Bytes::from(out), metadata))
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
        let resources = Resources::build(&[], crd_strategy.clone());
        let watermark = crate::store::watermark::Watermarked::new(storage);
        Arc::new(Registry {
            storage: watermark.clone(),
            watermark,
            cache,
            resources: RwLock::new(Arc::new(resources)),
            crd_strategy,
            feed: Default::default(),
            webhook: Default::default(),
            rbac: crate::store::rbac::RbacCache::new(),
        })
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
        let built = Arc::new(previous.rebuild(&crds, self.crd_strategy.clone()));
        *self.resources.write().unwrap_or_else(|p| p.into_inner()) = built;
    }

    /// Reads cached custom resources through their storage version's schema, as kube-apiserver
    /// does on every read from etcd (pruning and defaulting; not written back). Only objects the
    /// current schema may not have seen are visited: those of CRDs with several versions, and
    /// those written before the CRD last changed. `only`: restrict to these key prefixes.
    pub(crate) fn normalize_stored(&self, only: Option<&[String]>) {
        let resources = self.resources();
        for (prefix, stored) in resources.stored_schemas() {
            if !stored.schema.normalizes() || only.is_some_and(|o| !o.contains(prefix)) {
                continue;
            }
            let objects = self.cache.list(prefix).objects;
            let changed: Vec<CachedObject> = objects
                .iter()
                .filter(|o| stored.multi_version || o.mod_revision < stored.crd_revision)
                .filter_map(|o| o.normalized(&stored.schema))
                .collect();
            if !changed.is_empty() {
                tracing::debug!(prefix, count = changed.len(), "normalized stored objects");
                self.cache.replace(changed);
            }
        }
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

    /// Converts a cached object to the served version (custom resources may be stored in another
    /// version); returns the cached bytes untouched when nothing changes.
    pub(crate) fn serve(&self, def: &ResourceDef, obj: &CachedObject) -> Result<Bytes, ApiError> {
        if !def.converts() {
            return Ok(obj.json.clone());
        }
        if let Some(b) = apiversion_only(def, &obj.json) {
            return Ok(b);
        }
        let v = self.convert(def, obj.value()?);
        to_bytes(&v)
    }

    /// The served-version object of a stored one (custom resources' `None` conversion: only
    /// apiVersion changes).
    pub(crate) fn convert(&self, def: &ResourceDef, mut v: Value) -> Value {
        if !def.converts() {
            return v;
        }
        if let Some(c) = &def.conversion {
            return c.to_served(v);
        }
        if let Some(o) = v.as_object_mut() {
            o.insert("apiVersion".into(), def.api.api_version().into());
        }
        // The served version's schema prunes and defaults what it reads (apiextensions'
        // schema-coercing converter and defaulting of the decoded version).
        self.normalize_served(def, &mut v);
        v
    }

    /// Hands the registry the conversion webhook caller (set once, at startup).
    pub(crate) fn set_webhook_converter(&self, w: Arc<dyn WebhookConverter>) {
        let _ = self.webhook.set(w);
    }

    /// Converts `objects` to `desired` through `def`'s conversion webhook (one review; `list`:
    /// the objects are a list's items). Failures are 500s worded as upstream's.
    async fn call_webhook(
        &self,
        def: &ResourceDef,
        objects: &mut [Value],
        desired: &str,
        list: bool,
    ) -> Result<(), ApiError> {
        let (Some(conversion), Some(w)) = (&def.webhook_conversion, self.webhook.get()) else {
            return Err(ApiError::internal("no conversion webhook client"));
        };
        let input = match (list, objects.first()) {
            (false, Some(o)) => crest_apiextensions::conversion::gvk_string(
                o.get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                o.get("kind").and_then(Value::as_str).unwrap_or_default(),
            ),
            _ => crest_apiextensions::conversion::gvk_string(
                &def.storage_api_version,
                &def.api.list_kind,
            ),
        };
        w.convert(conversion, objects, desired, &input, list)
            .await
            .map_err(ApiError::unknown)
    }

    /// The served-version object, through the conversion webhook when the CRD has one.
    pub(crate) async fn convert_async(
        &self,
        def: &ResourceDef,
        v: Value,
    ) -> Result<Value, ApiError> {
        if def.webhook_conversion.is_none() {
            return Ok(self.convert(def, v));
        }
        let mut v = self
            .webhook_convert_one(def, v, &def.api.api_version())
            .await?;
        self.normalize_served(def, &mut v);
        Ok(v)
    }

    /// One object through `def`'s conversion webhook to `desired`.
    async fn webhook_convert_one(
        &self,
        def: &ResourceDef,
        v: Value,
        desired: &str,
    ) -> Result<Value, ApiError> {
        let mut one = [v];
        self.call_webhook(def, &mut one, desired, false).await?;
        let [v] = one;
        Ok(v)
    }

    /// The served version's schema prunes and defaults what it reads.
    fn normalize_served(&self, def: &ResourceDef, v: &mut Value) {
        if let Some(schema) = def.cr_schema.as_deref().filter(|s| s.normalizes()) {
            schema.decode_stored(v);
        }
    }

    /// [`Registry::serve`], through the conversion webhook when the CRD has one.
    pub(crate) async fn serve_async(
        &self,
        def: &ResourceDef,
        obj: &CachedObject,
    ) -> Result<Bytes, ApiError> {
        if def.webhook_conversion.is_none() {
            return self.serve(def, obj);
        }
        let v = self.convert_async(def, obj.value()?).await?;
        to_bytes(&v)
    }

    /// The served bytes of a list's objects: through the conversion webhook in one review
    /// when the CRD has one (upstream converts a list, not its items one by one).
    pub(crate) async fn serve_many(
        &self,
        def: &ResourceDef,
        objs: &[Arc<CachedObject>],
    ) -> Result<Vec<Bytes>, ApiError> {
        if def.webhook_conversion.is_none() {
            return objs.iter().map(|o| self.serve(def, o)).collect();
        }
        let mut values = objs
            .iter()
            .map(|o| o.value())
            .collect::<Result<Vec<_>, _>>()?;
        self.call_webhook(def, &mut values, &def.api.api_version(), true)
            .await?;
        values
            .iter_mut()
            .map(|v| {
                self.normalize_served(def, v);
                to_bytes(v)
            })
            .collect()
    }

    pub(crate) async fn list(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
    ) -> Result<Snapshot, ApiError> {
        self.sync().await?;
        Ok(self.cache.list(&def.list_prefix(ns)))
    }

    /// Namespace lifecycle admission: namespaced objects need an existing, non-terminating namespace.
    fn admit_namespace(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
    ) -> Result<(), ApiError> {
        if !def.api.namespaced {
            return Ok(());
        }
        let ns = ns.unwrap_or_default();
        let Some(nsobj) = self.cache.get(&format!("{NAMESPACE_PREFIX}{ns}")) else {
            return Err(ApiError::not_found(
                &GroupResource::new("", "namespaces"),
                ns,
            ));
        };
        let terminating = match namespace_terminating(&nsobj.json) {
            Some(t) => t,
            None => {
                let v = nsobj.value()?;
                meta::deletion_timestamp(&v).is_some()
                    || v.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
            }
        };
        if terminating {
            return Err(ApiError::forbidden(
                &def.api.group_resource(),
                name,
                &format!(
                    "unable to create new content in namespace {ns} because it is being terminated"
                ),
            )
            .with_namespace_terminating(ns));
        }
        Ok(())
    }

    /// Create: assigns system metadata, validates, stores if absent.
    pub(crate) async fn create(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Served, ApiError> {
        self.sync_own().await?;
        if def.api.namespaced
            && self
                .cache
                .get(&format!("{NAMESPACE_PREFIX}{}", ns.unwrap_or_default()))
                .is_none()
        {
            // Perhaps created through another replica just now.
            self.sync().await?;
        }
        let fresh = self.fresh(def);
        let def = fresh.as_deref().unwrap_or(def);
        let gr = def.api.group_resource();
        if def.terminating {
            let mut e = ApiError::method_not_supported(&gr, "create");
            e.message = "create not allowed while custom resource definition is terminating".into();
            return Err(e);
        }
        self.admit_namespace(def, ns, meta::name(&obj))?;
        opts.warn(dedup_owner_references(&mut obj, false));
        def.strategy.defaults(&mut obj);
        self.authorize_write(def, ns, "", &obj, None, opts)?;
        // A built-in kind is compared against its Go zero value, a custom resource against
        // nothing.
        let zero = def.managed().and_then(|m| m.zero.as_ref());
        record_update(def, zero, &mut obj, "", opts);
        let strategy = def.strategy.as_ref();
        if let Some(m) = meta::meta_mut(&mut obj) {
            for f in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
                "selfLink",
                "generation",
            ] {
                m.remove(f);
            }
            if let Some(ns) = ns.filter(|_| def.api.namespaced) {
                m.insert("namespace".into(), ns.into());
            }
            m.insert("uid".into(), meta::new_uid().into());
            m.insert("creationTimestamp".into(), meta::now_rfc3339().into());
        }
        if strategy.uses_generation() {
            meta::set(&mut obj, "generation", 1);
        }
        if def.conversion.is_some() {
            // A built-in kind is prepared and validated in its internal (stored) form.
            self.to_storage_version(def, &mut obj).await?;
        }
        let begun = strategy.begin_create(&mut obj);
        if !begun.is_empty() {
            // Upstream's BeginCreate runs after the name is generated.
            let mut name = meta::name(&obj).to_string();
            if name.is_empty() {
                name = format!(
                    "{}{}",
                    meta::meta_str(&obj, "generateName"),
                    meta::random_suffix()
                );
            }
            return Err(ApiError::invalid(&def.api.group_kind(), &name, &begun));
        }
        strategy.prepare_create(&mut obj);

        if strategy.warns_finalizer_names() {
            if let Some(m) = meta::meta(&obj) {
                opts.warn(finalizer_warnings(m, None));
            }
        }
        let generate =
            meta::name(&obj).is_empty() && !meta::meta_str(&obj, "generateName").is_empty();
        let attempts = if generate { MAX_RETRIES } else { 1 };
        for _ in 0..attempts {
            if generate {
                let name = format!(
                    "{}{}",
                    meta::meta_str(&obj, "generateName"),
                    meta::random_suffix()
                );
                meta::set(&mut obj, "name", name);
            }
            let name = meta::name(&obj).to_string();
            let mut errs = validate_metadata(def, &obj);
            if strategy.kube_finalizer_names() {
                errs.extend(kube_finalizer_errors(&obj));
            }
            let mut warnings = vec![];
            errs.extend(strategy.validate_create(&obj, &mut warnings));
            if !errs.is_empty() {
                return Err(ApiError::invalid(&def.api.group_kind(), &name, &errs));
            }
            strategy.canonicalize(&mut obj);
            opts.warn(warnings);
            let key = def.key(ns, &name);
            // Validated in the request's version, stored in the storage version.
            let source = if generate {
                obj.clone()
            } else {
                std::mem::take(&mut obj)
            };
            let mut obj = self.storage_form(def, source).await?;
            if opts.dry_run {
                if self.cache.get(&key).is_some() {
                    return Err(ApiError::already_exists(&gr, &name));
                }
                return Ok(Served::Tree(self.convert_async(def, obj).await?));
            }
            let (stored, metadata) = stored_bytes_with_metadata(&mut obj)?;
            match self
                .storage
                .create(&key, stored.clone())
                .await
                .map_err(storage_error)?
            {
                WriteOutcome::Done(kv) => {
                    if let (Some((start, empty)), false) = (metadata, def.converts()) {
                        let served =
                            cache::splice_resource_version(&stored, start, empty, kv.mod_revision);
                        return Ok(Served::Json(Bytes::from(served)));
                    }
                    meta::set(&mut obj, "resourceVersion", kv.mod_revision.to_string());
                    return Ok(Served::Tree(self.convert_async(def, obj).await?));
                }
                WriteOutcome::Conflict(_) if generate => continue,
                WriteOutcome::Conflict(_) => return Err(ApiError::already_exists(&gr, &name)),
            }
        }
        Err(ApiError::already_exists(&gr, meta::name(&obj)))
    }

    /// The strategy's checks of a client's write beyond the request's authorization
    /// ([`Strategy::authorize_write`]); the server's own writes skip them.
    fn authorize_write(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        request_name: &str,
        new: &Value,
        old: Option<&Value>,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        let Some(user) = &opts.user else {
            return Ok(());
        };
        let ctx = strategy::WriteAuthz {
            user: &user.user,
            rbac: &self.rbac,
            namespace: ns.unwrap_or_default(),
            request_name,
        };
        def.strategy.authorize_write(&ctx, new, old)
    }

    async fn to_storage_version(&self, def: &ResourceDef, obj: &mut Value) -> Result<(), ApiError> {
        if !def.converts() {
            return Ok(());
        }
        if let Some(c) = &def.conversion {
            *obj = c.to_stored(std::mem::take(obj));
            return Ok(());
        }
        self.custom_to_storage(def, obj).await
    }

    /// A custom resource in the storage version: through the CRD's webhook, or (`None`) with
    /// the storage apiVersion; then pruned and defaulted by the storage version's schema.
    async fn custom_to_storage(&self, def: &ResourceDef, obj: &mut Value) -> Result<(), ApiError> {
        if def.webhook_conversion.is_some() {
            let storage = def.storage_api_version.clone();
            *obj = self
                .webhook_convert_one(def, std::mem::take(obj), &storage)
                .await?;
        } else if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), def.storage_api_version.clone().into());
        }
        if let Some(ss) = self.resources().stored_schema(&def.key_prefix) {
            if ss.schema.normalizes() {
                ss.schema.decode_stored(obj);
            }
        }
        Ok(())
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
        let stored_version = v
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if def.crd_name.is_some() && stored_version != def.storage_api_version {
            self.custom_to_storage(def, &mut v).await?;
        }
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

    /// Update (PUT): replaces the object, conditioned on its resourceVersion. A resource whose
    /// strategy allows create on update (`AllowCreateOnUpdate`) creates a missing object
    /// instead (its resourceVersion ignored, as upstream's create through GuaranteedUpdate).
    pub(crate) async fn update(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        obj: Value,
        mode: UpdateMode,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        self.sync().await?;
        let fresh = self.fresh(def);
        let def = fresh.as_deref().unwrap_or(def);
        if mode == UpdateMode::Main
            && def.strategy.allow_create_on_update()
            && self.cache.get(&def.key(ns, name)).is_none()
        {
            return self.create(def, ns, obj, opts).await.map(Written::Created);
        }
        self.replace(def, ns, name, obj, mode, opts)
            .await
            .map(Written::Updated)
    }

    async fn replace(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        obj: Value,
        mode: UpdateMode,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let mut obj = obj;
        opts.warn(dedup_owner_references(&mut obj, false));
        self.update_inner(def, ns, name, obj, mode, opts, false)
            .await
            .map_err(|e| match e {
                Attempt::Failed(e) => e,
                // Not produced without `from_patch`; a lost race of a PUT is a stale write.
                Attempt::Raced => ApiError::stale(&def.api.group_resource(), name),
            })
    }

    /// The shared update path. `from_patch`: the resourceVersion came from the stored object, so
    /// a conflict is the server's race and is reported for a retry.
    #[allow(clippy::too_many_arguments)]
    async fn update_inner(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        mut obj: Value,
        mode: UpdateMode,
        opts: &WriteOptions,
        from_patch: bool,
    ) -> Result<Value, Attempt> {
        let gr = def.api.group_resource();
        let key = def.key(ns, name);
        let Some(current) = self.cache.get(&key) else {
            return Err(Attempt::Failed(ApiError::not_found(&gr, name)));
        };
        // A custom resource's update is prepared and validated in the request's version (the
        // stored object converted to it) and converted to the storage version only to be
        // written; a built-in kind's in its internal (stored) form, as upstream decodes it.
        let old = if let Some(c) = &def.conversion {
            // The field manager sees the write in the request's version, as upstream's does.
            if mode == UpdateMode::Main && opts.manager.is_some() {
                let old_served = c.to_served(current.value()?);
                def.strategy.defaults(&mut obj);
                record_update(def, Some(&old_served), &mut obj, "", opts);
            }
            self.to_storage_version(def, &mut obj)
                .await
                .map_err(Attempt::Failed)?;
            current.value()?
        } else {
            self.convert_async(def, current.value()?)
                .await
                .map_err(Attempt::Failed)?
        };
        let rv = meta::resource_version(&obj).to_string();
        if rv.is_empty() {
            if !def.strategy.allow_unconditional_update() {
                let errs = [FieldError::invalid_repr(
                    &FieldPath::new("metadata").child("resourceVersion"),
                    "0x0",
                    "must be specified for an update",
                )];
                return Err(Attempt::Failed(ApiError::invalid(
                    &crest_api::GroupKind::new(&gr.group, &gr.resource),
                    name,
                    &errs,
                )));
            }
        } else if rv.parse::<i64>().ok() != Some(current.mod_revision) {
            if rv.parse::<i64>().is_err() {
                return Err(Attempt::Failed(ApiError::bad_request(format!(
                    "invalid resource version: {rv:?}"
                ))));
            }
            // A patch read the object at an earlier revision than the cache now holds: another
            // write got in between, the server's race, retried like a lost compare-and-swap.
            if from_patch {
                return Err(Attempt::Raced);
            }
            return Err(Attempt::Failed(ApiError::stale(&gr, name)));
        }
        let strategy = def.strategy.as_ref();
        // A subresource write takes only its part from the request; the rest stays as stored.
        match mode {
            UpdateMode::Main => {}
            UpdateMode::Status => {
                // Everything but status comes from the stored object; managedFields are the
                // request's (the field manager's record of this write) unless it sent none.
                let mut merged = old.clone();
                if let Some(o) = merged.as_object_mut() {
                    match obj.get("status") {
                        Some(s) => o.insert("status".into(), s.clone()),
                        None => o.remove("status"),
                    };
                }
                let managed = obj
                    .pointer("/metadata/managedFields")
                    .filter(|m| m.as_array().is_some_and(|a| !a.is_empty()));
                if let Some(m) = managed {
                    meta::set(&mut merged, "managedFields", m.clone());
                }
                obj = merged;
            }
            UpdateMode::Finalize => {
                let mut merged = old.clone();
                let fins = obj
                    .pointer("/spec/finalizers")
                    .cloned()
                    .unwrap_or(Value::Array(vec![]));
                if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.insert("finalizers".into(), fins);
                }
                obj = merged;
            }
        }
        restore_system_metadata(&mut obj, &old);
        let subresource = match mode {
            UpdateMode::Main => "",
            UpdateMode::Status => "status",
            UpdateMode::Finalize => "finalize",
        };
        if def.conversion.is_none() {
            if mode != UpdateMode::Finalize {
                strategy.defaults(&mut obj);
            }
            record_update(def, Some(&old), &mut obj, subresource, opts);
        }
        match mode {
            UpdateMode::Main => {
                self.authorize_write(def, ns, name, &obj, Some(&old), opts)
                    .map_err(Attempt::Failed)?;
                let begun = strategy.begin_update(&mut obj, &old);
                if !begun.is_empty() {
                    return Err(Attempt::Failed(ApiError::invalid(
                        &def.api.group_kind(),
                        name,
                        &begun,
                    )));
                }
                strategy.prepare_update(&mut obj, &old)
            }
            UpdateMode::Status => strategy.prepare_status_update(&mut obj, &old),
            UpdateMode::Finalize => {}
        }
        if strategy.uses_generation() {
            let skip_status = strategy.status_subresource();
            let gen = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let labels = |o: &Value| o.pointer("/metadata/labels").cloned();
            let changed = spec_part(&obj, skip_status) != spec_part(&old, skip_status)
                || (strategy.generation_counts_labels() && labels(&obj) != labels(&old));
            meta::set(
                &mut obj,
                "generation",
                if changed { gen + 1 } else { gen.max(1) },
            );
        }
        let mut warnings = vec![];
        let errs = validate_update(def, &obj, &old, mode, &mut warnings);
        if !errs.is_empty() {
            return Err(Attempt::Failed(ApiError::invalid(
                &def.api.group_kind(),
                name,
                &errs,
            )));
        }
        strategy.canonicalize(&mut obj);
        // Ratcheted rule failures: the write goes ahead with Warning headers.
        opts.warn(warnings);
        if strategy.warns_finalizer_names() {
            if let (Some(n), Some(o)) = (meta::meta(&obj), meta::meta(&old)) {
                opts.warn(finalizer_warnings(n, Some(o)));
            }
        }
        // A deleting object left without finalizers is deleted by the update (upstream's
        // ShouldDeleteDuringUpdate); the answer is the updated object, as the client sent it.
        if should_delete_during_update(strategy, &obj, &old) {
            meta::set(
                &mut obj,
                "resourceVersion",
                current.mod_revision.to_string(),
            );
            if opts.dry_run {
                return self.convert_async(def, obj).await.map_err(Attempt::Failed);
            }
            return match self
                .storage
                .delete(&key, current.mod_revision)
                .await
                .map_err(storage_error)?
            {
                WriteOutcome::Done(_) => {
                    self.convert_async(def, obj).await.map_err(Attempt::Failed)
                }
                WriteOutcome::Conflict(_) => Err(conflict_error(&gr, name, from_patch)),
            };
        }
        // `old` is not needed after this comparison: no copy for it.
        let mut old = old;
        meta::remove(&mut old, "resourceVersion");
        if obj == old || opts.dry_run {
            // Nothing changed: like kube-apiserver, no write and the resourceVersion stays.
            meta::set(
                &mut obj,
                "resourceVersion",
                current.mod_revision.to_string(),
            );
            return self.convert_async(def, obj).await.map_err(Attempt::Failed);
        }
        let mut stored = self.storage_form(def, obj).await.map_err(Attempt::Failed)?;
        match self
            .storage
            .update(&key, current.mod_revision, stored_bytes(&mut stored)?)
            .await
            .map_err(storage_error)?
        {
            WriteOutcome::Done(kv) => {
                meta::set(&mut stored, "resourceVersion", kv.mod_revision.to_string());
                self.convert_async(def, stored)
                    .await
                    .map_err(Attempt::Failed)
            }
            WriteOutcome::Conflict(_) => Err(conflict_error(&gr, name, from_patch)),
        }
    }

    /// A custom resource as it is stored: converted to the storage version when `def` is
    /// served in another (as the storage layer's encoding does upstream). Built-in kinds were
    /// converted when decoded.
    async fn storage_form(&self, def: &ResourceDef, mut obj: Value) -> Result<Value, ApiError> {
        if def.conversion.is_none() {
            self.to_storage_version(def, &mut obj).await?;
        }
        Ok(obj)
    }

    /// Patch: applies `patch_fn` to the current served object and updates, retrying when another
    /// write raced (unless the patch itself pinned a resourceVersion).
    pub(crate) async fn patch<F>(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        mode: UpdateMode,
        opts: &WriteOptions,
        patch_fn: F,
    ) -> Result<Value, ApiError>
    where
        F: Fn(&Value) -> Result<Value, ApiError>,
    {
        self.sync().await?;
        let fresh = self.fresh(def);
        let def = fresh.as_deref().unwrap_or(def);
        let gr = def.api.group_resource();
        for _ in 0..MAX_RETRIES {
            let Some(current) = self.cache.get(&def.key(ns, name)) else {
                return Err(ApiError::not_found(&gr, name));
            };
            let current_v = self.convert_async(def, current.value()?).await?;
            let mut patched = patch_fn(&current_v)?;
            if !patched.is_object() {
                return Err(ApiError::bad_request(
                    "the patched object is not a JSON object",
                ));
            }
            let pinned = meta::resource_version(&patched).to_string();
            let from_patch = pinned.is_empty() || pinned == current.mod_revision.to_string();
            if pinned.is_empty() {
                meta::set(
                    &mut patched,
                    "resourceVersion",
                    current.mod_revision.to_string(),
                );
            }
            check_identity(def, ns, name, &patched)?;
            // A patch is deduplicated after (mutating) admission only, and says so.
            let dedup = dedup_owner_references(&mut patched, true);
            match self
                .update_inner(def, ns, name, patched, mode, opts, from_patch)
                .await
            {
                Err(Attempt::Raced) => {
                    // The attempt's warnings go with it.
                    opts.take_warnings();
                    self.sync().await?;
                    continue;
                }
                Ok(v) => {
                    opts.warn(dedup);
                    return Ok(v);
                }
                Err(Attempt::Failed(e)) => {
                    opts.warn(dedup);
                    return Err(e);
                }
            }
        }
        Err(ApiError::stale(&gr, name))
    }

    /// Reads, changes and writes an object, retrying on races (controllers' updates, recorded
    /// in managedFields for `manager`).
    pub(crate) async fn update_with<F>(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        mode: UpdateMode,
        manager: &str,
        f: F,
    ) -> Result<Value, ApiError>
    where
        F: Fn(&mut Value),
    {
        self.patch(def, ns, name, mode, &WriteOptions::by(manager), |cur| {
            let mut v = cur.clone();
            f(&mut v);
            Ok(v)
        })
        .await
    }

    /// Delete, as kube-apiserver's registry does: preconditions are checked, then the strategy
    /// decides (an object with finalizers is marked for deletion and stays, any other is
    /// removed), delete admission runs, and the change is written (a dry run writes nothing and
    /// answers with what would have been).
    pub(crate) async fn delete(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        pre: &Preconditions,
        opts: &WriteOptions,
    ) -> Result<Deleted, ApiError> {
        self.sync().await?;
        let gr = def.api.group_resource();
        let key = def.key(ns, name);
        let strategy = def.strategy.as_ref();
        for _ in 0..MAX_RETRIES {
            let Some(current) = self.cache.get(&key) else {
                return Err(ApiError::not_found(&gr, name));
            };
            let stored = current.value()?;
            check_preconditions(def, name, &stored, current.mod_revision, pre)?;
            let mut obj = stored.clone();
            // The orphan / foregroundDeletion finalizers first: they keep the object (marked
            // for deletion) until the garbage collector has handled its dependents.
            if strategy.garbage_collection_policy_supported() {
                deletion::apply_deletion_finalizers(&mut obj, opts.cascade);
            }
            match strategy.delete_step(&mut obj) {
                DeleteStep::Unchanged => {
                    return Ok(Deleted {
                        object: self.convert_async(def, obj).await?,
                        gone: false,
                    });
                }
                DeleteStep::Mark => {
                    strategy.admit_delete(&gr, name)?;
                    if obj == stored || opts.dry_run {
                        // No change (already marked) writes nothing, as a no-op update.
                        return Ok(Deleted {
                            object: self.convert_async(def, obj).await?,
                            gone: false,
                        });
                    }
                    match self
                        .storage
                        .update(&key, current.mod_revision, stored_bytes(&mut obj)?)
                        .await
                        .map_err(storage_error)?
                    {
                        WriteOutcome::Done(kv) => {
                            meta::set(&mut obj, "resourceVersion", kv.mod_revision.to_string());
                            return Ok(Deleted {
                                object: self.convert_async(def, obj).await?,
                                gone: false,
                            });
                        }
                        WriteOutcome::Conflict(_) => {
                            self.sync().await?;
                            continue;
                        }
                    }
                }
                DeleteStep::Remove => {
                    strategy.admit_delete(&gr, name)?;
                    let obj = self.convert_async(def, stored).await?;
                    if opts.dry_run {
                        return Ok(Deleted {
                            object: obj,
                            gone: true,
                        });
                    }
                    match self
                        .storage
                        .delete(&key, current.mod_revision)
                        .await
                        .map_err(storage_error)?
                    {
                        WriteOutcome::Done(_) => {
                            return Ok(Deleted {
                                object: obj,
                                gone: true,
                            })
                        }
                        WriteOutcome::Conflict(None) => return Err(ApiError::not_found(&gr, name)),
                        WriteOutcome::Conflict(Some(_)) => {
                            self.sync().await?;
                            continue;
                        }
                    }
                }
            }
        }
        Err(ApiError::stale(&gr, name))
    }

    /// Deletes every object of `def` in `ns` (all namespaces for `None`) that `filter` selects
    /// (it sees the stored object), each as a DELETE with the same options would (objects gone
    /// meanwhile are skipped). Returns the objects as listed before the deletes, and the list's
    /// revision, as upstream answers.
    pub(crate) async fn delete_collection<F>(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        pre: &Preconditions,
        opts: &WriteOptions,
        filter: F,
    ) -> Result<(Vec<Value>, i64), ApiError>
    where
        F: Fn(&Value) -> bool,
    {
        let snap = self.list(def, ns).await?;
        let mut listed = vec![];
        for o in &snap.objects {
            // Selected on the stored object, as lists and watches select; for a CRD converting
            // by webhook, on the object in the version asked for.
            let stored = o.value()?;
            if def.webhook_conversion.is_some() {
                let served = self.convert_async(def, stored).await?;
                if filter(&served) {
                    listed.push(served);
                }
            } else if filter(&stored) {
                listed.push(self.convert_async(def, stored).await?);
            }
        }
        for v in &listed {
            let name = meta::name(v);
            let ons = def.api.namespaced.then(|| meta::namespace(v));
            match self.delete(def, ons, name, pre, opts).await {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok((listed, snap.revision))
    }
}

/// `DeleteOptions.preconditions` against the stored object, worded as the resource's REST
/// Delete words a mismatch: the generic store names the kind (`CronTab.stable.example.com`), the
/// namespace and CRD Deletes their resource.
fn check_preconditions(
    def: &ResourceDef,
    name: &str,
    obj: &Value,
    revision: i64,
    pre: &Preconditions,
) -> Result<(), ApiError> {
    let custom = def.strategy.custom_delete_preconditions();
    let gr = if custom {
        def.api.group_resource()
    } else {
        GroupResource::new(&def.api.group, &def.api.kind)
    };
    let uid = meta::uid(obj);
    if let Some(want) = pre.uid.as_deref().filter(|u| *u != uid) {
        let detail = if custom {
            format!("Precondition failed: UID in precondition: {want}, UID in object meta: {uid}")
        } else {
            format!("the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated")
        };
        return Err(ApiError::conflict(&gr, name, &detail));
    }
    let rv = revision.to_string();
    if let Some(want) = pre.resource_version.as_deref().filter(|r| *r != rv) {
        let detail = if custom {
            format!("Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}")
        } else {
            format!("the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified")
        };
        return Err(ApiError::conflict(&gr, name, &detail));
    }
    Ok(())
}

/// Why one update attempt did not happen.
#[derive(Debug)]
enum Attempt {
    /// A patch lost a race with another write after reading the object itself: read it again
    /// and retry (the client never sees this).
    Raced,
    /// The update failed; the client gets this error.
    Failed(ApiError),
}

impl From<ApiError> for Attempt {
    fn from(e: ApiError) -> Self {
        Attempt::Failed(e)
    }
}

fn conflict_error(gr: &GroupResource, name: &str, from_patch: bool) -> Attempt {
    if from_patch {
        Attempt::Raced
    } else {
        Attempt::Failed(ApiError::stale(gr, name))
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

fn validate_metadata(def: &ResourceDef, obj: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("metadata");
    match obj.get("metadata").and_then(Value::as_object) {
        Some(m) => {
            let mut errs =
                validate_object_meta(m, def.api.namespaced, def.strategy.name_validator(), &path);
            errs.extend(managed_fields_errors(m, &path));
            errs
        }
        None => vec![FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        )],
    }
}

/// Update validation in upstream's order: the common ObjectMeta checks (`validateCommonFields`:
/// ObjectMeta as on create, names as path segments, then the update rules), then the strategy's,
/// which for every resource Crest serves starts with the ObjectMeta update rules again (so their
/// causes appear twice, as upstream's do; the message lists them once).
fn validate_update(
    def: &ResourceDef,
    new: &Value,
    old: &Value,
    mode: UpdateMode,
    warnings: &mut Vec<String>,
) -> Vec<FieldError> {
    let path = FieldPath::new("metadata");
    let empty = serde_json::Map::new();
    let new_meta = meta::meta(new).unwrap_or(&empty);
    let old_meta = meta::meta(old).unwrap_or(&empty);
    let mut errs = validate_object_meta(new_meta, def.api.namespaced, name_is_path_segment, &path);
    errs.extend(managed_fields_errors(new_meta, &path));
    let update_errs = validate_object_meta_update(new_meta, old_meta, &path);
    errs.extend(update_errs.iter().cloned());
    errs.extend(update_errs);
    if def.strategy.kube_finalizer_names() {
        errs.extend(kube_finalizer_errors(new));
    }
    errs.extend(match mode {
        UpdateMode::Status => def.strategy.validate_status_update(new, old, warnings),
        _ => def.strategy.validate_update(new, old, warnings),
    });
    errs
}

/// `ValidateManagedFields`, part of upstream's ObjectMeta validation (client-sent entries the
/// field manager kept: manager names, operations, fieldsType, subresources).
fn managed_fields_errors(
    meta: &serde_json::Map<String, Value>,
    path: &FieldPath,
) -> Vec<FieldError> {
    match meta.get("managedFields") {
        Some(m) => {
            crest_managedfields::managed::validate_managed_fields(m, &path.child("managedFields"))
        }
        None => Vec::new(),
    }
}

/// Drops owner references equal to an earlier one (same uid and all else), as the API server
/// does for creates, updates and patches, and returns the warning it answers with.
fn dedup_owner_references(obj: &mut Value, after_admission: bool) -> Option<String> {
    let refs = obj
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)?;
    // Upstream compares whole entries (after a uid check, which entries sharing one uid
    // defeat); a set of the entries (serde_json's Value hashes as it compares) makes that one
    // lookup per entry, so 30,000 references cost milliseconds, not minutes.
    let mut keep: Vec<bool> = Vec::with_capacity(refs.len());
    let mut duplicates: Vec<String> = vec![];
    let mut seen: HashSet<&Value> = HashSet::with_capacity(refs.len());
    for r in refs.iter() {
        let first = seen.insert(r);
        if !first {
            duplicates.push(
                r.get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            );
        }
        keep.push(first);
    }
    drop(seen);
    let mut keep = keep.into_iter();
    refs.retain(|_| keep.next().unwrap_or(true));
    if duplicates.is_empty() {
        return None;
    }
    let after = if after_admission {
        " after mutating admission happens"
    } else {
        ""
    };
    Some(format!(
        ".metadata.ownerReferences contains duplicate entries{after}; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}",
        duplicates.join(", ")
    ))
}

/// `ShouldDeleteDuringUpdate`: the new object has no finalizers left (for namespaces, no
/// `spec.finalizers` either), and the stored one is being deleted with no grace period pending.
fn should_delete_during_update(strategy: &dyn Strategy, new: &Value, old: &Value) -> bool {
    let grace = old
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    meta::deletion_timestamp(old).is_some() && grace == 0 && strategy.finalized(new)
}

fn kube_finalizer_errors(obj: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("metadata").child("finalizers");
    meta::meta(obj)
        .map(|m| validate_kube_finalizer_names(m, &path))
        .unwrap_or_default()
}

/// What an update takes from the stored object whatever the client sent (`BeforeUpdate`): the
/// creation timestamp, generation (the strategy bumps it), namespace, a deletion timestamp once
/// set, and uid and the deletion grace period when the client left them out. A client's different
/// uid or deletion fields are then refused as immutable.
fn restore_system_metadata(obj: &mut Value, old: &Value) {
    let old_meta = old.get("metadata").and_then(Value::as_object);
    let get = |f: &str| old_meta.and_then(|m| m.get(f)).filter(|v| !v.is_null());
    let Some(m) = meta::meta_mut(obj) else {
        return;
    };
    for f in ["creationTimestamp", "generation", "namespace"] {
        match get(f) {
            Some(v) => {
                m.insert(f.into(), v.clone());
            }
            None => {
                m.remove(f);
            }
        }
    }
    let missing = |m: &serde_json::Map<String, Value>, f: &str| match m.get(f) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if missing(m, "uid") {
        match get("uid") {
            Some(v) => m.insert("uid".into(), v.clone()),
            None => m.remove("uid"),
        };
    }
    if let Some(ts) = get("deletionTimestamp") {
        m.insert("deletionTimestamp".into(), ts.clone());
    } else if missing(m, "deletionTimestamp") {
        m.remove("deletionTimestamp");
    }
    if missing(m, "deletionGracePeriodSeconds") {
        match get("deletionGracePeriodSeconds") {
            Some(v) => m.insert("deletionGracePeriodSeconds".into(), v.clone()),
            None => m.remove("deletionGracePeriodSeconds"),
        };
    }
    m.remove("resourceVersion");
}

trait NamespaceTerminating {
    fn with_namespace_terminating(self, ns: &str) -> Self;
}

impl NamespaceTerminating for ApiError {
    /// kube-apiserver adds a NamespaceTerminating cause to this Forbidden error.
    fn with_namespace_terminating(mut self, ns: &str) -> Self {
        if let Some(d) = self.details.as_mut() {
            d.insert(
                "causes".into(),
                serde_json::json!([{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]),
            );
        }
        self
    }
}

/// Records a write (create: no `live`) in `new`'s `metadata.managedFields` as an Update by the
/// request's manager (upstream's `FieldManager.UpdateNoErrors`, run by the handlers before
/// the strategy): nothing for the server's own writes or a resource without a merge schema.
fn record_update(
    def: &ResourceDef,
    live: Option<&Value>,
    new: &mut Value,
    subresource: &str,
    opts: &WriteOptions,
) {
    let (Some(manager), Some(m)) = (opts.manager.as_deref(), def.managed()) else {
        return;
    };
    let subresource = opts.managed_subresource.unwrap_or(subresource);
    let fm = crest_managedfields::FieldManager {
        schema: &m.schema,
        api_version: &m.api_version,
        kind: &def.api.kind,
        subresource,
        reset_fields: m.reset_fields(subresource),
    };
    fm.update(live, new, manager, &meta::now_rfc3339());
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
    fn owner_references_dedup_keeps_the_first_of_equal_entries() {
        let r = |name: &str, uid: &str| json!({"apiVersion": "v1", "kind": "K", "name": name, "uid": uid});
        let mut o = json!({"metadata": {"ownerReferences": [
            r("a", "1"), r("b", "1"), r("a", "1"), r("c", "2"), r("b", "1"),
            // Not equal to the first: the same reference with a flag set.
            {"apiVersion": "v1", "kind": "K", "name": "a", "uid": "1", "controller": false},
        ]}});
        let warning = dedup_owner_references(&mut o, false);
        assert_eq!(
            o["metadata"]["ownerReferences"],
            json!([r("a", "1"), r("b", "1"), r("c", "2"),
                {"apiVersion": "v1", "kind": "K", "name": "a", "uid": "1", "controller": false}])
        );
        assert_eq!(
            warning.as_deref(),
            Some(".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: 1, 1")
        );
        let mut o = json!({"metadata": {"ownerReferences": [r("a", "1")]}});
        assert_eq!(dedup_owner_references(&mut o, true), None);
    }

    #[test]
    fn stored_bytes_match_serde_and_splice_into_metadata() {
        for obj in [
            json!({"kind": "X", "metadata": {"name": "a", "resourceVersion": "3"}, "spec": {"x": "\"q\""}}),
            json!({"apiVersion": "v1", "metadata": {}, "z": [1, 2.5, null]}),
        ] {
            let mut o = obj.clone();
            let (bytes, md) = stored_bytes_with_metadata(&mut o).expect("encode");
            assert_eq!(
                bytes.as_ref(),
                serde_json::to_vec(&o).expect("json").as_slice()
            );
            let (start, empty) = md.expect("metadata");
            let served: Value =
                serde_json::from_slice(&cache::splice_resource_version(&bytes, start, empty, 42))
                    .expect("served json");
            let mut expected = o.clone();
            meta::set(&mut expected, "resourceVersion", "42");
            assert_eq!(served, expected);
        }
        let (_, md) = stored_bytes_with_metadata(&mut json!({"metadata": 1})).expect("encode");
        assert!(md.is_none());
    }
}
