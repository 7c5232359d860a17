//! v1 defaulting, as kube-apiserver applies it when decoding a CustomResourceDefinition
//! (`SetObjectDefaults_CustomResourceDefinition` in apiextensions/v1).

use serde_json::{json, Map, Value};

/// Applies upstream's v1 defaults in place:
/// - `spec.names.singular` = lowercase `kind`, when empty;
/// - `spec.names.listKind` = `kind + "List"`, when empty and `kind` is set;
/// - `spec.conversion` = `{strategy: None}`, when absent;
/// - `spec.conversion.webhook.clientConfig.service.port` = 443, when absent;
/// - `status.storedVersions` = `[<storage version>]`, when empty (only if a status is present:
///   create and update replace the status anyway).
///
/// Also writes `served`/`storage: false` where a version omits them: Go decodes them into plain
/// bools and always serializes them, so kube-apiserver returns them.
pub fn set_defaults(obj: &mut Value) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let mut storage_version = None;
    if let Some(spec) = root.get_mut("spec").and_then(Value::as_object_mut) {
        default_names(spec);
        default_conversion(spec);
        if let Some(versions) = spec.get_mut("versions").and_then(Value::as_array_mut) {
            for v in versions.iter_mut().filter_map(Value::as_object_mut) {
                for flag in ["served", "storage"] {
                    if v.get(flag).is_none_or(Value::is_null) {
                        v.insert(flag.into(), Value::Bool(false));
                    }
                }
                if storage_version.is_none() && v.get("storage") == Some(&Value::Bool(true)) {
                    storage_version = v.get("name").and_then(Value::as_str).map(str::to_string);
                }
            }
        }
    }
    if let (Some(status), Some(storage)) = (
        root.get_mut("status").and_then(Value::as_object_mut),
        storage_version,
    ) {
        let empty = status
            .get("storedVersions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if empty {
            status.insert("storedVersions".into(), json!([storage]));
        }
    }
}

pub(crate) fn str_field<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or("")
}

fn default_names(spec: &mut Map<String, Value>) {
    let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) else {
        return;
    };
    let kind = str_field(names, "kind").to_string();
    if kind.is_empty() {
        // Upstream would set singular to "" (omitted on output): nothing to write.
        return;
    }
    if str_field(names, "singular").is_empty() {
        names.insert("singular".into(), Value::String(kind.to_lowercase()));
    }
    if str_field(names, "listKind").is_empty() {
        names.insert("listKind".into(), Value::String(format!("{kind}List")));
    }
}

fn default_conversion(spec: &mut Map<String, Value>) {
    if spec.get("conversion").is_none_or(Value::is_null) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
        return;
    }
    let service = spec
        .get_mut("conversion")
        .and_then(|c| c.get_mut("webhook"))
        .and_then(|w| w.get_mut("clientConfig"))
        .and_then(|c| c.get_mut("service"))
        .and_then(Value::as_object_mut);
    if let Some(service) = service {
        if service.get("port").is_none_or(Value::is_null) {
            service.insert("port".into(), json!(443));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_names_and_conversion() {
        let mut crd = json!({"spec": {"names": {"plural": "crontabs", "kind": "CronTab"}, "versions": [{"name": "v1", "storage": true}]}});
        set_defaults(&mut crd);
        assert_eq!(crd["spec"]["names"]["singular"], "crontab");
        assert_eq!(crd["spec"]["names"]["listKind"], "CronTabList");
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        assert_eq!(crd["spec"]["versions"][0]["served"], false);
        assert_eq!(crd["spec"]["versions"][0]["storage"], true);
        assert!(crd.get("status").is_none());
    }

    #[test]
    fn keeps_what_the_user_set() {
        let mut crd = json!({"spec": {
            "names": {"plural": "crontabs", "singular": "ct1", "kind": "CronTab", "listKind": "Tabs"},
            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}, "conversionReviewVersions": ["v1"]}}
        }});
        let before = crd.clone();
        set_defaults(&mut crd);
        assert_eq!(crd["spec"]["names"], before["spec"]["names"]);
        assert_eq!(crd["spec"]["conversion"]["strategy"], "Webhook");
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"],
            443
        );
    }

    #[test]
    fn no_kind_no_names_defaults() {
        let mut crd = json!({"spec": {"names": {"plural": "x"}}});
        set_defaults(&mut crd);
        assert_eq!(crd["spec"]["names"], json!({"plural": "x"}));
    }

    #[test]
    fn stored_versions_default_from_storage_version() {
        let mut crd = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": false}, {"name": "v2", "served": true, "storage": true}]}, "status": {}});
        set_defaults(&mut crd);
        assert_eq!(crd["status"]["storedVersions"], json!(["v2"]));
        let mut crd = json!({"spec": {"versions": [{"name": "v2", "storage": true}]}, "status": {"storedVersions": ["v1"]}});
        set_defaults(&mut crd);
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    }
}
