//! Crest's storage backend on etcd v3: [`EtcdStore`] implements [`crest_storage::Storage`] the
//! way kube-apiserver's etcd3 store uses etcd, so that Crest and kube-apiserver could share one
//! etcd layout.
//!
//! # Key layout
//! Crest's keys all start with `/registry/` (`/registry/namespaces/default`). The etcd key is
//! [`EtcdOptions::prefix`] followed by the rest of the key after `/registry`: with the default
//! prefix `/registry` keys are stored unchanged (kube-apiserver's layout); with `--etcd-prefix
//! /crest-a` the key above is `/crest-a/namespaces/default`. Every key read back (ranges, gets,
//! watch events, previous values) is mapped back. Keys (and range prefixes) not under
//! `/registry` (the key `/registry` itself or `/registry/...`) are refused with
//! [`StorageError::Internal`]: the mapping is a bijection only on them.
//!
//! # Revisions and writes
//! Revisions are etcd's own (an empty etcd is at revision 1, its first write gets 2). Each write
//! is one etcd transaction, a compare-and-swap as kube-apiserver's `GuaranteedUpdate` and
//! `Delete` do:
//! - create: `If(create_revision(key) == 0) Then(Put) Else(Get)`;
//! - update: `If(mod_revision(key) == expected && version(key) > 0) Then(Put with prev_kv)
//!   Else(Get)`;
//! - delete: `If(mod_revision(key) == expected)` (or `version(key) > 0` for `expected == 0`)
//!   `Then(Delete with prev_kv) Else(Get)`.
//!
//! A failed compare answers [`WriteOutcome::Conflict`] with the key's current state from the
//! `Else` branch; the successful outcome is built from the transaction's header revision.
//!
//! # Consistent revision
//! [`Storage::current_revision`] is one linearizable, count-only range of a single key whose
//! response header carries the store revision (as kube-apiserver's `GetCurrentResourceVersion`).
//! Concurrent callers share requests: a caller joins the next request to be sent, never one that
//! is already on the wire (which could answer a revision older than the caller's own
//! acknowledged writes), so at most one request is in flight and one waiting.
//!
//! # Watch
//! One etcd watch (its own gRPC stream) per [`WatchStream`], on the mapped prefix, with
//! `prev_kv`, from `after + 1` and `progress_notify` when asked. Events become
//! [`WatchEvent::Change`]; a response without events that is neither the creation nor a cancel
//! becomes [`WatchEvent::Progress`] with its header revision; a compaction cancel ends the stream
//! with [`StorageError::Compacted`]; a broken stream with [`StorageError::Unavailable`].
//! [`WatchStream::request_progress`] sends etcd's `ProgressRequest`. Delivery to the consumer
//! goes through a bounded channel: when it is full the task stops reading from etcd, so gRPC
//! flow control holds etcd back; a consumer that makes no room for a minute is cut off with
//! `Unavailable`. Dropping the stream cancels the etcd watch.
//!
//! # Failures
//! Every unary request is bounded by [`EtcdOptions::request_timeout`] (expiry:
//! [`StorageError::Timeout`]). A request that could not reach any member (connection refused)
//! is retried on the other endpoints within that bound, and reads are retried on any
//! `Unavailable`; what is left is [`StorageError::Unavailable`]. Members coming back are picked up
//! again by the same client: a store never needs reconnecting.

use bytes::Bytes;
use crest_storage::{
    BoxFuture, Event, EventType, KeyValue, ProgressRequester, RangeRequest, RangeResult, Result,
    Revision, Storage, StorageError, WatchEvent, WatchRequest, WatchStream, Write, WriteOutcome,
};
use etcd_client::{
    Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, KvClient, PutOptions, Txn,
    TxnOp, TxnOpResponse, WatchClient, WatchOptions,
};
use futures::future::{FutureExt, Shared};
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};

#[cfg(feature = "testing")]
pub mod testing;

/// TLS material for the etcd client connection (PEM files), as kube-apiserver's
/// `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile`.
#[derive(Clone, Debug, Default)]
pub struct EtcdTls {
    /// The CA bundle that signed etcd's serving certificates (the system roots are not used).
    pub ca_file: Option<PathBuf>,
    /// The client certificate presented to etcd (needs `key_file`).
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key.
    pub key_file: Option<PathBuf>,
}

/// How to reach etcd.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// Client URLs of the members, `http://127.0.0.1:2379` or `https://...` (`--etcd-servers`).
    pub endpoints: Vec<String>,
    /// The etcd key prefix that stands for `/registry` (`--etcd-prefix`, default `/registry`).
    pub prefix: String,
    /// TLS for `https://` endpoints.
    pub tls: Option<EtcdTls>,
    /// Bound of every unary request (default 5 s); expiry answers [`StorageError::Timeout`].
    pub request_timeout: Duration,
    /// How long [`EtcdStore::connect`] waits for a first answer (default 2 s).
    pub dial_timeout: Duration,
}

