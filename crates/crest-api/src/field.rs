//! Field-level validation errors, worded exactly as k8s.io/apimachinery/pkg/util/validation/field.

use serde_json::Value;
use std::fmt;

/// A path to a field, rendered as Kubernetes renders it: `spec.versions[0].name`, `metadata.labels[app]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(String);

impl FieldPath {
    /// The empty (root) path.
    pub fn root() -> Self {
        FieldPath(String::new())
    }

    /// A path starting with `name`.
    pub fn new(name: &str) -> Self {
        FieldPath(name.to_string())
    }

    /// `self.name`.
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            FieldPath(name.to_string())
        } else {
            // Concatenated rather than `format!`ed: every write builds several paths.
            let mut p = String::with_capacity(self.0.len() + 1 + name.len());
            p.push_str(&self.0);
            p.push('.');
            p.push_str(name);
            FieldPath(p)
        }
    }

    /// `self[i]`.
    pub fn index(&self, i: usize) -> Self {
        use std::fmt::Write;
        let mut p = String::with_capacity(self.0.len() + 8);
        p.push_str(&self.0);
        let _ = write!(p, "[{i}]");
        FieldPath(p)
    }

    /// `self[key]`.
    pub fn key(&self, key: &str) -> Self {
        let mut p = String::with_capacity(self.0.len() + 2 + key.len());
        p.push_str(&self.0);
        p.push('[');
        p.push_str(key);
        p.push(']');
        FieldPath(p)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The kind of a field error; `as_str` is Kubernetes' human text, `reason` the StatusCause type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
    TypeInvalid,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
            ErrorType::TypeInvalid => "Invalid value",
        }
    }

    /// The `StatusCause.reason` (CauseType) of this error type.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }
}

/// One validation failure at one field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub error_type: ErrorType,
    pub field: FieldPath,
    /// The offending value; `None` when Kubernetes omits it from the message.
    pub value: Option<Value>,
    /// How the value prints when Go would not print it as JSON (e.g. `0x0` for a uint64 `%#v`).
    pub value_repr: Option<String>,
    pub detail: String,
}

impl FieldError {
    fn make(
        error_type: ErrorType,
        field: &FieldPath,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            error_type,
            field: field.clone(),
            value,
            value_repr: None,
            detail: detail.into(),
        }
    }
    pub fn required(field: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Required, field, None, detail)
    }
    pub fn invalid(field: &FieldPath, value: impl Into<Value>, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Invalid, field, Some(value.into()), detail)
    }
    /// An `Invalid value` whose value prints verbatim (`repr`), as Go's `%#v` of non-JSON types.
    pub fn invalid_repr(field: &FieldPath, repr: &str, detail: impl Into<String>) -> Self {
        let mut e = Self::make(ErrorType::Invalid, field, None, detail);
        e.value_repr = Some(repr.to_string());
        e
    }
    /// An `Invalid value` that does not show the value (upstream's `field.OmitValueType`):
    /// `path: Invalid value: detail`.
    pub fn invalid_omitted(field: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Invalid, field, None, detail)
    }
    pub fn forbidden(field: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Forbidden, field, None, detail)
    }
    pub fn duplicate(field: &FieldPath, value: impl Into<Value>) -> Self {
        Self::make(ErrorType::Duplicate, field, Some(value.into()), "")
    }
    pub fn not_found(field: &FieldPath, value: impl Into<Value>) -> Self {
        Self::make(ErrorType::NotFound, field, Some(value.into()), "")
    }
    pub fn internal(field: &FieldPath, detail: impl Into<String>) -> Self {
        Self::make(ErrorType::Internal, field, None, detail)
    }
    pub fn too_long(field: &FieldPath, max: usize) -> Self {
        Self::make(
            ErrorType::TooLong,
            field,
            None,
            format!("may not be more than {max} bytes"),
        )
    }
    pub fn too_many(field: &FieldPath, actual: usize, max: usize) -> Self {
        Self::make(
            ErrorType::TooMany,
            field,
            Some(Value::from(actual)),
            format!("must have at most {max} items"),
        )
    }
    /// `Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported(field: &FieldPath, value: impl Into<Value>, valid: &[&str]) -> Self {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| format!("{v:?}")).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::make(ErrorType::NotSupported, field, Some(value.into()), detail)
    }
    pub fn type_invalid(
        field: &FieldPath,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::make(ErrorType::TypeInvalid, field, Some(value.into()), detail)
    }

    /// The message without the field path (Kubernetes' `ErrorBody`), used as `StatusCause.message`.
    pub fn body(&self) -> String {
        let mut s = match self.error_type {
            ErrorType::Required
            | ErrorType::Forbidden
            | ErrorType::TooLong
            | ErrorType::Internal => self.error_type.as_str().to_string(),
            _ => match &self.value {
                _ if self.value_repr.is_some() => {
                    format!(
                        "{}: {}",
                        self.error_type.as_str(),
                        self.value_repr.as_deref().unwrap_or_default()
                    )
                }
                None => self.error_type.as_str().to_string(),
                Some(v) => format!("{}: {}", self.error_type.as_str(), go_value(v)),
            },
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

/// Formats a value as Go's `%v`/`%q` would for the simple types Kubernetes reports.
fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "\"null\"".to_string(),
        Value::String(s) => format!("{:?}", s),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        // Kubernetes prints composite values with %#v; the type name is the stable part clients read.
        Value::Array(_) => "\"array\"".to_string(),
        Value::Object(_) => "\"object\"".to_string(),
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.as_str().is_empty() {
            write!(f, "<nil>: {}", self.body())
        } else {
            write!(f, "{}: {}", self.field, self.body())
        }
    }
}

/// A list of field errors, as `field.ErrorList`.
pub type FieldErrors = Vec<FieldError>;

/// Renders an error list as Kubernetes' aggregate: one message alone, several in `[a, b]`, duplicates dropped.
pub fn aggregate(errs: &[FieldError]) -> String {
    let mut seen = std::collections::HashSet::new();
    let msgs: Vec<String> = errs
        .iter()
        .map(|e| e.to_string())
        .filter(|m| seen.insert(m.clone()))
        .collect();
    if msgs.len() == 1 {
        msgs.into_iter().next().unwrap_or_default()
    } else {
        format!("[{}]", msgs.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_kubernetes() {
        let p = FieldPath::new("spec")
            .child("versions")
            .index(0)
            .child("name");
        assert_eq!(
            FieldError::invalid(&p, "V1", "a DNS-1035 label").to_string(),
            "spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label"
        );
        assert_eq!(
            FieldError::required(&FieldPath::new("spec.group"), "").to_string(),
            "spec.group: Required value"
        );
        assert_eq!(
            FieldError::not_supported(
                &FieldPath::new("spec.scope"),
                "x",
                &["Cluster", "Namespaced"]
            )
            .to_string(),
            "spec.scope: Unsupported value: \"x\": supported values: \"Cluster\", \"Namespaced\""
        );
        let errs = vec![
            FieldError::required(&FieldPath::new("a"), ""),
            FieldError::required(&FieldPath::new("b"), "x"),
        ];
        assert_eq!(
            aggregate(&errs),
            "[a: Required value, b: Required value: x]"
        );
    }
}
