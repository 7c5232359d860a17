//! The schema side of custom resources (apiextensions-apiserver's `registry/customresource` and
//! the schema-coercing decoder of `customresource_handler.go`): what happens to an object between
//! decoding and storage, and between storage and the client.
//!
//! - On a write ([`CrSchema::decode_request`]): metadata read as a typed ObjectMeta, unknown
//!   fields pruned (and reported for `fieldValidation`), nulls of non-nullable fields without a
//!   default dropped, embedded metadata coerced, then defaults applied — all with the schema of
//!   the version the request came in.
//! - In the strategy ([`CrSchema::validate`], [`CrSchema::validate_update`]): OpenAPI value
//!   validation (ratcheted on update), embedded resources, list types, then the CEL rules
//!   (`x-kubernetes-validations`, [`CrSchema::validate_rules`]) unless an earlier error makes
//!   them meaningless.
//! - On a read from storage ([`CrSchema::decode_stored`]): the same pruning and defaulting with
//!   the storage version's schema, malformed metadata dropped rather than refused; the result is
//!   served, never written back.
//!
//! A schema (its CEL rules included) is compiled once per CRD version, when the served
//! resources are rebuilt.

pub mod scale;

use crest_api::ErrorType;
use crest_api::{ApiError, FieldError, FieldErrors, FieldPath};
use crest_schema::{defaulting, listtype, objectmeta, pruning, validation, Structural};
use serde_json::Value;

/// One CRD version's compiled schema.
pub struct CrSchema {
    structural: Structural,
    /// The compiled `x-kubernetes-validations` rules, if any.
    rules: Option<crest_schema_cel::Validator>,
    /// The schema keeps every field and sets no default (e.g. only
    /// `x-kubernetes-preserve-unknown-fields` at the root): reads need no normalization.
    keeps_everything: bool,
    /// `spec.preserveUnknownFields: true` (CRDs from v1beta1): fields the schema does not
    /// name are kept, as upstream's decoder only prunes when it is false.
    keeps_unknown_fields: bool,
}

/// What `fieldValidation` asks for (kube-apiserver's default is Warn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    pub fn parse(s: &str) -> Self {
        match s {
            "Ignore" => FieldValidation::Ignore,
            "Strict" => FieldValidation::Strict,
            _ => FieldValidation::Warn,
        }
    }
}

/// The fields a request held that the schema does not know, in upstream's wording.
#[derive(Debug, Default)]
pub struct UnknownFields(pub Vec<String>);

impl UnknownFields {
    /// `unknown field "spec.x"` per field: the text of a Warning header or of a strict error.
    pub fn messages(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect()
    }
}

impl CrSchema {
    /// Compiles a version's `openAPIV3Schema`; `None` when there is none or it does not compile
    /// (CRD validation refuses such schemas, so that only happens to data written before).
    pub fn compile(schema: Option<&Value>) -> Option<CrSchema> {
        let structural = Structural::from_json(schema?)
            .map_err(
                |e| tracing::warn!(error = %e, "schema does not compile; objects are not pruned"),
            )
            .ok()?;
        let keeps_everything = structural.extensions.x_preserve_unknown_fields
            && structural.properties.is_empty()
            && structural.items.is_none()
            && structural.generic.additional_properties.is_none()
            && structural.generic.default.is_none();
        Some(CrSchema {
            rules: crest_schema_cel::Validator::new(&structural),
            structural,
            keeps_everything,
            keeps_unknown_fields: false,
        })
    }

    /// This schema for a CRD with `spec.preserveUnknownFields: true`: nothing is pruned.
    pub fn keeping_unknown_fields(mut self) -> Self {
        self.keeps_unknown_fields = true;
        self
    }

    /// Whether reading a stored object through this schema can change it.
    pub fn normalizes(&self) -> bool {
        !self.keeps_everything
    }

    /// Normalizes a request object (see the module comment). Returns the unknown fields it
    /// dropped; a malformed `metadata` is a 400.
    pub fn decode_request(&self, obj: &mut Value) -> Result<UnknownFields, ApiError> {
        self.coerce(obj, false).map_err(ApiError::bad_request)
    }

