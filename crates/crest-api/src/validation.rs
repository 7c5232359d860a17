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

/// `path.ValidatePathSegmentName`: what an update checks names with (a prefix may only not
/// contain `/` or `%`).
pub fn name_is_path_segment(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        ["/", "%"]
            .iter()
            .filter(|c| name.contains(*c))
            .map(|c| format!("may not contain '{c}'"))
            .collect()
    } else {
        is_valid_path_segment_name(name)
    }
}

/// Kubernetes' `maskTrailingDash`: the last two bytes replaced by `a` (a generateName's trailing
/// dash is followed by generated characters). Go slices bytes; a multi-byte character cut in
/// two becomes U+FFFD here (invalid either way), never a panic.
pub fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let kept = &name.as_bytes()[..name.len() - 2];
        format!("{}a", String::from_utf8_lossy(kept))
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

/// The finalizers Kubernetes itself defines (`IsStandardFinalizerName`).
pub const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// The garbage collector's finalizers (`metav1.FinalizerOrphanDependents`, `FinalizerDeleteDependents`).
pub const FINALIZER_ORPHAN: &str = "orphan";
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";

/// Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
pub fn go_string_slice<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{:?}", s.as_ref())).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// The string items of `metadata.finalizers` (type errors are reported by [`validate_finalizers`]).
fn finalizer_names(meta: &Map<String, Value>) -> Vec<&str> {
    meta.get("finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `ValidateFinalizers`: every name is a qualified name (errors on the list's path, unindexed,
/// as upstream reports them), and orphan and foregroundDeletion exclude each other.
fn validate_finalizers(meta: &Map<String, Value>, path: &FieldPath, errs: &mut FieldErrors) {
    match meta.get("finalizers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let (mut orphan, mut foreground) = (false, false);
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
                    errs.push(FieldError::invalid(path, s, m));
                }
                orphan |= s == FINALIZER_ORPHAN;
                foreground |= s == FINALIZER_FOREGROUND;
            }
            if orphan && foreground {
                errs.push(FieldError::invalid_repr(
                    path,
                    &go_string_slice(&finalizer_names(meta)),
                    format!(
                        "finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set"
                    ),
                ));
            }
        }
        Some(other) => errs.push(FieldError::invalid(
            path,
            other.clone(),
            "must be a list of strings",
        )),
    }
}

