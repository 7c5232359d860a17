//! Table-style cases of server-side apply's ownership semantics, written after
//! structured-merge-diff's merge tests (ownership transfer, removal of fields an applier
//! stops applying, shared ownership, conflicts, the list types, several appliers, nested
//! associative lists) and the apiserver's field manager tests (managedFields bookkeeping),
//! on a CronTab-like custom resource and on built-in kinds.

use crest_managedfields::reset_fields;
use crest_managedfields::{ApplyError, FieldManager, ManagedFields, Schema, Set};
use serde_json::{json, Map, Value};

const AV: &str = "stable.example.com/v1";
const T0: &str = "2024-05-01T10:00:00Z";
const T1: &str = "2024-05-01T10:00:01Z";
const T2: &str = "2024-05-01T10:00:02Z";

fn defs() -> Map<String, Value> {
    let mut all = Map::new();
    for src in [
        include_str!("../../crest-openapi/src/meta.json"),
        include_str!("../../crest-openapi/src/builtin/core_v1.json"),
        include_str!("../../crest-openapi/src/builtin/apimachinery.json"),
    ] {
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(src) {
            all.extend(m);
        }
    }
    all
}

fn crontab_schema() -> Schema {
    let s = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "cronSpec": {"type": "string"},
                    "image": {"type": "string"},
                    "replicas": {"type": "integer"},
                    "a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                        "additionalProperties": {"type": "string"}},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "containers": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {
                            "name": {"type": "string"},
                            "image": {"type": "string"},
                            "ports": {
                                "type": "array",
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                                "items": {"type": "object", "properties": {
                                    "containerPort": {"type": "integer"},
                                    "protocol": {"type": "string", "default": "TCP"},
                                    "name": {"type": "string"},
                                }},
                            },
                        }},
                    },
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                },
            },
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    });
    Schema::from_crd(Some(&s), &defs()).unwrap()
}

fn fm(schema: &Schema) -> FieldManager<'_> {
    FieldManager {
        schema,
        api_version: AV,
        kind: "CronTab",
        subresource: "",
        reset_fields: None,
    }
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": AV, "kind": "CronTab",
        "metadata": {"name": "c", "namespace": "default"}, "spec": spec})
}

/// The stored object: uid and resourceVersion as the server sets them.
fn stored(mut v: Value) -> Value {
    v["metadata"]["uid"] = json!("u-1");
    v["metadata"]["resourceVersion"] = json!("1");
    v
}

