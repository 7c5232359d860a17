//! ServiceAccount tokens: JWTs with kube-apiserver's claims layout (kubernetes
//! `pkg/serviceaccount/claims.go` `Claims`), their verification (`jwt.go`
//! `jwtTokenAuthenticator.AuthenticateToken`: issuer, signature, audiences; `claims.go`
//! `validator.Validate`: expiry, not-before, issued-at, the ServiceAccount and bound object
//! still existing with the token's uids) and the user they authenticate as
//! (k8s.io/apiserver `authentication/serviceaccount` `ServiceAccountInfo.UserInfo`).
//!
//! Tokens are compact JWS: header `{"alg":…,"kid":…}`, and the payload's members in the order
//! Go's `encoding/json` writes go-jose's merged claims map (sorted):
//! `aud, exp, iat, iss, jti, kubernetes.io{namespace, node, pod, secret, serviceaccount{name,
//! uid}, warnafter}, nbf, sub`.

use crate::keys::{PublicKey, SigningKey};
use crate::AuthError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use crest_api::{names, UserInfo};
use serde_json::{json, Map, Value};

/// go-jose's `DefaultLeeway`: one minute either side for `exp`, `nbf` and `iat`.
pub const LEEWAY_SECONDS: i64 = 60;

/// `authentication.kubernetes.io/credential-id` (the token's `JTI=<jti>`).
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";
/// The extra key of a pod-bound token's pod name.
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";
/// The extra key of a pod-bound token's pod uid.
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";
/// The extra key of a node-bound (or pod-bound) token's node name.
pub const NODE_NAME_KEY: &str = "authentication.kubernetes.io/node-name";
/// The extra key of a node-bound (or pod-bound) token's node uid.
pub const NODE_UID_KEY: &str = "authentication.kubernetes.io/node-uid";

/// A name and uid in the `kubernetes.io` claim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectRef {
    pub name: String,
    pub uid: String,
}

impl ObjectRef {
    /// A reference by name and uid.
    pub fn new(name: impl Into<String>, uid: impl Into<String>) -> Self {
        ObjectRef {
            name: name.into(),
            uid: uid.into(),
        }
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if !self.name.is_empty() {
            m.insert("name".into(), self.name.clone().into());
        }
        if !self.uid.is_empty() {
            m.insert("uid".into(), self.uid.clone().into());
        }
        Value::Object(m)
    }

    fn from_json(v: Option<&Value>) -> Option<ObjectRef> {
        let v = v?.as_object()?;
        Some(ObjectRef {
            name: v.get("name").and_then(Value::as_str).unwrap_or("").into(),
            uid: v.get("uid").and_then(Value::as_str).unwrap_or("").into(),
        })
    }
}

/// The object a token is bound to (TokenRequest `spec.boundObjectRef`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundObject {
    /// A Pod, with the Node it runs on when known (upstream embeds it, name only when the
    /// Node object is missing).
    Pod {
        pod: ObjectRef,
        node: Option<ObjectRef>,
    },
    Secret(ObjectRef),
    Node(ObjectRef),
}

/// What a new token says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenClaims {
    pub issuer: String,
    pub namespace: String,
    pub service_account: ObjectRef,
    pub audiences: Vec<String>,
    /// Lifetime written into `exp` (after TokenRequest's extension, if any).
    pub expiration_seconds: i64,
    /// `warnafter` = now + this, for the extended kubelet tokens; 0 for none.
    pub warn_after_seconds: i64,
    pub bound: Option<BoundObject>,
    /// The token's `jti` ([`new_jti`]); empty writes none.
    pub jti: String,
}

/// A random UUID for a token's `jti` (**OS entropy**).
pub fn new_jti() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `system:serviceaccount:<namespace>:<name>`.
pub fn make_username(namespace: &str, name: &str) -> String {
    format!("{}{namespace}:{name}", names::SERVICE_ACCOUNT_USER_PREFIX)
}

/// `system:serviceaccounts` and `system:serviceaccounts:<namespace>`.
pub fn make_group_names(namespace: &str) -> Vec<String> {
    vec![
        names::SERVICE_ACCOUNTS.to_string(),
        format!("{}:{namespace}", names::SERVICE_ACCOUNTS),
    ]
}

