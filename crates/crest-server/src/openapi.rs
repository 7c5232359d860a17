//! Serving of the OpenAPI documents built by `crest_openapi`, with kube-openapi's HTTP behaviour
//! (handler and handler3): `?hash=` URLs that are immutable, ETags, 304s, 301 for a stale hash,
//! 406 for media types not served.
//!
//! Nothing is built per request. When the served resource set changes (a CRD write), the next
//! request re-syncs: each resource version's part is reused while its CRD's resourceVersion is
//! unchanged, and a group-version's document is re-rendered only if its parts changed, so a CRD
//! change among 500 costs one part and one document. The aggregated v2 document is rendered on
//! its first request after a change.

use crate::http::{full, Body};
use crate::resources::{ResourceDef, Resources};
use crate::App;
use bytes::Bytes;
use crest_api::ApiError;
use crest_openapi::{Flavor, ObjectSchema, Part, Resource};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// A rendered document: its bytes, ETag (kube-openapi's SHA-512 hash) and build time.
struct Doc {
    bytes: Bytes,
    etag: String,
    last_modified: chrono::DateTime<chrono::Utc>,
}

impl Doc {
    fn new(value: &serde_json::Value) -> Doc {
        let bytes = Bytes::from(serde_json::to_vec(value).unwrap_or_default());
        Doc {
            etag: crest_openapi::etag(&bytes),
            bytes,
            last_modified: chrono::Utc::now(),
        }
    }
}

/// What a part is built from: for a custom resource its CRD at one resourceVersion, for a
/// built-in its fixed description.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct PartKey {
    crd: Option<(String, i64)>,
    group: String,
    version: String,
    plural: String,
    shape: String,
}

struct CachedPart {
    v3: Part,
    v2: Option<Arc<Part>>,
}

struct GroupVersionDoc {
    keys: Vec<PartKey>,
    doc: Arc<Doc>,
}

#[derive(Default)]
struct State {
    /// The resource set the documents below describe.
    source: Option<Arc<Resources>>,
    parts: HashMap<PartKey, CachedPart>,
    /// By document path (`api/v1`, `apis/<group>/<version>`).
    group_versions: BTreeMap<String, GroupVersionDoc>,
    root: Option<Arc<Doc>>,
    v2: Option<Arc<Doc>>,
    /// Part keys in v2 document order.
    all_keys: Vec<PartKey>,
}

#[derive(Default)]
pub struct OpenApiCache {
    state: Mutex<State>,
}

fn part_key(res: &Resources, def: &ResourceDef) -> PartKey {
    let a = &def.api;
    // A CRD's stored schema carries its resourceVersion. Without one (no schema) the part depends
    // only on the names and subresources, which the key holds too.
    let crd = def.crd_name.as_ref().map(|name| {
        let rv = res
            .stored_schema(&def.key_prefix)
            .map(|s| s.crd_revision)
            .unwrap_or(-1);
        (name.clone(), rv)
    });
    PartKey {
        crd,
        group: a.group.clone(),
        version: a.version.clone(),
        plural: a.plural.clone(),
        shape: format!(
            "{}/{}/{}/{}",
            a.kind,
            a.list_kind,
            a.namespaced,
            a.subresources.join(",")
        ),
    }
}

fn describe<'a>(def: &'a ResourceDef) -> Resource<'a> {
    let a = &def.api;
    let has = |s: &str| a.subresources.iter().any(|x| x == s);
    Resource {
        group: &a.group,
        version: &a.version,
        kind: &a.kind,
        list_kind: &a.list_kind,
        plural: &a.plural,
        namespaced: a.namespaced,
        status: has("status"),
        scale: has("scale"),
        schema: if def.crd_name.is_some() {
            ObjectSchema::Custom(def.schema.as_ref())
        } else {
            ObjectSchema::BuiltIn
        },
    }
}

fn doc_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

