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
///
/// Verification follows Go's `Certificate.Verify` with `KeyUsages: [ExtKeyUsageClientAuth]`
/// (k8s.io/apiserver `x509.DefaultVerifyOptions`): a certificate without an extended key usage
/// is good for any usage, one with `anyExtendedKeyUsage` or `clientAuth` for client
/// authentication, any other list is an incompatible usage (for the leaf and each CA above it).
/// Version 1 (and 2) certificates, which carry no extensions (`openssl x509 -req` without
/// `-extfile` makes them), are leaves as Go takes them; webpki refuses them, so their chain is
/// checked here with x509-parser and webpki's signature algorithms (see [`ClientCa::verify`]).
#[derive(Clone, Debug)]
pub struct ClientCa {
    anchors: Vec<rustls_pki_types::TrustAnchor<'static>>,
    /// The CA certificates as given, for the chains of version 1 leaves (Go checks the root's
    /// validity, basic constraints, key usage and extended key usage, which a webpki trust
    /// anchor does not keep).
    roots: Vec<Vec<u8>>,
}

/// `anyExtendedKeyUsage` (RFC 5280 4.2.1.12) and `id-kp-clientAuth`.
const EKU_ANY: &[usize] = &[2, 5, 29, 37, 0];

/// Go's extended key usage rule for `KeyUsages: [ExtKeyUsageClientAuth]` (crypto/x509
/// `isValid`): no EKU extension (or an empty one) is any usage; otherwise `clientAuth` or
/// `anyExtendedKeyUsage` must be listed. webpki's own `KeyUsage::client_auth()` refuses
/// `anyExtendedKeyUsage`.
struct GoClientAuthUsage;

impl webpki::ExtendedKeyUsageValidator for GoClientAuthUsage {
    fn validate(&self, iter: webpki::KeyPurposeIdIter<'_, '_>) -> Result<(), webpki::Error> {
        let mut present = Vec::new();
        for id in iter {
            let oid = id?.to_decoded_oid();
            if oid == webpki::KeyUsage::CLIENT_AUTH_REPR || oid == EKU_ANY {
                return Ok(());
            }
            present.push(oid);
        }
        if present.is_empty() {
            return Ok(());
        }
        Err(webpki::Error::RequiredEkuNotFoundContext(
            webpki::RequiredEkuNotFoundContext {
                required: webpki::KeyUsage::client_auth(),
                present,
            },
        ))
    }
}

/// Go's messages for the verification failures (crypto/x509's errors; kube-apiserver logs
/// them, the client sees 401 `Unauthorized`).
const UNKNOWN_AUTHORITY: &str = "x509: certificate signed by unknown authority";
const EXPIRED: &str = "x509: certificate has expired or is not yet valid";
const INCOMPATIBLE_USAGE: &str = "x509: certificate specifies an incompatible key usage";

/// Where a certificate sits in a chain being built (crypto/x509's certType).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Leaf,
    Intermediate,
    Root,
}

/// The most signature checks one verification makes (crypto/x509's maxChainSignatureChecks).
const MAX_SIGNATURE_CHECKS: usize = 100;

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
        Ok(ClientCa {
            anchors,
            roots: ders.iter().map(|d| d.to_vec()).collect(),
        })
    }

    /// Verifies a client certificate (and its intermediates) at `now` (unix seconds) for client
    /// authentication, as Go's `Certificate.Verify` with `KeyUsages: [ExtKeyUsageClientAuth]`.
    /// Version 3 leaves go through webpki (chain building, name constraints, path lengths) with
    /// Go's extended key usage rule; version 1 and 2 leaves, which webpki refuses, through
    /// [`verify_legacy_leaf`], Go's chain building for a leaf without extensions.
    pub fn verify(&self, leaf: &[u8], intermediates: &[&[u8]], now: i64) -> Result<(), AuthError> {
        let failed = |why: &str| AuthError::invalid(format!("verifying certificate failed: {why}"));
        // Only what x509-parser reads as version 1 or 2 leaves the webpki path (which also
        // judges whatever x509-parser cannot read, as before).
        if let Ok((_, parsed)) = x509_parser::parse_x509_certificate(leaf) {
            if parsed.version() != x509_parser::x509::X509Version::V3 {
                return verify_legacy_leaf(&parsed, &self.roots, intermediates, now)
                    .map_err(|why| failed(&why));
            }
        }
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
            GoClientAuthUsage,
            None,
            None,
        )
        .map(|_| ())
        .map_err(|e| {
            let why = match e {
                // Another CA of the same name (every Crest CA is `crest-ca`) fails on the
                // signature; Go reports both as an unknown authority.
                webpki::Error::UnknownIssuer | webpki::Error::InvalidSignatureForPublicKey => {
                    UNKNOWN_AUTHORITY.to_string()
                }
                webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => {
                    EXPIRED.to_string()
                }
                webpki::Error::RequiredEkuNotFoundContext(_) => INCOMPATIBLE_USAGE.to_string(),
                other => format!("x509: {other}"),
            };
            failed(&why)
        })
    }
}

