//! kube-apiserver's authenticator chain in one value (`pkg/kubeapiserver/authenticator`
//! `Config.New`): client certificates, then bearer tokens (the token file, then ServiceAccount
//! tokens) behind the token cache, the `system:authenticated` group adder, and anonymous
//! requests last — failing credentials are a 401 even with anonymous auth on
//! (`union.NewFailOnError`).
//!
//! Per request the server calls [`Authenticator::authenticate`] with the verified leaf
//! certificate (if the client sent one), the `Authorization` header and its store's view of
//! ServiceAccounts and bound objects ([`TokenObjects`]); a TokenReview calls
//! [`Authenticator::authenticate_token`] with the review's audiences.

use crate::cache::{Authenticated, CacheKey, TokenCache, TOKEN_SUCCESS_TTL_SECONDS};
use crate::serviceaccount::{self, TokenObjects, Verifier};
use crate::tokenfile::TokenFile;
use crate::tokenrequest::audience_agnostic;
use crate::{anonymous, bearer_token, with_authenticated_group, x509, AuthError, Bearer};
use crate::{INVALID_BEARER_TOKEN, INVALID_TOKEN_WITH_SPACE_WARNING};
use std::sync::Arc;

/// The server's authentication settings and cache.
pub struct Authenticator {
    /// `--token-auth-file`.
    pub token_file: Option<TokenFile>,
    /// ServiceAccount tokens (issuers, keys, API audiences).
    pub service_accounts: Verifier,
    /// `--anonymous-auth`.
    pub anonymous: bool,
    /// When set, client certificates are verified here against these CAs (a failure is a 401);
    /// when not, the caller has verified them (rustls in the handshake).
    pub client_ca: Option<x509::ClientCa>,
    pub cache: TokenCache,
}

/// The outcome of authenticating a request.
#[derive(Clone, Debug)]
pub struct Authentication {
    /// The user (with `system:authenticated`, or anonymous), or why the request is a 401
    /// ([`crate::unauthorized`]).
    pub result: Result<Arc<Authenticated>, AuthError>,
    /// A response warning to add (a `Bearer  token` header with an extra space).
    pub warning: Option<&'static str>,
}

impl Authenticator {
    /// ServiceAccount tokens only, anonymous on, an empty cache; set the rest as needed.
    pub fn new(service_accounts: Verifier) -> Authenticator {
        Authenticator {
            token_file: None,
            service_accounts,
            anonymous: true,
            client_ca: None,
            cache: TokenCache::default(),
        }
    }

    /// Authenticates a request at `now` (unix seconds). After the first request with a given
    /// certificate or token, this is one hash and one map lookup until the entry expires
    /// ([`TOKEN_SUCCESS_TTL_SECONDS`]).
    pub fn authenticate(
        &self,
        client_cert: Option<&[u8]>,
        authorization: Option<&str>,
        objects: &dyn TokenObjects,
        now: i64,
    ) -> Authentication {
        let cert = client_cert.map(|der| (der, CacheKey::certificate(der)));
        self.authenticate_keyed(cert, authorization, objects, now)
    }

    /// [`Authenticator::authenticate`] with the client certificate's cache key
    /// ([`CacheKey::certificate`] of its DER) already computed: a server computes it once per
    /// connection rather than per request.
    pub fn authenticate_keyed(
        &self,
        client_cert: Option<(&[u8], CacheKey)>,
        authorization: Option<&str>,
        objects: &dyn TokenObjects,
        now: i64,
    ) -> Authentication {
        let mut errors: Vec<AuthError> = Vec::new();
        let mut warning = None;
        if let Some((der, key)) = client_cert {
            if let Some(hit) = self.cache.get(&key, now) {
                return Authentication {
                    result: Ok(hit),
                    warning,
                };
            }
            let verified = match &self.client_ca {
                Some(ca) => ca.verify(der, &[], now),
                None => Ok(()),
            };
            match verified.and_then(|()| x509::user_from_client_cert(der)) {
                Ok(user) => {
                    let value = Authenticated {
                        user: with_authenticated_group(user),
                        audiences: self.service_accounts.api_audiences.clone(),
                    };
                    let v = self
                        .cache
                        .insert(key, value, now + TOKEN_SUCCESS_TTL_SECONDS, now);
                    return Authentication {
                        result: Ok(v),
                        warning,
                    };
                }
                Err(AuthError::NotRecognized) => {}
                Err(e) => errors.push(e),
            }
        }
        match bearer_token(authorization) {
            Bearer::Token(token) => match self.authenticate_token(token, &[], objects, now) {
                Ok(v) => {
                    return Authentication {
                        result: Ok(v),
                        warning,
                    }
                }
                Err(e) => errors.push(e),
            },
            Bearer::IgnoredWithWarning => warning = Some(INVALID_TOKEN_WITH_SPACE_WARNING),
            Bearer::None => {}
        }
        let result = if !errors.is_empty() {
            Err(aggregate(errors))
        } else if self.anonymous {
            Ok(Arc::new(Authenticated {
                user: anonymous(),
                audiences: self.service_accounts.api_audiences.clone(),
            }))
        } else {
            Err(AuthError::NotRecognized)
        };
        Authentication { result, warning }
    }

