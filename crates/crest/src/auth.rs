//! The credentials `crest serve` keeps in DATA_DIR/pki (created on first start, owner-only,
//! reused after): the admin's bearer token (the kubeconfig carries it; it authenticates as
//! `crest-admin` in `system:masters`) and the key ServiceAccount tokens are signed with; plus
//! kube-apiserver's `--token-auth-file` users.

use crest_api::UserInfo;
use crest_auth::authenticator::Authenticator;
use crest_auth::keys::SigningKey;
use crest_auth::serviceaccount::Verifier;
use crest_auth::tokenfile::TokenFile;
use std::path::Path;

const ADMIN_TOKEN: &str = "admin.token";
const SA_KEY: &str = "sa.key";
/// The issuer of ServiceAccount tokens, kube-apiserver's usual `--service-account-issuer`.
pub(crate) const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// What authentication needs at startup.
pub(crate) struct Credentials {
    pub authenticator: Authenticator,
    pub admin_token: String,
    /// Signs the ServiceAccount tokens the server issues.
    pub signer: SigningKey,
}

/// Reads (or creates) the pki dir's credentials and builds the authenticator.
pub(crate) fn prepare(
    pki: &Path,
    token_auth_file: Option<&Path>,
    anonymous: bool,
) -> Result<Credentials, String> {
    let admin_token = crate::pki::read_or_create(&pki.join(ADMIN_TOKEN), || {
        crest_auth::tokenfile::random_token().map(String::into_bytes)
    })?
    .trim()
    .to_string();
    let key_path = pki.join(SA_KEY);
    let key_pem = crate::pki::read_or_create(&key_path, || {
        SigningKey::generate()
            .map(|k| k.to_pem().into_bytes())
            .map_err(|e| e.message().to_string())
    })?;
    let key = SigningKey::from_pem(&key_pem)
        .map_err(|e| format!("{}: {}", key_path.display(), e.message()))?;
    let mut tokens = match token_auth_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            TokenFile::parse(&text, &path.display().to_string())?
        }
        None => TokenFile::default(),
    };
    tokens.insert(
        admin_token.clone(),
        UserInfo {
            name: "crest-admin".into(),
            groups: vec![crest_api::names::SYSTEM_MASTERS.into()],
            ..Default::default()
        },
    );
    let mut authenticator = Authenticator::new(Verifier {
        issuers: vec![ISSUER.into()],
        keys: vec![key.public_key().clone()],
        api_audiences: vec![ISSUER.into()],
    });
    authenticator.token_file = Some(tokens);
    authenticator.anonymous = anonymous;
    Ok(Credentials {
        authenticator,
        admin_token,
        signer: key,
    })
}