/// The payload of a token issued at `now` (unix seconds).
pub fn payload(claims: &TokenClaims, now: i64) -> Value {
    // Built member by member in sorted order so the JSON reads as Go writes it, whatever
    // serde_json's map ordering.
    let mut k8s = Map::new();
    k8s.insert("namespace".into(), claims.namespace.clone().into());
    let (pod, secret, node) = match &claims.bound {
        Some(BoundObject::Pod { pod, node }) => (Some(pod), None, node.as_ref()),
        Some(BoundObject::Secret(s)) => (None, Some(s), None),
        Some(BoundObject::Node(n)) => (None, None, Some(n)),
        None => (None, None, None),
    };
    if let Some(n) = node {
        k8s.insert("node".into(), n.to_json());
    }
    if let Some(p) = pod {
        k8s.insert("pod".into(), p.to_json());
    }
    if let Some(s) = secret {
        k8s.insert("secret".into(), s.to_json());
    }
    k8s.insert("serviceaccount".into(), claims.service_account.to_json());
    if claims.warn_after_seconds != 0 {
        k8s.insert("warnafter".into(), (now + claims.warn_after_seconds).into());
    }
    let mut p = Map::new();
    if !claims.audiences.is_empty() {
        p.insert("aud".into(), json!(claims.audiences));
    }
    p.insert("exp".into(), (now + claims.expiration_seconds).into());
    p.insert("iat".into(), now.into());
    if !claims.issuer.is_empty() {
        p.insert("iss".into(), claims.issuer.clone().into());
    }
    if !claims.jti.is_empty() {
        p.insert("jti".into(), claims.jti.clone().into());
    }
    p.insert("kubernetes.io".into(), Value::Object(k8s));
    p.insert("nbf".into(), now.into());
    p.insert(
        "sub".into(),
        make_username(&claims.namespace, &claims.service_account.name).into(),
    );
    Value::Object(p)
}

/// Issues a signed token at `now` (unix seconds).
pub fn issue(claims: &TokenClaims, now: i64, key: &SigningKey) -> Result<String, AuthError> {
    let header = format!(
        r#"{{"alg":"{}","kid":"{}"}}"#,
        key.algorithm().as_str(),
        key.key_id()
    );
    let payload = serde_json::to_string(&payload(claims, now))
        .map_err(|e| AuthError::invalid(e.to_string()))?;
    let mut token = URL_SAFE_NO_PAD.encode(header);
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(payload));
    let sig = key.sign(token.as_bytes())?;
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(sig));
    Ok(token)
}

/// How tokens are verified: the issuers accepted, the keys, and the API server's audiences
/// (`--api-audiences`, defaulting to the issuer).
#[derive(Clone, Debug)]
pub struct Verifier {
    pub issuers: Vec<String>,
    pub keys: Vec<PublicKey>,
    /// The implicit audiences: a token without `aud` is taken as meant for these, and a
    /// request with no audiences of its own asks for them.
    pub api_audiences: Vec<String>,
}

/// A verified token's claims: what the server must still check against its store
/// ([`SaClaims::validate`]) before the token authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaClaims {
    pub issuer: String,
    pub subject: String,
    pub namespace: String,
    pub service_account: ObjectRef,
    pub pod: Option<ObjectRef>,
    pub secret: Option<ObjectRef>,
    pub node: Option<ObjectRef>,
    pub jti: String,
    pub expiry: Option<i64>,
    pub warn_after: Option<i64>,
    /// The token's audiences that the request accepted (the authenticator response's
    /// `Audiences`, what TokenReview returns in `status.audiences`).
    pub audiences: Vec<String>,
}

fn go_quote_list(v: &[String]) -> String {
    // Go's %q of a []string: ["a" "b"].
    let items: Vec<String> = v.iter().map(|s| crest_gofmt::go_quote(s)).collect();
    format!("[{}]", items.join(" "))
}

