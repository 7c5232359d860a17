//! Authorization of every request, as k8s.io/apiserver's authorization and impersonation
//! filters: the request's attributes (`RequestInfoFactory`: verb, namespace, group, resource,
//! subresource, name, or a non-resource path), asked of the RBAC index the store keeps
//! (`crest_rbac`: `system:masters`, then RBAC); anything not allowed is a 403 with upstream's
//! message. Impersonation headers are checked here too (verb `impersonate`), before the
//! request is authorized as the impersonated user.
//!
//! Sits between `http` (which calls it per request, after authentication) and `registry`
//! (whose RBAC index it reads, and which it asks to catch up before refusing, so a request
//! made right after the write that grants it is allowed).

pub(crate) mod review;

use crate::registry::options::Query;
use crate::registry::Registry;
use crest_api::{ApiError, UserInfo};
use crest_rbac::{Attributes, Decision};
use std::borrow::Cow;

/// `RequestInfo`: what a request asks to do, for the authorizer. Borrowed from the request's
/// path (segments without escapes are not copied).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RequestInfo<'a> {
    pub resource_request: bool,
    pub verb: Cow<'a, str>,
    pub namespace: Cow<'a, str>,
    pub api_group: Cow<'a, str>,
    pub api_version: Cow<'a, str>,
    pub resource: Cow<'a, str>,
    pub subresource: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub path: &'a str,
}

impl<'a> RequestInfo<'a> {
    pub(crate) fn attributes<'b>(&'b self, user: &'b UserInfo) -> Attributes<'b> {
        Attributes {
            user,
            verb: &self.verb,
            namespace: &self.namespace,
            api_group: &self.api_group,
            api_version: &self.api_version,
            resource: &self.resource,
            subresource: &self.subresource,
            name: &self.name,
            resource_request: self.resource_request,
            path: self.path,
        }
    }
}

/// `path.IsValidPathSegmentName`: a name that can appear as one URL path segment.
fn valid_path_segment(name: &str) -> bool {
    name != "." && name != ".." && !name.contains('/') && !name.contains('%')
}

/// The name a `fieldSelector` pins with `metadata.name=` / `==` (`RequiresExactMatch`).
pub(crate) fn selected_name(field_selector: &str) -> Option<String> {
    field_selector.split(',').find_map(|term| {
        let (k, v) = term
            .split_once("==")
            .or_else(|| term.split_once('='))
            .filter(|(k, _)| !k.ends_with('!'))?;
        (k.trim() == "metadata.name").then(|| v.trim().to_string())
    })
}

/// The verb of a non-resource request: the method, lower-cased.
fn method_verb(method: &http::Method) -> Cow<'static, str> {
    match *method {
        http::Method::GET => "get".into(),
        http::Method::HEAD => "head".into(),
        http::Method::POST => "post".into(),
        http::Method::PUT => "put".into(),
        http::Method::PATCH => "patch".into(),
        http::Method::DELETE => "delete".into(),
        http::Method::OPTIONS => "options".into(),
        ref other => other.as_str().to_ascii_lowercase().into(),
    }
}

/// The segments of a path, as upstream's `splitPath`: trimmed of `/` at both ends, none for an
/// empty path.
fn split_path(path: &str) -> impl Iterator<Item = &str> {
    let trimmed = path.trim_matches('/');
    trimmed.split('/').filter(move |_| !trimmed.is_empty())
}

