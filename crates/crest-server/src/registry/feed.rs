//! The cache feed: one storage watch keeps the cache current, and the served resources are
//! rebuilt when a CRD changes, before the change becomes visible.

use super::Registry;
use crate::store::cache::{CacheEvent, CachedObject};
use crate::store::keys::{self, CRD_PREFIX, REGISTRY_PREFIX};
use crest_storage::{Revision, WatchEvent, WatchRequest};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Keeps the cache current from one storage watch; rebuilds the served resources when a CRD
/// changes, before the change becomes visible.
pub(crate) async fn feed_cache(
    registry: Arc<Registry>,
    from: Revision,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut from = from;
    loop {
        let mut stream = match registry
            .storage
            .watch(WatchRequest::new(REGISTRY_PREFIX, from))
            .await
        {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "cache watch failed");
                return;
            }
        };
        loop {
            let first = tokio::select! {
                _ = shutdown.changed() => return,
                ev = stream.next() => ev,
            };
            let first = match first {
                Some(Ok(WatchEvent::Change(ev))) => ev,
                Some(Ok(WatchEvent::Progress(_))) => continue,
                _ => break,
            };
            let mut batch = vec![first];
            while batch.len() < 1024 {
                match stream.try_next() {
                    Some(Ok(WatchEvent::Change(ev))) => batch.push(ev),
                    Some(Ok(WatchEvent::Progress(_))) => continue,
                    _ => break,
                }
            }
            // The previous state is already in the cache (or earlier in this batch): reuse it
            // instead of decoding the store's prev_kv again.
            let mut latest: std::collections::HashMap<String, Arc<CachedObject>> =
                std::collections::HashMap::new();
            let resources = registry.resources();
            let events: Vec<CacheEvent> = batch
                .into_iter()
                .map(|ev| {
                    let rev = ev.kv.mod_revision;
                    let prev = ev.prev_kv.as_ref().map(|p| {
                        latest
                            .get(&p.key)
                            .cloned()
                            .or_else(|| registry.cache.get(&p.key))
                            .filter(|c| c.mod_revision == p.mod_revision)
                            .unwrap_or_else(|| {
                                Arc::new(CachedObject::from_stored(
                                    p.key.clone(),
                                    &p.value,
                                    p.create_revision,
                                    p.mod_revision,
                                ))
                            })
                    });
                    let object = match ev.event_type {
                        // Written through another version: read it as the storage version.
                        crest_storage::EventType::Put => Arc::new(super::resources::read_stored(
                            &ev.kv,
                            resources.stored_schema(&ev.kv.key),
                        )),
                        crest_storage::EventType::Delete => prev.clone().unwrap_or_else(|| {
                            Arc::new(CachedObject::from_stored(ev.kv.key.clone(), b"{}", 0, rev))
                        }),
                    };
                    latest.insert(ev.kv.key.clone(), object.clone());
                    CacheEvent {
                        event_type: ev.event_type,
                        key: ev.kv.key,
                        revision: rev,
                        object,
                        prev,
                    }
                })
                .collect();
            from = events.last().map(|e| e.revision).unwrap_or(from);
            let changed_crds: Vec<String> = events
                .iter()
                .filter(|e| e.key.starts_with(CRD_PREFIX))
                .filter_map(|e| e.object.value().ok())
                .map(|crd| {
                    let plural = crd
                        .pointer("/status/acceptedNames/plural")
                        .or_else(|| crd.pointer("/spec/names/plural"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let group = crd
                        .pointer("/spec/group")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    keys::resource_prefix(group, &plural)
                })
                .collect();
            registry.cache.apply(events, |_| {
                if !changed_crds.is_empty() {
                    registry.rebuild_resources();
                    // Objects of a changed CRD are read through its new schema from now on.
                    registry.normalize_stored(Some(&changed_crds));
                }
            });
        }
        // The watch ended (fell behind or store closed): resume from the last applied revision.
        if *shutdown.borrow() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
