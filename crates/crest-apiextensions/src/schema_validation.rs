//! Validation of a CRD's OpenAPI v3 schema (`openAPIV3Schema`), as kube-apiserver 1.32's
//! `validateCustomResourceDefinitionValidation` / `ValidateCustomResourceDefinitionOpenAPISchema`
//! and the structural-schema rules of `ValidateStructural` (`pkg/apiserver/schema`), with
//! upstream's field paths, messages and error order.
//!
//! Schemas are held as JSON; a value of the wrong JSON type is read as absent (the decoder
//! rejects those before validation, see [`crate::types::decode`]). Upstream's Go types decide what
//! counts as "set": an empty string, `false` or `null` is unset, while an empty list or map is set
//! for fields that are slices or maps in Go.

use crest_api::{aggregate, FieldError, FieldErrors, FieldPath};
use crest_schema::Structural;
use serde_json::{Map, Value};
use std::collections::HashSet;

const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const VALIDATION_REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];
/// Go field names allowed at the root when the status subresource is enabled, as upstream
/// prints them.
const ALLOWED_AT_STATUS_ROOT: [&str; 22] = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
];
/// Schema nesting beyond this is refused instead of recursed into (no real schema comes close;
/// it bounds the stack for hostile input).
const MAX_DEPTH: usize = 200;

/// The switches of upstream's `validationOptions` that concern schemas, plus whether the status
/// subresource is enabled. `Default` is everything off; [`SchemaValidationOptions::create`] is
/// what a CRD create uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchemaValidationOptions {
    /// The status subresource is enabled: the root must be an object with restricted keywords.
    pub status_enabled: bool,
    /// `default` may be used (otherwise it is Forbidden).
    pub allow_defaults: bool,
    /// `type` must be one of the OpenAPI v3 types.
    pub require_valid_property_type: bool,
    /// The schema must be structural (`ValidateStructural`).
    pub require_structural_schema: bool,
    /// Defaults must not contain fields that pruning would drop.
    pub require_pruned_defaults: bool,
    /// Items of `x-kubernetes-list-type: set` must be atomic.
    pub require_atomic_set_type: bool,
    /// Map-list keys must be required or defaulted and not nullable; set and map-list items must
    /// not be nullable.
    pub require_map_list_keys_map_set_validation: bool,
}

impl SchemaValidationOptions {
    /// The options of a CRD create (every rule on).
    pub fn create(status_enabled: bool) -> Self {
        SchemaValidationOptions {
            status_enabled,
            allow_defaults: true,
            require_valid_property_type: true,
            require_structural_schema: true,
            require_pruned_defaults: true,
            require_atomic_set_type: true,
            require_map_list_keys_map_set_validation: true,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A lenient typed view of one JSONSchemaProps.

/// One schema node; `None` is Go's zero struct (e.g. a `null` element of `allOf`).
#[derive(Clone, Copy)]
pub(crate) struct Schema<'a>(Option<&'a Map<String, Value>>);

/// `items`: one schema or (forbidden) a list of schemas.
#[derive(Clone, Copy)]
enum Items<'a> {
    One(Schema<'a>),
    Many(&'a [Value]),
}

/// `additionalProperties`: a boolean or a schema.
#[derive(Clone, Copy)]
enum OrBool<'a> {
    Bool(bool),
    Schema(Schema<'a>),
}

impl<'a> Schema<'a> {
    pub(crate) fn new(v: &'a Value) -> Self {
        Schema(v.as_object())
    }

    /// A present, non-null value.
    fn get(self, key: &str) -> Option<&'a Value> {
        self.0?.get(key).filter(|v| !v.is_null())
    }

    fn has(self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn str(self, key: &str) -> &'a str {
        self.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// A Go `*string`: `Some` when set (even to "").
    fn opt_str(self, key: &str) -> Option<&'a str> {
        self.get(key).map(|v| v.as_str().unwrap_or(""))
    }

    fn ty(self) -> &'a str {
        self.str("type")
    }

    fn flag(self, key: &str) -> bool {
        matches!(self.get(key), Some(Value::Bool(true)))
    }

    fn map(self, key: &str) -> Option<&'a Map<String, Value>> {
        self.get(key).and_then(Value::as_object)
    }

    fn map_len(self, key: &str) -> usize {
        self.map(key).map_or(0, Map::len)
    }

    /// The schemas of a map-valued keyword (`properties`, `definitions`, ...).
    fn schema_map(self, key: &str) -> impl Iterator<Item = (&'a String, Schema<'a>)> {
        self.map(key)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k, Schema::new(v)))
    }

    fn property(self, name: &str) -> Option<Schema<'a>> {
        self.map("properties")?.get(name).map(Schema::new)
    }

    fn list(self, key: &str) -> &'a [Value] {
        self.get(key)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    fn schemas(self, key: &str) -> impl Iterator<Item = Schema<'a>> {
        self.list(key).iter().map(Schema::new)
    }

    fn strings(self, key: &str) -> Vec<&'a str> {
        self.list(key)
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect()
    }

    fn not(self) -> Option<Schema<'a>> {
        self.get("not").map(Schema::new)
    }

    fn items(self) -> Option<Items<'a>> {
        match self.get("items")? {
            Value::Array(a) => Some(Items::Many(a)),
            v => Some(Items::One(Schema::new(v))),
        }
    }

    /// The single items schema (Go's `Items.Schema`).
    fn items_schema(self) -> Option<Schema<'a>> {
        match self.items()? {
            Items::One(s) => Some(s),
            Items::Many(_) => None,
        }
    }

    fn additional_properties(self) -> Option<OrBool<'a>> {
        match self.get("additionalProperties")? {
            Value::Bool(b) => Some(OrBool::Bool(*b)),
            v => Some(OrBool::Schema(Schema::new(v))),
        }
    }

    fn additional_properties_schema(self) -> Option<Schema<'a>> {
        match self.additional_properties()? {
            OrBool::Schema(s) => Some(s),
            OrBool::Bool(_) => None,
        }
    }

    fn entries(self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.0.into_iter().flatten()
    }
}

/// Calls `pred` on `schema` and every schema nested in it (upstream's `SchemaHas`).
pub(crate) fn schema_has(schema: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    schema_has_at(schema, pred, 0)
}

fn schema_has_at(schema: &Value, pred: &dyn Fn(&Value) -> bool, depth: usize) -> bool {
    if !schema.is_object() || depth > MAX_DEPTH {
        return false;
    }
    if pred(schema) {
        return true;
    }
    let s = Schema::new(schema);
    let rec = |v: &Value| schema_has_at(v, pred, depth + 1);
    let one = |key: &str| s.get(key).is_some_and(rec);
    let list = |key: &str| s.list(key).iter().any(rec);
    let map = |key: &str| s.map(key).is_some_and(|m| m.values().any(rec));
    one("items")
        || list("items")
        || list("allOf")
        || list("anyOf")
        || list("oneOf")
        || one("not")
        || map("properties")
        || one("additionalProperties")
        || map("patternProperties")
        || one("additionalItems")
        || map("definitions")
        || map("dependencies")
}

