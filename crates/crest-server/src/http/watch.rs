//! Watch: a chunked stream of `{type, object}` events over one resource, framed here: the
//! events encoded in the negotiated form, selector transitions as ADDED / DELETED, bookmarks and
//! the initial-events-end marker. Where the watch starts and where its changes come from (the
//! cache's history or storage, 410 Expired) is the read layer's ([`Reads::watch`]).
//!
//! [`Reads::watch`]: crate::store::reads::Reads::watch

use crate::http::app::App;
use crate::http::render::Body;
use crate::registry::options::Query;
use crate::registry::resources::ResourceDef;
use crate::store::cache::{CacheEvent, CachedObject};
use crate::store::reads::{WatchChanges, Woken};
use bytes::Bytes;
use crest_api::{meta, ApiError};
use crest_codec::negotiate::Output;
use crest_selectors::ListFilter;
use crest_storage::{EventType, Revision};
use crest_table::{self as table, IncludeObject};
use futures::StreamExt;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How often an idle watch with allowWatchBookmarks gets a BOOKMARK (kube-apiserver: 1 minute).
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// Initial (synthetic ADDED) events per chunk.
const INITIAL_CHUNK: usize = 64;

/// Encodes objects and events in the negotiated form.
struct Encoder {
    app: Arc<App>,
    def: Arc<ResourceDef>,
    out: Output,
    include: IncludeObject,
    /// Table events carry columnDefinitions until the first is sent (then null, as upstream).
    headers: std::sync::atomic::AtomicBool,
    /// For a CRD with a conversion webhook: the served bytes of the objects about to be pushed,
    /// converted together beforehand ([`Encoder::prepare`]; pushing is synchronous), by key and
    /// revision.
    converted: std::sync::Mutex<std::collections::HashMap<(Arc<str>, Revision), Bytes>>,
}

impl Encoder {
    /// Converts the objects about to be pushed through the CRD's conversion webhook, in one
    /// review (nothing to do for other resources).
    async fn prepare(&self, objs: &[Arc<CachedObject>]) -> Result<(), ApiError> {
        if self.def.webhook_conversion.is_none() || objs.is_empty() {
            return Ok(());
        }
        let served = self.app.registry.serve_many(&self.def, objs).await?;
        let mut m = self.converted.lock().unwrap_or_else(|p| p.into_inner());
        // What the previous batch prepared and did not push (filtered out) goes.
        m.clear();
        for (o, b) in objs.iter().zip(served) {
            m.insert((o.key.clone(), o.mod_revision), b);
        }
        Ok(())
    }

