//! The `/scale` subresource of custom resources (apiextensions-apiserver's `ScaleREST`): an
//! `autoscaling/v1 Scale` read from, and written back to, the paths `subresources.scale` names,
//! with `unstructured`'s accessor semantics and wording. Also the scale checks the custom
//! resource strategy runs on every write (`ValidateScaleSpec` / `ValidateScaleStatus`).

use crest_api::{meta, ApiError, FieldError, FieldErrors, FieldPath};
use crest_gofmt::{go_float, go_type, json_kind};
use serde_json::{json, Map, Value};

/// `Scale.spec.replicas` of a custom resource whose spec replicas path holds nothing: a PATCH
/// that leaves it so is refused (upstream's marker, the smallest int32).
const INVALID_SPEC_REPLICAS: i64 = i32::MIN as i64;

/// A CRD version's `subresources.scale`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    /// `labelSelectorPath`; empty when not set.
    pub label_selector: String,
    /// Whether `labelSelectorPath` was set at all (validation checks it even when empty).
    pub has_label_selector: bool,
}

impl ScalePaths {
    /// From a CRD version (`spec.versions[*]`); `None` without a scale subresource.
    pub fn from_version(version: &Value) -> Option<Self> {
        let s = version
            .pointer("/subresources/scale")
            .filter(|s| s.is_object())?;
        let text = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Some(ScalePaths {
            spec_replicas: text("specReplicasPath"),
            status_replicas: text("statusReplicasPath"),
            label_selector: text("labelSelectorPath"),
            has_label_selector: s.get("labelSelectorPath").is_some_and(Value::is_string),
        })
    }

    /// The Scale of `cr` (`scaleFromCustomResource`) and whether spec replicas were found.
    /// Errors are plain accessor errors, as upstream's.
    pub fn scale_of(&self, cr: &Value) -> Result<(Value, bool), String> {
        let spec = nested_int64(cr, &self.spec_replicas)?;
        let status = nested_int64(cr, &self.status_replicas)?.unwrap_or(0);
        let selector = if self.label_selector.is_empty() {
            String::new()
        } else {
            nested_string(cr, &self.label_selector)?.unwrap_or_default()
        };
        let mut metadata = Map::new();
        let name = meta::name(cr);
        if !name.is_empty() {
            metadata.insert("name".into(), name.into());
        }
        for f in ["namespace", "uid", "resourceVersion"] {
            let v = meta::meta_str(cr, f);
            if !v.is_empty() {
                metadata.insert(f.into(), v.into());
            }
        }
        // metav1.Time has no omitempty: a zero time is null.
        let created = meta::meta_str(cr, "creationTimestamp");
        metadata.insert(
            "creationTimestamp".into(),
            if created.is_empty() {
                Value::Null
            } else {
                created.into()
            },
        );
        // Go's int32() conversion wraps.
        let spec_replicas = spec.unwrap_or(0) as i32;
        let mut spec_obj = Map::new();
        if spec_replicas != 0 {
            spec_obj.insert("replicas".into(), spec_replicas.into());
        }
        let mut status_obj = Map::new();
        status_obj.insert("replicas".into(), (status as i32).into());
        if !selector.is_empty() {
            status_obj.insert("selector".into(), selector.into());
        }
        Ok((
            json!({
                "kind": "Scale",
                "apiVersion": "autoscaling/v1",
                "metadata": metadata,
                "spec": spec_obj,
                "status": status_obj,
            }),
            spec.is_some(),
        ))
    }

    /// The Scale a PATCH applies to: spec replicas carry upstream's "not set" marker when the
    /// custom resource has none.
    pub fn scale_to_patch(&self, cr: &Value) -> Result<Value, ApiError> {
        let (mut scale, found) = self.scale_of(cr).map_err(ApiError::unknown)?;
        if !found {
            scale["spec"]["replicas"] = INVALID_SPEC_REPLICAS.into();
        }
        Ok(scale)
    }

