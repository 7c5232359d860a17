//! Client certificates: the user of a verified leaf certificate, as k8s.io/apiserver
//! `authentication/request/x509` `CommonNameUserConversion` (subject CN = user name, every O =
//! a group, in the certificate's order), and issuing client certificates from the server's CA
//! (the admin kubeconfig's, and `how to create a user`: CN = user, O = groups).
//!
//! The TLS layer takes any client certificate (as Go's `tls.RequestClientCert`); [`ClientCa`]
//! verifies the chain to the server's CA, the validity dates and the client-auth usage per
//! request (`Authenticator::client_ca`), before [`user_from_client_cert`] reads the leaf.

use crate::der;
use crate::keys::SigningKey;
use crate::AuthError;
use crest_api::UserInfo;
use ring::rand::SecureRandom;
use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use yasna::Tag;

/// The user a verified client certificate authenticates as (kube-apiserver 1.32): name = the
/// subject's common name (the last CN, as Go's `pkix.Name`), groups = its organizations in
/// order, uid = the subject's `1.3.6.1.4.1.57683.2` attribute when present
/// (`AllowParsingUserUIDFromCertAuth`, beta and on), extra
/// `authentication.kubernetes.io/credential-id` = `X509SHA256=<hex sha256 of the DER>`.
/// `Err(NotRecognized)` for a certificate without a common name (upstream: not authenticated by
/// this authenticator), `Err(Invalid)` for bytes that are not a certificate or a bad uid.
pub fn user_from_client_cert(leaf_der: &[u8]) -> Result<UserInfo, AuthError> {
    let parts = der::parse_certificate(leaf_der)
        .map_err(|e| AuthError::invalid(format!("x509: malformed certificate: {e}")))?;
    let attrs = der::parse_name(&parts.subject)
        .map_err(|e| AuthError::invalid(format!("x509: malformed subject: {e}")))?;
    let cn = der::oid(der::OID_CN);
    let o = der::oid(der::OID_O);
    let uid_oid = der::oid(der::OID_K8S_UID);
    let mut name = String::new();
    let mut groups = Vec::new();
    let mut uids = Vec::new();
    for (id, value) in attrs {
        if id == uid_oid {
            match value {
                Some(v) => uids.push(v),
                None => return Err(AuthError::invalid("unable to parse UID into a string")),
            }
            continue;
        }
        let Some(value) = value else { continue };
        if id == cn {
            name = value;
        } else if id == o {
            groups.push(value);
        }
    }
    if name.is_empty() {
        return Err(AuthError::NotRecognized);
    }
    let uid = match uids.len() {
        0 => String::new(),
        1 if uids[0].is_empty() => return Err(AuthError::invalid("UID cannot be an empty string")),
        1 => uids.remove(0),
        _ => {
            return Err(AuthError::invalid(format!(
                "expected 1 UID, but found multiple: [{}]",
                uids.join(" ")
            )))
        }
    };
    let digest = ring::digest::digest(&ring::digest::SHA256, leaf_der);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let mut extra = std::collections::BTreeMap::new();
    extra.insert(
        crate::serviceaccount::CREDENTIAL_ID_KEY.to_string(),
        vec![format!("X509SHA256={hex}")],
    );
    Ok(UserInfo {
        name,
        uid,
        groups,
        extra,
    })
}

/// The CAs client certificates must chain to (kube-apiserver's `--client-ca-file`), for a
/// server that requests client certificates without verifying them in the TLS handshake (as
/// Go's `tls.RequestClientCert` with verification in the authenticator): a certificate from
/// another CA is then a 401, as upstream, rather than a failed handshake.
#[derive(Clone, Debug)]
pub struct ClientCa {
    anchors: Vec<rustls_pki_types::TrustAnchor<'static>>,
}

impl ClientCa {
    /// The CA certificates of a PEM bundle.
    pub fn from_pem(pem_text: &str) -> Result<ClientCa, AuthError> {
        let blocks = pem::parse_many(pem_text)
            .map_err(|e| AuthError::invalid(format!("invalid PEM: {e}")))?;
        let ders: Vec<&[u8]> = blocks
            .iter()
            .filter(|b| b.tag() == "CERTIFICATE")
            .map(|b| b.contents())
            .collect();
        Self::from_ders(&ders)
    }

