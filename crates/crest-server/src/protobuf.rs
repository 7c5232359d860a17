//! Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded into the
//! JSON a typed client would have sent, so everything after decoding is the JSON pipeline.
//!
//! kubectl's typed clientset writes built-in kinds this way (`kubectl create namespace`), and a
//! protobuf-configured client-go sends DeleteOptions this way too. A body is the magic `k8s\0`
//! followed by a `runtime.Unknown` whose `raw` holds the object's own message. The messages
//! below are hand-written from upstream's generated.proto files (field numbers cited per
//! message); fields a message does not declare are skipped, as gogo-protobuf does.
//!
//! Go decodes into structs, so the JSON produced follows the Go types' JSON encoding: a plain
//! string field that is empty is absent (`omitempty`), while pointer fields (proto2 `optional`
//! with presence, e.g. DeleteOptions' `gracePeriodSeconds`) are present whenever they were sent.

use crest_api::ApiError;
use prost::Message;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// `runtime/serializer/protobuf`'s prefix of every protobuf body.
pub const MAGIC: [u8; 4] = *b"k8s\0";

// k8s.io/apimachinery/pkg/runtime/generated.proto

/// `runtime.Unknown`: typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4.
#[derive(Clone, PartialEq, Message)]
pub struct Unknown {
    #[prost(message, optional, tag = "1")]
    pub type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub raw: Option<Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub content_encoding: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub content_type: Option<String>,
}

/// `runtime.TypeMeta`: apiVersion = 1, kind = 2.
#[derive(Clone, PartialEq, Message)]
pub struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub kind: Option<String>,
}

// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto

/// `meta/v1 Time` (as Timestamp): seconds = 1, nanos = 2. Empty bytes are Go's zero time.
#[derive(Clone, PartialEq, Message)]
pub struct Time {
    #[prost(int64, optional, tag = "1")]
    pub seconds: Option<i64>,
    #[prost(int32, optional, tag = "2")]
    pub nanos: Option<i32>,
}

/// `meta/v1 ObjectMeta`: name = 1, generateName = 2, namespace = 3, selfLink = 4, uid = 5,
/// resourceVersion = 6, generation = 7, creationTimestamp = 8, deletionTimestamp = 9,
/// deletionGracePeriodSeconds = 10, labels = 11, annotations = 12, ownerReferences = 13,
/// finalizers = 14, managedFields = 17 (15 clusterName and 16 initializers are gone).
#[derive(Clone, PartialEq, Message)]
pub struct ObjectMeta {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub generate_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub self_link: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub resource_version: Option<String>,
    #[prost(int64, optional, tag = "7")]
    pub generation: Option<i64>,
    #[prost(message, optional, tag = "8")]
    pub creation_timestamp: Option<Time>,
    #[prost(message, optional, tag = "9")]
    pub deletion_timestamp: Option<Time>,
    #[prost(int64, optional, tag = "10")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[prost(btree_map = "string, string", tag = "11")]
    pub labels: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "12")]
    pub annotations: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "13")]
    pub owner_references: Vec<OwnerReference>,
    #[prost(string, repeated, tag = "14")]
    pub finalizers: Vec<String>,
    #[prost(message, repeated, tag = "17")]
    pub managed_fields: Vec<ManagedFieldsEntry>,
}

/// `meta/v1 OwnerReference`: kind = 1, name = 3, uid = 4, apiVersion = 5, controller = 6,
/// blockOwnerDeletion = 7.
#[derive(Clone, PartialEq, Message)]
pub struct OwnerReference {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub api_version: Option<String>,
    #[prost(bool, optional, tag = "6")]
    pub controller: Option<bool>,
    #[prost(bool, optional, tag = "7")]
    pub block_owner_deletion: Option<bool>,
}

/// `meta/v1 ManagedFieldsEntry`: manager = 1, operation = 2, apiVersion = 3, time = 4,
/// fieldsType = 6, fieldsV1 = 7, subresource = 8.
#[derive(Clone, PartialEq, Message)]
pub struct ManagedFieldsEntry {
    #[prost(string, optional, tag = "1")]
    pub manager: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub operation: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub api_version: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub time: Option<Time>,
    #[prost(string, optional, tag = "6")]
    pub fields_type: Option<String>,
    #[prost(message, optional, tag = "7")]
    pub fields_v1: Option<FieldsV1>,
    #[prost(string, optional, tag = "8")]
    pub subresource: Option<String>,
}

