//! core/v1 Secret: v1 defaulting and conversion (`SetDefaults_Secret`,
//! `Convert_v1_Secret_To_core_Secret`'s `stringData`), `ValidateSecret`,
//! `ValidateSecretUpdate`, and the strategy's TLS warnings.

pub use crate::data::canonical_base64;
use crate::data::{config_map_key_errors, MAX_SIZE};
use base64::Engine;
use crest_api::{FieldError, FieldErrors, FieldPath};
use serde_json::{Map, Value};

/// `SecretTypeOpaque`, the default type.
pub const TYPE_OPAQUE: &str = "Opaque";
const TYPE_SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
const TYPE_DOCKERCFG: &str = "kubernetes.io/dockercfg";
const TYPE_DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
const TYPE_BASIC_AUTH: &str = "kubernetes.io/basic-auth";
const TYPE_SSH_AUTH: &str = "kubernetes.io/ssh-auth";
const TYPE_TLS: &str = "kubernetes.io/tls";
/// `ServiceAccountNameKey`: the annotation a service-account-token Secret needs.
const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";
const REDACTED: &str = "<secret contents redacted>";

/// The Secret's `type` (empty when unset).
pub fn secret_type(obj: &Value) -> &str {
    obj.get("type").and_then(Value::as_str).unwrap_or("")
}

/// What decoding a v1 Secret into the stored form does: `type` defaults to `Opaque`, and
/// `stringData` is merged into `data` (its values, base64 encoded, replace those of the same
/// keys) and dropped: it is write-only, never stored or returned. An empty or null `data` and
/// a null `immutable` are dropped, as Go's encoding omits them.
pub fn default_and_convert(obj: &mut Value) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    if o.get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        o.insert("type".into(), TYPE_OPAQUE.into());
    }
    if o.get("immutable").is_some_and(Value::is_null) {
        o.remove("immutable");
    }
    if let Some(d) = o.get_mut("data").and_then(Value::as_object_mut) {
        canonical_base64(d);
    }
    let string_data = match o.remove("stringData") {
        Some(Value::Object(m)) if !m.is_empty() => m,
        _ => {
            let empty = |d: &Value| d.is_null() || d.as_object().is_some_and(Map::is_empty);
            if o.get("data").is_some_and(empty) {
                o.remove("data");
            }
            return;
        }
    };
    let data = o.entry("data").or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    if let Some(d) = data.as_object_mut() {
        let b64 = base64::engine::general_purpose::STANDARD;
        for (k, v) in string_data {
            let s = v.as_str().unwrap_or_default();
            d.insert(k, Value::String(b64.encode(s)));
        }
    }
}

/// The bytes a `data` value holds (values were checked as base64 when the body was decoded).
fn bytes(v: &Value) -> Vec<u8> {
    let s = v.as_str().unwrap_or_default();
    crest_gofmt::go_base64_decode(s.as_bytes()).unwrap_or_default()
}

fn data(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("data").and_then(Value::as_object)
}

/// `ValidateSecret` without the ObjectMeta part: keys of `data`, at most 1 MiB of data, and the
/// keys (or annotation) each well-known type requires. Keys are checked in sorted order
/// (upstream walks a Go map, in no order).
pub fn validate(obj: &Value) -> FieldErrors {
    let mut errs = vec![];
    let data_path = FieldPath::new("data");
    let empty = Map::new();
    let values = data(obj).unwrap_or(&empty);
    let mut total = 0usize;
    for (key, value) in values {
        for msg in config_map_key_errors(key) {
            errs.push(FieldError::invalid(&data_path.key(key), key.as_str(), msg));
        }
        total += bytes(value).len();
    }
    if total > MAX_SIZE {
        errs.push(FieldError::too_long(&data_path, MAX_SIZE));
    }
    let required = |key: &str| FieldError::required(&data_path.key(key), "");
    match secret_type(obj) {
        TYPE_SERVICE_ACCOUNT_TOKEN => {
            let name = obj
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(SERVICE_ACCOUNT_NAME_KEY))
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                let path = FieldPath::new("metadata")
                    .child("annotations")
                    .key(SERVICE_ACCOUNT_NAME_KEY);
                errs.push(FieldError::required(&path, ""));
            }
        }
        t @ (TYPE_DOCKERCFG | TYPE_DOCKER_CONFIG_JSON) => {
            let key = if t == TYPE_DOCKERCFG {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match values.get(key) {
                None => errs.push(required(key)),
                Some(v) => {
                    // Well-formed JSON (an object or null), as json.Unmarshal into a map.
                    if let Some(e) = crest_gofmt::go_json_map_error(&bytes(v)) {
                        errs.push(FieldError::invalid(&data_path.key(key), REDACTED, e));
                    }
                }
            }
        }
        // Either may be empty, but one of the two must be there.
        TYPE_BASIC_AUTH if !values.contains_key("username") && !values.contains_key("password") => {
            errs.push(required("username"));
            errs.push(required("password"));
        }
        TYPE_SSH_AUTH
            if values
                .get("ssh-privatekey")
                .is_none_or(|v| bytes(v).is_empty()) =>
        {
            errs.push(required("ssh-privatekey"));
        }
        TYPE_TLS => {
            for key in ["tls.crt", "tls.key"] {
                if !values.contains_key(key) {
                    errs.push(required(key));
                }
            }
        }
        _ => {}
    }
    errs
}

