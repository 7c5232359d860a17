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

/// Calls a CRD's conversion webhook (implemented by `webhook/`, which sits above the registry
/// and is handed to it at startup): converts the `objects` not yet in `desired` in place, with
/// upstream's checks and failure messages. `conversion` is the CRD's `spec.conversion`, `input`
/// the GroupVersionKind string of the input (of the list, when `list`).
pub(crate) trait WebhookConverter: Send + Sync {
    fn convert<'a>(
        &'a self,
        conversion: &'a Value,
        objects: &'a mut [Value],
        desired: &'a str,
        input: &'a str,
        list: bool,
    ) -> futures::future::BoxFuture<'a, Result<(), String>>;
}
