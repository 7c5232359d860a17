//! CRD status conditions (apiextensions-apiserver's `apihelpers`): types, the upstream reasons
//! and messages, and `SetCRDCondition` semantics (the transition time only moves when the status
//! changes).

use crate::types::{CustomResourceDefinitionCondition, CustomResourceDefinitionStatus};
use crest_api::{aggregate, FieldPath};
use serde_json::{Map, Value};

pub(crate) const ESTABLISHED: &str = "Established";
pub(crate) const NAMES_ACCEPTED: &str = "NamesAccepted";
pub(crate) const NON_STRUCTURAL_SCHEMA: &str = "NonStructuralSchema";
pub(crate) const TERMINATING: &str = "Terminating";
pub(crate) const KUBERNETES_API_APPROVAL_POLICY_CONFORMANT: &str =
    "KubernetesAPIApprovalPolicyConformant";

pub(crate) const TRUE: &str = "True";
pub(crate) const FALSE: &str = "False";
pub(crate) const UNKNOWN: &str = "Unknown";

impl CustomResourceDefinitionCondition {
    /// A condition without a transition time (set when it is applied).
    pub fn new(type_: &str, status: &str, reason: &str, message: &str) -> Self {
        CustomResourceDefinitionCondition {
            type_: type_.to_string(),
            status: status.to_string(),
            last_transition_time: None,
            reason: reason.to_string(),
            message: message.to_string(),
        }
    }

    /// `IsCRDConditionEquivalent`: equal except for the transition time.
    pub fn equivalent(&self, other: &Self) -> bool {
        self.type_ == other.type_
            && self.status == other.status
            && self.reason == other.reason
            && self.message == other.message
    }
}

/// NamesAccepted=True, set by the naming controller when no name conflicts.
pub(crate) fn names_accepted() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        NAMES_ACCEPTED,
        TRUE,
        "NoConflicts",
        "no conflicts found",
    )
}

/// Established=True, set by the establishing controller once the names are accepted.
pub(crate) fn established() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        ESTABLISHED,
        TRUE,
        "InitialNamesAccepted",
        "the initial names have been accepted",
    )
}

/// Established=False while the names are accepted but the API is not served yet.
pub(crate) fn established_installing() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        ESTABLISHED,
        FALSE,
        "Installing",
        "the initial names have been accepted",
    )
}

/// Established=False when a name conflicts before the CRD was ever established.
pub(crate) fn established_not_accepted() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        ESTABLISHED,
        FALSE,
        "NotAccepted",
        "not all names are accepted",
    )
}

#[cfg(test)]
/// Terminating=True set by the DELETE of a CRD (before the finalizer controller starts).
pub(crate) fn terminating_pending() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        TERMINATING,
        TRUE,
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    )
}

#[cfg(test)]
/// Terminating=True while the finalizer controller deletes the custom resources.
pub(crate) fn terminating_in_progress() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        TERMINATING,
        TRUE,
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    )
}

#[cfg(test)]
/// Terminating=False once every custom resource is gone.
pub(crate) fn terminating_completed() -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition::new(
        TERMINATING,
        FALSE,
        "InstanceDeletionCompleted",
        "removed all instances",
    )
}

/// The NonStructuralSchema condition a CRD should carry (the NonStructuralSchema controller's
/// `calculateCondition`): `None` when every version's schema is structural; `Unknown` with reason
/// `StructuralError` when a schema cannot be read as structural at all; otherwise `True` with
/// reason `Violations` and every violation, reported at `spec.versions[i].schema.openAPIV3Schema`.
pub fn non_structural_schema(crd: &Value) -> Option<CustomResourceDefinitionCondition> {
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array)?;
    let mut errs = vec![];
    for (i, v) in versions.iter().enumerate() {
        let Some(schema) = v
            .pointer("/schema/openAPIV3Schema")
            .filter(|s| !s.is_null())
        else {
            continue;
        };
        let path = FieldPath::new("spec")
            .child("versions")
            .index(i)
            .child("schema")
            .child("openAPIV3Schema");
        match crate::schema_validation::structural_violations(schema, &path) {
            Ok(v) => errs.extend(v),
            Err(e) => {
                let name = v.get("name").and_then(Value::as_str).unwrap_or("");
                return Some(CustomResourceDefinitionCondition::new(
                    NON_STRUCTURAL_SCHEMA,
                    UNKNOWN,
                    "StructuralError",
                    &format!("failed to check validation schema for version {name}: {e}"),
                ));
            }
        }
    }
    if errs.is_empty() {
        return None;
    }
    Some(CustomResourceDefinitionCondition::new(
        NON_STRUCTURAL_SCHEMA,
        TRUE,
        "Violations",
        &aggregate(&errs),
    ))
}

