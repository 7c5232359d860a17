use super::*;
use serde_json::json;

// A wire encoder independent of the prost structs, so each field number is checked
// against upstream's generated.proto rather than against itself.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
fn len_field(tag: u32, data: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    varint(u64::from(tag) << 3 | 2, &mut out);
    varint(data.len() as u64, &mut out);
    out.extend_from_slice(data);
    out
}
fn str_field(tag: u32, s: &str) -> Vec<u8> {
    len_field(tag, s.as_bytes())
}
fn int_field(tag: u32, v: i64) -> Vec<u8> {
    let mut out = vec![];
    varint(u64::from(tag) << 3, &mut out);
    varint(v as u64, &mut out);
    out
}
fn map_entry(tag: u32, k: &str, v: &str) -> Vec<u8> {
    len_field(tag, &[str_field(1, k), str_field(2, v)].concat())
}
fn envelope_bytes(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [str_field(1, api_version), str_field(2, kind)].concat();
    let unknown = [len_field(1, &type_meta), len_field(2, raw)].concat();
    [MAGIC.to_vec(), unknown].concat()
}
fn time(seconds: i64) -> Vec<u8> {
    int_field(1, seconds)
}

#[test]
fn lease_body_as_client_go_sends_it() {
    // A leader election renewal: metadata with name and resourceVersion, a spec with the
    // holder, the duration, both MicroTimes and the transitions.
    let meta = [str_field(1, "kube-scheduler"), str_field(6, "42")].concat();
    let renew = [int_field(1, 1_714_557_605), int_field(2, 123_456_000)].concat();
    let spec = [
        str_field(1, "node-a_1234"),
        int_field(2, 15),
        len_field(3, &time(1_714_557_600)),
        len_field(4, &renew),
        int_field(5, 3),
    ]
    .concat();
    let lease = [len_field(1, &meta), len_field(2, &spec)].concat();
    let body = envelope_bytes("coordination.k8s.io/v1", "Lease", &lease);
    let v = decode_object(&body, "coordination.k8s.io", "v1", "Lease").unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
            "metadata": {"name": "kube-scheduler", "resourceVersion": "42", "creationTimestamp": null},
            "spec": {"holderIdentity": "node-a_1234", "leaseDurationSeconds": 15,
                     "acquireTime": "2024-05-01T10:00:00.000000Z",
                     "renewTime": "2024-05-01T10:00:05.123456Z", "leaseTransitions": 3},
        })
    );
    // Another group's kinds are not decoded.
    assert!(decode_object(&body, "coordination.k8s.io", "v1", "LeaseCandidate").is_err());
}

#[test]
fn kubectl_create_namespace_body() {
    // `kubectl create namespace qq` (v1.32) as captured on the wire: gogo writes every
    // non-pointer field, empty ones included, and an empty creationTimestamp.
    let hex = "6b3873000a0f0a02763112094e616d657370616365121a0a120a02717112001a0022002a0032003800420012001a020a001a002200";
    let body: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let v = decode_object(&body, "", "v1", "Namespace").unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": "qq", "creationTimestamp": null},
            "spec": {}, "status": {},
        })
    );
}

