use super::*;
use serde_json::json;

fn msgs(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn validate(schema: Value, opts: SchemaValidationOptions) -> Vec<String> {
    msgs(&validate_custom_resource_validation(
        Some(&schema),
        &opts,
        &FieldPath::new("spec.validation"),
    ))
}

/// Non-structural example 3 of the "Specifying a structural schema" documentation.
#[test]
fn documented_non_structural_example_3() {
    let schema = json!({
        "properties": {
            "foo": {"pattern": "abc"},
            "metadata": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "pattern": "^a"},
                    "finalizers": {"type": "array", "items": {"type": "string", "pattern": "my-finalizer"}},
                },
            },
        },
        "anyOf": [{
            "properties": {"bar": {"type": "integer", "minimum": 42}},
            "required": ["bar"],
            "description": "foo bar object",
        }],
    });
    let expected = vec![
        "spec.validation.openAPIV3Schema.anyOf[0].description: Forbidden: must be empty to be structural",
        "spec.validation.openAPIV3Schema.anyOf[0].properties[bar].type: Forbidden: must be empty to be structural",
        "spec.validation.openAPIV3Schema.properties[bar]: Required value: because it is defined in spec.validation.openAPIV3Schema.anyOf[0].properties[bar]",
        "spec.validation.openAPIV3Schema.properties[foo].type: Required value: must not be empty for specified object fields",
        "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
        "spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root",
    ];
    assert_eq!(
        validate(schema.clone(), SchemaValidationOptions::create(false)),
        expected
    );
    let structural = json!({
        "type": "object",
        "description": "foo bar object",
        "properties": {
            "foo": {"type": "string", "pattern": "abc"},
            "bar": {"type": "integer"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "pattern": "^a"}}},
        },
        "anyOf": [{"properties": {"bar": {"minimum": 42}}, "required": ["bar"]}],
    });
    assert!(validate(structural.clone(), SchemaValidationOptions::create(false)).is_empty());
    assert!(is_structural(&structural).is_empty());
    assert_eq!(is_structural(&schema).len(), 6);
}

fn all_on() -> SchemaValidationOptions {
    SchemaValidationOptions::create(false)
}

#[test]
fn forbidden_keywords() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "id": "x"},
            "b": {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
            "c": {"type": "object", "definitions": {"d": {"type": "string"}}},
            "d": {"type": "object", "dependencies": {"x": ["y"]}},
            "e": {"type": "string", "$ref": "#/definitions/x"},
            "f": {"type": "array", "items": {"type": "string"}, "additionalItems": false},
            "g": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
        },
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[a].id: Forbidden: id is not supported",
            "spec.validation.openAPIV3Schema.properties[b].patternProperties: Forbidden: patternProperties is not supported",
            "spec.validation.openAPIV3Schema.properties[c].definitions: Forbidden: definitions is not supported",
            "spec.validation.openAPIV3Schema.properties[d].dependencies: Forbidden: dependencies is not supported",
            "spec.validation.openAPIV3Schema.properties[e].$ref: Forbidden: $ref is not supported",
            "spec.validation.openAPIV3Schema.properties[f].additionalItems: Forbidden: additionalItems is not supported",
            "spec.validation.openAPIV3Schema.properties[g].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ]
    );
}

#[test]
fn schema_keyword_only_fails_the_structural_conversion() {
    // `$schema` is not an OpenAPI error upstream; the structural conversion refuses it.
    let schema = json!({"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"});
    assert_eq!(
        validate(schema.clone(), all_on()),
        vec![
            r#"spec.validation.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'schema' is not supported"#
        ]
    );
    let opts = SchemaValidationOptions {
        require_structural_schema: false,
        ..all_on()
    };
    assert!(validate(schema, opts).is_empty());
}

