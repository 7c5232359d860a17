//! Calling webhooks that a configuration addresses through a Service (`clientConfig.service`:
//! conversion webhooks, admission webhooks), as kube-apiserver's webhook client does with
//! endpoint routing: the URL requests are made to (and errors name) is
//! `https://<name>.<namespace>.svc:<port><path>`, the TLS server name `<name>.<namespace>.svc`
//! verified against the configuration's `caBundle`, and the address dialled one of the Service's
//! ready endpoints for that port, read from the EndpointSlices and Endpoints stored in Crest
//! (`resolve`).
//!
//! The interface is narrow: a [`ServiceReference`], a CA bundle and a body in, a
//! [`WebhookResponse`] or a [`WebhookError`] out ([`ServiceResolver::post`]); callers decide
//! what the response means. It reads through the registry, as clients do, so it sits beside
//! the controllers above the registry.

mod client;
pub(crate) mod conversion;
mod resolve;

pub(crate) use client::WebhookResponse;
pub(crate) use resolve::ResolveError;

use crate::registry::Registry;
use crate::store::keys::{ENDPOINTSLICE_PREFIX, ENDPOINTS_PREFIX, SERVICE_PREFIX};
use serde_json::Value;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A webhook's `clientConfig.service`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServiceReference {
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// The URL path requests go to (`""`: `/`).
    pub(crate) path: String,
    /// The Service port (`None`: 443, as upstream defaults it).
    pub(crate) port: Option<i32>,
}

impl ServiceReference {
    /// Reads `clientConfig.service` as the API holds it.
    pub(crate) fn from_json(v: &Value) -> ServiceReference {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        ServiceReference {
            namespace: s("namespace"),
            name: s("name"),
            path: s("path"),
            port: v
                .get("port")
                .and_then(Value::as_i64)
                .and_then(|p| i32::try_from(p).ok()),
        }
    }

    /// The port requests go to: the one given, or 443.
    pub(crate) fn port(&self) -> i32 {
        self.port.filter(|p| *p != 0).unwrap_or(443)
    }

    /// `<name>.<namespace>.svc`: the host of the URL and the TLS server name.
    pub(crate) fn server_name(&self) -> String {
        format!("{}.{}.svc", self.name, self.namespace)
    }

    /// The URL the webhook is called at, as requests and errors name it.
    pub(crate) fn url(&self) -> String {
        let path = if self.path.starts_with('/') {
            self.path.clone()
        } else {
            format!("/{}", self.path)
        };
        format!("https://{}:{}{path}", self.server_name(), self.port())
    }
}

/// Why a call failed, worded as Go's HTTP client words it: `Post "<url>": <reason>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WebhookError {
    /// The URL requested (with `?timeout=` as the REST client adds it).
    pub(crate) url: String,
    pub(crate) reason: String,
    /// Whether the address could not be resolved (no Service, port or ready endpoint), rather
    /// than the call itself failing.
    pub(crate) unresolved: bool,
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Post {:?}: {}", self.url, self.reason)
    }
}

impl std::error::Error for WebhookError {}

/// Resolves Service references to endpoints stored in Crest and calls them.
#[derive(Clone)]
pub(crate) struct ServiceResolver {
    registry: Arc<Registry>,
}

impl ServiceResolver {
    pub(crate) fn new(registry: Arc<Registry>) -> ServiceResolver {
        ServiceResolver { registry }
    }

    /// The address to dial for `svc`: a ready endpoint of the Service port `svc.port()` (upstream
    /// `ResolveEndpoint`), read after the cache caught up with storage.
    pub(crate) async fn resolve(&self, svc: &ServiceReference) -> Result<SocketAddr, ResolveError> {
        self.registry
            .sync()
            .await
            .map_err(|e| ResolveError(e.message))?;
        let reads = self.registry.reads();
        let get = |prefix: &str| {
            reads
                .get(&crate::store::keys::object_key(
                    prefix,
                    Some(&svc.namespace),
                    &svc.name,
                ))
                .and_then(|o| o.value().ok())
        };
        let service = get(SERVICE_PREFIX);
        let endpoints = get(ENDPOINTS_PREFIX);
        let slices: Vec<Value> = reads
            .snapshot(&crate::store::keys::list_prefix(
                ENDPOINTSLICE_PREFIX,
                Some(&svc.namespace),
            ))
            .objects
            .iter()
            .filter_map(|o| o.value().ok())
            .filter(|s| {
                s.pointer("/metadata/labels/kubernetes.io~1service-name")
                    .and_then(Value::as_str)
                    == Some(svc.name.as_str())
            })
            .collect();
        resolve::resolve_endpoint(
            &svc.name,
            service.as_ref(),
            endpoints.as_ref(),
            &slices,
            svc.port(),
        )
    }

