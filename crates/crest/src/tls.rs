//! HTTPS (the default): a private certificate authority kept in the data dir and a serving certificate
//! issued from it at every start, so kubeconfigs written earlier stay valid and the serving
//! certificate always names the current listen address. The kubeconfig gets an admin client
//! certificate from the same CA.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// What serving HTTPS needs: the server's configuration and the CA certificate clients trust.
pub(crate) struct Tls {
    pub config: Arc<rustls::ServerConfig>,
    /// PEM of the CA that issued the serving certificate (kubeconfig certificate-authority-data).
    pub ca_pem: String,
    /// An admin client certificate and key (PEM) from the same CA for the kubeconfig
    /// (`crest-admin` in `system:masters`). The server asks clients for certificates; the
    /// authenticator verifies them against the CA; a client without one authenticates otherwise.
    pub client_cert_pem: String,
    pub client_key_pem: String,
}

const CA_CERT: &str = "ca.crt";
const CA_KEY: &str = "ca.key";

/// Loads the CA of the pki dir (creating it on first use; replicas sharing the dir share it) and
/// issues a serving certificate for localhost, 127.0.0.1, ::1 and the listen address.
pub(crate) fn prepare(pki: &Path, listen: SocketAddr) -> Result<Tls, String> {
    let key_path = pki.join(CA_KEY);
    let key_pem = crate::pki::read_or_create(&key_path, || {
        KeyPair::generate()
            .map(|k| k.serialize_pem().into_bytes())
            .map_err(|e| format!("cannot generate a key: {e}"))
    })?;
    let ca_key = KeyPair::from_pem(&key_pem)
        .map_err(|e| format!("cannot read the CA key {}: {e}", key_path.display()))?;
    // The CA certificate is rebuilt from fixed parameters and the kept key: its subject and key
    // identifier are the same at every start, so certificates it issues verify against the
    // `ca.crt` clients already trust.
    let ca_cert = ca_params()
        .self_signed(&ca_key)
        .map_err(|e| format!("cannot build the CA certificate: {e}"))?;
    let ca_pem = crate::pki::read_or_create_mode(&pki.join(CA_CERT), 0o644, || {
        Ok(ca_cert.pem().into_bytes())
    })?;

    let mut params = CertificateParams::new(serving_names(listen.ip()))
        .map_err(|e| format!("cannot build the serving certificate: {e}"))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "crest-serving");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let key = KeyPair::generate().map_err(|e| format!("cannot generate a key: {e}"))?;
    let cert = params
        .signed_by(&key, &ca_cert, &ca_key)
        .map_err(|e| format!("cannot sign the serving certificate: {e}"))?;

    let mut client = CertificateParams::new(Vec::<String>::new())
        .map_err(|e| format!("cannot build the client certificate: {e}"))?;
    client
        .distinguished_name
        .push(DnType::CommonName, "crest-admin");
    client
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    client.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let client_key = KeyPair::generate().map_err(|e| format!("cannot generate a key: {e}"))?;
    let client_cert = client
        .signed_by(&client_key, &ca_cert, &ca_key)
        .map_err(|e| format!("cannot sign the client certificate: {e}"))?;

    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    Ok(Tls {
        config: server_config(chain, key, true)?,
        ca_pem,
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
    })
}

