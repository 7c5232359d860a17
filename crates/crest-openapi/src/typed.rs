//! Typed decoding of built-in kinds by their published schemas: the fields a Go struct has no
//! place for, found and removed as kube-apiserver's strict decoder (sigs.k8s.io/json with
//! `DisallowUnknownFields`) reports them, so `fieldValidation` can refuse them (Strict), warn
//! about them (Warn) or drop them silently (Ignore); they are never stored.
//!
//! The published v3 definitions are the source of truth (no hand-written field lists): an
//! object with `properties` is a struct, its other fields unknown; `additionalProperties` with a
//! schema is a map whose values are walked; `items` a slice. A definition with neither (JSON,
//! IntOrString, Quantity, Time, FieldsV1) is opaque: decoded by its own UnmarshalJSON, which
//! the strict decoder does not look into. apiextensions' JSONSchemaPropsOr{Array,Bool,
//! StringArray} decode the schema they hold leniently: unknown fields there are dropped
//! without a report, as upstream's custom UnmarshalJSON drops them.
//!
//! Paths are the decoder's field stack, as its messages print them: keys joined with `.`
//! (map keys too), indices as `[i]`.

use crest_gofmt::json_kind;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt::Write as _;

/// How deep a value is walked (the JSON decoders refuse deeper nesting anyway).
const MAX_DEPTH: usize = 128;
/// Type errors recorded to choose the document's first from.
const MAX_TYPE_ERRORS: usize = 1000;

/// The unknown fields of `value` read as the built-in definition `definition` (e.g.
/// `io.k8s.api.core.v1.Namespace`), removed from it, in key order, depth first. An unknown
/// definition name reports nothing. Wrong JSON types are not reported (see [`decode`]).
pub fn prune_unknown_fields(definition: &str, value: &mut Value) -> Vec<String> {
    let mut d = Decoder::new();
    d.run(definition, value);
    d.unknown
}

/// `value` decoded as the Go type of the built-in definition `definition`, as kube-apiserver's
/// decoder (sigs.k8s.io/json) reads a body into it: a value of the wrong JSON type fails the
/// decode with the decoder's message (`json: cannot unmarshal number into Go struct field
/// ConfigMap.data of type string`; the first in key order, or the first error of a type with
/// its own UnmarshalJSON, which ends the decode at once); otherwise the unknown fields found
/// and removed (as [`prune_unknown_fields`]). Key order is the document's for a body Go
/// marshalled (sorted keys); for a body as a client wrote it, see [`decode_body`]. Times are rewritten as Go encodes the decoded
/// value (`metav1.Time`: RFC 3339 in UTC, whole seconds; `metav1.MicroTime`: UTC with six
/// fractional digits).
pub fn decode(definition: &str, value: &mut Value) -> Result<Vec<String>, String> {
    decode_body(definition, value, None)
}

/// [`decode`] of a value parsed from the JSON document `body`: of several wrong-JSON-type
/// errors, the one reported is the first in the document's order, as the Go decoder meets
/// them, rather than in key order (the document is scanned only then). Without a body (a
/// patched object, which upstream marshals with sorted keys; YAML, which it converts to JSON
/// the same way), key order is the document's.
pub fn decode_body(
    definition: &str,
    value: &mut Value,
    body: Option<&[u8]>,
) -> Result<Vec<String>, String> {
    let mut d = Decoder::new();
    d.run(definition, value);
    match d.first_error(body) {
        Some(e) => Err(e),
        None => Ok(d.unknown_in_order(body)),
    }
}

/// The definition a schema refers to, or the schema itself.
pub(crate) fn resolve<'a>(defs: &'a Map<String, Value>, schema: &'a Value) -> Option<&'a Value> {
    let mut s = schema;
    for _ in 0..8 {
        match ref_name(s) {
            Some(name) => s = defs.get(name)?,
            None => return Some(s),
        }
    }
    None
}

/// `value` (a strategic-merge-patched object) converted into the Go type of `definition` as
/// apimachinery's `DefaultUnstructuredConverter.FromUnstructured` does it, with its errors
/// (`unrecognized type: string`, `cannot convert int64 to string`, `cannot restore struct
/// from: slice`, ...). The conversion's own leniency is applied to `value`: an integral float
/// becomes an integer and an int64 is truncated to an int32 field's width, as Go's
/// `reflect.Value.Convert`. Struct fields are visited in the published (sorted) order, which
/// stands for the Go struct's.
pub fn from_unstructured(definition: &str, value: &mut Value) -> Result<(), String> {
    let defs = super::builtin_v3();
    match defs.get(definition) {
        Some(schema) => convert(defs, schema, Some(definition), value, None, 0),
        None => Ok(()),
    }
}

/// reflect's Kind of a value as the unstructured form holds it.
fn unstructured_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