    /// POSTs `body` (JSON) to the webhook `svc` with the CA bundle `ca_bundle` (PEM; empty: the
    /// system's roots), within `timeout` (sent as `?timeout=` too, as the REST client does).
    pub(crate) async fn post(
        &self,
        svc: &ServiceReference,
        ca_bundle: &[u8],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<WebhookResponse, WebhookError> {
        let url = format!("{}?timeout={}", svc.url(), go_duration(timeout));
        let fail = |reason: String, unresolved: bool| WebhookError {
            url: url.clone(),
            reason,
            unresolved,
        };
        let tls = client::tls_config(ca_bundle).map_err(|e| fail(e, false))?;
        let addr = self
            .resolve(svc)
            .await
            .map_err(|e| fail(e.to_string(), true))?;
        let path_and_query = url
            .split_once(".svc:")
            .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
            .unwrap_or_else(|| "/".into());
        let server_name = svc.server_name();
        let host = format!("{server_name}:{}", svc.port());
        let call = client::post(
            addr,
            tls,
            ca_bundle,
            &server_name,
            &host,
            &path_and_query,
            body,
        );
        within(timeout, call).await.map_err(|e| fail(e, false))
    }
}

impl ServiceResolver {
    /// POSTs `body` to the webhook a `clientConfig` names: its `url` (HTTPS, dialled by its
    /// host, verified for that host) or its `service` (routed as [`ServiceResolver::post`]),
    /// with its `caBundle` (base64 of PEM, as the API holds it).
    pub(crate) async fn call(
        &self,
        client_config: &Value,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<WebhookResponse, WebhookError> {
        use base64::Engine;
        let ca_bundle = client_config
            .get("caBundle")
            .and_then(Value::as_str)
            .map(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        if let Some(service) = client_config.get("service").filter(|s| s.is_object()) {
            let svc = ServiceReference::from_json(service);
            return self.post(&svc, &ca_bundle, body, timeout).await;
        }
        let url = client_config
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.post_url(url, &ca_bundle, body, timeout).await
    }

    /// POSTs `body` to an HTTPS `url` with the CA bundle `ca_bundle` (PEM; empty: the system's
    /// roots), within `timeout` (sent as `?timeout=` too).
    pub(crate) async fn post_url(
        &self,
        url: &str,
        ca_bundle: &[u8],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<WebhookResponse, WebhookError> {
        let sep = if url.contains('?') { '&' } else { '?' };
        let full = format!("{url}{sep}timeout={}", go_duration(timeout));
        let fail = |reason: String, unresolved: bool| WebhookError {
            url: full.clone(),
            reason,
            unresolved,
        };
        let uri: http::Uri = full
            .parse()
            .map_err(|e: http::uri::InvalidUri| fail(e.to_string(), true))?;
        if uri.scheme_str() != Some("https") {
            return Err(fail(
                format!(
                    "unsupported protocol scheme {:?}",
                    uri.scheme_str().unwrap_or_default()
                ),
                true,
            ));
        }
        let host = uri
            .host()
            .unwrap_or_default()
            .trim_matches(['[', ']'])
            .to_string();
        let port = uri.port_u16().unwrap_or(443);
        let tls = client::tls_config(ca_bundle).map_err(|e| fail(e, false))?;
        let addr = tokio::net::lookup_host((host.as_str(), port))
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| fail(format!("dial tcp: lookup {host}: no such host"), true))?;
        let path_and_query = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let authority = uri
            .authority()
            .map(|a| a.as_str().to_string())
            .unwrap_or_default();
        let call = client::post(
            addr,
            tls,
            ca_bundle,
            &host,
            &authority,
            &path_and_query,
            body,
        );
        within(timeout, call).await.map_err(|e| fail(e, false))
    }
}

/// A call bounded by `timeout`, timing out as Go's HTTP client words it.
async fn within<T>(
    timeout: Duration,
    call: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, call).await {
        Ok(r) => r,
        Err(_) => {
            Err("context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into())
        }
    }
}

/// Go's `time.Duration.String` for whole seconds and milliseconds (`30s`, `1.5s`, `500ms`).
fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let frac = d.subsec_millis();
    let sec = if frac == 0 {
        format!("{s}s")
    } else {
        format!("{s}.{}s", format!("{frac:03}").trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => sec,
        (0, m) => format!("{m}m{sec}"),
        (h, m) => format!("{h}h{m}m{sec}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references() {
        let r = ServiceReference::from_json(
            &json!({"namespace": "ns", "name": "hook", "path": "/convert"}),
        );
        assert_eq!(r.port(), 443);
        assert_eq!(r.server_name(), "hook.ns.svc");
        assert_eq!(r.url(), "https://hook.ns.svc:443/convert");
        let r = ServiceReference::from_json(&json!({"namespace": "ns", "name": "h", "port": 8443}));
        assert_eq!(r.url(), "https://h.ns.svc:8443/");
        assert_eq!(go_duration(Duration::from_secs(30)), "30s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(go_duration(Duration::from_secs(90)), "1m30s");
    }
}
