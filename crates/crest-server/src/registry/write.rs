//! The write pipeline (kube-apiserver's generic registry `Store`: Create, Update, Delete). Each
//! write is a read-modify-write through [`Registry::guaranteed_update`] (upstream's
//! `GuaranteedUpdate`), the one place that writes with a compare-and-swap and retries a lost
//! race; each path says what one attempt writes ([`TryUpdate`]), in named steps:
//!
//! - create: [`Registry::prepare_create`] (managedFields, system metadata, BeginCreate,
//!   PrepareForCreate) once, then per attempt a name, validation, the storage form, and a
//!   create-if-absent (a generated name is retried, a taken one is `AlreadyExists`);
//! - update (PUT, and each attempt of a patch): [`Registry::try_update_object`]: the old object
//!   -> resourceVersion check -> the subresource's part -> system metadata -> managedFields ->
//!   PrepareForUpdate -> generation -> validation -> the write (none when nothing changed; a
//!   delete when the last finalizer went);
//! - patch: the current object, patched, then updated as above; retried when another write got
//!   in, unless the patch pinned the resourceVersion;
//! - delete: preconditions -> deletion finalizers -> the strategy's step -> delete admission ->
//!   mark for deletion, or remove.

use super::*;
use crate::store::cache::CachedObject;

/// How many times a patch, a delete or a generateName create is tried on write races.
const MAX_RETRIES: usize = 8;

/// The compare-and-swap an attempt writes (an update or delete is conditioned on the revision
/// read).
enum Write {
    /// Create the key: it must be absent.
    Create(Bytes, Option<Layout>),
    /// Replace the object read.
    Update(Bytes, Option<Layout>),
    /// Delete the object read.
    Delete,
}

/// What a lost compare-and-swap means for a write.
#[derive(Clone, Copy)]
enum OnConflict {
    /// Another write got in: read again and retry (a patch, a delete, a generated name).
    Retry,
    /// Retry, unless the object is gone: then [`Lost::Gone`] (a delete's removal).
    RetryUnlessGone,
    /// The write fails: [`Lost::Conflict`] (a PUT's resourceVersion, a create's chosen name).
    Fail,
}

/// Why a read-modify-write failed for good ([`TryUpdate::lost`] words it).
#[derive(Clone, Copy)]
enum Lost {
    /// A write with [`OnConflict::Fail`] lost.
    Conflict,
    /// A write with [`OnConflict::RetryUnlessGone`] found the object gone.
    Gone,
    /// Every attempt lost.
    Exhausted,
}

/// What one attempt decided (upstream's `tryUpdate`).
enum Step<A> {
    /// Write nothing (nothing changed, a dry run): the answer.
    Answer(A),
    /// Write, then answer `answer` (with the written revision).
    Write {
        write: Write,
        answer: A,
        on_conflict: OnConflict,
    },
    /// The object read is older than the one the attempt's input was made from: read again
    /// and retry.
    Reread,
}

/// What a read-modify-write did.
enum Done<A> {
    /// Wrote nothing.
    Unchanged(A),
    /// Wrote, at this revision.
    Written(A, i64),
}

/// How often a read-modify-write tries.
#[derive(Clone, Copy)]
struct Retries {
    attempts: usize,
    /// Whether the cache catches up with the store after a lost attempt (so the next one
    /// reads after the write that won).
    sync: bool,
}

impl Retries {
    const ONCE: Retries = Retries {
        attempts: 1,
        sync: false,
    };
    /// Patch and delete: another write got in, so the next attempt reads after it.
    const AFTER_RACES: Retries = Retries {
        attempts: MAX_RETRIES,
        sync: true,
    };
}

/// One write path's attempt, run by [`Registry::guaranteed_update`].
trait TryUpdate {
    type Answer;

    /// The key this attempt reads and writes (a create with generateName: a new name each
    /// attempt).
    fn key(&mut self) -> String;

    /// What to write, given the object as read (`None`: absent).
    async fn try_update(
        &mut self,
        current: Option<Arc<CachedObject>>,
    ) -> Result<Step<Self::Answer>, ApiError>;

    /// After an attempt that lost a race (before the next one, or the error).
    fn retrying(&mut self) {}

    /// The answer of an attempt whose write lost the race, handed back before the next attempt.
    fn take_back(&mut self, _answer: Self::Answer) {}

    /// The client's error when the write failed for good.
    fn lost(&self, why: Lost) -> ApiError;
}

/// One update of an object (PUT, or a patch's attempt): what its steps know.
struct Update<'a> {
    def: &'a ResourceDef,
    ns: Option<&'a str>,
    name: &'a str,
    mode: UpdateMode,
    opts: &'a WriteOptions,
    /// The resourceVersion came from the stored object (a patch that did not pin one): a lost
    /// race is the server's, and retried.
    from_patch: bool,
}

