//! The examples of the CustomResourceDefinition documentation (seed 002): Validation,
//! Defaulting, Defaulting and Nullable, Controlling pruning, IntOrString, RawExtension.

use crest_api::FieldPath;
use crest_schema::{defaulting, objectmeta, pruning, validation, Structural};
use serde_json::{json, Value};

const CRON_PATTERN: &str = r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$";

fn crontab_schema(defaults: bool) -> Structural {
    let mut cron = json!({"type": "string", "pattern": CRON_PATTERN});
    let mut replicas = json!({"type": "integer", "minimum": 1, "maximum": 10});
    if defaults {
        cron["default"] = json!("5 0 * * *");
        replicas["default"] = json!(1);
    }
    Structural::from_json(&json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "cronSpec": cron,
            "image": {"type": "string"},
            "replicas": replicas,
        }}},
    }))
    .unwrap()
}

/// What the server does to a request body: prune, drop non-nullable nulls, default.
fn admit(obj: &mut Value, s: &Structural) {
    pruning::prune(obj, s, true);
    defaulting::prune_non_nullable_nulls_without_defaults(obj, s);
    defaulting::default(obj, s);
}

#[test]
fn validation_rejects_invalid_crontab() {
    let s = crontab_schema(false);
    let obj = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * *", "image": "my-awesome-cron-image", "replicas": 15},
    });
    let errs = validation::validate(&obj, &s, &FieldPath::root());
    let details: Vec<&str> = errs.iter().map(|e| e.detail.as_str()).collect();
    assert_eq!(
        details,
        vec![
            r"spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'",
            "spec.replicas in body should be less than or equal to 10",
        ]
    );
    assert_eq!(
        errs[1].to_string(),
        "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10"
    );

    let ok = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 5},
    });
    assert!(validation::validate(&ok, &s, &FieldPath::root()).is_empty());
}

#[test]
fn defaulting_fills_cron_spec_and_replicas() {
    let s = crontab_schema(true);
    let mut obj = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"image": "my-awesome-cron-image"},
    });
    admit(&mut obj, &s);
    assert_eq!(
        obj,
        json!({
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "my-new-cron-object"},
            "spec": {"cronSpec": "5 0 * * *", "image": "my-awesome-cron-image", "replicas": 1},
        })
    );
    assert!(validation::validate(&obj, &s, &FieldPath::root()).is_empty());
}

#[test]
fn defaulting_and_nullable() {
    let s = Structural::from_json(&json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "foo": {"type": "string", "nullable": false, "default": "default"},
            "bar": {"type": "string", "nullable": true},
            "baz": {"type": "string"},
        }}},
    }))
    .unwrap();
    let mut obj = json!({"spec": {"foo": null, "bar": null, "baz": null}});
    admit(&mut obj, &s);
    assert_eq!(obj, json!({"spec": {"foo": "default", "bar": null}}));
    assert!(validation::validate(&obj, &s, &FieldPath::root()).is_empty());
}

#[test]
fn controlling_pruning() {
    // Only object values are allowed for the partially specified json field.
    let partial = Structural::from_json(&json!({
        "type": "object",
        "properties": {"json": {
            "x-kubernetes-preserve-unknown-fields": true,
            "type": "object",
            "description": "this is arbitrary JSON",
        }},
    }))
    .unwrap();
    let mut any = json!({"json": {"a": [1, {"b": null}]}});
    assert!(pruning::prune(&mut any, &partial, false).is_empty());
    assert_eq!(any, json!({"json": {"a": [1, {"b": null}]}}));
    assert_eq!(
        validation::validate(&json!({"json": 1}), &partial, &FieldPath::root())[0].to_string(),
        r#"json: Invalid value: "integer": json in body must be of type object: "integer""#
    );

    // Pruning is enabled again for each specified property.
    let s = Structural::from_json(&json!({
        "type": "object",
        "properties": {"json": {
            "x-kubernetes-preserve-unknown-fields": true,
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "foo": {"type": "string"},
                "bar": {"type": "string"},
            }}},
        }},
    }))
    .unwrap();
    let mut obj = json!({"json": {
        "spec": {"foo": "abc", "bar": "def", "something": "x"},
        "status": {"something": "x"},
    }});
    let pruned = pruning::prune(&mut obj, &s, false);
    assert_eq!(pruned, vec!["json.spec.something"]);
    assert_eq!(
        obj,
        json!({"json": {"spec": {"foo": "abc", "bar": "def"}, "status": {"something": "x"}}})
    );
}

#[test]
fn int_or_string() {
    let plain =
        json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true}}});
    let any_of = json!({"type": "object", "properties": {"foo": {
        "x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    }}});
    let all_of = json!({"type": "object", "properties": {"foo": {
        "x-kubernetes-int-or-string": true,
        "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}],
    }}});
    for schema in [plain, any_of, all_of] {
        let s = Structural::from_json(&schema).unwrap();
        for ok in [json!({"foo": 42}), json!({"foo": "42%"})] {
            assert!(validation::validate(&ok, &s, &FieldPath::root()).is_empty());
        }
        let errs = validation::validate(&json!({"foo": 1.5}), &s, &FieldPath::root());
        assert!(errs.iter().any(|e| e.to_string()
            == r#"foo: Invalid value: "number": foo in body must be of type integer,string: "number""#));
    }
}

#[test]
fn raw_extension() {
    let s = Structural::from_json(&json!({
        "type": "object",
        "properties": {"foo": {
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true,
        }},
    }))
    .unwrap();
    let mut obj = json!({"foo": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}}});
    let before = obj.clone();
    assert!(pruning::prune(&mut obj, &s, false).is_empty());
    assert_eq!(obj, before);
    assert!(objectmeta::validate(&FieldPath::root(), &obj, &s, false).is_empty());

    // apiVersion, kind and metadata are implicitly specified and validated.
    let bad = json!({"foo": {"metadata": {"name": "Not_Valid/"}}});
    let errs: Vec<String> = objectmeta::validate(&FieldPath::root(), &bad, &s, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec![
            "foo.apiVersion: Required value",
            "foo.kind: Required value",
            r#"foo.metadata.name: Invalid value: "Not_Valid/": may not contain '/'"#,
        ]
    );
}