/// The issuer of an unverified token, if it is a compact JWS with a JSON payload (upstream's
/// `hasCorrectIssuer` peek, before any signature check).
fn peek_issuer(token: &str) -> Option<String> {
    if token.trim_start().starts_with('{') {
        return None;
    }
    let mut parts = token.split('.');
    let (_, payload, _, rest) = (parts.next()?, parts.next()?, parts.next()?, parts.next());
    if rest.is_some() {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    Some(
        v.get("iss")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    )
}

fn audiences_of(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn numeric_date(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        _ => None,
    }
}

/// Verifies `token` at `now` (unix seconds) for a request accepting `audiences` (empty: the
/// API server's): issuer, signature (the key named by `kid`, else every key), audiences, then
/// `nbf`/`exp`/`iat` with a minute's leeway. `Err(NotRecognized)` when the token is not a JWT
/// of one of the issuers. The messages are upstream's.
pub fn verify(
    token: &str,
    now: i64,
    audiences: &[String],
    verifier: &Verifier,
) -> Result<SaClaims, AuthError> {
    let Some(iss) = peek_issuer(token) else {
        return Err(AuthError::NotRecognized);
    };
    if !verifier.issuers.contains(&iss) {
        return Err(AuthError::NotRecognized);
    }
    let mut parts = token.splitn(3, '.');
    let (Some(h), Some(p), Some(s)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(AuthError::NotRecognized);
    };
    let header: Value = URL_SAFE_NO_PAD
        .decode(h)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or(AuthError::NotRecognized)?;
    let sig = URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| AuthError::NotRecognized)?;
    let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
    let kid = header.get("kid").and_then(Value::as_str).unwrap_or("");
    let keys: Vec<&PublicKey> = verifier
        .keys
        .iter()
        .filter(|k| kid.is_empty() || k.key_id() == kid)
        .collect();
    if keys.is_empty() {
        return Err(AuthError::invalid("invalid signature, no keys found"));
    }
    let signed = &token[..h.len() + 1 + p.len()];
    if !keys.iter().any(|k| k.verify(alg, signed.as_bytes(), &sig)) {
        let errs: Vec<&str> = keys
            .iter()
            .map(|_| "go-jose/go-jose: error in cryptographic primitive")
            .collect();
        return Err(AuthError::invalid(aggregate(&errs)));
    }
    let claims: Value = URL_SAFE_NO_PAD
        .decode(p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| AuthError::invalid("failed to unmarshal claims"))?;
    if !verifier.issuers.contains(&iss) {
        return Err(AuthError::invalid(format!(
            "token issuer {} is invalid",
            crest_gofmt::go_quote(&iss)
        )));
    }

    let mut token_auds = audiences_of(claims.get("aud"));
    if token_auds.is_empty() {
        token_auds = verifier.api_audiences.clone();
    }
    let requested: &[String] = if audiences.is_empty() {
        &verifier.api_audiences
    } else {
        audiences
    };
    let auds: Vec<String> = token_auds
        .iter()
        .filter(|a| requested.contains(a))
        .cloned()
        .collect();
    if auds.is_empty() && !verifier.api_audiences.is_empty() {
        return Err(AuthError::invalid(format!(
            "token audiences {} is invalid for the target audiences {}",
            go_quote_list(&token_auds),
            go_quote_list(requested)
        )));
    }

    let nbf = numeric_date(claims.get("nbf"));
    let exp = numeric_date(claims.get("exp"));
    let iat = numeric_date(claims.get("iat"));
    if nbf.is_some_and(|nbf| now + LEEWAY_SECONDS < nbf) {
        return Err(AuthError::invalid("service account token is not valid yet"));
    }
    if exp.is_some_and(|exp| now - LEEWAY_SECONDS > exp) {
        return Err(AuthError::invalid("service account token has expired"));
    }
    if iat.is_some_and(|iat| now + LEEWAY_SECONDS < iat) {
        return Err(AuthError::invalid(
            "service account token is issued in the future",
        ));
    }

    let k8s = claims.get("kubernetes.io");
    let field = |name: &str| k8s.and_then(|k| k.get(name));
    Ok(SaClaims {
        issuer: iss,
        subject: claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into(),
        namespace: field("namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into(),
        service_account: ObjectRef::from_json(field("serviceaccount")).unwrap_or_default(),
        pod: ObjectRef::from_json(field("pod")),
        secret: ObjectRef::from_json(field("secret")),
        node: ObjectRef::from_json(field("node")),
        jti: claims
            .get("jti")
            .and_then(Value::as_str)
            .unwrap_or("")
            .into(),
        expiry: exp,
        warn_after: numeric_date(field("warnafter")).filter(|&w| w != 0),
        audiences: auds,
    })
}

/// Go's `utilerrors.NewAggregate` message.
fn aggregate(errs: &[&str]) -> String {
    if errs.len() == 1 {
        errs[0].to_string()
    } else {
        format!("[{}]", errs.join(", "))
    }
}

/// What the server's store says of an object a token names: its uid and, when it is being
/// deleted, its `deletionTimestamp` (unix seconds).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Existing {
    pub uid: String,
    pub deletion_timestamp: Option<i64>,
}

