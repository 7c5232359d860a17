//! Signing keys for ServiceAccount tokens (and the CA key that issues client certificates), as
//! kube-apiserver reads `--service-account-signing-key-file` / `--service-account-key-file`
//! (k8s.io/client-go `util/keyutil`) and names them (`keyIDFromPublicKey` of
//! `pkg/serviceaccount/jwt.go`: base64url of the SHA-256 of the PKIX DER public key), and the
//! JWKS kube-apiserver serves at `/openid/v1/jwks` (`pkg/serviceaccount/openidmetadata.go`).
//!
//! Crypto is ring's (already in the tree through rustls). ring cannot generate RSA keys, so a
//! generated key is ECDSA P-256 and tokens are `ES256`, which kube-apiserver issues for an ECDSA
//! key too; RSA keys (PKCS#1 or PKCS#8 PEM) are read and sign `RS256`, as kubeadm's `sa.key`.
//!
//! Entropy: [`SigningKey::generate`] draws a new key from the OS, and signing draws from it too
//! (ECDSA nonces, RSA blinding) — ring requires it; nothing else here does I/O.

use crate::der;
use crate::AuthError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Value};

/// The JWS algorithm a key signs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RSA keys).
    RS256,
    /// ECDSA P-256 with SHA-256.
    ES256,
    /// ECDSA P-384 with SHA-384.
    ES384,
}

impl Algorithm {
    /// The JWS `alg` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::RS256 => "RS256",
            Algorithm::ES256 => "ES256",
            Algorithm::ES384 => "ES384",
        }
    }
}

enum Inner {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

/// A private key that signs tokens (and certificates).
pub struct SigningKey {
    inner: Inner,
    public: PublicKey,
    /// PEM label and DER as read (or generated), for [`SigningKey::to_pem`].
    label: &'static str,
    der: Vec<u8>,
    rng: SystemRandom,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.public.algorithm)
            .field("kid", &self.public.kid)
            .finish_non_exhaustive()
    }
}

fn key_error(what: &str, e: impl std::fmt::Display) -> AuthError {
    AuthError::invalid(format!("{what}: {e}"))
}

