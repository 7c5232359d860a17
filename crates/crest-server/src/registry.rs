//! The one generic resource pipeline (kube-apiserver's generic registry `Store`), used by the HTTP
//! handlers and the controllers alike, for built-in and custom resources:
//!
//! decode (in `http`) -> prepare (system metadata, generation, strategy) -> validate ->
//! storage compare-and-swap -> served object.
//!
//! Reads come from the [`Cache`] after it has caught up with the store's current revision, so a
//! client always reads its own writes.

use crate::cache::{Cache, CachedObject, Snapshot};
use crate::resources::{ResourceDef, Resources, CRD_PREFIX, NAMESPACE_PREFIX};
use crate::strategy::{spec_part, CrdStrategy, Strategy};
use bytes::Bytes;
use crest_api::field::FieldPath;
use crest_api::validation::validate_object_meta;
use crest_api::{meta, ApiError, FieldError, GroupResource};
use crest_storage::{Storage, StorageError, WriteOutcome};
use serde_json::Value;
use std::sync::{Arc, RwLock};

/// How many times a patch or generateName create is retried on a write race.
const MAX_RETRIES: usize = 8;

pub struct Registry {
    pub storage: Arc<dyn Storage>,
    pub cache: Arc<Cache>,
    resources: RwLock<Arc<Resources>>,
    crd_strategy: Arc<dyn Strategy>,
}

/// Which part of an object an update may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateMode {
    /// The main resource: everything but what the strategy protects (e.g. status).
    Main,
    /// `/status`: only `status`.
    Status,
    /// `namespaces/NAME/finalize`: only `spec.finalizers`.
    Finalize,
}

impl UpdateMode {
    pub fn from_subresource(sub: Option<&str>) -> Self {
        match sub {
            Some("status") => UpdateMode::Status,
            Some("finalize") => UpdateMode::Finalize,
            _ => UpdateMode::Main,
        }
    }
}

/// Options of one write.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    pub dry_run: bool,
}

/// `DeleteOptions.preconditions`.
#[derive(Clone, Debug, Default)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

/// The result of a delete: the object, and whether it is gone (false: finalization pending).
pub struct Deleted {
    pub object: Value,
    pub gone: bool,
}

