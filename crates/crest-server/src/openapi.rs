//! Serving of the OpenAPI documents built by `crest_openapi`: cached per served-resource set and
//! rebuilt only when that set changes (a CRD write), never per request.

use crate::http::{full, Body};
use crate::negotiate::{negotiate, Capabilities, Output};
use crate::resources::Resources;
use crate::App;
use bytes::Bytes;
use crest_api::ApiResource;
use crest_api::{ApiError, GroupVersion};
use http::{HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

struct Doc {
    bytes: Bytes,
    hash: String,
}

struct Built {
    /// The resource set these documents describe.
    source: Arc<Resources>,
    root: Bytes,
    group_versions: HashMap<String, Doc>,
    v2: Bytes,
}

#[derive(Default)]
pub struct OpenApiCache {
    built: Mutex<Option<Arc<Built>>>,
}

/// One resource as published: its API description and object schema.
#[derive(Clone)]
struct PublishedResource {
    resource: ApiResource,
    schema: Option<Value>,
}

fn published(res: &Resources) -> BTreeMap<(String, String), Vec<PublishedResource>> {
    let mut by_gv: BTreeMap<(String, String), Vec<PublishedResource>> = BTreeMap::new();
    for def in res.all() {
        let a = &def.api;
        let p = PublishedResource {
            resource: a.clone(),
            schema: def.schema.clone(),
        };
        by_gv
            .entry((a.group.clone(), a.version.clone()))
            .or_default()
            .push(p);
    }
    by_gv
}

/// A stable content hash (FNV-1a, 64 bits twice) for `?hash=` and ETags.
fn content_hash(bytes: &[u8]) -> String {
    let mut h1: u64 = 0xcbf29ce484222325;
    let mut h2: u64 = 0x84222325cbf29ce4;
    for b in bytes {
        h1 = (h1 ^ u64::from(*b)).wrapping_mul(0x100000001b3);
        h2 = (h2 ^ u64::from(*b))
            .wrapping_mul(0x100000001b3)
            .rotate_left(5);
    }
    format!("{h1:016X}{h2:016X}")
}

fn definition_name(a: &ApiResource) -> String {
    if a.group.is_empty() {
        return format!("io.k8s.api.core.v1.{}", a.kind);
    }
    if a.group == "apiextensions.k8s.io" {
        return format!(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{}.{}",
            a.version, a.kind
        );
    }
    let reversed: Vec<&str> = a.group.split('.').rev().collect();
    format!("{}.{}.{}", reversed.join("."), a.version, a.kind)
}

fn param(name: &str, location: &str) -> Value {
    json!({"name": name, "in": location, "schema": {"type": "string"}, "uniqueItems": true})
}

fn operation(a: &ApiResource, action: &str, verb: &str, def_ref: &str, params: &[&str]) -> Value {
    let gvk = json!({"group": a.group, "version": a.version, "kind": a.kind});
    let ps: Vec<Value> = params.iter().map(|p| param(p, "query")).collect();
    let mut op = json!({
        "operationId": format!("{verb}{}", a.kind),
        "parameters": ps,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": def_ref}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    });
    if matches!(verb, "create" | "replace" | "patch") {
        op["requestBody"] = json!({"content": {"application/json": {"schema": {"$ref": def_ref}}}});
    }
    op
}

/// The OpenAPI v3 document of one group-version: paths with the operations kubectl inspects
/// (PATCH with fieldValidation decides server-side validation) and the object schemas.
fn v3_group_version(gv: &GroupVersion, pubs: &[PublishedResource]) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    schemas.insert("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".into(), json!({"type": "object", "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.", "x-kubernetes-preserve-unknown-fields": true}));
    let base = if gv.group.is_empty() {
        format!("/api/{}", gv.version)
    } else {
        format!("/apis/{}/{}", gv.group, gv.version)
    };
    let write = ["dryRun", "fieldManager", "fieldValidation", "pretty"];
    let patch = [
        "dryRun",
        "fieldManager",
        "fieldValidation",
        "force",
        "pretty",
    ];
    let list = [
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "pretty",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "timeoutSeconds",
        "watch",
    ];
    for p in pubs {
        let a = &p.resource;
        let name = definition_name(a);
        let def_ref = format!("#/components/schemas/{name}");
        let mut schema = p
            .schema
            .clone()
            .unwrap_or(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        if let Some(props) = schema
            .as_object_mut()
            .map(|o| o.entry("properties").or_insert_with(|| json!({})))
        {
            props["apiVersion"] = json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."});
            props["kind"] = json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."});
            props["metadata"] = json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]});
        }
        schema["x-kubernetes-group-version-kind"] =
            json!([{"group": a.group, "version": a.version, "kind": a.kind}]);
        schemas.insert(name.clone(), schema);
        let collection = if a.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}", a.plural)
        } else {
            format!("{base}/{}", a.plural)
        };
        let item = format!("{collection}/{{name}}");
        paths.insert(
            collection,
            json!({
                "get": operation(a, "list", "list", &def_ref, &list),
                "post": operation(a, "post", "create", &def_ref, &write),
                "delete": operation(a, "deletecollection", "deletecollection", &def_ref, &list),
            }),
        );
        paths.insert(item, json!({
            "get": operation(a, "get", "read", &def_ref, &["pretty", "resourceVersion"]),
            "put": operation(a, "put", "replace", &def_ref, &write),
            "patch": operation(a, "patch", "patch", &def_ref, &patch),
            "delete": operation(a, "delete", "delete", &def_ref, &["dryRun", "gracePeriodSeconds", "pretty", "propagationPolicy"]),
        }));
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": crate::KUBERNETES_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

