//! Group/version/kind/resource identifiers.

use std::fmt;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersion {
    pub group: String,
    pub version: String,
}

impl GroupVersion {
    pub fn new(group: &str, version: &str) -> Self {
        GroupVersion {
            group: group.into(),
            version: version.into(),
        }
    }

    /// Parses an `apiVersion` value: `v1` (core) or `group/version`.
    pub fn parse(api_version: &str) -> Self {
        match api_version.split_once('/') {
            Some((g, v)) => Self::new(g, v),
            None => Self::new("", api_version),
        }
    }

    /// The `apiVersion` string.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl fmt::Display for GroupVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.api_version())
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupVersionKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl GroupVersionKind {
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        GroupVersionKind {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }
    pub fn api_version(&self) -> String {
        GroupVersion::new(&self.group, &self.version).api_version()
    }
    pub fn group_kind(&self) -> GroupKind {
        GroupKind::new(&self.group, &self.kind)
    }
}

/// Renders as `Kind.group` (or `Kind` for the core group), as errors print it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupKind {
    pub group: String,
    pub kind: String,
}

impl GroupKind {
    pub fn new(group: &str, kind: &str) -> Self {
        GroupKind {
            group: group.into(),
            kind: kind.into(),
        }
    }
}

impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// Renders as `resource.group` (or `resource`), as errors print it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GroupResource {
    pub group: String,
    pub resource: String,
}

impl GroupResource {
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// One served resource of one group-version: what discovery, OpenAPI and routing need to know.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiResource {
    pub group: String,
    pub version: String,
    /// The plural resource name used in paths (`crontabs`).
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Subresources served under `.../NAME/<sub>` (`status`, `scale`).
    pub subresources: Vec<String>,
}

impl ApiResource {
    /// A built-in kind's resource with every verb, `<Kind>List` as its list kind, the singular
    /// as the kind in lower case, and no short names, categories or subresources (the builder
    /// methods below add them).
    pub fn builtin(group: &str, version: &str, plural: &str, kind: &str, namespaced: bool) -> Self {
        ApiResource {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            namespaced,
            verbs: all_verbs(),
            short_names: vec![],
            categories: vec![],
            subresources: vec![],
        }
    }

    pub fn with_short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn with_categories(mut self, categories: &[&str]) -> Self {
        self.categories = categories.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn with_subresources(mut self, subresources: &[&str]) -> Self {
        self.subresources = subresources.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Drops verbs the resource does not serve.
    pub fn without_verbs(mut self, verbs: &[&str]) -> Self {
        self.verbs.retain(|v| !verbs.contains(&v.as_str()));
        self
    }

    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(&self.group, &self.version)
    }
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(&self.group, &self.plural)
    }
    pub fn group_kind(&self) -> GroupKind {
        GroupKind::new(&self.group, &self.kind)
    }
    pub fn api_version(&self) -> String {
        self.group_version().api_version()
    }
}

/// The verbs of a resource that supports everything.
pub fn all_verbs() -> Vec<String> {
    [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
