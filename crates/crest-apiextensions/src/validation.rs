//! `ValidateCustomResourceDefinition` and `ValidateCustomResourceDefinitionUpdate` of
//! kube-apiserver 1.32, with its messages, field paths and error order.
//!
//! Upstream validates the *internal* form of a CRD, into which v1 is converted first: when every
//! version has the same schema / subresources / printer columns / selectable fields, those move
//! to the top level (`spec.validation`, `spec.subresources`, ...). Error paths follow that form,
//! so a single-version CRD reports `spec.validation.openAPIV3Schema...` and
//! `spec.additionalPrinterColumns[0]...`, and `spec.version` (the first version's name) is checked
//! again. [`Internal`] reproduces that view.
//!
//! OpenAPI schemas are validated by [`crate::schema_validation`] (keywords, extensions,
//! structural rules); CEL rules are not compiled.

use crate::gofmt::{self, GoVersion};
use crate::helpers::{
    api_approval_state, is_protected_community_group, ApprovalState, API_APPROVED_ANNOTATION,
};
use crate::schema_validation::{
    has_invalid_map_list_keys_map_set, has_invalid_types, has_non_atomic_set_type,
    has_unpruned_defaults, is_non_structural, schema_has, validate_custom_resource_validation,
    SchemaValidationOptions,
};
use crate::types::{
    decode, CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresources, CustomResourceValidation, DecodeError, SelectableField,
};
use crest_api::validation::{
    is_dns1035_label, is_dns1123_subdomain, name_is_dns_subdomain, validate_object_meta,
};
use crest_api::{ErrorType, FieldError, FieldErrors, FieldPath};
use serde_json::Value;
use std::collections::HashSet;

const PRINTER_COLUMN_TYPES: &str = "boolean,date,integer,number,string";
const PRINTER_COLUMN_FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
/// ConversionReview versions this server understands.
const ACCEPTED_CONVERSION_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
/// At most this many distinct selectable fields per version.
pub(crate) const MAX_SELECTABLE_FIELDS: usize = 8;

/// Switches that differ between create and update (upstream's `validationOptions`): update does
/// not tighten rules on data that was already accepted. v1 always allows defaults.
#[derive(Clone, Copy, Debug)]
struct Opts {
    require_recognized_conversion_review_version: bool,
    require_immutable_names: bool,
    require_open_api_schema: bool,
    require_valid_property_type: bool,
    require_structural_schema: bool,
    require_pruned_defaults: bool,
    require_atomic_set_type: bool,
    require_map_list_keys_map_set_validation: bool,
}

impl Opts {
    fn create() -> Self {
        Opts {
            require_recognized_conversion_review_version: true,
            require_immutable_names: false,
            require_open_api_schema: true,
            require_valid_property_type: true,
            require_structural_schema: true,
            require_pruned_defaults: true,
            require_atomic_set_type: true,
            require_map_list_keys_map_set_validation: true,
        }
    }

    fn schema_options(&self, status_enabled: bool) -> SchemaValidationOptions {
        SchemaValidationOptions {
            status_enabled,
            allow_defaults: true,
            require_valid_property_type: self.require_valid_property_type,
            require_structural_schema: self.require_structural_schema,
            require_pruned_defaults: self.require_pruned_defaults,
            require_atomic_set_type: self.require_atomic_set_type,
            require_map_list_keys_map_set_validation: self.require_map_list_keys_map_set_validation,
        }
    }
}

/// One version in the internal form: per-version fields are `None` when they were identical
/// across versions and moved to the top level.
struct IVersion<'a> {
    v: &'a CustomResourceDefinitionVersion,
    schema: Option<&'a CustomResourceValidation>,
    subresources: Option<&'a CustomResourceSubresources>,
    /// `None` is Go's nil slice (absent), `Some(&[])` an empty one.
    columns: Option<&'a [CustomResourceColumnDefinition]>,
    selectable_fields: Option<&'a [SelectableField]>,
}

/// The internal (`apiextensions`) view of a v1 spec.
struct Internal<'a> {
    spec: &'a CustomResourceDefinitionSpec,
    /// `spec.version`: the first version's name.
    version: &'a str,
    validation: Option<&'a CustomResourceValidation>,
    subresources: Option<&'a CustomResourceSubresources>,
    columns: Option<&'a [CustomResourceColumnDefinition]>,
    selectable_fields: Option<&'a [SelectableField]>,
    versions: Vec<IVersion<'a>>,
    /// Whether `spec.versions` was a list (Go: non-nil slice) rather than absent.
    versions_present: bool,
}

/// Go's semantic equality of two slices: nil and empty are equal.
fn same_slice<T: PartialEq>(a: Option<&[T]>, b: Option<&[T]>) -> bool {
    a.unwrap_or(&[]) == b.unwrap_or(&[])
}

