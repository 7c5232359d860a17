//! `serviceaccounts/token` (TokenRequest, `kubectl create token`): a ServiceAccount token
//! signed with the server's key, as kube-apiserver's TokenREST issues it (crest-auth's
//! `TokenRequest` for defaults, validation, binding checks and the answer).

use super::{lookup, Authn};
use crate::registry::Registry;
use crest_api::{meta, ApiError, GroupResource};
use crest_auth::serviceaccount::{BoundObject, ObjectRef};
use crest_auth::tokenrequest::{BoundKind, TokenRequest};
use serde_json::Value;

impl Authn {
    /// Issues a token for ServiceAccount `name` in `namespace` from a TokenRequest `body`;
    /// returns the answer (201) and its warnings.
    pub(crate) fn token_request(
        &self,
        registry: &Registry,
        namespace: &str,
        name: &str,
        body: &Value,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let Some(signer) = &self.signer else {
            return Err(ApiError::not_found(
                &GroupResource::new("", "serviceaccounts"),
                name,
            ));
        };
        let mut req = TokenRequest::decode(body, namespace, name)?;
        let sa = lookup(registry, "serviceaccounts", Some(namespace), name)
            .ok_or_else(|| ApiError::not_found(&GroupResource::new("", "serviceaccounts"), name))?;
        req.validate(&self.token_config)?;
        let bound = match req.bound_object()? {
            None => None,
            Some((kind, r)) => {
                let resource = match kind {
                    BoundKind::Pod => "pods",
                    BoundKind::Secret => "secrets",
                    BoundKind::Node => "nodes",
                };
                let ns = (kind != BoundKind::Node).then_some(namespace);
                let obj = lookup(registry, resource, ns, &r.name).ok_or_else(|| {
                    ApiError::not_found(&GroupResource::new("", resource), &r.name)
                })?;
                let uid = meta::meta_str(&obj, "uid").to_string();
                req.check_bound_uid(&uid)?;
                let this = ObjectRef {
                    name: r.name.clone(),
                    uid,
                };
                Some(match kind {
                    BoundKind::Pod => BoundObject::Pod {
                        pod: this,
                        node: None,
                    },
                    BoundKind::Secret => BoundObject::Secret(this),
                    BoundKind::Node => BoundObject::Node(this),
                })
            }
        };
        let issued = req.issue(
            &self.token_config,
            meta::meta_str(&sa, "uid"),
            bound,
            chrono::Utc::now().timestamp(),
            &crest_auth::serviceaccount::new_jti(),
            signer,
        )?;
        Ok((issued.body, issued.warnings))
    }
}
