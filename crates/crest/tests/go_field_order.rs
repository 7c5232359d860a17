//! Built-in objects are written in their Go struct's field order, as kube-apiserver's typed
//! encoder (encoding/json of the struct) writes them: TypeMeta (`kind`, `apiVersion`), then
//! `metadata` in ObjectMeta's order (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), then the
//! kind's own fields as k8s.io/api/<group>/<version>/types.go declares them, nested structs
//! alike; Go maps (`labels`, `data`) sorted. Custom resources keep upstream's unstructured
//! encoding (encoding/json of a map: every key sorted, metadata's too). Checked on the raw bytes
//! of every kind of answer: create, get, list, watch, patch, errors, tables, discovery.

mod common;
use common::*;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Value};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const MERGE: &str = "application/merge-patch+json";

/// A JSON document with the key order kept.
#[derive(Debug)]
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar,
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Ordered, A::Error> {
                let mut out = vec![];
                while let Some((k, v)) = a.next_entry::<String, Ordered>()? {
                    out.push((k, v));
                }
                Ok(Ordered::Object(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Ordered, A::Error> {
                let mut out = vec![];
                while let Some(v) = a.next_element::<Ordered>()? {
                    out.push(v);
                }
                Ok(Ordered::Array(out))
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
        }
        d.deserialize_any(V)
    }
}

impl Ordered {
    /// The node at a path of keys and (numeric) indexes.
    fn at(&self, path: &[&str]) -> &Ordered {
        let mut cur = self;
        for p in path {
            cur = match cur {
                Ordered::Object(m) => &m.iter().find(|(k, _)| k == p).expect(p).1,
                Ordered::Array(a) => &a[p.parse::<usize>().expect("index")],
                Ordered::Scalar => panic!("{p}: scalar"),
            };
        }
        cur
    }

    fn keys(&self, path: &[&str]) -> Vec<String> {
        match self.at(path) {
            Ordered::Object(m) => m.iter().map(|(k, _)| k.clone()).collect(),
            other => panic!("{path:?}: not an object: {other:?}"),
        }
    }
}

fn ordered(body: &[u8]) -> Ordered {
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)))
}

/// The keys at `path` are in the order `declared` gives them (each one declared there).
#[track_caller]
fn assert_declared_order(doc: &Ordered, path: &[&str], declared: &[&str]) {
    let keys = doc.keys(path);
    let ranks: Vec<usize> = keys
        .iter()
        .map(|k| {
            declared
                .iter()
                .position(|d| d == k)
                .unwrap_or_else(|| panic!("{path:?}: {k} is not declared in {declared:?}"))
        })
        .collect();
    assert!(
        ranks.windows(2).all(|w| w[0] < w[1]),
        "{path:?}: {keys:?} is not in Go's order {declared:?}"
    );
}

// k8s.io/apimachinery/pkg/apis/meta/v1/types.go, ObjectMeta.
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
// ManagedFieldsEntry and OwnerReference, same file.
const MANAGED_FIELDS_ENTRY: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];
const OWNER_REFERENCE: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

fn text(v: &Value) -> String {
    serde_json::to_string(v).expect("json")
}

async fn post(s: &Server, path: &str, body: &Value) -> Vec<u8> {
    let (code, _, b) = s
        .http(
            "POST",
            &format!("{path}?fieldManager=order-test"),
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(body).expect("json")),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&b));
    b
}

async fn get(s: &Server, path: &str) -> Vec<u8> {
    let (code, _, b) = s.http("GET", path, &[], None).await;
    assert_eq!(code, 200, "{path}: {}", String::from_utf8_lossy(&b));
    b
}

