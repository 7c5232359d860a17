use super::*;
use serde_json::json;

fn s(v: &Value) -> String {
    String::from_utf8(to_vec(v)).unwrap()
}

#[test]
fn a_configmap_is_written_in_go_field_order() {
    // k8s.io/api/core/v1/types.go: ConfigMap{TypeMeta, ObjectMeta, Immutable, Data, BinaryData}.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "2", "a": "1"},
        "binaryData": {"x": "eA=="}, "immutable": true,
        "metadata": {"namespace": "ns", "name": "c", "uid": "u", "resourceVersion": "5",
            "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"z": "1", "a": "2"},
            "annotations": {"k": "v"}, "generateName": "g", "generation": 1,
            "finalizers": ["f"], "deletionTimestamp": "2024-01-01T00:00:01Z",
            "deletionGracePeriodSeconds": 0, "selfLink": "/x",
            "ownerReferences": [{"uid": "o", "name": "n", "kind": "K", "apiVersion": "v1",
                "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"time": "t", "subresource": "s", "operation": "Update",
                "manager": "m", "fieldsV1": {"f:data": {}}, "fieldsType": "FieldsV1",
                "apiVersion": "v1"}]}});
    assert_eq!(
        s(&cm),
        concat!(
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","generateName":"g","#,
            r#""namespace":"ns","selfLink":"/x","uid":"u","resourceVersion":"5","generation":1,"#,
            r#""creationTimestamp":"2024-01-01T00:00:00Z","deletionTimestamp":"2024-01-01T00:00:01Z","#,
            r#""deletionGracePeriodSeconds":0,"labels":{"a":"2","z":"1"},"annotations":{"k":"v"},"#,
            r#""ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"o","controller":true,"#,
            r#""blockOwnerDeletion":true}],"finalizers":["f"],"managedFields":[{"manager":"m","#,
            r#""operation":"Update","apiVersion":"v1","time":"t","fieldsType":"FieldsV1","#,
            r#""fieldsV1":{"f:data":{}},"subresource":"s"}]},"immutable":true,"#,
            r#""data":{"a":"1","b":"2"},"binaryData":{"x":"eA=="}}"#
        )
    );
}

#[test]
fn custom_resources_and_unknown_kinds_are_sorted() {
    let cr = json!({"kind": "CronTab", "apiVersion": "stable.example.com/v1",
        "spec": {"z": 1, "a": {"y": 1, "b": 2}}, "metadata": {"name": "x", "uid": "u"}});
    assert_eq!(
        s(&cr),
        r#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x","uid":"u"},"spec":{"a":{"b":2,"y":1},"z":1}}"#
    );
    // A CRD group that shares a built-in kind's name is not that kind.
    let other = json!({"kind": "Role", "apiVersion": "rbac.example.com/v1", "rules": []});
    assert_eq!(
        s(&other),
        r#"{"apiVersion":"rbac.example.com/v1","kind":"Role","rules":[]}"#
    );
}

#[test]
fn status_lists_and_embedded_objects() {
    // meta/v1 Status{TypeMeta, ListMeta, Status, Message, Reason, Details, Code}.
    let st = json!({"apiVersion": "v1", "kind": "Status", "code": 404, "reason": "NotFound",
        "message": "m", "status": "Failure", "metadata": {},
        "details": {"kind": "configmaps", "name": "x",
            "causes": [{"field": "f", "message": "m", "reason": "r"}]}});
    assert_eq!(
        s(&st),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"m","reason":"NotFound","details":{"name":"x","kind":"configmaps","causes":[{"reason":"r","message":"m","field":"f"}]},"code":404}"#
    );
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "1"},
        "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"},
            "status": {"phase": "Active"}, "spec": {"finalizers": ["kubernetes"]}},
            {"apiVersion": "x.io/v1", "kind": "X", "b": 1, "a": 2}]});
    assert_eq!(
        s(&list),
        concat!(
            r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":["#,
            r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"a"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}},"#,
            r#"{"a":2,"apiVersion":"x.io/v1","b":1,"kind":"X"}]}"#
        )
    );
    let rb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "b"}, "roleRef": {"name": "r", "kind": "ClusterRole",
        "apiGroup": "rbac.authorization.k8s.io"},
        "subjects": [{"namespace": "n", "name": "s", "kind": "ServiceAccount"}]});
    assert_eq!(
        s(&rb),
        r#"{"kind":"ClusterRoleBinding","apiVersion":"rbac.authorization.k8s.io/v1","metadata":{"name":"b"},"subjects":[{"kind":"ServiceAccount","name":"s","namespace":"n"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"r"}}"#
    );
}

