//! The highest revision this server's own writes reached: a [`Storage`] decorator the registry
//! writes through. Waiting for the cache to reach it gives a request every write this replica
//! acknowledged before it (read-your-writes through one replica) without asking the store for
//! its revision, which for etcd is a round trip. Reads that must see writes acknowledged by
//! other replicas too still ask the store (`Registry::sync`).
//!
//! [`batched`] gathers the writes some work issues at once (the bootstrap policy's,
//! through the registry's usual write path) into one [`Storage::write_batch`]: the embedded store
//! commits them with one sync.

use crest_storage::{
    BoxFuture, KeyValue, RangeRequest, RangeResult, Result, Revision, Storage, StorageError,
    WatchRequest, WatchStream, Write, WriteOutcome,
};
use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use tokio::sync::oneshot;

/// A write gathered by [`batched`] and where its outcome goes.
type Gathered = (Write, oneshot::Sender<Result<WriteOutcome>>);

tokio::task_local! {
    /// The writes gathered so far inside [`batched`] (`None` once they were sent).
    static GATHER: RefCell<Option<Vec<Gathered>>>;
}

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

    /// Whether a write now is gathered by [`batched`] (called inside it, before
    /// its batch was sent).
    fn gathering() -> bool {
        GATHER.try_with(|g| g.borrow().is_some()).unwrap_or(false)
    }

    /// Gathers `write` (see [`Watermarked::gathering`]): its outcome, once the batch is done.
    fn gather(&self, write: Write) -> BoxFuture<'_, Result<WriteOutcome>> {
        let (tx, rx) = oneshot::channel();
        let _ = GATHER.try_with(|g| {
            if let Some(pending) = g.borrow_mut().as_mut() {
                pending.push((write, tx));
            }
        });
        Box::pin(async move { self.note(rx.await.unwrap_or(Err(StorageError::Closed))) })
    }
}

/// Runs `work`, sending every write it issues through a [`Watermarked`] before it first has to
/// wait (the writes of futures joined together, each up to its store call) to `storage` (that
/// `Watermarked`) as one [`Storage::write_batch`]; later writes go one by one, as usual. Each
/// write still gets its own outcome.
pub(crate) async fn batched<F: Future>(storage: &dyn Storage, work: F) -> F::Output {
    GATHER
        .scope(RefCell::new(Some(vec![])), async {
            let mut work = std::pin::pin!(work);
            let first = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
            let gathered = GATHER.with(|g| g.borrow_mut().take()).unwrap_or_default();
            let send = async {
                if gathered.is_empty() {
                    return;
                }
                let (writes, replies): (Vec<Write>, Vec<_>) = gathered.into_iter().unzip();
                match storage.write_batch(writes).await {
                    Ok(outcomes) => {
                        for (reply, o) in replies.into_iter().zip(outcomes) {
                            let _ = reply.send(Ok(o));
                        }
                    }
                    Err(e) => {
                        for reply in replies {
                            let _ = reply.send(Err(e.clone()));
                        }
                    }
                }
            };
            match first {
                Poll::Ready(out) => {
                    send.await;
                    out
                }
                Poll::Pending => futures::join!(work, send).0,
            }
        })
        .await
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
        if Self::gathering() {
            return self.gather(Write::Create {
                key: key.into(),
                value,
            });
        }
        Box::pin(async move { self.note(self.inner.create(key, value).await) })
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: bytes::Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        if Self::gathering() {
            return self.gather(Write::Update {
                key: key.into(),
                expected,
                value,
            });
        }
        Box::pin(async move { self.note(self.inner.update(key, expected, value).await) })
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        if Self::gathering() {
            return self.gather(Write::Delete {
                key: key.into(),
                expected,
            });
        }
        Box::pin(async move { self.note(self.inner.delete(key, expected).await) })
    }

    fn write_batch(&self, writes: Vec<Write>) -> BoxFuture<'_, Result<Vec<WriteOutcome>>> {
        Box::pin(async move {
            let outcomes = self.inner.write_batch(writes).await?;
            for o in &outcomes {
                if let WriteOutcome::Done(kv) = o {
                    self.written.fetch_max(kv.mod_revision, Ordering::AcqRel);
                }
            }
            Ok(outcomes)
        })
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
