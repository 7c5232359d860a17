use super::*;
use crate::defaults::set_defaults;
use serde_json::json;

const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn seed() -> Value {
    let mut v = crate::tests::seed_crd();
    set_defaults(&mut v);
    v
}

fn msgs(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn create(v: &Value) -> Vec<String> {
    msgs(&validate_create(v))
}

/// Creates after defaulting, as the server does.
fn create_defaulted(mut v: Value) -> Vec<String> {
    set_defaults(&mut v);
    create(&v)
}

fn schema() -> Value {
    seed()["spec"]["versions"][0]["schema"].clone()
}

fn version(name: &str, storage: bool) -> Value {
    json!({"name": name, "served": true, "storage": storage, "schema": schema()})
}

fn go_version(name: &str, storage: bool) -> String {
    format!(
        "apiextensions.CustomResourceDefinitionVersion{{Name:\"{name}\", Served:true, Storage:{storage}, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}"
    )
}

#[test]
fn seed_walkthrough_crd_is_valid() {
    let crd = seed();
    assert_eq!(create(&crd), Vec::<String>::new());
    assert_eq!(msgs(&validate_create_with_meta(&crd)), Vec::<String>::new());
    assert_eq!(msgs(&validate_update(&crd, &crd)), Vec::<String>::new());
    assert_eq!(
        msgs(&validate_status_update(&crd, &crd)),
        Vec::<String>::new()
    );
}

#[test]
fn defaults_are_needed_for_list_kind() {
    // Without defaulting, listKind is missing (upstream always defaults before validating).
    assert_eq!(
        create(&crate::tests::seed_crd()),
        vec!["spec.names.listKind: Required value"]
    );
}

#[test]
fn name_must_be_plural_dot_group() {
    let mut crd = seed();
    crd["metadata"]["name"] = json!("crontab.stable.example.com");
    assert_eq!(
        create(&crd),
        vec![
            r#"metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group"#
        ]
    );
    crd["metadata"]["generateName"] = json!("crontabs-");
    assert_eq!(
        create(&crd),
        vec![
            r#"metadata.generateName: Invalid value: "crontabs-": must be spec.names.plural+"."+spec.group"#,
            r#"metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group"#,
        ]
    );
}

#[test]
fn with_meta_puts_the_name_rule_after_the_name_errors() {
    let mut crd = seed();
    crd["metadata"] = json!({"name": "Crontabs.stable.example.com", "labels": {"a": "-bad"}});
    let errs = msgs(&validate_create_with_meta(&crd));
    assert_eq!(errs.len(), 3, "{errs:?}");
    assert_eq!(
        errs[0],
        format!(
            "metadata.name: Invalid value: \"Crontabs.stable.example.com\": {DNS1123_SUBDOMAIN}"
        )
    );
    assert_eq!(
        errs[1],
        r#"metadata.name: Invalid value: "Crontabs.stable.example.com": must be spec.names.plural+"."+spec.group"#
    );
    assert!(
        errs[2].starts_with("metadata.labels: Invalid value: \"-bad\""),
        "{}",
        errs[2]
    );
    crd["metadata"] = json!({});
    assert_eq!(
        msgs(&validate_create_with_meta(&crd)),
        vec!["metadata.name: Required value: name or generateName is required"]
    );
}

#[test]
fn group_rules() {
    let mut crd = seed();
    crd["metadata"]["name"] = json!("crontabs.");
    crd["spec"]["group"] = json!("");
    assert_eq!(create(&crd), vec!["spec.group: Required value"]);
    crd["spec"]["group"] = json!("Stable.example.com");
    crd["metadata"]["name"] = json!("crontabs.Stable.example.com");
    assert_eq!(
        create(&crd),
        vec![format!(
            "spec.group: Invalid value: \"Stable.example.com\": {DNS1123_SUBDOMAIN}"
        )]
    );
    crd["spec"]["group"] = json!("example");
    crd["metadata"]["name"] = json!("crontabs.example");
    assert_eq!(
        create(&crd),
        vec!["spec.group: Invalid value: \"example\": should be a domain with at least one dot"]
    );
}

#[test]
fn scope_rules() {
    let mut crd = seed();
    crd["spec"]["scope"] = json!("");
    assert_eq!(create(&crd), vec!["spec.scope: Required value"]);
    crd["spec"]["scope"] = json!("Global");
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#
        ]
    );
    crd["spec"]["scope"] = json!("Cluster");
    assert!(create(&crd).is_empty());
}