/// `RequestInfoFactory.NewRequestInfo` for the `/api` and `/apis` prefixes.
pub(crate) fn request_info<'a>(
    method: &http::Method,
    path: &'a str,
    query: &Query,
) -> RequestInfo<'a> {
    let mut info = RequestInfo {
        verb: method_verb(method),
        path,
        ..Default::default()
    };
    // Split as upstream's splitPath splits `req.URL.Path`: the decoded path, so an escaped `/`
    // (`%2F`) inside a segment separates segments too.
    let parts: Vec<Cow<'a, str>> =
        match percent_encoding::percent_decode_str(path).decode_utf8_lossy() {
            Cow::Borrowed(p) => split_path(p).map(Cow::Borrowed).collect(),
            Cow::Owned(p) => split_path(&p).map(|s| Cow::Owned(s.to_string())).collect(),
        };
    if parts.len() < 3 {
        return info;
    }
    let mut rest: &[Cow<'a, str>] = &parts;
    match &*rest[0] {
        "api" => rest = &rest[1..],
        "apis" => {
            if rest.len() < 4 {
                return info;
            }
            info.api_group = rest[1].clone();
            rest = &rest[2..];
        }
        _ => return info,
    }
    info.resource_request = true;
    info.api_version = rest[0].clone();
    rest = &rest[1..];
    if matches!(&*rest[0], "proxy" | "watch") {
        if rest.len() < 2 {
            // Upstream fails to build the request info; the request is then refused.
            info.verb = "".into();
            return info;
        }
        info.verb = rest[0].clone();
        rest = &rest[1..];
    } else {
        info.verb = match *method {
            http::Method::POST => "create",
            http::Method::GET | http::Method::HEAD => "get",
            http::Method::PUT => "update",
            http::Method::PATCH => "patch",
            http::Method::DELETE => "delete",
            _ => "",
        }
        .into();
    }
    if rest[0] == "namespaces" && rest.len() > 1 {
        info.namespace = rest[1].clone();
        if rest.len() > 2 && !matches!(&*rest[2], "status" | "finalize") {
            rest = &rest[2..];
        }
    }
    // resource/name/subresource/...
    if rest.len() >= 3 && info.verb != "proxy" {
        info.subresource = rest[2].clone();
    }
    if rest.len() >= 2 {
        info.name = rest[1].clone();
    }
    info.resource = rest[0].clone();
    // A get without a name is a list or a watch, possibly of one object named by a field
    // selector.
    if info.name.is_empty() && info.verb == "get" {
        info.verb = if query.bool("watch").unwrap_or(false) {
            "watch"
        } else {
            "list"
        }
        .into();
        if let Some(name) = query.get("fieldSelector").and_then(selected_name) {
            if valid_path_segment(&name) {
                info.name = name.into();
            }
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".into();
    }
    info
}

/// Whether `user` may do what `info` describes: `Ok`, or the 403 to answer with.
pub(crate) async fn authorize(
    registry: &Registry,
    user: &UserInfo,
    info: &RequestInfo<'_>,
) -> Result<(), ApiError> {
    let a = info.attributes(user);
    let (decision, reason) = decide(registry, &a).await;
    if decision == Decision::Allow {
        return Ok(());
    }
    tracing::debug!(user = %user.name, verb = %info.verb, resource = %info.resource, path = %info.path, "forbidden");
    Err(crest_rbac::forbidden_error(&a, &reason))
}

/// The authorizer's decision on `a`. An allowed request costs one read lock and one index
/// lookup; a refusal is confirmed after the cache has caught up with every acknowledged
/// write (a binding just created grants at once), and carries the reason for the 403.
async fn decide(registry: &Registry, a: &Attributes<'_>) -> (Decision, String) {
    if registry.rbac.read().authorize_fast(a).0 == Decision::Allow {
        return (Decision::Allow, String::new());
    }
    catch_up(registry).await;
    registry.rbac.read().authorize_fast(a)
}

/// Waits for the cache (and so the RBAC index) to reflect every acknowledged write; when the
/// store does not answer, the index as it is decides.
pub(crate) async fn catch_up(registry: &Registry) {
    if let Err(e) = registry.sync().await {
        tracing::debug!(error = %e.message, "authorizing without catching up");
    }
}

/// The impersonation filter: `Ok(None)` when the request impersonates no one; the user it
/// runs as once `user` passed every `impersonate` check; a 403 for the first refused check;
/// `Err(Err(body))` for headers upstream answers with a plain-text 500.
pub(crate) async fn impersonate(
    registry: &Registry,
    user: &UserInfo,
    headers: &http::HeaderMap,
) -> Result<Option<UserInfo>, Result<ApiError, crest_auth::impersonation::ImpersonationError>> {
    let pairs = headers
        .iter()
        .filter_map(|(k, v)| v.to_str().ok().map(|v| (k.as_str(), v)));
    let imp = match crest_auth::impersonation::from_headers(pairs) {
        Ok(None) => return Ok(None),
        Ok(Some(imp)) => imp,
        Err(e) => return Err(Err(e)),
    };
    for check in &imp.checks {
        let a = Attributes {
            user,
            verb: crest_auth::impersonation::VERB,
            namespace: &check.namespace,
            api_group: check.api_group,
            api_version: check.api_version,
            resource: check.resource,
            subresource: &check.subresource,
            name: &check.name,
            resource_request: true,
            path: "",
        };
        let (decision, reason) = decide(registry, &a).await;
        if decision != Decision::Allow {
            return Err(Ok(check.forbidden(&user.name, &reason)));
        }
    }
    Ok(Some(imp.user))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info<'a>(method: &str, path: &'a str, query: &str) -> RequestInfo<'a> {
        request_info(
            &method.parse().expect("method"),
            path,
            &Query::parse(Some(query)),
        )
    }

    #[test]
    fn resource_requests() {
        let i = info(
            "GET",
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            "",
        );
        assert!(i.resource_request);
        assert_eq!(
            (&*i.verb, &*i.api_group, &*i.namespace, &*i.resource),
            ("list", "stable.example.com", "default", "crontabs")
        );
        let i = info("GET", "/api/v1/namespaces/default/pods", "watch=true");
        assert_eq!(i.verb, "watch");
        let i = info(
            "GET",
            "/api/v1/namespaces/default/pods",
            "fieldSelector=metadata.name%3Dweb&watch=1",
        );
        assert_eq!((&*i.verb, &*i.name), ("watch", "web"));
        let i = info("DELETE", "/api/v1/namespaces/default/configmaps", "");
        assert_eq!(i.verb, "deletecollection");
        let i = info("PUT", "/apis/g/v1/namespaces/ns/crontabs/x/status", "");
        assert_eq!(
            (&*i.verb, &*i.name, &*i.subresource),
            ("update", "x", "status")
        );
        // A namespace is in its own namespace.
        let i = info("GET", "/api/v1/namespaces/foo", "");
        assert_eq!(
            (&*i.verb, &*i.namespace, &*i.resource, &*i.name),
            ("get", "foo", "namespaces", "foo")
        );
        let i = info("PUT", "/api/v1/namespaces/foo/finalize", "");
        assert_eq!(
            (&*i.resource, &*i.name, &*i.subresource),
            ("namespaces", "foo", "finalize")
        );
        let i = info("POST", "/api/v1/namespaces", "");
        assert_eq!((&*i.verb, &*i.namespace), ("create", ""));
    }

    #[test]
    fn non_resource_requests() {
        for p in [
            "/",
            "/api",
            "/api/v1",
            "/apis",
            "/apis/g",
            "/apis/g/v1",
            "/healthz",
            "/version",
        ] {
            let i = info("GET", p, "");
            assert!(!i.resource_request, "{p}");
            assert_eq!(i.verb, "get");
            assert_eq!(i.path, p);
        }
        assert_eq!(info("POST", "/apis", "").verb, "post");
    }
}
