//! Watch: a chunked stream of `{type, object}` events over one resource, built on the storage
//! watch so that any retained revision can be resumed from.

use crate::handlers::early_error;
use crate::http::Body;
use crate::negotiate::Output;
use crate::registry::storage_error;
use crate::request::Query;
use crate::resources::{ResourceDef, StoredSchema};
use crate::selectors::ListFilter;
use crate::table::{self, IncludeObject};
use crate::App;
use bytes::Bytes;
use crest_api::{meta, ApiError};
use crest_storage::{EventType, KeyValue};
use futures::StreamExt;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

const BOOKMARK_INTERVAL: Duration = Duration::from_secs(30);

struct Encoder {
    def: Arc<ResourceDef>,
    out: Output,
    include: IncludeObject,
}

impl Encoder {
    fn object(&self, obj: &Value) -> Value {
        match self.out {
            Output::Table { v1beta1 } => {
                let row = table::row(&self.def.table, obj, self.include, v1beta1);
                table::table(
                    &self.def.table,
                    vec![row],
                    json!({"resourceVersion": meta::resource_version(obj)}),
                    v1beta1,
                )
            }
            Output::Metadata { v1beta1 } => table::partial_object_metadata(obj, v1beta1),
            _ => obj.clone(),
        }
    }

    fn event(&self, kind: &str, obj: &Value) -> Bytes {
        let mut line = serde_json::to_vec(&json!({"type": kind, "object": self.object(obj)}))
            .unwrap_or_default();
        line.push(b'\n');
        Bytes::from(line)
    }
}

/// The served object of a stored key-value at `rv`, read through the storage version's schema
/// when it may not have been written with it (see [`crate::registry::Registry::normalize_stored`]).
fn served(
    def: &ResourceDef,
    stored: Option<&StoredSchema>,
    kv: &KeyValue,
    rv: i64,
) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(&kv.value).ok()?;
    if let Some(ss) = stored.filter(|ss| {
        ss.schema.normalizes() && (ss.multi_version || kv.mod_revision < ss.crd_revision)
    }) {
        ss.schema.decode_stored(&mut v);
    }
    meta::set(&mut v, "resourceVersion", rv.to_string());
    if def.crd_name.is_some() {
        if let Some(o) = v.as_object_mut() {
            o.insert("apiVersion".into(), def.api.api_version().into());
        }
    }
    Some(v)
}

