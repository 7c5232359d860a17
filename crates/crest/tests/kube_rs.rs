//! kube-rs against Crest: typed CRDs and namespaces, dynamic custom resources.

mod common;
use common::*;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::core::GroupVersionKind;
use serde_json::json;

#[tokio::test]
async fn kube_rs_crud() {
    let s = Server::start();
    let client = s.client().await;

    let ver = client.apiserver_version().await.expect("version");
    assert_eq!((ver.major.as_str(), ver.minor.as_str()), ("1", "32"));

    let nss: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = nss
        .list(&ListParams::default())
        .await
        .expect("list ns")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    for n in ["default", "kube-public", "kube-system"] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }

    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd");
    let created = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect("create crd");
    let status = created.status.expect("status");
    assert!(status
        .conditions
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Established" && c.status == "True"));

    // Discovery through kube-rs finds the new kind.
    let discovery = kube::discovery::Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    let (ar, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk(
            "stable.example.com",
            "v1",
            "CronTab",
        ))
        .expect("CronTab discovered");
    assert_eq!(ar.plural, "crontabs");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);

    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("stable.example.com", "v1", "CronTab"),
        "crontabs",
    );
    let cts: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"}
    }))
    .expect("object");
    let c = cts
        .create(&PostParams::default(), &obj)
        .await
        .expect("create ct");
    assert_eq!(c.metadata.generation, Some(1));
    let got = cts.get("my-new-cron-object").await.expect("get");
    assert_eq!(got.data["spec"]["image"], "my-awesome-cron-image");
    assert_eq!(got.metadata.resource_version, c.metadata.resource_version);

    let patched = cts
        .patch(
            "my-new-cron-object",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.data["spec"]["replicas"], 3);
    assert_eq!(patched.metadata.generation, Some(2));
    let rv1: u64 = c
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("rv");
    let rv2: u64 = patched
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("rv");
    assert!(rv2 > rv1);

    let all: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    assert_eq!(
        all.list(&ListParams::default())
            .await
            .expect("list all")
            .items
            .len(),
        1
    );

    // Update with a stale resourceVersion is a 409.
    let err = cts
        .replace("my-new-cron-object", &PostParams::default(), &c)
        .await
        .expect_err("stale");
    match err {
        kube::Error::Api(s) => assert_eq!(s.code, 409),
        other => panic!("{other:?}"),
    }
    cts.delete("my-new-cron-object", &DeleteParams::default())
        .await
        .expect("delete");
    let err = cts.get("my-new-cron-object").await.expect_err("gone");
    match err {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (404, "NotFound")),
        other => panic!("{other:?}"),
    }
}