    /// The served bytes [`Encoder::prepare`] made for `obj`, left in place.
    fn peek(&self, obj: &CachedObject) -> Option<Bytes> {
        self.def.webhook_conversion.as_ref()?;
        self.converted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(obj.key.clone(), obj.mod_revision))
            .cloned()
    }

    /// The served bytes [`Encoder::prepare`] made for `obj`, if any.
    fn prepared(&self, obj: &CachedObject) -> Option<Bytes> {
        self.def.webhook_conversion.as_ref()?;
        self.converted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(obj.key.clone(), obj.mod_revision))
    }

    /// Appends one event line whose object is the Table of `obj` (served bytes) with resourceVersion
    /// `rv`; nothing when the object does not decode.
    fn push_table(&self, buf: &mut Vec<u8>, kind: &str, obj: &[u8], rv: &str, v1beta1: bool) {
        let start = buf.len();
        buf.extend_from_slice(b"{\"type\":\"");
        buf.extend_from_slice(kind.as_bytes());
        buf.extend_from_slice(b"\",\"object\":");
        let mut list_meta = serde_json::Map::new();
        list_meta.insert("resourceVersion".into(), rv.into());
        let headers = self
            .headers
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        let written = table::write_table(
            buf,
            &self.def.table,
            &[obj],
            &list_meta,
            self.include,
            v1beta1,
            headers,
        );
        if written.is_ok() {
            buf.extend_from_slice(b"}\n");
        } else {
            buf.truncate(start);
        }
    }

    /// Appends one event line. `obj` is the cached (storage-version) object; `rv` overrides its
    /// resourceVersion (deletes carry the deletion's revision).
    fn push(&self, buf: &mut Vec<u8>, kind: &str, obj: &CachedObject, rv: Option<Revision>) {
        let prepared = self.prepared(obj);
        if rv.is_none() && !matches!(self.out, Output::Metadata { .. }) {
            let served = match &prepared {
                Some(b) => Ok(b.clone()),
                None => self.app.registry.serve(&self.def, obj),
            };
            if let Ok(b) = served {
                if self.out == Output::Protobuf {
                    let api = &self.def.api;
                    match crest_codec::protobuf::encode_json(&api.api_version(), &api.kind, &b) {
                        Some(pb) => crest_codec::protobuf::watch_frame(kind, &pb, buf),
                        None => push_unencodable(buf),
                    }
                    return;
                }
                if let Output::Table { v1beta1 } = self.out {
                    let rv = obj.mod_revision.to_string();
                    return self.push_table(buf, kind, &b, &rv, v1beta1);
                }
                buf.extend_from_slice(b"{\"type\":\"");
                buf.extend_from_slice(kind.as_bytes());
                buf.extend_from_slice(b"\",\"object\":");
                buf.extend_from_slice(&b);
                buf.extend_from_slice(b"}\n");
                return;
            }
        }
        let v = match prepared {
            Some(b) => serde_json::from_slice(&b).ok(),
            None => obj
                .value()
                .ok()
                .and_then(|v| self.app.registry.convert(&self.def, v).ok()),
        };
        let Some(mut v) = v else { return };
        if let Some(rv) = rv {
            meta::set(&mut v, "resourceVersion", rv.to_string());
        }
        let object = match self.out {
            Output::Table { v1beta1 } => {
                let b = crest_codec::json::to_vec(&v);
                let rv = meta::resource_version(&v).to_string();
                return self.push_table(buf, kind, &b, &rv, v1beta1);
            }
            Output::Metadata { v1beta1, .. } => table::partial_object_metadata(&v, v1beta1),
            _ => v,
        };
        push_event(self.out, buf, kind, &object);
    }

    fn bookmark(&self, buf: &mut Vec<u8>, rv: Revision, initial_end: bool) {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let mut object = json!({
            "kind": self.def.api.kind,
            "apiVersion": self.def.api.api_version(),
            "metadata": metadata,
        });
        // Upstream transforms every event's object but Status, bookmarks included.
        match self.out {
            Output::Table { v1beta1 } => {
                let b = crest_codec::json::to_vec(&object);
                self.push_table(buf, "BOOKMARK", &b, &rv.to_string(), v1beta1);
                return;
            }
            Output::Metadata { v1beta1, .. } => {
                object = table::partial_object_metadata(&object, v1beta1)
            }
            _ => {}
        }
        push_event(self.out, buf, "BOOKMARK", &object);
    }
}

/// One event in the stream's format: a JSON line, or a length-prefixed protobuf `WatchEvent`
/// whose object is the enveloped message (upstream's protobuf stream serializer).
fn push_event(out: Output, buf: &mut Vec<u8>, kind: &str, object: &Value) {
    if out.is_protobuf() {
        match crest_codec::protobuf::encode_object(object) {
            Some(obj) => crest_codec::protobuf::watch_frame(kind, &obj, buf),
            None => push_unencodable(buf),
        }
        return;
    }
    // meta/v1 WatchEvent: type, then object (in its kind's order, crest_codec::json).
    buf.extend_from_slice(b"{\"type\":");
    let _ = serde_json::to_writer(&mut *buf, kind);
    buf.extend_from_slice(b",\"object\":");
    crest_codec::json::write(buf, object);
    buf.extend_from_slice(b"}\n");
}

/// An object a protobuf stream cannot carry: an ERROR event (a Status always encodes) instead
/// of a silent gap or a JSON line in a protobuf stream, so the client re-lists.
fn push_unencodable(buf: &mut Vec<u8>) {
    let e = ApiError::internal("unable to encode the watch event object as protobuf");
    if let Some(obj) = crest_codec::protobuf::encode_object(&e.to_status()) {
        crest_codec::protobuf::watch_frame("ERROR", &obj, buf);
    }
}

fn error_line(e: &ApiError, out: Output) -> Bytes {
    let mut buf = vec![];
    push_event(out, &mut buf, "ERROR", &e.to_status());
    Bytes::from(buf)
}

struct Watcher {
    enc: Encoder,
    filter: ListFilter,
    /// Synthetic ADDED events still to send, and the revision they reflect.
    initial: std::vec::IntoIter<Arc<CachedObject>>,
    /// Send the initial-events-end BOOKMARK at this revision once `initial` is drained.
    initial_end: Option<Revision>,
    /// The changes still to send.
    changes: WatchChanges,
    shutdown: tokio::sync::watch::Receiver<bool>,
    deadline: Option<Instant>,
    bookmarks: bool,
    next_bookmark: Instant,
    done: bool,
}