#[test]
fn additional_properties_rules() {
    let schema = json!({
        "type": "object",
        "properties": {
            "both": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "falseWithProps": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false},
            "trueWithProps": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "closed": {"type": "object", "additionalProperties": false},
        },
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[both].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            "spec.validation.openAPIV3Schema.properties[falseWithProps].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
        ]
    );
}

#[test]
fn invalid_patterns_are_reported_with_go_wording() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "abc("},
            "b": {"type": "string", "pattern": "^[a-z]{1,63}$"},
            "c": {"type": "array", "items": {"type": "string", "pattern": "a**"}},
        },
        "anyOf": [{"properties": {"a": {"pattern": "[z-a]"}}}],
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.anyOf[0].properties[a].pattern: Invalid value: \"[z-a]\": must be a valid regular expression, but isn't: error parsing regexp: invalid character class range: `z-a`",
            "spec.validation.openAPIV3Schema.properties[a].pattern: Invalid value: \"abc(\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `abc(`",
            "spec.validation.openAPIV3Schema.properties[c].items.pattern: Invalid value: \"a**\": must be a valid regular expression, but isn't: error parsing regexp: invalid nested repetition operator: `**`",
        ]
    );
}

#[test]
fn patterns_are_checked_with_go_syntax() {
    // Valid in Go although the regex crate rejects them (and the reverse).
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "pattern": "[[]x{abc}\\Q*\\E[a-]"},
            "b": {"type": "string", "pattern": "(?P<n>a)(?P<n>b)\\pL\\p{Greek}[[:alpha:]]"},
            "c": {"type": "string", "pattern": "\\p{Letter}"},
            "d": {"type": "string", "pattern": "(?=a)"},
            "e": {"type": "string", "pattern": "a{1001}"},
            "f": {"type": "string", "pattern": "\\8"},
            "g": {"type": "string", "pattern": "(?P<a-b>x)"},
            "h": {"type": "string", "pattern": "[[:word:][:foo:]]"},
            "i": {"type": "string", "pattern": "x{2}{3}"},
        },
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[c].pattern: Invalid value: \"\\\\p{Letter}\": must be a valid regular expression, but isn't: error parsing regexp: invalid character class range: `\\p{Letter}`",
            "spec.validation.openAPIV3Schema.properties[d].pattern: Invalid value: \"(?=a)\": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
            "spec.validation.openAPIV3Schema.properties[e].pattern: Invalid value: \"a{1001}\": must be a valid regular expression, but isn't: error parsing regexp: invalid repeat count: `{1001}`",
            "spec.validation.openAPIV3Schema.properties[f].pattern: Invalid value: \"\\\\8\": must be a valid regular expression, but isn't: error parsing regexp: invalid escape sequence: `\\8`",
            "spec.validation.openAPIV3Schema.properties[g].pattern: Invalid value: \"(?P<a-b>x)\": must be a valid regular expression, but isn't: error parsing regexp: invalid named capture: `(?P<a-b>`",
            "spec.validation.openAPIV3Schema.properties[h].pattern: Invalid value: \"[[:word:][:foo:]]\": must be a valid regular expression, but isn't: error parsing regexp: invalid character class range: `[:foo:]`",
            "spec.validation.openAPIV3Schema.properties[i].pattern: Invalid value: \"x{2}{3}\": must be a valid regular expression, but isn't: error parsing regexp: invalid nested repetition operator: `{2}{3}`",
        ]
    );
}

#[test]
fn int_or_string_patterns() {
    let ok = json!({
        "type": "object",
        "properties": {
            "a": {"x-kubernetes-int-or-string": true},
            "b": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "c": {"x-kubernetes-int-or-string": true, "allOf": [
                {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                {"pattern": "^[0-9]+%?$"},
            ]},
        },
    });
    assert!(validate(ok, all_on()).is_empty());
    let bad = json!({
        "type": "object",
        "properties": {
            "a": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "string"}, {"type": "integer"}]},
            "b": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true},
        },
    });
    assert_eq!(
        validate(bad, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural",
            "spec.validation.openAPIV3Schema.properties[a].anyOf[1].type: Forbidden: must be empty to be structural",
            "spec.validation.openAPIV3Schema.properties[b].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true",
        ]
    );
}