#[test]
fn object_meta_and_namespace_field_numbers() {
    let owner = [
        str_field(1, "ConfigMap"),
        str_field(3, "owner"),
        str_field(4, "u-1"),
        str_field(5, "v1"),
        int_field(6, 1),
        int_field(7, 0),
    ]
    .concat();
    let managed = [
        str_field(1, "kubectl"),
        str_field(2, "Update"),
        str_field(3, "v1"),
        len_field(4, &time(1_700_000_000)),
        str_field(6, "FieldsV1"),
        len_field(7, &str_field(1, r#"{"f:metadata":{}}"#)),
        str_field(8, "status"),
    ]
    .concat();
    let meta = [
        str_field(1, "ns1"),
        str_field(2, "gen-"),
        str_field(3, "other"),
        str_field(4, "/api/v1/namespaces/ns1"),
        str_field(5, "uid-1"),
        str_field(6, "42"),
        int_field(7, 3),
        len_field(8, &time(0)),
        len_field(9, &[time(1_700_000_000), int_field(2, 5)].concat()),
        int_field(10, 30),
        map_entry(11, "a", "b"),
        map_entry(11, "c", "d"),
        map_entry(12, "note", "x y"),
        len_field(13, &owner),
        str_field(14, "f1"),
        str_field(14, "f2"),
        len_field(17, &managed),
    ]
    .concat();
    let condition = [
        str_field(1, "NamespaceContentRemaining"),
        str_field(2, "True"),
        len_field(4, &time(1_700_000_000)),
        str_field(5, "SomeResourcesRemain"),
        str_field(6, "left"),
    ]
    .concat();
    let ns = [
        len_field(1, &meta),
        len_field(2, &str_field(1, "kubernetes")),
        len_field(
            3,
            &[str_field(1, "Active"), len_field(2, &condition)].concat(),
        ),
    ]
    .concat();
    let v = decode_object(
        &envelope_bytes("v1", "Namespace", &ns),
        "",
        "v1",
        "Namespace",
    )
    .unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "Namespace", "apiVersion": "v1",
            "metadata": {
                "name": "ns1", "generateName": "gen-", "namespace": "other",
                "selfLink": "/api/v1/namespaces/ns1", "uid": "uid-1",
                "resourceVersion": "42", "generation": 3,
                "creationTimestamp": "1970-01-01T00:00:00Z",
                "deletionTimestamp": "2023-11-14T22:13:20Z",
                "deletionGracePeriodSeconds": 30,
                "labels": {"a": "b", "c": "d"},
                "annotations": {"note": "x y"},
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                    "uid": "u-1", "controller": true, "blockOwnerDeletion": false,
                }],
                "finalizers": ["f1", "f2"],
                "managedFields": [{
                    "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                    "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {}}, "subresource": "status",
                }],
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {
                "phase": "Active",
                "conditions": [{
                    "type": "NamespaceContentRemaining", "status": "True",
                    "lastTransitionTime": "2023-11-14T22:13:20Z",
                    "reason": "SomeResourcesRemain", "message": "left",
                }],
            },
        })
    );
}

#[test]
fn service_field_numbers() {
    let port = [
        str_field(1, "http"),
        str_field(2, "TCP"),
        int_field(3, 80),
        len_field(4, &[int_field(1, 0), int_field(2, 8080)].concat()),
        int_field(5, 0),
        str_field(6, "kubernetes.io/h2c"),
    ]
    .concat();
    let named = [
        int_field(3, 443),
        len_field(4, &[int_field(1, 1), str_field(3, "https")].concat()),
    ]
    .concat();
    let spec = [
        len_field(1, &port),
        len_field(1, &named),
        map_entry(2, "app", "web"),
        str_field(3, "10.0.0.1"),
        str_field(4, "ClusterIP"),
        str_field(5, "192.0.2.1"),
        str_field(7, "ClientIP"),
        str_field(8, ""),
        str_field(10, ""),
        int_field(12, 0),
        int_field(13, 1),
        len_field(14, &len_field(1, &int_field(1, 60))),
        str_field(17, "SingleStack"),
        str_field(18, "10.0.0.1"),
        str_field(19, "IPv4"),
        str_field(22, "Local"),
    ]
    .concat();
    let ingress = [str_field(1, "192.0.2.9"), str_field(3, "VIP")].concat();
    let status = len_field(1, &len_field(1, &ingress));
    let svc = [
        len_field(1, &str_field(1, "web")),
        len_field(2, &spec),
        len_field(3, &status),
    ]
    .concat();
    let v = decode_object(&envelope_bytes("v1", "Service", &svc), "", "v1", "Service").unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "Service", "apiVersion": "v1",
            "metadata": {"name": "web", "creationTimestamp": null},
            "spec": {
                "ports": [
                    {"name": "http", "protocol": "TCP", "appProtocol": "kubernetes.io/h2c",
                     "port": 80, "targetPort": 8080},
                    {"port": 443, "targetPort": "https"},
                ],
                "selector": {"app": "web"},
                "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "type": "ClusterIP",
                "externalIPs": ["192.0.2.1"], "sessionAffinity": "ClientIP",
                "publishNotReadyAddresses": true,
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}},
                "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Local",
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.9", "ipMode": "VIP"}]}},
        })
    );
}

