//! `serviceaccounts/token` (TokenRequest) and `tokenreviews` (TokenReview), as kube-apiserver
//! serves them: kubernetes `pkg/registry/core/serviceaccount/storage/token.go` (metadata
//! checks, defaults, bound objects, the maximum and the kubelet-token extension),
//! `pkg/apis/authentication/v1` defaults (`expirationSeconds` 3600),
//! `pkg/apis/authentication/validation` (its messages) and
//! `pkg/registry/authentication/tokenreview/storage.go` (request and response shapes).
//!
//! The server's calls for `POST .../namespaces/<ns>/serviceaccounts/<name>/token`, in order:
//! [`TokenRequest::decode`] (400/422) → look the ServiceAccount up (404) →
//! [`TokenRequest::validate`] (422) → when [`TokenRequest::bound_object`] names one, look it
//! up (404), [`TokenRequest::check_pod_service_account`] for a Pod,
//! [`TokenRequest::check_bound_uid`] (409) → [`TokenRequest::issue`] (the 201 body and the
//! response warnings).

use crate::keys::SigningKey;
use crate::serviceaccount::{self, BoundObject, ObjectRef, TokenClaims};
use crate::AuthError;
use crest_api::{ApiError, FieldError, FieldPath, GroupKind, GroupResource, UserInfo};
use serde_json::{json, Map, Value};

/// TokenRequest's default lifetime (`SetDefaults_TokenRequestSpec`).
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime validation accepts (10 minutes).
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The longest lifetime validation accepts (2^32 seconds).
pub const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// The lifetime kubelet asks for its projected tokens (`WarnOnlyBoundTokenExpirationSeconds`).
pub const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS: i64 = 60 * 60 + 7;
/// What such tokens are extended to (`ExpirationExtensionSeconds`, one year).
pub const EXPIRATION_EXTENSION_SECONDS: i64 = 24 * 365 * 60 * 60;

/// The server's TokenRequest settings (kube-apiserver's `--service-account-issuer`,
/// `--api-audiences`, `--service-account-max-token-expiration`,
/// `--service-account-extend-token-expiration`).
#[derive(Clone, Debug)]
pub struct TokenRequestConfig {
    pub issuer: String,
    /// Audiences of a request that names none (default: the issuer).
    pub api_audiences: Vec<String>,
    /// 0: no maximum.
    pub max_expiration_seconds: i64,
    /// Extend kubelet's 3607-second pod-bound tokens to a year, warning after 3607 s (default
    /// true).
    pub extend_expiration: bool,
    pub max_extended_expiration_seconds: i64,
}

impl TokenRequestConfig {
    /// kube-apiserver's defaults for an issuer: audiences = `[issuer]`, no maximum, extension on.
    pub fn new(issuer: &str) -> Self {
        TokenRequestConfig {
            issuer: issuer.to_string(),
            api_audiences: vec![issuer.to_string()],
            max_expiration_seconds: 0,
            extend_expiration: true,
            max_extended_expiration_seconds: EXPIRATION_EXTENSION_SECONDS,
        }
    }
}

/// `spec.boundObjectRef`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundObjectRef {
    pub kind: String,
    pub api_version: String,
    pub name: String,
    pub uid: String,
}

/// The kinds a token can be bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundKind {
    Pod,
    Secret,
    Node,
}

