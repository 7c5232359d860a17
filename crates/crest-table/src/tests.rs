use super::*;
use bytes::Bytes;
use std::sync::Arc;

fn style(cols: Value) -> TableStyle {
    TableStyle::Columns(Arc::new(Columns::for_version(
        &json!({ "additionalPrinterColumns": cols }),
    )))
}

fn col(ty: &str, path: &str) -> Value {
    json!([{"name": "C", "type": ty, "jsonPath": path}])
}

/// The second cell (the column) of `obj`'s row.
fn cell_of(ty: &str, path: &str, obj: Value) -> Value {
    let s = style(col(ty, path));
    let r = row(&s, &obj, IncludeObject::None, false);
    r["cells"][1].clone()
}

#[test]
fn durations() {
    assert_eq!(human_duration(6), "6s");
    assert_eq!(human_duration(119), "119s");
    assert_eq!(human_duration(125), "2m5s");
    assert_eq!(human_duration(3600 * 5 + 60), "5h1m");
    assert_eq!(human_duration(86400 * 3), "3d");
}

#[test]
fn cells_by_type() {
    let o = json!({"metadata": {"name": "a"}, "spec": {"i": 3, "f": 1.5, "s": "x", "b": true,
        "m": {"z": "<b>", "a": 1}, "l": [1, 2.5], "n": null, "big": 1234567.5, "small": 0.00001,
        "t": "2000-01-01T00:00:00Z", "bad": "yesterday"}});
    assert_eq!(cell_of("integer", ".spec.i", o.clone()), json!(3));
    assert_eq!(
        cell_of("integer", ".spec.f", o.clone()),
        json!(1),
        "float64 truncated"
    );
    assert_eq!(cell_of("integer", ".spec.s", o.clone()), Value::Null);
    assert_eq!(cell_of("number", ".spec.i", o.clone()), json!(3));
    assert_eq!(cell_of("number", ".spec.f", o.clone()), json!(1.5));
    assert_eq!(cell_of("number", ".spec.b", o.clone()), Value::Null);
    assert_eq!(cell_of("boolean", ".spec.b", o.clone()), json!(true));
    assert_eq!(cell_of("boolean", ".spec.s", o.clone()), Value::Null);
    assert_eq!(cell_of("string", ".spec.s", o.clone()), json!("x"));
    assert_eq!(cell_of("string", ".spec.i", o.clone()), json!("3"));
    assert_eq!(cell_of("string", ".spec.f", o.clone()), json!("1.5"));
    assert_eq!(
        cell_of("string", ".spec.big", o.clone()),
        json!("1.2345675e+06")
    );
    assert_eq!(cell_of("string", ".spec.small", o.clone()), json!("1e-05"));
    assert_eq!(cell_of("string", ".spec.b", o.clone()), json!("true"));
    assert_eq!(
        cell_of("string", ".spec.m", o.clone()),
        json!("{\"a\":1,\"z\":\"\\u003cb\\u003e\"}")
    );
    assert_eq!(cell_of("string", ".spec.l", o.clone()), json!("[1,2.5]"));
    assert_eq!(cell_of("string", ".spec.n", o.clone()), json!("<no value>"));
    assert_eq!(cell_of("integer", ".spec.n", o.clone()), Value::Null);
    assert_eq!(cell_of("string", ".spec.missing", o.clone()), Value::Null);
    assert_eq!(
        cell_of("string", ".spec.l[*]", o.clone()),
        json!("1"),
        "first result"
    );
    assert_eq!(cell_of("integer", ".spec.l[5]", o.clone()), Value::Null);
    assert!(cell_of("date", ".spec.t", o.clone())
        .as_str()
        .unwrap()
        .ends_with('y'));
    assert_eq!(cell_of("date", ".spec.bad", o.clone()), json!("<invalid>"));
    assert_eq!(cell_of("date", ".spec.i", o.clone()), Value::Null);
}

