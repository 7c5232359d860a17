//! API errors rendered as `meta/v1 Status` objects with kube-apiserver's reasons, codes and wording
//! (k8s.io/apimachinery/pkg/api/errors).

use crate::field::{aggregate, FieldError};
use crate::gvk::{GroupKind, GroupResource};
use serde_json::{json, Map, Value};
use std::fmt;

/// `metav1.StatusReason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    NotFound,
    AlreadyExists,
    Conflict,
    Invalid,
    BadRequest,
    Unauthorized,
    MethodNotAllowed,
    NotAcceptable,
    UnsupportedMediaType,
    RequestEntityTooLarge,
    Gone,
    Expired,
    Forbidden,
    Timeout,
    TooManyRequests,
    InternalError,
    ServiceUnavailable,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::NotFound => "NotFound",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Invalid => "Invalid",
            Reason::BadRequest => "BadRequest",
            Reason::Unauthorized => "Unauthorized",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::NotAcceptable => "NotAcceptable",
            Reason::UnsupportedMediaType => "UnsupportedMediaType",
            Reason::RequestEntityTooLarge => "RequestEntityTooLarge",
            Reason::Gone => "Gone",
            Reason::Expired => "Expired",
            Reason::Forbidden => "Forbidden",
            Reason::Timeout => "Timeout",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::InternalError => "InternalError",
            Reason::ServiceUnavailable => "ServiceUnavailable",
        }
    }
}

/// An error that the API answers with a `Status` body.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub code: u16,
    /// `None` renders no `reason` (kube-apiserver does so for some generic errors).
    pub reason: Option<Reason>,
    pub message: String,
    /// `details`, already shaped (`name`, `group`, `kind`, `causes`, `retryAfterSeconds`).
    pub details: Option<Map<String, Value>>,
    /// `metadata.continue` of the Status (an expired continue token offers an inconsistent one).
    pub list_continue: Option<String>,
}

fn details(name: &str, group: &str, kind: &str) -> Map<String, Value> {
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), name.into());
    }
    if !group.is_empty() {
        d.insert("group".into(), group.into());
    }
    if !kind.is_empty() {
        d.insert("kind".into(), kind.into());
    }
    d
}

