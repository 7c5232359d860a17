//! The bootstrap RBAC policy, as kube-apiserver's `rbac/bootstrap-roles` post-start hook
//! (pkg/registry/rbac/rest/storage_rbac.go): at every start the default ClusterRoles,
//! ClusterRoleBindings, and the Roles and RoleBindings of kube-system and kube-public are
//! reconciled with what is stored (`crest_rbac::reconcile`: missing objects created, missing
//! rules, subjects, labels and annotations added, objects annotated
//! `rbac.authorization.kubernetes.io/autoupdate: "false"` left alone).
//!
//! The writes of all four kinds are issued together with the creates of the default namespaces
//! and sent to the store as one batch (`Registry::batched`), which the embedded store commits
//! with one sync: a first start stays within milliseconds, a restart with nothing to change
//! writes nothing.

use crate::controllers::managers::KUBE_APISERVER;
use crate::registry::resources::ResourceDef;
use crate::registry::{Preconditions, Registry, UpdateMode, WriteOptions};
use crest_api::{meta, ApiError};
use crest_rbac::reconcile::{reconcile_binding, reconcile_role, Reconcile};
use serde_json::Value;

const GROUP: &str = "rbac.authorization.k8s.io";

/// A bootstrap kind: its resource, its expected objects, and whether it is a binding.
type BootstrapKind = (&'static str, fn() -> Vec<Value>, bool);

/// The default namespaces and the bootstrap policy: the missing namespaces are created and the
/// policy reconciled with the store, all issued together and sent as one batch (one commit, so
/// a Role in `kube-system` is stored with the namespace or not at all). Policy kinds are only
/// reconciled while they are served (the kinds before the first one that is not).
pub(crate) async fn ensure_bootstrap(registry: &Registry) -> Result<(), ApiError> {
    let kinds: [BootstrapKind; 4] = [
        ("clusterroles", crest_rbac::bootstrap_cluster_roles, false),
        (
            "clusterrolebindings",
            crest_rbac::bootstrap_cluster_role_bindings,
            true,
        ),
        ("roles", crest_rbac::bootstrap_roles, false),
        ("rolebindings", crest_rbac::bootstrap_role_bindings, true),
    ];
    let resources = registry.resources();
    let mut writes = vec![];
    for (plural, expected, binding) in kinds {
        let Some(def) = resources.lookup(GROUP, "v1", plural) else {
            break;
        };
        writes.extend(
            expected()
                .into_iter()
                .map(move |obj| (def.clone(), obj, binding)),
        );
    }
    let policy = writes.into_iter().map(|(def, obj, binding)| async move {
        reconcile_one(registry, &def, obj, binding).await
    });
    let namespaces = super::namespace::default_namespace_creates(registry);
    let (namespaces, policy) = registry
        .batched(futures::future::join(
            futures::future::join_all(namespaces),
            futures::future::join_all(policy),
        ))
        .await;
    namespaces.into_iter().chain(policy).collect()
}

async fn reconcile_one(
    registry: &Registry,
    def: &ResourceDef,
    expected: Value,
    binding: bool,
) -> Result<(), ApiError> {
    let name = meta::name(&expected).to_string();
    let ns = Some(meta::namespace(&expected))
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let ns = ns.as_deref();
    let existing = registry
        .reads()
        .get(&def.key(ns, &name))
        .and_then(|o| o.value().ok());
    let plan = if binding {
        reconcile_binding(existing.as_ref(), &expected)
    } else {
        reconcile_role(existing.as_ref(), &expected)
    };
    let mut opts = WriteOptions::by(KUBE_APISERVER);
    // The default namespaces are created in the same commit (see `ensure_bootstrap`).
    opts.namespace_in_batch = ns.is_some_and(|n| super::namespace::DEFAULT_NAMESPACES.contains(&n));
    let result = match plan {
        Reconcile::None => return Ok(()),
        Reconcile::Protected => {
            tracing::info!(
                resource = def.api.plural.as_str(),
                name = name.as_str(),
                "bootstrap RBAC object not reconciled: autoupdate is false"
            );
            return Ok(());
        }
        Reconcile::Create(obj) => registry.create(def, ns, obj, &opts).await.map(|_| ()),
        Reconcile::Update(obj) => registry
            .update(def, ns, &name, obj, UpdateMode::Main, &opts)
            .await
            .map(|_| ()),
        Reconcile::Recreate(obj) => {
            match registry
                .delete(def, ns, &name, &Preconditions::default(), &opts)
                .await
            {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
            registry.create(def, ns, obj, &opts).await.map(|_| ())
        }
    };
    match result {
        // Another writer got there first (a second replica starting): theirs stands.
        Err(e) if e.code == 409 => Ok(()),
        r => r,
    }
}