    /// Writes the requested Scale into `cr` (`scaleUpdatedObjectInfo.UpdatedObject`): spec
    /// replicas at the spec replicas path, and the Scale's resourceVersion, when it has one, as
    /// the update's precondition. Nothing else of the Scale is used.
    pub fn apply(&self, scale: &RequestedScale, cr: &mut Value) -> Result<(), ApiError> {
        if i64::from(scale.replicas) == INVALID_SPEC_REPLICAS {
            return Err(ApiError::bad_request(format!(
                "the spec replicas field {:?} cannot be empty",
                self.spec_replicas
            )));
        }
        set_nested(cr, &self.spec_replicas, i64::from(scale.replicas).into())
            .map_err(ApiError::unknown)?;
        match &scale.resource_version {
            Some(rv) => meta::set(cr, "resourceVersion", rv.as_str()),
            // No precondition: the update applies to whatever is stored.
            None => meta::remove(cr, "resourceVersion"),
        }
        Ok(())
    }

    /// `ValidateScaleSpec`: spec replicas (when present) an int64 in int32's non-negative range.
    pub fn validate_spec(&self, cr: &Value) -> FieldErrors {
        replicas_errors(cr, &self.spec_replicas)
    }

    /// `ValidateScaleStatus`: status replicas as spec replicas, the label selector a string.
    pub fn validate_status(&self, cr: &Value) -> FieldErrors {
        let mut errs = replicas_errors(cr, &self.status_replicas);
        if self.has_label_selector {
            if let Err(e) = nested_string(cr, &self.label_selector) {
                errs.push(FieldError::invalid(
                    &FieldPath::new(&self.label_selector),
                    "",
                    e,
                ));
            }
        }
        errs
    }
}

fn replicas_errors(cr: &Value, path: &str) -> FieldErrors {
    let field = FieldPath::new(path);
    match nested_int64(cr, path) {
        Err(e) => vec![FieldError::invalid(&field, 0, e)],
        Ok(Some(n)) if n < 0 => vec![FieldError::invalid(
            &field,
            n,
            "should be a non-negative integer",
        )],
        Ok(Some(n)) if n > i64::from(i32::MAX) => vec![FieldError::invalid(
            &field,
            n,
            format!("should be less than or equal to {}", i32::MAX),
        )],
        _ => vec![],
    }
}

/// GET of a Scale whose spec replicas are absent (`NewInternalError`).
pub fn spec_replicas_missing(path: &str) -> ApiError {
    let cause = format!("the spec replicas field {path:?} does not exist");
    let mut e = ApiError::internal(cause.clone());
    if let Some(d) = e.details.as_mut() {
        d.insert("causes".into(), json!([{ "message": cause }]));
    }
    e
}

/// A scale read error (`scaleFromCustomResource` failing on a GET): a plain error.
pub fn read_error(message: String) -> ApiError {
    ApiError::unknown(message)
}

/// The parts of a requested `autoscaling/v1 Scale` an update uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestedScale {
    pub name: String,
    pub namespace: String,
    pub replicas: i32,
    pub resource_version: Option<String>,
}

/// What a Scale body holds that `autoscaling/v1 Scale` has no field for (for fieldValidation).
pub fn unknown_fields(obj: &Value) -> Vec<String> {
    let mut out = vec![];
    let Some(m) = obj.as_object() else {
        return out;
    };
    for (k, v) in m {
        match k.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                if let Ok(read) = crest_schema::objectmeta::get_object_meta(m, false, true) {
                    out.extend(read.unknown_field_paths);
                }
            }
            "spec" | "status" => {
                let known: &[&str] = if k == "spec" {
                    &["replicas"]
                } else {
                    &["replicas", "selector"]
                };
                if let Some(inner) = v.as_object() {
                    out.extend(
                        inner
                            .keys()
                            .filter(|f| !known.contains(&f.as_str()))
                            .map(|f| format!("{k}.{f}")),
                    );
                }
            }
            other => out.push(other.to_string()),
        }
    }
    out
}