impl<'a> Internal<'a> {
    /// Converts as `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...`; `raw` is the
    /// JSON spec, needed to tell absent lists from empty ones.
    fn new(spec: &'a CustomResourceDefinitionSpec, raw: Option<&'a Value>) -> Self {
        let raw_versions = raw
            .and_then(|s| s.get("versions"))
            .and_then(Value::as_array);
        let present = |i: usize, key: &str| {
            raw_versions
                .and_then(|vs| vs.get(i))
                .and_then(|v| v.get(key))
                .is_some_and(Value::is_array)
        };
        let mut versions: Vec<IVersion<'a>> = spec
            .versions
            .iter()
            .enumerate()
            .map(|(i, v)| IVersion {
                v,
                schema: v.schema.as_ref(),
                subresources: v.subresources.as_ref(),
                columns: present(i, "additionalPrinterColumns")
                    .then_some(v.additional_printer_columns.as_slice()),
                selectable_fields: present(i, "selectableFields")
                    .then_some(v.selectable_fields.as_slice()),
            })
            .collect();
        let mut internal = Internal {
            spec,
            version: spec.versions.first().map(|v| v.name.as_str()).unwrap_or(""),
            validation: None,
            subresources: None,
            columns: None,
            selectable_fields: None,
            versions: vec![],
            versions_present: raw
                .and_then(|s| s.get("versions"))
                .is_some_and(Value::is_array),
        };
        if let Some(first) = versions.first() {
            let (schema, sub, cols, sel) = (
                first.schema,
                first.subresources,
                first.columns,
                first.selectable_fields,
            );
            let schema_same = versions.iter().all(|v| v.schema == schema);
            let sub_same = versions.iter().all(|v| v.subresources == sub);
            let cols_same = versions.iter().all(|v| same_slice(v.columns, cols));
            let sel_same = versions
                .iter()
                .all(|v| same_slice(v.selectable_fields, sel));
            if schema_same {
                internal.validation = schema;
            }
            if sub_same {
                internal.subresources = sub;
            }
            if cols_same {
                internal.columns = cols;
            }
            if sel_same {
                internal.selectable_fields = sel;
            }
            for v in &mut versions {
                if schema_same {
                    v.schema = None;
                }
                if sub_same {
                    v.subresources = None;
                }
                if cols_same {
                    v.columns = None;
                }
                if sel_same {
                    v.selectable_fields = None;
                }
            }
        }
        internal.versions = versions;
        internal
    }

    fn has_per_version_subresources(&self) -> bool {
        self.versions.iter().any(|v| v.subresources.is_some())
    }

    /// `getSubresourcesForVersion` + `hasStatusEnabled`.
    fn status_enabled_for(&self, v: &IVersion<'_>) -> bool {
        let sub = if self.has_per_version_subresources() {
            v.subresources
        } else {
            self.subresources
        };
        sub.is_some_and(|s| s.status.is_some())
    }

    /// `hasAnyStatusEnabled`.
    fn any_status_enabled(&self) -> bool {
        self.subresources.is_some_and(|s| s.status.is_some())
            || self
                .versions
                .iter()
                .any(|v| v.subresources.is_some_and(|s| s.status.is_some()))
    }

    /// Every schema of the spec (top-level and per-version).
    fn schemas(&self) -> impl Iterator<Item = &'a Value> + '_ {
        self.validation
            .into_iter()
            .chain(self.versions.iter().filter_map(|v| v.schema))
            .filter_map(|s| s.open_api_v3_schema.as_ref())
    }

    /// `allVersionsSpecifyOpenAPISchema`.
    fn all_versions_specify_schema(&self) -> bool {
        if self
            .validation
            .is_some_and(|v| v.open_api_v3_schema.is_some())
        {
            return true;
        }
        self.versions
            .iter()
            .all(|v| v.schema.is_some_and(|s| s.open_api_v3_schema.is_some()))
    }

    /// `%#v` of the internal versions, as upstream prints `spec.versions` in errors.
    fn versions_repr(&self) -> String {
        let items: Vec<GoVersion<'_>> = self
            .versions
            .iter()
            .map(|v| GoVersion {
                name: &v.v.name,
                served: v.v.served,
                storage: v.v.storage,
                deprecated: v.v.deprecated,
                deprecation_warning: v.v.deprecation_warning.is_some(),
                schema: v.schema.is_some(),
                subresources: v.subresources.is_some(),
                columns: v.columns,
                selectable_fields: v.selectable_fields,
            })
            .collect();
        gofmt::versions((self.versions_present || !items.is_empty()).then_some(items.as_slice()))
    }
}

fn join(errs: Vec<String>) -> String {
    errs.join(",")
}

/// The error a CRD that does not even decode gets (the server should have answered 400 with
/// [`crate::types::parse`]'s message before validating).
fn decode_failure(e: DecodeError) -> FieldErrors {
    let mut err = FieldError::invalid(&FieldPath::new(&e.field), Value::Null, e.to_string());
    err.error_type = ErrorType::TypeInvalid;
    err.value = None;
    vec![err]
}

/// `ValidateImmutableField`.
fn immutable(new: &str, old: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if new != old {
        errs.push(FieldError::invalid(path, new, "field is immutable"));
    }
}

/// `validateEnumStrings` with `required = true`.
fn enum_string(path: &FieldPath, value: &str, accepted: &[&str], errs: &mut FieldErrors) {
    if value.is_empty() {
        errs.push(FieldError::required(path, ""));
    } else if !accepted.contains(&value) {
        errs.push(FieldError::not_supported(path, value, accepted));
    }
}

