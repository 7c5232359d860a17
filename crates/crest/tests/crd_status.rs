//! The CustomResourceDefinition `/status` subresource: writes are validated by the CRD status
//! strategy (upstream `ValidateUpdateCustomResourceDefinitionStatus`), not by the main one.

mod common;
use common::*;
use serde_json::Value;

const CRD_PATH: &str =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com";

#[tokio::test]
async fn status_writes_validate_the_new_accepted_names() {
    let s = Server::start();
    let crd: Value = serde_yaml_ng::from_str(CRONTAB_CRD).expect("crd yaml");
    let (code, v) = s.post_crd(&crd).await;
    assert_eq!(code, 201, "{v}");

    let status = format!("{CRD_PATH}/status");
    let (code, mut current) = s.http_json("GET", CRD_PATH, "application/json", None).await;
    assert_eq!(code, 200, "{current}");
    current["status"]["acceptedNames"]["plural"] = "Bad_Plural".into();
    current["status"]["acceptedNames"]["listKind"] = "Cron Tab List".into();
    let (code, v) = s
        .http_json("PUT", &status, "application/json", Some(&current))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    let fields: Vec<&str> = v["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(
        fields,
        [
            "status.acceptedNames.plural",
            "status.acceptedNames.listKind"
        ],
        "{v}"
    );
    let message = v["message"].as_str().expect("message");
    assert!(
        message.starts_with(
            "CustomResourceDefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" is invalid: [status.acceptedNames.plural: Invalid value: \"Bad_Plural\": a DNS-1035 label must consist of lower case alphanumeric characters or '-'"
        ),
        "{message}"
    );

    // A valid status write goes through, and the spec it carries is ignored.
    let (_, mut current) = s.http_json("GET", CRD_PATH, "application/json", None).await;
    current["status"]["acceptedNames"]["shortNames"] = serde_json::json!(["ctn"]);
    current["spec"]["names"]["shortNames"] = serde_json::json!(["zzz"]);
    let (code, v) = s
        .http_json("PUT", &status, "application/json", Some(&current))
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["acceptedNames"]["shortNames"][0], "ctn", "{v}");
    assert_ne!(v["spec"]["names"]["shortNames"][0], "zzz", "{v}");
}
