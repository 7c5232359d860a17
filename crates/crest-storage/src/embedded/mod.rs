//! The embedded backend: redb tables, one writer thread that batches concurrent writes into one
//! durable commit, and in-process watch fan-out. Reads run on tokio's blocking pool, never on an
//! async worker.
//!
//! Tables (format 3):
//! - `kv`:   key -> index (create_rev, mod_rev, version): the latest revision of every live key.
//! - `log`:  revision -> entry (type, key, create_rev, version, the previous revision's index,
//!   value, LZ4-compressed when that pays). Every value is written once, here; `kv` points into
//!   it. Watches replay the log, and reads at an older revision undo the entries after that
//!   revision, newest first.
//! - `meta`: `revision` (last committed), `compacted`, `format`.
//!
//! Compaction to revision C keeps, like etcd, the newest entry at or below C of every live key
//! (it is the key's value at every revision from C on) and everything above C; it drops
//! superseded entries and tombstones. So the entry a `kv` index or a `prev` points to is always
//! there for any revision a reader may still ask for.
//!
//! Watches: a watch from an old revision replays the log in chunks of
//! [`EmbeddedOptions::replay_chunk`] entries (one read transaction each, on the blocking pool,
//! sent before the next is read), until it has caught up with the published revision; then it
//! registers with the writer, which hands it every later event directly. Progress notifications
//! are answered under the same lock the writer publishes under, so they follow every event at or
//! below their revision.
//!
//! Faults: redb refuses every use of a database after one of its file operations failed (a full
//! disk, EIO, an exceeded quota). The writer then fails that batch (and every write after it, at
//! once) with [`StorageError::Io`] naming the cause, reports it through [`Storage::problem`],
//! reopens the database so that reads work again, and retries with backoff until a probe (a
//! small file written and synced in the data dir, then a real commit) succeeds; from then on
//! writes work again, without a restart. A write is answered `Ok` only after its commit
//! succeeded, and a reopened database must hold every revision acknowledged before.

mod format;

use crate::api::{
    BoxFuture, Event, EventType, KeyValue, ProgressRequester, RangeRequest, RangeResult, Result,
    Revision, Storage, StorageError, WatchEvent, WatchRequest, WatchStream, Write, WriteOutcome,
};
use bytes::Bytes;
use format::{
    db_err, decode_entry, encode_entry, entry_key, event_at, internal, value_at, Index,
    StoredValue, KV, LOG, META,
};
use redb::{Database, ReadableDatabase, ReadableTable};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc as tmpsc, oneshot};

/// The on-disk layout described above; a data dir of another format is refused, not misread.
/// Format 2 (the same without compression) is upgraded in place: its entries read unchanged.
const FORMAT: i64 = 3;
const UPGRADES_FROM: i64 = 2;

/// The store's file in the data dir.
const FILE: &str = "crest.redb";
/// The file a recovering writer probes the disk with (written, synced and removed again).
const PROBE_FILE: &str = "crest.redb.probe";
/// How much the probe writes: enough that a disk that is still full fails it.
const PROBE_BYTES: usize = 64 << 10;
/// How often an idle, healthy writer wakes up to notice a fault a reader ran into.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// Options of the embedded store.
#[derive(Clone, Debug)]
pub struct EmbeddedOptions {
    /// redb's page cache. Small: the server keeps its own copy of the latest objects, so the
    /// store is read only for history (watch replays, old list revisions) and by the writer.
    /// 4 MiB: a larger cache fills with the pages of the history kept for watchers (five
    /// minutes' worth) and makes the process grow for that long under steady load (the soak
    /// benchmark: 16 MiB grew RSS by 14 MiB between minutes 2 and 6; 4 MiB stays flat).
    pub cache_bytes: usize,
    /// Events a watcher may fall behind before it is cut off (its stream ends with
    /// `Unavailable`).
    pub watch_buffer: usize,
    /// The most writes committed together.
    pub max_batch: usize,
    /// Log entries read per step of a watch's replay of history.
    pub replay_chunk: usize,
    /// How long a `progress_notify` watch may go without an item before it gets a progress
    /// notification (etcd's default is ten minutes).
    pub progress_interval: Duration,
    /// After a failed write, the first wait before the writer tries to write again; doubled
    /// after each failed attempt, up to `retry_max`.
    pub retry_min: Duration,
    pub retry_max: Duration,
    /// While writes fail, one log line per this interval counts them (the first failure is
    /// logged at once).
    pub fault_log_interval: Duration,
    /// Unit tests: makes writes of the store's file fail with an errno of their choosing.
    #[cfg(test)]
    fail_writes: Option<Arc<FailWrites>>,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            cache_bytes: 4 << 20,
            watch_buffer: 8192,
            max_batch: 1024,
            replay_chunk: 512,
            progress_interval: Duration::from_secs(600),
            retry_min: Duration::from_millis(100),
            retry_max: Duration::from_secs(5),
            fault_log_interval: Duration::from_secs(30),
            #[cfg(test)]
            fail_writes: None,
        }
    }
}

