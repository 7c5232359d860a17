//! The field manager: what kube-apiserver does on every write, as structured-merge-diff's
//! `merge.Updater` (`Update`, `Apply` with its pruning of fields an applier stopped applying,
//! conflicts) wrapped in apimachinery's `util/managedfields/internal` layers (outermost first):
//! `versionCheckManager` (the applied kind must be the object's), `lastAppliedUpdater` and
//! `lastAppliedManager` (kubectl's `last-applied-configuration`: the client-side to
//! server-side apply migration), `skipNonAppliedManager` (`before-first-apply`),
//! `capManagersManager` (at most 10 Update entries, the oldest merged into `ancient-changes`),
//! `buildManagerInfoManager` (manager identifiers), `managedFieldsUpdater` (times, and no
//! Update entry for a write that changed nothing), `stripMetaManager` (apiVersion, kind and
//! server-owned metadata never owned), and `FieldManager`'s decoding of client-sent
//! managedFields (`decodeLiveOrNew`: an empty list clears them, an undecodable or empty list
//! keeps the stored ones) and its error handling (`UpdateNoErrors`). The apiserver's
//! `NewConflictError` / `getConflictMessage` give [`Conflicts`]' message and causes.
//!
//! All versions of a resource are taken to have the same fields (no conversion between the
//! versions managers used): comparisons are made once, in the request's version.

use crate::fieldpath::{Path, Set};
use crate::managed::{
    is_go_printable, is_reset, managed_fields_of, set_managed_fields, unix_seconds, Entry,
    ManagedFields, ManagerId, Operation,
};
use crate::schema::Schema;
use crate::typed::{self, Comparison, ValidationErrors};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

/// kubectl's client-side apply annotation.
pub(crate) const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// At most this many Update entries are kept (`DefaultMaxUpdateManagers`).
pub(crate) const MAX_UPDATE_MANAGERS: usize = 10;
/// The manager the oldest Update entries are merged into.
pub(crate) const ANCIENT_CHANGES: &str = "ancient-changes";
/// The manager owning what an object had when first applied to without managed fields.
pub(crate) const BEFORE_FIRST_APPLY: &str = "before-first-apply";
/// The total size annotations may have (`TotalAnnotationSizeLimitB`).
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// The paths no manager ever owns (upstream's `stripMetaManager`).
fn strip_set() -> &'static Set {
    static S: OnceLock<Set> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = Set::from_paths([
            Path::fields(&["apiVersion"]),
            Path::fields(&["kind"]),
            Path::fields(&["metadata"]),
        ]);
        for f in [
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        ] {
            s.insert(&Path::fields(&["metadata", f]).0);
        }
        s
    })
}

/// One field another manager owns with a different value.
#[derive(Clone, Debug, PartialEq)]
pub struct Conflict {
    pub manager: ManagerId,
    pub path: Path,
}

/// A `StatusCause` of the 409 answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictCause {
    /// `FieldManagerConflict`.
    pub reason: &'static str,
    /// `conflict with "<manager>"[ with subresource "<s>"][ using <apiVersion>]`.
    pub message: String,
    /// The path, e.g. `.spec.image`.
    pub field: String,
}

/// The conflicts of an apply, sorted by manager then in the order upstream walks a field set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    /// The causes of the 409 Status (reason `Conflict`, code 409).
    pub fn causes(&self) -> Vec<ConflictCause> {
        self.0
            .iter()
            .map(|c| ConflictCause {
                reason: "FieldManagerConflict",
                message: format!("conflict with {}", c.manager),
                field: c.path.to_string(),
            })
            .collect()
    }

    /// The conflicts as a set of paths.
    pub fn to_set(&self) -> Set {
        Set::from_paths(self.0.iter().map(|c| c.path.clone()))
    }
}

/// The 409 message, as the apiserver's `getConflictMessage`.
impl fmt::Display for Conflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() == 1 {
            let c = &self.0[0];
            return write!(
                f,
                "Apply failed with 1 conflict: conflict with {}: {}",
                c.manager, c.path
            );
        }
        // Grouped by manager, managers sorted by their identifier.
        let mut by: BTreeMap<String, (&ManagerId, Vec<&Path>)> = BTreeMap::new();
        for c in &self.0 {
            by.entry(c.manager.identifier())
                .or_insert_with(|| (&c.manager, Vec::new()))
                .1
                .push(&c.path);
        }
        let mut lines = Vec::new();
        for (m, paths) in by.values() {
            lines.push(format!("conflicts with {m}:"));
            for p in paths {
                lines.push(format!("- {p}"));
            }
        }
        write!(
            f,
            "Apply failed with {} conflicts: {}",
            self.0.len(),
            lines.join("\n")
        )
    }
}