/// `meta/v1 FieldsV1`: Raw = 1 (the JSON of the field set).
#[derive(Clone, PartialEq, Message)]
pub struct FieldsV1 {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub raw: Option<Vec<u8>>,
}

/// `meta/v1 DeleteOptions`: gracePeriodSeconds = 1, preconditions = 2, orphanDependents = 3,
/// propagationPolicy = 4, dryRun = 5.
#[derive(Clone, PartialEq, Message)]
pub struct DeleteOptions {
    #[prost(int64, optional, tag = "1")]
    pub grace_period_seconds: Option<i64>,
    #[prost(message, optional, tag = "2")]
    pub preconditions: Option<Preconditions>,
    #[prost(bool, optional, tag = "3")]
    pub orphan_dependents: Option<bool>,
    #[prost(string, optional, tag = "4")]
    pub propagation_policy: Option<String>,
    #[prost(string, repeated, tag = "5")]
    pub dry_run: Vec<String>,
}

/// `meta/v1 Preconditions`: uid = 1, resourceVersion = 2.
#[derive(Clone, PartialEq, Message)]
pub struct Preconditions {
    #[prost(string, optional, tag = "1")]
    pub uid: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub resource_version: Option<String>,
}

// k8s.io/api/core/v1/generated.proto

/// `core/v1 Namespace`: metadata = 1, spec = 2, status = 3.
#[derive(Clone, PartialEq, Message)]
pub struct Namespace {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<NamespaceSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<NamespaceStatus>,
}

/// `core/v1 NamespaceSpec`: finalizers = 1.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceSpec {
    #[prost(string, repeated, tag = "1")]
    pub finalizers: Vec<String>,
}

/// `core/v1 NamespaceStatus`: phase = 1, conditions = 2.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceStatus {
    #[prost(string, optional, tag = "1")]
    pub phase: Option<String>,
    #[prost(message, repeated, tag = "2")]
    pub conditions: Vec<NamespaceCondition>,
}

/// `core/v1 NamespaceCondition`: type = 1, status = 2, lastTransitionTime = 4, reason = 5,
/// message = 6.
#[derive(Clone, PartialEq, Message)]
pub struct NamespaceCondition {
    #[prost(string, optional, tag = "1")]
    pub r#type: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub status: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub last_transition_time: Option<Time>,
    #[prost(string, optional, tag = "5")]
    pub reason: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub message: Option<String>,
}

/// The scheme built-in kinds decode with, as kube-apiserver's errors name it.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// gogo-protobuf's wording for the common failures (a cut-off body is `unexpected EOF`).
fn go_error(e: &prost::DecodeError) -> String {
    let text = e.to_string();
    let what = text.rsplit(": ").next().unwrap_or(&text);
    match what {
        "buffer underflow" | "delimited length exceeded" | "invalid varint" => {
            "unexpected EOF".into()
        }
        other => format!("proto: {other}"),
    }
}

/// Unwraps the envelope (`protobuf.Serializer.Decode`): returns the envelope's type and `raw`.
fn envelope(body: &[u8]) -> Result<(TypeMeta, Vec<u8>), String> {
    if body.is_empty() {
        return Err("empty data".into());
    }
    let Some(rest) = body.strip_prefix(&MAGIC) else {
        return Err(format!(
            "provided data does not appear to be a protobuf message, expected prefix {:?}",
            MAGIC
        ));
    };
    if rest.is_empty() {
        return Err("empty body".into());
    }
    let unknown = Unknown::decode(rest).map_err(|e| go_error(&e))?;
    Ok((
        unknown.type_meta.unwrap_or_default(),
        unknown.raw.unwrap_or_default(),
    ))
}