/// The core API group's extra finalizer rule (`validateKubeFinalizerName`, for namespaces): a
/// name without a `/` must be one of the standard finalizers. Errors are indexed.
pub fn validate_kube_finalizer_names(meta: &Map<String, Value>, path: &FieldPath) -> FieldErrors {
    let mut errs = vec![];
    for (i, f) in finalizer_names(meta).into_iter().enumerate() {
        if !f.contains('/') && !STANDARD_FINALIZERS.contains(&f) {
            errs.push(FieldError::invalid(
                &path.index(i),
                f,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

/// The finalizers in `new` and not in `old`, sorted, each once.
fn added_finalizers<'a>(
    new: &'a Map<String, Value>,
    old: Option<&Map<String, Value>>,
) -> Vec<&'a str> {
    // A set of the old names (upstream's `sets.String` difference): an update of an object
    // with 30,000 finalizers stays linear.
    let old_f: std::collections::HashSet<&str> = old
        .map(finalizer_names)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let mut added: Vec<&str> = finalizer_names(new)
        .into_iter()
        .filter(|f| !old_f.contains(f))
        .collect();
    added.sort_unstable();
    added.dedup();
    added
}

/// The warnings a custom resource gets for finalizers it adds (those in `new` and not in `old`,
/// sorted): invalid names, and names without a domain.
pub fn finalizer_warnings(
    new: &Map<String, Value>,
    old: Option<&Map<String, Value>>,
) -> Vec<String> {
    let mut out = vec![];
    for f in added_finalizers(new, old) {
        for m in is_qualified_name(f) {
            out.push(format!("metadata.finalizers: {f:?}: {m}"));
        }
        if !f.contains('/') && !STANDARD_FINALIZERS.contains(&f) {
            out.push(format!(
                "metadata.finalizers: {f:?}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
            ));
        }
    }
    out
}

/// `schema.FromAPIVersionAndKind`: (group, version); both empty when the apiVersion does not parse.
fn parse_api_version(api_version: &str) -> (&str, &str) {
    if api_version.is_empty() || api_version == "/" {
        return ("", "");
    }
    match api_version.matches('/').count() {
        0 => ("", api_version),
        1 => api_version.split_once('/').unwrap_or(("", "")),
        _ => ("", ""),
    }
}

fn str_field<'a>(r: &'a Value, k: &str) -> &'a str {
    r.get(k).and_then(Value::as_str).unwrap_or("")
}

/// Go's `%#v` of a `*bool` field: a pointer (the address is what Go prints; any stable one will
/// do) or `(*bool)(nil)`.
fn go_bool_ptr(v: Option<&Value>, seed: usize) -> String {
    match v.and_then(Value::as_bool) {
        Some(_) => format!("(*bool)(0xc000{:06x})", 0x10e8 + seed * 0x10),
        None => "(*bool)(nil)".to_string(),
    }
}

/// Go's `%#v` of one `metav1.OwnerReference`.
fn go_owner_reference(r: &Value, i: usize) -> String {
    format!(
        "v1.OwnerReference{{APIVersion:{:?}, Kind:{:?}, Name:{:?}, UID:{:?}, Controller:{}, BlockOwnerDeletion:{}}}",
        str_field(r, "apiVersion"),
        str_field(r, "kind"),
        str_field(r, "name"),
        str_field(r, "uid"),
        go_bool_ptr(r.get("controller"), 2 * i),
        go_bool_ptr(r.get("blockOwnerDeletion"), 2 * i + 1),
    )
}

/// How many bytes of copies of one value a list of errors may show, when upstream repeats a
/// large value in many errors.
pub const REPEATED_VALUE_BUDGET: usize = 1 << 20;

/// `ValidateOwnerReferences`: apiVersion (with a version), kind, name and uid are required, Events
/// may not own, and at most one reference is the controller. Errors name the list's path
/// (`metadata.ownerReferences.uid`), unindexed, as upstream reports them.
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
    let mut first_controller: Option<String> = None;
    // Upstream shows the whole list with every further controller: built once, and shown (after
    // the first time) only while the copies stay within a budget, then omitted (upstream's
    // `field.OmitValueType` form), so that 30,000 controllers are not 30,000 copies of a
    // 4 MB list (minutes of work and gigabytes of answer).
    let mut list_repr: Option<String> = None;
    let mut shown = 0usize;
    for (i, r) in refs.iter().enumerate() {
        let (api_version, kind) = (str_field(r, "apiVersion"), str_field(r, "kind"));
        let (group, version) = parse_api_version(api_version);
        if version.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        for (field, detail) in [
            ("kind", "kind must not be empty"),
            ("name", "name must not be empty"),
            ("uid", "uid must not be empty"),
        ] {
            let v = str_field(r, field);
            if v.is_empty() {
                errs.push(FieldError::invalid(&path.child(field), v, detail));
            }
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            errs.push(FieldError::invalid_repr(
                path,
                &go_owner_reference(r, i),
                format!("{group}/{version}, Kind={kind} is disallowed from being an owner"),
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{}", str_field(r, "name"));
            match &first_controller {
                Some(first) => {
                    let detail = format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}");
                    let repr = list_repr.get_or_insert_with(|| {
                        let all: Vec<String> = refs
                            .iter()
                            .enumerate()
                            .map(|(j, x)| go_owner_reference(x, j))
                            .collect();
                        format!("[]v1.OwnerReference{{{}}}", all.join(", "))
                    });
                    // The first copy is always shown (one copy is linear in the request).
                    if shown == 0 || shown + repr.len() <= REPEATED_VALUE_BUDGET {
                        shown += repr.len();
                        errs.push(FieldError::invalid_repr(path, repr, detail));
                    } else {
                        errs.push(FieldError::invalid_omitted(path, detail));
                    }
                }
                None => first_controller = Some(current),
            }
        }
    }
}

fn is_set(meta: &Map<String, Value>, field: &str) -> bool {
    meta.get(field).is_some_and(|v| !v.is_null())
}

/// Go's `%v` of a `metav1.Time` (its `time.Time` String form, in UTC).
fn go_time(v: &Value) -> String {
    let s = v.as_str().unwrap_or_default();
    match chrono::DateTime::parse_from_rfc3339(s) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S +0000 UTC")
            .to_string(),
        Err(_) => s.to_string(),
    }
}

