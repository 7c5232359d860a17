//! rbac.authorization.k8s.io/v1 Role (upstream pkg/registry/rbac/role): its resource.

use super::def;
use crate::registry::resources::ResourceDef;
use crate::store::keys::ROLE_PREFIX;
use crest_rbac::Kind;

pub(crate) fn defs() -> Vec<ResourceDef> {
    vec![def(
        Kind::Role,
        "roles",
        true,
        ROLE_PREFIX,
        &crest_table::printers::ROLE,
        "io.k8s.api.rbac.v1.Role",
    )]
}