/// `SchemaHasInvalidTypes`.
pub(crate) fn has_invalid_types(schema: &Value) -> bool {
    schema_has(schema, &|s| {
        let t = Schema::new(s).ty();
        !t.is_empty() && !OPENAPI_V3_TYPES.contains(&t)
    })
}

/// `hasNonAtomicSetType`: a set list whose items are not atomic.
pub(crate) fn has_non_atomic_set_type(schema: &Value) -> bool {
    schema_has(schema, &|v| {
        let s = Schema::new(v);
        if s.opt_str("x-kubernetes-list-type") != Some("set") {
            return false;
        }
        let Some(is) = s.items_schema() else {
            return false;
        };
        match is.ty() {
            "array" => is
                .opt_str("x-kubernetes-list-type")
                .is_some_and(|t| t != "atomic"),
            "object" => is.opt_str("x-kubernetes-map-type") != Some("atomic"),
            _ => false,
        }
    })
}

/// `hasInvalidMapListKeysMapSet`.
pub(crate) fn has_invalid_map_list_keys_map_set(schema: &Value) -> bool {
    schema_has(schema, &|v| {
        !map_list_keys_map_set(Schema::new(v), &FieldPath::root()).is_empty()
    })
}

/// `schemaIsNonStructural`: the schema cannot be converted or breaks a structural rule.
pub(crate) fn is_non_structural(schema: &Value) -> bool {
    match structural_violations(schema, &FieldPath::root()) {
        Ok(errs) => !errs.is_empty(),
        Err(_) => true,
    }
}

// ---------------------------------------------------------------------------------------------
// validateCustomResourceDefinitionValidation

/// Validates `schema` as the `openAPIV3Schema` of a CRD (`validateCustomResourceDefinitionValidation`).
/// `path` is the path of the enclosing validation (`spec.validation` or
/// `spec.versions[i].schema`); errors are reported below `path.openAPIV3Schema`. A `None` or
/// `null` schema is valid.
pub fn validate_custom_resource_validation(
    schema: Option<&Value>,
    opts: &SchemaValidationOptions,
    path: &FieldPath,
) -> FieldErrors {
    let mut errs = vec![];
    let Some(schema) = schema.filter(|s| !s.is_null()) else {
        return errs;
    };
    let s = Schema::new(schema);
    let root = path.child("openAPIV3Schema");
    if opts.status_enabled {
        status_root(s, &root, &mut errs);
    }
    if s.flag("nullable") {
        errs.push(FieldError::forbidden(
            &root.child("nullable"),
            "nullable cannot be true at the root",
        ));
    }
    // A schema that cannot be converted to the structural form reports why only when nothing
    // else is wrong: the OpenAPI checks below usually say the same more precisely.
    let mut conversion_errs = vec![];
    // CEL rules are checked only in structural schemas with valid defaults.
    let mut cel_schema = None;
    if opts.require_structural_schema {
        match structural_violations(schema, &root) {
            Err(msg) => conversion_errs.push(FieldError::invalid(&root, "", msg)),
            Ok(v) if !v.is_empty() => errs.extend(v),
            Ok(_) => match Structural::from_json(schema) {
                Err(e) => errs.push(FieldError::invalid(&root, "", e)),
                Ok(mut st) => {
                    // The root is a resource: its apiVersion, kind and metadata defaults are
                    // checked as such (and CEL types it so too).
                    st.extensions.x_embedded_resource = true;
                    let default_errs = validate_defaults(&st, &root, opts.require_pruned_defaults);
                    if default_errs.is_empty() {
                        cel_schema = Some(st);
                    }
                    errs.extend(default_errs);
                }
            },
        }
    }
    let ssv = Ssv {
        allow_defaults: opts.allow_defaults,
        disallow_defaults_reason: String::new(),
        inside_resource_meta: false,
        require_valid_property_type: opts.require_valid_property_type,
    };
    let schema_errs_start = errs.len();
    openapi_schema(s, &root, &ssv, true, opts, 0, &mut errs);
    if let Some(st) = &cel_schema {
        let cel_errs =
            crest_schema_cel::crd::validate_schema_rules(st, &root, &errs[schema_errs_start..]);
        errs.extend(cel_errs);
    }
    if errs.is_empty() {
        errs.extend(conversion_errs);
    }
    errs
}

