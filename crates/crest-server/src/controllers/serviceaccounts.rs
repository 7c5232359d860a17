//! The service accounts controller (kube-controller-manager's `serviceaccount-controller`):
//! every active namespace has a `default` ServiceAccount, created again when deleted. Tokens
//! are not issued.

use crate::controllers::managers::KUBE_CONTROLLER_MANAGER;
use crate::registry::{Registry, WriteOptions};
use serde_json::json;

/// The ServiceAccount each namespace gets.
const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// Creates the `default` ServiceAccount of every namespace that is not terminating and lacks
/// one. A namespace that starts terminating meanwhile (403) or a concurrent create (409) is no
/// error.
pub(crate) async fn ensure_default_service_accounts(
    registry: &Registry,
) -> Result<(), crest_api::ApiError> {
    let res = registry.resources();
    let Some(def) = res.lookup("", "v1", "serviceaccounts") else {
        return Ok(());
    };
    for name in super::namespace::active_namespaces(registry)? {
        let name = name.as_str();
        if registry
            .reads()
            .get(&def.key(Some(name), DEFAULT_SERVICE_ACCOUNT))
            .is_some()
        {
            continue;
        }
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": name}});
        match registry
            .create(
                &def,
                Some(name),
                sa,
                &WriteOptions::by(KUBE_CONTROLLER_MANAGER),
            )
            .await
        {
            Ok(_) => {}
            Err(e) if matches!(e.code, 403 | 404 | 409) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