#[test]
fn embedded_resources_and_metadata() {
    let schema = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "integer"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
            "plain": {"type": "string", "x-kubernetes-embedded-resource": true},
            "empty": {"type": "object", "x-kubernetes-embedded-resource": true},
            "open": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "inner": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "apiVersion": {"type": "string"},
                "metadata": {"type": "object", "properties": {
                    "labels": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                }},
            }},
        },
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[empty].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            r#"spec.validation.openAPIV3Schema.properties[kind].type: Invalid value: "integer": must be string"#,
            "spec.validation.openAPIV3Schema.properties[plain].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            r#"spec.validation.openAPIV3Schema.properties[plain].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true"#,
            "spec.validation.openAPIV3Schema.properties[inner].properties[metadata].properties[labels].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta",
        ]
    );
}

#[test]
fn defaults_in_top_level_metadata_are_forbidden() {
    let schema = json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}},
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}},
        },
    });
    assert_eq!(
        validate(schema, all_on()),
        vec!["spec.validation.openAPIV3Schema.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"]
    );
}

#[test]
fn status_subresource_root() {
    let opts = SchemaValidationOptions::create(true);
    assert!(validate(
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        opts
    )
    .is_empty());
    let errs = validate(
        json!({"type": "object", "properties": {"status": {"type": "object"}}, "anyOf": [{"required": ["status"]}]}),
        opts,
    );
    assert_eq!(
        errs,
        vec![
            r#"spec.validation.openAPIV3Schema: Invalid value: "object": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"#
        ]
    );
}

#[test]
fn x_validations_simple_checks() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
        "x-kubernetes-validations": [
            {"rule": "true", "reason": "FieldValueBogus"},
            {"rule": "true", "fieldPath": ".a.b"},
            {"rule": "true", "fieldPath": ".a['b']"},
            {"rule": "true", "fieldPath": ".a.c"},
            {"rule": "true", "fieldPath": "  "},
        ],
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            r#"spec.validation.openAPIV3Schema.x-kubernetes-validations[0].reason: Unsupported value: "FieldValueBogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#,
            r#"spec.validation.openAPIV3Schema.x-kubernetes-validations[3].fieldPath: Invalid value: ".a.c": fieldPath must be a valid path"#,
            r#"spec.validation.openAPIV3Schema.x-kubernetes-validations[4].fieldPath: Invalid value: "  ": fieldPath must be non-empty if specified"#,
            r#"spec.validation.openAPIV3Schema.x-kubernetes-validations[4].fieldPath: Invalid value: "  ": fieldPath must be a valid path"#,
        ]
    );
}

#[test]
fn nested_junctor_restrictions() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "allOf": [{
            "title": "t", "default": {}, "nullable": true, "additionalProperties": false,
            "x-kubernetes-list-type": "atomic", "x-kubernetes-validations": [{"rule": "true"}],
            "properties": {"metadata": {}},
        }],
        "not": {"items": {"type": "string"}},
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.allOf[0].additionalProperties: Forbidden: must be undefined to be structural",
            "spec.validation.openAPIV3Schema.allOf[0].default: Forbidden: must be undefined to be structural",
            "spec.validation.openAPIV3Schema.allOf[0].nullable: Forbidden: must be false to be structural",
            "spec.validation.openAPIV3Schema.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
            "spec.validation.openAPIV3Schema.allOf[0].title: Forbidden: must be empty to be structural",
            "spec.validation.openAPIV3Schema.allOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural",
            "spec.validation.openAPIV3Schema.allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
            "spec.validation.openAPIV3Schema.items: Required value: because it is defined in spec.validation.openAPIV3Schema.not.items",
            "spec.validation.openAPIV3Schema.not.items.type: Forbidden: must be empty to be structural",
            "spec.validation.openAPIV3Schema.properties[metadata]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[metadata]",
            // The OpenAPI keyword checks follow the (sorted) structural violations.
            "spec.validation.openAPIV3Schema.allOf[0].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            "spec.validation.openAPIV3Schema.allOf[0].type: Required value: must be array if x-kubernetes-list-type is specified",
        ]
    );
}

