//! The storage contract suite (`crest_storage::conformance`) against the embedded backend, with
//! small replay chunks and watch buffers so that long histories span many of them.

use crest_storage::conformance::Backend;
use crest_storage::{EmbeddedOptions, EmbeddedStore, Storage};
use std::sync::Arc;
use std::time::Duration;

fn embedded() -> Backend {
    Backend::new(|dir| {
        Box::pin(async move {
            let opts = EmbeddedOptions {
                replay_chunk: 64,
                watch_buffer: 256,
                progress_interval: Duration::from_millis(200),
                ..Default::default()
            };
            let s: Arc<dyn Storage> = EmbeddedStore::open(&dir, opts)?;
            Ok(s)
        })
    })
    .progress_within(Duration::from_secs(2))
}

crest_storage::conformance_tests!(embedded());