enum Op {
    Create {
        key: String,
        value: Bytes,
        stored: StoredValue,
    },
    Update {
        key: String,
        expected: Revision,
        value: Bytes,
        stored: StoredValue,
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

/// What the writer receives: one write, or the writes of one [`Storage::write_batch`], which
/// go into one commit together.
enum Submission {
    One(Pending),
    Many(Vec<Pending>),
}

/// A live (caught-up) watch. Its channel has one slot more than `watch_buffer`, kept for the
/// final error.
struct Watcher {
    id: u64,
    prefix: String,
    /// Events at or below this are not for it (a watch from a future revision).
    after: Revision,
    tx: tmpsc::Sender<Result<WatchEvent>>,
    /// Something was sent since the last progress tick.
    sent: bool,
}

impl Watcher {
    /// Sends `item` unless the channel is down to the reserved slot; then the watcher is cut off
    /// with `Unavailable` (false: drop it).
    fn offer(&mut self, item: WatchEvent) -> bool {
        if self.tx.capacity() > 1 {
            // A progress notification is not activity: the next tick may send another.
            self.sent |= matches!(item, WatchEvent::Change(_));
            self.tx.try_send(Ok(item)).is_ok()
        } else {
            let _ = self.tx.try_send(Err(StorageError::Unavailable(
                "the watcher fell behind; watch again from the last revision received".into(),
            )));
            false
        }
    }
}

/// The watchers and what they have been sent, under one lock.
struct Hub {
    watchers: Vec<Watcher>,
    /// Every event up to here has been offered to the watchers.
    published: Revision,
    /// Watches still replaying that asked for progress.
    progress_wanted: Vec<u64>,
}

struct Shared {
    /// The database; `None` while the writer reopens it after an I/O error (or could not).
    db: RwLock<Option<Arc<Database>>>,
    /// The store's file.
    path: PathBuf,
    /// Why writes fail now (see the module comment); `None` when the store is healthy.
    fault: Mutex<Option<String>>,
    /// The last committed revision (set right after the commit, before the writers are answered).
    revision: AtomicI64,
    compacted: AtomicI64,
    closed: AtomicBool,
    hub: Mutex<Hub>,
    next_watch: AtomicU64,
    opts: EmbeddedOptions,
    /// Replay chunks read so far (tells tests the replay streams).
    replay_chunks: AtomicUsize,
    /// Which resources' values are worth compressing.
    compression: format::Compression,
}

impl Shared {
    fn hub(&self) -> std::sync::MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The database, for one read or write.
    fn db(&self) -> Result<Arc<Database>> {
        let db = self.db.read().unwrap_or_else(|p| p.into_inner()).clone();
        db.ok_or_else(|| {
            StorageError::Unavailable(match self.fault() {
                Some(cause) => format!("the store is being reopened ({cause})"),
                None => "the store is being reopened".into(),
            })
        })
    }

    fn fault(&self) -> Option<String> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_fault(&self, fault: Option<String>) {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner()) = fault;
    }

    /// A read's error. An I/O error of a read poisons the database as one of a write does: it
    /// is recorded as the fault (the writer then reopens the database); while the store is
    /// faulted, redb's "previous I/O error" is answered with the cause.
    fn read_error(&self, e: StorageError) -> StorageError {
        match e {
            StorageError::Io(m) => {
                let mut fault = self.fault.lock().unwrap_or_else(|p| p.into_inner());
                match &*fault {
                    Some(cause) => StorageError::Io(cause.clone()),
                    None => {
                        let cause = format!("the store cannot read: {m}");
                        tracing::error!(path = %self.path.display(), error = %m, "the store failed a read");
                        *fault = Some(cause.clone());
                        StorageError::Io(cause)
                    }
                }
            }
            other => other,
        }
    }

    fn check_revision(&self, revision: Revision) -> Result<()> {
        let current = self.revision.load(Ordering::SeqCst);
        let compacted = self.compacted.load(Ordering::SeqCst);
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
}

/// The default storage backend: a redb file in the data dir.
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    writer: Mutex<Option<mpsc::Sender<Submission>>>,
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// A revision kept in the meta table (`revision`, `compacted`); 0 before the first.
fn meta_revision(meta: &impl ReadableTable<&'static str, i64>, key: &str) -> Result<Revision> {
    Ok(meta
        .get(key)
        .map_err(db_err)?
        .map(|g| g.value())
        .unwrap_or(0))
}

fn latest_revision(meta: &impl ReadableTable<&'static str, i64>) -> Result<Revision> {
    meta_revision(meta, "revision")
}

/// Opens (or creates) the store's file, owner-only: it holds every object, Secrets included. A
/// file another (or an older) Crest left readable by others is narrowed, with a log line.
fn open_db(path: &Path, opts: &EmbeddedOptions) -> Result<Database> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options
        .open(path)
        .map_err(|e| StorageError::Io(format!("cannot open {}: {e}", path.display())))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(db_err)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| StorageError::Io(format!("cannot narrow {}: {e}", path.display())))?;
            tracing::warn!(
                path = %path.display(),
                was = format!("{mode:04o}"),
                "the store's file was readable by others; narrowed it to 0600"
            );
        }
    }
    let backend = redb::backends::FileBackend::new(file).map_err(db_err)?;
    let mut builder = Database::builder();
    builder.set_cache_size(opts.cache_bytes);
    #[cfg(test)]
    let created = match &opts.fail_writes {
        Some(fail) => builder.create_with_backend(FailingBackend {
            inner: backend,
            fail: fail.clone(),
        }),
        None => builder.create_with_backend(backend),
    };
    #[cfg(not(test))]
    let created = builder.create_with_backend(backend);
    created.map_err(|e| match e {
        redb::DatabaseError::DatabaseAlreadyOpen => {
            StorageError::DataDir(format!("{} is in use by another process", path.display()))
        }
        other => db_err(other),
    })
}

/// The last committed and the compacted revision of a store already in this format with all
/// its tables (a restart), read without a write transaction; `None` when it needs one.
fn current_state(db: &Database) -> Result<Option<(Revision, Revision)>> {
    let txn = db.begin_read().map_err(db_err)?;
    let tables = (|| {
        txn.open_table(KV)?;
        txn.open_table(LOG)?;
        txn.open_table(META)
    })();
    let meta = match tables {
        Ok(meta) => meta,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(db_err(e)),
    };
    if meta.get("format").map_err(db_err)?.map(|g| g.value()) != Some(FORMAT) {
        return Ok(None);
    }
    Ok(Some((latest_revision(&meta)?, compacted_revision(&meta)?)))
}

/// Checks (or writes) the store's format; the last committed and the compacted revision. A
/// restart of a store in this format writes nothing (no commit, no sync).
fn init_db(db: &Database, path: &Path) -> Result<(Revision, Revision)> {
    if let Some(state) = current_state(db)? {
        return Ok(state);
    }
    let txn = db.begin_write().map_err(db_err)?;
    let (r, c) = {
        txn.open_table(KV).map_err(db_err)?;
        txn.open_table(LOG).map_err(db_err)?;
        let mut meta = txn.open_table(META).map_err(db_err)?;
        let format = meta.get("format").map_err(db_err)?.map(|g| g.value());
        let written = meta.get("revision").map_err(db_err)?.is_some();
        match format {
            Some(FORMAT) => {}
            Some(UPGRADES_FROM) => {
                meta.insert("format", FORMAT).map_err(db_err)?;
            }
            None if !written => {
                meta.insert("format", FORMAT).map_err(db_err)?;
            }
            other => {
                return Err(StorageError::DataDir(format!(
                    "{} holds store format {} but this Crest reads format {FORMAT}; \
                     move the data dir away (or use the Crest that wrote it)",
                    path.display(),
                    other.unwrap_or(1)
                )))
            }
        }
        let r = latest_revision(&meta)?;
        let c = compacted_revision(&meta)?;
        (r, c)
    };
    txn.commit().map_err(db_err)?;
    Ok((r, c))
}

fn compacted_revision(meta: &impl ReadableTable<&'static str, i64>) -> Result<Revision> {
    meta_revision(meta, "compacted")
}

