//! `metadata.managedFields`, as apimachinery's `util/managedfields/internal` decodes and encodes
//! it (`DecodeManagedFields`, `BuildManagerIdentifier`, `encodeManagedFields` with
//! `sortEncodedManagedFields`), and the object-meta validation of entries
//! (`ValidateManagedFields`, `ValidateFieldManager` of apimachinery's api/validation).

use crate::fieldpath::Set;
use crest_api::{FieldError, FieldPath};
use crest_gofmt::{go_quote, json_kind};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// The operation an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who an entry belongs to (upstream's manager identifier): the manager name, the operation,
/// the apiVersion for updaters (appliers are one manager whatever version they apply) and the
/// subresource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ManagerId {
    pub manager: String,
    pub operation: Operation,
    /// Empty for `Apply`.
    pub api_version: String,
    pub subresource: String,
}

impl ManagerId {
    /// An Update manager.
    pub fn update(manager: &str, api_version: &str, subresource: &str) -> Self {
        ManagerId {
            manager: manager.to_string(),
            operation: Operation::Update,
            api_version: api_version.to_string(),
            subresource: subresource.to_string(),
        }
    }

    /// An Apply manager.
    pub fn apply(manager: &str, subresource: &str) -> Self {
        ManagerId {
            manager: manager.to_string(),
            operation: Operation::Apply,
            api_version: String::new(),
            subresource: subresource.to_string(),
        }
    }

    /// Upstream's identifier text (the JSON of the entry without fields, time and, for
    /// appliers, apiVersion): `{"manager":"m","operation":"Update","apiVersion":"v1"}`.
    pub fn identifier(&self) -> String {
        let mut s = String::from("{");
        let mut sep = "";
        let mut field = |s: &mut String, name: &str, v: &str| {
            if !v.is_empty() {
                s.push_str(sep);
                crest_gofmt::write_go_jsoniter_string(s, name);
                s.push(':');
                crest_gofmt::write_go_jsoniter_string(s, v);
                sep = ",";
            }
        };
        field(&mut s, "manager", &self.manager);
        field(&mut s, "operation", self.operation.as_str());
        field(&mut s, "apiVersion", &self.api_version);
        field(&mut s, "subresource", &self.subresource);
        s.push('}');
        s
    }
}

/// Prints as the apiserver's `printManager`: `"name"`, `"name" with subresource "status"`,
/// and ` using <apiVersion>` for updaters.
impl fmt::Display for ManagerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&go_quote(&self.manager))?;
        if !self.subresource.is_empty() {
            write!(f, " with subresource {}", go_quote(&self.subresource))?;
        }
        if self.operation == Operation::Update {
            write!(f, " using {}", self.api_version)?;
        }
        Ok(())
    }
}

/// The fields a manager owns and when it last changed them.
#[derive(Clone, Debug)]
pub struct Entry {
    pub(crate) set: Set,
    /// The apiVersion the fields are expressed in.
    pub api_version: String,
    /// RFC 3339 time of the last change (`None`: unset).
    pub time: Option<String>,
    /// The index of the entry this one was decoded from, while its set is unchanged (encoding
    /// with that source then reuses its FieldsV1).
    pub(crate) raw: Option<usize>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.set == other.set && self.api_version == other.api_version && self.time == other.time
    }
}

impl Entry {
    /// An entry owning `set`.
    pub fn new(set: Set, api_version: &str, time: Option<String>) -> Self {
        Entry {
            set,
            api_version: api_version.to_string(),
            time,
            raw: None,
        }
    }

    /// The fields owned.
    pub fn set(&self) -> &Set {
        &self.set
    }

    /// The fields owned, to change them.
    pub fn set_mut(&mut self) -> &mut Set {
        self.raw = None;
        &mut self.set
    }

    /// Removes `paths` from the fields owned.
    pub fn subtract(&mut self, paths: &Set) {
        if self.set.intersects(paths) {
            self.set_mut().subtract(paths);
        }
    }
}

/// All managers of an object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManagedFields {
    pub entries: BTreeMap<ManagerId, Entry>,
}

/// An entry of `metadata.managedFields` as sent.
fn entry_str<'v>(e: &'v Map<String, Value>, name: &str) -> Result<&'v str, String> {
    match e.get(name) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field ManagedFieldsEntry.{name} of type string",
            json_kind(other)
        )),
    }
}