/// An update's answer before it is converted to the served version.
struct Updated {
    obj: Value,
    /// Whether the written revision is its resourceVersion (false: deleted by the update).
    takes_revision: bool,
}

/// A create's answer: the object and (once written) its stored bytes, with where their
/// `metadata` starts (see [`stored_bytes_with_metadata`]).
struct Created {
    obj: Value,
    bytes: Bytes,
    metadata: Option<Layout>,
}

/// A delete's answer before it is converted: the object kept (marked for deletion, or
/// unchanged), or the object removed (already served).
enum Deletion {
    Kept(Value),
    Gone(Value),
}

impl Registry {
    /// The one read-modify-write (upstream's `GuaranteedUpdate`): reads the object at the
    /// attempt's key from the cache, lets the path decide what to write, writes it with a
    /// compare-and-swap on the revision read, and on a lost race reads again and retries as
    /// `retries` and the write say.
    async fn guaranteed_update<U: TryUpdate>(
        &self,
        retries: Retries,
        mut attempt: U,
    ) -> Result<Done<U::Answer>, ApiError> {
        for _ in 0..retries.attempts {
            let key = attempt.key();
            let current = self.cache.get(&key);
            let revision = current.as_ref().map_or(0, |c| c.mod_revision);
            let (write, answer, on_conflict) = match attempt.try_update(current).await? {
                Step::Answer(a) => return Ok(Done::Unchanged(a)),
                Step::Write {
                    write,
                    answer,
                    on_conflict,
                } => (write, answer, on_conflict),
                Step::Reread => {
                    self.lost_race(&mut attempt, retries).await?;
                    continue;
                }
            };
            match (
                self.compare_and_swap(&key, revision, write).await?,
                on_conflict,
            ) {
                (WriteOutcome::Done(kv), _) => return Ok(Done::Written(answer, kv.mod_revision)),
                (WriteOutcome::Conflict(_), OnConflict::Fail) => {
                    return Err(attempt.lost(Lost::Conflict))
                }
                (WriteOutcome::Conflict(None), OnConflict::RetryUnlessGone) => {
                    return Err(attempt.lost(Lost::Gone))
                }
                (WriteOutcome::Conflict(_), _) => {
                    attempt.take_back(answer);
                    self.lost_race(&mut attempt, retries).await?
                }
            }
        }
        Err(attempt.lost(Lost::Exhausted))
    }

    /// The write of one attempt, conditioned on `revision` (the one read) for an update or a
    /// delete.
    async fn compare_and_swap(
        &self,
        key: &str,
        revision: i64,
        write: Write,
    ) -> Result<WriteOutcome, ApiError> {
        let (create, bytes, layout) = match write {
            Write::Create(b, l) => (true, b, l),
            Write::Update(b, l) => (false, b, l),
            Write::Delete => {
                return self
                    .storage
                    .delete(key, revision)
                    .await
                    .map_err(storage_error)
            }
        };
        // The feed serves this write's event from `layout`, if the event carries these bytes.
        let own = self.cache.own_writes();
        if let Some(l) = layout {
            own.expect(key, &bytes, l);
        }
        let written = bytes.clone();
        let outcome = if create {
            self.storage.create(key, bytes).await
        } else {
            self.storage.update(key, revision, bytes).await
        };
        if layout.is_some() && !matches!(outcome, Ok(WriteOutcome::Done(_))) {
            own.forget(key, &written);
        }
        outcome.map_err(storage_error)
    }

    /// After an attempt lost a race: what it did goes with it, and (as `retries` says) the
    /// cache catches up with the write that won.
    async fn lost_race<U: TryUpdate>(
        &self,
        attempt: &mut U,
        retries: Retries,
    ) -> Result<(), ApiError> {
        attempt.retrying();
        if retries.sync {
            self.sync().await?;
        }
        Ok(())
    }

    /// Namespace lifecycle admission: namespaced objects need an existing, non-terminating namespace.
    fn admit_namespace(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        if !def.api.namespaced {
            return Ok(());
        }
        let ns = ns.unwrap_or_default();
        let Some(nsobj) = self.cache.get(&format!("{NAMESPACE_PREFIX}{ns}")) else {
            if opts.namespace_in_batch {
                return Ok(());
            }
            return Err(ApiError::not_found(
                &GroupResource::new("", "namespaces"),
                ns,
            ));
        };
        let terminating = self.is_terminating(ns, &nsobj)?;
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

    /// Whether the namespace `nsobj` (named `ns`) is being terminated; read once per revision of it.
    fn is_terminating(&self, ns: &str, nsobj: &CachedObject) -> Result<bool, ApiError> {
        let memo = || self.terminating.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(rev, t)) = memo().get(ns) {
            if rev == nsobj.mod_revision {
                return Ok(t);
            }
        }
        // Read without building the namespace's tree when it has the simple shape
        // (`namespace_terminating`); any other shape is parsed whole.
        let terminating = match namespace_terminating(&nsobj.json) {
            Some(t) => t,
            None => {
                let v = nsobj.value()?;
                meta::deletion_timestamp(&v).is_some()
                    || v.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
            }
        };
        let mut m = memo();
        // Bounded: names of namespaces deleted since are only dropped by a clear.
        if m.len() >= 64 * 1024 && !m.contains_key(ns) {
            m.clear();
        }
        m.insert(ns.to_string(), (nsobj.mod_revision, terminating));
        Ok(terminating)
    }

