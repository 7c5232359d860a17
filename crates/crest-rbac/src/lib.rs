//! RBAC for Crest: the pure core of `rbac.authorization.k8s.io/v1` authorization, with
//! Kubernetes 1.32's semantics and wording. No I/O: the server feeds it Roles, ClusterRoles,
//! RoleBindings and ClusterRoleBindings as `serde_json::Value` objects and asks it questions.
//!
//! - [`authorizer`]: [`Attributes`], [`Decision`] and the [`RbacIndex`] (plugin/pkg/auth/
//!   authorizer/rbac and the rule resolver of pkg/registry/rbac/validation), plus
//!   [`RbacIndex::rules_review`] for SelfSubjectRulesReview.
//! - [`rule`]: [`PolicyRule`] and its matching (pkg/apis/rbac/v1 evaluation helpers).
//! - [`forbidden`]: the 403 (`responsewriters.Forbidden`, `errors.NewForbidden`).
//! - [`escalation`]: escalation prevention on RBAC writes (pkg/registry/rbac).
//! - [`aggregation`]: ClusterRole aggregation (pkg/controller/clusterroleaggregation).
//! - [`bootstrap`]: the default ClusterRoles and ClusterRoleBindings
//!   (plugin/pkg/auth/authorizer/rbac/bootstrappolicy).
//! - [`reconcile`]: startup reconciliation of the bootstrap policy
//!   (pkg/registry/rbac/reconciliation).
//! - [`validation`]: validation of the four kinds (pkg/apis/rbac/validation).
//! - [`review`]: helpers for the SelfSubjectAccessReview, SubjectAccessReview and
//!   SelfSubjectRulesReview endpoints (pkg/registry/authorization).
//!
//! # Integration
//!
//! ```
//! use crest_api::UserInfo;
//! use crest_rbac::{Attributes, Decision, Kind, RbacIndex};
//! use serde_json::json;
//!
//! // At startup: the stored RBAC objects (the bootstrap policy created first if missing).
//! let mut objects = crest_rbac::bootstrap_cluster_roles();
//! objects.extend(crest_rbac::bootstrap_cluster_role_bindings());
//! let mut index = RbacIndex::from_objects(&objects);
//!
//! // On every watch event of the four kinds.
//! index.upsert(Kind::RoleBinding, &json!({
//!     "kind": "RoleBinding",
//!     "metadata": {"name": "alice-view", "namespace": "default"},
//!     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
//!     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
//! }));
//!
//! // Per request.
//! let alice = UserInfo { name: "alice".into(), groups: vec!["system:authenticated".into()], ..Default::default() };
//! let get = Attributes::resource(&alice, "get", "default", "", "v1", "pods", "", "web");
//! assert_eq!(index.authorize_fast(&get).0, Decision::Allow);
//! let delete = Attributes::resource(&alice, "delete", "default", "", "v1", "pods", "", "web");
//! let (decision, reason) = index.authorize(&delete);
//! assert_eq!(decision, Decision::NoOpinion);
//! let err = crest_rbac::forbidden_error(&delete, &reason);
//! assert_eq!(err.message, "pods \"web\" is forbidden: User \"alice\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\"");
//! ```

mod aggregation;
mod authorizer;
mod bootstrap;
mod escalation;
mod forbidden;
pub mod reconcile;
pub mod review;
mod rule;
pub mod validation;

pub use aggregation::aggregate;
pub use authorizer::{Attributes, Decision, Kind, NotFoundWording, RbacIndex, RulesReview};
pub use bootstrap::{
    bootstrap_cluster_role_bindings, bootstrap_cluster_roles, bootstrap_role_bindings,
    bootstrap_roles,
};
pub use escalation::{
    bind_attributes, check_binding_write, check_role_write, confirm_no_escalation,
    escalate_attributes,
};
pub use forbidden::{forbidden_error, forbidden_message};
pub use rule::{PolicyRule, RoleRef, Subject};

#[cfg(test)]
mod tests;