/// The server's view of the objects tokens name; `None` when the object does not exist.
pub trait TokenObjects {
    /// The ServiceAccount; `Err` with the message of the store's NotFound (upstream returns the
    /// getter's error as the token's error, e.g. `serviceaccounts "x" not found`).
    fn service_account(&self, namespace: &str, name: &str) -> Result<Existing, String>;
    fn pod(&self, namespace: &str, name: &str) -> Option<Existing>;
    fn secret(&self, namespace: &str, name: &str) -> Option<Existing>;
    fn node(&self, name: &str) -> Option<Existing>;
}

const INVALIDATED: &str = "service account token has been invalidated";

impl SaClaims {
    /// Upstream's `validator.Validate` after the time checks: the ServiceAccount must exist with
    /// the token's uid (and not have been deleted more than the leeway ago), and so must the
    /// bound Secret, Pod or Node. Returns the user the token authenticates as (without
    /// `system:authenticated`; see [`crate::with_authenticated_group`]).
    pub fn validate(&self, objects: &dyn TokenObjects, now: i64) -> Result<UserInfo, AuthError> {
        let deleted_before = |e: &Existing| {
            e.deletion_timestamp
                .is_some_and(|t| t < now - LEEWAY_SECONDS)
        };
        let ns = &self.namespace;
        let sa = &self.service_account;
        let existing = objects
            .service_account(ns, &sa.name)
            .map_err(AuthError::Invalid)?;
        if existing.uid != sa.uid {
            return Err(AuthError::invalid(format!(
                "service account UID ({}) does not match claim ({})",
                existing.uid, sa.uid
            )));
        }
        if deleted_before(&existing) {
            return Err(AuthError::invalid(format!(
                "service account {ns}/{} has been deleted",
                sa.name
            )));
        }
        // A bound object must still exist with the claimed uid, not deleted past the leeway.
        let check = |found: Option<Existing>, claim: &ObjectRef, what: &str| {
            let e = found.ok_or_else(|| AuthError::invalid(INVALIDATED))?;
            if e.uid != claim.uid {
                return Err(AuthError::invalid(format!(
                    "{what} UID ({}) does not match service account {what} ref claim ({})",
                    e.uid, claim.uid
                )));
            }
            if deleted_before(&e) {
                return Err(AuthError::invalid(INVALIDATED));
            }
            Ok(())
        };
        if let Some(secret) = &self.secret {
            check(objects.secret(ns, &secret.name), secret, "secret")?;
        }
        if let Some(pod) = &self.pod {
            check(objects.pod(ns, &pod.name), pod, "pod")?;
        }
        // Pod-bound tokens just carry the node's claims.
        if let Some(node) = self.node.as_ref().filter(|_| self.pod.is_none()) {
            check(objects.node(&node.name), node, "node")?;
        }
        let (pod_ref, node_ref) = (self.pod.as_ref(), self.node.as_ref());
        Ok(self.user_info(pod_ref, node_ref))
    }