impl ApiError {
    pub fn new(code: u16, reason: Reason, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: Some(reason),
            message: message.into(),
            details: None,
            list_continue: None,
        }
    }

    /// `resource.group "name" not found`.
    pub fn not_found(gr: &GroupResource, name: &str) -> Self {
        ApiError {
            code: 404,
            reason: Some(Reason::NotFound),
            message: format!("{gr} {name:?} not found"),
            details: Some(details(name, &gr.group, &gr.resource)),
            list_continue: None,
        }
    }

    /// The 404 for a path that names no resource the server serves.
    pub fn path_not_found() -> Self {
        ApiError {
            code: 404,
            reason: Some(Reason::NotFound),
            message: "the server could not find the requested resource".into(),
            details: Some(Map::new()),
            list_continue: None,
        }
    }

    pub fn already_exists(gr: &GroupResource, name: &str) -> Self {
        ApiError {
            code: 409,
            reason: Some(Reason::AlreadyExists),
            message: format!("{gr} {name:?} already exists"),
            details: Some(details(name, &gr.group, &gr.resource)),
            list_continue: None,
        }
    }

    /// `Operation cannot be fulfilled on resource.group "name": <detail>`.
    pub fn conflict(gr: &GroupResource, name: &str, detail: &str) -> Self {
        ApiError {
            code: 409,
            reason: Some(Reason::Conflict),
            message: format!("Operation cannot be fulfilled on {gr} {name:?}: {detail}"),
            details: Some(details(name, &gr.group, &gr.resource)),
            list_continue: None,
        }
    }

    /// The optimistic-concurrency conflict of an update with a stale resourceVersion.
    pub fn stale(gr: &GroupResource, name: &str) -> Self {
        Self::conflict(
            gr,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 `Kind.group "name" is invalid: <aggregate>` with one cause per field error.
    pub fn invalid(gk: &GroupKind, name: &str, errs: &[FieldError]) -> Self {
        let causes: Vec<Value> = errs
            .iter()
            .map(|e| {
                // Go renders a nil field path as `<nil>`, in the cause as in the message.
                let field = match e.field.as_str() {
                    "" => "<nil>",
                    f => f,
                };
                json!({"reason": e.error_type.reason(), "message": e.body(), "field": field})
            })
            .collect();
        let mut d = details(name, &gk.group, &gk.kind);
        d.insert("causes".into(), Value::Array(causes));
        let message = if errs.is_empty() {
            format!("{gk} {name:?} is invalid")
        } else {
            format!("{gk} {name:?} is invalid: {}", aggregate(errs))
        };
        ApiError {
            code: 422,
            reason: Some(Reason::Invalid),
            message,
            details: Some(d),
            list_continue: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, Reason::BadRequest, message)
    }

    /// 405 for a verb a resource does not support.
    pub fn method_not_supported(gr: &GroupResource, action: &str) -> Self {
        ApiError {
            code: 405,
            reason: Some(Reason::MethodNotAllowed),
            message: format!(
                "{action} is not supported on resources of kind {:?}",
                gr.to_string()
            ),
            details: Some(details("", &gr.group, &gr.resource)),
            list_continue: None,
        }
    }

    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, Reason::NotAcceptable, message)
    }

    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, Reason::UnsupportedMediaType, message)
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            Reason::RequestEntityTooLarge,
            format!("Request entity too large: limit is {limit}"),
        )
    }

    pub fn forbidden(gr: &GroupResource, name: &str, detail: &str) -> Self {
        let target = if name.is_empty() {
            gr.to_string()
        } else {
            format!("{gr} {name:?}")
        };
        ApiError {
            code: 403,
            reason: Some(Reason::Forbidden),
            message: format!("{target} is forbidden: {detail}"),
            details: Some(details(name, &gr.group, &gr.resource)),
            list_continue: None,
        }
    }

    /// 405/409-free refusal used when a namespace or CRD is terminating.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, Reason::MethodNotAllowed, message)
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, Reason::Gone, message)
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, Reason::Expired, message)
    }

    /// 504 for a resourceVersion the server has not reached yet (kube's
    /// `NewTooLargeResourceVersionError`); clients retry after the advertised second.
    pub fn too_large_resource_version(requested: i64, current: i64) -> Self {
        let mut d = Map::new();
        d.insert(
            "causes".into(),
            json!([{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]),
        );
        d.insert("retryAfterSeconds".into(), 1.into());
        ApiError {
            code: 504,
            reason: Some(Reason::Timeout),
            message: format!(
                "Timeout: Too large resource version: {requested}, current: {current}"
            ),
            details: Some(d),
            list_continue: None,
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError {
            code: 500,
            reason: Some(Reason::InternalError),
            message: format!("Internal error occurred: {}", message.into()),
            details: Some({
                let mut d = Map::new();
                d.insert("causes".into(), json!([{"message": "internal error"}]));
                d
            }),
            list_continue: None,
        }
    }

    /// An error kube-apiserver has no status for (a plain Go error through
    /// `responsewriters.ErrorToAPIStatus`): 500, no reason, the error's text as the message.
    pub fn unknown(message: impl Into<String>) -> Self {
        ApiError {
            code: 500,
            reason: None,
            message: message.into(),
            details: None,
            list_continue: None,
        }
    }

    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, Reason::ServiceUnavailable, message)
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut s = Map::new();
        s.insert("kind".into(), "Status".into());
        s.insert("apiVersion".into(), "v1".into());
        s.insert(
            "metadata".into(),
            match &self.list_continue {
                Some(c) => json!({ "continue": c }),
                None => json!({}),
            },
        );
        s.insert("status".into(), "Failure".into());
        s.insert("message".into(), self.message.clone().into());
        if let Some(r) = self.reason {
            s.insert("reason".into(), r.as_str().into());
        }
        if let Some(d) = &self.details {
            s.insert("details".into(), Value::Object(d.clone()));
        }
        s.insert("code".into(), self.code.into());
        Value::Object(s)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

/// A successful delete answered with a `Status` (what kube-apiserver returns for deletecollection
/// of namespaces or when the object is gone immediately and the client asked for a Status).
pub fn success_status(name: &str, gr: &GroupResource, uid: &str) -> Value {
    let mut d = details(name, &gr.group, &gr.resource);
    if !uid.is_empty() {
        d.insert("uid".into(), uid.into());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::FieldPath;

    #[test]
    fn not_found_message() {
        let gr = GroupResource::new("stable.example.com", "crontabs");
        let e = ApiError::not_found(&gr, "x");
        assert_eq!(e.message, "crontabs.stable.example.com \"x\" not found");
        assert_eq!(e.to_status()["code"], 404);
        let gr = GroupResource::new("", "namespaces");
        assert_eq!(
            ApiError::not_found(&gr, "x").message,
            "namespaces \"x\" not found"
        );
    }

    #[test]
    fn invalid_message() {
        let gk = GroupKind::new("apiextensions.k8s.io", "CustomResourceDefinition");
        let e = ApiError::invalid(
            &gk,
            "a.b",
            &[FieldError::required(&FieldPath::new("spec.group"), "")],
        );
        assert_eq!(
            e.message,
            "CustomResourceDefinition.apiextensions.k8s.io \"a.b\" is invalid: spec.group: Required value"
        );
        assert_eq!(e.to_status()["details"]["causes"][0]["field"], "spec.group");
    }
}
