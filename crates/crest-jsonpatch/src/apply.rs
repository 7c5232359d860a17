//! The operations, as v4's `Patch.add`, `remove`, `replace`, `move`, `test` and `copy` over
//! its containers (`partialDoc`, `partialArray`), with v4's checks in v4's order and its texts.

use crate::node::{Arr, Node, Obj};
use crate::{ApplyError, Operation, MAX_NESTING};
use serde_json::Value;

type Result<T> = std::result::Result<T, ApplyError>;

fn failed(message: impl Into<String>) -> ApplyError {
    ApplyError::Failed(message.into())
}

pub(crate) fn apply(ops: &[Operation], doc: &Value, max_copy_bytes: u64) -> Result<Value> {
    // v4 decodes the document into a `partialArray` if it starts with `[`, else a `partialDoc`
    // (a `null` document is a nil map).
    let mut root = match doc {
        Value::Object(_) | Value::Array(_) => Node::from_doc(doc),
        Value::Null => Node::CopiedNull,
        other => {
            return Err(failed(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.partialDoc",
                crest_gofmt::json_kind(other)
            )))
        }
    };
    if root.height() > MAX_NESTING {
        return Err(ApplyError::TooDeep);
    }
    let mut copied = 0u64;
    for op in ops {
        match op.kind.as_str() {
            "add" => add(&mut root, op)?,
            "remove" => remove(&mut root, op)?,
            "replace" => replace(&mut root, op)?,
            "move" => move_(&mut root, op)?,
            "test" => test(&mut root, op)?,
            "copy" => copy(&mut root, op, &mut copied, max_copy_bytes)?,
            other => return Err(failed(format!("Unexpected kind: {other}"))),
        }
    }
    root.into_value()
}

/// RFC 6901's unescaping of one segment (`~1` is `/`, `~0` is `~`, in one pass).
fn unescape(segment: &str) -> String {
    if !segment.contains('~') {
        return segment.to_string();
    }
    let mut out = String::with_capacity(segment.len());
    let mut rest = segment;
    while let Some(i) = rest.find('~') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(a) = after.strip_prefix('1') {
            out.push('/');
            rest = a;
        } else if let Some(a) = after.strip_prefix('0') {
            out.push('~');
            rest = a;
        } else {
            out.push('~');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Go's `strconv.Atoi` (int is 64 bits), with its `*NumError` text.
pub(crate) fn atoi(s: &str) -> std::result::Result<i64, String> {
    let quoted = || crest_gofmt::go_quote(s);
    let syntax = || format!("strconv.Atoi: parsing {}: invalid syntax", quoted());
    let range = || format!("strconv.Atoi: parsing {}: value out of range", quoted());
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return Err(syntax());
    }
    // ParseUint's loop: the first non-digit is a syntax error, an overflow before it a range
    // error.
    let mut n: u64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return Err(syntax());
        }
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
        {
            Some(n) => n,
            None => return Err(range()),
        };
    }
    const CUTOFF: u64 = 1 << 63;
    match (neg, n) {
        (false, n) if n >= CUTOFF => Err(range()),
        (true, n) if n > CUTOFF => Err(range()),
        (true, n) => Ok(0i64.wrapping_sub_unsigned(n)),
        (false, n) => Ok(n as i64),
    }
}

fn invalid_index(idx: i64) -> String {
    format!("Unable to access invalid index: {idx}: invalid index referenced")
}

/// `partialArray.get`'s index (and `set`'s): negative counts from the end.
fn existing_index(len: usize, key: &str) -> std::result::Result<usize, String> {
    let mut idx = atoi(key)?;
    let len = len as i64;
    if idx < 0 {
        if idx < -len {
            return Err(invalid_index(idx));
        }
        idx += len;
    }
    if idx >= len {
        return Err(invalid_index(idx));
    }
    Ok(idx as usize)
}

