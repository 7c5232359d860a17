//! The naming, establishing and API-approval controllers of apiextensions-apiserver, as pure
//! functions: which names of a CRD are accepted (no conflict with other CRDs of the same group),
//! the NamesAccepted / Established conditions, and the stored-versions bookkeeping the CRD
//! strategy does on writes.

use crate::conditions::{self, ESTABLISHED, NAMES_ACCEPTED, TRUE};
use crate::helpers::{api_approval_state, is_protected_community_group, ApprovalState};
use crate::types::{
    parse, CustomResourceDefinition, CustomResourceDefinitionCondition,
    CustomResourceDefinitionNames,
};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// `equalToAcceptedOrFresh`: a name is fine if it is already ours or nobody in the group uses it.
fn equal_to_accepted_or_fresh(
    requested: &str,
    accepted: &str,
    used: &HashSet<String>,
) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        return Ok(());
    }
    Err(format!("{requested:?} is already in use"))
}

/// Go's `utilerrors.NewAggregate(errs).Error()`: one message alone, several deduplicated in `[a, b]`.
fn aggregate(msgs: &[String]) -> String {
    let mut seen = Vec::<&str>::new();
    for m in msgs {
        if !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    if seen.len() == 1 {
        seen[0].to_string()
    } else {
        format!("[{}]", seen.join(", "))
    }
}

/// The naming controller's `calculateNamesAndConditions`: given the CRD and the accepted names of
/// every CRD of its group (itself included, as upstream's lister), returns the new accepted
/// names, the NamesAccepted condition and the Established condition.
///
/// Each requested name is taken if it equals the current accepted one or is unused; otherwise
/// the accepted one stays and the condition says why. Resources (plural, singular, short names)
/// and kinds (kind, listKind) are separate namespaces.
pub(crate) fn calculate_names_and_conditions(
    crd: &CustomResourceDefinition,
    group_accepted: &[CustomResourceDefinitionNames],
) -> (
    CustomResourceDefinitionNames,
    CustomResourceDefinitionCondition,
    CustomResourceDefinitionCondition,
) {
    let mut resources = HashSet::new();
    let mut kinds = HashSet::new();
    for n in group_accepted {
        resources.insert(n.plural.clone());
        resources.insert(n.singular.clone());
        resources.extend(n.short_names.iter().cloned());
        kinds.insert(n.kind.clone());
        kinds.insert(n.list_kind.clone());
    }

    let requested = &crd.spec.names;
    let accepted = crd.accepted_names();
    let mut new_names = accepted.clone();
    let mut cond =
        CustomResourceDefinitionCondition::new(NAMES_ACCEPTED, conditions::UNKNOWN, "", "");
    let mut conflict = |reason: &str, msg: String| {
        cond.status = conditions::FALSE.to_string();
        cond.reason = reason.to_string();
        cond.message = msg;
    };

    match equal_to_accepted_or_fresh(&requested.plural, &accepted.plural, &resources) {
        Ok(()) => new_names.plural = requested.plural.clone(),
        Err(e) => conflict("PluralConflict", e),
    }
    match equal_to_accepted_or_fresh(&requested.singular, &accepted.singular, &resources) {
        Ok(()) => new_names.singular = requested.singular.clone(),
        Err(e) => conflict("SingularConflict", e),
    }
    if requested.short_names != accepted.short_names {
        let errs: Vec<String> = requested
            .short_names
            .iter()
            .filter(|s| !accepted.short_names.contains(s))
            .filter_map(|s| equal_to_accepted_or_fresh(s, "", &resources).err())
            .collect();
        if errs.is_empty() {
            new_names.short_names = requested.short_names.clone();
        } else {
            conflict("ShortNamesConflict", aggregate(&errs));
        }
    }
    match equal_to_accepted_or_fresh(&requested.kind, &accepted.kind, &kinds) {
        Ok(()) => new_names.kind = requested.kind.clone(),
        Err(e) => conflict("KindConflict", e),
    }
    match equal_to_accepted_or_fresh(&requested.list_kind, &accepted.list_kind, &kinds) {
        Ok(()) => new_names.list_kind = requested.list_kind.clone(),
        Err(e) => conflict("ListKindConflict", e),
    }
    new_names.categories = requested.categories.clone();

    if cond.status == conditions::UNKNOWN {
        cond = conditions::names_accepted();
    }

    // Established starts False and only the establishing controller makes it True; once True it
    // stays, even if later name changes conflict.
    let mut established = crd
        .find_condition(ESTABLISHED)
        .cloned()
        .unwrap_or_else(conditions::established_not_accepted);
    if established.status != TRUE && cond.status == TRUE {
        established = conditions::established_installing();
    }
    (new_names, cond, established)
}

/// Runs the naming controller and then the establishing controller on `crd`, with `others` the
/// other CRDs (any group; those of other groups and any copy of `crd` itself are ignored).
/// Returns whether the status changed. `now` stamps transition times.
pub(crate) fn accept_and_establish_typed(
    crd: &mut CustomResourceDefinition,
    others: &[CustomResourceDefinition],
    now: &str,
) -> bool {
    let before = crd.status.clone();
    let name = crd.name().to_string();
    let group = crd.spec.group.clone();

    // Naming controller: nothing to do when the accepted names already are the requested ones.
    if crd.spec.names != crd.accepted_names() {
        let mut group_accepted = vec![crd.accepted_names()];
        group_accepted.extend(
            others
                .iter()
                .filter(|o| o.spec.group == group && o.name() != name)
                .map(CustomResourceDefinition::accepted_names),
        );
        let (names, naming, established) = calculate_names_and_conditions(crd, &group_accepted);
        let unchanged = crd.accepted_names() == names
            && crd
                .find_condition(NAMES_ACCEPTED)
                .is_some_and(|c| c.equivalent(&naming));
        if !unchanged {
            let status = crd.status.get_or_insert_with(Default::default);
            status.accepted_names = names;
            conditions::set_crd_condition(status, naming, now);
            conditions::set_crd_condition(status, established, now);
        }
    }

    // Establishing controller.
    if crd.is_condition_true(NAMES_ACCEPTED) && !crd.is_condition_true(ESTABLISHED) {
        let status = crd.status.get_or_insert_with(Default::default);
        conditions::set_crd_condition(status, conditions::established(), now);
    }

    // API approval controller (only groups under k8s.io / kubernetes.io).
    if let Some(cond) = api_approval_condition(crd) {
        let same = crd
            .find_condition(conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT)
            .is_some_and(|c| c.equivalent(&cond));
        if !same {
            let status = crd.status.get_or_insert_with(Default::default);
            conditions::set_crd_condition(status, cond, now);
        }
    }
    crd.status != before
}

/// [`accept_and_establish_typed`] on a CRD held as JSON: writes `status.acceptedNames` and
/// `status.conditions`, leaving every other field as it was. A CRD that does not decode is left
/// alone (it could not have been stored).
pub(crate) fn accept_and_establish_at(obj: &mut Value, others: &[Value], now: &str) {
    let Ok(mut crd) = parse(obj) else { return };
    // Only CRDs of the same group can conflict; skip decoding the rest.
    let group = crd.spec.group.clone();
    let others: Vec<CustomResourceDefinition> = others
        .iter()
        .filter(|o| o.pointer("/spec/group").and_then(Value::as_str) == Some(group.as_str()))
        .filter_map(|o| parse(o).ok())
        .collect();
    if !accept_and_establish_typed(&mut crd, &others, now) {
        return;
    }
    let Some(status) = crd.status else { return };
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let slot = root
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Some(m) = slot.as_object_mut() {
        if let Ok(names) = serde_json::to_value(&status.accepted_names) {
            m.insert("acceptedNames".into(), names);
        }
        if let Ok(conds) = serde_json::to_value(&status.conditions) {
            m.insert("conditions".into(), conds);
        }
        // Upstream's status always carries storedVersions (no omitempty).
        m.entry("storedVersions")
            .or_insert_with(|| Value::Array(vec![]));
    }
}

/// What the server calls on create (synchronously, so the API is served when the create returns)
/// and from its controller loop: accept names, establish, and record the stored version.
pub fn accept_and_establish(obj: &mut Value, others: &[Value]) {
    // The create path resets status before calling this; upstream's PrepareForCreate records the
    // storage version at that point, so do the same here (idempotent on later passes).
    add_stored_version(obj);
    accept_and_establish_at(obj, others, &crest_api::meta::now_rfc3339());
}

/// The KubernetesAPIApprovalPolicyConformant condition for CRDs of protected groups
/// (`*.k8s.io`, `*.kubernetes.io`); `None` for every other group.
pub(crate) fn api_approval_condition(
    crd: &CustomResourceDefinition,
) -> Option<CustomResourceDefinitionCondition> {
    if !is_protected_community_group(&crd.spec.group) {
        return None;
    }
    let annotation = crd
        .metadata
        .get("annotations")
        .and_then(|a| a.get(crate::helpers::API_APPROVED_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or("");
    let (state, reason) = api_approval_state(annotation);
    let (status, why) = match state {
        ApprovalState::Invalid => (conditions::FALSE, "InvalidAnnotation"),
        ApprovalState::Missing => (conditions::FALSE, "MissingAnnotation"),
        ApprovalState::Approved => (conditions::TRUE, "ApprovedAnnotation"),
        ApprovalState::Bypassed => (conditions::FALSE, "UnapprovedAnnotation"),
    };
    Some(CustomResourceDefinitionCondition::new(
        conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT,
        status,
        why,
        &reason,
    ))
}

/// The CRD strategy's stored-versions bookkeeping (PrepareForCreate/PrepareForUpdate): the
/// storage version is appended to `status.storedVersions` if missing.
pub fn add_stored_version(obj: &mut Value) {
    let storage = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("storage") == Some(&Value::Bool(true)))
        })
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let Some(storage) = storage else { return };
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let status = root
        .entry("status")
        .or_insert_with(|| Value::Object(Map::new()));
    if !status.is_object() {
        *status = Value::Object(Map::new());
    }
    let Some(status) = status.as_object_mut() else {
        return;
    };
    let stored = status
        .entry("storedVersions")
        .or_insert_with(|| Value::Array(vec![]));
    if !stored.is_array() {
        *stored = Value::Array(vec![]);
    }
    if let Some(list) = stored.as_array_mut() {
        if !list.iter().any(|v| v.as_str() == Some(storage.as_str())) {
            list.push(Value::String(storage));
        }
    }
}

