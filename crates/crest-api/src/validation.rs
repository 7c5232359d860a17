//! Name, label and ObjectMeta validation with the exact messages of
//! k8s.io/apimachinery/pkg/util/validation and pkg/api/validation.

use crate::field::{FieldError, FieldErrors, FieldPath};
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::OnceLock;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Total size of all annotations of one object.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

fn anchored(fmt: &str) -> Regex {
    // The formats are compile-time constants; a failure here is a programming error caught by tests.
    Regex::new(&format!("^(?:{fmt})$")).unwrap_or_else(|e| panic!("bad built-in regex {fmt}: {e}"))
}

macro_rules! cached_regex {
    ($name:ident, $fmt:expr) => {
        fn $name() -> &'static Regex {
            static R: OnceLock<Regex> = OnceLock::new();
            R.get_or_init(|| anchored($fmt))
        }
    };
}
cached_regex!(dns1123_label_re, DNS1123_LABEL_FMT);
cached_regex!(dns1123_subdomain_re, DNS1123_SUBDOMAIN_FMT);
cached_regex!(dns1035_label_re, DNS1035_LABEL_FMT);
cached_regex!(qualified_name_re, QUALIFIED_NAME_FMT);
cached_regex!(label_value_re, LABEL_VALUE_FMT);

/// Kubernetes' `RegexError`: the message, examples, and the regex.
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut s = format!("{msg} (e.g. ");
    for (i, ex) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{ex}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

pub fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

