//! Typed view of apiextensions.k8s.io/v1 CustomResourceDefinition.
//!
//! The server keeps CRDs as `serde_json::Value` so that fields this crate does not model survive
//! untouched; [`parse`] derives a typed view from that value. Decoding reports type mismatches
//! with the wording of Go's `encoding/json` (what kube-apiserver answers for a malformed body),
//! e.g. `json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool`.
//!
//! Field names, `omitempty` behaviour (`skip_serializing_if`) and always-present fields follow
//! the Go types, so serializing a typed value looks like kube-apiserver's output.

use crest_gofmt::json_kind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// `apiextensions.k8s.io/v1` `CustomResourceDefinition`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinition {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Kept opaque: ObjectMeta is validated by crest-api.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
    #[serde(default)]
    pub spec: CustomResourceDefinitionSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CustomResourceDefinitionStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionSpec {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub names: CustomResourceDefinitionNames,
    #[serde(default)]
    pub scope: String,
    #[serde(default)]
    pub versions: Vec<CustomResourceDefinitionVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversion: Option<CustomResourceConversion>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub preserve_unknown_fields: bool,
}

/// Names of a custom resource; `plural` and `kind` are always serialized (no `omitempty` upstream).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    #[serde(default)]
    pub plural: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub singular: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    #[serde(default)]
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub list_kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

/// One version; `name`, `served` and `storage` are always serialized (required in v1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub served: bool,
    #[serde(default)]
    pub storage: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub deprecated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CustomResourceSubresources>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_printer_columns: Vec<CustomResourceColumnDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selectable_fields: Vec<SelectableField>,
}

/// `schema` of a version. The OpenAPI schema stays a raw value: its structural validation lives
/// elsewhere.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CustomResourceValidation {
    #[serde(
        rename = "openAPIV3Schema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_api_v3_schema: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomResourceSubresources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CustomResourceSubresourceStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
}

/// The (empty) status subresource marker: `status: {}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomResourceSubresourceStatus {}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresourceScale {
    #[serde(default)]
    pub spec_replicas_path: String,
    #[serde(default)]
    pub status_replicas_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceColumnDefinition {
    #[serde(default)]
    pub name: String,
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: i32,
    #[serde(rename = "jsonPath", default)]
    pub json_path: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectableField {
    #[serde(rename = "jsonPath", default)]
    pub json_path: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceConversion {
    #[serde(default)]
    pub strategy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookConversion>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConversion {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_config: Option<WebhookClientConfig>,
    #[serde(default)]
    pub conversion_review_versions: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookClientConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// Base64 as on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceReference {
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// `status`; all three fields are serialized even when empty, as upstream (no `omitempty`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionStatus {
    #[serde(default)]
    pub conditions: Vec<CustomResourceDefinitionCondition>,
    #[serde(default)]
    pub accepted_names: CustomResourceDefinitionNames,
    #[serde(default)]
    pub stored_versions: Vec<String>,
}

/// A status condition, serialized in upstream's field order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionCondition {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    /// RFC 3339 with second precision (`metav1.Time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl CustomResourceDefinition {
    /// `metadata.name`, `""` when absent.
    pub fn name(&self) -> &str {
        self.metadata
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Names of the served versions, in spec order.
    pub fn served_versions(&self) -> Vec<String> {
        self.spec
            .versions
            .iter()
            .filter(|v| v.served)
            .map(|v| v.name.clone())
            .collect()
    }

    /// The first version marked `storage` (valid CRDs have exactly one).
    pub fn storage_version(&self) -> Option<&str> {
        self.spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map(|v| v.name.as_str())
    }

    pub fn version(&self, name: &str) -> Option<&CustomResourceDefinitionVersion> {
        self.spec.versions.iter().find(|v| v.name == name)
    }

    pub fn conditions(&self) -> &[CustomResourceDefinitionCondition] {
        self.status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or(&[])
    }

    pub fn find_condition(&self, type_: &str) -> Option<&CustomResourceDefinitionCondition> {
        self.conditions().iter().find(|c| c.type_ == type_)
    }

    /// Whether the condition is present with status `True` (`IsCRDConditionTrue`).
    pub fn is_condition_true(&self, type_: &str) -> bool {
        self.find_condition(type_)
            .is_some_and(|c| c.status == "True")
    }

    /// The names the server serves (`status.acceptedNames`), which may lag `spec.names`.
    pub fn accepted_names(&self) -> CustomResourceDefinitionNames {
        self.status
            .as_ref()
            .map(|s| s.accepted_names.clone())
            .unwrap_or_default()
    }

    pub fn stored_versions(&self) -> &[String] {
        self.status
            .as_ref()
            .map(|s| s.stored_versions.as_slice())
            .unwrap_or(&[])
    }
}

/// A decode failure, rendered as Go's `json.UnmarshalTypeError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DecodeError {
    /// What was found: `string`, `number`, `number 1.5`, `object`, `array`, `bool`.
    pub found: String,
    /// Go type name of the struct holding the field, e.g. `CustomResourceDefinitionVersion`.
    pub go_struct: String,
    /// JSON field path from the root without indices, e.g. `spec.versions.served`.
    pub field: String,
    /// Go type of the target, e.g. `bool`, `[]string`, `v1.ResourceScope`.
    pub go_type: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "json: cannot unmarshal {} into Go struct field {}.{} of type {}",
            self.found, self.go_struct, self.field, self.go_type
        )
    }
}