#[test]
fn endpoints_and_endpoint_slice_field_numbers() {
    let target = [str_field(1, "Pod"), str_field(3, "p1"), str_field(4, "u")].concat();
    let addr = [
        str_field(1, "10.0.0.1"),
        len_field(2, &target),
        str_field(3, "h"),
        str_field(4, "node-1"),
    ]
    .concat();
    let port = [
        str_field(1, "https"),
        int_field(2, 8443),
        str_field(3, "TCP"),
        str_field(4, "h2"),
    ]
    .concat();
    let subset = [
        len_field(1, &addr),
        len_field(2, &str_field(1, "10.0.0.2")),
        len_field(3, &port),
    ]
    .concat();
    let eps = [len_field(1, &str_field(1, "web")), len_field(2, &subset)].concat();
    let v = decode_object(
        &envelope_bytes("v1", "Endpoints", &eps),
        "",
        "v1",
        "Endpoints",
    )
    .unwrap();
    assert_eq!(
        v["subsets"],
        json!([{
            "addresses": [{"ip": "10.0.0.1", "hostname": "h", "nodeName": "node-1",
                           "targetRef": {"kind": "Pod", "name": "p1", "uid": "u"}}],
            "notReadyAddresses": [{"ip": "10.0.0.2"}],
            "ports": [{"name": "https", "port": 8443, "protocol": "TCP", "appProtocol": "h2"}],
        }])
    );
    let endpoint = [
        str_field(1, "10.0.0.1"),
        len_field(2, &[int_field(1, 1), int_field(3, 0)].concat()),
        str_field(6, "node-1"),
        str_field(7, "z1"),
        len_field(8, &len_field(1, &str_field(1, "z1"))),
    ]
    .concat();
    let slice_port = [str_field(1, ""), str_field(2, "TCP"), int_field(3, 443)].concat();
    let slice = [
        len_field(1, &str_field(1, "web-1")),
        len_field(2, &endpoint),
        len_field(3, &slice_port),
        str_field(4, "IPv4"),
    ]
    .concat();
    let v = decode_object(
        &envelope_bytes("discovery.k8s.io/v1", "EndpointSlice", &slice),
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
    )
    .unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
            "metadata": {"name": "web-1", "creationTimestamp": null},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"],
                           "conditions": {"ready": true, "terminating": false},
                           "nodeName": "node-1", "zone": "z1",
                           "hints": {"forZones": [{"name": "z1"}]}}],
            "ports": [{"name": "", "protocol": "TCP", "port": 443}],
        })
    );
}

#[test]
fn envelope_defaults_and_unknown_fields() {
    // Missing kind/apiVersion default to the endpoint's; undeclared fields are skipped.
    let ns = [len_field(
        1,
        &[str_field(1, "x"), str_field(15, "gone")].concat(),
    )]
    .concat();
    let body = [MAGIC.to_vec(), len_field(2, &ns)].concat();
    let v = decode_object(&body, "", "v1", "Namespace").unwrap();
    assert_eq!(
        v["metadata"],
        json!({"name": "x", "creationTimestamp": null})
    );
    assert_eq!(
        (v["kind"].as_str(), v["apiVersion"].as_str()),
        (Some("Namespace"), Some("v1"))
    );
}

#[test]
fn secret_and_service_account_field_numbers() {
    let bytes_entry =
        |k: &str, v: &[u8]| len_field(2, &[str_field(1, k), len_field(2, v)].concat());
    let secret = [
        len_field(1, &str_field(1, "s")),
        bytes_entry("k", b"\x00\xffv"),
        str_field(3, "kubernetes.io/tls"),
        map_entry(4, "plain", "text"),
        int_field(5, 1),
    ]
    .concat();
    let v = decode_object(&envelope_bytes("v1", "Secret", &secret), "", "v1", "Secret").unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "Secret", "apiVersion": "v1",
            "metadata": {"name": "s", "creationTimestamp": null},
            "data": {"k": "AP92"}, "stringData": {"plain": "text"},
            "type": "kubernetes.io/tls", "immutable": true,
        })
    );
    let object_ref = [
        str_field(1, "Secret"),
        str_field(2, "ns"),
        str_field(3, "tok"),
        str_field(4, "u"),
        str_field(5, "v1"),
        str_field(6, "7"),
        str_field(7, "data"),
    ]
    .concat();
    let sa = [
        len_field(1, &str_field(1, "robot")),
        len_field(2, &object_ref),
        len_field(3, &str_field(1, "pull")),
        len_field(3, &[]),
        int_field(4, 0),
    ]
    .concat();
    let v = decode_object(
        &envelope_bytes("v1", "ServiceAccount", &sa),
        "",
        "v1",
        "ServiceAccount",
    )
    .unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "ServiceAccount", "apiVersion": "v1",
            "metadata": {"name": "robot", "creationTimestamp": null},
            "secrets": [{"kind": "Secret", "namespace": "ns", "name": "tok", "uid": "u",
                         "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "data"}],
            "imagePullSecrets": [{"name": "pull"}, {}],
            "automountServiceAccountToken": false,
        })
    );
}