    /// The user without the store checks (as `ServiceAccountInfo.UserInfo`).
    fn user_info(&self, pod: Option<&ObjectRef>, node: Option<&ObjectRef>) -> UserInfo {
        let mut user = UserInfo {
            name: make_username(&self.namespace, &self.service_account.name),
            uid: self.service_account.uid.clone(),
            groups: make_group_names(&self.namespace),
            ..UserInfo::default()
        };
        if let Some(pod) = pod.filter(|p| !p.name.is_empty() && !p.uid.is_empty()) {
            user.extra
                .insert(POD_NAME_KEY.into(), vec![pod.name.clone()]);
            user.extra.insert(POD_UID_KEY.into(), vec![pod.uid.clone()]);
        }
        if !self.jti.is_empty() {
            user.extra
                .insert(CREDENTIAL_ID_KEY.into(), vec![format!("JTI={}", self.jti)]);
        }
        if let Some(node) = node.filter(|n| !n.name.is_empty()) {
            user.extra
                .insert(NODE_NAME_KEY.into(), vec![node.name.clone()]);
            if !node.uid.is_empty() {
                user.extra
                    .insert(NODE_UID_KEY.into(), vec![node.uid.clone()]);
            }
        }
        user
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const ISS: &str = "https://kubernetes.default.svc.cluster.local";
    const NOW: i64 = 1_800_000_000;

    fn claims() -> TokenClaims {
        TokenClaims {
            issuer: ISS.into(),
            namespace: "default".into(),
            service_account: ObjectRef::new("builder", "sa-uid"),
            audiences: vec![ISS.into()],
            expiration_seconds: 3600,
            warn_after_seconds: 0,
            bound: None,
            jti: "11111111-2222-3333-4444-555555555555".into(),
        }
    }

    fn verifier(key: &SigningKey) -> Verifier {
        Verifier {
            issuers: vec![ISS.into()],
            keys: vec![key.public_key().clone()],
            api_audiences: vec![ISS.into()],
        }
    }

    fn decode(part: &str) -> String {
        String::from_utf8(URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn claims_layout_as_upstream() {
        let key = SigningKey::generate().unwrap();
        let mut c = claims();
        c.bound = Some(BoundObject::Pod {
            pod: ObjectRef::new("web-0", "pod-uid"),
            node: Some(ObjectRef::new("node-1", "node-uid")),
        });
        c.expiration_seconds = 31_536_000;
        c.warn_after_seconds = 3607;
        let token = issue(&c, NOW, &key).unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            decode(parts[0]),
            format!(r#"{{"alg":"ES256","kid":"{}"}}"#, key.key_id())
        );
        assert_eq!(
            decode(parts[1]),
            format!(
                concat!(
                    r#"{{"aud":["{iss}"],"exp":{exp},"iat":{now},"iss":"{iss}","#,
                    r#""jti":"11111111-2222-3333-4444-555555555555","#,
                    r#""kubernetes.io":{{"namespace":"default","node":{{"name":"node-1","uid":"node-uid"}},"#,
                    r#""pod":{{"name":"web-0","uid":"pod-uid"}},"serviceaccount":{{"name":"builder","uid":"sa-uid"}},"#,
                    r#""warnafter":{warn}}},"nbf":{now},"sub":"system:serviceaccount:default:builder"}}"#
                ),
                iss = ISS,
                now = NOW,
                exp = NOW + 31_536_000,
                warn = NOW + 3607
            )
        );
        assert_eq!(URL_SAFE_NO_PAD.decode(parts[2]).unwrap().len(), 64);
    }

    #[test]
    fn verify_round_trip_and_user() {
        let key = SigningKey::generate().unwrap();
        let token = issue(&claims(), NOW, &key).unwrap();
        let sa = verify(&token, NOW + 10, &[], &verifier(&key)).unwrap();
        assert_eq!(sa.namespace, "default");
        assert_eq!(sa.service_account, ObjectRef::new("builder", "sa-uid"));
        assert_eq!(sa.audiences, vec![ISS]);
        assert_eq!(sa.subject, "system:serviceaccount:default:builder");
        let store = Store::default().with_sa("default", "builder", "sa-uid");
        let user = sa.validate(&store, NOW + 10).unwrap();
        assert_eq!(user.name, "system:serviceaccount:default:builder");
        assert_eq!(user.uid, "sa-uid");
        assert_eq!(
            user.groups,
            vec!["system:serviceaccounts", "system:serviceaccounts:default"]
        );
        assert_eq!(
            user.extra[CREDENTIAL_ID_KEY],
            vec!["JTI=11111111-2222-3333-4444-555555555555"]
        );
        assert_eq!(user.extra.len(), 1);
    }

    #[test]
    fn pod_bound_extras() {
        let key = SigningKey::generate().unwrap();
        let mut c = claims();
        c.bound = Some(BoundObject::Pod {
            pod: ObjectRef::new("web-0", "pod-uid"),
            node: Some(ObjectRef::new("node-1", "node-uid")),
        });
        let token = issue(&c, NOW, &key).unwrap();
        let sa = verify(&token, NOW, &[], &verifier(&key)).unwrap();
        let mut store = Store::default().with_sa("default", "builder", "sa-uid");
        // The pod is gone: invalidated.
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "service account token has been invalidated"
        );
        store
            .pods
            .insert("default/web-0".into(), existing("other-uid"));
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "pod UID (other-uid) does not match service account pod ref claim (pod-uid)"
        );
        store
            .pods
            .insert("default/web-0".into(), existing("pod-uid"));
        let user = sa.validate(&store, NOW).unwrap();
        let keys: Vec<&str> = user.extra.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec![
                CREDENTIAL_ID_KEY,
                NODE_NAME_KEY,
                NODE_UID_KEY,
                POD_NAME_KEY,
                POD_UID_KEY
            ]
        );
        assert_eq!(user.extra[POD_NAME_KEY], vec!["web-0"]);
        assert_eq!(user.extra[NODE_UID_KEY], vec!["node-uid"]);
    }

