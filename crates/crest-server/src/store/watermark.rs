//! The highest revision this server's own writes reached: a [`Storage`] decorator the registry
//! writes through. Waiting for the cache to reach it gives a request every write this replica
//! acknowledged before it (read-your-writes through one replica) without asking the store for
//! its revision, which for etcd is a round trip. Reads that must see writes acknowledged by
//! other replicas too still ask the store (`Registry::sync`).

use crest_storage::{
    BoxFuture, KeyValue, RangeRequest, RangeResult, Result, Revision, Storage, WatchRequest,
    WatchStream, WriteOutcome,
};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

pub(crate) struct Watermarked {
    inner: Arc<dyn Storage>,
    written: AtomicI64,
}

impl Watermarked {
    pub(crate) fn new(inner: Arc<dyn Storage>) -> Arc<Self> {
        Arc::new(Watermarked {
            inner,
            written: AtomicI64::new(0),
        })
    }

    /// The revision of the newest write acknowledged through this store (0: none yet).
    pub(crate) fn written(&self) -> Revision {
        self.written.load(Ordering::Acquire)
    }

    fn note(&self, outcome: Result<WriteOutcome>) -> Result<WriteOutcome> {
        if let Ok(WriteOutcome::Done(kv)) = &outcome {
            self.written.fetch_max(kv.mod_revision, Ordering::AcqRel);
        }
        outcome
    }
}

impl Storage for Watermarked {
    fn current_revision(&self) -> BoxFuture<'_, Result<Revision>> {
        self.inner.current_revision()
    }

    fn compacted_revision(&self) -> Revision {
        self.inner.compacted_revision()
    }

    fn get<'a>(
        &'a self,
        key: &'a str,
        revision: Revision,
    ) -> BoxFuture<'a, Result<Option<KeyValue>>> {
        self.inner.get(key, revision)
    }

    fn range(&self, req: RangeRequest) -> BoxFuture<'_, Result<RangeResult>> {
        self.inner.range(req)
    }

    fn create<'a>(
        &'a self,
        key: &'a str,
        value: bytes::Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(async move { self.note(self.inner.create(key, value).await) })
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: bytes::Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(async move { self.note(self.inner.update(key, expected, value).await) })
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(async move { self.note(self.inner.delete(key, expected).await) })
    }

    fn watch(&self, req: WatchRequest) -> BoxFuture<'_, Result<WatchStream>> {
        self.inner.watch(req)
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<()>> {
        self.inner.compact(revision)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }

    fn problem(&self) -> Option<String> {
        self.inner.problem()
    }
}