fn entries(v: &Value) -> Vec<(String, String, Value)> {
    v["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_string(),
                        e["operation"].as_str().unwrap_or("").to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn apply(
    fm: &FieldManager<'_>,
    live: Option<&Value>,
    config: Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApplyError> {
    fm.apply(live, &config, manager, force, T1).map(stored)
}

#[test]
fn create_records_an_update_entry() {
    let s = crontab_schema();
    let mut new = obj(json!({"cronSpec": "* * * * */5", "image": "img"}));
    new["metadata"]["labels"] = json!({"app": "x"});
    fm(&s).update(None, &mut new, "kubectl-create", T0);
    let mf = &new["metadata"]["managedFields"];
    assert_eq!(
        mf,
        &json!([{
            "apiVersion": AV, "fieldsType": "FieldsV1", "manager": "kubectl-create",
            "operation": "Update", "time": T0,
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                         "f:spec": {".": {}, "f:cronSpec": {}, "f:image": {}}},
        }])
    );
}

#[test]
fn update_without_changes_records_nothing() {
    let s = crontab_schema();
    let mut live = obj(json!({"image": "img"}));
    fm(&s).update(None, &mut live, "creator", T0);
    let live = stored(live);
    let mut new = live.clone();
    fm(&s).update(Some(&live), &mut new, "someone-else", T1);
    assert_eq!(
        new["metadata"]["managedFields"],
        live["metadata"]["managedFields"]
    );
}

#[test]
fn update_takes_ownership_and_keeps_time_of_others() {
    let s = crontab_schema();
    let mut live = obj(json!({"image": "img", "replicas": 1}));
    fm(&s).update(None, &mut live, "creator", T0);
    let live = stored(live);
    let mut new = live.clone();
    new["spec"]["image"] = json!("img2");
    fm(&s).update(Some(&live), &mut new, "editor", T2);
    let e = entries(&new);
    assert_eq!(e[0].0, "creator");
    assert_eq!(e[0].2, json!({"f:spec": {".": {}, "f:replicas": {}}}));
    assert_eq!(e[1].0, "editor");
    assert_eq!(e[1].2, json!({"f:spec": {"f:image": {}}}));
    assert_eq!(new["metadata"]["managedFields"][0]["time"], T0);
    assert_eq!(new["metadata"]["managedFields"][1]["time"], T2);
}

#[test]
fn apply_creates_and_owns_what_it_applies() {
    let s = crontab_schema();
    let out = apply(
        &fm(&s),
        None,
        obj(json!({"cronSpec": "x", "containers": [{"name": "a", "image": "i"}]})),
        "ctrl",
        false,
    )
    .unwrap();
    assert_eq!(out["spec"]["cronSpec"], "x");
    let e = entries(&out);
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].0.as_str(), e[0].1.as_str()), ("ctrl", "Apply"));
    assert_eq!(
        e[0].2,
        json!({"f:spec": {"f:cronSpec": {},
            "f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
    );
    // Not the byte form of the JSON value: upstream's own order.
    let mf = ManagedFields::decode(out["metadata"].get("managedFields")).unwrap();
    let set = mf.entries.values().next().unwrap().set();
    assert_eq!(
        set.to_fields_v1_string(),
        r#"{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:image":{},"f:name":{}}},"f:cronSpec":{}}}"#
    );
}

#[test]
fn reapplying_the_same_configuration_changes_nothing() {
    let s = crontab_schema();
    let cfg = obj(json!({"image": "i", "tags": ["a"]}));
    let first = apply(&fm(&s), None, cfg.clone(), "ctrl", false).unwrap();
    let second = fm(&s).apply(Some(&first), &cfg, "ctrl", false, T2).unwrap();
    assert_eq!(second, first, "no time change when nothing changed");
}

#[test]
fn shared_ownership_of_equal_values() {
    let s = crontab_schema();
    let live = apply(
        &fm(&s),
        None,
        obj(json!({"image": "i", "a": "1"})),
        "one",
        false,
    )
    .unwrap();
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "i"})),
        "two",
        false,
    )
    .unwrap();
    let e = entries(&out);
    assert_eq!(e.len(), 2);
    assert!(e
        .iter()
        .all(|(_, _, f)| f["f:spec"].get("f:image").is_some()));
    // "one" stops applying image: "two" still owns it, it stays.
    let out = apply(&fm(&s), Some(&out), obj(json!({"a": "1"})), "one", false).unwrap();
    assert_eq!(out["spec"]["image"], "i");
}

#[test]
fn conflicts_with_another_applier_and_force() {
    let s = crontab_schema();
    let live = apply(&fm(&s), None, obj(json!({"image": "i"})), "one", false).unwrap();
    let err = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "j"})),
        "two",
        false,
    )
    .unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"one\": .spec.image"
    );
    let ApplyError::Conflicts(c) = &err else {
        panic!("{err:?}")
    };
    let causes = c.causes();
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    assert_eq!(causes[0].message, "conflict with \"one\"");
    assert_eq!(causes[0].field, ".spec.image");
    assert_eq!(
        err.to_api_error().to_status(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Apply failed with 1 conflict: conflict with \"one\": .spec.image",
            "reason": "Conflict", "code": 409,
            "details": {"causes": [{"reason": "FieldManagerConflict",
                "message": "conflict with \"one\"", "field": ".spec.image"}]}})
    );
    // Forced: "two" takes image, "one" is left with nothing and disappears.
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "j"})),
        "two",
        true,
    )
    .unwrap();
    assert_eq!(out["spec"]["image"], "j");
    let e = entries(&out);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].0, "two");
}

