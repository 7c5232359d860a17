//! The embedded backend: redb tables, one writer thread that batches concurrent writes into one
//! durable commit, and in-process watch fan-out.
//!
//! Tables (format 2):
//! - `kv`:   key -> index (create_rev, mod_rev, version): the latest revision of every live key.
//! - `log`:  revision -> entry (type, key, create_rev, version, the previous revision's index,
//!   value). Every value is written once, here; `kv` points into it. Watches replay the log, and
//!   reads at an older revision undo the entries after that revision, newest first.
//! - `meta`: `revision` (last committed), `compacted`, `format`.
//!
//! Compaction to revision C keeps, like etcd, the newest entry at or below C of every live key
//! (it is the key's value at every revision from C on) and everything above C; it drops
//! superseded entries and tombstones. So the entry a `kv` index or a `prev` points to is always
//! there for any revision a reader may still ask for.

use crate::{
    BoxFuture, Event, EventType, KeyValue, RangeRequest, RangeResult, Result, Revision, Storage,
    StorageError, WatchStream, WriteOutcome,
};
use bytes::Bytes;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use tokio::sync::{mpsc as tmpsc, oneshot};

const KV: TableDefinition<&str, &[u8]> = TableDefinition::new("kv");
const LOG: TableDefinition<i64, &[u8]> = TableDefinition::new("log");
const META: TableDefinition<&str, i64> = TableDefinition::new("meta");

/// The on-disk layout described above; a data dir of another format is refused, not misread.
const FORMAT: i64 = 2;

/// Options of the embedded store.
#[derive(Clone, Debug)]
pub struct EmbeddedOptions {
    /// redb's page cache. Small: the server keeps its own copy of the latest objects.
    pub cache_bytes: usize,
    /// Events a watcher may fall behind before it is closed.
    pub watch_buffer: usize,
    /// The most writes committed together.
    pub max_batch: usize,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            cache_bytes: 16 << 20,
            watch_buffer: 8192,
            max_batch: 1024,
        }
    }
}

fn backend<E: std::fmt::Display>(e: E) -> StorageError {
    StorageError::Backend(e.to_string())
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Backend(format!("corrupt {what}"))
}

/// Where a key's value of one revision lives: the `kv` record, and the `prev` part of log entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Index {
    create_revision: Revision,
    mod_revision: Revision,
    version: i64,
}

impl Index {
    fn of(kv: &KeyValue) -> Self {
        Index {
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
            version: kv.version,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.create_revision.to_le_bytes());
        out.extend_from_slice(&self.mod_revision.to_le_bytes());
        out.extend_from_slice(&self.version.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Result<Self> {
        Ok(Index {
            create_revision: i64_at(b, 0)?,
            mod_revision: i64_at(b, 8)?,
            version: i64_at(b, 16)?,
        })
    }

    fn with_value(&self, key: &str, value: Bytes) -> KeyValue {
        KeyValue {
            key: key.to_string(),
            value,
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            version: self.version,
        }
    }
}

fn i64_at(b: &[u8], at: usize) -> Result<i64> {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(i64::from_le_bytes)
        .ok_or_else(|| corrupt("record"))
}

/// One log entry, borrowed from the table. Layout: type (1 byte: 0 put, 1 delete), key length
/// (u32 LE), key, create_rev, version, prev index (mod_rev 0 = none), value (the rest).
struct Entry<'a> {
    delete: bool,
    key: &'a str,
    create_revision: Revision,
    version: i64,
    prev: Option<Index>,
    value: &'a [u8],
}

const NO_PREV: Index = Index {
    create_revision: 0,
    mod_revision: 0,
    version: 0,
};

fn encode_entry(
    delete: bool,
    key: &str,
    create_revision: Revision,
    version: i64,
    prev: Option<&Index>,
    value: &[u8],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(45 + key.len() + value.len());
    b.push(u8::from(delete));
    b.extend_from_slice(&(key.len() as u32).to_le_bytes());
    b.extend_from_slice(key.as_bytes());
    b.extend_from_slice(&create_revision.to_le_bytes());
    b.extend_from_slice(&version.to_le_bytes());
    prev.unwrap_or(&NO_PREV).encode(&mut b);
    b.extend_from_slice(value);
    b
}

fn decode_entry(b: &[u8]) -> Result<Entry<'_>> {
    let bad = || corrupt("log entry");
    let t = *b.first().ok_or_else(bad)?;
    let klen = u32::from_le_bytes(
        b.get(1..5)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(bad)?,
    ) as usize;
    let key = std::str::from_utf8(b.get(5..5 + klen).ok_or_else(bad)?).map_err(|_| bad())?;
    let at = 5 + klen;
    let prev = Index::decode(b.get(at + 16..at + 40).ok_or_else(bad)?)?;
    Ok(Entry {
        delete: t == 1,
        key,
        create_revision: i64_at(b, at)?,
        version: i64_at(b, at + 8)?,
        prev: (prev.mod_revision != 0).then_some(prev),
        value: b.get(at + 40..).ok_or_else(bad)?,
    })
}