/// Go's `Certificate.Verify` for a version 1 or 2 leaf (no extensions, so no SANs, no EKU):
/// the leaf's validity, then the chains from it through the presented intermediates to a CA
/// of the bundle (crypto/x509 `buildChains`, `CheckSignatureFrom` and `isValid`): a parent
/// whose subject is the child's issuer (byte for byte) and whose key verifies the child's
/// signature; a version 3 parent must be a CA (basic constraints) and, with a key usage, may
/// sign certificates; every CA must be valid at `now`, carry no critical extension Go does not
/// handle, allow client authentication by its EKU (as the leaf would) and respect its path
/// length; an intermediate must have basic constraints `CA:true`. Name constraints: Go checks
/// them against the SANs of the leaf (a v1 leaf has none) and of the constrained CA itself; a
/// CA with both is refused here rather than judged (a certificate no one issues in practice).
///
/// The structures are read with x509-parser, the signatures verified with webpki's algorithms
/// (the same set, so no SHA-1, as for version 3 chains).
fn verify_legacy_leaf(
    leaf: &x509_parser::certificate::X509Certificate<'_>,
    roots: &[Vec<u8>],
    intermediates: &[&[u8]],
    now: i64,
) -> Result<(), String> {
    let root_refs: Vec<&[u8]> = roots.iter().map(|r| r.as_slice()).collect();
    let roots = parse_all(&root_refs);
    let intermediates = parse_all(intermediates);
    is_valid(leaf, Role::Leaf, &[], now)?;
    // Go: a leaf that is itself in the root pool is a chain of one.
    if roots.iter().any(|r| r.as_ref() == leaf.as_ref()) {
        return Ok(());
    }
    let mut checks = 0;
    let mut chain = vec![leaf];
    build_chains(&mut chain, &roots, &intermediates, now, &mut checks)
}

/// The certificates that parse; one that does not is no candidate (Go fails the whole
/// presented chain earlier, in the TLS layer; both end unauthenticated).
fn parse_all<'a>(ders: &[&'a [u8]]) -> Vec<x509_parser::certificate::X509Certificate<'a>> {
    ders.iter()
        .filter_map(|d| x509_parser::parse_x509_certificate(d).ok().map(|(_, c)| c))
        .collect()
}

/// One step of Go's `buildChains`: `Ok` once a chain reaches a root.
fn build_chains<'c>(
    chain: &mut Vec<&'c x509_parser::certificate::X509Certificate<'c>>,
    roots: &'c [x509_parser::certificate::X509Certificate<'c>],
    intermediates: &'c [x509_parser::certificate::X509Certificate<'c>],
    now: i64,
    checks: &mut usize,
) -> Result<(), String> {
    let Some(&child) = chain.last() else {
        return Err(UNKNOWN_AUTHORITY.to_string());
    };
    let mut last_err = None;
    let candidates = roots
        .iter()
        .map(|c| (Role::Root, c))
        .chain(intermediates.iter().map(|c| (Role::Intermediate, c)));
    for (role, candidate) in candidates {
        if candidate.subject().as_raw() != child.issuer().as_raw() {
            continue;
        }
        // Go's alreadyInChain (subject and key; these CAs carry no SAN worth comparing).
        if chain.iter().any(|c| {
            c.subject().as_raw() == candidate.subject().as_raw()
                && c.public_key().raw == candidate.public_key().raw
        }) {
            continue;
        }
        *checks += 1;
        if *checks > MAX_SIGNATURE_CHECKS {
            return Err(
                "x509: signature check attempts limit reached while verifying certificate chain"
                    .to_string(),
            );
        }
        if check_signature_from(child, candidate).is_err() {
            continue;
        }
        match is_valid(candidate, role, chain, now) {
            Err(e) => last_err = Some(e),
            Ok(()) if role == Role::Root => return Ok(()),
            Ok(()) => {
                chain.push(candidate);
                let found = build_chains(chain, roots, intermediates, now, checks);
                chain.pop();
                match found {
                    Ok(()) => return Ok(()),
                    Err(e) => last_err = Some(e),
                }
            }
        }
    }
    Err(last_err.unwrap_or_else(|| UNKNOWN_AUTHORITY.to_string()))
}

