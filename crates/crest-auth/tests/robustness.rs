//! Untrusted input never panics: every single-byte corruption of a certificate, a token and a
//! token file, and truncations of each.

use crest_auth::keys::SigningKey;
use crest_auth::serviceaccount::{self, ObjectRef, TokenClaims, Verifier};
use crest_auth::tokenfile::TokenFile;
use crest_auth::x509;

const ISS: &str = "https://kubernetes.default.svc.cluster.local";
const NOW: i64 = 1_800_000_000;

#[test]
fn corrupted_certificates() {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = params.self_signed(&key).unwrap();
    let signer = SigningKey::from_pem(&key.serialize_pem()).unwrap();
    let cert = x509::issue_client_cert(ca.der(), &signer, "alice", &["a", "b"], NOW, NOW + 60)
        .unwrap()
        .cert_der;
    for i in 0..cert.len() {
        for delta in [1u8, 0x80, 0xff] {
            let mut c = cert.clone();
            c[i] = c[i].wrapping_add(delta);
            let _ = x509::user_from_client_cert(&c);
        }
        let _ = x509::user_from_client_cert(&cert[..i]);
    }
}

#[test]
fn corrupted_tokens() {
    let key = SigningKey::generate().unwrap();
    let token = serviceaccount::issue(
        &TokenClaims {
            issuer: ISS.into(),
            namespace: "default".into(),
            service_account: ObjectRef::new("sa", "uid"),
            audiences: vec![ISS.into()],
            expiration_seconds: 3600,
            warn_after_seconds: 0,
            bound: None,
            jti: "j".into(),
        },
        NOW,
        &key,
    )
    .unwrap();
    let v = Verifier {
        issuers: vec![ISS.into()],
        keys: vec![key.public_key().clone()],
        api_audiences: vec![ISS.into()],
    };
    let bytes = token.as_bytes();
    for i in 0..bytes.len() {
        for c in [b'.', b'A', b'_', b'=', b'{', 0xc3] {
            let mut t = bytes.to_vec();
            t[i] = c;
            if let Ok(s) = String::from_utf8(t) {
                // Only the untouched token verifies.
                assert!(serviceaccount::verify(&s, NOW, &[], &v).is_err() || s == token);
            }
        }
        let _ = serviceaccount::verify(&token[..i], NOW, &[], &v);
    }
}

#[test]
fn corrupted_token_files() {
    let text = "tok,alice,1,\"a,b\"\n\"q\"\"x\",bob,2\r\n";
    for i in 0..text.len() {
        for c in ['"', ',', '\n', '\r', 'x'] {
            let mut s = text.to_string();
            if s.is_char_boundary(i) && s.is_char_boundary(i + 1) {
                s.replace_range(i..i + 1, &c.to_string());
                let _ = TokenFile::parse(&s, "/t");
            }
        }
        let _ = TokenFile::parse(&text[..i], "/t");
    }
}
