//! Accessors for `metadata` of objects held as `serde_json::Value`, plus the system values the
//! server assigns (uid, timestamps, generated names).

use rand::Rng;
use serde_json::{Map, Value};

/// The `metadata` map of an object, if the object is a map with a map under `metadata`.
pub fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// The `metadata` map, created empty when absent or not a map.
pub fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let o = obj.as_object_mut()?;
    let m = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
}

/// A string field of `metadata`, `""` when absent.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn name(obj: &Value) -> &str {
    meta_str(obj, "name")
}

pub fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace")
}

pub fn uid(obj: &Value) -> &str {
    meta_str(obj, "uid")
}

pub fn resource_version(obj: &Value) -> &str {
    meta_str(obj, "resourceVersion")
}

pub fn deletion_timestamp(obj: &Value) -> Option<&str> {
    meta(obj)
        .and_then(|m| m.get("deletionTimestamp"))
        .and_then(Value::as_str)
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn labels(obj: &Value) -> Option<&Map<String, Value>> {
    meta(obj)
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
}

/// Sets `metadata.<field>` (creating `metadata`).
pub fn set(obj: &mut Value, field: &str, value: impl Into<Value>) {
    if let Some(m) = meta_mut(obj) {
        m.insert(field.to_string(), value.into());
    }
}

pub fn remove(obj: &mut Value, field: &str) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove(field);
    }
}

/// The current time in RFC 3339 with second precision, as `metav1.Time` serializes.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A random (version 4) UUID. From the thread's CSPRNG (`rand::rng`, seeded from the OS):
/// `Uuid::new_v4` asks the OS for every one, a system call per create.
pub fn new_uid() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// The random suffix `generateName` gets: 5 characters from Kubernetes' alphabet (no vowels,
/// no confusable digits).
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn uids_are_random_version_4_uuids() {
        let a = super::new_uid();
        let b = super::new_uid();
        assert_ne!(a, b);
        for u in [a, b] {
            let parsed = uuid::Uuid::parse_str(&u).unwrap();
            assert_eq!(parsed.get_version_num(), 4, "{u}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{u}");
            assert_eq!(parsed.hyphenated().to_string(), u);
        }
    }
}
