//! The RBAC authorizer: plugin/pkg/auth/authorizer/rbac (`RBACAuthorizer.Authorize`,
//! `RulesFor`) and pkg/registry/rbac/validation (`DefaultRuleResolver.VisitRulesFor`,
//! `GetRoleReferenceRules`, `appliesTo`), over an index of the four RBAC kinds that the server
//! keeps current from its watch cache.
//!
//! Bindings are indexed by namespace and by subject (user name, group name; a ServiceAccount
//! subject is indexed under its user name `system:serviceaccount:<ns>:<name>`), roles by
//! namespace and name, so an authorization looks only at the bindings of the requesting user
//! and its groups: its cost does not grow with roles and bindings elsewhere.

use crate::rule::{go_quote, rules_of, PolicyRule, RoleRef, Subject, GROUP};
use crest_api::names;
use crest_api::UserInfo;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// `authorizer.Attributes`: what a request asks to do. Borrowed from the request, so building
/// one per request allocates nothing.
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    pub user: &'a UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// `escalate`, `bind`, `impersonate`, ...
    pub verb: &'a str,
    /// Empty for cluster-scoped resources (and for a list across all namespaces).
    pub namespace: &'a str,
    pub api_group: &'a str,
    pub api_version: &'a str,
    /// The plural resource (`crontabs`).
    pub resource: &'a str,
    /// `status`, `scale`, `log`, ... or empty.
    pub subresource: &'a str,
    /// The object's name; empty for create (POST to the collection), list, watch of a collection.
    pub name: &'a str,
    /// False for non-resource URLs (`/healthz`, `/api`, `/version`).
    pub resource_request: bool,
    /// The URL path of a non-resource request.
    pub path: &'a str,
}

impl<'a> Attributes<'a> {
    /// A resource request.
    #[allow(clippy::too_many_arguments)]
    pub fn resource(
        user: &'a UserInfo,
        verb: &'a str,
        namespace: &'a str,
        api_group: &'a str,
        api_version: &'a str,
        resource: &'a str,
        subresource: &'a str,
        name: &'a str,
    ) -> Self {
        Attributes {
            user,
            verb,
            namespace,
            api_group,
            api_version,
            resource,
            subresource,
            name,
            resource_request: true,
            path: "",
        }
    }

    /// A non-resource request (`verb` is the lower-cased HTTP method: `get`, `post`, ...).
    pub fn non_resource(user: &'a UserInfo, verb: &'a str, path: &'a str) -> Self {
        Attributes {
            user,
            verb,
            namespace: "",
            api_group: "",
            api_version: "",
            resource: "",
            subresource: "",
            name: "",
            resource_request: false,
            path,
        }
    }
}

/// `authorizer.Decision`. RBAC itself never denies: it allows or has no opinion (which the
/// server answers with 403).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    NoOpinion,
}

/// The four RBAC kinds the index holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

impl Kind {
    /// From the `kind` of an object (`Role`, `ClusterRole`, ...).
    pub fn from_kind(kind: &str) -> Option<Kind> {
        Some(match kind {
            "Role" => Kind::Role,
            "ClusterRole" => Kind::ClusterRole,
            "RoleBinding" => Kind::RoleBinding,
            "ClusterRoleBinding" => Kind::ClusterRoleBinding,
            _ => return None,
        })
    }

    /// From the plural resource (`roles`, `clusterroles`, ...).
    pub fn from_resource(resource: &str) -> Option<Kind> {
        Some(match resource {
            "roles" => Kind::Role,
            "clusterroles" => Kind::ClusterRole,
            "rolebindings" => Kind::RoleBinding,
            "clusterrolebindings" => Kind::ClusterRoleBinding,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Role => "Role",
            Kind::ClusterRole => "ClusterRole",
            Kind::RoleBinding => "RoleBinding",
            Kind::ClusterRoleBinding => "ClusterRoleBinding",
        }
    }

    pub fn resource(self) -> &'static str {
        match self {
            Kind::Role => "roles",
            Kind::ClusterRole => "clusterroles",
            Kind::RoleBinding => "rolebindings",
            Kind::ClusterRoleBinding => "clusterrolebindings",
        }
    }

    pub fn namespaced(self) -> bool {
        matches!(self, Kind::Role | Kind::RoleBinding)
    }
}

/// How "role not found" reads: the authorizer reads listers (`clusterrole.rbac...` singular),
/// the escalation checks of the registry read storage (`clusterroles.rbac...` plural).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotFoundWording {
    /// `clusterrole.rbac.authorization.k8s.io "x" not found` (RBAC authorizer).
    Lister,
    /// `clusterroles.rbac.authorization.k8s.io "x" not found` (policy-based storage).
    Storage,
}

