//! The field managers the server's own writes are recorded for, as upstream's components'
//! clients name them (their User-Agents' product).

pub(crate) const KUBE_APISERVER: &str = "kube-apiserver";
pub(crate) const KUBE_CONTROLLER_MANAGER: &str = "kube-controller-manager";
