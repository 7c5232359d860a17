//! Strategic merge patch (`application/strategic-merge-patch+json`), as apimachinery's
//! `util/strategicpatch` applies it to built-in kinds: a JSON merge patch in which lists whose
//! field has the `merge` patch strategy are merged element by element (by the field's merge key,
//! or as a set for lists of primitives) instead of replaced, with the directives
//! `$patch` (`replace`, `delete`, `merge`), `$retainKeys`, `$setElementOrder/<field>` and
//! `$deleteFromPrimitiveList/<field>`.
//!
//! The patch strategy and merge key of each field come from a [`PatchMeta`] lookup (upstream's
//! `LookupPatchMeta`); the server implements it over the published OpenAPI definitions
//! (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`). Fields the lookup does not
//! know merge as in a JSON merge patch.
//!
//! Written here because no maintained Rust crate implements strategic merge patch.

use key::first_positions;
use serde_json::{Map, Value};
use std::collections::{HashSet, VecDeque};

mod key;
#[cfg(test)]
mod tests;

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// How deep patches are followed (bodies are bounded by the request size anyway).
const MAX_DEPTH: usize = 100;

/// A field's patch metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldMeta {
    /// The field's list is merged (`x-kubernetes-patch-strategy` contains `merge`).
    pub merge: bool,
    /// The field's map keeps only the keys the patch lists in `$retainKeys`.
    pub retain_keys: bool,
    /// The field is replaced whole (`replace`).
    pub replace: bool,
    /// The key list elements are merged by (`x-kubernetes-patch-merge-key`).
    pub merge_key: Option<String>,
}

impl FieldMeta {
    /// Parses `x-kubernetes-patch-strategy` (comma separated) and the merge key.
    pub fn parse(strategy: Option<&str>, merge_key: Option<&str>) -> FieldMeta {
        let mut m = FieldMeta {
            merge_key: merge_key.map(str::to_string),
            ..FieldMeta::default()
        };
        for s in strategy.unwrap_or("").split(',') {
            match s.trim() {
                "merge" => m.merge = true,
                "retainKeys" => m.retain_keys = true,
                "replace" => m.replace = true,
                _ => {}
            }
        }
        m
    }
}

/// The schema lookup a patch is applied with: for an object node, its fields; for a list node,
/// its elements. `None` means unknown: merged as a JSON merge patch would.
pub trait PatchMeta: Sized {
    /// Field `name` of the object at this node: its node and patch metadata.
    fn field(&self, name: &str) -> Option<(Self, FieldMeta)>;
    /// The elements of the list (or the values of the map) at this node.
    fn elements(&self) -> Option<Self>;
}

/// A lookup that knows nothing: every list is replaced.
#[derive(Clone, Copy, Debug)]
pub struct NoMeta;

impl PatchMeta for NoMeta {
    fn field(&self, _: &str) -> Option<(Self, FieldMeta)> {
        None
    }
    fn elements(&self) -> Option<Self> {
        None
    }
}

/// A patch that cannot be applied; the message is upstream's where it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError(pub String);

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Applies `patch` to `original` (both objects) with the lookup `meta` for the top level
/// (`StrategicMergeMapPatchUsingLookupPatchMeta`, with kube-apiserver's merge options: parallel
/// deletion lists honoured, nulls for absent fields ignored).
pub fn apply<M: PatchMeta>(original: &Value, patch: &Value, meta: &M) -> Result<Value, PatchError> {
    let Value::Object(p) = patch else {
        return Err(PatchError(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            crest_gofmt::json_kind(patch)
        )));
    };
    let o = original.as_object().cloned().unwrap_or_default();
    Ok(Value::Object(merge_map(o, p, Some(meta), 0)?))
}

fn too_deep() -> PatchError {
    PatchError("strategic merge patch nested too deeply".into())
}

/// `mergepatch.ErrBadPatchType`.
fn bad_patch_type(t: &Value, m: &Map<String, Value>) -> PatchError {
    PatchError(format!(
        "unknown patch type: {} in map: {}",
        go_value(t),
        go_map(m)
    ))
}

/// `mergepatch.ErrNoMergeKey`.
fn no_merge_key(m: &Map<String, Value>, key: &str) -> PatchError {
    PatchError(format!(
        "map: {} does not contain declared merge key: {key}",
        go_map(m)
    ))
}

