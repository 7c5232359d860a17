//! The rbac.authorization.k8s.io group's built-in kinds (upstream pkg/registry/rbac/<kind>):
//! Role, ClusterRole, RoleBinding, ClusterRoleBinding. Their strategies are one
//! [`RbacStrategy`] per kind: v1 defaulting (`SetDefaults_*`) and `pkg/apis/rbac/validation`
//! from crest-rbac, no generation, no status, create on update and unconditional updates.
//!
//! Escalation prevention (upstream's `policybased` storage around these strategies) is the
//! strategy's [`Strategy::authorize_write`]: a client may write a Role or ClusterRole only
//! with rules it holds (or with `escalate`), and a binding only to a role whose rules it holds
//! (or with `bind` on it), judged by the RBAC index the store keeps.

pub(crate) mod clusterrole;
pub(crate) mod clusterrolebinding;
pub(crate) mod role;
pub(crate) mod rolebinding;

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{Strategy, WriteAuthz};
use crest_api::validation::NameValidator;
use crest_api::{ApiError, ApiResource, FieldErrors};
use crest_rbac::validation;
use crest_rbac::Kind;
use crest_table::{Printer, TableStyle};
use serde_json::Value;
use std::sync::Arc;

/// The group every RBAC kind is served in.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

/// The resource of one RBAC kind, stored under `prefix`.
fn def(
    kind: Kind,
    plural: &str,
    namespaced: bool,
    prefix: &str,
    printer: &'static Printer,
    typed: &'static str,
) -> ResourceDef {
    let api = ApiResource::builtin(GROUP, "v1", plural, kind.as_str(), namespaced);
    ResourceDef::builtin(
        api,
        prefix,
        Arc::new(RbacStrategy { kind }),
        TableStyle::Builtin(printer),
        typed,
    )
}

/// The strategy of one RBAC kind (upstream's `rbac/<kind>/strategy.go`, the same for all four
/// up to the kind's validation).
pub(crate) struct RbacStrategy {
    pub(crate) kind: Kind,
}

impl Strategy for RbacStrategy {
    fn authorize_write(
        &self,
        ctx: &WriteAuthz<'_>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let index = ctx.rbac.read();
        match self.kind {
            Kind::Role | Kind::ClusterRole => crest_rbac::check_role_write(
                &index,
                ctx.user,
                self.kind,
                ctx.namespace,
                ctx.request_name,
                new,
                old,
            ),
            Kind::RoleBinding | Kind::ClusterRoleBinding => crest_rbac::check_binding_write(
                &index,
                ctx.user,
                self.kind,
                ctx.namespace,
                new,
                old,
            ),
        }
    }
    /// `ValidateRBACName`: names only have to be path segments.
    fn name_validator(&self) -> NameValidator {
        validation::validate_rbac_name
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn allow_create_on_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    /// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding`, `SetDefaults_Subject`.
    fn defaults(&self, obj: &mut Value) {
        validation::set_defaults(self.kind, obj);
    }
    /// `Validate<Kind>`. Upstream's runs the ObjectMeta checks first, and the generic store
    /// runs them again only when the strategy found nothing; the pipeline has run them
    /// already (with the same name rule), so they are left out here to be reported once.
    fn validate_create(&self, obj: &Value, _warnings: &mut Vec<String>) -> FieldErrors {
        validation::validate(self.kind, obj, None)
            .into_iter()
            .filter(|e| !e.field.to_string().starts_with("metadata"))
            .collect()
    }
    /// `Validate<Kind>` then `Validate<Kind>Update` (the roleRef of a binding is immutable:
    /// `cannot change roleRef`). The pipeline has reported the ObjectMeta update rules once
    /// for the strategy already, so one copy of them is left out.
    fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        _warnings: &mut Vec<String>,
    ) -> FieldErrors {
        let mut errs = validation::validate(self.kind, new, Some(old));
        let empty = serde_json::Map::new();
        let meta = |o: &Value| -> serde_json::Map<String, Value> {
            o.get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_else(|| empty.clone())
        };
        let seen = crest_api::validation::validate_object_meta_update(
            &meta(new),
            &meta(old),
            &crest_api::FieldPath::new("metadata"),
        );
        for e in seen {
            if let Some(i) = errs.iter().rposition(|x| *x == e) {
                errs.remove(i);
            }
        }
        errs
    }
}