/// `ValidateObjectMetaAccessorUpdate`: what an update may not do to metadata. No finalizer may be
/// added to an object being deleted; uid, deletionTimestamp and deletionGracePeriodSeconds are
/// immutable (the caller has restored what the client may omit); labels, annotations and owner
/// references are validated again.
pub fn validate_object_meta_update(
    new: &Map<String, Value>,
    old: &Map<String, Value>,
    path: &FieldPath,
) -> FieldErrors {
    let mut errs = vec![];
    if is_set(old, "deletionTimestamp") {
        let added = added_finalizers(new, Some(old));
        if !added.is_empty() {
            errs.push(FieldError::forbidden(
                &path.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    go_string_slice(&added)
                ),
            ));
        }
    }
    let (new_uid, old_uid) = (
        new.get("uid").and_then(Value::as_str).unwrap_or(""),
        old.get("uid").and_then(Value::as_str).unwrap_or(""),
    );
    if new_uid != old_uid {
        errs.push(FieldError::invalid(
            &path.child("uid"),
            new_uid,
            FIELD_IMMUTABLE,
        ));
    }
    let (new_ts, old_ts) = (new.get("deletionTimestamp"), old.get("deletionTimestamp"));
    if new_ts.filter(|v| !v.is_null()).map(go_time) != old_ts.filter(|v| !v.is_null()).map(go_time)
    {
        let p = path.child("deletionTimestamp");
        errs.push(match new_ts.filter(|v| !v.is_null()) {
            Some(v) => FieldError::invalid_repr(&p, &go_time(v), FIELD_IMMUTABLE),
            None => FieldError::invalid(&p, "null", FIELD_IMMUTABLE),
        });
    }
    let (new_grace, old_grace) = (
        new.get("deletionGracePeriodSeconds")
            .filter(|v| !v.is_null()),
        old.get("deletionGracePeriodSeconds")
            .filter(|v| !v.is_null()),
    );
    if new_grace != old_grace {
        errs.push(FieldError::invalid(
            &path.child("deletionGracePeriodSeconds"),
            new_grace.cloned().unwrap_or(Value::from("null")),
            FIELD_IMMUTABLE,
        ));
    }
    validate_labels(new, &path.child("labels"), &mut errs);
    validate_annotations(new, &path.child("annotations"), &mut errs);
    validate_owner_references(new, &path.child("ownerReferences"), &mut errs);
    errs
}

