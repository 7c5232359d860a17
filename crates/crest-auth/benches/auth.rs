//! Authentication costs: a cached lookup (hash the token + one map lookup) against verifying a
//! ServiceAccount JWT, and a client certificate's user.

use crest_api::UserInfo;
use crest_auth::cache::{Authenticated, CacheKey, TokenCache};
use crest_auth::keys::SigningKey;
use crest_auth::serviceaccount::{self, ObjectRef, TokenClaims, Verifier};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

const ISS: &str = "https://kubernetes.default.svc.cluster.local";
const NOW: i64 = 1_800_000_000;

fn bench(c: &mut Criterion) {
    let key = SigningKey::generate().expect("key");
    let claims = TokenClaims {
        issuer: ISS.into(),
        namespace: "default".into(),
        service_account: ObjectRef::new("builder", "0b8a1f7e-5c1d-4f0e-9a43-2f1c7e3d9b11"),
        audiences: vec![ISS.into()],
        expiration_seconds: 3600,
        warn_after_seconds: 0,
        bound: None,
        jti: serviceaccount::new_jti(),
    };
    let token = serviceaccount::issue(&claims, NOW, &key).expect("token");
    let verifier = Verifier {
        issuers: vec![ISS.into()],
        keys: vec![key.public_key().clone()],
        api_audiences: vec![ISS.into()],
    };

    c.bench_function("jwt_verify_es256", |b| {
        b.iter(|| serviceaccount::verify(black_box(&token), NOW, &[], &verifier).expect("ok"))
    });

    let rsa = SigningKey::from_pem(include_str!("../tests/data/rsa-pkcs1.pem")).expect("rsa");
    let rsa_token = serviceaccount::issue(&claims, NOW, &rsa).expect("token");
    let rsa_verifier = Verifier {
        keys: vec![rsa.public_key().clone()],
        ..verifier.clone()
    };
    c.bench_function("jwt_verify_rs256", |b| {
        b.iter(|| {
            serviceaccount::verify(black_box(&rsa_token), NOW, &[], &rsa_verifier).expect("ok")
        })
    });

    let cache = TokenCache::default();
    // A realistic population: 1000 other cached credentials.
    for i in 0..1000 {
        cache.insert(
            CacheKey::token(&format!("other-{i}"), &[]),
            Authenticated {
                user: UserInfo::default(),
                audiences: vec![],
            },
            NOW + 10,
            NOW,
        );
    }
    let sa = serviceaccount::verify(&token, NOW, &[], &verifier).expect("ok");
    cache.insert(
        CacheKey::token(&token, &[]),
        Authenticated {
            user: UserInfo {
                name: serviceaccount::make_username(&sa.namespace, &sa.service_account.name),
                ..UserInfo::default()
            },
            audiences: sa.audiences.clone(),
        },
        NOW + 10,
        NOW,
    );
    c.bench_function("cached_token_lookup", |b| {
        b.iter(|| {
            cache
                .get(&CacheKey::token(black_box(&token), &[]), NOW)
                .expect("hit")
        })
    });

    let issuer_key = SigningKey::generate().expect("ca key");
    let ca = ca_cert(&issuer_key);
    let issued =
        crest_auth::x509::issue_client_cert(&ca, &issuer_key, "alice", &["dev"], NOW, NOW + 3600)
            .expect("cert");
    c.bench_function("client_cert_user", |b| {
        b.iter(|| {
            crest_auth::x509::user_from_client_cert(black_box(&issued.cert_der)).expect("user")
        })
    });
    let cert_key = CacheKey::certificate(&issued.cert_der);
    cache.insert(
        cert_key,
        Authenticated {
            user: UserInfo::default(),
            audiences: vec![],
        },
        NOW + 10,
        NOW,
    );
    c.bench_function("cached_cert_lookup", |b| {
        b.iter(|| {
            cache
                .get(&CacheKey::certificate(black_box(&issued.cert_der)), NOW)
                .expect("hit")
        })
    });
}

/// A self-signed CA for `key` (rcgen, as the server makes its CA).
fn ca_cert(key: &SigningKey) -> Vec<u8> {
    let kp = rcgen::KeyPair::from_pem(&key.to_pem()).expect("rcgen key");
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "crest-ca");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.self_signed(&kp).expect("ca").der().to_vec()
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
