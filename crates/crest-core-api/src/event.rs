//! core/v1 Event and events.k8s.io/v1 Event: `ValidateEventCreate` / `ValidateEventUpdate`
//! (upstream `pkg/apis/core/validation/events.go`) and the conversion between the two views
//! (upstream `pkg/apis/events/v1/conversion.go` through the internal type).
//!
//! Objects are stored as core/v1 Events; validation reads the stored form and reports the
//! internal type's field names, as upstream does whichever version the request used
//! (`reportingController`, `involvedObject.namespace`, `namespace`, ...).

use crest_api::validation::{is_dns1123_subdomain, is_qualified_name, FIELD_IMMUTABLE};
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{Map, Value};

pub const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
pub const ACTION_LENGTH_LIMIT: usize = 128;
pub const REASON_LENGTH_LIMIT: usize = 128;
pub const NOTE_LENGTH_LIMIT: usize = 1024;

/// The request's API: core/v1 (lenient, backwards compatible) or events.k8s.io/v1 (strict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestVersion {
    CoreV1,
    EventsV1,
}

fn s<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A time field is set (Go's zero time is absent, null or empty).
fn time_set(obj: &Value, pointer: &str) -> bool {
    match obj.pointer(pointer) {
        None | Some(Value::Null) => false,
        Some(Value::String(t)) => !t.is_empty() && !t.starts_with("0001-01-01T00:00:00"),
        Some(_) => true,
    }
}

fn namespace(obj: &Value) -> &str {
    s(obj, "/metadata/namespace")
}

/// `legacyValidateEvent` over a stored (core/v1) Event.
fn legacy(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let ns = namespace(obj);
    let involved_ns = s(obj, "/involvedObject/namespace");
    let involved_path = FieldPath::new("involvedObject").child("namespace");
    let mismatch = || {
        FieldError::invalid(
            &involved_path,
            involved_ns,
            "does not match event.namespace",
        )
    };
    if !time_set(obj, "/eventTime") {
        if involved_ns.is_empty() {
            if !ns.is_empty() && ns != "default" {
                errs.push(mismatch());
            }
        } else if ns != involved_ns {
            errs.push(mismatch());
        }
    } else {
        if involved_ns.is_empty() && ns != "default" && ns != "kube-system" {
            errs.push(mismatch());
        }
        let controller = s(obj, "/reportingComponent");
        let path = FieldPath::new("reportingController");
        if controller.is_empty() {
            errs.push(FieldError::required(&path, ""));
        }
        for m in is_qualified_name(controller) {
            errs.push(FieldError::invalid(&path, controller, m));
        }
        let limited =
            |errs: &mut FieldErrors, field: &str, pointer: &str, limit: usize, required: bool| {
                let v = s(obj, pointer);
                let path = FieldPath::new(field);
                if required && v.is_empty() {
                    errs.push(FieldError::required(&path, ""));
                }
                if v.len() > limit {
                    errs.push(FieldError::invalid(
                        &path,
                        "",
                        format!("can have at most {limit} characters"),
                    ));
                }
            };
        limited(
            &mut errs,
            "reportingInstance",
            "/reportingInstance",
            REPORTING_INSTANCE_LENGTH_LIMIT,
            true,
        );
        limited(&mut errs, "action", "/action", ACTION_LENGTH_LIMIT, true);
        limited(&mut errs, "reason", "/reason", REASON_LENGTH_LIMIT, true);
        limited(&mut errs, "message", "/message", NOTE_LENGTH_LIMIT, false);
    }
    for m in is_dns1123_subdomain(ns) {
        errs.push(FieldError::invalid(&FieldPath::new("namespace"), ns, m));
    }
    errs
}

/// `validateV1EventSeries`.
fn series(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    if let Some(series) = obj.get("series").filter(|v| !v.is_null()) {
        if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            errs.push(FieldError::invalid(
                &FieldPath::new("series").child("count"),
                "",
                "should be at least 2",
            ));
        }
        if !time_set(series, "/lastObservedTime") {
            errs.push(FieldError::required(
                &FieldPath::new("series").child("lastObservedTime"),
                "",
            ));
        }
    }
    errs
}

