//! Kubernetes protobuf bodies (`application/vnd.kubernetes.protobuf`) for the built-in kinds,
//! driven by one table of message layouts ([`schema`], generated from upstream's generated.proto
//! field numbers and the published OpenAPI names) instead of code per kind.
//!
//! - Requests: a body is the magic `k8s\0` followed by a `runtime.Unknown` whose `raw` holds the
//!   object's own message; it is decoded into the JSON a typed client would have sent (Go's JSON
//!   encoding of the decoded struct), so everything after decoding is the JSON pipeline. kubectl's
//!   typed clientset writes built-in kinds this way (`kubectl create configmap`), and a
//!   protobuf-configured client-go sends DeleteOptions this way too.
//! - Responses: objects, lists, `Status` errors, `PartialObjectMetadata` and watch events are
//!   written as kube-apiserver's protobuf serializer writes them ([`encode_object`],
//!   [`watch_frame`]); custom resources have no message and stay JSON.

mod decode;
mod encode;
mod schema;
mod transcode;
mod wire;

use crest_api::ApiError;
use schema::Messages;
use serde_json::{Map, Value};

/// `runtime/serializer/protobuf`'s prefix of every protobuf body.
pub const MAGIC: [u8; 4] = *b"k8s\0";

/// The media type of protobuf bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The media type of a protobuf watch stream (length-prefixed `WatchEvent`s).
pub const WATCH_CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The scheme built-in kinds decode with, as kube-apiserver's errors name it.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// The envelope's `apiVersion` and `kind`.
#[derive(Default)]
struct TypeMeta {
    api_version: String,
    kind: String,
}

/// Unwraps the envelope (`protobuf.Serializer.Decode`): returns the envelope's type and `raw`.
fn envelope(body: &[u8]) -> Result<(TypeMeta, &[u8]), String> {
    if body.is_empty() {
        return Err("empty data".into());
    }
    let Some(rest) = body.strip_prefix(&MAGIC) else {
        // Go's `%v` of a byte slice.
        return Err(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
                .into(),
        );
    };
    if rest.is_empty() {
        return Err("empty body".into());
    }
    // runtime.Unknown: typeMeta = 1 (apiVersion = 1, kind = 2), raw = 2.
    let mut tm = TypeMeta::default();
    let mut raw: &[u8] = &[];
    let mut r = wire::Reader::new(rest);
    while !r.is_empty() {
        match r.key("Unknown")? {
            (1, wire::LEN) => {
                let mut t = wire::Reader::new(r.bytes()?);
                while !t.is_empty() {
                    match t.key("TypeMeta")? {
                        (1, wire::LEN) => tm.api_version = text(t.bytes()?),
                        (2, wire::LEN) => tm.kind = text(t.bytes()?),
                        (_, w) => t.skip(w)?,
                    }
                }
            }
            (2, wire::LEN) => raw = r.bytes()?,
            (_, w) => r.skip(w)?,
        }
    }
    Ok((tm, raw))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `summarizeData`: the first 30 bytes of a body, in hex unless it looks like JSON.
/// Upstream's `summarizeData(body, 30)`: the start of a body for a decode error (JSON as text,
/// anything else in hex).
pub fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".into();
    }
    let cut = &body[..body.len().min(MAX)];
    let mut s = if body[0] == b'{' {
        String::from_utf8_lossy(cut).into_owned()
    } else {
        cut.iter().map(|b| format!("{b:02x}")).collect()
    };
    if body.len() > MAX {
        s.push_str(" ...");
    }
    s
}

