//! Event expiry (`--event-ttl`, default 1h): kube-apiserver writes every Event with an etcd
//! lease of that TTL, renewed by each write, so an Event goes that long after its last write.
//! Here an expiry index (key -> deadline and the revision it was set for) is kept from the
//! cache's change feed, for keys under the events prefix only: a write sets the deadline to
//! now + TTL, a delete drops the entry. Due entries are deleted at the storage level, as an
//! expiring lease deletes the key (conditioned on the revision indexed: an Event written again
//! meanwhile has a later deadline). Nothing scans the store; only when the feed was missed
//! (the controller lagged) is the events prefix of the cache read again.

use crate::registry::Registry;
use crate::store::cache::{CacheEvent, CachedObject};
use crate::store::keys::EVENT_PREFIX;
use crest_storage::{EventType, Revision, WriteOutcome};
use futures::StreamExt;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::time::Instant;

/// How many expired Events are deleted concurrently (the store batches concurrent writes).
const CONCURRENT_DELETES: usize = 64;
/// When a delete failed (storage unavailable), how long before it is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// The expiry index: each Event's deadline, and the deadlines in order.
#[derive(Default)]
struct Index {
    by_key: HashMap<Arc<str>, (Instant, Revision)>,
    due: BTreeSet<(Instant, Arc<str>)>,
}

impl Index {
    fn set(&mut self, key: &Arc<str>, deadline: Instant, revision: Revision) {
        if let Some((old, _)) = self.by_key.insert(key.clone(), (deadline, revision)) {
            self.due.remove(&(old, key.clone()));
        }
        self.due.insert((deadline, key.clone()));
    }

