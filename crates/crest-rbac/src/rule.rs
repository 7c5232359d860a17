//! Policy rules and how a rule matches a request: k8s.io/kubernetes/pkg/apis/rbac/v1
//! (`evaluation_helpers.go`: `VerbMatches`, `APIGroupMatches`, `ResourceMatches`,
//! `ResourceNameMatches`, `NonResourceURLMatches`, `CompactString`) and the `RuleAllows` of
//! plugin/pkg/auth/authorizer/rbac.

use crate::Attributes;
/// Go's `%q` of a string (`strconv.Quote`), as upstream's messages print names.
pub(crate) use crest_gofmt::go_quote;
use serde_json::{Map, Value};

/// `rbacv1.VerbAll`, `APIGroupAll`, `ResourceAll`, `NonResourceAll`.
pub(crate) const ALL: &str = "*";

/// The API group of the four RBAC kinds.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

/// One `rbacv1.PolicyRule`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        _ => vec![],
    }
}

fn strs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

impl PolicyRule {
    /// A resource rule.
    pub fn resource(verbs: &[&str], api_groups: &[&str], resources: &[&str]) -> Self {
        PolicyRule {
            verbs: strs(verbs),
            api_groups: strs(api_groups),
            resources: strs(resources),
            ..Default::default()
        }
    }

    /// A non-resource rule.
    pub fn non_resource(verbs: &[&str], urls: &[&str]) -> Self {
        PolicyRule {
            verbs: strs(verbs),
            non_resource_urls: strs(urls),
            ..Default::default()
        }
    }

    /// The same rule limited to `names`.
    pub fn with_names(mut self, names: &[&str]) -> Self {
        self.resource_names = strs(names);
        self
    }

    /// Reads a rule from its JSON form (missing or mistyped fields read as empty).
    pub fn from_value(v: &Value) -> Self {
        PolicyRule {
            verbs: strings(v.get("verbs")),
            api_groups: strings(v.get("apiGroups")),
            resources: strings(v.get("resources")),
            resource_names: strings(v.get("resourceNames")),
            non_resource_urls: strings(v.get("nonResourceURLs")),
        }
    }