pub async fn serve(
    app: Arc<App>,
    def: Arc<ResourceDef>,
    ns: Option<String>,
    query: &Query,
    out: Output,
) -> Result<Response<Body>, ApiError> {
    let filter = ListFilter::parse(query, &def)?;
    let stored = app
        .registry
        .resources()
        .stored_schema(&def.key_prefix)
        .cloned();
    let include = IncludeObject::parse(query.get("includeObject"))?;
    let bookmarks = query.bool("allowWatchBookmarks")?;
    let timeout = match query.get("timeoutSeconds") {
        Some(t) => Some(Duration::from_secs(t.parse::<u64>().map_err(|_| {
            ApiError::bad_request(format!("invalid timeoutSeconds: {t:?}"))
        })?)),
        None => None,
    };
    let rv = query.get("resourceVersion").unwrap_or("");
    let send_initial = query.bool("sendInitialEvents")?;
    let prefix = def.list_prefix(ns.as_deref());
    let enc = Encoder {
        def: def.clone(),
        out,
        include,
    };

    let mut initial: Vec<Bytes> = vec![];
    let start_rev = if rv.is_empty() || rv == "0" || send_initial {
        let snap = app.registry.list(&def, ns.as_deref()).await?;
        for o in &snap.objects {
            let v = o.value()?;
            let v = app.registry.convert(&def, v);
            if filter.matches(&v) {
                initial.push(enc.event("ADDED", &v));
            }
        }
        if send_initial {
            let bm = json!({"kind": def.api.kind, "apiVersion": def.api.api_version(), "metadata": {"resourceVersion": snap.revision.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}});
            let mut line =
                serde_json::to_vec(&json!({"type": "BOOKMARK", "object": bm})).unwrap_or_default();
            line.push(b'\n');
            initial.push(Bytes::from(line));
        }
        snap.revision
    } else {
        rv.parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))?
    };

    let current = app.registry.storage.current_revision();
    if start_rev > current {
        return Ok(early_error(&ApiError::new(
            504,
            crest_api::Reason::Timeout,
            format!("Too large resource version: {start_rev}, current: {current}"),
        )));
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(256);
    match app.registry.storage.watch(&prefix, start_rev) {
        Ok(mut stream) => {
            let mut shutdown = app.shutdown.subscribe();
            tokio::spawn(async move {
                for b in initial {
                    if tx.send(b).await.is_err() {
                        return;
                    }
                }
                let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
                let mut last_rev = start_rev;
                let mut ticker = tokio::time::interval(BOOKMARK_INTERVAL);
                ticker.tick().await;
                loop {
                    let sleep_until = deadline.unwrap_or_else(|| {
                        tokio::time::Instant::now() + Duration::from_secs(3600 * 24)
                    });
                    tokio::select! {
                        _ = tokio::time::sleep_until(sleep_until) => return,
                        _ = shutdown.changed() => return,
                        _ = ticker.tick(), if bookmarks => {
                            let bm = json!({"type": "BOOKMARK", "object": {"kind": enc.def.api.kind, "apiVersion": enc.def.api.api_version(), "metadata": {"resourceVersion": last_rev.to_string()}}});
                            let mut line = serde_json::to_vec(&bm).unwrap_or_default();
                            line.push(b'\n');
                            if tx.send(Bytes::from(line)).await.is_err() { return; }
                        }
                        ev = stream.recv() => {
                            let Some(ev) = ev else { return };
                            let ev = match ev {
                                Ok(ev) => ev,
                                Err(e) => {
                                    let st = storage_error(e).to_status();
                                    let line = serde_json::to_vec(&json!({"type": "ERROR", "object": st})).unwrap_or_default();
                                    let _ = tx.send(Bytes::from(line)).await;
                                    return;
                                }
                            };
                            let rev = ev.kv.mod_revision;
                            last_rev = rev;
                            let line = match ev.event_type {
                                EventType::Put => {
                                    let Some(cur) = served(&enc.def, stored.as_ref(), &ev.kv, rev) else { continue };
                                    let prev = ev.prev_kv.as_ref().and_then(|p| served(&enc.def, stored.as_ref(), p, rev));
                                    let now_in = filter.matches(&cur);
                                    let was_in = prev.as_ref().is_some_and(|p| filter.matches(p));
                                    match (prev.is_some(), was_in, now_in) {
                                        (false, _, true) => enc.event("ADDED", &cur),
                                        (true, false, true) => enc.event("ADDED", &cur),
                                        (true, true, true) => enc.event("MODIFIED", &cur),
                                        (true, true, false) => enc.event("DELETED", &cur),
                                        _ => continue,
                                    }
                                }
                                EventType::Delete => {
                                    let Some(prev) = ev.prev_kv.as_ref().and_then(|p| served(&enc.def, stored.as_ref(), p, rev)) else { continue };
                                    if !filter.matches(&prev) { continue; }
                                    enc.event("DELETED", &prev)
                                }
                            };
                            if tx.send(line).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
        Err(e) => {
            // A resourceVersion older than the retained history: the client must relist.
            let st = match e {
                crest_storage::StorageError::Compacted { requested, .. } => {
                    ApiError::expired(format!(
                        "too old resource version: {requested} ({})",
                        app.registry.storage.compacted_revision()
                    ))
                    .to_status()
                }
                other => storage_error(other).to_status(),
            };
            let mut line =
                serde_json::to_vec(&json!({"type": "ERROR", "object": st})).unwrap_or_default();
            line.push(b'\n');
            let _ = tx.send(Bytes::from(line)).await;
        }
    }
    let stream =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) })
            .map(|b| Ok::<_, Infallible>(Frame::data(b)));
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}