/// Whether `metadata.managedFields` asks to clear the managed fields (upstream's
/// `isResetManagedFields`): an empty list, or a list of one empty entry.
pub(crate) fn is_reset(managed_fields: Option<&Value>) -> bool {
    match managed_fields {
        Some(Value::Array(a)) if a.is_empty() => true,
        Some(Value::Array(a)) if a.len() == 1 => {
            // The zero entry: nothing set but empty strings.
            matches!(&a[0], Value::Object(m) if m.values().all(|v| v.is_null() || v.as_str() == Some("")))
        }
        _ => false,
    }
}

/// A time as `metav1.Time` encodes it (RFC 3339, UTC, whole seconds): what to pass as `now`.
pub(crate) fn format_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A client-sent time as kube-apiserver stores it (decoded, then encoded in UTC seconds);
/// left as it is when not RFC 3339.
fn normalize_time(t: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(t) {
        Ok(d) => format_time(d.with_timezone(&chrono::Utc)),
        Err(_) => t.to_string(),
    }
}

/// The seconds of an RFC 3339 time, 0 when unset or unreadable (as upstream sorts).
pub(crate) fn unix_seconds(t: Option<&str>) -> i64 {
    t.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|d| d.timestamp())
        .unwrap_or(0)
}

impl ManagedFields {
    /// Forgets the FieldsV1 texts the entries were decoded from, so that encoding writes
    /// them anew (for managed fields a client sent, which may not be in canonical form).
    pub fn forget_raw(&mut self) {
        for e in self.entries.values_mut() {
            e.raw = None;
        }
    }

    /// Whether no manager owns anything.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Decodes `metadata.managedFields` (absent or null: empty), with upstream's errors for
    /// entries it refuses (`operation must be `Apply` or `Update``, `apiVersion must not be
    /// empty`, `missing fieldsType in managed fields entry 0`, `invalid fieldsType "X" in
    /// managed fields entry 0`, undecodable FieldsV1). A later entry of the same manager
    /// replaces an earlier one.
    pub fn decode(managed_fields: Option<&Value>) -> Result<ManagedFields, String> {
        let mut out = ManagedFields::default();
        let items = match managed_fields {
            None | Some(Value::Null) => return Ok(out),
            Some(Value::Array(a)) => a,
            Some(other) => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.managedFields of type []v1.ManagedFieldsEntry",
                    json_kind(other)
                ))
            }
        };
        for (i, item) in items.iter().enumerate() {
            let Value::Object(e) = item else {
                return Err(format!(
                    "json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.managedFields of type v1.ManagedFieldsEntry",
                    json_kind(item)
                ));
            };
            let operation = match entry_str(e, "operation")? {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return Err("operation must be `Apply` or `Update`".into()),
            };
            let api_version = entry_str(e, "apiVersion")?;
            if api_version.is_empty() {
                return Err("apiVersion must not be empty".into());
            }
            match entry_str(e, "fieldsType")? {
                "FieldsV1" => {}
                "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
                other => {
                    return Err(format!(
                        "invalid fieldsType {} in managed fields entry {i}",
                        go_quote(other)
                    ))
                }
            }
            let manager = entry_str(e, "manager")?;
            let subresource = entry_str(e, "subresource")?;
            let time = entry_str(e, "time")?;
            let set =
                Set::from_fields_v1(e.get("fieldsV1").unwrap_or(&Value::Null)).map_err(|err| {
                    format!(
                        "error decoding versioned set from {}: error decoding set: {err}",
                        crest_gofmt::go_jsoniter(item)
                    )
                })?;
            let id = ManagerId {
                manager: manager.to_string(),
                operation,
                api_version: if operation == Operation::Apply {
                    String::new()
                } else {
                    api_version.to_string()
                },
                subresource: subresource.to_string(),
            };
            out.entries.insert(
                id,
                Entry {
                    set,
                    api_version: api_version.to_string(),
                    time: (!time.is_empty()).then(|| normalize_time(time)),
                    raw: Some(i),
                },
            );
        }
        Ok(out)
    }

    /// The entries in upstream's order: operation (`Apply` first), time (oldest first, unset
    /// as the epoch), manager, apiVersion, subresource.
    pub fn sorted(&self) -> Vec<(&ManagerId, &Entry)> {
        let mut v: Vec<_> = self.entries.iter().collect();
        // Each entry's time parsed once, not at every comparison.
        v.sort_by_cached_key(|(a, ea)| {
            (
                a.operation,
                unix_seconds(ea.time.as_deref()),
                a.manager.clone(),
                ea.api_version.clone(),
                a.subresource.clone(),
            )
        });
        v
    }

    /// `metadata.managedFields` for these managers (`None` when there are none: the field is
    /// then omitted, as upstream omits it). `fieldsV1` is the FieldsV1 object.
    pub fn encode(&self) -> Option<Value> {
        self.encode_from(None)
    }

    /// [`ManagedFields::encode`], the FieldsV1 of entries unchanged since they were decoded
    /// from `source` (the `metadata.managedFields` given to [`ManagedFields::decode`]) copied
    /// from it instead of written anew.
    pub fn encode_from(&self, source: Option<&Value>) -> Option<Value> {
        if self.entries.is_empty() {
            return None;
        }
        let items = self
            .sorted()
            .into_iter()
            .map(|(id, e)| {
                let mut m = Map::new();
                m.insert("apiVersion".into(), Value::from(e.api_version.as_str()));
                m.insert("fieldsType".into(), Value::from("FieldsV1"));
                let raw = e
                    .raw
                    .and_then(|i| source?.get(i)?.get("fieldsV1"))
                    .filter(|v| v.is_object());
                let fields = match raw {
                    Some(raw) => raw.clone(),
                    None => e.set.to_fields_v1(),
                };
                m.insert("fieldsV1".into(), fields);
                m.insert("manager".into(), Value::from(id.manager.as_str()));
                m.insert("operation".into(), Value::from(id.operation.as_str()));
                if !id.subresource.is_empty() {
                    m.insert("subresource".into(), Value::from(id.subresource.as_str()));
                }
                if let Some(t) = &e.time {
                    m.insert("time".into(), Value::from(t.as_str()));
                }
                Value::Object(m)
            })
            .collect();
        Some(Value::Array(items))
    }

    /// Sets (or, when empty, removes) `metadata.managedFields` of `obj`.
    pub fn encode_into(&self, obj: &mut Value) {
        set_managed_fields(obj, self.encode());
    }

    /// [`ManagedFields::encode_into`] with [`ManagedFields::encode_from`]'s reuse.
    pub fn encode_into_from(&self, obj: &mut Value, source: Option<&Value>) {
        set_managed_fields(obj, self.encode_from(source));
    }
}