/// A container found by `findObject`, with the key of the last segment.
enum Slot<'a> {
    Obj(&'a mut Obj),
    Arr(&'a mut Arr),
    /// A copied `null` entered: a nil `partialDoc`.
    NilMap,
}

const NIL_MAP: &str = "assignment to entry in nil map (a copied null)";

impl Slot<'_> {
    /// `get`: `None` for a nil node (a missing member or a `null`).
    fn get(&self, key: &str) -> std::result::Result<Option<&Node>, String> {
        let n = match self {
            Slot::Obj(o) => o.map.get(key),
            Slot::Arr(a) => Some(&a.items[existing_index(a.items.len(), key)?]),
            Slot::NilMap => None,
        };
        Ok(n.filter(|n| !matches!(n, Node::Null)))
    }

    /// `add`; `fits`: whether the value may go here without nesting too deep.
    fn add(self, key: &str, val: Node, fits: bool) -> Result<()> {
        match self {
            Slot::Obj(o) => {
                if !fits {
                    return Err(ApplyError::TooDeep);
                }
                o.map.insert(key.to_string(), val);
            }
            Slot::Arr(a) => {
                let idx = if key == "-" {
                    a.items.len()
                } else {
                    let mut idx = atoi(key).map_err(|e| {
                        failed(format!("value was not a proper array index: '{key}': {e}"))
                    })?;
                    let size = a.items.len() as i64 + 1;
                    if idx >= size {
                        return Err(failed(invalid_index(idx)));
                    }
                    if idx < 0 {
                        if idx < -size {
                            return Err(failed(invalid_index(idx)));
                        }
                        idx += size;
                    }
                    idx as usize
                };
                if !fits {
                    return Err(ApplyError::TooDeep);
                }
                a.items.insert(idx, val);
            }
            Slot::NilMap => return Err(ApplyError::Panics(NIL_MAP)),
        }
        Ok(())
    }

    /// `set`, after `get` found the key.
    fn set(self, key: &str, val: Node, fits: bool) -> Result<()> {
        match self {
            Slot::Obj(o) => {
                if !fits {
                    return Err(ApplyError::TooDeep);
                }
                o.map.insert(key.to_string(), val);
            }
            Slot::Arr(a) => {
                let idx = existing_index(a.items.len(), key).map_err(failed)?;
                if !fits {
                    return Err(ApplyError::TooDeep);
                }
                a.items[idx] = val;
            }
            Slot::NilMap => return Err(ApplyError::Panics(NIL_MAP)),
        }
        Ok(())
    }

    /// `remove`, returning what was there.
    fn remove(self, key: &str) -> std::result::Result<Node, String> {
        let nonexistent = || format!("Unable to remove nonexistent key: {key}: missing value");
        match self {
            Slot::Obj(o) => o.map.remove(key).ok_or_else(nonexistent),
            Slot::Arr(a) => {
                let mut idx = atoi(key)?;
                let len = a.items.len() as i64;
                if idx >= len {
                    return Err(invalid_index(idx));
                }
                if idx < 0 {
                    if idx < -len {
                        return Err(invalid_index(idx));
                    }
                    idx += len;
                }
                Ok(a.items.remove(idx as usize))
            }
            Slot::NilMap => Err(nonexistent()),
        }
    }
}

struct Found<'a> {
    slot: Slot<'a>,
    key: String,
    /// How deep the container nests (the document is 1).
    depth: u32,
}

impl Found<'_> {
    /// Whether a node of height `h` fits in the container.
    fn fits(&self, h: u32) -> bool {
        self.depth.saturating_add(h) <= MAX_NESTING
    }
}

