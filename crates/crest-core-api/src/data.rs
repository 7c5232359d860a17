//! What ConfigMaps and Secrets share: the size limit of their data, the rule for their keys,
//! and the canonical form of base64 values (Secret `data`, ConfigMap `binaryData`).

use base64::Engine;
use crest_api::validation::max_len_error;
use serde_json::{Map, Value};

/// `core.MaxSecretSize`: the most bytes of data a ConfigMap (or Secret) may hold.
pub const MAX_SIZE: usize = 1024 * 1024;

const KEY_FMT: &str = "[-._a-zA-Z0-9]+";

/// apimachinery's `IsConfigMapKey`: the messages for an invalid key (empty when valid).
pub fn config_map_key_errors(key: &str) -> Vec<String> {
    let mut errs = vec![];
    if key.len() > 253 {
        errs.push(max_len_error(253));
    }
    let valid_chars = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if !valid_chars {
        errs.push(format!(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '{KEY_FMT}')"
        ));
    }
    match key {
        "." => errs.push("must not be '.'".into()),
        ".." => errs.push("must not be '..'".into()),
        k if k.starts_with("..") => errs.push("must not start with '..'".into()),
        _ => {}
    }
    errs
}

/// Base64 values as Go writes the bytes it decoded: the standard encoding, without the line
/// breaks the decoder skips (`base64` wraps its output; a canonical re-send of the same bytes
/// must compare equal).
pub fn canonical_base64(values: &mut Map<String, Value>) {
    let b64 = base64::engine::general_purpose::STANDARD;
    for v in values.values_mut() {
        if let Some(text) = v.as_str() {
            if text.contains(['\n', '\r']) {
                if let Ok(bytes) = crest_gofmt::go_base64_decode(text.as_bytes()) {
                    *v = Value::String(b64.encode(bytes));
                }
            }
        }
    }
}