/// Sets or removes `metadata.managedFields`.
pub(crate) fn set_managed_fields(obj: &mut Value, v: Option<Value>) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    match v {
        Some(v) => {
            let meta = o
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = meta.as_object_mut() {
                m.insert("managedFields".into(), v);
            }
        }
        None => {
            if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
        }
    }
}

/// `metadata.managedFields` of an object.
pub(crate) fn managed_fields_of(obj: &Value) -> Option<&Value> {
    obj.get("metadata").and_then(|m| m.get("managedFields"))
}

/// The longest manager name (`FieldManagerMaxLength`).
pub(crate) const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The errors of a field manager name (apimachinery's `ValidateFieldManager`): at most 128
/// characters, all printable.
pub fn validate_field_manager(name: &str, path: &FieldPath) -> Vec<FieldError> {
    if name.len() > FIELD_MANAGER_MAX_LENGTH {
        return vec![FieldError::too_long(path, FIELD_MANAGER_MAX_LENGTH)];
    }
    let mut pos = 0;
    for c in name.chars() {
        if !is_go_printable(c) {
            return vec![FieldError::invalid(
                path,
                name,
                format!("invalid character {} (at position {pos})", go_unicode(c)),
            )];
        }
        pos += c.len_utf8();
    }
    Vec::new()
}

/// Go's `%#U`: `U+0007` and, when printable, the quoted character.
fn go_unicode(c: char) -> String {
    if is_go_printable(c) {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// Go's `unicode.IsPrint` (letters, marks, numbers, punctuation, symbols and the ASCII space),
/// approximated by "not a control, not other whitespace".
pub(crate) fn is_go_printable(c: char) -> bool {
    c == ' ' || !(c.is_control() || c.is_whitespace() || ('\u{e000}'..='\u{f8ff}').contains(&c))
}

/// The errors of `metadata.managedFields` entries as ObjectMeta validation reports them
/// (`ValidateManagedFields`): operation, fieldsType, manager name, subresource length.
pub fn validate_managed_fields(managed_fields: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Value::Array(items) = managed_fields else {
        return errs;
    };
    for (i, item) in items.iter().enumerate() {
        let p = path.index(i);
        let get = |n: &str| item.get(n).and_then(Value::as_str).unwrap_or("");
        let op = get("operation");
        if op != "Apply" && op != "Update" {
            errs.push(FieldError::invalid(
                &p.child("operation"),
                op,
                "must be `Apply` or `Update`",
            ));
        }
        let ft = get("fieldsType");
        if !ft.is_empty() && ft != "FieldsV1" {
            errs.push(FieldError::invalid(
                &p.child("fieldsType"),
                ft,
                "must be `FieldsV1`",
            ));
        }
        errs.extend(validate_field_manager(get("manager"), &p.child("manager")));
        let sub = get("subresource");
        if sub.len() > 256 {
            errs.push(FieldError::too_long(&p.child("subresource"), 256));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decode_encode_sorted() {
        let mf = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}},
            {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:05Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:b": {}}}},
            {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:c": {}}}, "subresource": "status"},
        ]);
        let m = ManagedFields::decode(Some(&mf)).unwrap();
        let out = m.encode().unwrap();
        let names: Vec<_> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["z", "a", "b"]);
        assert_eq!(out[1]["subresource"], "status");
        assert_eq!(ManagedFields::decode(Some(&out)).unwrap(), m);
    }

    #[test]
    fn times_in_utc_seconds() {
        let mf = json!([{"manager": "m", "operation": "Update", "apiVersion": "v1",
            "time": "2024-01-01T10:00:00.5+02:00", "fieldsType": "FieldsV1", "fieldsV1": {}}]);
        let m = ManagedFields::decode(Some(&mf)).unwrap();
        assert_eq!(m.encode().unwrap()[0]["time"], "2024-01-01T08:00:00Z");
    }

    #[test]
    fn decode_errors_as_upstream() {
        let e = |v: Value| ManagedFields::decode(Some(&v)).unwrap_err();
        assert_eq!(
            e(
                json!([{"manager": "m", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}])
            ),
            "operation must be `Apply` or `Update`"
        );
        assert_eq!(
            e(json!([{"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1"}])),
            "apiVersion must not be empty"
        );
        assert_eq!(
            e(json!([{"manager": "m", "operation": "Apply", "apiVersion": "v1"}])),
            "missing fieldsType in managed fields entry 0"
        );
        assert_eq!(
            e(
                json!([{"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV2"}])
            ),
            "invalid fieldsType \"FieldsV2\" in managed fields entry 0"
        );
    }

    #[test]
    fn reset_and_identifiers() {
        assert!(is_reset(Some(&json!([]))));
        assert!(is_reset(Some(&json!([{}]))));
        assert!(!is_reset(None));
        assert!(!is_reset(Some(&Value::Null)));
        assert!(!is_reset(Some(&json!([{"manager": "x"}]))));
        assert!(is_reset(Some(&json!([{"manager": ""}]))));
        assert!(!is_reset(Some(&json!([{"fieldsV1": {}}]))));
        let u = ManagerId::update("kubectl-client-side-apply", "stable.example.com/v1", "");
        assert_eq!(
            u.to_string(),
            "\"kubectl-client-side-apply\" using stable.example.com/v1"
        );
        assert_eq!(
            u.identifier(),
            r#"{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"stable.example.com/v1"}"#
        );
        let a = ManagerId::apply("ctrl", "status");
        assert_eq!(a.to_string(), "\"ctrl\" with subresource \"status\"");
    }

    #[test]
    fn validation_messages() {
        let errs = validate_managed_fields(
            &json!([{"manager": "a\u{7}", "operation": "Patch", "fieldsType": "X"}]),
            &FieldPath::new("metadata").child("managedFields"),
        );
        let text: Vec<String> = errs.iter().take(2).map(|e| e.to_string()).collect();
        assert_eq!(
            text,
            [
                "metadata.managedFields[0].operation: Invalid value: \"Patch\": must be `Apply` or `Update`",
                "metadata.managedFields[0].fieldsType: Invalid value: \"X\": must be `FieldsV1`",
            ]
        );
        assert_eq!(errs[2].field.as_str(), "metadata.managedFields[0].manager");
        assert_eq!(errs[2].detail, "invalid character U+0007 (at position 1)");
    }
}
