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
    data_dir: &Path,
    token_auth_file: Option<&Path>,
    anonymous: bool,
) -> Result<Credentials, String> {
    let pki = data_dir.join("pki");
    std::fs::create_dir_all(&pki).map_err(|e| format!("cannot create {}: {e}", pki.display()))?;
    let admin_token = match std::fs::read_to_string(pki.join(ADMIN_TOKEN)) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => {
            let t = crest_auth::tokenfile::random_token()?;
            write_private(&pki.join(ADMIN_TOKEN), t.as_bytes())?;
            t
        }
    };
    let key = match std::fs::read_to_string(pki.join(SA_KEY)) {
        Ok(pem) => SigningKey::from_pem(&pem)
            .map_err(|e| format!("{}: {}", pki.join(SA_KEY).display(), e.message()))?,
        Err(_) => {
            let k = SigningKey::generate().map_err(|e| e.message().to_string())?;
            write_private(&pki.join(SA_KEY), k.to_pem().as_bytes())?;
            k
        }
    };
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
            groups: vec![crest_api::user::names::SYSTEM_MASTERS.into()],
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

/// Writes a file only its owner can read (0600), atomically.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let write = || -> std::io::Result<()> {
        std::io::Write::write_all(&mut options.open(&tmp)?, bytes)?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))
}