impl Default for EtcdOptions {
    fn default() -> Self {
        EtcdOptions {
            endpoints: vec!["http://127.0.0.1:2379".into()],
            prefix: "/registry".into(),
            tls: None,
            request_timeout: Duration::from_secs(5),
            dial_timeout: Duration::from_secs(2),
        }
    }
}

/// How long a watch waits for its consumer to make room before cutting it off.
const WATCH_STALL: Duration = Duration::from_secs(60);
/// Items a watch buffers for its consumer.
const WATCH_BUFFER: usize = 1024;
/// Largest message accepted from etcd (a large range or a large watch response).
const MAX_MESSAGE: usize = 512 << 20;
/// Crest's key root, replaced by the prefix.
const ROOT: &str = "/registry";

type SharedRev = Shared<BoxFuture<'static, Result<Revision>>>;

struct Inner {
    kv: KvClient,
    watch: WatchClient,
    prefix: String,
    request_timeout: Duration,
    closed: AtomicBool,
    close_tx: tokio::sync::watch::Sender<bool>,
    compacted: AtomicI64,
    /// `current_revision`'s request waiting to be sent (callers join it), with its id.
    rev_next: std::sync::Mutex<Option<(u64, SharedRev)>>,
    /// Held by the one `current_revision` request on the wire.
    rev_wire: tokio::sync::Mutex<()>,
    rev_ids: AtomicU64,
}

/// The etcd v3 storage backend. See the [crate documentation](crate).
pub struct EtcdStore {
    inner: Arc<Inner>,
}

/// How a failed etcd call failed.
enum Failure {
    /// The request did not reach a member: safe to send again.
    NotSent(String),
    Unavailable(String),
    Timeout(String),
    Compacted,
    Future,
    Other(String),
    /// etcd's backend quota is exhausted (`etcdserver: mvcc: database space exceeded`).
    NoSpace(String),
}

impl Failure {
    /// The storage error of a call (`what`) that failed this way. `Compacted` and
    /// `FutureRevision` carry no revisions: the caller, which knows them, fills them in.
    fn into_error(self, what: &str) -> StorageError {
        match self {
            Failure::NotSent(m) | Failure::Unavailable(m) => {
                StorageError::Unavailable(format!("etcd {what}: {m}"))
            }
            Failure::Timeout(m) => StorageError::Timeout(format!("etcd {what}: {m}")),
            Failure::Compacted => StorageError::Compacted {
                requested: 0,
                compacted: 0,
            },
            Failure::Future => StorageError::FutureRevision {
                requested: 0,
                current: 0,
            },
            Failure::Other(m) => StorageError::Internal(format!("etcd {what}: {m}")),
            Failure::NoSpace(m) => StorageError::Io(m),
        }
    }
}

fn classify(e: etcd_client::Error) -> Failure {
    use tonic::Code;
    match e {
        etcd_client::Error::GRpcStatus(st) => {
            let msg = st.message().to_string();
            let full = format!("{st}");
            if msg.contains("required revision has been compacted") {
                return Failure::Compacted;
            }
            if msg.contains("required revision is a future revision") {
                return Failure::Future;
            }
            // etcd's NOSPACE alarm (its backend reached --quota-backend-bytes): every write
            // fails until an operator compacts, defragments and disarms it, while reads go on.
            // kube-apiserver answers it as a storage error it has no status for: 500 with
            // etcd's message.
            if st.code() == Code::ResourceExhausted && msg.contains("database space exceeded") {
                return Failure::NoSpace(msg);
            }
            let source = std::error::Error::source(&st)
                .map(|s| format!("{s:?}"))
                .unwrap_or_default();
            let not_sent = source.contains("ConnectError")
                || source.contains("Connection refused")
                || msg.contains("tcp connect error")
                || msg.contains("error trying to connect");
            match st.code() {
                Code::Unavailable if not_sent => Failure::NotSent(full),
                Code::DeadlineExceeded => Failure::Timeout(full),
                _ if source.contains("TimeoutExpired") => Failure::Timeout(full),
                _ if msg.contains("request timed out") => Failure::Timeout(full),
                Code::Unavailable | Code::Cancelled | Code::Aborted | Code::ResourceExhausted => {
                    Failure::Unavailable(full)
                }
                Code::Unknown if msg.contains("transport") || msg.contains("connection") => {
                    Failure::Unavailable(full)
                }
                _ if msg.contains("no leader") || msg.contains("leader changed") => {
                    Failure::Unavailable(full)
                }
                _ => Failure::Other(full),
            }
        }
        etcd_client::Error::TransportError(e) => Failure::NotSent(e.to_string()),
        etcd_client::Error::IoError(e) => Failure::Unavailable(e.to_string()),
        etcd_client::Error::WatchError(e) => Failure::Unavailable(e),
        other => Failure::Other(other.to_string()),
    }
}