#[test]
fn schemas_in_a_crd_follow_json_schema_props() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition", "metadata": {"name": "a.b"},
        "spec": {"group": "b", "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "description": "d",
                "properties": {"spec": {"type": "array", "items": {"type": "string",
                    "format": "f"}}},
                "additionalProperties": true}}}]}});
    let out = s(&crd);
    assert!(
        out.contains(r#""openAPIV3Schema":{"description":"d","type":"object","properties":{"spec":{"type":"array","items":{"type":"string","format":"f"}}},"additionalProperties":true}"#),
        "{out}"
    );
    assert!(out.starts_with(r#"{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"name":"a.b"},"spec":{"group":"b","#));
}

#[test]
fn pretty_output_is_the_compact_output_indented() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"},
        "metadata": {"name": "c", "labels": {}, "finalizers": []}});
    let pretty = String::from_utf8(to_vec_pretty(&cm)).unwrap();
    assert_eq!(
        pretty,
        "{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"c\",\n    \"labels\": {},\n    \"finalizers\": []\n  },\n  \"data\": {\n    \"a\": \"1\"\n  }\n}"
    );
    assert_eq!(String::from_utf8(indent(&to_vec(&cm))).unwrap(), pretty);
    let tricky = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "{,:[]}\"\\"}});
    assert_eq!(indent(&to_vec(&tricky)), to_vec_pretty(&tricky));
}

fn check_slot(v: &Value, expected: &str) {
    let mut out = vec![];
    let slot = write_with_slot(&mut out, v).expect("metadata");
    let spliced = String::from_utf8(slot.splice(&out, "7").unwrap()).unwrap();
    assert_eq!(spliced, expected);
    // Bytes of unknown origin in that order give the same slot.
    assert_eq!(
        stored_slot(&out),
        Some(slot),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let mut with = v.clone();
    with["metadata"]["resourceVersion"] = json!("7");
    assert_eq!(s(&with), expected);
}

#[test]
fn the_resource_version_slot_is_where_the_order_puts_it() {
    check_slot(
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "uid": "u",
            "generation": 1, "labels": {"a": "b"}}}),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"u","resourceVersion":"7","generation":1,"labels":{"a":"b"}}}"#,
    );
    check_slot(
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"a": "b"}}}),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"7","labels":{"a":"b"}}}"#,
    );
    check_slot(
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"7"}}"#,
    );
    check_slot(
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"7"}}"#,
    );
    // Sorted, for custom resources.
    check_slot(
        &json!({"apiVersion": "a.io/v1", "kind": "A", "metadata": {"name": "a", "uid": "u",
            "namespace": "n", "creationTimestamp": "t"}, "spec": {}}),
        r#"{"apiVersion":"a.io/v1","kind":"A","metadata":{"creationTimestamp":"t","name":"a","namespace":"n","resourceVersion":"7","uid":"u"},"spec":{}}"#,
    );
    check_slot(
        &json!({"apiVersion": "a.io/v1", "kind": "A", "metadata": {"uid": "u"}}),
        r#"{"apiVersion":"a.io/v1","kind":"A","metadata":{"resourceVersion":"7","uid":"u"}}"#,
    );
}

#[test]
fn bytes_out_of_order_have_no_slot() {
    // Written by an older Crest: sorted keys for a built-in kind.
    assert_eq!(
        stored_slot(br#"{"apiVersion":"v1","data":{},"kind":"ConfigMap","metadata":{"name":"a"}}"#),
        None
    );
    assert_eq!(
        stored_slot(br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"uid":"a","name":"a"}}"#),
        None
    );
    assert_eq!(
        stored_slot(br#"{"kind":"X","apiVersion":"a.io/v1","metadata":{"name":"a"}}"#),
        None
    );
    assert_eq!(
        stored_slot(
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"1"}}"#
        ),
        None
    );
}

#[test]
fn a_patched_document_has_its_top_level_sorted() {
    let cm = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "1"},
        "metadata": {"namespace": "n", "name": "c", "uid": "u", "resourceVersion": "1"}});
    assert_eq!(
        String::from_utf8(to_vec_patched(&cm, "v1", "ConfigMap")).unwrap(),
        r#"{"apiVersion":"v1","data":{"a":"1"},"kind":"Secret","metadata":{"name":"c","namespace":"n","uid":"u","resourceVersion":"1"}}"#
    );
    let info =
        json!({"platform": "linux/amd64", "major": "1", "minor": "32", "gitVersion": "v1.32.0"});
    assert_eq!(
        String::from_utf8(to_vec_as(
            &info,
            "k8s.io/apimachinery/pkg/version.Info",
            false
        ))
        .unwrap(),
        r#"{"major":"1","minor":"32","gitVersion":"v1.32.0","platform":"linux/amd64"}"#
    );
}

#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    // Every ASCII byte and some multi-byte characters, at every offset within an 8-byte word,
    // in runs long enough for the word-at-a-time skip.
    let mut cases: Vec<String> = (0u8..0x80).map(|b| (b as char).to_string()).collect();
    cases.push("héllo \u{2028} \u{1F600} <&> \u{7f}".into());
    cases.push("a".repeat(40) + "\"" + &"b".repeat(17) + "\\" + "\n\u{1}");
    let mut all = vec![];
    for c in &cases {
        for pad in 0..9 {
            all.push(format!("{}{c}{}", "x".repeat(pad), "y".repeat(9 - pad)));
        }
    }
    for text in all {
        let v = json!({"k": [text.clone(), {"n": 1.5, "m": null, "b": true}], text.clone(): -3});
        let mut ours = vec![];
        write_compact(&mut ours, &v);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(&v).unwrap(),
            "{text:?}"
        );
    }
}
