//! core/v1 printers: Namespace, ConfigMap.

use super::{age, map_len, name, str_at, string_column, AGE, NAME};
use crate::{Cell, ColumnDef, Printer};
use serde_json::Value;

/// The `data` field's documentation (the ConfigMap printer's Data column describes it).
const CONFIGMAP_DATA_DESCRIPTION: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";

/// Name, Status (phase), Age.
pub static NAMESPACE: Printer = Printer {
    columns: &[
        NAME,
        string_column("Status", "The status of the namespace", 0),
        AGE,
    ],
    cells: namespace_cells,
};

fn namespace_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    vec![name(obj), str_at(obj, "/status/phase"), age(obj, now_ms)]
}

/// Name, Data (the number of keys in data and binaryData), Age.
pub static CONFIGMAP: Printer = Printer {
    columns: &[NAME, DATA, AGE],
    cells: configmap_cells,
};

const DATA: ColumnDef = string_column("Data", CONFIGMAP_DATA_DESCRIPTION, 0);

fn configmap_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    let keys = map_len(obj, "data") + map_len(obj, "binaryData");
    vec![name(obj), Cell::Int(keys as i64), age(obj, now_ms)]
}