impl State {
    /// Brings the documents up to date with `res`, rebuilding only what changed.
    fn sync(&mut self, res: &Arc<Resources>) {
        if self.source.as_ref().is_some_and(|s| Arc::ptr_eq(s, res)) {
            return;
        }
        let mut by_gv: BTreeMap<String, Vec<(PartKey, &Arc<ResourceDef>)>> = BTreeMap::new();
        let mut all_keys = vec![];
        for def in res.all() {
            let key = part_key(res, def);
            all_keys.push(key.clone());
            by_gv
                .entry(doc_path(&def.api.group, &def.api.version))
                .or_default()
                .push((key, def));
        }
        let mut parts = std::mem::take(&mut self.parts);
        let mut kept_parts = HashMap::with_capacity(all_keys.len());
        let mut group_versions = BTreeMap::new();
        let mut changed = false;
        for (path, defs) in by_gv {
            for (key, def) in &defs {
                let p = parts.remove(key).unwrap_or_else(|| CachedPart {
                    v3: crest_openapi::part(&describe(def), Flavor::V3),
                    v2: None,
                });
                kept_parts.insert(key.clone(), p);
            }
            let keys: Vec<PartKey> = defs.into_iter().map(|(k, _)| k).collect();
            let doc = match self.group_versions.remove(&path) {
                Some(d) if d.keys == keys => d.doc,
                _ => {
                    changed = true;
                    let ps: Vec<&Part> = keys
                        .iter()
                        .filter_map(|k| kept_parts.get(k))
                        .map(|p| &p.v3)
                        .collect();
                    let (title, version) =
                        if path.starts_with("api/") || path == "apis/apiextensions.k8s.io/v1" {
                            ("Kubernetes", crate::KUBERNETES_VERSION)
                        } else {
                            ("Kubernetes CRD Swagger", "v0.1.0")
                        };
                    Arc::new(Doc::new(&crest_openapi::v3_document(&ps, title, version)))
                }
            };
            group_versions.insert(path, GroupVersionDoc { keys, doc });
        }
        // A group-version that is no longer served changes the root too.
        changed |= !self.group_versions.is_empty();
        if changed || self.root.is_none() {
            let mut paths = serde_json::Map::new();
            for (p, gv) in &group_versions {
                let url = format!("/openapi/v3/{p}?hash={}", gv.doc.etag);
                paths.insert(p.clone(), serde_json::json!({ "serverRelativeURL": url }));
            }
            self.root = Some(Arc::new(Doc::new(&serde_json::json!({ "paths": paths }))));
        }
        if changed || self.all_keys != all_keys {
            self.v2 = None;
        }
        self.parts = kept_parts;
        self.group_versions = group_versions;
        self.all_keys = all_keys;
        self.source = Some(res.clone());
    }

    fn v2(&mut self, res: &Resources) -> Arc<Doc> {
        if let Some(d) = &self.v2 {
            return d.clone();
        }
        let mut defs: HashMap<&PartKey, &Arc<ResourceDef>> = HashMap::new();
        let keys: Vec<PartKey> = res.all().map(|d| part_key(res, d)).collect();
        let all: Vec<&Arc<ResourceDef>> = res.all().collect();
        for (k, d) in keys.iter().zip(all) {
            defs.insert(k, d);
        }
        let mut parts = vec![];
        for k in &self.all_keys {
            let (Some(cached), Some(def)) = (self.parts.get_mut(k), defs.get(k)) else {
                continue;
            };
            let p = cached
                .v2
                .get_or_insert_with(|| Arc::new(crest_openapi::part(&describe(def), Flavor::V2)))
                .clone();
            parts.push(p);
        }
        let refs: Vec<&Part> = parts.iter().map(|p| p.as_ref()).collect();
        let doc = Arc::new(Doc::new(&crest_openapi::v2_document(
            &refs,
            crate::KUBERNETES_VERSION,
        )));
        self.v2 = Some(doc.clone());
        doc
    }
}

/// The media types of an Accept header, most preferred first (q=0 dropped).
fn accepted(accept: Option<&str>) -> Vec<String> {
    let accept = accept.filter(|a| !a.trim().is_empty()).unwrap_or("*/*");
    let mut clauses: Vec<(f32, usize, String)> = accept
        .split(',')
        .enumerate()
        .filter_map(|(i, c)| {
            let mut parts = c.split(';');
            let mt = parts.next()?.trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            (q > 0.0 && !mt.is_empty()).then_some((q, i, mt))
        })
        .collect();
    clauses.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    clauses.into_iter().map(|c| c.2).collect()
}

