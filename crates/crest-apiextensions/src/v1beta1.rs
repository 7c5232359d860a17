//! Reading a CustomResourceDefinition stored as `apiextensions.k8s.io/v1beta1`.
//!
//! kube-apiserver wrote CRDs to etcd as v1beta1 up to Kubernetes 1.21 (kubernetes#102855), and a
//! CRD nobody has written since is still stored that way. kube-apiserver reads such an object by
//! decoding it as v1beta1 with v1beta1's defaults (`SetDefaults_CustomResourceDefinition`),
//! converting it to the internal type, and serving it as v1. [`upgrade_stored`] does the same to
//! the JSON: v1beta1's defaults, then the moves its v1 conversion makes
//! (`Convert_apiextensions_CustomResourceDefinitionSpec_To_v1_...`), then v1's defaults.

use crate::defaults::str_field;
use serde_json::{json, Map, Value};

/// The apiVersion kube-apiserver stored CRDs with before 1.22.
const API_VERSION: &str = "apiextensions.k8s.io/v1beta1";

/// Rewrites a stored v1beta1 CRD as the v1 object kube-apiserver serves for it; returns whether
/// it was one (anything else is left alone).
pub fn upgrade_stored(obj: &mut Value) -> bool {
    if obj.get("apiVersion").and_then(Value::as_str) != Some(API_VERSION) {
        return false;
    }
    let Some(root) = obj.as_object_mut() else {
        return false;
    };
    root.insert("apiVersion".into(), json!("apiextensions.k8s.io/v1"));
    if let Some(spec) = root.get_mut("spec").and_then(Value::as_object_mut) {
        v1beta1_defaults(spec);
        to_v1(spec);
    }
    crate::set_defaults(obj);
    true
}