/// Client certificates are asked for, not required (tokens and anonymous requests go on), and
/// taken whoever issued them, as Go's `tls.RequestClientCert` in kube-apiserver: the x509
/// authenticator (crest-auth's `ClientCa`) verifies the chain to the CA per request, so a
/// certificate from another CA is a 401 `Unauthorized`, not a failed handshake. The handshake
/// still proves the client holds the certificate's key (its CertificateVerify signature),
/// checked against the key of any certificate version Go parses (version 1 included).
#[derive(Debug)]
struct RequestClientCert {
    schemes: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl rustls::server::danger::ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        Ok(rustls::server::danger::ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        // rustls's verify_tls12_signature, with the key read by a parser that takes version 1
        // certificates: every algorithm of the scheme is tried, as there.
        let algs = self
            .schemes
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .map(|(_, algs)| *algs)
            .ok_or(rustls::PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme)?;
        let spki = client_spki(cert)?;
        let key = webpki::RawPublicKeyEntity::try_from(&spki).map_err(|_| bad_encoding())?;
        let mut mismatch = None;
        for alg in algs {
            match key.verify_signature(*alg, message, dss.signature()) {
                Ok(()) => return Ok(rustls::client::danger::HandshakeSignatureValid::assertion()),
                Err(webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(cx)) => {
                    mismatch = Some(cx);
                }
                Err(_) => return Err(rustls::CertificateError::BadSignature.into()),
            }
        }
        Err(match mismatch {
            Some(cx) => {
                rustls::CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext {
                    signature_algorithm_id: cx.signature_algorithm_id,
                    public_key_algorithm_id: cx.public_key_algorithm_id,
                }
                .into()
            }
            None => rustls::PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme.into(),
        })
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let spki = client_spki(cert)?;
        rustls::crypto::verify_tls13_signature_with_raw_key(message, &spki, dss, &self.schemes)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.schemes.supported_schemes()
    }
}

/// The client certificate's SubjectPublicKeyInfo, read by crest-auth's parser, which takes
/// version 1 certificates as Go does (the README's `openssl x509 -req` makes them; webpki,
/// behind rustls's `verify_tls1x_signature`, refuses them, which failed the handshake).
fn client_spki(
    cert: &CertificateDer<'_>,
) -> Result<rustls::pki_types::SubjectPublicKeyInfoDer<'static>, rustls::Error> {
    crest_auth::x509::subject_public_key_info(cert.as_ref())
        .map(rustls::pki_types::SubjectPublicKeyInfoDer::from)
        .map_err(|_| bad_encoding())
}

fn bad_encoding() -> rustls::Error {
    rustls::CertificateError::BadEncoding.into()
}

fn client_verifier() -> Arc<dyn rustls::server::danger::ClientCertVerifier> {
    Arc::new(RequestClientCert {
        schemes: rustls::crypto::ring::default_provider().signature_verification_algorithms,
    })
}

fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "crest-ca");
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = rcgen::date_time_ymd(2024, 1, 1);
    params.not_after = rcgen::date_time_ymd(2124, 1, 1);
    params
}

/// A self-signed serving certificate and its key (PEM), for localhost, 127.0.0.1, ::1 and
/// `bind` (unless unspecified): what kube-apiserver generates into an empty `--cert-dir`.
pub(crate) fn self_signed(bind: std::net::IpAddr) -> Result<(String, String), String> {
    let mut params = CertificateParams::new(serving_names(bind))
        .map_err(|e| format!("cannot build the serving certificate: {e}"))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost@crest");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().map_err(|e| format!("cannot generate a key: {e}"))?;
    let cert = params
        .self_signed(&key)
        .map_err(|e| format!("cannot sign the serving certificate: {e}"))?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// A server configuration serving `cert_pem` (a chain) with `key_pem`; with `client_auth`,
/// client certificates are asked for (and verified by the authenticator), else not asked for.
pub(crate) fn from_pems(
    cert_pem: &[u8],
    key_pem: &[u8],
    client_auth: bool,
) -> Result<Arc<rustls::ServerConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the serving certificate: {e}"))?;
    let key =
        PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("the serving key: {e}"))?;
    server_config(chain, key, client_auth)
}

/// The names a serving certificate is issued for: localhost, 127.0.0.1, ::1 and `ip` unless it
/// is unspecified or loopback.
fn serving_names(ip: std::net::IpAddr) -> Vec<String> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !ip.is_unspecified() && !ip.is_loopback() {
        names.push(ip.to_string());
    }
    names
}

/// The server configuration serving `chain` with `key`: with `client_auth`, client
/// certificates are asked for (taken whoever issued them; the authenticator verifies them),
/// else not asked for. As kube-apiserver: h2 first, so Go and kubectl multiplex every request
/// over one connection.
fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    client_auth: bool,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?;
    let builder = if client_auth {
        builder.with_client_cert_verifier(client_verifier())
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| format!("TLS configuration: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