fn convert(
    defs: &Map<String, Value>,
    schema: &Value,
    definition: Option<&str>,
    value: &mut Value,
    named: Option<&str>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH || value.is_null() {
        return Ok(());
    }
    match ref_name(schema) {
        Some(n) if LENIENT_WRAPPERS.iter().any(|w| n.ends_with(w)) => return Ok(()),
        // Types with their own UnmarshalJSON: the value goes through JSON into it.
        Some(TIME) | Some(MICRO_TIME) => {
            let micro = ref_name(schema) == Some(MICRO_TIME);
            return match value {
                Value::String(s) => {
                    let t = crate::gotime::parse(s, micro)?;
                    *s = crate::gotime::format(&t, micro);
                    Ok(())
                }
                other => Err(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    json_kind(other)
                )),
            };
        }
        Some(INT_OR_STRING) => {
            return match value {
                Value::String(_) => Ok(()),
                Value::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => Ok(()),
                Value::Number(n) => Err(format!(
                    "json: cannot unmarshal number {n} into Go value of type int32"
                )),
                other => Err(format!(
                    "json: cannot unmarshal {} into Go value of type int32",
                    json_kind(other)
                )),
            };
        }
        Some(n) => {
            return match defs.get(n) {
                Some(target) => convert(defs, target, Some(n), value, named, depth + 1),
                None => Ok(()),
            };
        }
        None => {}
    }
    let kind = unstructured_kind(value);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let Value::Object(obj) = value else {
            return Err(format!("cannot restore struct from: {kind}"));
        };
        for (k, p) in props {
            if let Some(v) = obj.get_mut(k) {
                let named = definition.and_then(|d| named_string(d, k));
                convert(defs, p, None, v, named, depth + 1)?;
            }
        }
        return Ok(());
    }
    let format = schema.get("format").and_then(Value::as_str);
    match schema.get("type").and_then(Value::as_str) {
        Some("string") if format == Some("byte") => match value {
            Value::String(s) => crest_gofmt::go_base64_decode(s.as_bytes())
                .map(|_| ())
                .map_err(|at| {
                    format!(
                        "error decoding from json: {}",
                        crest_gofmt::base64_error(at)
                    )
                }),
            Value::Array(_) => Ok(()),
            _ => Err(format!("cannot restore slice from {kind}")),
        },
        Some("string") => match value {
            Value::String(_) => Ok(()),
            Value::Number(n) if n.is_i64() => Err(format!(
                "cannot convert int64 to {}",
                named.unwrap_or("string")
            )),
            _ => Err("unrecognized type: string".into()),
        },
        Some("integer") => {
            let ty = if format == Some("int32") {
                "int32"
            } else {
                "int64"
            };
            let Value::Number(n) = value else {
                return Err(format!("unrecognized type: {ty}"));
            };
            let i = match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i,
                (None, Some(f)) if f == f.trunc() => f as i64,
                _ => return Err(format!("cannot convert float64 to {ty}")),
            };
            // reflect's Convert: an int32 field keeps the low 32 bits.
            *value = Value::from(if ty == "int32" {
                i64::from(i as i32)
            } else {
                i
            });
            Ok(())
        }
        Some("number") => match value {
            Value::Number(_) => Ok(()),
            _ => Err("unrecognized type: float64".into()),
        },
        Some("boolean") => match value {
            Value::Bool(_) => Ok(()),
            _ => Err("unrecognized type: bool".into()),
        },
        Some("array") => {
            let Value::Array(items) = value else {
                return Err(format!("cannot restore slice from {kind}"));
            };
            match schema.get("items").filter(|i| i.is_object()) {
                Some(item) => items
                    .iter_mut()
                    .try_for_each(|v| convert(defs, item, None, v, named, depth + 1)),
                None => Ok(()),
            }
        }
        _ => match schema.get("additionalProperties").filter(|a| a.is_object()) {
            Some(values) => {
                let Value::Object(obj) = value else {
                    return Err(format!("cannot restore map from {kind}"));
                };
                obj.values_mut()
                    .try_for_each(|v| convert(defs, values, None, v, named, depth + 1))
            }
            None => Ok(()),
        },
    }
}

/// The definition name a schema refers to through `$ref` (also wrapped in a one-element
/// `allOf`, as the v3 documents write references with siblings).
fn ref_name(schema: &Value) -> Option<&str> {
    let target = schema
        .get("$ref")
        .or_else(|| match schema.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => all[0].get("$ref"),
            _ => None,
        })
        .and_then(Value::as_str)?;
    Some(target.rsplit('/').next().unwrap_or(target))
}

/// apiextensions' `JSONSchemaPropsOr{Array,Bool,StringArray}` have their own UnmarshalJSON,
/// which decodes the schema they may hold with the lenient decoder: unknown fields in it (and
/// below) are dropped without a report, whatever fieldValidation says.
const LENIENT_WRAPPERS: [&str; 3] = [
    "JSONSchemaPropsOrArray",
    "JSONSchemaPropsOrBool",
    "JSONSchemaPropsOrStringArray",
];
const JSON_SCHEMA_PROPS: &str =
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

/// Fields whose Go type is a named string type (`type SecretType string`): the published
/// schemas say `string`, the decoder's message names the Go type. By definition and field; for
/// a slice or map field, its element type.
const NAMED_STRINGS: &[(&str, &str, &str)] = &[
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "uid", "types.UID"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference", "uid", "types.UID"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry", "operation", "v1.ManagedFieldsOperationType"),
    ("io.k8s.api.core.v1.NamespaceSpec", "finalizers", "v1.FinalizerName"),
    ("io.k8s.api.core.v1.NamespaceStatus", "phase", "v1.NamespacePhase"),
    ("io.k8s.api.core.v1.NamespaceCondition", "type", "v1.NamespaceConditionType"),
    ("io.k8s.api.core.v1.NamespaceCondition", "status", "v1.ConditionStatus"),
    ("io.k8s.api.core.v1.ObjectReference", "uid", "types.UID"),
    ("io.k8s.api.core.v1.Secret", "type", "v1.SecretType"),
    ("io.k8s.api.core.v1.ServiceSpec", "type", "v1.ServiceType"),
    ("io.k8s.api.core.v1.ServiceSpec", "sessionAffinity", "v1.ServiceAffinity"),
    ("io.k8s.api.core.v1.ServiceSpec", "externalTrafficPolicy", "v1.ServiceExternalTrafficPolicy"),
    ("io.k8s.api.core.v1.ServiceSpec", "internalTrafficPolicy", "v1.ServiceInternalTrafficPolicy"),
    ("io.k8s.api.core.v1.ServiceSpec", "ipFamilies", "v1.IPFamily"),
    ("io.k8s.api.core.v1.ServiceSpec", "ipFamilyPolicy", "v1.IPFamilyPolicy"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "v1.Protocol"),
    ("io.k8s.api.core.v1.EndpointPort", "protocol", "v1.Protocol"),
    ("io.k8s.api.core.v1.PortStatus", "protocol", "v1.Protocol"),
    ("io.k8s.api.core.v1.LoadBalancerIngress", "ipMode", "v1.LoadBalancerIPMode"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "status", "v1.ConditionStatus"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "addressType", "v1.AddressType"),
    ("io.k8s.api.discovery.v1.EndpointPort", "protocol", "v1.Protocol"),
    ("io.k8s.api.coordination.v1.LeaseSpec", "strategy", "v1.CoordinatedLeaseStrategy"),
    ("io.k8s.api.coordination.v1.LeaseSpec", "preferredHolder", "string"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec", "scope", "v1.ResourceScope"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion", "strategy", "v1.ConversionStrategyType"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition", "type", "v1.CustomResourceDefinitionConditionType"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition", "status", "v1.ConditionStatus"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule", "reason", "v1.FieldValueErrorReason"),
];

