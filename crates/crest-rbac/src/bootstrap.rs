//! placeholder
use serde_json::Value;
pub fn bootstrap_cluster_roles() -> Vec<Value> {
    vec![]
}
pub fn bootstrap_cluster_role_bindings() -> Vec<Value> {
    vec![]
}
