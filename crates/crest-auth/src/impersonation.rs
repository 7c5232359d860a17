//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`), as k8s.io/apiserver
//! `endpoints/filters/impersonation.go`: the headers give a list of `impersonate` checks the
//! requesting user must pass, in upstream's order, and the user the request then runs as.
//!
//! The server's calls, after authentication and before authorizing the request:
//! [`from_headers`] → `None`: no impersonation; `Err(e)`: 500 with
//! [`ImpersonationError::body`] as `text/plain`; `Some(imp)`: authorize every
//! [`Check`] of `imp.checks` in order for the authenticated user (verb `impersonate`), the first
//! denial answering [`Check::forbidden`] (403); when all pass, the request goes on as
//! `imp.user`, and the impersonation headers are no longer looked at.

use crest_api::{names, UserInfo};
use crest_api::{ApiError, GroupResource};
use std::collections::BTreeMap;

/// The header naming the user to act as (lowercase, as HTTP/2 and hyper give names).
pub const IMPERSONATE_USER: &str = "impersonate-user";
/// The header naming a group to act in (repeated for several).
pub const IMPERSONATE_GROUP: &str = "impersonate-group";
/// The header naming the uid to act with.
pub const IMPERSONATE_UID: &str = "impersonate-uid";
/// Followed by the (percent-encoded) extra key.
pub const IMPERSONATE_EXTRA_PREFIX: &str = "impersonate-extra-";

/// What is impersonated, as upstream's `ObjectReference` kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    User,
    ServiceAccount,
    Group,
    UserExtra,
    Uid,
}

/// One authorization check: verb `impersonate` on this resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub kind: Kind,
    /// `users`, `serviceaccounts`, `groups`, `userextras`, `uids`.
    pub resource: &'static str,
    /// The extra key, for `userextras`.
    pub subresource: String,
    /// `""`, or `authentication.k8s.io` for `userextras` and `uids`.
    pub api_group: &'static str,
    /// `""`, or `v1` for `userextras` and `uids`.
    pub api_version: &'static str,
    /// The ServiceAccount's namespace.
    pub namespace: String,
    /// The user, group, ServiceAccount, extra value or uid.
    pub name: String,
}

/// The verb of every check.
pub const VERB: &str = "impersonate";

impl Check {
    fn new(kind: Kind, namespace: &str, name: &str, field_path: &str) -> Check {
        let (resource, api_group, api_version) = match kind {
            Kind::User => ("users", "", ""),
            Kind::ServiceAccount => ("serviceaccounts", "", ""),
            Kind::Group => ("groups", "", ""),
            Kind::UserExtra => ("userextras", "authentication.k8s.io", "v1"),
            Kind::Uid => ("uids", "authentication.k8s.io", "v1"),
        };
        Check {
            kind,
            resource,
            subresource: field_path.to_string(),
            api_group,
            api_version,
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    /// The 403 for a denied check (`responsewriters.Forbidden`), e.g. `users "bob" is
    /// forbidden: User "alice" cannot impersonate resource "users" in API group "" at the
    /// cluster scope`; `reason` is the authorizer's (appended after `: ` when not empty).
    pub fn forbidden(&self, requestor: &str, reason: &str) -> ApiError {
        let resource = if self.subresource.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        };
        let q = crest_gofmt::go_quote;
        let msg = if self.namespace.is_empty() {
            format!(
                "User {} cannot {VERB} resource {} in API group {} at the cluster scope",
                q(requestor),
                q(&resource),
                q(self.api_group)
            )
        } else {
            format!(
                "User {} cannot {VERB} resource {} in API group {} in the namespace {}",
                q(requestor),
                q(&resource),
                q(self.api_group),
                q(&self.namespace)
            )
        };
        let msg = sanitize(&msg);
        let detail = if reason.is_empty() {
            msg
        } else {
            format!("{msg}: {reason}")
        };
        ApiError::forbidden(
            &GroupResource::new(self.api_group, self.resource),
            &self.name,
            &detail,
        )
    }

    /// Go's `%v` of the `ObjectReference` upstream builds for this check.
    fn go_v(&self) -> String {
        let api_version = if self.api_group.is_empty() {
            String::new()
        } else {
            format!("{}/{}", self.api_group, self.api_version)
        };
        let kind = match self.kind {
            Kind::User => "User",
            Kind::ServiceAccount => "ServiceAccount",
            Kind::Group => "Group",
            Kind::UserExtra => "UserExtra",
            Kind::Uid => "UID",
        };
        // {Kind Namespace Name UID APIVersion ResourceVersion FieldPath}
        format!(
            "{{{kind} {} {}  {api_version}  {}}}",
            self.namespace, self.name, self.subresource
        )
    }
}

/// responsewriters' sanitizer: nothing in an error may read as HTML.
fn sanitize(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A request's impersonation: the checks to pass and the user it then runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Impersonation {
    pub checks: Vec<Check>,
    pub user: UserInfo,
}

/// Impersonation headers without `Impersonate-User`: upstream answers 500.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImpersonationError {
    /// `requested [...] without impersonating a user`.
    pub message: String,
}