impl std::error::Error for DecodeError {}

/// Decodes the typed view of a CRD held as JSON. Errors are decode errors (HTTP 400 upstream).
pub fn parse(obj: &Value) -> Result<CustomResourceDefinition, String> {
    decode(obj).map_err(|e| e.to_string())
}

/// As [`parse`], with the structured error.
pub(crate) fn decode(obj: &Value) -> Result<CustomResourceDefinition, DecodeError> {
    let root = Ctx {
        go_struct: "CustomResourceDefinition",
        path: String::new(),
    };
    let Some(m) = obj.as_object() else {
        return Err(DecodeError {
            found: json_kind(obj).to_string(),
            go_struct: "CustomResourceDefinition".into(),
            field: String::new(),
            go_type: "v1.CustomResourceDefinition".into(),
        });
    };
    let mut crd = CustomResourceDefinition {
        api_version: root.string(m, "apiVersion", "string")?,
        kind: root.string(m, "kind", "string")?,
        metadata: m
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    };
    if let Some(spec) = root.object(m, "spec", "v1.CustomResourceDefinitionSpec")? {
        crd.spec = decode_spec(spec, &root.enter("CustomResourceDefinitionSpec", "spec"))?;
    }
    if let Some(status) = root.object(m, "status", "v1.CustomResourceDefinitionStatus")? {
        crd.status = Some(decode_status(
            status,
            &root.enter("CustomResourceDefinitionStatus", "status"),
        )?);
    }
    Ok(crd)
}

/// Where the decoder is: the enclosing Go struct and the JSON path to it.
struct Ctx {
    go_struct: &'static str,
    path: String,
}

impl Ctx {
    fn field_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    fn enter(&self, go_struct: &'static str, key: &str) -> Ctx {
        Ctx {
            go_struct,
            path: self.field_path(key),
        }
    }

    fn err(&self, key: &str, found: &Value, go_type: &str) -> DecodeError {
        self.err_found(key, json_kind(found).to_string(), go_type)
    }

    fn err_found(&self, key: &str, found: String, go_type: &str) -> DecodeError {
        DecodeError {
            found,
            go_struct: self.go_struct.to_string(),
            field: self.field_path(key),
            go_type: go_type.to_string(),
        }
    }