#[test]
fn never_panics_on_wrong_types_or_deep_nesting() {
    let weird = [
        json!(null),
        json!(5),
        json!("x"),
        json!([]),
        json!({"type": 5, "properties": [], "items": 3, "allOf": {}, "anyOf": [null, 1, "x"], "not": true}),
        json!({"properties": {"a": null, "b": 5}, "additionalProperties": "x", "x-kubernetes-list-type": 5}),
        json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": [1, null], "items": {"properties": 7, "required": "a"}}),
        json!({"x-kubernetes-validations": [null, 5, {"rule": 5, "fieldPath": ".['"}, {"rule": "x", "fieldPath": ".a['\\q']"}]}),
        json!({"pattern": 5, "default": null, "nullable": "yes", "enum": 3, "dependencies": {"a": 1}}),
        json!({"type": "object", "properties": {"metadata": {"properties": {"name": 5}, "required": 5}}}),
    ];
    for schema in weird {
        let _ = validate(schema.clone(), all_on());
        let _ = validate(schema.clone(), SchemaValidationOptions::create(true));
        let _ = is_structural(&schema);
        let _ = is_non_structural(&schema);
        let _ = has_non_atomic_set_type(&schema);
        let _ = has_invalid_map_list_keys_map_set(&schema);
    }
    // Far deeper than any real schema: refused, not overflowing the stack.
    // (Built by hand: `json!` would serialize the inner value at every level.)
    let mut deep = json!({"type": "string"});
    for _ in 0..2000 {
        let mut props = Map::new();
        props.insert("a".into(), deep);
        let mut node = Map::new();
        node.insert("type".into(), json!("object"));
        node.insert("properties".into(), Value::Object(props));
        node.insert("not".into(), json!({"not": {}}));
        deep = Value::Object(node);
    }
    let errs = msgs(&validate_custom_resource_validation(
        Some(&deep),
        &all_on(),
        &FieldPath::new("spec.validation"),
    ));
    assert!(errs
        .iter()
        .any(|e| e.contains("must not be nested more than")));
    assert!(!is_structural(&deep).is_empty());
    // Dropping a deep Value recurses too; leak it instead of testing serde_json's limits.
    #[allow(clippy::mem_forget)]
    std::mem::forget(deep);
}

#[test]
fn defaults_must_validate_and_be_pruned() {
    let schema = json!({
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "minimum": 1, "default": 0},
            "name": {"type": "string", "default": 5},
            "obj": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": "y"}},
            "ok": {"type": "object", "properties": {"a": {"type": "string", "default": "z"}}, "default": {}},
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"any": 1}},
            "res": {
                "type": "object",
                "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {
                    "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "a/b"}}},
                },
            },
        },
    });
    let errs = validate(schema, all_on());
    let fields: Vec<&str> = errs
        .iter()
        .map(|e| e.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(
        fields,
        vec![
            "spec.validation.openAPIV3Schema.properties[name].default",
            "spec.validation.openAPIV3Schema.properties[obj].default",
            "spec.validation.openAPIV3Schema.properties[replicas].default",
            "spec.validation.openAPIV3Schema.properties[res].properties[metadata].properties[name].default",
        ]
    );
    assert!(
        errs[1].ends_with("must not have unknown fields"),
        "{}",
        errs[1]
    );
    assert!(
        errs[3].contains("must result in valid metadata: metadata.name: Invalid value: \"a/b\""),
        "{}",
        errs[3]
    );
    // Without the pruning requirement (ratcheting), unknown fields in defaults pass.
    let schema = json!({
        "type": "object",
        "properties": {"obj": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": "y"}}},
    });
    let opts = SchemaValidationOptions {
        require_pruned_defaults: false,
        ..all_on()
    };
    assert!(validate(schema.clone(), opts).is_empty());
    assert!(has_unpruned_defaults(&schema));
    assert!(!has_unpruned_defaults(
        &json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}})
    ));
}

