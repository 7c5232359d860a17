//! Authentication's pure core, as kube-apiserver authenticates (k8s.io/apiserver
//! `pkg/authentication` and kubernetes `pkg/serviceaccount`): no file or network I/O and no
//! async runtime; time comes in as a parameter (unix seconds), keys and certificates as bytes.
//!
//! | module | mirrors |
//! | --- | --- |
//! | [`x509`] | `authentication/request/x509` (`CommonNameUserConversion`), plus issuing client certificates from the server's CA |
//! | [`tokenfile`] | `authentication/token/tokenfile` (`--token-auth-file`) |
//! | [`serviceaccount`] | `pkg/serviceaccount` (`jwt.go`, `claims.go`), `authentication/serviceaccount` (`ServiceAccountInfo.UserInfo`) |
//! | [`keys`] | the service-account signing keys (`keyutil`, `keyIDFromPublicKey`, the JWKS of `/openid/v1/jwks`) |
//! | [`tokenrequest`] | `pkg/registry/core/serviceaccount/storage/token.go`, `pkg/apis/authentication/validation`, `pkg/registry/authentication/tokenreview` |
//! | [`impersonation`] | `endpoints/filters/impersonation.go` |
//! | [`cache`] | `authentication/token/cache` (the cached token authenticator) |
//! | [`authenticator`] | `pkg/kubeapiserver/authenticator` (the chain: x509, tokens, group adder, anonymous) |
//! | this module | `request/bearertoken`, `request/anonymous`, `group/authenticated_group_adder`, `filters.Unauthorized` |
//!
//! # How a request is authenticated (kube-apiserver's order)
//!
//! [`authenticator::Authenticator::authenticate`] does all of this; the steps:
//!
//! 1. A verified client certificate ([`x509::user_from_client_cert`]) or a bearer token
//!    ([`bearer_token`], then [`tokenfile::TokenFile::lookup`] and
//!    [`serviceaccount::verify`] + [`serviceaccount::SaClaims::validate`]) gives a user;
//!    [`with_authenticated_group`] adds `system:authenticated`.
//! 2. A presented credential that fails (a token no authenticator accepts, an expired or revoked
//!    ServiceAccount token) is a 401 ([`unauthorized`]) even with anonymous auth enabled
//!    (upstream's `union.NewFailOnError`).
//! 3. No credential at all: [`anonymous`] when `--anonymous-auth` is on, else 401.
//! 4. Impersonation headers ([`impersonation`]) are applied after authentication.

use crest_api::{names, UserInfo};
use crest_api::{ApiError, Reason};
use std::fmt;

pub mod authenticator;
pub mod cache;
pub mod impersonation;
pub mod keys;
pub mod serviceaccount;
pub mod tokenfile;
pub mod tokenrequest;
pub mod x509;

mod der;

/// Why a credential did not authenticate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthError {
    /// The credential is not of this authenticator's kind (upstream's `nil, false, nil`): e.g. a
    /// token that is not a JWT of this issuer, a certificate without a common name. The next
    /// authenticator is tried; when none accepts a bearer token, upstream reports
    /// `invalid bearer token`.
    NotRecognized,
    /// The credential is this authenticator's and is rejected; the message is upstream's (what a
    /// TokenReview's `status.error` shows).
    Invalid(String),
}