#[test]
fn go_floats() {
    assert_eq!(go_json_float(1.0), "1");
    assert_eq!(go_json_float(1.5), "1.5");
    assert_eq!(go_json_float(1e21), "1e+21");
    assert_eq!(go_json_float(1e20), "100000000000000000000");
    assert_eq!(go_json_float(1e-7), "1e-7");
    assert_eq!(go_json_float(-0.000001), "-0.000001");
    assert_eq!(go_float(100000.0), "100000");
    assert_eq!(go_float(1e6), "1e+06");
    assert_eq!(go_float(0.0001), "0.0001");
    assert_eq!(go_float(1e100), "1e+100");
}

#[test]
fn default_and_broken_columns() {
    let none = Columns::for_version(&json!({}));
    assert_eq!(none.columns.len(), 1);
    assert_eq!(none.columns[0].name, "Age");
    assert_eq!(none.columns[0].description, CREATION_TIMESTAMP_DESCRIPTION);
    // Upstream keeps the columns before one whose JSONPath does not parse.
    let broken = Columns::for_version(&json!({"additionalPrinterColumns": [
        {"name": "A", "type": "string", "jsonPath": ".a"},
        {"name": "B", "type": "string", "jsonPath": ".b[x]"},
        {"name": "C", "type": "string", "jsonPath": ".c"}]}));
    assert_eq!(broken.columns.len(), 1);
    assert_eq!(
        broken.columns[0].description,
        "Custom resource definition column (in JSONPath format): .a"
    );
}

#[test]
fn include_object_errors() {
    let e = IncludeObject::parse(Some("All")).unwrap_err();
    assert_eq!(
        e.to_status()["message"],
        "Unable to convert to Table as requested: includeObject: Unsupported value: \"All\": supported values: \"Metadata\", \"None\", \"Object\""
    );
}

#[test]
fn list_table_shape() {
    let s = style(json!([{"name": "R", "type": "integer", "jsonPath": ".spec.r", "priority": 1}]));
    let items = vec![
        Bytes::from_static(
            br#"{"apiVersion":"x/v1","kind":"K","metadata":{"name":"a"},"spec":{"r":2}}"#,
        ),
        Bytes::from_static(
            br#"{"apiVersion":"x/v1","kind":"K","metadata":{"name":"b"},"spec":{"r":"no"}}"#,
        ),
    ];
    let mut meta = Map::new();
    meta.insert("resourceVersion".into(), json!("7"));
    meta.insert("continue".into(), json!("tok"));
    let out = list_table(&s, &items, &meta, IncludeObject::Object, true).unwrap();
    let t: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        t["metadata"],
        json!({"resourceVersion": "7", "continue": "tok"})
    );
    assert_eq!(t["columnDefinitions"][1]["priority"], 1);
    assert_eq!(t["rows"][0]["cells"], json!(["a", 2]));
    assert_eq!(t["rows"][1]["cells"], json!(["b", null]));
    assert_eq!(t["rows"][1]["object"]["spec"]["r"], "no");
    let out = list_table(&s, &items, &meta, IncludeObject::Metadata, false).unwrap();
    let t: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        t["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "a"}})
    );
}

#[test]
fn list_rows_parse_only_what_columns_read() {
    let s = style(json!([
        {"name": "A", "type": "string", "jsonPath": ".spec.a[?(@.k==\"y\")].v"},
        {"name": "N", "type": "string", "jsonPath": ".metadata.labels.n"},
        {"name": "W", "type": "string", "jsonPath": "..v"}
    ]));
    let items = vec![Bytes::from_static(
        br#"{"metadata":{"name":"a","labels":{"n":"x"}},"spec":{"a":[{"k":"x","v":1},{"k":"y","v":2}]}}"#,
    )];
    let out = list_table(&s, &items, &Map::new(), IncludeObject::Metadata, false).unwrap();
    let t: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(t["rows"][0]["cells"], json!(["a", "2", "x", "1"]));
    assert_eq!(
        t["rows"][0]["object"]["metadata"]["labels"],
        json!({"n": "x"})
    );
}