/// The patch metadata of field `k` at `meta` (default: merged as a JSON merge patch would).
fn field_meta<M: PatchMeta>(meta: Option<&M>, k: &str) -> (Option<M>, FieldMeta) {
    match meta.and_then(|m| m.field(k)) {
        Some((n, fm)) => (Some(n), fm),
        None => (None, FieldMeta::default()),
    }
}

/// Merges a patch map into an original map (`mergeMap`).
fn merge_map<M: PatchMeta>(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    meta: Option<&M>,
    depth: usize,
) -> Result<Map<String, Value>, PatchError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    // handleDirectiveInMergeMap.
    match patch.get(DIRECTIVE) {
        None => {}
        Some(Value::String(d)) if d == "replace" => {
            let mut rest = patch.clone();
            rest.remove(DIRECTIVE);
            return clean_map(&rest, meta, depth + 1);
        }
        Some(Value::String(d)) if d == "delete" => return Ok(Map::new()),
        Some(other) => return Err(bad_patch_type(other, patch)),
    }
    // applyRetainKeysDirective.
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let Value::Array(keys) = retain else {
            return Err(PatchError("invalid patch format of retainKeys".into()));
        };
        let keep: HashSet<&str> = keys.iter().filter_map(Value::as_str).collect();
        // Every field the patch sets must be kept (nulls and the parallel lists aside).
        for (k, v) in patch {
            let directive = k == DIRECTIVE
                || k == RETAIN_KEYS
                || k.starts_with(SET_ELEMENT_ORDER)
                || k.starts_with(DELETE_FROM_PRIMITIVE_LIST);
            if !directive && !v.is_null() && !keep.contains(k.as_str()) {
                return Err(PatchError("invalid patch format of retainKeys".into()));
            }
        }
        original.retain(|k, _| keep.contains(k.as_str()));
    }
    // mergePatchIntoOriginal: `$setElementOrder/<field>` with the field's patch list.
    let mut done: HashSet<&str> = HashSet::new();
    for (k, order) in patch {
        let Some(field) = k.strip_prefix(SET_ELEMENT_ORDER) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(PatchError(format!(
                "invalid type for setElementOrder list: {}",
                go_value(order)
            )));
        };
        let (node, fm) = field_meta(meta, field);
        let elements = node.as_ref().and_then(PatchMeta::elements);
        let key = fm.merge_key.as_deref();
        let server = match original.get(field) {
            Some(Value::Array(l)) => Some(l.clone()),
            _ => None,
        };
        let merged = match (server.clone(), patch.get(field)) {
            (Some(o), None) => o,
            (None, Some(Value::Array(p))) => clean_list(p, elements.as_ref(), depth + 1)?,
            (Some(o), Some(Value::Array(p))) if fm.merge => {
                merge_list(o, p, elements.as_ref(), key, depth + 1)?
            }
            (_, Some(Value::Array(p))) => clean_list(p, elements.as_ref(), depth + 1)?,
            _ => continue,
        };
        let (in_order, server_only) = partition(merged, order, key)?;
        let all = normalize_order(
            in_order,
            server_only,
            order,
            server.as_deref().unwrap_or(&[]),
            key,
        )?;
        original.insert(field.to_string(), Value::Array(all));
        done.insert(field);
    }
    // Parallel deletion lists first: the field's own additions merge after them.
    for (k, v) in patch {
        let Some(field) = k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) else {
            continue;
        };
        let Value::Array(remove) = v else {
            return Err(PatchError(format!(
                "invalid type for deleteFromPrimitiveList list: {}",
                go_value(v)
            )));
        };
        if let Some(Value::Array(list)) = original.get_mut(field) {
            let remove: HashSet<&Value> = remove.iter().collect();
            list.retain(|x| !remove.contains(&x));
            // An emptied list goes, as the typed round trip after the patch drops it (the
            // built-in kinds' merge lists of scalars are all `omitempty`).
            if list.is_empty() {
                original.remove(field);
            }
        }
    }
    for (k, pv) in patch {
        if k.starts_with('$')
            && (k == DIRECTIVE
                || k == RETAIN_KEYS
                || k.starts_with(SET_ELEMENT_ORDER)
                || k.starts_with(DELETE_FROM_PRIMITIVE_LIST))
        {
            continue;
        }
        if done.contains(k.as_str()) {
            continue;
        }
        if pv.is_null() {
            original.remove(k);
            continue;
        }
        let (node, fm) = field_meta(meta, k);
        let merged = match (original.remove(k), pv) {
            (Some(Value::Object(o)), Value::Object(p)) if !fm.replace => {
                Value::Object(merge_map(o, p, node.as_ref(), depth + 1)?)
            }
            (Some(Value::Array(o)), Value::Array(p)) if fm.merge => {
                let elements = node.as_ref().and_then(PatchMeta::elements);
                let key = fm.merge_key.as_deref();
                Value::Array(merge_list(o, p, elements.as_ref(), key, depth + 1)?)
            }
            // Absent (or of another type, or replaced): the patch's value, its directives
            // applied to nothing.
            (_, p) => clean(p, node.as_ref(), &fm, depth + 1)?,
        };
        original.insert(k.clone(), merged);
    }
    Ok(original)
}