/// Why an apply failed, with the HTTP status the apiserver answers.
#[derive(Clone, Debug, PartialEq)]
pub enum ApplyError {
    /// 409, reason `Conflict`, with [`Conflicts::causes`].
    Conflicts(Conflicts),
    /// 400, reason `BadRequest`.
    BadRequest(String),
    /// 500 with no reason (`StatusReasonUnknown`): upstream returns these as plain errors
    /// (`failed to create typed patch object (...): ...`).
    Internal(String),
}

impl ApplyError {
    /// The answer as kube-apiserver gives it: 409 `Conflict` with the causes and no other
    /// details (`NewApplyConflict`), 400 `BadRequest`, or 500 with no reason.
    pub fn to_api_error(&self) -> crest_api::ApiError {
        use crest_api::ApiError;
        match self {
            ApplyError::Conflicts(c) => {
                let causes: Vec<Value> = c
                    .causes()
                    .into_iter()
                    .map(|k| {
                        serde_json::json!({"reason": k.reason, "message": k.message, "field": k.field})
                    })
                    .collect();
                let mut details = Map::new();
                details.insert("causes".into(), Value::Array(causes));
                let mut e = ApiError::new(409, crest_api::Reason::Conflict, c.to_string());
                e.details = Some(details);
                e
            }
            ApplyError::BadRequest(m) => ApiError::bad_request(m.clone()),
            ApplyError::Internal(m) => ApiError::unknown(m.clone()),
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            ApplyError::Conflicts(_) => 409,
            ApplyError::BadRequest(_) => 400,
            ApplyError::Internal(_) => 500,
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApplyError::Conflicts(c) => write!(f, "{c}"),
            ApplyError::BadRequest(m) | ApplyError::Internal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ApplyError {}

/// The manager of a request (the apiserver's `managerOrUserAgent`): `fieldManager` when
/// given, else the User-Agent up to its first `/`, printable characters only, at most 128
/// bytes (`kubectl/v1.32.0 (linux/amd64) kubernetes/abc` → `kubectl`).
pub fn manager_or_user_agent(field_manager: Option<&str>, user_agent: &str) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_string();
    }
    let head = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in head.chars() {
        if !is_go_printable(c) {
            continue;
        }
        // At most 128 bytes, a character never cut (prefixFromUserAgent).
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

/// Removes from every manager but `except` what changed from `old` to `new`: the fields
/// another manager owns that were modified or added are conflicts (an error unless `force`,
/// else taken from it), removed fields are owned by no one any more (upstream's
/// `Updater.update`). Managers left with nothing are dropped.
fn update_others(
    cmp: &Comparison,
    managers: &mut ManagedFields,
    except: Option<&ManagerId>,
    force: bool,
) -> Result<(), Conflicts> {
    if managers.entries.keys().all(|id| Some(id) == except) {
        return Ok(());
    }
    let changed = if cmp.modified.is_empty() {
        std::borrow::Cow::Borrowed(&cmp.added)
    } else {
        std::borrow::Cow::Owned(cmp.modified.union(&cmp.added))
    };
    let mut conflicts: Vec<(ManagerId, Set)> = Vec::new();
    if !changed.is_empty() {
        for (id, e) in &managers.entries {
            if Some(id) == except {
                continue;
            }
            if !e.set.intersects(&changed) {
                continue;
            }
            let c = e.set.intersection(&changed);
            if !c.is_empty() {
                conflicts.push((id.clone(), c));
            }
        }
    }
    if !force && !conflicts.is_empty() {
        let list = conflicts
            .iter()
            .flat_map(|(id, s)| {
                s.paths().into_iter().map(|path| Conflict {
                    manager: id.clone(),
                    path,
                })
            })
            .collect();
        return Err(Conflicts(list));
    }
    for (id, c) in &conflicts {
        if let Some(e) = managers.entries.get_mut(id) {
            e.subtract(c);
        }
    }
    if !cmp.removed.is_empty() {
        for (id, e) in managers.entries.iter_mut() {
            if Some(id) != except {
                e.subtract(&cmp.removed);
            }
        }
    }
    managers.entries.retain(|_, e| !e.set.is_empty());
    Ok(())
}

fn empty_object() -> &'static Value {
    static E: OnceLock<Value> = OnceLock::new();
    E.get_or_init(|| Value::Object(Map::new()))
}

/// The managers' sets reconciled with schema changes (upstream's
/// `reconcileManagedFieldsWithSchemaChanges`).
fn reconcile(schema: &Schema, managers: &mut ManagedFields) {
    for e in managers.entries.values_mut() {
        if let Some(fixed) = typed::reconcile_with_schema(schema, &e.set) {
            *e.set_mut() = fixed;
        }
    }
}

/// An Update operation (create, update, patch other than apply): the fields that changed from
/// `live` (`None` on create) to `new` become `manager`'s (an Update entry, its time `now` when
/// it changed something) and are no one else's; removed fields are no one's. `ignored` are
/// the fields the strategy resets for this resource and subresource (e.g. `status` for the
/// main resource of a kind with a status subresource, `spec` for /status): never owned here.
/// `new` must be valid for `schema` (duplicates in associative lists allowed): else the
/// validation errors, and the managers are left as they were.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update(
    schema: &Schema,
    live: Option<&Value>,
    new: &Value,
    managers: &mut ManagedFields,
    manager: &ManagerId,
    ignored: Option<&Set>,
    now: &str,
) -> Result<(), ValidationErrors> {
    typed::validate_with(schema, new, true)?;
    reconcile(schema, managers);
    let cmp = typed::compare(schema, Some(live.unwrap_or(empty_object())), Some(new));
    let cmp = match ignored {
        Some(i) => cmp.exclude(i),
        None => cmp,
    };
    let _ = update_others(&cmp, managers, None, true);
    let Comparison {
        added,
        modified,
        removed,
    } = cmp;
    let mut set = if modified.is_empty() {
        added
    } else {
        added.union(&modified)
    };
    set.subtract(&removed);
    if let Some(i) = ignored {
        set = set.recursive_difference(i);
    }
    set.subtract(strip_set());
    if set.is_empty() {
        return Ok(());
    }
    let set = match managers.entries.remove(manager) {
        Some(prev) => set.union(&prev.set),
        None => set,
    };
    managers.entries.insert(
        manager.clone(),
        Entry::new(set, &manager.api_version, Some(now.to_string())),
    );
    Ok(())
}

/// An Apply operation: `config` (valid for `schema`, see [`typed::validate`]) merged into
/// `live` (`None` when the object does not exist yet); the fields `manager` applied before
/// but no longer applies are removed unless another manager owns them; fields other managers
/// own with another value conflict unless `force` (which takes them). Returns the new object
/// (`None` when it equals `live`) after updating `managers` (`manager`'s entry: what the
/// configuration sets, in `api_version`, its time `now` when the object changed).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    schema: &Schema,
    live: Option<&Value>,
    config: &Value,
    managers: &mut ManagedFields,
    manager: &ManagerId,
    api_version: &str,
    ignored: Option<&Set>,
    force: bool,
    now: &str,
) -> Result<Option<Value>, Conflicts> {
    reconcile(schema, managers);
    let live_v = live.unwrap_or(empty_object());
    let mut merged = live_v.clone();
    let mut changed = typed::merge_into(schema, &mut merged, config);
    if !merged.is_object() {
        merged = Value::Object(Map::new());
    }
    let mut set = typed::to_field_set(schema, config);
    if let Some(i) = ignored {
        set = set.recursive_difference(i);
    }
    // The applier's entry is replaced; it is put back should the apply fail.
    let previous = managers
        .entries
        .insert(manager.clone(), Entry::new(set, api_version, None));
    let last = previous.as_ref().map(|e| &e.set);
    let (merged, pruned) = prune(schema, merged, managers, manager, last);
    if pruned {
        changed = !crate::fieldpath::values_equal(live_v, &merged);
    }
    // Only other managers can lose fields or conflict: alone, no comparison is needed.
    let alone = managers.entries.keys().all(|id| id == manager);
    if !alone {
        let cmp = typed::compare(schema, Some(live_v), Some(&merged));
        let cmp = match ignored {
            Some(i) => cmp.exclude(i),
            None => cmp,
        };
        if let Err(c) = update_others(&cmp, managers, Some(manager), force) {
            match previous {
                Some(p) => managers.entries.insert(manager.clone(), p),
                None => managers.entries.remove(manager),
            };
            return Err(c);
        }
        changed |= !cmp.is_same();
    }
    let work = managers;
    if let Some(e) = work.entries.get_mut(manager) {
        e.subtract(strip_set());
        if let Some(p) = &previous {
            // The same fields as before: their FieldsV1 text is reused.
            if p.set == e.set && p.api_version == e.api_version {
                e.raw = p.raw;
            }
        }
        e.time = if changed {
            Some(now.to_string())
        } else {
            previous.and_then(|p| p.time)
        };
    }
    work.entries.retain(|_, e| !e.set.is_empty());
    Ok(changed.then_some(merged))
}

