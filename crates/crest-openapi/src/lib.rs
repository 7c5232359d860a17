//! OpenAPI documents for the resources Crest serves, shaped as kube-apiserver publishes them.
//!
//! A served resource version becomes a [`Part`] (its definitions and paths), built once per
//! change of that resource; parts are merged into the v3 document of their group-version and
//! into the aggregated v2 document, to which the built-in definitions they reference are added.
//! Custom resource schemas go through the steps of apiextensions-apiserver's OpenAPI builder:
//! only structural keys kept, `x-kubernetes-int-or-string` unfolded to its `anyOf`, in v2 the
//! lossy conversion (no junctors; `nullable` drops type, items and properties), TypeMeta and an
//! ObjectMeta reference added (also to embedded resources), and in v3 references with siblings
//! wrapped in `allOf`. Pure: no I/O, no caching (the server caches).

mod convert;
mod gnostic;
mod gotime;
mod goyaml;
mod patchmeta;
mod paths;
pub mod typed;

pub use patchmeta::{patch_meta, strategic_merge, DefinitionMeta};

use serde_json::{json, Map, Value};
use std::sync::OnceLock;

pub use convert::{to_v2_schema, unfold, wrap_refs};
pub use gnostic::v2_protobuf;

pub const V3_REF_PREFIX: &str = "#/components/schemas/";
pub const V2_REF_PREFIX: &str = "#/definitions/";

pub(crate) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
pub(crate) const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
pub(crate) const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
pub(crate) const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
pub(crate) const OBJECT_METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// One served resource in one version, as OpenAPI describes it.
pub struct Resource<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub list_kind: &'a str,
    pub plural: &'a str,
    pub namespaced: bool,
    /// Whether `/status` and `/scale` are served.
    pub status: bool,
    pub scale: bool,
    /// What describes the object: a built-in definition, or a CRD version's `openAPIV3Schema`.
    pub schema: ObjectSchema<'a>,
    /// The CRD's `spec.preserveUnknownFields` (CRDs from v1beta1): v2 then publishes only the
    /// type, as for `x-kubernetes-preserve-unknown-fields` at the root.
    pub preserve_unknown_fields: bool,
}

pub enum ObjectSchema<'a> {
    /// A built-in type: its definitions come from the built-in table.
    BuiltIn,
    /// A custom resource version's `openAPIV3Schema` (None when the version has none).
    Custom(Option<&'a Value>),
}

/// The definitions and paths one resource version contributes to a document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Part {
    pub schemas: Map<String, Value>,
    pub paths: Map<String, Value>,
}

/// Which OpenAPI flavour to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    V2,
    V3,
}

impl Flavor {
    pub(crate) fn ref_to(self, name: &str) -> Value {
        let prefix = match self {
            Flavor::V2 => V2_REF_PREFIX,
            Flavor::V3 => V3_REF_PREFIX,
        };
        json!({ "$ref": format!("{prefix}{name}") })
    }
}

/// The definition name of a kind: kube-openapi's REST-friendly name (reversed group), with the
/// upstream package paths of the built-in groups Crest serves.
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    match group {
        "" => format!("io.k8s.api.core.v1.{kind}"),
        "apiextensions.k8s.io" => {
            format!("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}")
        }
        // k8s.io/api/<package>: the group's first label.
        "events.k8s.io"
        | "coordination.k8s.io"
        | "discovery.k8s.io"
        | "rbac.authorization.k8s.io"
        | "storagemigration.k8s.io" => {
            let package = group.split('.').next().unwrap_or(group);
            format!("io.k8s.api.{package}.{version}.{kind}")
        }
        _ => {
            let reversed: Vec<&str> = group.split('.').rev().collect();
            format!("{}.{version}.{kind}", reversed.join("."))
        }
    }
}

