//! Serving the OpenAPI documents over HTTP as kube-openapi does: content negotiation (JSON only;
//! protobuf-only clients get 406), ETags and 304s, `?hash=` immutable URLs and 301 for stale ones.

use crate::http::app::App;
use crate::http::render::{full, Body};
use crate::http::request_body::RequestBody;
use crate::views::openapi::Doc;
use bytes::Bytes;
use crest_api::ApiError;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};

/// The media types of an Accept header, most preferred first (q=0 dropped).
fn accepted(accept: Option<&str>) -> Vec<String> {
    let accept = accept.filter(|a| !a.trim().is_empty()).unwrap_or("*/*");
    let mut clauses: Vec<(f32, usize, String)> = accept
        .split(',')
        .enumerate()
        .filter_map(|(i, c)| {
            let mut parts = c.split(';');
            let mt = parts.next()?.trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            (q > 0.0 && !mt.is_empty()).then_some((q, i, mt))
        })
        .collect();
    clauses.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    clauses.into_iter().map(|c| c.2).collect()
}

/// Whether JSON is the first acceptable form among those kube-openapi serves (JSON and the
/// gnostic protobuf, which Crest does not produce).
fn wants_json(accept: Option<&str>) -> bool {
    accepted(accept).iter().any(|mt| {
        let (ty, sub) = mt.split_once('/').unwrap_or((mt.as_str(), ""));
        (ty == "application" || ty == "*") && (sub == "json" || sub == "*")
    })
}

fn http_date(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Go's `http.ServeContent` conditional handling: If-None-Match, else If-Modified-Since.
fn not_modified(headers: &HeaderMap, doc: &Doc) -> bool {
    if let Some(inm) = headers
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    {
        return inm.split(',').any(|t| {
            let t = t.trim();
            t == "*" || t.trim_start_matches("W/").trim_matches('"') == doc.etag
        });
    }
    headers
        .get(http::header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| chrono::DateTime::parse_from_rfc2822(&v.replace("GMT", "+0000")).ok())
        .is_some_and(|since| doc.last_modified.timestamp() <= since.timestamp())
}

fn set(r: &mut Response<Body>, name: http::header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
}

/// The document, or 304 when the client's copy is current. Cache-Control is kube-apiserver's
/// default (`no-cache, private`) unless the URL is content-addressed.
fn serve_doc(req: &Request<RequestBody>, doc: &Doc, immutable: bool) -> Response<Body> {
    let mut r = if not_modified(req.headers(), doc) {
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(full(doc.bytes.clone()));
        set(&mut r, http::header::CONTENT_TYPE, "application/json");
        r
    };
    set(&mut r, http::header::ETAG, &format!("\"{}\"", doc.etag));
    set(
        &mut r,
        http::header::LAST_MODIFIED,
        &http_date(doc.last_modified),
    );
    set(&mut r, http::header::VARY, "Accept");
    if immutable {
        set(&mut r, http::header::CACHE_CONTROL, "public, immutable");
        let expires = chrono::Utc::now() + chrono::Duration::days(365);
        set(
            &mut r,
            http::header::EXPIRES,
            &expires.format("%a, %d %b %Y %H:%M:%S UTC").to_string(),
        );
    } else {
        set(&mut r, http::header::CACHE_CONTROL, "no-cache, private");
    }
    r
}

fn status_only(code: StatusCode) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = code;
    set(&mut r, http::header::CACHE_CONTROL, "no-cache, private");
    set(&mut r, http::header::VARY, "Accept");
    r
}

pub(crate) fn serve(
    app: &App,
    req: &Request<RequestBody>,
    path: &str,
    accept: Option<&str>,
) -> Result<Response<Body>, ApiError> {
    let res = app.registry.resources();
    // Only JSON is produced: a client that accepts only the protobuf form gets kube-openapi's
    // 406, from which client-go falls back (kubectl needs the v3 JSON documents only).
    let json = wants_json(accept);
    if path == "/openapi/v2" {
        if !json {
            return Ok(status_only(StatusCode::NOT_ACCEPTABLE));
        }
        let doc = app.openapi.v2(&res);
        return Ok(serve_doc(req, &doc, false));
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        let Some(root) = app.openapi.v3_root(&res) else {
            return Err(ApiError::path_not_found());
        };
        return Ok(serve_doc(req, &root, false));
    }
    let Some(doc) = app.openapi.v3_group_version(&res, rest) else {
        return Err(ApiError::path_not_found());
    };
    if !json {
        return Ok(status_only(StatusCode::NOT_ACCEPTABLE));
    }
    let hash = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "hash")
            .map(|(_, v)| v.into_owned())
    });
    match hash.filter(|h| !h.is_empty()) {
        Some(h) if h == doc.etag => Ok(serve_doc(req, &doc, true)),
        // A stale hash: the current content lives at another immutable URL.
        Some(_) => {
            let mut r = status_only(StatusCode::MOVED_PERMANENTLY);
            set(&mut r, http::header::CONTENT_TYPE, "application/json");
            set(&mut r, http::header::ETAG, &format!("\"{}\"", doc.etag));
            set(
                &mut r,
                http::header::LOCATION,
                &format!("/openapi/v3/{rest}?hash={}", doc.etag),
            );
            Ok(r)
        }
        None => Ok(serve_doc(req, &doc, false)),
    }
}