/// Whether a path of `x` is in `l` or below a member of `l`.
fn touches(x: &Set, l: &Set) -> bool {
    x.members().iter().any(|m| l.has_member(m))
        || x.children()
            .iter()
            .any(|(pe, xc)| l.has_member(pe) || l.child(pe).is_some_and(|lc| touches(xc, lc)))
}

/// Removes what the applier owned before (`last`) and no longer applies, unless someone owns
/// it (upstream's `prune`, `addBackOwnedItems`, `addBackDanglingItems`). Skipped when every
/// path of `last` is still owned, or none of the fields below `last` is unowned: either
/// leaves nothing to remove.
fn prune(
    schema: &Schema,
    merged: Value,
    managers: &ManagedFields,
    manager: &ManagerId,
    last: Option<&Set>,
) -> (Value, bool) {
    let Some(last) = last.filter(|l| !l.is_empty()) else {
        return (merged, false);
    };
    // Everything applied before is still owned (typically: the same fields applied again):
    // nothing can be removed, as no path of `last` is then unowned.
    let gone = match managers.entries.get(manager) {
        Some(e) if last.is_subset(&e.set) => return (merged, false),
        Some(e) => last.difference(&e.set),
        None => last.clone(),
    };
    let mut still_owned = gone;
    for e in managers.entries.values() {
        if still_owned.is_subset(&e.set) {
            return (merged, false);
        }
        still_owned = still_owned.difference(&e.set);
    }
    let ensure = |s: &Set| typed::ensure_named_fields_are_members(schema, s);
    let l = ensure(last);
    let merged_set = ensure(&typed::to_field_set(schema, &merged));
    let mut owned = Set::new();
    for e in managers.entries.values() {
        owned = owned.union(&e.set);
    }
    let owned = ensure(&owned);
    if !touches(&merged_set.difference(&owned), &l) {
        return (merged, false);
    }
    let pruned = typed::remove_items(schema, &merged, &l);
    let pruned_set = ensure(&typed::to_field_set(schema, &pruned));
    let pruned = typed::remove_items(
        schema,
        &merged,
        &merged_set.difference(&pruned_set.union(&owned)),
    );
    let pruned_set = ensure(&typed::to_field_set(schema, &pruned));
    let out = typed::remove_items(
        schema,
        &merged,
        &merged_set.difference(&pruned_set).intersection(&l),
    );
    (out, true)
}