/// Decodes a built-in object (a create or update body) for the endpoint of `group`/`version`
/// `kind`, with kube-apiserver's 400s (`transformDecodeError`). The envelope's kind and
/// version default to the endpoint's, as upstream's `copyKindDefaults`.
pub fn decode_object(
    body: &[u8],
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Value, ApiError> {
    // The kinds whose Go pointer fields the table records (see tools/gen_protobuf_messages.py);
    // the rest answer as unsupported. CustomResourceDefinitions come as protobuf from
    // apiextensions-apiserver's clientset (client-go 1.35 on), as kube-apiserver accepts them.
    let decodable = matches!(
        (group, kind),
        (
            "",
            "Namespace"
                | "ConfigMap"
                | "Secret"
                | "ServiceAccount"
                | "Service"
                | "Endpoints"
                | "Event"
        ) | ("discovery.k8s.io", "EndpointSlice")
            | ("coordination.k8s.io", "Lease")
            | ("events.k8s.io", "Event")
            | ("storagemigration.k8s.io", "StorageVersionMigration")
            | ("autoscaling", "Scale")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | ("authentication.k8s.io", "TokenRequest")
            | (
                "rbac.authorization.k8s.io",
                "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
            )
            | (
                "authorization.k8s.io",
                "SubjectAccessReview"
                    | "SelfSubjectAccessReview"
                    | "LocalSubjectAccessReview"
                    | "SelfSubjectRulesReview"
            )
    );
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let msgs = Messages::get();
    let Some(m) = msgs.for_kind(&api_version, kind).filter(|_| decodable) else {
        return Err(unsupported_for_kind());
    };
    let (tm, raw) = envelope(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {e} ({})",
            summarize(body)
        ))
    })?;
    let mut actual_kind = tm.kind;
    if actual_kind.is_empty() {
        actual_kind = kind.to_string();
    }
    let sent_version = tm.api_version;
    let (mut g, mut v) = sent_version.split_once('/').unwrap_or(("", &sent_version));
    if v.is_empty() {
        (g, v) = (group, version);
    }
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{actual_kind} in version {v:?} cannot be handled as a {kind}: {why}"
        ))
    };
    if (g, v, actual_kind.as_str()) != (group, version, kind) {
        return Err(cannot(format!(
            "no kind {actual_kind:?} is registered for version {:?} in scheme {LEGACY_SCHEME:?}",
            if g.is_empty() {
                v.to_string()
            } else {
                format!("{g}/{v}")
            }
        )));
    }
    let mut obj = decode::message(msgs, m, raw, 0).map_err(cannot)?;
    if let Value::Object(o) = &mut obj {
        o.insert("kind".into(), kind.into());
        o.insert("apiVersion".into(), api_version.into());
    }
    Ok(obj)
}

/// An object as kube-apiserver stores built-in kinds in etcd (its default storage media type is
/// protobuf: the envelope naming the storage version and kind), decoded into the JSON Crest
/// stores; `None` when `stored` is not such an envelope or its kind is not one Crest decodes.
/// Crest serving an etcd that kube-apiserver wrote reads namespaces, RBAC objects and the other
/// built-in kinds it shares this way (custom resources and CustomResourceDefinitions are JSON
/// there already).
pub fn decode_stored(stored: &[u8]) -> Option<Value> {
    let (tm, _) = envelope(stored).ok()?;
    let (group, version) = tm
        .api_version
        .split_once('/')
        .unwrap_or(("", &tm.api_version));
    decode_object(stored, group, version, &tm.kind).ok()
}

pub fn unsupported_for_kind() -> ApiError {
    ApiError::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
    )
}

/// Decodes a DeleteOptions body into the JSON `request::DeleteOptions` reads (pointer fields
/// present when sent). Errors are the decoder's bare message, as for JSON bodies.
pub fn decode_delete_options(body: &[u8]) -> Result<Value, ApiError> {
    let (tm, raw) = envelope(body).map_err(ApiError::bad_request)?;
    let msgs = Messages::get();
    let Some(m) = msgs.by_name("k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions") else {
        return Err(unsupported_for_kind());
    };
    let mut v = decode::message(msgs, m, raw, 0).map_err(ApiError::bad_request)?;
    if let Value::Object(o) = &mut v {
        put_str(o, "kind", &tm.kind);
        put_str(o, "apiVersion", &tm.api_version);
    }
    Ok(v)
}

/// Inserts a Go `string` field with `omitempty`: absent when empty.
fn put_str(m: &mut Map<String, Value>, key: &str, v: &str) {
    if !v.is_empty() {
        m.insert(key.into(), v.into());
    }
}

/// Whether objects of `apiVersion`/`kind` have a protobuf message (built-in kinds and their
/// lists, `Status`, `PartialObjectMetadata`; not custom resources or `Table`).
pub fn encodable(api_version: &str, kind: &str) -> bool {
    Messages::get().for_kind(api_version, kind).is_some()
}

