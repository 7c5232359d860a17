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