/// Validates a new CRD (`ValidateCustomResourceDefinition`) except the generic ObjectMeta rules,
/// which the server's registry applies to every resource; the CRD-specific name rule
/// (`metadata.name` must be `<plural>.<group>`) is included. Status is judged as upstream's
/// PrepareForCreate leaves it (empty, with the storage version recorded), whatever `crd` holds.
pub fn validate_create(crd: &Value) -> FieldErrors {
    let parsed = match decode(crd) {
        Ok(p) => p,
        Err(e) => return decode_failure(e),
    };
    let mut errs = name_errors(&parsed);
    errs.extend(validate_create_rest(crd, &parsed));
    errs
}

/// [`validate_create`] preceded by the generic ObjectMeta validation, in upstream's order.
pub fn validate_create_with_meta(crd: &Value) -> FieldErrors {
    let parsed = match decode(crd) {
        Ok(p) => p,
        Err(e) => return decode_failure(e),
    };
    let path = FieldPath::new("metadata");
    let mut errs = match crd.get("metadata").and_then(Value::as_object) {
        Some(m) => validate_object_meta(m, false, name_is_dns_subdomain, &path),
        None => vec![FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        )],
    };
    // Upstream's name validator appends the CRD rule after the DNS-subdomain messages of the
    // same field (generateName first, then name).
    for extra in name_errors(&parsed) {
        let field = extra.field.clone();
        let at = errs
            .iter()
            .rposition(|e| {
                e.field == field
                    || (field.as_str() == "metadata.name"
                        && e.field.as_str() == "metadata.generateName")
            })
            .map(|i| i + 1)
            .unwrap_or(0);
        errs.insert(at, extra);
    }
    errs.extend(validate_create_rest(crd, &parsed));
    errs
}

/// `metadata.name` (and `generateName`) must be `spec.names.plural + "." + spec.group`.
fn name_errors(crd: &CustomResourceDefinition) -> FieldErrors {
    let required = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    let mut errs = vec![];
    let meta = FieldPath::new("metadata");
    for field in ["generateName", "name"] {
        let value = crd
            .metadata
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or("");
        if !value.is_empty() && value != required {
            errs.push(FieldError::invalid(
                &meta.child(field),
                value,
                "must be spec.names.plural+\".\"+spec.group",
            ));
        }
    }
    errs
}

fn validate_create_rest(raw: &Value, crd: &CustomResourceDefinition) -> FieldErrors {
    let internal = Internal::new(&crd.spec, raw.get("spec"));
    let mut errs = vec![];
    validate_spec(
        &internal,
        &Opts::create(),
        &FieldPath::new("spec"),
        &mut errs,
    );
    // PrepareForCreate resets the status, so acceptedNames is empty and only the storage version
    // is stored.
    let stored: Option<Vec<String>> = crd.storage_version().map(|v| vec![v.to_string()]);
    validate_stored_versions(stored.as_deref(), &crd.spec.versions, &mut errs);
    validate_api_approval(crd, None, &mut errs);
    validate_preserve_unknown_fields(crd, None, &mut errs);
    errs
}

/// Validates an update of a CRD's main resource (`ValidateCustomResourceDefinitionUpdate`)
/// except the generic ObjectMeta update rules. The status is judged as PrepareForUpdate leaves
/// it: the old status, with the new storage version added to `storedVersions`.
pub fn validate_update(new: &Value, old: &Value) -> FieldErrors {
    let crd = match decode(new) {
        Ok(p) => p,
        Err(e) => return decode_failure(e),
    };
    let old_crd = decode(old).unwrap_or_default();
    let internal = Internal::new(&crd.spec, new.get("spec"));
    let old_internal = Internal::new(&old_crd.spec, old.get("spec"));

    let old_review_versions = old_crd
        .spec
        .conversion
        .as_ref()
        .map(|c| review_versions(c).to_vec());
    let opts = Opts {
        require_recognized_conversion_review_version: old_review_versions.as_ref().is_none_or(
            |vs| {
                vs.is_empty()
                    || vs
                        .iter()
                        .any(|v| ACCEPTED_CONVERSION_REVIEW_VERSIONS.contains(&v.as_str()))
            },
        ),
        require_immutable_names: old_crd.is_condition_true(crate::conditions::ESTABLISHED),
        require_open_api_schema: old_internal.all_versions_specify_schema(),
        require_valid_property_type: !old_internal.schemas().any(has_invalid_types),
        require_structural_schema: !old_internal.schemas().any(is_non_structural),
        require_pruned_defaults: !old_internal.schemas().any(has_unpruned_defaults),
        require_atomic_set_type: !old_internal.schemas().any(has_non_atomic_set_type),
        require_map_list_keys_map_set_validation: !old_internal
            .schemas()
            .any(has_invalid_map_list_keys_map_set),
    };

    let spec_path = FieldPath::new("spec");
    let mut errs = vec![];
    validate_spec(&internal, &opts, &spec_path, &mut errs);
    if opts.require_immutable_names {
        // These affect storage and cannot change once the API is served.
        immutable(
            &crd.spec.scope,
            &old_crd.spec.scope,
            &spec_path.child("scope"),
            &mut errs,
        );
        immutable(
            &crd.spec.names.kind,
            &old_crd.spec.names.kind,
            &spec_path.child("names").child("kind"),
            &mut errs,
        );
    }
    // These make up metadata.name, which never changes.
    immutable(
        &crd.spec.group,
        &old_crd.spec.group,
        &spec_path.child("group"),
        &mut errs,
    );
    immutable(
        &crd.spec.names.plural,
        &old_crd.spec.names.plural,
        &spec_path.child("names").child("plural"),
        &mut errs,
    );

    validate_names(
        &old_crd.accepted_names(),
        &FieldPath::new("status").child("acceptedNames"),
        &mut errs,
    );
    let mut stored: Option<Vec<String>> = old_crd.status.as_ref().and_then(|_| {
        old.pointer("/status/storedVersions")
            .filter(|v| v.is_array())
            .map(|_| old_crd.stored_versions().to_vec())
    });
    if let Some(storage) = crd.storage_version() {
        let list = stored.get_or_insert_with(Vec::new);
        if !list.iter().any(|v| v == storage) {
            list.push(storage.to_string());
        }
    }
    validate_stored_versions(stored.as_deref(), &crd.spec.versions, &mut errs);
    validate_api_approval(&crd, Some(&old_crd), &mut errs);
    validate_preserve_unknown_fields(&crd, Some(&old_crd), &mut errs);
    errs
}