/// A CRD schema whose `spec` holds `props`.
fn with_spec(props: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}})
}

#[test]
fn defaults_must_pass_the_cel_rules() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.replicas <= self.max", "message": "replicas above max"}],
                "default": {"replicas": 5, "max": 3},
                "properties": {
                    "replicas": {"type": "integer", "default": 0, "x-kubernetes-validations": [{"rule": "self > 0"}]},
                    "max": {"type": "integer"},
                    "list": {"type": "array", "maxItems": 5, "items": {
                        "type": "string", "maxLength": 10, "default": "x",
                        "x-kubernetes-validations": [{"rule": "self.startsWith('a')", "messageExpression": "'bad item ' + self"}],
                    }},
                    "nested": {"type": "object", "default": {"name": "zz", "other": "ok"}, "properties": {
                        "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 2"}]},
                        "other": {"type": "string"},
                    }, "x-kubernetes-validations": [{"rule": "self.other == 'x'", "fieldPath": ".other", "reason": "FieldValueForbidden", "message": "other must be x"}]},
                    "fine": {"type": "integer", "default": 3, "x-kubernetes-validations": [{"rule": "self == 3"}]},
                },
            },
        },
    });
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].default: Invalid value: \"object\": replicas above max",
            "spec.validation.openAPIV3Schema.properties[spec].properties[list].items.default: Invalid value: \"string\": bad item x",
            "spec.validation.openAPIV3Schema.properties[spec].properties[nested].default.other: Forbidden: other must be x",
            "spec.validation.openAPIV3Schema.properties[spec].properties[nested].default.name: Invalid value: \"string\": failed rule: self.size() < 2",
            "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: \"integer\": failed rule: self > 0",
        ]
    );
}

#[test]
fn defaults_and_transition_rules() {
    // The default is its own old value first: self == oldSelf holds, self != oldSelf fails.
    // Then (only if that passed) without an old value: transition rules are skipped unless
    // optionalOldSelf, where oldSelf is none.
    let schema = with_spec(json!({
        "a": {"type": "integer", "default": 1, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
        "b": {"type": "integer", "default": 1, "x-kubernetes-validations": [{"rule": "self != oldSelf", "message": "must change"}]},
        "c": {"type": "integer", "default": 1, "x-kubernetes-validations": [{"rule": "oldSelf.hasValue()", "optionalOldSelf": true, "message": "needs an old value"}]},
        "d": {"type": "integer", "default": 1, "x-kubernetes-validations": [{"rule": "oldSelf.orValue(1) == self", "optionalOldSelf": true}]},
    }));
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].properties[b].default: Invalid value: \"integer\": must change",
            "spec.validation.openAPIV3Schema.properties[spec].properties[c].default: Invalid value: \"integer\": needs an old value",
        ]
    );
}

#[test]
fn defaults_of_embedded_resources_see_their_metadata() {
    let schema = with_spec(json!({
        "template": {
            "type": "object",
            "x-kubernetes-embedded-resource": true,
            "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "x-kubernetes-validations": [
                {"rule": "self.metadata.name.startsWith('t')", "message": "name must start with t"},
                {"rule": "self.kind == 'Pod' && self.apiVersion == 'v1'", "message": "kind"},
            ],
            "default": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "abc"}, "spec": {"n": 1}},
        },
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [{"rule": "self.metadata.name == 'x'", "message": "item name"}],
            },
            "default": [{"apiVersion": "v1", "kind": "A", "metadata": {"name": "y"}}],
        },
    }));
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].properties[items].default[0]: Invalid value: \"object\": item name",
            "spec.validation.openAPIV3Schema.properties[spec].properties[template].default: Invalid value: \"object\": name must start with t",
        ]
    );
}

