//! A CEL expression (the input as UTF-8, lossily) through the parser, the checker (with
//! typed variables and every library), the static cost estimator, and evaluation of both the
//! checked and the unchecked program under a cost budget: nothing may panic, hang or grow
//! without bound.

#![no_main]

use std::sync::{Arc, LazyLock};

use crest_cel::cost::{estimate_cost, NoSizes};
use crest_cel::env::Env;
use crest_cel::eval::{FnActivation, Program};
use crest_cel::types::Type;
use crest_cel::value::{Key, MapValue, Value};
use libfuzzer_sys::fuzz_target;

static ENV: LazyLock<Env> = LazyLock::new(|| {
    let mut env = Env::standard()
        .with_library(&crest_cel::ext::math())
        .with_library(&crest_cel::ext::encoders());
    env.add_variable("self", Type::map(Type::String, Type::Dyn));
    env.add_variable("x", Type::Int);
    env.add_variable("s", Type::String);
    env.add_variable("l", Type::list(Type::Int));
    env
});

static SELF: LazyLock<Value> = LazyLock::new(|| {
    let mut m = indexmap::IndexMap::new();
    for (k, v) in [
        ("replicas", Value::Int(3)),
        ("name", Value::string("web")),
        ("items", Value::list(vec![Value::Int(1), Value::Int(2)])),
        ("ratio", Value::Double(0.5)),
    ] {
        m.insert(Key::String(k.into()), (Value::string(k), v));
    }
    Value::Map(Arc::new(MapValue { entries: m }))
});

/// Small enough that every evaluation ends quickly.
const BUDGET: u64 = 20_000;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let act = FnActivation(|n: &str| match n {
        "self" => Some(SELF.clone()),
        "x" => Some(Value::Int(-7)),
        "s" => Some(Value::string("héllo wörld")),
        "l" => Some(Value::list((0..5).map(Value::Int).collect())),
        _ => None,
    });
    let Ok(ast) = ENV.parse(&src) else {
        return;
    };
    let _ = Program::unchecked(&ast, &ENV).eval_with_limit(&act, Some(BUDGET));
    if let Ok(checked) = crest_cel::checker::check(&ast, &ENV) {
        let _ = estimate_cost(&checked, &NoSizes);
        let _ = checked.result_type().to_string();
        let run = Program::new(&checked).eval_with_limit(&act, Some(BUDGET));
        if let Ok(v) = run.result {
            let _ = v.to_string();
        }
    } else if let Err(e) = crest_cel::checker::check(&ast, &ENV) {
        let _ = e.to_string();
    }
});