    /// Normalizes an object read from storage (see the module comment).
    pub fn decode_stored(&self, obj: &mut Value) {
        if let Err(e) = self.coerce(obj, true) {
            tracing::warn!(error = %e, "stored object does not coerce; served as stored");
        }
    }

    fn coerce(&self, obj: &mut Value, from_storage: bool) -> Result<UnknownFields, String> {
        let s = &self.structural;
        let Some(map) = obj.as_object() else {
            return Ok(UnknownFields::default());
        };
        // Root metadata as a typed ObjectMeta holds it: unknown fields dropped and reported.
        let read = objectmeta::get_object_meta(map, from_storage, !from_storage)?;
        let mut unknown = read.unknown_field_paths;
        // Upstream's coercer prunes, and drops nulls a field does not allow, only when the CRD
        // does not preserve unknown fields.
        if !self.keeps_unknown_fields {
            unknown.extend(pruning::prune(obj, s, true));
            defaulting::prune_non_nullable_nulls_without_defaults(obj, s);
        }
        objectmeta::coerce(&FieldPath::root(), obj, s, true, from_storage)
            .map_err(|e| e.to_string())?;
        if let (Some(o), Some(meta)) = (obj.as_object_mut(), read.meta) {
            o.insert("metadata".into(), Value::Object(meta));
        }
        defaulting::default(obj, s);
        if from_storage {
            unknown.clear();
        }
        Ok(UnknownFields(unknown))
    }

    /// The CEL rules of the whole object (`old` on updates: transition rules, ratcheting).
    /// Not run when `errs` (what was found before) holds a missing, wrongly typed or oversized
    /// value: kube-apiserver then reports that some rules were not checked. Failures ratcheted
    /// on updates are added to `warnings`, as upstream's validator warns about them.
    pub fn validate_rules(
        &self,
        new: &Value,
        old: Option<&Value>,
        errs: &FieldErrors,
        warnings: &mut Vec<String>,
    ) -> FieldErrors {
        let Some(rules) = &self.rules else {
            return vec![];
        };
        let blocking = errs.iter().any(|e| {
            matches!(
                e.error_type,
                ErrorType::NotSupported
                    | ErrorType::Required
                    | ErrorType::TooLong
                    | ErrorType::TooMany
                    | ErrorType::TypeInvalid
            )
        });
        if blocking {
            return vec![FieldError::invalid(
                &FieldPath::root(),
                Value::Null,
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            )];
        }
        let out = rules.evaluate(new, old);
        warnings.extend(out.warnings);
        out.errors
    }

    /// OpenAPI value validation of a new object.
    pub fn validate_values(&self, obj: &Value) -> FieldErrors {
        validation::validate(obj, &self.structural, &FieldPath::root())
    }

    /// OpenAPI value validation of an update, ratcheted.
    pub fn validate_values_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validation::validate_update(new, old, &self.structural, &FieldPath::root())
    }

    /// Embedded resources and list types (after value validation and the scale checks).
    pub fn validate_structure(&self, obj: &Value) -> FieldErrors {
        let s = &self.structural;
        let root = FieldPath::root();
        let mut errs = objectmeta::validate(&root, obj, s, false);
        errs.extend(listtype::validate_list_sets_and_maps(&root, s, obj));
        errs
    }

    /// A `/status` write: `status` alone against the schema of `status` (nothing when the
    /// schema has none), ratcheted against the old status; paths under `status`.
    pub fn validate_status_update(&self, status: &Value, old: Option<&Value>) -> FieldErrors {
        let Some(sub) = self.structural.properties.get("status") else {
            return vec![];
        };
        let path = FieldPath::new("status");
        match old {
            Some(old) => validation::validate_update(status, old, sub, &path),
            None => validation::validate(status, sub, &path),
        }
    }

    /// List type errors of `new`, unless `old` had some already (the status strategy's
    /// ratcheting).
    pub fn validate_list_types_ratcheted(&self, new: &Value, old: &Value) -> FieldErrors {
        let s = &self.structural;
        let root = FieldPath::root();
        let errs = listtype::validate_list_sets_and_maps(&root, s, new);
        if errs.is_empty() || !listtype::validate_list_sets_and_maps(&root, s, old).is_empty() {
            return vec![];
        }
        errs
    }
}

