//! Webhook conversion of custom resources, the pure half (apiextensions-apiserver's
//! `webhookConverter`): which objects a conversion sends, the `ConversionReview` request in the
//! first review version both sides speak, and the checks of the webhook's answer, each worded as
//! upstream words it. The HTTP call (URL or Service, `caBundle`, timeout) is the server's.

use crest_api::validation::{validate_annotations, validate_labels};
use crest_api::FieldPath;
use serde_json::{json, Map, Value};

/// The review versions Crest can speak, in the order a CRD's `conversionReviewVersions` is read.
const SUPPORTED: [&str; 2] = ["v1", "v1beta1"];

/// A conversion to ask a webhook for.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    /// `v1` or `v1beta1`: the ConversionReview version sent and expected back.
    pub version: &'static str,
    pub uid: String,
    /// The ConversionReview to POST.
    pub body: Value,
}

fn api_version(o: &Value) -> &str {
    o.get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn kind(o: &Value) -> &str {
    o.get("kind").and_then(Value::as_str).unwrap_or_default()
}

/// Go's `%v` of a GroupVersionKind (`example.com/v1, Kind=CronTab`), which upstream's messages
/// name the input by.
pub fn gvk_string(api_version: &str, kind: &str) -> String {
    format!("{api_version}, Kind={kind}")
}

/// The indexes of the objects not yet in `desired` (`getObjectsToConvert`): only those are
/// sent; none means no call.
pub fn to_convert(objects: &[Value], desired: &str) -> Vec<usize> {
    (0..objects.len())
        .filter(|&i| api_version(&objects[i]) != desired)
        .collect()
}

/// The ConversionReview of `objects` to `desired` in the first of the CRD's
/// `conversionReviewVersions` Crest speaks (`createConversionReviewObjects`).
pub fn review(
    review_versions: &[String],
    objects: &[&Value],
    desired: &str,
    uid: &str,
) -> Result<Review, String> {
    let version = review_versions
        .iter()
        .find_map(|v| SUPPORTED.iter().find(|s| **s == v.as_str()))
        .ok_or("no supported conversion review versions")?;
    let body = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{version}"),
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
        "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
    });
    Ok(Review {
        version,
        uid: uid.to_string(),
        body,
    })
}

