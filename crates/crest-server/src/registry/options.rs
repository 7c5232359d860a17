//! The options of a request as the registry reads them: query parameters (`Query`: dryRun,
//! fieldValidation, list options) and DeleteOptions (body or query), in kube-apiserver's wording.

use crate::registry::Preconditions;
use crest_api::{ApiError, FieldError, FieldPath};
use crest_codec::negotiate::{body_format, decode_object, BodyFormat};
use crest_gofmt::json_kind;
use serde_json::Value;
use std::collections::HashMap;

/// Query parameters (last value wins, as Go's `url.Values.Get` returns the first; kube uses the first).
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    values: HashMap<String, Vec<String>>,
}

impl Query {
    /// The list's `labelSelector` and `fieldSelector`, checked against the resource.
    pub(crate) fn list_filter(
        &self,
        def: &crate::registry::resources::ResourceDef,
    ) -> Result<crest_selectors::ListFilter, ApiError> {
        crest_selectors::ListFilter::parse(
            self.get("labelSelector").unwrap_or(""),
            self.get("fieldSelector").unwrap_or(""),
            def.field_labels(),
        )
    }

    /// The list options (ListOptions) the reads take.
    pub(crate) fn list_options(&self) -> crate::store::reads::ListOptions<'_> {
        crate::store::reads::ListOptions {
            resource_version: self.get("resourceVersion").unwrap_or(""),
            resource_version_match: self.get("resourceVersionMatch").unwrap_or(""),
            continue_token: self.get("continue").unwrap_or(""),
            limit: self.get("limit"),
            send_initial_events: self.get("sendInitialEvents").is_some(),
        }
    }

    /// The query with `key` set to `value` alone.
    pub(crate) fn with(mut self, key: &str, value: String) -> Self {
        self.values.insert(key.to_string(), vec![value]);
        self
    }

    pub(crate) fn parse(q: Option<&str>) -> Self {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        if let Some(q) = q {
            for (k, v) in form_urlencoded::parse(q.as_bytes()) {
                values
                    .entry(k.into_owned())
                    .or_default()
                    .push(v.into_owned());
            }
        }
        Query { values }
    }

    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.values
            .get(k)
            .and_then(|v| v.first())
            .map(String::as_str)
    }

    pub(crate) fn all(&self, k: &str) -> &[String] {
        self.values.get(k).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Go's `strconv.ParseBool` on a parameter (absent = false).
    pub(crate) fn bool(&self, k: &str) -> Result<bool, ApiError> {
        match self.get(k) {
            None | Some("") => Ok(false),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(true),
            Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(false),
            Some(other) => Err(ApiError::bad_request(format!(
                "strconv.ParseBool: parsing {other:?}: invalid syntax"
            ))),
        }
    }

    /// `dryRun`: only `All` is defined.
    pub(crate) fn dry_run(&self, kind: &str) -> Result<bool, ApiError> {
        let vals = self.all("dryRun");
        if vals.is_empty() {
            return Ok(false);
        }
        if vals.iter().all(|v| v == "All") {
            return Ok(true);
        }
        let list: Vec<String> = vals.iter().map(|v| format!("{v:?}")).collect();
        let err = crest_api::FieldError::not_supported(
            &crest_api::FieldPath::new("dryRun"),
            serde_json::Value::Null,
            &["All"],
        );
        let mut e = ApiError::invalid(&crest_api::GroupKind::new("meta.k8s.io", kind), "", &[err]);
        e.message = format!(
            "{kind}.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{{{}}}: supported values: \"All\"",
            list.join(", ")
        );
        Err(e)
    }

    /// `fieldValidation`: Ignore, Warn (default) or Strict.
    pub(crate) fn field_validation(&self) -> Result<&str, ApiError> {
        match self.get("fieldValidation") {
            None | Some("") => Ok("Warn"),
            Some(v @ ("Ignore" | "Warn" | "Strict")) => Ok(v),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other}"
            ))),
        }
    }
}

/// `meta/v1 DeleteOptions` of a DELETE or deletecollection, decoded as kube-apiserver does: from
/// the body when there is one (JSON, or YAML by Content-Type), otherwise from the query
/// parameters, then validated (`ValidateDeleteOptions`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DeleteOptions {
    pub grace_period_seconds: Option<i64>,
    pub preconditions: Preconditions,
    pub orphan_dependents: Option<bool>,
    pub propagation_policy: Option<String>,
    pub dry_run: Vec<String>,
}

/// The `meta.k8s.io/v1` kinds a DeleteOptions body may decode into that are not DeleteOptions
/// (upstream decodes them, then refuses the result).
const OTHER_DECODABLE_KINDS: [&str; 7] = [
    "CreateOptions",
    "UpdateOptions",
    "Status",
    "APIVersions",
    "APIGroupList",
    "APIGroup",
    "APIResourceList",
];