/// The value `key` got at revision `rev` (the log entry that `kv` or a `prev` points to).
fn value_at(log: &impl ReadableTable<i64, &'static [u8]>, rev: Revision) -> Result<Bytes> {
    let g = log
        .get(rev)
        .map_err(backend)?
        .ok_or_else(|| corrupt("store: a live revision is missing from the log"))?;
    Ok(Bytes::copy_from_slice(decode_entry(g.value())?.value))
}

/// The event of the log entry at `rev`, with the previous value read from the log.
fn event_at(
    log: &impl ReadableTable<i64, &'static [u8]>,
    rev: Revision,
    b: &[u8],
) -> Result<Event> {
    let e = decode_entry(b)?;
    let prev_kv = match e.prev {
        Some(p) => Some(p.with_value(e.key, value_at(log, p.mod_revision)?)),
        None => None,
    };
    Ok(Event {
        event_type: if e.delete {
            EventType::Delete
        } else {
            EventType::Put
        },
        kv: KeyValue {
            key: e.key.to_string(),
            value: Bytes::copy_from_slice(e.value),
            create_revision: e.create_revision,
            mod_revision: rev,
            version: e.version,
        },
        prev_kv,
    })
}

enum Op {
    Create {
        key: String,
        value: Bytes,
    },
    Update {
        key: String,
        expected: Revision,
        value: Bytes,
    },
    Delete {
        key: String,
        expected: Revision,
    },
    Compact {
        revision: Revision,
    },
}

struct Pending {
    op: Op,
    reply: oneshot::Sender<Result<WriteOutcome>>,
}

struct Watcher {
    prefix: String,
    tx: tmpsc::Sender<Result<Event>>,
}

struct Shared {
    db: Database,
    revision: AtomicI64,
    compacted: AtomicI64,
    closed: AtomicBool,
    /// Live watchers; events are published under this lock in revision order, and a new watcher
    /// registers under it, so it sees exactly the events after the revision it read.
    watchers: Mutex<Vec<Watcher>>,
    watch_buffer: usize,
}

