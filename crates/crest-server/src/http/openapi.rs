//! Serving the OpenAPI documents over HTTP as kube-openapi does: content negotiation (the v2
//! document as JSON or as gnostic's protobuf, v3 as JSON only; 406 when no offer matches), ETags
//! and 304s, `?hash=` immutable URLs and 301 for stale ones.

use crate::http::app::App;
use crate::http::render::{full, Body};
use crate::http::request_body::RequestBody;
use crate::views::openapi::Doc;
use bytes::Bytes;
use crest_api::ApiError;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};

/// The forms a document is served in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Form {
    Json,
    Protobuf,
}

const JSON: &str = "application/json";
/// The content type kube-openapi answers protobuf requests with (for either subtype it takes).
const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// kube-openapi's v2 offers, in its order: `application/` subtypes and what they get.
const V2_OFFERS: &[(&str, Form)] = &[
    ("json", Form::Json),
    (
        "com.github.proto-openapi.spec.v2@v1.0+protobuf",
        Form::Protobuf,
    ),
    (
        "com.github.proto-openapi.spec.v2.v1.0+protobuf",
        Form::Protobuf,
    ),
];
/// Of handler3's offers Crest has the JSON one (no v3 protobuf).
const V3_OFFERS: &[(&str, Form)] = &[("json", Form::Json)];

/// An Accept header's clauses as goautoneg's `ParseAccept` returns them: (type, subtype), by
/// quality, then concrete types before wildcards. Like goautoneg it keeps `q=0` clauses, reads an
/// unparsable q as 0, and sorts with Go's insertion sort (what `sort.Sort` runs for the short
/// lists Accept headers are), whose order its comparison decides.
fn clauses(accept: &str) -> Vec<(String, String)> {
    struct Clause {
        ty: String,
        sub: String,
        q: f32,
    }
    let mut cs: Vec<Clause> = vec![];
    for part in accept.split(',') {
        let mut params = part.trim_matches(' ').split(';');
        let range = params.next().unwrap_or_default();
        let sp: Vec<&str> = range.split('/').collect();
        let ty = sp[0].trim_matches(' ').to_string();
        let sub = match sp.len() {
            1 if ty == "*" => "*".to_string(),
            2 => sp[1].trim_matches(' ').to_string(),
            _ => continue,
        };
        let mut q = 1.0;
        for p in params {
            if let Some((k, v)) = p.split_once('=') {
                if k.trim_matches(' ') == "q" {
                    q = v.parse::<f32>().unwrap_or(0.0);
                }
            }
        }
        cs.push(Clause { ty, sub, q });
    }
    let less = |a: &Clause, b: &Clause| {
        a.q > b.q || (a.ty != "*" && b.ty == "*") || (a.sub != "*" && b.sub == "*")
    };
    for i in 1..cs.len() {
        let mut j = i;
        while j > 0 && less(&cs[j], &cs[j - 1]) {
            cs.swap(j, j - 1);
            j -= 1;
        }
    }
    cs.into_iter().map(|c| (c.ty, c.sub)).collect()
}

/// kube-openapi's choice: the first offer (in offer order) matching the first clause that
/// matches any; None is its 406.
fn negotiate(accept: Option<&str>, offers: &[(&str, Form)]) -> Option<Form> {
    let accept = accept.filter(|a| !a.is_empty()).unwrap_or("*/*");
    clauses(accept).iter().find_map(|(ty, sub)| {
        offers.iter().find_map(|(offer, form)| {
            let matches = (ty == "application" || ty == "*") && (sub == offer || sub == "*");
            matches.then_some(*form)
        })
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
/// default (`no-cache, private`) unless the URL is content-addressed. A 304 carries the ETag but
/// neither Content-Type nor Last-Modified, as Go's `http.ServeContent` writes it.
fn serve_doc(
    req: &Request<RequestBody>,
    doc: &Doc,
    content_type: &str,
    immutable: bool,
) -> Response<Body> {
    let mut r = if not_modified(req.headers(), doc) {
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        let mut r = Response::new(full(doc.bytes.clone()));
        set(&mut r, http::header::CONTENT_TYPE, content_type);
        set(
            &mut r,
            http::header::LAST_MODIFIED,
            &http_date(doc.last_modified),
        );
        r
    };
    set(&mut r, http::header::ETAG, &format!("\"{}\"", doc.etag));
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
    if path == "/openapi/v2" {
        // client-go's OpenAPISchema() (kubectl's validation of `kind: List`) asks for protobuf.
        return Ok(match negotiate(accept, V2_OFFERS) {
            Some(Form::Json) => serve_doc(req, &app.openapi.v2(&res), JSON, false),
            Some(Form::Protobuf) => {
                serve_doc(req, &app.openapi.v2_protobuf(&res), V2_PROTOBUF, false)
            }
            None => status_only(StatusCode::NOT_ACCEPTABLE),
        });
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        let Some(root) = app.openapi.v3_root(&res) else {
            return Err(ApiError::path_not_found());
        };
        return Ok(serve_doc(req, &root, JSON, false));
    }
    let Some(doc) = app.openapi.v3_group_version(&res, rest) else {
        return Err(ApiError::path_not_found());
    };
    if negotiate(accept, V3_OFFERS).is_none() {
        return Ok(status_only(StatusCode::NOT_ACCEPTABLE));
    }
    let hash = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "hash")
            .map(|(_, v)| v.into_owned())
    });
    match hash.filter(|h| !h.is_empty()) {
        Some(h) if h == doc.etag => Ok(serve_doc(req, &doc, JSON, true)),
        // A stale hash: the current content lives at another immutable URL.
        Some(_) => {
            let mut r = status_only(StatusCode::MOVED_PERMANENTLY);
            set(&mut r, http::header::CONTENT_TYPE, JSON);
            set(&mut r, http::header::ETAG, &format!("\"{}\"", doc.etag));
            set(
                &mut r,
                http::header::LOCATION,
                &format!("/openapi/v3/{rest}?hash={}", doc.etag),
            );
            Ok(r)
        }
        None => Ok(serve_doc(req, &doc, JSON, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_as_kube_openapi() {
        let v2 = |a: &str| negotiate(Some(a), V2_OFFERS);
        // client-go's OpenAPISchema() and the non-deprecated subtype.
        let pb = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
        assert_eq!(v2(pb), Some(Form::Protobuf));
        let pb2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
        assert_eq!(v2(pb2), Some(Form::Protobuf));
        // The first clause that matches decides; wildcards get the first offer, JSON.
        assert_eq!(v2(&format!("{pb}, application/json")), Some(Form::Protobuf));
        assert_eq!(v2(&format!("application/json, {pb}")), Some(Form::Json));
        assert_eq!(
            v2(&format!("application/json;q=0.5, {pb}")),
            Some(Form::Protobuf)
        );
        assert_eq!(v2(&format!("*/*, {pb}")), Some(Form::Protobuf));
        assert_eq!(v2("application/*"), Some(Form::Json));
        assert_eq!(negotiate(None, V2_OFFERS), Some(Form::Json));
        assert_eq!(negotiate(Some(""), V2_OFFERS), Some(Form::Json));
        assert_eq!(v2("*"), Some(Form::Json));
        // Nothing offered matches: 406.
        assert_eq!(v2("application/yaml"), None);
        assert_eq!(v2("text/*"), None);
        assert_eq!(
            negotiate(
                Some("application/com.github.proto-openapi.spec.v3@v1.0+protobuf"),
                V3_OFFERS
            ),
            None
        );
    }
}
