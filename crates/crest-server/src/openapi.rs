//! Serving of the OpenAPI documents built by `crest_openapi`: cached per served-resource set and
//! rebuilt only when that set changes (a CRD write), never per request.

use crate::http::{full, Body};
use crate::negotiate::{negotiate, Capabilities, Output};
use crate::resources::Resources;
use crate::App;
use bytes::Bytes;
use crest_api::{ApiError, GroupVersion};
use crest_openapi::PublishedResource;
use http::{HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
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

fn published(res: &Resources) -> BTreeMap<(String, String), Vec<PublishedResource>> {
    let builtins = crest_openapi::builtin_resources();
    let mut by_gv: BTreeMap<(String, String), Vec<PublishedResource>> = BTreeMap::new();
    for def in res.all() {
        let a = &def.api;
        let p = match builtins.iter().find(|b| b.resource.group == a.group && b.resource.plural == a.plural) {
            Some(b) if def.crd_name.is_none() => b.clone(),
            _ => PublishedResource { resource: a.clone(), schema: def.schema.clone(), description: String::new() },
        };
        by_gv.entry((a.group.clone(), a.version.clone())).or_default().push(p);
    }
    by_gv
}

fn build(res: Arc<Resources>) -> Built {
    let mut group_versions = HashMap::new();
    let mut entries = vec![];
    let mut all = vec![];
    for ((group, version), pubs) in published(&res) {
        let gv = GroupVersion::new(&group, &version);
        let doc = crest_openapi::v3_group_version(&gv, &pubs);
        let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
        let hash = crest_openapi::content_hash(&bytes);
        let path = if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") };
        entries.push((path.clone(), format!("/openapi/v3/{path}?hash={hash}")));
        group_versions.insert(path, Doc { bytes, hash });
        all.extend(pubs);
    }
    let root = Bytes::from(serde_json::to_vec(&crest_openapi::v3_root(&entries)).unwrap_or_default());
    let v2 = Bytes::from(serde_json::to_vec(&crest_openapi::v2(&all)).unwrap_or_default());
    Built { source: res, root, group_versions, v2 }
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
    h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(e) = etag.and_then(|e| HeaderValue::from_str(&format!("\"{e}\"")).ok()) {
        h.insert(http::header::ETAG, e);
    }
    let cc = if immutable { "public, immutable" } else { "no-cache, private" };
    h.insert(http::header::CACHE_CONTROL, HeaderValue::from_static(cc));
    h.insert(http::header::VARY, HeaderValue::from_static("Accept"));
    r
}

pub fn serve(app: &App, req: &Request<Incoming>, path: &str, accept: Option<&str>) -> Result<Response<Body>, ApiError> {
    let built = app.openapi.current(app.registry.resources());
    // Only JSON is served; a client that takes only protobuf falls back on the 406.
    if let Err(e) = negotiate(accept, Capabilities::default()) {
        return Err(e);
    }
    if negotiate(accept, Capabilities::default())? == Output::Yaml {
        return Err(ApiError::not_acceptable("only the following media types are accepted: application/json"));
    }
    if path == "/openapi/v2" {
        return Ok(json_response(built.v2.clone(), Some(&crest_openapi::content_hash(&built.v2)), false));
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        return Ok(json_response(built.root.clone(), None, false));
    }
    let Some(doc) = built.group_versions.get(rest) else {
        return Err(ApiError::path_not_found());
    };
    let if_none_match = req.headers().get(http::header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    if if_none_match.is_some_and(|v| v.trim_matches('"') == doc.hash) {
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        return Ok(r);
    }
    let hash_param = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "hash").map(|(_, v)| v.into_owned())
    });
    // With the current hash the document is immutable; with a stale one, redirect to the current.
    match hash_param {
        Some(h) if h == doc.hash => Ok(json_response(doc.bytes.clone(), Some(&doc.hash), true)),
        Some(_) => {
            let mut r = Response::new(full(Bytes::new()));
            *r.status_mut() = StatusCode::MOVED_PERMANENTLY;
            if let Ok(loc) = HeaderValue::from_str(&format!("/openapi/v3/{rest}?hash={}", doc.hash)) {
                r.headers_mut().insert(http::header::LOCATION, loc);
            }
            Ok(r)
        }
        None => Ok(json_response(doc.bytes.clone(), Some(&doc.hash), false)),
    }
}
