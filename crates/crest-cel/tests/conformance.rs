//! Runs the official CEL conformance suite (../shared/cel-spec/json, see its README) through
//! parse -> check -> eval, prints pass/fail/skip per file, lists every failure and skip with
//! its reason, and asserts a floor of passes per file so regressions fail.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

use base64::Engine;
use chrono::DateTime;
use indexmap::IndexMap;
use serde_json::Value as J;

use crest_cel::checker::check;
use crest_cel::env::Env;
use crest_cel::eval::Program;
use crest_cel::parser::{parse_with, ParserOptions};
use crest_cel::stdlib::parse_duration;
use crest_cel::types::Type;
use crest_cel::value::{Key, MapValue, Value};

mod protos;

/// The suite's message types, read once from its .proto files.
static PROTOS: LazyLock<Arc<protos::Protos>> = LazyLock::new(|| {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/cel-spec/proto/cel/expr/conformance");
    Arc::new(protos::Protos::load(&dir))
});

/// Files and the passes they must reach (raise as the engine grows).
const FLOORS: &[(&str, usize)] = &[
    ("basic", 43),
    ("bindings_ext", 8),
    ("conversions", 109),
    ("encoders_ext", 4),
    // Legacy (int) enums pass; strong enum types (`type(e)`, conversions) are not supported.
    ("enums", 48),
    ("fields", 60),
    ("fp_math", 30),
    ("integer_math", 64),
    ("lists", 39),
    ("logic", 30),
    ("math_ext", 199),
    ("namespace", 14),
    ("optionals", 70),
    ("parse", 219),
    ("plumbing", 5),
    ("proto2", 83),
    ("proto3", 80),
    ("string", 51),
    ("timestamps", 78),
    ("type_deduction", 43),
];

/// The files covering what Kubernetes validation rules use (the 95% target).
const FEATURE_FILES: &[&str] = &[
    "basic",
    "bindings_ext",
    "conversions",
    "fields",
    "fp_math",
    "integer_math",
    "lists",
    "logic",
    "namespace",
    "optionals",
    "parse",
    "plumbing",
    "string",
    "timestamps",
    "type_deduction",
];

/// Whole files not run, with the reason.
const SKIPPED_FILES: &[(&str, &str)] = &[
    ("block_ext", "cel.block is not supported"),
    ("dynamic", "needs protobuf message, wrapper and Any types"),
    ("network_ext", "network extension not claimed yet"),
    ("proto2_ext", "needs protobuf extensions"),
    ("wrappers", "needs protobuf wrapper types"),
];

enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cel-spec/json")
}

#[test]
fn conformance() {
    let dir = suite_dir();
    if !dir.exists() {
        panic!("conformance suite not found at {}", dir.display());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read suite dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut counts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut fails = vec![];
    let mut skips = vec![];
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let doc: J = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let file_skip = SKIPPED_FILES
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, r)| *r);
        let entry = counts.entry(name.clone()).or_default();
        for section in doc["sections"].as_array().unwrap() {
            let sname = section["name"].as_str().unwrap();
            for t in section["tests"].as_array().unwrap() {
                let tname = t["name"].as_str().unwrap();
                let id = format!("{name}/{sname}/{tname}");
                let outcome = match file_skip {
                    Some(r) => Outcome::Skip(r.to_string()),
                    None => {
                        let t2 = t.clone();
                        std::panic::catch_unwind(move || run_test(&t2))
                            .unwrap_or_else(|_| Outcome::Fail("panicked".into()))
                    }
                };
                match outcome {
                    Outcome::Pass => entry.0 += 1,
                    Outcome::Fail(why) => {
                        entry.1 += 1;
                        fails.push(format!("{id}: {why}"));
                    }
                    Outcome::Skip(why) => {
                        entry.2 += 1;
                        if file_skip.is_none() {
                            skips.push(format!("{id}: {why}"));
                        }
                    }
                }
            }
        }
    }
    println!("\nskipped files:");
    for (f, r) in SKIPPED_FILES {
        println!("  {f}: {r}");
    }
    println!("\nskipped tests ({}):", skips.len());
    for s in &skips {
        println!("  {s}");
    }
    println!("\nfailures ({}):", fails.len());
    for f in &fails {
        println!("  {f}");
    }
    println!(
        "\n{:<16} {:>5} {:>5} {:>5} {:>6}",
        "file", "pass", "fail", "skip", "pass%"
    );
    let (mut tp, mut tf, mut ts) = (0, 0, 0);
    for (f, (p, fl, s)) in &counts {
        let total = p + fl + s;
        let pct = if total > 0 {
            100.0 * *p as f64 / total as f64
        } else {
            100.0
        };
        println!("{f:<16} {p:>5} {fl:>5} {s:>5} {pct:>5.1}%");
        tp += p;
        tf += fl;
        ts += s;
    }
    println!("{:<16} {tp:>5} {tf:>5} {ts:>5}", "total");
    let (mut fp, mut ft) = (0, 0);
    for f in FEATURE_FILES {
        if let Some((p, fl, s)) = counts.get(*f) {
            fp += p;
            ft += p + fl + s;
        }
    }
    let pct = 100.0 * fp as f64 / ft.max(1) as f64;
    println!("feature files: {fp}/{ft} pass ({pct:.1}%)");
    assert!(pct >= 95.0, "feature files below 95%");
    let mut below = vec![];
    for (f, floor) in FLOORS {
        let p = counts.get(*f).map(|c| c.0).unwrap_or(0);
        if p < *floor {
            below.push(format!("{f}: {p} passes < floor {floor}"));
        }
    }
    assert!(below.is_empty(), "below floor: {below:?}");
}