#[test]
fn conflict_with_an_updater_names_its_version() {
    let s = crontab_schema();
    let mut live = obj(json!({"image": "i", "cronSpec": "c"}));
    fm(&s).update(None, &mut live, "kubectl-client-side-apply", T0);
    let live = stored(live);
    let err = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "j", "cronSpec": "d"})),
        "kubectl",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using stable.example.com/v1:\n- .spec.cronSpec\n- .spec.image"
    );
    // One field only.
    let err = apply(&fm(&s), Some(&live), obj(json!({"image": "j"})), "x", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using stable.example.com/v1: .spec.image"
    );
}

#[test]
fn conflicts_of_several_managers_are_grouped() {
    let s = crontab_schema();
    let live = apply(&fm(&s), None, obj(json!({"a": "1"})), "zeta", false).unwrap();
    let live = apply(&fm(&s), Some(&live), obj(json!({"b": "1"})), "alpha", false).unwrap();
    let err = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"a": "2", "b": "2"})),
        "me",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"alpha\":\n- .spec.b\nconflicts with \"zeta\":\n- .spec.a"
    );
}

#[test]
fn fields_no_longer_applied_are_removed_unless_owned() {
    let s = crontab_schema();
    let live = apply(
        &fm(&s),
        None,
        obj(json!({"a": "1", "b": "2", "c": "3"})),
        "ctrl",
        false,
    )
    .unwrap();
    let out = apply(&fm(&s), Some(&live), obj(json!({"a": "1"})), "ctrl", false).unwrap();
    assert_eq!(out["spec"], json!({"a": "1"}));
    // An updater that changed b keeps it.
    let mut edited = live.clone();
    edited["spec"]["b"] = json!("22");
    fm(&s).update(Some(&live), &mut edited, "editor", T1);
    let edited = stored(edited);
    let out = apply(
        &fm(&s),
        Some(&edited),
        obj(json!({"a": "1"})),
        "ctrl",
        false,
    )
    .unwrap();
    assert_eq!(out["spec"], json!({"a": "1", "b": "22"}));
    // Applying nothing removes all it applied.
    let out = apply(
        &fm(&s),
        Some(&live),
        json!({"apiVersion": AV, "kind": "CronTab", "metadata": {"name": "c"}}),
        "ctrl",
        false,
    )
    .unwrap();
    assert!(out.get("spec").is_none(), "{out}");
    assert!(out["metadata"].get("managedFields").is_none());
}

#[test]
fn associative_list_items_merge_by_key_and_are_removed_by_key() {
    let s = crontab_schema();
    let live = apply(
        &fm(&s),
        None,
        obj(json!({"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]})),
        "ctrl",
        false,
    )
    .unwrap();
    // Another applier adds an item and a field of an existing item.
    let live = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"containers": [{"name": "c", "image": "3"}, {"name": "a", "ports": [{"containerPort": 80}]}]})),
        "other",
        false,
    )
    .unwrap();
    assert_eq!(
        live["spec"]["containers"],
        json!([
            {"name": "c", "image": "3"},
            {"name": "a", "image": "1", "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "2"},
        ])
    );
    let e = entries(&live);
    let other = &e.iter().find(|x| x.0 == "other").unwrap().2;
    assert_eq!(
        other["f:spec"]["f:containers"]["k:{\"name\":\"a\"}"],
        json!({".": {}, "f:name": {}, "f:ports": {
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}})
    );
    // ctrl drops b: removed; a is shared (other owns it), kept.
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"containers": [{"name": "a", "image": "1"}]})),
        "ctrl",
        false,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "c", "image": "3"},
            {"name": "a", "image": "1", "ports": [{"containerPort": 80}]},
        ])
    );
    // ctrl drops a: a's image goes, the item stays for other's fields.
    let out = apply(
        &fm(&s),
        Some(&out),
        obj(json!({"cronSpec": "x"})),
        "ctrl",
        false,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "c", "image": "3"},
            {"name": "a", "ports": [{"containerPort": 80}]},
        ])
    );
}