#[derive(Debug, Clone)]
struct Binding {
    name: String,
    namespace: String,
    role_ref: RoleRef,
    subjects: Vec<Subject>,
}

/// Binding names by subject.
#[derive(Debug, Default, Clone)]
struct SubjectIndex {
    users: HashMap<String, BTreeSet<String>>,
    groups: HashMap<String, BTreeSet<String>>,
}

impl SubjectIndex {
    fn keys(b: &Binding) -> Vec<(bool, String)> {
        let mut out = vec![];
        for s in &b.subjects {
            match s.kind.as_str() {
                "User" => out.push((true, s.name.clone())),
                "Group" => out.push((false, s.name.clone())),
                "ServiceAccount" => {
                    let ns = if s.namespace.is_empty() {
                        &b.namespace
                    } else {
                        &s.namespace
                    };
                    if !ns.is_empty() {
                        out.push((
                            true,
                            format!("{}{ns}:{}", names::SERVICE_ACCOUNT_USER_PREFIX, s.name),
                        ));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn add(&mut self, b: &Binding) {
        for (user, key) in Self::keys(b) {
            let m = if user {
                &mut self.users
            } else {
                &mut self.groups
            };
            m.entry(key).or_default().insert(b.name.clone());
        }
    }

    fn remove(&mut self, b: &Binding) {
        for (user, key) in Self::keys(b) {
            let m = if user {
                &mut self.users
            } else {
                &mut self.groups
            };
            if let Some(set) = m.get_mut(&key) {
                set.remove(&b.name);
                if set.is_empty() {
                    m.remove(&key);
                }
            }
        }
    }

    /// The names of the bindings naming this user or one of its groups, sorted, deduplicated.
    /// Allocates only when more than one of the user's keys has bindings.
    fn candidates<'s>(&'s self, user: &UserInfo) -> Candidates<'s> {
        let mut first: Option<&'s BTreeSet<String>> = None;
        let mut many: Vec<&'s str> = vec![];
        let sources = std::iter::once(self.users.get(user.name.as_str()))
            .chain(user.groups.iter().map(|g| self.groups.get(g.as_str())));
        for set in sources.flatten() {
            match first {
                None if many.is_empty() => first = Some(set),
                _ => {
                    if let Some(f) = first.take() {
                        many.extend(f.iter().map(String::as_str));
                    }
                    many.extend(set.iter().map(String::as_str));
                }
            }
        }
        if many.is_empty() {
            return Candidates::One(first.map(|f| f.iter()));
        }
        many.sort_unstable();
        many.dedup();
        Candidates::Many(many.into_iter())
    }
}

/// The candidate binding names of one scope.
enum Candidates<'s> {
    One(Option<std::collections::btree_set::Iter<'s, String>>),
    Many(std::vec::IntoIter<&'s str>),
}

impl<'s> Iterator for Candidates<'s> {
    type Item = &'s str;

    fn next(&mut self) -> Option<&'s str> {
        match self {
            Candidates::One(it) => it.as_mut()?.next().map(String::as_str),
            Candidates::Many(it) => it.next(),
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Bindings {
    by_name: HashMap<String, Binding>,
    by_subject: SubjectIndex,
}

impl Bindings {
    fn upsert(&mut self, b: Binding) {
        if let Some(old) = self.by_name.remove(&b.name) {
            self.by_subject.remove(&old);
        }
        self.by_subject.add(&b);
        self.by_name.insert(b.name.clone(), b);
    }

    fn remove(&mut self, name: &str) {
        if let Some(old) = self.by_name.remove(name) {
            self.by_subject.remove(&old);
        }
    }
}

/// What granted a request: `ClusterRoleBinding "x" of ClusterRole "y" to User "alice"`
/// (the `String` of upstream's binding describers).
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
}

impl Source<'_> {
    /// Upstream's `clusterRoleBindingDescriber` / `roleBindingDescriber`.
    pub fn describe(&self) -> String {
        let b = self.binding;
        let subject = match self.subject.kind.as_str() {
            "ServiceAccount" => {
                let ns = if self.subject.namespace.is_empty() {
                    &b.namespace
                } else {
                    &self.subject.namespace
                };
                format!(
                    "{} {}",
                    self.subject.kind,
                    go_quote(&format!("{}/{ns}", self.subject.name))
                )
            }
            _ => format!("{} {}", self.subject.kind, go_quote(&self.subject.name)),
        };
        if b.namespace.is_empty() {
            format!(
                "ClusterRoleBinding {} of {} {} to {subject}",
                go_quote(&b.name),
                b.role_ref.kind,
                go_quote(&b.role_ref.name)
            )
        } else {
            format!(
                "RoleBinding {} of {} {} to {subject}",
                go_quote(&format!("{}/{}", b.name, b.namespace)),
                b.role_ref.kind,
                go_quote(&b.role_ref.name)
            )
        }
    }
}

/// One step of [`RbacIndex::visit_rules_for`]: a rule and where it comes from, or an error
/// (a binding whose role is missing).
#[derive(Debug)]
pub enum Visit<'a> {
    Rule(Source<'a>, &'a PolicyRule),
    Error(String),
}

/// `appliesTo`: the first subject of the binding that is this user.
fn applies_to<'b>(user: &UserInfo, b: &'b Binding) -> Option<&'b Subject> {
    b.subjects.iter().find(|s| match s.kind.as_str() {
        "User" => s.name == user.name,
        "Group" => user.in_group(&s.name),
        "ServiceAccount" => {
            let ns = if s.namespace.is_empty() {
                &b.namespace
            } else {
                &s.namespace
            };
            !ns.is_empty()
                && user
                    .service_account()
                    .is_some_and(|(un, uname)| un == ns && uname == s.name)
        }
        _ => false,
    })
}

/// upstream's `utilerrors.NewAggregate(errs).Error()`: one message alone, several in `[a, b]`,
/// duplicates dropped.
pub(crate) fn aggregate_errors(errs: &[String]) -> String {
    let mut seen: Vec<&str> = vec![];
    for e in errs {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// The rules a user holds in a namespace (`RulesFor`), for SelfSubjectRulesReview and the
/// escalation checks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RulesReview {
    pub resource_rules: Vec<PolicyRule>,
    pub non_resource_rules: Vec<PolicyRule>,
    /// Always false with RBAC alone (upstream's RBAC resolver enumerates everything).
    pub incomplete: bool,
    /// Missing roles, aggregated as upstream (`[a, b]`); empty when none.
    pub evaluation_error: String,
}

impl RulesReview {
    /// The `status` of a SelfSubjectRulesReview (`authorization.k8s.io/v1`
    /// `SubjectRulesReviewStatus`).
    pub fn to_status(&self) -> Value {
        let res: Vec<Value> = self
            .resource_rules
            .iter()
            .map(|r| {
                let mut v = json!({"verbs": r.verbs});
                if !r.api_groups.is_empty() {
                    v["apiGroups"] = json!(r.api_groups);
                }
                if !r.resources.is_empty() {
                    v["resources"] = json!(r.resources);
                }
                if !r.resource_names.is_empty() {
                    v["resourceNames"] = json!(r.resource_names);
                }
                v
            })
            .collect();
        let non: Vec<Value> = self
            .non_resource_rules
            .iter()
            .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
            .collect();
        let mut s = json!({
            "resourceRules": res,
            "nonResourceRules": non,
            "incomplete": self.incomplete,
        });
        if !self.evaluation_error.is_empty() {
            s["evaluationError"] = self.evaluation_error.clone().into();
        }
        s
    }
}

/// The RBAC state: the four kinds, indexed for authorization. Build it with [`RbacIndex::new`]
/// and [`RbacIndex::upsert`] from the stored objects, keep it current with `upsert`/`remove`
/// on every watch event, and ask [`RbacIndex::authorize`] per request.
#[derive(Debug, Default, Clone)]
pub struct RbacIndex {
    /// namespace -> name -> rules.
    roles: HashMap<String, HashMap<String, Arc<Vec<PolicyRule>>>>,
    cluster_roles: HashMap<String, Arc<Vec<PolicyRule>>>,
    cluster_role_bindings: Bindings,
    /// namespace -> bindings.
    role_bindings: HashMap<String, Bindings>,
}

fn meta_str<'v>(obj: &'v Value, k: &str) -> &'v str {
    obj.get("metadata")
        .and_then(|m| m.get(k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl RbacIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// An index of these objects (any of the four kinds, told apart by their `kind`).
    pub fn from_objects<'v>(objs: impl IntoIterator<Item = &'v Value>) -> Self {
        let mut ix = Self::new();
        for o in objs {
            if let Some(k) = o
                .get("kind")
                .and_then(Value::as_str)
                .and_then(Kind::from_kind)
            {
                ix.upsert(k, o);
            }
        }
        ix
    }

    /// Adds or replaces an object (on ADDED and MODIFIED).
    pub fn upsert(&mut self, kind: Kind, obj: &Value) {
        let name = meta_str(obj, "name").to_string();
        let namespace = meta_str(obj, "namespace").to_string();
        match kind {
            Kind::Role => {
                self.roles
                    .entry(namespace)
                    .or_default()
                    .insert(name, Arc::new(rules_of(obj)));
            }
            Kind::ClusterRole => {
                self.cluster_roles.insert(name, Arc::new(rules_of(obj)));
            }
            Kind::RoleBinding | Kind::ClusterRoleBinding => {
                let b = Binding {
                    name,
                    namespace: if kind == Kind::RoleBinding {
                        namespace
                    } else {
                        String::new()
                    },
                    role_ref: RoleRef::of(obj),
                    subjects: Subject::list_of(obj),
                };
                if kind == Kind::ClusterRoleBinding {
                    self.cluster_role_bindings.upsert(b);
                } else {
                    self.role_bindings
                        .entry(b.namespace.clone())
                        .or_default()
                        .upsert(b);
                }
            }
        }
    }

    /// Forgets an object (on DELETED). `namespace` is ignored for the cluster-scoped kinds.
    pub fn remove(&mut self, kind: Kind, namespace: &str, name: &str) {
        match kind {
            Kind::Role => {
                if let Some(m) = self.roles.get_mut(namespace) {
                    m.remove(name);
                    if m.is_empty() {
                        self.roles.remove(namespace);
                    }
                }
            }
            Kind::ClusterRole => {
                self.cluster_roles.remove(name);
            }
            Kind::ClusterRoleBinding => self.cluster_role_bindings.remove(name),
            Kind::RoleBinding => {
                if let Some(b) = self.role_bindings.get_mut(namespace) {
                    b.remove(name);
                    if b.by_name.is_empty() {
                        self.role_bindings.remove(namespace);
                    }
                }
            }
        }
    }

    /// The rules of a ClusterRole, if it exists.
    pub fn cluster_role_rules(&self, name: &str) -> Option<&[PolicyRule]> {
        self.cluster_roles.get(name).map(|r| r.as_slice())
    }

    /// The rules of a Role, if it exists.
    pub fn role_rules(&self, namespace: &str, name: &str) -> Option<&[PolicyRule]> {
        self.roles
            .get(namespace)
            .and_then(|m| m.get(name))
            .map(|r| r.as_slice())
    }

    /// `GetRoleReferenceRules`: the rules a roleRef grants in `namespace` (the binding's; empty
    /// for a ClusterRoleBinding), or upstream's error.
    pub fn role_reference_rules(
        &self,
        role_ref: &RoleRef,
        namespace: &str,
        wording: NotFoundWording,
    ) -> Result<&[PolicyRule], String> {
        let (found, singular) = match role_ref.kind.as_str() {
            "Role" => (self.role_rules(namespace, &role_ref.name), "role"),
            "ClusterRole" => (self.cluster_role_rules(&role_ref.name), "clusterrole"),
            other => {
                return Err(format!(
                    "unsupported role reference kind: {}",
                    go_quote(other)
                ))
            }
        };
        found.ok_or_else(|| {
            let resource = match wording {
                NotFoundWording::Lister => singular.to_string(),
                NotFoundWording::Storage => format!("{singular}s"),
            };
            format!("{resource}.{GROUP} {} not found", go_quote(&role_ref.name))
        })
    }

    /// `VisitRulesFor`: every rule the user holds in `namespace` (ClusterRoleBindings first,
    /// then the RoleBindings of the namespace when it is not empty), with errors for bindings
    /// whose role is missing. The visitor returns false to stop.
    pub fn visit_rules_for<'s>(
        &'s self,
        user: &UserInfo,
        namespace: &str,
        wording: NotFoundWording,
        visitor: &mut dyn FnMut(Visit<'s>) -> bool,
    ) {
        let scopes = [
            Some(&self.cluster_role_bindings),
            if namespace.is_empty() {
                None
            } else {
                self.role_bindings.get(namespace)
            },
        ];
        for bindings in scopes.into_iter().flatten() {
            for name in bindings.by_subject.candidates(user) {
                let Some(b) = bindings.by_name.get(name) else {
                    continue;
                };
                let Some(subject) = applies_to(user, b) else {
                    continue;
                };
                match self.role_reference_rules(&b.role_ref, &b.namespace, wording) {
                    Err(e) => {
                        if !visitor(Visit::Error(e)) {
                            return;
                        }
                    }
                    Ok(rules) => {
                        let source = Source {
                            binding: b,
                            subject,
                        };
                        for r in rules {
                            if !visitor(Visit::Rule(source, r)) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// `RBACAuthorizer.Authorize` alone: `Allow` with `RBAC: allowed by ...`, or `NoOpinion`
    /// with the errors met (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`) or an
    /// empty reason.
    pub fn authorize_rbac(&self, a: &Attributes<'_>) -> (Decision, String) {
        self.check(a, true)
    }

    fn check(&self, a: &Attributes<'_>, describe: bool) -> (Decision, String) {
        let mut errors: Vec<String> = vec![];
        let mut allowed: Option<String> = None;
        self.visit_rules_for(
            a.user,
            a.namespace,
            NotFoundWording::Lister,
            &mut |v| match v {
                Visit::Error(e) => {
                    errors.push(e);
                    true
                }
                Visit::Rule(source, rule) => {
                    if rule.allows(a) {
                        allowed = Some(if describe {
                            format!("RBAC: allowed by {}", source.describe())
                        } else {
                            String::new()
                        });
                        false
                    } else {
                        true
                    }
                }
            },
        );
        if let Some(reason) = allowed {
            return (Decision::Allow, reason);
        }
        if errors.is_empty() {
            (Decision::NoOpinion, String::new())
        } else {
            (
                Decision::NoOpinion,
                format!("RBAC: {}", aggregate_errors(&errors)),
            )
        }
    }

    /// kube-apiserver's authorizer chain as far as RBAC goes: members of `system:masters` are
    /// allowed outright (the privileged-groups authorizer, reason empty), everyone else is asked
    /// to RBAC. Anything but `Allow` is a 403 ([`crate::forbidden_error`]).
    pub fn authorize(&self, a: &Attributes<'_>) -> (Decision, String) {
        if a.user.in_group(names::SYSTEM_MASTERS) {
            return (Decision::Allow, String::new());
        }
        self.authorize_rbac(a)
    }

    /// [`RbacIndex::authorize`] without describing the allowing binding (the reason of an
    /// `Allow` is empty): the per-request call when the reason of an allowed request is not
    /// needed (it is only logged/audited upstream). A denial still carries its reason for the
    /// 403 message.
    pub fn authorize_fast(&self, a: &Attributes<'_>) -> (Decision, String) {
        if a.user.in_group(names::SYSTEM_MASTERS) {
            return (Decision::Allow, String::new());
        }
        self.check(a, false)
    }

    /// Whether the request is allowed (the decision alone).
    pub fn allows(&self, a: &Attributes<'_>) -> bool {
        self.authorize_fast(a).0 == Decision::Allow
    }

    /// `DefaultRuleResolver.RulesFor`: every rule the user holds in `namespace` (cluster-wide
    /// ones included), in visiting order, and the errors met.
    pub fn rules_for(
        &self,
        user: &UserInfo,
        namespace: &str,
        wording: NotFoundWording,
    ) -> (Vec<PolicyRule>, Vec<String>) {
        let mut rules = vec![];
        let mut errors = vec![];
        self.visit_rules_for(user, namespace, wording, &mut |v| {
            match v {
                Visit::Rule(_, r) => rules.push(r.clone()),
                Visit::Error(e) => errors.push(e),
            }
            true
        });
        (rules, errors)
    }

    /// `RBACAuthorizer.RulesFor` as SelfSubjectRulesReview (and SubjectRulesReview) report
    /// them: rules with resources go to `resource_rules`, rules with nonResourceURLs to
    /// `non_resource_rules` (a rule with both to both).
    pub fn rules_review(&self, user: &UserInfo, namespace: &str) -> RulesReview {
        let (rules, errors) = self.rules_for(user, namespace, NotFoundWording::Lister);
        let mut out = RulesReview {
            evaluation_error: aggregate_errors(&errors),
            ..Default::default()
        };
        for r in rules {
            if !r.resources.is_empty() {
                out.resource_rules.push(PolicyRule {
                    non_resource_urls: vec![],
                    ..r.clone()
                });
            }
            if !r.non_resource_urls.is_empty() {
                out.non_resource_rules.push(PolicyRule {
                    verbs: r.verbs.clone(),
                    non_resource_urls: r.non_resource_urls.clone(),
                    ..Default::default()
                });
            }
        }
        out
    }

    /// How many objects of each kind the index holds: (roles, clusterroles, rolebindings,
    /// clusterrolebindings).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        (
            self.roles.values().map(HashMap::len).sum(),
            self.cluster_roles.len(),
            self.role_bindings.values().map(|b| b.by_name.len()).sum(),
            self.cluster_role_bindings.by_name.len(),
        )
    }
}