pub fn storage_error(e: StorageError) -> ApiError {
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
        StorageError::Backend(m) => ApiError::internal(m),
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

/// A written object as the client receives it.
pub enum Served {
    /// A tree (dry run, conversion, or an object without metadata).
    Tree(Value),
    /// JSON ready to send: the stored bytes with the resourceVersion spliced in.
    Json(Bytes),
}

impl Served {
    pub fn into_value(self) -> Result<Value, ApiError> {
        match self {
            Served::Tree(v) => Ok(v),
            Served::Json(b) => {
                serde_json::from_slice(&b).map_err(|e| ApiError::internal(e.to_string()))
            }
        }
    }
}

impl Registry {
    pub fn new(storage: Arc<dyn Storage>, cache: Arc<Cache>) -> Arc<Self> {
        let crd_strategy: Arc<dyn Strategy> = Arc::new(CrdStrategy {
            cache: cache.clone(),
        });
        let resources = Resources::build(&[], crd_strategy.clone());
        Arc::new(Registry {
            storage,
            cache,
            resources: RwLock::new(Arc::new(resources)),
            crd_strategy,
        })
    }

    pub fn resources(&self) -> Arc<Resources> {
        self.resources
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Rebuilds the served resources from the CRDs in the cache (called by the cache feeder
    /// whenever a CRD changes, before the change becomes visible to readers).
    pub fn rebuild_resources(&self) {
        let crds: Vec<Value> = self
            .cache
            .list(CRD_PREFIX)
            .objects
            .iter()
            .filter_map(|o| o.value().ok())
            .collect();
        let built = Arc::new(Resources::build(&crds, self.crd_strategy.clone()));
        *self.resources.write().unwrap_or_else(|p| p.into_inner()) = built;
    }

    /// Reads cached custom resources through their storage version's schema, as kube-apiserver
    /// does on every read from etcd (pruning and defaulting; not written back). Only objects the
    /// current schema may not have seen are visited: those of CRDs with several versions, and
    /// those written before the CRD last changed. `only`: restrict to these key prefixes.
    pub fn normalize_stored(&self, only: Option<&[String]>) {
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
    pub async fn sync(&self) -> Result<(), ApiError> {
        self.cache.wait_for(self.storage.current_revision()).await
    }

    /// Looks a resource up, catching up with recent writes first when it is not (yet) known, so a
    /// request right after a CRD create finds the new resource.
    pub async fn lookup(
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
    pub fn serve(&self, def: &ResourceDef, obj: &CachedObject) -> Result<Bytes, ApiError> {
        if def.crd_name.is_none() || def.storage_api_version == def.api.api_version() {
            return Ok(obj.json.clone());
        }
        let v = self.convert(def, obj.value()?);
        to_bytes(&v)
    }

    /// The served-version object (`None` conversion: only apiVersion changes).
    pub fn convert(&self, def: &ResourceDef, mut v: Value) -> Value {
        if def.crd_name.is_some() {
            if let Some(o) = v.as_object_mut() {
                o.insert("apiVersion".into(), def.api.api_version().into());
            }
        }
        v
    }

    pub async fn get(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
    ) -> Result<Arc<CachedObject>, ApiError> {
        self.sync().await?;
        self.cache
            .get(&def.key(ns, name))
            .ok_or_else(|| ApiError::not_found(&def.api.group_resource(), name))
    }

    pub async fn list(&self, def: &ResourceDef, ns: Option<&str>) -> Result<Snapshot, ApiError> {
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
        let v = nsobj.value()?;
        if meta::deletion_timestamp(&v).is_some()
            || v.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
        {
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
    pub async fn create(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Served, ApiError> {
        self.sync().await?;
        let gr = def.api.group_resource();
        if def.terminating {
            let mut e = ApiError::method_not_supported(&gr, "create");
            e.message = "create not allowed while custom resource definition is terminating".into();
            return Err(e);
        }
        self.admit_namespace(def, ns, meta::name(&obj))?;
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
        self.to_storage_version(def, &mut obj);
        strategy.prepare_create(&mut obj);

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
            errs.extend(strategy.validate_create(&obj));
            if !errs.is_empty() {
                return Err(ApiError::invalid(&def.api.group_kind(), &name, &errs));
            }
            let key = def.key(ns, &name);
            if opts.dry_run {
                if self.cache.get(&key).is_some() {
                    return Err(ApiError::already_exists(&gr, &name));
                }
                return Ok(Served::Tree(self.convert(def, obj)));
            }
            let (stored, metadata) = stored_bytes_with_metadata(&mut obj)?;
            match self
                .storage
                .create(&key, stored.clone())
                .await
                .map_err(storage_error)?
            {
                WriteOutcome::Done(kv) => {
                    let unconverted =
                        def.crd_name.is_none() || def.storage_api_version == def.api.api_version();
                    if let (Some((start, empty)), true) = (metadata, unconverted) {
                        let served = crate::cache::splice_resource_version(
                            &stored,
                            start,
                            empty,
                            kv.mod_revision,
                        );
                        return Ok(Served::Json(Bytes::from(served)));
                    }
                    meta::set(&mut obj, "resourceVersion", kv.mod_revision.to_string());
                    return Ok(Served::Tree(self.convert(def, obj)));
                }
                WriteOutcome::Conflict(_) if generate => continue,
                WriteOutcome::Conflict(_) => return Err(ApiError::already_exists(&gr, &name)),
            }
        }
        Err(ApiError::already_exists(&gr, meta::name(&obj)))
    }

    fn to_storage_version(&self, def: &ResourceDef, obj: &mut Value) {
        if def.crd_name.is_some() {
            if let Some(o) = obj.as_object_mut() {
                o.insert("apiVersion".into(), def.storage_api_version.clone().into());
            }
        }
    }

    /// Update (PUT): replaces the object, conditioned on its resourceVersion.
    pub async fn update(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        obj: Value,
        mode: UpdateMode,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.sync().await?;
        self.update_inner(def, ns, name, obj, mode, opts, false)
            .await
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
    ) -> Result<Value, ApiError> {
        let gr = def.api.group_resource();
        let key = def.key(ns, name);
        let Some(current) = self.cache.get(&key) else {
            return Err(ApiError::not_found(&gr, name));
        };
        let old = current.value()?;
        let rv = meta::resource_version(&obj).to_string();
        if rv.is_empty() {
            if !def.strategy.allow_unconditional_update() {
                let errs = [FieldError::invalid_repr(
                    &FieldPath::new("metadata").child("resourceVersion"),
                    "0x0",
                    "must be specified for an update",
                )];
                return Err(ApiError::invalid(
                    &crest_api::GroupKind::new(&gr.group, &gr.resource),
                    name,
                    &errs,
                ));
            }
        } else if rv.parse::<i64>().ok() != Some(current.mod_revision) {
            if rv.parse::<i64>().is_err() {
                return Err(ApiError::bad_request(format!(
                    "invalid resource version: {rv:?}"
                )));
            }
            return Err(ApiError::stale(&gr, name));
        }
        self.to_storage_version(def, &mut obj);
        let strategy = def.strategy.as_ref();
        // A subresource write takes only its part from the request; the rest stays as stored.
        match mode {
            UpdateMode::Main => {}
            UpdateMode::Status => {
                let mut merged = old.clone();
                if let Some(o) = merged.as_object_mut() {
                    match obj.get("status") {
                        Some(s) => o.insert("status".into(), s.clone()),
                        None => o.remove("status"),
                    };
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
        // System metadata is the server's, whatever the client sent.
        if let Some(m) = meta::meta_mut(&mut obj) {
            for f in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "namespace",
            ] {
                match old.get("metadata").and_then(|om| om.get(f)) {
                    Some(v) => {
                        m.insert(f.into(), v.clone());
                    }
                    None => {
                        m.remove(f);
                    }
                }
            }
            m.remove("resourceVersion");
        }
        if mode == UpdateMode::Main {
            strategy.prepare_update(&mut obj, &old);
        }
        if strategy.uses_generation() {
            let skip_status = strategy.status_subresource();
            let gen = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let changed = spec_part(&obj, skip_status) != spec_part(&old, skip_status);
            meta::set(
                &mut obj,
                "generation",
                if changed { gen + 1 } else { gen.max(1) },
            );
        }
        let mut errs = validate_metadata(def, &obj);
        errs.extend(validate_finalizer_update(&obj, &old));
        errs.extend(strategy.validate_update(&obj, &old));
        if !errs.is_empty() {
            return Err(ApiError::invalid(&def.api.group_kind(), name, &errs));
        }
        // A deleting object whose last finalizer was just removed is deleted now.
        if meta::deletion_timestamp(&obj).is_some() && strategy.finalized(&obj) {
            if opts.dry_run {
                return Ok(self.convert(def, obj));
            }
            return match self
                .storage
                .delete(&key, current.mod_revision)
                .await
                .map_err(storage_error)?
            {
                WriteOutcome::Done(_) => {
                    meta::set(
                        &mut obj,
                        "resourceVersion",
                        current.mod_revision.to_string(),
                    );
                    Ok(self.convert(def, obj))
                }
                WriteOutcome::Conflict(_) => Err(conflict_error(&gr, name, from_patch)),
            };
        }
        let mut old_cmp = old.clone();
        meta::remove(&mut old_cmp, "resourceVersion");
        if obj == old_cmp || opts.dry_run {
            // Nothing changed: like kube-apiserver, no write and the resourceVersion stays.
            meta::set(
                &mut obj,
                "resourceVersion",
                current.mod_revision.to_string(),
            );
            return Ok(self.convert(def, obj));
        }
        match self
            .storage
            .update(&key, current.mod_revision, stored_bytes(&mut obj)?)
            .await
            .map_err(storage_error)?
        {
            WriteOutcome::Done(kv) => {
                meta::set(&mut obj, "resourceVersion", kv.mod_revision.to_string());
                Ok(self.convert(def, obj))
            }
            WriteOutcome::Conflict(_) => Err(conflict_error(&gr, name, from_patch)),
        }
    }

    /// Patch: applies `patch_fn` to the current served object and updates, retrying when another
    /// write raced (unless the patch itself pinned a resourceVersion).
    pub async fn patch<F>(
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
        let gr = def.api.group_resource();
        for _ in 0..MAX_RETRIES {
            let Some(current) = self.cache.get(&def.key(ns, name)) else {
                return Err(ApiError::not_found(&gr, name));
            };
            let current_v = self.convert(def, current.value()?);
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
            match self
                .update_inner(def, ns, name, patched, mode, opts, from_patch)
                .await
            {
                Err(e) if e.code == 409 && e.message == RETRY_MARKER => {
                    self.sync().await?;
                    continue;
                }
                other => return other,
            }
        }
        Err(ApiError::stale(&gr, name))
    }

    /// Reads, changes and writes an object, retrying on races (controllers' updates).
    pub async fn update_with<F>(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        mode: UpdateMode,
        f: F,
    ) -> Result<Value, ApiError>
    where
        F: Fn(&mut Value),
    {
        self.patch(def, ns, name, mode, &WriteOptions::default(), |cur| {
            let mut v = cur.clone();
            f(&mut v);
            Ok(v)
        })
        .await
    }

    /// Delete: graceful (finalizers pending) or immediate.
    pub async fn delete(
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
        for _ in 0..MAX_RETRIES {
            let Some(current) = self.cache.get(&key) else {
                return Err(ApiError::not_found(&gr, name));
            };
            let mut obj = current.value()?;
            if let Some(uid) = &pre.uid {
                if uid != meta::uid(&obj) {
                    return Err(ApiError::conflict(
                        &gr,
                        name,
                        &format!(
                            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                            meta::uid(&obj)
                        ),
                    ));
                }
            }
            if let Some(rv) = &pre.resource_version {
                if *rv != current.mod_revision.to_string() {
                    return Err(ApiError::conflict(
                        &gr,
                        name,
                        &format!(
                            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                            current.mod_revision
                        ),
                    ));
                }
            }
            let already_deleting = meta::deletion_timestamp(&obj).is_some();
            let before = obj.clone();
            let keep = def.strategy.begin_delete(&mut obj);
            if keep {
                if already_deleting && obj == before || opts.dry_run {
                    return Ok(Deleted {
                        object: self.convert(def, obj),
                        gone: false,
                    });
                }
                meta::remove(&mut obj, "resourceVersion");
                match self
                    .storage
                    .update(&key, current.mod_revision, stored_bytes(&mut obj)?)
                    .await
                    .map_err(storage_error)?
                {
                    WriteOutcome::Done(kv) => {
                        meta::set(&mut obj, "resourceVersion", kv.mod_revision.to_string());
                        return Ok(Deleted {
                            object: self.convert(def, obj),
                            gone: false,
                        });
                    }
                    WriteOutcome::Conflict(_) => {
                        self.sync().await?;
                        continue;
                    }
                }
            }
            let obj = self.convert(def, current.value()?);
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
        Err(ApiError::stale(&gr, name))
    }

    /// Deletes every object of `def` in `ns` (all namespaces for `None`); returns what was deleted
    /// or marked for deletion.
    pub async fn delete_collection<F>(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        opts: &WriteOptions,
        filter: F,
    ) -> Result<Vec<Value>, ApiError>
    where
        F: Fn(&Value) -> bool,
    {
        let snap = self.list(def, ns).await?;
        let mut out = vec![];
        for o in snap.objects {
            let v = o.value()?;
            if !filter(&v) {
                continue;
            }
            let (name, ons) = (meta::name(&v).to_string(), meta::namespace(&v).to_string());
            let ons = if def.api.namespaced {
                Some(ons.as_str())
            } else {
                None
            };
            match self
                .delete(def, ons, &name, &Preconditions::default(), opts)
                .await
            {
                Ok(d) => out.push(d.object),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// Internal marker: an update lost a race the server itself created (patch retry).
const RETRY_MARKER: &str = "\u{0}retry";

fn conflict_error(gr: &GroupResource, name: &str, from_patch: bool) -> ApiError {
    if from_patch {
        ApiError::new(409, crest_api::Reason::Conflict, RETRY_MARKER)
    } else {
        ApiError::stale(gr, name)
    }
}

/// The name and namespace in a body must match the URL.
pub fn check_identity(
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

pub fn check_namespace(def: &ResourceDef, ns: Option<&str>, obj: &Value) -> Result<(), ApiError> {
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
            validate_object_meta(m, def.api.namespaced, def.strategy.name_validator(), &path)
        }
        None => vec![FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        )],
    }
}

/// Once an object is being deleted, finalizers may only be removed.
fn validate_finalizer_update(new: &Value, old: &Value) -> Vec<FieldError> {
    if meta::deletion_timestamp(old).is_none() {
        return vec![];
    }
    let old_f = meta::finalizers(old);
    let added: Vec<String> = meta::finalizers(new)
        .into_iter()
        .filter(|f| !old_f.contains(f))
        .collect();
    if added.is_empty() {
        return vec![];
    }
    let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
    vec![FieldError::forbidden(
        &FieldPath::new("metadata").child("finalizers"),
        format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            quoted.join(", ")
        ),
    )]
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            let served: Value = serde_json::from_slice(&crate::cache::splice_resource_version(
                &bytes, start, empty, 42,
            ))
            .expect("served json");
            let mut expected = o.clone();
            meta::set(&mut expected, "resourceVersion", "42");
            assert_eq!(served, expected);
        }
        let (_, md) = stored_bytes_with_metadata(&mut json!({"metadata": 1})).expect("encode");
        assert!(md.is_none());
    }
}