/// Merges the oldest Update entries into `ancient-changes` (one per apiVersion) until at most
/// `max` remain (upstream's `capUpdateManagers`).
pub(crate) fn cap_update_managers(managers: &mut ManagedFields, max: usize) {
    let mut updaters: Vec<ManagerId> = managers
        .entries
        .keys()
        .filter(|id| id.operation == Operation::Update)
        .cloned()
        .collect();
    if updaters.len() <= max {
        return;
    }
    // Each key computed once (a timestamp parse and an identifier), not per comparison.
    updaters.sort_by_cached_key(|id| {
        let time = managers.entries.get(id).and_then(|e| e.time.as_deref());
        (unix_seconds(time), id.identifier())
    });
    let mut first_of_version: BTreeMap<String, ManagerId> = BTreeMap::new();
    // The sets merged into each bucket, united once at the end: uniting them one at a time
    // copies the growing bucket every time, quadratic in the fields of thousands of entries.
    let mut merged: BTreeMap<ManagerId, Vec<Set>> = BTreeMap::new();
    let mut length = updaters.len();
    for id in updaters {
        if length <= max {
            break;
        }
        let Some(e) = managers.entries.get(&id).cloned() else {
            continue;
        };
        let bucket = ManagerId::update(ANCIENT_CHANGES, &e.api_version, "");
        match first_of_version.get(&e.api_version) {
            Some(first) => {
                if !managers.entries.contains_key(&bucket) {
                    if let Some(f) = managers.entries.remove(first) {
                        managers.entries.insert(bucket.clone(), f);
                    }
                }
                if let Some(b) = managers.entries.get_mut(&bucket) {
                    b.api_version = e.api_version.clone();
                    b.time = e.time.clone();
                    merged.entry(bucket.clone()).or_default().push(e.set);
                }
                if id != bucket {
                    managers.entries.remove(&id);
                }
                length -= 1;
            }
            None => {
                first_of_version.insert(e.api_version.clone(), id);
            }
        }
    }
    for (bucket, mut sets) in merged {
        if let Some(b) = managers.entries.get_mut(&bucket) {
            sets.push(std::mem::take(b.set_mut()));
            *b.set_mut() = union_all(sets);
        }
    }
}