/// The scheme kube-apiserver decodes DeleteOptions with, as its errors name it.
const META_SCHEME: &str = "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:28";

impl DeleteOptions {
    /// Decodes and validates the options of a DELETE request.
    pub(crate) fn parse(
        body: &[u8],
        content_type: Option<&str>,
        query: &Query,
    ) -> Result<Self, ApiError> {
        let opts = if body.iter().all(u8::is_ascii_whitespace) {
            Self::from_query(query)?
        } else {
            Self::from_body(body, content_type)?
        };
        opts.validate()?;
        Ok(opts)
    }

    pub(crate) fn is_dry_run(&self) -> bool {
        !self.dry_run.is_empty()
    }

    /// The query form (`DecodeParameters`): gracePeriodSeconds an int64, orphanDependents true
    /// unless `0`/`false`, propagationPolicy and dryRun as given. Preconditions have no query form.
    fn from_query(query: &Query) -> Result<Self, ApiError> {
        let mut o = DeleteOptions::default();
        if let Some(v) = query.get("gracePeriodSeconds") {
            o.grace_period_seconds = Some(v.parse::<i64>().map_err(|e| {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                        "value out of range"
                    }
                    _ => "invalid syntax",
                };
                ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: {why}"))
            })?);
        }
        if let Some(v) = query.get("orphanDependents") {
            o.orphan_dependents = Some(!(v == "0" || v.eq_ignore_ascii_case("false")));
        }
        if let Some(v) = query.get("propagationPolicy") {
            o.propagation_policy = Some(v.to_string());
        }
        o.dry_run = query.all("dryRun").to_vec();
        Ok(o)
    }

    /// The body form: a DeleteOptions object (kind and apiVersion may be left out).
    fn from_body(body: &[u8], content_type: Option<&str>) -> Result<Self, ApiError> {
        let v = match body_format(content_type) {
            BodyFormat::Json => decode_object(body, false)?,
            BodyFormat::Yaml => decode_object(body, true)?,
            BodyFormat::Protobuf => crest_codec::protobuf::decode_delete_options(body)?,
            _ => {
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
                ))
            }
        };
        let type_str = |field: &str| -> Result<String, ApiError> {
            match v.get(field) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(ApiError::bad_request(format!(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go struct field .{field} of type string",
                    json_kind(other)
                ))),
            }
        };
        let kind = type_str("kind")?;
        let api_version = type_str("apiVersion")?;
        if !kind.is_empty() && kind != "DeleteOptions" {
            if OTHER_DECODABLE_KINDS.contains(&kind.as_str()) {
                // A plain Go error upstream: 500 with no reason.
                return Err(ApiError::unknown(
                    "decoded object cannot be converted to DeleteOptions",
                ));
            }
            let version = if api_version.is_empty() {
                "meta.k8s.io/v1"
            } else {
                api_version.as_str()
            };
            return Err(ApiError::bad_request(format!(
                "no kind {kind:?} is registered for version {version:?} in scheme {META_SCHEME:?}"
            )));
        }
        let mut o = DeleteOptions::default();
        let field = |f: &str| v.get(f).filter(|x| !x.is_null());
        if let Some(x) = field("gracePeriodSeconds") {
            o.grace_period_seconds = Some(go_int64(x, "DeleteOptions", "gracePeriodSeconds")?);
        }
        if let Some(p) = field("preconditions") {
            let Some(p) = p.as_object() else {
                return Err(type_error(
                    p,
                    "DeleteOptions",
                    "preconditions",
                    "v1.Preconditions",
                ));
            };
            for (name, go_type) in [("uid", "types.UID"), ("resourceVersion", "string")] {
                let value = match p.get(name) {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(other) => {
                        return Err(type_error(
                            other,
                            "Preconditions",
                            &format!("preconditions.{name}"),
                            go_type,
                        ))
                    }
                };
                match name {
                    "uid" => o.preconditions.uid = value,
                    _ => o.preconditions.resource_version = value,
                }
            }
        }
        if let Some(x) = field("orphanDependents") {
            o.orphan_dependents = Some(
                x.as_bool()
                    .ok_or_else(|| type_error(x, "DeleteOptions", "orphanDependents", "bool"))?,
            );
        }
        if let Some(x) = field("propagationPolicy") {
            o.propagation_policy = Some(
                x.as_str()
                    .ok_or_else(|| {
                        type_error(
                            x,
                            "DeleteOptions",
                            "propagationPolicy",
                            "v1.DeletionPropagation",
                        )
                    })?
                    .to_string(),
            );
        }
        if let Some(x) = field("dryRun") {
            let Some(items) = x.as_array() else {
                return Err(type_error(x, "DeleteOptions", "dryRun", "[]string"));
            };
            for item in items {
                match item {
                    Value::String(s) => o.dry_run.push(s.clone()),
                    // A JSON null decodes to the empty string.
                    Value::Null => o.dry_run.push(String::new()),
                    other => return Err(type_error(other, "DeleteOptions", "dryRun", "string")),
                }
            }
        }
        Ok(o)
    }

    /// How dependents of the deleted object go.
    pub(crate) fn cascade(&self) -> crate::registry::deletion::Cascade {
        crate::registry::deletion::Cascade {
            orphan_dependents: self.orphan_dependents,
            propagation: self
                .propagation_policy
                .as_deref()
                .and_then(crate::registry::deletion::Propagation::parse),
        }
    }

    /// `ValidateDeleteOptions`.
    fn validate(&self) -> Result<(), ApiError> {
        let mut errs = vec![];
        if let (Some(_), Some(pp)) = (self.orphan_dependents, &self.propagation_policy) {
            errs.push(FieldError::invalid(
                &FieldPath::new("propagationPolicy"),
                pp.as_str(),
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if let Some(pp) = &self.propagation_policy {
            if !matches!(pp.as_str(), "Foreground" | "Background" | "Orphan") {
                errs.push(FieldError::not_supported(
                    &FieldPath::new("propagationPolicy"),
                    pp.as_str(),
                    &["Foreground", "Background", "Orphan", "nil"],
                ));
            }
        }
        if self.dry_run.iter().any(|v| v != "All") {
            let mut e = FieldError::not_supported(&FieldPath::new("dryRun"), Value::Null, &["All"]);
            e.value_repr = Some(crest_api::validation::go_string_slice(&self.dry_run));
            errs.push(e);
        }
        if errs.is_empty() {
            return Ok(());
        }
        Err(ApiError::invalid(
            &crest_api::GroupKind::new("meta.k8s.io", "DeleteOptions"),
            "",
            &errs,
        ))
    }
}

/// Go's `json: cannot unmarshal ...` for a field of the wrong JSON type.
fn type_error(v: &Value, go_struct: &str, field: &str, go_type: &str) -> ApiError {
    ApiError::bad_request(format!(
        "json: cannot unmarshal {} into Go struct field {go_struct}.{field} of type {go_type}",
        json_kind(v)
    ))
}

/// A JSON number decoded into an int64 as Go does (a fraction or overflow names the number).
fn go_int64(v: &Value, go_struct: &str, field: &str) -> Result<i64, ApiError> {
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!(
                "json: cannot unmarshal number {n} into Go struct field {go_struct}.{field} of type int64"
            ))
        }),
        other => Err(type_error(other, go_struct, field, "int64")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str, ctype: Option<&str>, query: &str) -> Result<DeleteOptions, ApiError> {
        DeleteOptions::parse(body.as_bytes(), ctype, &Query::parse(Some(query)))
    }

    #[test]
    fn delete_options_from_body_or_query() {
        let o = parse(
            "",
            None,
            "gracePeriodSeconds=5&orphanDependents=&dryRun=All",
        )
        .unwrap();
        assert_eq!(
            (o.grace_period_seconds, o.orphan_dependents, o.is_dry_run()),
            (Some(5), Some(true), true)
        );
        // A body wins: the query is not read at all.
        let o = parse(r#"{"orphanDependents":false}"#, None, "dryRun=All").unwrap();
        assert_eq!((o.orphan_dependents, o.is_dry_run()), (Some(false), false));
        let o = parse(
            "kind: DeleteOptions\napiVersion: v1\npreconditions:\n  uid: x\n",
            Some("application/yaml"),
            "",
        )
        .unwrap();
        assert_eq!(o.preconditions.uid.as_deref(), Some("x"));
        let e = parse(r#"{"gracePeriodSeconds":1.5}"#, None, "").unwrap_err();
        assert_eq!(
            e.message,
            "json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64"
        );
        let e = parse(r#"{"preconditions":{"uid":1}}"#, None, "").unwrap_err();
        assert_eq!(
            e.message,
            "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID"
        );
        let e = parse(r#"{"kind":"Status"}"#, None, "").unwrap_err();
        assert_eq!((e.code, e.reason), (500, None));
        let e = parse("{}", Some("text/plain"), "").unwrap_err();
        assert_eq!(e.code, 415);
        let e = parse("", None, "gracePeriodSeconds=99999999999999999999").unwrap_err();
        assert_eq!(
            e.message,
            r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#
        );
        let e = parse("", None, "propagationPolicy=Orphan&orphanDependents=false").unwrap_err();
        assert_eq!(
            e.message,
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#
        );
    }
}