/// The converted objects of a webhook's answer (`getConvertedObjectsFromResponse`): a v1
/// review is checked for its kind and uid; a failure result answers its message.
pub fn converted_objects(review: &Review, response: &[u8]) -> Result<Vec<Value>, String> {
    let v: Value = serde_json::from_slice(response).map_err(|e| e.to_string())?;
    if review.version == "v1" {
        let got = gvk_string(api_version(&v), kind(&v));
        let want = gvk_string("apiextensions.k8s.io/v1", "ConversionReview");
        if got != want {
            return Err(format!("expected webhook response of {want}, got {got}"));
        }
    }
    let Some(resp) = v.get("response").filter(|r| r.is_object()) else {
        return Err("no response provided".into());
    };
    if review.version == "v1" {
        let uid = resp.get("uid").and_then(Value::as_str).unwrap_or_default();
        if uid != review.uid {
            return Err(format!(
                "expected response.uid={:?}, got {uid:?}",
                review.uid
            ));
        }
    }
    let result = resp.get("result").cloned().unwrap_or(Value::Null);
    let status = result
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if status != "Success" {
        let message = result
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !message.is_empty() {
            return Err(message.to_string());
        }
        return Err(format!(
            "response.result.status was '{status}', not 'Success'"
        ));
    }
    Ok(resp
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Puts the webhook's objects in place of the ones sent (`indexes` from [`to_convert`]),
/// checked and with their metadata restored as upstream's `Convert` does; `input` names the
/// input in messages ([`gvk_string`] of the object, or of the list).
pub fn apply_converted(
    objects: &mut [Value],
    indexes: &[usize],
    converted: Vec<Value>,
    desired: &str,
    input: &str,
    list: bool,
) -> Result<(), String> {
    if converted.len() != indexes.len() {
        return Err(format!(
            "conversion webhook for {input} returned {} objects, expected {}",
            converted.len(),
            indexes.len()
        ));
    }
    for (n, (i, mut out)) in indexes.iter().zip(converted).enumerate() {
        let original = &objects[*i];
        // Upstream's list messages count from 1 past the object (the index is bumped first).
        let (at, at_meta) = if list {
            (
                format!("invalid converted object at index {}", n + 1),
                format!("invalid metadata in object at index {}", n + 1),
            )
        } else {
            (
                "invalid object at index 0".to_string(),
                "invalid metadata".to_string(),
            )
        };
        if !out.is_object() {
            return Err(format!(
                "conversion webhook for {input} returned {at}: the converted object is not an object"
            ));
        }
        if api_version(&out) != desired {
            return Err(format!(
                "conversion webhook for {input} returned {at}: invalid groupVersion (expected {desired}, received {})",
                api_version(&out)
            ));
        }
        if kind(&out) != kind(original) {
            return Err(format!(
                "conversion webhook for {input} returned {at}: invalid kind (expected {}, received {})",
                kind(original),
                kind(&out)
            ));
        }
        let invalid = if list {
            format!("invalid converted object at index {}", n + 1)
        } else {
            "invalid object".to_string()
        };
        validate_converted(original, &out)
            .map_err(|e| format!("conversion webhook for {input} returned {invalid}: {e}"))?;
        restore_object_meta(original, &mut out)
            .map_err(|e| format!("conversion webhook for {input} returned {at_meta}: {e}"))?;
        objects[*i] = out;
    }
    Ok(())
}

fn meta_str<'a>(o: &'a Value, field: &str) -> &'a str {
    o.pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `validateConvertedObject`: kind, name, namespace and uid unchanged.
fn validate_converted(original: &Value, out: &Value) -> Result<(), String> {
    if kind(original) != kind(out) {
        return Err(format!(
            "must have the same kind: {} != {}",
            kind(original),
            kind(out)
        ));
    }
    for (field, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (e, a) = (meta_str(original, field), meta_str(out, field));
        if e != a {
            return Err(format!("must have the same {what}: {e} != {a}"));
        }
    }
    Ok(())
}

/// `restoreObjectMeta`: the original's metadata, with the converted object's labels and
/// annotations (validated when they changed).
fn restore_object_meta(original: &Value, out: &mut Value) -> Result<(), String> {
    let response = match out.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ))
        }
    };
    let mut restored = original
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (field, path) in [
        ("labels", "metadata.labels"),
        ("annotations", "metadata.annotation"),
    ] {
        let Some(value) = response.get(field).filter(|v| !v.is_null()) else {
            restored.remove(field);
            continue;
        };
        let Value::Object(given) = value else {
            return Err(format!(
                "invalid metadata.{field} of type {} in converted object",
                go_type(value)
            ));
        };
        for (k, v) in given {
            if !v.is_string() {
                return Err(format!(
                    "metadata.{field}[{k}] must be a string, but is {} in converted object",
                    go_type(v)
                ));
            }
        }
        if restored.get(field) != Some(value) {
            let mut probe = Map::new();
            probe.insert(field.into(), value.clone());
            let mut errs = vec![];
            let at = FieldPath::new(path.split('.').next().unwrap_or_default())
                .child(path.split('.').nth(1).unwrap_or_default());
            if field == "labels" {
                validate_labels(&probe, &at, &mut errs);
            } else {
                validate_annotations(&probe, &at, &mut errs);
            }
            if !errs.is_empty() {
                return Err(crest_api::aggregate(&errs));
            }
        }
        restored.insert(field.into(), value.clone());
    }
    if let Some(o) = out.as_object_mut() {
        o.insert("metadata".into(), Value::Object(restored));
    }
    Ok(())
}

