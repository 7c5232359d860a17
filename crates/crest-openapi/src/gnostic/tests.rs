use super::*;
use crate::{part, v2_document, Flavor, ObjectSchema, Resource};
use serde_json::json;

fn crontab_document() -> Value {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["cronSpec"],
                "properties": {
                    "cronSpec": {"type": "string", "pattern": "^\\d+$"},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                },
            },
        },
    });
    let r = Resource {
        group: "stable.example.com",
        version: "v1",
        kind: "CronTab",
        list_kind: "CronTabList",
        plural: "crontabs",
        namespaced: true,
        status: true,
        scale: true,
        schema: ObjectSchema::Custom(Some(&schema)),
        preserve_unknown_fields: false,
    };
    let cm = Resource {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        list_kind: "ConfigMapList",
        plural: "configmaps",
        namespaced: true,
        status: false,
        scale: false,
        schema: ObjectSchema::BuiltIn,
        preserve_unknown_fields: false,
    };
    let parts = [part(&r, Flavor::V2), part(&cm, Flavor::V2)];
    let refs: Vec<&Part> = parts.iter().collect();
    v2_document(&refs, "v1.32.0")
}

use crate::Part;

fn definition<'a>(d: &'a Document, name: &str) -> &'a Schema {
    d.definitions
        .as_ref()
        .and_then(|ds| ds.additional_properties.iter().find(|n| n.name == name))
        .and_then(|n| n.value.as_ref())
        .unwrap_or_else(|| panic!("no definition {name}"))
}

fn property<'a>(s: &'a Schema, name: &str) -> &'a Schema {
    s.properties
        .as_ref()
        .and_then(|p| p.additional_properties.iter().find(|n| n.name == name))
        .and_then(|n| n.value.as_ref())
        .unwrap_or_else(|| panic!("no property {name}"))
}