#[test]
fn needs_exactly_one_storage_version() {
    let mut crd = seed();
    crd["spec"].as_object_mut().unwrap().remove("versions");
    assert_eq!(
        create(&crd),
        vec![
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version",
            "status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
        ]
    );
    crd["spec"]["versions"] = json!([]);
    assert_eq!(
        create(&crd)[0],
        "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version"
    );

    crd["spec"]["versions"] = json!([version("v1", true), version("v2", true)]);
    assert_eq!(
        create(&crd),
        vec![
            format!(
                "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{{{}, {}}}: must have exactly one version marked as storage version",
                go_version("v1", true),
                go_version("v2", true)
            ),
            "status.storedVersions: Invalid value: []string{\"v1\"}: must have the storage version v2".to_string(),
        ]
    );
}

#[test]
fn version_names_unique_and_dns_labels() {
    let mut crd = seed();
    crd["spec"]["versions"] = json!([version("v1", true), version("v1", false)]);
    assert_eq!(
        create(&crd),
        vec![format!(
            "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{{{}, {}}}: must contain unique version names",
            go_version("v1", true),
            go_version("v1", false)
        )]
    );
    crd["spec"]["versions"] = json!([version("V1", true)]);
    // The first version's name is checked again as the internal `spec.version`.
    assert_eq!(
        create(&crd),
        vec![
            format!("spec.versions[0].name: Invalid value: \"V1\": {DNS1035}"),
            format!("spec.version: Invalid value: \"V1\": {DNS1035}"),
        ]
    );
    crd["spec"]["versions"] = json!([version("v1", true), version("2", false)]);
    assert_eq!(
        create(&crd),
        vec![format!(
            "spec.versions[1].name: Invalid value: \"2\": {DNS1035}"
        )]
    );
}

#[test]
fn schemas_are_required() {
    let mut crd = seed();
    crd["spec"]["versions"][0]
        .as_object_mut()
        .unwrap()
        .remove("schema");
    assert_eq!(
        create(&crd),
        vec!["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
    );
    crd["spec"]["versions"] = json!([version("v1", true), {"name": "v2", "served": true, "storage": false, "schema": {}}]);
    assert_eq!(
        create(&crd),
        vec!["spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required"]
    );
    crd["spec"]["versions"] = json!([{"name": "v1", "served": true, "storage": true, "schema": {}}, {"name": "v2", "served": false, "storage": false, "schema": {}}]);
    assert_eq!(
        create(&crd),
        vec![
            "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
            "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required",
        ]
    );
}

#[test]
fn schema_root_rules() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"] = json!("string");
    // One version: the schema is reported at its internal, top-level place.
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root"#
        ]
    );

    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        .as_object_mut()
        .unwrap()
        .remove("type");
    assert_eq!(
        create(&crd),
        vec!["spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"]
    );
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        ["x-kubernetes-preserve-unknown-fields"] = json!(true);
    assert!(create(&crd).is_empty());

    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "thing"});
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.validation.openAPIV3Schema.type: Invalid value: "thing": must be object at the root"#,
            r#"spec.validation.openAPIV3Schema.type: Unsupported value: "thing": supported values: "array", "boolean", "integer", "number", "object", "string""#,
        ]
    );

    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] =
        json!({"type": "object", "nullable": true, "additionalProperties": {"type": "string"}});
    assert_eq!(
        create(&crd),
        vec![
            "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
            "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
        ]
    );

    // Different schemas per version stay per version.
    let mut other = version("v2", false);
    other["schema"]["openAPIV3Schema"]["type"] = json!("array");
    other["schema"]["openAPIV3Schema"]["items"] = json!({"type": "string"});
    crd["spec"]["versions"] = json!([version("v1", true), other]);
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.versions[1].schema.openAPIV3Schema.type: Invalid value: "array": must be object at the root"#
        ]
    );
}

#[test]
fn status_subresource_needs_object_root() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["subresources"] = json!({"status": {}});
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "string"});
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
            r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root"#,
        ]
    );
}

