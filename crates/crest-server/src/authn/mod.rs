//! Authentication of every request, as k8s.io/apiserver's authentication filter: the
//! credentials (bearer token; client certificates come with TLS) resolved to a
//! `crest_api::UserInfo` by crest-auth's `Authenticator` (static token file, ServiceAccount
//! tokens checked against the store, anonymous), a bad credential answered 401.
//!
//! Sits between `http` (which calls it per request) and `registry` (whose cache it reads to
//! check that a ServiceAccount token's account, and bound object, still exist).

mod token;

use crate::registry::Registry;
use crest_api::ApiError;
use crest_auth::authenticator::Authenticator;
use crest_auth::cache::Authenticated;
use crest_auth::serviceaccount::{Existing, TokenObjects};
use serde_json::Value;
use std::sync::Arc;

/// The authenticator a server uses (shared; its cache is internally synchronized), and the
/// key and issuer of the ServiceAccount tokens it issues (`serviceaccounts/token`).
#[derive(Clone)]
pub struct Authentication {
    pub authenticator: Arc<crest_auth::authenticator::Authenticator>,
    pub signer: Option<Arc<crest_auth::keys::SigningKey>>,
    pub issuer: String,
}

impl std::fmt::Debug for Authentication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Authentication")
    }
}

/// The server's authenticator.
pub(crate) struct Authn {
    authenticator: Arc<Authenticator>,
    /// The key ServiceAccount tokens are signed with (`None`: tokens are not issued).
    signer: Option<Arc<crest_auth::keys::SigningKey>>,
    token_config: crest_auth::tokenrequest::TokenRequestConfig,
}

impl Authn {
    pub(crate) fn new(a: Authentication) -> Self {
        Authn {
            authenticator: a.authenticator,
            signer: a.signer,
            token_config: crest_auth::tokenrequest::TokenRequestConfig::new(&a.issuer),
        }
    }

    /// The user of a request with `authorization` (the header) and, over TLS, the client's
    /// leaf certificate (with its cache key, computed once per connection); a 401 Status for credentials that do not authenticate, and
    /// the warning to add to the response, if any.
    pub(crate) fn authenticate(
        &self,
        registry: &Registry,
        authorization: Option<&str>,
        client_cert: Option<(&[u8], crest_auth::cache::CacheKey)>,
    ) -> (Result<Arc<Authenticated>, ApiError>, Option<&'static str>) {
        let now = chrono::Utc::now().timestamp();
        let a = self.authenticator.authenticate_keyed(
            client_cert,
            authorization,
            &StoreObjects(registry),
            now,
        );
        let result = a.result.map_err(|e| {
            tracing::debug!(error = %e.message(), "unauthorized request");
            crest_auth::unauthorized()
        });
        (result, a.warning)
    }
}

impl Authn {
    /// A TokenReview (authentication.k8s.io/v1): whether `body`'s token authenticates, for
    /// which audiences, as whom (201 with the review's status).
    pub(crate) fn token_review(
        &self,
        registry: &Registry,
        body: &serde_json::Value,
    ) -> Result<serde_json::Value, ApiError> {
        let review = crest_auth::tokenrequest::TokenReview::decode(body, "")?;
        let api_audiences = &self.authenticator.service_accounts.api_audiences;
        let audiences = review.target_audiences(api_audiences).to_vec();
        let result = self
            .authenticator
            .authenticate_token(
                &review.token,
                &audiences,
                &StoreObjects(registry),
                chrono::Utc::now().timestamp(),
            )
            .map(|a| (a.user.clone(), a.audiences.clone()));
        Ok(review.response(&result))
    }
}

/// The objects a ServiceAccount token names, read from the registry's cache.
struct StoreObjects<'a>(&'a Registry);

impl StoreObjects<'_> {
    fn existing(&self, plural: &str, ns: Option<&str>, name: &str) -> Option<Existing> {
        let v = lookup(self.0, plural, ns, name)?;
        let deletion_timestamp = crest_api::meta::meta_str(&v, "deletionTimestamp");
        Some(Existing {
            uid: crest_api::meta::meta_str(&v, "uid").to_string(),
            deletion_timestamp: chrono::DateTime::parse_from_rfc3339(deletion_timestamp)
                .ok()
                .map(|t| t.timestamp()),
        })
    }
}

impl TokenObjects for StoreObjects<'_> {
    fn service_account(&self, namespace: &str, name: &str) -> Result<Existing, String> {
        self.existing("serviceaccounts", Some(namespace), name)
            .ok_or_else(|| format!("serviceaccounts {name:?} not found"))
    }
    fn pod(&self, namespace: &str, name: &str) -> Option<Existing> {
        self.existing("pods", Some(namespace), name)
    }
    fn secret(&self, namespace: &str, name: &str) -> Option<Existing> {
        self.existing("secrets", Some(namespace), name)
    }
    fn node(&self, name: &str) -> Option<Existing> {
        self.existing("nodes", None, name)
    }
}

/// A core/v1 object as the cache holds it now.
fn lookup(registry: &Registry, plural: &str, ns: Option<&str>, name: &str) -> Option<Value> {
    let def = registry.resources().lookup("", "v1", plural)?;
    registry.reads().get(&def.key(ns, name))?.value().ok()
}
