//! The strategic-merge-patch lookup over the published definitions (upstream's
//! `PatchMetaFromOpenAPI`): a field's `x-kubernetes-patch-strategy` and
//! `x-kubernetes-patch-merge-key`, `items` for list elements and `additionalProperties` for map
//! values.

use crate::typed::resolve;
use crest_strategicpatch::{FieldMeta, PatchMeta};
use serde_json::{Map, Value};

/// A node of a built-in definition.
#[derive(Clone, Copy)]
pub struct DefinitionMeta {
    defs: &'static Map<String, Value>,
    schema: &'static Value,
}

/// The lookup for the built-in definition `definition` (e.g. `io.k8s.api.core.v1.Service`).
pub fn patch_meta(definition: &str) -> Option<DefinitionMeta> {
    let defs = crate::builtin_v3();
    Some(DefinitionMeta {
        defs,
        schema: defs.get(definition)?,
    })
}

impl PatchMeta for DefinitionMeta {
    fn field(&self, name: &str) -> Option<(Self, FieldMeta)> {
        let own = resolve(self.defs, self.schema)?;
        let property = own.get("properties")?.get(name)?;
        let fm = FieldMeta::parse(
            property
                .get("x-kubernetes-patch-strategy")
                .and_then(Value::as_str),
            property
                .get("x-kubernetes-patch-merge-key")
                .and_then(Value::as_str),
        );
        Some((
            DefinitionMeta {
                defs: self.defs,
                schema: property,
            },
            fm,
        ))
    }

    fn elements(&self) -> Option<Self> {
        let own = resolve(self.defs, self.schema)?;
        let schema = own
            .get("items")
            .or_else(|| own.get("additionalProperties").filter(|a| a.is_object()))?;
        Some(DefinitionMeta {
            defs: self.defs,
            schema,
        })
    }
}

/// Applies a strategic merge patch to an object of the built-in definition `definition`.
pub fn strategic_merge(
    definition: &str,
    original: &Value,
    patch: &Value,
) -> Result<Value, crest_strategicpatch::PatchError> {
    match patch_meta(definition) {
        Some(meta) => crest_strategicpatch::apply(original, patch, &meta),
        None => crest_strategicpatch::apply(original, patch, &crest_strategicpatch::NoMeta),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn published_patch_strategies_drive_the_merge() {
        let svc = json!({"metadata": {"finalizers": ["a"], "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "1"}
        ]}, "spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]}});
        let patch = json!({
            "metadata": {"finalizers": ["b"], "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "p", "uid": "2"}
            ]},
            "spec": {"$setElementOrder/ports": [{"port": 80}, {"port": 443}],
                     "ports": [{"port": 443, "targetPort": 8443}]},
        });
        let got = strategic_merge("io.k8s.api.core.v1.Service", &svc, &patch).expect("merges");
        // finalizers merge as a set; a new element goes before the server-only ones
        // (mergeSortedSlice).
        assert_eq!(got["metadata"]["finalizers"], json!(["b", "a"]));
        assert_eq!(
            got["metadata"]["ownerReferences"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(
            got["spec"]["ports"],
            json!([{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP", "targetPort": 8443}])
        );
    }
}
