//! coordination.k8s.io/v1 printers: Lease (upstream `printLease`).

use super::{age, name, str_at, string_column, AGE, NAME};
use crate::{Cell, Printer};
use serde_json::Value;

/// `LeaseSpec.holderIdentity`'s documentation (the Holder column describes it).
const HOLDER_DESCRIPTION: &str =
    "holderIdentity contains the identity of the holder of a current lease.";

/// Name, Holder (spec.holderIdentity, empty when unset), Age.
pub static LEASE: Printer = Printer {
    columns: &[NAME, string_column("Holder", HOLDER_DESCRIPTION, 0), AGE],
    cells: lease_cells,
};

fn lease_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    vec![
        name(obj),
        str_at(obj, "/spec/holderIdentity"),
        age(obj, now_ms),
    ]
}