#[test]
fn event_field_numbers() {
    let reference = [
        str_field(1, "CronTab"),
        str_field(2, "default"),
        str_field(3, "x"),
        str_field(5, "stable.example.com/v1"),
    ]
    .concat();
    let core = [
        len_field(1, &str_field(1, "e1")),
        len_field(2, &reference),
        str_field(3, "Made"),
        str_field(4, "made it"),
        len_field(5, &str_field(1, "tester")),
        len_field(6, &time(1_700_000_000)),
        int_field(8, 2),
        str_field(9, "Normal"),
        len_field(
            10,
            &[int_field(1, 1_700_000_000), int_field(2, 5_000)].concat(),
        ),
        str_field(14, "ctl"),
    ]
    .concat();
    let v = decode_object(&envelope_bytes("v1", "Event", &core), "", "v1", "Event").unwrap();
    assert_eq!(
        v,
        json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e1", "creationTimestamp": null},
               "involvedObject": {"kind": "CronTab", "namespace": "default", "name": "x",
                                  "apiVersion": "stable.example.com/v1"},
               "reason": "Made", "message": "made it", "source": {"component": "tester"},
               "firstTimestamp": "2023-11-14T22:13:20Z", "lastTimestamp": null, "count": 2, "type": "Normal",
               "eventTime": "2023-11-14T22:13:20.000005Z", "reportingComponent": "ctl"})
    );
    let events = [
        len_field(1, &str_field(1, "e2")),
        len_field(2, &time(1_700_000_000)),
        len_field(
            3,
            &[int_field(1, 3), len_field(2, &time(1_700_000_001))].concat(),
        ),
        str_field(4, "example.com/ctl"),
        str_field(5, "i"),
        str_field(6, "Sync"),
        str_field(7, "Synced"),
        len_field(8, &reference),
        str_field(10, "note"),
        str_field(11, "Warning"),
        int_field(15, 4),
    ]
    .concat();
    let v = decode_object(
        &envelope_bytes("events.k8s.io/v1", "Event", &events),
        "events.k8s.io",
        "v1",
        "Event",
    )
    .unwrap();
    assert_eq!(
        v,
        json!({"kind": "Event", "apiVersion": "events.k8s.io/v1", "metadata": {"name": "e2", "creationTimestamp": null},
               "eventTime": "2023-11-14T22:13:20.000000Z",
               "series": {"count": 3, "lastObservedTime": "2023-11-14T22:13:21.000000Z"},
               "reportingController": "example.com/ctl", "reportingInstance": "i",
               "action": "Sync", "reason": "Synced",
               "regarding": {"kind": "CronTab", "namespace": "default", "name": "x",
                             "apiVersion": "stable.example.com/v1"},
               "note": "note", "type": "Warning", "deprecatedCount": 4,
               // Go struct values: always in Go's JSON (a zero Time as null).
               "deprecatedSource": {}, "deprecatedFirstTimestamp": null,
               "deprecatedLastTimestamp": null})
    );
}

#[test]
fn delete_options_field_numbers() {
    let raw = [
        int_field(1, 0),
        len_field(2, &[str_field(1, "uid-1"), str_field(2, "")].concat()),
        int_field(3, 1),
        str_field(4, "Foreground"),
        str_field(5, "All"),
    ]
    .concat();
    let v = decode_delete_options(&envelope_bytes("v1", "DeleteOptions", &raw)).unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "DeleteOptions", "apiVersion": "v1",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": "uid-1", "resourceVersion": ""},
            "orphanDependents": true, "propagationPolicy": "Foreground",
            "dryRun": ["All"],
        })
    );
    // Absent pointer fields stay absent.
    let v = decode_delete_options(&envelope_bytes("", "", &[])).unwrap();
    assert_eq!(v, json!({}));
}

