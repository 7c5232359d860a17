//! CRD support the server needs now: defaulting, the core CRD validation, and the naming /
//! establishing conditions. (The full rules live in `crest-apiextensions` as they land.)

use crest_api::field::FieldPath;
use crest_api::validation::{is_dns1035_label, is_dns1123_subdomain};
use crest_api::{meta, FieldError, FieldErrors};
use serde_json::{json, Map, Value};

/// v1 defaulting: singular from kind, listKind, conversion strategy.
pub fn set_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
            && !kind.is_empty()
        {
            names.insert("singular".into(), kind.to_lowercase().into());
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
            && !kind.is_empty()
        {
            names.insert("listKind".into(), format!("{kind}List").into());
        }
    }
    if !spec.get("conversion").is_some_and(Value::is_object) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// ValidateCustomResourceDefinition (the parts that do not look inside schemas).
pub fn validate_create(crd: &Value) -> FieldErrors {
    let mut errs = vec![];
    let spec = crd.get("spec").cloned().unwrap_or(json!({}));
    let sp = FieldPath::new("spec");
    let group = s(&spec, "group");
    let names = spec.get("names").cloned().unwrap_or(json!({}));
    let plural = s(&names, "plural");
    let expected = format!("{plural}.{group}");
    if meta::name(crd) != expected {
        errs.push(FieldError::invalid(
            &FieldPath::new("metadata").child("name"),
            meta::name(crd),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errs.push(FieldError::required(&sp.child("group"), ""));
    } else {
        for m in is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid(&sp.child("group"), group, m));
        }
        if group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                &sp.child("group"),
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    let scope = s(&spec, "scope");
    if scope.is_empty() {
        errs.push(FieldError::required(&sp.child("scope"), ""));
    } else if scope != "Namespaced" && scope != "Cluster" {
        errs.push(FieldError::not_supported(
            &sp.child("scope"),
            scope,
            &["Cluster", "Namespaced"],
        ));
    }
    let np = sp.child("names");
    for f in ["plural", "singular"] {
        let v = s(&names, f);
        if v.is_empty() {
            errs.push(FieldError::required(&np.child(f), ""));
        } else {
            for m in is_dns1035_label(v) {
                errs.push(FieldError::invalid(&np.child(f), v, m));
            }
        }
    }
    let kind_re = |v: &str| {
        let lower = v.to_lowercase();
        is_dns1035_label(&lower)
            .into_iter()
            .map(|m| format!("may have mixed case, but should otherwise match: {}", m.replace("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", "[a-z]([-a-z0-9]*[a-z0-9])?")))
            .collect::<Vec<_>>()
    };
    for f in ["kind", "listKind"] {
        let v = s(&names, f);
        if v.is_empty() {
            errs.push(FieldError::required(&np.child(f), ""));
        } else {
            for m in kind_re(v) {
                errs.push(FieldError::invalid(&np.child(f), v, m));
            }
        }
    }
    if !s(&names, "kind").is_empty() && s(&names, "kind") == s(&names, "listKind") {
        errs.push(FieldError::invalid(
            &np.child("listKind"),
            s(&names, "listKind"),
            "kind and listKind cannot be the same",
        ));
    }
    if let Some(shorts) = names.get("shortNames").and_then(Value::as_array) {
        let mut seen = std::collections::HashSet::new();
        for (i, sn) in shorts.iter().enumerate() {
            let v = sn.as_str().unwrap_or_default();
            for m in is_dns1035_label(v) {
                errs.push(FieldError::invalid(&np.child("shortNames").index(i), v, m));
            }
            if !seen.insert(v) {
                errs.push(FieldError::duplicate(&np.child("shortNames").index(i), v));
            }
        }
    }
    let vp = sp.child("versions");
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        errs.push(FieldError::invalid(
            &vp,
            Value::Array(vec![]),
            "must have exactly one version marked as storage version",
        ));
    } else {
        let mut seen = std::collections::HashSet::new();
        let mut storage = 0;
        for (i, v) in versions.iter().enumerate() {
            let p = vp.index(i);
            let name = s(v, "name");
            if name.is_empty() {
                errs.push(FieldError::required(&p.child("name"), ""));
            } else {
                for m in is_dns1035_label(name) {
                    errs.push(FieldError::invalid(&p.child("name"), name, m));
                }
                if !seen.insert(name.to_string()) {
                    errs.push(FieldError::invalid(
                        &vp,
                        Value::Array(versions.clone()),
                        "must contain unique version names",
                    ));
                }
            }
            if v.get("storage") == Some(&Value::Bool(true)) {
                storage += 1;
            }
            if v.pointer("/schema/openAPIV3Schema")
                .is_none_or(Value::is_null)
            {
                errs.push(FieldError::required(
                    &p.child("schema").child("openAPIV3Schema"),
                    "schemas are required",
                ));
            }
        }
        if storage != 1 {
            errs.push(FieldError::invalid(
                &vp,
                Value::Array(versions),
                "must have exactly one version marked as storage version",
            ));
        }
    }
    if spec.get("preserveUnknownFields") == Some(&Value::Bool(true)) {
        errs.push(FieldError::invalid(
            &sp.child("preserveUnknownFields"),
            true,
            "must be false in order to use defaults in the schema",
        ));
    }
    errs
}

pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate_create(new);
    if s(&new["spec"], "group") != s(&old["spec"], "group") {
        errs.push(FieldError::invalid(
            &FieldPath::new("spec").child("group"),
            s(&new["spec"], "group"),
            "field is immutable",
        ));
    }
    errs
}

/// Sets a condition, keeping lastTransitionTime when the status did not change.
pub fn set_condition(obj: &mut Value, ctype: &str, status: &str, reason: &str, message: &str) {
    let Some(o) = obj.as_object_mut() else { return };
    let st = o.entry("status").or_insert_with(|| json!({}));
    if !st.is_object() {
        *st = json!({});
    }
    let Some(st) = st.as_object_mut() else { return };
    let conds = st.entry("conditions").or_insert_with(|| json!([]));
    if !conds.is_array() {
        *conds = json!([]);
    }
    let Some(conds) = conds.as_array_mut() else {
        return;
    };
    let now = meta::now_rfc3339();
    let mut c = Map::new();
    c.insert("type".into(), ctype.into());
    c.insert("status".into(), status.into());
    c.insert("lastTransitionTime".into(), now.into());
    c.insert("reason".into(), reason.into());
    c.insert("message".into(), message.into());
    match conds.iter_mut().find(|x| x["type"] == ctype) {
        Some(existing) => {
            if existing["status"] == status {
                if let Some(t) = existing.get("lastTransitionTime") {
                    c.insert("lastTransitionTime".into(), t.clone());
                }
            }
            *existing = Value::Object(c);
        }
        None => conds.push(Value::Object(c)),
    }
}

/// Adds the storage version to status.storedVersions.
pub fn add_stored_version(obj: &mut Value) {
    let storage = obj["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str())
        .map(str::to_string);
    let Some(storage) = storage else { return };
    let Some(o) = obj.as_object_mut() else { return };
    let st = o.entry("status").or_insert_with(|| json!({}));
    if let Some(st) = st.as_object_mut() {
        let sv = st.entry("storedVersions").or_insert_with(|| json!([]));
        if let Some(a) = sv.as_array_mut() {
            if !a.iter().any(|v| v == storage.as_str()) {
                a.push(storage.into());
            }
        }
    }
}

/// The naming controller's decision for one CRD against the others of its group, then
/// Established once names are accepted (it never goes back to False).
pub fn accept_and_establish(crd: &mut Value, others: &[Value]) {
    let group = s(&crd["spec"], "group").to_string();
    let names = crd["spec"]["names"].clone();
    let mut conflict: Option<(String, String)> = None;
    let taken = |f: &str, v: &str| -> bool {
        others
            .iter()
            .filter(|o| s(&o["spec"], "group") == group)
            .any(|o| {
                let an = &o["status"]["acceptedNames"];
                let list = |n: &Value| -> Vec<String> {
                    let mut out = vec![s(n, "plural").to_string(), s(n, "singular").to_string()];
                    out.extend(
                        n["shortNames"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|x| x.as_str().map(str::to_string)),
                    );
                    out
                };
                match f {
                    "kind" => s(an, "kind") == v || s(an, "listKind") == v,
                    "listKind" => s(an, "listKind") == v || s(an, "kind") == v,
                    _ => list(an).iter().any(|x| !x.is_empty() && x == v),
                }
            })
    };
    for f in ["plural", "singular"] {
        let v = s(&names, f);
        if !v.is_empty() && taken(f, v) && conflict.is_none() {
            conflict = Some(("NameConflict".into(), format!("{v:?} is already in use")));
        }
    }
    for sn in names["shortNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if taken("short", sn) && conflict.is_none() {
            conflict = Some(("NameConflict".into(), format!("{sn:?} is already in use")));
        }
    }
    for f in ["kind", "listKind"] {
        let v = s(&names, f);
        if !v.is_empty() && taken(f, v) && conflict.is_none() {
            let reason = if f == "kind" {
                "KindConflict"
            } else {
                "ListKindConflict"
            };
            conflict = Some((reason.into(), format!("{v:?} is already in use")));
        }
    }
    if crd.get("status").is_none_or(|s| !s.is_object()) {
        if let Some(o) = crd.as_object_mut() {
            o.insert("status".into(), json!({}));
        }
    }
    match conflict {
        Some((reason, message)) => {
            let accepted = crd["status"]
                .get("acceptedNames")
                .is_some_and(|a| !s(a, "plural").is_empty());
            if !accepted {
                crd["status"]["acceptedNames"] = json!({"plural": "", "kind": ""});
            }
            set_condition(crd, "NamesAccepted", "False", &reason, &message);
            if !accepted {
                set_condition(
                    crd,
                    "Established",
                    "False",
                    "NotAccepted",
                    "not all names are accepted",
                );
            }
        }
        None => {
            let mut accepted = Map::new();
            for f in [
                "plural",
                "singular",
                "shortNames",
                "kind",
                "listKind",
                "categories",
            ] {
                if let Some(v) = names.get(f).filter(|v| !v.is_null()) {
                    accepted.insert(f.into(), v.clone());
                }
            }
            crd["status"]["acceptedNames"] = Value::Object(accepted);
            set_condition(
                crd,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found",
            );
            set_condition(
                crd,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            );
        }
    }
    if crd["status"].get("storedVersions").is_none() {
        crd["status"]["storedVersions"] = json!([]);
    }
    add_stored_version(crd);
}