    /// Create: assigns system metadata, validates, stores if absent.
    pub(crate) async fn create(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        obj: Value,
        opts: &WriteOptions,
    ) -> Result<Served, ApiError> {
        self.sync_for_create(def, ns).await?;
        let fresh = self.fresh(def);
        let def = fresh.as_deref().unwrap_or(def);
        refuse_create_while_terminating(def)?;
        self.admit_namespace(def, ns, meta::name(&obj), opts)?;
        let obj = self.prepare_create(def, ns, obj, opts).await?;
        let creating = Creating::new(self, def, ns, opts, obj);
        let retries = creating.retries();
        match self.guaranteed_update(retries, creating).await? {
            Done::Unchanged(c) => Ok(Served::Tree(self.to_served(def, c.obj).await?)),
            Done::Written(c, revision) => self.served_created(def, c, revision).await,
        }
    }

    /// Catches up with this server's writes, and with every write when the namespace is not
    /// known (perhaps created through another replica just now).
    async fn sync_for_create(&self, def: &ResourceDef, ns: Option<&str>) -> Result<(), ApiError> {
        self.sync_own().await?;
        if def.api.namespaced
            && self
                .cache
                .get(&format!("{NAMESPACE_PREFIX}{}", ns.unwrap_or_default()))
                .is_none()
        {
            self.sync().await?;
        }
        Ok(())
    }

    /// What a create does once, whatever name it is stored under: owner references
    /// deduplicated, defaults, the strategy's authorization, managedFields, system metadata,
    /// the storage version (built-in kinds), BeginCreate and PrepareForCreate.
    async fn prepare_create(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        opts.warn(dedup_owner_references(&mut obj, false));
        def.strategy.defaults(&mut obj);
        self.authorize_write(def, ns, "", &obj, None, opts)?;
        // A built-in kind is compared against its Go zero value, a custom resource against
        // nothing.
        let zero = def.managed().and_then(|m| m.zero.as_ref());
        record_update(def, zero, &mut obj, "", opts);
        set_create_metadata(def, ns, &mut obj);
        let strategy = def.strategy.as_ref();
        if strategy.uses_generation() {
            meta::set(&mut obj, "generation", 1);
        }
        if def.conversion.is_some() {
            // A built-in kind is prepared and validated in its internal (stored) form.
            self.to_storage_version(def, &mut obj).await?;
        }
        begin_create(def, &mut obj)?;
        strategy.prepare_create(&mut obj);
        if strategy.warns_finalizer_names() {
            if let Some(m) = meta::meta(&obj) {
                opts.warn(finalizer_warnings(m, None));
            }
        }
        Ok(obj)
    }