impl SigningKey {
    /// A new ECDSA P-256 key, **drawn from the OS's entropy** (ring's `SystemRandom`). Keep it
    /// with [`SigningKey::to_pem`] (mode 0600) and read it back with [`SigningKey::from_pem`].
    pub fn generate() -> Result<SigningKey, AuthError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|e| key_error("cannot generate a key", e))?;
        Self::from_pkcs8(pkcs8.as_ref())
    }

    /// Reads a PEM private key: `PRIVATE KEY` (PKCS#8: RSA, EC P-256 or P-384), `EC PRIVATE KEY`
    /// (SEC1) or `RSA PRIVATE KEY` (PKCS#1). The first private key block is used.
    pub fn from_pem(pem_text: &str) -> Result<SigningKey, AuthError> {
        let blocks = pem::parse_many(pem_text).map_err(|e| key_error("invalid PEM", e))?;
        for block in &blocks {
            if let Some(key) = Self::from_block(block) {
                return key;
            }
        }
        Err(AuthError::invalid(
            "data does not contain a valid RSA or ECDSA private key",
        ))
    }

    fn from_block(block: &pem::Pem) -> Option<Result<SigningKey, AuthError>> {
        match block.tag() {
            "PRIVATE KEY" => Some(Self::from_pkcs8(block.contents())),
            "EC PRIVATE KEY" => Some(Self::from_sec1(block.contents())),
            "RSA PRIVATE KEY" => Some(Self::from_pkcs1(block.contents())),
            _ => None,
        }
    }

    /// Reads a PKCS#8 DER private key.
    pub fn from_pkcs8(der: &[u8]) -> Result<SigningKey, AuthError> {
        let (alg, curve) =
            der::pkcs8_algorithm(der).map_err(|e| key_error("not a PKCS#8 private key", e))?;
        let rng = SystemRandom::new();
        if alg == der::oid(der::OID_RSA) {
            let kp = RsaKeyPair::from_pkcs8(der).map_err(|e| key_error("invalid RSA key", e))?;
            return Self::rsa(kp, "PRIVATE KEY", der);
        }
        if alg == der::oid(der::OID_EC_PUBLIC_KEY) {
            let (sig, algorithm) = ec_signing(curve.as_ref())?;
            let kp = EcdsaKeyPair::from_pkcs8(sig, der, &rng)
                .map_err(|e| key_error("invalid ECDSA key", e))?;
            return Self::ec(kp, algorithm, "PRIVATE KEY", der);
        }
        Err(AuthError::invalid("unsupported private key algorithm"))
    }

    fn from_sec1(der: &[u8]) -> Result<SigningKey, AuthError> {
        let sec1 = der::parse_sec1(der).map_err(|e| key_error("not an EC private key", e))?;
        let (sig, algorithm) = ec_signing(sec1.curve.as_ref())?;
        let public = sec1
            .public
            .ok_or_else(|| AuthError::invalid("EC private key without its public key"))?;
        let kp = EcdsaKeyPair::from_private_key_and_public_key(
            sig,
            &sec1.private,
            &public,
            &SystemRandom::new(),
        )
        .map_err(|e| key_error("invalid ECDSA key", e))?;
        Self::ec(kp, algorithm, "EC PRIVATE KEY", der)
    }

    fn from_pkcs1(der: &[u8]) -> Result<SigningKey, AuthError> {
        let kp = RsaKeyPair::from_der(der).map_err(|e| key_error("invalid RSA key", e))?;
        Self::rsa(kp, "RSA PRIVATE KEY", der)
    }

    fn rsa(kp: RsaKeyPair, label: &'static str, der: &[u8]) -> Result<SigningKey, AuthError> {
        let public = PublicKey::new(Algorithm::RS256, kp.public().as_ref().to_vec())?;
        Ok(SigningKey {
            inner: Inner::Rsa(kp),
            public,
            label,
            der: der.to_vec(),
            rng: SystemRandom::new(),
        })
    }

    fn ec(
        kp: EcdsaKeyPair,
        algorithm: Algorithm,
        label: &'static str,
        der: &[u8],
    ) -> Result<SigningKey, AuthError> {
        let public = PublicKey::new(algorithm, kp.public_key().as_ref().to_vec())?;
        Ok(SigningKey {
            inner: Inner::Ec(kp),
            public,
            label,
            der: der.to_vec(),
            rng: SystemRandom::new(),
        })
    }

    /// The key as PEM, in the form it was read (`PRIVATE KEY` when generated).
    pub fn to_pem(&self) -> String {
        pem_encode(self.label, &self.der)
    }

    /// The public half (for `--service-account-key-file`, the JWKS).
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The JWS algorithm tokens are signed with.
    pub fn algorithm(&self) -> Algorithm {
        self.public.algorithm
    }

    /// The `kid` of tokens this key signs.
    pub fn key_id(&self) -> &str {
        &self.public.kid
    }

    /// A JWS signature of `msg` (RSASSA-PKCS1-v1_5 SHA-256, or ECDSA `r || s`).
    pub(crate) fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, AuthError> {
        match &self.inner {
            Inner::Rsa(kp) => {
                let mut sig = vec![0; kp.public().modulus_len()];
                kp.sign(&signature::RSA_PKCS1_SHA256, &self.rng, msg, &mut sig)
                    .map_err(|e| key_error("cannot sign", e))?;
                Ok(sig)
            }
            Inner::Ec(kp) => Ok(kp
                .sign(&self.rng, msg)
                .map_err(|e| key_error("cannot sign", e))?
                .as_ref()
                .to_vec()),
        }
    }

    /// An X.509 signature of `tbs`: the signatureAlgorithm OID and the signature value (ECDSA
    /// as a DER `Ecdsa-Sig-Value`).
    pub(crate) fn sign_x509(&self, tbs: &[u8]) -> Result<Vec<u8>, AuthError> {
        let sig = self.sign(tbs)?;
        Ok(match self.public.algorithm {
            Algorithm::RS256 => sig,
            Algorithm::ES256 | Algorithm::ES384 => {
                let (r, s) = sig.split_at(sig.len() / 2);
                yasna::construct_der(|w| {
                    w.write_sequence(|w| {
                        w.next().write_bigint_bytes(r, true);
                        w.next().write_bigint_bytes(s, true);
                    })
                })
            }
        })
    }

    /// The X.509 signatureAlgorithm of [`SigningKey::sign_x509`].
    pub(crate) fn x509_signature_oid(&self) -> &'static [u64] {
        match self.public.algorithm {
            Algorithm::RS256 => der::OID_RSA_SHA256,
            Algorithm::ES256 => der::OID_ECDSA_SHA256,
            Algorithm::ES384 => der::OID_ECDSA_SHA384,
        }
    }
}