/// Validates a write to the status subresource (`ValidateUpdateCustomResourceDefinitionStatus`)
/// except the generic ObjectMeta update rules: the accepted names must be well formed.
pub fn validate_status_update(new: &Value, _old: &Value) -> FieldErrors {
    let crd = match decode(new) {
        Ok(p) => p,
        Err(e) => return decode_failure(e),
    };
    let mut errs = vec![];
    validate_names(
        &crd.accepted_names(),
        &FieldPath::new("status").child("acceptedNames"),
        &mut errs,
    );
    errs
}

/// `validateCustomResourceDefinitionSpec`.
fn validate_spec(spec: &Internal<'_>, opts: &Opts, path: &FieldPath, errs: &mut FieldErrors) {
    let s = spec.spec;
    let group_path = path.child("group");
    if s.group.is_empty() {
        errs.push(FieldError::required(&group_path, ""));
    } else {
        let dns = is_dns1123_subdomain(&s.group);
        if !dns.is_empty() {
            errs.push(FieldError::invalid(
                &group_path,
                s.group.as_str(),
                join(dns),
            ));
        } else if s.group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                &group_path,
                s.group.as_str(),
                "should be a domain with at least one dot",
            ));
        }
    }

    enum_string(
        &path.child("scope"),
        &s.scope,
        &["Cluster", "Namespaced"],
        errs,
    );

    let mut opts = *opts;
    // Pruning (preserveUnknownFields false) needs structural schemas.
    if !s.preserve_unknown_fields {
        opts.require_structural_schema = true;
    }

    let versions_path = path.child("versions");
    if spec
        .validation
        .is_none_or(|v| v.open_api_v3_schema.is_none())
    {
        for (i, v) in spec.versions.iter().enumerate() {
            let missing = v.schema.is_none_or(|s| s.open_api_v3_schema.is_none());
            let schema_path = versions_path
                .index(i)
                .child("schema")
                .child("openAPIV3Schema");
            if opts.require_open_api_schema {
                if missing {
                    errs.push(FieldError::required(&schema_path, "schemas are required"));
                }
            } else if !s.preserve_unknown_fields && missing && v.v.served {
                errs.push(FieldError::required(
                    &schema_path,
                    "because otherwise all fields are pruned",
                ));
            }
        }
    }
    if spec
        .schemas()
        .any(|sch| schema_has(sch, &|n| n.get("default").is_some_and(|d| !d.is_null())))
    {
        opts.require_structural_schema = true;
        if s.preserve_unknown_fields {
            errs.push(FieldError::invalid(
                &path.child("preserveUnknownFields"),
                true,
                "must be false in order to use defaults in the schema",
            ));
        }
    }
    if spec.schemas().any(has_kubernetes_extensions) {
        opts.require_structural_schema = true;
    }

    let mut storage_count = 0;
    let mut names = HashSet::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        if v.v.storage {
            storage_count += 1;
        }
        if !names.insert(v.v.name.as_str()) {
            unique = false;
        }
        let dns = is_dns1035_label(&v.v.name);
        if !dns.is_empty() {
            errs.push(FieldError::invalid(
                &versions_path.index(i).child("name"),
                v.v.name.as_str(),
                join(dns),
            ));
        }
        validate_version(
            v,
            &versions_path.index(i),
            spec.status_enabled_for(v),
            &opts,
            errs,
        );
    }
    // Top-level and per-version fields cannot both be set when coming from v1 (the conversion
    // only fills the top level from identical per-version values), so upstream's mutual
    // exclusion checks never fire here.
    if !unique {
        errs.push(FieldError::invalid_repr(
            &versions_path,
            &spec.versions_repr(),
            "must contain unique version names",
        ));
    }
    if storage_count != 1 {
        errs.push(FieldError::invalid_repr(
            &versions_path,
            &spec.versions_repr(),
            "must have exactly one version marked as storage version",
        ));
    }
    if !spec.version.is_empty() {
        let dns = is_dns1035_label(spec.version);
        if !dns.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("version"),
                spec.version,
                join(dns),
            ));
        }
    }

    let names_path = path.child("names");
    for (value, field) in [
        (&s.names.plural, "plural"),
        (&s.names.singular, "singular"),
        (&s.names.kind, "kind"),
        (&s.names.list_kind, "listKind"),
    ] {
        if value.is_empty() {
            errs.push(FieldError::required(&names_path.child(field), ""));
        }
    }
    validate_names(&s.names, &names_path, errs);

    validate_validation(
        spec.validation,
        spec.any_status_enabled(),
        &opts,
        &path.child("validation"),
        errs,
    );
    validate_subresources(spec.subresources, &path.child("subresources"), errs);
    for (i, col) in spec.columns.unwrap_or(&[]).iter().enumerate() {
        validate_column(col, &path.child("additionalPrinterColumns").index(i), errs);
    }
    let selectable = spec.selectable_fields.unwrap_or(&[]);
    if !selectable.is_empty() {
        let sel_path = path.child("selectableFields");
        match spec.validation {
            None => errs.push(FieldError::invalid(
                &sel_path,
                "",
                "selectableFields may only be set when validations.schema is included",
            )),
            Some(v) => validate_selectable_fields(
                selectable,
                v.open_api_v3_schema.as_ref(),
                &sel_path,
                errs,
            ),
        }
    }

    if let Some(conv) = &s.conversion {
        if conv.strategy != "None" && s.preserve_unknown_fields {
            errs.push(FieldError::invalid(
                &path.child("conversion").child("strategy"),
                conv.strategy.as_str(),
                "must be None if spec.preserveUnknownFields is true",
            ));
        }
    }
    validate_conversion(
        s.conversion.as_ref(),
        opts.require_recognized_conversion_review_version,
        &path.child("conversion"),
        errs,
    );
}

