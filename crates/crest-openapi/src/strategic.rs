//! Strategic merge patch (apimachinery's `strategicpatch.StrategicMergePatch`) for the built-in
//! kinds, driven by their published definitions: a list whose property says
//! `x-kubernetes-patch-strategy: merge` merges — by its `x-kubernetes-patch-merge-key` for lists
//! of objects (ServiceSpec.ports by `port`, ownerReferences by `uid`, conditions by `type`),
//! as a set union for lists of scalars (finalizers) — and every other list is replaced; maps
//! merge key by key, `null` deletes. The directives: `$patch: replace | delete` (on a map or as
//! a list element), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
//! `$setElementOrder/<field>`. Directives never reach the result.
//!
//! Pure: the patch applies to the JSON of the current object, as kube-apiserver applies it to
//! the unstructured map of the object before decoding the result.

use serde_json::{Map, Value};

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
/// How deep patches are walked (deeper ones are refused, as decoding refuses them anyway).
const MAX_DEPTH: usize = 100;

/// A failed patch: the message kube-apiserver answers with, and whether it is a 422 rather
/// than a 400.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    pub message: String,
    pub unprocessable: bool,
}

fn bad(message: String) -> PatchError {
    PatchError {
        message,
        unprocessable: false,
    }
}

/// Where the patch meta of a value comes from: a definition's schema (or nothing known).
#[derive(Clone, Copy)]
struct Schema<'a>(Option<&'a Value>);

impl<'a> Schema<'a> {
    fn resolve(defs: &'a Map<String, Value>, s: Option<&'a Value>) -> Schema<'a> {
        Schema(s.and_then(|s| super::typed::resolve(defs, s)))
    }

    /// The property `key` of an object schema (or the value schema of a map), with its raw
    /// (unresolved) form, which carries the patch extensions.
    fn property(self, defs: &'a Map<String, Value>, key: &str) -> (Option<&'a Value>, Schema<'a>) {
        let Some(s) = self.0 else {
            return (None, Schema(None));
        };
        let raw = s
            .get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()));
        (raw, Schema::resolve(defs, raw))
    }

    fn items(self, defs: &'a Map<String, Value>) -> Schema<'a> {
        Schema::resolve(defs, self.0.and_then(|s| s.get("items")))
    }
}