fn run_test(t: &J) -> Outcome {
    let text = t.to_string();
    if t["container"].as_str() == Some("google.protobuf") {
        return Outcome::Skip("needs protobuf wrapper message types".into());
    }
    for marker in [
        "single_any",
        "repeated_any",
        "proto2_ext",
        "google.protobuf.Any",
        "google.protobuf.Struct",
        "google.protobuf.Value",
        "google.protobuf.ListValue",
        "google.protobuf.Int",
        "google.protobuf.UInt",
        "google.protobuf.Bool",
        "google.protobuf.String",
        "google.protobuf.Bytes",
        "google.protobuf.Double",
        "google.protobuf.Float",
        "\"wrapper\"",
    ] {
        if text.contains(marker) {
            return Outcome::Skip(format!("needs protobuf types ({marker})"));
        }
    }
    let expr = t["expr"].as_str().unwrap_or("");
    let opts = ParserOptions {
        enable_macros: !t["disable_macros"].as_bool().unwrap_or(false),
        math_macros: true,
        ..ParserOptions::default()
    };
    let ast = match parse_with(expr, &opts) {
        Ok(a) => a,
        Err(e) => return Outcome::Fail(format!("parse: {e}")),
    };
    let mut env = Env::standard()
        .with_library(&crest_cel::ext::math())
        .with_library(&crest_cel::ext::encoders())
        .with_container(t["container"].as_str().unwrap_or(""));
    env.provider = Some(PROTOS.clone());
    for d in t["type_env"].as_array().into_iter().flatten() {
        let name = d["name"].as_str().unwrap_or("");
        if let Some(ident) = d.get("ident") {
            match json_type(&ident["type"]) {
                Some(ty) => env.add_variable(name, ty),
                None => return Outcome::Skip(format!("unsupported type {}", ident["type"])),
            }
        } else if let Some(f) = d.get("function") {
            for o in f["overloads"].as_array().into_iter().flatten() {
                let mut params = vec![];
                for p in o["params"].as_array().into_iter().flatten() {
                    match json_type(p) {
                        Some(ty) => params.push(ty),
                        None => return Outcome::Skip(format!("unsupported type {p}")),
                    }
                }
                let Some(result) = json_type(&o["result_type"]) else {
                    return Outcome::Skip("unsupported result type".into());
                };
                let member = o["is_instance_function"].as_bool().unwrap_or(false);
                env.add_function(name, member, params, result);
            }
        }
    }
    let mut bindings: HashMap<String, Value> = HashMap::new();
    if let Some(b) = t["bindings"].as_object() {
        for (k, v) in b {
            match json_value(v) {
                Some(val) => {
                    bindings.insert(k.clone(), val);
                }
                None => return Outcome::Skip(format!("unsupported binding {v}")),
            }
        }
    }
    let expected = &t["expected"];
    let disable_check = t["disable_check"].as_bool().unwrap_or(false);
    let program = if disable_check {
        Program::unchecked(&ast, &env)
    } else {
        let checked = match check(&ast, &env) {
            Ok(c) => c,
            Err(e) => return Outcome::Fail(format!("check: {e}")),
        };
        if let Some(tr) = expected.get("typed_result") {
            let Some(want) = json_type(&tr["deduced_type"]) else {
                return Outcome::Skip("unsupported deduced type".into());
            };
            let got = checked.result_type();
            if got != want {
                return Outcome::Fail(format!("type: got {got}, want {want}"));
            }
            if t["check_only"].as_bool().unwrap_or(false) {
                return Outcome::Pass;
            }
        }
        Program::new(&checked)
    };
    let result = program.eval_with_limit(&bindings, Some(10_000_000)).result;
    let want = expected
        .get("value")
        .or_else(|| expected.get("typed_result").map(|t| &t["result"]));
    match (want, expected.get("eval_error"), result) {
        (Some(w), _, Ok(got)) => {
            let Some(wv) = json_value(w) else {
                return Outcome::Skip(format!("unsupported expected value {w}"));
            };
            if same(&got, &wv) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!("got {got}, want {wv}"))
            }
        }
        (Some(w), _, Err(e)) => Outcome::Fail(format!("error {e}, want {w}")),
        (None, Some(_), Err(_)) => Outcome::Pass,
        (None, Some(_), Ok(v)) => Outcome::Fail(format!("got {v}, want an error")),
        _ => Outcome::Skip("unsupported expectation".into()),
    }
}