#[test]
fn set_lists_merge_atomic_lists_and_maps_are_replaced() {
    let s = crontab_schema();
    let live = apply(
        &fm(&s),
        None,
        obj(json!({"tags": ["a", "b"], "args": ["x", "y"], "selector": {"k": "v", "l": "w"}, "env": {"A": "1"}})),
        "one",
        false,
    )
    .unwrap();
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"tags": ["c", "a"]})),
        "two",
        false,
    )
    .unwrap();
    assert_eq!(out["spec"]["tags"], json!(["c", "a", "b"]));
    let e = entries(&out);
    let two = &e.iter().find(|x| x.0 == "two").unwrap().2;
    assert_eq!(
        two,
        &json!({"f:spec": {"f:tags": {"v:\"a\"": {}, "v:\"c\"": {}}}})
    );
    // An atomic list conflicts as a whole, and is replaced as a whole when forced.
    let err = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"args": ["z"]})),
        "two",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"one\": .spec.args"
    );
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"args": ["z"], "selector": {"k": "v"}})),
        "two",
        true,
    )
    .unwrap();
    assert_eq!(out["spec"]["args"], json!(["z"]));
    assert_eq!(out["spec"]["selector"], json!({"k": "v"}));
    // A granular map merges.
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"env": {"B": "2"}})),
        "two",
        false,
    )
    .unwrap();
    assert_eq!(out["spec"]["env"], json!({"A": "1", "B": "2"}));
}

#[test]
fn preserved_unknown_fields_are_granular_maps_and_atomic_lists() {
    let s = crontab_schema();
    let live = apply(
        &fm(&s),
        None,
        obj(json!({"free": {"x": {"y": 1}, "l": [1, 2]}})),
        "one",
        false,
    )
    .unwrap();
    let e = entries(&live);
    assert_eq!(
        e[0].2,
        // Keys of maps (not struct fields) are members even with children.
        json!({"f:spec": {"f:free": {"f:l": {}, "f:x": {".": {}, "f:y": {}}}}})
    );
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"free": {"x": {"z": 2}}})),
        "two",
        false,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["free"],
        json!({"x": {"y": 1, "z": 2}, "l": [1, 2]})
    );
}

#[test]
fn invalid_configurations_fail_as_upstream() {
    let s = crontab_schema();
    let err = apply(
        &fm(&s),
        None,
        obj(json!({"containers": [{"image": "x"}]})),
        "m",
        false,
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (default/c; stable.example.com/v1, Kind=CronTab): .spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
    );
    let err = apply(&fm(&s), None, obj(json!({"nope": 1})), "m", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (default/c; stable.example.com/v1, Kind=CronTab): .spec.nope: field not declared in schema"
    );
    let err = apply(
        &fm(&s),
        None,
        obj(json!({"tags": ["a", "a"], "replicas": "x"})),
        "m",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (default/c; stable.example.com/v1, Kind=CronTab): errors:\n  .spec.replicas: expected numeric (int or float), got string\n  .spec.tags: duplicate entries for key [=\"a\"]"
    );
    for (v, got) in [
        (json!(1), "1"),
        (json!(true), "true"),
        (json!(2026.01), "2026.01"),
        (json!([]), "[]interface {}{}"),
    ] {
        let err = apply(&fm(&s), None, obj(json!({"image": v})), "m", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("failed to create typed patch object (default/c; stable.example.com/v1, Kind=CronTab): .spec.image: expected string, got &value.valueUnstructured{{Value:{got}}}")
        );
    }
    let mut wrong = obj(json!({}));
    wrong["apiVersion"] = json!("stable.example.com/v2");
    let err = apply(&fm(&s), None, wrong, "m", false).unwrap_err();
    assert_eq!(err.code(), 400);
    assert_eq!(
        err.to_string(),
        "invalid object type: stable.example.com/v2, Kind=CronTab"
    );
    let mut with_mf = obj(json!({}));
    with_mf["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        apply(&fm(&s), None, with_mf, "m", false)
            .unwrap_err()
            .to_string(),
        "metadata.managedFields must be nil"
    );
}

#[test]
fn client_managed_fields_edit_reset_and_fallback() {
    let s = crontab_schema();
    let mut live = obj(json!({"image": "i"}));
    fm(&s).update(None, &mut live, "creator", T0);
    let live = stored(live);
    // An empty list clears them; an update with none tracks nothing after that.
    let mut new = live.clone();
    new["metadata"]["managedFields"] = json!([]);
    fm(&s).update(Some(&live), &mut new, "editor", T1);
    assert!(new["metadata"].get("managedFields").is_none());
    let cleared = new.clone();
    let mut again = cleared.clone();
    again["spec"]["image"] = json!("j");
    fm(&s).update(Some(&cleared), &mut again, "editor", T2);
    assert!(again["metadata"].get("managedFields").is_none());
    // Invalid entries: the stored ones are kept.
    let mut bad = live.clone();
    bad["metadata"]["managedFields"] =
        json!([{"manager": "x", "operation": "Patch", "apiVersion": AV, "fieldsType": "FieldsV1"}]);
    fm(&s).update(Some(&live), &mut bad, "editor", T1);
    assert_eq!(
        bad["metadata"]["managedFields"],
        live["metadata"]["managedFields"]
    );
    // Edited entries are taken.
    let mut edit = live.clone();
    edit["metadata"]["managedFields"][0]["manager"] = json!("renamed");
    fm(&s).update(Some(&live), &mut edit, "editor", T1);
    assert_eq!(entries(&edit)[0].0, "renamed");
}

#[test]
fn first_apply_on_an_untracked_object_meets_before_first_apply() {
    let s = crontab_schema();
    let live = stored(obj(json!({"image": "i"})));
    let err = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "j"})),
        "ctrl",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using stable.example.com/v1: .spec.image"
    );
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "i"})),
        "ctrl",
        false,
    )
    .unwrap();
    let e = entries(&out);
    assert_eq!(e.len(), 2, "{e:?}");
}