/// v4's `findObject`: the container the path's segments before the last lead to, and the last
/// segment; `None` where v4 finds nothing. `inserting`: the height of a node about to go into
/// the container, raising the height bounds of the containers on the way.
fn find<'a>(root: &'a mut Node, path: &str, inserting: Option<u32>) -> Result<Option<Found<'a>>> {
    let segments: Vec<&str> = path.split('/').collect();
    let [_, parts @ .., last] = segments.as_slice() else {
        return Ok(None);
    };
    let depth = u32::try_from(parts.len())
        .unwrap_or(u32::MAX)
        .saturating_add(1);
    let mut cur = root;
    // The containers on the way are at levels 1 (the document) to `depth`.
    for (level, part) in (1u32..).zip(parts) {
        if let Some(h) = inserting {
            cur.raise_height((depth.saturating_sub(level) + 1).saturating_add(h));
        }
        let key = unescape(part);
        let next = match cur {
            Node::Object(o) => match o.map.get_mut(&key) {
                Some(n) => n,
                None => return Ok(None),
            },
            Node::Array(a) => match existing_index(a.items.len(), &key) {
                Ok(i) => &mut a.items[i],
                Err(_) => return Ok(None),
            },
            _ => return Ok(None),
        };
        match next {
            Node::Object(_) | Node::Array(_) | Node::CopiedNull => cur = next,
            // `isArray(*next.raw)` of a node without raw bytes.
            Node::PatchNull => {
                return Err(ApplyError::Panics(
                    "a path through the null value of an earlier operation",
                ))
            }
            Node::Null | Node::Scalar(_) => return Ok(None),
        }
    }
    if let Some(h) = inserting {
        cur.raise_height(h.saturating_add(1));
    }
    let slot = match cur {
        Node::Object(o) => Slot::Obj(o),
        Node::Array(a) => Slot::Arr(a),
        Node::CopiedNull => Slot::NilMap,
        _ => return Ok(None),
    };
    Ok(Some(Found {
        slot,
        key: unescape(last),
        depth,
    }))
}

fn add(root: &mut Node, op: &Operation) -> Result<()> {
    let path = op
        .path
        .path()
        .map_err(|_| failed("add operation failed to decode path: missing value"))?;
    let val = op.value.clone().unwrap_or(Node::Null);
    let h = val.height();
    let Some(f) = find(root, path, Some(h))? else {
        return Err(failed(format!(
            "add operation does not apply: doc is missing path: \"{path}\": missing value"
        )));
    };
    let fits = f.fits(h);
    f.slot
        .add(&f.key, val, fits)
        .map_err(|e| e.context(format_args!("error in add for path: '{path}'")))
}

fn remove(root: &mut Node, op: &Operation) -> Result<()> {
    let path = op
        .path
        .path()
        .map_err(|_| failed("remove operation failed to decode path: missing value"))?;
    let Some(f) = find(root, path, None)? else {
        return Err(failed(format!(
            "remove operation does not apply: doc is missing path: \"{path}\": missing value"
        )));
    };
    f.slot
        .remove(&f.key)
        .map_err(|e| failed(format!("error in remove for path: '{path}': {e}")))?;
    Ok(())
}

fn replace(root: &mut Node, op: &Operation) -> Result<()> {
    let path = op
        .path
        .path()
        .map_err(|e| failed(format!("replace operation failed to decode path: {e}")))?;
    if path.is_empty() {
        // The whole document: an object or array replaces it; anything else is a no-op (v4
        // wraps a nil error there, which is no error).
        return match &op.value {
            None => Err(ApplyError::Panics(
                "a replace of the whole document without a value",
            )),
            Some(v @ (Node::Object(_) | Node::Array(_))) => {
                if v.height() > MAX_NESTING {
                    return Err(ApplyError::TooDeep);
                }
                *root = v.clone();
                Ok(())
            }
            Some(_) => Ok(()),
        };
    }
    let val = op.value.clone().unwrap_or(Node::Null);
    let h = val.height();
    let Some(f) = find(root, path, Some(h))? else {
        return Err(failed(format!(
            "replace operation does not apply: doc is missing path: {path}: missing value"
        )));
    };
    // Only arrays check that the key exists: a missing member of an object is added.
    if f.slot.get(&f.key).is_err() {
        return Err(failed(format!(
            "replace operation does not apply: doc is missing key: {path}: missing value"
        )));
    }
    let fits = f.fits(h);
    f.slot
        .set(&f.key, val, fits)
        .map_err(|e| e.context(format_args!("error in remove for path: '{path}'")))
}