    /// A field that is absent or `null` decodes to nothing, as in Go.
    fn get<'a>(&self, m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
        m.get(key).filter(|v| !v.is_null())
    }

    fn opt_string(
        &self,
        m: &Map<String, Value>,
        key: &str,
        go_type: &str,
    ) -> Result<Option<String>, DecodeError> {
        match self.get(m, key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(key, other, go_type)),
        }
    }

    fn string(
        &self,
        m: &Map<String, Value>,
        key: &str,
        go_type: &str,
    ) -> Result<String, DecodeError> {
        Ok(self.opt_string(m, key, go_type)?.unwrap_or_default())
    }

    fn bool(&self, m: &Map<String, Value>, key: &str) -> Result<bool, DecodeError> {
        match self.get(m, key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.err(key, other, "bool")),
        }
    }

    fn opt_i32(&self, m: &Map<String, Value>, key: &str) -> Result<Option<i32>, DecodeError> {
        match self.get(m, key) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                Some(i) => Ok(Some(i)),
                // Go reports the literal for numbers that do not fit the integer type.
                None => Err(self.err_found(key, format!("number {n}"), "int32")),
            },
            Some(other) => Err(self.err(key, other, "int32")),
        }
    }

    fn object<'a>(
        &self,
        m: &'a Map<String, Value>,
        key: &str,
        go_type: &str,
    ) -> Result<Option<&'a Map<String, Value>>, DecodeError> {
        match self.get(m, key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o)),
            Some(other) => Err(self.err(key, other, go_type)),
        }
    }

    /// An array field: its elements (nulls decode to zero values, kept as `Null`).
    fn array<'a>(
        &self,
        m: &'a Map<String, Value>,
        key: &str,
        go_type: &str,
    ) -> Result<Option<&'a Vec<Value>>, DecodeError> {
        match self.get(m, key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(other) => Err(self.err(key, other, go_type)),
        }
    }

    fn strings(&self, m: &Map<String, Value>, key: &str) -> Result<Vec<String>, DecodeError> {
        let Some(items) = self.array(m, key, "[]string")? else {
            return Ok(vec![]);
        };
        items
            .iter()
            .map(|v| match v {
                Value::Null => Ok(String::new()),
                Value::String(s) => Ok(s.clone()),
                other => Err(self.err(key, other, "string")),
            })
            .collect()
    }

    /// Each element of an array of structs, as an object (`null` elements become empty objects).
    fn objects<'a>(
        &self,
        m: &'a Map<String, Value>,
        key: &str,
        go_elem: &str,
    ) -> Result<Vec<&'a Map<String, Value>>, DecodeError> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let Some(items) = self.array(m, key, &format!("[]{go_elem}"))? else {
            return Ok(vec![]);
        };
        items
            .iter()
            .map(|v| match v {
                Value::Null => Ok(EMPTY.get_or_init(Map::new)),
                Value::Object(o) => Ok(o),
                other => Err(self.err(key, other, go_elem)),
            })
            .collect()
    }
}

/// Schema nesting beyond this is left to validation (which refuses it).
const MAX_SCHEMA_DEPTH: usize = 200;