#[test]
fn update_managers_are_capped() {
    let s = crontab_schema();
    let mut live = stored(obj(json!({})));
    fm(&s).update(None, &mut live, "m0", T0);
    for i in 0..12 {
        let mut new = live.clone();
        new["spec"][format!("k{i}")] = json!(i);
        // Each its own field (free-form to allow any key).
        new["spec"] = json!({"free": new["spec"].clone()});
        let mut new = live.clone();
        new["spec"]["free"] = json!({});
        new["spec"]["free"][format!("k{i}")] = json!(i);
        if let Some(prev) = live["spec"]["free"].as_object() {
            for (k, v) in prev {
                new["spec"]["free"][k] = v.clone();
            }
        }
        let t = format!("2024-05-01T10:00:{:02}Z", 10 + i);
        fm(&s).update(Some(&live), &mut new, &format!("u{i:02}"), &t);
        live = stored(new);
    }
    let e = entries(&live);
    assert_eq!(
        e.len(),
        10,
        "{:?}",
        e.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    assert!(e.iter().any(|x| x.0 == "ancient-changes"));
}

#[test]
fn reset_fields_are_never_owned() {
    let s = crontab_schema();
    let status = reset_fields(&[&["status"]]);
    let main = FieldManager {
        reset_fields: Some(&status),
        ..fm(&s)
    };
    let mut new = obj(json!({"image": "i"}));
    new["status"] = json!({"phase": "x"});
    main.update(None, &mut new, "creator", T0);
    assert_eq!(
        entries(&new)[0].2,
        json!({"f:spec": {".": {}, "f:image": {}}})
    );
    // /status: a controller applies status only.
    let spec = reset_fields(&[&["spec"]]);
    let st = FieldManager {
        subresource: "status",
        reset_fields: Some(&spec),
        ..fm(&s)
    };
    let live = stored(new);
    let mut cfg = obj(json!({}));
    cfg["status"] = json!({"phase": "y"});
    let out = st.apply(Some(&live), &cfg, "ctrl", true, T1).unwrap();
    let mf = &out["metadata"]["managedFields"];
    let ctrl = mf
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ctrl")
        .unwrap();
    assert_eq!(ctrl["subresource"], "status");
    assert_eq!(ctrl["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
}

#[test]
fn kubectl_migrates_from_client_side_apply() {
    let s = crontab_schema();
    // As kubectl apply (client side) creates it: the annotation and a CSA Update entry.
    let mut created = obj(json!({"image": "i", "cronSpec": "c"}));
    let cfg_text = serde_json::to_string(&created).unwrap();
    created["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": cfg_text});
    fm(&s).update(None, &mut created, "kubectl-client-side-apply", T0);
    let live = stored(created);
    // kubectl apply --server-side with a new image: no conflict with the fields kubectl
    // applied client-side; the annotation follows the new configuration.
    let out = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "j", "cronSpec": "c"})),
        "kubectl",
        false,
    )
    .unwrap();
    assert_eq!(out["spec"]["image"], "j");
    let ann = out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap();
    assert_eq!(
        ann,
        "{\"apiVersion\":\"stable.example.com/v1\",\"kind\":\"CronTab\",\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},\"spec\":{\"cronSpec\":\"c\",\"image\":\"j\"}}\n"
    );
    // Another manager gets the conflict.
    let err = apply(
        &fm(&s),
        Some(&live),
        obj(json!({"image": "j"})),
        "other",
        false,
    )
    .unwrap_err();
    assert_eq!(err.code(), 409);
}