/// `summarizeData`: the first 30 bytes of a body, in hex unless it looks like JSON.
fn summarize(body: &[u8]) -> String {
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

/// Splits `group/version` (or a bare core `version`).
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
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
    // Only the kinds clients send as protobuf are decoded; the rest answer as unsupported.
    if (group, kind) != ("", "Namespace") {
        return Err(unsupported_for_kind());
    }
    let (tm, raw) = envelope(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {e} ({})",
            summarize(body)
        ))
    })?;
    let mut actual_kind = tm.kind.unwrap_or_default();
    if actual_kind.is_empty() {
        actual_kind = kind.to_string();
    }
    let api_version = tm.api_version.unwrap_or_default();
    let (mut g, mut v) = split_api_version(&api_version);
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
    let api_version = if g.is_empty() {
        v.to_string()
    } else {
        format!("{g}/{v}")
    };
    let ns = Namespace::decode(raw.as_slice()).map_err(|e| cannot(go_error(&e)))?;
    namespace_json(&ns, &api_version).map_err(cannot)
}

/// 415 for a resource Crest takes only as JSON or YAML (custom resources, as upstream; CRDs).
pub fn unsupported_for_kind() -> ApiError {
    ApiError::unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
    )
}

/// Decodes a DeleteOptions body into the JSON `request::DeleteOptions` reads (pointer fields
/// present when sent). Errors are the decoder's bare message, as for JSON bodies.
pub fn decode_delete_options(body: &[u8]) -> Result<Value, ApiError> {
    let (tm, raw) = envelope(body).map_err(ApiError::bad_request)?;
    let o =
        DeleteOptions::decode(raw.as_slice()).map_err(|e| ApiError::bad_request(go_error(&e)))?;
    let mut m = Map::new();
    put_str(&mut m, "kind", tm.kind.as_deref());
    put_str(&mut m, "apiVersion", tm.api_version.as_deref());
    if let Some(g) = o.grace_period_seconds {
        m.insert("gracePeriodSeconds".into(), g.into());
    }
    if let Some(p) = &o.preconditions {
        let mut pm = Map::new();
        if let Some(uid) = &p.uid {
            pm.insert("uid".into(), uid.as_str().into());
        }
        if let Some(rv) = &p.resource_version {
            pm.insert("resourceVersion".into(), rv.as_str().into());
        }
        m.insert("preconditions".into(), pm.into());
    }
    if let Some(b) = o.orphan_dependents {
        m.insert("orphanDependents".into(), b.into());
    }
    if let Some(p) = &o.propagation_policy {
        m.insert("propagationPolicy".into(), p.as_str().into());
    }
    if !o.dry_run.is_empty() {
        m.insert("dryRun".into(), o.dry_run.clone().into());
    }
    Ok(m.into())
}

/// Inserts a Go `string` field with `omitempty`: absent when empty.
fn put_str(m: &mut Map<String, Value>, key: &str, v: Option<&str>) {
    if let Some(s) = v.filter(|s| !s.is_empty()) {
        m.insert(key.into(), s.into());
    }
}

/// `metav1.Time` as JSON: RFC 3339 in UTC to the second; Go's zero time (empty message) is null.
fn time_json(t: &Time) -> Result<Value, String> {
    if t.seconds.is_none() && t.nanos.is_none() {
        return Ok(Value::Null);
    }
    let (secs, nanos) = (t.seconds.unwrap_or(0), t.nanos.unwrap_or(0));
    let dt = u32::try_from(nanos)
        .ok()
        .and_then(|n| chrono::DateTime::from_timestamp(secs, n))
        .ok_or_else(|| format!("Time out of range: seconds {secs}, nanos {nanos}"))?;
    Ok(dt.format("%Y-%m-%dT%H:%M:%SZ").to_string().into())
}