    /// Authenticates a bearer token for `audiences` (empty: the API server's) — a request's
    /// token or a TokenReview's. `Err` carries the message a TokenReview shows (`invalid bearer
    /// token` when no authenticator recognised it).
    pub fn authenticate_token(
        &self,
        token: &str,
        audiences: &[String],
        objects: &dyn TokenObjects,
        now: i64,
    ) -> Result<Arc<Authenticated>, AuthError> {
        let key = CacheKey::token(token, audiences);
        if let Some(hit) = self.cache.get(&key, now) {
            return Ok(hit);
        }
        let api = &self.service_accounts.api_audiences;
        let requested: &[String] = if audiences.is_empty() { api } else { audiences };
        let mut errors = Vec::new();
        if let Some(user) = self.token_file.as_ref().and_then(|f| f.lookup(token)) {
            if let Some(auds) = audience_agnostic(requested, api) {
                let value = Authenticated {
                    user: with_authenticated_group(user.clone()),
                    audiences: auds,
                };
                return Ok(self
                    .cache
                    .insert(key, value, now + TOKEN_SUCCESS_TTL_SECONDS, now));
            }
        }
        match serviceaccount::verify(token, now, audiences, &self.service_accounts) {
            Ok(claims) => match claims.validate(objects, now) {
                Ok(user) => {
                    let value = Authenticated {
                        user: with_authenticated_group(user),
                        audiences: claims.audiences,
                    };
                    return Ok(self
                        .cache
                        .insert(key, value, now + TOKEN_SUCCESS_TTL_SECONDS, now));
                }
                Err(e) => errors.push(e),
            },
            Err(AuthError::NotRecognized) => {}
            Err(e) => errors.push(e),
        }
        if errors.is_empty() {
            Err(AuthError::invalid(INVALID_BEARER_TOKEN))
        } else {
            Err(aggregate(errors))
        }
    }
}