/// A patch value taken as the field's new value: directives in it applied to nothing.
fn clean<M: PatchMeta>(
    v: &Value,
    node: Option<&M>,
    fm: &FieldMeta,
    depth: usize,
) -> Result<Value, PatchError> {
    match v {
        Value::Object(m) if !fm.replace => {
            Ok(Value::Object(merge_map(Map::new(), m, node, depth)?))
        }
        Value::Array(l) if fm.merge => {
            let elements = node.and_then(PatchMeta::elements);
            Ok(Value::Array(merge_list(
                vec![],
                l,
                elements.as_ref(),
                fm.merge_key.as_deref(),
                depth,
            )?))
        }
        other => Ok(other.clone()),
    }
}

fn clean_map<M: PatchMeta>(
    m: &Map<String, Value>,
    meta: Option<&M>,
    depth: usize,
) -> Result<Map<String, Value>, PatchError> {
    merge_map(Map::new(), m, meta, depth)
}

fn clean_list<M: PatchMeta>(
    l: &[Value],
    elements: Option<&M>,
    depth: usize,
) -> Result<Vec<Value>, PatchError> {
    l.iter()
        .map(|v| match v {
            Value::Object(m) => Ok(Value::Object(clean_map(m, elements, depth)?)),
            other => Ok(other.clone()),
        })
        .collect()
}

/// Merges a patch list into an original list whose field has the merge strategy (`mergeSlice`).
fn merge_list<M: PatchMeta>(
    original: Vec<Value>,
    patch: &[Value],
    elements: Option<&M>,
    merge_key: Option<&str>,
    depth: usize,
) -> Result<Vec<Value>, PatchError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let maps = original.iter().chain(patch).any(Value::is_object);
    if !maps {
        // Scalars: the union, first occurrences kept.
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        let mut seen: HashSet<&Value> = HashSet::with_capacity(merged.capacity());
        for v in original.iter().chain(patch) {
            if seen.insert(v) {
                merged.push(v.clone());
            }
        }
        let (in_patch, server_only) = partition(merged, patch, None)?;
        return normalize_order(in_patch, server_only, patch, &original, None);
    }
    let Some(key) = merge_key else {
        return Err(PatchError(
            "cannot merge lists without merge key for type struct".into(),
        ));
    };
    // mergeSliceWithSpecialElements.
    let mut server = original;
    let mut plain: Vec<&Map<String, Value>> = vec![];
    let mut deleted: HashSet<&Value> = HashSet::new();
    let mut replace = false;
    for v in patch {
        let Value::Object(m) = v else {
            return Err(PatchError(format!(
                "the type of the slice elements must be the same: {}",
                go_value(v)
            )));
        };
        match m.get(DIRECTIVE) {
            None => plain.push(m),
            Some(Value::String(d)) if d == "delete" => {
                let Some(kv) = m.get(key) else {
                    return Err(no_merge_key(m, key));
                };
                deleted.insert(kv);
            }
            Some(Value::String(d)) if d == "replace" => replace = true,
            Some(Value::String(d)) if d == "merge" => {
                return Err(PatchError(
                    "merging lists cannot yet be specified in the patch".into(),
                ))
            }
            Some(other) => return Err(bad_patch_type(other, m)),
        }
    }
    // One pass for all the deletions (each a pass of its own would be quadratic).
    if !deleted.is_empty() {
        server.retain(|o| o.get(key).is_none_or(|kv| !deleted.contains(&kv)));
    }
    if replace {
        let list: Vec<Value> = plain.iter().map(|m| Value::Object((*m).clone())).collect();
        return clean_list(&list, elements, depth + 1);
    }
    // mergeSliceWithoutSpecialElements.
    let mut merged = server.clone();
    // Where each merge key value is in `merged` (upstream scans the list for each patch
    // element). Merging keeps an element's key, so the positions stay right; but a null key is
    // dropped by the merge, so each null-keyed server element is found once, in order.
    let mut at: std::collections::HashMap<&Value, usize> =
        first_positions(&server, |o| o.get(key).filter(|kv| !kv.is_null()));
    let mut null_keyed: VecDeque<usize> = server
        .iter()
        .enumerate()
        .filter(|(_, o)| o.get(key).is_some_and(Value::is_null))
        .map(|(i, _)| i)
        .collect();
    for m in &plain {
        let Some(kv) = m.get(key) else {
            return Err(no_merge_key(m, key));
        };
        let found = if kv.is_null() {
            null_keyed.pop_front()
        } else {
            at.get(&kv).copied()
        };
        match found {
            Some(i) => {
                let o = match std::mem::take(&mut merged[i]) {
                    Value::Object(o) => o,
                    _ => Map::new(),
                };
                merged[i] = Value::Object(merge_map(o, m, elements, depth + 1)?);
            }
            None => {
                if !kv.is_null() {
                    at.insert(kv, merged.len());
                }
                merged.push(Value::Object(clean_map(m, elements, depth + 1)?));
            }
        }
    }
    let order: Vec<Value> = plain.iter().map(|m| Value::Object((*m).clone())).collect();
    let (in_patch, server_only) = partition(merged, &order, Some(key))?;
    normalize_order(in_patch, server_only, &order, &server, Some(key))
}