    /// The CA certificates given as DER.
    pub fn from_ders(ders: &[&[u8]]) -> Result<ClientCa, AuthError> {
        let mut anchors = Vec::new();
        for der in ders {
            let cert = rustls_pki_types::CertificateDer::from(der.to_vec());
            let anchor = webpki::anchor_from_trusted_cert(&cert)
                .map_err(|e| AuthError::invalid(format!("invalid CA certificate: {e}")))?;
            anchors.push(anchor.to_owned());
        }
        if anchors.is_empty() {
            return Err(AuthError::invalid("no CA certificate found"));
        }
        Ok(ClientCa { anchors })
    }

    /// Verifies a client certificate (and its intermediates) at `now` (unix seconds) for client
    /// authentication. The messages follow Go's `x509` errors (kube-apiserver logs them; the
    /// client sees 401 `Unauthorized`).
    pub fn verify(&self, leaf: &[u8], intermediates: &[&[u8]], now: i64) -> Result<(), AuthError> {
        let leaf = rustls_pki_types::CertificateDer::from(leaf);
        let ee = webpki::EndEntityCert::try_from(&leaf)
            .map_err(|e| AuthError::invalid(format!("x509: malformed certificate: {e}")))?;
        let intermediates: Vec<rustls_pki_types::CertificateDer<'_>> = intermediates
            .iter()
            .map(|d| rustls_pki_types::CertificateDer::from(*d))
            .collect();
        let time = rustls_pki_types::UnixTime::since_unix_epoch(std::time::Duration::from_secs(
            now.max(0) as u64,
        ));
        ee.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &self.anchors,
            &intermediates,
            time,
            webpki::KeyUsage::client_auth(),
            None,
            None,
        )
        .map(|_| ())
        .map_err(|e| {
            let why = match e {
                // Another CA of the same name (every Crest CA is `crest-ca`) fails on the
                // signature; Go reports both as an unknown authority.
                webpki::Error::UnknownIssuer | webpki::Error::InvalidSignatureForPublicKey => {
                    "x509: certificate signed by unknown authority".to_string()
                }
                webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => {
                    "x509: certificate has expired or is not yet valid".to_string()
                }
                webpki::Error::RequiredEkuNotFoundContext(_) => {
                    "x509: certificate specifies an incompatible key usage".to_string()
                }
                other => format!("x509: {other}"),
            };
            AuthError::invalid(format!("verifying certificate failed: {why}"))
        })
    }
}

/// A certificate issued by [`issue_client_cert`]: the certificate (PEM and DER) and its new
/// private key (PKCS#8 PEM).
#[derive(Clone, Debug)]
pub struct IssuedCert {
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: String,
}

