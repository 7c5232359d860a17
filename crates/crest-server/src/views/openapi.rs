//! The OpenAPI documents built by `crest_openapi`, cached (`http::openapi` serves them with
//! kube-openapi's HTTP behaviour).
//!
//! Nothing is built per request. When the served resource set changes (a CRD write), the next
//! request re-syncs: each resource version's part is reused while its CRD's resourceVersion is
//! unchanged, and a group-version's document is re-rendered only if its parts changed, so a CRD
//! change among 500 costs one part and one document. The aggregated v2 document is rendered on
//! its first request after a change, and its protobuf form (gnostic's `Document`, converted from
//! the JSON as kube-openapi does) on the first request for that form, with the JSON's ETag and
//! time.

use crate::registry::resources::{ResourceDef, Resources};
use bytes::Bytes;
use crest_openapi::{Flavor, ObjectSchema, Part, Resource};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// A rendered document: its bytes, ETag (kube-openapi's SHA-512 hash) and build time.
pub(crate) struct Doc {
    pub(crate) bytes: Bytes,
    pub(crate) etag: String,
    pub(crate) last_modified: chrono::DateTime<chrono::Utc>,
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
    /// The protobuf form of a v2 document, and that document (current while it is `v2`).
    v2_protobuf: Option<(Arc<Doc>, Arc<Doc>)>,
    /// Part keys in v2 document order.
    all_keys: Vec<PartKey>,
}

#[derive(Default)]
pub(crate) struct OpenApiCache {
    state: Mutex<State>,
}

impl OpenApiCache {
    fn synced(&self, res: &Arc<Resources>) -> std::sync::MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.sync(res);
        state
    }

    /// `/openapi/v2`: the aggregated document, rendered on its first request after a change.
    pub(crate) fn v2(&self, res: &Arc<Resources>) -> Arc<Doc> {
        self.synced(res).v2(res)
    }

    /// `/openapi/v2` as protobuf: the v2 document converted to gnostic's `openapi.v2.Document`,
    /// with the JSON form's ETag and Last-Modified (kube-openapi reuses them; the responses vary
    /// by Accept).
    pub(crate) fn v2_protobuf(&self, res: &Arc<Resources>) -> Arc<Doc> {
        let mut state = self.synced(res);
        let json = state.v2(res);
        if let Some((of, pb)) = &state.v2_protobuf {
            if Arc::ptr_eq(of, &json) {
                return pb.clone();
            }
        }
        let value: serde_json::Value = serde_json::from_slice(&json.bytes).unwrap_or_default();
        let pb = Arc::new(Doc {
            bytes: Bytes::from(crest_openapi::v2_protobuf(&value)),
            etag: json.etag.clone(),
            last_modified: json.last_modified,
        });
        state.v2_protobuf = Some((json, pb.clone()));
        pb
    }

    /// `/openapi/v3`: the discovery document listing every group-version's URL.
    pub(crate) fn v3_root(&self, res: &Arc<Resources>) -> Option<Arc<Doc>> {
        self.synced(res).root.clone()
    }

    /// `/openapi/v3/<path>` (`api/v1`, `apis/<group>/<version>`).
    pub(crate) fn v3_group_version(&self, res: &Arc<Resources>, path: &str) -> Option<Arc<Doc>> {
        self.synced(res)
            .group_versions
            .get(path)
            .map(|g| g.doc.clone())
    }
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
            // Upstream publishes no schema for a non-structural one, which only a CRD from
            // v1beta1 that preserves unknown fields can still hold.
            ObjectSchema::Custom(def.schema.as_ref().filter(|s| {
                !def.preserve_unknown_fields || crest_apiextensions::is_structural(s).is_empty()
            }))
        } else {
            ObjectSchema::BuiltIn
        },
        preserve_unknown_fields: def.preserve_unknown_fields,
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
                            ("Kubernetes", crate::views::KUBERNETES_VERSION)
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
            crate::views::KUBERNETES_VERSION,
        )));
        self.v2 = Some(doc.clone());
        doc
    }
}
