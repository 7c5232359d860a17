//! rbac.authorization.k8s.io/v1 ClusterRoleBinding (upstream
//! pkg/registry/rbac/clusterrolebinding): its resource.

use super::def;
use crate::registry::resources::ResourceDef;
use crate::store::keys::CLUSTER_ROLE_BINDING_PREFIX;
use crest_rbac::Kind;

pub(crate) fn defs() -> Vec<ResourceDef> {
    vec![def(
        Kind::ClusterRoleBinding,
        "clusterrolebindings",
        false,
        CLUSTER_ROLE_BINDING_PREFIX,
        &crest_table::printers::CLUSTER_ROLE_BINDING,
        "io.k8s.api.rbac.v1.ClusterRoleBinding",
    )]
}