impl EmbeddedStore {
    /// Opens (or creates) `dir/crest.redb`, owner-only (0600; a wider file is narrowed, with a
    /// log line). When it cannot be created (a full disk), no half-created file stays behind.
    pub fn open(dir: &Path, opts: EmbeddedOptions) -> Result<Arc<Self>> {
        let path = dir.join(FILE);
        // A probe interrupted by a crash.
        let _ = std::fs::remove_file(dir.join(PROBE_FILE));
        let existed = path.exists();
        let opened = open_db(&path, &opts).and_then(|db| {
            let state = init_db(&db, &path)?;
            Ok((db, state))
        });
        let (db, (revision, compacted)) = match opened {
            Ok(o) => o,
            Err(e) => {
                if !existed {
                    let _ = std::fs::remove_file(&path);
                }
                return Err(e);
            }
        };
        let max_batch = opts.max_batch.max(1);
        let shared = Arc::new(Shared {
            db: RwLock::new(Some(Arc::new(db))),
            path,
            fault: Mutex::new(None),
            revision: AtomicI64::new(revision),
            compacted: AtomicI64::new(compacted),
            closed: AtomicBool::new(false),
            hub: Mutex::new(Hub {
                watchers: vec![],
                published: revision,
                progress_wanted: vec![],
            }),
            next_watch: AtomicU64::new(1),
            opts,
            replay_chunks: AtomicUsize::new(0),
            compression: Default::default(),
        });
        let (tx, rx) = mpsc::channel::<Submission>();
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("crest-store-writer".into())
            .spawn(move || writer_loop(s, rx, max_batch))
            .map_err(internal)?;
        Ok(Arc::new(EmbeddedStore {
            shared,
            writer: Mutex::new(Some(tx)),
            writer_thread: Mutex::new(Some(thread)),
        }))
    }

    async fn submit(&self, op: Op) -> Result<WriteOutcome> {
        let (reply, rx) = oneshot::channel();
        self.send(Submission::One(Pending { op, reply }))?;
        rx.await.map_err(|_| StorageError::Closed)?
    }

    fn send(&self, submission: Submission) -> Result<()> {
        let guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let tx = guard.as_ref().ok_or(StorageError::Closed)?;
        tx.send(submission).map_err(|_| StorageError::Closed)
    }

    /// Runs a read on tokio's blocking pool.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.shared.closed.load(Ordering::SeqCst) {
            return Err(StorageError::Closed);
        }
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || f(&shared).map_err(|e| shared.read_error(e)))
            .await
            .map_err(internal)?
    }

    /// Replay chunks read by watches so far.
    pub fn replay_chunks_read(&self) -> usize {
        self.shared.replay_chunks.load(Ordering::Relaxed)
    }
}