/// The patch strategy and merge key a property declares.
fn patch_meta(raw: Option<&Value>) -> (bool, bool, Option<&str>) {
    let strategy = raw
        .and_then(|r| r.get("x-kubernetes-patch-strategy"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let merge = strategy.split(',').any(|s| s == "merge");
    let retain = strategy.split(',').any(|s| s == "retainKeys");
    let key = raw
        .and_then(|r| r.get("x-kubernetes-patch-merge-key"))
        .and_then(Value::as_str);
    (merge, retain, key)
}

/// Applies the strategic merge patch `patch` to `original`, an object of the built-in
/// definition `definition` (e.g. `io.k8s.api.core.v1.Service`; `None` or an unknown name: no
/// list merges, everything else as above).
pub fn apply(
    definition: Option<&str>,
    original: &Value,
    patch: &Value,
) -> Result<Value, PatchError> {
    let defs = super::builtin_v3();
    let schema = Schema(definition.and_then(|d| defs.get(d)));
    let Value::Object(p) = patch else {
        return Err(bad(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(patch)
        )));
    };
    let o = original.as_object().cloned().unwrap_or_default();
    Ok(Value::Object(merge_map(defs, schema, o, p, 0)?))
}

/// encoding/json's name of a value's JSON type.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn merge_map(
    defs: &Map<String, Value>,
    schema: Schema<'_>,
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    depth: usize,
) -> Result<Map<String, Value>, PatchError> {
    if depth > MAX_DEPTH {
        return Err(bad("the patch is nested too deeply".into()));
    }
    if let Some(d) = patch.get(DIRECTIVE) {
        return match d.as_str() {
            Some("replace") => Ok(strip(patch)),
            Some("delete") => Ok(Map::new()),
            _ => Err(bad(format!(
                "unknown patch type: {} in map: {}",
                go_value(d),
                go_map(patch)
            ))),
        };
    }
    if let Some(keys) = patch.get(RETAIN_KEYS) {
        let Some(keys) = keys.as_array() else {
            return Err(bad(format!(
                "invalid patch: doesn't support retainKeys in format other than list: {}",
                go_value(keys)
            )));
        };
        let keep: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
        for k in patch.keys().filter(|k| !k.starts_with('$')) {
            if !keep.contains(&k.as_str()) {
                return Err(PatchError {
                    message: format!(
                        "The patch contains key {k:?} that is not in the list of keys to retain: {}",
                        go_value(&Value::Array(keys.clone()))
                    ),
                    unprocessable: true,
                });
            }
        }
        original.retain(|k, _| keep.contains(&k.as_str()));
    }
    // The server's lists as they were, for `$setElementOrder`.
    let server_lists: Vec<(String, Vec<Value>)> = patch
        .keys()
        .filter_map(|k| k.strip_prefix(SET_ELEMENT_ORDER))
        .map(|f| {
            let list = original
                .get(f)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            (f.to_string(), list)
        })
        .collect();
    // Deletions from primitive lists first, then the fields, then the element orders.
    for (k, v) in patch {
        let Some(field) = k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) else {
            continue;
        };
        let Some(remove) = v.as_array() else {
            return Err(bad(format!(
                "invalid patch: doesn't support {k} in format other than list: {}",
                go_value(v)
            )));
        };
        if let Some(Value::Array(list)) = original.get_mut(field) {
            list.retain(|x| !remove.contains(x));
            // An emptied list is absent once decoded into its (omitempty) field.
            if list.is_empty() {
                original.remove(field);
            }
        }
    }
    for (k, pv) in patch {
        if k.starts_with('$') {
            continue;
        }
        if pv.is_null() {
            original.remove(k);
            continue;
        }
        let (raw, sub) = schema.property(defs, k);
        let merged = match (original.remove(k), pv) {
            (Some(Value::Object(o)), Value::Object(p)) => {
                // A map whose patch is `$patch: delete` goes away.
                if p.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
                    continue;
                }
                Value::Object(merge_map(defs, sub, o, p, depth + 1)?)
            }
            (Some(Value::Array(o)), Value::Array(p)) => {
                let (merge, _, key) = patch_meta(raw);
                if merge {
                    Value::Array(merge_list(defs, sub.items(defs), o, p, key, depth)?)
                } else {
                    strip_value(pv)
                }
            }
            (None, Value::Object(p))
                if p.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") =>
            {
                continue;
            }
            (None, Value::Array(p)) => {
                let (merge, _, key) = patch_meta(raw);
                if merge {
                    Value::Array(merge_list(defs, sub.items(defs), vec![], p, key, depth)?)
                } else {
                    strip_value(pv)
                }
            }
            _ => strip_value(pv),
        };
        original.insert(k.clone(), merged);
    }
    for (k, order) in patch {
        let Some(field) = k.strip_prefix(SET_ELEMENT_ORDER) else {
            continue;
        };
        let Some(order) = order.as_array() else {
            return Err(bad(format!(
                "invalid patch: doesn't support {k} in format other than list: {}",
                go_value(order)
            )));
        };
        let (raw, _) = schema.property(defs, field);
        let (_, _, key) = patch_meta(raw);
        let server = server_lists
            .iter()
            .find(|(f, _)| f == field)
            .map_or(&[][..], |(_, l)| l.as_slice());
        if let Some(Value::Array(list)) = original.get_mut(field) {
            reorder(list, order, server, key);
        }
    }
    Ok(original)
}

/// The identity of a list element for ordering: its merge key's value, or itself.
fn identity<'v>(v: &'v Value, key: Option<&str>) -> Option<&'v Value> {
    match key {
        Some(k) => v.get(k),
        None => Some(v),
    }
}