/// `ValidateSecretUpdate` without the ObjectMeta part: `type` never changes; an immutable
/// Secret keeps its data and its immutability; then the new object as on create.
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = vec![];
    if secret_type(new) != secret_type(old) {
        errs.push(FieldError::invalid(
            &FieldPath::new("type"),
            secret_type(new),
            "field is immutable",
        ));
    }
    let immutable = |v: &Value| v.get("immutable").and_then(Value::as_bool) == Some(true);
    if immutable(old) {
        const MSG: &str = "field is immutable when `immutable` is set";
        if !immutable(new) {
            errs.push(FieldError::forbidden(&FieldPath::new("immutable"), MSG));
        }
        if new.get("data") != old.get("data") {
            errs.push(FieldError::forbidden(&FieldPath::new("data"), MSG));
        }
    }
    errs.extend(validate(new));
    errs
}

/// The strategy's warnings (`warningsForSecret`): for a TLS Secret, why `tls.X509KeyPair`
/// would refuse its `tls.crt` and `tls.key` (see [`crate::x509keypair`]).
pub fn warnings(obj: &Value) -> Vec<String> {
    if secret_type(obj) != TYPE_TLS {
        return vec![];
    }
    let empty = Map::new();
    let values = data(obj).unwrap_or(&empty);
    let get = |k: &str| values.get(k).map(bytes).unwrap_or_default();
    crate::x509keypair::x509_key_pair_error(&get("tls.crt"), &get("tls.key"))
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn defaults_and_string_data() {
        let mut s =
            json!({"data": {"a": b64("1"), "b": b64("2")}, "stringData": {"b": "two", "c": "3"}});
        default_and_convert(&mut s);
        assert_eq!(
            s,
            json!({"type": "Opaque", "data": {"a": b64("1"), "b": b64("two"), "c": b64("3")}})
        );
        let mut s = json!({"type": "", "stringData": {}, "data": {}, "immutable": null});
        default_and_convert(&mut s);
        assert_eq!(s, json!({"type": "Opaque"}));
        let mut s = json!({"type": null, "data": null, "immutable": false});
        default_and_convert(&mut s);
        assert_eq!(s, json!({"type": "Opaque", "immutable": false}));
        let mut s = json!({"type": "kubernetes.io/tls", "stringData": {"k": "v"}});
        default_and_convert(&mut s);
        assert_eq!(
            s,
            json!({"type": "kubernetes.io/tls", "data": {"k": b64("v")}})
        );
    }

    #[test]
    fn keys_size_and_required_keys() {
        let s = json!({"type": "Opaque", "data": {"a b": b64("x"), "..": ""}});
        assert_eq!(
            messages(&validate(&s)),
            [
                "data[..]: Invalid value: \"..\": must not be '..'",
                "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            ]
        );
        // The limit counts decoded bytes.
        let big = json!({"data": {"a": b64(&"x".repeat(MAX_SIZE)), "b": b64("y")}});
        assert_eq!(
            messages(&validate(&big)),
            ["data: Too long: may not be more than 1048576 bytes"]
        );
        assert!(validate(&json!({"data": {"a": b64(&"x".repeat(MAX_SIZE))}})).is_empty());

        let cases = [
            (json!({"type": TYPE_SERVICE_ACCOUNT_TOKEN}), vec!["metadata.annotations[kubernetes.io/service-account.name]: Required value"]),
            (json!({"type": TYPE_DOCKERCFG}), vec!["data[.dockercfg]: Required value"]),
            (json!({"type": TYPE_DOCKER_CONFIG_JSON, "data": {".dockerconfigjson": b64("{x")}}),
             vec!["data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character 'x' looking for beginning of object key string"]),
            (json!({"type": TYPE_DOCKERCFG, "data": {".dockercfg": b64("[]")}}),
             vec!["data[.dockercfg]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}"]),
            (json!({"type": TYPE_BASIC_AUTH}), vec!["data[username]: Required value", "data[password]: Required value"]),
            (json!({"type": TYPE_SSH_AUTH, "data": {"ssh-privatekey": ""}}), vec!["data[ssh-privatekey]: Required value"]),
            (json!({"type": TYPE_TLS, "data": {"tls.key": ""}}), vec!["data[tls.crt]: Required value"]),
            (json!({"type": TYPE_TLS}), vec!["data[tls.crt]: Required value", "data[tls.key]: Required value"]),
        ];
        for (s, want) in cases {
            assert_eq!(messages(&validate(&s)), want, "{s}");
        }
        let fine = [
            json!({"type": TYPE_SERVICE_ACCOUNT_TOKEN, "metadata": {"annotations": {SERVICE_ACCOUNT_NAME_KEY: "sa"}}}),
            json!({"type": TYPE_DOCKER_CONFIG_JSON, "data": {".dockerconfigjson": b64(r#"{"auths": {}}"#)}}),
            json!({"type": TYPE_BASIC_AUTH, "data": {"password": ""}}),
            json!({"type": TYPE_SSH_AUTH, "data": {"ssh-privatekey": b64("k")}}),
            json!({"type": TYPE_TLS, "data": {"tls.crt": "", "tls.key": ""}}),
            json!({"type": "example.com/custom"}),
        ];
        for s in fine {
            assert!(validate(&s).is_empty(), "{s}");
        }
    }

    #[test]
    fn updates() {
        let old = json!({"type": "Opaque", "immutable": true, "data": {"a": b64("1")}});
        assert!(validate_update(&old.clone(), &old).is_empty());
        let new = json!({"type": "kubernetes.io/basic-auth", "data": {"a": b64("2")}});
        assert_eq!(
            messages(&validate_update(&new, &old)),
            [
                "type: Invalid value: \"kubernetes.io/basic-auth\": field is immutable",
                "immutable: Forbidden: field is immutable when `immutable` is set",
                "data: Forbidden: field is immutable when `immutable` is set",
                "data[username]: Required value",
                "data[password]: Required value",
            ]
        );
    }

    #[test]
    fn tls_pem_warnings() {
        let block = |t: &str| format!("-----BEGIN {t}-----\nAAAA\n-----END {t}-----\n");
        let tls = |crt: &str, key: &str| json!({"type": TYPE_TLS, "data": {"tls.crt": b64(crt), "tls.key": b64(key)}});
        assert_eq!(
            warnings(&tls("x", "y")),
            ["tls: failed to find any PEM data in certificate input"]
        );
        assert_eq!(
            warnings(&tls(&block("RSA PRIVATE KEY"), "")),
            ["tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched"]
        );
        assert_eq!(
            warnings(&tls(&block("CERTIFICATE"), "")),
            ["tls: failed to find any PEM data in key input"]
        );
        assert_eq!(
            warnings(&tls(&block("CERTIFICATE"), &block("CERTIFICATE"))),
            ["tls: found a certificate rather than a key in the PEM for the private key"]
        );
        assert_eq!(
            warnings(&tls(&block("CERTIFICATE"), &(block("A") + &block("B")))),
            ["tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: [A B]"]
        );
        // Past the PEM stage: the certificate's DER, then the key, then the pair.
        assert_eq!(
            warnings(&tls(&block("CERTIFICATE"), &block("EC PRIVATE KEY"))),
            ["x509: malformed certificate"]
        );
        let (crt, key) = (
            include_str!("../testdata/tls/p256.crt"),
            include_str!("../testdata/tls/p256.key"),
        );
        assert!(warnings(&tls(crt, key)).is_empty());
        assert_eq!(
            warnings(&tls(crt, include_str!("../testdata/tls/p256-other.key"))),
            ["tls: private key does not match public key"]
        );
        assert!(warnings(&json!({"type": "Opaque"})).is_empty());
    }
}
