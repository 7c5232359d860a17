//! kube-controller-manager's root CA publisher (pkg/controller/certificates/rootcacertpublisher):
//! every active namespace has a `kube-root-ca.crt` ConfigMap holding the CA bundle that
//! verifies this server (`ca.crt`), with the annotation describing its use; it is created again
//! when deleted and put back when its data or annotation is changed.

use super::managers::KUBE_CONTROLLER_MANAGER;
use crate::registry::{Registry, UpdateMode, WriteOptions};
use crest_api::{meta, ApiError};
use serde_json::{json, Value};

/// The ConfigMap's name in every namespace.
pub(crate) const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";
const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
     when using internal endpoints such as the internal service IP or kubernetes.default.svc. \
     No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Creates or corrects the `kube-root-ca.crt` ConfigMap of every namespace that is not
/// terminating. A namespace that starts terminating meanwhile (403), is gone (404) or a
/// concurrent write (409) is no error: the next pass sees it.
pub(crate) async fn publish(registry: &Registry, root_ca: &str) -> Result<(), ApiError> {
    let res = registry.resources();
    let Some(def) = res.lookup("", "v1", "configmaps") else {
        return Ok(());
    };
    let data = json!({"ca.crt": root_ca});
    for name in super::namespace::active_namespaces(registry)? {
        let name = name.as_str();
        let current = registry
            .reads()
            .get(&def.key(Some(name), ROOT_CA_CONFIG_MAP))
            .and_then(|o| o.value().ok());
        let result = match current {
            None => {
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": ROOT_CA_CONFIG_MAP, "namespace": name,
                                             "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                                "data": data});
                registry
                    .create(
                        &def,
                        Some(name),
                        cm,
                        &WriteOptions::by(KUBE_CONTROLLER_MANAGER),
                    )
                    .await
                    .map(|_| ())
            }
            Some(cm)
                if cm.get("data") == Some(&data)
                    && cm
                        .pointer("/metadata/annotations")
                        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
                        .and_then(Value::as_str)
                        .is_some_and(|d| !d.is_empty()) =>
            {
                Ok(())
            }
            Some(_) => {
                let data = data.clone();
                registry
                    .update_with(
                        &def,
                        Some(name),
                        ROOT_CA_CONFIG_MAP,
                        UpdateMode::Main,
                        KUBE_CONTROLLER_MANAGER,
                        move |v| {
                            if let Some(o) = v.as_object_mut() {
                                o.insert("data".into(), data.clone());
                            }
                            let mut annotations = v
                                .pointer("/metadata/annotations")
                                .cloned()
                                .filter(Value::is_object)
                                .unwrap_or_else(|| json!({}));
                            annotations[DESCRIPTION_ANNOTATION] = DESCRIPTION.into();
                            meta::set(v, "annotations", annotations);
                        },
                    )
                    .await
                    .map(|_| ())
            }
        };
        match result {
            Ok(()) => {}
            Err(e) if matches!(e.code, 403 | 404 | 409) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