#[test]
fn builtin_service_ports_keyed_by_port_and_defaulted_protocol() {
    let d = defs();
    let s = Schema::from_definition("io.k8s.api.core.v1.Service", &d).unwrap();
    let f = FieldManager {
        schema: &s,
        api_version: "v1",
        kind: "Service",
        subresource: "",
        reset_fields: None,
    };
    let cfg = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s",
        "labels": {"a": "b"}, "finalizers": ["x"], "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "123"}]},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "x"}}});
    let out = f.apply(None, &cfg, "ctrl", false, T0).unwrap();
    // OwnerReference is an atomic struct: its item is owned whole.
    let mf = ManagedFields::decode(out["metadata"].get("managedFields")).unwrap();
    let set: &Set = mf.entries.values().next().unwrap().set();
    assert_eq!(
        set.to_fields_v1_string(),
        r#"{"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"f:labels":{"f:a":{}},"f:ownerReferences":{"k:{\"uid\":\"123\"}":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:selector":{}}}"#
    );
}

#[test]
fn live_objects_that_do_not_fit_the_schema() {
    let s = crontab_schema();
    let mut live = stored(obj(json!({"image": "i"})));
    live["spec"]["undeclared"] = json!(1);
    // Without managed fields, the first apply types the live object for before-first-apply.
    let err = apply(&fm(&s), Some(&live), obj(json!({"image": "j"})), "m", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create manager for existing fields: failed to convert new object (default/c; stable.example.com/v1, Kind=CronTab) to smd typed: .spec.undeclared: field not declared in schema"
    );
    live["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Update",
        "apiVersion": AV, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:image": {}}}}]);
    let err = apply(&fm(&s), Some(&live), obj(json!({"image": "j"})), "m", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create typed live object (default/c; stable.example.com/v1, Kind=CronTab): .spec.undeclared: field not declared in schema"
    );
    // An update keeps the stored managed fields.
    let mut new = live.clone();
    new["spec"]["image"] = json!("k");
    fm(&s).update(Some(&live), &mut new, "editor", T1);
    assert_eq!(
        new["metadata"]["managedFields"],
        live["metadata"]["managedFields"]
    );
}

#[test]
fn configmap_applied_by_kubectl_as_the_documentation_shows() {
    // The server-side apply documentation's ConfigMap: a label and a data key, applied by
    // kubectl, then another manager changing the data key conflicts unless forced.
    let d = defs();
    let s = Schema::from_definition("io.k8s.api.core.v1.ConfigMap", &d).unwrap();
    let f = FieldManager {
        schema: &s,
        api_version: "v1",
        kind: "ConfigMap",
        subresource: "",
        reset_fields: None,
    };
    let cfg = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
        "data": {"key": "some value"}});
    let live = stored(f.apply(None, &cfg, "kubectl", false, T0).unwrap());
    assert_eq!(
        live["metadata"]["managedFields"],
        json!([{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl",
            "operation": "Apply", "time": T0,
            "fieldsV1": {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}}}])
    );
    let mut other = cfg.clone();
    other["data"]["key"] = json!("new value");
    let err = f
        .apply(Some(&live), &other, "other", false, T1)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl\": .data.key"
    );
    // An Update (e.g. kubectl edit) takes the field without conflict.
    let mut edited = live.clone();
    edited["data"]["key"] = json!("edited");
    f.update(Some(&live), &mut edited, "kubectl-edit", T2);
    let mf = &edited["metadata"]["managedFields"];
    assert_eq!(
        mf[0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:test-label": {}}}})
    );
    assert_eq!(mf[1]["manager"], "kubectl-edit");
    assert_eq!(mf[1]["fieldsV1"], json!({"f:data": {"f:key": {}}}));
}

