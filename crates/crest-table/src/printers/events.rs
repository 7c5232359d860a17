//! Event printer (upstream `printEvent`), for both views of the stored Events: core/v1 and
//! events.k8s.io/v1 (upstream prints the internal type for both; here each view's field
//! names are read).

use super::{name, since, NAME};
use crate::{Cell, ColumnDef, Printer};
use serde_json::Value;
use std::borrow::Cow;

const fn column(name: &'static str, description: &'static str, priority: i64) -> ColumnDef {
    super::string_column(name, description, priority)
}

/// The columns, described by core/v1 Event's field documentation.
const COLUMNS: &[ColumnDef] = &[
    column(
        "Last Seen",
        "The time at which the most recent occurrence of this event was recorded.",
        0,
    ),
    column(
        "Type",
        "Type of this event (Normal, Warning), new types could be added in the future",
        0,
    ),
    column(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        0,
    ),
    column("Object", "The object that this event is about.", 0),
    column(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
        1,
    ),
    column(
        "Source",
        "The component reporting this event. Should be a short machine understandable string.",
        1,
    ),
    column(
        "Message",
        "A human-readable description of the status of this operation.",
        0,
    ),
    column(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        1,
    ),
    column("Count", "The number of times this event has occurred.", 1),
    ColumnDef {
        priority: 1,
        ..NAME
    },
];

/// Where one view keeps the fields the printer reads.
struct Fields {
    involved: &'static str,
    message: &'static str,
    source: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
    controller: &'static str,
}

const CORE: Fields = Fields {
    involved: "involvedObject",
    message: "message",
    source: "source",
    first: "firstTimestamp",
    last: "lastTimestamp",
    count: "count",
    controller: "reportingComponent",
};

const EVENTS_V1: Fields = Fields {
    involved: "regarding",
    message: "note",
    source: "deprecatedSource",
    first: "deprecatedFirstTimestamp",
    last: "deprecatedLastTimestamp",
    count: "deprecatedCount",
    controller: "reportingController",
};

/// core/v1 Event: Last Seen, Type, Reason, Object, Message; wide: Subobject, Source, First
/// Seen, Count, Name.
pub static EVENT: Printer = Printer {
    columns: COLUMNS,
    cells: core_cells,
};

/// events.k8s.io/v1 Event: the same columns.
pub static EVENTS_V1_EVENT: Printer = Printer {
    columns: COLUMNS,
    cells: events_v1_cells,
};

fn core_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    cells(obj, &CORE, now_ms)
}

fn events_v1_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    cells(obj, &EVENTS_V1, now_ms)
}

fn text<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or("")
}

fn set(ts: &str) -> bool {
    !ts.is_empty() && !ts.starts_with("0001-01-01T00:00:00")
}

fn first_non_empty<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() {
        b
    } else {
        a
    }
}

fn cells<'a>(obj: &'a Value, f: &Fields, now_ms: i64) -> Vec<Cell<'a>> {
    let first_ts = text(obj, f.first);
    let first = if set(first_ts) {
        since(first_ts, now_ms)
    } else {
        since(text(obj, "eventTime"), now_ms)
    };
    let last_ts = text(obj, f.last);
    let mut last = if set(last_ts) {
        since(last_ts, now_ms)
    } else {
        first.clone()
    };
    let mut count = obj.get(f.count).and_then(Value::as_i64).unwrap_or(0);
    match obj.get("series").filter(|s| s.is_object()) {
        Some(series) => {
            last = since(text(series, "lastObservedTime"), now_ms);
            count = series.get("count").and_then(Value::as_i64).unwrap_or(0);
        }
        // Singleton events don't have a count set in the new API.
        None if count == 0 => count = 1,
        None => {}
    }
    let involved = obj.get(f.involved).unwrap_or(&Value::Null);
    let kind = text(involved, "kind").to_lowercase();
    let target = match text(involved, "name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    };
    let source = obj.get(f.source).unwrap_or(&Value::Null);
    let component = first_non_empty(text(source, "component"), text(obj, f.controller));
    let instance = first_non_empty(text(source, "host"), text(obj, "reportingInstance"));
    let source = if instance.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        last,
        Cell::Str(Cow::Borrowed(text(obj, "type"))),
        Cell::Str(Cow::Borrowed(text(obj, "reason"))),
        Cell::Str(Cow::Owned(target)),
        Cell::Str(Cow::Borrowed(text(involved, "fieldPath"))),
        Cell::Str(Cow::Owned(source)),
        Cell::Str(Cow::Borrowed(text(obj, f.message).trim())),
        first,
        Cell::Int(count),
        name(obj),
    ]
}