fn named_string(definition: &str, field: &str) -> Option<&'static str> {
    NAMED_STRINGS
        .iter()
        .find(|(d, f, _)| *d == definition && *f == field)
        .map(|(_, _, t)| *t)
}

/// Go's name of a definition's type: its package's name and the type's (`v1.ObjectMeta`).
fn go_struct_type(definition: &str) -> String {
    let mut parts = definition.rsplit('.');
    let name = parts.next().unwrap_or(definition);
    match parts.next() {
        Some(pkg) => format!("{pkg}.{name}"),
        None => name.to_string(),
    }
}

/// One decode: the unknown-field path (map keys and indices included, as the strict decoder
/// reports), the type error context (struct fields only, as encoding/json's errorContext: the
/// innermost struct and the field names from the root), what was found.
struct Decoder {
    path: String,
    /// Struct field names and struct type names: the published definitions' own strings.
    fields: Vec<&'static str>,
    structs: Vec<&'static str>,
    /// Where each segment of `path` starts, and whether it is an index (`[i]`) or a key.
    segs: Vec<(usize, bool)>,
    unknown: Vec<String>,
    /// The segments of each `unknown` path (see `segs`).
    unknown_segs: Vec<Vec<(usize, bool)>>,
    /// Every type error met, in walk (key) order: the decoder keeps the first it meets
    /// (`saveError`) and goes on, unless the error is a custom UnmarshalJSON's (`fatal`), which
    /// ends the decode at once; which one it meets first depends on the document's order.
    errors: Vec<TypeError>,
}

/// A wrong JSON type found by the walk, and where.
struct TypeError {
    message: String,
    fatal: bool,
    path: String,
    segs: Vec<(usize, bool)>,
}

impl TypeError {
    fn segments(&self) -> Vec<Segment<'_>> {
        segments(&self.path, &self.segs)
    }
}

/// A path's segments, keys and indices, from where each starts in it.
fn segments<'a>(path: &'a str, segs: &[(usize, bool)]) -> Vec<Segment<'a>> {
    let mut out = Vec::with_capacity(segs.len());
    for (i, &(start, index)) in segs.iter().enumerate() {
        let end = match segs.get(i + 1) {
            Some(&(next, true)) => next,
            Some(&(next, false)) => next - 1,
            None => path.len(),
        };
        let text = path.get(start..end).unwrap_or_default();
        out.push(if index {
            Segment::Index(
                text.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse()
                    .unwrap_or(usize::MAX),
            )
        } else {
            Segment::Key(text)
        });
    }
    out
}

impl Decoder {
    fn new() -> Self {
        Decoder {
            path: String::new(),
            fields: vec![],
            structs: vec![],
            segs: vec![],
            unknown: vec![],
            unknown_segs: vec![],
            errors: vec![],
        }
    }

    /// The unknown fields in the order the decoder meets them: `body`'s, when there are
    /// several and a body to tell.
    fn unknown_in_order(self, body: Option<&[u8]>) -> Vec<String> {
        let Some(body) = body.filter(|_| self.unknown.len() > 1) else {
            return self.unknown;
        };
        let paths: Vec<Vec<Segment<'_>>> = self
            .unknown
            .iter()
            .zip(&self.unknown_segs)
            .map(|(path, segs)| segments(path, segs))
            .collect();
        let order = document_order(body, &paths);
        let mut indexed: Vec<(usize, usize)> = (0..self.unknown.len())
            .map(|i| (order[i].unwrap_or(usize::MAX), i))
            .collect();
        indexed.sort_unstable();
        indexed
            .into_iter()
            .map(|(_, i)| self.unknown[i].clone())
            .collect()
    }

    /// The error the Go decoder returns: the first custom UnmarshalJSON error it meets, else
    /// the first saved one; "first" in `body`'s order when there is one to tell.
    fn first_error(&mut self, body: Option<&[u8]>) -> Option<String> {
        let fatal = self.errors.iter().any(|e| e.fatal);
        let candidates: Vec<&TypeError> = self.errors.iter().filter(|e| e.fatal == fatal).collect();
        let chosen = match (candidates.len(), body) {
            (0, _) => return None,
            (1, _) | (_, None) => 0,
            (_, Some(body)) => {
                let paths: Vec<Vec<Segment<'_>>> =
                    candidates.iter().map(|e| e.segments()).collect();
                let order = document_order(body, &paths);
                // Unfound paths keep their walk order, after the found ones.
                (0..candidates.len())
                    .min_by_key(|&i| (order[i].unwrap_or(usize::MAX), i))
                    .unwrap_or(0)
            }
        };
        candidates.get(chosen).map(|e| e.message.clone())
    }