impl Watcher {
    fn schedule_bookmark(&mut self) {
        let mut next = Instant::now() + BOOKMARK_INTERVAL;
        // Like kube-apiserver, one bookmark shortly before the watch times out.
        if let Some(d) = self.deadline {
            let pre = d.checked_sub(Duration::from_secs(2)).unwrap_or(d);
            if pre < next && pre > Instant::now() {
                next = pre;
            }
        }
        self.next_bookmark = next;
    }

    /// The next chunk of the response; `None` ends it.
    async fn next_chunk(&mut self) -> Option<Bytes> {
        let mut buf = Vec::new();
        loop {
            if self.done {
                return None;
            }
            if self.initial.len() > 0 {
                let chunk: Vec<Arc<CachedObject>> =
                    self.initial.by_ref().take(INITIAL_CHUNK).collect();
                if let Err(e) = self.enc.prepare(&chunk).await {
                    self.done = true;
                    return Some(error_line(&e, self.enc.out));
                }
                for obj in chunk {
                    if self.selected(&obj) {
                        self.enc.push(&mut buf, "ADDED", &obj, None);
                    }
                }
                if !buf.is_empty() {
                    return Some(Bytes::from(buf));
                }
                continue;
            }
            if let Some(rv) = self.initial_end.take() {
                self.enc.bookmark(&mut buf, rv, true);
                return Some(Bytes::from(buf));
            }
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            if let Err(e) = self.collect(&mut buf).await {
                self.done = true;
                return Some(error_line(&e, self.enc.out));
            }
            if !buf.is_empty() {
                return Some(Bytes::from(buf));
            }
            if self.bookmarks && Instant::now() >= self.next_bookmark {
                self.enc
                    .bookmark(&mut buf, self.changes.sent_through(), false);
                self.schedule_bookmark();
                return Some(Bytes::from(buf));
            }
            let far = Instant::now() + Duration::from_secs(86_400);
            let mut wake = self.deadline.unwrap_or(far);
            if self.bookmarks {
                wake = wake.min(self.next_bookmark);
            }
            match self.changes.wait(wake, &mut self.shutdown).await {
                Woken::Again => {}
                Woken::Shutdown => self.done = true,
                Woken::Change(ev) => {
                    if let Err(e) = self.prepare_events([&*ev]).await {
                        self.done = true;
                        return Some(error_line(&e, self.enc.out));
                    }
                    self.encode(&mut buf, &ev);
                    if !buf.is_empty() {
                        return Some(Bytes::from(buf));
                    }
                }
                Woken::Ended(Some(e)) => {
                    self.done = true;
                    return Some(error_line(&e, self.enc.out));
                }
                Woken::Ended(None) => return None,
            }
        }
    }