#[test]
fn name_rules() {
    let mut crd = seed();
    crd["metadata"]["name"] = json!("Cron_Tabs.stable.example.com");
    crd["spec"]["names"] = json!({
        "plural": "Cron_Tabs", "singular": "cron tab", "kind": "Cron_Tab", "listKind": "Cron_Tab",
        "shortNames": ["ok", "NO"], "categories": ["all", "Bad"]
    });
    assert_eq!(
        create(&crd),
        vec![
            format!("spec.names.plural: Invalid value: \"Cron_Tabs\": {DNS1035}"),
            format!("spec.names.singular: Invalid value: \"cron tab\": {DNS1035}"),
            format!("spec.names.kind: Invalid value: \"Cron_Tab\": may have mixed case, but should otherwise match: {DNS1035}"),
            format!("spec.names.listKind: Invalid value: \"Cron_Tab\": may have mixed case, but should otherwise match: {DNS1035}"),
            format!("spec.names.shortNames[1]: Invalid value: \"NO\": {DNS1035}"),
            "spec.names.listKind: Invalid value: \"Cron_Tab\": kind and listKind may not be the same".to_string(),
            format!("spec.names.categories[1]: Invalid value: \"Bad\": {DNS1035}"),
        ]
    );
    crd["metadata"]["name"] = json!(".stable.example.com");
    crd["spec"]["names"] = json!({});
    assert_eq!(
        create(&crd),
        vec![
            "spec.names.plural: Required value",
            "spec.names.singular: Required value",
            "spec.names.kind: Required value",
            "spec.names.listKind: Required value",
        ]
    );
    let long = "a".repeat(64);
    crd["metadata"]["name"] = json!(format!("{long}.stable.example.com"));
    crd["spec"]["names"] =
        json!({"plural": long, "singular": "s", "kind": "K", "listKind": "KList"});
    assert_eq!(
        create(&crd),
        vec![format!(
            "spec.names.plural: Invalid value: \"{long}\": must be no more than 63 characters"
        )]
    );
}

#[test]
fn scale_subresource_paths() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["subresources"] = json!({"scale": {}});
    assert_eq!(
        create(&crd),
        vec![
            "spec.subresources.scale.specReplicasPath: Required value",
            "spec.subresources.scale.statusReplicasPath: Required value"
        ]
    );
    crd["spec"]["versions"][0]["subresources"] = json!({"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.labels"}});
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with ."#,
            r#"spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status"#,
            r#"spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status"#,
        ]
    );
    crd["spec"]["versions"][0]["subresources"] = json!({"scale": {"specReplicasPath": ".status.x", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ""}});
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.subresources.scale.specReplicasPath: Invalid value: ".status.x": should be a json path under .spec"#
        ]
    );
    crd["spec"]["versions"][0]["subresources"] = json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}});
    assert!(create(&crd).is_empty());

    // Different subresources per version: per-version paths.
    crd["spec"]["versions"] = json!([version("v1", true), version("v2", false)]);
    crd["spec"]["versions"][1]["subresources"] = json!({"scale": {"specReplicasPath": ".spec.r"}});
    assert_eq!(
        create(&crd),
        vec!["spec.versions[1].subresources.scale.statusReplicasPath: Required value"]
    );
}

#[test]
fn printer_columns() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = json!([
        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
        {},
        {"name": "X", "type": "float", "format": "uuid", "jsonPath": "spec.x"},
    ]);
    assert_eq!(
        create(&crd),
        vec![
            "spec.additionalPrinterColumns[1].name: Required value",
            "spec.additionalPrinterColumns[1].type: Required value: must be one of boolean,date,integer,number,string",
            "spec.additionalPrinterColumns[1].JSONPath: Required value",
            r#"spec.additionalPrinterColumns[2].type: Invalid value: "float": must be one of boolean,date,integer,number,string"#,
            r#"spec.additionalPrinterColumns[2].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password"#,
            r#"spec.additionalPrinterColumns[2].JSONPath: Invalid value: "spec.x": must be a simple json path starting with ."#,
        ]
    );
    crd["spec"]["versions"] = json!([version("v1", true), version("v2", false)]);
    crd["spec"]["versions"][1]["additionalPrinterColumns"] =
        json!([{"name": "A", "type": "date", "jsonPath": ""}]);
    assert_eq!(
        create(&crd),
        vec!["spec.versions[1].additionalPrinterColumns[0].JSONPath: Required value"]
    );
}