/// The default storage backend: a redb file in the data dir.
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    writer: Mutex<Option<mpsc::Sender<Pending>>>,
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl EmbeddedStore {
    /// Opens (or creates) `dir/crest.redb`.
    pub fn open(dir: &Path, opts: EmbeddedOptions) -> Result<Arc<Self>> {
        let db = Database::builder()
            .set_cache_size(opts.cache_bytes)
            .create(dir.join("crest.redb"))
            .map_err(backend)?;
        let (revision, compacted) = {
            let txn = db.begin_write().map_err(backend)?;
            let (r, c) = {
                txn.open_table(KV).map_err(backend)?;
                txn.open_table(LOG).map_err(backend)?;
                let mut meta = txn.open_table(META).map_err(backend)?;
                let format = meta.get("format").map_err(backend)?.map(|g| g.value());
                let written = meta.get("revision").map_err(backend)?.is_some();
                match format {
                    Some(FORMAT) => {}
                    None if !written => {
                        meta.insert("format", FORMAT).map_err(backend)?;
                    }
                    other => {
                        return Err(StorageError::Backend(format!(
                            "{} holds store format {} but this Crest reads format {FORMAT}; \
                             move the data dir away (or use the Crest that wrote it)",
                            dir.join("crest.redb").display(),
                            other.unwrap_or(1)
                        )))
                    }
                }
                let r = meta
                    .get("revision")
                    .map_err(backend)?
                    .map(|g| g.value())
                    .unwrap_or(0);
                let c = meta
                    .get("compacted")
                    .map_err(backend)?
                    .map(|g| g.value())
                    .unwrap_or(0);
                (r, c)
            };
            txn.commit().map_err(backend)?;
            (r, c)
        };
        let shared = Arc::new(Shared {
            db,
            revision: AtomicI64::new(revision),
            compacted: AtomicI64::new(compacted),
            closed: AtomicBool::new(false),
            watchers: Mutex::new(vec![]),
            watch_buffer: opts.watch_buffer,
        });
        let (tx, rx) = mpsc::channel::<Pending>();
        let s = shared.clone();
        let max_batch = opts.max_batch.max(1);
        let thread = std::thread::Builder::new()
            .name("crest-store-writer".into())
            .spawn(move || writer_loop(s, rx, max_batch))
            .map_err(backend)?;
        Ok(Arc::new(EmbeddedStore {
            shared,
            writer: Mutex::new(Some(tx)),
            writer_thread: Mutex::new(Some(thread)),
        }))
    }

    async fn submit(&self, op: Op) -> Result<WriteOutcome> {
        let (reply, rx) = oneshot::channel();
        {
            let guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            let tx = guard.as_ref().ok_or(StorageError::Closed)?;
            tx.send(Pending { op, reply })
                .map_err(|_| StorageError::Closed)?;
        }
        rx.await.map_err(|_| StorageError::Closed)?
    }

    fn check_revision(&self, revision: Revision) -> Result<()> {
        let current = self.shared.revision.load(Ordering::SeqCst);
        let compacted = self.shared.compacted.load(Ordering::SeqCst);
        if revision > current {
            return Err(StorageError::FutureRevision {
                requested: revision,
                current,
            });
        }
        if revision > 0 && revision < compacted {
            return Err(StorageError::Compacted {
                requested: revision,
                compacted,
            });
        }
        Ok(())
    }

    /// A range at the latest revision straight from the kv table, reading only what is returned
    /// (plus the keys, when counting). `None` when `req.revision` is no longer the latest.
    fn range_latest(&self, req: &RangeRequest) -> Result<Option<RangeResult>> {
        let txn = self.shared.db.begin_read().map_err(backend)?;
        let meta = txn.open_table(META).map_err(backend)?;
        let latest = meta
            .get("revision")
            .map_err(backend)?
            .map(|g| g.value())
            .unwrap_or(0);
        if req.revision != 0 && req.revision != latest {
            return Ok(None);
        }
        let kv = txn.open_table(KV).map_err(backend)?;
        let log = txn.open_table(LOG).map_err(backend)?;
        let from = match &req.start_after {
            Some(s) if s.as_str() >= req.prefix.as_str() => Bound::Excluded(s.as_str()),
            _ => Bound::Included(req.prefix.as_str()),
        };
        let mut kvs = vec![];
        let mut more = false;
        let mut count = 0;
        for item in kv
            .range::<&str>((from, Bound::Unbounded))
            .map_err(backend)?
        {
            let (k, v) = item.map_err(backend)?;
            let key = k.value();
            if !key.starts_with(req.prefix.as_str()) {
                break;
            }
            count += 1;
            if req.limit > 0 && kvs.len() == req.limit {
                more = true;
                if !req.count {
                    break;
                }
                continue;
            }
            let idx = Index::decode(v.value())?;
            kvs.push(idx.with_value(key, value_at(&log, idx.mod_revision)?));
        }
        Ok(Some(RangeResult {
            kvs,
            revision: latest,
            more,
            count,
        }))
    }

    fn range_historical(&self, req: &RangeRequest) -> Result<RangeResult> {
        let txn = self.shared.db.begin_read().map_err(backend)?;
        let log = txn.open_table(LOG).map_err(backend)?;
        let (at, revision) = self.index_at(&txn, &req.prefix, req.revision)?;
        let mut kvs = vec![];
        let mut more = false;
        let mut count = 0;
        for (key, idx) in at.iter() {
            if req
                .start_after
                .as_ref()
                .is_some_and(|s| key.as_str() <= s.as_str())
            {
                continue;
            }
            count += 1;
            if req.limit > 0 && kvs.len() == req.limit {
                more = true;
                if !req.count {
                    break;
                }
                continue;
            }
            // Only the returned page's values are read.
            kvs.push(idx.with_value(key, value_at(&log, idx.mod_revision)?));
        }
        if !req.count {
            count = kvs.len() + usize::from(more);
        }
        Ok(RangeResult {
            kvs,
            revision,
            more,
            count,
        })
    }

    /// The index entries of keys under `prefix` at `revision` (0 = latest), as a sorted map.
    fn index_at(
        &self,
        txn: &redb::ReadTransaction,
        prefix: &str,
        revision: Revision,
    ) -> Result<(BTreeMap<String, Index>, Revision)> {
        let kv = txn.open_table(KV).map_err(backend)?;
        let log = txn.open_table(LOG).map_err(backend)?;
        let meta = txn.open_table(META).map_err(backend)?;
        let latest = meta
            .get("revision")
            .map_err(backend)?
            .map(|g| g.value())
            .unwrap_or(0);
        let mut at: BTreeMap<String, Index> = BTreeMap::new();
        for item in kv
            .range::<&str>((Bound::Included(prefix), Bound::Unbounded))
            .map_err(backend)?
        {
            let (k, v) = item.map_err(backend)?;
            let key = k.value();
            if !key.starts_with(prefix) {
                break;
            }
            at.insert(key.to_string(), Index::decode(v.value())?);
        }
        let revision = if revision == 0 || revision >= latest {
            latest
        } else {
            // Undo the entries after `revision`, newest first.
            for item in log.range((revision + 1)..=latest).map_err(backend)?.rev() {
                let (_, v) = item.map_err(backend)?;
                let e = decode_entry(v.value())?;
                if !e.key.starts_with(prefix) {
                    continue;
                }
                match e.prev {
                    Some(prev) => at.insert(e.key.to_string(), prev),
                    None => at.remove(e.key),
                };
            }
            revision
        };
        Ok((at, revision))
    }
}