    /// A created object as the client receives it: the stored bytes with the resourceVersion
    /// spliced in, or the object converted to the served version.
    async fn served_created(
        &self,
        def: &ResourceDef,
        c: Created,
        revision: i64,
    ) -> Result<Served, ApiError> {
        if let (Some(l), false) = (c.metadata, def.converts()) {
            if let Some(served) = cache::splice_resource_version(&c.bytes, l, revision) {
                return Ok(Served::Json(Bytes::from(served)));
            }
        }
        let mut obj = c.obj;
        meta::set(&mut obj, "resourceVersion", revision.to_string());
        Ok(Served::Tree(self.to_served(def, obj).await?))
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

    /// PUT of an existing object: one attempt (a lost race is a stale resourceVersion).
    async fn replace(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        mut obj: Value,
        mode: UpdateMode,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        opts.warn(dedup_owner_references(&mut obj, false));
        let replacing = Replacing {
            registry: self,
            update: Update {
                def,
                ns,
                name,
                mode,
                opts,
                from_patch: false,
            },
            obj: Some(obj),
        };
        let done = self.guaranteed_update(Retries::ONCE, replacing).await?;
        self.served_update(def, done).await
    }

    /// One update attempt on the object read, in upstream's order (`BeforeUpdate` and the
    /// store's Update): the steps below, then the write they lead to.
    async fn try_update_object(
        &self,
        u: &Update<'_>,
        current: &CachedObject,
        mut obj: Value,
    ) -> Result<Step<Updated>, ApiError> {
        let old = self.old_for_update(u, current, &mut obj).await?;
        if !check_resource_version(u, &obj, current.mod_revision)? {
            return Ok(Step::Reread);
        }
        let mut obj = take_subresource_part(u.mode, obj, &old);
        restore_system_metadata(&mut obj, &old);
        default_and_record_update(u, &mut obj, &old);
        self.prepare_update(u, &mut obj, &old)?;
        set_generation(u.def.strategy.as_ref(), &mut obj, &old);
        validate_update_step(u, &mut obj, &old)?;
        // A custom resource stored in an older storage version is written even when nothing
        // changed: upstream compares the encoded bytes, which are in the new storage version
        // (what kube-storage-version-migrator's no-op updates rely on).
        let restore = u.def.crd_name.is_some()
            && current
                .api_version()
                .is_some_and(|v| v != u.def.storage_api_version);
        self.update_write(u, current.mod_revision, obj, old, restore)
            .await
    }

    /// The stored object in the form the update is prepared and validated in: a custom
    /// resource's in the request's version (the stored object converted to it; the request is
    /// converted to the storage version only to be written), a built-in kind's in its internal
    /// (stored) form, as upstream decodes it; the request is converted to that form here, its
    /// managedFields recorded first in the request's version, as upstream's field manager
    /// sees the write.
    async fn old_for_update(
        &self,
        u: &Update<'_>,
        current: &CachedObject,
        obj: &mut Value,
    ) -> Result<Value, ApiError> {
        let Some(c) = &u.def.conversion else {
            return self.to_served(u.def, current.value()?).await;
        };
        if u.mode == UpdateMode::Main && u.opts.manager.is_some() {
            let old_served = c.to_served(current.value()?);
            u.def.strategy.defaults(obj);
            record_update(u.def, Some(&old_served), obj, "", u.opts);
        }
        self.to_storage_version(u.def, obj).await?;
        current.value()
    }

    /// The strategy's part of an update: the main resource is authorized (escalation checks),
    /// begun and prepared; `/status` prepared as a status update; `/finalize` left as merged.
    fn prepare_update(&self, u: &Update<'_>, obj: &mut Value, old: &Value) -> Result<(), ApiError> {
        let strategy = u.def.strategy.as_ref();
        match u.mode {
            UpdateMode::Main => {
                self.authorize_write(u.def, u.ns, u.name, obj, Some(old), u.opts)?;
                let begun = strategy.begin_update(obj, old);
                if !begun.is_empty() {
                    return Err(ApiError::invalid(&u.def.api.group_kind(), u.name, &begun));
                }
                strategy.prepare_update(obj, old);
            }
            UpdateMode::Status => strategy.prepare_status_update(obj, old),
            UpdateMode::Finalize => {}
        }
        Ok(())
    }

    /// What a validated update writes: a delete when it leaves a deleting object without
    /// finalizers (upstream's ShouldDeleteDuringUpdate; the answer is the updated object, as
    /// the client sent it), nothing when nothing changed or in a dry run (like kube-apiserver:
    /// the resourceVersion stays), else the object in its storage form.
    async fn update_write(
        &self,
        u: &Update<'_>,
        revision: i64,
        mut obj: Value,
        mut old: Value,
        restore: bool,
    ) -> Result<Step<Updated>, ApiError> {
        let on_conflict = if u.from_patch {
            OnConflict::Retry
        } else {
            OnConflict::Fail
        };
        let unwritten = |obj| Updated {
            obj,
            takes_revision: false,
        };
        if should_delete_during_update(u.def.strategy.as_ref(), &obj, &old) {
            meta::set(&mut obj, "resourceVersion", revision.to_string());
            if u.opts.dry_run {
                return Ok(Step::Answer(unwritten(obj)));
            }
            return Ok(Step::Write {
                write: Write::Delete,
                answer: unwritten(obj),
                on_conflict,
            });
        }
        // `old` is not needed after this comparison: no copy for it.
        meta::remove(&mut old, "resourceVersion");
        keep_managed_fields_times(&mut obj, &old);
        if (obj == old && !restore) || u.opts.dry_run {
            meta::set(&mut obj, "resourceVersion", revision.to_string());
            return Ok(Step::Answer(unwritten(obj)));
        }
        let mut stored = self.storage_form(u.def, obj).await?;
        let (bytes, layout) = stored_bytes_with_metadata(&mut stored)?;
        Ok(Step::Write {
            write: Write::Update(bytes, layout),
            answer: Updated {
                obj: stored,
                takes_revision: true,
            },
            on_conflict,
        })
    }

    /// An updated object as the client receives it: in the served version, with the written
    /// revision when it was written.
    async fn served_update(
        &self,
        def: &ResourceDef,
        done: Done<Updated>,
    ) -> Result<Value, ApiError> {
        let (mut u, revision) = match done {
            Done::Unchanged(u) => (u, None),
            Done::Written(u, revision) => (u, Some(revision)),
        };
        if let Some(rv) = revision.filter(|_| u.takes_revision) {
            meta::set(&mut u.obj, "resourceVersion", rv.to_string());
        }
        self.to_served(def, u.obj).await
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
        let patching = Patching {
            registry: self,
            def,
            ns,
            name,
            mode,
            opts,
            patch_fn,
        };
        let done = self
            .guaranteed_update(Retries::AFTER_RACES, patching)
            .await?;
        self.served_update(def, done).await
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
        let deleting = Deleting {
            registry: self,
            def,
            ns,
            name,
            pre,
            opts,
        };
        let (deletion, revision) = match self
            .guaranteed_update(Retries::AFTER_RACES, deleting)
            .await?
        {
            Done::Unchanged(d) => (d, None),
            Done::Written(d, revision) => (d, Some(revision)),
        };
        match deletion {
            Deletion::Kept(mut obj) => {
                if let Some(rv) = revision {
                    meta::set(&mut obj, "resourceVersion", rv.to_string());
                }
                Ok(Deleted {
                    object: self.to_served(def, obj).await?,
                    gone: false,
                })
            }
            Deletion::Gone(object) => Ok(Deleted { object, gone: true }),
        }
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
                let served = self.to_served(def, stored).await?;
                if filter(&served) {
                    listed.push(served);
                }
            } else if filter(&stored) {
                listed.push(self.to_served(def, stored).await?);
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

// --- The attempts of each write path ---

/// A create's attempts: a name (generated anew each attempt for generateName), validation,
/// the storage form, a create-if-absent.
struct Creating<'a> {
    registry: &'a Registry,
    def: &'a ResourceDef,
    ns: Option<&'a str>,
    opts: &'a WriteOptions,
    /// The prepared object (taken by the one attempt of a create with a name).
    obj: Value,
    generate: bool,
    /// The name of the current attempt.
    name: String,
}

impl<'a> Creating<'a> {
    fn new(
        registry: &'a Registry,
        def: &'a ResourceDef,
        ns: Option<&'a str>,
        opts: &'a WriteOptions,
        obj: Value,
    ) -> Self {
        let generate =
            meta::name(&obj).is_empty() && !meta::meta_str(&obj, "generateName").is_empty();
        Creating {
            registry,
            def,
            ns,
            opts,
            obj,
            generate,
            name: String::new(),
        }
    }

    /// A generated name is tried again when taken; a name the client chose is not.
    fn retries(&self) -> Retries {
        if self.generate {
            Retries {
                attempts: MAX_RETRIES,
                sync: false,
            }
        } else {
            Retries::ONCE
        }
    }
}

impl TryUpdate for Creating<'_> {
    type Answer = Created;

    fn key(&mut self) -> String {
        if self.generate {
            let name = format!(
                "{}{}",
                meta::meta_str(&self.obj, "generateName"),
                meta::random_suffix()
            );
            meta::set(&mut self.obj, "name", name);
        }
        self.name = meta::name(&self.obj).to_string();
        self.def.key(self.ns, &self.name)
    }

    async fn try_update(
        &mut self,
        current: Option<Arc<CachedObject>>,
    ) -> Result<Step<Created>, ApiError> {
        let (def, opts) = (self.def, self.opts);
        validate_create(def, &self.name, &mut self.obj, opts)?;
        // Validated in the request's version, stored in the storage version. A generated name
        // may be taken, and the next attempt starts from this object again: it comes back
        // (`take_back`) when the storage form is the same object, else it is copied.
        let same_form = def.conversion.is_some() || !def.converts();
        let source = if self.generate && !same_form {
            self.obj.clone()
        } else {
            std::mem::take(&mut self.obj)
        };
        let mut obj = self.registry.storage_form(def, source).await?;
        if opts.dry_run {
            if current.is_some() {
                return Err(self.lost(Lost::Conflict));
            }
            return Ok(Step::Answer(Created {
                obj,
                bytes: Bytes::new(),
                metadata: None,
            }));
        }
        let (bytes, metadata) = stored_bytes_with_metadata(&mut obj)?;
        Ok(Step::Write {
            write: Write::Create(bytes.clone(), metadata),
            answer: Created {
                obj,
                bytes,
                metadata,
            },
            on_conflict: if self.generate {
                OnConflict::Retry
            } else {
                OnConflict::Fail
            },
        })
    }

    fn take_back(&mut self, answer: Created) {
        // Taken by the attempt (`same_form`): the next one starts from it.
        if self.obj.is_null() {
            self.obj = answer.obj;
        }
    }

    fn lost(&self, _: Lost) -> ApiError {
        ApiError::already_exists(&self.def.api.group_resource(), &self.name)
    }
}

/// A PUT's one attempt.
struct Replacing<'a> {
    registry: &'a Registry,
    update: Update<'a>,
    /// The request's object (taken by the attempt).
    obj: Option<Value>,
}

