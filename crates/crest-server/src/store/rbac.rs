//! The cached RBAC objects (Roles, ClusterRoles, RoleBindings, ClusterRoleBindings) indexed for
//! authorization: a `crest_rbac::RbacIndex` kept current with the cache. The feed updates it
//! in the step that publishes a batch of changes (before waiting readers see the new
//! revision), so a request that has caught up with a write is authorized with it; it is
//! rebuilt when the cache is loaded or re-listed.
//!
//! kube-apiserver's authorizer reads the same objects through informers; here one index
//! serves the per-request authorization (`http`), the escalation checks of RBAC writes
//! (`registry/rbac`) and the review APIs.

use super::cache::{Cache, CacheEvent};
use super::keys::{
    CLUSTER_ROLE_BINDING_PREFIX, CLUSTER_ROLE_PREFIX, ROLE_BINDING_PREFIX, ROLE_PREFIX,
};
use crest_rbac::{Kind, RbacIndex};
use crest_storage::EventType;
use std::sync::{Arc, RwLock, RwLockReadGuard};

const PREFIXES: [(&str, Kind); 4] = [
    (ROLE_PREFIX, Kind::Role),
    (CLUSTER_ROLE_PREFIX, Kind::ClusterRole),
    (ROLE_BINDING_PREFIX, Kind::RoleBinding),
    (CLUSTER_ROLE_BINDING_PREFIX, Kind::ClusterRoleBinding),
];

/// The kind stored under `key`, and the key's namespace and name (empty namespace for the
/// cluster-scoped kinds).
fn classify(key: &str) -> Option<(Kind, &str, &str)> {
    let (rest, kind) = PREFIXES
        .iter()
        .find_map(|(p, k)| key.strip_prefix(p).map(|rest| (rest, *k)))?;
    if kind.namespaced() {
        let (ns, name) = rest.split_once('/')?;
        Some((kind, ns, name))
    } else {
        Some((kind, "", rest))
    }
}

/// The RBAC index of the cache's current state.
#[derive(Default)]
pub(crate) struct RbacCache {
    index: RwLock<RbacIndex>,
}

impl RbacCache {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The index as of the last published batch (held briefly: writers wait for readers).
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, RbacIndex> {
        self.index.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Rebuilds the index from everything the cache holds (startup, re-list).
    pub(crate) fn rebuild(&self, cache: &Cache) {
        let mut index = RbacIndex::new();
        for (prefix, kind) in PREFIXES {
            for o in cache.list(prefix).objects.iter() {
                if let Ok(v) = o.value() {
                    index.upsert(kind, &v);
                }
            }
        }
        *self.index.write().unwrap_or_else(|p| p.into_inner()) = index;
    }

    /// Applies a batch of cache events (those of other kinds are skipped without a lock).
    pub(crate) fn apply(&self, events: &[Arc<CacheEvent>]) {
        let mut relevant = events
            .iter()
            .filter_map(|e| classify(&e.key).map(|c| (e, c)))
            .peekable();
        if relevant.peek().is_none() {
            return;
        }
        // Decode outside the lock.
        let changes: Vec<_> = relevant
            .map(|(e, (kind, ns, name))| match e.event_type {
                EventType::Put => (kind, ns, name, e.object.value().ok()),
                EventType::Delete => (kind, ns, name, None),
            })
            .collect();
        let mut index = self.index.write().unwrap_or_else(|p| p.into_inner());
        for (kind, ns, name, value) in changes {
            match value {
                Some(v) => index.upsert(kind, &v),
                None => index.remove(kind, ns, name),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_classified() {
        assert!(matches!(
            classify("/registry/roles/ns/r"),
            Some((Kind::Role, "ns", "r"))
        ));
        assert!(matches!(
            classify("/registry/clusterroles/view"),
            Some((Kind::ClusterRole, "", "view"))
        ));
        assert!(matches!(
            classify("/registry/clusterrolebindings/x"),
            Some((Kind::ClusterRoleBinding, "", "x"))
        ));
        assert!(classify("/registry/configmaps/ns/x").is_none());
    }
}
