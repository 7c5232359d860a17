//! Routing of every path: authentication, authorization, health, discovery and OpenAPI,
//! the review APIs, and resource requests handed to `handlers`.

use crate::http::app::{App, PeerCertificate};
use crate::http::render::{error_response, full, render, Body, Payload};
use crate::http::request::{parse_api_path, ApiPath};
use crate::http::request_body::RequestBody;
use crate::http::{handlers, openapi, render, request};
use crate::registry::options::Query;
use crate::views::{self, discovery};
use crest_api::ApiError;
use crest_codec::negotiate::{negotiate, Capabilities, Output};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;

fn accept(req: &Request<RequestBody>) -> Option<String> {
    req.headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn plain(status: StatusCode, text: impl Into<String>) -> Response<Body> {
    let mut r = Response::new(full(text.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The health endpoints as kube-apiserver answers them: `ok`, or with `?verbose` (and always
/// when a check fails) one `[+]name ok` / `[-]name failed: reason withheld` line per check and a
/// verdict; `?exclude=name` leaves a check out (printed in its place as excluded); `/<endpoint>/<check>` runs one check and gives
/// the reason. `etcd` fails while storage does not answer or reports a fault (writes failing on a
/// full disk), `cache-feed` while the cache is not
/// being fed from storage (reads would wait and time out); liveness includes neither, since a
/// restart would not help and both heal by themselves. Checks Crest does not have (upstream's
/// post-start hooks, informer-sync, ...) pass, as there is nothing for them to wait on.
async fn health(app: &App, path: &str, query: &Query) -> Response<Body> {
    let path = path.trim_end_matches('/').trim_start_matches('/');
    let (endpoint, only) = match path.split_once('/') {
        Some((e, check)) => (e, Some(check)),
        None => (path, None),
    };
    let mut checks: Vec<(&str, Option<String>)> = vec![("ping", None), ("log", None)];
    if endpoint != "livez" {
        // Bounded as kube-apiserver's `--etcd-healthcheck-timeout` (2 s): a store that hangs
        // fails the check instead of hanging the probe.
        // A store that answers but cannot write (a full disk, an I/O error) fails it too, for
        // as long as the fault lasts, so that the fault shows where operators look.
        let storage = match app.registry.reads().storage_problem() {
            Some(problem) => Some(problem),
            None => match tokio::time::timeout(
                std::time::Duration::from_secs(2),
                app.registry.reads().current_revision(),
            )
            .await
            {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some("the store did not answer within 2s".into()),
            },
        };
        checks.push(("etcd", storage));
        checks.push(("cache-feed", app.registry.feed.problem()));
    }
    if let Some(name) = only {
        return match checks.iter().find(|(n, _)| *n == name) {
            Some((_, Some(why))) => plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {why}\n"),
            ),
            _ => plain(StatusCode::OK, "ok"),
        };
    }
    // Excluded checks print in their place; names that match no check get upstream's warning.
    let excludes = query.all("exclude");
    let excluded = |name: &str| excludes.iter().any(|x| x == name);
    let failed = checks
        .iter()
        .any(|(name, problem)| problem.is_some() && !excluded(name));
    if !failed && query.get("verbose").is_none() {
        return plain(StatusCode::OK, "ok");
    }
    let mut text = String::new();
    for (name, problem) in &checks {
        match problem {
            _ if excluded(name) => text.push_str(&format!("[+]{name} excluded: ok\n")),
            None => text.push_str(&format!("[+]{name} ok\n")),
            Some(why) => {
                tracing::warn!(check = name, reason = %why, "{endpoint} check failed");
                text.push_str(&format!("[-]{name} failed: reason withheld\n"));
            }
        }
    }
    let unmatched: Vec<String> = excludes
        .iter()
        .filter(|x| !checks.iter().any(|(name, _)| name == x))
        .map(|x| crest_gofmt::go_quote(x))
        .collect();
    if !unmatched.is_empty() {
        text.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            unmatched.join(",")
        ));
    }
    if failed {
        text.push_str(&format!("{endpoint} check failed\n"));
        plain(StatusCode::INTERNAL_SERVER_ERROR, text)
    } else {
        text.push_str(&format!("{endpoint} check passed\n"));
        plain(StatusCode::OK, text)
    }
}

/// Entry point for every request. A request that is not long-running (everything but watches)
/// runs under a deadline, as kube-apiserver's `WithRequestDeadline` and
/// `WithTimeoutForNonLongRunningRequests` filters set it: `--request-timeout`, or the
/// request's own `?timeout=` when that is shorter, counted from its arrival and covering
/// everything up to the response, reading the body included. A request past its deadline
/// is answered 504 and its work dropped, so a client that sends its body slowly, or a
/// request stuck on a dependency, holds neither memory nor a worker beyond it.
pub(crate) async fn serve(
    app: Arc<App>,
    req: Request<RequestBody>,
) -> Result<Response<Body>, Infallible> {
    let arrived = tokio::time::Instant::now();
    let query = Query::parse(req.uri().query());
    let path = req.uri().path().to_string();
    // Resolved once: the deadline and authorization both read it.
    let info = crate::authz::request_info(req.method(), &path, &query);
    let timeout = match deadline(&app, &info, &query) {
        Ok(t) => t,
        Err(e) => {
            let out =
                negotiate(accept(&req).as_deref(), Capabilities::default()).unwrap_or(Output::Json);
            return Ok(error_response(&e, out));
        }
    };
    let http1 = req.version() < http::Version::HTTP_2;
    let handled = serve_request(app, req, &path, &info, &query);
    let Some(timeout) = timeout else {
        return handled.await;
    };
    match tokio::time::timeout_at(arrived + timeout, handled).await {
        Ok(resp) => resp,
        Err(_) => {
            tracing::debug!(timeout_ms = timeout.as_millis() as u64, "request timed out");
            Ok(timed_out(http1))
        }
    }
}

/// The time a request may take: `None` for a long-running one (watches, and the proxy, exec,
/// attach, log and portforward verbs kube-apiserver also exempts); a 400 for a malformed
/// `?timeout=`. A `timeout` of zero or over `--request-timeout` means `--request-timeout`.
fn deadline(
    app: &App,
    info: &crate::authz::RequestInfo<'_>,
    query: &Query,
) -> Result<Option<std::time::Duration>, ApiError> {
    let long_running = matches!(&*info.verb, "watch" | "proxy")
        || matches!(
            &*info.subresource,
            "attach" | "exec" | "proxy" | "log" | "portforward"
        );
    if long_running {
        return Ok(None);
    }
    let mut timeout = app.request_timeout;
    if let Some(v) = query.get("timeout").filter(|v| !v.is_empty()) {
        let nanos = crest_gofmt::go_parse_duration(v).map_err(|e| {
            ApiError::bad_request(format!(
                "invalid timeout specified in the request URL - {e}"
            ))
        })?;
        if nanos > 0 && (nanos as u128) < timeout.as_nanos() {
            timeout = std::time::Duration::from_nanos(nanos as u64);
        }
    }
    Ok(Some(timeout))
}

/// kube-apiserver's answer to a request past its deadline: 504 with the `Status` its timeout
/// filter encodes directly (no `kind`/`apiVersion`, sniffed as text by Go's server).
fn timed_out(http1: bool) -> Response<Body> {
    let mut r = plain(
        StatusCode::GATEWAY_TIMEOUT,
        "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n",
    );
    // The body a timed-out request was sending is not read to its end: an HTTP/1.1
    // connection cannot carry another request (an HTTP/2 stream simply ends).
    if http1 {
        r.headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

async fn serve_request(
    app: Arc<App>,
    req: Request<RequestBody>,
    path: &str,
    info: &crate::authz::RequestInfo<'_>,
    query: &Query,
) -> Result<Response<Body>, Infallible> {
    let pretty = query.bool("pretty").unwrap_or(false);
    let accept = accept(&req);
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let mut req = req;
    let mut warning = None;
    // kube-apiserver's UnauthenticatedHTTP2DOSMitigation: an HTTP/2 connection is expensive to
    // keep, so one whose request did not authenticate, or authenticated as anonymous, carries
    // just that request (`Connection: close`, which the HTTP/2 server turns into a GOAWAY).
    let http2 = req.version() == http::Version::HTTP_2;
    let mut unauthenticated = false;
    if let Some(authn) = &app.authn {
        let authorization = req
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let peer = req.extensions().get::<PeerCertificate>().cloned();
        let (user, w) = authn.authenticate(
            &app.registry,
            authorization,
            peer.as_ref().map(|p| (&*p.der, p.key)),
        );
        warning = w;
        unauthenticated = match &user {
            // Upstream's isAnonymousUser.
            Ok(u) => {
                use crest_api::names;
                u.user.name == names::ANONYMOUS
                    || u.user
                        .groups
                        .iter()
                        .any(|g| g == names::ALL_UNAUTHENTICATED)
            }
            Err(_) => true,
        };
        let refused = match user {
            Ok(u) => match authorize(&app, &mut req, u, info).await {
                Ok(()) => None,
                Err(Ok(e)) => Some(e),
                Err(Err(internal)) => {
                    // Go's `RequestURI`: the path and query as sent, never scheme and host
                    // (which an HTTP/2 request's URI carries).
                    let uri = req
                        .uri()
                        .path_and_query()
                        .map_or("/", |p| p.as_str())
                        .to_string();
                    return Ok(plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        internal.body(&uri),
                    ));
                }
            },
            Err(e) => Some(e),
        };
        if let Some(e) = refused {
            let out = negotiate(accept.as_deref(), Capabilities::default()).unwrap_or(Output::Json);
            let mut resp = error_response(&e, out);
            if let Some(v) = warning.and_then(render::warning_header) {
                resp.headers_mut().append(http::header::WARNING, v);
            }
            if http2 && unauthenticated {
                resp.headers_mut()
                    .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            }
            return Ok(resp);
        }
    }
    let resp = match route(app, req, path, query, accept.as_deref(), pretty).await {
        Ok(r) => r,
        Err(e) => {
            let out = negotiate(accept.as_deref(), Capabilities::default()).unwrap_or(Output::Json);
            error_response(&e, out)
        }
    };
    let mut resp = resp;
    if let Some(v) = warning.and_then(render::warning_header) {
        resp.headers_mut().append(http::header::WARNING, v);
    }
    render::limit_warnings(resp.headers_mut());
    if http2 && unauthenticated {
        resp.headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    tracing::debug!(%method, %path, status = resp.status().as_u16(), elapsed_us = started.elapsed().as_micros() as u64, "request");
    Ok(resp)
}

/// The impersonation and authorization filters, for a request authenticated as `user`: the
/// user the request runs as goes into its extensions (the impersonated one, if any); a 403
/// (or 500 for malformed impersonation headers) when it may not go on.
async fn authorize(
    app: &App,
    req: &mut Request<RequestBody>,
    user: Arc<crest_auth::cache::Authenticated>,
    info: &crate::authz::RequestInfo<'_>,
) -> Result<(), Result<ApiError, crest_auth::impersonation::ImpersonationError>> {
    let registry = &app.registry;
    let user = match crate::authz::impersonate(registry, &user.user, req.headers()).await? {
        Some(as_user) => Arc::new(crest_auth::cache::Authenticated {
            user: as_user,
            audiences: user.audiences.clone(),
        }),
        None => user,
    };
    crate::authz::authorize(registry, &user.user, info)
        .await
        .map_err(Ok)?;
    req.extensions_mut().insert(user);
    Ok(())
}

async fn route(
    app: Arc<App>,
    req: Request<RequestBody>,
    path: &str,
    query: &Query,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let is_get = req.method() == Method::GET || req.method() == Method::HEAD;
    match path {
        p if is_get
            && ["/healthz", "/livez", "/readyz"]
                .iter()
                .any(|h| p == *h || p.starts_with(&format!("{h}/"))) =>
        {
            return Ok(health(&app, p, query).await);
        }
        // `kubectl auth whoami`: who the request authenticated as (authentication.k8s.io/v1
        // SelfSubjectReview, create only, nothing stored).
        "/apis/authentication.k8s.io/v1/selfsubjectreviews" if req.method() == Method::POST => {
            let out = negotiate(accept, Capabilities::default())?;
            let user = req
                .extensions()
                .get::<Arc<crest_auth::cache::Authenticated>>()
                .map(|a| a.user.clone())
                .unwrap_or_else(crest_auth::anonymous);
            let review = crest_auth::tokenrequest::self_subject_review(
                &user,
                chrono::Utc::now().timestamp(),
            );
            return Ok(render(
                StatusCode::CREATED,
                Payload::Value(review),
                out,
                pretty,
            ));
        }
        // TokenReview: whether a token authenticates (create only, nothing stored).
        "/apis/authentication.k8s.io/v1/tokenreviews" if req.method() == Method::POST => {
            let Some(authn) = &app.authn else {
                return Err(ApiError::path_not_found());
            };
            let out = negotiate(accept, Capabilities::default())?;
            let body = render::read_body(req.into_body()).await?;
            let review = crest_codec::negotiate::decode_object(&body, false)?;
            let answer = authn.token_review(&app.registry, &review)?;
            return Ok(render(
                StatusCode::CREATED,
                Payload::Value(answer),
                out,
                pretty,
            ));
        }
        "/version" | "/version/" if is_get => {
            let out = negotiate(accept, Capabilities::default())?;
            // version.Info's fields in Go's order (it has no kind to look its type up by).
            let info = crest_codec::json::to_vec_as(
                &views::version_info(),
                "k8s.io/apimachinery/pkg/version.Info",
                false,
            );
            return Ok(render(
                StatusCode::OK,
                Payload::Json(bytes::Bytes::from(info)),
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
        return openapi::serve(&app, &req, path, accept);
    }
    let Some(api_path) = parse_api_path(path) else {
        return Err(ApiError::path_not_found());
    };
    match api_path {
        ApiPath::Resource(rp)
            if req.method() == Method::POST
                && rp.group.is_empty()
                && rp.resource == "serviceaccounts"
                && rp.subresource.as_deref() == Some("token") =>
        {
            service_account_token(app, req, rp, accept, pretty).await
        }
        // The create-only resources (reviews, serviceaccounts/token) have no other verb.
        ApiPath::Resource(rp)
            if req.method() != Method::POST
                && (rp.subresource.as_deref() == Some("token")
                    && rp.group.is_empty()
                    && rp.resource == "serviceaccounts"
                    || (rp.subresource.is_none()
                        && crate::registry::builtin::CREATE_ONLY.iter().any(|c| {
                            c.group == rp.group
                                && c.version == rp.version
                                && c.plural == rp.resource
                                && c.namespaced == rp.namespace.is_some()
                        }))) =>
        {
            Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ))
        }
        ApiPath::Resource(rp)
            if req.method() == Method::POST
                && rp.group == crate::authz::review::GROUP
                && rp.version == "v1"
                && rp.name.is_none() =>
        {
            match crate::authz::review::Review::from_resource(&rp.resource, rp.namespace.is_some())
            {
                Some(which) => access_review(app, req, which, rp, accept, pretty).await,
                None => Err(ApiError::path_not_found()),
            }
        }
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

/// POST .../serviceaccounts/NAME/token: a TokenRequest (JSON, YAML or protobuf, as
/// `kubectl create token` sends it) answered with the signed token (201).
async fn service_account_token(
    app: Arc<App>,
    req: Request<RequestBody>,
    rp: request::ResourcePath,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let (Some(authn), Some(ns), Some(name)) = (&app.authn, rp.namespace, rp.name) else {
        return Err(ApiError::path_not_found());
    };
    let caps = Capabilities {
        protobuf: true,
        ..Default::default()
    };
    let out = negotiate(accept, caps)?;
    let request = read_builtin_object(req, "authentication.k8s.io", "TokenRequest").await?;
    // The ServiceAccount must be in the cache as of this request.
    app.registry.sync().await?;
    let (answer, warnings) = authn.token_request(&app.registry, &ns, &name, &request)?;
    let mut resp = render(StatusCode::CREATED, Payload::Value(answer), out, pretty);
    for w in warnings.iter().filter_map(|w| render::warning_header(w)) {
        resp.headers_mut().append(http::header::WARNING, w);
    }
    Ok(resp)
}

/// The body of a create-only built-in kind's request (`GROUP/v1` `kind`): JSON, YAML or
/// protobuf, as the content type says.
async fn read_builtin_object(
    req: Request<RequestBody>,
    group: &str,
    kind: &str,
) -> Result<serde_json::Value, ApiError> {
    let ctype = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = render::read_body(req.into_body()).await?;
    match crest_codec::negotiate::body_format(ctype.as_deref()) {
        crest_codec::negotiate::BodyFormat::Protobuf => {
            crest_codec::protobuf::decode_object(&body, group, "v1", kind)
        }
        crest_codec::negotiate::BodyFormat::Yaml => {
            crest_codec::negotiate::decode_object(&body, true)
        }
        _ => crest_codec::negotiate::decode_object(&body, false),
    }
}

/// POST of an authorization.k8s.io/v1 review (`kubectl auth can-i`): answered 201 with the
/// review's status, nothing stored.
async fn access_review(
    app: Arc<App>,
    req: Request<RequestBody>,
    which: crate::authz::review::Review,
    rp: request::ResourcePath,
    accept: Option<&str>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let caps = Capabilities {
        protobuf: true,
        ..Default::default()
    };
    let out = negotiate(accept, caps)?;
    let user = req
        .extensions()
        .get::<Arc<crest_auth::cache::Authenticated>>()
        .map(|a| a.user.clone())
        .unwrap_or_else(crest_auth::anonymous);
    let review = read_builtin_object(req, crate::authz::review::GROUP, which.kind()).await?;
    let answer =
        crate::authz::review::create(&app.registry, which, &user, rp.namespace.as_deref(), review)
            .await?;
    Ok(render(
        StatusCode::CREATED,
        Payload::Value(answer),
        out,
        pretty,
    ))
}