    fn run(&mut self, definition: &str, value: &mut Value) {
        let defs = super::builtin_v3();
        if let Some((name, schema)) = defs.get_key_value(definition) {
            self.walk(defs, schema, Some(name), value, None, true, 0);
        }
    }

    /// `json: cannot unmarshal <what> into Go struct field <Struct>.<fields> of type <ty>`.
    fn type_error(&self, what: &str, ty: &str) -> String {
        match self.structs.last() {
            Some(st) => format!(
                "json: cannot unmarshal {what} into Go struct field {st}.{} of type {ty}",
                self.fields.join(".")
            ),
            None => format!("json: cannot unmarshal {what} into Go value of type {ty}"),
        }
    }

    fn save(&mut self, e: String) {
        self.record(e, false);
    }

    /// A custom UnmarshalJSON's error: returned at once, over any saved one.
    fn stop(&mut self, e: String) {
        self.record(e, true);
    }

    fn record(&mut self, message: String, fatal: bool) {
        // A body with more is pathological: the first of these (in key order) is reported.
        if self.errors.len() >= MAX_TYPE_ERRORS {
            return;
        }
        self.errors.push(TypeError {
            message,
            fatal,
            path: self.path.clone(),
            segs: self.segs.clone(),
        });
    }

    /// Enters a key (a struct field or map key) of the path.
    fn push_key(&mut self, k: &str) -> usize {
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.segs.push((self.path.len(), false));
        self.path.push_str(k);
        len
    }

    /// Enters an index of the path.
    fn push_index(&mut self, i: usize) -> usize {
        let len = self.path.len();
        self.segs.push((len, true));
        let _ = write!(self.path, "[{i}]");
        len
    }

    /// Leaves the last segment entered (`len`: what `push_*` returned).
    fn pop(&mut self, len: usize) {
        self.segs.pop();
        self.path.truncate(len);
    }

