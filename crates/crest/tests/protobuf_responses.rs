//! Protobuf response bodies: what client-go's typed clients (kubectl create configmap|secret|
//! serviceaccount|namespace|service) and its metadata client (`as=PartialObjectMetadataList`)
//! get back when they ask for `application/vnd.kubernetes.protobuf`. Bodies are decoded here
//! with the kube-rs project's generated messages (k8s-pb), independent of the server's table,
//! and through kubectl itself (client-go's gogo-protobuf decoders).

mod common;
use common::*;
use k8s_pb::api::core::v1::{ConfigMap, ConfigMapList, Namespace};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{PartialObjectMetadataList, Status, WatchEvent};
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost_k8s::Message;
use serde_json::Value;

const PB: &str = "application/vnd.kubernetes.protobuf";
/// What client-go's typed clients send when configured for protobuf.
const PB_ACCEPT: &str = "application/vnd.kubernetes.protobuf, */*";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// The envelope: magic, then runtime.Unknown; returns (apiVersion, kind, raw).
fn unwrap(body: &[u8]) -> (String, String, Vec<u8>) {
    assert_eq!(&body[..4], b"k8s\0", "not a protobuf body: {body:?}");
    let u = Unknown::decode(&body[4..]).expect("runtime.Unknown");
    let tm = u.type_meta.unwrap_or_default();
    (
        tm.api_version.unwrap_or_default(),
        tm.kind.unwrap_or_default(),
        u.raw.unwrap_or_default(),
    )
}

fn ctype(h: &reqwest::header::HeaderMap) -> String {
    h.get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// kubectl's typed create commands send and receive protobuf; what they print from the decoded
/// answer matches the object read back as JSON.
#[test]
fn kubectl_create_commands_decode_protobuf_answers() {
    let s = Server::start();
    // -v=8 shows the exchange: a protobuf answer, not a JSON fallback.
    let (ok, _, log) = s.kubectl(&["create", "configmap", "pbc", "--from-literal=a=b", "-v=8"]);
    assert!(ok, "{log}");
    assert!(
        log.contains("Response Headers:")
            && log.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "{log}"
    );
    let created = s.kubectl_ok(&[
        "create",
        "configmap",
        "pbc2",
        "--from-literal=k=v",
        "--from-literal=x=y",
        "-o",
        "json",
    ]);
    let created: Value = serde_json::from_str(&created).unwrap();
    let read: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "configmap", "pbc2", "-o", "json"])).unwrap();
    assert_eq!(created, read);
    assert_eq!(created["data"]["x"], "y");

    for args in [
        &[
            "create",
            "secret",
            "generic",
            "pbs",
            "--from-literal=p=secret",
        ][..],
        &["create", "serviceaccount", "pbsa"],
        &["create", "namespace", "pbns"],
        &["create", "service", "clusterip", "pbsvc", "--tcp=80:8080"],
        &[
            "create",
            "service",
            "externalname",
            "pbext",
            "--external-name=example.com",
        ],
    ] {
        let mut with_json = args.to_vec();
        with_json.extend(["-o", "json"]);
        let created: Value = serde_json::from_str(&s.kubectl_ok(&with_json)).unwrap();
        let name = created["metadata"]["name"].as_str().unwrap().to_string();
        let kind = created["kind"].as_str().unwrap().to_lowercase();
        let read: Value =
            serde_json::from_str(&s.kubectl_ok(&["get", &kind, &name, "-o", "json"])).unwrap();
        assert_eq!(created, read, "{args:?}");
    }
    // Errors come back as a protobuf Status kubectl reads.
    let (ok, _, err) = s.kubectl(&["create", "configmap", "pbc"]);
    assert!(!ok);
    assert!(
        err.contains(r#"error: failed to create configmap: configmaps "pbc" already exists"#),
        "{err}"
    );
    s.stop();
}