/// `validateCustomResourceDefinitionVersion`.
fn validate_version(
    v: &IVersion<'_>,
    path: &FieldPath,
    status_enabled: bool,
    opts: &Opts,
    errs: &mut FieldErrors,
) {
    if let Some(warning) = &v.v.deprecation_warning {
        for msg in deprecation_warning_errors(v.v.deprecated, warning) {
            errs.push(FieldError::invalid(
                &path.child("deprecationWarning"),
                warning.as_str(),
                msg,
            ));
        }
    }
    validate_validation(v.schema, status_enabled, opts, &path.child("schema"), errs);
    validate_subresources(v.subresources, &path.child("subresources"), errs);
    for (i, col) in v.columns.unwrap_or(&[]).iter().enumerate() {
        validate_column(col, &path.child("additionalPrinterColumns").index(i), errs);
    }
    let selectable = v.selectable_fields.unwrap_or(&[]);
    if !selectable.is_empty() {
        match v.schema.and_then(|s| s.open_api_v3_schema.as_ref()) {
            None => errs.push(FieldError::invalid(
                &path.child("selectableFields"),
                "",
                "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
            )),
            Some(schema) => validate_selectable_fields(selectable, Some(schema), &path.child("selectableFields"), errs),
        }
    }
}

/// Go's `unicode.IsPrint`, closely enough for warning texts: graphic characters and the ASCII
/// space; other spaces, controls, format and private-use characters are not printable.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    !matches!(u, 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E
        | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
}

/// `validateDeprecationWarning` (only called when a warning is set).
fn deprecation_warning_errors(deprecated: bool, warning: &str) -> Vec<String> {
    if !deprecated {
        return vec!["can only be set for deprecated versions".to_string()];
    }
    let mut errs = vec![];
    if warning.len() > 256 {
        errs.push("must be <= 256 characters long".to_string());
    }
    if warning.is_empty() {
        errs.push("must not be an empty string".to_string());
    }
    if let Some((i, _)) = warning.char_indices().find(|(_, c)| !is_go_printable(*c)) {
        errs.push(format!("must only contain printable UTF-8 characters; non-printable character found at index {i}"));
    }
    errs
}

/// `ValidateCustomResourceDefinitionNames` (spec.names and status.acceptedNames).
fn validate_names(names: &CustomResourceDefinitionNames, path: &FieldPath, errs: &mut FieldErrors) {
    if !names.plural.is_empty() {
        let e = is_dns1035_label(&names.plural);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("plural"),
                names.plural.as_str(),
                join(e),
            ));
        }
    }
    if !names.singular.is_empty() {
        let e = is_dns1035_label(&names.singular);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("singular"),
                names.singular.as_str(),
                join(e),
            ));
        }
    }
    for (value, field) in [(&names.kind, "kind"), (&names.list_kind, "listKind")] {
        if !value.is_empty() {
            let e = is_dns1035_label(&value.to_lowercase());
            if !e.is_empty() {
                errs.push(FieldError::invalid(
                    &path.child(field),
                    value.as_str(),
                    format!(
                        "may have mixed case, but should otherwise match: {}",
                        join(e)
                    ),
                ));
            }
        }
    }
    for (i, short) in names.short_names.iter().enumerate() {
        let e = is_dns1035_label(short);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("shortNames").index(i),
                short.as_str(),
                join(e),
            ));
        }
    }
    // kind and listKind may not be the same or parsing becomes ambiguous.
    if !names.kind.is_empty() && names.kind == names.list_kind {
        errs.push(FieldError::invalid(
            &path.child("listKind"),
            names.list_kind.as_str(),
            "kind and listKind may not be the same",
        ));
    }
    for (i, cat) in names.categories.iter().enumerate() {
        let e = is_dns1035_label(cat);
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("categories").index(i),
                cat.as_str(),
                join(e),
            ));
        }
    }
}