#[test]
fn malformed_bodies() {
    let e = decode_object(b"{\"kind\":\"Namespace\"}", "", "v1", "Namespace").unwrap_err();
    assert_eq!(
        (e.code, e.reason),
        (400, Some(crest_api::Reason::BadRequest))
    );
    assert_eq!(
        e.message,
        "the object provided is unrecognized (must be of type Namespace): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"kind\":\"Namespace\"})"
    );
    let e = decode_object(b"k8s\0", "", "v1", "Namespace").unwrap_err();
    assert_eq!(
        e.message,
        "the object provided is unrecognized (must be of type Namespace): empty body (6b387300)"
    );
    // Cut off inside the envelope.
    let body = envelope_bytes("v1", "Namespace", &len_field(1, &str_field(1, "x")));
    let e = decode_object(&body[..body.len() - 2], "", "v1", "Namespace").unwrap_err();
    assert!(
        e.message.starts_with(
            "the object provided is unrecognized (must be of type Namespace): unexpected EOF (6b387300"
        ),
        "{}",
        e.message
    );
    // The envelope is fine, the Namespace inside is cut off.
    let body = envelope_bytes("v1", "Namespace", &[0x0a, 0x05, 0x0a]);
    let e = decode_object(&body, "", "v1", "Namespace").unwrap_err();
    assert_eq!(
        e.message,
        "Namespace in version \"v1\" cannot be handled as a Namespace: unexpected EOF"
    );
    let e = decode_object(
        &envelope_bytes("v2", "Namespace", &[]),
        "",
        "v1",
        "Namespace",
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "Namespace in version \"v2\" cannot be handled as a Namespace: no kind \"Namespace\" is registered for version \"v2\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
    );
    let e = decode_delete_options(b"k8s\0\x0a").unwrap_err();
    assert_eq!((e.code, e.message.as_str()), (400, "unexpected EOF"));
    // Custom resources (and kinds Crest takes only as JSON) are 415.
    let e = decode_object(&[], "stable.example.com", "v1", "CronTab").unwrap_err();
    assert_eq!(e.code, 415);
}

/// Objects in the form Go's JSON encoding gives them survive encode then decode unchanged.
#[test]
fn responses_round_trip() {
    let objects = [
        json!({"kind": "Namespace", "apiVersion": "v1",
               "metadata": {"name": "rt", "labels": {"k": "v"}, "uid": "u-1", "resourceVersion": "7",
                            "creationTimestamp": "2024-05-01T10:00:00Z",
                            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                                               "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
                                               "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:k": {}}}}}]},
               "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        json!({"kind": "Secret", "apiVersion": "v1",
               "metadata": {"name": "s", "namespace": "default", "creationTimestamp": null},
               "data": {"a": "AAEC/w==", "b": ""}, "type": "Opaque", "immutable": false}),
        json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
               "metadata": {"name": "l", "creationTimestamp": null,
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u",
                                                 "controller": false}]},
               "spec": {"holderIdentity": "", "leaseDurationSeconds": 0, "leaseTransitions": 0,
                        "renewTime": "2024-05-01T10:00:05.123456Z"}}),
        json!({"kind": "Service", "apiVersion": "v1",
               "metadata": {"name": "svc", "creationTimestamp": null},
               "spec": {"ports": [{"port": 80, "targetPort": "http", "protocol": "TCP"},
                                  {"port": 81, "targetPort": 8081}],
                        "clusterIP": "None", "clusterIPs": ["None"], "type": "ClusterIP",
                        "sessionAffinity": "ClientIP",
                        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
                        "ipFamilyPolicy": "SingleStack", "allocateLoadBalancerNodePorts": false},
               "status": {"loadBalancer": {}}}),
        json!({"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
               "metadata": {"name": "es", "creationTimestamp": null}, "addressType": "IPv4",
               "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": false, "serving": true}}],
               "ports": [{"port": 0, "name": ""}]}),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "configmaps \"x\" not found", "reason": "NotFound",
               "details": {"name": "x", "kind": "configmaps",
                           "causes": [{"reason": "FieldValueInvalid", "message": "m", "field": "f"}]},
               "code": 404}),
    ];
    let msgs = Messages::get();
    for obj in objects {
        let av = obj["apiVersion"].as_str().unwrap();
        let kind = obj["kind"].as_str().unwrap();
        let body = encode_object(&obj).unwrap();
        let (tm, raw) = envelope(&body).unwrap();
        assert_eq!((tm.api_version.as_str(), tm.kind.as_str()), (av, kind));
        let mut back = decode::message(msgs, msgs.for_kind(av, kind).unwrap(), raw, 0).unwrap();
        back["kind"] = kind.into();
        back["apiVersion"] = av.into();
        assert_eq!(back, obj, "{kind}");
        // The transcoder (JSON bytes, no tree) writes what the tree encoder does.
        let json = serde_json::to_vec(&obj).unwrap();
        let streamed = encode_json(av, kind, &json).unwrap();
        let (_, raw2) = envelope(&streamed).unwrap();
        let mut back2 = decode::message(msgs, msgs.for_kind(av, kind).unwrap(), raw2, 0).unwrap();
        back2["kind"] = kind.into();
        back2["apiVersion"] = av.into();
        assert_eq!(back2, obj, "{kind} transcoded");
        let list = encode_list(
            "v1",
            "ConfigMapList",
            &json!({"resourceVersion": "9"}),
            &[br#"{"metadata":{"name":"a"},"data":{"k":"v"},"binaryData":{"b":"AQI="}}"#],
        )
        .unwrap();
        let (_, raw3) = envelope(&list).unwrap();
        let l =
            decode::message(msgs, msgs.for_kind("v1", "ConfigMapList").unwrap(), raw3, 0).unwrap();
        assert_eq!(l["metadata"], json!({"resourceVersion": "9"}));
        assert_eq!(
            l["items"][0],
            json!({"metadata": {"name": "a", "creationTimestamp": null}, "data": {"k": "v"},
                   "binaryData": {"b": "AQI="}})
        );
    }
}

