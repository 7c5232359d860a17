//! Hostile inputs never panic: deep nesting, huge and fractional numbers, odd strings, odd
//! schema values.

use crest_api::FieldPath;
use crest_schema::{defaulting, listtype, objectmeta, pruning, validation, Structural};
use serde_json::{json, Value};

fn nested(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |v, i| {
        if i % 2 == 0 {
            json!({"a": v})
        } else {
            json!([v])
        }
    })
}

fn everything(obj: &Value, s: &Structural) {
    let mut o = obj.clone();
    pruning::prune(&mut o, s, true);
    defaulting::prune_non_nullable_nulls_without_defaults(&mut o, s);
    defaulting::default(&mut o, s);
    validation::validate(&o, s, &FieldPath::root());
    validation::validate_update(&o, obj, s, &FieldPath::root());
    listtype::validate_list_sets_and_maps(&FieldPath::root(), s, &o);
    objectmeta::validate(&FieldPath::root(), &o, s, true);
    let _ = objectmeta::coerce(&FieldPath::root(), &mut o, s, true, true);
    let _ = objectmeta::coerce(&FieldPath::root(), &mut o, s, true, false);
}

#[test]
fn odd_values_do_not_panic() {
    let schemas = [
        json!({}),
        json!({"x-kubernetes-preserve-unknown-fields": true}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"type": "object", "additionalProperties": false, "minProperties": -1, "maxProperties": -5}),
        json!({"type": "object", "properties": {"a": {
            "type": "integer", "format": "int32", "multipleOf": 0.5, "minimum": -1e300, "maximum": 1e300,
            "enum": [1, 1.0, "a", null, {"b": 1}, [1]],
        }}}),
        json!({"type": "object", "properties": {"a": {
            "type": "string", "maxLength": -1, "minLength": 9223372036854775807i64,
            "pattern": "(", "format": "date-time",
        }}}),
        json!({"type": "object", "properties": {"a": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {"k": {"type": "string", "default": "d"}}},
            "uniqueItems": true, "minItems": 3, "maxItems": -1,
        }}}),
        json!({"type": "object", "properties": {"a": {
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
            "anyOf": [{"type": "integer"}, {"not": {"type": "string"}}],
            "oneOf": [{"minimum": 1}, {"maximum": 2}],
            "allOf": [{"properties": {"x": {"items": {"format": "uuid"}}}}],
        }}}),
    ];
    let values = [
        json!(null),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e308),
        json!(-0.0),
        json!("\u{0}\u{202e}é\u{10ffff}"),
        json!({"a": u64::MAX}),
        json!({"a": -9223372036854775808i64}),
        json!({"a": 1.5}),
        json!({"a": "2006-01-02T15:04:05Z"}),
        json!({"a": [null, {"k": 1}, {"k": 1.0}, {}, {}, 3]}),
        json!({"a": {"apiVersion": 1, "kind": [], "metadata": {"labels": {"a": 1}}}}),
        json!({"a": {"apiVersion": "a/b/c", "kind": "", "metadata": "x"}}),
        json!({"apiVersion": null, "metadata": null}),
        nested(120, json!("leaf")),
        json!({"a": nested(120, json!(1))}),
    ];
    for s in &schemas {
        let s = Structural::from_json(s).unwrap();
        for v in &values {
            everything(v, &s);
        }
    }
}

#[test]
fn too_deep_schemas_are_errors() {
    let mut s = json!({"type": "string"});
    for _ in 0..300 {
        s = json!({"type": "object", "properties": {"a": s}});
    }
    assert!(Structural::from_json(&s).is_err());
}

#[test]
fn int_and_float_stay_distinct() {
    let s = Structural::from_json(&json!({"type": "object", "properties": {
        "i": {"type": "integer"}, "n": {"type": "number"},
    }}))
    .unwrap();
    // 1.0 is a float but an integral one: kube-openapi accepts it for integer.
    assert!(validation::validate(&json!({"i": 1.0, "n": 1}), &s, &FieldPath::root()).is_empty());
    let errs = validation::validate(&json!({"i": 1.5}), &s, &FieldPath::root());
    assert_eq!(
        errs[0].to_string(),
        r#"i: Invalid value: "number": i in body must be of type integer: "number""#
    );
    let mut o = json!({"i": 1.0});
    defaulting::default(&mut o, &s);
    assert!(o["i"].is_f64());
}
