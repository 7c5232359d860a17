//! rbac.authorization.k8s.io/v1 ClusterRole (upstream pkg/registry/rbac/clusterrole): its
//! resource. The rules of one with an aggregationRule are kept by
//! `controllers::clusterroleaggregation`.

use super::def;
use crate::registry::resources::ResourceDef;
use crate::store::keys::CLUSTER_ROLE_PREFIX;
use crest_rbac::Kind;

pub(crate) fn defs() -> Vec<ResourceDef> {
    vec![def(
        Kind::ClusterRole,
        "clusterroles",
        false,
        CLUSTER_ROLE_PREFIX,
        &crest_table::printers::CLUSTER_ROLE,
        "io.k8s.api.rbac.v1.ClusterRole",
    )]
}