/// Exact equality per kind (1, 1u and 1.0 differ); NaN matches NaN.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Uint(x), Value::Uint(y)) => x == y,
        // Within one ulp: serde_json's float parsing (without float_roundtrip) is not exact.
        (Value::Double(x), Value::Double(y)) => {
            (x.is_nan() && y.is_nan())
                || (x == y && x.is_sign_negative() == y.is_sign_negative())
                || (x.is_finite() && y.is_finite() && x.to_bits().abs_diff(y.to_bits()) <= 1)
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.entries
                    .iter()
                    .all(|(k, (_, v))| y.entries.get(k).is_some_and(|(_, w)| same(v, w)))
        }
        (Value::Int(_) | Value::Uint(_) | Value::Double(_), _)
        | (_, Value::Int(_) | Value::Uint(_) | Value::Double(_)) => false,
        _ => a.equals(b),
    }
}

fn json_type(t: &J) -> Option<Type> {
    let obj = t.as_object()?;
    let (k, v) = obj.iter().next()?;
    Some(match k.as_str() {
        "primitive" => match v.as_str()? {
            "BOOL" => Type::Bool,
            "INT64" => Type::Int,
            "UINT64" => Type::Uint,
            "DOUBLE" => Type::Double,
            "STRING" => Type::String,
            "BYTES" => Type::Bytes,
            _ => return None,
        },
        "well_known" => match v.as_str()? {
            "TIMESTAMP" => Type::Timestamp,
            "DURATION" => Type::Duration,
            _ => return None,
        },
        "message_type" => match v.as_str()? {
            "google.protobuf.Timestamp" => Type::Timestamp,
            "google.protobuf.Duration" => Type::Duration,
            m if PROTOS.messages.contains_key(m) => Type::Object(m.to_string()),
            _ => return None,
        },
        "dyn" => Type::Dyn,
        "null" => Type::Null,
        "type_param" => Type::TypeParam(v.as_str()?.to_string()),
        "type" => {
            if v.as_object().is_some_and(|o| o.is_empty()) {
                Type::Type(None)
            } else {
                Type::type_of(json_type(v)?)
            }
        }
        "error" => Type::Error,
        "list_type" => Type::list(json_type(&v["elem_type"])?),
        "map_type" => Type::map(json_type(&v["key_type"])?, json_type(&v["value_type"])?),
        "abstract_type" => Type::Opaque(
            v["name"].as_str()?.to_string(),
            v["parameter_types"]
                .as_array()
                .map(|ps| ps.iter().map(json_type).collect::<Option<Vec<_>>>())
                .unwrap_or(Some(vec![]))?,
        ),
        _ => return None,
    })
}

fn json_value(v: &J) -> Option<Value> {
    let obj = v.as_object()?;
    // Bindings are ExprValue ({"value": Value}) or a bare Value.
    if obj.len() == 1 {
        if let Some(inner) = obj.get("value") {
            return json_value(inner);
        }
    }
    let (k, v) = obj.iter().next()?;
    Some(match k.as_str() {
        "null_value" => Value::Null,
        "bool_value" => Value::Bool(v.as_bool()?),
        "int64_value" => Value::Int(v.as_str()?.parse().ok()?),
        "uint64_value" => Value::Uint(v.as_str()?.parse().ok()?),
        "double_value" => Value::Double(match v {
            J::String(s) => match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                _ => s.parse().ok()?,
            },
            n => n.as_f64()?,
        }),
        "string_value" => Value::String(v.as_str()?.into()),
        "bytes_value" => Value::Bytes(
            base64::engine::general_purpose::STANDARD
                .decode(v.as_str()?)
                .ok()?
                .into(),
        ),
        "list_value" => Value::list(
            v["values"]
                .as_array()
                .map(|a| a.iter().map(json_value).collect::<Option<Vec<_>>>())
                .unwrap_or(Some(vec![]))?,
        ),
        "map_value" => {
            let mut m = IndexMap::new();
            for e in v["entries"].as_array().into_iter().flatten() {
                let key = json_value(&e["key"])?;
                let val = json_value(&e["value"])?;
                m.insert(Key::from_value(&key)?, (key, val));
            }
            Value::Map(Arc::new(MapValue { entries: m }))
        }
        "type_value" => Value::Type(v.as_str()?.into()),
        "object_value" => {
            let ty = v["@type"].as_str()?;
            match ty {
                "type.googleapis.com/google.protobuf.Timestamp" => Value::Timestamp(
                    DateTime::parse_from_rfc3339(v["value"].as_str()?)
                        .ok()?
                        .to_utc(),
                ),
                "type.googleapis.com/google.protobuf.Duration" => {
                    Value::Duration(parse_duration(v["value"].as_str()?).ok()?)
                }
                t => PROTOS
                    .message_from_json(t.strip_prefix("type.googleapis.com/")?, v.as_object()?)?,
            }
        }
        _ => return None,
    })
}
