//! Raw HTTP: Status errors, codes, reasons and content negotiation, as kube-apiserver answers.

mod common;
use common::*;
use serde_json::{json, Value};

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn crd() -> Value {
    serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd yaml")
}

fn crontab(name: &str) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": {"cronSpec": "* * * * */5", "image": "img"}})
}

fn assert_status(v: &Value, code: u16, reason: &str) {
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["apiVersion"], "v1", "{v}");
    assert_eq!(v["status"], "Failure", "{v}");
    assert_eq!(v["code"], code, "{v}");
    assert_eq!(v["reason"], reason, "{v}");
}

#[tokio::test]
async fn statuses_codes_and_negotiation() {
    let s = Server::start();
    let (code, v) = s.post_crd(&crd()).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["status"]["acceptedNames"]["kind"], "CronTab");
    let conds = v["status"]["conditions"].as_array().expect("conditions");
    for c in ["NamesAccepted", "Established"] {
        let cond = conds.iter().find(|x| x["type"] == c).expect(c);
        assert_eq!(cond["status"], "True");
        assert!(cond["lastTransitionTime"].as_str().is_some() && cond["reason"].as_str().is_some());
    }
    assert_eq!(v["status"]["storedVersions"], json!(["v1"]));

    // Created right after the CRD, with no wait.
    let (code, created) = s
        .http_json("POST", CT, "application/json", Some(&crontab("a")))
        .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    let (code, v) = s
        .http_json("POST", CT, "application/json", Some(&crontab("a")))
        .await;
    assert_status(&v, 409, "AlreadyExists");
    assert_eq!(code, 409);
    assert_eq!(
        v["message"],
        "crontabs.stable.example.com \"a\" already exists"
    );
    assert_eq!(
        v["details"],
        json!({"name": "a", "group": "stable.example.com", "kind": "crontabs"})
    );

    let (code, v) = s.http_json("GET", &format!("{CT}/missing"), "", None).await;
    assert_eq!(code, 404);
    assert_status(&v, 404, "NotFound");
    assert_eq!(
        v["message"],
        "crontabs.stable.example.com \"missing\" not found"
    );

    let (code, v) = s
        .http_json("GET", "/apis/nope.example.com/v1/things", "", None)
        .await;
    assert_eq!(code, 404);
    assert_status(&v, 404, "NotFound");
    assert_eq!(
        v["message"],
        "the server could not find the requested resource"
    );
    // Wrong scope is a 404 too.
    let (code, _) = s
        .http_json("GET", "/apis/stable.example.com/v1/crontabs/a", "", None)
        .await;
    assert_eq!(code, 404);

    // PUT without resourceVersion on a custom resource: 422.
    let mut upd = created.clone();
    upd["metadata"]
        .as_object_mut()
        .expect("meta")
        .remove("resourceVersion");
    upd["spec"]["image"] = json!("other");
    let (code, v) = s
        .http_json("PUT", &format!("{CT}/a"), "application/json", Some(&upd))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["message"], "crontabs.stable.example.com \"a\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update");
    // With the right one: generation 2; then the stale one: 409 Conflict.
    let (code, v2) = s
        .http_json(
            "PUT",
            &format!("{CT}/a"),
            "application/json",
            Some(&json!({
        "apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "a", "resourceVersion": created["metadata"]["resourceVersion"]},
        "spec": {"image": "new"}})),
        )
        .await;
    assert_eq!(code, 200, "{v2}");
    assert_eq!(v2["metadata"]["generation"], 2);
    assert_eq!(v2["metadata"]["uid"], created["metadata"]["uid"]);
    let (code, v) = s
        .http_json(
            "PUT",
            &format!("{CT}/a"),
            "application/json",
            Some(&created),
        )
        .await;
    assert_eq!(code, 409);
    assert_status(&v, 409, "Conflict");
    assert_eq!(v["message"], "Operation cannot be fulfilled on crontabs.stable.example.com \"a\": the object has been modified; please apply your changes to the latest version and try again");

    // Patches: merge and JSON patch work; strategic merge is 415 for custom resources.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CT}/a"),
            "application/merge-patch+json",
            Some(&json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["labels"]["x"], "y");
    assert_eq!(
        v["metadata"]["generation"], 2,
        "metadata-only change keeps generation"
    );
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CT}/a"),
            "application/json-patch+json",
            Some(&json!([{"op": "replace", "path": "/spec/image", "value": "jp"}])),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["image"], "jp");
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CT}/a"),
            "application/strategic-merge-patch+json",
            Some(&json!({"spec": {}})),
        )
        .await;
    assert_eq!(code, 415);
    assert_status(&v, 415, "UnsupportedMediaType");

    // Namespace mismatch, missing namespace, bad names, malformed bodies.
    let mut other = crontab("b");
    other["metadata"]["namespace"] = json!("kube-system");
    let (code, v) = s
        .http_json("POST", CT, "application/json", Some(&other))
        .await;
    assert_eq!(code, 400);
    assert_status(&v, 400, "BadRequest");
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/stable.example.com/v1/namespaces/nope/crontabs",
            "application/json",
            Some(&crontab("b")),
        )
        .await;
    assert_eq!(code, 404, "{v}");
    assert_eq!(v["message"], "namespaces \"nope\" not found");
    let (code, v) = s
        .http_json("POST", CT, "application/json", Some(&crontab("Bad_Name")))
        .await;
    assert_eq!(code, 422);
    assert_status(&v, 422, "Invalid");
    assert_eq!(v["details"]["causes"][0]["field"], "metadata.name");
    let (code, _, body) = s
        .http(
            "POST",
            CT,
            &[("Content-Type", "application/json")],
            Some(b"{not json".to_vec()),
        )
        .await;
    assert_eq!(code, 400);
    let v: Value = serde_json::from_slice(&body).expect("status json");
    assert_status(&v, 400, "BadRequest");
    let big = vec![b' '; 4 * 1024 * 1024];
    let (code, _, body) = s
        .http(
            "POST",
            CT,
            &[("Content-Type", "application/json")],
            Some(big),
        )
        .await;
    assert_eq!(code, 413);
    let v: Value = serde_json::from_slice(&body).expect("status json");
    assert_status(&v, 413, "RequestEntityTooLarge");

    // generateName.
    let mut g = crontab("");
    g["metadata"] = json!({"generateName": "gen-"});
    let (code, v) = s.http_json("POST", CT, "application/json", Some(&g)).await;
    assert_eq!(code, 201, "{v}");
    let name = v["metadata"]["name"].as_str().expect("name");
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Content negotiation.
    let (code, h, body) = s
        .http(
            "GET",
            &format!("{CT}/a"),
            &[("Accept", "application/yaml")],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(h["content-type"], "application/yaml");
    let y: Value = serde_yaml_ng::from_slice(&body).expect("yaml");
    assert_eq!(y["metadata"]["name"], "a");
    let (code, _, body) = s
        .http(
            "GET",
            &format!("{CT}/a"),
            &[("Accept", "application/vnd.kubernetes.protobuf")],
            None,
        )
        .await;
    assert_eq!(code, 406);
    let v: Value = serde_json::from_slice(&body).expect("status json");
    assert_status(&v, 406, "NotAcceptable");
    let (code, h, _) = s
        .http(
            "GET",
            &format!("{CT}/a"),
            &[(
                "Accept",
                "application/vnd.kubernetes.protobuf, application/json",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(h["content-type"], "application/json");
    let (_, _, body) = s
        .http("GET", &format!("{CT}/a?pretty=true"), &[], None)
        .await;
    assert!(String::from_utf8_lossy(&body).contains("\n  \"apiVersion\""));

    // List: kind, resourceVersion, order.
    let (code, list) = s.http_json("GET", CT, "", None).await;
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "CronTabList");
    assert_eq!(list["apiVersion"], "stable.example.com/v1");
    assert!(list["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|r| r.parse::<u64>().is_ok()));
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or(""))
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);

    // Table output (what kubectl get asks for).
    let (code, _, body) = s
        .http(
            "GET",
            CT,
            &[(
                "Accept",
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let t: Value = serde_json::from_slice(&body).expect("table");
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["columnDefinitions"][0]["name"], "Name");
    assert_eq!(t["columnDefinitions"][1]["name"], "Age");
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    // Discovery, legacy and aggregated.
    let (_, v) = s
        .http_json("GET", "/apis/stable.example.com/v1", "", None)
        .await;
    assert_eq!(v["kind"], "APIResourceList");
    assert_eq!(v["resources"][0]["name"], "crontabs");
    assert_eq!(v["resources"][0]["shortNames"], json!(["ct"]));
    let (code, h, body) = s.http("GET", "/apis", &[("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")], None).await;
    assert_eq!(code, 200);
    assert!(h["content-type"]
        .to_str()
        .unwrap_or("")
        .contains("as=APIGroupDiscoveryList"));
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["kind"], "APIGroupDiscoveryList");
    assert!(v["items"]
        .as_array()
        .expect("items")
        .iter()
        .any(|g| g["metadata"]["name"] == "stable.example.com"));
    let (_, v) = s.http_json("GET", "/version", "", None).await;
    assert_eq!(
        (v["major"].as_str(), v["minor"].as_str()),
        (Some("1"), Some("32"))
    );

    // Invalid CRD: 422 with field paths.
    let bad = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "wrong.example.com"},
        "spec": {"group": "example.com", "scope": "Sideways", "names": {"plural": "foos", "kind": "Foo"},
                 "versions": [{"name": "V1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    let (code, v) = s.post_crd(&bad).await;
    assert_eq!(code, 422, "{v}");
    assert_status(&v, 422, "Invalid");
    let fields: Vec<&str> = v["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    for f in [
        "metadata.name",
        "spec.scope",
        "spec.versions[0].name",
        "spec.versions",
    ] {
        assert!(fields.contains(&f), "{f} missing in {fields:?}");
    }
    assert!(v["message"].as_str().unwrap_or("").starts_with(
        "CustomResourceDefinition.apiextensions.k8s.io \"wrong.example.com\" is invalid: ["
    ));
}

#[tokio::test]
async fn namespace_deletion_removes_contents() {
    let s = Server::start();
    let (code, _) = s.post_crd(&crd()).await;
    assert_eq!(code, 201);
    let (code, ns) = s
        .http_json(
            "POST",
            "/api/v1/namespaces",
            "application/json",
            Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})),
        )
        .await;
    assert_eq!(code, 201, "{ns}");
    assert_eq!(ns["status"]["phase"], "Active");
    let path = "/apis/stable.example.com/v1/namespaces/team/crontabs";
    for i in 0..3 {
        let (code, _) = s
            .http_json(
                "POST",
                path,
                "application/json",
                Some(&crontab(&format!("c{i}"))),
            )
            .await;
        assert_eq!(code, 201);
    }
    let (code, v) = s
        .http_json("DELETE", "/api/v1/namespaces/team", "", None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["phase"], "Terminating");
    s.wait_gone("/api/v1/namespaces/team").await;
    let (_, list) = s.http_json("GET", path, "", None).await;
    assert_eq!(list["items"], json!([]));
    for ns in ["default", "kube-system", "kube-public"] {
        let (code, _) = s
            .http_json("GET", &format!("/api/v1/namespaces/{ns}"), "", None)
            .await;
        assert_eq!(code, 200, "{ns}");
    }
}
