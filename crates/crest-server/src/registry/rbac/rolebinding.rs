//! rbac.authorization.k8s.io/v1 RoleBinding (upstream pkg/registry/rbac/rolebinding): its
//! resource.

use super::def;
use crate::registry::resources::ResourceDef;
use crate::store::keys::ROLE_BINDING_PREFIX;
use crest_rbac::Kind;

pub(crate) fn defs() -> Vec<ResourceDef> {
    vec![def(
        Kind::RoleBinding,
        "rolebindings",
        true,
        ROLE_BINDING_PREFIX,
        &crest_table::printers::ROLE_BINDING,
        "io.k8s.api.rbac.v1.RoleBinding",
    )]
}