/// Is this a read (safe to send twice) or a write (sent again only when it surely did not
/// arrive)?
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
}

fn prefix_end(key: &[u8]) -> Vec<u8> {
    let mut end = key.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // All 0xff (or empty): to the end of the keyspace.
    vec![0]
}

impl Inner {
    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            Err(StorageError::Closed)
        } else {
            Ok(())
        }
    }

    fn note_compacted(&self, rev: Revision) {
        self.compacted.fetch_max(rev, Ordering::AcqRel);
    }

    /// The etcd key of a Crest key.
    fn etcd_key(&self, key: &str) -> Result<Vec<u8>> {
        match key.strip_prefix(ROOT) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                Ok(format!("{}{rest}", self.prefix).into_bytes())
            }
            _ => Err(StorageError::Internal(format!(
                "key {key:?} is not under {ROOT}/"
            ))),
        }
    }

    /// The Crest key of an etcd key.
    fn crest_key(&self, key: &[u8]) -> Result<String> {
        let s = std::str::from_utf8(key)
            .map_err(|_| StorageError::Internal(format!("etcd key {key:?} is not UTF-8")))?;
        match s.strip_prefix(self.prefix.as_str()) {
            Some(rest) => Ok(format!("{ROOT}{rest}")),
            None => Err(StorageError::Internal(format!(
                "etcd key {s:?} is not under the prefix {:?}",
                self.prefix
            ))),
        }
    }

    fn kv(&self, kv: &etcd_client::KeyValue) -> Result<KeyValue> {
        Ok(KeyValue {
            key: self.crest_key(kv.key())?,
            value: Bytes::copy_from_slice(kv.value()),
            create_revision: kv.create_revision(),
            mod_revision: kv.mod_revision(),
            version: kv.version(),
        })
    }

    /// One unary call, bounded by the request timeout, sent again on other members while it
    /// cannot reach one (and, for reads, while etcd is unavailable) within that bound.
    async fn call<T, F, Fut>(&self, kind: Kind, what: &str, mut f: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        self.check_open()?;
        let deadline = tokio::time::Instant::now() + self.request_timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            let failure = match tokio::time::timeout_at(deadline, f()).await {
                Err(_) => {
                    return Err(StorageError::Timeout(format!(
                        "etcd {what}: no answer within {:?}",
                        self.request_timeout
                    )))
                }
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => classify(e),
            };
            let retry = match &failure {
                Failure::NotSent(_) => true,
                Failure::Unavailable(_) => kind == Kind::Read,
                _ => false,
            };
            let now = tokio::time::Instant::now();
            if !retry || now + backoff >= deadline || self.closed.load(Ordering::Acquire) {
                return Err(failure.into_error(what));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(200));
        }
    }

    /// The store revision, from a fresh request.
    async fn fetch_revision(&self) -> Result<Revision> {
        let key = self.etcd_key(ROOT)?;
        let resp = self
            .call(Kind::Read, "revision", || {
                let mut kv = self.kv.clone();
                let key = key.clone();
                async move { kv.get(key, Some(GetOptions::new().with_count_only())).await }
            })
            .await?;
        header_revision(resp.header())
    }

    /// The compacted revision as etcd knows it: a watch from revision 1 is canceled with it when
    /// anything was compacted.
    async fn probe_compacted(&self) -> Result<Revision> {
        self.check_open()?;
        let key = self.etcd_key(ROOT)?;
        let probe = async {
            let mut w = self.watch.clone();
            let (mut sender, mut stream) = w
                .watch(key, Some(WatchOptions::new().with_start_revision(1)))
                .await?
                .split();
            let mut got = 0;
            // The cancel comes after the creation, within etcd's watcher sync interval (100 ms);
            // nothing else is sent for this key unless it is written.
            loop {
                match tokio::time::timeout(Duration::from_millis(500), stream.message()).await {
                    Ok(Ok(Some(resp))) => {
                        if resp.compact_revision() > 0 {
                            got = resp.compact_revision();
                            break;
                        }
                        if resp.canceled() {
                            break;
                        }
                    }
                    Ok(Ok(None)) => break,
                    Ok(Err(e)) => return Err(e),
                    Err(_) => break,
                }
            }
            let _ = sender.cancel(0).await;
            Ok::<_, etcd_client::Error>(got)
        };
        match tokio::time::timeout(self.request_timeout, probe).await {
            Err(_) => Err(StorageError::Timeout("etcd compaction probe".into())),
            Ok(Err(e)) => Err(match classify(e).into_error("compaction probe") {
                StorageError::Compacted { .. } | StorageError::FutureRevision { .. } => {
                    StorageError::Internal("etcd compaction probe".into())
                }
                e => e,
            }),
            Ok(Ok(rev)) => {
                self.note_compacted(rev);
                Ok(rev)
            }
        }
    }

    /// Fills in the revisions of a `Compacted` or `FutureRevision` error of a read at
    /// `requested`.
    async fn revision_error(&self, e: StorageError, requested: Revision) -> StorageError {
        match e {
            StorageError::Compacted { .. } => {
                let compacted = match self.probe_compacted().await {
                    Ok(c) if c > 0 => c,
                    _ => self.compacted.load(Ordering::Acquire),
                };
                StorageError::Compacted {
                    requested,
                    compacted,
                }
            }
            StorageError::FutureRevision { .. } => match self.fetch_revision().await {
                Ok(current) => StorageError::FutureRevision { requested, current },
                Err(e) => e,
            },
            e => e,
        }
    }

    async fn range(&self, req: RangeRequest) -> Result<RangeResult> {
        let prefix = self.etcd_key(&req.prefix)?;
        let end = prefix_end(&prefix);
        let mut start = prefix.clone();
        if let Some(after) = &req.start_after {
            let mut s = self.etcd_key(after)?;
            s.push(0);
            if s > start {
                start = s;
            }
        }
        if start >= end {
            // Nothing can match; still answer the revision the read was served at.
            let revision = if req.revision > 0 {
                req.revision
            } else {
                self.fetch_revision().await?
            };
            return Ok(RangeResult {
                kvs: vec![],
                revision,
                more: false,
                count: 0,
            });
        }
        let mut opts = GetOptions::new().with_range(end);
        if req.limit > 0 {
            opts = opts.with_limit(i64::try_from(req.limit).unwrap_or(i64::MAX));
        }
        if req.revision > 0 {
            opts = opts.with_revision(req.revision);
        }
        let got = self
            .call(Kind::Read, "range", || {
                let mut kv = self.kv.clone();
                let (start, opts) = (start.clone(), opts.clone());
                async move { kv.get(start, Some(opts)).await }
            })
            .await;
        let resp = match got {
            Ok(r) => r,
            Err(e) => return Err(self.revision_error(e, req.revision).await),
        };
        let kvs = resp
            .kvs()
            .iter()
            .map(|kv| self.kv(kv))
            .collect::<Result<Vec<_>>>()?;
        let revision = if req.revision > 0 {
            req.revision
        } else {
            header_revision(resp.header())?
        };
        let more = resp.more();
        let count = if req.count {
            usize::try_from(resp.count()).unwrap_or(usize::MAX)
        } else {
            kvs.len() + usize::from(more)
        };
        Ok(RangeResult {
            kvs,
            revision,
            more,
            count,
        })
    }

    async fn txn(&self, what: &str, txn: Txn) -> Result<etcd_client::TxnResponse> {
        self.call(Kind::Write, what, || {
            let mut kv = self.kv.clone();
            let txn = txn.clone();
            async move { kv.txn(txn).await }
        })
        .await
    }

    /// The current value from a failed transaction's `Else(Get)`.
    fn else_get(&self, resp: &etcd_client::TxnResponse) -> Result<Option<KeyValue>> {
        for op in resp.op_responses() {
            if let TxnOpResponse::Get(g) = op {
                return g.kvs().first().map(|kv| self.kv(kv)).transpose();
            }
        }
        Ok(None)
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<WriteOutcome> {
        let k = self.etcd_key(key)?;
        let txn = Txn::new()
            .when([Compare::create_revision(k.clone(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(k.clone(), value.to_vec(), None)])
            .or_else([TxnOp::get(k, None)]);
        let resp = self.txn("create", txn).await?;
        if !resp.succeeded() {
            return Ok(WriteOutcome::Conflict(self.else_get(&resp)?));
        }
        let rev = header_revision(resp.header())?;
        Ok(WriteOutcome::Done(KeyValue {
            key: key.to_string(),
            value,
            create_revision: rev,
            mod_revision: rev,
            version: 1,
        }))
    }

    async fn update(&self, key: &str, expected: Revision, value: Bytes) -> Result<WriteOutcome> {
        let k = self.etcd_key(key)?;
        let txn = Txn::new()
            .when([
                Compare::mod_revision(k.clone(), CompareOp::Equal, expected),
                Compare::version(k.clone(), CompareOp::Greater, 0),
            ])
            .and_then([TxnOp::put(
                k.clone(),
                value.to_vec(),
                Some(PutOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(k, None)]);
        let resp = self.txn("update", txn).await?;
        if !resp.succeeded() {
            return Ok(WriteOutcome::Conflict(self.else_get(&resp)?));
        }
        let rev = header_revision(resp.header())?;
        let prev = resp.op_responses().into_iter().find_map(|op| match op {
            TxnOpResponse::Put(p) => p.prev_key().cloned(),
            _ => None,
        });
        let Some(prev) = prev else {
            return Err(StorageError::Internal(
                "etcd update: the transaction answered no previous value".into(),
            ));
        };
        Ok(WriteOutcome::Done(KeyValue {
            key: key.to_string(),
            value,
            create_revision: prev.create_revision(),
            mod_revision: rev,
            version: prev.version() + 1,
        }))
    }

    async fn delete(&self, key: &str, expected: Revision) -> Result<WriteOutcome> {
        let k = self.etcd_key(key)?;
        let cond = if expected == 0 {
            Compare::version(k.clone(), CompareOp::Greater, 0)
        } else {
            Compare::mod_revision(k.clone(), CompareOp::Equal, expected)
        };
        let txn = Txn::new()
            .when([cond])
            .and_then([TxnOp::delete(
                k.clone(),
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(k, None)]);
        let resp = self.txn("delete", txn).await?;
        if !resp.succeeded() {
            return Ok(WriteOutcome::Conflict(self.else_get(&resp)?));
        }
        let rev = header_revision(resp.header())?;
        let prev = resp.op_responses().into_iter().find_map(|op| match op {
            TxnOpResponse::Delete(d) => d.prev_kvs().first().cloned(),
            _ => None,
        });
        match prev {
            Some(prev) => {
                let mut gone = self.kv(&prev)?;
                gone.mod_revision = rev;
                Ok(WriteOutcome::Done(gone))
            }
            None => Ok(WriteOutcome::Conflict(None)),
        }
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        let got = self
            .call(Kind::Write, "compact", || {
                let mut kv = self.kv.clone();
                async move { kv.compact(revision, None).await }
            })
            .await;
        match got {
            Ok(_) => {
                self.note_compacted(revision);
                Ok(())
            }
            // Compacting at or below the compacted revision changes nothing.
            // (Noted: callers stepping up from `compacted_revision` move on.)
            Err(StorageError::Compacted { .. }) => {
                self.note_compacted(revision);
                Ok(())
            }
            Err(e) => Err(self.revision_error(e, revision).await),
        }
    }
}

fn header_revision(h: Option<&etcd_client::ResponseHeader>) -> Result<Revision> {
    h.map(|h| h.revision())
        .ok_or_else(|| StorageError::Internal("etcd answered without a header".into()))
}

impl EtcdStore {
    /// Connects to etcd. The client dials lazily, so this waits (up to
    /// [`EtcdOptions::dial_timeout`], asking again every 100 ms) for one answer from a member,
    /// failing with [`StorageError::Unavailable`] (or `Timeout`) when none came; it also learns
    /// the compacted revision. Once connected, members may come and go: requests fail while none
    /// is reachable and work again when one is back.
    pub async fn connect(o: EtcdOptions) -> Result<Arc<EtcdStore>> {
        if o.endpoints.is_empty() {
            return Err(StorageError::Unavailable("no etcd endpoints".into()));
        }
        let mut opts = ConnectOptions::new()
            .with_connect_timeout(o.dial_timeout)
            .with_keep_alive(Duration::from_secs(10), o.request_timeout)
            .with_keep_alive_while_idle(true)
            .with_require_leader(true);
        if let Some(tls) = &o.tls {
            opts = opts.with_tls(tls_options(tls)?);
        }
        let client = match tokio::time::timeout(
            o.dial_timeout,
            etcd_client::Client::connect(&o.endpoints, Some(opts)),
        )
        .await
        {
            Err(_) => return Err(StorageError::Timeout("etcd connect".into())),
            Ok(Err(e)) => {
                return Err(StorageError::Unavailable(format!(
                    "etcd connect to {:?}: {e}",
                    o.endpoints
                )))
            }
            Ok(Ok(c)) => c,
        };
        let (close_tx, _) = tokio::sync::watch::channel(false);
        let inner = Arc::new(Inner {
            kv: client
                .kv_client()
                .max_decoding_message_size(MAX_MESSAGE)
                .max_encoding_message_size(MAX_MESSAGE),
            watch: client.watch_client().max_decoding_message_size(MAX_MESSAGE),
            prefix: o.prefix.trim_end_matches('/').to_string(),
            request_timeout: o.request_timeout,
            closed: AtomicBool::new(false),
            close_tx,
            compacted: AtomicI64::new(0),
            rev_next: std::sync::Mutex::new(None),
            rev_wire: tokio::sync::Mutex::new(()),
            rev_ids: AtomicU64::new(0),
        });
        let deadline = tokio::time::Instant::now() + o.dial_timeout;
        loop {
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            let got = tokio::time::timeout(remaining, inner.fetch_revision()).await;
            match got {
                Ok(Ok(_)) => break,
                Ok(Err(e @ (StorageError::Unavailable(_) | StorageError::Timeout(_))))
                    if tokio::time::Instant::now() + Duration::from_millis(100) < deadline =>
                {
                    tracing::debug!("etcd not answering yet: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(StorageError::Unavailable(format!(
                        "etcd at {:?}: no answer within {:?}",
                        o.endpoints, o.dial_timeout
                    )))
                }
            }
        }
        // Learn the compacted revision: a read at revision 1 fails only when something was
        // compacted, and then the probe finds how far.
        let key = inner.etcd_key(ROOT)?;
        let first = inner
            .call(Kind::Read, "range", || {
                let mut kv = inner.kv.clone();
                let key = key.clone();
                async move {
                    kv.get(
                        key,
                        Some(GetOptions::new().with_count_only().with_revision(1)),
                    )
                    .await
                }
            })
            .await;
        match first {
            Ok(_) => {}
            Err(StorageError::Compacted { .. }) => {
                inner.probe_compacted().await?;
            }
            Err(e) => return Err(e),
        }
        Ok(Arc::new(EtcdStore { inner }))
    }
}

pub(crate) fn tls_options(tls: &EtcdTls) -> Result<etcd_client::TlsOptions> {
    let read = |p: &PathBuf| {
        std::fs::read(p).map_err(|e| StorageError::Internal(format!("{}: {e}", p.display())))
    };
    let mut t = etcd_client::TlsOptions::new();
    if let Some(ca) = &tls.ca_file {
        t = t.ca_certificate(etcd_client::Certificate::from_pem(read(ca)?));
    }
    match (&tls.cert_file, &tls.key_file) {
        (Some(c), Some(k)) => {
            t = t.identity(etcd_client::Identity::from_pem(read(c)?, read(k)?));
        }
        (None, None) => {}
        _ => {
            return Err(StorageError::Internal(
                "etcd TLS: a client certificate needs its key and a key its certificate".into(),
            ))
        }
    }
    Ok(t)
}

/// Resolves once the store is closed (or dropped).
async fn closed_signal(rx: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|c| *c).await;
}

struct Progress(Arc<Notify>);

impl ProgressRequester for Progress {
    fn request_progress(&self) {
        self.0.notify_one();
    }
}

/// The task behind one [`WatchStream`]: etcd's responses to the consumer.
struct WatchTask {
    inner: Arc<Inner>,
    after: Revision,
    tx: mpsc::Sender<Result<WatchEvent>>,
    closed: tokio::sync::watch::Receiver<bool>,
    /// Every event with a revision `<=` this one has been delivered (see [`WatchTask::handle`]).
    confirmed: Revision,
    /// etcd has the watcher among its synced ones: it gets events as they are written, so an
    /// answer to a progress request is not overtaken by history still to replay.
    synced: bool,
    /// A progress request to send again (an answer came while the watcher may have been
    /// replaying history).
    ask_again: Option<tokio::time::Instant>,
}

/// etcd (3.4) sends a lagging watcher at most this many revisions in one response; a response
/// with fewer carries everything up to its header revision.
const WATCH_BATCH_REVS: usize = 1000;
/// etcd syncs lagging watchers every 100 ms: how long to wait before asking for progress again.
const ASK_AGAIN: Duration = Duration::from_millis(100);

enum Sent {
    Ok,
    /// The consumer is gone, or the store closed (already told), or cut off.
    Stop,
}

impl WatchTask {
    async fn send(&mut self, item: Result<WatchEvent>) -> Sent {
        tokio::select! {
            biased;
            _ = closed_signal(&mut self.closed) => {
                let _ = self.tx.try_send(Err(StorageError::Closed));
                Sent::Stop
            }
            r = tokio::time::timeout(WATCH_STALL, self.tx.send(item)) => match r {
                Ok(Ok(())) => Sent::Ok,
                // Consumer dropped; or it made no room for too long: dropping the sender reads
                // as `Unavailable` at its end.
                Ok(Err(_)) | Err(_) => Sent::Stop,
            },
        }
    }

    async fn run(
        mut self,
        mut sender: etcd_client::WatchRequestSender,
        mut stream: etcd_client::WatchResponseStream,
        progress: Arc<Notify>,
    ) {
        let tx = self.tx.clone();
        let mut closed = self.closed.clone();
        loop {
            let resp = tokio::select! {
                biased;
                _ = closed_signal(&mut closed) => {
                    let _ = self.send(Err(StorageError::Closed)).await;
                    break;
                }
                _ = tx.closed() => break,
                _ = async {
                    match self.ask_again {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.ask_again = None;
                    if sender.request_progress().await.is_err() {
                        let _ = self.send(Err(StorageError::Unavailable("etcd watch: the stream broke".into()))).await;
                        break;
                    }
                    continue;
                }
                _ = progress.notified() => {
                    if sender.request_progress().await.is_err() {
                        let _ = self.send(Err(StorageError::Unavailable("etcd watch: the stream broke".into()))).await;
                        break;
                    }
                    continue;
                }
                m = stream.message() => m,
            };
            let resp = match resp {
                Ok(Some(r)) => r,
                Ok(None) => {
                    let _ = self
                        .send(Err(StorageError::Unavailable(
                            "etcd watch: the stream ended".into(),
                        )))
                        .await;
                    break;
                }
                Err(e) => {
                    let _ = self
                        .send(Err(StorageError::Unavailable(format!("etcd watch: {e}"))))
                        .await;
                    break;
                }
            };
            if let Sent::Stop = self.handle(resp).await {
                break;
            }
        }
        // Dropping the stream resets it: etcd cancels the watch.
        let _ = sender.cancel(0).await;
    }

    async fn handle(&mut self, resp: etcd_client::WatchResponse) -> Sent {
        if resp.compact_revision() > 0 {
            self.inner.note_compacted(resp.compact_revision());
            let _ = self
                .send(Err(StorageError::Compacted {
                    requested: self.after,
                    compacted: resp.compact_revision(),
                }))
                .await;
            return Sent::Stop;
        }
        if resp.canceled() {
            let _ = self
                .send(Err(StorageError::Unavailable(format!(
                    "etcd canceled the watch: {}",
                    resp.cancel_reason()
                ))))
                .await;
            return Sent::Stop;
        }
        if resp.created() {
            return Sent::Ok;
        }
        let header = resp.header().map(|h| h.revision()).unwrap_or(0);
        if resp.events().is_empty() {
            if header == 0 {
                return Sent::Ok;
            }
            if resp.watch_id() >= 0 {
                // A periodic notification (`progress_notify`): etcd sends those to synced
                // watchers only, in line with their events.
                self.synced = true;
                self.confirmed = self.confirmed.max(header);
            } else if !self.synced && header > self.confirmed {
                // The answer to a progress request, which etcd before 3.4.25 sends at once with
                // the store's revision even while this watcher still replays history: it would
                // overtake events. Ask again once etcd has had time to sync the watcher.
                self.ask_again = Some(tokio::time::Instant::now() + ASK_AGAIN);
                return Sent::Ok;
            }
            return self.send(Ok(WatchEvent::Progress(header))).await;
        }
        let mut revs = resp
            .events()
            .iter()
            .filter_map(|e| e.kv().map(|kv| kv.mod_revision()))
            .collect::<Vec<_>>();
        revs.dedup();
        if revs.len() < WATCH_BATCH_REVS {
            // A whole batch (a live event, or the rest of a replay): the watcher has everything
            // up to the header revision and is synced from now on.
            self.synced = true;
            self.confirmed = self.confirmed.max(header);
        }
        for ev in resp.events() {
            let item = self.event(ev);
            let failed = item.is_err();
            if let Sent::Stop = self.send(item.map(WatchEvent::Change)).await {
                return Sent::Stop;
            }
            if failed {
                return Sent::Stop;
            }
        }
        Sent::Ok
    }

    fn event(&self, ev: &etcd_client::Event) -> Result<Event> {
        let kv = ev
            .kv()
            .ok_or_else(|| StorageError::Internal("etcd watch event without a key".into()))?;
        let event_type = match ev.event_type() {
            etcd_client::EventType::Put => EventType::Put,
            etcd_client::EventType::Delete => EventType::Delete,
        };
        Ok(Event {
            event_type,
            kv: self.inner.kv(kv)?,
            prev_kv: ev.prev_kv().map(|p| self.inner.kv(p)).transpose()?,
        })
    }
}

impl Inner {
    async fn watch(self: &Arc<Self>, req: WatchRequest) -> Result<WatchStream> {
        self.check_open()?;
        let compacted = self.compacted.load(Ordering::Acquire);
        // As etcd: history from `after + 1` needs that revision not compacted away.
        if req.after + 1 < compacted {
            return Err(StorageError::Compacted {
                requested: req.after,
                compacted,
            });
        }
        let key = self.etcd_key(&req.prefix)?;
        let end = prefix_end(&key);
        let mut opts = WatchOptions::new()
            .with_range(end)
            .with_start_revision(req.after + 1);
        if !req.without_prev_kv {
            opts = opts.with_prev_key();
        }
        if req.progress_notify {
            opts = opts.with_progress_notify();
        }
        let (sender, mut stream) = self
            .call(Kind::Read, "watch", || {
                let mut w = self.watch.clone();
                let (key, opts) = (key.clone(), opts.clone());
                async move {
                    let s = w.watch(key, Some(opts)).await?;
                    Ok(s.split())
                }
            })
            .await?;
        // The creation answer: the watch is registered (or refused).
        let first = match tokio::time::timeout(self.request_timeout, stream.message()).await {
            Err(_) => {
                return Err(StorageError::Timeout(
                    "etcd watch: no creation answer".into(),
                ))
            }
            Ok(Err(e)) => return Err(StorageError::Unavailable(format!("etcd watch: {e}"))),
            Ok(Ok(None)) => {
                return Err(StorageError::Unavailable(
                    "etcd watch: the stream ended".into(),
                ))
            }
            Ok(Ok(Some(r))) => r,
        };
        let (tx, rx) = mpsc::channel(WATCH_BUFFER);
        let progress = Arc::new(Notify::new());
        let mut task = WatchTask {
            inner: self.clone(),
            after: req.after,
            tx,
            closed: self.close_tx.subscribe(),
            confirmed: req.after,
            // A watch from after the current revision has no history to replay.
            synced: first.created() && first.header().is_some_and(|h| req.after >= h.revision()),
            ask_again: None,
        };
        if !first.created() {
            // Not the creation: a compaction cancel or the like; deliver it as the first item.
            if let Sent::Stop = task.handle(first).await {
                return Ok(WatchStream::new(rx, Arc::new(Progress(progress))));
            }
        }
        tokio::spawn(task.run(sender, stream, progress.clone()));
        Ok(WatchStream::new(rx, Arc::new(Progress(progress))))
    }

    fn current_revision(self: &Arc<Self>) -> BoxFuture<'static, Result<Revision>> {
        if let Err(e) = self.check_open() {
            return Box::pin(async move { Err(e) });
        }
        let shared = {
            let mut next = self.rev_next.lock().unwrap_or_else(|e| e.into_inner());
            match &*next {
                Some((_, f)) => f.clone(),
                None => {
                    let id = self.rev_ids.fetch_add(1, Ordering::Relaxed);
                    let inner = self.clone();
                    let fut: BoxFuture<'static, Result<Revision>> = Box::pin(async move {
                        // Wait for the request on the wire to finish, then stop taking joiners:
                        // everyone who joined arrived before this request is sent.
                        let _wire = inner.rev_wire.lock().await;
                        {
                            let mut next = inner.rev_next.lock().unwrap_or_else(|e| e.into_inner());
                            if matches!(&*next, Some((i, _)) if *i == id) {
                                *next = None;
                            }
                        }
                        inner.fetch_revision().await
                    });
                    let f = fut.shared();
                    *next = Some((id, f.clone()));
                    f
                }
            }
        };
        // One deadline from the caller's arrival: a caller that joins the request after the
        // one on the wire must not wait for both to time out.
        let limit = self.request_timeout;
        Box::pin(async move {
            match tokio::time::timeout(limit, shared).await {
                Ok(r) => r,
                Err(_) => Err(StorageError::Timeout(format!(
                    "etcd revision: no answer within {}s",
                    limit.as_secs_f64()
                ))),
            }
        })
    }
}