fn schema_type(s: &serde_json::Map<String, Value>) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

/// `schemaHasKubernetesExtensions`.
fn has_kubernetes_extensions(schema: &Value) -> bool {
    schema_has(schema, &|s| {
        s.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true))
            || s.get("x-kubernetes-preserve-unknown-fields")
                .is_some_and(|v| !v.is_null())
            || s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
            || s.get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
            || s.get("x-kubernetes-list-type")
                .is_some_and(|v| !v.is_null())
            || s.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
    })
}

/// `validateCustomResourceDefinitionValidation`, see [`crate::schema_validation`].
fn validate_validation(
    validation: Option<&CustomResourceValidation>,
    status_enabled: bool,
    opts: &Opts,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let schema = validation.and_then(|v| v.open_api_v3_schema.as_ref());
    errs.extend(validate_custom_resource_validation(
        schema,
        &opts.schema_options(status_enabled),
        path,
    ));
}

/// `ValidateCustomResourceDefinitionSubresources`.
fn validate_subresources(
    sub: Option<&CustomResourceSubresources>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let Some(scale) = sub.and_then(|s| s.scale.as_ref()) else {
        return;
    };
    let spec_path = path.child("scale.specReplicasPath");
    if scale.spec_replicas_path.is_empty() {
        errs.push(FieldError::required(&spec_path, ""));
    } else {
        let e = validate_simple_json_path(&scale.spec_replicas_path, &spec_path);
        if !e.is_empty() {
            errs.extend(e);
        } else if !scale.spec_replicas_path.starts_with(".spec.") {
            errs.push(FieldError::invalid(
                &spec_path,
                scale.spec_replicas_path.as_str(),
                "should be a json path under .spec",
            ));
        }
    }
    let status_path = path.child("scale.statusReplicasPath");
    if scale.status_replicas_path.is_empty() {
        errs.push(FieldError::required(&status_path, ""));
    } else {
        let e = validate_simple_json_path(&scale.status_replicas_path, &status_path);
        if !e.is_empty() {
            errs.extend(e);
        } else if !scale.status_replicas_path.starts_with(".status.") {
            errs.push(FieldError::invalid(
                &status_path,
                scale.status_replicas_path.as_str(),
                "should be a json path under .status",
            ));
        }
    }
    if let Some(selector) = scale
        .label_selector_path
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        let sel_path = path.child("scale.labelSelectorPath");
        let e = validate_simple_json_path(selector, &sel_path);
        if !e.is_empty() {
            errs.extend(e);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errs.push(FieldError::invalid(
                &sel_path,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
}

/// `validateSimpleJSONPath`.
fn validate_simple_json_path(s: &str, path: &FieldPath) -> FieldErrors {
    if s.is_empty() {
        vec![FieldError::invalid(path, s, "must not be empty")]
    } else if !s.starts_with('.') {
        vec![FieldError::invalid(
            path,
            s,
            "must be a simple json path starting with .",
        )]
    } else {
        vec![]
    }
}

/// `ValidateCustomResourceColumnDefinition` (note upstream's `JSONPath` path segment).
fn validate_column(col: &CustomResourceColumnDefinition, path: &FieldPath, errs: &mut FieldErrors) {
    if col.name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    }
    let types_msg = format!("must be one of {PRINTER_COLUMN_TYPES}");
    if col.type_.is_empty() {
        errs.push(FieldError::required(&path.child("type"), types_msg));
    } else if !PRINTER_COLUMN_TYPES.split(',').any(|t| t == col.type_) {
        errs.push(FieldError::invalid(
            &path.child("type"),
            col.type_.as_str(),
            types_msg,
        ));
    }
    if !col.format.is_empty() && !PRINTER_COLUMN_FORMATS.split(',').any(|f| f == col.format) {
        errs.push(FieldError::invalid(
            &path.child("format"),
            col.format.as_str(),
            format!("must be one of {PRINTER_COLUMN_FORMATS}"),
        ));
    }
    let jp = path.child("JSONPath");
    if col.json_path.is_empty() {
        errs.push(FieldError::required(&jp, ""));
    } else {
        errs.extend(validate_simple_json_path(&col.json_path, &jp));
    }
}

/// `cel.ValidFieldPath` without array notation: resolves a `.a.b` path against the schema's
/// properties / additionalProperties. Returns the path's segments (map keys as `[k]`) and the
/// schema found.
fn valid_field_path<'a>(
    json_path: &str,
    schema: Option<&'a Value>,
) -> Result<(Vec<String>, Option<&'a Value>), String> {
    let mut segments: Vec<String> = vec![];
    let mut current = schema;
    crest_schema_cel::fieldpath::walk(json_path, false, |name| {
        let s = current
            .and_then(Value::as_object)
            .ok_or("does not refer to a valid field")?;
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            current = Some(props.get(name).ok_or("does not refer to a valid field")?);
            segments.push(name.to_string());
        } else if let Some(ap) = s.get("additionalProperties").filter(|v| !v.is_null()) {
            current = ap.is_object().then_some(ap);
            segments.push(format!("[{name}]"));
        } else {
            return Err("does not refer to a valid field".to_string());
        }
        Ok(())
    })?;
    Ok((segments, current))
}