#[test]
fn selectable_fields() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["labels"] = json!({"type": "object", "additionalProperties": {"type": "string"}});
    crd["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.cronSpec"},
        {"jsonPath": ".spec.replicas"},
        {"jsonPath": ".spec.labels.app"},
        {"jsonPath": ""},
        {"jsonPath": ".spec"},
        {"jsonPath": ".spec.nope"},
        {"jsonPath": ".spec.cronSpec"},
        {"jsonPath": ".spec['x']"},
        {"jsonPath": "spec.image"},
    ]);
    assert_eq!(
        create(&crd),
        vec![
            "spec.selectableFields[3].jsonPath: Required value",
            r#"spec.selectableFields[4].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#,
            r#"spec.selectableFields[5].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#,
            r#"spec.selectableFields[6].jsonPath: Duplicate value: ".spec.cronSpec""#,
            r#"spec.selectableFields[7].jsonPath: Invalid value: ".spec['x']": is an invalid path: array notation is not allowed"#,
            r#"spec.selectableFields[8].jsonPath: Invalid value: "spec.image": is an invalid path: expected [ or . but got: spec"#,
        ]
    );

    let props: serde_json::Map<String, Value> = (0..9)
        .map(|i| (format!("f{i}"), json!({"type": "string"})))
        .collect();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] =
        Value::Object(props);
    crd["spec"]["versions"][0]["selectableFields"] = json!((0..9)
        .map(|i| json!({"jsonPath": format!(".spec.f{i}")}))
        .collect::<Vec<_>>());
    assert_eq!(
        create(&crd),
        vec!["spec.selectableFields: Too many: 9: must have at most 8 items"]
    );

    // Same schema in both versions but different selectable fields: the schema moves to the top
    // level, so upstream finds no per-version schema.
    let mut crd = seed();
    crd["spec"]["versions"] = json!([version("v1", true), version("v2", false)]);
    crd["spec"]["versions"][1]["selectableFields"] = json!([{"jsonPath": ".spec.image"}]);
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.versions[1].selectableFields: Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included"#
        ]
    );
}

#[test]
fn selectable_field_types_and_paths() {
    let mut crd = seed();
    let spec_props = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
        ["spec"]["properties"];
    spec_props["enabled"] = json!({"type": "boolean"});
    spec_props["when"] = json!({"type": "string", "format": "date-time"});
    spec_props["mode"] = json!({"type": "string", "enum": ["a", "b"]});
    spec_props["ratio"] = json!({"type": "number"});
    spec_props["items"] = json!({"type": "array", "items": {"type": "string"}});
    spec_props["port"] = json!({"x-kubernetes-int-or-string": true});
    spec_props["labels"] = json!({"type": "object", "additionalProperties": {"type": "string"}});
    spec_props["empty"] = json!({"type": "object", "properties": {}});
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] =
        json!({"type": "object", "properties": {"name": {"type": "string"}}});
    crd["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.replicas"},
        {"jsonPath": ".spec.enabled"},
        {"jsonPath": ".spec.when"},
        {"jsonPath": ".spec.mode"},
        {"jsonPath": ".spec.ratio"},
        {"jsonPath": ".spec.items"},
        {"jsonPath": ".spec.port"},
        {"jsonPath": ".metadata.name"},
        {"jsonPath": ".spec.labels.app"},
        {"jsonPath": ".spec.labels"},
        {"jsonPath": ".spec.empty.x"},
        {"jsonPath": ".spec."},
        {"jsonPath": ".spec.replicas"},
    ]);
    const TYPE: &str = "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.";
    assert_eq!(
        create(&crd),
        vec![
            format!(r#"spec.selectableFields[4].jsonPath: Invalid value: ".spec.ratio": {TYPE}"#),
            format!(r#"spec.selectableFields[5].jsonPath: Invalid value: ".spec.items": {TYPE}"#),
            format!(r#"spec.selectableFields[6].jsonPath: Invalid value: ".spec.port": {TYPE}"#),
            r#"spec.selectableFields[7].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata"#.to_string(),
            format!(r#"spec.selectableFields[9].jsonPath: Invalid value: ".spec.labels": {TYPE}"#),
            r#"spec.selectableFields[10].jsonPath: Invalid value: ".spec.empty.x": is an invalid path: does not refer to a valid field"#.to_string(),
            r#"spec.selectableFields[11].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON path"#.to_string(),
            r#"spec.selectableFields[12].jsonPath: Duplicate value: ".spec.replicas""#.to_string(),
            "spec.selectableFields: Too many: 10: must have at most 8 items".to_string(),
        ]
    );
}

#[test]
fn selectable_fields_per_version() {
    // Different schemas: each version keeps its schema and its selectable fields.
    let mut crd = seed();
    let mut v2 = version("v2", false);
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["color"] =
        json!({"type": "string"});
    v2["selectableFields"] = json!([{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.nope"}]);
    crd["spec"]["versions"] = json!([version("v1", true), v2.clone()]);
    crd["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.color"}]);
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.color": is an invalid path: does not refer to a valid field"#,
            r#"spec.versions[1].selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#,
        ]
    );

    // The same selectable fields in versions with different schemas: upstream moves the fields to
    // the top level but not the schemas, and refuses them there.
    crd["spec"]["versions"] = json!([version("v1", true), v2]);
    crd["spec"]["versions"][0]["selectableFields"] =
        crd["spec"]["versions"][1]["selectableFields"].clone();
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.selectableFields: Invalid value: "": selectableFields may only be set when validations.schema is included"#
        ]
    );

    // Same schemas and same fields: validated once, at the top level.
    let mut crd = seed();
    crd["spec"]["versions"] = json!([version("v1", true), version("v2", false)]);
    for i in 0..2 {
        crd["spec"]["versions"][i]["selectableFields"] = json!([{"jsonPath": ".spec.image"}]);
    }
    assert_eq!(create(&crd), Vec::<String>::new());
}