#[test]
fn crds_and_partial_metadata_encode() {
    let crd = json!({"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": "crontabs.stable.example.com", "creationTimestamp": null},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
                 "names": {"plural": "crontabs", "kind": "CronTab", "singular": "", "listKind": ""},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                                                "additionalProperties": false,
                                                "required": ["a"], "default": {"a": 1}},
                                       "list": {"type": "array", "items": {"type": "string"}},
                                       "alt": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}]},
        "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}});
    let body = encode_object(&crd).unwrap();
    let msgs = Messages::get();
    let (_, raw) = envelope(&body).unwrap();
    let m = msgs
        .for_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        .unwrap();
    let back = decode::message(msgs, m, raw, 0).unwrap();
    let schema = &back["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(
        schema["properties"]["spec"]["additionalProperties"],
        json!(false)
    );
    assert_eq!(schema["properties"]["spec"]["default"], json!({"a": 1}));
    assert_eq!(
        schema["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"],
        json!(true)
    );
    assert_eq!(
        schema["properties"]["list"]["items"],
        json!({"type": "string"})
    );
    assert_eq!(
        schema["properties"]["alt"]["anyOf"][1],
        json!({"type": "string"})
    );
    assert_eq!(back["status"]["storedVersions"], json!(["v1"]));
    // A create body of apiextensions' clientset decodes, kind and apiVersion set.
    let decoded = decode_object(
        &body,
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
    )
    .unwrap();
    assert_eq!(decoded["kind"], "CustomResourceDefinition");
    assert_eq!(
        decoded["spec"]["versions"][0]["schema"],
        back["spec"]["versions"][0]["schema"]
    );

    let list = json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "5", "continue": "c"},
        "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": {"name": "a", "namespace": "n"}}]});
    assert!(encode_object(&list).is_some());
    // Custom resources and Tables have no message.
    assert!(
        encode_object(&json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab"})).is_none()
    );
    assert!(!encodable("meta.k8s.io/v1", "Table"));
}

#[test]
fn watch_frames_are_length_prefixed_watch_events() {
    let obj = encode_object(&json!({"kind": "ConfigMap", "apiVersion": "v1",
                                    "metadata": {"name": "c"}}))
    .unwrap();
    let mut out = vec![];
    watch_frame("ADDED", &obj, &mut out);
    let n = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
    assert_eq!(n, out.len() - 4);
    let expected = [str_field(1, "ADDED"), len_field(2, &len_field(1, &obj))].concat();
    assert_eq!(&out[4..], expected.as_slice());
}

#[test]
fn zero_objects_are_gos_json_of_the_zero_struct() {
    assert_eq!(
        zero_object("v1", "Namespace").unwrap(),
        json!({"metadata": {"creationTimestamp": null}, "spec": {}, "status": {}})
    );
    assert_eq!(
        zero_object("v1", "Service").unwrap(),
        json!({"metadata": {"creationTimestamp": null}, "spec": {},
               "status": {"loadBalancer": {}}})
    );
    assert_eq!(
        zero_object("v1", "ConfigMap").unwrap(),
        json!({"metadata": {"creationTimestamp": null}})
    );
    assert!(zero_object("stable.example.com/v1", "CronTab").is_none());
}

