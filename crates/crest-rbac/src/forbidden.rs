//! The 403 of a denied request: k8s.io/apiserver/pkg/endpoints/handlers/responsewriters
//! (`forbiddenMessage`, `Forbidden`) and apimachinery's `errors.NewForbidden`.

use crate::authorizer::Attributes;
use crate::rule::go_quote;
use crest_api::{ApiError, Reason};
use serde_json::Map;

/// Upstream's HTML sanitizer of the message (`&`, `<`, `>`).
fn sanitize(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `forbiddenMessage`: `User "alice" cannot list resource "crontabs" in API group
/// "stable.example.com" in the namespace "default"` (or `at the cluster scope`, or
/// `cannot get path "/metrics"`), sanitized as upstream.
pub fn forbidden_message(a: &Attributes<'_>) -> String {
    let user = go_quote(&a.user.name);
    let msg = if !a.resource_request {
        format!("User {user} cannot {} path {}", a.verb, go_quote(a.path))
    } else {
        let resource = if a.subresource.is_empty() {
            a.resource.to_string()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        if a.namespace.is_empty() {
            format!(
                "User {user} cannot {} resource {} in API group {} at the cluster scope",
                a.verb,
                go_quote(&resource),
                go_quote(a.api_group)
            )
        } else {
            format!(
                "User {user} cannot {} resource {} in API group {} in the namespace {}",
                a.verb,
                go_quote(&resource),
                go_quote(a.api_group),
                go_quote(a.namespace)
            )
        }
    };
    sanitize(&msg)
}

/// The 403 `ApiError` the server answers a request the authorizer did not allow with
/// (`responsewriters.Forbidden`): `crontabs.stable.example.com "x" is forbidden: User "alice"
/// cannot get resource ...[: <reason>]`, details `{name, group, kind: <resource>}`; a
/// non-resource request reads `forbidden: User "alice" cannot get path "/metrics"`.
pub fn forbidden_error(a: &Attributes<'_>, reason: &str) -> ApiError {
    let msg = forbidden_message(a);
    let err = if reason.is_empty() {
        msg
    } else {
        format!("{msg}: {reason}")
    };
    let (group, resource) = if a.resource_request {
        (a.api_group, a.resource)
    } else {
        ("", "")
    };
    new_forbidden(group, resource, a.name, &err)
}

/// apimachinery's `NewForbidden(GroupResource{group, resource}, name, err)`.
pub(crate) fn new_forbidden(group: &str, resource: &str, name: &str, err: &str) -> ApiError {
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    let message = if group.is_empty() && resource.is_empty() {
        format!("forbidden: {err}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {err}")
    } else {
        format!("{qualified} {} is forbidden: {err}", go_quote(name))
    };
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), name.into());
    }
    if !group.is_empty() {
        d.insert("group".into(), group.into());
    }
    if !resource.is_empty() {
        d.insert("kind".into(), resource.into());
    }
    ApiError {
        code: 403,
        reason: Some(Reason::Forbidden),
        message,
        details: Some(d),
        list_continue: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crest_api::UserInfo;
    use serde_json::json;

    fn alice() -> UserInfo {
        UserInfo {
            name: "alice".into(),
            groups: vec!["system:authenticated".into()],
            ..Default::default()
        }
    }

    #[test]
    fn namespaced_list() {
        let u = alice();
        let a = Attributes::resource(
            &u,
            "list",
            "default",
            "stable.example.com",
            "v1",
            "crontabs",
            "",
            "",
        );
        let e = forbidden_error(&a, "");
        assert_eq!(
            e.message,
            r#"crontabs.stable.example.com is forbidden: User "alice" cannot list resource "crontabs" in API group "stable.example.com" in the namespace "default""#
        );
        assert_eq!(
            e.to_status(),
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": e.message, "reason": "Forbidden",
                "details": {"group": "stable.example.com", "kind": "crontabs"}, "code": 403})
        );
    }

    #[test]
    fn named_subresource_and_reason() {
        let u = alice();
        let a = Attributes::resource(&u, "get", "ns1", "", "v1", "pods", "log", "web");
        let e = forbidden_error(
            &a,
            r#"RBAC: clusterrole.rbac.authorization.k8s.io "x" not found"#,
        );
        assert_eq!(
            e.message,
            r#"pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "ns1": RBAC: clusterrole.rbac.authorization.k8s.io "x" not found"#
        );
        assert_eq!(e.details.unwrap()["name"], "web");
    }

    #[test]
    fn cluster_scope_and_non_resource() {
        let u = alice();
        let a = Attributes::resource(&u, "list", "", "", "v1", "nodes", "", "");
        assert_eq!(
            forbidden_error(&a, "").message,
            r#"nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope"#
        );
        let a = Attributes::non_resource(&u, "get", "/metrics");
        let e = forbidden_error(&a, "");
        assert_eq!(
            e.message,
            r#"forbidden: User "alice" cannot get path "/metrics""#
        );
        assert_eq!(e.to_status()["details"], json!({}));
        let a = Attributes::non_resource(&u, "get", "/x<y>&");
        assert_eq!(
            forbidden_message(&a),
            r#"User "alice" cannot get path "/x&lt;y&gt;&amp;""#
        );
    }

    #[test]
    fn anonymous() {
        let u = UserInfo {
            name: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
            ..Default::default()
        };
        let a = Attributes::resource(&u, "get", "", "", "v1", "namespaces", "", "default");
        assert_eq!(
            forbidden_error(&a, "").message,
            r#"namespaces "default" is forbidden: User "system:anonymous" cannot get resource "namespaces" in API group "" at the cluster scope"#
        );
    }
}