    fn remove(&mut self, key: &str) {
        if let Some((k, (deadline, _))) = self.by_key.remove_entry(key) {
            self.due.remove(&(deadline, k));
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.due.first().map(|(d, _)| *d)
    }

    /// Takes the entries due at `now`.
    fn take_due(&mut self, now: Instant) -> Vec<(Arc<str>, Revision)> {
        let mut out = vec![];
        while let Some((deadline, key)) = self.due.first().cloned() {
            if deadline > now {
                break;
            }
            self.due.pop_first();
            if let Some((_, rev)) = self.by_key.remove(&key) {
                out.push((key, rev));
            }
        }
        out
    }
}

/// The deadline of an Event found in the cache rather than seen written (at start, or after
/// the feed was missed): its latest timestamp + TTL, never later than now + TTL (an etcd lease
/// would have been granted at the write, which the object does not record).
fn deadline_of_existing(o: &CachedObject, ttl: Duration, now: Instant) -> Instant {
    let latest = serde_json::from_slice::<Value>(&o.json).ok().and_then(|v| {
        [
            "/lastTimestamp",
            "/series/lastObservedTime",
            "/eventTime",
            "/firstTimestamp",
            "/metadata/creationTimestamp",
        ]
        .iter()
        .filter_map(|p| v.pointer(p).and_then(Value::as_str))
        .filter_map(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
        .max()
    });
    let Some(latest) = latest else {
        return now + ttl;
    };
    let age = (chrono::Utc::now() - latest).to_std().unwrap_or_default();
    now + ttl.saturating_sub(age)
}

/// Runs the expiry until `shutdown` fires.
pub(crate) async fn run(
    registry: Arc<Registry>,
    ttl: Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut feed = registry.reads().subscribe();
    let mut index = Index::default();
    rescan(&registry, &mut index, ttl);
    loop {
        let next = index.next_deadline();
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = tokio::time::sleep_until(next.unwrap_or_else(Instant::now)), if next.is_some() => {
                expire(&registry, &mut index).await;
            }
            ev = feed.recv() => match ev {
                Ok(ev) => {
                    observe(&mut index, &ev, ttl);
                    loop {
                        match feed.try_recv() {
                            Ok(ev) => observe(&mut index, &ev, ttl),
                            Err(TryRecvError::Lagged(_)) => rescan(&registry, &mut index, ttl),
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => rescan(&registry, &mut index, ttl),
                Err(RecvError::Closed) => return,
            },
        }
    }
}

fn observe(index: &mut Index, ev: &CacheEvent, ttl: Duration) {
    if !ev.key.starts_with(EVENT_PREFIX) {
        return;
    }
    match ev.event_type {
        // Every write renews the lease.
        EventType::Put => index.set(&ev.object.key, Instant::now() + ttl, ev.object.mod_revision),
        EventType::Delete => index.remove(&ev.key),
    }
}

/// Indexes the cached Events (the events prefix only): entries still at the indexed revision
/// keep their deadline.
fn rescan(registry: &Registry, index: &mut Index, ttl: Duration) {
    let now = Instant::now();
    let snapshot = registry.reads().snapshot(EVENT_PREFIX);
    let mut fresh = Index::default();
    for o in &snapshot.objects {
        let deadline = match index.by_key.get(&o.key) {
            Some((d, rev)) if *rev == o.mod_revision => *d,
            _ => deadline_of_existing(o, ttl, now),
        };
        fresh.set(&o.key, deadline, o.mod_revision);
    }
    *index = fresh;
}

/// Deletes the Events whose deadline passed (unless written again since).
async fn expire(registry: &Registry, index: &mut Index) {
    let due = index.take_due(Instant::now());
    if due.is_empty() {
        return;
    }
    let results: Vec<_> = futures::stream::iter(due)
        .map(|(key, rev)| async move {
            let r = registry.expire_stored(&key, rev).await;
            (key, rev, r)
        })
        .buffer_unordered(CONCURRENT_DELETES)
        .collect()
        .await;
    let mut expired = 0usize;
    for (key, rev, r) in results {
        match r {
            Ok(WriteOutcome::Done(_)) => expired += 1,
            // Written again (a later deadline is indexed from the feed) or already gone.
            Ok(WriteOutcome::Conflict(_)) => {}
            Err(e) => {
                tracing::debug!(%key, error = %e, "event expiry: will retry");
                // Unless the feed has indexed a newer write meanwhile.
                if !index.by_key.contains_key(&key) {
                    index.set(&key, Instant::now() + RETRY, rev);
                }
            }
        }
    }
    tracing::debug!(expired, "expired events");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_orders_deadlines_and_renews() {
        let mut ix = Index::default();
        let now = Instant::now();
        let a: Arc<str> = "/registry/events/ns/a".into();
        let b: Arc<str> = "/registry/events/ns/b".into();
        ix.set(&a, now + Duration::from_secs(5), 1);
        ix.set(&b, now + Duration::from_secs(1), 2);
        assert_eq!(ix.next_deadline(), Some(now + Duration::from_secs(1)));
        // A write renews a's lease.
        ix.set(&a, now + Duration::from_secs(10), 3);
        assert_eq!(ix.due.len(), 2);
        assert_eq!(
            ix.take_due(now + Duration::from_secs(6)),
            vec![(b.clone(), 2)]
        );
        assert!(ix.take_due(now + Duration::from_secs(9)).is_empty());
        ix.remove(&a);
        assert!(ix.next_deadline().is_none());
        assert!(ix.by_key.is_empty());
    }

    #[test]
    fn existing_events_expire_from_their_latest_timestamp() {
        let now = Instant::now();
        let ttl = Duration::from_secs(3600);
        let stamp = |ago: i64| {
            (chrono::Utc::now() - chrono::Duration::seconds(ago))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        };
        let obj = |json: String| {
            CachedObject::from_stored("/registry/events/ns/e".into(), json.as_bytes(), 1, 1)
        };
        let old = obj(format!(
            r#"{{"metadata":{{"creationTimestamp":"{}"}},"lastTimestamp":"{}"}}"#,
            stamp(7200),
            stamp(1800)
        ));
        let d = deadline_of_existing(&old, ttl, now);
        assert!(d > now + Duration::from_secs(1700) && d <= now + Duration::from_secs(1800));
        let expired = obj(format!(
            r#"{{"metadata":{{"creationTimestamp":"{}"}}}}"#,
            stamp(7200)
        ));
        assert_eq!(deadline_of_existing(&expired, ttl, now), now);
        let future = obj(format!(
            r#"{{"metadata":{{}},"eventTime":"{}"}}"#,
            stamp(-7200)
        ));
        assert_eq!(deadline_of_existing(&future, ttl, now), now + ttl);
    }
}