/// The answer to a ConfigMap create, byte for byte as kube-apiserver writes it.
fn expected_configmap(v: &Value) -> String {
    let m = &v["metadata"];
    let mf = &m["managedFields"][0];
    format!(
        concat!(
            r#"{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"cm","namespace":"default","#,
            r#""uid":{},"resourceVersion":{},"creationTimestamp":{},"labels":{{"a":"1","b":"2"}},"#,
            r#""annotations":{{"x":"y"}},"finalizers":["example.com/f"],"#,
            r#""managedFields":[{{"manager":"order-test","operation":"Update","apiVersion":"v1","#,
            r#""time":{},"fieldsType":"FieldsV1","fieldsV1":{}}}]}},"immutable":false,"#,
            r#""data":{{"k":"v","z":"last"}},"binaryData":{{"bin":"AAE="}}}}"#
        ),
        text(&m["uid"]),
        text(&m["resourceVersion"]),
        text(&m["creationTimestamp"]),
        text(&mf["time"]),
        text(&mf["fieldsV1"]),
    )
}

#[tokio::test]
async fn a_configmap_is_written_in_go_field_order_everywhere() {
    let s = Server::start();
    let list_before: Value = serde_json::from_slice(&get(&s, CMS).await).expect("list");
    let rv_before = list_before["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    // The body's own order (alphabetical here) does not matter.
    let body = json!({"apiVersion": "v1", "binaryData": {"bin": "AAE="},
        "data": {"z": "last", "k": "v"}, "immutable": false, "kind": "ConfigMap",
        "metadata": {"annotations": {"x": "y"}, "finalizers": ["example.com/f"],
            "labels": {"b": "2", "a": "1"}, "name": "cm"}});
    let created = post(&s, CMS, &body).await;
    let v: Value = serde_json::from_slice(&created).expect("json");
    let expected = expected_configmap(&v);
    assert_eq!(String::from_utf8_lossy(&created), expected);

    // GET serves the stored bytes; the list and a watch carry the same.
    let got = get(&s, &format!("{CMS}/cm")).await;
    assert_eq!(String::from_utf8_lossy(&got), expected);
    // (Only the test's own ConfigMap, not the namespace's kube-root-ca.crt.)
    let own = format!("{CMS}?fieldSelector=metadata.name!=kube-root-ca.crt");
    let list = get(&s, &own).await;
    let lv: Value = serde_json::from_slice(&list).expect("list");
    assert_eq!(
        String::from_utf8_lossy(&list),
        format!(
            r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":{}}},"items":[{expected}]}}"#,
            text(&lv["metadata"]["resourceVersion"])
        )
    );
    // A page: ListMeta's resourceVersion, continue, remainingItemCount.
    post(
        &s,
        CMS,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2"}}),
    )
    .await;
    let page = ordered(&get(&s, &format!("{CMS}?limit=1")).await);
    assert_eq!(
        page.keys(&["metadata"]),
        ["resourceVersion", "continue", "remainingItemCount"]
    );
    let (code, _, watch) = s
        .http(
            "GET",
            // Its own ConfigMap's events, not those of the namespace's kube-root-ca.crt.
            &format!(
                "{CMS}?watch=1&resourceVersion={rv_before}&timeoutSeconds=1&fieldSelector=metadata.name%3Dcm"
            ),
            &[],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let first = watch.split(|b| *b == b'\n').next().expect("an event");
    assert_eq!(
        String::from_utf8_lossy(first),
        format!(r#"{{"type":"ADDED","object":{expected}}}"#)
    );

    // A patch's answer; pretty output keeps the order.
    let (code, _, patched) = s
        .http(
            "PATCH",
            &format!("{CMS}/cm?fieldManager=order-test"),
            &[("Content-Type", MERGE)],
            Some(br#"{"data":{"k":"w"}}"#.to_vec()),
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&patched));
    let p = ordered(&patched);
    assert_eq!(
        p.keys(&[]),
        [
            "kind",
            "apiVersion",
            "metadata",
            "immutable",
            "data",
            "binaryData"
        ]
    );
    assert_declared_order(&p, &["metadata"], OBJECT_META);
    let pretty = get(&s, &format!("{CMS}/cm?pretty=true")).await;
    let pretty = String::from_utf8_lossy(&pretty);
    assert!(
        pretty.starts_with("{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"cm\",\n    \"namespace\": \"default\",\n    \"uid\": "),
        "{pretty}"
    );
}

#[tokio::test]
async fn errors_are_status_objects_in_go_field_order() {
    let s = Server::start();
    let (code, _, b) = s.http("GET", &format!("{CMS}/nope"), &[], None).await;
    assert_eq!(code, 404);
    // kube-apiserver's answer, byte for byte (meta/v1 Status: TypeMeta, ListMeta, status,
    // message, reason, details, code).
    assert_eq!(
        String::from_utf8_lossy(&b),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}"#
    );
    // An invalid object: StatusDetails' and StatusCause's own orders.
    let (code, _, b) = s
        .http(
            "POST",
            CMS,
            &[("Content-Type", "application/json")],
            Some(
                br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#
                    .to_vec(),
            ),
        )
        .await;
    assert_eq!(code, 422);
    let st = ordered(&b);
    assert_eq!(
        st.keys(&[]),
        [
            "kind",
            "apiVersion",
            "metadata",
            "status",
            "message",
            "reason",
            "details",
            "code"
        ]
    );
    assert_eq!(st.keys(&["details"]), ["name", "kind", "causes"]);
    assert_eq!(
        st.keys(&["details", "causes", "0"]),
        ["reason", "message", "field"]
    );
}

#[tokio::test]
async fn every_builtin_kind_follows_its_go_type() {
    let s = Server::start();
    // core/v1 Secret{TypeMeta, ObjectMeta, Immutable, Data, StringData, Type}.
    let b = post(
        &s,
        "/api/v1/namespaces/default/secrets",
        &json!({"type": "Opaque", "stringData": {"s": "t"}, "data": {"d": "ZA=="},
            "metadata": {"name": "sec"}, "kind": "Secret", "apiVersion": "v1"}),
    )
    .await;
    let v: Value = serde_json::from_slice(&b).expect("json");
    let m = &v["metadata"];
    assert_eq!(
        String::from_utf8_lossy(&b),
        format!(
            concat!(
                r#"{{"kind":"Secret","apiVersion":"v1","metadata":{{"name":"sec","namespace":"default","#,
                r#""uid":{},"resourceVersion":{},"creationTimestamp":{},"managedFields":[{{"manager":"order-test","#,
                r#""operation":"Update","apiVersion":"v1","time":{},"fieldsType":"FieldsV1","fieldsV1":{}}}]}},"#,
                r#""data":{{"d":"ZA==","s":"dA=="}},"type":"Opaque"}}"#
            ),
            text(&m["uid"]),
            text(&m["resourceVersion"]),
            text(&m["creationTimestamp"]),
            text(&m["managedFields"][0]["time"]),
            text(&m["managedFields"][0]["fieldsV1"]),
        )
    );

    // core/v1 Namespace{TypeMeta, ObjectMeta, Spec, Status}.
    let ns = ordered(
        &post(
            &s,
            "/api/v1/namespaces",
            &json!({"status": {}, "metadata": {"name": "ordered"}, "kind": "Namespace",
                "apiVersion": "v1"}),
        )
        .await,
    );
    assert_eq!(
        ns.keys(&[]),
        ["kind", "apiVersion", "metadata", "spec", "status"]
    );
    assert_declared_order(&ns, &["metadata"], OBJECT_META);
    assert_declared_order(
        &ns,
        &["metadata", "managedFields", "0"],
        MANAGED_FIELDS_ENTRY,
    );

    // core/v1 ServiceAccount{..., Secrets, ImagePullSecrets, AutomountServiceAccountToken}.
    let sa = ordered(
        &post(
            &s,
            "/api/v1/namespaces/default/serviceaccounts",
            &json!({"automountServiceAccountToken": false, "imagePullSecrets": [{"name": "p"}],
                "secrets": [{"name": "s1", "namespace": "default", "kind": "Secret"}],
                "metadata": {"name": "sa"}, "kind": "ServiceAccount", "apiVersion": "v1"}),
        )
        .await,
    );
    assert_eq!(
        sa.keys(&[]),
        [
            "kind",
            "apiVersion",
            "metadata",
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken"
        ]
    );
    // Secret references are cleaned to their name (upstream's cleanSecretReferences).
    assert_eq!(sa.keys(&["secrets", "0"]), ["name"]);

    // rbac/v1 Role{TypeMeta, ObjectMeta, Rules}; PolicyRule{Verbs, APIGroups, Resources,
    // ResourceNames, NonResourceURLs}.
    let role = ordered(
        &post(
            &s,
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            &json!({"rules": [{"resources": ["configmaps"], "resourceNames": ["x"],
                "apiGroups": [""], "verbs": ["get"]}], "metadata": {"name": "r"},
                "kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1"}),
        )
        .await,
    );
    assert_eq!(role.keys(&[]), ["kind", "apiVersion", "metadata", "rules"]);
    assert_eq!(
        role.keys(&["rules", "0"]),
        ["verbs", "apiGroups", "resources", "resourceNames"]
    );
    // ClusterRoleBinding{TypeMeta, ObjectMeta, Subjects, RoleRef}; Subject{Kind, APIGroup, Name,
    // Namespace}; RoleRef{APIGroup, Kind, Name}.
    let crb = ordered(
        &post(
            &s,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &json!({"roleRef": {"name": "view", "kind": "ClusterRole",
                "apiGroup": "rbac.authorization.k8s.io"},
                "subjects": [{"name": "u", "kind": "User"},
                    {"namespace": "default", "name": "sa", "kind": "ServiceAccount"}],
                "metadata": {"name": "crb"}, "kind": "ClusterRoleBinding",
                "apiVersion": "rbac.authorization.k8s.io/v1"}),
        )
        .await,
    );
    assert_eq!(
        crb.keys(&[]),
        ["kind", "apiVersion", "metadata", "subjects", "roleRef"]
    );
    assert_eq!(crb.keys(&["subjects", "0"]), ["kind", "apiGroup", "name"]);
    assert_eq!(crb.keys(&["subjects", "1"]), ["kind", "name", "namespace"]);
    assert_eq!(crb.keys(&["roleRef"]), ["apiGroup", "kind", "name"]);

    // core/v1 Service{TypeMeta, ObjectMeta, Spec, Status}; ServiceSpec and ServicePort as
    // declared.
    let svc = ordered(
        &post(
            &s,
            "/api/v1/namespaces/default/services",
            &json!({"spec": {"clusterIP": "None", "selector": {"app": "a"}, "ports": [{"targetPort": 8080,
                "protocol": "TCP", "port": 80, "name": "http"}]},
                "metadata": {"name": "svc"}, "kind": "Service", "apiVersion": "v1"}),
        )
        .await,
    );
    assert_eq!(
        svc.keys(&[]),
        ["kind", "apiVersion", "metadata", "spec", "status"]
    );
    assert_declared_order(
        &svc,
        &["spec"],
        &[
            "ports",
            "selector",
            "clusterIP",
            "clusterIPs",
            "type",
            "externalIPs",
            "sessionAffinity",
            "loadBalancerIP",
            "loadBalancerSourceRanges",
            "externalName",
            "externalTrafficPolicy",
            "healthCheckNodePort",
            "publishNotReadyAddresses",
            "sessionAffinityConfig",
            "ipFamilies",
            "ipFamilyPolicy",
            "allocateLoadBalancerNodePorts",
            "loadBalancerClass",
            "internalTrafficPolicy",
            "trafficDistribution",
        ],
    );
    assert_eq!(
        svc.keys(&["spec"])[..4],
        ["ports", "selector", "clusterIP", "clusterIPs"]
    );
    assert_eq!(
        svc.keys(&["spec", "ports", "0"]),
        ["name", "protocol", "port", "targetPort"]
    );

    // coordination/v1 Lease; LeaseSpec{HolderIdentity, LeaseDurationSeconds, AcquireTime,
    // RenewTime, LeaseTransitions, Strategy, PreferredHolder}.
    let lease = ordered(
        &post(
            &s,
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            &json!({"spec": {"renewTime": "2024-01-01T00:00:01.000000Z", "leaseTransitions": 1,
                "leaseDurationSeconds": 15, "holderIdentity": "me",
                "acquireTime": "2024-01-01T00:00:00.000000Z"},
                "metadata": {"name": "l"}, "kind": "Lease", "apiVersion": "coordination.k8s.io/v1"}),
        )
        .await,
    );
    assert_eq!(lease.keys(&[]), ["kind", "apiVersion", "metadata", "spec"]);
    assert_eq!(
        lease.keys(&["spec"]),
        [
            "holderIdentity",
            "leaseDurationSeconds",
            "acquireTime",
            "renewTime",
            "leaseTransitions"
        ]
    );

    // core/v1 Event{..., InvolvedObject, Reason, Message, Source, FirstTimestamp,
    // LastTimestamp, Count, Type, EventTime, Series, Action, Related, ReportingController,
    // ReportingInstance}.
    let ev = ordered(
        &post(
            &s,
            "/api/v1/namespaces/default/events",
            &json!({"type": "Normal", "count": 1, "message": "m", "reason": "R",
                "lastTimestamp": "2024-01-01T00:00:00Z", "firstTimestamp": "2024-01-01T00:00:00Z",
                "source": {"host": "h", "component": "c"},
                "involvedObject": {"name": "cm", "namespace": "default", "kind": "ConfigMap",
                    "apiVersion": "v1"},
                "metadata": {"name": "ev"}, "kind": "Event", "apiVersion": "v1"}),
        )
        .await,
    );
    assert_declared_order(
        &ev,
        &[],
        &[
            "kind",
            "apiVersion",
            "metadata",
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ],
    );
    // ObjectReference{Kind, Namespace, Name, UID, APIVersion, ResourceVersion, FieldPath}.
    assert_eq!(
        ev.keys(&["involvedObject"]),
        ["kind", "namespace", "name", "apiVersion"]
    );
    assert_eq!(ev.keys(&["source"]), ["component", "host"]);
    // The same Event as events.k8s.io/v1 reads it (events/v1 Event's own order).
    let ev2 = ordered(&get(&s, "/apis/events.k8s.io/v1/namespaces/default/events/ev").await);
    assert_declared_order(
        &ev2,
        &[],
        &[
            "kind",
            "apiVersion",
            "metadata",
            "eventTime",
            "series",
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "regarding",
            "related",
            "note",
            "type",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        ],
    );

    // Owner references in a dependent, in OwnerReference's order.
    let owned = ordered(
        &post(
            &s,
            CMS,
            &json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "owned",
                "ownerReferences": [{"blockOwnerDeletion": true, "controller": true,
                    "uid": "x", "name": "sec", "kind": "Secret", "apiVersion": "v1"}]}}),
        )
        .await,
    );
    assert_declared_order(
        &owned,
        &["metadata", "ownerReferences", "0"],
        OWNER_REFERENCE,
    );

    // Table (meta/v1: kind, apiVersion, metadata, columnDefinitions, rows), its rows and
    // their PartialObjectMetadata.
    let secrets = "/api/v1/namespaces/default/secrets";
    let (code, _, t) = s
        .http(
            "GET",
            secrets,
            &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let t = ordered(&t);
    assert_eq!(
        t.keys(&[]),
        [
            "kind",
            "apiVersion",
            "metadata",
            "columnDefinitions",
            "rows"
        ]
    );
    assert_eq!(
        t.keys(&["columnDefinitions", "0"]),
        ["name", "type", "format", "description", "priority"]
    );
    assert_eq!(t.keys(&["rows", "0"]), ["cells", "object"]);
    assert_eq!(
        t.keys(&["rows", "0", "object"]),
        ["kind", "apiVersion", "metadata"]
    );
    assert_declared_order(&t, &["rows", "0", "object", "metadata"], OBJECT_META);
    // PartialObjectMetadataList.
    let (code, _, pm) = s
        .http(
            "GET",
            secrets,
            &[(
                "Accept",
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let pm = ordered(&pm);
    assert_eq!(pm.keys(&[]), ["kind", "apiVersion", "metadata", "items"]);
    assert_eq!(pm.keys(&["items", "0"]), ["kind", "apiVersion", "metadata"]);
    assert_declared_order(&pm, &["items", "0", "metadata"], OBJECT_META);

    // Discovery (meta/v1 APIResourceList{TypeMeta, GroupVersion, APIResources}, APIResource's
    // own order) and the version (version.Info).
    let d = ordered(&get(&s, "/api/v1").await);
    assert_eq!(
        d.keys(&[]),
        ["kind", "apiVersion", "groupVersion", "resources"]
    );
    assert_declared_order(
        &d,
        &["resources", "0"],
        &[
            "name",
            "singularName",
            "namespaced",
            "group",
            "version",
            "kind",
            "verbs",
            "shortNames",
            "categories",
            "storageVersionHash",
        ],
    );
    let version = ordered(&get(&s, "/version").await);
    assert_declared_order(
        &version,
        &[],
        &[
            "major",
            "minor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform",
        ],
    );
}

#[tokio::test]
async fn custom_resources_keep_the_unstructured_sorted_encoding() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let path = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let b = post(
        &s,
        path,
        &json!({"kind": "CronTab", "apiVersion": "stable.example.com/v1",
            "spec": {"replicas": 1, "image": "i", "cronSpec": "* * * * */5"},
            "metadata": {"name": "ct", "labels": {"b": "1", "a": "2"}}}),
    )
    .await;
    let v: Value = serde_json::from_slice(&b).expect("json");
    let m = &v["metadata"];
    // encoding/json of a map[string]interface{}: every key sorted, resourceVersion among
    // metadata's (between namespace and uid).
    let expected = format!(
        concat!(
            r#"{{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{{"creationTimestamp":{},"#,
            r#""generation":1,"labels":{{"a":"2","b":"1"}},"managedFields":[{{"apiVersion":"stable.example.com/v1","#,
            r#""fieldsType":"FieldsV1","fieldsV1":{},"manager":"order-test","operation":"Update","time":{}}}],"#,
            r#""name":"ct","namespace":"default","resourceVersion":{},"uid":{}}},"#,
            r#""spec":{{"cronSpec":"* * * * */5","image":"i","replicas":1}}}}"#
        ),
        text(&m["creationTimestamp"]),
        text(&m["managedFields"][0]["fieldsV1"]),
        text(&m["managedFields"][0]["time"]),
        text(&m["resourceVersion"]),
        text(&m["uid"]),
    );
    assert_eq!(String::from_utf8_lossy(&b), expected);
    assert_eq!(
        String::from_utf8_lossy(&get(&s, &format!("{path}/ct")).await),
        expected
    );
    // An UnstructuredList is a map too: apiVersion, items, kind, metadata.
    let list = get(&s, path).await;
    let lv: Value = serde_json::from_slice(&list).expect("list");
    assert_eq!(
        String::from_utf8_lossy(&list),
        format!(
            r#"{{"apiVersion":"stable.example.com/v1","items":[{expected}],"kind":"CronTabList","metadata":{{"resourceVersion":{}}}}}"#,
            text(&lv["metadata"]["resourceVersion"])
        )
    );
}