/// Whether JSON is the first acceptable form among those kube-openapi serves (JSON and the
/// gnostic protobuf, which Crest does not produce).
fn wants_json(accept: Option<&str>) -> bool {
    accepted(accept).iter().any(|mt| {
        let (ty, sub) = mt.split_once('/').unwrap_or((mt.as_str(), ""));
        (ty == "application" || ty == "*") && (sub == "json" || sub == "*")
    })
}

fn http_date(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Go's `http.ServeContent` conditional handling: If-None-Match, else If-Modified-Since.
fn not_modified(headers: &HeaderMap, doc: &Doc) -> bool {
    if let Some(inm) = headers
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    {
        return inm.split(',').any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/").trim_matches('"') == doc.etag
        });
    }
    headers
        .get(http::header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| chrono::DateTime::parse_from_rfc2822(&v.replace("GMT", "+0000")).ok())
        .is_some_and(|since| doc.last_modified.timestamp() <= since.timestamp())
}

fn set(r: &mut Response<Body>, name: http::header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
}

/// The document, or 304 when the client's copy is current. Cache-Control is kube-apiserver's
/// default (`no-cache, private`) unless the URL is content-addressed.
fn serve_doc(req: &Request<Incoming>, doc: &Doc, immutable: bool) -> Response<Body> {
    let mut r = if not_modified(req.headers(), doc) {
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(full(doc.bytes.clone()));
        set(&mut r, http::header::CONTENT_TYPE, "application/json");
        r
    };
    set(&mut r, http::header::ETAG, &format!("\"{}\"", doc.etag));
    set(
        &mut r,
        http::header::LAST_MODIFIED,
        &http_date(doc.last_modified),
    );
    set(&mut r, http::header::VARY, "Accept");
    if immutable {
        set(&mut r, http::header::CACHE_CONTROL, "public, immutable");
        let expires = chrono::Utc::now() + chrono::Duration::days(365);
        set(
            &mut r,
            http::header::EXPIRES,
            &expires.format("%a, %d %b %Y %H:%M:%S UTC").to_string(),
        );
    } else {
        set(&mut r, http::header::CACHE_CONTROL, "no-cache, private");
    }
    r
}

fn status_only(code: StatusCode) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = code;
    set(&mut r, http::header::CACHE_CONTROL, "no-cache, private");
    set(&mut r, http::header::VARY, "Accept");
    r
}

pub fn serve(
    app: &App,
    req: &Request<Incoming>,
    path: &str,
    accept: Option<&str>,
) -> Result<Response<Body>, ApiError> {
    let res = app.registry.resources();
    // Only JSON is produced: a client that accepts only the protobuf form gets kube-openapi's
    // 406, from which client-go falls back (kubectl needs the v3 JSON documents only).
    let json = wants_json(accept);
    let mut state = app.openapi.state.lock().unwrap_or_else(|p| p.into_inner());
    state.sync(&res);
    if path == "/openapi/v2" {
        if !json {
            return Ok(status_only(StatusCode::NOT_ACCEPTABLE));
        }
        let doc = state.v2(&res);
        drop(state);
        return Ok(serve_doc(req, &doc, false));
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        let Some(root) = state.root.clone() else {
            return Err(ApiError::path_not_found());
        };
        drop(state);
        return Ok(serve_doc(req, &root, false));
    }
    let Some(doc) = state.group_versions.get(rest).map(|g| g.doc.clone()) else {
        return Err(ApiError::path_not_found());
    };
    drop(state);
    if !json {
        return Ok(status_only(StatusCode::NOT_ACCEPTABLE));
    }
    let hash = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "hash")
            .map(|(_, v)| v.into_owned())
    });
    match hash.filter(|h| !h.is_empty()) {
        Some(h) if h == doc.etag => Ok(serve_doc(req, &doc, true)),
        // A stale hash: the current content lives at another immutable URL.
        Some(_) => {
            let mut r = status_only(StatusCode::MOVED_PERMANENTLY);
            set(&mut r, http::header::CONTENT_TYPE, "application/json");
            set(&mut r, http::header::ETAG, &format!("\"{}\"", doc.etag));
            set(
                &mut r,
                http::header::LOCATION,
                &format!("/openapi/v3/{rest}?hash={}", doc.etag),
            );
            Ok(r)
        }
        None => Ok(serve_doc(req, &doc, false)),
    }
}