fn v3_root(entries: &[(String, String)]) -> Value {
    let mut paths = serde_json::Map::new();
    for (p, url) in entries {
        paths.insert(p.clone(), json!({"serverRelativeURL": url}));
    }
    json!({"paths": paths})
}

/// A minimal swagger 2.0 document (JSON clients only; kubectl asks for protobuf and falls back).
fn v2(pubs: &[PublishedResource]) -> Value {
    let mut defs = serde_json::Map::new();
    for p in pubs {
        let a = &p.resource;
        defs.insert(definition_name(a), json!({"type": "object", "x-kubernetes-group-version-kind": [{"group": a.group, "version": a.version, "kind": a.kind}]}));
    }
    json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": crate::KUBERNETES_VERSION}, "paths": {}, "definitions": defs})
}

fn build(res: Arc<Resources>) -> Built {
    let mut group_versions = HashMap::new();
    let mut entries = vec![];
    let mut all = vec![];
    for ((group, version), pubs) in published(&res) {
        let gv = GroupVersion::new(&group, &version);
        let doc = v3_group_version(&gv, &pubs);
        let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
        let hash = content_hash(&bytes);
        let path = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        entries.push((path.clone(), format!("/openapi/v3/{path}?hash={hash}")));
        group_versions.insert(path, Doc { bytes, hash });
        all.extend(pubs);
    }
    let root = Bytes::from(serde_json::to_vec(&v3_root(&entries)).unwrap_or_default());
    let v2 = Bytes::from(serde_json::to_vec(&v2(&all)).unwrap_or_default());
    Built {
        source: res,
        root,
        group_versions,
        v2,
    }
}

impl OpenApiCache {
    fn current(&self, res: Arc<Resources>) -> Arc<Built> {
        let mut guard = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = guard.as_ref().filter(|b| Arc::ptr_eq(&b.source, &res)) {
            return b.clone();
        }
        let b = Arc::new(build(res));
        *guard = Some(b.clone());
        b
    }
}

fn json_response(bytes: Bytes, etag: Option<&str>, immutable: bool) -> Response<Body> {
    let mut r = Response::new(full(bytes));
    let h = r.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(e) = etag.and_then(|e| HeaderValue::from_str(&format!("\"{e}\"")).ok()) {
        h.insert(http::header::ETAG, e);
    }
    let cc = if immutable {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    h.insert(http::header::CACHE_CONTROL, HeaderValue::from_static(cc));
    h.insert(http::header::VARY, HeaderValue::from_static("Accept"));
    r
}

pub fn serve(
    app: &App,
    req: &Request<Incoming>,
    path: &str,
    accept: Option<&str>,
) -> Result<Response<Body>, ApiError> {
    let built = app.openapi.current(app.registry.resources());
    // Only JSON is served; a client that takes only protobuf falls back on the 406.
    if negotiate(accept, Capabilities::default())? == Output::Yaml {
        return Err(ApiError::not_acceptable(
            "only the following media types are accepted: application/json",
        ));
    }
    if path == "/openapi/v2" {
        return Ok(json_response(
            built.v2.clone(),
            Some(&content_hash(&built.v2)),
            false,
        ));
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        return Ok(json_response(built.root.clone(), None, false));
    }
    let Some(doc) = built.group_versions.get(rest) else {
        return Err(ApiError::path_not_found());
    };
    let if_none_match = req
        .headers()
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok());
    if if_none_match.is_some_and(|v| v.trim_matches('"') == doc.hash) {
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        return Ok(r);
    }
    let hash_param = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "hash")
            .map(|(_, v)| v.into_owned())
    });
    // With the current hash the document is immutable; with a stale one, redirect to the current.
    match hash_param {
        Some(h) if h == doc.hash => Ok(json_response(doc.bytes.clone(), Some(&doc.hash), true)),
        Some(_) => {
            let mut r = Response::new(full(Bytes::new()));
            *r.status_mut() = StatusCode::MOVED_PERMANENTLY;
            if let Ok(loc) = HeaderValue::from_str(&format!("/openapi/v3/{rest}?hash={}", doc.hash))
            {
                r.headers_mut().insert(http::header::LOCATION, loc);
            }
            Ok(r)
        }
        None => Ok(json_response(doc.bytes.clone(), Some(&doc.hash), false)),
    }
}