    /// Go's type of a schema node, for messages (`named`: a named string type's name).
    fn go_type(defs: &Map<String, Value>, schema: &Value, named: Option<&str>) -> String {
        if let Some(name) = ref_name(schema) {
            return match name {
                TIME => "v1.Time".into(),
                MICRO_TIME => "v1.MicroTime".into(),
                INT_OR_STRING => "intstr.IntOrString".into(),
                n => match defs.get(n) {
                    Some(d) if d.get("properties").is_none() => Decoder::go_type(defs, d, named),
                    _ => go_struct_type(n),
                },
            };
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") if schema.get("format").and_then(Value::as_str) == Some("byte") => {
                "[]uint8".into()
            }
            Some("string") => named.unwrap_or("string").into(),
            Some("integer") => match schema.get("format").and_then(Value::as_str) {
                Some("int32") => "int32".into(),
                _ => "int64".into(),
            },
            Some("number") => "float64".into(),
            Some("boolean") => "bool".into(),
            Some("array") => match schema.get("items") {
                Some(i) => format!("[]{}", Decoder::go_type(defs, i, named)),
                None => "[]interface {}".into(),
            },
            _ => match schema.get("additionalProperties").filter(|a| a.is_object()) {
                Some(a) => format!("map[string]{}", Decoder::go_type(defs, a, named)),
                None => "map[string]interface {}".into(),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        defs: &'static Map<String, Value>,
        schema: &'static Value,
        definition: Option<&'static str>,
        value: &mut Value,
        named: Option<&str>,
        report: bool,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let reference = ref_name(schema);
        if reference.is_some_and(|n| LENIENT_WRAPPERS.iter().any(|w| n.ends_with(w))) {
            // A schema (object) or, for OrArray, a list of schemas; booleans and strings as they
            // are. Their decoding errors are the wrappers' own (not reproduced).
            let Some(props) = defs.get(JSON_SCHEMA_PROPS) else {
                return;
            };
            let mut quiet = Decoder::new();
            quiet.path = self.path.clone();
            quiet.segs = self.segs.clone();
            match value {
                Value::Object(_) => quiet.walk(
                    defs,
                    props,
                    Some(JSON_SCHEMA_PROPS),
                    value,
                    None,
                    false,
                    depth + 1,
                ),
                Value::Array(items) => {
                    for v in items.iter_mut().filter(|v| v.is_object()) {
                        quiet.walk(
                            defs,
                            props,
                            Some(JSON_SCHEMA_PROPS),
                            v,
                            None,
                            false,
                            depth + 1,
                        );
                    }
                }
                _ => {}
            }
            return;
        }
        match reference {
            Some(TIME) => return self.time(value, false),
            Some(MICRO_TIME) => return self.time(value, true),
            Some(INT_OR_STRING) => return self.int_or_string(value),
            Some(name) => {
                let Some(target) = defs.get(name) else {
                    return;
                };
                return self.walk(defs, target, Some(name), value, named, report, depth + 1);
            }
            None => {}
        }
        if value.is_null() {
            // null: a pointer, map or slice becomes nil; anything else is left as it was.
            return;
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            let Value::Object(obj) = value else {
                let ty = go_struct_type(definition.unwrap_or_default());
                let e = self.type_error(json_kind(value), &ty);
                return self.save(e);
            };
            let definition = definition.unwrap_or_default();
            // Keys in order (serde_json's maps are sorted, as Go's encoding/json writes them, so
            // this is the order of a body kubectl or client-go sent).
            let mut unknown = vec![];
            let required = |k: &str| {
                schema
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == k))
            };
            for (k, v) in obj.iter_mut() {
                let field = props.get_key_value(k.as_str());
                if let Some((_, p)) = field.filter(|_| v.is_null()) {
                    // null leaves a pointer, map or slice nil and anything else as it was: the
                    // field is then omitted when encoded (omitempty: the optional fields; a
                    // non-pointer metav1.Time encodes as null and stays).
                    if !required(k) && ref_name(p) != Some(TIME) {
                        unknown.push(k.clone());
                    }
                    continue;
                }
                let Some((name, p)) = field else {
                    if report {
                        let len = self.push_key(k);
                        self.unknown.push(self.path.clone());
                        self.unknown_segs.push(self.segs.clone());
                        self.pop(len);
                    }
                    unknown.push(k.clone());
                    continue;
                };
                let len = self.push_key(k);
                self.fields.push(name);
                // reflect.Type.Name(): the bare type name.
                self.structs
                    .push(definition.rsplit('.').next().unwrap_or(definition));
                let named = named_string(definition, k);
                self.walk(defs, p, None, v, named, report, depth + 1);
                self.structs.pop();
                self.fields.pop();
                self.pop(len);
            }
            for k in unknown {
                obj.remove(&k);
            }
            return;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => {
                let Value::Array(items) = value else {
                    let ty = Decoder::go_type(defs, schema, named);
                    let e = self.type_error(json_kind(value), &ty);
                    return self.save(e);
                };
                let Some(item) = schema.get("items").filter(|i| i.is_object()) else {
                    return;
                };
                for (i, v) in items.iter_mut().enumerate() {
                    zero_if_null(item, v);
                    let len = self.push_index(i);
                    self.walk(defs, item, None, v, named, report, depth + 1);
                    self.pop(len);
                }
            }
            Some("string") => {
                let bytes = schema.get("format").and_then(Value::as_str) == Some("byte");
                match value {
                    Value::String(s) if bytes => {
                        if let Err(at) = crest_gofmt::go_base64_decode(s.as_bytes()) {
                            self.save(crest_gofmt::base64_error(at));
                        }
                    }
                    Value::String(_) => {}
                    other => {
                        let ty = Decoder::go_type(defs, schema, named);
                        let e = self.type_error(json_kind(other), &ty);
                        self.save(e);
                    }
                }
            }
            Some("integer") => {
                let ty = Decoder::go_type(defs, schema, named);
                if let Some(e) = self.integer_error(value, &ty) {
                    self.save(e);
                }
            }
            Some("number") => {
                if !value.is_number() {
                    let e = self.type_error(json_kind(value), "float64");
                    self.save(e);
                }
            }
            Some("boolean") => {
                if !value.is_boolean() {
                    let e = self.type_error(json_kind(value), "bool");
                    self.save(e);
                }
            }
            _ => {
                let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object())
                else {
                    // No properties, no element schema: opaque (JSON, RawExtension, FieldsV1).
                    return;
                };
                let Value::Object(obj) = value else {
                    let ty = Decoder::go_type(defs, schema, named);
                    let e = self.type_error(json_kind(value), &ty);
                    return self.save(e);
                };
                for (k, v) in obj.iter_mut() {
                    zero_if_null(values, v);
                    // Map keys are in the unknown-field path, not in the type error's.
                    let len = self.push_key(k);
                    self.walk(defs, values, None, v, named, report, depth + 1);
                    self.pop(len);
                }
            }
        }
    }

    /// A JSON value read into a Go integer of type `ty` (`int32`, `int64`): the decoder's error,
    /// if any (`number 1.5` / `number 3000000000` when the literal does not parse or overflows).
    fn integer_error(&self, value: &Value, ty: &str) -> Option<String> {
        let Value::Number(n) = value else {
            return Some(self.type_error(json_kind(value), ty));
        };
        let fits = match n.as_i64() {
            Some(i) if ty == "int32" => i32::try_from(i).is_ok(),
            Some(_) => true,
            None => false,
        };
        (!fits).then(|| self.type_error(&format!("number {n}"), ty))
    }

    /// `intstr.IntOrString`'s UnmarshalJSON: a string, or else an int32.
    fn int_or_string(&mut self, value: &Value) {
        if value.is_string() || value.is_null() {
            return;
        }
        if let Some(e) = self.integer_error(value, "int32") {
            self.stop(e);
        }
    }

    /// `metav1.Time` / `metav1.MicroTime`'s UnmarshalJSON (a string in RFC 3339, for MicroTime
    /// with exactly six fractional digits), and the value as the decoded time is encoded again.
    fn time(&mut self, value: &mut Value, micro: bool) {
        match value {
            Value::Null => {}
            Value::String(s) => match crate::gotime::parse(s, micro) {
                Ok(t) => *s = crate::gotime::format(&t, micro),
                Err(e) => self.stop(e),
            },
            other => {
                let e = self.type_error(json_kind(other), "string");
                self.stop(e);
            }
        }
    }
}

/// A segment of a path in a JSON document.
#[derive(Debug, PartialEq)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where in `body` (a valid JSON document) the value at each of `paths` is, as an ordinal of
/// the values met in document order (`None`: not there). A key given twice counts where it was
/// last given (the value kept).
fn document_order(body: &[u8], paths: &[Vec<Segment<'_>>]) -> Vec<Option<usize>> {
    // Paths by their last segment, so a value is compared only with the paths ending as its.
    let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_index: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut root = vec![];
    for (i, p) in paths.iter().enumerate() {
        match p.last() {
            Some(Segment::Key(k)) => by_key.entry(k).or_default().push(i),
            Some(Segment::Index(n)) => by_index.entry(*n).or_default().push(i),
            None => root.push(i),
        }
    }
    let mut scan = Scan {
        body,
        at: 0,
        count: 0,
        stack: vec![],
        paths,
        by_key,
        by_index,
        root,
        found: vec![None; paths.len()],
    };
    scan.value(0);
    scan.found
}

/// A key or index on the scanner's path.
enum Step {
    Key(String),
    Index(usize),
}

struct Scan<'b, 'p> {
    body: &'b [u8],
    at: usize,
    /// Values met so far.
    count: usize,
    stack: Vec<Step>,
    paths: &'p [Vec<Segment<'p>>],
    by_key: HashMap<&'p str, Vec<usize>>,
    by_index: HashMap<usize, Vec<usize>>,
    root: Vec<usize>,
    found: Vec<Option<usize>>,
}

