//! The shared state of a running server, handed to every request and connection.

use crate::registry::Registry;
use crate::views;
use std::sync::Arc;

/// A TLS client's leaf certificate (DER), carried by each request of its connection, with its
/// authentication cache key (the SHA-256 of the DER), computed once per connection.
#[derive(Clone)]
pub(crate) struct PeerCertificate {
    pub der: Arc<[u8]>,
    pub key: crest_auth::cache::CacheKey,
}

impl PeerCertificate {
    pub(crate) fn new(der: &[u8]) -> Self {
        PeerCertificate {
            der: Arc::from(der),
            key: crest_auth::cache::CacheKey::certificate(der),
        }
    }
}

/// Shared state of a running server.
pub(crate) struct App {
    pub registry: Arc<Registry>,
    pub openapi: views::openapi::OpenApiCache,
    /// `host:port` clients reach the server at.
    pub address: String,
    pub shutdown: tokio::sync::watch::Sender<bool>,
    /// Authentication of every request (`None`: every request is anonymous).
    pub authn: Option<crate::authn::Authn>,
    /// How long a request that is not long-running may take (`--request-timeout`).
    pub request_timeout: std::time::Duration,
    /// See [`crate::Config::min_request_timeout`].
    pub min_request_timeout: std::time::Duration,
}