/// The identity of a list element for ordering: its merge key's value (maps), or itself.
fn identity<'a>(v: &'a Value, merge_key: Option<&str>) -> Option<&'a Value> {
    match merge_key {
        Some(k) => v.get(k),
        None => Some(v),
    }
}

/// Splits `merged` into the elements `by` names and the others (`partition*ByPresentInList`).
fn partition(
    merged: Vec<Value>,
    by: &[Value],
    merge_key: Option<&str>,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut named = vec![];
    let mut others = vec![];
    let names = first_positions(by, |v| identity(v, merge_key));
    for v in merged {
        if let (Some(k), Value::Object(m)) = (merge_key, &v) {
            if !m.contains_key(k) {
                return Err(no_merge_key(m, k));
            }
        }
        let named_in_by = identity(&v, merge_key).is_some_and(|id| names.contains_key(&id));
        if named_in_by {
            named.push(v);
        } else {
            others.push(v);
        }
    }
    Ok((named, others))
}

/// `normalizeElementOrder`: the patch's elements sorted by `patch_order`, the server-only ones
/// by `server_order`, then interleaved by their positions in `server_order` (`mergeSortedSlice`:
/// a patch element the server did not have goes before the server-only elements left).
fn normalize_order(
    mut in_patch: Vec<Value>,
    mut server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>, PatchError> {
    // Positions looked up in indexes built once (upstream searches the order lists for each
    // element, which is quadratic in the list's length).
    let patch_pos = first_positions(patch_order, |v| identity(v, merge_key));
    let server_pos = first_positions(server_order, |v| identity(v, merge_key));
    let pos = |index: &std::collections::HashMap<&Value, usize>, v: &Value| {
        identity(v, merge_key).and_then(|id| index.get(&id).copied())
    };
    // The sorts are stable, as upstream's.
    in_patch.sort_by_cached_key(|v| pos(&patch_pos, v).unwrap_or(usize::MAX));
    server_only.sort_by_cached_key(|v| pos(&server_pos, v).unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(in_patch.len() + server_only.len());
    let with_pos = |list: Vec<Value>| -> Vec<(Option<usize>, Value)> {
        list.into_iter()
            .map(|v| (pos(&server_pos, &v), v))
            .collect()
    };
    let (mut left, mut right) = (
        with_pos(server_only).into_iter().peekable(),
        with_pos(in_patch).into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((l, _)), Some((r, _))) => matches!((l, r), (Some(a), Some(b)) if a < b),
        };
        out.extend(if take_left { left.next() } else { right.next() }.map(|(_, v)| v));
    }
    Ok(out)
}

/// Go's `%v` of a map (keys sorted), as upstream's errors print it.
fn go_map(m: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let parts: Vec<String> = keys
        .iter()
        .map(|k| format!("{k}:{}", go_value(&m[k.as_str()])))
        .collect();
    format!("map[{}]", parts.join(" "))
}

fn go_value(v: &Value) -> String {
    match v {
        Value::Object(m) => go_map(m),
        Value::Array(a) => format!("[{}]", a.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