#[test]
fn cluster_role_with_aggregation_rule_and_empty_rules() {
    // ClusterRole: metadata = 1, rules = 2, aggregationRule = 3 (a pointer: present when
    // sent, even empty); PolicyRule: verbs = 1, apiGroups = 2, resources = 3.
    let rule = [str_field(1, "get"), str_field(2, ""), str_field(3, "pods")].concat();
    let sel = len_field(1, &map_entry(1, "agg", "true"));
    let cr = [
        len_field(1, &str_field(1, "agg")),
        len_field(2, &rule),
        len_field(3, &sel),
    ]
    .concat();
    let body = envelope_bytes("rbac.authorization.k8s.io/v1", "ClusterRole", &cr);
    let v = decode_object(&body, "rbac.authorization.k8s.io", "v1", "ClusterRole").unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "ClusterRole", "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "agg", "creationTimestamp": null},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]},
        })
    );
    // Without an aggregationRule there is none; verbs are written even when nil.
    let cr = [len_field(1, &str_field(1, "plain")), len_field(2, &[])].concat();
    let body = envelope_bytes("rbac.authorization.k8s.io/v1", "ClusterRole", &cr);
    let v = decode_object(&body, "rbac.authorization.k8s.io", "v1", "ClusterRole").unwrap();
    assert_eq!(v["rules"], json!([{"verbs": null}]));
    assert!(v.get("aggregationRule").is_none());
}

#[test]
fn subject_access_review_with_extra_both_ways() {
    // SubjectAccessReviewSpec: resourceAttributes = 1 (pointer), user = 3, groups = 4,
    // extra = 5 (map<string, ExtraValue>, ExtraValue.items = 1).
    let attrs = [
        str_field(1, "default"),
        str_field(2, "get"),
        str_field(5, "pods"),
    ]
    .concat();
    let extra = len_field(
        5,
        &[
            str_field(1, "scopes"),
            len_field(2, &[str_field(1, "a"), str_field(1, "b")].concat()),
        ]
        .concat(),
    );
    let spec = [
        len_field(1, &attrs),
        str_field(3, "alice"),
        str_field(4, "devs"),
        extra,
    ]
    .concat();
    let sar = [len_field(1, &[]), len_field(2, &spec)].concat();
    let body = envelope_bytes("authorization.k8s.io/v1", "SubjectAccessReview", &sar);
    let v = decode_object(&body, "authorization.k8s.io", "v1", "SubjectAccessReview").unwrap();
    assert_eq!(
        v,
        json!({
            "kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": {"resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"},
                     "user": "alice", "groups": ["devs"], "extra": {"scopes": ["a", "b"]}},
            "status": {"allowed": false},
        })
    );
    // The answer, written back and read again, keeps extra and the status.
    let mut answer = v.clone();
    answer["status"] = json!({"allowed": true, "reason": "RBAC: allowed"});
    let pb = encode_object(&answer).unwrap();
    let again = decode_object(&pb, "authorization.k8s.io", "v1", "SubjectAccessReview").unwrap();
    assert_eq!(again["spec"], answer["spec"]);
    assert_eq!(again["status"], answer["status"]);
}

/// What kube-apiserver stores for a built-in kind (protobuf) reads back as its JSON; anything
/// else (JSON, a kind without a message, garbage) is not taken for it.
#[test]
fn stored_protobuf_objects_decode() {
    let ns = json!({"kind": "Namespace", "apiVersion": "v1",
                    "metadata": {"name": "legacy", "uid": "u-1", "creationTimestamp": "2024-05-01T10:00:00Z"},
                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
    let role = json!({"kind": "ClusterRole", "apiVersion": "rbac.authorization.k8s.io/v1",
                      "metadata": {"name": "view", "creationTimestamp": null},
                      "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
    for obj in [ns, role] {
        let stored = encode_object(&obj).unwrap();
        assert_eq!(decode_stored(&stored), Some(obj));
    }
    assert_eq!(decode_stored(br#"{"kind":"Namespace"}"#), None);
    assert_eq!(decode_stored(b"k8s\0\x01"), None);
    let pod = wrap("v1", "Pod", b"");
    assert_eq!(decode_stored(&pod), None);
}
