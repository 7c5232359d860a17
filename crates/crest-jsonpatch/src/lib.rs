//! JSON patch (`application/json-patch+json`) as kube-apiserver applies it: with
//! evanphx/json-patch **v4** (`gopkg.in/evanphx/json-patch.v4` v4.12.0, which k8s.io/apiserver
//! 1.32's `handlers/patch.go` calls in `applyJSPatch`), not RFC 6902.
//!
//! Hand-written because no maintained Rust crate has v4's semantics: the `json-patch` crate
//! (like v5 of v4's own library) follows RFC 6902, and clients depend on where v4 differs. Most
//! visibly, kube-runtime's `finalizer()` helper adds an object's first finalizer with
//! `[{"op":"test","path":"/metadata/finalizers","value":null},
//!   {"op":"add","path":"/metadata/finalizers","value":["<name>"]}]`, which v4 applies (a
//! missing member tests equal to `null`) and RFC 6902 refuses.
//!
//! v4's behaviour, operation by operation (each reimplemented from v4.12.0's `patch.go`):
//!
//! - **Paths.** A path is split at `/` and its first segment ignored (`a/b` means `/b`); a
//!   path without `/` names nothing, except that `replace` and `test` take `""` for the whole
//!   document. `~1` and `~0` are unescaped. Array indexes are Go's `strconv.Atoi` (`+1` and
//!   `01` are 1), negative ones count from the end (`-1` is the last item, for `add` one past
//!   it), `-` is one past the end for `add` (and the destinations of `move` and `copy`) and an
//!   error elsewhere. Every segment before the last must name an object or array; a `null` or
//!   scalar there is a missing path.
//! - **`add`** sets an object's member (replacing it) or inserts into an array (index `len`
//!   appends); without `value` it adds `null`.
//! - **`remove`** of a member that does not exist fails; of a `null` member it removes it.
//! - **`replace`** of a member that does not exist *adds* it (arrays still need the index);
//!   of the whole document (`""`) with an object or array replaces it, with anything else
//!   does nothing and succeeds.
//! - **`move`** removes `from`, then adds at `path` (so moving into one's own child fails: the
//!   destination's parent is gone).
//! - **`copy`** of a member that does not exist copies `null`. Copies add up (their marshalled
//!   JSON), and the patch fails once they pass the limit kube-apiserver sets
//!   (`JSONPatchMaxCopyBytes`, 3 MiB: `AccumulatedCopySizeLimit`).
//! - **`test`** of a member that does not exist (or is `null`) succeeds against `null`, fails
//!   against anything else; values compare structurally, scalars by their JSON text (the
//!   document's as Go encodes it, the patch's as sent: `1.0` is not `1`, `"\u0041"` is not
//!   `"A"`, `"<"` is not the document's `"\u003c"`-encoded `"<"`).
//! - **Kinds of null.** The `null` an operation's `"value": null` puts in the document is not
//!   the document's own kind of `null`: inside an object, it does not test equal to a `null`
//!   the test's value holds there, and a path through it dereferences nothing (v4 panics). Its
//!   copy is a node that reads as an empty object (writing into it panics) and tests equal to
//!   `{}`.
//! - **Where v4 panics** (nil pointers and maps: a `test` of a missing path without `value`,
//!   a `test` comparing arrays with a `null` item, a path through an operation's `null`, a
//!   `replace` of the whole document without `value`, writing into a copied `null`) the
//!   request fails as kube-apiserver's panic recovery answers it: [`ApplyError::Panics`].
//! - An unknown or missing `op` fails the patch when its turn comes (`Unexpected kind: x`).
//!
//! Errors carry v4's texts. kube-apiserver answers every one of them with the same generic 422
//! (`NewGenericServerResponse`, whose message is not v4's), so the texts matter for logs and
//! tests; the decoding errors ([`DecodeError`]) are the 400s' messages.
//!
//! One limit is Crest's own: a result nested deeper than [`MAX_NESTING`] (which no decoder in
//! Crest could read back) is refused ([`ApplyError::TooDeep`]), checked as values are inserted.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

mod apply;
mod node;
#[cfg(test)]
mod tests;

use node::Node;

/// How many objects and arrays may nest in a patched document: what serde_json (every JSON
/// decoder in Crest, storage's included) reads back; kube-apiserver's decoder allows 10,000.
pub const MAX_NESTING: u32 = 127;

/// A decoded JSON patch: its operations as v4's `DecodePatch` keeps them (any object is an
/// operation; what it says is looked at when it applies).
#[derive(Debug, Clone)]
pub struct Patch {
    ops: Vec<Operation>,
}

/// Why a body is not a JSON patch: the message of kube-apiserver's 400.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Why a patch did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// v4 returned this error (its text). kube-apiserver answers 422 with a generic message.
    Failed(String),
    /// v4 panics on this input (what it dereferenced); kube-apiserver's panic recovery answers
    /// 500.
    Panics(&'static str),
    /// The result would nest deeper than [`MAX_NESTING`].
    TooDeep,
}

impl ApplyError {
    /// v4's `errors.Wrapf(err, context)`: `context: err`.
    fn context(self, context: impl fmt::Display) -> Self {
        match self {
            ApplyError::Failed(m) => ApplyError::Failed(format!("{context}: {m}")),
            other => other,
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApplyError::Failed(m) => f.write_str(m),
            ApplyError::Panics(what) => write!(f, "evanphx/json-patch v4 panics here: {what}"),
            ApplyError::TooDeep => write!(
                f,
                "the patched object would nest more than {MAX_NESTING} objects and arrays"
            ),
        }
    }
}

impl std::error::Error for ApplyError {}