impl TryUpdate for Replacing<'_> {
    type Answer = Updated;

    fn key(&mut self) -> String {
        self.update.def.key(self.update.ns, self.update.name)
    }

    async fn try_update(
        &mut self,
        current: Option<Arc<CachedObject>>,
    ) -> Result<Step<Updated>, ApiError> {
        let u = &self.update;
        let Some(current) = current else {
            return Err(ApiError::not_found(&u.def.api.group_resource(), u.name));
        };
        let obj = self.obj.take().unwrap_or_default();
        self.registry.try_update_object(u, &current, obj).await
    }

    fn lost(&self, _: Lost) -> ApiError {
        ApiError::stale(&self.update.def.api.group_resource(), self.update.name)
    }
}

/// A patch's attempts: the current object, patched, then updated.
struct Patching<'a, F> {
    registry: &'a Registry,
    def: &'a ResourceDef,
    ns: Option<&'a str>,
    name: &'a str,
    mode: UpdateMode,
    opts: &'a WriteOptions,
    patch_fn: F,
}

impl<F> TryUpdate for Patching<'_, F>
where
    F: Fn(&Value) -> Result<Value, ApiError>,
{
    type Answer = Updated;

    fn key(&mut self) -> String {
        self.def.key(self.ns, self.name)
    }

    async fn try_update(
        &mut self,
        current: Option<Arc<CachedObject>>,
    ) -> Result<Step<Updated>, ApiError> {
        let (def, ns, name) = (self.def, self.ns, self.name);
        let Some(current) = current else {
            return Err(ApiError::not_found(&def.api.group_resource(), name));
        };
        let current_v = self.registry.to_served(def, current.value()?).await?;
        let mut patched = (self.patch_fn)(&current_v)?;
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
        let update = Update {
            def,
            ns,
            name,
            mode: self.mode,
            opts: self.opts,
            from_patch,
        };
        let step = self
            .registry
            .try_update_object(&update, &current, patched)
            .await;
        if !matches!(step, Ok(Step::Reread)) {
            self.opts.warn(dedup);
        }
        step
    }

    /// The attempt's warnings go with it.
    fn retrying(&mut self) {
        self.opts.take_warnings();
    }

    fn lost(&self, _: Lost) -> ApiError {
        ApiError::stale(&self.def.api.group_resource(), self.name)
    }
}