    /// Encodes the changes available now into `buf`.
    async fn collect(&mut self, buf: &mut Vec<u8>) -> Result<(), ApiError> {
        let (events, ended) = self.changes.available().await;
        self.prepare_events(events.iter().map(|e| &**e)).await?;
        for ev in &events {
            self.encode(buf, ev);
        }
        match ended {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Converts the objects `events` may push (through a conversion webhook, if any) ahead.
    async fn prepare_events<'e>(
        &self,
        events: impl IntoIterator<Item = &'e CacheEvent>,
    ) -> Result<(), ApiError> {
        if self.enc.def.webhook_conversion.is_none() {
            return Ok(());
        }
        let objs: Vec<Arc<CachedObject>> = events
            .into_iter()
            .flat_map(|ev| std::iter::once(&ev.object).chain(ev.prev.as_ref()))
            .cloned()
            .collect();
        self.enc.prepare(&objs).await
    }

    /// Whether the selectors take `obj`: read on the stored object, or, for a CRD converting by
    /// webhook, on the object in the version asked for (converted by `prepare_events`).
    fn selected(&self, obj: &CachedObject) -> bool {
        if self.filter.is_empty() {
            return true;
        }
        match self.enc.peek(obj) {
            Some(b) => self.filter.matches_bytes(&b).unwrap_or(false),
            None => self.filter.matches_bytes(&obj.json).unwrap_or(false),
        }
    }

    /// One change as this watcher sees it: selector transitions become ADDED / DELETED.
    fn encode(&self, buf: &mut Vec<u8>, ev: &CacheEvent) {
        let obj = &ev.object;
        match ev.event_type {
            EventType::Put => {
                if self.filter.is_empty() {
                    let kind = if ev.prev.is_some() {
                        "MODIFIED"
                    } else {
                        "ADDED"
                    };
                    self.enc.push(buf, kind, obj, None);
                    return;
                }
                let now_in = self.selected(obj);
                let was_in = ev.prev.as_ref().is_some_and(|p| self.selected(p));
                match (was_in, now_in) {
                    (false, true) => self.enc.push(buf, "ADDED", obj, None),
                    (true, true) => self.enc.push(buf, "MODIFIED", obj, None),
                    // As kube-apiserver: the previous content, at the event's revision.
                    (true, false) => {
                        if let Some(p) = &ev.prev {
                            self.enc.push(buf, "DELETED", p, Some(ev.revision));
                        }
                    }
                    (false, false) => {}
                }
            }
            EventType::Delete => {
                if self.selected(obj) {
                    self.enc.push(buf, "DELETED", obj, Some(ev.revision));
                }
            }
        }
    }
}

/// How long a watch lasts: its `timeoutSeconds` (kube-apiserver caps nothing here); without
/// one, or with 0, a random time in [`min`, 2 x `min`) as upstream's ListResource picks it
/// (`--min-request-timeout`), or forever when `min` is zero.
fn timeout(query: &Query, min: Duration) -> Result<Option<Duration>, ApiError> {
    let given = match query.get("timeoutSeconds") {
        None | Some("") => 0,
        Some(t) => t.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("strconv.ParseInt: parsing {t:?}: invalid syntax"))
        })?,
    };
    Ok(match given {
        0 if min.is_zero() => None,
        0 => Some(min.mul_f64(1.0 + rand::random::<f64>())),
        s => Some(Duration::from_secs(s)),
    })
}

pub(crate) async fn serve(
    app: Arc<App>,
    def: Arc<ResourceDef>,
    ns: Option<String>,
    query: &Query,
    out: Output,
) -> Result<Response<Body>, ApiError> {
    // Selectors are parsed with the query (400) before ListOptions are validated (422).
    let filter = query.list_filter(&def)?;
    let options = query.list_options();
    options.validate(true)?;
    let include = IncludeObject::parse(query.get("includeObject"))?;
    let bookmarks = query.bool("allowWatchBookmarks")?;
    let timeout = timeout(query, app.min_request_timeout)?;
    let send_initial = match query.get("sendInitialEvents") {
        None => None,
        Some(_) => Some(query.bool("sendInitialEvents")?),
    };
    let start = app
        .registry
        .watch_at(&def, ns.as_deref(), options.resource_version, send_initial)
        .await?;
    let initial_end = (send_initial == Some(true) && bookmarks).then_some(start.start);
    let enc = Encoder {
        app: app.clone(),
        def: def.clone(),
        out,
        include,
        headers: true.into(),
        converted: Default::default(),
    };
    let changes = match start.changes {
        Ok(changes) => changes,
        // kube-apiserver answers 200 with one ERROR event so clients re-list.
        Err(e) => {
            return Ok(watch_response(
                futures::stream::iter([error_line(&e, out)]).boxed(),
                out,
            ))
        }
    };
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut w = Watcher {
        enc,
        filter,
        initial: start.initial.into_iter(),
        initial_end,
        changes,
        shutdown: app.shutdown.subscribe(),
        deadline,
        bookmarks,
        next_bookmark: Instant::now(),
        done: false,
    };
    w.schedule_bookmark();
    let stream = futures::stream::unfold(
        w,
        |mut w| async move { w.next_chunk().await.map(|b| (b, w)) },
    );
    Ok(watch_response(stream.boxed(), out))
}

fn watch_response(
    stream: futures::stream::BoxStream<'static, Bytes>,
    out: Output,
) -> Response<Body> {
    let stream = stream.map(|b| Ok::<_, Infallible>(Frame::data(b)));
    let mut resp = Response::new(BodyExt::boxed_unsync(StreamBody::new(stream)));
    *resp.status_mut() = StatusCode::OK;
    let ctype = if out.is_protobuf() {
        crest_codec::protobuf::WATCH_CONTENT_TYPE
    } else {
        "application/json"
    };
    resp.headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    resp
}