#[test]
fn default_errors_replace_the_rule_checks() {
    // Upstream validates defaults first and checks the rules (compilation, cost) only when
    // no default is wrong: a rule that does not compile shows in the default's error then.
    let schema = with_spec(json!({
        "c": {"type": "integer", "default": 1, "x-kubernetes-validations": [{"rule": "self == true"}]},
    }));
    assert_eq!(
        validate(schema, all_on()),
        vec!["spec.validation.openAPIV3Schema.properties[spec].properties[c].default: Invalid value: \"integer\": rule compile error: compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'\n | self == true\n | .....^"]
    );
    let schema = with_spec(json!({
        "c": {"type": "integer", "x-kubernetes-validations": [{"rule": "self == true"}]},
        "d": {"type": "string", "default": "x", "x-kubernetes-validations": [{"rule": "self.matches('[')"}]},
    }));
    assert_eq!(
        validate(schema, all_on()),
        vec!["spec.validation.openAPIV3Schema.properties[spec].properties[d].default: Invalid value: \"string\": rule compile error: compilation failed: ERROR: <input>:1:14: invalid matches argument\n | self.matches('[')\n | .............^"]
    );
    // Schema errors of a default come first: its rules are not run then.
    let schema = with_spec(json!({
        "e": {"type": "integer", "minimum": 5, "default": 1, "x-kubernetes-validations": [{"rule": "self > 3"}]},
    }));
    assert_eq!(
        validate(schema, all_on()),
        vec!["spec.validation.openAPIV3Schema.properties[spec].properties[e].default: Invalid value: 1:  in body should be greater than or equal to 5"]
    );
}

#[test]
fn defaults_share_one_cost_budget() {
    // Each default costs about a tenth of the budget (90 scans of a 100k string, each priced
    // by its length): the walk stops where the budget runs out.
    let text = "a".repeat(100_000);
    let range: Vec<String> = (0..90).map(|i| i.to_string()).collect();
    let rule = format!("[{}].all(i, !self.matches('b'))", range.join(", "));
    let mut props = Map::new();
    for i in 0..16 {
        props.insert(
            format!("p{i:02}"),
            json!({"type": "string", "maxLength": 100_000, "default": text,
                "x-kubernetes-validations": [{"rule": rule}]}),
        );
    }
    let errs = validate(with_spec(Value::Object(props)), all_on());
    assert_eq!(
        errs,
        ["spec.validation.openAPIV3Schema.properties[spec].properties[p11].default: Invalid value: \"string\": validation failed due to running out of cost budget, no further validation rules will be run"]
    );
}

#[test]
fn defaults_of_maps_and_lists_run_the_rules_below() {
    let schema = with_spec(json!({
        "m": {"type": "object", "default": {"a": 1, "b": 2},
            "additionalProperties": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 1", "message": "small"}]}},
        "l": {"type": "array", "default": [{"k": "x", "v": 1}, {"k": "y", "v": 5}],
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"], "properties": {
                "k": {"type": "string"},
                "v": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 3", "messageExpression": "'v is ' + string(self)"}]},
            }}},
        "x": {"type": "object", "additionalProperties": {"type": "integer", "default": 0,
            "x-kubernetes-validations": [{"rule": "self > 0"}]}},
    }));
    assert_eq!(
        validate(schema, all_on()),
        vec![
            "spec.validation.openAPIV3Schema.properties[spec].properties[l].default[1].v: Invalid value: \"integer\": v is 5",
            "spec.validation.openAPIV3Schema.properties[spec].properties[m].default[a]: Invalid value: \"integer\": small",
        ]
    );
}