impl Storage for EtcdStore {
    fn current_revision(&self) -> BoxFuture<'_, Result<Revision>> {
        self.inner.current_revision()
    }

    fn compacted_revision(&self) -> Revision {
        self.inner.compacted.load(Ordering::Acquire)
    }

    fn get<'a>(
        &'a self,
        key: &'a str,
        revision: Revision,
    ) -> BoxFuture<'a, Result<Option<KeyValue>>> {
        Box::pin(async move {
            let k = self.inner.etcd_key(key)?;
            let mut opts = GetOptions::new();
            if revision > 0 {
                opts = opts.with_revision(revision);
            }
            let got = self
                .inner
                .call(Kind::Read, "get", || {
                    let mut kv = self.inner.kv.clone();
                    let (k, opts) = (k.clone(), opts.clone());
                    async move { kv.get(k, Some(opts)).await }
                })
                .await;
            match got {
                Ok(resp) => resp.kvs().first().map(|kv| self.inner.kv(kv)).transpose(),
                Err(e) => Err(self.inner.revision_error(e, revision).await),
            }
        })
    }

    fn range(&self, req: RangeRequest) -> BoxFuture<'_, Result<RangeResult>> {
        Box::pin(self.inner.range(req))
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(self.inner.create(key, value))
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
        value: Bytes,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(self.inner.update(key, expected, value))
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Revision,
    ) -> BoxFuture<'a, Result<WriteOutcome>> {
        Box::pin(self.inner.delete(key, expected))
    }

    /// One request per write, all at once: an etcd transaction would give all its keys one
    /// revision, and the contract gives every write its own.
    fn write_batch(&self, writes: Vec<Write>) -> BoxFuture<'_, Result<Vec<WriteOutcome>>> {
        Box::pin(async move {
            futures::future::try_join_all(writes.iter().map(|w| match w {
                Write::Create { key, value } => self.create(key, value.clone()),
                Write::Update {
                    key,
                    expected,
                    value,
                } => self.update(key, *expected, value.clone()),
                Write::Delete { key, expected } => self.delete(key, *expected),
            }))
            .await
        })
    }

    fn watch(&self, req: WatchRequest) -> BoxFuture<'_, Result<WatchStream>> {
        Box::pin(self.inner.watch(req))
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.inner.compact(revision))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.inner.closed.store(true, Ordering::Release);
            self.inner.close_tx.send_replace(true);
        })
    }
}

impl Drop for EtcdStore {
    fn drop(&mut self) {
        // Watches of a dropped store end as of a closed one.
        self.inner.closed.store(true, Ordering::Release);
        self.inner.close_tx.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"/a/"), b"/a0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b"\xff"), vec![0]);
    }
}