#[test]
fn manager_names_from_user_agents_and_patch_options() {
    use crest_managedfields::manager_or_user_agent;
    use crest_managedfields::validate_patch_options;
    assert_eq!(
        manager_or_user_agent(None, "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"),
        "kubectl"
    );
    assert_eq!(
        manager_or_user_agent(Some("mine"), "kubectl/v1.32.0"),
        "mine"
    );
    assert_eq!(manager_or_user_agent(Some(""), "kube-rs/0.98"), "kube-rs");
    assert_eq!(manager_or_user_agent(None, "a\u{7}b/1"), "ab");
    let errs = validate_patch_options(true, "", false);
    assert_eq!(
        errs[0].to_string(),
        "fieldManager: Required value: is required for apply patch"
    );
    let errs = validate_patch_options(false, "x", true);
    assert_eq!(
        errs[0].to_string(),
        "force: Forbidden: may not be specified for non-apply patch"
    );
    let long = "x".repeat(129);
    let errs = validate_patch_options(false, &long, false);
    assert_eq!(
        errs[0].to_string(),
        "fieldManager: Too long: may not be more than 128 bytes"
    );
}

#[test]
fn client_sent_fields_are_written_in_canonical_form() {
    let s = crontab_schema();
    let mut live = obj(json!({"image": "i"}));
    fm(&s).update(None, &mut live, "creator", T0);
    let live = stored(live);
    let mut new = live.clone();
    // `{".": {}}` alone is the member itself: written back as `{}`.
    new["metadata"]["managedFields"][0]["fieldsV1"] =
        json!({"f:spec": {".": {}, "f:image": {".": {}}}});
    fm(&s).update(Some(&live), &mut new, "editor", T1);
    assert_eq!(
        new["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:image": {}}})
    );
}

#[test]
fn every_builtin_definition_compiles() {
    let mut all = defs();
    for src in [
        include_str!("../../crest-openapi/src/builtin/apiextensions_v1.json"),
        include_str!("../../crest-openapi/src/builtin/coordination_v1.json"),
        include_str!("../../crest-openapi/src/builtin/discovery_v1.json"),
        include_str!("../../crest-openapi/src/builtin/events_v1.json"),
        include_str!("../../crest-openapi/src/builtin/storagemigration_v1alpha1.json"),
    ] {
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(src) {
            all.extend(m);
        }
    }
    for name in all.keys() {
        if let Err(e) = Schema::from_definition(name, &all) {
            panic!("{name}: {e}");
        }
    }
    // A CRD applied server-side (how many tools install them): its schema is recursive.
    let s = Schema::from_definition(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        &all,
    )
    .unwrap();
    let f = FieldManager {
        schema: &s,
        api_version: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        subresource: "",
        reset_fields: None,
    };
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"cronSpec": {"type": "string"}}}}}}}]}});
    let out = f.apply(None, &crd, "kubectl", false, T0).unwrap();
    let e = entries(&out);
    // `versions` is an atomic list in the published definition: owned whole.
    assert_eq!(
        e[0].2["f:spec"],
        json!({"f:group": {}, "f:names": {"f:kind": {}, "f:plural": {}, "f:singular": {}},
            "f:scope": {}, "f:versions": {}})
    );
}
