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

/// kube-rs's recommended write, `Patch::Apply`: a CRD installed by server-side apply, then a
/// controller applying status through /status while a user applies spec, each owning its
/// part; the controller's stale spec apply conflicts until forced.
#[tokio::test]
async fn kube_rs_server_side_apply_controller() {
    let s = Server::start();
    let client = s.client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: serde_json::Value = serde_yaml_ng::from_str(
        &CRONTAB_CRD
            .replace(
                "      served: true",
                "      served: true\n      subresources:\n        status: {}",
            )
            .replace(
                "            spec:\n              type: object",
                "            status:\n              type: object\n              x-kubernetes-preserve-unknown-fields: true\n            spec:\n              type: object",
            ),
    )
    .expect("crd");
    crds.patch(
        "crontabs.stable.example.com",
        &PatchParams::apply("installer"),
        &Patch::Apply(&crd),
    )
    .await
    .expect("apply crd");
    s.wait_established("crontabs.stable.example.com");

    let gvk = GroupVersionKind::gvk("stable.example.com", "v1", "CronTab");
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), "default", &ApiResource::from_gvk(&gvk));
    let user = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                      "metadata": {"name": "ssa"}, "spec": {"image": "v1", "replicas": 1}});
    api.patch("ssa", &PatchParams::apply("user"), &Patch::Apply(&user))
        .await
        .expect("user apply");
    let status = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                        "metadata": {"name": "ssa"}, "status": {"ready": true}});
    let got = api
        .patch_status(
            "ssa",
            &PatchParams::apply("controller"),
            &Patch::Apply(&status),
        )
        .await
        .expect("controller status apply");
    assert_eq!(got.data["status"]["ready"], true);
    assert_eq!(got.data["spec"]["image"], "v1");
    // The user's next apply keeps the controller's status.
    let user2 = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                       "metadata": {"name": "ssa"}, "spec": {"image": "v2", "replicas": 1}});
    let got = api
        .patch("ssa", &PatchParams::apply("user"), &Patch::Apply(&user2))
        .await
        .expect("user apply 2");
    assert_eq!(got.data["spec"]["image"], "v2");
    assert_eq!(got.data["status"]["ready"], true);
    let managers: Vec<(String, String)> = got
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            (
                m.manager.unwrap_or_default(),
                m.subresource.unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        managers.contains(&("user".into(), "".into())),
        "{managers:?}"
    );
    assert!(
        managers.contains(&("controller".into(), "status".into())),
        "{managers:?}"
    );
    // The controller setting the user's field conflicts, until it forces.
    let takeover = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                          "metadata": {"name": "ssa"}, "spec": {"image": "mine"}});
    let err = api
        .patch(
            "ssa",
            &PatchParams::apply("controller"),
            &Patch::Apply(&takeover),
        )
        .await
        .expect_err("conflict");
    match err {
        kube::Error::Api(e) => {
            assert_eq!(e.code, 409);
            assert_eq!(
                e.message,
                r#"Apply failed with 1 conflict: conflict with "user": .spec.image"#
            );
        }
        other => panic!("{other:?}"),
    }
    let got = api
        .patch(
            "ssa",
            &PatchParams::apply("controller").force(),
            &Patch::Apply(&takeover),
        )
        .await
        .expect("forced");
    assert_eq!(got.data["spec"]["image"], "mine");
    s.stop();
}
