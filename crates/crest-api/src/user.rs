//! Who a request is from: `user.Info` of k8s.io/apiserver, produced by authentication and read
//! by authorization, admission and the audit log.

use std::collections::BTreeMap;

/// The authenticated (or anonymous) identity of a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// `alice`, `system:serviceaccount:default:builder`, `system:anonymous`.
    pub name: String,
    pub uid: String,
    /// Including the ones authentication adds (`system:authenticated`,
    /// `system:serviceaccounts`, ...).
    pub groups: Vec<String>,
    /// Extra attributes (e.g. `authentication.kubernetes.io/credential-id`), sorted by key.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// Well-known user and group names.
pub mod names {
    pub const ANONYMOUS: &str = "system:anonymous";
    pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
    pub const ALL_AUTHENTICATED: &str = "system:authenticated";
    pub const SYSTEM_MASTERS: &str = "system:masters";
    pub const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
    /// `system:serviceaccount:` + namespace + `:` + name is a ServiceAccount's user name.
    pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";
}

impl UserInfo {
    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The ServiceAccount `(namespace, name)` this user is, if it is one.
    pub fn service_account(&self) -> Option<(&str, &str)> {
        self.name
            .strip_prefix(names::SERVICE_ACCOUNT_USER_PREFIX)?
            .split_once(':')
    }
}