/// Brings the NonStructuralSchema condition of a CRD held as JSON up to date at time `now`:
/// set when [`non_structural_schema`] gives one, removed otherwise. Returns whether the CRD
/// changed.
pub(crate) fn update_non_structural_schema_at(obj: &mut Value, now: &str) -> bool {
    let old = find_condition(obj, NON_STRUCTURAL_SCHEMA);
    match (non_structural_schema(obj), old) {
        (None, None) => false,
        (None, Some(_)) => {
            remove_condition(obj, NON_STRUCTURAL_SCHEMA);
            true
        }
        (Some(cond), Some(old)) if cond.equivalent(&old) => false,
        (Some(cond), _) => {
            set_condition_at(obj, cond, now);
            true
        }
    }
}

/// [`update_non_structural_schema_at`] at the current time.
pub fn update_non_structural_schema(obj: &mut Value) -> bool {
    update_non_structural_schema_at(obj, &crest_api::meta::now_rfc3339())
}

/// `SetCRDCondition` on a typed status: a new type is appended; an existing one takes the new
/// status, reason and message, and its transition time becomes `now` only if the status changed
/// (or it had none).
pub(crate) fn set_crd_condition(
    status: &mut CustomResourceDefinitionStatus,
    mut cond: CustomResourceDefinitionCondition,
    now: &str,
) {
    cond.last_transition_time = Some(now.to_string());
    match status.conditions.iter_mut().find(|c| c.type_ == cond.type_) {
        None => status.conditions.push(cond),
        Some(existing) => {
            if existing.status != cond.status
                || existing
                    .last_transition_time
                    .as_deref()
                    .unwrap_or("")
                    .is_empty()
            {
                existing.last_transition_time = cond.last_transition_time;
            }
            existing.status = cond.status;
            existing.reason = cond.reason;
            existing.message = cond.message;
        }
    }
}

/// The `status` map of a CRD held as JSON, created when absent.
fn status_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let root = obj.as_object_mut()?;
    let status = root
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if !status.is_object() {
        *status = Value::Object(Map::new());
    }
    status.as_object_mut()
}

/// [`set_crd_condition`] on a CRD held as JSON, at time `now`; other status fields are untouched.
pub(crate) fn set_condition_at(
    obj: &mut Value,
    cond: CustomResourceDefinitionCondition,
    now: &str,
) {
    let Some(status) = status_mut(obj) else {
        return;
    };
    let conds = status
        .entry("conditions")
        .or_insert_with(|| Value::Array(vec![]));
    if !conds.is_array() {
        *conds = Value::Array(vec![]);
    }
    let Some(list) = conds.as_array_mut() else {
        return;
    };
    let existing = list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(cond.type_.as_str()));
    match existing.and_then(Value::as_object_mut) {
        None => {
            let mut cond = cond;
            cond.last_transition_time = Some(now.to_string());
            if let Ok(v) = serde_json::to_value(&cond) {
                list.push(v);
            }
        }
        Some(c) => {
            let old_status = c.get("status").and_then(Value::as_str).unwrap_or("");
            let old_time = c
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .unwrap_or("");
            if old_status != cond.status || old_time.is_empty() {
                c.insert("lastTransitionTime".into(), Value::String(now.to_string()));
            }
            c.insert("status".into(), Value::String(cond.status));
            // Empty reason/message are omitted on the wire (omitempty).
            for (key, val) in [("reason", cond.reason), ("message", cond.message)] {
                if val.is_empty() {
                    c.remove(key);
                } else {
                    c.insert(key.into(), Value::String(val));
                }
            }
        }
    }
}

/// Sets a condition on a CRD held as JSON at the current time (what the server's strategies and
/// controllers call).
pub fn set_condition(obj: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    set_condition_at(
        obj,
        CustomResourceDefinitionCondition::new(type_, status, reason, message),
        &crest_api::meta::now_rfc3339(),
    );
}

/// `RemoveCRDCondition` on a CRD held as JSON.
pub(crate) fn remove_condition(obj: &mut Value, type_: &str) {
    if let Some(list) = obj
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        list.retain(|c| c.get("type").and_then(Value::as_str) != Some(type_));
    }
}

/// The condition of that type on a CRD held as JSON.
pub(crate) fn find_condition(
    obj: &Value,
    type_: &str,
) -> Option<CustomResourceDefinitionCondition> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
        .and_then(|c| serde_json::from_value(c.clone()).ok())
}

/// `IsCRDConditionTrue` on a CRD held as JSON.
pub(crate) fn is_condition_true(obj: &Value, type_: &str) -> bool {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
        })
        .is_some_and(|c| c.get("status").and_then(Value::as_str) == Some(TRUE))
}

/// Whether the CRD's API may be served (Established=True).
pub fn is_established(obj: &Value) -> bool {
    is_condition_true(obj, ESTABLISHED)
}

pub fn is_names_accepted(obj: &Value) -> bool {
    is_condition_true(obj, NAMES_ACCEPTED)
}

