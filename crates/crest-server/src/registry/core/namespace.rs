//! core/v1 Namespace (upstream pkg/registry/core/namespace): its resource and strategy.

use crate::registry::resources::ResourceDef;
use crate::registry::strategy::{
    copy_field, generic_delete_step, set_deletion_timestamp, DeleteStep, Strategy,
};
use crate::store::keys::NAMESPACE_PREFIX;
use crest_api::validation::{name_is_dns_label, NameValidator};
use crest_api::{meta, ApiError, ApiResource, GroupResource};
use crest_table::TableStyle;
use serde_json::{json, Value};
use std::sync::Arc;

pub(crate) fn defs() -> Vec<ResourceDef> {
    let api = ApiResource::builtin("", "v1", "namespaces", "Namespace", false)
        .with_short_names(&["ns"])
        .with_subresources(&["finalize", "status"])
        .without_verbs(&["deletecollection"]);
    let mut def = ResourceDef::builtin(
        api,
        NAMESPACE_PREFIX,
        Arc::new(NamespaceStrategy),
        TableStyle::Builtin(&crest_table::printers::NAMESPACE),
        "io.k8s.api.core.v1.Namespace",
    );
    // AddFieldLabelConversionsForNamespace.
    def.field_labels = Some(&[
        ("metadata.name", "metadata.name"),
        ("status.phase", "status.phase"),
    ]);
    vec![def]
}

/// core/v1 Namespace.
pub(crate) struct NamespaceStrategy;

const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn canonicalize_namespace(obj: &mut Value) {
    let name = meta::name(obj).to_string();
    if let Some(m) = meta::meta_mut(obj) {
        let labels = m.entry("labels").or_insert_with(|| json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        if let Some(l) = labels.as_object_mut() {
            l.insert(NAMESPACE_NAME_LABEL.into(), name.into());
        }
    }
}

impl Strategy for NamespaceStrategy {
    fn name_validator(&self) -> NameValidator {
        name_is_dns_label
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn uses_generation(&self) -> bool {
        false
    }
    fn status_subresource(&self) -> bool {
        true
    }
    fn defaults(&self, obj: &mut Value) {
        // SetDefaults_Namespace: the kubernetes.io/metadata.name label.
        canonicalize_namespace(obj);
    }
    fn prepare_create(&self, obj: &mut Value) {
        if let Some(o) = obj.as_object_mut() {
            o.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
            o.insert("status".into(), json!({"phase": "Active"}));
        }
        canonicalize_namespace(obj);
    }
    fn prepare_update(&self, new: &mut Value, old: &Value) {
        copy_field(new, old, "spec");
        copy_field(new, old, "status");
        canonicalize_namespace(new);
    }
    fn delete_step(&self, obj: &mut Value) -> DeleteStep {
        if meta::deletion_timestamp(obj).is_none() {
            // The first DELETE starts termination; the namespace controller empties the namespace.
            set_deletion_timestamp(obj);
            if let Some(o) = obj.as_object_mut() {
                let status = o.entry("status").or_insert_with(|| json!({}));
                if !status.is_object() {
                    *status = json!({});
                }
                if let Some(st) = status.as_object_mut() {
                    st.insert("phase".into(), "Terminating".into());
                }
            }
            return DeleteStep::Mark;
        }
        if spec_finalizers_pending(obj) {
            return DeleteStep::Unchanged;
        }
        generic_delete_step(obj)
    }
    fn custom_delete_preconditions(&self) -> bool {
        true
    }
    fn admit_delete(&self, gr: &GroupResource, name: &str) -> Result<(), ApiError> {
        // NamespaceLifecycle admission: the system namespaces are immortal.
        if IMMORTAL_NAMESPACES.contains(&name) {
            return Err(ApiError::forbidden(
                gr,
                name,
                "this namespace may not be deleted",
            ));
        }
        Ok(())
    }
    fn returns_deleted_object(&self) -> bool {
        true
    }
    fn kube_finalizer_names(&self) -> bool {
        true
    }
    fn finalized(&self, obj: &Value) -> bool {
        meta::finalizers(obj).is_empty() && !spec_finalizers_pending(obj)
    }
}

/// The namespaces NamespaceLifecycle admission never lets be deleted.
pub(crate) const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// Whether a namespace's `spec.finalizers` still lists a finalizer.
fn spec_finalizers_pending(obj: &Value) -> bool {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}
