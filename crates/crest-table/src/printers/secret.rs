//! core/v1 printers: Secret, ServiceAccount.

use super::{age, map_len, name, str_at, string_column, AGE, NAME};
use crate::{Cell, Printer};
use serde_json::Value;

/// The Secret `type` field's documentation.
const SECRET_TYPE_DESCRIPTION: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
/// The Secret `data` field's documentation.
const SECRET_DATA_DESCRIPTION: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
/// The ServiceAccount `secrets` field's documentation.
const SERVICEACCOUNT_SECRETS_DESCRIPTION: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";

/// Name, Type, Data (the number of keys in data), Age.
pub static SECRET: Printer = Printer {
    columns: &[
        NAME,
        string_column("Type", SECRET_TYPE_DESCRIPTION, 0),
        string_column("Data", SECRET_DATA_DESCRIPTION, 0),
        AGE,
    ],
    cells: secret_cells,
};

fn secret_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    vec![
        name(obj),
        str_at(obj, "/type"),
        Cell::Int(map_len(obj, "data") as i64),
        age(obj, now_ms),
    ]
}

/// Name, Secrets (the number of secret references), Age.
pub static SERVICEACCOUNT: Printer = Printer {
    columns: &[
        NAME,
        string_column("Secrets", SERVICEACCOUNT_SECRETS_DESCRIPTION, 0),
        AGE,
    ],
    cells: serviceaccount_cells,
};

fn serviceaccount_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    let secrets = obj
        .get("secrets")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    vec![name(obj), Cell::Int(secrets as i64), age(obj, now_ms)]
}