#[tokio::test]
async fn objects_lists_and_errors_as_protobuf() {
    let s = Server::start();
    s.kubectl_ok(&["create", "configmap", "one", "--from-literal=a=b"]);
    s.kubectl_ok(&["create", "configmap", "two", "--from-literal=c=d"]);

    let (code, h, body) = s
        .http("GET", &format!("{CMS}/one"), &[("Accept", PB_ACCEPT)], None)
        .await;
    assert_eq!(code, 200);
    assert_eq!(ctype(&h), PB);
    let (av, kind, raw) = unwrap(&body);
    assert_eq!((av.as_str(), kind.as_str()), ("v1", "ConfigMap"));
    let cm = ConfigMap::decode(raw.as_slice()).unwrap();
    let meta = cm.metadata.unwrap();
    assert_eq!(meta.name.as_deref(), Some("one"));
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert!(meta.uid.is_some_and(|u| !u.is_empty()));
    assert!(meta.creation_timestamp.and_then(|t| t.seconds).unwrap_or(0) > 1_700_000_000);
    assert_eq!(cm.data.get("a").map(String::as_str), Some("b"));

    // The test's own ConfigMaps (not the namespace's kube-root-ca.crt).
    let own = format!("{CMS}?fieldSelector=metadata.name!=kube-root-ca.crt");
    let (code, h, body) = s.http("GET", &own, &[("Accept", PB)], None).await;
    assert_eq!(code, 200);
    assert_eq!(ctype(&h), PB);
    let (_, kind, raw) = unwrap(&body);
    assert_eq!(kind, "ConfigMapList");
    let list = ConfigMapList::decode(raw.as_slice()).unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|i| i.metadata.as_ref()?.name.clone())
        .collect();
    assert_eq!(names, ["one", "two"]);
    assert!(list.metadata.unwrap().resource_version.is_some());

    // A Namespace: spec and status as nested messages.
    let (_, _, body) = s
        .http("GET", "/api/v1/namespaces/default", &[("Accept", PB)], None)
        .await;
    let ns = Namespace::decode(unwrap(&body).2.as_slice()).unwrap();
    assert_eq!(ns.status.and_then(|st| st.phase).as_deref(), Some("Active"));

    // Errors: a Status message.
    let (code, h, body) = s
        .http(
            "GET",
            &format!("{CMS}/missing"),
            &[("Accept", PB_ACCEPT)],
            None,
        )
        .await;
    assert_eq!(code, 404);
    assert_eq!(ctype(&h), PB);
    let (av, kind, raw) = unwrap(&body);
    assert_eq!((av.as_str(), kind.as_str()), ("v1", "Status"));
    let st = Status::decode(raw.as_slice()).unwrap();
    assert_eq!(st.code, Some(404));
    assert_eq!(st.reason.as_deref(), Some("NotFound"));
    assert_eq!(
        st.message.as_deref(),
        Some(r#"configmaps "missing" not found"#)
    );
    assert_eq!(
        st.details.and_then(|d| d.kind).as_deref(),
        Some("configmaps")
    );

    // Tables stay JSON.
    let table = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json;as=Table;g=meta.k8s.io;v=v1,application/json";
    let (code, h, body) = s.http("GET", CMS, &[("Accept", table)], None).await;
    assert_eq!(code, 200);
    assert!(ctype(&h).starts_with("application/json"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["kind"], "Table");
    s.stop();
}

#[tokio::test]
async fn custom_resources_answer_json_but_metadata_as_protobuf() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    s.apply_yaml(MY_CRONTAB);
    let crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    // Protobuf or anything: JSON.
    let (code, h, body) = s
        .http("GET", crontabs, &[("Accept", PB_ACCEPT)], None)
        .await;
    assert_eq!(code, 200);
    assert!(ctype(&h).starts_with("application/json"));
    assert!(serde_json::from_slice::<Value>(&body).is_ok());
    // Protobuf only: 406.
    let (code, _, body) = s.http("GET", crontabs, &[("Accept", PB)], None).await;
    assert_eq!(code, 406);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // client-go's metadata client.
    let meta = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let (code, h, body) = s.http("GET", crontabs, &[("Accept", meta)], None).await;
    assert_eq!(code, 200);
    assert_eq!(ctype(&h), PB);
    let (av, kind, raw) = unwrap(&body);
    assert_eq!(
        (av.as_str(), kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let list = PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    assert_eq!(list.items.len(), 1);
    let m = list.items[0].metadata.clone().unwrap();
    assert_eq!(m.name.as_deref(), Some("my-new-cron-object"));
    s.stop();
}

#[tokio::test]
async fn watch_streams_length_prefixed_watch_events() {
    let s = Server::start();
    s.kubectl_ok(&["create", "configmap", "w1", "--from-literal=a=b"]);
    let (code, h, body) = s
        .http(
            "GET",
            &format!(
                "{CMS}?watch=1&resourceVersion=0&timeoutSeconds=1\
                 &fieldSelector=metadata.name!=kube-root-ca.crt"
            ),
            &[("Accept", PB_ACCEPT)],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        ctype(&h),
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut rest: &[u8] = &body;
    let mut events = vec![];
    while !rest.is_empty() {
        let n = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let ev = WatchEvent::decode(&rest[4..4 + n]).unwrap();
        rest = &rest[4 + n..];
        let raw = ev.object.unwrap().raw.unwrap();
        let (_, kind, obj) = unwrap(&raw);
        assert_eq!(kind, "ConfigMap");
        let cm = ConfigMap::decode(obj.as_slice()).unwrap();
        events.push((ev.r#type.unwrap(), cm.metadata.unwrap().name.unwrap()));
    }
    assert_eq!(events, [("ADDED".to_string(), "w1".to_string())]);
    s.stop();
}

/// A custom resource's /scale is an autoscaling/v1 Scale, a message like any built-in kind's:
/// read and written as protobuf (as client-go's scale client may).
#[tokio::test]
async fn custom_resource_scale_speaks_protobuf() {
    use k8s_pb::api::autoscaling::v1::{Scale, ScaleSpec};
    use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    let s = Server::start();
    s.install_crd(
        &CRONTAB_CRD
            .replace(
                "      served: true",
                "      served: true\n      subresources:\n        scale:\n          specReplicasPath: .spec.replicas\n          statusReplicasPath: .status.replicas",
            )
            .replace(
                "            spec:\n              type: object",
                "            status:\n              type: object\n              properties:\n                replicas:\n                  type: integer\n            spec:\n              type: object",
            ),
    );
    s.apply_yaml(&MY_CRONTAB.replace("  image:", "  replicas: 2\n  image:"));
    let path = "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object/scale";
    let (code, h, body) = s.http("GET", path, &[("Accept", PB_ACCEPT)], None).await;
    assert_eq!(code, 200);
    assert_eq!(ctype(&h), PB);
    let (av, kind, raw) = unwrap(&body);
    assert_eq!((av.as_str(), kind.as_str()), ("autoscaling/v1", "Scale"));
    let scale = Scale::decode(raw.as_slice()).unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    let update = Scale {
        metadata: Some(ObjectMeta {
            name: Some("my-new-cron-object".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }),
        spec: Some(ScaleSpec { replicas: Some(4) }),
        ..Default::default()
    };
    let (code, h, body) = s
        .http(
            "PUT",
            path,
            &[("Content-Type", PB), ("Accept", PB_ACCEPT)],
            Some(pb_body("autoscaling/v1", "Scale", &update)),
        )
        .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(ctype(&h), PB);
    let scale = Scale::decode(unwrap(&body).2.as_slice()).unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(4));
    s.stop();
}