fn move_(root: &mut Node, op: &Operation) -> Result<()> {
    let from = op
        .from
        .from()
        .map_err(|e| failed(format!("move operation failed to decode from: {e}")))?;
    let Some(f) = find(root, from, None)? else {
        return Err(failed(format!(
            "move operation does not apply: doc is missing from path: {from}: missing value"
        )));
    };
    let key = f.key.clone();
    if let Err(e) = f.slot.get(&key) {
        return Err(failed(format!("error in move for path: '{key}': {e}")));
    }
    let val = f
        .slot
        .remove(&key)
        .map_err(|e| failed(format!("error in move for path: '{key}': {e}")))?;
    let path = op
        .path
        .path()
        .map_err(|e| failed(format!("move operation failed to decode path: {e}")))?;
    let h = val.height();
    let Some(f) = find(root, path, Some(h))? else {
        return Err(failed(format!(
            "move operation does not apply: doc is missing destination path: {path}: missing value"
        )));
    };
    let fits = f.fits(h);
    f.slot
        .add(&f.key, val, fits)
        .map_err(|e| e.context(format_args!("error in move for path: '{path}'")))
}

fn test(root: &mut Node, op: &Operation) -> Result<()> {
    let path = op
        .path
        .path()
        .map_err(|e| failed(format!("test operation failed to decode path: {e}")))?;
    let failed_test = || failed(format!("testing value {path} failed: test failed"));
    if path.is_empty() {
        let Some(value) = &op.value else {
            return Err(ApplyError::Panics(
                "a test of the whole document without a value",
            ));
        };
        return if root.equal(value)? {
            Ok(())
        } else {
            Err(failed_test())
        };
    }
    let Some(f) = find(root, path, None)? else {
        return Err(failed(format!(
            "test operation does not apply: is missing path: {path}: missing value"
        )));
    };
    let found = f
        .slot
        .get(&f.key)
        .map_err(|e| failed(format!("error in test for path: '{path}': {e}")))?;
    match (found, &op.value) {
        // A missing member (or a null) equals an operation's `null`.
        (None, Some(Node::PatchNull)) => Ok(()),
        (None, None) => Err(ApplyError::Panics(
            "a test of a missing or null path without a value",
        )),
        (None, Some(_)) | (Some(_), None) => Err(failed_test()),
        (Some(v), Some(value)) => {
            if v.equal(value)? {
                Ok(())
            } else {
                Err(failed_test())
            }
        }
    }
}

fn copy(root: &mut Node, op: &Operation, copied: &mut u64, limit: u64) -> Result<()> {
    let from = op
        .from
        .from()
        .map_err(|e| failed(format!("copy operation failed to decode from: {e}")))?;
    let missing_from = || {
        failed(format!(
            "copy operation does not apply: doc is missing from path: {from}: missing value"
        ))
    };
    // What would be copied is measured first; it is copied only within the limit.
    let size = {
        let Some(f) = find(root, from, None)? else {
            return Err(missing_from());
        };
        f.slot
            .get(&f.key)
            .map_err(|e| failed(format!("error in copy for from: '{from}': {e}")))?
            .map_or(0, Node::copy_size)
    };
    let path = op
        .path
        .path()
        .map_err(|_| failed("copy operation failed to decode path: missing value"))?;
    let missing_path = || {
        failed(format!(
            "copy operation does not apply: doc is missing destination path: {path}: missing value"
        ))
    };
    if find(root, path, None)?.is_none() {
        return Err(missing_path());
    }
    *copied = copied.saturating_add(size);
    if limit > 0 && *copied > limit {
        return Err(failed(format!(
            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {limit}"
        )));
    }
    let val = {
        let Some(f) = find(root, from, None)? else {
            return Err(missing_from());
        };
        match f.slot.get(&f.key) {
            Ok(Some(n)) => n.deep_copy(),
            _ => Node::Null,
        }
    };
    let h = val.height();
    let Some(f) = find(root, path, Some(h))? else {
        return Err(missing_path());
    };
    let fits = f.fits(h);
    f.slot
        .add(&f.key, val, fits)
        .map_err(|e| e.context("error while adding value during copy"))
}