fn read_index(table: &redb::Table<&str, &[u8]>, key: &str) -> Result<Option<Index>> {
    match table.get(key).map_err(backend)? {
        Some(g) => Ok(Some(Index::decode(g.value())?)),
        None => Ok(None),
    }
}

/// Applies one batch in one transaction and one durable commit, then answers and publishes.
fn writer_loop(shared: Arc<Shared>, rx: mpsc::Receiver<Pending>, max_batch: usize) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        let result = commit_batch(&shared, &batch);
        match result {
            Ok((outcomes, events, revision)) => {
                shared.revision.store(revision, Ordering::SeqCst);
                {
                    let mut watchers = shared.watchers.lock().unwrap_or_else(|p| p.into_inner());
                    for ev in &events {
                        // A watcher that cannot keep up is dropped; its stream ends and the client
                        // resumes from its last revision.
                        watchers.retain(|w| {
                            !ev.kv.key.starts_with(&w.prefix)
                                || w.tx.try_send(Ok(ev.clone())).is_ok()
                        });
                    }
                }
                for (p, o) in batch.into_iter().zip(outcomes) {
                    let _ = p.reply.send(Ok(o));
                }
            }
            Err(e) => {
                let msg = e.to_string();
                for p in batch {
                    let _ = p.reply.send(Err(StorageError::Backend(msg.clone())));
                }
            }
        }
    }
}

type BatchResult = (Vec<WriteOutcome>, Vec<Event>, Revision);