fn object_meta_json(m: &ObjectMeta) -> Result<Value, String> {
    let mut o = Map::new();
    put_str(&mut o, "name", m.name.as_deref());
    put_str(&mut o, "generateName", m.generate_name.as_deref());
    put_str(&mut o, "namespace", m.namespace.as_deref());
    put_str(&mut o, "selfLink", m.self_link.as_deref());
    put_str(&mut o, "uid", m.uid.as_deref());
    put_str(&mut o, "resourceVersion", m.resource_version.as_deref());
    if let Some(g) = m.generation.filter(|g| *g != 0) {
        o.insert("generation".into(), g.into());
    }
    // A struct, not a pointer, in Go: always encoded, null when zero.
    let created = match &m.creation_timestamp {
        Some(t) => time_json(t)?,
        None => Value::Null,
    };
    o.insert("creationTimestamp".into(), created);
    if let Some(t) = &m.deletion_timestamp {
        o.insert("deletionTimestamp".into(), time_json(t)?);
    }
    if let Some(s) = m.deletion_grace_period_seconds {
        o.insert("deletionGracePeriodSeconds".into(), s.into());
    }
    if !m.labels.is_empty() {
        o.insert("labels".into(), json!(m.labels));
    }
    if !m.annotations.is_empty() {
        o.insert("annotations".into(), json!(m.annotations));
    }
    if !m.owner_references.is_empty() {
        let refs = m.owner_references.iter().map(|r| {
            // apiVersion, kind, name and uid have no omitempty.
            let mut x = Map::new();
            x.insert(
                "apiVersion".into(),
                r.api_version.as_deref().unwrap_or("").into(),
            );
            x.insert("kind".into(), r.kind.as_deref().unwrap_or("").into());
            x.insert("name".into(), r.name.as_deref().unwrap_or("").into());
            x.insert("uid".into(), r.uid.as_deref().unwrap_or("").into());
            if let Some(c) = r.controller {
                x.insert("controller".into(), c.into());
            }
            if let Some(b) = r.block_owner_deletion {
                x.insert("blockOwnerDeletion".into(), b.into());
            }
            Value::Object(x)
        });
        o.insert("ownerReferences".into(), refs.collect());
    }
    if !m.finalizers.is_empty() {
        o.insert("finalizers".into(), m.finalizers.clone().into());
    }
    if !m.managed_fields.is_empty() {
        let mut entries = Vec::with_capacity(m.managed_fields.len());
        for e in &m.managed_fields {
            let mut x = Map::new();
            put_str(&mut x, "manager", e.manager.as_deref());
            put_str(&mut x, "operation", e.operation.as_deref());
            put_str(&mut x, "apiVersion", e.api_version.as_deref());
            if let Some(t) = &e.time {
                x.insert("time".into(), time_json(t)?);
            }
            put_str(&mut x, "fieldsType", e.fields_type.as_deref());
            if let Some(f) = &e.fields_v1 {
                // FieldsV1 marshals as its raw JSON (null when unset).
                let v = match f.raw.as_deref() {
                    None => Value::Null,
                    Some(raw) => serde_json::from_slice(raw)
                        .map_err(|e| format!("invalid FieldsV1 JSON: {e}"))?,
                };
                x.insert("fieldsV1".into(), v);
            }
            put_str(&mut x, "subresource", e.subresource.as_deref());
            entries.push(Value::Object(x));
        }
        o.insert("managedFields".into(), entries.into());
    }
    Ok(o.into())
}

/// A Namespace as Go's JSON encoding of the decoded struct (`spec` and `status` always present).
fn namespace_json(ns: &Namespace, api_version: &str) -> Result<Value, String> {
    let meta = object_meta_json(&ns.metadata.clone().unwrap_or_default())?;
    let mut spec = Map::new();
    if let Some(s) = ns.spec.as_ref().filter(|s| !s.finalizers.is_empty()) {
        spec.insert("finalizers".into(), s.finalizers.clone().into());
    }
    let mut status = Map::new();
    if let Some(s) = &ns.status {
        put_str(&mut status, "phase", s.phase.as_deref());
        if !s.conditions.is_empty() {
            let mut conds = Vec::with_capacity(s.conditions.len());
            for c in &s.conditions {
                let mut x = Map::new();
                x.insert("type".into(), c.r#type.as_deref().unwrap_or("").into());
                x.insert("status".into(), c.status.as_deref().unwrap_or("").into());
                let t = match &c.last_transition_time {
                    Some(t) => time_json(t)?,
                    None => Value::Null,
                };
                x.insert("lastTransitionTime".into(), t);
                put_str(&mut x, "reason", c.reason.as_deref());
                put_str(&mut x, "message", c.message.as_deref());
                conds.push(Value::Object(x));
            }
            status.insert("conditions".into(), conds.into());
        }
    }
    Ok(json!({
        "kind": "Namespace",
        "apiVersion": api_version,
        "metadata": meta,
        "spec": spec,
        "status": status,
    }))
}

/// Encodes `msg` in the envelope, as a protobuf client sends it (tests and tools).
pub fn encode_envelope(api_version: &str, kind: &str, msg: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(msg.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend(unknown.encode_to_vec());
    out
}