/// A custom resource's validation on create (`old` = `None`) and update, in upstream's order
/// (the strategy's `Validate`/`ValidateUpdate`; the generic ObjectMeta rules run before, in the
/// registry): schema values (ratcheted on update), the scale subresource's spec and status
/// replicas, embedded resources and list types, then the CEL rules unless an earlier error
/// makes them meaningless. Ratcheted rule failures are added to `warnings`.
pub fn validate(
    schema: Option<&CrSchema>,
    scale: Option<&scale::ScalePaths>,
    new: &Value,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> FieldErrors {
    let mut errs = match (schema, old) {
        (Some(s), Some(old)) => s.validate_values_update(new, old),
        (Some(s), None) => s.validate_values(new),
        (None, _) => vec![],
    };
    if let Some(scale) = scale {
        errs.extend(scale.validate_spec(new));
        errs.extend(scale.validate_status(new));
    }
    if let Some(s) = schema {
        errs.extend(s.validate_structure(new));
        let rules = s.validate_rules(new, old, &errs, warnings);
        errs.extend(rules);
    }
    errs
}

/// A `/status` write (the status strategy's `ValidateUpdate`): only `status` against its own
/// schema (ratcheted), the scale status replicas, list types unless the old object already had
/// list type errors, then the CEL rules of the whole object (unchanged parts ratcheted).
pub fn validate_status(
    schema: Option<&CrSchema>,
    scale: Option<&scale::ScalePaths>,
    new: &Value,
    old: &Value,
    warnings: &mut Vec<String>,
) -> FieldErrors {
    let mut errs = match (schema, new.get("status")) {
        (Some(s), Some(status)) => s.validate_status_update(status, old.get("status")),
        _ => vec![],
    };
    if let Some(scale) = scale {
        errs.extend(scale.validate_status(new));
    }
    if let Some(s) = schema {
        errs.extend(s.validate_list_types_ratcheted(new, old));
        let rules = s.validate_rules(new, Some(old), &errs, warnings);
        errs.extend(rules);
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crontab_schema() -> CrSchema {
        CrSchema::compile(Some(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$", "default": "5 0 * * *"},
                    "image": {"type": "string"},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                }},
            },
        })))
        .expect("compiles")
    }

    #[test]
    fn request_objects_are_pruned_defaulted_and_report_unknown_fields() {
        let s = crontab_schema();
        let mut obj = json!({
            "apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "a", "bogus": 1},
            "spec": {"image": "x", "someRandomField": 42},
            "extra": true,
        });
        let unknown = s.decode_request(&mut obj).expect("decodes");
        let mut fields = unknown.0.clone();
        fields.sort();
        assert_eq!(fields, ["extra", "metadata.bogus", "spec.someRandomField"]);
        assert_eq!(
            obj,
            json!({
                "apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "a"},
                "spec": {"image": "x", "cronSpec": "5 0 * * *", "replicas": 1},
            })
        );
        assert!(unknown.messages()[0].starts_with("unknown field \""));
    }

    /// `spec.preserveUnknownFields: true` (CRDs from v1beta1): unknown fields and nulls stay
    /// (value validation then refuses the null), only metadata is coerced.
    #[test]
    fn a_crd_preserving_unknown_fields_prunes_nothing() {
        let s = crontab_schema().keeping_unknown_fields();
        let mut obj = json!({
            "apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "a", "bogus": 1},
            "spec": {"image": null, "someRandomField": 42},
            "extra": true,
        });
        let unknown = s.decode_request(&mut obj).expect("decodes");
        assert_eq!(unknown.0, ["metadata.bogus"]);
        assert_eq!(
            obj,
            json!({
                "apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "a"},
                "spec": {"image": null, "someRandomField": 42, "cronSpec": "5 0 * * *", "replicas": 1},
                "extra": true,
            })
        );
        let errs = s.validate_values(&obj);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field.to_string(), "spec.image");
    }

    #[test]
    fn validation_reports_every_error_with_kubernetes_wording() {
        let s = crontab_schema();
        let obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "a"},
            "spec": {"cronSpec": "* * * *", "replicas": 15}});
        let msgs: Vec<String> = validate(Some(&s), None, &obj, None, &mut vec![])
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(msgs, [
            r#"spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#,
            "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
        ]);
    }
}