/// Go's `CheckSignatureFrom`: whether `parent` may sign certificates and its key verifies
/// `child`'s signature.
fn check_signature_from(
    child: &x509_parser::certificate::X509Certificate<'_>,
    parent: &x509_parser::certificate::X509Certificate<'_>,
) -> Result<(), ()> {
    let constraints = parent.basic_constraints().map_err(|_| ())?;
    let v3 = parent.version() == x509_parser::x509::X509Version::V3;
    match constraints {
        None if v3 => return Err(()),
        Some(bc) if !bc.value.ca => return Err(()),
        _ => {}
    }
    if let Some(ku) = parent.key_usage().map_err(|_| ())? {
        if ku.value.flags != 0 && !ku.value.key_cert_sign() {
            return Err(());
        }
    }
    // The inner and outer signature algorithms must agree (Go's parser refuses otherwise).
    if child.signature_algorithm != child.tbs_certificate.signature {
        return Err(());
    }
    let alg_id = algorithm_identifier(&child.signature_algorithm).ok_or(())?;
    let spki = rustls_pki_types::SubjectPublicKeyInfoDer::from(parent.public_key().raw);
    let key = webpki::RawPublicKeyEntity::try_from(&spki).map_err(|_| ())?;
    let message = child.tbs_certificate.as_ref();
    let signature = child.signature_value.data.as_ref();
    for alg in webpki::ALL_VERIFICATION_ALGS {
        if alg.signature_alg_id().as_ref() != alg_id.as_slice() {
            continue;
        }
        if key.verify_signature(*alg, message, signature).is_ok() {
            return Ok(());
        }
    }
    Err(())
}

/// The DER contents of an AlgorithmIdentifier (its OID and parameters), as webpki's
/// algorithms name themselves.
fn algorithm_identifier(alg: &x509_parser::x509::AlgorithmIdentifier<'_>) -> Option<Vec<u8>> {
    use x509_parser::asn1_rs::ToDer;
    let mut out = alg.algorithm.to_der_vec().ok()?;
    if let Some(params) = &alg.parameters {
        out.extend(params.to_der_vec().ok()?);
    }
    Some(out)
}