/// `apimachinery/pkg/api/validation.FieldImmutableErrorMsg`.
pub const FIELD_IMMUTABLE: &str = "field is immutable";

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
    validate_owner_references(meta, &path.child("ownerReferences"), &mut errs);
    validate_finalizers(meta, &path.child("finalizers"), &mut errs);
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

    fn meta_errors(meta: Value) -> Vec<String> {
        validate_object_meta(
            meta.as_object().unwrap(),
            true,
            name_is_dns_subdomain,
            &FieldPath::new("metadata"),
        )
        .iter()
        .map(|e| e.to_string())
        .collect()
    }

    #[test]
    fn owner_references_as_upstream() {
        let errs = meta_errors(json!({"name": "a", "namespace": "d", "ownerReferences": [
            {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"},
            {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u2", "blockOwnerDeletion": false},
        ]}));
        assert_eq!(
            errs,
            [
                r#"metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty"#,
                r#"metadata.ownerReferences: Invalid value: v1.OwnerReference{APIVersion:"v1", Kind:"Event", Name:"e", UID:"u2", Controller:(*bool)(nil), BlockOwnerDeletion:(*bool)(0xc000001118)}: /v1, Kind=Event is disallowed from being an owner"#,
            ]
        );
        let refs: Vec<Value> = ["a", "b", "c"]
            .iter()
            .map(|n| json!({"apiVersion": "v1", "kind": "K", "name": n, "uid": n, "controller": true}))
            .collect();
        let errs = meta_errors(json!({"name": "a", "namespace": "d", "ownerReferences": refs}));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].ends_with(r#"Only one reference can have Controller set to true. Found "true" in references for K/a and K/b"#));
        assert!(errs[1].ends_with("for K/a and K/c"));
    }

    #[test]
    fn finalizers_as_upstream() {
        let errs = meta_errors(
            json!({"name": "a", "namespace": "d", "finalizers": ["orphan", "x/y/z", "foregroundDeletion", "orphan"]}),
        );
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0].starts_with(r#"metadata.finalizers: Invalid value: "x/y/z": a qualified name"#)
        );
        assert_eq!(
            errs[1],
            r#"metadata.finalizers: Invalid value: []string{"orphan", "x/y/z", "foregroundDeletion", "orphan"}: finalizer orphan and foregroundDeletion cannot be both set"#
        );
        let new = json!({"finalizers": ["kubernetes", "mine", "a.io/x"]});
        let errs = validate_kube_finalizer_names(
            new.as_object().unwrap(),
            &FieldPath::new("metadata").child("finalizers"),
        );
        assert_eq!(
            errs[0].to_string(),
            r#"metadata.finalizers[1]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified"#
        );
        let old = json!({"finalizers": ["a.io/x"]});
        assert_eq!(
            finalizer_warnings(new.as_object().unwrap(), old.as_object()),
            [
                r#"metadata.finalizers: "mine": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"#
            ]
        );
    }

    #[test]
    fn thirty_thousand_finalizers_and_controllers_in_linear_time() {
        let start = std::time::Instant::now();
        let fins: Vec<String> = (0..30_000).map(|i| format!("f.io/{i}")).collect();
        let old = json!({"deletionTimestamp": "2024-05-01T10:00:00Z", "finalizers": fins});
        let mut more: Vec<String> = fins.iter().rev().cloned().collect();
        more.push("g.io/new".into());
        let new = json!({"deletionTimestamp": "2024-05-01T10:00:00Z", "finalizers": more});
        let errs = validate_object_meta_update(
            new.as_object().unwrap(),
            old.as_object().unwrap(),
            &FieldPath::new("metadata"),
        );
        assert_eq!(
            errs[0].to_string(),
            r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"g.io/new"}"#
        );
        assert!(finalizer_warnings(old.as_object().unwrap(), new.as_object()).is_empty());

        // Every further controller is an error; the list is shown in the first ones only.
        let refs: Vec<Value> = (0..30_000)
            .map(|i| json!({"apiVersion": "v1", "kind": "K", "name": format!("o{i}"), "uid": format!("u{i}"), "controller": true}))
            .collect();
        let errs = meta_errors(json!({"name": "a", "namespace": "d", "ownerReferences": refs}));
        assert_eq!(errs.len(), 29_999);
        assert!(errs[0].starts_with(
            r#"metadata.ownerReferences: Invalid value: []v1.OwnerReference{v1.OwnerReference{APIVersion:"v1", Kind:"K", Name:"o0""#
        ));
        assert_eq!(
            errs[29_998],
            r#"metadata.ownerReferences: Invalid value: Only one reference can have Controller set to true. Found "true" in references for K/o0 and K/o29999"#
        );
        let shown: usize = errs.iter().map(String::len).sum();
        assert!(shown < 16 << 20, "{shown} bytes of errors");
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn update_rules() {
        let old = json!({"uid": "u", "deletionTimestamp": "2024-05-01T10:00:00Z", "deletionGracePeriodSeconds": 0, "finalizers": ["a.io/x"]});
        let new = json!({"uid": "v", "deletionTimestamp": "2024-05-01T10:00:00Z", "deletionGracePeriodSeconds": 30, "finalizers": ["c.io/z", "a.io/x", "b.io/y"]});
        let errs: Vec<String> = validate_object_meta_update(
            new.as_object().unwrap(),
            old.as_object().unwrap(),
            &FieldPath::new("metadata"),
        )
        .iter()
        .map(|e| e.to_string())
        .collect();
        assert_eq!(
            errs,
            [
                r#"metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/y", "c.io/z"}"#,
                r#"metadata.uid: Invalid value: "v": field is immutable"#,
                "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
            ]
        );
        let fresh = json!({"uid": "u"});
        let marked = json!({"uid": "u", "deletionTimestamp": "2024-05-01T10:00:00Z"});
        let errs = validate_object_meta_update(
            marked.as_object().unwrap(),
            fresh.as_object().unwrap(),
            &FieldPath::new("metadata"),
        );
        assert_eq!(
            errs[0].to_string(),
            "metadata.deletionTimestamp: Invalid value: 2024-05-01 10:00:00 +0000 UTC: field is immutable"
        );
    }
}