/// Reads a Scale body as Go's `encoding/json` decodes it into `autoscaling/v1 Scale` (the type
/// errors in its wording; unknown fields are the caller's concern).
pub fn decode(obj: &Value) -> Result<RequestedScale, String> {
    let Some(m) = obj.as_object() else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type v1.Scale",
            json_kind(obj)
        ));
    };
    let mut out = RequestedScale::default();
    if m.get("metadata").is_some_and(|v| !v.is_null()) {
        let read = crest_schema::objectmeta::get_object_meta(m, false, false)?;
        let meta_map = read.meta.unwrap_or_default();
        let s = |k: &str| {
            meta_map
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        out.name = s("name");
        out.namespace = s("namespace");
        let rv = s("resourceVersion");
        out.resource_version = (!rv.is_empty()).then_some(rv);
    }
    if let Some(spec) = m.get("spec").filter(|v| !v.is_null()) {
        let Some(spec) = spec.as_object() else {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field Scale.spec of type v1.ScaleSpec",
                json_kind(spec)
            ));
        };
        match spec.get("replicas") {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) => {
                out.replicas = n
                    .as_i64()
                    .and_then(|i| i32::try_from(i).ok())
                    .ok_or_else(|| {
                        format!(
                            "json: cannot unmarshal number {n} into Go struct field ScaleSpec.spec.replicas of type int32"
                        )
                    })?;
            }
            Some(other) => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                    json_kind(other)
                ))
            }
        }
    }
    Ok(out)
}

/// `strings.Split(strings.TrimPrefix(path, "."), ".")`.
fn fields(path: &str) -> Vec<&str> {
    path.strip_prefix('.').unwrap_or(path).split('.').collect()
}

/// `.a.b` as `unstructured`'s `jsonPath` renders a field list.
fn json_path(fields: &[&str]) -> String {
    format!(".{}", fields.join("."))
}

/// `unstructured.NestedFieldNoCopy`: `Ok(None)` when absent.
fn nested<'a>(obj: &'a Value, fs: &[&str]) -> Result<Option<&'a Value>, String> {
    let mut v = obj;
    for (i, f) in fs.iter().enumerate() {
        match v {
            Value::Null => return Ok(None),
            Value::Object(m) => match m.get(*f) {
                Some(x) => v = x,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    "{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    json_path(&fs[..=i]),
                    go_v(other),
                    go_type(other)
                ))
            }
        }
    }
    Ok(Some(v))
}

/// `unstructured.NestedInt64`.
fn nested_int64(obj: &Value, path: &str) -> Result<Option<i64>, String> {
    let fs = fields(path);
    match nested(obj, &fs)? {
        None => Ok(None),
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
        Some(other) => Err(format!(
            "{} accessor error: {} is of the type {}, expected int64",
            json_path(&fs),
            go_v(other),
            go_type(other)
        )),
    }
}

/// `unstructured.NestedString`.
fn nested_string(obj: &Value, path: &str) -> Result<Option<String>, String> {
    let fs = fields(path);
    match nested(obj, &fs)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "{} accessor error: {} is of the type {}, expected string",
            json_path(&fs),
            go_v(other),
            go_type(other)
        )),
    }
}