/// A delete's attempts: preconditions, deletion finalizers, the strategy's step, delete
/// admission, then a mark for deletion (an update) or the removal.
struct Deleting<'a> {
    registry: &'a Registry,
    def: &'a ResourceDef,
    ns: Option<&'a str>,
    name: &'a str,
    pre: &'a Preconditions,
    opts: &'a WriteOptions,
}

impl TryUpdate for Deleting<'_> {
    type Answer = Deletion;

    fn key(&mut self) -> String {
        self.def.key(self.ns, self.name)
    }

    async fn try_update(
        &mut self,
        current: Option<Arc<CachedObject>>,
    ) -> Result<Step<Deletion>, ApiError> {
        let (def, name, opts) = (self.def, self.name, self.opts);
        let gr = def.api.group_resource();
        let strategy = def.strategy.as_ref();
        let Some(current) = current else {
            return Err(ApiError::not_found(&gr, name));
        };
        let stored = current.value()?;
        check_preconditions(def, name, &stored, current.mod_revision, self.pre)?;
        let mut obj = stored.clone();
        // The orphan / foregroundDeletion finalizers first: they keep the object (marked
        // for deletion) until the garbage collector has handled its dependents.
        if strategy.garbage_collection_policy_supported() {
            deletion::apply_deletion_finalizers(&mut obj, opts.cascade);
        }
        match strategy.delete_step(&mut obj) {
            DeleteStep::Unchanged => Ok(Step::Answer(Deletion::Kept(obj))),
            DeleteStep::Mark => {
                strategy.admit_delete(&gr, name)?;
                if obj == stored || opts.dry_run {
                    // No change (already marked) writes nothing, as a no-op update.
                    return Ok(Step::Answer(Deletion::Kept(obj)));
                }
                // Written in the current storage version, as every write is (the object may
                // be stored in an older one).
                self.registry.in_storage_version(def, &mut obj).await?;
                let (bytes, layout) = stored_bytes_with_metadata(&mut obj)?;
                Ok(Step::Write {
                    write: Write::Update(bytes, layout),
                    answer: Deletion::Kept(obj),
                    on_conflict: OnConflict::Retry,
                })
            }
            DeleteStep::Remove => {
                strategy.admit_delete(&gr, name)?;
                let obj = self.registry.to_served(def, stored).await?;
                if opts.dry_run {
                    return Ok(Step::Answer(Deletion::Gone(obj)));
                }
                Ok(Step::Write {
                    write: Write::Delete,
                    answer: Deletion::Gone(obj),
                    on_conflict: OnConflict::RetryUnlessGone,
                })
            }
        }
    }

    fn lost(&self, why: Lost) -> ApiError {
        let gr = self.def.api.group_resource();
        match why {
            Lost::Gone => ApiError::not_found(&gr, self.name),
            Lost::Conflict | Lost::Exhausted => ApiError::stale(&gr, self.name),
        }
    }
}