/// The Go type a decoded JSON value has, for `%T` in messages.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: &str, name: &str) -> Value {
        json!({"apiVersion": format!("example.com/{v}"), "kind": "CronTab",
            "metadata": {"name": name, "namespace": "default", "uid": format!("u-{name}"),
                         "resourceVersion": "7", "labels": {"a": "1"}},
            "hostPort": "localhost:1234"})
    }

    fn answer(r: &Review, objects: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": r.uid, "result": {"status": "Success"}, "convertedObjects": objects}}))
        .expect("json")
    }

    #[test]
    fn reviews_are_made_in_the_first_version_both_speak() {
        let one = obj("v1beta1", "a");
        let r = review(
            &["v2".into(), "v1beta1".into(), "v1".into()],
            &[&one],
            "example.com/v1",
            "id",
        )
        .expect("review");
        assert_eq!(r.version, "v1beta1");
        assert_eq!(r.body["apiVersion"], "apiextensions.k8s.io/v1beta1");
        assert_eq!(r.body["request"]["desiredAPIVersion"], "example.com/v1");
        assert_eq!(r.body["request"]["objects"][0]["metadata"]["name"], "a");
        assert_eq!(
            review(&["v2".into()], &[&one], "example.com/v1", "id").unwrap_err(),
            "no supported conversion review versions"
        );
    }

    #[test]
    fn answers_are_checked_as_upstream() {
        let one = obj("v1beta1", "a");
        let r = review(&["v1".into()], &[&one], "example.com/v1", "id-1").expect("review");
        let wrong_uid = serde_json::to_vec(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "other", "result": {"status": "Success"}}}),
        )
        .expect("json");
        assert_eq!(
            converted_objects(&r, &wrong_uid).unwrap_err(),
            "expected response.uid=\"id-1\", got \"other\""
        );
        let failed = serde_json::to_vec(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "id-1", "result": {"status": "Failure", "message": "no way"}}}),
        )
        .expect("json");
        assert_eq!(converted_objects(&r, &failed).unwrap_err(), "no way");
        let wrong_kind =
            serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "Status"})).expect("json");
        assert_eq!(
            converted_objects(&r, &wrong_kind).unwrap_err(),
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status"
        );
        let empty = serde_json::to_vec(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}),
        )
        .expect("json");
        assert_eq!(
            converted_objects(&r, &empty).unwrap_err(),
            "no response provided"
        );
    }

    #[test]
    fn converted_objects_are_placed_checked_and_get_their_metadata_back() {
        let mut list = vec![obj("v1beta1", "a"), obj("v1", "b"), obj("v1beta1", "c")];
        let idx = to_convert(&list, "example.com/v1");
        assert_eq!(idx, [0, 2]);
        let sent: Vec<&Value> = idx.iter().map(|i| &list[*i]).collect();
        let r = review(&["v1".into()], &sent, "example.com/v1", "x").expect("review");
        // The webhook converts, changes a label and (wrongly) the resourceVersion.
        let mut a = obj("v1", "a");
        a["metadata"]["labels"] = json!({"a": "2"});
        a["metadata"]["resourceVersion"] = json!("999");
        a["host"] = json!("localhost");
        let c = obj("v1", "c");
        let got = converted_objects(&r, &answer(&r, json!([a, c]))).expect("objects");
        let input = gvk_string("example.com/v1beta1", "CronTabList");
        apply_converted(&mut list, &idx, got, "example.com/v1", &input, true).expect("applied");
        assert_eq!(list[0]["apiVersion"], "example.com/v1");
        assert_eq!(list[0]["metadata"]["labels"], json!({"a": "2"}));
        assert_eq!(list[0]["metadata"]["resourceVersion"], "7");
        assert_eq!(list[0]["host"], "localhost");
        assert_eq!(list[1]["metadata"]["name"], "b");

        // Count, version, identity and label checks.
        let mut one = vec![obj("v1beta1", "a")];
        let input = gvk_string("example.com/v1beta1", "CronTab");
        assert_eq!(
            apply_converted(&mut one, &[0], vec![], "example.com/v1", &input, false).unwrap_err(),
            "conversion webhook for example.com/v1beta1, Kind=CronTab returned 0 objects, expected 1"
        );
        assert_eq!(
            apply_converted(&mut one, &[0], vec![obj("v1beta1", "a")], "example.com/v1", &input, false).unwrap_err(),
            "conversion webhook for example.com/v1beta1, Kind=CronTab returned invalid object at index 0: invalid groupVersion (expected example.com/v1, received example.com/v1beta1)"
        );
        assert_eq!(
            apply_converted(&mut one, &[0], vec![obj("v1", "z")], "example.com/v1", &input, false).unwrap_err(),
            "conversion webhook for example.com/v1beta1, Kind=CronTab returned invalid object: must have the same name: a != z"
        );
        let mut bad = obj("v1", "a");
        bad["metadata"]["labels"] = json!({"a": "no spaces allowed"});
        let e = apply_converted(&mut one, &[0], vec![bad], "example.com/v1", &input, false)
            .unwrap_err();
        assert!(e.starts_with("conversion webhook for example.com/v1beta1, Kind=CronTab returned invalid metadata: metadata.labels: Invalid value: \"no spaces allowed\""), "{e}");
    }
}
