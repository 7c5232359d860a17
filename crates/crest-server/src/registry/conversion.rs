//! How a built-in resource served in one version converts to and from the version its objects
//! are stored in (as upstream converts through the internal type): e.g. events.k8s.io/v1 Events
//! are core/v1 Events in storage. Custom resources with the `None` strategy only change
//! `apiVersion`; they need no converter.

use serde_json::Value;

pub(crate) trait Conversion: Send + Sync {
    /// The served object for a stored one.
    fn to_served(&self, stored: Value) -> Value;
    /// The stored object for a served one (a write's body after decoding).
    fn to_stored(&self, served: Value) -> Value;
}