/// `$setElementOrder` (upstream `normalizeElementOrder`): the elements the order names come in
/// its order; the server's other elements are interleaved by their place in the server's list
/// (`server`, before the patch): one goes first only when both it and the next named element
/// were in that list and it came before.
fn reorder(list: &mut Vec<Value>, order: &[Value], server: &[Value], key: Option<&str>) {
    let order_ids: Vec<&Value> = order.iter().filter_map(|o| identity(o, key)).collect();
    let position =
        |v: &Value| identity(v, key).and_then(|id| order_ids.iter().position(|o| *o == id));
    let server_index = |v: &Value| {
        let id = identity(v, key)?;
        server.iter().position(|s| identity(s, key) == Some(id))
    };
    let (mut named, server_only): (Vec<Value>, Vec<Value>) =
        list.drain(..).partition(|v| position(v).is_some());
    named.sort_by_key(|v| position(v));
    let mut server_only: Vec<Value> = server_only;
    server_only.sort_by_key(|v| server_index(v));
    let (mut i, mut j) = (0, 0);
    while i < server_only.len() && j < named.len() {
        let server_first = match (server_index(&server_only[i]), server_index(&named[j])) {
            (Some(a), Some(b)) => a < b,
            _ => false,
        };
        if server_first {
            list.push(server_only[i].clone());
            i += 1;
        } else {
            list.push(named[j].clone());
            j += 1;
        }
    }
    list.extend(server_only.into_iter().skip(i));
    list.extend(named.into_iter().skip(j));
}

/// `mergeSlice`: a list with the merge strategy.
fn merge_list(
    defs: &Map<String, Value>,
    items: Schema<'_>,
    mut original: Vec<Value>,
    patch: &[Value],
    key: Option<&str>,
    depth: usize,
) -> Result<Vec<Value>, PatchError> {
    let maps = patch.iter().any(Value::is_object);
    if !maps {
        // Scalars: the union, in order, without duplicates.
        for v in patch {
            if !original.contains(v) {
                original.push(v.clone());
            }
        }
        let mut seen = vec![];
        original.retain(|v| {
            if seen.contains(v) {
                false
            } else {
                seen.push(v.clone());
                true
            }
        });
        return Ok(original);
    }
    // `{"$patch": "replace"}` as an element: the list is the patch's other elements.
    if patch
        .iter()
        .any(|p| p.get(DIRECTIVE).and_then(Value::as_str) == Some("replace"))
    {
        return Ok(patch
            .iter()
            .filter(|p| p.get(DIRECTIVE).is_none())
            .map(strip_value)
            .collect());
    }
    let Some(key) = key else {
        return Err(bad("merge key is required for a list of maps".into()));
    };
    for p in patch {
        let Some(pm) = p.as_object() else {
            return Err(bad(format!(
                "unable to merge a list of maps with a non-map element: {}",
                go_value(p)
            )));
        };
        let Some(id) = pm.get(key) else {
            return Err(bad(format!(
                "map: {} does not contain declared merge key: {key}",
                go_map(pm)
            )));
        };
        let found = original.iter().position(|o| o.get(key) == Some(id));
        match pm.get(DIRECTIVE).and_then(Value::as_str) {
            Some("delete") => {
                original.retain(|o| o.get(key) != Some(id));
            }
            Some("replace") => {
                let v = Value::Object(strip(pm));
                match found {
                    Some(i) => original[i] = v,
                    None => original.push(v),
                }
            }
            Some(other) => {
                return Err(bad(format!(
                    "unknown patch type: {other} in map: {}",
                    go_map(pm)
                )))
            }
            None => match found {
                Some(i) => {
                    let o = original[i].as_object().cloned().unwrap_or_default();
                    original[i] = Value::Object(merge_map(defs, items, o, pm, depth + 1)?);
                }
                None => original.push(Value::Object(strip(pm))),
            },
        }
    }
    Ok(original)
}

/// A patch value as data: directives removed (and `null`s dropped, as the server applies
/// patches with IgnoreUnmatchedNulls).
fn strip_value(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(strip(m)),
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|x| !x.as_object().is_some_and(|m| m.contains_key(DIRECTIVE)))
                .map(strip_value)
                .collect(),
        ),
        other => other.clone(),
    }
}

fn strip(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, v)| !k.starts_with('$') && !v.is_null())
        .map(|(k, v)| (k.clone(), strip_value(v)))
        .collect()
}

/// Go's `%v` of a decoded JSON value, as the patch errors print it.
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => go_map(m),
        other => other.to_string(),
    }
}