fn commit_batch(shared: &Shared, batch: &[Pending]) -> Result<BatchResult> {
    let txn = shared.db.begin_write().map_err(backend)?;
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut events = vec![];
    let mut rev = shared.revision.load(Ordering::SeqCst);
    {
        let mut kv = txn.open_table(KV).map_err(backend)?;
        let mut log = txn.open_table(LOG).map_err(backend)?;
        let mut meta = txn.open_table(META).map_err(backend)?;
        for p in batch {
            let (key, cur) = match &p.op {
                Op::Create { key, .. } | Op::Update { key, .. } | Op::Delete { key, .. } => {
                    (key.as_str(), read_index(&kv, key)?)
                }
                Op::Compact { revision } => {
                    compact(shared, &mut log, &mut meta, (*revision).min(rev))?;
                    outcomes.push(WriteOutcome::Conflict(None));
                    continue;
                }
            };
            // The current value, for prev_kv and conflict answers (not needed for a create).
            let current = |cur: &Index| -> Result<KeyValue> {
                Ok(cur.with_value(key, value_at(&log, cur.mod_revision)?))
            };
            let ev = match (&p.op, cur) {
                (Op::Create { value, .. }, None) => {
                    rev += 1;
                    Event {
                        event_type: EventType::Put,
                        kv: KeyValue {
                            key: key.into(),
                            value: value.clone(),
                            create_revision: rev,
                            mod_revision: rev,
                            version: 1,
                        },
                        prev_kv: None,
                    }
                }
                (
                    Op::Update {
                        expected, value, ..
                    },
                    Some(c),
                ) if c.mod_revision == *expected => {
                    let prev = current(&c)?;
                    rev += 1;
                    Event {
                        event_type: EventType::Put,
                        kv: KeyValue {
                            key: key.into(),
                            value: value.clone(),
                            create_revision: c.create_revision,
                            mod_revision: rev,
                            version: c.version + 1,
                        },
                        prev_kv: Some(prev),
                    }
                }
                (Op::Delete { expected, .. }, Some(c))
                    if *expected == 0 || c.mod_revision == *expected =>
                {
                    let prev = current(&c)?;
                    rev += 1;
                    Event {
                        event_type: EventType::Delete,
                        kv: KeyValue {
                            key: key.into(),
                            value: Bytes::new(),
                            create_revision: 0,
                            mod_revision: rev,
                            version: 0,
                        },
                        prev_kv: Some(prev),
                    }
                }
                (_, cur) => {
                    let cur = cur.as_ref().map(current).transpose()?;
                    outcomes.push(WriteOutcome::Conflict(cur));
                    continue;
                }
            };
            let prev = ev.prev_kv.as_ref().map(Index::of);
            match ev.event_type {
                EventType::Put => {
                    let mut idx = Vec::with_capacity(24);
                    Index::of(&ev.kv).encode(&mut idx);
                    kv.insert(key, idx.as_slice()).map_err(backend)?;
                    outcomes.push(WriteOutcome::Done(ev.kv.clone()));
                }
                EventType::Delete => {
                    kv.remove(key).map_err(backend)?;
                    let mut gone = ev.prev_kv.clone().unwrap_or_else(|| ev.kv.clone());
                    gone.mod_revision = rev;
                    outcomes.push(WriteOutcome::Done(gone));
                }
            }
            let entry = encode_entry(
                ev.event_type == EventType::Delete,
                key,
                ev.kv.create_revision,
                ev.kv.version,
                prev.as_ref(),
                &ev.kv.value,
            );
            log.insert(rev, entry.as_slice()).map_err(backend)?;
            events.push(ev);
        }
        meta.insert("revision", rev).map_err(backend)?;
    }
    txn.commit().map_err(backend)?;
    Ok((outcomes, events, rev))
}

/// Compacts history up to `target` (see the module comment): every entry after the previous
/// compaction point and at or below `target` supersedes the entry its `prev` points to, and a
/// tombstone at or below `target` is itself no longer needed.
fn compact(
    shared: &Shared,
    log: &mut redb::Table<i64, &[u8]>,
    meta: &mut redb::Table<&str, i64>,
    target: Revision,
) -> Result<()> {
    let from = shared.compacted.load(Ordering::SeqCst);
    if target <= from {
        return Ok(());
    }
    let mut stale = vec![];
    for item in log.range((from + 1)..=target).map_err(backend)? {
        let (r, v) = item.map_err(backend)?;
        let e = decode_entry(v.value())?;
        if let Some(p) = e.prev {
            stale.push(p.mod_revision);
        }
        if e.delete {
            stale.push(r.value());
        }
    }
    for r in stale {
        log.remove(r).map_err(backend)?;
    }
    meta.insert("compacted", target).map_err(backend)?;
    shared.compacted.store(target, Ordering::SeqCst);
    Ok(())
}