/// The status subresource takes its schema from `properties[status]`, so the root may only hold
/// keywords that survive that extraction. Go walks the struct fields in order and reports the
/// first offending one.
fn status_root(s: Schema<'_>, root: &FieldPath, errs: &mut FieldErrors) {
    for (go_name, key) in GO_FIELDS {
        if go_zero(s, key) {
            continue;
        }
        if go_name == "Type" {
            if s.ty() != "object" {
                errs.push(FieldError::invalid(
                    &root.child("type"),
                    s.ty(),
                    "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                ));
                return;
            }
            continue;
        }
        if !ALLOWED_AT_STATUS_ROOT.contains(&go_name) {
            errs.push(FieldError::invalid(
                root,
                Value::Object(s.0.cloned().unwrap_or_default()),
                format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    ALLOWED_AT_STATUS_ROOT.join(" ")
                ),
            ));
            return;
        }
    }
}

/// The fields of Go's internal `JSONSchemaProps`, in declaration order, with their JSON names.
const GO_FIELDS: [(&str, &str); 44] = [
    ("ID", "id"),
    ("Schema", "$schema"),
    ("Ref", "$ref"),
    ("Description", "description"),
    ("Type", "type"),
    ("Nullable", "nullable"),
    ("Format", "format"),
    ("Title", "title"),
    ("Default", "default"),
    ("Maximum", "maximum"),
    ("ExclusiveMaximum", "exclusiveMaximum"),
    ("Minimum", "minimum"),
    ("ExclusiveMinimum", "exclusiveMinimum"),
    ("MaxLength", "maxLength"),
    ("MinLength", "minLength"),
    ("Pattern", "pattern"),
    ("MaxItems", "maxItems"),
    ("MinItems", "minItems"),
    ("UniqueItems", "uniqueItems"),
    ("MultipleOf", "multipleOf"),
    ("Enum", "enum"),
    ("MaxProperties", "maxProperties"),
    ("MinProperties", "minProperties"),
    ("Required", "required"),
    ("Items", "items"),
    ("AllOf", "allOf"),
    ("OneOf", "oneOf"),
    ("AnyOf", "anyOf"),
    ("Not", "not"),
    ("Properties", "properties"),
    ("AdditionalProperties", "additionalProperties"),
    ("PatternProperties", "patternProperties"),
    ("Dependencies", "dependencies"),
    ("AdditionalItems", "additionalItems"),
    ("Definitions", "definitions"),
    ("ExternalDocs", "externalDocs"),
    ("Example", "example"),
    (
        "XPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
    ),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource"),
    ("XIntOrString", "x-kubernetes-int-or-string"),
    ("XListMapKeys", "x-kubernetes-list-map-keys"),
    ("XListType", "x-kubernetes-list-type"),
    ("XMapType", "x-kubernetes-map-type"),
    ("XValidations", "x-kubernetes-validations"),
];

/// Whether `key` holds Go's zero value in the internal `JSONSchemaProps`.
fn go_zero(s: Schema<'_>, key: &str) -> bool {
    match s.get(key) {
        None => true,
        Some(v) => match key {
            "id" | "$schema" | "description" | "type" | "format" | "title" | "pattern" => {
                v.as_str().is_none_or(str::is_empty)
            }
            "nullable"
            | "exclusiveMaximum"
            | "exclusiveMinimum"
            | "uniqueItems"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string" => v != &Value::Bool(true),
            // Pointers, slices and maps: set once present, even when empty.
            _ => false,
        },
    }
}

/// Defaults and metadata context of the OpenAPI walk (upstream's `specStandardValidatorV3`).
#[derive(Clone)]
struct Ssv {
    allow_defaults: bool,
    disallow_defaults_reason: String,
    inside_resource_meta: bool,
    require_valid_property_type: bool,
}

impl Ssv {
    fn with_forbidden_defaults(&self, reason: &str) -> Ssv {
        Ssv {
            allow_defaults: false,
            disallow_defaults_reason: reason.to_string(),
            ..self.clone()
        }
    }

    /// `specStandardValidatorV3.validate`: the per-node keyword checks.
    fn validate(&self, s: Schema<'_>, path: &FieldPath, errs: &mut FieldErrors) {
        let ty = s.ty();
        if self.require_valid_property_type && !ty.is_empty() && !OPENAPI_V3_TYPES.contains(&ty) {
            errs.push(FieldError::not_supported(
                &path.child("type"),
                ty,
                &OPENAPI_V3_TYPES,
            ));
        }
        if s.has("default") && !self.allow_defaults {
            let mut detail = "must not be set".to_string();
            if !self.disallow_defaults_reason.is_empty() {
                detail.push(' ');
                detail.push_str(&self.disallow_defaults_reason);
            }
            errs.push(FieldError::forbidden(&path.child("default"), detail));
        }
        if !s.str("id").is_empty() {
            errs.push(FieldError::forbidden(
                &path.child("id"),
                "id is not supported",
            ));
        }
        if s.has("additionalItems") {
            errs.push(FieldError::forbidden(
                &path.child("additionalItems"),
                "additionalItems is not supported",
            ));
        }
        if s.map_len("patternProperties") != 0 {
            errs.push(FieldError::forbidden(
                &path.child("patternProperties"),
                "patternProperties is not supported",
            ));
        }
        if s.map_len("definitions") != 0 {
            errs.push(FieldError::forbidden(
                &path.child("definitions"),
                "definitions is not supported",
            ));
        }
        if s.has("dependencies") {
            errs.push(FieldError::forbidden(
                &path.child("dependencies"),
                "dependencies is not supported",
            ));
        }
        if s.has("$ref") {
            errs.push(FieldError::forbidden(
                &path.child("$ref"),
                "$ref is not supported",
            ));
        }
        if ty == "null" {
            errs.push(FieldError::forbidden(
                &path.child("type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
        if matches!(s.items(), Some(Items::Many(a)) if !a.is_empty()) {
            errs.push(FieldError::forbidden(
                &path.child("items"),
                "items must be a schema object and not an array",
            ));
        }
        if self.inside_resource_meta && s.flag("x-kubernetes-embedded-resource") {
            errs.push(FieldError::forbidden(
                &path.child("x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ));
        }
    }
}

fn too_deep(path: &FieldPath) -> FieldError {
    FieldError::forbidden(
        path,
        format!("must not be nested more than {MAX_DEPTH} levels deep"),
    )
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` (without the CEL compilation).
fn openapi_schema(
    s: Schema<'_>,
    path: &FieldPath,
    ssv: &Ssv,
    is_root: bool,
    opts: &SchemaValidationOptions,
    depth: usize,
    errs: &mut FieldErrors,
) {
    if depth > MAX_DEPTH {
        errs.push(too_deep(path));
        return;
    }
    let depth = depth + 1;
    ssv.validate(s, path, errs);

    if s.flag("uniqueItems") {
        errs.push(FieldError::forbidden(
            &path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }

    // properties are for structs, additionalProperties for maps: Kubernetes API conventions
    // ignore unknown fields, which a struct with additionalProperties would contradict.
    if let Some(ap) = s.additional_properties() {
        if s.map_len("properties") != 0 && !matches!(ap, OrBool::Bool(true)) {
            errs.push(FieldError::forbidden(
                &path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let OrBool::Schema(sub) = ap {
            // Pruning without an actual value is ambiguous for metadata maps.
            let sub_ssv = if ssv.inside_resource_meta {
                ssv.with_forbidden_defaults(
                    "inside additionalProperties applying to object metadata",
                )
            } else {
                ssv.clone()
            };
            openapi_schema(
                sub,
                &path.child("additionalProperties"),
                &sub_ssv,
                false,
                opts,
                depth,
                errs,
            );
        }
    }

    let embedded = s.flag("x-kubernetes-embedded-resource");
    for (name, sub) in s.schema_map("properties") {
        let mut sub_ssv = ssv.clone();
        if (is_root || embedded) && matches!(name.as_str(), "metadata" | "kind" | "apiVersion") {
            sub_ssv.inside_resource_meta = true;
            if is_root {
                sub_ssv = sub_ssv.with_forbidden_defaults(&format!("in top-level {name}"));
            }
        }
        openapi_schema(
            sub,
            &path.child("properties").key(name),
            &sub_ssv,
            false,
            opts,
            depth,
            errs,
        );
    }

    if let Some(not) = s.not() {
        openapi_schema(not, &path.child("not"), ssv, false, opts, depth, errs);
    }
    for (key, list) in [("allOf", "allOf"), ("oneOf", "oneOf"), ("anyOf", "anyOf")] {
        for (i, sub) in s.schemas(list).enumerate() {
            openapi_schema(
                sub,
                &path.child(key).index(i),
                ssv,
                false,
                opts,
                depth,
                errs,
            );
        }
    }
    for (name, sub) in s.schema_map("definitions") {
        openapi_schema(
            sub,
            &path.child("definitions").key(name),
            ssv,
            false,
            opts,
            depth,
            errs,
        );
    }
    match s.items() {
        Some(Items::One(sub)) => {
            openapi_schema(sub, &path.child("items"), ssv, false, opts, depth, errs)
        }
        Some(Items::Many(list)) => {
            for (i, sub) in list.iter().enumerate() {
                openapi_schema(
                    Schema::new(sub),
                    &path.child("items").index(i),
                    ssv,
                    false,
                    opts,
                    depth,
                    errs,
                );
            }
        }
        None => {}
    }
    if let Some(deps) = s.map("dependencies") {
        // A dependency is a schema or a list of property names; only schemas are walked.
        for (name, dep) in deps.iter().filter(|(_, d)| d.is_object()) {
            openapi_schema(
                Schema::new(dep),
                &path.child("dependencies").key(name),
                ssv,
                false,
                opts,
                depth,
                errs,
            );
        }
    }

    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errs.push(FieldError::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }

    list_and_map_types(s, path, opts, errs);
    if opts.require_map_list_keys_map_set_validation {
        errs.extend(map_list_keys_map_set(s, path));
    }
    x_validations(s, path, errs);
}

/// The `x-kubernetes-map-type`, `x-kubernetes-list-type` and `x-kubernetes-list-map-keys` rules.
fn list_and_map_types(
    s: Schema<'_>,
    path: &FieldPath,
    opts: &SchemaValidationOptions,
    errs: &mut FieldErrors,
) {
    let ty = s.ty();
    let map_type = s.opt_str("x-kubernetes-map-type");
    if map_type.is_some() && ty != "object" {
        let detail = "must be object if x-kubernetes-map-type is specified";
        if ty.is_empty() {
            errs.push(FieldError::required(&path.child("type"), detail));
        } else {
            errs.push(FieldError::invalid(&path.child("type"), ty, detail));
        }
    }
    if let Some(mt) = map_type.filter(|t| *t != "atomic" && *t != "granular") {
        errs.push(FieldError::not_supported(
            &path.child("x-kubernetes-map-type"),
            mt,
            &["atomic", "granular"],
        ));
    }

    let list_type = s.opt_str("x-kubernetes-list-type");
    if list_type.is_some() && ty != "array" {
        let detail = "must be array if x-kubernetes-list-type is specified";
        if ty.is_empty() {
            errs.push(FieldError::required(&path.child("type"), detail));
        } else {
            errs.push(FieldError::invalid(&path.child("type"), ty, detail));
        }
    } else if opts.require_atomic_set_type && list_type == Some("set") {
        if let Some(is) = s.items_schema() {
            let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
            let item_list_type = is.opt_str("x-kubernetes-list-type");
            match is.ty() {
                "array" => {
                    if let Some(lt) = item_list_type.filter(|t| *t != "atomic") {
                        errs.push(FieldError::invalid(
                            &path.child("items").child("x-kubernetes-list-type"),
                            lt,
                            detail,
                        ));
                    }
                }
                "object" if is.opt_str("x-kubernetes-map-type") != Some("atomic") => {
                    // Upstream reports the item's list type (a Go pointer) as the value.
                    let e = match item_list_type {
                        Some(lt) => FieldError::invalid(
                            &path.child("items").child("x-kubernetes-map-type"),
                            lt,
                            detail,
                        ),
                        None => FieldError::invalid_repr(
                            &path.child("items").child("x-kubernetes-map-type"),
                            "(*string)(nil)",
                            detail,
                        ),
                    };
                    errs.push(e);
                }
                _ => {}
            }
        }
    }
    if let Some(lt) = list_type.filter(|t| !matches!(*t, "atomic" | "set" | "map")) {
        errs.push(FieldError::not_supported(
            &path.child("x-kubernetes-list-type"),
            lt,
            &["atomic", "set", "map"],
        ));
    }

    let keys = s.strings("x-kubernetes-list-map-keys");
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required(
                &path.child("x-kubernetes-list-type"),
                detail,
            )),
            Some(lt) if lt != "map" => errs.push(FieldError::invalid(
                &path.child("x-kubernetes-list-type"),
                lt,
                detail,
            )),
            _ => {}
        }
    }

    if list_type == Some("map") {
        if keys.is_empty() {
            errs.push(FieldError::required(
                &path.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match s.items() {
            None => errs.push(FieldError::required(
                &path.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(Items::Many(list)) => errs.push(FieldError::invalid(
                &path.child("items"),
                Value::Array(list.to_vec()),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(Items::One(is)) if is.ty() != "object" => errs.push(FieldError::invalid(
                &path.child("items").child("type"),
                is.ty(),
                "must be object if parent array's x-kubernetes-list-type is map",
            )),
            Some(Items::One(is)) => {
                let keys_repr = go_string_slice(&keys);
                let mut seen = HashSet::new();
                for k in &keys {
                    match is.property(k) {
                        Some(p) if matches!(p.ty(), "array" | "object") => {
                            // Upstream reports the items' type, not the key's.
                            errs.push(FieldError::invalid(
                                &path.child("items").child("properties").key(k).child("type"),
                                is.ty(),
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            ))
                        }
                        Some(_) => {}
                        None => errs.push(FieldError::invalid_repr(
                            &path.child("x-kubernetes-list-map-keys"),
                            &keys_repr,
                            "entries must all be names of item properties",
                        )),
                    }
                    if !seen.insert(*k) {
                        errs.push(FieldError::invalid_repr(
                            &path.child("x-kubernetes-list-map-keys"),
                            &keys_repr,
                            "must not contain duplicate entries",
                        ));
                    }
                }
            }
        }
    }
}

/// Go's `%#v` of a `[]string`.
fn go_string_slice(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// `validateMapListKeysMapSet`.
fn map_list_keys_map_set(s: Schema<'_>, path: &FieldPath) -> FieldErrors {
    let mut errs = vec![];
    let Some(is) = s.items_schema() else {
        return errs;
    };
    let Some(list_type) = s.opt_str("x-kubernetes-list-type") else {
        return errs;
    };
    if list_type != "set" && list_type != "map" {
        return errs;
    }
    if is.flag("nullable") {
        errs.push(FieldError::forbidden(
            &path.child("items").child("nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type == "map" {
        let required = is.strings("required");
        for k in s.strings("x-kubernetes-list-map-keys") {
            let Some(p) = is.property(k) else { continue };
            let prop_path = path.child("items").child("properties").key(k);
            if !required.contains(&k) && !p.has("default") {
                errs.push(FieldError::required(
                    &prop_path.child("default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if p.flag("nullable") {
                errs.push(FieldError::forbidden(
                    &prop_path.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
    errs
}

/// CEL's line breaks.
fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The checks of `x-kubernetes-validations` that need no CEL (compilation, cost limits and
/// oldSelf correlation are `crest_schema_cel::crd`).
fn x_validations(s: Schema<'_>, path: &FieldPath, errs: &mut FieldErrors) {
    for (i, rule) in s.schemas("x-kubernetes-validations").enumerate() {
        let rp = path.child("x-kubernetes-validations").index(i);
        let rule_text = rule.str("rule");
        let message = rule.str("message");
        let message_expr = rule.str("messageExpression");
        let trimmed_rule = rule_text.trim();
        let trimmed_msg = message.trim();
        if trimmed_rule.is_empty() {
            errs.push(FieldError::required(
                &rp.child("rule"),
                "rule is not specified",
            ));
        } else if !message.is_empty() && trimmed_msg.is_empty() {
            errs.push(FieldError::invalid(
                &rp.child("message"),
                message,
                "message must be non-empty if specified",
            ));
        } else if has_newlines(trimmed_msg) {
            errs.push(FieldError::invalid(
                &rp.child("message"),
                message,
                "message must not contain line breaks",
            ));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            errs.push(FieldError::required(
                &rp.child("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !message_expr.is_empty() && message_expr.trim().is_empty() {
            errs.push(FieldError::required(
                &rp.child("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.opt_str("reason") {
            if !VALIDATION_REASONS.contains(&reason) {
                errs.push(FieldError::not_supported(
                    &rp.child("reason"),
                    reason,
                    &VALIDATION_REASONS,
                ));
            }
        }
        let field_path = rule.str("fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                &rp.child("fieldPath"),
                field_path,
                "fieldPath must be non-empty if specified",
            ));
        }
        if has_newlines(field_path) {
            errs.push(FieldError::invalid(
                &rp.child("fieldPath"),
                field_path,
                "fieldPath must not contain line breaks",
            ));
        }
        if !field_path.is_empty() && !field_path_valid(s, field_path) {
            errs.push(FieldError::invalid(
                &rp.child("fieldPath"),
                field_path,
                "fieldPath must be a valid path",
            ));
        }
    }
}

/// `pathValid`: a schema that is not convertible accepts any path.
fn field_path_valid(s: Schema<'_>, json_path: &str) -> bool {
    if conversion_error(s, 0).is_some() {
        return true;
    }
    valid_field_path(json_path, s).is_ok()
}

/// One step of a field path: a property of `cur`, or its `additionalProperties` value.
fn path_step<'a>(cur: Option<Schema<'a>>, name: &str) -> Result<Option<Schema<'a>>, String> {
    let s = cur.ok_or("does not refer to a valid field")?;
    // Structural properties exist only when non-empty.
    if s.map_len("properties") != 0 {
        s.property(name)
            .map(Some)
            .ok_or_else(|| "does not refer to a valid field".to_string())
    } else if let Some(ap) = s.additional_properties() {
        Ok(match ap {
            OrBool::Schema(sub) => Some(sub),
            OrBool::Bool(_) => None,
        })
    } else {
        Err("does not refer to a valid field".to_string())
    }
}

/// `cel.ValidFieldPath` over the structural view of `schema` (array notation allowed).
fn valid_field_path(json_path: &str, schema: Schema<'_>) -> Result<(), String> {
    let mut current = Some(schema);
    crest_schema_cel::fieldpath::walk(json_path, true, |name| {
        current = path_step(current, name)?;
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Structural schemas (pkg/apiserver/schema: NewStructural and ValidateStructural).

/// Why upstream's `NewStructural` cannot convert the schema, if it cannot (the rules are the same
/// for schemas under logical junctors).
fn conversion_error(s: Schema<'_>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some(format!(
            "OpenAPIV3Schema must not be nested more than {MAX_DEPTH} levels deep"
        ));
    }
    let depth = depth + 1;
    if !s.str("id").is_empty() {
        return Some("OpenAPIV3Schema 'id' is not supported".into());
    }
    if !s.str("$schema").is_empty() {
        return Some("OpenAPIV3Schema 'schema' is not supported".into());
    }
    if s.opt_str("$ref").is_some_and(|r| !r.is_empty()) {
        return Some("OpenAPIV3Schema '$ref' is not supported".into());
    }
    if s.map_len("patternProperties") > 0 {
        return Some("OpenAPIV3Schema 'patternProperties' is not supported".into());
    }
    if s.map_len("dependencies") > 0 {
        return Some("OpenAPIV3Schema 'dependencies' is not supported".into());
    }
    if s.has("additionalItems") {
        return Some("OpenAPIV3Schema 'additionalItems' is not supported".into());
    }
    if s.map_len("definitions") > 0 {
        return Some("OpenAPIV3Schema 'definitions' is not supported".into());
    }
    let junctors = s
        .not()
        .into_iter()
        .chain(s.schemas("allOf"))
        .chain(s.schemas("anyOf"))
        .chain(s.schemas("oneOf"));
    for sub in junctors {
        if let Some(e) = conversion_error(sub, depth) {
            return Some(e);
        }
    }
    if let Some(ap) = s.additional_properties_schema() {
        if let Some(e) = conversion_error(ap, depth) {
            return Some(e);
        }
    }
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    match s.items() {
        Some(Items::Many(a)) if !a.is_empty() => {
            return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into())
        }
        Some(Items::One(sub)) => {
            if let Some(e) = conversion_error(sub, depth) {
                return Some(e);
            }
        }
        _ => {}
    }
    for (_, sub) in s.schema_map("properties") {
        if let Some(e) = conversion_error(sub, depth) {
            return Some(e);
        }
    }
    None
}

/// The structural-schema violations of `schema` (upstream's `NewStructural` followed by
/// `ValidateStructural`), sorted by message as upstream sorts them; `path` is the schema's own
/// path. `Err` carries the conversion error of a schema that cannot be read as structural at
/// all (e.g. `$ref` or an `items` list).
pub fn structural_violations(schema: &Value, path: &FieldPath) -> Result<FieldErrors, String> {
    let s = Schema::new(schema);
    if let Some(e) = conversion_error(s, 0) {
        return Err(e);
    }
    let mut errs = vec![];
    invariants(s, Level::Root, path, 0, &mut errs);
    // Only the root's logical junctors are checked for completeness, as upstream does.
    value_validation_completeness(s, Some(s), path, path, 0, &mut errs);
    errs.sort_by_cached_key(|e| e.to_string());
    Ok(errs)
}

/// The structural-schema violations of `schema`, reported from the root (an empty path); a
/// schema that cannot be converted at all gives one error at the root. Empty means structural.
pub fn is_structural(schema: &Value) -> FieldErrors {
    match structural_violations(schema, &FieldPath::root()) {
        Ok(errs) => errs,
        Err(msg) => vec![FieldError::invalid(&FieldPath::root(), "", msg)],
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `validateStructuralInvariants`.
fn invariants(s: Schema<'_>, lvl: Level, path: &FieldPath, depth: usize, errs: &mut FieldErrors) {
    if depth > MAX_DEPTH {
        errs.push(too_deep(path));
        return;
    }
    let depth = depth + 1;
    let ty = s.ty();
    let items = s.items_schema();
    if ty == "array" && items.is_none() {
        errs.push(FieldError::required(
            &path.child("items"),
            "must be specified",
        ));
    }
    if let Some(items) = items {
        invariants(items, Level::Item, &path.child("items"), depth, errs);
    }
    for (name, sub) in s.schema_map("properties") {
        invariants(
            sub,
            Level::Field,
            &path.child("properties").key(name),
            depth,
            errs,
        );
    }
    let ap = s.additional_properties();
    if let Some(ap) = ap {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(
                &path.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let OrBool::Schema(sub) = ap {
            invariants(
                sub,
                Level::Field,
                &path.child("additionalProperties"),
                depth,
                errs,
            );
        }
    }

    let int_or_string = s.flag("x-kubernetes-int-or-string");
    let preserve = s.flag("x-kubernetes-preserve-unknown-fields");
    let embedded = s.flag("x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            &path.child("x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }

    let skip_any_of = is_int_or_string_any_of(s);
    let skip_first_all_of_any_of = s
        .schemas("allOf")
        .next()
        .is_some_and(is_int_or_string_any_of);
    value_validation(
        s,
        skip_any_of,
        skip_first_all_of_any_of,
        lvl,
        path,
        depth,
        errs,
    );

    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            errs.push(FieldError::required(&path.child("type"), detail));
        } else {
            errs.push(FieldError::invalid(&path.child("type"), ty, detail));
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(&path.child("type"), detail));
    }
    if embedded && ap.is_some() {
        errs.push(FieldError::forbidden(
            &path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            &path.child("type"),
            ty,
            "must be object at the root",
        ));
    }

    // Only name and generateName of metadata may be restricted; kind and apiVersion are strings.
    let props = s.map_len("properties") > 0;
    if check_metadata && props {
        for key in ["kind", "apiVersion"] {
            if let Some(p) = s.property(key) {
                if p.ty() != "string" {
                    errs.push(FieldError::invalid(
                        &path.child("properties").key(key).child("type"),
                        p.ty(),
                        "must be string",
                    ));
                }
            }
        }
    }
    if let Some(md) = s.property("metadata").filter(|_| props) {
        let md_path = path.child("properties").key("metadata");
        if check_metadata && md.ty() != "object" {
            errs.push(FieldError::invalid(
                &md_path.child("type"),
                md.ty(),
                "must be object",
            ));
        }
        if lvl == Level::Root && !metadata_only_names(md) {
            errs.push(FieldError::forbidden(
                &md_path,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }

    if embedded && !preserve && !props {
        errs.push(FieldError::required(
            &path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Whether `key: v` is Go's zero value in the structural form (`Structural` /
/// `NestedValueValidation`); keywords the structural form drops count as zero.
fn structural_zero(key: &str, v: &Value, nested: bool) -> bool {
    if v.is_null() {
        return true;
    }
    match key {
        "description" | "type" | "title" | "format" | "pattern" => {
            v.as_str().is_none_or(str::is_empty)
        }
        "nullable"
        | "exclusiveMaximum"
        | "exclusiveMinimum"
        | "uniqueItems"
        | "x-kubernetes-embedded-resource"
        | "x-kubernetes-int-or-string"
        | "x-kubernetes-preserve-unknown-fields" => v != &Value::Bool(true),
        // Built by appending: empty lists stay nil.
        "enum" | "allOf" | "oneOf" | "anyOf" => v.as_array().is_none_or(Vec::is_empty),
        // An empty items list converts to no items.
        "items" => v.as_array().is_some_and(Vec::is_empty),
        "properties" => !nested && v.as_object().is_none_or(Map::is_empty),
        "default"
        | "maximum"
        | "minimum"
        | "maxLength"
        | "minLength"
        | "maxItems"
        | "minItems"
        | "multipleOf"
        | "maxProperties"
        | "minProperties"
        | "required"
        | "not"
        | "additionalProperties"
        | "x-kubernetes-list-map-keys"
        | "x-kubernetes-list-type"
        | "x-kubernetes-map-type"
        | "x-kubernetes-validations" => false,
        _ => true,
    }
}

/// Whether the root's `metadata` schema, once name/generateName restrictions, type and default
/// are set aside, is empty (upstream compares against an empty structural schema).
fn metadata_only_names(md: Schema<'_>) -> bool {
    md.entries().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => v
            .as_object()
            .is_none_or(|m| m.keys().all(|k| k == "name" || k == "generateName")),
        _ => structural_zero(k, v, false),
    })
}

/// One of the two `anyOf` entries of the int-or-string patterns: exactly `{type: <ty>}`.
fn is_exactly_type(s: Schema<'_>, ty: &str) -> bool {
    s.ty() == ty
        && s.entries()
            .all(|(k, v)| k == "type" || structural_zero(k, v, true))
}

/// `anyOf: [{type: integer}, {type: string}]` (upstream's `isIntOrStringAnyOfPattern`).
fn is_int_or_string_any_of(s: Schema<'_>) -> bool {
    let any_of = s.list("anyOf");
    any_of.len() == 2
        && is_exactly_type(Schema::new(&any_of[0]), "integer")
        && is_exactly_type(Schema::new(&any_of[1]), "string")
}

/// `validateValueValidation`: the logical junctors and `pattern` of a node.
fn value_validation(
    v: Schema<'_>,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    path: &FieldPath,
    depth: usize,
    errs: &mut FieldErrors,
) {
    if !skip_any_of {
        for (i, sub) in v.schemas("anyOf").enumerate() {
            nested(sub, false, lvl, &path.child("anyOf").index(i), depth, errs);
        }
    }
    for (i, sub) in v.schemas("allOf").enumerate() {
        let skip = skip_first_all_of_any_of && i == 0;
        nested(sub, skip, lvl, &path.child("allOf").index(i), depth, errs);
    }
    for (i, sub) in v.schemas("oneOf").enumerate() {
        nested(sub, false, lvl, &path.child("oneOf").index(i), depth, errs);
    }
    if let Some(not) = v.not() {
        nested(not, false, lvl, &path.child("not"), depth, errs);
    }
    let pattern = v.str("pattern");
    if !pattern.is_empty() {
        if let Err(e) = crest_goregexp::check(pattern) {
            errs.push(FieldError::invalid(
                &path.child("pattern"),
                pattern,
                format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
}

/// `validateNestedValueValidation`: a schema under `allOf`/`anyOf`/`oneOf`/`not` may only hold
/// value validations.
fn nested(
    v: Schema<'_>,
    skip_any_of: bool,
    lvl: Level,
    path: &FieldPath,
    depth: usize,
    errs: &mut FieldErrors,
) {
    if depth > MAX_DEPTH {
        errs.push(too_deep(path));
        return;
    }
    let depth = depth + 1;
    value_validation(v, skip_any_of, false, lvl, path, depth, errs);
    if let Some(items) = v.items_schema() {
        nested(items, false, lvl, &path.child("items"), depth, errs);
    }
    for (name, sub) in v.schema_map("properties") {
        nested(
            sub,
            false,
            Level::Field,
            &path.child("properties").key(name),
            depth,
            errs,
        );
    }
    let forbidden = |errs: &mut FieldErrors, key: &str, detail: &str| {
        errs.push(FieldError::forbidden(&path.child(key), detail));
    };
    const EMPTY: &str = "must be empty to be structural";
    const UNDEFINED: &str = "must be undefined to be structural";
    const FALSE: &str = "must be false to be structural";
    if !v.ty().is_empty() {
        forbidden(errs, "type", EMPTY);
    }
    if v.has("additionalProperties") {
        forbidden(errs, "additionalProperties", UNDEFINED);
    }
    if v.has("default") {
        forbidden(errs, "default", UNDEFINED);
    }
    if !v.str("title").is_empty() {
        forbidden(errs, "title", EMPTY);
    }
    if !v.str("description").is_empty() {
        forbidden(errs, "description", EMPTY);
    }
    if v.flag("nullable") {
        forbidden(errs, "nullable", FALSE);
    }
    if v.flag("x-kubernetes-preserve-unknown-fields") {
        forbidden(errs, "x-kubernetes-preserve-unknown-fields", FALSE);
    }
    if v.flag("x-kubernetes-embedded-resource") {
        forbidden(errs, "x-kubernetes-embedded-resource", FALSE);
    }
    if v.flag("x-kubernetes-int-or-string") {
        forbidden(errs, "x-kubernetes-int-or-string", FALSE);
    }
    if !v.list("x-kubernetes-list-map-keys").is_empty() {
        forbidden(errs, "x-kubernetes-list-map-keys", EMPTY);
    }
    if v.has("x-kubernetes-list-type") {
        forbidden(errs, "x-kubernetes-list-type", UNDEFINED);
    }
    if v.has("x-kubernetes-map-type") {
        forbidden(errs, "x-kubernetes-map-type", UNDEFINED);
    }
    if !v.list("x-kubernetes-validations").is_empty() {
        forbidden(errs, "x-kubernetes-validations", EMPTY);
    }
    // Reasoning about metadata here could restrict it in ways pruning cannot honour.
    if v.property("metadata").is_some() {
        errs.push(FieldError::forbidden(
            &path.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateValueValidationCompleteness`: every field and item mentioned under a junctor of `v`
/// must be specified in the structural schema `s`.
fn value_validation_completeness(
    v: Schema<'_>,
    s: Option<Schema<'_>>,
    s_path: &FieldPath,
    v_path: &FieldPath,
    depth: usize,
    errs: &mut FieldErrors,
) {
    if depth > MAX_DEPTH {
        errs.push(too_deep(v_path));
        return;
    }
    let depth = depth + 1;
    let Some(s) = s else {
        errs.push(FieldError::required(
            s_path,
            format!("because it is defined in {v_path}"),
        ));
        return;
    };
    if let Some(not) = v.not() {
        nested_completeness(not, s, s_path, &v_path.child("not"), depth, errs);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, sub) in v.schemas(key).enumerate() {
            nested_completeness(sub, s, s_path, &v_path.child(key).index(i), depth, errs);
        }
    }
}

fn nested_completeness(
    v: Schema<'_>,
    s: Schema<'_>,
    s_path: &FieldPath,
    v_path: &FieldPath,
    depth: usize,
    errs: &mut FieldErrors,
) {
    value_validation_completeness(v, Some(s), s_path, v_path, depth, errs);
    if let Some(items) = v.items_schema() {
        let s_items = s.items_schema();
        let (sp, vp) = (s_path.child("items"), v_path.child("items"));
        match s_items {
            Some(si) => nested_completeness(items, si, &sp, &vp, depth, errs),
            None => errs.push(FieldError::required(
                &sp,
                format!("because it is defined in {vp}"),
            )),
        }
    }
    let s_has_props = s.map_len("properties") > 0;
    for (name, sub) in v.schema_map("properties") {
        let sp = s_path.child("properties").key(name);
        let vp = v_path.child("properties").key(name);
        match s.property(name).filter(|_| s_has_props) {
            Some(sf) => nested_completeness(sub, sf, &sp, &vp, depth, errs),
            None => errs.push(FieldError::required(
                &sp,
                format!("because it is defined in {vp}"),
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Defaults (pkg/apiserver/schema/defaulting: ValidateDefaults, PruneDefaults).

/// One step from an embedded resource's root to a default: a property or an array item.
#[derive(Clone)]
enum Step {
    Child(String),
    Index,
}

/// `ValidateDefaults` for the root of a CRD schema (a resource root): every `default` must
/// validate against its schema, survive pruning unchanged when `require_pruned` (it must not
/// have unknown fields), defaults of `apiVersion`, `kind` and `metadata` fields must give
/// valid metadata in the surrounding object, and a default that passes all that must pass the
/// `x-kubernetes-validations` rules of its schema node and below. `s` is the root marked as an
/// embedded resource.
fn validate_defaults(s: &Structural, path: &FieldPath, require_pruned: bool) -> FieldErrors {
    let mut d = Defaults {
        require_pruned,
        budget: crest_schema_cel::RUNTIME_COST_BUDGET,
        errs: vec![],
    };
    d.at(path, s, s, &[], false, 0);
    d.errs
}

/// The object of the nearest embedded resource with `focus` placed at `steps`, with upstream's
/// placeholder type meta (`NewRootObjectFunc().WithTypeMeta(...)`).
fn surrounding_object(steps: &[Step], focus: &Value) -> Value {
    let mut v = focus.clone();
    for step in steps.iter().rev() {
        v = match step {
            Step::Child(k) => {
                let mut m = Map::new();
                m.insert(k.clone(), v);
                Value::Object(m)
            }
            Step::Index => Value::Array(vec![v]),
        };
    }
    if let Value::Object(m) = &mut v {
        m.entry("kind")
            .or_insert_with(|| Value::String("Validation".into()));
        m.entry("apiVersion")
            .or_insert_with(|| Value::String("validation/v1".into()));
    }
    v
}

/// The walk of `ValidateDefaults`: its errors and the CEL cost budget all defaults share
/// (upstream's `RuntimeCELCostBudget`; once spent, the walk stops).
struct Defaults {
    require_pruned: bool,
    budget: i64,
    errs: FieldErrors,
}

impl Defaults {
    /// `root` is the nearest embedded resource (the schema root included) and `steps` the way
    /// from it to `s`; `inside_meta` when `s` is within its `apiVersion`, `kind` or
    /// `metadata`.
    fn at(
        &mut self,
        path: &FieldPath,
        s: &Structural,
        root: &Structural,
        steps: &[Step],
        inside_meta: bool,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let depth = depth + 1;
        // An embedded resource is the root object for the metadata defaults below it.
        let (root, steps, inside_meta) = if s.extensions.x_embedded_resource {
            (s, &[][..], false)
        } else {
            (root, steps, inside_meta)
        };
        if let Some(default) = s.generic.default.as_ref().filter(|d| !d.is_null()) {
            self.default(path, s, root, steps, inside_meta, default);
            if self.budget < 0 {
                return;
            }
        }
        // additionalProperties are not followed: defaults are forbidden there.
        if let Some(items) = s.items.as_deref() {
            let mut sub = steps.to_vec();
            sub.push(Step::Index);
            self.at(&path.child("items"), items, root, &sub, inside_meta, depth);
            if self.budget < 0 {
                return;
            }
        }
        for (k, sub_schema) in &s.properties {
            let sub_inside = inside_meta
                || (s.extensions.x_embedded_resource
                    && matches!(k.as_str(), "metadata" | "apiVersion" | "kind"));
            let mut sub = steps.to_vec();
            sub.push(Step::Child(k.clone()));
            self.at(
                &path.child("properties").key(k),
                sub_schema,
                root,
                &sub,
                sub_inside,
                depth,
            );
            if self.budget < 0 {
                return;
            }
        }
    }

    fn default(
        &mut self,
        path: &FieldPath,
        s: &Structural,
        root: &Structural,
        steps: &[Step],
        inside_meta: bool,
        default: &Value,
    ) {
        let dp = path.child("default");
        if inside_meta {
            let mut obj = surrounding_object(steps, default);
            let meta_errs =
                crest_schema::objectmeta::coerce(&FieldPath::root(), &mut obj, root, true, false)
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        let e = crest_schema::objectmeta::validate(
                            &FieldPath::root(),
                            &obj,
                            root,
                            true,
                        );
                        if e.is_empty() {
                            Ok(())
                        } else {
                            Err(aggregate(&e))
                        }
                    });
            if let Err(e) = meta_errs {
                self.errs.push(FieldError::invalid(
                    &dp,
                    default.clone(),
                    format!("must result in valid metadata: {e}"),
                ));
                return;
            }
            let errs = crest_schema::validation::validate(default, s, &dp);
            if errs.is_empty() {
                self.rules(&dp, s, std::ptr::eq(s, root), default);
            }
            self.errs.extend(errs);
            return;
        }
        if self.require_pruned {
            let mut pruned = default.clone();
            crest_schema::pruning::prune(&mut pruned, s, s.extensions.x_embedded_resource);
            if &pruned != default {
                self.errs.push(FieldError::invalid(
                    &dp,
                    default.clone(),
                    "must not have unknown fields",
                ));
            }
        }
        // Coercion normalizes the value the later checks see, as upstream's in-place one.
        let mut value = default.clone();
        let embedded = s.extensions.x_embedded_resource;
        if let Err(e) = crest_schema::objectmeta::coerce(&dp, &mut value, s, embedded, false) {
            self.errs.push(e);
            return;
        }
        let meta = crest_schema::objectmeta::validate(&dp, &value, s, embedded);
        if !meta.is_empty() {
            self.errs.extend(meta);
            return;
        }
        let errs = crest_schema::validation::validate(&value, s, &dp);
        if errs.is_empty() {
            self.rules(&dp, s, std::ptr::eq(s, root), &value);
        }
        self.errs.extend(errs);
    }

    /// The node's CEL rules (and those below it) on a default that passed the schema: once
    /// with the default as its own old value (transition rules run), and, when that passed,
    /// once without one (only `optionalOldSelf` transition rules run), as upstream does with
    /// CRD validation ratcheting enabled. Both runs start from the remaining budget; the walk
    /// continues with the smaller remainder. Nothing is ratcheted.
    fn rules(&mut self, dp: &FieldPath, s: &Structural, resource_root: bool, value: &Value) {
        let Some(validator) = crest_schema_cel::Validator::for_schema(s, resource_root) else {
            return;
        };
        let mut with_old = self.budget;
        let errs = validator.validate_at(dp, value, Some(value), &mut with_old);
        if errs.is_empty() {
            let mut without_old = self.budget;
            let errs = validator.validate_at(dp, value, None, &mut without_old);
            self.errs.extend(errs);
            with_old = with_old.min(without_old);
        } else {
            self.errs.extend(errs);
        }
        self.budget = with_old;
    }
}

/// `schemaHasUnprunedDefaults`: a structural schema with a default that pruning by its own
/// schema would change (such CRDs were accepted before defaults had to be pruned).
pub(crate) fn has_unpruned_defaults(schema: &Value) -> bool {
    if !schema_has(schema, &|v| v.get("default").is_some_and(|d| !d.is_null())) {
        return false;
    }
    if !matches!(structural_violations(schema, &FieldPath::root()), Ok(e) if e.is_empty()) {
        return false;
    }
    Structural::from_json(schema).is_ok_and(|s| unpruned_default(&s, 0))
}

fn unpruned_default(s: &Structural, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if let Some(default) = s.generic.default.as_ref().filter(|d| !d.is_null()) {
        let mut pruned = default.clone();
        crest_schema::pruning::prune(&mut pruned, s, s.extensions.x_embedded_resource);
        if &pruned != default {
            return true;
        }
    }
    s.items
        .as_deref()
        .is_some_and(|i| unpruned_default(i, depth + 1))
        || s.properties
            .values()
            .any(|p| unpruned_default(p, depth + 1))
        || s.additional_properties_schema()
            .is_some_and(|a| unpruned_default(a, depth + 1))
}

#[cfg(test)]
mod tests;