/// Go's `isValid` for a certificate joining `chain` as `role`.
fn is_valid(
    cert: &x509_parser::certificate::X509Certificate<'_>,
    role: Role,
    chain: &[&x509_parser::certificate::X509Certificate<'_>],
    now: i64,
) -> Result<(), String> {
    use x509_parser::extensions::ParsedExtension;
    use x509_parser::oid_registry as oids;
    // The extensions Go's parser handles; any other critical one is unhandled.
    let handled = [
        oids::OID_X509_EXT_KEY_USAGE,
        oids::OID_X509_EXT_BASIC_CONSTRAINTS,
        oids::OID_X509_EXT_SUBJECT_ALT_NAME,
        oids::OID_X509_EXT_NAME_CONSTRAINTS,
        oids::OID_X509_EXT_CRL_DISTRIBUTION_POINTS,
        oids::OID_X509_EXT_AUTHORITY_KEY_IDENTIFIER,
        oids::OID_X509_EXT_EXTENDED_KEY_USAGE,
        oids::OID_X509_EXT_SUBJECT_KEY_IDENTIFIER,
        oids::OID_X509_EXT_CERTIFICATE_POLICIES,
        oids::OID_PKIX_AUTHORITY_INFO_ACCESS,
    ];
    if cert
        .extensions()
        .iter()
        .any(|e| e.critical && !handled.contains(&e.oid))
    {
        return Err("x509: unhandled critical extension".to_string());
    }
    let validity = cert.validity();
    if now < validity.not_before.timestamp() || now > validity.not_after.timestamp() {
        return Err(EXPIRED.to_string());
    }
    let malformed = |e: x509_parser::error::X509Error| format!("x509: malformed certificate: {e}");
    if let Some(eku) = cert.extended_key_usage().map_err(malformed)? {
        let eku = eku.value;
        let listed = eku.any
            || eku.server_auth
            || eku.client_auth
            || eku.code_signing
            || eku.email_protection
            || eku.time_stamping
            || eku.ocsp_signing
            || !eku.other.is_empty();
        if listed && !eku.any && !eku.client_auth {
            return Err(INCOMPATIBLE_USAGE.to_string());
        }
    }
    if role != Role::Leaf {
        let constrained = cert
            .extensions()
            .iter()
            .any(|e| matches!(e.parsed_extension(), ParsedExtension::NameConstraints(_)));
        if constrained
            && cert
                .subject_alternative_name()
                .map_err(malformed)?
                .is_some()
        {
            return Err(
                "x509: a root or intermediate certificate is not authorized to sign for this name"
                    .to_string(),
            );
        }
    }
    let constraints = cert.basic_constraints().map_err(malformed)?;
    if role == Role::Intermediate && !constraints.as_ref().is_some_and(|bc| bc.value.ca) {
        return Err("x509: certificate is not authorized to sign other certificates".to_string());
    }
    if let Some(max) = constraints.and_then(|bc| bc.value.path_len_constraint) {
        if chain.len().saturating_sub(1) > max as usize {
            return Err("x509: too many intermediates for path length constraint".to_string());
        }
    }
    Ok(())
}

/// The SubjectPublicKeyInfo (DER) of a certificate of any version, for checking the TLS
/// handshake's CertificateVerify signature of a client certificate webpki would not parse
/// (version 1).
pub fn subject_public_key_info(cert_der: &[u8]) -> Result<Vec<u8>, AuthError> {
    let (_, cert) = x509_parser::parse_x509_certificate(cert_der)
        .map_err(|e| AuthError::invalid(format!("x509: malformed certificate: {e}")))?;
    Ok(cert.public_key().raw.to_vec())
}

/// A certificate's validity period, as unix seconds (notBefore, notAfter).
pub fn validity(cert_der: &[u8]) -> Result<(i64, i64), AuthError> {
    let (_, cert) = x509_parser::parse_x509_certificate(cert_der)
        .map_err(|e| AuthError::invalid(format!("x509: malformed certificate: {e}")))?;
    let v = cert.validity();
    Ok((v.not_before.timestamp(), v.not_after.timestamp()))
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

    /// openssl, as the README's recipe uses it, in a scratch directory: `openssl x509 -req`
    /// without `-extfile` makes a version 1 certificate; with one, a version 3 certificate
    /// with just those extensions.
    struct Openssl {
        dir: std::path::PathBuf,
    }

    impl Openssl {
        fn new(name: &str) -> Openssl {
            let dir = std::env::temp_dir().join(format!(
                "crest-auth-x509-{name}-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Openssl { dir }
        }

        fn run(&self, args: &[&str]) {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(&self.dir)
                .output()
                .expect("openssl is required for these tests");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }

        /// A self-signed CA `name.crt` / `name.key` (version 3, CA:true).
        fn ca(&self, name: &str) -> String {
            self.run(&[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-subj",
                "/CN=crest-ca",
                "-days",
                "3650",
                "-out",
                &format!("{name}.crt"),
            ]);
            std::fs::read_to_string(self.dir.join(format!("{name}.crt"))).unwrap()
        }

        /// A leaf `name` for `/CN=alice/O=dev` signed by the CA `ca`, with the extension lines
        /// given (none: version 1), valid for `days` from now. Returns the DER.
        fn leaf(&self, ca: &str, name: &str, extensions: Option<&str>, days: &str) -> Vec<u8> {
            self.run(&[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-subj",
                "/CN=alice/O=dev",
                "-out",
                &format!("{name}.csr"),
            ]);
            let csr = format!("{name}.csr");
            let cacrt = format!("{ca}.crt");
            let cakey = format!("{ca}.key");
            let out = format!("{name}.crt");
            let mut args = vec![
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &cacrt,
                "-CAkey",
                &cakey,
                "-CAcreateserial",
                "-days",
                days,
                "-out",
                &out,
            ];
            let ext_file = format!("{name}.ext");
            if let Some(ext) = extensions {
                std::fs::write(self.dir.join(&ext_file), format!("{ext}\n")).unwrap();
                args.extend(["-extfile", &ext_file]);
            }
            self.run(&args);
            let text = std::fs::read_to_string(self.dir.join(&out)).unwrap();
            pem::parse(text).unwrap().contents().to_vec()
        }
    }

    impl Drop for Openssl {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    fn version_of(der: &[u8]) -> x509_parser::x509::X509Version {
        x509_parser::parse_x509_certificate(der)
            .unwrap()
            .1
            .version()
    }

    #[test]
    fn version_1_leaves_verify_as_go_verifies_them() {
        let ssl = Openssl::new("v1");
        let ca_pem = ssl.ca("ca");
        ssl.ca("other");
        let client_ca = ClientCa::from_pem(&ca_pem).unwrap();
        let v1 = ssl.leaf("ca", "alice", None, "365");
        assert_eq!(version_of(&v1), x509_parser::x509::X509Version::V1);
        client_ca.verify(&v1, &[], now()).unwrap();
        let user = user_from_client_cert(&v1).unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, vec!["dev"]);
        // The TLS layer reads its key.
        assert!(subject_public_key_info(&v1).is_ok());

        // Another CA of the same name: unknown authority.
        let foreign = ssl.leaf("other", "eve", None, "365");
        assert_eq!(
            client_ca
                .verify(&foreign, &[], now())
                .unwrap_err()
                .message(),
            "verifying certificate failed: x509: certificate signed by unknown authority"
        );
        // Expired (and not yet valid).
        let expired =
            "verifying certificate failed: x509: certificate has expired or is not yet valid";
        assert_eq!(
            client_ca
                .verify(&v1, &[], now() + 400 * 86400)
                .unwrap_err()
                .message(),
            expired
        );
        assert_eq!(
            client_ca
                .verify(&v1, &[], now() - 86400)
                .unwrap_err()
                .message(),
            expired
        );
        // A bad signature: the leaf with a byte of its signature flipped.
        let mut bad = v1.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x01;
        assert_eq!(
            client_ca.verify(&bad, &[], now()).unwrap_err().message(),
            "verifying certificate failed: x509: certificate signed by unknown authority"
        );
        // Garbage is malformed, not a version 1 certificate.
        assert!(client_ca.verify(b"garbage", &[], now()).is_err());
    }

    #[test]
    fn extended_key_usage_as_go_checks_it_for_client_auth() {
        let ssl = Openssl::new("eku");
        let client_ca = ClientCa::from_pem(&ssl.ca("ca")).unwrap();
        for (name, ext, ok) in [
            ("none", "basicConstraints=CA:FALSE", true),
            ("any", "extendedKeyUsage=anyExtendedKeyUsage", true),
            ("client", "extendedKeyUsage=clientAuth", true),
            ("both", "extendedKeyUsage=serverAuth,clientAuth", true),
            ("server", "extendedKeyUsage=serverAuth", false),
            ("code", "extendedKeyUsage=codeSigning", false),
            ("custom", "extendedKeyUsage=1.2.3.4", false),
        ] {
            let der = ssl.leaf("ca", name, Some(ext), "30");
            assert_eq!(
                version_of(&der),
                x509_parser::x509::X509Version::V3,
                "{name}"
            );
            let got = client_ca.verify(&der, &[], now());
            if ok {
                got.unwrap_or_else(|e| panic!("{name}: {}", e.message()));
            } else {
                assert_eq!(
                    got.unwrap_err().message(),
                    "verifying certificate failed: x509: certificate specifies an incompatible key usage",
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn version_1_leaf_through_an_intermediate() {
        let ssl = Openssl::new("mid");
        let root_pem = ssl.ca("root");
        let client_ca = ClientCa::from_pem(&root_pem).unwrap();
        // An intermediate CA signed by the root (version 3, CA:true), then a v1 leaf under it.
        let mid = ssl.leaf(
            "root",
            "mid",
            Some("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign"),
            "10",
        );
        let leaf = ssl.leaf("mid", "alice", None, "30");
        assert_eq!(version_of(&leaf), x509_parser::x509::X509Version::V1);
        client_ca.verify(&leaf, &[&mid], now()).unwrap();
        // Without the intermediate: unknown authority.
        assert!(client_ca.verify(&leaf, &[], now()).is_err());
        // A version 1 "intermediate" may not sign (Go: an intermediate needs CA:true).
        let v1_mid = ssl.leaf("root", "v1mid", None, "30");
        let under_v1 = ssl.leaf("v1mid", "carol", None, "30");
        assert_eq!(
            client_ca.verify(&under_v1, &[&v1_mid], now()).unwrap_err().message(),
            "verifying certificate failed: x509: certificate is not authorized to sign other certificates"
        );
        // The intermediate has expired (the leaf not yet).
        assert_eq!(
            client_ca
                .verify(&leaf, &[&mid], now() + 20 * 86400)
                .unwrap_err()
                .message(),
            "verifying certificate failed: x509: certificate has expired or is not yet valid"
        );
        // A serverAuth-only intermediate refuses client authentication below it.
        let server_mid = ssl.leaf(
            "root",
            "smid",
            Some("basicConstraints=critical,CA:TRUE\nextendedKeyUsage=serverAuth"),
            "30",
        );
        let below = ssl.leaf("smid", "bob", None, "30");
        assert_eq!(
            client_ca
                .verify(&below, &[&server_mid], now())
                .unwrap_err()
                .message(),
            "verifying certificate failed: x509: certificate specifies an incompatible key usage"
        );
    }
}