impl Scan<'_, '_> {
    fn skip_ws(&mut self) {
        while self
            .body
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    /// Marks the value starting here for the paths that name it.
    fn arrive(&mut self) {
        self.count += 1;
        let candidates = match self.stack.last() {
            None => Some(&self.root),
            Some(Step::Key(k)) => self.by_key.get(k.as_str()),
            Some(Step::Index(i)) => self.by_index.get(i),
        };
        for &c in candidates.into_iter().flatten() {
            let path = &self.paths[c];
            let here = path.len() == self.stack.len()
                && path.iter().zip(&self.stack).all(|(p, s)| match (p, s) {
                    (Segment::Key(a), Step::Key(b)) => a == b,
                    (Segment::Index(a), Step::Index(b)) => a == b,
                    _ => false,
                });
            if here {
                self.found[c] = Some(self.count);
            }
        }
    }

    fn value(&mut self, depth: usize) {
        self.skip_ws();
        self.arrive();
        if depth > MAX_DEPTH {
            self.at = self.body.len();
            return;
        }
        match self.body.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                loop {
                    self.skip_ws();
                    match self.body.get(self.at) {
                        Some(b'}') | None => {
                            self.at += 1;
                            return;
                        }
                        Some(b',') => self.at += 1,
                        Some(_) => {
                            let key = self.string();
                            self.skip_ws();
                            if self.body.get(self.at) == Some(&b':') {
                                self.at += 1;
                            }
                            self.stack.push(Step::Key(key));
                            self.value(depth + 1);
                            self.stack.pop();
                        }
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut i = 0;
                loop {
                    self.skip_ws();
                    match self.body.get(self.at) {
                        Some(b']') | None => {
                            self.at += 1;
                            return;
                        }
                        Some(b',') => self.at += 1,
                        Some(_) => {
                            self.stack.push(Step::Index(i));
                            self.value(depth + 1);
                            self.stack.pop();
                            i += 1;
                        }
                    }
                }
            }
            Some(b'"') => {
                self.skip_string();
            }
            Some(_) => {
                while self.body.get(self.at).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
            }
            None => {}
        }
    }

    fn skip_string(&mut self) {
        self.at += 1;
        while let Some(&b) = self.body.get(self.at) {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => return,
                _ => {}
            }
        }
    }

    /// A string token (a key), its escapes decoded.
    fn string(&mut self) -> String {
        let start = self.at;
        self.skip_string();
        let raw = self.body.get(start..self.at).unwrap_or_default();
        serde_json::from_slice(raw).unwrap_or_default()
    }
}

