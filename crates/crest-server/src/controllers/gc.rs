//! The garbage collector (kube-controller-manager's `garbagecollector`, and the API server's
//! half of it, `deletionFinalizersForGarbageCollection`).
//!
//! A DELETE chooses how dependents (objects whose `metadata.ownerReferences` name the deleted
//! object's uid) go: `Background` (the default) removes the owner at once and the collector
//! deletes the dependents after; `Foreground` keeps the owner, marked with the
//! `foregroundDeletion` finalizer, until every dependent that has `blockOwnerDeletion: true` is
//! gone; `Orphan` keeps the owner with the `orphan` finalizer until the collector has removed the
//! owner's references from the dependents. Objects whose owners are all absent (a uid that no
//! longer exists under that name) are deleted too.
//!
//! The collector follows the cache's change feed and keeps an index owner uid -> dependents, so
//! it does no work for objects without owner references beyond a byte search; it acts through
//! the registry like any client (uid preconditions, so it never deletes a recreated object).

use crate::controllers::managers::KUBE_CONTROLLER_MANAGER;
use crate::registry::resources::{ResourceDef, Resources};
use crate::registry::{Preconditions, Registry, UpdateMode, WriteOptions};
use crate::store::cache::{CacheEvent, CachedObject};
use crest_api::meta;
use crest_storage::EventType;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

use crate::registry::deletion::{Cascade, Propagation, FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use crate::store::keys;

#[derive(Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
struct OwnerRef {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    uid: String,
    #[serde(default)]
    block_owner_deletion: Option<bool>,
}

/// A JSON null reads as the field's empty value, as `meta`'s accessors read it.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The metadata the collector reads, decoded from the cached bytes without building the object.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct MetaView {
    #[serde(default, deserialize_with = "null_as_default")]
    name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    namespace: String,
    #[serde(default, deserialize_with = "null_as_default")]
    uid: String,
    #[serde(default)]
    deletion_timestamp: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    finalizers: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    owner_references: Vec<OwnerRef>,
}

impl MetaView {
    fn deleting(&self) -> bool {
        self.deletion_timestamp.is_some()
    }

    fn has_finalizer(&self, f: &str) -> bool {
        self.finalizers.iter().any(|x| x == f)
    }
}

#[derive(Deserialize, Default)]
struct ObjectView {
    #[serde(default)]
    metadata: MetaView,
}

fn try_view(o: &CachedObject) -> Option<MetaView> {
    serde_json::from_slice::<ObjectView>(&o.json)
        .ok()
        .map(|v| v.metadata)
}

fn view(o: &CachedObject) -> MetaView {
    try_view(o).unwrap_or_default()
}

fn mentions(o: &CachedObject, needle: &[u8]) -> bool {
    memchr::memmem::find(&o.json, needle).is_some()
}

/// Owner uid -> dependent keys, and each dependent's references (to undo on change).
#[derive(Default)]
struct Graph {
    dependents: HashMap<String, HashSet<Arc<str>>>,
    owners_of: HashMap<Arc<str>, Vec<OwnerRef>>,
}

impl Graph {
    fn set(&mut self, key: &Arc<str>, refs: Vec<OwnerRef>) {
        self.remove(key);
        if refs.is_empty() {
            return;
        }
        for r in &refs {
            self.dependents
                .entry(r.uid.clone())
                .or_default()
                .insert(key.clone());
        }
        self.owners_of.insert(key.clone(), refs);
    }

    fn remove(&mut self, key: &str) -> Vec<OwnerRef> {
        let Some(refs) = self.owners_of.remove(key) else {
            return vec![];
        };
        for r in &refs {
            if let Some(set) = self.dependents.get_mut(&r.uid) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(&r.uid);
                }
            }
        }
        refs
    }
}

/// Where an owner reference points, as the collector sees it.
enum OwnerState {
    /// The owner exists and is not waiting for its dependents.
    Solid,
    /// The owner is being deleted in the foreground.
    Waiting,
    /// Nothing with that uid exists under that name.
    Absent,
    /// The kind is not served (or the reference cannot be resolved): leave the dependent alone.
    Unknown,
}

/// The resource an owner reference's apiVersion and kind name (any served version of the group
/// and kind: they share storage).
fn resolve(res: &Resources, r: &OwnerRef) -> Option<Arc<ResourceDef>> {
    let (group, version) = match r.api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", r.api_version.as_str()),
    };
    let mut fallback = None;
    for def in res.all() {
        if def.api.group == group && def.api.kind == r.kind {
            if def.api.version == version {
                return Some(def.clone());
            }
            fallback.get_or_insert_with(|| def.clone());
        }
    }
    fallback
}