impl ImpersonationError {
    /// The `text/plain` 500 body kube-apiserver writes (`responsewriters.InternalError`),
    /// ending in a newline as Go's `http.Error`.
    pub fn body(&self, request_uri: &str) -> String {
        format!(
            "{}\n",
            sanitize(&format!(
                "Internal Server Error: {}: {}",
                crest_gofmt::go_quote(request_uri),
                self.message
            ))
        )
    }
}

/// Go's `url.PathUnescape`; an invalid escape keeps the key as it is.
fn unescape_extra_key(encoded: &str) -> String {
    let b = encoded.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => return encoded.to_string(),
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `SplitUsername`: the namespace and name of `system:serviceaccount:<ns>:<name>`, when both
/// are valid names.
fn split_service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix(names::SERVICE_ACCOUNT_USER_PREFIX)?;
    let mut parts = rest.split(':');
    let (ns, name) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    if !crest_api::validation::name_is_dns_label(ns, false).is_empty()
        || !crest_api::validation::name_is_dns_subdomain(name, false).is_empty()
    {
        return None;
    }
    Some((ns, name))
}

/// Reads the impersonation headers from `headers` (name, value) pairs; names are matched
/// case-insensitively, a repeated header gives several values. `Ok(None)` when the request
/// does not impersonate.
pub fn from_headers<'a, I>(headers: I) -> Result<Option<Impersonation>, ImpersonationError>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut user: Option<&str> = None;
    let mut groups: Vec<&str> = Vec::new();
    let mut uid: Option<&str> = None;
    // By header name (lowercased), values in order: Go ranges over a map here; sorting makes
    // the order of the checks stable.
    let mut extras: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if lower == IMPERSONATE_USER {
            user.get_or_insert(value);
        } else if lower == IMPERSONATE_GROUP {
            groups.push(value);
        } else if lower == IMPERSONATE_UID {
            uid.get_or_insert(value);
        } else if let Some(key) = lower.strip_prefix(IMPERSONATE_EXTRA_PREFIX) {
            extras.entry(key.to_string()).or_default().push(value);
        }
    }
    let user = user.filter(|u| !u.is_empty());
    let uid = uid.filter(|u| !u.is_empty());

    let mut checks = Vec::new();
    let mut sa = None;
    if let Some(u) = user {
        match split_service_account(u) {
            Some((ns, name)) => {
                sa = Some(ns);
                checks.push(Check::new(Kind::ServiceAccount, ns, name, ""));
            }
            None => checks.push(Check::new(Kind::User, "", u, "")),
        }
    }
    for g in &groups {
        checks.push(Check::new(Kind::Group, "", g, ""));
    }
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (encoded, values) in &extras {
        let key = unescape_extra_key(encoded);
        for v in values {
            checks.push(Check::new(Kind::UserExtra, "", v, &key));
            extra.entry(key.clone()).or_default().push(v.to_string());
        }
    }
    if let Some(u) = uid {
        checks.push(Check::new(Kind::Uid, "", u, ""));
    }
    let Some(username) = user else {
        if checks.is_empty() {
            return Ok(None);
        }
        let list: Vec<String> = checks.iter().map(Check::go_v).collect();
        return Err(ImpersonationError {
            message: format!(
                "requested [{}] without impersonating a user",
                list.join(" ")
            ),
        });
    };

    let name = match checks.first() {
        Some(c) if c.kind == Kind::ServiceAccount => {
            crate::serviceaccount::make_username(&c.namespace, &c.name)
        }
        _ => username.to_string(),
    };
    let mut group_list: Vec<String> = match sa {
        Some(ns) if groups.is_empty() => crate::serviceaccount::make_group_names(ns),
        _ => groups.iter().map(|g| g.to_string()).collect(),
    };
    if name != names::ANONYMOUS {
        if !group_list
            .iter()
            .any(|g| g == names::ALL_AUTHENTICATED || g == names::ALL_UNAUTHENTICATED)
        {
            group_list.push(names::ALL_AUTHENTICATED.to_string());
        }
    } else if !group_list.iter().any(|g| g == names::ALL_UNAUTHENTICATED) {
        group_list.push(names::ALL_UNAUTHENTICATED.to_string());
    }
    Ok(Some(Impersonation {
        checks,
        user: UserInfo {
            name,
            uid: uid.unwrap_or("").to_string(),
            groups: group_list,
            extra,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_headers() {
        assert_eq!(from_headers([("accept", "x")]), Ok(None));
        assert_eq!(from_headers([("Impersonate-User", "")]), Ok(None));
    }

    #[test]
    fn user_groups_extras_uid() {
        let imp = from_headers([
            ("Impersonate-User", "bob"),
            ("Impersonate-Group", "dev"),
            ("impersonate-group", "ops"),
            ("Impersonate-Extra-Example.com%2fScopes", "view"),
            ("Impersonate-Extra-Example.com%2fScopes", "edit"),
            ("Impersonate-Uid", "1234"),
        ])
        .unwrap()
        .unwrap();
        let summary: Vec<(&str, &str, &str, &str)> = imp
            .checks
            .iter()
            .map(|c| {
                (
                    c.resource,
                    c.api_group,
                    c.subresource.as_str(),
                    c.name.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("users", "", "", "bob"),
                ("groups", "", "", "dev"),
                ("groups", "", "", "ops"),
                (
                    "userextras",
                    "authentication.k8s.io",
                    "example.com/scopes",
                    "view"
                ),
                (
                    "userextras",
                    "authentication.k8s.io",
                    "example.com/scopes",
                    "edit"
                ),
                ("uids", "authentication.k8s.io", "", "1234"),
            ]
        );
        assert_eq!(imp.user.name, "bob");
        assert_eq!(imp.user.uid, "1234");
        assert_eq!(imp.user.groups, vec!["dev", "ops", "system:authenticated"]);
        assert_eq!(imp.user.extra["example.com/scopes"], vec!["view", "edit"]);
    }

    #[test]
    fn service_account_user() {
        let imp = from_headers([("Impersonate-User", "system:serviceaccount:kube-system:ctrl")])
            .unwrap()
            .unwrap();
        assert_eq!(imp.checks[0].resource, "serviceaccounts");
        assert_eq!(imp.checks[0].namespace, "kube-system");
        assert_eq!(imp.checks[0].name, "ctrl");
        assert_eq!(imp.user.name, "system:serviceaccount:kube-system:ctrl");
        assert_eq!(
            imp.user.groups,
            vec![
                "system:serviceaccounts",
                "system:serviceaccounts:kube-system",
                "system:authenticated"
            ]
        );
        assert_eq!(
            imp.checks[0].forbidden("alice", "").message,
            "serviceaccounts \"ctrl\" is forbidden: User \"alice\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"kube-system\""
        );
        // Groups given: they replace the ServiceAccount's.
        let imp = from_headers([
            ("Impersonate-User", "system:serviceaccount:ns:sa"),
            ("Impersonate-Group", "g"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(imp.user.groups, vec!["g", "system:authenticated"]);
        // Not a valid ServiceAccount name: a plain user.
        let imp = from_headers([("Impersonate-User", "system:serviceaccount:Bad_NS:sa")])
            .unwrap()
            .unwrap();
        assert_eq!(imp.checks[0].resource, "users");
    }

    #[test]
    fn authenticated_and_unauthenticated_groups() {
        let imp = from_headers([
            ("Impersonate-User", "bob"),
            ("Impersonate-Group", "system:unauthenticated"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(imp.user.groups, vec!["system:unauthenticated"]);
        let imp = from_headers([("Impersonate-User", "system:anonymous")])
            .unwrap()
            .unwrap();
        assert_eq!(imp.user.groups, vec!["system:unauthenticated"]);
        let imp = from_headers([
            ("Impersonate-User", "system:anonymous"),
            ("Impersonate-Group", "system:authenticated"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            imp.user.groups,
            vec!["system:authenticated", "system:unauthenticated"]
        );
    }

    #[test]
    fn groups_without_user_is_an_error() {
        let e = from_headers([("Impersonate-Group", "system:masters")]).unwrap_err();
        assert_eq!(
            e.message,
            "requested [{Group  system:masters    }] without impersonating a user"
        );
        assert_eq!(
            e.body("/api/v1/namespaces"),
            "Internal Server Error: \"/api/v1/namespaces\": requested [{Group  system:masters    }] without impersonating a user\n"
        );
        let e = from_headers([("Impersonate-Uid", "1"), ("Impersonate-Extra-k", "v")]).unwrap_err();
        assert_eq!(
            e.message,
            "requested [{UserExtra  v  authentication.k8s.io/v1  k} {UID  1  authentication.k8s.io/v1  }] without impersonating a user"
        );
    }

    #[test]
    fn forbidden_messages() {
        let imp = from_headers([
            ("Impersonate-User", "bob"),
            ("Impersonate-Extra-scopes", "<x>"),
        ])
        .unwrap()
        .unwrap();
        let e = imp.checks[0].forbidden("alice", "");
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
        let status = e.to_status();
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(status["details"]["kind"], "users");
        assert_eq!(status["details"]["name"], "bob");
        let e = imp.checks[1].forbidden("alice", "no RBAC policy matched");
        assert_eq!(
            e.message,
            "userextras.authentication.k8s.io \"<x>\" is forbidden: User \"alice\" cannot impersonate resource \"userextras/scopes\" in API group \"authentication.k8s.io\" at the cluster scope: no RBAC policy matched"
        );
    }

    #[test]
    fn extra_key_unescaping() {
        assert_eq!(unescape_extra_key("a%2fb"), "a/b");
        assert_eq!(unescape_extra_key("a%zzb"), "a%zzb");
        assert_eq!(unescape_extra_key("a%2"), "a%2");
    }
}