/// One operation: v4's `Operation`, a `map[string]*json.RawMessage` (the last of duplicate
/// members wins), with the members v4 reads decoded.
#[derive(Debug, Clone)]
struct Operation {
    /// `Kind()`: `op` if it is a string, else `unknown`.
    kind: String,
    path: Field,
    from: Field,
    /// `value()`: `None` without a `value` member (v4's nil node), `Some(PatchNull)` for
    /// `"value": null`.
    value: Option<Node>,
}

/// A `path` or `from` member.
#[derive(Debug, Clone)]
enum Field {
    Str(String),
    /// Absent or `null`.
    Missing,
    /// Not a string: its JSON kind.
    NotString(&'static str),
}

impl Field {
    fn from_raw(raw: Option<Option<&RawValue>>) -> Field {
        match raw {
            None | Some(None) => Field::Missing,
            Some(Some(r)) => match serde_json::from_str::<String>(r.get()) {
                Ok(s) => Field::Str(s),
                Err(_) => Field::NotString(kind_of(r.get())),
            },
        }
    }

    /// `Path()`'s result.
    fn path(&self) -> Result<&str, String> {
        self.get("operation missing path field: missing value")
    }

    /// `From()`'s result.
    fn from(&self) -> Result<&str, String> {
        self.get("operation, missing from field: missing value")
    }

    fn get(&self, missing: &str) -> Result<&str, String> {
        match self {
            Field::Str(s) => Ok(s),
            Field::Missing => Err(missing.to_string()),
            Field::NotString(kind) => Err(format!(
                "json: cannot unmarshal {kind} into Go value of type string"
            )),
        }
    }
}

/// The members of one JSON object in order, duplicates included, values unparsed (`None` for
/// `null`).
struct Members<'a>(Vec<(String, Option<&'a RawValue>)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(m) = map.next_entry::<String, Option<&'de RawValue>>()? {
                    members.push(m);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// The JSON kind of a value's text, as Go's `UnmarshalTypeError` names it.
fn kind_of(text: &str) -> &'static str {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "bool",
        Some(b'n') => "null",
        _ => "number",
    }
}

fn syntax(e: serde_json::Error) -> DecodeError {
    DecodeError(format!("error decoding patch: {e}"))
}

impl Patch {
    /// Decodes a JSON patch body as kube-apiserver does: with `typed_ops` (fieldValidation
    /// Strict or Warn), first as a list of `{op, path, from: string, value}` (sigs.k8s.io/json,
    /// whose type errors are `error decoding patch: json: cannot unmarshal ...`; its duplicate
    /// and unknown fields are crest-codec's `json_patch_strict_errors`), then always as v4's
    /// `DecodePatch`: a list (or `null`) of objects (or `null`s), anything else a type error.
    pub fn decode(body: &[u8], typed_ops: bool) -> Result<Patch, DecodeError> {
        let top: &RawValue = serde_json::from_slice(body).map_err(syntax)?;
        let type_error = |kind: &str, strict: &str, lenient: &str| {
            DecodeError(if typed_ops {
                format!("error decoding patch: json: cannot unmarshal {kind} into Go {strict}")
            } else {
                format!("json: cannot unmarshal {kind} into Go {lenient}")
            })
        };
        match kind_of(top.get()) {
            "null" => return Ok(Patch { ops: Vec::new() }),
            "array" => {}
            kind => {
                return Err(type_error(
                    kind,
                    "value of type []handlers.jsonPatchOp",
                    "value of type jsonpatch.Patch",
                ))
            }
        }
        let items: Vec<&RawValue> = serde_json::from_str(top.get()).map_err(syntax)?;
        let mut ops = Vec::with_capacity(items.len());
        for item in items {
            match kind_of(item.get()) {
                "object" => {}
                "null" => {
                    ops.push(Operation {
                        kind: "unknown".into(),
                        path: Field::Missing,
                        from: Field::Missing,
                        value: None,
                    });
                    continue;
                }
                kind => {
                    return Err(type_error(
                        kind,
                        "value of type handlers.jsonPatchOp",
                        "value of type jsonpatch.Operation",
                    ))
                }
            }
            let Members(members) = serde_json::from_str(item.get()).map_err(syntax)?;
            if typed_ops {
                let bad = members.iter().find_map(|(k, v)| {
                    let kind = kind_of(v.as_ref()?.get());
                    (matches!(k.as_str(), "op" | "path" | "from") && kind != "string")
                        .then_some((k, kind))
                });
                if let Some((field, kind)) = bad {
                    return Err(type_error(
                        kind,
                        &format!("struct field jsonPatchOp.{field} of type string"),
                        "",
                    ));
                }
            }
            let last = |name: &str| {
                members
                    .iter()
                    .rev()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| *v)
            };
            let kind = match last("op") {
                Some(Some(r)) => serde_json::from_str::<String>(r.get()).ok(),
                _ => None,
            };
            let value = match last("value") {
                None => None,
                Some(None) => Some(Node::PatchNull),
                Some(Some(r)) => Some(
                    Node::from_raw(r.get())
                        .map_err(|e| DecodeError(format!("error decoding patch: {e}")))?,
                ),
            };
            ops.push(Operation {
                kind: kind.unwrap_or_else(|| "unknown".into()),
                path: Field::from_raw(last("path")),
                from: Field::from_raw(last("from")),
                value,
            });
        }
        Ok(Patch { ops })
    }

    /// How many operations the patch has (kube-apiserver refuses more than 10,000).
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Applies the operations in order to a copy of `doc` and returns the result, or the first
    /// error. `max_copy_bytes` bounds what the `copy` operations add together (0: no limit),
    /// checked before each copy is made.
    pub fn apply(&self, doc: &Value, max_copy_bytes: u64) -> Result<Value, ApplyError> {
        apply::apply(&self.ops, doc, max_copy_bytes)
    }
}