fn ec_signing(
    curve: Option<&yasna::models::ObjectIdentifier>,
) -> Result<(&'static signature::EcdsaSigningAlgorithm, Algorithm), AuthError> {
    match curve {
        Some(c) if *c == der::oid(der::OID_P256) => Ok((
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            Algorithm::ES256,
        )),
        Some(c) if *c == der::oid(der::OID_P384) => Ok((
            &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
            Algorithm::ES384,
        )),
        _ => Err(AuthError::invalid(
            "unknown private key curve, must be 256 or 384",
        )),
    }
}

/// A public key that verifies tokens: its algorithm, key bits, PKIX DER and `kid`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    algorithm: Algorithm,
    /// ring's form: the PKCS#1 `RSAPublicKey`, or the uncompressed EC point.
    key: Vec<u8>,
    spki: Vec<u8>,
    kid: String,
}

impl PublicKey {
    fn new(algorithm: Algorithm, key: Vec<u8>) -> Result<PublicKey, AuthError> {
        let spki = match algorithm {
            Algorithm::RS256 => der::spki(der::OID_RSA, None, &key),
            Algorithm::ES256 => der::spki(der::OID_EC_PUBLIC_KEY, Some(der::OID_P256), &key),
            Algorithm::ES384 => der::spki(der::OID_EC_PUBLIC_KEY, Some(der::OID_P384), &key),
        };
        let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &spki));
        Ok(PublicKey {
            algorithm,
            key,
            spki,
            kid,
        })
    }

    /// Reads a PKIX DER public key (SubjectPublicKeyInfo).
    pub fn from_spki_der(der: &[u8]) -> Result<PublicKey, AuthError> {
        let spki = der::parse_spki(der).map_err(|e| key_error("not a public key", e))?;
        if spki.algorithm == der::oid(der::OID_RSA) {
            return PublicKey::new(Algorithm::RS256, spki.key);
        }
        if spki.algorithm == der::oid(der::OID_EC_PUBLIC_KEY) {
            let (_, algorithm) = ec_signing(spki.curve.as_ref())?;
            return PublicKey::new(algorithm, spki.key);
        }
        Err(AuthError::invalid("unsupported public key algorithm"))
    }

    /// Reads the keys of a PEM file as kube-apiserver's `--service-account-key-file`: `PUBLIC
    /// KEY`, `RSA PUBLIC KEY` and `CERTIFICATE` blocks, and the public halves of private keys.
    pub fn many_from_pem(pem_text: &str) -> Result<Vec<PublicKey>, AuthError> {
        let blocks = pem::parse_many(pem_text).map_err(|e| key_error("invalid PEM", e))?;
        let mut keys = Vec::new();
        for block in &blocks {
            match block.tag() {
                "PUBLIC KEY" => keys.push(Self::from_spki_der(block.contents())?),
                "RSA PUBLIC KEY" => {
                    keys.push(PublicKey::new(Algorithm::RS256, block.contents().to_vec())?)
                }
                // keyutil.ParsePublicKeysPEM takes a certificate's key too (envtest passes
                // its signing CA's certificate as --service-account-key-file).
                "CERTIFICATE" => {
                    let cert = crate::der::parse_certificate(block.contents())
                        .map_err(|e| key_error("invalid certificate", e))?;
                    keys.push(Self::from_spki_der(&cert.spki)?)
                }
                _ => {
                    if let Some(key) = SigningKey::from_block(block) {
                        keys.push(key?.public_key().clone());
                    }
                }
            }
        }
        if keys.is_empty() {
            return Err(AuthError::invalid(
                "data does not contain any valid RSA or ECDSA public keys",
            ));
        }
        Ok(keys)
    }

    /// The key as a `PUBLIC KEY` PEM block.
    pub fn to_pem(&self) -> String {
        pem_encode("PUBLIC KEY", &self.spki)
    }

    /// The PKIX DER form (what the key id hashes).
    pub fn spki_der(&self) -> &[u8] {
        &self.spki
    }

    /// The JWS algorithm the key verifies.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// `keyIDFromPublicKey`: base64url (no padding) of the SHA-256 of the PKIX DER.
    pub fn key_id(&self) -> &str {
        &self.kid
    }

    /// Verifies a JWS signature.
    pub(crate) fn verify(&self, alg: &str, msg: &[u8], sig: &[u8]) -> bool {
        if alg != self.algorithm.as_str() {
            return false;
        }
        let params: &dyn signature::VerificationAlgorithm = match self.algorithm {
            Algorithm::RS256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            Algorithm::ES256 => &signature::ECDSA_P256_SHA256_FIXED,
            Algorithm::ES384 => &signature::ECDSA_P384_SHA384_FIXED,
        };
        signature::UnparsedPublicKey::new(params, &self.key)
            .verify(msg, sig)
            .is_ok()
    }

    /// The key as a JWK of kube-apiserver's `/openid/v1/jwks` (go-jose's member order).
    pub fn jwk(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("use".into(), "sig".into());
        match self.algorithm {
            Algorithm::RS256 => {
                let (n, e) = der::rsa_public_components(&self.key).unwrap_or_default();
                m.insert("kty".into(), "RSA".into());
                m.insert("kid".into(), self.kid.clone().into());
                m.insert("alg".into(), "RS256".into());
                m.insert("n".into(), URL_SAFE_NO_PAD.encode(n).into());
                m.insert("e".into(), URL_SAFE_NO_PAD.encode(e).into());
            }
            Algorithm::ES256 | Algorithm::ES384 => {
                let crv = if self.algorithm == Algorithm::ES256 {
                    "P-256"
                } else {
                    "P-384"
                };
                // Uncompressed point: 0x04 || x || y, each coordinate of the curve's size.
                let coords = self.key.get(1..).unwrap_or_default();
                let (x, y) = coords.split_at(coords.len() / 2);
                m.insert("kty".into(), "EC".into());
                m.insert("kid".into(), self.kid.clone().into());
                m.insert("crv".into(), crv.into());
                m.insert("alg".into(), self.algorithm.as_str().into());
                m.insert("x".into(), URL_SAFE_NO_PAD.encode(x).into());
                m.insert("y".into(), URL_SAFE_NO_PAD.encode(y).into());
            }
        }
        Value::Object(m)
    }
}

