//! Compaction: history older than the retention is dropped from storage (and from the cache's
//! change history), in small steps that interleave with client writes.

use crate::registry::Registry;
use crest_storage::Revision;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Compacts history older than `retention`, sampling the revision once a minute.
pub(crate) async fn compact_history(
    registry: Arc<Registry>,
    retention: Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let step = (retention / 5).max(Duration::from_secs(1));
    let mut samples: std::collections::VecDeque<(Instant, Revision)> = Default::default();
    let mut ticker = tokio::time::interval(step);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = ticker.tick() => {}
        }
        let now = Instant::now();
        // The in-memory history ages out on the same clock.
        registry.reads().expire_history();
        match registry.reads().current_revision().await {
            Ok(rev) => samples.push_back((now, rev)),
            Err(e) => tracing::warn!(error = %e, "compaction: no current revision"),
        }
        let mut target = None;
        while let Some(&(t, rev)) = samples.front() {
            if now.duration_since(t) >= retention {
                target = Some(rev);
                samples.pop_front();
            } else {
                break;
            }
        }
        if let Some(rev) = target {
            compact_in_steps(&registry, rev).await;
        }
    }
}

/// Revisions compacted per storage transaction: compaction shares the store's writer with client
/// writes, so a minute of history is dropped in small steps that interleave with them rather than
/// in one long transaction that would stall writers.
const COMPACTION_STEP: Revision = 2_000;

async fn compact_in_steps(registry: &Registry, target: Revision) {
    loop {
        let from = registry.reads().compacted_revision();
        if from >= target {
            return;
        }
        let next = (from + COMPACTION_STEP).min(target);
        if let Err(e) = registry.reads().compact(next).await {
            tracing::warn!(error = %e, "compaction failed");
            return;
        }
        tokio::task::yield_now().await;
    }
}

/// Ages out the cache's in-memory change history on every replica (storage compaction runs on
/// the leader only, through [`compact_history`]).
pub(crate) async fn expire_history(
    registry: Arc<Registry>,
    retention: Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut ticker = tokio::time::interval((retention / 5).max(Duration::from_secs(1)));
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = ticker.tick() => registry.reads().expire_history(),
        }
    }
}