/// Go's `utilerrors.NewAggregate` of authenticator errors.
fn aggregate(mut errors: Vec<AuthError>) -> AuthError {
    if errors.len() == 1 {
        return errors.remove(0);
    }
    let msgs: Vec<&str> = errors.iter().map(AuthError::message).collect();
    AuthError::invalid(format!("[{}]", msgs.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SigningKey;
    use crate::serviceaccount::{Existing, ObjectRef, TokenClaims};

    const ISS: &str = "https://kubernetes.default.svc.cluster.local";
    const NOW: i64 = 1_800_000_000;

    struct OneSa;
    impl TokenObjects for OneSa {
        fn service_account(&self, ns: &str, name: &str) -> Result<Existing, String> {
            if ns == "default" && name == "builder" {
                Ok(Existing {
                    uid: "sa-uid".into(),
                    deletion_timestamp: None,
                })
            } else {
                Err(format!("serviceaccounts {name:?} not found"))
            }
        }
        fn pod(&self, _: &str, _: &str) -> Option<Existing> {
            None
        }
        fn secret(&self, _: &str, _: &str) -> Option<Existing> {
            None
        }
        fn node(&self, _: &str) -> Option<Existing> {
            None
        }
    }

    fn setup() -> (Authenticator, SigningKey) {
        let key = SigningKey::generate().unwrap();
        let mut a = Authenticator::new(Verifier {
            issuers: vec![ISS.into()],
            keys: vec![key.public_key().clone()],
            api_audiences: vec![ISS.into()],
        });
        a.token_file = Some(TokenFile::parse("static-token,alice,1001,dev\n", "/t").unwrap());
        (a, key)
    }

    fn token(key: &SigningKey, sa: &str, exp: i64) -> String {
        serviceaccount::issue(
            &TokenClaims {
                issuer: ISS.into(),
                namespace: "default".into(),
                service_account: ObjectRef::new(sa, "sa-uid"),
                audiences: vec![ISS.into()],
                expiration_seconds: exp,
                warn_after_seconds: 0,
                bound: None,
                jti: "j".into(),
            },
            NOW,
            key,
        )
        .unwrap()
    }

    #[test]
    fn chain() {
        let (a, key) = setup();
        // No credentials: anonymous.
        let r = a.authenticate(None, None, &OneSa, NOW);
        assert_eq!(r.result.unwrap().user.name, "system:anonymous");
        // Static token.
        let r = a.authenticate(None, Some("Bearer static-token"), &OneSa, NOW);
        let u = r.result.unwrap();
        assert_eq!(u.user.name, "alice");
        assert_eq!(u.user.groups, vec!["dev", "system:authenticated"]);
        // A ServiceAccount token, then from the cache.
        let t = token(&key, "builder", 3600);
        let header = format!("Bearer {t}");
        let u = a
            .authenticate(None, Some(&header), &OneSa, NOW)
            .result
            .unwrap();
        assert_eq!(u.user.name, "system:serviceaccount:default:builder");
        assert_eq!(u.user.groups.last().unwrap(), "system:authenticated");
        assert_eq!(a.cache.len(), 2);
        let again = a
            .authenticate(None, Some(&header), &OneSa, NOW + 1)
            .result
            .unwrap();
        assert!(Arc::ptr_eq(&u, &again));
        // Unknown token: 401 even though anonymous is on.
        let r = a.authenticate(None, Some("Bearer nope"), &OneSa, NOW);
        assert_eq!(r.result.unwrap_err().message(), "invalid bearer token");
        // Expired token.
        let t = token(&key, "builder", 600);
        let r = a.authenticate_token(&t, &[], &OneSa, NOW + 700);
        assert_eq!(
            r.unwrap_err().message(),
            "service account token has expired"
        );
        // Deleted ServiceAccount.
        let t = token(&key, "gone", 3600);
        let r = a.authenticate_token(&t, &[], &OneSa, NOW);
        assert_eq!(
            r.unwrap_err().message(),
            "serviceaccounts \"gone\" not found"
        );
        // Static tokens answer only for the API server's audiences.
        let r = a.authenticate_token("static-token", &["vault".into()], &OneSa, NOW);
        assert_eq!(r.unwrap_err().message(), "invalid bearer token");
        // Extra space: ignored with a warning, then anonymous.
        let r = a.authenticate(None, Some("Bearer  static-token"), &OneSa, NOW);
        assert_eq!(r.warning, Some(INVALID_TOKEN_WITH_SPACE_WARNING));
        assert_eq!(r.result.unwrap().user.name, "system:anonymous");
        // Anonymous off.
        let mut b = setup().0;
        b.anonymous = false;
        assert_eq!(
            b.authenticate(None, None, &OneSa, NOW).result.unwrap_err(),
            AuthError::NotRecognized
        );
    }

    #[test]
    fn client_certificates() {
        let (a, _) = setup();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = params.self_signed(&ca_key).unwrap();
        let signer = SigningKey::from_pem(&ca_key.serialize_pem()).unwrap();
        let cert =
            x509::issue_client_cert(ca.der(), &signer, "carol", &["ops"], NOW, NOW + 60).unwrap();
        let u = a
            .authenticate(Some(&cert.cert_der), Some("Bearer nope"), &OneSa, NOW)
            .result
            .unwrap();
        assert_eq!(u.user.name, "carol");
        assert_eq!(u.user.groups, vec!["ops", "system:authenticated"]);
        let again = a
            .authenticate(Some(&cert.cert_der), None, &OneSa, NOW + 5)
            .result
            .unwrap();
        assert!(Arc::ptr_eq(&u, &again));

        // Verified here against the CA: another CA's certificate is a 401.
        let (mut b, _) = setup();
        b.client_ca = Some(x509::ClientCa::from_ders(&[ca.der()]).unwrap());
        assert!(b
            .authenticate(Some(&cert.cert_der), None, &OneSa, NOW)
            .result
            .is_ok());
        let other_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::default();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let other = params.self_signed(&other_key).unwrap();
        let other_signer = SigningKey::from_pem(&other_key.serialize_pem()).unwrap();
        let foreign =
            x509::issue_client_cert(other.der(), &other_signer, "eve", &[], NOW, NOW + 60).unwrap();
        let r = b.authenticate(Some(&foreign.cert_der), None, &OneSa, NOW);
        assert_eq!(
            r.result.unwrap_err().message(),
            "verifying certificate failed: x509: certificate signed by unknown authority"
        );
    }
}