/// The union of many sets, united in pairs so that each path is copied a logarithmic number of
/// times.
fn union_all(mut sets: Vec<Set>) -> Set {
    while sets.len() > 1 {
        let mut next = Vec::with_capacity(sets.len().div_ceil(2));
        let mut pairs = sets.chunks_exact(2);
        for pair in &mut pairs {
            next.push(pair[0].union(&pair[1]));
        }
        next.extend(pairs.remainder().iter().cloned());
        sets = next;
    }
    sets.pop().unwrap_or_default()
}

/// The field manager of one resource version and subresource: what the server calls on every
/// write. Build it per request (it only borrows); the [`Schema`] is compiled once per resource
/// version and cached by the caller.
#[derive(Clone, Copy, Debug)]
pub struct FieldManager<'a> {
    pub schema: &'a Schema,
    /// The request's `group/version` (`v1` for the core group).
    pub api_version: &'a str,
    /// The object's kind.
    pub kind: &'a str,
    /// `""` for the main resource, else `status`, `scale`, ...
    pub subresource: &'a str,
    /// The fields the strategy resets for this resource and subresource (upstream's
    /// `GetResetFields`): e.g. `status` for the main resource of a kind with a status
    /// subresource, `spec` for a custom resource's /status. Never owned by this endpoint.
    pub reset_fields: Option<&'a Set>,
}

fn meta_str<'v>(obj: &'v Value, name: &str) -> &'v str {
    obj.get("metadata")
        .and_then(|m| m.get(name))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Go's `schema.GroupVersionKind.String()` of an apiVersion and kind.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.split_once('/') {
        None => ("", api_version),
        Some((g, v)) if !v.contains('/') => (g, v),
        Some(_) => ("", ""),
    };
    format!("{group}/{version}, Kind={kind}")
}