#[test]
fn deprecation_warning() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["deprecationWarning"] = json!("old");
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions"#
        ]
    );
    crd["spec"]["versions"][0]["deprecated"] = json!(true);
    assert!(create(&crd).is_empty());
    crd["spec"]["versions"][0]["deprecationWarning"] = json!("");
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.versions[0].deprecationWarning: Invalid value: "": must not be an empty string"#
        ]
    );
    crd["spec"]["versions"][0]["deprecationWarning"] = json!("ab\u{7}");
    assert_eq!(
        create(&crd),
        vec![
            r#"spec.versions[0].deprecationWarning: Invalid value: "ab\u{7}": must only contain printable UTF-8 characters; non-printable character found at index 2"#
        ]
    );
    let long = "x".repeat(257);
    crd["spec"]["versions"][0]["deprecationWarning"] = json!(long);
    assert_eq!(create(&crd), vec![format!("spec.versions[0].deprecationWarning: Invalid value: \"{long}\": must be <= 256 characters long")]);
}

fn with_conversion(conversion: Value) -> Value {
    let mut crd = seed();
    crd["spec"]["conversion"] = conversion;
    crd
}

#[test]
fn conversion_strategy() {
    assert_eq!(
        create(&with_conversion(json!({"strategy": "Magic"}))),
        vec![
            r#"spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook""#
        ]
    );
    assert_eq!(
        create(&with_conversion(json!({}))),
        vec!["spec.conversion.strategy: Required value"]
    );
    assert_eq!(
        create(&with_conversion(json!({"strategy": "Webhook"}))),
        vec![
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            "spec.conversion.conversionReviewVersions: Required value",
        ]
    );
    assert_eq!(
        create(&with_conversion(json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}}))),
        vec![
            "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
            "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
        ]
    );
    assert!(create_defaulted(with_conversion(json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"namespace": "ns", "name": "svc", "path": "/convert"}}, "conversionReviewVersions": ["v1", "v1beta1"]
    }}))).is_empty());
}