/// Checks the JSON types of a `JSONSchemaProps` (kept as JSON) as Go's decoder would, so that a
/// wrongly typed keyword is a decode error rather than silently ignored. Go restarts the field
/// path inside custom unmarshalers (items, additionalProperties); this keeps the full path.
fn decode_schema_props(m: &Map<String, Value>, c: &Ctx, depth: usize) -> Result<(), DecodeError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Ok(());
    }
    let depth = depth + 1;
    let schema = |v: &Value, key: &str| -> Result<(), DecodeError> {
        match v {
            Value::Null => Ok(()),
            Value::Object(o) => decode_schema_props(o, &c.enter("JSONSchemaProps", key), depth),
            other => Err(c.err(key, other, "v1.JSONSchemaProps")),
        }
    };
    for (key, v) in m.iter().filter(|(_, v)| !v.is_null()) {
        let key = key.as_str();
        match key {
            "id"
            | "$schema"
            | "$ref"
            | "description"
            | "type"
            | "format"
            | "title"
            | "pattern"
            | "x-kubernetes-list-type"
            | "x-kubernetes-map-type"
                if !v.is_string() =>
            {
                return Err(c.err(key, v, "string"));
            }
            "nullable"
            | "exclusiveMaximum"
            | "exclusiveMinimum"
            | "uniqueItems"
            | "x-kubernetes-preserve-unknown-fields"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string"
                if !v.is_boolean() =>
            {
                return Err(c.err(key, v, "bool"));
            }
            "maximum" | "minimum" | "multipleOf" if !v.is_number() => {
                return Err(c.err(key, v, "float64"));
            }
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties" => {
                let Value::Number(n) = v else {
                    return Err(c.err(key, v, "int64"));
                };
                if n.as_i64().is_none() {
                    return Err(c.err_found(key, format!("number {n}"), "int64"));
                }
            }
            "required" | "x-kubernetes-list-map-keys" => {
                c.strings(m, key)?;
            }
            "enum" => {
                c.array(m, key, "[]v1.JSON")?;
            }
            "allOf" | "oneOf" | "anyOf" => {
                for item in c
                    .array(m, key, "[]v1.JSONSchemaProps")?
                    .into_iter()
                    .flatten()
                {
                    schema(item, key)?;
                }
            }
            "not" => schema(v, key)?,
            "properties" | "patternProperties" | "definitions" => {
                let Value::Object(o) = v else {
                    return Err(c.err(key, v, "map[string]v1.JSONSchemaProps"));
                };
                for item in o.values() {
                    schema(item, key)?;
                }
            }
            "items" => match v {
                Value::Array(a) => {
                    for item in a {
                        schema(item, key)?;
                    }
                }
                other => schema(other, key)?,
            },
            "additionalProperties" | "additionalItems" if !v.is_boolean() => {
                schema(v, key)?;
            }
            "dependencies" => {
                let Value::Object(o) = v else {
                    return Err(c.err(key, v, "v1.JSONSchemaDependencies"));
                };
                for item in o.values() {
                    match item {
                        Value::Array(a) => {
                            if let Some(bad) = a.iter().find(|s| !s.is_string()) {
                                return Err(c.err(key, bad, "string"));
                            }
                        }
                        other => schema(other, key)?,
                    }
                }
            }
            "externalDocs" => {
                let Value::Object(o) = v else {
                    return Err(c.err(key, v, "v1.ExternalDocumentation"));
                };
                let dc = c.enter("ExternalDocumentation", key);
                dc.string(o, "description", "string")?;
                dc.string(o, "url", "string")?;
            }
            "x-kubernetes-validations" => {
                let vc = c.enter("ValidationRule", key);
                for rule in c.objects(m, key, "v1.ValidationRule")? {
                    for field in ["rule", "message", "messageExpression", "fieldPath"] {
                        vc.string(rule, field, "string")?;
                    }
                    vc.string(rule, "reason", "v1.FieldValueErrorReason")?;
                    vc.bool(rule, "optionalOldSelf")?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn decode_names(
    m: &Map<String, Value>,
    c: &Ctx,
) -> Result<CustomResourceDefinitionNames, DecodeError> {
    Ok(CustomResourceDefinitionNames {
        plural: c.string(m, "plural", "string")?,
        singular: c.string(m, "singular", "string")?,
        short_names: c.strings(m, "shortNames")?,
        kind: c.string(m, "kind", "string")?,
        list_kind: c.string(m, "listKind", "string")?,
        categories: c.strings(m, "categories")?,
    })
}

fn decode_spec(
    m: &Map<String, Value>,
    c: &Ctx,
) -> Result<CustomResourceDefinitionSpec, DecodeError> {
    let mut spec = CustomResourceDefinitionSpec {
        group: c.string(m, "group", "string")?,
        ..Default::default()
    };
    if let Some(names) = c.object(m, "names", "v1.CustomResourceDefinitionNames")? {
        spec.names = decode_names(names, &c.enter("CustomResourceDefinitionNames", "names"))?;
    }
    spec.scope = c.string(m, "scope", "v1.ResourceScope")?;
    let vc = c.enter("CustomResourceDefinitionVersion", "versions");
    for v in c.objects(m, "versions", "v1.CustomResourceDefinitionVersion")? {
        spec.versions.push(decode_version(v, &vc)?);
    }
    if let Some(conv) = c.object(m, "conversion", "v1.CustomResourceConversion")? {
        spec.conversion = Some(decode_conversion(
            conv,
            &c.enter("CustomResourceConversion", "conversion"),
        )?);
    }
    spec.preserve_unknown_fields = c.bool(m, "preserveUnknownFields")?;
    Ok(spec)
}

fn decode_version(
    m: &Map<String, Value>,
    c: &Ctx,
) -> Result<CustomResourceDefinitionVersion, DecodeError> {
    let mut v = CustomResourceDefinitionVersion {
        name: c.string(m, "name", "string")?,
        served: c.bool(m, "served")?,
        storage: c.bool(m, "storage")?,
        deprecated: c.bool(m, "deprecated")?,
        deprecation_warning: c.opt_string(m, "deprecationWarning", "string")?,
        ..Default::default()
    };
    if let Some(schema) = c.object(m, "schema", "v1.CustomResourceValidation")? {
        let sc = c.enter("CustomResourceValidation", "schema");
        let open_api = sc.object(schema, "openAPIV3Schema", "v1.JSONSchemaProps")?;
        if let Some(o) = open_api {
            decode_schema_props(o, &sc.enter("JSONSchemaProps", "openAPIV3Schema"), 0)?;
        }
        v.schema = Some(CustomResourceValidation {
            open_api_v3_schema: open_api.map(|o| Value::Object(o.clone())),
        });
    }
    if let Some(sub) = c.object(m, "subresources", "v1.CustomResourceSubresources")? {
        let sc = c.enter("CustomResourceSubresources", "subresources");
        let mut subresources = CustomResourceSubresources::default();
        if sc
            .object(sub, "status", "v1.CustomResourceSubresourceStatus")?
            .is_some()
        {
            subresources.status = Some(CustomResourceSubresourceStatus {});
        }
        if let Some(scale) = sc.object(sub, "scale", "v1.CustomResourceSubresourceScale")? {
            let scc = sc.enter("CustomResourceSubresourceScale", "scale");
            subresources.scale = Some(CustomResourceSubresourceScale {
                spec_replicas_path: scc.string(scale, "specReplicasPath", "string")?,
                status_replicas_path: scc.string(scale, "statusReplicasPath", "string")?,
                label_selector_path: scc.opt_string(scale, "labelSelectorPath", "string")?,
            });
        }
        v.subresources = Some(subresources);
    }
    let cc = c.enter("CustomResourceColumnDefinition", "additionalPrinterColumns");
    for col in c.objects(
        m,
        "additionalPrinterColumns",
        "v1.CustomResourceColumnDefinition",
    )? {
        v.additional_printer_columns
            .push(CustomResourceColumnDefinition {
                name: cc.string(col, "name", "string")?,
                type_: cc.string(col, "type", "string")?,
                format: cc.string(col, "format", "string")?,
                description: cc.string(col, "description", "string")?,
                priority: cc.opt_i32(col, "priority")?.unwrap_or(0),
                json_path: cc.string(col, "jsonPath", "string")?,
            });
    }
    let fc = c.enter("SelectableField", "selectableFields");
    for f in c.objects(m, "selectableFields", "v1.SelectableField")? {
        v.selectable_fields.push(SelectableField {
            json_path: fc.string(f, "jsonPath", "string")?,
        });
    }
    Ok(v)
}

fn decode_conversion(
    m: &Map<String, Value>,
    c: &Ctx,
) -> Result<CustomResourceConversion, DecodeError> {
    let mut conv = CustomResourceConversion {
        strategy: c.string(m, "strategy", "v1.ConversionStrategyType")?,
        webhook: None,
    };
    if let Some(wh) = c.object(m, "webhook", "v1.WebhookConversion")? {
        let wc = c.enter("WebhookConversion", "webhook");
        let mut webhook = WebhookConversion {
            client_config: None,
            conversion_review_versions: wc.strings(wh, "conversionReviewVersions")?,
        };
        if let Some(cc) = wc.object(wh, "clientConfig", "v1.WebhookClientConfig")? {
            let ccc = wc.enter("WebhookClientConfig", "clientConfig");
            let mut config = WebhookClientConfig {
                url: ccc.opt_string(cc, "url", "string")?,
                service: None,
                ca_bundle: ccc.opt_string(cc, "caBundle", "[]uint8")?,
            };
            if let Some(svc) = ccc.object(cc, "service", "v1.ServiceReference")? {
                let sc = ccc.enter("ServiceReference", "service");
                config.service = Some(ServiceReference {
                    namespace: sc.string(svc, "namespace", "string")?,
                    name: sc.string(svc, "name", "string")?,
                    path: sc.opt_string(svc, "path", "string")?,
                    port: sc.opt_i32(svc, "port")?,
                });
            }
            webhook.client_config = Some(config);
        }
        conv.webhook = Some(webhook);
    }
    Ok(conv)
}

fn decode_status(
    m: &Map<String, Value>,
    c: &Ctx,
) -> Result<CustomResourceDefinitionStatus, DecodeError> {
    let mut status = CustomResourceDefinitionStatus::default();
    let cc = c.enter("CustomResourceDefinitionCondition", "conditions");
    for cond in c.objects(m, "conditions", "v1.CustomResourceDefinitionCondition")? {
        status.conditions.push(CustomResourceDefinitionCondition {
            type_: cc.string(cond, "type", "v1.CustomResourceDefinitionConditionType")?,
            status: cc.string(cond, "status", "v1.ConditionStatus")?,
            last_transition_time: cc.opt_string(cond, "lastTransitionTime", "string")?,
            reason: cc.string(cond, "reason", "string")?,
            message: cc.string(cond, "message", "string")?,
        });
    }
    if let Some(names) = c.object(m, "acceptedNames", "v1.CustomResourceDefinitionNames")? {
        status.accepted_names = decode_names(
            names,
            &c.enter("CustomResourceDefinitionNames", "acceptedNames"),
        )?;
    }
    status.stored_versions = c.strings(m, "storedVersions")?;
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_the_seed_crd() {
        let crd = parse(&crate::tests::seed_crd()).unwrap();
        assert_eq!(crd.spec.group, "stable.example.com");
        assert_eq!(crd.spec.names.short_names, vec!["ct"]);
        assert_eq!(crd.served_versions(), vec!["v1"]);
        assert_eq!(crd.storage_version(), Some("v1"));
        let schema = crd.spec.versions[0]
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema
            .as_ref()
            .unwrap();
        assert_eq!(schema["type"], "object");
    }

    #[test]
    fn decode_errors_read_like_go() {
        let bad = json!({"spec": {"versions": [{"name": "v1", "served": "yes"}]}});
        assert_eq!(
            parse(&bad).unwrap_err(),
            "json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool"
        );
        let bad = json!({"spec": {"scope": 1}});
        assert_eq!(
            parse(&bad).unwrap_err(),
            "json: cannot unmarshal number into Go struct field CustomResourceDefinitionSpec.spec.scope of type v1.ResourceScope"
        );
        let bad = json!({"spec": {"names": {"shortNames": ["a", 3]}}});
        assert_eq!(
            parse(&bad).unwrap_err(),
            "json: cannot unmarshal number into Go struct field CustomResourceDefinitionNames.spec.names.shortNames of type string"
        );
        let bad = json!({"spec": {"versions": "v1"}});
        assert_eq!(
            parse(&bad).unwrap_err(),
            "json: cannot unmarshal string into Go struct field CustomResourceDefinitionSpec.spec.versions of type []v1.CustomResourceDefinitionVersion"
        );
        let bad =
            json!({"spec": {"versions": [{"additionalPrinterColumns": [{"priority": 1.5}]}]}});
        assert_eq!(
            parse(&bad).unwrap_err(),
            "json: cannot unmarshal number 1.5 into Go struct field CustomResourceColumnDefinition.spec.versions.additionalPrinterColumns.priority of type int32"
        );
        let bad = json!({"spec": {"conversion": {"webhook": {"clientConfig": {"service": {"port": "443"}}}}}});
        assert_eq!(
            parse(&bad).unwrap_err(),
            "json: cannot unmarshal string into Go struct field ServiceReference.spec.conversion.webhook.clientConfig.service.port of type int32"
        );
    }

    #[test]
    fn nulls_decode_as_absent() {
        let crd = parse(&json!({"spec": {"group": null, "versions": [null], "conversion": null}}))
            .unwrap();
        assert_eq!(crd.spec.group, "");
        assert_eq!(crd.spec.versions.len(), 1);
        assert!(crd.spec.conversion.is_none());
    }

    #[test]
    fn serializes_like_upstream() {
        let crd = parse(&crate::tests::seed_crd()).unwrap();
        let v = serde_json::to_value(&crd.spec.versions[0]).unwrap();
        assert_eq!(v["served"], true);
        assert!(v.get("deprecated").is_none());
        let status = CustomResourceDefinitionStatus::default();
        assert_eq!(
            serde_json::to_value(&status).unwrap(),
            json!({"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []})
        );
        // A round trip of the typed spec adds nothing the user did not send (besides
        // always-present Go fields).
        let spec = serde_json::to_value(&crd.spec).unwrap();
        assert_eq!(
            spec["names"],
            json!({"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]})
        );
        assert!(spec.get("conversion").is_none());
    }
}