/// `ValidateEventCreate` of a stored-form Event written through `version` (the ObjectMeta
/// checks of events.k8s.io/v1 run in the registry with the strategy's name rule).
pub fn validate_create(obj: &Value, version: RequestVersion) -> FieldErrors {
    let mut errs = legacy(obj);
    if version == RequestVersion::CoreV1 {
        return errs;
    }
    errs.extend(series(obj));
    if !time_set(obj, "/eventTime") {
        errs.push(FieldError::required(&FieldPath::new("eventTime"), ""));
    }
    let ty = s(obj, "/type");
    if ty != "Normal" && ty != "Warning" {
        errs.push(FieldError::invalid(
            &FieldPath::new("type"),
            "",
            format!("has invalid value: {ty}"),
        ));
    }
    for (pointer, field) in [
        ("/firstTimestamp", "firstTimestamp"),
        ("/lastTimestamp", "lastTimestamp"),
    ] {
        if time_set(obj, pointer) {
            errs.push(FieldError::invalid(
                &FieldPath::new(field),
                "",
                "needs to be unset",
            ));
        }
    }
    if obj.get("count").and_then(Value::as_i64).unwrap_or(0) != 0 {
        errs.push(FieldError::invalid(
            &FieldPath::new("count"),
            "",
            "needs to be unset",
        ));
    }
    if !s(obj, "/source/component").is_empty() || !s(obj, "/source/host").is_empty() {
        errs.push(FieldError::invalid(
            &FieldPath::new("source"),
            "",
            "needs to be unset",
        ));
    }
    errs
}

/// A field's value for comparison: absent, null and Go's zero value are the same.
fn field_value(obj: &Value, field: &str) -> Value {
    match obj.get(field) {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) if s.is_empty() => Value::Null,
        Some(Value::Object(m)) if m.is_empty() => Value::Null,
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Value::Null,
        Some(v) => v.clone(),
    }
}

