//! Discovery documents: the legacy form (/api, /apis, /apis/G, /apis/G/V) and the aggregated
//! `apidiscovery.k8s.io/v2` form that kubectl 1.32 asks for.

use crate::registry::builtin::{CreateOnly, CREATE_ONLY};
use crate::registry::resources::{ResourceDef, Resources};
use crest_api::GroupVersion;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Verbs in the order kube-apiserver lists them.
fn ordered_verbs(verbs: &[String]) -> Vec<String> {
    const ORDER: [&str; 8] = [
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "create",
        "update",
        "watch",
    ];
    ORDER
        .iter()
        .filter(|v| verbs.iter().any(|x| x == *v))
        .map(|v| v.to_string())
        .collect()
}

/// A resource's verbs as discovery lists them: a custom resource's in apiextensions' fixed
/// order, a built-in's sorted (upstream's installer sorts them).
fn discovery_verbs(def: &ResourceDef) -> Vec<String> {
    let mut verbs = ordered_verbs(&def.api.verbs);
    if def.crd_name.is_none() {
        verbs.sort();
    }
    verbs
}

/// `discovery.StorageVersionHash` of the resource's storage version and kind: the first 8
/// bytes of the SHA-256 of `group/version/kind`, in standard base64. Storage-migration tools
/// compare it to learn that the storage version changed.
fn storage_version_hash(def: &ResourceDef) -> String {
    use base64::Engine as _;
    let gv = &def.storage_api_version;
    let gvk = if gv.contains('/') {
        format!("{gv}/{}", def.api.kind)
    } else {
        format!("/{gv}/{}", def.api.kind)
    };
    let digest = ring::digest::digest(&ring::digest::SHA256, gvk.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

fn subresource_verbs(sub: &str) -> Vec<&'static str> {
    match sub {
        "finalize" => vec!["update"],
        _ => vec!["get", "patch", "update"],
    }
}

fn subresource_kind(def: &ResourceDef, sub: &str) -> (String, String, String) {
    match sub {
        "scale" => ("autoscaling".into(), "v1".into(), "Scale".into()),
        _ => (
            def.api.group.clone(),
            def.api.version.clone(),
            def.api.kind.clone(),
        ),
    }
}

/// The create-only resources of a group version.
fn create_only(gv: &GroupVersion) -> impl Iterator<Item = &'static CreateOnly> + '_ {
    CREATE_ONLY
        .iter()
        .filter(move |c| c.group == gv.group && c.version == gv.version)
}

/// Whether a resource has a subresource served outside the generic pipeline:
/// `serviceaccounts/token` (TokenRequest).
fn has_token(def: &ResourceDef) -> bool {
    def.api.group.is_empty() && def.api.plural == "serviceaccounts"
}

/// `/api`: APIVersions.
pub(crate) fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": GroupVersion::new(name, v).api_version(), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(Value::Null);
    json!({"name": name, "versions": vs, "preferredVersion": preferred})
}