impl Storage for EmbeddedStore {
    fn current_revision(&self) -> Revision {
        self.shared.revision.load(Ordering::SeqCst)
    }

    fn compacted_revision(&self) -> Revision {
        self.shared.compacted.load(Ordering::SeqCst)
    }

    fn get<'a>(
        &'a self,
        key: &'a str,
        revision: Revision,
    ) -> BoxFuture<'a, Result<Option<KeyValue>>> {
        Box::pin(async move {
            self.check_revision(revision)?;
            if revision == 0 {
                let txn = self.shared.db.begin_read().map_err(backend)?;
                let kv = txn.open_table(KV).map_err(backend)?;
                let log = txn.open_table(LOG).map_err(backend)?;
                return match kv.get(key).map_err(backend)? {
                    Some(g) => {
                        let idx = Index::decode(g.value())?;
                        Ok(Some(idx.with_value(key, value_at(&log, idx.mod_revision)?)))
                    }
                    None => Ok(None),
                };
            }
            let txn = self.shared.db.begin_read().map_err(backend)?;
            let log = txn.open_table(LOG).map_err(backend)?;
            let (at, _) = self.index_at(&txn, key, revision)?;
            match at.get(key) {
                Some(idx) => Ok(Some(idx.with_value(key, value_at(&log, idx.mod_revision)?))),
                None => Ok(None),
            }
        })
    }

    fn range<'a>(&'a self, req: RangeRequest) -> BoxFuture<'a, Result<RangeResult>> {
        Box::pin(async move {
            self.check_revision(req.revision)?;
            match self.range_latest(&req)? {
                Some(r) => Ok(r),
                // An older revision: rebuild it from the log.
                None => self.range_historical(&req),
            }
        })
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(self.submit(Op::Create {
            key: key.to_string(),
            value,
        }))
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(self.submit(Op::Update {
            key: key.to_string(),
            expected,
            value,
        }))
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(self.submit(Op::Delete {
            key: key.to_string(),
            expected,
        }))
    }

    fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        if self.shared.closed.load(Ordering::SeqCst) {
            return Err(StorageError::Closed);
        }
        let compacted = self.compacted_revision();
        if after < compacted {
            return Err(StorageError::Compacted {
                requested: after,
                compacted,
            });
        }
        let (live_tx, mut live_rx) = tmpsc::channel(self.shared.watch_buffer);
        let registered_at = {
            let mut w = self
                .shared
                .watchers
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            w.push(Watcher {
                prefix: prefix.to_string(),
                tx: live_tx,
            });
            self.shared.revision.load(Ordering::SeqCst)
        };
        let (tx, rx) = tmpsc::channel(self.shared.watch_buffer.min(1024));
        let shared = self.shared.clone();
        let prefix = prefix.to_string();
        tokio::spawn(async move {
            // History (after, registered_at], then the live events (> registered_at).
            if after < registered_at {
                let replay = (|| -> Result<Vec<Event>> {
                    let txn = shared.db.begin_read().map_err(backend)?;
                    let log = txn.open_table(LOG).map_err(backend)?;
                    let mut out = vec![];
                    for item in log.range((after + 1)..=registered_at).map_err(backend)? {
                        let (r, v) = item.map_err(backend)?;
                        // Peek at the key before resolving the previous value.
                        if decode_entry(v.value())?.key.starts_with(&prefix) {
                            out.push(event_at(&log, r.value(), v.value())?);
                        }
                    }
                    Ok(out)
                })();
                match replay {
                    Ok(evs) => {
                        for ev in evs {
                            if tx.send(Ok(ev)).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        return;
                    }
                }
            }
            while let Some(ev) = live_rx.recv().await {
                if tx.send(ev).await.is_err() {
                    return;
                }
            }
        });
        Ok(WatchStream { rx })
    }

    fn compact<'a>(&'a self, revision: Revision) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { self.submit(Op::Compact { revision }).await.map(|_| ()) })
    }

    fn close<'a>(&'a self) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.shared.closed.store(true, Ordering::SeqCst);
            // Dropping the sender ends the writer after it drains what is queued.
            drop(self.writer.lock().unwrap_or_else(|p| p.into_inner()).take());
            let handle = self
                .writer_thread
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(h) = handle {
                let _ = tokio::task::spawn_blocking(move || h.join()).await;
            }
            self.shared
                .watchers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn crud_conflicts_revisions_and_history() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            let WriteOutcome::Done(a) = s.create("/a/1", Bytes::from("x")).await.unwrap() else {
                panic!()
            };
            assert_eq!((a.create_revision, a.mod_revision, a.version), (1, 1, 1));
            assert!(matches!(
                s.create("/a/1", Bytes::from("y")).await.unwrap(),
                WriteOutcome::Conflict(Some(_))
            ));
            assert!(matches!(
                s.update("/a/1", 7, Bytes::from("y")).await.unwrap(),
                WriteOutcome::Conflict(Some(_))
            ));
            let WriteOutcome::Done(b) = s.update("/a/1", 1, Bytes::from("y")).await.unwrap() else {
                panic!()
            };
            assert_eq!((b.create_revision, b.mod_revision, b.version), (1, 2, 2));
            s.create("/a/2", Bytes::from("z")).await.unwrap();
            s.create("/b/1", Bytes::from("q")).await.unwrap();
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!((r.kvs.len(), r.revision, r.count), (2, 4, 2));
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    limit: 1,
                    ..Default::default()
                })
                .await
                .unwrap();
            assert!(r.more && r.kvs[0].key == "/a/1" && r.kvs.len() == 1);
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    limit: 1,
                    count: true,
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!((r.kvs.len(), r.more, r.count), (1, true, 2));
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    start_after: Some("/a/1".into()),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(r.kvs[0].key, "/a/2");
            assert!(matches!(
                s.delete("/a/2", 0).await.unwrap(),
                WriteOutcome::Done(_)
            ));
            // At revision 1 only /a/1 = x existed.
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    revision: 1,
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(r.kvs.len(), 1);
            assert_eq!(r.kvs[0].value, Bytes::from("x"));
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    revision: 3,
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(r.kvs.len(), 2);
            // Paging an old revision: the second page of one.
            let r = s
                .range(RangeRequest {
                    prefix: "/a/".into(),
                    revision: 3,
                    start_after: Some("/a/1".into()),
                    limit: 1,
                    count: true,
                })
                .await
                .unwrap();
            assert_eq!((r.kvs[0].key.as_str(), r.more, r.count), ("/a/2", false, 1));
            assert!(matches!(
                s.get("/a/1", 99).await,
                Err(StorageError::FutureRevision { .. })
            ));
            s.compact(3).await.unwrap();
            assert!(matches!(
                s.get("/a/1", 2).await,
                Err(StorageError::Compacted { .. })
            ));
            assert!(matches!(
                s.watch("/a/", 1),
                Err(StorageError::Compacted { .. })
            ));
            assert_eq!(
                s.get("/a/1", 0).await.unwrap().unwrap().value,
                Bytes::from("y")
            );
            s.close().await;
            assert!(matches!(
                s.create("/c", Bytes::new()).await,
                Err(StorageError::Closed)
            ));
            drop(s);

            // Reopen: data and revision survive, revisions keep growing.
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            assert_eq!(s.current_revision(), 5);
            let WriteOutcome::Done(c) = s.create("/c", Bytes::new()).await.unwrap() else {
                panic!()
            };
            assert_eq!(c.mod_revision, 6);
            s.close().await;
        });
    }

    fn log_revisions(s: &EmbeddedStore) -> Vec<Revision> {
        let txn = s.shared.db.begin_read().unwrap();
        let log = txn.open_table(LOG).unwrap();
        log.iter().unwrap().map(|i| i.unwrap().0.value()).collect()
    }

    #[test]
    fn compaction_keeps_what_readers_can_still_ask_for() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            s.create("/c/1", Bytes::from("a1")).await.unwrap(); // 1
            s.update("/c/1", 1, Bytes::from("a2")).await.unwrap(); // 2
            s.create("/c/2", Bytes::from("b1")).await.unwrap(); // 3
            s.delete("/c/2", 3).await.unwrap(); // 4
            s.create("/c/3", Bytes::from("c1")).await.unwrap(); // 5
            s.update("/c/3", 5, Bytes::from("c2")).await.unwrap(); // 6
            s.compact(5).await.unwrap();
            // Superseded puts and tombstones at or below 5 are gone; 2 and 5 are still live there.
            assert_eq!(log_revisions(&s), vec![2, 5, 6]);
            let at5 = s
                .range(RangeRequest {
                    prefix: "/c/".into(),
                    revision: 5,
                    ..Default::default()
                })
                .await
                .unwrap();
            let vals: Vec<_> = at5.kvs.iter().map(|kv| kv.value.clone()).collect();
            assert_eq!(vals, [Bytes::from("a2"), Bytes::from("c1")]);
            let mut w = s.watch("/c/", 5).unwrap();
            let ev = w.recv().await.unwrap().unwrap();
            assert_eq!(ev.kv.mod_revision, 6);
            assert_eq!(ev.prev_kv.unwrap().value, Bytes::from("c1"));
            s.compact(6).await.unwrap();
            assert_eq!(log_revisions(&s), vec![2, 6]);
            drop(w);
            s.close().await;
            drop(s);
            // The watch task lets go of the database once it sees the close.
            let mut reopened = None;
            for _ in 0..200 {
                if let Ok(s) = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()) {
                    reopened = Some(s);
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            let s = reopened.expect("reopen");
            let all = s
                .range(RangeRequest {
                    prefix: "/c/".into(),
                    ..Default::default()
                })
                .await
                .unwrap();
            let vals: Vec<_> = all.kvs.iter().map(|kv| kv.value.clone()).collect();
            assert_eq!(vals, [Bytes::from("a2"), Bytes::from("c2")]);
            assert_eq!(s.compacted_revision(), 6);
            s.close().await;
        });
    }

    #[test]
    fn a_data_dir_of_another_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Database::create(dir.path().join("crest.redb")).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(META).unwrap().insert("revision", 7).unwrap();
            txn.commit().unwrap();
        }
        let err = EmbeddedStore::open(dir.path(), EmbeddedOptions::default())
            .err()
            .expect("refused");
        assert!(err.to_string().contains("format 1"), "{err}");
    }

    #[test]
    fn watch_replays_then_follows_without_gaps() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            for i in 0..50 {
                s.create(&format!("/w/{i}"), Bytes::from("v"))
                    .await
                    .unwrap();
            }
            let writer = {
                let s = s.clone();
                tokio::spawn(async move {
                    for i in 50..200 {
                        s.create(&format!("/w/{i}"), Bytes::from("v"))
                            .await
                            .unwrap();
                    }
                })
            };
            let mut w = s.watch("/w/", 10).unwrap();
            let mut expected = 11;
            while expected <= 200 {
                let ev = w.recv().await.unwrap().unwrap();
                assert_eq!(ev.kv.mod_revision, expected);
                expected += 1;
            }
            writer.await.unwrap();
            s.close().await;
        });
    }

    #[test]
    fn concurrent_creates_are_batched_and_unique() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            let t0 = std::time::Instant::now();
            let mut tasks = vec![];
            for t in 0..64 {
                let s = s.clone();
                tasks.push(tokio::spawn(async move {
                    let mut revs = vec![];
                    for i in 0..100 {
                        let WriteOutcome::Done(kv) = s
                            .create(&format!("/k/{t}/{i}"), Bytes::from(vec![b'x'; 2048]))
                            .await
                            .unwrap()
                        else {
                            panic!()
                        };
                        revs.push(kv.mod_revision);
                    }
                    revs
                }));
            }
            let mut all = vec![];
            for t in tasks {
                all.extend(t.await.unwrap());
            }
            let n = all.len();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), n);
            println!("{n} durable creates in {:?}", t0.elapsed());
            let r = s
                .range(RangeRequest {
                    prefix: "/k/".into(),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(r.kvs.len(), n);
            s.close().await;
        });
    }
}