/// The published definitions of the built-in kinds, one file per API group version (copied from
/// upstream's `api/openapi-spec/v3`), besides `meta.json` (meta/v1, autoscaling/v1 Scale).
const BUILTIN_SOURCES: &[&str] = &[
    include_str!("meta.json"),
    include_str!("builtin/apimachinery.json"),
    include_str!("builtin/core_v1.json"),
    include_str!("builtin/events_v1.json"),
    include_str!("builtin/apiextensions_v1.json"),
    include_str!("builtin/coordination_v1.json"),
    include_str!("builtin/discovery_v1.json"),
    include_str!("builtin/storagemigration_v1alpha1.json"),
    include_str!("builtin/rbac_v1.json"),
];

/// The built-in definitions in v3 form. Texts are the upstream API documentation, as
/// kube-apiserver publishes them.
fn builtin_v3() -> &'static Map<String, Value> {
    static DEFS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let mut all = Map::new();
        for src in BUILTIN_SOURCES {
            if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(src) {
                all.extend(m);
            }
        }
        all
    })
}

/// The published definitions of the built-in kinds (v3 form, `#/components/schemas/` refs),
/// by name: what typed merges (server-side apply) walk.
pub fn builtin_definitions() -> &'static Map<String, Value> {
    builtin_v3()
}

fn builtin_v2() -> &'static Map<String, Value> {
    static DEFS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFS.get_or_init(|| {
        builtin_v3()
            .iter()
            .map(|(k, v)| {
                let mut v = v.clone();
                convert::unwrap_refs_for_v2(&mut v);
                // A v3-only `oneOf` of types (kube-openapi's OpenAPIV3OneOfTypes, IntOrString's
                // integer or string) is v2's OpenAPISchemaType, `string`: swagger 2.0 has no
                // oneOf (gnostic refuses it).
                if let Some(o) = v.as_object_mut() {
                    if o.remove("oneOf").is_some() {
                        o.insert("type".into(), json!("string"));
                    }
                }
                (k.clone(), v)
            })
            .collect()
    })
}

fn builtin(flavor: Flavor) -> &'static Map<String, Value> {
    match flavor {
        Flavor::V2 => builtin_v2(),
        Flavor::V3 => builtin_v3(),
    }
}

/// The object schema of a custom resource version, as upstream's `buildKubeNative` makes it.
pub fn custom_object_schema(r: &Resource, schema: Option<&Value>, flavor: Flavor) -> Value {
    let gvk = json!([{"group": r.group, "kind": r.kind, "version": r.version}]);
    let preserve_root = r.preserve_unknown_fields
        || schema
            .and_then(|s| s.get("x-kubernetes-preserve-unknown-fields"))
            .and_then(Value::as_bool)
            == Some(true);
    // Without a schema (or, in v2, with unknown fields preserved at the root) only the type is
    // published: kubectl would otherwise reject every field the schema does not list.
    let Some(schema) = schema.filter(|_| !(flavor == Flavor::V2 && preserve_root)) else {
        return json!({"type": "object", "x-kubernetes-group-version-kind": gvk});
    };
    let mut s = convert::structural(schema);
    convert::unfold(&mut s);
    if flavor == Flavor::V2 {
        convert::to_v2_schema(&mut s);
    }
    if let Some(o) = s.as_object_mut() {
        let props = o.entry("properties").or_insert_with(|| json!({}));
        if let Some(p) = props.as_object_mut() {
            p.insert(
                "metadata".into(),
                metadata_ref(flavor, OBJECT_META, OBJECT_METADATA_DESCRIPTION),
            );
            p.insert(
                "apiVersion".into(),
                json!({"type": "string", "description": API_VERSION_DESCRIPTION}),
            );
            p.insert(
                "kind".into(),
                json!({"type": "string", "description": KIND_DESCRIPTION}),
            );
        }
    }
    convert::add_embedded_properties(&mut s, flavor);
    if flavor == Flavor::V3 {
        convert::wrap_refs(&mut s);
    }
    s["x-kubernetes-group-version-kind"] = gvk;
    s
}