fn types(s: &Schema) -> Vec<&str> {
    s.r#type
        .as_ref()
        .map(|t| t.value.iter().map(String::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn published_document_converts_without_problems() {
    let doc = crontab_document();
    let (d, problems) = convert(&doc);
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(d.swagger, "2.0");
    let info = d.info.as_ref().expect("info");
    assert_eq!(
        (info.title.as_str(), info.version.as_str()),
        ("Kubernetes", "v1.32.0")
    );
    // Every definition and path of the JSON document, in its order.
    let names: Vec<&str> = d
        .definitions
        .iter()
        .flat_map(|ds| ds.additional_properties.iter().map(|n| n.name.as_str()))
        .collect();
    let json_names: Vec<&str> = doc["definitions"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(names, json_names);
    let paths: Vec<&str> = d
        .paths
        .iter()
        .flat_map(|p| p.path.iter().map(|n| n.name.as_str()))
        .collect();
    let json_paths: Vec<&str> = doc["paths"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(paths, json_paths);
    // The bearer token scheme and requirement.
    let sd = &d
        .security_definitions
        .as_ref()
        .expect("securityDefinitions");
    assert!(matches!(
        &sd.additional_properties[0].value,
        Some(SecurityDefinitionsItem { oneof: Some(SecurityDefinitionsOneof::ApiKeySecurity(k)) })
            if k.name == "authorization" && k.r#in == "header"
    ));
    assert_eq!(d.security[0].additional_properties[0].name, "BearerToken");
}

#[test]
fn schemas_as_kubectl_reads_them() {
    let (d, _) = convert(&crontab_document());
    let ct = definition(&d, "com.example.stable.v1.CronTab");
    assert_eq!(types(ct), ["object"]);
    let gvk = ct
        .vendor_extension
        .iter()
        .find(|e| e.name == "x-kubernetes-group-version-kind")
        .and_then(|e| e.value.as_ref())
        .expect("gvk");
    assert_eq!(
        gvk.yaml,
        "- group: stable.example.com\n  kind: CronTab\n  version: v1\n"
    );
    assert_eq!(
        property(ct, "metadata")._ref,
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    let spec = property(ct, "spec");
    assert_eq!(spec.required, ["cronSpec"]);
    assert_eq!(property(spec, "cronSpec").pattern, "^\\d+$");
    let replicas = property(spec, "replicas");
    assert_eq!((replicas.minimum, replicas.maximum), (1.0, 10.0));
    assert_eq!(
        replicas.default.as_ref().map(|a| a.yaml.as_str()),
        Some("1\n")
    );
    let mode = property(spec, "mode");
    let e: Vec<&str> = mode.r#enum.iter().map(|a| a.yaml.as_str()).collect();
    assert_eq!(e, ["a\n", "b\n"]);
    let labels = property(spec, "labels");
    assert!(matches!(
        labels.additional_properties.as_ref(),
        Some(AdditionalPropertiesItem { oneof: Some(AdditionalPropertiesOneof::Schema(s)) })
            if types(s) == ["string"]
    ));
    let tags = property(spec, "tags");
    assert_eq!(tags.max_items, 3);
    let items = tags.items.as_ref().expect("items");
    assert_eq!(items.schema.len(), 1);
    assert_eq!(types(&items.schema[0]), ["string"]);
    // A built-in definition with its list type and a map of strings.
    let cm = definition(&d, "io.k8s.api.core.v1.ConfigMap");
    assert!(property(cm, "data").additional_properties.is_some());
}

fn parameter(p: &ParametersItem) -> Option<&Parameter> {
    match &p.oneof {
        Some(ParametersItemOneof::Parameter(p)) => Some(p),
        _ => None,
    }
}

#[test]
fn paths_parameters_and_responses() {
    let (d, _) = convert(&crontab_document());
    let item = d
        .paths
        .as_ref()
        .and_then(|p| {
            p.path
                .iter()
                .find(|n| n.name == "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs")
        })
        .and_then(|n| n.value.as_ref())
        .expect("path");
    // Path-level: the namespace (path, required) and pretty (query).
    let shared: Vec<(&str, &str, bool)> = item
        .parameters
        .iter()
        .filter_map(|p| match parameter(p).and_then(|p| p.oneof.as_ref()) {
            Some(ParameterOneof::NonBodyParameter(NonBodyParameter { oneof })) => match oneof {
                Some(NonBodyParameterOneof::Path(s)) => Some((s.name.as_str(), "path", s.required)),
                Some(NonBodyParameterOneof::Query(s)) => {
                    Some((s.name.as_str(), "query", s.unique_items))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        shared,
        [("namespace", "path", true), ("pretty", "query", true)]
    );
    let post = item.post.as_ref().expect("post");
    assert_eq!(
        post.operation_id,
        "createStableExampleComV1NamespacedCronTab"
    );
    assert_eq!(post.schemes, ["https"]);
    let body =
        post.parameters
            .iter()
            .find_map(|p| match parameter(p).and_then(|p| p.oneof.as_ref()) {
                Some(ParameterOneof::BodyParameter(b)) => Some(b),
                _ => None,
            });
    let body = body.expect("body parameter");
    assert!(body.required);
    assert_eq!(
        body.schema.as_ref().map(|s| s._ref.as_str()),
        Some("#/definitions/com.example.stable.v1.CronTab")
    );
    let codes: Vec<&str> = post
        .responses
        .iter()
        .flat_map(|r| r.response_code.iter().map(|c| c.name.as_str()))
        .collect();
    assert_eq!(codes, ["200", "201", "202", "401"]);
    let action = post
        .vendor_extension
        .iter()
        .find(|e| e.name == "x-kubernetes-action")
        .and_then(|e| e.value.as_ref());
    assert_eq!(action.map(|a| a.yaml.as_str()), Some("post\n"));
}

#[test]
fn encodes_and_decodes() {
    let doc = crontab_document();
    let bytes = v2_protobuf(&doc);
    let back = Document::decode(bytes.as_slice()).expect("decode");
    assert_eq!(back, convert(&doc).0);
}

/// Bytes gnostic-models v0.6.8 (`ParseDocument`, then Go's `proto.Marshal`) produces for the
/// same JSON text: scalars at their defaults are left out, `$ref`s, oneofs, named maps,
/// vendor extensions and Anys as YAML.
#[test]
fn bytes_as_gnostic_writes_them() {
    let doc = json!({
        "swagger": "2.0",
        "info": {"title": "T", "version": "v"},
        "paths": {"/a": {"get": {
            "parameters": [
                {"name": "b", "in": "body", "required": true, "schema": {"$ref": "#/definitions/D"}},
                {"name": "q", "in": "query", "type": "boolean", "uniqueItems": true},
                {"$ref": "#/parameters/p"},
            ],
            "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/D"}}},
            "x-kubernetes-action": "get",
        }}},
        "definitions": {"D": {
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"type": "string", "default": "", "enum": ["x", "true"]},
                "m": {"type": "object", "additionalProperties": true},
                "n": {"type": "integer", "minimum": 0, "maximum": 2, "maxLength": 4},
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "D", "version": "v1"}],
        }},
    });
    let (_, problems) = convert(&doc);
    assert_eq!(problems, Vec::<String>::new());
    let hex: String = v2_protobuf(&doc)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, GNOSTIC_BYTES);
}

const GNOSTIC_BYTES: &str = concat!(
    "0a03322e3012060a015412017642a80112a5010a022f61129e01129b0142220a200a1e1201621a04626f647920",
    "012a110a0f232f646566696e6974696f6e732f44421c0a1a12181a16120571756572792201713207626f6f6c65",
    "616ea00101421212100a0e232f706172616d65746572732f704a240a220a03323030121b0a190a024f4b12130a",
    "110a0f232f646566696e6974696f6e732f446a1d0a13782d6b756265726e657465732d616374696f6e12061204",
    "6765740a4ac8010ac5010a014412bf019a010161b201080a066f626a656374ca01610a2a0a016112252a051203",
    "22220aa201041202780aa2010912072274727565220ab201080a06737472696e670a150a016d1210aa01021001",
    "b201080a066f626a6563740a1c0a016e12173900000000000000405804b201090a07696e7465676572fa01490a",
    "1f782d6b756265726e657465732d67726f75702d76657273696f6e2d6b696e64122612242d2067726f75703a20",
    "22220a20206b696e643a20440a202076657273696f6e3a2076310a",
);

/// Every built-in definition Crest can publish is one gnostic reads (kube-openapi answers 503
/// for a v2 document it cannot convert).
#[test]
fn builtin_definitions_convert_without_problems() {
    let doc = json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": {},
        "definitions": crate::builtin(Flavor::V2),
    });
    let (d, problems) = convert(&doc);
    assert_eq!(problems, Vec::<String>::new());
    let n = d.definitions.map(|d| d.additional_properties.len());
    assert_eq!(n, Some(crate::builtin(Flavor::V2).len()));
}