impl FieldManager<'_> {
    fn name_or_unknown(manager: &str) -> &str {
        if manager.is_empty() {
            "unknown"
        } else {
            manager
        }
    }

    /// Records an Update (create: `live` is `None`; update; any patch but apply) on `new`, the
    /// object about to be stored: sets its `metadata.managedFields` as upstream's
    /// `FieldManager.UpdateNoErrors`. The managed fields are those `new` carries when it
    /// carries decodable ones (a client may edit them; an empty list, or one empty entry,
    /// clears them), else `live`'s; on a subresource always `live`'s. An object updated
    /// while it has no managed fields gets none. Should the new object not fit the schema,
    /// `live`'s managed fields are kept.
    pub fn update(&self, live: Option<&Value>, new: &mut Value, manager: &str, now: &str) {
        let live_mf = live.and_then(managed_fields_of);
        let mut managed = if !self.subresource.is_empty() {
            ManagedFields::decode(live_mf).unwrap_or_default()
        } else if is_reset(managed_fields_of(new)) {
            ManagedFields::default()
        } else {
            let sent = managed_fields_of(new);
            // Unchanged from the stored object (a patch, or a client sending back what it
            // read): decoded as the stored ones.
            let unchanged = match (sent, live_mf) {
                (Some(a), Some(b)) => crate::fieldpath::values_equal(a, b),
                _ => false,
            };
            match ManagedFields::decode(sent) {
                Ok(mut m) if !m.is_empty() => {
                    if !unchanged {
                        m.forget_raw();
                    }
                    m
                }
                _ => ManagedFields::decode(live_mf).unwrap_or_default(),
            }
        };
        set_managed_fields(new, None);
        if managed.is_empty() && live.is_some_and(|l| !meta_str(l, "uid").is_empty()) {
            return;
        }
        if live.is_some_and(|l| typed::validate_with(self.schema, l, true).is_err()) {
            set_managed_fields(new, live_mf.cloned());
            return;
        }
        let id = ManagerId::update(
            Self::name_or_unknown(manager),
            self.api_version,
            self.subresource,
        );
        match update(
            self.schema,
            live,
            new,
            &mut managed,
            &id,
            self.reset_fields,
            now,
        ) {
            Ok(()) => {
                cap_update_managers(&mut managed, MAX_UPDATE_MANAGERS);
                managed.encode_into_from(new, live_mf);
            }
            Err(_) => set_managed_fields(new, live_mf.cloned()),
        }
    }

    /// Applies `config` (the decoded body of an `application/apply-patch+yaml` request) to
    /// `live` (`None`: the object does not exist, apply creates it) for `manager` (the
    /// request's `fieldManager`, required by the handler), taking conflicting fields when
    /// `force`. Returns the object to store, with its `metadata.managedFields` (the live
    /// object when nothing changed); the server then defaults, validates and stores it as
    /// for any patch (a dry run just does not store it).
    pub fn apply(
        &self,
        live: Option<&Value>,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, ApplyError> {
        let cfg_av = config
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let cfg_kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
        // In upstream's order: the stored managed fields, the kind, the first apply's
        // `before-first-apply`, then the configuration and the live object as typed values.
        let mut managed = ManagedFields::decode(live.and_then(managed_fields_of))
            .map_err(|e| ApplyError::Internal(format!("failed to decode managed fields: {e}")))?;
        if cfg_av != self.api_version || cfg_kind != self.kind {
            return Err(ApplyError::BadRequest(format!(
                "invalid object type: {}",
                gvk_string(cfg_av, cfg_kind)
            )));
        }
        let gvknn = |o: &Value| {
            format!(
                "{}/{}; {}",
                meta_str(o, "namespace"),
                meta_str(o, "name"),
                gvk_string(
                    o.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                    o.get("kind").and_then(Value::as_str).unwrap_or("")
                )
            )
        };
        if managed.is_empty() {
            if let Some(l) = live {
                let id = ManagerId::update(BEFORE_FIRST_APPLY, self.api_version, self.subresource);
                update(
                    self.schema,
                    None,
                    l,
                    &mut managed,
                    &id,
                    self.reset_fields,
                    now,
                )
                .map_err(|e| {
                    ApplyError::Internal(format!(
                        "failed to create manager for existing fields: failed to convert new object ({}) to smd typed: {e}",
                        gvknn(l)
                    ))
                })?;
                cap_update_managers(&mut managed, MAX_UPDATE_MANAGERS);
            }
        }
        if managed_fields_of(config).is_some_and(|m| !m.is_null()) {
            return Err(ApplyError::BadRequest(
                "metadata.managedFields must be nil".into(),
            ));
        }
        typed::validate(self.schema, config).map_err(|errs| {
            ApplyError::Internal(format!(
                "failed to create typed patch object ({}): {errs}",
                gvknn(config)
            ))
        })?;
        if let Some(l) = live {
            typed::validate_with(self.schema, l, true).map_err(|errs| {
                ApplyError::Internal(format!(
                    "failed to create typed live object ({}): {errs}",
                    gvknn(l)
                ))
            })?;
        }
        let id = ManagerId::apply(Self::name_or_unknown(manager), self.subresource);
        let run = |managed: &mut ManagedFields, force: bool| {
            apply(
                self.schema,
                live,
                config,
                managed,
                &id,
                self.api_version,
                self.reset_fields,
                force,
                now,
            )
        };
        let result = match run(&mut managed, force) {
            Ok(v) => v,
            Err(conflicts) if manager == "kubectl" => {
                let Some(allowed) = self.allowed_from_last_applied(live) else {
                    return Err(ApplyError::Conflicts(conflicts));
                };
                let rest: Vec<Conflict> = conflicts
                    .0
                    .into_iter()
                    .filter(|c| !allowed.has(&c.path.0))
                    .collect();
                if !rest.is_empty() {
                    return Err(ApplyError::Conflicts(Conflicts(rest)));
                }
                run(&mut managed, true).map_err(ApplyError::Conflicts)?
            }
            Err(conflicts) => return Err(ApplyError::Conflicts(conflicts)),
        };
        let mut obj = match result {
            Some(v) => v,
            None => live.cloned().unwrap_or_else(|| empty_object().clone()),
        };
        if manager == "kubectl" && has_last_applied(&obj) {
            set_last_applied(&mut obj, build_last_applied(config));
        }
        managed.encode_into_from(&mut obj, live.and_then(managed_fields_of));
        Ok(obj)
    }

    /// The fields kubectl's last-applied-configuration says kubectl applied and the live
    /// object still has with those values (upstream's `allowedConflictsFromLastApplied`).
    fn allowed_from_last_applied(&self, live: Option<&Value>) -> Option<Set> {
        let live = live?;
        let text = live
            .get("metadata")?
            .get("annotations")?
            .get(LAST_APPLIED_ANNOTATION)?
            .as_str()
            .filter(|s| !s.is_empty())?;
        let last: Value = serde_json::from_str(text).ok()?;
        if last.get("apiVersion").and_then(Value::as_str) != Some(self.api_version) {
            return None;
        }
        typed::validate(self.schema, &last).ok()?;
        let set = typed::to_field_set(self.schema, &last);
        let cmp = typed::compare(self.schema, Some(&last), Some(live));
        Some(
            set.difference(&cmp.modified)
                .difference(&cmp.added)
                .difference(&cmp.removed),
        )
    }
}