    /// The JSON form, empty lists omitted as the API serializes them (`verbs` always present).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        let mut put = |k: &str, v: &[String]| {
            if !v.is_empty() {
                m.insert(k.into(), v.into());
            }
        };
        put("apiGroups", &self.api_groups);
        put("resources", &self.resources);
        put("resourceNames", &self.resource_names);
        put("nonResourceURLs", &self.non_resource_urls);
        m.insert("verbs".into(), self.verbs.clone().into());
        Value::Object(m)
    }

    /// `VerbMatches`.
    pub fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == ALL || v == verb)
    }

    /// `APIGroupMatches`.
    pub fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == ALL || g == group)
    }

    /// `ResourceMatches`: `*`, the exact `resource[/subresource]`, or `*/subresource`.
    pub fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            if r == ALL {
                return true;
            }
            if subresource.is_empty() {
                return r == resource;
            }
            if r.len() == resource.len() + 1 + subresource.len()
                && r.starts_with(resource)
                && r.as_bytes()[resource.len()] == b'/'
                && r.ends_with(subresource)
            {
                return true;
            }
            r.len() == subresource.len() + 2 && r.starts_with("*/") && r.ends_with(subresource)
        })
    }

    /// `ResourceNameMatches`: a rule with resourceNames matches only a request naming one of
    /// them (so never a create or a list, which carry no name).
    pub fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    /// `NonResourceURLMatches`: `*`, the exact path, or a prefix ending in `*`.
    pub fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == ALL || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
        })
    }

    /// `RuleAllows`: whether this rule grants the request.
    pub fn allows(&self, a: &Attributes<'_>) -> bool {
        if a.resource_request {
            self.verb_matches(a.verb)
                && self.api_group_matches(a.api_group)
                && self.resource_matches(a.resource, a.subresource)
                && self.resource_name_matches(a.name)
        } else {
            self.verb_matches(a.verb) && self.non_resource_url_matches(a.path)
        }
    }

    /// `CompactString`: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`.
    pub fn compact_string(&self) -> String {
        let mut parts = vec![];
        let fields: [(&str, &Vec<String>); 5] = [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ];
        for (label, v) in fields {
            if !v.is_empty() {
                parts.push(format!("{label}:{}", go_quote_slice(v)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub(crate) fn go_quote_slice<S: AsRef<str>>(v: &[S]) -> String {
    let q: Vec<String> = v.iter().map(|s| go_quote(s.as_ref())).collect();
    format!("[{}]", q.join(" "))
}

/// The `rules` of a Role or ClusterRole object.
pub(crate) fn rules_of(obj: &Value) -> Vec<PolicyRule> {
    match obj.get("rules") {
        Some(Value::Array(a)) => a.iter().map(PolicyRule::from_value).collect(),
        _ => vec![],
    }
}

/// `rbacv1.RoleRef`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleRef {
    pub api_group: String,
    pub kind: String,
    pub name: String,
}

impl RoleRef {
    /// The `roleRef` of a binding object.
    pub fn of(obj: &Value) -> Self {
        let r = obj.get("roleRef");
        let s = |k: &str| {
            r.and_then(|r| r.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        RoleRef {
            api_group: s("apiGroup"),
            kind: s("kind"),
            name: s("name"),
        }
    }

    /// Go's `%#v` of the internal `rbac.RoleRef`, as validation prints it.
    pub fn go_repr(&self) -> String {
        format!(
            "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
            go_quote(&self.api_group),
            go_quote(&self.kind),
            go_quote(&self.name)
        )
    }
}

/// `rbacv1.Subject`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub api_group: String,
    pub name: String,
    pub namespace: String,
}

impl Subject {
    pub fn from_value(v: &Value) -> Self {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Subject {
            kind: s("kind"),
            api_group: s("apiGroup"),
            name: s("name"),
            namespace: s("namespace"),
        }
    }

    /// The `subjects` of a binding object.
    pub fn list_of(obj: &Value) -> Vec<Subject> {
        match obj.get("subjects") {
            Some(Value::Array(a)) => a.iter().map(Subject::from_value).collect(),
            _ => vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crest_api::UserInfo;

    fn req<'a>(
        u: &'a UserInfo,
        verb: &'a str,
        group: &'a str,
        res: &'a str,
        sub: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            user: u,
            verb,
            namespace: "ns",
            api_group: group,
            api_version: "v1",
            resource: res,
            subresource: sub,
            name,
            resource_request: true,
            path: "",
        }
    }

    #[test]
    fn resource_matching() {
        let u = UserInfo::default();
        let r = PolicyRule::resource(&["get"], &[""], &["pods"]);
        assert!(r.allows(&req(&u, "get", "", "pods", "", "")));
        assert!(!r.allows(&req(&u, "get", "", "pods", "status", "")));
        assert!(!r.allows(&req(&u, "list", "", "pods", "", "")));
        assert!(!r.allows(&req(&u, "get", "apps", "pods", "", "")));
        let r = PolicyRule::resource(&["*"], &["*"], &["*/status"]);
        assert!(r.allows(&req(&u, "update", "x", "crontabs", "status", "")));
        assert!(!r.allows(&req(&u, "update", "x", "crontabs", "", "")));
        assert!(!r.allows(&req(&u, "update", "x", "crontabs", "scale", "")));
        let r = PolicyRule::resource(&["get"], &["stable.example.com"], &["crontabs/status"]);
        assert!(r.allows(&req(
            &u,
            "get",
            "stable.example.com",
            "crontabs",
            "status",
            ""
        )));
        assert!(!r.allows(&req(&u, "get", "stable.example.com", "crontabs", "", "")));
        // "pods/*" is no wildcard upstream.
        let r = PolicyRule::resource(&["get"], &[""], &["pods/*"]);
        assert!(!r.allows(&req(&u, "get", "", "pods", "log", "")));
    }

    #[test]
    fn resource_names_need_a_name() {
        let u = UserInfo::default();
        let r = PolicyRule::resource(&["get", "create", "list"], &[""], &["configmaps"])
            .with_names(&["a"]);
        assert!(r.allows(&req(&u, "get", "", "configmaps", "", "a")));
        assert!(!r.allows(&req(&u, "get", "", "configmaps", "", "b")));
        assert!(!r.allows(&req(&u, "create", "", "configmaps", "", "")));
        assert!(!r.allows(&req(&u, "list", "", "configmaps", "", "")));
    }

    #[test]
    fn non_resource_matching() {
        let u = UserInfo::default();
        let r = PolicyRule::non_resource(&["get"], &["/healthz", "/apis/*"]);
        let mut a = req(&u, "get", "", "", "", "");
        a.resource_request = false;
        for (path, ok) in [
            ("/healthz", true),
            ("/healthz/etcd", false),
            ("/apis", false),
            ("/apis/", true),
            ("/apis/apps/v1", true),
        ] {
            a.path = path;
            assert_eq!(r.allows(&a), ok, "{path}");
        }
        let r = PolicyRule::non_resource(&["get"], &["*"]);
        a.path = "/anything";
        assert!(r.allows(&a));
    }

    #[test]
    fn compact_string_format() {
        let r = PolicyRule::resource(&["get", "list"], &[""], &["pods"]);
        assert_eq!(
            r.compact_string(),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}"#
        );
        let r = PolicyRule::non_resource(&["get"], &["/x"]);
        assert_eq!(
            r.compact_string(),
            r#"{NonResourceURLs:["/x"], Verbs:["get"]}"#
        );
        let r = PolicyRule::resource(&["get"], &["apps"], &["deployments"]).with_names(&["d"]);
        assert_eq!(
            r.compact_string(),
            r#"{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["d"], Verbs:["get"]}"#
        );
    }

    #[test]
    fn role_ref_repr() {
        let r = RoleRef {
            api_group: GROUP.into(),
            kind: "ClusterRole".into(),
            name: "view".into(),
        };
        assert_eq!(
            r.go_repr(),
            r#"rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}"#
        );
    }
}
