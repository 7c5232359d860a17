//! The server's calls end to end, as crest-server is to make them: keys at startup, the admin
//! certificate, per-request authentication, TokenRequest, TokenReview, impersonation.

use crest_api::UserInfo;
use crest_auth::authenticator::Authenticator;
use crest_auth::impersonation;
use crest_auth::keys::{PublicKey, SigningKey};
use crest_auth::serviceaccount::{self, BoundObject, Existing, ObjectRef, TokenObjects, Verifier};
use crest_auth::tokenfile::TokenFile;
use crest_auth::tokenrequest::{BoundKind, TokenRequest, TokenRequestConfig, TokenReview};
use crest_auth::x509;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Mutex;

const ISS: &str = "https://kubernetes.default.svc.cluster.local";
const NOW: i64 = 1_800_000_000;

/// The server's store, as the authenticator sees it.
#[derive(Default)]
struct Store {
    service_accounts: Mutex<HashMap<(String, String), String>>,
    pods: Mutex<HashMap<(String, String), (String, String)>>, // uid, serviceAccountName
}

impl TokenObjects for Store {
    fn service_account(&self, ns: &str, name: &str) -> Result<Existing, String> {
        self.service_accounts
            .lock()
            .unwrap()
            .get(&(ns.into(), name.into()))
            .map(|uid| Existing {
                uid: uid.clone(),
                deletion_timestamp: None,
            })
            .ok_or_else(|| format!("serviceaccounts {name:?} not found"))
    }
    fn pod(&self, ns: &str, name: &str) -> Option<Existing> {
        self.pods
            .lock()
            .unwrap()
            .get(&(ns.into(), name.into()))
            .map(|(uid, _)| Existing {
                uid: uid.clone(),
                deletion_timestamp: None,
            })
    }
    fn secret(&self, _: &str, _: &str) -> Option<Existing> {
        None
    }
    fn node(&self, _: &str) -> Option<Existing> {
        None
    }
}

fn ca() -> (Vec<u8>, SigningKey) {
    // As crates/crest/src/tls.rs makes it: an rcgen key (P-256, PKCS#8) and self-signed CA.
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "crest-ca");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    (
        cert.der().to_vec(),
        SigningKey::from_pem(&key.serialize_pem()).unwrap(),
    )
}

#[test]
fn server_flow() {
    // Startup: the ServiceAccount signing key (generated once, kept as PEM in the pki dir).
    let sa_key_pem = SigningKey::generate().unwrap().to_pem();
    let sa_key = SigningKey::from_pem(&sa_key_pem).unwrap();
    let public = PublicKey::many_from_pem(&sa_key.public_key().to_pem()).unwrap();
    let mut authn = Authenticator::new(Verifier {
        issuers: vec![ISS.into()],
        keys: public,
        api_audiences: vec![ISS.into()],
    });
    authn.token_file = Some(TokenFile::parse("t0ken,bob,1002,dev\n", "/tokens.csv").unwrap());
    let config = TokenRequestConfig::new(ISS);
    let store = Store::default();

    // The admin kubeconfig's certificate.
    let (ca_der, ca_key) = ca();
    let admin = x509::issue_client_cert(
        &ca_der,
        &ca_key,
        "crest-admin",
        &["system:masters"],
        NOW - 60,
        NOW + 365 * 86400,
    )
    .unwrap();
    let a = authn.authenticate(Some(&admin.cert_der), None, &store, NOW);
    let admin_user = a.result.unwrap();
    assert_eq!(admin_user.user.name, "crest-admin");
    assert_eq!(
        admin_user.user.groups,
        vec!["system:masters", "system:authenticated"]
    );

    // kubectl create token builder --bound-object-kind Pod --bound-object-name web
    store
        .service_accounts
        .lock()
        .unwrap()
        .insert(("default".into(), "builder".into()), "sa-uid".into());
    store.pods.lock().unwrap().insert(
        ("default".into(), "web".into()),
        ("pod-uid".into(), "builder".into()),
    );
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web"}}});
    let mut req = TokenRequest::decode(&body, "default", "builder").unwrap();
    let sa = store.service_account("default", "builder").unwrap();
    req.validate(&config).unwrap();
    let bound = match req.bound_object().unwrap() {
        Some((BoundKind::Pod, r)) => {
            let (uid, pod_sa) =
                store.pods.lock().unwrap()[&("default".into(), r.name.clone())].clone();
            req.check_pod_service_account(&pod_sa).unwrap();
            req.check_bound_uid(&uid).unwrap();
            Some(BoundObject::Pod {
                pod: ObjectRef::new(r.name.clone(), uid),
                node: None,
            })
        }
        other => panic!("{other:?}"),
    };
    let issued = req
        .issue(
            &config,
            &sa.uid,
            bound,
            NOW,
            &serviceaccount::new_jti(),
            &sa_key,
        )
        .unwrap();
    assert_eq!(issued.body["status"]["token"], issued.token.as_str());

    // The token authenticates requests...
    let header = format!("Bearer {}", issued.token);
    let u = authn
        .authenticate(None, Some(&header), &store, NOW + 5)
        .result
        .unwrap();
    assert_eq!(u.user.name, "system:serviceaccount:default:builder");
    assert_eq!(
        u.user.extra["authentication.kubernetes.io/pod-name"],
        vec!["web"]
    );

    // ...and a TokenReview (with its own cache key, the audiences).
    let review = TokenReview::decode(&json!({"spec": {"token": issued.token}}), "").unwrap();
    let result = authn
        .authenticate_token(&review.token, &review.audiences, &store, NOW + 5)
        .map(|a| (a.user.clone(), a.audiences.clone()));
    let out = review.response(&result);
    assert_eq!(out["status"]["authenticated"], true);
    assert_eq!(out["status"]["audiences"], json!([ISS]));

    // The pod is deleted: once the cache entry expires (10 s), the token is refused.
    store.pods.lock().unwrap().clear();
    assert!(authn
        .authenticate(None, Some(&header), &store, NOW + 9)
        .result
        .is_ok());
    let r = authn.authenticate(None, Some(&header), &store, NOW + 20);
    assert_eq!(
        r.result.unwrap_err().message(),
        "service account token has been invalidated"
    );

    // Static token user impersonating: the checks the server authorizes, then the user.
    let bob = authn
        .authenticate(None, Some("Bearer t0ken"), &store, NOW)
        .result
        .unwrap();
    let imp =
        impersonation::from_headers([("impersonate-user", "alice"), ("impersonate-group", "qa")])
            .unwrap()
            .unwrap();
    assert_eq!(imp.checks.len(), 2);
    assert_eq!(
        imp.checks[0].forbidden(&bob.user.name, "").message,
        "users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
    assert_eq!(
        imp.user,
        UserInfo {
            name: "alice".into(),
            groups: vec!["qa".into(), "system:authenticated".into()],
            ..UserInfo::default()
        }
    );
}