/// `ValidateCustomResourceSelectableFields`.
fn validate_selectable_fields(
    fields: &[SelectableField],
    schema: Option<&Value>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut unique = HashSet::new();
    for (i, f) in fields.iter().enumerate() {
        let jp = path.index(i).child("jsonPath");
        if f.json_path.is_empty() {
            errs.push(FieldError::required(&jp, ""));
            continue;
        }
        let (segments, found) = match valid_field_path(&f.json_path, schema) {
            Ok(r) => r,
            Err(e) => {
                errs.push(FieldError::invalid(
                    &jp,
                    f.json_path.as_str(),
                    format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if segments.first().map(String::as_str) == Some("metadata") {
            errs.push(FieldError::invalid(
                &jp,
                f.json_path.as_str(),
                "must not point to fields in metadata",
            ));
        }
        let ty = found
            .and_then(Value::as_object)
            .map(schema_type)
            .unwrap_or("");
        if !matches!(ty, "string" | "boolean" | "integer") {
            errs.push(FieldError::invalid(
                &jp,
                f.json_path.as_str(),
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        let key = segments.iter().fold(String::new(), |acc, s| {
            if s.starts_with('[') || acc.is_empty() {
                acc + s
            } else {
                acc + "." + s
            }
        });
        if !unique.insert(key) {
            errs.push(FieldError::duplicate(&jp, f.json_path.as_str()));
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(FieldError::too_many(
            path,
            unique.len(),
            MAX_SELECTABLE_FIELDS,
        ));
    }
}

fn review_versions(c: &CustomResourceConversion) -> &[String] {
    c.webhook
        .as_ref()
        .map(|w| w.conversion_review_versions.as_slice())
        .unwrap_or(&[])
}

/// `validateCustomResourceConversion`. Upstream's internal form flattens `webhook.clientConfig`
/// to `webhookClientConfig` and `webhook.conversionReviewVersions` to `conversionReviewVersions`,
/// and those are the paths it reports.
fn validate_conversion(
    conv: Option<&CustomResourceConversion>,
    require_recognized: bool,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let Some(conv) = conv else { return };
    enum_string(
        &path.child("strategy"),
        &conv.strategy,
        &["None", "Webhook"],
        errs,
    );
    let client_config = conv.webhook.as_ref().and_then(|w| w.client_config.as_ref());
    let cc_path = path.child("webhookClientConfig");
    if conv.strategy == "Webhook" {
        match client_config {
            None => errs.push(FieldError::required(
                &cc_path,
                "required when strategy is set to Webhook",
            )),
            Some(cc) => match (&cc.url, &cc.service) {
                (Some(url), None) => validate_webhook_url(&cc_path.child("url"), url, errs),
                (None, Some(svc)) => {
                    // Upstream passes (name, namespace) into a (namespace, name) signature, so a
                    // missing name is reported at `namespace` and vice versa; reproduced as is.
                    validate_webhook_service(
                        &cc_path.child("service"),
                        &svc.name,
                        &svc.namespace,
                        svc.path.as_deref(),
                        svc.port.unwrap_or(443),
                        errs,
                    );
                }
                _ => errs.push(FieldError::required(
                    &cc_path,
                    "exactly one of url or service is required",
                )),
            },
        }
        validate_conversion_review_versions(
            review_versions(conv),
            require_recognized,
            &path.child("conversionReviewVersions"),
            errs,
        );
    } else {
        if client_config.is_some() {
            errs.push(FieldError::forbidden(
                &cc_path,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !review_versions(conv).is_empty() {
            errs.push(FieldError::forbidden(
                &path.child("conversionReviewVersions"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
}

/// `webhook.ValidateWebhookURL` with https forced.
fn validate_webhook_url(path: &FieldPath, url: &str, errs: &mut FieldErrors) {
    const FORM: &str = "; desired format: https://host[/path]";
    match crate::url::parse(url) {
        Err(e) => errs.push(FieldError::required(
            path,
            format!("url must be a valid URL: {e}{FORM}"),
        )),
        Ok(u) => {
            if u.scheme != "https" {
                errs.push(FieldError::invalid(
                    path,
                    u.scheme.as_str(),
                    format!("'https' is the only allowed URL scheme{FORM}"),
                ));
            }
            if u.host.is_empty() {
                errs.push(FieldError::invalid(
                    path,
                    u.host.as_str(),
                    format!("host must be specified{FORM}"),
                ));
            }
            if let Some(user) = &u.user {
                errs.push(FieldError::invalid(
                    path,
                    user.as_str(),
                    "user information is not permitted in the URL",
                ));
            }
            if !u.fragment.is_empty() {
                errs.push(FieldError::invalid(
                    path,
                    u.fragment.as_str(),
                    "fragments are not permitted in the URL",
                ));
            }
            if !u.raw_query.is_empty() {
                errs.push(FieldError::invalid(
                    path,
                    u.raw_query.as_str(),
                    "query parameters are not permitted in the URL",
                ));
            }
        }
    }
}

/// `webhook.ValidateWebhookService(fldPath, namespace, name, path, port)`.
fn validate_webhook_service(
    path: &FieldPath,
    namespace: &str,
    name: &str,
    url_path: Option<&str>,
    port: i32,
    errs: &mut FieldErrors,
) {
    if name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    }
    if namespace.is_empty() {
        errs.push(FieldError::required(&path.child("namespace"), ""));
    }
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            &path.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(p) = url_path else { return };
    if p.is_empty() || p == "/" {
        return;
    }
    let pp = path.child("path");
    if p == "//" {
        errs.push(FieldError::invalid(&pp, p, "segment[0] may not be empty"));
        return;
    }
    if !p.starts_with('/') {
        errs.push(FieldError::invalid(&pp, p, "must start with a '/'"));
    }
    // Like upstream, the first byte is dropped whether or not it is a '/'.
    let mut check = p.get(1..).unwrap_or("");
    if let Some(stripped) = check.strip_suffix('/') {
        check = stripped;
    }
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                &pp,
                p,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(
                &pp,
                p,
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
}

/// `validateConversionReviewVersions`.
fn validate_conversion_review_versions(
    versions: &[String],
    require_recognized: bool,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if versions.is_empty() {
        errs.push(FieldError::required(path, ""));
        return;
    }
    let mut seen = HashSet::new();
    let mut has_accepted = false;
    for (i, v) in versions.iter().enumerate() {
        if !seen.insert(v.as_str()) {
            errs.push(FieldError::invalid(
                &path.index(i),
                v.as_str(),
                "duplicate version",
            ));
            continue;
        }
        for e in is_dns1035_label(v) {
            errs.push(FieldError::invalid(&path.index(i), v.as_str(), e));
        }
        if ACCEPTED_CONVERSION_REVIEW_VERSIONS.contains(&v.as_str()) {
            has_accepted = true;
        }
    }
    if require_recognized && !has_accepted {
        errs.push(FieldError::invalid_repr(
            path,
            &gofmt::string_slice(Some(versions)),
            format!(
                "must include at least one of {}",
                ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
}

/// `ValidateCustomResourceDefinitionStoredVersions`; `None` is a nil list.
fn validate_stored_versions(
    stored: Option<&[String]>,
    versions: &[CustomResourceDefinitionVersion],
    errs: &mut FieldErrors,
) {
    let path = FieldPath::new("status").child("storedVersions");
    let list = stored.unwrap_or(&[]);
    if list.is_empty() {
        errs.push(FieldError::invalid_repr(
            &path,
            &gofmt::string_slice(stored),
            "must have at least one stored version",
        ));
        return;
    }
    for v in versions {
        if v.storage && !list.contains(&v.name) {
            errs.push(FieldError::invalid_repr(
                &path,
                &gofmt::string_slice(stored),
                format!("must have the storage version {}", v.name),
            ));
        }
    }
    // Upstream walks a map (random order, last index of a duplicate); report in list order.
    for (i, s) in list.iter().enumerate() {
        let last = list.iter().rposition(|x| x == s) == Some(i);
        if last && !versions.iter().any(|v| &v.name == s) {
            errs.push(FieldError::invalid(
                &path.index(i),
                s.as_str(),
                format!(
                    "missing from spec.versions; {s} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {s} and removes {s} from status.storedVersions"
                ),
            ));
        }
    }
}

fn approval_annotation(crd: &CustomResourceDefinition) -> &str {
    crd.metadata
        .get("annotations")
        .and_then(|a| a.get(API_APPROVED_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `validateAPIApproval`: protected groups need the approval annotation; an unchanged state is
/// never rejected on update.
fn validate_api_approval(
    crd: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
    errs: &mut FieldErrors,
) {
    if !is_protected_community_group(&crd.spec.group) {
        return;
    }
    let (state, reason) = api_approval_state(approval_annotation(crd));
    if old.is_some_and(|o| api_approval_state(approval_annotation(o)).0 == state) {
        return;
    }
    let path = FieldPath::new("metadata")
        .child("annotations")
        .key(API_APPROVED_ANNOTATION);
    match state {
        ApprovalState::Invalid => {
            errs.push(FieldError::invalid(&path, approval_annotation(crd), reason))
        }
        ApprovalState::Missing => errs.push(FieldError::required(&path, reason)),
        ApprovalState::Approved | ApprovalState::Bypassed => {}
    }
}

/// `validatePreserveUnknownFields`: v1 CRDs may not turn it on (unless it already was).
fn validate_preserve_unknown_fields(
    crd: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
    errs: &mut FieldErrors,
) {
    if old.is_some_and(|o| o.spec.preserve_unknown_fields) {
        return;
    }
    if crd.spec.preserve_unknown_fields {
        errs.push(FieldError::invalid(
            &FieldPath::new("spec").child("preserveUnknownFields"),
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
}

#[cfg(test)]
mod tests;