#[test]
fn conversion_webhook_client_config() {
    let webhook = |cc: Value, versions: Value| {
        let mut crd = with_conversion(
            json!({"strategy": "Webhook", "webhook": {"clientConfig": cc, "conversionReviewVersions": versions}}),
        );
        set_defaults(&mut crd);
        create(&crd)
    };
    assert_eq!(
        webhook(json!({}), json!(["v1"])),
        vec!["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]
    );
    assert_eq!(
        webhook(json!({"url": "https://x", "service": {"namespace": "a", "name": "b"}}), json!(["v1"])),
        vec!["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]
    );
    assert_eq!(
        webhook(json!({"url": "http://u:p@/p?q=1#f"}), json!(["v1"])),
        vec![
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#,
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]"#,
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "u:p": user information is not permitted in the URL"#,
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "f": fragments are not permitted in the URL"#,
            r#"spec.conversion.webhookClientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL"#,
        ]
    );
    assert_eq!(
        webhook(json!({"url": ":nope"}), json!(["v1"])),
        vec![
            r#"spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: parse ":nope": missing protocol scheme; desired format: https://host[/path]"#
        ]
    );
    // Upstream swaps name and namespace when reporting them.
    assert_eq!(
        webhook(json!({"service": {"namespace": "", "name": "svc", "port": 0, "path": "no-slash//Bad"}}), json!(["v1"])),
        vec![
            "spec.conversion.webhookClientConfig.service.name: Required value".to_string(),
            "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive".to_string(),
            r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "no-slash//Bad": must start with a '/'"#.to_string(),
            r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "no-slash//Bad": segment[1] may not be empty"#.to_string(),
            format!(r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "no-slash//Bad": segment[2]: {DNS1123_SUBDOMAIN}"#),
        ]
    );
    assert_eq!(
        webhook(
            json!({"service": {"namespace": "ns", "name": ""}}),
            json!(["v1"])
        ),
        vec!["spec.conversion.webhookClientConfig.service.namespace: Required value"]
    );
    assert_eq!(
        webhook(
            json!({"service": {"namespace": "ns", "name": "s", "path": "//"}}),
            json!(["v1"])
        ),
        vec![
            r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "//": segment[0] may not be empty"#
        ]
    );
}

#[test]
fn conversion_review_versions() {
    let webhook = |versions: Value| {
        let mut crd = with_conversion(
            json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://h/c"}, "conversionReviewVersions": versions}}),
        );
        set_defaults(&mut crd);
        crd
    };
    assert_eq!(
        create(&webhook(json!(["v2", "v2", "V3"]))),
        vec![
            r#"spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version"#.to_string(),
            format!(r#"spec.conversion.conversionReviewVersions[2]: Invalid value: "V3": {DNS1035}"#),
            r#"spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2", "V3"}: must include at least one of v1, v1beta1"#.to_string(),
        ]
    );
    // An update keeps accepting unrecognized versions that were already stored.
    let old = webhook(json!(["v2"]));
    assert!(msgs(&validate_update(&webhook(json!(["v3"])), &old)).is_empty());
    assert_eq!(
        msgs(&validate_update(
            &webhook(json!(["v3"])),
            &webhook(json!(["v1"]))
        )),
        vec![
            r#"spec.conversion.conversionReviewVersions: Invalid value: []string{"v3"}: must include at least one of v1, v1beta1"#
        ]
    );
}

#[test]
fn preserve_unknown_fields_is_refused() {
    let mut crd = seed();
    crd["spec"]["preserveUnknownFields"] = json!(true);
    crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://h"}, "conversionReviewVersions": ["v1"]}});
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["image"]["default"] = json!("busybox");
    assert_eq!(
        create(&crd),
        vec![
            "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
            r#"spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true"#,
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ]
    );
    // An existing CRD that already had it may keep it.
    let errs = msgs(&validate_update(&crd, &crd));
    assert!(
        !errs.iter().any(|e| e.contains("cannot set to true")),
        "{errs:?}"
    );
}

#[test]
fn api_approval_for_protected_groups() {
    let mut crd = seed();
    crd["spec"]["group"] = json!("stable.k8s.io");
    crd["metadata"]["name"] = json!("crontabs.stable.k8s.io");
    assert_eq!(
        create(&crd),
        vec![
            r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
        ]
    );
    crd["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "yes"});
    assert_eq!(
        create(&crd),
        vec![
            r#"metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111"#
        ]
    );
    // Unchanged state on update is never rejected.
    assert!(msgs(&validate_update(&crd, &crd)).is_empty());
    crd["metadata"]["annotations"] =
        json!({"api-approved.kubernetes.io": "unapproved, experimental"});
    assert!(create(&crd).is_empty());
    crd["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/78458"});
    assert!(create(&crd).is_empty());
}

fn established(mut crd: Value) -> Value {
    crate::naming::accept_and_establish_at(&mut crd, &[], "2021-06-20T07:35:27Z");
    crd
}

#[test]
fn update_immutable_fields() {
    let old = seed();
    let mut new = old.clone();
    new["spec"]["group"] = json!("other.example.com");
    new["spec"]["names"]["plural"] = json!("tabs");
    new["spec"]["names"]["kind"] = json!("Tab");
    new["spec"]["names"]["listKind"] = json!("TabList");
    new["spec"]["scope"] = json!("Cluster");
    // Not established yet: scope and kind may still change.
    assert_eq!(
        msgs(&validate_update(&new, &old)),
        vec![
            r#"spec.group: Invalid value: "other.example.com": field is immutable"#,
            r#"spec.names.plural: Invalid value: "tabs": field is immutable"#,
        ]
    );
    let old = established(old);
    assert_eq!(
        msgs(&validate_update(&new, &old)),
        vec![
            r#"spec.scope: Invalid value: "Cluster": field is immutable"#,
            r#"spec.names.kind: Invalid value: "Tab": field is immutable"#,
            r#"spec.group: Invalid value: "other.example.com": field is immutable"#,
            r#"spec.names.plural: Invalid value: "tabs": field is immutable"#,
        ]
    );
}

#[test]
fn update_stored_versions() {
    let mut old = established(seed());
    old["status"]["storedVersions"] = json!(["v1"]);
    let mut new = old.clone();
    new["spec"]["versions"] = json!([version("v2", true)]);
    assert_eq!(
        msgs(&validate_update(&new, &old)),
        vec!["status.storedVersions[0]: Invalid value: \"v1\": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions"]
    );
    new["spec"]["versions"] = json!([version("v1", false), version("v2", true)]);
    assert!(msgs(&validate_update(&new, &old)).is_empty());
    // The status the client sends is ignored: the old one (plus the storage version) counts.
    new["status"]["storedVersions"] = json!(["v9"]);
    assert!(msgs(&validate_update(&new, &old)).is_empty());
}

#[test]
fn update_relaxes_rules_old_data_broke() {
    let mut old = seed();
    old["spec"]["versions"][0]
        .as_object_mut()
        .unwrap()
        .remove("schema");
    let mut new = old.clone();
    new["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": true},
        {"name": "v2", "served": false, "storage": false},
    ]);
    // Old versions lacked schemas: only served versions need one, for pruning's sake.
    assert_eq!(
        msgs(&validate_update(&new, &old)),
        vec!["spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned"]
    );
    // Invalid root types that were already stored stay accepted.
    let mut old = seed();
    old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"] = json!("thing");
    assert_eq!(
        msgs(&validate_update(&old, &old)),
        vec![
            r#"spec.validation.openAPIV3Schema.type: Invalid value: "thing": must be object at the root"#
        ]
    );
}

#[test]
fn status_update_checks_accepted_names() {
    let mut crd = established(seed());
    crd["status"]["acceptedNames"]["plural"] = json!("Bad_Name");
    assert_eq!(
        msgs(&validate_status_update(&crd, &crd)),
        vec![format!(
            "status.acceptedNames.plural: Invalid value: \"Bad_Name\": {DNS1035}"
        )]
    );
}

#[test]
fn decode_failures_are_reported() {
    let errs = msgs(&validate_create(
        &json!({"spec": {"versions": [{"served": "yes"}]}}),
    ));
    assert_eq!(
        errs,
        vec!["spec.versions.served: Invalid value: json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool"]
    );
}

#[test]
fn all_errors_in_upstream_order() {
    let crd = json!({
        "metadata": {"name": "wrong"},
        "spec": {
            "group": "example",
            "scope": "Everywhere",
            "names": {"plural": "Things", "kind": "Thing", "listKind": "Thing"},
            "versions": [
                {"name": "v1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}},
                 "additionalPrinterColumns": [{"name": "A", "type": "text", "jsonPath": ".a"}]},
                {"name": "v1", "served": true, "storage": false},
            ],
            "conversion": {"strategy": "Webhook"},
        },
    });
    let errs = create_defaulted(crd);
    let go = "[]apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:\"v1\", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(0xc000a1e000), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition{apiextensions.CustomResourceColumnDefinition{Name:\"A\", Type:\"text\", Format:\"\", Description:\"\", Priority:0, JSONPath:\".a\"}}, SelectableFields:[]apiextensions.SelectableField(nil)}, apiextensions.CustomResourceDefinitionVersion{Name:\"v1\", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}";
    assert_eq!(
        errs,
        vec![
            r#"metadata.name: Invalid value: "wrong": must be spec.names.plural+"."+spec.group"#.to_string(),
            r#"spec.group: Invalid value: "example": should be a domain with at least one dot"#.to_string(),
            r#"spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced""#.to_string(),
            "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required".to_string(),
            r#"spec.versions[0].additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string"#.to_string(),
            format!("spec.versions: Invalid value: {go}: must contain unique version names"),
            format!("spec.versions: Invalid value: {go}: must have exactly one version marked as storage version"),
            format!("spec.names.plural: Invalid value: \"Things\": {DNS1035}"),
            "spec.names.listKind: Invalid value: \"Thing\": kind and listKind may not be the same".to_string(),
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook".to_string(),
            "spec.conversion.conversionReviewVersions: Required value".to_string(),
            "status.storedVersions: Invalid value: []string(nil): must have at least one stored version".to_string(),
        ]
    );
}

fn with_spec_property(prop: Value) -> Value {
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["list"] = prop;
    crd
}

#[test]
fn nested_schema_errors_are_reported_at_the_schema_path() {
    let crd = with_spec_property(json!({"type": "object", "properties": {"a": {}}}));
    assert_eq!(
        create(&crd),
        vec!["spec.validation.openAPIV3Schema.properties[spec].properties[list].properties[a].type: Required value: must not be empty for specified object fields"]
    );
    // Differing schemas stay per version.
    let mut crd = crd;
    let mut v2 = version("v2", false);
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["uniqueItems"] = json!(true);
    crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
    assert_eq!(
        create(&crd),
        vec![
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].properties[a].type: Required value: must not be empty for specified object fields",
            "spec.versions[1].schema.openAPIV3Schema.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ]
    );
}

#[test]
fn update_ratchets_set_and_map_list_rules() {
    // A set of non-atomic objects with nullable items, as older servers accepted.
    let old = with_spec_property(json!({
        "type": "array",
        "x-kubernetes-list-type": "set",
        "items": {"type": "object", "nullable": true, "properties": {"a": {"type": "string"}}},
    }));
    let expected = vec![
        "spec.validation.openAPIV3Schema.properties[spec].properties[list].items.x-kubernetes-map-type: Invalid value: (*string)(nil): must be atomic as item of a list with x-kubernetes-list-type=set",
        "spec.validation.openAPIV3Schema.properties[spec].properties[list].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set",
    ];
    assert_eq!(create(&old), expected);
    // Already stored: unchanged data is not rejected on update.
    let mut new = old.clone();
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] =
        json!("changed");
    assert!(msgs(&validate_update(&new, &old)).is_empty());
    // Updating a CRD that had none of these problems enforces them.
    assert_eq!(msgs(&validate_update(&old, &seed())), expected);
}

