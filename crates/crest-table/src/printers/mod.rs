//! The built-in kinds' printers (upstream's `pkg/printers/internalversion`), one module per kind
//! or group. Each is a [`Printer`]: static column definitions and a function from the stored
//! object to its row's cells. Column descriptions are the published field documentation, as
//! upstream takes them from the types' `SwaggerDoc`.

mod coordination;
mod core;
mod events;
mod network;
mod rbac;
mod secret;

pub use self::coordination::LEASE;
pub use self::core::{CONFIGMAP, NAMESPACE};
pub use self::events::{EVENT, EVENTS_V1_EVENT};
pub use self::network::{ENDPOINTS, ENDPOINTSLICE, SERVICE};
pub use self::rbac::{CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING};
pub use self::secret::{SECRET, SERVICEACCOUNT};

use crate::{human_age_at, Cell, ColumnDef, CREATION_TIMESTAMP_DESCRIPTION, NAME_DESCRIPTION};
use serde_json::Value;
use std::borrow::Cow;

/// The `Name` column every printer starts with.
pub const NAME: ColumnDef = ColumnDef {
    name: "Name",
    column_type: "string",
    format: "name",
    description: NAME_DESCRIPTION,
    priority: 0,
};

/// The `Age` column (the object's creationTimestamp, printed as a duration).
pub const AGE: ColumnDef = ColumnDef {
    name: "Age",
    column_type: "string",
    format: "",
    description: CREATION_TIMESTAMP_DESCRIPTION,
    priority: 0,
};

/// A column of type string with no format.
pub const fn string_column(
    name: &'static str,
    description: &'static str,
    priority: i64,
) -> ColumnDef {
    ColumnDef {
        name,
        column_type: "string",
        format: "",
        description,
        priority,
    }
}

/// The name cell.
pub fn name(obj: &Value) -> Cell<'_> {
    Cell::Str(Cow::Borrowed(crest_api::meta::name(obj)))
}

/// The Age cell: `translateTimestampSince(creationTimestamp)`.
pub fn age(obj: &Value, now_ms: i64) -> Cell<'static> {
    since(crest_api::meta::meta_str(obj, "creationTimestamp"), now_ms)
}

/// `translateTimestampSince`: a duration since an RFC 3339 timestamp, `<unknown>` when unset.
pub fn since(ts: &str, now_ms: i64) -> Cell<'static> {
    Cell::Str(Cow::Owned(human_age_at(ts, now_ms)))
}

/// The string at a JSON pointer (empty when absent or not a string).
pub fn str_at<'a>(obj: &'a Value, pointer: &str) -> Cell<'a> {
    Cell::Str(Cow::Borrowed(
        obj.pointer(pointer).and_then(Value::as_str).unwrap_or(""),
    ))
}

/// The number of entries of the map at `field` (0 when absent).
pub fn map_len(obj: &Value, field: &str) -> usize {
    obj.get(field)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len())
}