fn has_last_applied(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LAST_APPLIED_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// The applied configuration without the annotation, as kubectl's annotation holds it (Go's
/// JSON of the unstructured object, with the encoder's newline).
fn build_last_applied(config: &Value) -> String {
    let mut c = config.clone();
    if let Some(a) = c
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED_ANNOTATION);
    }
    let mut s = crest_gofmt::go_jsoniter(&c);
    s.push('\n');
    s
}

/// Sets the annotation unless annotations would then exceed their total size limit.
fn set_last_applied(obj: &mut Value, value: String) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let ann = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(ann) = ann.as_object_mut() else {
        return;
    };
    ann.insert(LAST_APPLIED_ANNOTATION.into(), Value::String(value));
    let size: usize = ann
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        ann.remove(LAST_APPLIED_ANNOTATION);
    }
}

/// The errors of a PATCH's options as apimachinery's `ValidatePatchOptions` reports them
/// (answered 422 as `PatchOptions.meta.k8s.io "" is invalid: ...`): `force` only on apply,
/// `fieldManager` required on apply (`fieldManager: Required value: is required for apply
/// patch`), and a valid manager name.
pub fn validate_patch_options(
    apply: bool,
    field_manager: &str,
    force_given: bool,
) -> Vec<crest_api::FieldError> {
    use crest_api::{FieldError, FieldPath};
    let mut errs = Vec::new();
    if !apply {
        if force_given {
            errs.push(FieldError::forbidden(
                &FieldPath::new("force"),
                "may not be specified for non-apply patch",
            ));
        }
    } else if field_manager.is_empty() {
        errs.push(FieldError::required(
            &FieldPath::new("fieldManager"),
            "is required for apply patch",
        ));
    }
    errs.extend(crate::managed::validate_field_manager(
        field_manager,
        &FieldPath::new("fieldManager"),
    ));
    errs
}

/// The reset-field set of paths given by field names (`reset_fields(&[&["status"]])`).
pub fn reset_fields(paths: &[&[&str]]) -> Set {
    Set::from_paths(paths.iter().map(|p| Path::fields(p)))
}
