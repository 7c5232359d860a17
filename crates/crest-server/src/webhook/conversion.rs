//! Calling a CRD's conversion webhook: the ConversionReview of the objects not yet in the
//! desired version, POSTed to the CRD's `spec.conversion.webhook.clientConfig`, the answer
//! checked and put in place (`crest_apiextensions::conversion`), every failure worded as
//! upstream's `conversion webhook for <GVK> failed: ...`.

use super::ServiceResolver;
use crest_apiextensions::conversion;
use serde_json::Value;
use std::time::Duration;

/// How long a conversion webhook may take (upstream's webhook client default).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

impl ServiceResolver {
    /// Converts `objects` to `desired` through the webhook of the CRD conversion `conversion`
    /// (`spec.conversion`). `input` names the input in messages (`conversion::gvk_string` of the
    /// object, or of the list when `list`). Objects already in `desired` are not sent; when none
    /// needs converting there is no call.
    pub(crate) async fn convert(
        &self,
        conversion: &Value,
        objects: &mut [Value],
        desired: &str,
        input: &str,
        list: bool,
    ) -> Result<(), String> {
        let indexes = conversion::to_convert(objects, desired);
        if indexes.is_empty() {
            return Ok(());
        }
        let webhook = conversion.get("webhook").cloned().unwrap_or(Value::Null);
        let versions: Vec<String> = webhook
            .get("conversionReviewVersions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let sent: Vec<&Value> = indexes.iter().map(|i| &objects[*i]).collect();
        let uid = crest_api::meta::new_uid();
        let review = conversion::review(&versions, &sent, desired, &uid)?;
        let failed = |e: String| format!("conversion webhook for {input} failed: {e}");
        let body = serde_json::to_vec(&review.body).map_err(|e| failed(e.to_string()))?;
        let client_config = webhook.get("clientConfig").cloned().unwrap_or(Value::Null);
        let resp = self
            .call(&client_config, body, TIMEOUT)
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !(200..300).contains(&resp.status) {
            return Err(failed(format!(
                "the server responded with the status code {} but did not return more information",
                resp.status
            )));
        }
        let converted = conversion::converted_objects(&review, &resp.body).map_err(failed)?;
        conversion::apply_converted(objects, &indexes, converted, desired, input, list)
    }
}

/// The registry's conversion webhook caller: a [`ServiceResolver`] over the registry, held
/// weakly (the registry holds this).
pub(crate) struct RegistryConverter(pub(crate) std::sync::Weak<crate::registry::Registry>);

impl crate::registry::conversion::WebhookConverter for RegistryConverter {
    fn convert<'a>(
        &'a self,
        conversion: &'a Value,
        objects: &'a mut [Value],
        desired: &'a str,
        input: &'a str,
        list: bool,
    ) -> futures::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let registry = self.0.upgrade().ok_or("the server is shutting down")?;
            ServiceResolver::new(registry)
                .convert(conversion, objects, desired, input, list)
                .await
        })
    }
}
