use super::*;

fn crontab(schema: Value) -> (Value, Value) {
    let r = Resource {
        group: "stable.example.com",
        version: "v1",
        kind: "CronTab",
        list_kind: "CronTabList",
        plural: "crontabs",
        namespaced: true,
        status: false,
        scale: false,
        schema: ObjectSchema::Custom(Some(&schema)),
        preserve_unknown_fields: false,
    };
    let v3 = part(&r, Flavor::V3);
    let v2 = part(&r, Flavor::V2);
    let name = "com.example.stable.v1.CronTab";
    (v3.schemas[name].clone(), v2.schemas[name].clone())
}

#[test]
fn names() {
    assert_eq!(
        definition_name("stable.example.com", "v1", "CronTab"),
        "com.example.stable.v1.CronTab"
    );
    assert_eq!(
        definition_name("", "v1", "Namespace"),
        "io.k8s.api.core.v1.Namespace"
    );
    assert_eq!(
        definition_name("events.k8s.io", "v1", "EventList"),
        "io.k8s.api.events.v1.EventList"
    );
    assert_eq!(
        definition_name("discovery.k8s.io", "v1", "EndpointSlice"),
        "io.k8s.api.discovery.v1.EndpointSlice"
    );
    assert_eq!(
        definition_name("", "v1", "Service"),
        "io.k8s.api.core.v1.Service"
    );
    assert_eq!(
        operation_id_sample(),
        "listStableExampleComV1NamespacedCronTab"
    );
}

fn operation_id_sample() -> String {
    let r = Resource {
        group: "stable.example.com",
        version: "v1",
        kind: "CronTab",
        list_kind: "CronTabList",
        plural: "crontabs",
        namespaced: true,
        status: true,
        scale: true,
        schema: ObjectSchema::Custom(None),
        preserve_unknown_fields: false,
    };
    let p = part(&r, Flavor::V3);
    assert!(p
        .paths
        .contains_key("/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status"));
    assert!(p
        .paths
        .contains_key("/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale"));
    assert_eq!(
        p.paths["/apis/stable.example.com/v1/crontabs"]["get"]["operationId"],
        "listStableExampleComV1CronTabForAllNamespaces"
    );
    assert_eq!(
        p.paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale"]["put"]
            ["description"],
        "replace scale of the specified CronTab"
    );
    p.paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"]["get"]["operationId"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn seed_lossy_v2_conversion() {
    let (v3, v2) = crontab(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["a", "n"],
                "properties": {
                    "a": {"type": "string", "anyOf": [{"pattern": "x"}], "allOf": [{"minLength": 1}], "oneOf": [{"maxLength": 3}], "not": {"pattern": "y"}},
                    "n": {"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}},
                    "l": {"type": "array", "nullable": true, "items": {"type": "string"}},
                    "ios": {"x-kubernetes-int-or-string": true},
                    "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"q": {"type": "string"}}},
                    "e": {"type": "string", "example": "dropped", "externalDocs": {"url": "x"}},
                }
            }
        }
    }));
    let spec3 = &v3["properties"]["spec"]["properties"];
    assert_eq!(spec3["a"]["anyOf"], json!([{"pattern": "x"}]));
    assert_eq!(spec3["n"]["nullable"], json!(true));
    assert_eq!(
        spec3["ios"]["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    assert!(spec3["e"].get("example").is_none());
    let spec2 = &v2["properties"]["spec"];
    assert_eq!(spec2["required"], json!(["a"]));
    let p2 = &spec2["properties"];
    assert_eq!(p2["a"], json!({"type": "string"}));
    assert_eq!(p2["n"], json!({}));
    assert_eq!(p2["l"], json!({}));
    assert_eq!(p2["ios"], json!({"x-kubernetes-int-or-string": true}));
    assert_eq!(
        p2["p"],
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    );
    // TypeMeta and ObjectMeta in both, wrapped in allOf in v3 only.
    assert_eq!(
        v3["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(
        v2["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(v3["properties"]["kind"]["type"], "string");
    assert_eq!(
        v2["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
    );
}

#[test]
fn int_or_string_with_any_of_goes_to_all_of() {
    let mut s = json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}], "allOf": [{"pattern": "x"}]});
    unfold(&mut s);
    assert_eq!(
        s["allOf"][0],
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    );
    assert_eq!(s["allOf"][1], json!({"pattern": "x"}));
}

#[test]
fn embedded_resources_and_preserved_root() {
    let (v3, v2) = crontab(json!({
        "type": "object",
        "properties": {"tpl": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}
    }));
    let tpl = &v3["properties"]["tpl"];
    assert_eq!(tpl["required"], json!(["kind", "apiVersion"]));
    assert!(tpl["properties"]["metadata"]["allOf"].is_array());
    assert!(v2["properties"]["tpl"].get("properties").is_none());
    let (_, v2) = crontab(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    assert_eq!(
        v2,
        json!({"type": "object", "x-kubernetes-group-version-kind": [{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}]})
    );
}

#[test]
fn documents_carry_referenced_builtins() {
    let r = Resource {
        group: "stable.example.com",
        version: "v1",
        kind: "CronTab",
        list_kind: "CronTabList",
        plural: "crontabs",
        namespaced: true,
        status: false,
        scale: true,
        schema: ObjectSchema::Custom(Some(&json!({"type": "object"}))),
        preserve_unknown_fields: false,
    };
    let p3 = part(&r, Flavor::V3);
    let d = v3_document(&[&p3], "Kubernetes CRD Swagger", "v0.1.0");
    let s = d["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for n in [
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        "io.k8s.api.autoscaling.v1.Scale",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        "com.example.stable.v1.CronTabList",
    ] {
        assert!(s.contains_key(n), "{n}");
    }
    assert!(!s.contains_key("io.k8s.api.core.v1.Namespace"));
    let p2 = part(&r, Flavor::V2);
    let d2 = v2_document(&[&p2], "v1.32.0");
    assert_eq!(
        d2["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
            ["creationTimestamp"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"
    );
    let ns = Resource {
        group: "",
        version: "v1",
        kind: "Namespace",
        list_kind: "NamespaceList",
        plural: "namespaces",
        namespaced: false,
        status: true,
        scale: false,
        schema: ObjectSchema::BuiltIn,
        preserve_unknown_fields: false,
    };
    let d = v3_document(&[&part(&ns, Flavor::V3)], "Kubernetes", "v1.32.0");
    assert!(d["components"]["schemas"]["io.k8s.api.core.v1.NamespaceStatus"].is_object());
    assert_eq!(
        d["paths"]["/api/v1/namespaces"]["get"]["operationId"],
        "listCoreV1Namespace"
    );
}

#[test]
fn etag_is_sha512_hex() {
    let e = etag(b"");
    assert_eq!(e.len(), 128);
    assert!(e.starts_with("CF83E1357EEFB8BD"));
}

/// IntOrString's v3 `oneOf` is v2's `string` with its format, as kube-apiserver's swagger.json
/// has it.
#[test]
fn int_or_string_in_v2() {
    let name = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
    let v2 = &builtin(Flavor::V2)[name];
    assert_eq!(v2["type"], "string");
    assert_eq!(v2["format"], "int-or-string");
    assert!(v2.get("oneOf").is_none());
    assert!(builtin(Flavor::V3)[name].get("oneOf").is_some());
}
