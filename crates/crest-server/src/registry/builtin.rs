//! The built-in kinds Crest serves: where each kind module's resources are listed, and the
//! order of the built-in API groups. The registry hands [`builtins`] to the served set
//! (`resources.rs`) when it builds it.
//!
//! A kind is a module under its group's folder (`core/`, ...) that provides `defs()`, its
//! served resources through [`ResourceDef::builtin`]; adding a kind adds a line here and
//! nothing to the pipeline.

use super::coordination;
use super::core;
use super::discovery;
use super::rbac;
use super::resources::{BuiltinGroup, Builtins, ResourceDef};
use super::storagemigration;
use super::strategy::Strategy;
use crate::store::keys::{CRD_GROUP, CRD_PREFIX};
use crest_api::ApiResource;
use crest_table::TableStyle;
use std::sync::Arc;

/// What the served set holds whatever the CRDs: every built-in kind's resources, then
/// CustomResourceDefinitions' (with `crd_strategy`, which needs the server's state), and the
/// built-in groups.
pub(crate) fn builtins(crd_strategy: Arc<dyn Strategy>) -> Builtins {
    let mut defs: Vec<Arc<ResourceDef>> = defs().into_iter().map(Arc::new).collect();
    defs.push(Arc::new(ResourceDef::builtin(
        crd_resource(),
        CRD_PREFIX,
        crd_strategy,
        TableStyle::Default,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    )));
    let groups = GROUPS
        .iter()
        .map(|&(name, version)| BuiltinGroup {
            name,
            version,
            create_only: CREATE_ONLY
                .iter()
                .any(|c| c.group == name && c.version == version),
        })
        .collect();
    Builtins { defs, groups }
}

fn crd_resource() -> ApiResource {
    ApiResource::builtin(
        CRD_GROUP,
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
    )
    .with_short_names(&["crd", "crds"])
    .with_categories(&["api-extensions"])
    .with_subresources(&["status"])
}

/// Every built-in kind's served resources (CRDs excepted), in discovery order within each
/// group version (sorted by resource, as the installer).
fn defs() -> Vec<ResourceDef> {
    let mut defs = vec![];
    defs.extend(core::namespace::defs());
    defs.extend(core::configmap::defs());
    defs.extend(core::secret::defs());
    defs.extend(core::serviceaccount::defs());
    defs.extend(coordination::lease::defs());
    defs.extend(core::service::defs());
    defs.extend(core::endpoints::defs());
    defs.extend(discovery::endpointslice::defs());
    defs.extend(core::event::defs());
    defs.extend(storagemigration::storageversionmigration::defs());
    defs.extend(rbac::role::defs());
    defs.extend(rbac::clusterrole::defs());
    defs.extend(rbac::rolebinding::defs());
    defs.extend(rbac::clusterrolebinding::defs());
    defs.sort_by(|a, b| a.api.plural.cmp(&b.api.plural));
    defs
}

/// A create-only resource served outside the generic pipeline (`http` routes its POST to
/// `authn/` or `authz/`; nothing is stored), listed in discovery as kube-apiserver lists it.
pub(crate) struct CreateOnly {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
}

const fn create_only(
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
) -> CreateOnly {
    CreateOnly {
        group,
        version: "v1",
        plural,
        kind,
        namespaced,
    }
}

/// The create-only review resources, in discovery order.
pub(crate) const CREATE_ONLY: &[CreateOnly] = &[
    create_only(
        "authentication.k8s.io",
        "selfsubjectreviews",
        "SelfSubjectReview",
        false,
    ),
    create_only(
        "authentication.k8s.io",
        "tokenreviews",
        "TokenReview",
        false,
    ),
    create_only(
        "authorization.k8s.io",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        true,
    ),
    create_only(
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
    ),
    create_only(
        "authorization.k8s.io",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        false,
    ),
    create_only(
        "authorization.k8s.io",
        "subjectaccessreviews",
        "SubjectAccessReview",
        false,
    ),
];

/// Built-in API groups with their versions, in discovery order (kube-aggregator's group
/// priorities: the core group, events.k8s.io, authentication.k8s.io, authorization.k8s.io,
/// rbac.authorization.k8s.io, apiextensions.k8s.io,
/// coordination.k8s.io, discovery.k8s.io, storagemigration.k8s.io). A group is served when one of its kinds is.
const GROUPS: &[(&str, &str)] = &[
    ("", "v1"),
    ("events.k8s.io", "v1"),
    ("authentication.k8s.io", "v1"),
    ("authorization.k8s.io", "v1"),
    ("rbac.authorization.k8s.io", "v1"),
    ("apiextensions.k8s.io", "v1"),
    ("coordination.k8s.io", "v1"),
    ("discovery.k8s.io", "v1"),
    ("storagemigration.k8s.io", "v1alpha1"),
];
