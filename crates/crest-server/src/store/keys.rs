//! The storage key layout, written here and nowhere else:
//!
//! - `/registry/namespaces/<name>`
//! - `/registry/configmaps/<namespace>/<name>`, and the other built-in kinds as upstream lays
//!   them out (`/registry/secrets/...`, `/registry/services/specs/...`, ...)
//! - `/registry/apiextensions.k8s.io/customresourcedefinitions/<name>`
//! - `/registry/<group>/<plural>/[<namespace>/]<name>` for custom resources
//!
//! Every key of a resource starts with its prefix (ending with `/`); a namespaced resource's keys
//! continue with the namespace, so one namespace's objects are one range.

/// Every object Crest stores is under this prefix.
pub(crate) const REGISTRY_PREFIX: &str = "/registry/";
/// The group of CustomResourceDefinitions.
pub(crate) const CRD_GROUP: &str = "apiextensions.k8s.io";
/// Where CustomResourceDefinitions are stored.
pub(crate) const CRD_PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";
/// Where namespaces are stored.
pub(crate) const NAMESPACE_PREFIX: &str = "/registry/namespaces/";
/// Where ConfigMaps are stored (`<prefix><namespace>/<name>`).
pub(crate) const CONFIGMAP_PREFIX: &str = "/registry/configmaps/";
/// Where Secrets are stored.
pub(crate) const SECRET_PREFIX: &str = "/registry/secrets/";
/// Where ServiceAccounts are stored.
pub(crate) const SERVICEACCOUNT_PREFIX: &str = "/registry/serviceaccounts/";
/// Where Events (core/v1 and events.k8s.io/v1 alike) are stored.
pub(crate) const EVENT_PREFIX: &str = "/registry/events/";
/// Where Services are stored.
pub(crate) const SERVICE_PREFIX: &str = "/registry/services/specs/";
/// Where Endpoints are stored.
pub(crate) const ENDPOINTS_PREFIX: &str = "/registry/services/endpoints/";
/// Where EndpointSlices are stored.
pub(crate) const ENDPOINTSLICE_PREFIX: &str = "/registry/endpointslices/";
/// Where StorageVersionMigrations are stored.
pub(crate) const STORAGEVERSIONMIGRATION_PREFIX: &str = "/registry/storageversionmigrations/";
/// Where Leases are stored.
pub(crate) const LEASE_PREFIX: &str = "/registry/leases/";
/// rbac.authorization.k8s.io/v1 Roles, by namespace (upstream's key layout).
pub(crate) const ROLE_PREFIX: &str = "/registry/roles/";
/// ClusterRoles (cluster-scoped).
pub(crate) const CLUSTER_ROLE_PREFIX: &str = "/registry/clusterroles/";
/// RoleBindings, by namespace.
pub(crate) const ROLE_BINDING_PREFIX: &str = "/registry/rolebindings/";
/// ClusterRoleBindings (cluster-scoped).
pub(crate) const CLUSTER_ROLE_BINDING_PREFIX: &str = "/registry/clusterrolebindings/";

/// The key prefix of a custom resource (a group and a CRD's plural).
pub(crate) fn resource_prefix(group: &str, plural: &str) -> String {
    format!("{REGISTRY_PREFIX}{group}/{plural}/")
}

/// The resource prefix a key is under (`/registry/<group>/<plural>/`), for keys of custom
/// resources; `None` for a key outside the layout.
pub(crate) fn prefix_of(key: &str) -> Option<String> {
    let rest = key.strip_prefix(REGISTRY_PREFIX)?;
    let mut parts = rest.splitn(3, '/');
    let (group, plural) = (parts.next()?, parts.next()?);
    Some(resource_prefix(group, plural))
}

/// An object's key under its resource's prefix.
pub(crate) fn object_key(prefix: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{prefix}{ns}/{name}"),
        None => format!("{prefix}{name}"),
    }
}

/// The prefix of a list: one namespace's objects, or all of the resource's.
pub(crate) fn list_prefix(prefix: &str, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("{prefix}{ns}/"),
        None => prefix.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let p = resource_prefix("stable.example.com", "crontabs");
        assert_eq!(p, "/registry/stable.example.com/crontabs/");
        assert_eq!(
            object_key(&p, Some("default"), "x"),
            "/registry/stable.example.com/crontabs/default/x"
        );
        assert_eq!(
            object_key(NAMESPACE_PREFIX, None, "a"),
            "/registry/namespaces/a"
        );
        assert_eq!(list_prefix(&p, Some("ns")), format!("{p}ns/"));
        assert_eq!(
            prefix_of("/registry/stable.example.com/crontabs/default/x").as_deref(),
            Some(p.as_str())
        );
        assert_eq!(prefix_of("/other/x"), None);
        assert_eq!(
            CRD_PREFIX,
            resource_prefix(CRD_GROUP, "customresourcedefinitions")
        );
    }
}