/// A range at the latest revision straight from the kv table, reading only what is returned
/// (plus the keys, when counting). `None` when `req.revision` is no longer the latest.
fn range_latest(shared: &Shared, req: &RangeRequest) -> Result<Option<RangeResult>> {
    let txn = shared.db()?.begin_read().map_err(db_err)?;
    let meta = txn.open_table(META).map_err(db_err)?;
    let latest = latest_revision(&meta)?;
    if req.revision != 0 && req.revision != latest {
        return Ok(None);
    }
    let kv = txn.open_table(KV).map_err(db_err)?;
    let log = txn.open_table(LOG).map_err(db_err)?;
    let from = match &req.start_after {
        Some(s) if s.as_str() >= req.prefix.as_str() => Bound::Excluded(s.as_str()),
        _ => Bound::Included(req.prefix.as_str()),
    };
    let mut kvs = vec![];
    let mut more = false;
    let mut count = 0;
    for item in kv.range::<&str>((from, Bound::Unbounded)).map_err(db_err)? {
        let (k, v) = item.map_err(db_err)?;
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

fn range_historical(shared: &Shared, req: &RangeRequest) -> Result<RangeResult> {
    let txn = shared.db()?.begin_read().map_err(db_err)?;
    let log = txn.open_table(LOG).map_err(db_err)?;
    let (at, revision) = index_at(&txn, &req.prefix, req.revision)?;
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
    txn: &redb::ReadTransaction,
    prefix: &str,
    revision: Revision,
) -> Result<(BTreeMap<String, Index>, Revision)> {
    let kv = txn.open_table(KV).map_err(db_err)?;
    let log = txn.open_table(LOG).map_err(db_err)?;
    let meta = txn.open_table(META).map_err(db_err)?;
    let latest = latest_revision(&meta)?;
    let mut at: BTreeMap<String, Index> = BTreeMap::new();
    for item in kv
        .range::<&str>((Bound::Included(prefix), Bound::Unbounded))
        .map_err(db_err)?
    {
        let (k, v) = item.map_err(db_err)?;
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
        for item in log.range((revision + 1)..=latest).map_err(db_err)?.rev() {
            let (_, v) = item.map_err(db_err)?;
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

fn get_at(shared: &Shared, key: &str, revision: Revision) -> Result<Option<KeyValue>> {
    let txn = shared.db()?.begin_read().map_err(db_err)?;
    let log = txn.open_table(LOG).map_err(db_err)?;
    if revision == 0 {
        let kv = txn.open_table(KV).map_err(db_err)?;
        return match kv.get(key).map_err(db_err)? {
            Some(g) => {
                let idx = Index::decode(g.value())?;
                Ok(Some(idx.with_value(key, value_at(&log, idx.mod_revision)?)))
            }
            None => Ok(None),
        };
    }
    let (at, _) = index_at(&txn, key, revision)?;
    match at.get(key) {
        Some(idx) => Ok(Some(idx.with_value(key, value_at(&log, idx.mod_revision)?))),
        None => Ok(None),
    }
}

fn read_index(table: &redb::Table<&str, &[u8]>, key: &str) -> Result<Option<Index>> {
    match table.get(key).map_err(db_err)? {
        Some(g) => Ok(Some(Index::decode(g.value())?)),
        None => Ok(None),
    }
}

/// Applies one batch in one transaction and one durable commit, then answers and publishes.
/// While the store is faulted (see the module comment) it answers every write with the fault at
/// once and tries to recover at the [`Recovery`]'s pace.
fn writer_loop(shared: Arc<Shared>, rx: mpsc::Receiver<Submission>, max_batch: usize) {
    let mut recovery: Option<Recovery> = None;
    loop {
        let wait = recovery.as_ref().map_or(IDLE_CHECK, Recovery::wait);
        let first = match rx.recv_timeout(wait) {
            Ok(p) => Some(p),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if recovery.is_none() {
            // A reader ran into an I/O error: the database is poisoned for writes too.
            if let Some(cause) = shared.fault() {
                recovery = Some(Recovery::new(&shared.opts, cause));
            }
        }
        if let Some(r) = &mut recovery {
            if r.step(&shared) {
                recovery = None;
            }
        }
        let Some(first) = first else { continue };
        let mut batch = vec![];
        // A write_batch is never split (it may take the batch past max_batch).
        let mut next = Some(first);
        while let Some(s) = next.take() {
            match s {
                Submission::One(p) => batch.push(p),
                Submission::Many(ps) => batch.extend(ps),
            }
            if batch.len() < max_batch {
                next = rx.try_recv().ok();
            }
        }
        if let Some(r) = &mut recovery {
            r.failed += batch.len() as u64;
            let cause = shared.fault().unwrap_or_else(|| r.cause.clone());
            for p in batch {
                let _ = p.reply.send(Err(StorageError::Io(cause.clone())));
            }
            continue;
        }
        match commit_batch(&shared, &batch) {
            Ok((outcomes, events, revision, compacted)) => {
                if let Some(c) = compacted {
                    shared.compacted.store(c, Ordering::SeqCst);
                }
                publish(&shared, &events, revision);
                for (p, o) in batch.into_iter().zip(outcomes) {
                    let _ = p.reply.send(Ok(o));
                }
            }
            Err(StorageError::Io(m)) => {
                // Nothing of the batch was acknowledged; whether its commit reached the disk
                // anyway (a failed final sync) is settled when the database is reopened.
                let cause = format!("the store cannot write: {m}");
                tracing::error!(
                    path = %shared.path.display(),
                    error = %m,
                    "the store failed a write; writes fail until it can write again \
                     (free space on the data dir's disk, or repair the I/O error)"
                );
                shared.set_fault(Some(cause.clone()));
                let mut r = Recovery::new(&shared.opts, cause.clone());
                r.failed = batch.len() as u64;
                recovery = Some(r);
                for p in batch {
                    let _ = p.reply.send(Err(StorageError::Io(cause.clone())));
                }
            }
            Err(e) => {
                for p in batch {
                    let _ = p.reply.send(Err(e.clone()));
                }
            }
        }
    }
}

/// Publishes committed events to the watchers and the new revision to readers.
fn publish(shared: &Shared, events: &[Event], revision: Revision) {
    shared.revision.store(revision, Ordering::SeqCst);
    let mut hub = shared.hub();
    for ev in events {
        // A watcher that cannot keep up is cut off; the client resumes from its last revision.
        let rev = ev.kv.mod_revision;
        hub.watchers.retain_mut(|w| {
            rev <= w.after
                || !ev.kv.key.starts_with(&w.prefix)
                || w.offer(WatchEvent::Change(ev.clone()))
        });
    }
    hub.published = revision;
}

/// The writer's state while the store is faulted: when to try again, and what to log.
struct Recovery {
    /// The fault as first seen.
    cause: String,
    since: Instant,
    delay: Duration,
    next: Instant,
    max: Duration,
    /// The database failed an I/O (redb refuses it from then on) and must be reopened first.
    reopen: bool,
    /// Writes refused since the last log line, and in all.
    failed: u64,
    total_failed: u64,
    logged: Instant,
    log_every: Duration,
}

impl Recovery {
    fn new(opts: &EmbeddedOptions, cause: String) -> Self {
        let now = Instant::now();
        Recovery {
            cause,
            since: now,
            delay: opts.retry_min.max(Duration::from_millis(1)),
            // The first attempt reopens the database at once, so that reads work again.
            next: now,
            max: opts.retry_max.max(opts.retry_min),
            reopen: true,
            failed: 0,
            total_failed: 0,
            logged: now,
            // Bounded below: the writer wakes up for each line.
            log_every: opts.fault_log_interval.max(Duration::from_millis(100)),
        }
    }

    /// How long the writer may wait for writes before it has something to do.
    fn wait(&self) -> Duration {
        let now = Instant::now();
        self.next
            .saturating_duration_since(now)
            .min((self.logged + self.log_every).saturating_duration_since(now))
    }

    /// Tries to recover when it is time; logs the count of refused writes once per interval.
    /// True once the store writes again.
    fn step(&mut self, shared: &Shared) -> bool {
        let now = Instant::now();
        if now >= self.next {
            match self.attempt(shared) {
                Ok(()) => {
                    self.total_failed += std::mem::take(&mut self.failed);
                    shared.set_fault(None);
                    tracing::warn!(
                        path = %shared.path.display(),
                        faulted_secs = self.since.elapsed().as_secs(),
                        failed_writes = self.total_failed,
                        "the store writes again"
                    );
                    return true;
                }
                Err(cause) => {
                    shared.set_fault(Some(cause));
                    self.delay = (self.delay * 2).min(self.max);
                    self.next = Instant::now() + self.delay;
                }
            }
        }
        if now >= self.logged + self.log_every {
            self.logged = now;
            let failed = std::mem::take(&mut self.failed);
            self.total_failed += failed;
            tracing::error!(
                path = %shared.path.display(),
                failed_writes = failed,
                faulted_secs = self.since.elapsed().as_secs(),
                cause = %shared.fault().unwrap_or_default(),
                "the store still cannot write"
            );
        }
        false
    }

    /// Reopens the database if it must be, then probes: a file written and synced in the data
    /// dir (which fails on a disk that is still full without harming the database, so that reads
    /// go on), then a commit of the database itself.
    fn attempt(&mut self, shared: &Shared) -> std::result::Result<(), String> {
        if self.reopen {
            reopen(shared)?;
            self.reopen = false;
        }
        probe_dir(shared).map_err(|e| format!("the store cannot write: {e}"))?;
        probe_commit(shared).map_err(|e| {
            self.reopen = true;
            format!("the store cannot write: {e}")
        })
    }
}

/// Closes the failed database and opens the file again. The reopened database must hold every
/// acknowledged revision; a commit that failed late (its data already on disk) is published now,
/// so that watchers miss nothing.
fn reopen(shared: &Shared) -> std::result::Result<(), String> {
    let old = shared.db.write().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(old) = old {
        let gone = Arc::downgrade(&old);
        match Arc::try_unwrap(old) {
            // Its errors are the failure being recovered from: nothing more to do about them.
            Ok(db) => drop(db.close()),
            // Readers still hold it; the last one closes it (redb holds a lock on the file
            // until then, which a new open would run into).
            Err(old) => drop(old),
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while gone.strong_count() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    // Until this succeeds (the disk fails the writes an open takes: redb repairs a file whose
    // commit failed, and refuses to open it read-only before), reads of the store answer
    // Unavailable; the server's cache still serves its reads.
    let db = open_db(&shared.path, &shared.opts)
        .map_err(|e| format!("the store cannot reopen its file: {e}"))?;
    install(shared, db)
}

/// Makes `db` the store's database after checking it holds every acknowledged revision.
fn install(shared: &Shared, db: Database) -> std::result::Result<(), String> {
    let (on_disk, compacted) = {
        let read = || -> Result<(Revision, Revision)> {
            let txn = db.begin_read().map_err(db_err)?;
            let meta = txn.open_table(META).map_err(db_err)?;
            Ok((latest_revision(&meta)?, compacted_revision(&meta)?))
        };
        read().map_err(|e| format!("the store cannot read: {e}"))?
    };
    let acknowledged = shared.revision.load(Ordering::SeqCst);
    if on_disk < acknowledged {
        let why = format!(
            "the reopened store is at revision {on_disk}, behind the acknowledged revision \
             {acknowledged}; refusing writes"
        );
        tracing::error!(path = %shared.path.display(), "{why}");
        drop(db.close());
        return Err(why);
    }
    *shared.db.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(db));
    shared.compacted.fetch_max(compacted, Ordering::SeqCst);
    if on_disk > acknowledged {
        tracing::warn!(
            acknowledged,
            on_disk,
            "a commit reported as failed reached the disk; publishing its events"
        );
        let (events, _) = replay_chunk(shared, "", acknowledged, on_disk, usize::MAX)
            .map_err(|e| format!("the store cannot read: {e}"))?;
        publish(shared, &events, on_disk);
    }
    Ok(())
}

/// Writes, syncs and removes a small file next to the store's: whether the disk takes writes.
fn probe_dir(shared: &Shared) -> std::io::Result<()> {
    use std::io::Write;
    let path = shared.path.with_file_name(PROBE_FILE);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&path).and_then(|mut f| {
        f.write_all(&vec![0u8; PROBE_BYTES])?;
        f.sync_all()
    });
    let removed = std::fs::remove_file(&path);
    written?;
    removed
}

/// A commit that rewrites the revision as it is: whether the database takes writes again.
fn probe_commit(shared: &Shared) -> Result<()> {
    let txn = shared.db()?.begin_write().map_err(db_err)?;
    {
        let mut meta = txn.open_table(META).map_err(db_err)?;
        let r = latest_revision(&meta)?;
        meta.insert("revision", r).map_err(db_err)?;
    }
    txn.commit().map_err(db_err)
}

/// The outcomes, the events, the new revision and the new compacted revision, if any.
type BatchResult = (Vec<WriteOutcome>, Vec<Event>, Revision, Option<Revision>);

fn commit_batch(shared: &Shared, batch: &[Pending]) -> Result<BatchResult> {
    let txn = shared.db()?.begin_write().map_err(db_err)?;
    let mut outcomes = Vec::with_capacity(batch.len());
    let mut events = vec![];
    let mut rev = shared.revision.load(Ordering::SeqCst);
    // Published (with the revision) only once the commit succeeded.
    let mut compacted_to = None;
    let empty = StoredValue::empty();
    {
        let mut kv = txn.open_table(KV).map_err(db_err)?;
        let mut log = txn.open_table(LOG).map_err(db_err)?;
        let mut meta = txn.open_table(META).map_err(db_err)?;
        for p in batch {
            let (key, cur) = match &p.op {
                Op::Create { key, .. } | Op::Update { key, .. } | Op::Delete { key, .. } => {
                    (key.as_str(), read_index(&kv, key)?)
                }
                Op::Compact { revision } => {
                    let from = compacted_to.unwrap_or(shared.compacted.load(Ordering::SeqCst));
                    if let Some(c) = compact(from, &mut log, &mut meta, (*revision).min(rev))? {
                        compacted_to = Some(c);
                    }
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
            let stored = match &p.op {
                Op::Create { stored, .. } | Op::Update { stored, .. } => stored,
                _ => &empty,
            };
            match ev.event_type {
                EventType::Put => {
                    let mut idx = Vec::with_capacity(24);
                    Index::of(&ev.kv).encode(&mut idx);
                    kv.insert(key, idx.as_slice()).map_err(db_err)?;
                    outcomes.push(WriteOutcome::Done(ev.kv.clone()));
                }
                EventType::Delete => {
                    kv.remove(key).map_err(db_err)?;
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
                stored,
            );
            log.insert(rev, entry.as_slice()).map_err(db_err)?;
            events.push(ev);
        }
        meta.insert("revision", rev).map_err(db_err)?;
    }
    txn.commit().map_err(db_err)?;
    Ok((outcomes, events, rev, compacted_to))
}

/// Compacts history up to `target` (see the module comment): every entry after the previous
/// compaction point and at or below `target` supersedes the entry its `prev` points to, and a
/// tombstone at or below `target` is itself no longer needed.
fn compact(
    from: Revision,
    log: &mut redb::Table<i64, &[u8]>,
    meta: &mut redb::Table<&str, i64>,
    target: Revision,
) -> Result<Option<Revision>> {
    if target <= from {
        return Ok(None);
    }
    let mut stale = vec![];
    for item in log.range((from + 1)..=target).map_err(db_err)? {
        let (r, v) = item.map_err(db_err)?;
        let e = decode_entry(v.value())?;
        if let Some(p) = e.prev {
            stale.push(p.mod_revision);
        }
        if e.delete {
            stale.push(r.value());
        }
    }
    for r in stale {
        log.remove(r).map_err(db_err)?;
    }
    meta.insert("compacted", target).map_err(db_err)?;
    Ok(Some(target))
}

/// One chunk of a watch's replay: the matching events in `(after, through]`, reading at most
/// `chunk` log entries, and the revision it got to.
fn replay_chunk(
    shared: &Shared,
    prefix: &str,
    after: Revision,
    through: Revision,
    chunk: usize,
) -> Result<(Vec<Event>, Revision)> {
    shared.replay_chunks.fetch_add(1, Ordering::Relaxed);
    let txn = shared.db()?.begin_read().map_err(db_err)?;
    let meta = txn.open_table(META).map_err(db_err)?;
    // In this snapshot nothing after `compacted` is gone: if the watch is not behind it, every
    // entry it needs is here.
    let compacted = compacted_revision(&meta)?;
    if after < compacted {
        return Err(StorageError::Compacted {
            requested: after,
            compacted,
        });
    }
    let log = txn.open_table(LOG).map_err(db_err)?;
    let mut out = vec![];
    let mut reached = after;
    let mut scanned = 0;
    for item in log.range((after + 1)..=through).map_err(db_err)? {
        let (r, v) = item.map_err(db_err)?;
        let r = r.value();
        if scanned == chunk {
            break;
        }
        scanned += 1;
        if entry_key(v.value())?.starts_with(prefix) {
            out.push(event_at(&log, r, v.value())?);
        }
        reached = r;
    }
    if scanned < chunk {
        // Everything up to `through` was read (revisions without an entry were compacted away).
        reached = through;
    }
    Ok((out, reached))
}

/// Sends the history of a watch, then registers it with the writer for the live events.
async fn replay_then_follow(
    shared: Arc<Shared>,
    id: u64,
    req: WatchRequest,
    tx: tmpsc::Sender<Result<WatchEvent>>,
) {
    let mut after = req.after;
    let chunk = shared.opts.replay_chunk.max(1);
    loop {
        {
            let mut hub = shared.hub();
            // Checked under the lock `close` drains the watchers under.
            if shared.closed.load(Ordering::SeqCst) {
                drop(hub);
                let _ = tx.send(Err(StorageError::Closed)).await;
                return;
            }
            if after >= hub.published {
                // Caught up: the writer sends the rest.
                let mut w = Watcher {
                    id,
                    prefix: req.prefix,
                    after,
                    tx,
                    sent: false,
                };
                let keep = match hub.progress_wanted.iter().position(|&p| p == id) {
                    Some(i) => {
                        hub.progress_wanted.swap_remove(i);
                        let p = hub.published.max(after);
                        w.offer(WatchEvent::Progress(p))
                    }
                    None => true,
                };
                if keep {
                    hub.watchers.push(w);
                }
                return;
            }
        }
        let through = shared.hub().published;
        let (s, prefix) = (shared.clone(), req.prefix.clone());
        let got = tokio::task::spawn_blocking(move || {
            replay_chunk(&s, &prefix, after, through, chunk).map_err(|e| s.read_error(e))
        })
        .await
        .map_err(internal)
        .and_then(|r| r);
        match got {
            Ok((events, reached)) => {
                for ev in events {
                    if tx.send(Ok(WatchEvent::Change(ev))).await.is_err() {
                        return;
                    }
                }
                after = reached;
            }
            Err(e) => {
                // A watch ends with the errors its contract names: a failing disk is one to
                // watch again after.
                let e = match e {
                    StorageError::Io(m) => StorageError::Unavailable(m),
                    e => e,
                };
                let _ = tx.send(Err(e)).await;
                return;
            }
        }
    }
}

/// How a [`WatchStream`] of this store asks for progress; also cancels the watch when dropped.
struct Progress {
    shared: Weak<Shared>,
    id: u64,
}

impl ProgressRequester for Progress {
    fn request_progress(&self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let mut hub = shared.hub();
        let published = hub.published;
        let id = self.id;
        match hub.watchers.iter().position(|w| w.id == id) {
            Some(i) => {
                let w = &mut hub.watchers[i];
                let p = published.max(w.after);
                if !w.offer(WatchEvent::Progress(p)) {
                    hub.watchers.swap_remove(i);
                }
            }
            None => {
                if !hub.progress_wanted.contains(&id) {
                    hub.progress_wanted.push(id);
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            let mut hub = shared.hub();
            let id = self.id;
            hub.watchers.retain(|w| w.id != id);
            hub.progress_wanted.retain(|&p| p != id);
        }
    }
}

/// Sends a progress notification to watch `id` when nothing was sent to it for a whole
/// interval; ends with the watch.
async fn progress_ticker(
    shared: Weak<Shared>,
    id: u64,
    every: Duration,
    watch: tmpsc::WeakSender<Result<WatchEvent>>,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        if watch.upgrade().is_none_or(|tx| tx.is_closed()) {
            return;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let mut hub = shared.hub();
        let published = hub.published;
        // Not registered yet: still replaying history, which is activity.
        if let Some(i) = hub.watchers.iter().position(|w| w.id == id) {
            let w = &mut hub.watchers[i];
            if std::mem::take(&mut w.sent) {
                continue;
            }
            let p = published.max(w.after);
            if !w.offer(WatchEvent::Progress(p)) {
                hub.watchers.swap_remove(i);
            }
        }
    }
}

impl Storage for EmbeddedStore {
    fn current_revision(&self) -> BoxFuture<'_, Result<Revision>> {
        let r = if self.shared.closed.load(Ordering::SeqCst) {
            Err(StorageError::Closed)
        } else {
            Ok(self.shared.revision.load(Ordering::SeqCst))
        };
        Box::pin(std::future::ready(r))
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
            self.shared.check_revision(revision)?;
            let key = key.to_string();
            self.read(move |s| get_at(s, &key, revision)).await
        })
    }

    fn range(&self, req: RangeRequest) -> BoxFuture<'_, Result<RangeResult>> {
        Box::pin(async move {
            self.shared.check_revision(req.revision)?;
            self.read(move |s| match range_latest(s, &req)? {
                Some(r) => Ok(r),
                // An older revision: rebuild it from the log.
                None => range_historical(s, &req),
            })
            .await
        })
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(async move {
            let stored = self.shared.compression.store(key, &value);
            self.submit(Op::Create {
                key: key.to_string(),
                value,
                stored,
            })
            .await
        })
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(async move {
            let stored = self.shared.compression.store(key, &value);
            self.submit(Op::Update {
                key: key.to_string(),
                expected,
                value,
                stored,
            })
            .await
        })
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

    /// One submission to the writer: the writes go into one commit (one sync), in order.
    fn write_batch(&self, writes: Vec<Write>) -> BoxFuture<'_, Result<Vec<WriteOutcome>>> {
        Box::pin(async move {
            let mut pending = Vec::with_capacity(writes.len());
            let mut replies = Vec::with_capacity(writes.len());
            for w in writes {
                let op = match w {
                    Write::Create { key, value } => Op::Create {
                        stored: self.shared.compression.store(&key, &value),
                        key,
                        value,
                    },
                    Write::Update {
                        key,
                        expected,
                        value,
                    } => Op::Update {
                        stored: self.shared.compression.store(&key, &value),
                        key,
                        expected,
                        value,
                    },
                    Write::Delete { key, expected } => Op::Delete { key, expected },
                };
                let (reply, rx) = oneshot::channel();
                pending.push(Pending { op, reply });
                replies.push(rx);
            }
            if pending.is_empty() {
                return Ok(vec![]);
            }
            self.send(Submission::Many(pending))?;
            let mut outcomes = Vec::with_capacity(replies.len());
            for rx in replies {
                outcomes.push(rx.await.map_err(|_| StorageError::Closed)??);
            }
            Ok(outcomes)
        })
    }

    fn watch(&self, req: WatchRequest) -> BoxFuture<'_, Result<WatchStream>> {
        Box::pin(async move {
            if self.shared.closed.load(Ordering::SeqCst) {
                return Err(StorageError::Closed);
            }
            let compacted = self.compacted_revision();
            if req.after < compacted {
                return Err(StorageError::Compacted {
                    requested: req.after,
                    compacted,
                });
            }
            let id = self.shared.next_watch.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = tmpsc::channel(self.shared.opts.watch_buffer.max(1) + 1);
            if req.progress_notify {
                tokio::spawn(progress_ticker(
                    Arc::downgrade(&self.shared),
                    id,
                    self.shared.opts.progress_interval,
                    tx.downgrade(),
                ));
            }
            {
                // Caught up already (the usual case): registered now, no replay task.
                let mut hub = self.shared.hub();
                if self.shared.closed.load(Ordering::SeqCst) {
                    return Err(StorageError::Closed);
                }
                if req.after >= hub.published {
                    hub.watchers.push(Watcher {
                        id,
                        prefix: req.prefix,
                        after: req.after,
                        tx,
                        sent: false,
                    });
                    return Ok(WatchStream::new(
                        rx,
                        Arc::new(Progress {
                            shared: Arc::downgrade(&self.shared),
                            id,
                        }),
                    ));
                }
            }
            tokio::spawn(replay_then_follow(self.shared.clone(), id, req, tx));
            Ok(WatchStream::new(
                rx,
                Arc::new(Progress {
                    shared: Arc::downgrade(&self.shared),
                    id,
                }),
            ))
        })
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move { self.submit(Op::Compact { revision }).await.map(|_| ()) })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
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
            let mut hub = self.shared.hub();
            for w in hub.watchers.drain(..) {
                let _ = w.tx.try_send(Err(StorageError::Closed));
            }
            hub.progress_wanted.clear();
        })
    }

    fn problem(&self) -> Option<String> {
        self.shared.fault()
    }
}

/// A unit test's switch: while it holds an errno, writes, syncs and resizes of the store's file
/// fail with it (EIO, EDQUOT, ...), as a failing disk's would.
#[cfg(test)]
#[derive(Debug, Default)]
struct FailWrites(std::sync::atomic::AtomicI32);

#[cfg(test)]
#[derive(Debug)]
struct FailingBackend {
    inner: redb::backends::FileBackend,
    fail: Arc<FailWrites>,
}

#[cfg(test)]
impl FailingBackend {
    fn check(&self) -> std::io::Result<()> {
        match self.fail.0.load(Ordering::SeqCst) {
            0 => Ok(()),
            errno => Err(std::io::Error::from_raw_os_error(errno)),
        }
    }
}

#[cfg(test)]
impl redb::StorageBackend for FailingBackend {
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        self.inner.read(offset, out)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.check()?;
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> std::io::Result<()> {
        self.check()?;
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.check()?;
        self.inner.write(offset, data)
    }
    fn close(&self) -> std::io::Result<()> {
        self.inner.close()
    }
    fn try_lock_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> std::result::Result<bool, redb::BackendError> {
        self.inner.try_lock_range(start, end)
    }
    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> std::result::Result<bool, redb::BackendError> {
        self.inner.try_lock_shared_range(start, end)
    }
    fn lock_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> std::result::Result<(), redb::BackendError> {
        self.inner.lock_range(start, end)
    }
    fn lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> std::result::Result<(), redb::BackendError> {
        self.inner.lock_shared_range(start, end)
    }
    fn unlock_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> std::result::Result<(), redb::BackendError> {
        self.inner.unlock_range(start, end)
    }
    fn query_lock_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> std::result::Result<bool, redb::BackendError> {
        self.inner.query_lock_range(start, end)
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

    fn log_revisions(s: &EmbeddedStore) -> Vec<Revision> {
        let txn = s.shared.db().unwrap().begin_read().unwrap();
        let log = txn.open_table(LOG).unwrap();
        log.iter().unwrap().map(|i| i.unwrap().0.value()).collect()
    }

    async fn next_change(w: &mut WatchStream) -> Event {
        match w.next().await {
            Some(Ok(WatchEvent::Change(ev))) => ev,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn compaction_drops_superseded_entries_and_tombstones() {
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
            let mut w = s.watch(WatchRequest::new("/c/", 5)).await.unwrap();
            let ev = next_change(&mut w).await;
            assert_eq!(ev.kv.mod_revision, 6);
            assert_eq!(ev.prev_kv.unwrap().value, Bytes::from("c1"));
            s.compact(6).await.unwrap();
            assert_eq!(log_revisions(&s), vec![2, 6]);
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
        assert!(matches!(err, StorageError::DataDir(_)), "{err:?}");
        assert!(err.to_string().contains("format 1"), "{err}");
    }

    #[test]
    fn values_are_compressed_when_it_pays_and_read_back_whole() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            let json = format!(r#"{{"spec":{{"payload":"{}"}}}}"#, "x".repeat(2000));
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            let noise: Vec<u8> = (0..2000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 24) as u8
                })
                .collect();
            s.create("/v/json", Bytes::from(json.clone()))
                .await
                .unwrap();
            s.create("/v/noise", Bytes::from(noise.clone()))
                .await
                .unwrap();
            s.create("/v/small", Bytes::from("tiny")).await.unwrap();
            let sizes: Vec<usize> = {
                let txn = s.shared.db().unwrap().begin_read().unwrap();
                let log = txn.open_table(LOG).unwrap();
                log.iter()
                    .unwrap()
                    .map(|i| i.unwrap().1.value().len())
                    .collect()
            };
            assert!(sizes[0] < 200, "compressed JSON entry: {} bytes", sizes[0]);
            assert!(sizes[1] > 2000, "incompressible values stay as they are");
            assert_eq!(
                s.get("/v/json", 0).await.unwrap().unwrap().value,
                json.as_bytes()
            );
            assert_eq!(s.get("/v/noise", 0).await.unwrap().unwrap().value, noise);
            assert_eq!(s.get("/v/small", 0).await.unwrap().unwrap().value, "tiny");
            let mut w = s.watch(WatchRequest::new("/v/", 0)).await.unwrap();
            assert_eq!(next_change(&mut w).await.kv.value, json.as_bytes());
            s.close().await;
        });
    }

    /// Format 2 wrote the same entries without compression: such a data dir is upgraded in place.
    #[test]
    fn a_format_2_data_dir_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Database::create(dir.path().join("crest.redb")).unwrap();
            let txn = db.begin_write().unwrap();
            {
                let mut meta = txn.open_table(META).unwrap();
                meta.insert("format", 2).unwrap();
                meta.insert("revision", 1).unwrap();
                let idx = Index {
                    create_revision: 1,
                    mod_revision: 1,
                    version: 1,
                };
                let mut b = vec![];
                idx.encode(&mut b);
                txn.open_table(KV)
                    .unwrap()
                    .insert("/old/a", b.as_slice())
                    .unwrap();
                // Format 2's layout: type 0, key, create, version, no prev, the value as is.
                let mut e = vec![0u8];
                e.extend_from_slice(&6u32.to_le_bytes());
                e.extend_from_slice(b"/old/a");
                e.extend_from_slice(&1i64.to_le_bytes());
                e.extend_from_slice(&1i64.to_le_bytes());
                e.extend_from_slice(&[0; 24]);
                e.extend_from_slice(b"old value");
                txn.open_table(LOG)
                    .unwrap()
                    .insert(1, e.as_slice())
                    .unwrap();
            }
            txn.commit().unwrap();
        }
        rt().block_on(async {
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            assert_eq!(
                s.get("/old/a", 0).await.unwrap().unwrap().value,
                "old value"
            );
            let kv = s
                .create("/old/b", Bytes::from("x".repeat(500)))
                .await
                .unwrap();
            assert!(matches!(kv, WriteOutcome::Done(ref k) if k.mod_revision == 2));
            s.close().await;
        });
        let db = Database::open(dir.path().join("crest.redb")).unwrap();
        let txn = db.begin_read().unwrap();
        let format = txn
            .open_table(META)
            .unwrap()
            .get("format")
            .unwrap()
            .unwrap()
            .value();
        assert_eq!(format, FORMAT);
    }

    /// A watch from far back reads the log a chunk at a time, no further ahead than its buffer
    /// allows, instead of loading the whole history.
    #[test]
    fn watch_replay_streams_in_bounded_chunks() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let opts = EmbeddedOptions {
                replay_chunk: 64,
                watch_buffer: 128,
                ..Default::default()
            };
            let s = EmbeddedStore::open(dir.path(), opts).unwrap();
            const N: i64 = 5000;
            let mut tasks = vec![];
            for t in 0..10 {
                let s = s.clone();
                tasks.push(tokio::spawn(async move {
                    for i in 0..N / 10 {
                        s.create(&format!("/s/{t}/{i}"), Bytes::from(vec![b'v'; 256]))
                            .await
                            .unwrap();
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            let mut w = s.watch(WatchRequest::new("/s/", 0)).await.unwrap();
            assert_eq!(next_change(&mut w).await.kv.mod_revision, 1);
            tokio::time::sleep(Duration::from_millis(200)).await;
            let ahead = s.replay_chunks_read();
            assert!(
                ahead <= 4,
                "read {ahead} chunks ahead of a 128-event buffer"
            );
            for r in 2..=N {
                assert_eq!(next_change(&mut w).await.kv.mod_revision, r);
            }
            assert!(s.replay_chunks_read() >= (N / 64) as usize);
            s.close().await;
        });
    }

    /// Any I/O error of the store's file, not only a full disk: every write fails with the cause
    /// while it lasts, and writes work again once it is gone, with nothing acknowledged lost.
    #[test]
    fn writes_fail_with_any_io_error_and_resume_after_it() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let fail = Arc::new(FailWrites::default());
            let opts = EmbeddedOptions {
                retry_min: Duration::from_millis(10),
                retry_max: Duration::from_millis(50),
                fail_writes: Some(fail.clone()),
                ..Default::default()
            };
            let s = EmbeddedStore::open(dir.path(), opts.clone()).unwrap();
            let mut w = s.watch(WatchRequest::new("/e/", 0)).await.unwrap();
            let mut acked = vec![];
            let mut n = 0;
            // EIO, then EDQUOT (a quota), then ENOSPC.
            for (errno, text) in [
                (5, "Input/output error"),
                (122, "Disk quota exceeded"),
                (28, "No space left on device"),
            ] {
                for _ in 0..5 {
                    n += 1;
                    let key = format!("/e/{n}");
                    match s.create(&key, Bytes::from("v")).await.unwrap() {
                        WriteOutcome::Done(kv) => acked.push((key, kv.mod_revision)),
                        other => panic!("{other:?}"),
                    }
                }
                fail.0.store(errno, Ordering::SeqCst);
                for i in 0..3 {
                    match s
                        .create(&format!("/e/failed-{errno}-{i}"), Bytes::from("x"))
                        .await
                    {
                        Err(StorageError::Io(m)) => assert!(m.contains(text), "{m}"),
                        other => panic!("{errno}: {other:?}"),
                    }
                }
                let problem = s.problem().expect("faulted");
                assert!(problem.contains(text), "{problem}");
                // A disk that fails every write also fails the repair that reopening the
                // database takes: reads answer Unavailable with the cause meanwhile (a full disk
                // reopens fine, see tests/disk_faults.rs).
                let (key, rev) = acked.last().cloned().unwrap();
                match s.get(&key, 0).await {
                    Ok(Some(kv)) => assert_eq!(kv.mod_revision, rev),
                    Err(StorageError::Unavailable(m) | StorageError::Io(m)) => {
                        assert!(m.contains(text), "{m}")
                    }
                    other => panic!("{other:?}"),
                }
                fail.0.store(0, Ordering::SeqCst);
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                loop {
                    n += 1;
                    let key = format!("/e/{n}");
                    match s.create(&key, Bytes::from("v")).await {
                        Ok(WriteOutcome::Done(kv)) => {
                            acked.push((key, kv.mod_revision));
                            break;
                        }
                        Err(StorageError::Io(_)) => {}
                        other => panic!("{other:?}"),
                    }
                    assert!(
                        std::time::Instant::now() < deadline,
                        "no recovery from {errno}"
                    );
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                assert_eq!(s.problem(), None);
            }
            // Revisions are dense: no failed write took one, and the watch saw exactly the
            // acknowledged writes.
            let revs: Vec<Revision> = acked.iter().map(|(_, r)| *r).collect();
            assert_eq!(revs, (1..=acked.len() as i64).collect::<Vec<_>>());
            for (key, rev) in &acked {
                let ev = next_change(&mut w).await;
                assert_eq!((&ev.kv.key, ev.kv.mod_revision), (key, *rev));
            }
            s.close().await;
            drop(s);
            let s = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).unwrap();
            for (key, rev) in &acked {
                let kv = s.get(key, 0).await.unwrap().expect("kept");
                assert_eq!(kv.mod_revision, *rev);
            }
            let all = s
                .range(RangeRequest {
                    prefix: "/e/".into(),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(all.kvs.len(), acked.len());
            s.close().await;
        });
    }

    #[test]
    fn a_watcher_that_falls_behind_is_cut_off_with_unavailable() {
        rt().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let opts = EmbeddedOptions {
                watch_buffer: 8,
                ..Default::default()
            };
            let s = EmbeddedStore::open(dir.path(), opts).unwrap();
            let mut w = s.watch(WatchRequest::new("/l/", 0)).await.unwrap();
            // Registered once the (empty) replay is done.
            w.request_progress();
            assert!(matches!(w.next().await, Some(Ok(WatchEvent::Progress(0)))));
            for i in 0..20 {
                s.create(&format!("/l/{i}"), Bytes::new()).await.unwrap();
            }
            let mut got = 0;
            loop {
                match w.next().await {
                    Some(Ok(WatchEvent::Change(_))) => got += 1,
                    Some(Err(StorageError::Unavailable(_))) => break,
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(got, 8);
            assert!(w.next().await.is_none());
            s.close().await;
        });
    }
}