/// A PEM block with `\n` line endings (as Go's `pem.Encode`).
pub(crate) fn pem_encode(label: &str, der: &[u8]) -> String {
    pem::encode_config(
        &pem::Pem::new(label, der.to_vec()),
        pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
    )
}

/// The `/openid/v1/jwks` document of these keys.
pub fn jwks(keys: &[PublicKey]) -> Value {
    json!({ "keys": keys.iter().map(PublicKey::jwk).collect::<Vec<_>>() })
}

/// The `/.well-known/openid-configuration` document (`openidmetadata.go`): the issuer, the
/// JWKS URI (`--service-account-jwks-uri`, by default the issuer's scheme and host with path
/// `/openid/v1/jwks`) and the keys' algorithms, sorted.
pub fn openid_configuration(issuer: &str, jwks_uri: Option<&str>, keys: &[PublicKey]) -> Value {
    let jwks_uri = match jwks_uri {
        Some(u) => u.to_string(),
        None => {
            // Resolve the absolute path against the issuer URL: keep scheme and authority.
            let after_scheme = issuer.find("://").map(|i| i + 3).unwrap_or(0);
            let end = issuer[after_scheme..]
                .find('/')
                .map(|i| i + after_scheme)
                .unwrap_or(issuer.len());
            format!("{}/openid/v1/jwks", &issuer[..end])
        }
    };
    let mut algs: Vec<&str> = keys.iter().map(|k| k.algorithm.as_str()).collect();
    algs.sort_unstable();
    algs.dedup();
    json!({
        "issuer": issuer,
        "jwks_uri": jwks_uri,
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": algs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_key_round_trips_and_kid_is_sha256_of_pkix() {
        let key = SigningKey::generate().unwrap();
        assert_eq!(key.algorithm(), Algorithm::ES256);
        let pem_text = key.to_pem();
        assert!(pem_text.starts_with("-----BEGIN PRIVATE KEY-----"));
        let again = SigningKey::from_pem(&pem_text).unwrap();
        assert_eq!(again.public_key(), key.public_key());
        let spki = key.public_key().spki_der();
        // PKIX prefix of a P-256 key, as Go's MarshalPKIXPublicKey writes it.
        assert_eq!(
            &spki[..26],
            &[
                0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
                0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00
            ]
        );
        let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, spki));
        assert_eq!(key.key_id(), kid);
        assert_eq!(key.key_id().len(), 43);
        // The public PEM reads back to the same key.
        let keys = PublicKey::many_from_pem(&key.public_key().to_pem()).unwrap();
        assert_eq!(keys, vec![key.public_key().clone()]);
        // A private key PEM also gives its public key (as --service-account-key-file).
        let keys = PublicKey::many_from_pem(&pem_text).unwrap();
        assert_eq!(keys[0].key_id(), key.key_id());
    }

    #[test]
    fn jwk_shape() {
        let key = SigningKey::generate().unwrap();
        let jwk = key.public_key().jwk();
        let members: Vec<&str> = jwk
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut sorted = members.clone();
        sorted.sort();
        assert_eq!(sorted, vec!["alg", "crv", "kid", "kty", "use", "x", "y"]);
        assert_eq!(jwk["alg"], "ES256");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(jwk["use"], "sig");
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["x"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
        assert_eq!(jwks(&[key.public_key().clone()])["keys"][0], jwk);
    }

    const RSA_PKCS1: &str = include_str!("../tests/data/rsa-pkcs1.pem");
    const RSA_PKCS8: &str = include_str!("../tests/data/rsa-pkcs8.pem");
    const RSA_PUB: &str = include_str!("../tests/data/rsa-pub.pem");
    const EC_SEC1: &str = include_str!("../tests/data/ec-sec1.pem");
    const EC_PUB: &str = include_str!("../tests/data/ec-pub.pem");

    #[test]
    fn openssl_rsa_keys_sign_rs256_with_openssls_key_id() {
        // The expected kid is openssl's: sha256 of `openssl pkey -pubout -outform DER`.
        let kid = "qMMAbpOVaC2IzOQolFxBSaQnTkwO7GafOnYtPqNPegQ";
        for pem_text in [RSA_PKCS1, RSA_PKCS8] {
            let key = SigningKey::from_pem(pem_text).unwrap();
            assert_eq!(key.algorithm(), Algorithm::RS256);
            assert_eq!(key.key_id(), kid);
            let sig = key.sign(b"msg").unwrap();
            assert_eq!(sig.len(), 256);
            assert!(key.public_key().verify("RS256", b"msg", &sig));
            assert!(!key.public_key().verify("ES256", b"msg", &sig));
            assert_eq!(key.to_pem().trim(), pem_text.trim().replace("\r", ""));
        }
        let public = PublicKey::many_from_pem(RSA_PUB).unwrap();
        assert_eq!(public[0].key_id(), kid);
        assert_eq!(public[0].to_pem().trim(), RSA_PUB.trim());
        let jwk = public[0].jwk();
        assert_eq!(jwk["kty"], "RSA");
        assert_eq!(jwk["alg"], "RS256");
        assert_eq!(jwk["e"], "AQAB");
        assert!(jwk["n"]
            .as_str()
            .unwrap()
            .starts_with("m8pK5_pLNmabVfycNuH3"));
        let members: Vec<&str> = jwk
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut sorted = members.clone();
        sorted.sort();
        assert_eq!(sorted, vec!["alg", "e", "kid", "kty", "n", "use"]);
    }

    #[test]
    fn openssl_sec1_ec_key() {
        let key = SigningKey::from_pem(EC_SEC1).unwrap();
        assert_eq!(key.algorithm(), Algorithm::ES256);
        assert_eq!(key.key_id(), "Vnf8XKKocWpUhQJGGImCiGG9SMXEhjyGRSN5VCz8lBM");
        let public = PublicKey::many_from_pem(EC_PUB).unwrap();
        assert_eq!(&public[0], key.public_key());
        let sig = key.sign(b"msg").unwrap();
        assert!(public[0].verify("ES256", b"msg", &sig));
        assert!(!public[0].verify("ES256", b"other", &sig));
    }

    #[test]
    fn openid_discovery() {
        let key = SigningKey::generate().unwrap();
        let doc = openid_configuration(
            "https://kubernetes.default.svc.cluster.local",
            None,
            &[key.public_key().clone()],
        );
        assert_eq!(
            doc,
            json!({
                "issuer": "https://kubernetes.default.svc.cluster.local",
                "jwks_uri": "https://kubernetes.default.svc.cluster.local/openid/v1/jwks",
                "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["ES256"]
            })
        );
        let doc = openid_configuration("https://example.com/a/b", None, &[]);
        assert_eq!(doc["jwks_uri"], "https://example.com/openid/v1/jwks");
    }

    #[test]
    fn rejects_garbage() {
        assert!(SigningKey::from_pem("nothing").is_err());
        assert!(PublicKey::many_from_pem("").is_err());
    }

    #[test]
    fn a_certificate_gives_its_public_key_as_a_service_account_key_file() {
        // envtest passes its signing CA's certificate as --service-account-key-file.
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(Vec::<String>::new())
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let signer = SigningKey::from_pem(&key.serialize_pem()).unwrap();
        let keys = PublicKey::many_from_pem(&cert.pem()).unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].to_pem(), signer.public_key().to_pem());
        assert!(PublicKey::many_from_pem(
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        )
        .is_err());
    }
}