/// v1beta1's `SetDefaults_CustomResourceDefinitionSpec`, where it differs from v1's (names,
/// conversion strategy and service port are defaulted the same way by [`crate::set_defaults`]).
fn v1beta1_defaults(spec: &mut Map<String, Value>) {
    if str_field(spec, "scope").is_empty() {
        spec.insert("scope".into(), json!("Namespaced"));
    }
    let no_versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let version = str_field(spec, "version").to_string();
    if no_versions && !version.is_empty() {
        spec.insert(
            "versions".into(),
            json!([{"name": version, "served": true, "storage": true}]),
        );
    }
    if let Some(conversion) = spec.get_mut("conversion").and_then(Value::as_object_mut) {
        let no_review_versions = conversion
            .get("conversionReviewVersions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if conversion.get("strategy").and_then(Value::as_str) == Some("Webhook")
            && no_review_versions
        {
            conversion.insert("conversionReviewVersions".into(), json!(["v1beta1"]));
        }
    }
    if spec.get("preserveUnknownFields").is_none_or(Value::is_null) {
        spec.insert("preserveUnknownFields".into(), json!(true));
    }
}

/// The v1 shape: the spec-wide `validation`, `subresources`, `additionalPrinterColumns` and
/// `selectableFields` copied into every version; printer columns' `JSONPath` named `jsonPath`;
/// the webhook's `webhookClientConfig` and `conversionReviewVersions` under
/// `conversion.webhook`; the deprecated `version` dropped, and `preserveUnknownFields: false`
/// omitted as v1's plain bool is.
fn to_v1(spec: &mut Map<String, Value>) {
    spec.remove("version");
    let mut spec_wide = vec![];
    for (from, to) in [
        ("validation", "schema"),
        ("subresources", "subresources"),
        ("additionalPrinterColumns", "additionalPrinterColumns"),
        ("selectableFields", "selectableFields"),
    ] {
        if let Some(value) = spec.remove(from).filter(|v| !v.is_null()) {
            spec_wide.push((to, value));
        }
    }
    if let Some(versions) = spec.get_mut("versions").and_then(Value::as_array_mut) {
        for version in versions.iter_mut().filter_map(Value::as_object_mut) {
            for (to, value) in &spec_wide {
                version.insert((*to).into(), value.clone());
            }
            if let Some(columns) = version
                .get_mut("additionalPrinterColumns")
                .and_then(Value::as_array_mut)
            {
                for column in columns.iter_mut().filter_map(Value::as_object_mut) {
                    if let Some(path) = column.remove("JSONPath") {
                        column.insert("jsonPath".into(), path);
                    }
                }
            }
        }
    }
    if let Some(conversion) = spec.get_mut("conversion").and_then(Value::as_object_mut) {
        let client_config = conversion.remove("webhookClientConfig");
        let review_versions = conversion.remove("conversionReviewVersions");
        if client_config.is_some() || review_versions.is_some() {
            let mut webhook = Map::new();
            if let Some(c) = client_config.filter(|c| !c.is_null()) {
                webhook.insert("clientConfig".into(), c);
            }
            if let Some(r) = review_versions.filter(|r| !r.is_null()) {
                webhook.insert("conversionReviewVersions".into(), r);
            }
            conversion.insert("webhook".into(), Value::Object(webhook));
        }
    }
    if spec.get("preserveUnknownFields") == Some(&Value::Bool(false)) {
        spec.remove("preserveUnknownFields");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CRD as kube-apiserver 1.20 stored it after `kubectl apply` of a v1beta1 manifest that
    /// set only `version`, a spec-wide schema, subresources and a printer column.
    fn stored() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1beta1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com", "uid": "u1"},
            "spec": {
                "group": "stable.example.com",
                "version": "v1",
                "names": {"plural": "crontabs", "kind": "CronTab"},
                "validation": {"openAPIV3Schema": {"type": "object"}},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Spec", "type": "string", "JSONPath": ".spec.cronSpec"}
                ]
            },
            "status": {"acceptedNames": {"plural": "crontabs", "kind": "CronTab"}}
        })
    }

    #[test]
    fn a_legacy_crd_reads_as_v1() {
        let mut crd = stored();
        assert!(upgrade_stored(&mut crd));
        assert_eq!(
            crd,
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "crontabs.stable.example.com", "uid": "u1"},
                "spec": {
                    "group": "stable.example.com",
                    "scope": "Namespaced",
                    "names": {
                        "plural": "crontabs", "kind": "CronTab",
                        "singular": "crontab", "listKind": "CronTabList"
                    },
                    "versions": [{
                        "name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object"}},
                        "subresources": {"status": {}},
                        "additionalPrinterColumns": [
                            {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"}
                        ]
                    }],
                    "conversion": {"strategy": "None"},
                    "preserveUnknownFields": true
                },
                "status": {
                    "acceptedNames": {"plural": "crontabs", "kind": "CronTab"},
                    "storedVersions": ["v1"]
                }
            })
        );
    }

    #[test]
    fn versions_webhook_and_pruning_carry_over() {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1beta1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Cluster",
                "version": "v1beta1",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false,
                     "additionalPrinterColumns": [{"name": "A", "type": "integer", "JSONPath": ".a"}]},
                    {"name": "v1", "served": true, "storage": true}
                ],
                "preserveUnknownFields": false,
                "conversion": {
                    "strategy": "Webhook",
                    "webhookClientConfig": {"service": {"namespace": "ns", "name": "conv"}}
                }
            }
        });
        assert!(upgrade_stored(&mut crd));
        let spec = &crd["spec"];
        assert_eq!(spec.get("version"), None);
        assert_eq!(spec.get("preserveUnknownFields"), None);
        assert_eq!(spec["scope"], "Cluster");
        assert_eq!(
            spec["versions"][0]["additionalPrinterColumns"],
            json!([{"name": "A", "type": "integer", "jsonPath": ".a"}])
        );
        assert_eq!(spec["versions"][1].get("additionalPrinterColumns"), None);
        assert_eq!(
            spec["conversion"],
            json!({
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {"service": {"namespace": "ns", "name": "conv", "port": 443}},
                    "conversionReviewVersions": ["v1beta1"]
                }
            })
        );
    }

    #[test]
    fn other_objects_are_left_alone() {
        let mut crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"version": "x"}});
        let before = crd.clone();
        assert!(!upgrade_stored(&mut crd));
        assert_eq!(crd, before);
    }
}
