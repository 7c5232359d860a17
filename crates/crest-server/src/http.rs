//! The HTTP front: routing of every path, body limits, and rendering of responses and errors.
//! Resource requests are handed to [`crate::handlers`].

use crate::negotiate::{negotiate, Capabilities, Output};
use crate::request::{parse_api_path, ApiPath, Query};
use crate::{discovery, handlers, App};
use bytes::Bytes;
use crest_api::ApiError;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, Limited};
use hyper::body::Incoming;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;

/// Request bodies larger than this are refused with 413, as kube-apiserver does (3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

pub type Body = UnsyncBoxBody<Bytes, Infallible>;

pub fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed_unsync()
}

/// A response payload: an object tree, or JSON bytes that need no re-encoding.
pub enum Payload {
    Value(Value),
    Json(Bytes),
}

/// Renders a payload per the negotiated output (JSON, pretty JSON or YAML).
pub fn render(
    status: StatusCode,
    payload: Payload,
    output: Output,
    pretty: bool,
) -> Response<Body> {
    let (bytes, ctype) = match (output, payload) {
        (Output::Yaml, p) => {
            let v = match p {
                Payload::Value(v) => v,
                Payload::Json(b) => serde_json::from_slice(&b).unwrap_or(Value::Null),
            };
            (
                Bytes::from(serde_yaml_ng::to_string(&v).unwrap_or_default()),
                "application/yaml",
            )
        }
        (_, Payload::Json(b)) if !pretty => (b, "application/json"),
        (_, Payload::Json(b)) => {
            let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
            (
                Bytes::from(serde_json::to_vec_pretty(&v).unwrap_or_default()),
                "application/json",
            )
        }
        (_, Payload::Value(v)) => {
            let enc = if pretty {
                serde_json::to_vec_pretty(&v)
            } else {
                serde_json::to_vec(&v)
            };
            (Bytes::from(enc.unwrap_or_default()), "application/json")
        }
    };
    let mut resp = Response::new(full(bytes));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    resp
}

/// The Status response of an error (JSON, or YAML when that is what the client takes).
pub fn error_response(e: &ApiError, output: Output) -> Response<Body> {
    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let output = if output == Output::Yaml {
        Output::Yaml
    } else {
        Output::Json
    };
    let mut resp = render(status, Payload::Value(e.to_status()), output, false);
    if e.code == 504 || e.code == 429 || e.code == 503 {
        resp.headers_mut()
            .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp
}

/// Reads the request body, enforcing the size limit.
pub async fn read_body(body: Incoming) -> Result<Bytes, ApiError> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(ApiError::too_large(MAX_BODY_BYTES))
        }
        Err(e) => Err(ApiError::bad_request(format!(
            "error reading request body: {e}"
        ))),
    }
}

fn accept(req: &Request<Incoming>) -> Option<String> {
    req.headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = Response::new(full(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Entry point for every request.
pub async fn serve(app: Arc<App>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_string();
    let query = Query::parse(req.uri().query());
    let pretty = query.bool("pretty").unwrap_or(false);
    let accept = accept(&req);
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let resp = match route(app, req, &path, &query, accept.as_deref(), pretty).await {
        Ok(r) => r,
        Err(e) => {
            let out = negotiate(accept.as_deref(), Capabilities::default()).unwrap_or(Output::Json);
            error_response(&e, out)
        }
    };
    tracing::debug!(%method, %path, status = resp.status().as_u16(), elapsed_us = started.elapsed().as_micros() as u64, "request");
    Ok(resp)
}

async fn route(
    app: Arc<App>,
    req: Request<Incoming>,
    path: &str,
    query: &Query,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let is_get = req.method() == Method::GET || req.method() == Method::HEAD;
    match path {
        "/healthz" | "/livez" | "/readyz" | "/healthz/" | "/livez/" | "/readyz/" if is_get => {
            return Ok(plain(StatusCode::OK, "ok"));
        }
        p if is_get
            && (p.starts_with("/healthz/")
                || p.starts_with("/livez/")
                || p.starts_with("/readyz/")) =>
        {
            return Ok(plain(StatusCode::OK, "ok"));
        }
        "/version" | "/version/" if is_get => {
            let out = negotiate(accept, Capabilities::default())?;
            return Ok(render(
                StatusCode::OK,
                Payload::Value(crate::version_info()),
                out,
                pretty,
            ));
        }
        "/" if is_get => {
            let out = negotiate(accept, Capabilities::default())?;
            let paths = json!({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version"]});
            return Ok(render(StatusCode::OK, Payload::Value(paths), out, pretty));
        }
        _ => {}
    }
    if path == "/openapi/v2" || path.starts_with("/openapi/v3") {
        if !is_get {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
        // Read-your-writes, as every read: a CRD just created is published.
        app.registry.sync().await?;
        return crate::openapi::serve(&app, &req, path, accept);
    }
    let Some(api_path) = parse_api_path(path) else {
        return Err(ApiError::path_not_found());
    };
    match api_path {
        ApiPath::Resource(rp) => handlers::resource(app, req, rp, query, accept, pretty).await,
        other if is_get => discovery_response(&app, other, accept, pretty).await,
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
    }
}

async fn discovery_response(
    app: &App,
    p: ApiPath,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    // Discovery must reflect every acknowledged CRD write.
    app.registry.sync().await?;
    let res = app.registry.resources();
    let caps = Capabilities {
        aggregated_discovery: matches!(p, ApiPath::Root { .. }),
        ..Default::default()
    };
    let out = negotiate(accept, caps)?;
    let body = match p {
        ApiPath::Root { core } => match out {
            Output::AggregatedDiscovery { v2beta1 } => {
                let doc = discovery::aggregated(&res, core, v2beta1);
                let mut r = render(StatusCode::OK, Payload::Value(doc), Output::Json, pretty);
                let ct = if v2beta1 {
                    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
                } else {
                    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
                };
                r.headers_mut()
                    .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(ct));
                r.headers_mut()
                    .insert(http::header::VARY, HeaderValue::from_static("Accept"));
                return Ok(r);
            }
            _ if core => discovery::api_versions(&app.address),
            _ => discovery::api_group_list(&res),
        },
        ApiPath::Group(g) => discovery::api_group(&res, &g).ok_or_else(ApiError::path_not_found)?,
        ApiPath::GroupVersion { group, version } => {
            discovery::api_resource_list(&res, &crest_api::GroupVersion::new(&group, &version))
                .ok_or_else(ApiError::path_not_found)?
        }
        ApiPath::Resource(_) => return Err(ApiError::path_not_found()),
    };
    Ok(render(StatusCode::OK, Payload::Value(body), out, pretty))
}