fn metadata_ref(flavor: Flavor, name: &str, description: &str) -> Value {
    let mut r = flavor.ref_to(name);
    r["description"] = json!(description);
    r
}

/// The list kind's schema (upstream `buildListSchema`).
fn list_schema(r: &Resource, flavor: Flavor) -> Value {
    let item = flavor.ref_to(&definition_name(r.group, r.version, r.kind));
    let mut s = json!({
        "description": format!("{} is a list of {}", r.list_kind, r.kind),
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": API_VERSION_DESCRIPTION},
            "kind": {"type": "string", "description": KIND_DESCRIPTION},
            "items": {
                "type": "array",
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", r.plural),
                "items": item,
            },
            "metadata": metadata_ref(flavor, LIST_META, LIST_METADATA_DESCRIPTION),
        },
        "x-kubernetes-group-version-kind": [{"group": r.group, "kind": r.list_kind, "version": r.version}],
    });
    if flavor == Flavor::V3 {
        convert::wrap_refs(&mut s);
    }
    s
}

/// The definitions and paths of one resource version.
pub fn part(r: &Resource, flavor: Flavor) -> Part {
    let mut schemas = Map::new();
    if let ObjectSchema::Custom(schema) = r.schema {
        schemas.insert(
            definition_name(r.group, r.version, r.kind),
            custom_object_schema(r, schema, flavor),
        );
        schemas.insert(
            definition_name(r.group, r.version, r.list_kind),
            list_schema(r, flavor),
        );
    }
    Part {
        schemas,
        paths: paths::paths(r, flavor),
    }
}

/// Adds every built-in definition referenced (transitively) from `defs` and `paths`.
fn add_referenced_builtins(
    defs: &mut Map<String, Value>,
    paths: &Map<String, Value>,
    flavor: Flavor,
) {
    let prefix = match flavor {
        Flavor::V2 => V2_REF_PREFIX,
        Flavor::V3 => V3_REF_PREFIX,
    };
    let table = builtin(flavor);
    let mut pending: Vec<String> = vec![];
    let collect = |v: &Value, pending: &mut Vec<String>| {
        convert::for_each_ref(v, &mut |r| {
            if let Some(name) = r.strip_prefix(prefix) {
                pending.push(name.to_string());
            }
        })
    };
    for v in defs.values().chain(paths.values()) {
        collect(v, &mut pending);
    }
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        if let Some(d) = table.get(&name) {
            collect(d, &mut pending);
            defs.insert(name, d.clone());
        }
    }
}

fn merge(parts: &[&Part]) -> (Map<String, Value>, Map<String, Value>) {
    let mut defs = Map::new();
    let mut paths = Map::new();
    for p in parts {
        defs.extend(p.schemas.iter().map(|(k, v)| (k.clone(), v.clone())));
        paths.extend(p.paths.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    (defs, paths)
}

fn bearer_token() -> Value {
    json!({"BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"}})
}

/// The OpenAPI v3 document of one group-version from its parts.
pub fn v3_document(parts: &[&Part], title: &str, version: &str) -> Value {
    let (mut schemas, paths) = merge(parts);
    add_referenced_builtins(&mut schemas, &paths, Flavor::V3);
    json!({
        "openapi": "3.0.0",
        "info": {"title": title, "version": version},
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": bearer_token()},
    })
}

/// The aggregated swagger 2.0 document.
pub fn v2_document(parts: &[&Part], version: &str) -> Value {
    let (mut definitions, paths) = merge(parts);
    add_referenced_builtins(&mut definitions, &paths, Flavor::V2);
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": bearer_token(),
        "security": [{"BearerToken": []}],
    })
}

/// kube-openapi's ETag and `?hash=` value: SHA-512 of the document, upper-case hex.
pub fn etag(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA512, bytes);
    let mut s = String::with_capacity(128);
    for b in d.as_ref() {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

#[cfg(test)]
mod tests;