/// `/apis`: APIGroupList (without the core group).
pub(crate) fn api_group_list(res: &Resources) -> Value {
    let groups: Vec<Value> = res
        .groups
        .iter()
        .filter(|g| !g.name.is_empty())
        .map(|g| group_json(&g.name, &g.versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/G`: APIGroup.
pub(crate) fn api_group(res: &Resources, group: &str) -> Option<Value> {
    let g = res.group(group).filter(|g| !g.name.is_empty())?;
    let mut v = group_json(&g.name, &g.versions);
    if let Some(o) = v.as_object_mut() {
        o.insert("kind".into(), "APIGroup".into());
        o.insert("apiVersion".into(), "v1".into());
    }
    Some(v)
}

/// `/api/v1`, `/apis/G/V`: APIResourceList.
pub(crate) fn api_resource_list(res: &Resources, gv: &GroupVersion) -> Option<Value> {
    let defs = res.group_version(gv);
    if defs.is_none() && create_only(gv).next().is_none() {
        return None;
    }
    let mut out = vec![];
    for d in defs.unwrap_or_default() {
        let a = &d.api;
        let mut r = Map::new();
        r.insert("name".into(), a.plural.clone().into());
        r.insert("singularName".into(), a.singular.clone().into());
        r.insert("namespaced".into(), a.namespaced.into());
        r.insert("kind".into(), a.kind.clone().into());
        r.insert("verbs".into(), json!(discovery_verbs(d)));
        r.insert("storageVersionHash".into(), storage_version_hash(d).into());
        if !a.short_names.is_empty() {
            r.insert("shortNames".into(), json!(a.short_names));
        }
        if !a.categories.is_empty() {
            r.insert("categories".into(), json!(a.categories));
        }
        out.push(Value::Object(r));
        for sub in &a.subresources {
            let (g, v, k) = subresource_kind(d, sub);
            let mut s = json!({
                "name": format!("{}/{}", a.plural, sub),
                "singularName": "",
                "namespaced": a.namespaced,
                "kind": k,
                "verbs": subresource_verbs(sub),
            });
            if sub == "scale" {
                s["group"] = g.into();
                s["version"] = v.into();
            }
            out.push(s);
        }
        if has_token(d) {
            out.push(json!({
                "name": "serviceaccounts/token",
                "singularName": "",
                "namespaced": true,
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
                "verbs": ["create"],
            }));
        }
    }
    for c in create_only(gv) {
        out.push(json!({
            "name": c.plural,
            "singularName": c.kind.to_ascii_lowercase(),
            "namespaced": c.namespaced,
            "kind": c.kind,
            "verbs": ["create"],
        }));
    }
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv.api_version(), "resources": out}),
    )
}

fn aggregated_resource(d: &Arc<ResourceDef>) -> Value {
    let a = &d.api;
    let mut r = Map::new();
    r.insert("resource".into(), a.plural.clone().into());
    r.insert(
        "responseKind".into(),
        json!({"group": a.group, "version": a.version, "kind": a.kind}),
    );
    r.insert(
        "scope".into(),
        if a.namespaced {
            "Namespaced"
        } else {
            "Cluster"
        }
        .into(),
    );
    r.insert("singularResource".into(), a.singular.clone().into());
    r.insert("verbs".into(), json!(discovery_verbs(d)));
    if !a.short_names.is_empty() {
        r.insert("shortNames".into(), json!(a.short_names));
    }
    if !a.categories.is_empty() {
        r.insert("categories".into(), json!(a.categories));
    }
    let mut subs: Vec<Value> = a
        .subresources
        .iter()
        .map(|s| {
            let (g, v, k) = subresource_kind(d, s);
            json!({"subresource": s, "responseKind": {"group": g, "version": v, "kind": k}, "verbs": subresource_verbs(s)})
        })
        .collect();
    if has_token(d) {
        subs.push(json!({"subresource": "token", "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}, "verbs": ["create"]}));
    }
    if !subs.is_empty() {
        r.insert("subresources".into(), Value::Array(subs));
    }
    Value::Object(r)
}

/// The aggregated discovery document for `/api` (`core = true`) or `/apis`.
pub(crate) fn aggregated(res: &Resources, core: bool, v2beta1: bool) -> Value {
    let mut items = vec![];
    for g in res.groups.iter().filter(|g| g.name.is_empty() == core) {
        let versions: Vec<Value> = g
            .versions
            .iter()
            .filter_map(|v| {
                let gv = GroupVersion::new(&g.name, v);
                let defs = res.group_version(&gv);
                if defs.is_none() && create_only(&gv).next().is_none() {
                    return None;
                }
                let mut resources: Vec<Value> = defs
                    .unwrap_or_default()
                    .iter()
                    .map(aggregated_resource)
                    .collect();
                resources.extend(create_only(&gv).map(|c| {
                    json!({
                        "resource": c.plural,
                        "responseKind": {"group": c.group, "version": c.version, "kind": c.kind},
                        "scope": if c.namespaced { "Namespaced" } else { "Cluster" },
                        "singularResource": c.kind.to_ascii_lowercase(),
                        "verbs": ["create"],
                    })
                }));
                Some(json!({"version": v, "resources": resources, "freshness": "Current"}))
            })
            .collect();
        let mut md = Map::new();
        if !g.name.is_empty() {
            md.insert("name".into(), g.name.clone().into());
        }
        md.insert("creationTimestamp".into(), Value::Null);
        items.push(json!({"metadata": md, "versions": versions}));
    }
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": if v2beta1 { "apidiscovery.k8s.io/v2beta1" } else { "apidiscovery.k8s.io/v2" },
        "metadata": {},
        "items": items,
    })
}