fn gk() -> GroupKind {
    GroupKind::new("authentication.k8s.io", "TokenRequest")
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(x) => cur = x,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A TokenRequest being served.
#[derive(Clone, Debug)]
pub struct TokenRequest {
    /// The request body (metadata is echoed back).
    body: Value,
    pub namespace: String,
    /// The ServiceAccount's name (from the URL).
    pub name: String,
    pub audiences: Vec<String>,
    pub expiration_seconds: i64,
    pub bound_object_ref: Option<BoundObjectRef>,
}

impl TokenRequest {
    /// Reads the body of a TokenRequest for ServiceAccount `name` in `namespace` (the URL's),
    /// defaulting `expirationSeconds`; a body naming another name or namespace is refused as
    /// upstream (422).
    pub fn decode(body: &Value, namespace: &str, name: &str) -> Result<TokenRequest, ApiError> {
        let body_name = str_at(body, &["metadata", "name"]);
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::invalid(
                &gk(),
                name,
                &[FieldError::invalid(
                    &FieldPath::new("metadata").child("name"),
                    body_name,
                    "must match the service account name if specified",
                )],
            ));
        }
        let body_ns = str_at(body, &["metadata", "namespace"]);
        if !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::invalid(
                &gk(),
                name,
                &[FieldError::invalid(
                    &FieldPath::new("metadata").child("namespace"),
                    body_ns,
                    "must match the service account namespace if specified",
                )],
            ));
        }
        let spec = body.get("spec");
        let expiration_seconds = spec
            .and_then(|s| s.get("expirationSeconds"))
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
        let bound_object_ref = spec
            .and_then(|s| s.get("boundObjectRef"))
            .filter(|v| v.is_object())
            .map(|r| BoundObjectRef {
                kind: str_at(r, &["kind"]).into(),
                api_version: str_at(r, &["apiVersion"]).into(),
                name: str_at(r, &["name"]).into(),
                uid: str_at(r, &["uid"]).into(),
            });
        Ok(TokenRequest {
            body: body.clone(),
            namespace: namespace.into(),
            name: name.into(),
            audiences: strings(spec.and_then(|s| s.get("audiences"))),
            expiration_seconds,
            bound_object_ref,
        })
    }

    /// Defaults the audiences to the API server's and validates (`ValidateTokenRequest`): 422
    /// `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value:
    /// 500: may not specify a duration less than 10 minutes`.
    pub fn validate(&mut self, config: &TokenRequestConfig) -> Result<(), ApiError> {
        if self.audiences.is_empty() {
            self.audiences = config.api_audiences.clone();
        }
        let path = FieldPath::new("spec").child("expirationSeconds");
        let mut errs = Vec::new();
        if self.expiration_seconds < MIN_EXPIRATION_SECONDS {
            errs.push(FieldError::invalid(
                &path,
                self.expiration_seconds,
                "may not specify a duration less than 10 minutes",
            ));
        }
        if self.expiration_seconds > MAX_EXPIRATION_SECONDS {
            errs.push(FieldError::invalid(
                &path,
                self.expiration_seconds,
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(&gk(), "", &errs))
        }
    }

    /// The kind of the bound object, if any: Pod, Secret (in the request's namespace) or Node;
    /// another kind is a 400 `cannot bind token to object of type <group>/<version>,
    /// Kind=<kind>`.
    pub fn bound_object(&self) -> Result<Option<(BoundKind, &BoundObjectRef)>, ApiError> {
        let Some(r) = &self.bound_object_ref else {
            return Ok(None);
        };
        let (group, version) = match r.api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", r.api_version.as_str()),
        };
        let kind = match (group, r.kind.as_str()) {
            ("", "Pod") => BoundKind::Pod,
            ("", "Secret") => BoundKind::Secret,
            ("", "Node") => BoundKind::Node,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token to object of type {group}/{version}, Kind={}",
                    r.kind
                )))
            }
        };
        Ok(Some((kind, r)))
    }

    /// A pod-bound token needs the pod to run as this ServiceAccount (400 otherwise).
    pub fn check_pod_service_account(&self, pod_service_account: &str) -> Result<(), ApiError> {
        if pod_service_account == self.name {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "cannot bind token for serviceaccount {} to pod running with different serviceaccount name.",
            crest_gofmt::go_quote(&self.name)
        )))
    }

    /// The reference's uid, when given, must be the object's (409 otherwise).
    pub fn check_bound_uid(&self, actual_uid: &str) -> Result<(), ApiError> {
        let Some(r) = &self.bound_object_ref else {
            return Ok(());
        };
        if r.uid.is_empty() || r.uid == actual_uid {
            return Ok(());
        }
        Err(ApiError::conflict(
            &GroupResource::new("", &r.kind),
            &r.name,
            &format!(
                "the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
                r.uid
            ),
        ))
    }

    /// Issues the token at `now` for the ServiceAccount (`name`, `uid`), bound to `bound`
    /// (the looked-up object's name and uid; for a Pod, its node's when it has one), with
    /// `jti` ([`serviceaccount::new_jti`]). Applies the maximum (with upstream's warning) and
    /// the kubelet-token extension.
    pub fn issue(
        &self,
        config: &TokenRequestConfig,
        service_account_uid: &str,
        bound: Option<BoundObject>,
        now: i64,
        jti: &str,
        key: &SigningKey,
    ) -> Result<IssuedToken, ApiError> {
        let mut warnings = Vec::new();
        let mut spec_expiration = self.expiration_seconds;
        if config.max_expiration_seconds > 0 && spec_expiration > config.max_expiration_seconds {
            warnings.push(format!(
                "requested expiration of {spec_expiration} seconds shortened to {} seconds",
                config.max_expiration_seconds
            ));
            spec_expiration = config.max_expiration_seconds;
        }
        let mut exp = spec_expiration;
        let mut warn_after = 0;
        let pod_bound = matches!(bound, Some(BoundObject::Pod { .. }));
        if config.extend_expiration
            && pod_bound
            && spec_expiration == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
            && self
                .audiences
                .iter()
                .all(|a| config.api_audiences.contains(a))
        {
            warn_after = exp;
            exp = config.max_extended_expiration_seconds;
        }
        let claims = TokenClaims {
            issuer: config.issuer.clone(),
            namespace: self.namespace.clone(),
            service_account: ObjectRef::new(self.name.clone(), service_account_uid),
            audiences: self.audiences.clone(),
            expiration_seconds: exp,
            warn_after_seconds: warn_after,
            bound,
            jti: jti.to_string(),
        };
        let token = serviceaccount::issue(&claims, now, key)
            .map_err(|e| ApiError::internal(format!("failed to generate token: {e}")))?;
        let expiration_timestamp = rfc3339(now + spec_expiration);
        Ok(IssuedToken {
            body: self.response(spec_expiration, now, &token, &expiration_timestamp),
            token,
            expiration_timestamp,
            warnings,
            credential_id: if jti.is_empty() {
                String::new()
            } else {
                format!("JTI={jti}")
            },
        })
    }

    fn response(&self, expiration: i64, now: i64, token: &str, expires: &str) -> Value {
        let mut metadata = self
            .body
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        metadata.insert("name".into(), self.name.clone().into());
        metadata.insert("namespace".into(), self.namespace.clone().into());
        metadata.insert("creationTimestamp".into(), rfc3339(now).into());
        let mut spec = Map::new();
        spec.insert("audiences".into(), json!(self.audiences));
        spec.insert("expirationSeconds".into(), expiration.into());
        if let Some(r) = &self.bound_object_ref {
            let mut m = Map::new();
            for (k, v) in [
                ("kind", &r.kind),
                ("apiVersion", &r.api_version),
                ("name", &r.name),
                ("uid", &r.uid),
            ] {
                if !v.is_empty() {
                    m.insert(k.into(), v.clone().into());
                }
            }
            spec.insert("boundObjectRef".into(), Value::Object(m));
        }
        json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": metadata,
            "spec": spec,
            "status": {"token": token, "expirationTimestamp": expires},
        })
    }
}