impl AuthError {
    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        AuthError::Invalid(msg.into())
    }

    /// The message a TokenReview shows for this failure.
    pub fn message(&self) -> &str {
        match self {
            AuthError::NotRecognized => INVALID_BEARER_TOKEN,
            AuthError::Invalid(m) => m,
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for AuthError {}

/// bearertoken's error when a bearer token was presented and no token authenticator accepted it.
pub const INVALID_BEARER_TOKEN: &str = "invalid bearer token";

/// The warning kube-apiserver adds when the Authorization header is `Bearer  <token>` (two
/// spaces): the header is then ignored.
pub const INVALID_TOKEN_WITH_SPACE_WARNING: &str =
    "the provided Authorization header contains extra space before the bearer token, and is ignored";

/// What the Authorization header carries, read as upstream's `bearertoken.Authenticator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bearer<'a> {
    /// No bearer token (no header, another scheme, or an empty token): not a credential.
    None,
    /// `Bearer  token` (a space before the token): ignored, with
    /// [`INVALID_TOKEN_WITH_SPACE_WARNING`] as a response warning.
    IgnoredWithWarning,
    /// The token to authenticate.
    Token(&'a str),
}

/// Reads the `Authorization` header's bearer token as upstream: trimmed, split on the first two
/// spaces, scheme `bearer` case-insensitive, the token being the second part.
pub fn bearer_token(authorization: Option<&str>) -> Bearer<'_> {
    let Some(auth) = authorization.map(str::trim) else {
        return Bearer::None;
    };
    if auth.is_empty() {
        return Bearer::None;
    }
    let mut parts = auth.splitn(3, ' ');
    let scheme = parts.next().unwrap_or("");
    let Some(token) = parts.next() else {
        return Bearer::None;
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Bearer::None;
    }
    if token.is_empty() {
        return if parts.next().is_some() {
            Bearer::IgnoredWithWarning
        } else {
            Bearer::None
        };
    }
    Bearer::Token(token)
}

/// The user of a request without credentials when `--anonymous-auth` is on (upstream's
/// `anonymous.NewAuthenticator`): `system:anonymous` in `system:unauthenticated`.
pub fn anonymous() -> UserInfo {
    UserInfo {
        name: names::ANONYMOUS.to_string(),
        groups: vec![names::ALL_UNAUTHENTICATED.to_string()],
        ..UserInfo::default()
    }
}

/// Upstream's `AuthenticatedGroupAdder`: appends `system:authenticated` to an authenticated user
/// unless the user is `system:anonymous`, or already is in `system:authenticated` or
/// `system:unauthenticated`.
pub fn with_authenticated_group(mut user: UserInfo) -> UserInfo {
    if user.name == names::ANONYMOUS {
        return user;
    }
    if user
        .groups
        .iter()
        .any(|g| g == names::ALL_AUTHENTICATED || g == names::ALL_UNAUTHENTICATED)
    {
        return user;
    }
    user.groups.push(names::ALL_AUTHENTICATED.to_string());
    user
}

/// The 401 kube-apiserver answers for a request whose credentials do not authenticate
/// (`apierrors.NewUnauthorized("Unauthorized")`): message and reason `Unauthorized`, code 401,
/// no details.
pub fn unauthorized() -> ApiError {
    ApiError::new(401, Reason::Unauthorized, "Unauthorized")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bearer_parsing() {
        assert_eq!(bearer_token(None), Bearer::None);
        assert_eq!(bearer_token(Some("")), Bearer::None);
        assert_eq!(bearer_token(Some("Basic abc")), Bearer::None);
        assert_eq!(bearer_token(Some("Bearer")), Bearer::None);
        assert_eq!(bearer_token(Some("Bearer abc")), Bearer::Token("abc"));
        assert_eq!(bearer_token(Some("  bearer abc  ")), Bearer::Token("abc"));
        assert_eq!(bearer_token(Some("BEARER abc def")), Bearer::Token("abc"));
        assert_eq!(
            bearer_token(Some("Bearer  abc")),
            Bearer::IgnoredWithWarning
        );
    }

    #[test]
    fn anonymous_user() {
        let u = anonymous();
        assert_eq!(u.name, "system:anonymous");
        assert_eq!(u.groups, vec!["system:unauthenticated"]);
        assert_eq!(with_authenticated_group(u.clone()), u);
    }

    #[test]
    fn group_adder() {
        let u = UserInfo {
            name: "alice".into(),
            groups: vec!["dev".into()],
            ..UserInfo::default()
        };
        let u = with_authenticated_group(u);
        assert_eq!(u.groups, vec!["dev", "system:authenticated"]);
        // Already there: not added twice.
        assert_eq!(with_authenticated_group(u.clone()), u);
        let v = UserInfo {
            name: "bob".into(),
            groups: vec!["system:unauthenticated".into()],
            ..UserInfo::default()
        };
        assert_eq!(with_authenticated_group(v.clone()), v);
    }

    #[test]
    fn unauthorized_status() {
        assert_eq!(
            unauthorized().to_status(),
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        );
    }
}