/// The key of the object an owner reference names, seen from a dependent in `ns`.
fn owner_key(
    res: &Resources,
    r: &OwnerRef,
    ns: Option<&str>,
) -> Option<(Arc<ResourceDef>, String)> {
    let def = resolve(res, r)?;
    if def.api.namespaced && ns.is_none() {
        // A cluster-scoped dependent cannot have a namespaced owner: unresolvable, as upstream.
        return None;
    }
    let key = def.key(ns, &r.name);
    Some((def, key))
}

pub(crate) struct Collector {
    registry: Arc<Registry>,
    graph: Graph,
    /// Dependents to look at (delete when their owners are gone, drop dangling references).
    dependents: BTreeSet<Arc<str>>,
    /// Objects being deleted with the orphan or foregroundDeletion finalizer.
    owners: BTreeSet<Arc<str>>,
    /// Work that failed (a conflict, a validation error), by queue and key: how many times in a
    /// row, and when it is queued again. An event that queues the key meanwhile runs it at once.
    retries: HashMap<(Queue, Arc<str>), Retry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Queue {
    Owner,
    Dependent,
}

struct Retry {
    failures: u32,
    due: Instant,
}

/// The delay before the first retry of failed work; it doubles with each failure in a row, up
/// to `RETRY_MAX` (upstream's per-item exponential rate limiter), so work that keeps failing
/// costs one attempt every few minutes, not one per change the server sees.
const RETRY: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(300);

fn retry_delay(failures: u32) -> Duration {
    RETRY
        .saturating_mul(1u32 << failures.saturating_sub(1).min(16))
        .min(RETRY_MAX)
}

/// Runs the collector until `shutdown` fires.
pub(crate) async fn run(registry: Arc<Registry>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut events = registry.reads().subscribe();
    let mut c = Collector {
        registry,
        graph: Graph::default(),
        dependents: BTreeSet::new(),
        owners: BTreeSet::new(),
        retries: HashMap::new(),
    };
    c.rescan();
    loop {
        c.queue_due_retries(Instant::now());
        let pending = !c.dependents.is_empty() || !c.owners.is_empty();
        if pending {
            c.work().await;
        }
        let next_retry = c.retries.values().map(|r| r.due).min();
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = tokio::time::sleep_until(next_retry.unwrap_or_else(Instant::now).into()),
                if next_retry.is_some() => {}
            ev = events.recv() => match ev {
                Ok(ev) => {
                    c.observe(&ev);
                    loop {
                        match events.try_recv() {
                            Ok(ev) => c.observe(&ev),
                            Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {
                                c.rescan();
                            }
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => c.rescan(),
                Err(RecvError::Closed) => return,
            },
        }
    }
}

impl Collector {
    /// Rebuilds the graph from the cache and queues everything that may need work (at start,
    /// and when the change feed was missed).
    fn rescan(&mut self) {
        self.graph = Graph::default();
        let snap = self.registry.reads().snapshot(keys::REGISTRY_PREFIX);
        for o in &snap.objects {
            self.index(o);
        }
        self.dependents.extend(self.graph.owners_of.keys().cloned());
    }

    /// Indexes one live object; queues it as an owner when it carries a GC finalizer.
    fn index(&mut self, o: &Arc<CachedObject>) {
        if mentions(o, b"\"ownerReferences\"") {
            self.graph.set(&o.key, view(o).owner_references);
        } else {
            self.graph.remove(&o.key);
        }
        if mentions(o, b"\"deletionTimestamp\"")
            && (mentions(o, b"\"foregroundDeletion\"") || mentions(o, b"\"orphan\""))
        {
            self.owners.insert(o.key.clone());
        }
    }

    fn observe(&mut self, ev: &CacheEvent) {
        let o = &ev.object;
        match ev.event_type {
            EventType::Delete => {
                let refs = self.graph.remove(&o.key);
                // Owners waiting for this dependent may now be done.
                if !refs.is_empty() {
                    let res = self.registry.resources();
                    let ns = namespace_of(&res, &o.key, o);
                    for r in &refs {
                        if let Some((_, key)) = owner_key(&res, r, ns.as_deref()) {
                            self.owners.insert(key.into());
                        }
                    }
                }
                // Its dependents lost an owner.
                if !self.graph.dependents.is_empty() {
                    let uid = view(o).uid;
                    if let Some(deps) = self.graph.dependents.get(&uid) {
                        self.dependents.extend(deps.iter().cloned());
                    }
                }
                self.owners.remove(&o.key);
            }
            EventType::Put => {
                let old_refs = self.graph.owners_of.get(&o.key).cloned();
                let had_refs = old_refs.is_some();
                self.index(o);
                // An owner waiting in the foreground for this dependent may be free now that
                // the dependent no longer blocks it (the collector unblocks cycles so).
                if let Some(old) = old_refs {
                    let new = self.graph.owners_of.get(&o.key);
                    let unblocked: Vec<&OwnerRef> = old
                        .iter()
                        .filter(|r| r.block_owner_deletion == Some(true))
                        .filter(|r| {
                            !new.is_some_and(|n| {
                                n.iter()
                                    .any(|x| x.uid == r.uid && x.block_owner_deletion == Some(true))
                            })
                        })
                        .collect();
                    if !unblocked.is_empty() {
                        let res = self.registry.resources();
                        let ns = namespace_of(&res, &o.key, o);
                        for r in unblocked {
                            if let Some((_, key)) = owner_key(&res, r, ns.as_deref()) {
                                self.owners.insert(key.into());
                            }
                        }
                    }
                }
                let has_refs = self.graph.owners_of.contains_key(&o.key);
                if has_refs {
                    let changed = !had_refs
                        || ev.prev.as_ref().is_none_or(|p| {
                            view(p).owner_references
                                != self
                                    .graph
                                    .owners_of
                                    .get(&o.key)
                                    .cloned()
                                    .unwrap_or_default()
                        });
                    if changed {
                        self.dependents.insert(o.key.clone());
                    }
                }
            }
        }
    }

    /// Queues the failed work whose retry is due.
    fn queue_due_retries(&mut self, now: Instant) {
        for ((queue, key), r) in &self.retries {
            if r.due <= now {
                match queue {
                    Queue::Owner => self.owners.insert(key.clone()),
                    Queue::Dependent => self.dependents.insert(key.clone()),
                };
            }
        }
    }

    /// Records the outcome of one piece of work: a failure is retried later, with backoff.
    fn settle(&mut self, queue: Queue, key: Arc<str>, result: Result<(), crest_api::ApiError>) {
        match result {
            Ok(()) => {
                self.retries.remove(&(queue, key));
            }
            Err(e) => {
                let r = self.retries.entry((queue, key.clone())).or_insert(Retry {
                    failures: 0,
                    due: Instant::now(),
                });
                r.failures = r.failures.saturating_add(1);
                let delay = retry_delay(r.failures);
                r.due = Instant::now() + delay;
                tracing::debug!(%key, error = %e.message, ?queue, ?delay, "garbage collector: will retry");
            }
        }
    }

    /// Processes the queues; what fails is retried after a delay.
    async fn work(&mut self) {
        let owners = std::mem::take(&mut self.owners);
        for key in owners {
            let result = self.process_owner(&key).await;
            self.settle(Queue::Owner, key, result);
        }
        let dependents = std::mem::take(&mut self.dependents);
        for key in dependents {
            let result = self.attempt_to_delete(&key).await;
            self.settle(Queue::Dependent, key, result);
        }
    }

    fn owner_state(&self, res: &Resources, r: &OwnerRef, ns: Option<&str>) -> OwnerState {
        let Some((_, key)) = owner_key(res, r, ns) else {
            return OwnerState::Unknown;
        };
        let Some(owner) = self.registry.reads().get(&key) else {
            return OwnerState::Absent;
        };
        let Some(m) = try_view(&owner) else {
            return OwnerState::Unknown;
        };
        if m.uid != r.uid {
            return OwnerState::Absent;
        }
        if m.deleting() && m.has_finalizer(FOREGROUND_FINALIZER) {
            return OwnerState::Waiting;
        }
        OwnerState::Solid
    }

    /// `attemptToDeleteItem`: a dependent whose owners are all gone (or waiting for it) is
    /// deleted; one with a remaining owner loses its references to the others.
    async fn attempt_to_delete(&mut self, key: &Arc<str>) -> Result<(), crest_api::ApiError> {
        let Some(o) = self.registry.reads().get(key) else {
            return Ok(());
        };
        let m = view(&o);
        let deleting = m.deleting();
        if deleting && !m.has_finalizer(FOREGROUND_FINALIZER) {
            return Ok(());
        }
        let refs = &m.owner_references;
        if refs.is_empty() {
            return Ok(());
        }
        let res = self.registry.resources();
        let Some((def, ns, name)) = locate(&res, key, &m) else {
            return Ok(());
        };
        let (mut solid, mut gone, mut waiting) = (0, vec![], vec![]);
        for r in refs {
            match self.owner_state(&res, r, ns.as_deref()) {
                OwnerState::Solid | OwnerState::Unknown => solid += 1,
                OwnerState::Waiting => waiting.push(r.uid.clone()),
                OwnerState::Absent => gone.push(r.uid.clone()),
            }
        }
        if solid > 0 {
            if gone.is_empty() && waiting.is_empty() {
                return Ok(());
            }
            // Another owner keeps it: only the references to the absent and waiting owners go.
            let drop: HashSet<String> = gone.into_iter().chain(waiting).collect();
            return self
                .remove_owner_refs(&def, ns.as_deref(), &name, &m.uid, &drop)
                .await;
        }
        if deleting {
            return Ok(());
        }
        // Dependents of a foreground deletion that own objects themselves go in the foreground
        // too, so the chain is deleted bottom-up; otherwise in the background.
        let own_dependents = self.graph.dependents.get(&m.uid);
        let propagation = if !waiting.is_empty() && own_dependents.is_some() {
            // A cycle (one of its own dependents is waiting for its dependents in the
            // foreground, as its owner is): its references stop blocking, or each would wait
            // for the other forever (upstream's `unblockOwnerReferences`).
            let cycle = own_dependents.is_some_and(|deps| {
                deps.iter().any(|d| {
                    self.registry.reads().get(d).is_some_and(|o| {
                        mentions(&o, b"\"deletionTimestamp\"") && {
                            let dm = view(&o);
                            dm.deleting() && dm.has_finalizer(FOREGROUND_FINALIZER)
                        }
                    })
                })
            });
            if cycle && refs.iter().any(|r| r.block_owner_deletion == Some(true)) {
                self.unblock_owner_refs(&def, ns.as_deref(), &name, &m.uid)
                    .await?;
            }
            Propagation::Foreground
        } else {
            Propagation::Background
        };
        let mut opts = WriteOptions::by(KUBE_CONTROLLER_MANAGER);
        opts.cascade = Cascade {
            orphan_dependents: None,
            propagation: Some(propagation),
        };
        let pre = Preconditions {
            uid: Some(m.uid.clone()),
            resource_version: None,
        };
        match self
            .registry
            .delete(&def, ns.as_deref(), &name, &pre, &opts)
            .await
        {
            Ok(_) => Ok(()),
            // Gone or replaced meanwhile: nothing to collect.
            Err(e) if e.code == 404 || e.code == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// An object being deleted with a GC finalizer: orphan its dependents, or wait for the
    /// blocking ones to be gone (deleting them), then drop the finalizer.
    async fn process_owner(&mut self, key: &Arc<str>) -> Result<(), crest_api::ApiError> {
        let Some(o) = self.registry.reads().get(key) else {
            return Ok(());
        };
        let m = view(&o);
        if !m.deleting() {
            return Ok(());
        }
        let orphan = m.has_finalizer(ORPHAN_FINALIZER);
        if !orphan && !m.has_finalizer(FOREGROUND_FINALIZER) {
            return Ok(());
        }
        let res = self.registry.resources();
        let Some((def, ns, name)) = locate(&res, key, &m) else {
            return Ok(());
        };
        let deps: Vec<Arc<str>> = self
            .graph
            .dependents
            .get(&m.uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        let done = if orphan {
            let drop: HashSet<String> = [m.uid.clone()].into();
            for dep in &deps {
                let Some(d) = self.registry.reads().get(dep) else {
                    continue;
                };
                let dm = view(&d);
                if let Some((ddef, dns, dname)) = locate(&res, dep, &dm) {
                    self.remove_owner_refs(&ddef, dns.as_deref(), &dname, &dm.uid, &drop)
                        .await?;
                }
            }
            ORPHAN_FINALIZER
        } else {
            let mut blocking = false;
            for dep in &deps {
                if dep == key {
                    // An object that names itself as its owner waits for nothing but itself.
                    continue;
                }
                let Some(d) = self.registry.reads().get(dep) else {
                    continue;
                };
                let blocks = self.graph.owners_of.get(dep).is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r.uid == m.uid && r.block_owner_deletion == Some(true))
                });
                blocking |= blocks;
                // The byte search spares decoding dependents that cannot be deleting.
                if !(mentions(&d, b"\"deletionTimestamp\"") && view(&d).deleting()) {
                    self.dependents.insert(dep.clone());
                }
            }
            if blocking {
                // The queued dependents are deleted next; their DELETED events bring the owner
                // back here.
                return Ok(());
            }
            FOREGROUND_FINALIZER
        };
        self.update_if_uid(&def, ns.as_deref(), &name, m.uid, move |obj| {
            let kept: Vec<Value> = meta::finalizers(obj)
                .into_iter()
                .filter(|f| f != done)
                .map(Value::String)
                .collect();
            meta::set(obj, "finalizers", Value::Array(kept));
        })
        .await
    }

    /// Changes the object if it is still the one with `uid`; an object gone meanwhile needs
    /// nothing.
    async fn update_if_uid(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        uid: String,
        f: impl Fn(&mut Value),
    ) -> Result<(), crest_api::ApiError> {
        match self
            .registry
            .update_with(
                def,
                ns,
                name,
                UpdateMode::Main,
                KUBE_CONTROLLER_MANAGER,
                move |obj| {
                    if meta::uid(obj) == uid {
                        f(obj)
                    }
                },
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.code == 404 => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Sets `blockOwnerDeletion: false` on every owner reference of the object that blocks.
    async fn unblock_owner_refs(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        uid: &str,
    ) -> Result<(), crest_api::ApiError> {
        self.update_if_uid(def, ns, name, uid.to_string(), |obj| {
            for r in owner_refs_mut(obj).into_iter().flatten() {
                if let Some(b) = r.get_mut("blockOwnerDeletion").filter(|b| **b == true) {
                    *b = Value::Bool(false);
                }
            }
        })
        .await
    }

    async fn remove_owner_refs(
        &self,
        def: &ResourceDef,
        ns: Option<&str>,
        name: &str,
        uid: &str,
        drop: &HashSet<String>,
    ) -> Result<(), crest_api::ApiError> {
        self.update_if_uid(def, ns, name, uid.to_string(), |obj| {
            let Some(refs) = owner_refs_mut(obj) else {
                return;
            };
            refs.retain(|r| {
                !r.get("uid")
                    .and_then(Value::as_str)
                    .is_some_and(|u| drop.contains(u))
            });
            if refs.is_empty() {
                meta::remove(obj, "ownerReferences");
            }
        })
        .await
    }
}

fn owner_refs_mut(obj: &mut Value) -> Option<&mut Vec<Value>> {
    obj.pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
}

/// The served definition (storage version), namespace and name of a cached object.
fn locate(
    res: &Resources,
    key: &str,
    m: &MetaView,
) -> Option<(Arc<ResourceDef>, Option<String>, String)> {
    let def = res
        .storage_defs()
        .into_iter()
        .filter(|d| key.starts_with(d.key_prefix.as_str()))
        .max_by_key(|d| d.key_prefix.len())?;
    let ns = def.api.namespaced.then(|| m.namespace.clone());
    Some((def, ns, m.name.clone()))
}

fn namespace_of(res: &Resources, key: &str, o: &CachedObject) -> Option<String> {
    locate(res, key, &view(o)).and_then(|(_, ns, _)| ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_work_backs_off_exponentially_to_a_cap() {
        let secs: Vec<u64> = [1, 2, 3, 4, 9, 10, 40, u32::MAX]
            .iter()
            .map(|&f| retry_delay(f).as_secs())
            .collect();
        assert_eq!(secs, [1, 2, 4, 8, 256, 300, 300, 300]);
    }

    #[test]
    fn graph_tracks_dependents() {
        let mut g = Graph::default();
        let key: Arc<str> = "/registry/x/a".into();
        let r = |uid: &str| OwnerRef {
            api_version: "v1".into(),
            kind: "K".into(),
            name: "o".into(),
            uid: uid.into(),
            block_owner_deletion: None,
        };
        g.set(&key, vec![r("1"), r("2")]);
        assert!(g.dependents["1"].contains(&key));
        g.set(&key, vec![r("2")]);
        assert!(!g.dependents.contains_key("1"));
        assert_eq!(g.remove(&key).len(), 1);
        assert!(g.dependents.is_empty() && g.owners_of.is_empty());
    }
}