/// A null map value or slice element of a string, integer, number or boolean type: Go stores the
/// element's zero value (and encodes it).
fn zero_if_null(schema: &Value, v: &mut Value) {
    if !v.is_null() || ref_name(schema).is_some() {
        return;
    }
    let byte = schema.get("format").and_then(Value::as_str) == Some("byte");
    *v = match schema.get("type").and_then(Value::as_str) {
        Some("string") if !byte => Value::from(""),
        Some("integer" | "number") => Value::from(0),
        Some("boolean") => Value::from(false),
        _ => return,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn namespace_unknown_fields_are_found_and_removed() {
        let mut ns = json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "a", "labels": {"x": "y"}, "bogus3": 1,
                         "ownerReferences": [{"name": "o", "kind": "K", "apiVersion": "v1", "uid": "u", "extra": true}]},
            "spec": {"finalizers": ["kubernetes"], "bogus": true},
            "bogus2": true,
        });
        let found = prune_unknown_fields("io.k8s.api.core.v1.Namespace", &mut ns);
        assert_eq!(
            found,
            [
                "bogus2",
                "metadata.bogus3",
                "metadata.ownerReferences[0].extra",
                "spec.bogus"
            ]
        );
        assert_eq!(
            ns,
            json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "a", "labels": {"x": "y"},
                             "ownerReferences": [{"name": "o", "kind": "K", "apiVersion": "v1", "uid": "u"}]},
                "spec": {"finalizers": ["kubernetes"]},
            })
        );
    }

    #[test]
    fn crd_schemas_are_structs_and_their_maps_are_walked() {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "a.b.c"},
            "spec": {"group": "b.c", "scope": "Namespaced",
                     "names": {"plural": "a", "kind": "A"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {
                            "type": "object", "readOnly": true,
                            "x-kubernetes-validations": [{"rule": "true", "bogus": 1}],
                            // items and additionalProperties have lenient custom unmarshalers.
                            "properties": {"spec": {"type": "object", "writeOnly": true,
                                "items": {"type": "string", "dropped": true,
                                          "properties": {"x": {"type": "string", "gone": 1}}}}}}}}]},
        });
        let found = prune_unknown_fields(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
            &mut crd,
        );
        assert_eq!(
            found,
            [
                "spec.versions[0].schema.openAPIV3Schema.properties.spec.writeOnly",
                "spec.versions[0].schema.openAPIV3Schema.readOnly",
                "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].bogus",
            ]
        );
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert!(schema.get("readOnly").is_none());
        // Under items (a lenient custom unmarshaler): dropped, not reported.
        assert_eq!(
            schema["properties"]["spec"]["items"],
            json!({"type": "string", "properties": {"x": {"type": "string"}}})
        );
    }

    fn type_error(definition: &str, mut v: Value) -> String {
        decode(definition, &mut v).expect_err("a type error")
    }

    #[test]
    fn wrong_json_types_are_worded_as_the_go_decoder() {
        let cm = "io.k8s.api.core.v1.ConfigMap";
        let lease = "io.k8s.api.coordination.v1.Lease";
        let ns = "io.k8s.api.core.v1.Namespace";
        let cases = [
            (cm, json!({"data": {"a": 1}}), "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
            (cm, json!({"data": ["a"]}), "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"),
            (cm, json!({"data": {"a": {"b": "c"}}}), "json: cannot unmarshal object into Go struct field ConfigMap.data of type string"),
            (cm, json!({"immutable": "yes"}), "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"),
            (cm, json!({"binaryData": {"a": 5}}), "json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type []uint8"),
            (cm, json!({"binaryData": {"a": "AA=A"}}), "illegal base64 data at input byte 2"),
            (cm, json!({"metadata": {"labels": {"a": true}}}), "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"),
            (cm, json!({"metadata": "x"}), "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"),
            (cm, json!({"metadata": {"finalizers": [1]}}), "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string"),
            (cm, json!({"metadata": {"ownerReferences": [{"controller": "x"}]}}), "json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool"),
            (cm, json!({"metadata": {"ownerReferences": {}}}), "json: cannot unmarshal object into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"),
            (cm, json!({"metadata": {"uid": 7}}), "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of type types.UID"),
            (cm, json!({"metadata": {"generation": "1"}}), "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64"),
            (cm, json!({"metadata": {"creationTimestamp": 5}}), "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"),
            (lease, json!({"spec": {"leaseDurationSeconds": 3_000_000_000u64}}), "json: cannot unmarshal number 3000000000 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"),
            (lease, json!({"spec": {"leaseDurationSeconds": 1.5}}), "json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"),
            (lease, json!({"spec": {"leaseTransitions": "1"}}), "json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseTransitions of type int32"),
            (lease, json!({"spec": {"strategy": 1}}), "json: cannot unmarshal number into Go struct field LeaseSpec.spec.strategy of type v1.CoordinatedLeaseStrategy"),
            (lease, json!({"spec": []}), "json: cannot unmarshal array into Go struct field Lease.spec of type v1.LeaseSpec"),
            (lease, json!({"spec": {"renewTime": "2024-01-01T00:00:00Z"}}), r#"parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#),
            (ns, json!({"spec": {"finalizers": [true]}}), "json: cannot unmarshal bool into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName"),
        ];
        for (def, v, want) in cases {
            assert_eq!(type_error(def, v.clone()), want, "{v}");
        }
        // The first in key order; a custom unmarshaler's error wins over a saved one.
        assert_eq!(
            type_error(cm, json!({"data": {"a": 1}, "immutable": 2})),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        assert_eq!(
            type_error(
                cm,
                json!({"data": {"a": 1}, "metadata": {"creationTimestamp": "x"}})
            ),
            r#"parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#
        );
        // Nulls are fine; right types decode, times in Go's UTC form.
        let mut l = json!({"spec": {"holderIdentity": null, "leaseDurationSeconds": 15,
                                    "renewTime": "2024-01-01T02:00:00.500000+02:00"},
                           "metadata": {"labels": null, "creationTimestamp": null}});
        assert_eq!(decode(lease, &mut l), Ok(vec![]));
        assert_eq!(l["spec"]["renewTime"], "2024-01-01T00:00:00.500000Z");
        // null: optional fields omitted, map values and elements their zero value, a
        // non-pointer Time null.
        let mut c = json!({"data": {"a": null}, "immutable": null,
                           "metadata": {"name": "x", "labels": null, "finalizers": [null],
                                        "creationTimestamp": null}});
        assert_eq!(decode(cm, &mut c), Ok(vec![]));
        assert_eq!(
            c,
            json!({"data": {"a": ""}, "metadata": {"name": "x", "finalizers": [""],
                                                    "creationTimestamp": null}})
        );
        // CRD schemas: JSON values are opaque, the lenient wrappers are not checked.
        let mut crd = json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object", "default": {"a": 1}, "enum": [1, "x"],
            "additionalProperties": {"type": 5}}}}]}});
        let crd_def =
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition";
        assert_eq!(decode(crd_def, &mut crd), Ok(vec![]));
        assert_eq!(
            type_error(crd_def, json!({"spec": {"versions": [{"schema": {"openAPIV3Schema": {"properties": {"a": {"type": 5}}}}}]}})),
            "json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.type of type string"
        );
    }

    #[test]
    fn the_first_error_in_document_order() {
        let cm = "io.k8s.api.core.v1.ConfigMap";
        let first = |body: &str| {
            let mut v: Value = serde_json::from_str(body).expect("json");
            let keyed = decode(cm, &mut v.clone()).err();
            (decode_body(cm, &mut v, Some(body.as_bytes())).err(), keyed)
        };
        // Key order would say data; the document says immutable.
        let (doc, keyed) = first(r#"{"immutable": 2, "data": {"a": 1}}"#);
        assert_eq!(
            doc.as_deref(),
            Some("json: cannot unmarshal number into Go struct field ConfigMap.immutable of type bool")
        );
        assert_eq!(
            keyed.as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
            )
        );
        // Map keys with dots (and escapes) are single path segments.
        let (doc, _) =
            first(r#"{"metadata": {"labels": {"a\u002eb": 1}, "annotations": {"z": true}}}"#);
        assert_eq!(
            doc.as_deref(),
            Some("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string")
        );
        // Indices; whitespace and nesting around them.
        let (doc, keyed) =
            first("{ \"metadata\" : { \"generation\" : \"x\" ,\n \"finalizers\": [\"a\", 1] } }");
        assert_eq!(
            doc.as_deref(),
            Some("json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64")
        );
        assert_eq!(
            keyed.as_deref(),
            Some("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.finalizers of type string")
        );
        // A custom UnmarshalJSON's error ends the decode: the first of those wins, wherever
        // the saved ones are.
        let (doc, keyed) = first(
            r#"{"data": {"a": 1}, "metadata": {"deletionTimestamp": "y", "creationTimestamp": "x"}}"#,
        );
        assert_eq!(
            doc.as_deref(),
            Some(r#"parsing time "y" as "2006-01-02T15:04:05Z07:00": cannot parse "y" as "2006""#)
        );
        assert_eq!(
            keyed.as_deref(),
            Some(r#"parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#)
        );
        // Unknown fields too are listed in document order.
        let body = r#"{"spec": {"bogus": 1}, "metadata": {"name": "n", "x.y": 2}, "bogus2": 3}"#;
        let mut v: Value = serde_json::from_str(body).expect("json");
        let ns = "io.k8s.api.core.v1.Namespace";
        assert_eq!(
            decode(ns, &mut v.clone()),
            Ok(vec![
                "bogus2".into(),
                "metadata.x.y".into(),
                "spec.bogus".into()
            ])
        );
        assert_eq!(
            decode_body(ns, &mut v, Some(body.as_bytes())),
            Ok(vec![
                "spec.bogus".into(),
                "metadata.x.y".into(),
                "bogus2".into()
            ])
        );
        // One error: no scan needed, the same answer.
        let (doc, keyed) = first(r#"{"data": {"a": 1}}"#);
        assert_eq!(doc, keyed);
    }

    #[test]
    fn unstructured_conversion_as_apimachinery_words_it() {
        let cm = "io.k8s.api.core.v1.ConfigMap";
        let lease = "io.k8s.api.coordination.v1.Lease";
        let err = |def: &str, mut v: Value| from_unstructured(def, &mut v).expect_err("error");
        assert_eq!(
            err(cm, json!({"data": {"a": true}})),
            "unrecognized type: string"
        );
        assert_eq!(
            err(cm, json!({"data": {"a": 1}})),
            "cannot convert int64 to string"
        );
        assert_eq!(
            err(cm, json!({"data": {"a": 1.5}})),
            "unrecognized type: string"
        );
        assert_eq!(
            err(cm, json!({"data": "x"})),
            "cannot restore map from string"
        );
        assert_eq!(
            err(cm, json!({"metadata": []})),
            "cannot restore struct from: slice"
        );
        assert_eq!(
            err(cm, json!({"metadata": {"finalizers": "x"}})),
            "cannot restore slice from string"
        );
        assert_eq!(
            err(cm, json!({"immutable": "true"})),
            "unrecognized type: bool"
        );
        assert_eq!(
            err(cm, json!({"binaryData": {"a": "A"}})),
            "error decoding from json: illegal base64 data at input byte 0"
        );
        assert_eq!(
            err(lease, json!({"spec": {"leaseDurationSeconds": 1.5}})),
            "cannot convert float64 to int32"
        );
        assert_eq!(
            err(lease, json!({"spec": {"leaseDurationSeconds": "1"}})),
            "unrecognized type: int32"
        );
        assert_eq!(
            err(lease, json!({"spec": {"strategy": 7}})),
            "cannot convert int64 to v1.CoordinatedLeaseStrategy"
        );
        assert_eq!(
            err(lease, json!({"spec": {"renewTime": 5}})),
            "json: cannot unmarshal number into Go value of type string"
        );
        // What the conversion allows: integral floats, int32 truncation, nulls.
        let mut l = json!({"spec": {"leaseDurationSeconds": 15.0, "leaseTransitions": 4_294_967_297u64,
                                    "holderIdentity": null}});
        assert_eq!(from_unstructured(lease, &mut l), Ok(()));
        assert_eq!(l["spec"]["leaseDurationSeconds"], 15);
        assert_eq!(l["spec"]["leaseTransitions"], 1);
    }

    #[test]
    fn base64_as_go_decodes_it() {
        for ok in ["", "AA==", "AAA=", "AAAA", "AA\n==", "AAAA\r\nAAAA"] {
            let ok = ok.replace("\\n", "\n").replace("\\r", "\r");
            assert_eq!(
                crest_gofmt::go_base64_decode(ok.as_bytes()).map(|_| ()),
                Ok(()),
                "{ok:?}"
            );
        }
        for (bad, at) in [
            ("A", 0),
            ("AA", 0),
            ("AAA", 0),
            ("A===", 1),
            ("AA=A", 2),
            ("AA==A", 4),
            ("AA=", 3),
            ("A*AA", 1),
        ] {
            assert_eq!(
                crest_gofmt::go_base64_decode(bad.as_bytes()).map(|_| ()),
                Err(at),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn unknown_definitions_and_deep_values_are_left_alone() {
        let mut v = json!({"a": 1});
        assert!(prune_unknown_fields("no.such.Kind", &mut v).is_empty());
        let mut deep = json!(1);
        for _ in 0..1000 {
            deep = json!({"metadata": {"labels": {}}, "spec": deep});
        }
        let _ = prune_unknown_fields("io.k8s.api.core.v1.Namespace", &mut deep);
    }
}