/// An issued TokenRequest.
#[derive(Clone, Debug)]
pub struct IssuedToken {
    /// The response body (201): the TokenRequest with `status.token` and
    /// `status.expirationTimestamp`.
    pub body: Value,
    pub token: String,
    pub expiration_timestamp: String,
    /// Response warnings (`Warning: 299 - "..."`).
    pub warnings: Vec<String>,
    /// The audit annotation `authentication.kubernetes.io/issued-credential-id`.
    pub credential_id: String,
}

/// RFC 3339 in seconds, UTC, as `metav1.Time` marshals.
pub fn rfc3339(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A TokenReview's request: the token and the audiences to authenticate it for (empty: the
/// API server's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenReview {
    pub token: String,
    pub audiences: Vec<String>,
    body: Value,
}

impl TokenReview {
    /// Reads a TokenReview body (cluster-scoped: `namespace` must be empty, as the URL's); 400
    /// with upstream's messages otherwise.
    pub fn decode(body: &Value, namespace: &str) -> Result<TokenReview, ApiError> {
        if !namespace.is_empty() {
            return Err(ApiError::bad_request(format!(
                "namespace is not allowed on this type: {namespace}"
            )));
        }
        let spec = body.get("spec");
        let token = spec
            .and_then(|s| s.get("token"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if token.is_empty() {
            return Err(ApiError::bad_request(
                "token is required for TokenReview in authentication",
            ));
        }
        Ok(TokenReview {
            token: token.to_string(),
            audiences: strings(spec.and_then(|s| s.get("audiences"))),
            body: body.clone(),
        })
    }

    /// The audiences to authenticate the token for: the review's, else the API server's.
    pub fn target_audiences<'a>(&'a self, api_audiences: &'a [String]) -> &'a [String] {
        if self.audiences.is_empty() {
            api_audiences
        } else {
            &self.audiences
        }
    }

    /// The response body: `status.authenticated`, `status.user` (username, uid, groups,
    /// extra; with `system:authenticated` as the request authenticator adds it),
    /// `status.audiences`, or `status.error` with the failure's message.
    pub fn response(&self, result: &Result<(UserInfo, Vec<String>), AuthError>) -> Value {
        let mut metadata = self
            .body
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        metadata.entry("creationTimestamp").or_insert(Value::Null);
        let mut spec = Map::new();
        spec.insert("token".into(), self.token.clone().into());
        if !self.audiences.is_empty() {
            spec.insert("audiences".into(), json!(self.audiences));
        }
        let mut status = Map::new();
        match result {
            Ok((user, auds)) => {
                status.insert("authenticated".into(), true.into());
                status.insert("user".into(), user_json(user));
                if !auds.is_empty() {
                    status.insert("audiences".into(), json!(auds));
                }
            }
            Err(e) => {
                status.insert("user".into(), json!({}));
                status.insert("error".into(), e.message().into());
            }
        }
        json!({
            "kind": "TokenReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": metadata,
            "spec": spec,
            "status": status,
        })
    }
}

/// `authentication.k8s.io/v1` UserInfo (omitempty members), as TokenReview and
/// SelfSubjectReview show a user.
pub fn user_json(user: &UserInfo) -> Value {
    let mut m = Map::new();
    if !user.name.is_empty() {
        m.insert("username".into(), user.name.clone().into());
    }
    if !user.uid.is_empty() {
        m.insert("uid".into(), user.uid.clone().into());
    }
    if !user.groups.is_empty() {
        m.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        m.insert("extra".into(), json!(user.extra));
    }
    Value::Object(m)
}

/// The `SelfSubjectReview` answer (`kubectl auth whoami`, kubernetes
/// `pkg/registry/authentication/selfsubjectreview`): the requesting user, created `now`.
pub fn self_subject_review(user: &UserInfo, now: i64) -> Value {
    json!({
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": rfc3339(now)},
        "status": {"userInfo": user_json(user)},
    })
}

/// The audiences an audience-agnostic authenticator (client certificates, the token file)
/// answers for, as upstream's `WrapAudienceAgnosticToken`: the intersection of the API
/// server's and the requested ones; `None` (the credential is not recognised) when empty.
pub fn audience_agnostic(requested: &[String], api_audiences: &[String]) -> Option<Vec<String>> {
    let auds: Vec<String> = api_audiences
        .iter()
        .filter(|a| requested.contains(a))
        .cloned()
        .collect();
    if auds.is_empty() {
        None
    } else {
        Some(auds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    const ISS: &str = "https://kubernetes.default.svc.cluster.local";
    const NOW: i64 = 1_800_000_000;

    fn config() -> TokenRequestConfig {
        TokenRequestConfig::new(ISS)
    }

    #[test]
    fn defaults_and_validation_messages() {
        let mut r = TokenRequest::decode(&json!({"spec": {}}), "default", "builder").unwrap();
        assert_eq!(r.expiration_seconds, 3600);
        r.validate(&config()).unwrap();
        assert_eq!(r.audiences, vec![ISS]);

        let mut r = TokenRequest::decode(
            &json!({"spec": {"expirationSeconds": 500, "audiences": ["vault"]}}),
            "default",
            "builder",
        )
        .unwrap();
        let e = r.validate(&config()).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 500: may not specify a duration less than 10 minutes"
        );
        assert_eq!(r.audiences, vec!["vault"]);
        let mut r = TokenRequest::decode(
            &json!({"spec": {"expirationSeconds": 4294967297_i64}}),
            "default",
            "builder",
        )
        .unwrap();
        assert_eq!(
            r.validate(&config()).unwrap_err().message,
            "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"
        );
    }

    #[test]
    fn metadata_must_match_the_url() {
        let e = TokenRequest::decode(&json!({"metadata": {"name": "x"}}), "default", "builder")
            .unwrap_err();
        assert_eq!(
            e.message,
            "TokenRequest.authentication.k8s.io \"builder\" is invalid: metadata.name: Invalid value: \"x\": must match the service account name if specified"
        );
        let e = TokenRequest::decode(
            &json!({"metadata": {"namespace": "other"}}),
            "default",
            "builder",
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "TokenRequest.authentication.k8s.io \"builder\" is invalid: metadata.namespace: Invalid value: \"other\": must match the service account namespace if specified"
        );
    }

    #[test]
    fn bound_object_references() {
        let r = TokenRequest::decode(
            &json!({"spec": {"boundObjectRef": {"kind": "Deployment", "apiVersion": "apps/v1", "name": "d"}}}),
            "default",
            "builder",
        )
        .unwrap();
        assert_eq!(
            r.bound_object().unwrap_err().message,
            "cannot bind token to object of type apps/v1, Kind=Deployment"
        );
        let r = TokenRequest::decode(
            &json!({"spec": {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}}}),
            "default",
            "builder",
        )
        .unwrap();
        assert_eq!(
            r.bound_object().unwrap_err().message,
            "cannot bind token to object of type /v1, Kind=ConfigMap"
        );
        let r = TokenRequest::decode(
            &json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web", "uid": "u1"}}}),
            "default",
            "builder",
        )
        .unwrap();
        assert_eq!(r.bound_object().unwrap().unwrap().0, BoundKind::Pod);
        assert!(r.check_bound_uid("u1").is_ok());
        let e = r.check_bound_uid("u2").unwrap_err();
        assert_eq!(e.code, 409);
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on Pod \"web\": the UID in the bound object reference (u1) does not match the UID in record. The object might have been deleted and then recreated"
        );
        assert_eq!(
            r.check_pod_service_account("default").unwrap_err().message,
            "cannot bind token for serviceaccount \"builder\" to pod running with different serviceaccount name."
        );
        assert!(r.check_pod_service_account("builder").is_ok());
    }

    fn payload_of(token: &str) -> Value {
        let p = token.split('.').nth(1).unwrap();
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn issue_response_and_status() {
        let key = SigningKey::generate().unwrap();
        let mut r = TokenRequest::decode(&json!({"spec": {}}), "default", "builder").unwrap();
        r.validate(&config()).unwrap();
        let out = r
            .issue(&config(), "sa-uid", None, NOW, "the-jti", &key)
            .unwrap();
        assert_eq!(out.body["kind"], "TokenRequest");
        assert_eq!(out.body["apiVersion"], "authentication.k8s.io/v1");
        assert_eq!(out.body["metadata"]["name"], "builder");
        assert_eq!(out.body["metadata"]["namespace"], "default");
        assert_eq!(out.body["spec"]["expirationSeconds"], 3600);
        assert_eq!(out.body["spec"]["audiences"], json!([ISS]));
        assert_eq!(out.body["status"]["token"], out.token.as_str());
        assert_eq!(
            out.body["status"]["expirationTimestamp"],
            "2027-01-15T09:00:00Z"
        );
        assert_eq!(out.credential_id, "JTI=the-jti");
        let p = payload_of(&out.token);
        assert_eq!(p["exp"], NOW + 3600);
        assert_eq!(p["kubernetes.io"]["serviceaccount"]["uid"], "sa-uid");
        assert!(out.warnings.is_empty());
    }

    #[test]
    fn maximum_and_kubelet_extension() {
        let key = SigningKey::generate().unwrap();
        let mut cfg = config();
        cfg.max_expiration_seconds = 7200;
        let mut r = TokenRequest::decode(
            &json!({"spec": {"expirationSeconds": 86400}}),
            "default",
            "builder",
        )
        .unwrap();
        r.validate(&cfg).unwrap();
        let out = r.issue(&cfg, "u", None, NOW, "", &key).unwrap();
        assert_eq!(
            out.warnings,
            vec!["requested expiration of 86400 seconds shortened to 7200 seconds"]
        );
        assert_eq!(out.body["spec"]["expirationSeconds"], 7200);
        assert_eq!(payload_of(&out.token)["exp"], NOW + 7200);
        assert!(payload_of(&out.token).get("jti").is_none());

        // kubelet's 3607 s pod-bound token: a year in the token, warnafter at 3607 s, the
        // status saying 3607 s.
        let mut r = TokenRequest::decode(
            &json!({"spec": {"expirationSeconds": 3607}}),
            "default",
            "builder",
        )
        .unwrap();
        r.validate(&config()).unwrap();
        let bound = BoundObject::Pod {
            pod: ObjectRef::new("web", "pod-uid"),
            node: None,
        };
        let out = r
            .issue(&config(), "u", Some(bound.clone()), NOW, "j", &key)
            .unwrap();
        let p = payload_of(&out.token);
        assert_eq!(p["exp"], NOW + EXPIRATION_EXTENSION_SECONDS);
        assert_eq!(p["kubernetes.io"]["warnafter"], NOW + 3607);
        assert_eq!(out.expiration_timestamp, rfc3339(NOW + 3607));
        // Not for other audiences.
        r.audiences = vec!["vault".into()];
        let out = r
            .issue(&config(), "u", Some(bound), NOW, "j", &key)
            .unwrap();
        assert_eq!(payload_of(&out.token)["exp"], NOW + 3607);
    }

    #[test]
    fn token_review_shapes() {
        assert_eq!(
            TokenReview::decode(&json!({"spec": {}}), "")
                .unwrap_err()
                .message,
            "token is required for TokenReview in authentication"
        );
        assert_eq!(
            TokenReview::decode(&json!({"spec": {"token": "t"}}), "ns")
                .unwrap_err()
                .message,
            "namespace is not allowed on this type: ns"
        );
        let review = TokenReview::decode(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "t"}}),
            "",
        )
        .unwrap();
        let api = vec![ISS.to_string()];
        assert_eq!(review.target_audiences(&api), &api[..]);
        let user = UserInfo {
            name: "system:serviceaccount:default:builder".into(),
            uid: "sa-uid".into(),
            groups: vec![
                "system:serviceaccounts".into(),
                "system:serviceaccounts:default".into(),
                "system:authenticated".into(),
            ],
            extra: [(
                "authentication.kubernetes.io/credential-id".to_string(),
                vec!["JTI=x".to_string()],
            )]
            .into_iter()
            .collect(),
        };
        assert_eq!(
            review.response(&Ok((user, api.clone()))),
            json!({
                "kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": null},
                "spec": {"token": "t"},
                "status": {
                    "authenticated": true,
                    "user": {
                        "username": "system:serviceaccount:default:builder",
                        "uid": "sa-uid",
                        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
                        "extra": {"authentication.kubernetes.io/credential-id": ["JTI=x"]}
                    },
                    "audiences": [ISS]
                }
            })
        );
        assert_eq!(
            review.response(&Err(AuthError::invalid(
                "service account token has expired"
            )))["status"],
            json!({"user": {}, "error": "service account token has expired"})
        );
        assert_eq!(
            review.response(&Err(AuthError::NotRecognized))["status"]["error"],
            "invalid bearer token"
        );
    }

    #[test]
    fn whoami() {
        let user = UserInfo {
            name: "alice".into(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            ..UserInfo::default()
        };
        assert_eq!(
            self_subject_review(&user, NOW),
            json!({
                "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"creationTimestamp": "2027-01-15T08:00:00Z"},
                "status": {"userInfo": {"username": "alice", "groups": ["dev", "system:authenticated"]}}
            })
        );
    }

    #[test]
    fn audience_agnostic_intersection() {
        let api = vec![ISS.to_string()];
        assert_eq!(audience_agnostic(&api, &api), Some(api.clone()));
        assert_eq!(audience_agnostic(&["vault".to_string()], &api), None);
    }
}