// --- The named steps of create and update ---

/// Creates are refused while the resource's CRD is being deleted.
fn refuse_create_while_terminating(def: &ResourceDef) -> Result<(), ApiError> {
    if !def.terminating {
        return Ok(());
    }
    let mut e = ApiError::method_not_supported(&def.api.group_resource(), "create");
    e.message = "create not allowed while custom resource definition is terminating".into();
    Err(e)
}

/// The system metadata of a new object: whatever the client sent of it dropped, the request's
/// namespace, a new uid and the creation time.
fn set_create_metadata(def: &ResourceDef, ns: Option<&str>, obj: &mut Value) {
    let Some(m) = meta::meta_mut(obj) else {
        return;
    };
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

/// The strategy's BeginCreate; its errors name the object as it would be named (upstream's
/// BeginCreate runs after the name is generated).
fn begin_create(def: &ResourceDef, obj: &mut Value) -> Result<(), ApiError> {
    let begun = def.strategy.begin_create(obj);
    if begun.is_empty() {
        return Ok(());
    }
    let mut name = meta::name(obj).to_string();
    if name.is_empty() {
        name = format!(
            "{}{}",
            meta::meta_str(obj, "generateName"),
            meta::random_suffix()
        );
    }
    Err(ApiError::invalid(&def.api.group_kind(), &name, &begun))
}

/// Create validation (ObjectMeta, finalizer names, the strategy's), then the strategy's
/// canonical form; its warnings (ratcheted rules) go with the write.
fn validate_create(
    def: &ResourceDef,
    name: &str,
    obj: &mut Value,
    opts: &WriteOptions,
) -> Result<(), ApiError> {
    let strategy = def.strategy.as_ref();
    let mut errs = validate_metadata(def, obj);
    if strategy.kube_finalizer_names() {
        errs.extend(kube_finalizer_errors(obj));
    }
    let mut warnings = vec![];
    errs.extend(strategy.validate_create(obj, &mut warnings));
    if !errs.is_empty() {
        return Err(ApiError::invalid(&def.api.group_kind(), name, &errs));
    }
    strategy.canonicalize(obj);
    opts.warn(warnings);
    Ok(())
}

/// Upstream's `IgnoreManagedFieldsTimestampsTransformer` (on by default since 1.29): when an
/// update changes nothing but the times of managedFields entries (a re-apply of the same
/// configuration that the merge saw as a change before defaulting, an update that rewrites
/// the same values), the old times are kept, so the update is a no-op and no new
/// resourceVersion is written. Entries added, removed or changed otherwise keep the new times.
/// Every update passes here: nothing is copied unless the entries differ in their times alone.
fn keep_managed_fields_times(obj: &mut Value, old: &Value) {
    fn entries(v: &Value) -> Option<&Vec<Value>> {
        v.pointer("/metadata/managedFields")
            .and_then(Value::as_array)
    }
    fn time(e: &Value) -> Option<&Value> {
        e.get("time")
    }
    let (Some(old_mf), Some(new_mf)) = (entries(old), entries(obj)) else {
        return;
    };
    if old_mf.len() != new_mf.len() || new_mf.is_empty() {
        return;
    }
    if new_mf.iter().zip(old_mf).all(|(n, o)| time(n) == time(o)) {
        return;
    }
    // Equal but for `time`: the same members with the same values, `time` aside.
    let equal_but_time = |n: &Value, o: &Value| match (n.as_object(), o.as_object()) {
        (Some(n), Some(o)) => {
            n.len() - usize::from(n.contains_key("time"))
                == o.len() - usize::from(o.contains_key("time"))
                && n.iter().all(|(k, v)| k == "time" || o.get(k) == Some(v))
        }
        _ => n == o,
    };
    if !new_mf.iter().zip(old_mf).all(|(n, o)| equal_but_time(n, o)) {
        return;
    }
    // The whole object decides, with the old times (only the times are copied).
    let old_times: Vec<Option<Value>> = old_mf.iter().map(|e| time(e).cloned()).collect();
    let new_times = set_managed_fields_times(obj, old_times);
    if obj != old {
        set_managed_fields_times(obj, new_times);
    }
}

/// Sets each managedFields entry's `time` (`None`: none), returning the ones it had.
fn set_managed_fields_times(obj: &mut Value, times: Vec<Option<Value>>) -> Vec<Option<Value>> {
    let Some(entries) = obj
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut)
    else {
        return vec![];
    };
    entries
        .iter_mut()
        .zip(times)
        .map(|(e, t)| {
            let m = e.as_object_mut()?;
            match t {
                Some(t) => m.insert("time".into(), t),
                None => m.remove("time"),
            }
        })
        .collect()
}