fn go_map(m: &Map<String, Value>) -> String {
    let items: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}:{}", go_value(v)))
        .collect();
    format!("map[{}]", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SVC: Option<&str> = Some("io.k8s.api.core.v1.Service");

    fn svc() -> Value {
        json!({
            "metadata": {"name": "web", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"],
                         "ownerReferences": [{"uid": "u1", "name": "o1"}]},
            "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP"},
                               {"name": "https", "port": 443, "protocol": "TCP"}],
                     "selector": {"app": "web"}, "externalIPs": ["192.0.2.1"]},
        })
    }

    #[test]
    fn lists_merge_by_their_keys() {
        let p = json!({
            "metadata": {"labels": {"a": null, "c": "3"}, "finalizers": ["y", "x"],
                         "ownerReferences": [{"uid": "u2", "name": "o2"}]},
            "spec": {"ports": [{"port": 443, "name": "tls"}, {"port": 8080, "name": "alt"}],
                     "externalIPs": ["192.0.2.2"]},
        });
        let out = apply(SVC, &svc(), &p).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"b": "2", "c": "3"}));
        assert_eq!(out["metadata"]["finalizers"], json!(["x", "y"]));
        assert_eq!(
            out["metadata"]["ownerReferences"],
            json!([{"uid": "u1", "name": "o1"}, {"uid": "u2", "name": "o2"}])
        );
        assert_eq!(
            out["spec"]["ports"],
            json!([{"name": "http", "port": 80, "protocol": "TCP"},
                   {"name": "tls", "port": 443, "protocol": "TCP"},
                   {"name": "alt", "port": 8080}])
        );
        // A list without a strategy is replaced.
        assert_eq!(out["spec"]["externalIPs"], json!(["192.0.2.2"]));
    }

    #[test]
    fn directives() {
        // kubectl apply's patch removing a port: $setElementOrder and $patch: delete.
        let p = json!({"spec": {
            "$setElementOrder/ports": [{"port": 443}],
            "ports": [{"port": 80, "$patch": "delete"}],
        }});
        let out = apply(SVC, &svc(), &p).unwrap();
        assert_eq!(
            out["spec"]["ports"],
            json!([{"name": "https", "port": 443, "protocol": "TCP"}])
        );
        // Reordering, with a new element.
        let p = json!({"spec": {
            "$setElementOrder/ports": [{"port": 8080}, {"port": 443}, {"port": 80}],
            "ports": [{"port": 8080}],
        }});
        let out = apply(SVC, &svc(), &p).unwrap();
        let ports: Vec<i64> = out["spec"]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["port"].as_i64().unwrap())
            .collect();
        assert_eq!(ports, [8080, 443, 80]);
        // Replacing a list and a map.
        let p = json!({"spec": {"ports": [{"$patch": "replace"}, {"port": 1}],
                                "selector": {"$patch": "replace", "new": "x"}}});
        let out = apply(SVC, &svc(), &p).unwrap();
        assert_eq!(out["spec"]["ports"], json!([{"port": 1}]));
        assert_eq!(out["spec"]["selector"], json!({"new": "x"}));
        // Deleting a map; deleting from a primitive list; retaining keys.
        let p = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"],
                                    "labels": {"$patch": "delete"}},
                       "spec": {"$retainKeys": ["ports", "type"], "type": "ClusterIP"}});
        let out = apply(SVC, &svc(), &p).unwrap();
        assert!(out["metadata"].get("finalizers").is_none());
        assert!(out["metadata"].get("labels").is_none());
        assert_eq!(
            out["spec"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["ports", "type"]
        );
    }

    #[test]
    fn errors() {
        let e = apply(SVC, &svc(), &json!({"spec": {"ports": [{"name": "x"}]}})).unwrap_err();
        assert_eq!(
            e.message,
            "map: map[name:x] does not contain declared merge key: port"
        );
        let e = apply(SVC, &svc(), &json!({"spec": {"$patch": "bogus"}})).unwrap_err();
        assert_eq!(
            e.message,
            "unknown patch type: bogus in map: map[$patch:bogus]"
        );
        let e = apply(
            SVC,
            &svc(),
            &json!({"spec": {"$retainKeys": ["ports"], "type": "x"}}),
        )
        .unwrap_err();
        assert!(e.unprocessable);
        // Unknown definitions: maps merge, lists are replaced.
        let out = apply(None, &svc(), &json!({"spec": {"ports": [{"port": 1}]}})).unwrap();
        assert_eq!(out["spec"]["ports"], json!([{"port": 1}]));
    }
}