/// `ValidateEventUpdate` of stored-form Events written through `version`.
pub fn validate_update(new: &Value, old: &Value, version: RequestVersion) -> FieldErrors {
    let mut errs = legacy(new);
    if version == RequestVersion::CoreV1 {
        return errs;
    }
    if field_value(new, "series") != field_value(old, "series") {
        errs.extend(series(new));
    }
    // Upstream's order (reason is checked twice); reportingController is core/v1's
    // reportingComponent.
    for (stored, field) in [
        ("involvedObject", "involvedObject"),
        ("reason", "reason"),
        ("message", "message"),
        ("source", "source"),
        ("firstTimestamp", "firstTimestamp"),
        ("lastTimestamp", "lastTimestamp"),
        ("count", "count"),
        ("reason", "reason"),
        ("type", "type"),
        ("eventTime", "eventTime"),
        ("action", "action"),
        ("related", "related"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
    ] {
        let (n, o) = (field_value(new, stored), field_value(old, stored));
        if n != o {
            errs.push(FieldError::invalid(
                &FieldPath::new(field),
                n,
                FIELD_IMMUTABLE,
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------------------------
// Conversion and the serialized shape
// ---------------------------------------------------------------------------------------------

/// The fields an events.k8s.io/v1 Event names differently from a core/v1 one
/// (`Convert_v1_Event_To_core_Event` and back): (events.k8s.io/v1, core/v1).
const RENAMED: [(&str, &str); 6] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];
/// reportingController (events.k8s.io/v1, the internal type) is core/v1's reportingComponent.
const REPORTING: (&str, &str) = ("reportingController", "reportingComponent");

fn rename(obj: Value, from_events: bool, api_version: &str) -> Value {
    let Value::Object(mut m) = obj else {
        return obj;
    };
    let mut out = Map::new();
    for (events, core) in RENAMED.iter().chain(std::iter::once(&REPORTING)) {
        let (from, to) = if from_events {
            (events, core)
        } else {
            (core, events)
        };
        if let Some(v) = m.remove(*from) {
            out.insert(to.to_string(), v);
        }
    }
    // A field of the target's name the source type does not have goes (it cannot be there
    // after typed decoding; a stored object written before is read as Go would).
    for (events, core) in RENAMED.iter().chain(std::iter::once(&REPORTING)) {
        m.remove(if from_events { *core } else { *events });
    }
    m.extend(out);
    m.insert("apiVersion".into(), api_version.into());
    m.insert("kind".into(), "Event".into());
    Value::Object(m)
}

/// The stored (core/v1) Event of an events.k8s.io/v1 one.
pub fn to_core_v1(events_v1: Value) -> Value {
    canonical_core_v1(rename(events_v1, true, "v1"))
}

/// The events.k8s.io/v1 Event of a stored (core/v1) one, as Go serializes that type.
pub fn to_events_v1(core_v1: Value) -> Value {
    let mut v = rename(core_v1, false, "events.k8s.io/v1");
    if let Some(m) = v.as_object_mut() {
        shape(
            m,
            &[
                ("regarding", Zero::Object),
                ("deprecatedSource", Zero::Object),
                ("eventTime", Zero::Null),
                ("deprecatedFirstTimestamp", Zero::Null),
                ("deprecatedLastTimestamp", Zero::Null),
            ],
            &[
                "note",
                "reason",
                "type",
                "action",
                "reportingController",
                "reportingInstance",
            ],
            &["deprecatedCount"],
        );
        if let Some(series) = m.get_mut("series").and_then(Value::as_object_mut) {
            // events.k8s.io/v1 EventSeries: count and lastObservedTime are always written.
            series.entry("count").or_insert(0.into());
            series.entry("lastObservedTime").or_insert(Value::Null);
        }
    }
    v
}

/// What Go writes for a field at its zero value.
enum Zero {
    /// A struct: `{}` (omitempty does not apply to structs).
    Object,
    /// metav1.Time / MicroTime: `null`.
    Null,
    /// A string without omitempty: `""`.
    Empty,
}

/// Writes the zero values Go's encoding/json writes and drops the ones `omitempty` drops.
fn shape(
    m: &mut Map<String, Value>,
    always: &[(&str, Zero)],
    omit_str: &[&str],
    omit_int: &[&str],
) {
    for (field, zero) in always {
        let e = m.entry(field.to_string()).or_insert(Value::Null);
        match zero {
            Zero::Object if !e.is_object() => *e = Value::Object(Map::new()),
            Zero::Empty if e.is_null() => *e = "".into(),
            _ => {}
        }
    }
    for f in omit_str {
        if m.get(*f)
            .is_some_and(|v| v.is_null() || v.as_str() == Some(""))
        {
            m.remove(*f);
        }
    }
    for f in omit_int {
        if m.get(*f)
            .is_some_and(|v| v.is_null() || v.as_i64() == Some(0))
        {
            m.remove(*f);
        }
    }
    for f in ["related", "series"] {
        if m.get(f).is_some_and(Value::is_null) {
            m.remove(f);
        }
    }
}

/// A time as Go writes it after reading it: metav1.Time in seconds, MicroTime with six
/// fractional digits, both in UTC (`Z`). Text that does not parse is left as it is.
fn canonical_time(v: &mut Value, micro: bool) {
    let Some(t) = v.as_str().filter(|t| !t.is_empty()) else {
        return;
    };
    if let Ok(parsed) = chrono::DateTime::parse_from_rfc3339(t) {
        let format = if micro {
            chrono::SecondsFormat::Micros
        } else {
            chrono::SecondsFormat::Secs
        };
        *v = parsed
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(format, true)
            .into();
    }
}

/// A core/v1 Event as Go serializes its type: involvedObject and source always written,
/// timestamps as `null` when unset (and in Go's precision when set), reportingComponent and
/// reportingInstance as `""`.
pub fn canonical_core_v1(mut v: Value) -> Value {
    for (pointer, micro) in [
        ("/firstTimestamp", false),
        ("/lastTimestamp", false),
        ("/eventTime", true),
        ("/series/lastObservedTime", true),
    ] {
        if let Some(t) = v.pointer_mut(pointer) {
            canonical_time(t, micro);
        }
    }
    if let Some(m) = v.as_object_mut() {
        shape(
            m,
            &[
                ("involvedObject", Zero::Object),
                ("source", Zero::Object),
                ("firstTimestamp", Zero::Null),
                ("lastTimestamp", Zero::Null),
                ("eventTime", Zero::Null),
                ("reportingComponent", Zero::Empty),
                ("reportingInstance", Zero::Empty),
            ],
            &["message", "reason", "type", "action"],
            &["count"],
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn legacy_core_event_namespace_rules() {
        let ok = json!({"metadata": {"namespace": "ns"}, "involvedObject": {"namespace": "ns"}});
        assert!(validate_create(&ok, RequestVersion::CoreV1).is_empty());
        let other = json!({"metadata": {"namespace": "ns"}, "involvedObject": {"namespace": "x"}});
        assert_eq!(
            msgs(&validate_create(&other, RequestVersion::CoreV1)),
            ["involvedObject.namespace: Invalid value: \"x\": does not match event.namespace"]
        );
        // A cluster-scoped object's events live in default.
        let node =
            json!({"metadata": {"namespace": "default"}, "involvedObject": {"kind": "Node"}});
        assert!(validate_create(&node, RequestVersion::CoreV1).is_empty());
    }

    #[test]
    fn new_style_events_need_reporting_fields() {
        let e = json!({"metadata": {"namespace": "ns"}, "involvedObject": {"namespace": "ns"},
            "eventTime": "2024-01-01T00:00:00.000000Z"});
        let m = msgs(&validate_create(&e, RequestVersion::CoreV1));
        assert_eq!(m[0], "reportingController: Required value");
        assert!(
            m.contains(&"reportingInstance: Required value".to_string()),
            "{m:?}"
        );
        assert!(m.contains(&"action: Required value".to_string()), "{m:?}");
        assert!(m.contains(&"reason: Required value".to_string()), "{m:?}");
    }

    #[test]
    fn strict_create_and_immutable_update() {
        let e = json!({"metadata": {"namespace": "ns"}, "involvedObject": {"namespace": "ns"},
            "eventTime": "2024-01-01T00:00:00.000000Z", "reportingComponent": "a/b",
            "reportingInstance": "i", "action": "A", "reason": "R", "type": "Bogus",
            "count": 3});
        assert_eq!(
            msgs(&validate_create(&e, RequestVersion::EventsV1)),
            [
                "type: Invalid value: \"\": has invalid value: Bogus",
                "count: Invalid value: \"\": needs to be unset"
            ]
        );
        let mut n = e.clone();
        n["reason"] = "Other".into();
        let m = msgs(&validate_update(&n, &e, RequestVersion::EventsV1));
        assert_eq!(
            m,
            ["reason: Invalid value: \"Other\": field is immutable"; 2]
        );
        assert!(validate_update(&n, &e, RequestVersion::CoreV1).is_empty());
    }

    #[test]
    fn views_convert_both_ways() {
        let core = canonical_core_v1(json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "involvedObject": {"kind": "CronTab", "name": "x"}, "message": "hello",
            "source": {"component": "c"}, "count": 2, "reason": "R",
            "firstTimestamp": "2024-01-01T00:00:00Z", "reportingComponent": "ctl"}));
        assert_eq!(core["eventTime"], Value::Null);
        assert_eq!(core["reportingInstance"], "");
        let ev = to_events_v1(core.clone());
        assert_eq!(ev["apiVersion"], "events.k8s.io/v1");
        assert_eq!(ev["regarding"]["name"], "x");
        assert_eq!(ev["note"], "hello");
        assert_eq!(ev["deprecatedSource"]["component"], "c");
        assert_eq!(ev["deprecatedCount"], 2);
        assert_eq!(ev["reportingController"], "ctl");
        assert_eq!(ev["deprecatedLastTimestamp"], Value::Null);
        assert!(ev.get("reportingInstance").is_none());
        assert!(ev.get("involvedObject").is_none());
        assert_eq!(to_core_v1(ev), core);
    }

    #[test]
    fn times_in_go_precision() {
        let v = canonical_core_v1(json!({"firstTimestamp": "2026-11-26T01:12:48.558529+01:00",
            "eventTime": "2026-11-26T01:12:48.5+00:00", "series": {"lastObservedTime": "2026-11-26T01:12:48Z"},
            "lastTimestamp": "not a time"}));
        assert_eq!(v["firstTimestamp"], "2026-11-26T00:12:48Z");
        assert_eq!(v["eventTime"], "2026-11-26T01:12:48.500000Z");
        assert_eq!(
            v["series"]["lastObservedTime"],
            "2026-11-26T01:12:48.000000Z"
        );
        assert_eq!(v["lastTimestamp"], "not a time");
    }
}