    #[test]
    fn node_and_secret_bound() {
        let key = SigningKey::generate().unwrap();
        let mut c = claims();
        c.bound = Some(BoundObject::Node(ObjectRef::new("node-1", "node-uid")));
        let token = issue(&c, NOW, &key).unwrap();
        let sa = verify(&token, NOW, &[], &verifier(&key)).unwrap();
        let mut store = Store::default().with_sa("default", "builder", "sa-uid");
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "service account token has been invalidated"
        );
        store.nodes.insert("node-1".into(), existing("x"));
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "node UID (x) does not match service account node ref claim (node-uid)"
        );
        store.nodes.insert("node-1".into(), existing("node-uid"));
        let user = sa.validate(&store, NOW).unwrap();
        assert_eq!(user.extra[NODE_NAME_KEY], vec!["node-1"]);

        c.bound = Some(BoundObject::Secret(ObjectRef::new("s", "secret-uid")));
        let token = issue(&c, NOW, &key).unwrap();
        let sa = verify(&token, NOW, &[], &verifier(&key)).unwrap();
        assert_eq!(sa.secret, Some(ObjectRef::new("s", "secret-uid")));
        store.secrets.insert("default/s".into(), existing("y"));
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "secret UID (y) does not match service account secret ref claim (secret-uid)"
        );
        store.secrets.insert(
            "default/s".into(),
            Existing {
                uid: "secret-uid".into(),
                deletion_timestamp: Some(NOW - 61),
            },
        );
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "service account token has been invalidated"
        );
        store.secrets.insert(
            "default/s".into(),
            Existing {
                uid: "secret-uid".into(),
                deletion_timestamp: Some(NOW - 59),
            },
        );
        assert!(sa.validate(&store, NOW).is_ok());
    }

    #[test]
    fn service_account_checks() {
        let key = SigningKey::generate().unwrap();
        let token = issue(&claims(), NOW, &key).unwrap();
        let sa = verify(&token, NOW, &[], &verifier(&key)).unwrap();
        assert_eq!(
            sa.validate(&Store::default(), NOW).unwrap_err().message(),
            "serviceaccounts \"builder\" not found"
        );
        let store = Store::default().with_sa("default", "builder", "new-uid");
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "service account UID (new-uid) does not match claim (sa-uid)"
        );
        let mut store = Store::default();
        store.sas.insert(
            "default/builder".into(),
            Existing {
                uid: "sa-uid".into(),
                deletion_timestamp: Some(NOW - 100),
            },
        );
        assert_eq!(
            sa.validate(&store, NOW).unwrap_err().message(),
            "service account default/builder has been deleted"
        );
    }

    #[test]
    fn time_checks_with_leeway() {
        let key = SigningKey::generate().unwrap();
        let token = issue(&claims(), NOW, &key).unwrap();
        let v = verifier(&key);
        assert!(verify(&token, NOW + 3600 + 60, &[], &v).is_ok());
        assert_eq!(
            verify(&token, NOW + 3600 + 61, &[], &v)
                .unwrap_err()
                .message(),
            "service account token has expired"
        );
        assert!(verify(&token, NOW - 60, &[], &v).is_ok());
        assert_eq!(
            verify(&token, NOW - 61, &[], &v).unwrap_err().message(),
            "service account token is not valid yet"
        );
    }

    #[test]
    fn audiences_issuer_and_signature() {
        let key = SigningKey::generate().unwrap();
        let v = verifier(&key);
        let mut c = claims();
        c.audiences = vec!["vault".into()];
        let token = issue(&c, NOW, &key).unwrap();
        assert_eq!(
            verify(&token, NOW, &[], &v).unwrap_err().message(),
            format!("token audiences [\"vault\"] is invalid for the target audiences [\"{ISS}\"]")
        );
        let sa = verify(&token, NOW, &["vault".into(), "x".into()], &v).unwrap();
        assert_eq!(sa.audiences, vec!["vault"]);

        // Another issuer's token is not recognised at all.
        c.issuer = "other".into();
        let token = issue(&c, NOW, &key).unwrap();
        assert_eq!(verify(&token, NOW, &[], &v), Err(AuthError::NotRecognized));
        assert_eq!(
            verify("not-a-jwt", NOW, &[], &v),
            Err(AuthError::NotRecognized)
        );

        // Signed by another key with the same kid shape: no key for its kid.
        let other = SigningKey::generate().unwrap();
        let token = issue(&claims(), NOW, &other).unwrap();
        assert_eq!(
            verify(&token, NOW, &[], &v).unwrap_err().message(),
            "invalid signature, no keys found"
        );
        // A tampered payload fails the signature.
        let token = issue(&claims(), NOW, &key).unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        let mut payload: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        payload["sub"] = "system:serviceaccount:kube-system:admin".into();
        let forged = format!(
            "{}.{}.{}",
            parts[0],
            URL_SAFE_NO_PAD.encode(payload.to_string()),
            parts[2]
        );
        assert_eq!(
            verify(&forged, NOW, &[], &v).unwrap_err().message(),
            "go-jose/go-jose: error in cryptographic primitive"
        );
        // alg none is refused.
        let none = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
            parts[1]
        );
        assert!(verify(&none, NOW, &[], &v).is_err());
    }

    fn existing(uid: &str) -> Existing {
        Existing {
            uid: uid.into(),
            deletion_timestamp: None,
        }
    }

    #[derive(Default)]
    struct Store {
        sas: HashMap<String, Existing>,
        pods: HashMap<String, Existing>,
        secrets: HashMap<String, Existing>,
        nodes: HashMap<String, Existing>,
    }

    impl Store {
        fn with_sa(mut self, ns: &str, name: &str, uid: &str) -> Self {
            self.sas.insert(format!("{ns}/{name}"), existing(uid));
            self
        }
    }

    impl TokenObjects for Store {
        fn service_account(&self, ns: &str, name: &str) -> Result<Existing, String> {
            self.sas
                .get(&format!("{ns}/{name}"))
                .cloned()
                .ok_or_else(|| format!("serviceaccounts {name:?} not found"))
        }
        fn pod(&self, ns: &str, name: &str) -> Option<Existing> {
            self.pods.get(&format!("{ns}/{name}")).cloned()
        }
        fn secret(&self, ns: &str, name: &str) -> Option<Existing> {
            self.secrets.get(&format!("{ns}/{name}")).cloned()
        }
        fn node(&self, name: &str) -> Option<Existing> {
            self.nodes.get(name).cloned()
        }
    }
}