/// The request's resourceVersion against the revision read: it may be empty only where the
/// strategy allows unconditional updates. `false`: a patch made from an older read (another
/// write got in between: the server's race, retried like a lost compare-and-swap).
fn check_resource_version(u: &Update<'_>, obj: &Value, revision: i64) -> Result<bool, ApiError> {
    let gr = u.def.api.group_resource();
    let rv = meta::resource_version(obj);
    if rv.is_empty() {
        if !u.def.strategy.allow_unconditional_update() {
            let errs = [FieldError::invalid_repr(
                &FieldPath::new("metadata").child("resourceVersion"),
                "0x0",
                "must be specified for an update",
            )];
            return Err(ApiError::invalid(
                &crest_api::GroupKind::new(&gr.group, &gr.resource),
                u.name,
                &errs,
            ));
        }
        return Ok(true);
    }
    if rv.parse::<i64>().ok() == Some(revision) {
        return Ok(true);
    }
    if rv.parse::<i64>().is_err() {
        return Err(ApiError::bad_request(format!(
            "invalid resource version: {rv:?}"
        )));
    }
    if u.from_patch {
        return Ok(false);
    }
    Err(ApiError::stale(&gr, u.name))
}

/// A subresource write takes only its part from the request; the rest stays as stored.
/// `/status`: everything but status comes from the stored object; managedFields are the
/// request's (the field manager's record of this write) unless it sent none. `/finalize`:
/// only `spec.finalizers`.
fn take_subresource_part(mode: UpdateMode, obj: Value, old: &Value) -> Value {
    match mode {
        UpdateMode::Main => obj,
        UpdateMode::Status => {
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
            merged
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
            merged
        }
    }
}

/// A custom resource's update is defaulted (but a `/finalize`) and recorded in managedFields
/// here, after the merge (a built-in kind's was recorded before its conversion).
fn default_and_record_update(u: &Update<'_>, obj: &mut Value, old: &Value) {
    if u.def.conversion.is_some() {
        return;
    }
    let subresource = match u.mode {
        UpdateMode::Main => "",
        UpdateMode::Status => "status",
        UpdateMode::Finalize => "finalize",
    };
    if u.mode != UpdateMode::Finalize {
        u.def.strategy.defaults(obj);
    }
    record_update(u.def, Some(old), obj, subresource, u.opts);
}

/// `metadata.generation`: bumped when the spec (or, for some kinds, the labels) changed, at
/// least 1.
fn set_generation(strategy: &dyn Strategy, obj: &mut Value, old: &Value) {
    if !strategy.uses_generation() {
        return;
    }
    let skip_status = strategy.status_subresource();
    let gen = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let labels = |o: &Value| o.pointer("/metadata/labels").cloned();
    let changed = spec_part(obj, skip_status) != spec_part(old, skip_status)
        || (strategy.generation_counts_labels() && labels(obj) != labels(old));
    meta::set(
        obj,
        "generation",
        if changed { gen + 1 } else { gen.max(1) },
    );
}

/// Update validation ([`validate_update`]), then the strategy's canonical form; ratcheted
/// rule failures and finalizer name warnings go with the write as Warning headers.
fn validate_update_step(u: &Update<'_>, obj: &mut Value, old: &Value) -> Result<(), ApiError> {
    let strategy = u.def.strategy.as_ref();
    let mut warnings = vec![];
    let errs = validate_update(u.def, obj, old, u.mode, &mut warnings);
    if !errs.is_empty() {
        return Err(ApiError::invalid(&u.def.api.group_kind(), u.name, &errs));
    }
    strategy.canonicalize(obj);
    u.opts.warn(warnings);
    if strategy.warns_finalizer_names() {
        if let (Some(n), Some(o)) = (meta::meta(obj), meta::meta(old)) {
            u.opts.warn(finalizer_warnings(n, Some(o)));
        }
    }
    Ok(())
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
        Some(m) => crest_managedfields::validate_managed_fields(m, &path.child("managedFields")),
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
}