/// Terminating=True: custom resource creates are refused while the CRD is being deleted.
pub fn is_terminating(obj: &Value) -> bool {
    is_condition_true(obj, TERMINATING)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_like_upstream() {
        let mut c = established();
        c.last_transition_time = Some("2021-06-20T07:35:27Z".into());
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"type":"Established","status":"True","lastTransitionTime":"2021-06-20T07:35:27Z","reason":"InitialNamesAccepted","message":"the initial names have been accepted"}"#
        );
    }

    #[test]
    fn typed_set_keeps_time_when_status_unchanged() {
        let mut st = CustomResourceDefinitionStatus::default();
        set_crd_condition(&mut st, established_installing(), "2021-06-20T07:35:27Z");
        set_crd_condition(&mut st, established_not_accepted(), "2021-06-20T07:40:00Z");
        assert_eq!(st.conditions.len(), 1);
        assert_eq!(st.conditions[0].reason, "NotAccepted");
        assert_eq!(
            st.conditions[0].last_transition_time.as_deref(),
            Some("2021-06-20T07:35:27Z")
        );
        set_crd_condition(&mut st, established(), "2021-06-20T07:41:00Z");
        assert_eq!(st.conditions[0].status, "True");
        assert_eq!(
            st.conditions[0].last_transition_time.as_deref(),
            Some("2021-06-20T07:41:00Z")
        );
        set_crd_condition(&mut st, names_accepted(), "2021-06-20T07:42:00Z");
        assert_eq!(st.conditions[1].type_, "NamesAccepted");
    }

    #[test]
    fn value_set_keeps_time_when_status_unchanged() {
        let mut crd = json!({"status": {"storedVersions": ["v1"]}});
        set_condition_at(&mut crd, terminating_pending(), "2021-06-20T07:35:27Z");
        assert_eq!(
            crd["status"]["conditions"][0],
            json!({"type": "Terminating", "status": "True", "lastTransitionTime": "2021-06-20T07:35:27Z",
                   "reason": "InstanceDeletionPending",
                   "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"})
        );
        set_condition_at(&mut crd, terminating_in_progress(), "2021-06-20T07:36:00Z");
        assert_eq!(
            crd["status"]["conditions"][0]["lastTransitionTime"],
            "2021-06-20T07:35:27Z"
        );
        assert_eq!(
            crd["status"]["conditions"][0]["reason"],
            "InstanceDeletionInProgress"
        );
        assert_eq!(
            crd["status"]["conditions"][0]["message"],
            "CustomResource deletion is in progress"
        );
        set_condition_at(&mut crd, terminating_completed(), "2021-06-20T07:37:00Z");
        assert_eq!(
            crd["status"]["conditions"][0]["lastTransitionTime"],
            "2021-06-20T07:37:00Z"
        );
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
        assert!(!is_terminating(&crd));
        assert_eq!(
            find_condition(&crd, TERMINATING).unwrap().reason,
            "InstanceDeletionCompleted"
        );
        remove_condition(&mut crd, TERMINATING);
        assert_eq!(crd["status"]["conditions"], json!([]));
    }

    #[test]
    fn value_helpers() {
        let mut crd = json!({});
        set_condition(
            &mut crd,
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        );
        assert!(is_terminating(&crd));
        let t = crd["status"]["conditions"][0]["lastTransitionTime"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(t.len(), "2021-06-20T07:35:27Z".len());
        assert!(t.ends_with('Z'));
        assert!(!is_established(&crd));
        assert!(!is_names_accepted(&crd));
    }

    #[test]
    fn non_structural_schema_condition() {
        let mut crd = crate::tests::seed_crd();
        assert_eq!(non_structural_schema(&crd), None);
        assert!(!update_non_structural_schema_at(&mut crd, "t1"));

        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
            "properties": {"foo": {"pattern": "abc"}},
        });
        let cond = non_structural_schema(&crd).unwrap();
        assert_eq!(cond.type_, NON_STRUCTURAL_SCHEMA);
        assert_eq!(cond.status, TRUE);
        assert_eq!(cond.reason, "Violations");
        assert_eq!(
            cond.message,
            "[spec.versions[0].schema.openAPIV3Schema.properties[foo].type: Required value: must not be empty for specified object fields, spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root]"
        );
        assert!(update_non_structural_schema_at(&mut crd, "t1"));
        assert_eq!(
            find_condition(&crd, NON_STRUCTURAL_SCHEMA)
                .unwrap()
                .last_transition_time
                .as_deref(),
            Some("t1")
        );
        assert!(!update_non_structural_schema_at(&mut crd, "t2"));

        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"$ref": "#/x"});
        let cond = non_structural_schema(&crd).unwrap();
        assert_eq!(cond.status, UNKNOWN);
        assert_eq!(cond.reason, "StructuralError");
        assert_eq!(
            cond.message,
            "failed to check validation schema for version v1: OpenAPIV3Schema '$ref' is not supported"
        );

        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object"});
        assert!(update_non_structural_schema_at(&mut crd, "t3"));
        assert_eq!(find_condition(&crd, NON_STRUCTURAL_SCHEMA), None);
    }
}
