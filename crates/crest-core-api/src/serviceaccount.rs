//! core/v1 ServiceAccount: `ValidateServiceAccount` is ObjectMeta alone (the registry's); what
//! is the kind's own is the strategy's `cleanSecretReferences` and its deprecation warning.

use serde_json::{Map, Value};

/// `EnforceMountableSecretsAnnotation`, deprecated in 1.32.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// `cleanSecretReferences`: each `secrets` reference keeps its name only.
pub fn clean_secret_references(obj: &mut Value) {
    let Some(secrets) = obj.get_mut("secrets").and_then(Value::as_array_mut) else {
        return;
    };
    for s in secrets.iter_mut() {
        let mut clean = Map::new();
        // ObjectReference's name is `omitempty`.
        if let Some(name) = s
            .get("name")
            .filter(|n| n.as_str().is_some_and(|n| !n.is_empty()))
        {
            clean.insert("name".into(), name.clone());
        }
        *s = Value::Object(clean);
    }
}

fn has_enforce_annotation(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(ENFORCE_MOUNTABLE_SECRETS))
}

/// `warnIfHasEnforceMountableSecretsAnnotation`: a warning when the write newly sets the
/// deprecated annotation (on create, when it is set at all).
pub fn warnings(new: &Value, old: Option<&Value>) -> Vec<String> {
    if old.is_some_and(has_enforce_annotation) || !has_enforce_annotation(new) {
        return vec![];
    }
    vec![format!(
        "metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_references_keep_their_names() {
        let mut sa =
            json!({"secrets": [{"name": "a", "namespace": "x", "uid": "u"}, {"kind": "Secret"}]});
        clean_secret_references(&mut sa);
        assert_eq!(sa, json!({"secrets": [{"name": "a"}, {}]}));
    }

    #[test]
    fn deprecated_annotation_warns_when_newly_set() {
        let with = json!({"metadata": {"annotations": {ENFORCE_MOUNTABLE_SECRETS: "true"}}});
        let without = json!({"metadata": {}});
        let w = "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets";
        assert_eq!(warnings(&with, None), [w]);
        assert_eq!(warnings(&with, Some(&without)), [w]);
        assert!(warnings(&with, Some(&with)).is_empty());
        assert!(warnings(&without, None).is_empty());
    }
}