/// Issues a client certificate for `user` in `groups` (subject `O=<group>…, CN=<user>`, in Go's
/// `pkix.Name` order), valid from `not_before` to `not_after` (unix seconds), signed by the CA
/// whose certificate (DER) and key are given. Extensions: key usage digitalSignature and
/// keyEncipherment (critical), extended key usage clientAuth, basic constraints CA:false
/// (critical), the CA's key identifier as authority key id.
///
/// **Draws from the OS's entropy** for the new ECDSA P-256 key and the serial number.
pub fn issue_client_cert(
    ca_cert_der: &[u8],
    ca_key: &SigningKey,
    user: &str,
    groups: &[&str],
    not_before: i64,
    not_after: i64,
) -> Result<IssuedCert, AuthError> {
    let ca = der::parse_certificate(ca_cert_der)
        .map_err(|e| AuthError::invalid(format!("x509: malformed CA certificate: {e}")))?;
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
        .map_err(|e| AuthError::invalid(format!("cannot generate a key: {e}")))?;
    let key = SigningKey::from_pkcs8(pkcs8.as_ref())?;
    let mut serial = [0u8; 16];
    rng.fill(&mut serial)
        .map_err(|e| AuthError::invalid(format!("cannot draw a serial number: {e}")))?;
    // Positive and minimally encoded: top bit clear, first byte non-zero.
    serial[0] = (serial[0] & 0x7f) | 0x40;

    let subject = yasna::construct_der(|w| {
        w.write_sequence_of(|w| {
            let rdn = |w: yasna::DERWriter<'_>, id: &[u64], value: &str| {
                w.write_set_of(|w| {
                    w.next().write_sequence(|w| {
                        w.next().write_oid(&der::oid(id));
                        w.next().write_utf8_string(value);
                    })
                })
            };
            for g in groups {
                rdn(w.next(), der::OID_O, g);
            }
            rdn(w.next(), der::OID_CN, user);
        })
    });
    let sig_oid = ca_key.x509_signature_oid();
    let sig_alg = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_oid(&der::oid(sig_oid));
            // RSA signature algorithms carry NULL parameters; ECDSA ones none.
            if sig_oid == der::OID_RSA_SHA256 {
                w.next().write_null();
            }
        })
    });
    let ext = |id: &[u64], critical: bool, value: Vec<u8>| {
        yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next().write_oid(&der::oid(id));
                if critical {
                    w.next().write_bool(true);
                }
                w.next().write_bytes(&value);
            })
        })
    };
    let mut extensions = vec![
        ext(
            der::OID_KEY_USAGE,
            true,
            // digitalSignature (bit 0) and keyEncipherment (bit 2).
            yasna::construct_der(|w| w.write_bitvec_bytes(&[0b1010_0000], 3)),
        ),
        ext(
            der::OID_EXT_KEY_USAGE,
            false,
            yasna::construct_der(|w| {
                w.write_sequence(|w| w.next().write_oid(&der::oid(der::OID_CLIENT_AUTH)))
            }),
        ),
        ext(
            der::OID_BASIC_CONSTRAINTS,
            true,
            yasna::construct_der(|w| w.write_sequence(|_| {})),
        ),
    ];
    if let Some(kid) = &ca.subject_key_id {
        extensions.push(ext(
            der::OID_AUTHORITY_KEY_ID,
            false,
            yasna::construct_der(|w| {
                w.write_sequence(|w| {
                    w.next()
                        .write_tagged_implicit(Tag::context(0), |w| w.write_bytes(kid))
                })
            }),
        ));
    }
    let tbs = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_tagged(Tag::context(0), |w| w.write_i64(2));
            w.next().write_bigint_bytes(&serial, true);
            w.next().write_der(&sig_alg);
            w.next().write_der(&ca.subject);
            w.next().write_sequence(|w| {
                der::write_time(w.next(), not_before);
                der::write_time(w.next(), not_after);
            });
            w.next().write_der(&subject);
            w.next().write_der(key.public_key().spki_der());
            w.next().write_tagged(Tag::context(3), |w| {
                w.write_sequence(|w| {
                    for e in &extensions {
                        w.next().write_der(e);
                    }
                })
            });
        })
    });
    let signature = ca_key.sign_x509(&tbs)?;
    let cert_der = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_der(&tbs);
            w.next().write_der(&sig_alg);
            w.next().write_bitvec_bytes(&signature, signature.len() * 8);
        })
    });
    Ok(IssuedCert {
        cert_pem: crate::keys::pem_encode("CERTIFICATE", &cert_der),
        cert_der,
        key_pem: key.to_pem(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

    fn ca() -> (rcgen::Certificate, KeyPair) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, "crest-ca");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        (params.self_signed(&key).unwrap(), key)
    }

    #[test]
    fn user_from_rcgen_certificate() {
        let (ca, ca_key) = ca();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(DnType::OrganizationName, "system:masters");
        params.distinguished_name.push(DnType::CommonName, "alice");
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        let user = user_from_client_cert(cert.der()).unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, vec!["system:masters"]);
        assert!(user.uid.is_empty());
        // The credential id is the certificate's SHA-256 fingerprint.
        let fp: String = ring::digest::digest(&ring::digest::SHA256, cert.der())
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            user.extra["authentication.kubernetes.io/credential-id"],
            vec![format!("X509SHA256={fp}")]
        );
    }

    #[test]
    fn uid_attribute() {
        let (ca, ca_key) = ca();
        let uid_type = DnType::CustomDnType(vec![1, 3, 6, 1, 4, 1, 57683, 2]);
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params.distinguished_name.push(DnType::CommonName, "alice");
        params
            .distinguished_name
            .push(uid_type.clone(), "alice-uid");
        let key = KeyPair::generate().unwrap();
        let cert = params.clone().signed_by(&key, &ca, &ca_key).unwrap();
        assert_eq!(user_from_client_cert(cert.der()).unwrap().uid, "alice-uid");
        params.distinguished_name.push(uid_type, "");
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        assert_eq!(
            user_from_client_cert(cert.der()).unwrap_err().message(),
            "UID cannot be an empty string"
        );
    }

    #[test]
    fn no_common_name_is_not_recognised() {
        let (ca, ca_key) = ca();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::OrganizationName, "dev");
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        assert_eq!(
            user_from_client_cert(cert.der()),
            Err(AuthError::NotRecognized)
        );
        assert!(matches!(
            user_from_client_cert(b"garbage"),
            Err(AuthError::Invalid(_))
        ));
    }

    #[test]
    fn issued_certificate_names_user_and_groups_in_order() {
        let (ca, ca_key) = ca();
        let signer = SigningKey::from_pem(&ca_key.serialize_pem()).unwrap();
        let issued = issue_client_cert(
            ca.der(),
            &signer,
            "bob",
            &["dev", "system:masters", "ops"],
            1_700_000_000,
            2_700_000_000,
        )
        .unwrap();
        assert!(issued.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let user = user_from_client_cert(&issued.cert_der).unwrap();
        assert_eq!(user.name, "bob");
        assert_eq!(user.groups, vec!["dev", "system:masters", "ops"]);
        // The key is usable.
        assert!(SigningKey::from_pem(&issued.key_pem).is_ok());
    }

    #[test]
    fn client_ca_verification() {
        let (other, other_key) = ca();
        let (ca, ca_key) = ca();
        let signer = SigningKey::from_pem(&ca_key.serialize_pem()).unwrap();
        let other_signer = SigningKey::from_pem(&other_key.serialize_pem()).unwrap();
        let now = 1_800_000_000;
        let good = issue_client_cert(ca.der(), &signer, "bob", &[], now - 60, now + 60).unwrap();
        let foreign =
            issue_client_cert(other.der(), &other_signer, "eve", &[], now - 60, now + 60).unwrap();
        let client_ca = ClientCa::from_pem(&ca.pem()).unwrap();
        client_ca.verify(&good.cert_der, &[], now).unwrap();
        assert_eq!(
            client_ca
                .verify(&foreign.cert_der, &[], now)
                .unwrap_err()
                .message(),
            "verifying certificate failed: x509: certificate signed by unknown authority"
        );
        assert_eq!(
            client_ca
                .verify(&good.cert_der, &[], now + 120)
                .unwrap_err()
                .message(),
            "verifying certificate failed: x509: certificate has expired or is not yet valid"
        );
        assert!(ClientCa::from_pem("").is_err());
    }

    #[test]
    fn issued_certificate_verifies_as_rustls_verifies_clients() {
        use rustls_pki_types::{CertificateDer, UnixTime};
        let (ca, ca_key) = ca();
        let signer = SigningKey::from_pem(&ca_key.serialize_pem()).unwrap();
        let now = 1_800_000_000;
        let issued =
            issue_client_cert(ca.der(), &signer, "bob", &["dev"], now - 60, now + 3600).unwrap();
        let ca_der = CertificateDer::from(ca.der().to_vec());
        let anchor = webpki::anchor_from_trusted_cert(&ca_der).unwrap();
        let leaf = CertificateDer::from(issued.cert_der.clone());
        let ee = webpki::EndEntityCert::try_from(&leaf).unwrap();
        ee.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &[anchor],
            &[],
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(now as u64)),
            webpki::KeyUsage::client_auth(),
            None,
            None,
        )
        .unwrap();
        // Expired certificates do not verify.
        let late = UnixTime::since_unix_epoch(std::time::Duration::from_secs(now as u64 + 7200));
        let anchor = webpki::anchor_from_trusted_cert(&ca_der).unwrap();
        assert!(ee
            .verify_for_usage(
                webpki::ALL_VERIFICATION_ALGS,
                &[anchor],
                &[],
                late,
                webpki::KeyUsage::client_auth(),
                None,
                None,
            )
            .is_err());
    }
}