/// `unstructured.SetNestedField`: missing maps on the way are created.
fn set_nested(obj: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let fs = fields(path);
    let Some((last, parents)) = fs.split_last() else {
        return Ok(());
    };
    let mut m = obj;
    for (i, f) in parents.iter().enumerate() {
        let Some(map) = m.as_object_mut() else {
            return Err(format!(
                "value cannot be set because {} is not a map[string]interface{{}}",
                json_path(&fs[..i])
            ));
        };
        let next = map
            .entry(f.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !next.is_object() {
            return Err(format!(
                "value cannot be set because {} is not a map[string]interface{{}}",
                json_path(&fs[..=i])
            ));
        }
        m = next;
    }
    if let Some(map) = m.as_object_mut() {
        map.insert(last.to_string(), value);
    }
    Ok(())
}

/// Go's `%v` of a decoded JSON value.
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", go_v(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ScalePaths {
        ScalePaths::from_version(&json!({"subresources": {"scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.labelSelector",
        }}}))
        .expect("scale")
    }

    #[test]
    fn scale_of_custom_resource() {
        let cr = json!({"metadata": {"name": "a", "namespace": "default", "uid": "u",
            "resourceVersion": "7", "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"x": "y"}},
            "spec": {"replicas": 3}, "status": {"labelSelector": "app=x"}});
        let (s, found) = paths().scale_of(&cr).expect("scale");
        assert!(found);
        assert_eq!(
            s,
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {"name": "a", "namespace": "default", "uid": "u", "resourceVersion": "7",
                    "creationTimestamp": "2024-01-01T00:00:00Z"},
                "spec": {"replicas": 3}, "status": {"replicas": 0, "selector": "app=x"}})
        );
        let (s, found) = paths()
            .scale_of(&json!({"metadata": {"name": "a"}, "spec": {}}))
            .expect("scale");
        assert!(!found);
        assert_eq!(s["spec"], json!({}));
        let e = paths()
            .scale_of(&json!({"spec": {"replicas": "x"}}))
            .unwrap_err();
        assert_eq!(
            e,
            ".spec.replicas accessor error: x is of the type string, expected int64"
        );
        let e = paths()
            .scale_of(&json!({"spec": {"replicas": 1.5}}))
            .unwrap_err();
        assert_eq!(
            e,
            ".spec.replicas accessor error: 1.5 is of the type float64, expected int64"
        );
        let e = paths().scale_of(&json!({"spec": "x"})).unwrap_err();
        assert_eq!(
            e,
            ".spec.replicas accessor error: x is of the type string, expected map[string]interface{}"
        );
    }

    #[test]
    fn apply_and_validate() {
        let p = paths();
        let mut cr = json!({"metadata": {"name": "a", "resourceVersion": "3"}});
        let req = RequestedScale {
            replicas: 5,
            ..Default::default()
        };
        p.apply(&req, &mut cr).expect("apply");
        assert_eq!(
            cr,
            json!({"metadata": {"name": "a"}, "spec": {"replicas": 5}})
        );
        let e = p
            .apply(
                &RequestedScale {
                    replicas: i32::MIN,
                    ..Default::default()
                },
                &mut cr,
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            "the spec replicas field \".spec.replicas\" cannot be empty"
        );
        let errs = p.validate_spec(&json!({"spec": {"replicas": 2147483648i64}}));
        assert_eq!(
            errs[0].to_string(),
            ".spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"
        );
        let errs = p.validate_status(&json!({"status": {"replicas": -1, "labelSelector": 3}}));
        let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            [
                ".status.replicas: Invalid value: -1: should be a non-negative integer",
                ".status.labelSelector: Invalid value: \"\": .status.labelSelector accessor error: 3 is of the type int64, expected string",
            ]
        );
    }

    #[test]
    fn decode_scale_bodies() {
        let s = decode(
            &json!({"metadata": {"name": "a", "resourceVersion": "4"}, "spec": {"replicas": 2}}),
        )
        .expect("decode");
        assert_eq!(
            s,
            RequestedScale {
                name: "a".into(),
                namespace: String::new(),
                replicas: 2,
                resource_version: Some("4".into())
            }
        );
        assert_eq!(
            decode(&json!({"spec": {"replicas": "2"}})).unwrap_err(),
            "json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"
        );
        assert_eq!(
            unknown_fields(
                &json!({"spec": {"replicas": 1, "x": 1}, "foo": 1, "metadata": {"bar": 1}})
            ),
            ["foo", "metadata.bar", "spec.x"]
        );
    }
}