pub fn is_dns1123_label(v: &str) -> Vec<String> {
    let mut errs = vec![];
    if v.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !dns1123_label_re().is_match(v) {
        errs.push(regex_error(
            DNS1123_LABEL_MSG,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

pub fn is_dns1123_subdomain(v: &str) -> Vec<String> {
    let mut errs = vec![];
    if v.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !dns1123_subdomain_re().is_match(v) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

pub fn is_dns1035_label(v: &str) -> Vec<String> {
    let mut errs = vec![];
    if v.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !dns1035_label_re().is_match(v) {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsQualifiedName`: `[prefix/]name`, used for label keys, annotation keys and finalizers.
pub fn is_qualified_name(v: &str) -> Vec<String> {
    let mut errs = vec![];
    let parts: Vec<&str> = v.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(is_dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !qualified_name_re().is_match(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

pub fn is_valid_label_value(v: &str) -> Vec<String> {
    let mut errs = vec![];
    if v.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !label_value_re().is_match(v) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsValidPathSegmentName`: names end up in URLs, so `.`/`..` and `/`/`%` are refused.
pub fn is_valid_path_segment_name(v: &str) -> Vec<String> {
    if v == "." || v == ".." {
        return vec![format!("may not be '{v}'")];
    }
    let mut errs = vec![];
    for illegal in ["/", "%"] {
        if v.contains(illegal) {
            errs.push(format!("may not contain '{illegal}'"));
        }
    }
    errs
}

/// How a resource validates `metadata.name` (and `generateName` with `prefix = true`).
pub type NameValidator = fn(&str, bool) -> Vec<String>;

/// Kubernetes' `maskTrailingDash` (drops two characters, as upstream does).
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        format!("{}a", &name[..name.len() - 2])
    } else {
        name.to_string()
    }
}

pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    let n = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    is_dns1123_subdomain(&n)
}

pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    let n = if prefix {
        mask_trailing_dash(name)
    } else {
        name.to_string()
    };
    is_dns1123_label(&n)
}

fn str_map<'a>(
    meta: &'a Map<String, Value>,
    key: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) -> Option<Vec<(&'a String, &'a str)>> {
    match meta.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => {
            let mut out = vec![];
            for (k, v) in m {
                match v {
                    Value::String(s) => out.push((k, s.as_str())),
                    other => errs.push(FieldError::invalid(
                        &path.key(k),
                        other.clone(),
                        "must be a string",
                    )),
                }
            }
            Some(out)
        }
        Some(other) => {
            errs.push(FieldError::invalid(
                path,
                other.clone(),
                "must be an object of strings",
            ));
            None
        }
    }
}

pub fn validate_labels(meta: &Map<String, Value>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(labels) = str_map(meta, "labels", path, errs) {
        for (k, v) in labels {
            for m in is_qualified_name(k) {
                errs.push(FieldError::invalid(path, k.as_str(), m));
            }
            for m in is_valid_label_value(v) {
                errs.push(FieldError::invalid(path, v, m));
            }
        }
    }
}

pub fn validate_annotations(meta: &Map<String, Value>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(anns) = str_map(meta, "annotations", path, errs) {
        let mut total = 0usize;
        for (k, v) in anns {
            for m in is_qualified_name(&k.to_lowercase()) {
                errs.push(FieldError::invalid(path, k.as_str(), m));
            }
            total += k.len() + v.len();
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errs.push(FieldError::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
        }
    }
}

fn validate_finalizers(meta: &Map<String, Value>, path: &FieldPath, errs: &mut FieldErrors) {
    match meta.get("finalizers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let mut seen = std::collections::HashSet::new();
            for (i, f) in items.iter().enumerate() {
                let Some(s) = f.as_str() else {
                    errs.push(FieldError::invalid(
                        &path.index(i),
                        f.clone(),
                        "must be a string",
                    ));
                    continue;
                };
                for m in is_qualified_name(s) {
                    errs.push(FieldError::invalid(&path.index(i), s, m));
                }
                if !seen.insert(s) {
                    errs.push(FieldError::duplicate(&path.index(i), s));
                }
            }
        }
        Some(other) => errs.push(FieldError::invalid(
            path,
            other.clone(),
            "must be a list of strings",
        )),
    }
}

fn validate_owner_references(meta: &Map<String, Value>, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(refs) = meta.get("ownerReferences") else {
        return;
    };
    let Some(refs) = refs.as_array() else {
        if !refs.is_null() {
            errs.push(FieldError::invalid(path, refs.clone(), "must be a list"));
        }
        return;
    };
    let mut controllers = 0;
    for (i, r) in refs.iter().enumerate() {
        let p = path.index(i);
        for f in ["apiVersion", "kind", "name", "uid"] {
            if r.get(f).and_then(Value::as_str).unwrap_or("").is_empty() {
                let detail = match f {
                    "apiVersion" => "version must not be empty",
                    "kind" => "kind must not be empty",
                    "name" => "name must not be empty",
                    _ => "uid must not be empty",
                };
                errs.push(FieldError::invalid(
                    &p.child(f),
                    r.get(f).cloned().unwrap_or(Value::from("")),
                    detail,
                ));
            }
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            controllers += 1;
        }
    }
    if controllers > 1 {
        errs.push(FieldError::invalid(
            path,
            Value::Array(refs.clone()),
            "Only one reference can have Controller set to true",
        ));
    }
}

/// `ValidateObjectMeta` for create and update: name/generateName, namespace presence, labels,
/// annotations, finalizers and owner references.
pub fn validate_object_meta(
    meta: &Map<String, Value>,
    namespaced: bool,
    name_fn: NameValidator,
    path: &FieldPath,
) -> FieldErrors {
    let mut errs = vec![];
    let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
    let generate_name = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !generate_name.is_empty() {
        for m in name_fn(generate_name, true) {
            errs.push(FieldError::invalid(
                &path.child("generateName"),
                generate_name,
                m,
            ));
        }
    }
    if name.is_empty() {
        errs.push(FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        ));
    } else {
        for m in name_fn(name, false) {
            errs.push(FieldError::invalid(&path.child("name"), name, m));
        }
    }
    let ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    if namespaced {
        if ns.is_empty() {
            errs.push(FieldError::required(&path.child("namespace"), ""));
        } else {
            for m in is_dns1123_label(ns) {
                errs.push(FieldError::invalid(&path.child("namespace"), ns, m));
            }
        }
    } else if !ns.is_empty() {
        errs.push(FieldError::forbidden(
            &path.child("namespace"),
            "not allowed on this type",
        ));
    }
    validate_labels(meta, &path.child("labels"), &mut errs);
    validate_annotations(meta, &path.child("annotations"), &mut errs);
    validate_finalizers(meta, &path.child("finalizers"), &mut errs);
    validate_owner_references(meta, &path.child("ownerReferences"), &mut errs);
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dns_messages() {
        assert_eq!(
            is_dns1123_subdomain("Foo")[0],
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert_eq!(
            is_dns1035_label("1a")[0],
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        );
        assert!(is_dns1123_label("default").is_empty());
        assert!(is_qualified_name("example.com/my-finalizer").is_empty());
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert!(!is_valid_label_value("-x").is_empty());
    }

    #[test]
    fn object_meta() {
        let meta =
            json!({"name": "ok", "namespace": "default", "labels": {"app": "x", "bad key!": "y"}});
        let errs = validate_object_meta(
            meta.as_object().unwrap(),
            true,
            name_is_dns_subdomain,
            &FieldPath::new("metadata"),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field.as_str(), "metadata.labels");
        let meta = json!({});
        let errs = validate_object_meta(
            meta.as_object().unwrap(),
            false,
            name_is_dns_subdomain,
            &FieldPath::new("metadata"),
        );
        assert_eq!(
            errs[0].to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
    }
}