/// Go's JSON encoding of the zero value of a built-in kind's struct (struct fields `{}`, a zero
/// Time `null`, fields without omitempty zero): what kube-apiserver's field manager compares a
/// created object against. `None` for kinds without a message (custom resources).
pub fn zero_object(api_version: &str, kind: &str) -> Option<Value> {
    let msgs = Messages::get();
    let m = msgs.for_kind(api_version, kind)?;
    decode::message(msgs, m, &[], 0).ok()
}

/// `obj` (with its `apiVersion` and `kind`) in the envelope, as kube-apiserver's protobuf
/// serializer writes a response body; `None` when the kind has no message.
pub fn encode_object(obj: &Value) -> Option<Vec<u8>> {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let msgs = Messages::get();
    let m = msgs.for_kind(api_version, kind)?;
    let mut raw = Vec::with_capacity(256);
    encode::message(msgs, m, obj, &mut raw, 0);
    Some(wrap(api_version, kind, &raw))
}

/// The JSON of an object of `api_version`/`kind` (cached bytes) as a protobuf response body,
/// transcoded without a parse into a tree; `None` when the kind has no message or the JSON is
/// not an object.
pub fn encode_json(api_version: &str, kind: &str, json: &[u8]) -> Option<Vec<u8>> {
    let msgs = Messages::get();
    let m = msgs.for_kind(api_version, kind)?;
    let mut raw = Vec::with_capacity(json.len() * 3 / 4);
    transcode::message(msgs, m, json, &mut raw).then(|| wrap(api_version, kind, &raw))
}

/// A list (`list_kind`, e.g. `ConfigMapList`) of objects given as their JSON, with `list_meta`
/// (ListMeta's JSON), as a protobuf response body.
pub fn encode_list<B: AsRef<[u8]>>(
    api_version: &str,
    list_kind: &str,
    list_meta: &Value,
    items: &[B],
) -> Option<Vec<u8>> {
    let msgs = Messages::get();
    let list = msgs.for_kind(api_version, list_kind)?;
    let (meta, item) = (list.field_named("metadata")?, list.field_named("items")?);
    let (schema::Ty::Message(meta_msg), schema::Ty::Message(item_msg)) = (meta.ty, item.ty) else {
        return None;
    };
    let size: usize = items.iter().map(|i| i.as_ref().len()).sum();
    let mut raw = Vec::with_capacity(size * 3 / 4 + 64);
    let start = wire::begin_len(meta.tag, &mut raw);
    encode::message(msgs, msgs.msg(meta_msg), list_meta, &mut raw, 1);
    wire::end_len(start, &mut raw);
    for i in items {
        let start = wire::begin_len(item.tag, &mut raw);
        if !transcode::message(msgs, msgs.msg(item_msg), i.as_ref(), &mut raw) {
            return None;
        }
        wire::end_len(start, &mut raw);
    }
    Some(wrap(api_version, list_kind, &raw))
}

/// `raw` (a message) in the envelope: the magic, then `runtime.Unknown` with the type, the raw
/// bytes and empty content encoding and type, as gogo writes the struct.
pub fn wrap(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 32 + api_version.len() + kind.len());
    out.extend_from_slice(&MAGIC);
    let start = wire::begin_len(1, &mut out);
    wire::put_bytes(1, api_version.as_bytes(), &mut out);
    wire::put_bytes(2, kind.as_bytes(), &mut out);
    wire::end_len(start, &mut out);
    wire::put_bytes(2, raw, &mut out);
    wire::put_bytes(3, b"", &mut out);
    wire::put_bytes(4, b"", &mut out);
    out
}

/// One frame of a protobuf watch stream: a big-endian 32-bit length, then the `WatchEvent`
/// (`type` = 1, `object` = 2 as a RawExtension holding `object`, an envelope from
/// [`encode_object`]) without an envelope of its own, as upstream's raw stream serializer and
/// length-delimited framer write it.
pub fn watch_frame(event_type: &str, object: &[u8], out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    wire::put_bytes(1, event_type.as_bytes(), out);
    let start = wire::begin_len(2, out);
    wire::put_bytes(1, object, out);
    wire::end_len(start, out);
    let n = u32::try_from(out.len() - at - 4).unwrap_or(u32::MAX);
    out[at..at + 4].copy_from_slice(&n.to_be_bytes());
}

#[cfg(test)]
mod tests;