#[test]
fn update_ratchets_structural_schema_for_legacy_preserve_unknown_fields() {
    // Only CRDs that keep preserveUnknownFields=true (from v1beta1) may hold non-structural
    // schemas, and only while they already did.
    let mut old = with_spec_property(json!({"properties": {"a": {"type": "string"}}}));
    old["spec"]["preserveUnknownFields"] = json!(true);
    let mut new = old.clone();
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] =
        json!("changed");
    assert!(msgs(&validate_update(&new, &old)).is_empty());
    let mut structural_old = seed();
    structural_old["spec"]["preserveUnknownFields"] = json!(true);
    assert_eq!(
        msgs(&validate_update(&new, &structural_old)),
        vec!["spec.validation.openAPIV3Schema.properties[spec].properties[list].type: Required value: must not be empty for specified object fields"]
    );
}

#[test]
fn wrongly_typed_schema_keywords_are_decode_failures() {
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["replicas"]["maxLength"] = json!("ten");
    assert_eq!(
        crate::types::parse(&crd).unwrap_err(),
        "json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties.maxLength of type int64"
    );
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] =
        json!([{"rule": "true", "optionalOldSelf": "yes"}]);
    assert!(crate::types::parse(&crd).is_err());
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["items"] =
        json!([{"type": "string"}, 5]);
    assert!(crate::types::parse(&crd).is_err());
    // Nulls and unknown keywords are fine for the decoder.
    let mut crd = seed();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["default"] = Value::Null;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["readOnly"] = json!(true);
    assert!(crate::types::parse(&crd).is_ok());
}

#[test]
fn update_ratchets_unpruned_defaults() {
    let old = with_spec_property(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "default": {"a": "x", "b": "y"},
    }));
    let expected = vec![
        r#"spec.validation.openAPIV3Schema.properties[spec].properties[list].default: Invalid value: "object": must not have unknown fields"#,
    ];
    assert_eq!(create(&old), expected);
    let mut new = old.clone();
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] =
        json!("changed");
    assert!(msgs(&validate_update(&new, &old)).is_empty());
    assert_eq!(msgs(&validate_update(&old, &seed())), expected);
}