#[cfg(test)]
/// PrepareForCreate of the CRD strategy: the client's status is discarded and the storage version
/// recorded. (Generation is the server's business.)
pub(crate) fn prepare_for_create(obj: &mut Value) {
    if let Some(root) = obj.as_object_mut() {
        root.insert("status".into(), Value::Object(Map::new()));
    }
    add_stored_version(obj);
}

#[cfg(test)]
/// PrepareForUpdate of the CRD strategy: the status is the old one (status has its own
/// subresource), plus the new storage version if it was never stored.
pub(crate) fn prepare_for_update(new: &mut Value, old: &Value) {
    if let Some(root) = new.as_object_mut() {
        match old.get("status") {
            Some(s) => root.insert("status".into(), s.clone()),
            None => root.remove("status"),
        };
    }
    add_stored_version(new);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T0: &str = "2021-06-20T07:35:27Z";
    const T1: &str = "2021-06-20T08:00:00Z";

    fn crd(plural: &str, kind: &str, short: &[&str]) -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.stable.example.com")},
            "spec": {
                "group": "stable.example.com",
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind,
                          "listKind": format!("{kind}List"), "shortNames": short},
                "versions": [{"name": "v1", "served": true, "storage": true}],
            },
            "status": {},
        })
    }

    fn accepted(mut v: Value, others: &[Value]) -> Value {
        accept_and_establish_at(&mut v, others, T0);
        v
    }

    #[test]
    fn accepts_fresh_names_and_establishes() {
        let mut seed = crate::tests::seed_crd();
        crate::defaults::set_defaults(&mut seed);
        let v = accepted(seed, &[]);
        assert_eq!(
            v["status"]["acceptedNames"],
            json!({"plural": "crontabs", "singular": "crontab", "shortNames": ["ct"], "kind": "CronTab", "listKind": "CronTabList"})
        );
        assert_eq!(
            v["status"]["conditions"],
            json!([
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": T0, "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": T0, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
            ])
        );
        assert!(conditions::is_established(&v));
        assert_eq!(crate::helpers::accepted_kind(&v), Some("CronTab"));
        assert_eq!(crate::helpers::accepted_plural(&v), Some("crontabs"));
    }

    #[test]
    fn plural_conflict() {
        let first = accepted(crd("crontabs", "CronTab", &[]), &[]);
        let mut second = crd("crontabs", "CronTab2", &[]);
        second["metadata"]["name"] = json!("crontabs2.stable.example.com");
        second["spec"]["names"]["singular"] = json!("crontab2");
        let v = accepted(second, &[first]);
        let c = conditions::find_condition(&v, NAMES_ACCEPTED).unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
            ("False", "PluralConflict", "\"crontabs\" is already in use")
        );
        let e = conditions::find_condition(&v, ESTABLISHED).unwrap();
        assert_eq!(
            (e.status.as_str(), e.reason.as_str(), e.message.as_str()),
            ("False", "NotAccepted", "not all names are accepted")
        );
        // The conflicting name is not accepted; the free ones are.
        assert_eq!(v["status"]["acceptedNames"]["plural"], "");
        assert_eq!(v["status"]["acceptedNames"]["kind"], "CronTab2");
        assert!(!conditions::is_established(&v));
    }

    #[test]
    fn later_conflicts_win_the_reason() {
        let first = accepted(crd("crontabs", "CronTab", &["ct"]), &[]);
        let mut second = crd("crontabs", "CronTab", &["ct"]);
        second["metadata"]["name"] = json!("other.stable.example.com");
        let v = accepted(second, &[first]);
        let c = conditions::find_condition(&v, NAMES_ACCEPTED).unwrap();
        assert_eq!(c.reason, "ListKindConflict");
        assert_eq!(c.message, "\"CronTabList\" is already in use");
    }

    fn named(plural: &str, singular: &str, kind: &str, list_kind: &str, short: &[&str]) -> Value {
        let mut v = crd(plural, kind, short);
        v["metadata"]["name"] = json!(format!("{plural}.stable.example.com"));
        v["spec"]["names"]["singular"] = json!(singular);
        v["spec"]["names"]["listKind"] = json!(list_kind);
        v
    }

    #[test]
    fn each_conflict_reason() {
        let first = accepted(
            named(
                "crontabs",
                "crontab",
                "CronTab",
                "CronTabList",
                &["ct", "cts"],
            ),
            &[],
        );
        let cases = [
            (
                named("crontab", "other", "Other", "OtherList", &[]),
                "PluralConflict",
                "\"crontab\" is already in use",
            ),
            (
                named("other", "ct", "Other", "OtherList", &[]),
                "SingularConflict",
                "\"ct\" is already in use",
            ),
            (
                named("other", "other", "Other", "OtherList", &["crontabs"]),
                "ShortNamesConflict",
                "\"crontabs\" is already in use",
            ),
            (
                named("other", "other", "Other", "OtherList", &["ct", "x", "cts"]),
                "ShortNamesConflict",
                "[\"ct\" is already in use, \"cts\" is already in use]",
            ),
            (
                named("other", "other", "CronTabList", "OtherList", &[]),
                "KindConflict",
                "\"CronTabList\" is already in use",
            ),
            (
                named("other", "other", "Other", "CronTab", &[]),
                "ListKindConflict",
                "\"CronTab\" is already in use",
            ),
        ];
        for (v, reason, msg) in cases {
            let v = accepted(v, std::slice::from_ref(&first));
            let c = conditions::find_condition(&v, NAMES_ACCEPTED).unwrap();
            assert_eq!(
                (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
                ("False", reason, msg)
            );
        }
    }

    #[test]
    fn other_groups_do_not_conflict() {
        let mut other = accepted(crd("crontabs", "CronTab", &["ct"]), &[]);
        other["spec"]["group"] = json!("other.example.com");
        other["metadata"]["name"] = json!("crontabs.other.example.com");
        let v = accepted(crd("crontabs", "CronTab", &["ct"]), &[other]);
        assert!(conditions::is_names_accepted(&v));
    }

    #[test]
    fn established_stays_true_and_times_are_kept() {
        let v = accepted(crd("crontabs", "CronTab", &[]), &[]);
        // Rename the short names to one another CRD holds: NamesAccepted goes False, Established stays.
        let mut holder = crd("holders", "Holder", &["ct"]);
        holder["metadata"]["name"] = json!("holders.stable.example.com");
        let holder = accepted(holder, std::slice::from_ref(&v));
        let mut changed = v.clone();
        changed["spec"]["names"]["shortNames"] = json!(["ct"]);
        accept_and_establish_at(&mut changed, &[holder], T1);
        let n = conditions::find_condition(&changed, NAMES_ACCEPTED).unwrap();
        assert_eq!(
            (n.status.as_str(), n.reason.as_str()),
            ("False", "ShortNamesConflict")
        );
        assert_eq!(n.last_transition_time.as_deref(), Some(T1));
        let e = conditions::find_condition(&changed, ESTABLISHED).unwrap();
        assert_eq!(
            (e.status.as_str(), e.last_transition_time.as_deref()),
            ("True", Some(T0))
        );
        assert_eq!(changed["status"]["acceptedNames"].get("shortNames"), None);
        // Unchanged spec: nothing moves.
        let mut again = v.clone();
        accept_and_establish_at(&mut again, &[], T1);
        assert_eq!(again, v);
    }

    #[test]
    fn api_approval_condition_for_protected_groups() {
        let mut v = crd("widgets", "Widget", &[]);
        v["spec"]["group"] = json!("widgets.k8s.io");
        v["metadata"]["name"] = json!("widgets.widgets.k8s.io");
        let out = accepted(v.clone(), &[]);
        let c =
            conditions::find_condition(&out, conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT)
                .unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("False", "MissingAnnotation")
        );
        assert_eq!(c.message, "protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111");
        v["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/78458"});
        let out = accepted(v, &[]);
        let c =
            conditions::find_condition(&out, conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT)
                .unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "ApprovedAnnotation")
        );
        assert_eq!(
            c.message,
            "approved in https://github.com/kubernetes/kubernetes/pull/78458"
        );
        assert!(conditions::find_condition(
            &accepted(crd("a", "A", &[]), &[]),
            conditions::KUBERNETES_API_APPROVAL_POLICY_CONFORMANT
        )
        .is_none());
    }

    #[test]
    fn stored_versions_bookkeeping() {
        let mut v = json!({"spec": {"versions": [{"name": "v1", "storage": false}, {"name": "v2", "storage": true}]}, "status": {"storedVersions": ["v1"]}});
        add_stored_version(&mut v);
        assert_eq!(v["status"]["storedVersions"], json!(["v1", "v2"]));
        add_stored_version(&mut v);
        assert_eq!(v["status"]["storedVersions"], json!(["v1", "v2"]));

        let mut created = v.clone();
        prepare_for_create(&mut created);
        assert_eq!(created["status"], json!({"storedVersions": ["v2"]}));

        let old = json!({"status": {"storedVersions": ["v0"], "acceptedNames": {"plural": "x", "kind": "X"}}});
        let mut new = v.clone();
        new["status"] = json!({"storedVersions": []});
        prepare_for_update(&mut new, &old);
        assert_eq!(new["status"]["storedVersions"], json!(["v0", "v2"]));
        assert_eq!(new["status"]["acceptedNames"]["plural"], "x");
    }

    #[test]
    fn server_entry_point_records_storage_version() {
        let mut v = crate::tests::seed_crd();
        v["status"] = json!({});
        accept_and_establish(&mut v, &[]);
        assert_eq!(v["status"]["storedVersions"], json!(["v1"]));
        assert!(conditions::is_established(&v));
    }
}
