//! cel-go extension libraries as [`Library`]s: `sets` (Kubernetes enables it, so it is part of
//! [`crate::env::Env::standard`]), and the opt-in `math` and `encoders` (base64) libraries,
//! which Kubernetes does not enable but the conformance suite covers.

use base64::Engine;

use crate::cost::{CostEstimate, SizeEstimate};
use crate::decls::{CallEstimate, Library, Overload};
use crate::eval::{costs, EvalError};
use crate::stdlib::no_such_overload;
use crate::types::Type;
use crate::value::Value;

type R = Result<Value, EvalError>;

fn bad(name: &str, args: &[Value]) -> EvalError {
    no_such_overload(name, args)
}

fn list_len(v: &Value) -> u64 {
    match v {
        Value::List(l) => l.len() as u64,
        _ => 0,
    }
}

/// cel-go `ext.Sets`: `sets.contains`, `sets.equivalent`, `sets.intersects` over lists, with
/// CEL (heterogeneous) equality; cost is the product of the list sizes.
pub fn sets() -> Library {
    let la = || Type::list(Type::param("T"));
    let quadratic = |sizes: &[SizeEstimate]| {
        let (a, b) = match sizes {
            [a, b] => (*a, *b),
            _ => (SizeEstimate::UNKNOWN, SizeEstimate::UNKNOWN),
        };
        CallEstimate {
            cost: CostEstimate {
                min: 1,
                max: a.max.saturating_mul(b.max).saturating_add(1),
            },
            result_size: None,
        }
    };
    let runtime = |args: &[Value], _: &Value| match args {
        [a, b] => list_len(a).saturating_mul(list_len(b)).saturating_add(1),
        _ => 1,
    };
    let set_fn = |name: &'static str, id: &str, f: fn(&[Value], &[Value]) -> bool| {
        Overload::global(id, vec![la(), la()], Type::Bool)
            .implement(move |args| match args {
                [Value::List(a), Value::List(b)] => Ok(Value::Bool(f(a, b))),
                _ => Err(bad(name, args)),
            })
            .estimate(quadratic)
            .runtime_cost(runtime)
    };
    fn contains_all(a: &[Value], b: &[Value]) -> bool {
        b.iter().all(|x| a.iter().any(|y| y.equals(x)))
    }
    Library::new("cel.lib.ext.sets")
        .function(
            "sets.contains",
            [set_fn(
                "sets.contains",
                "list_sets_contains_list",
                contains_all,
            )],
        )
        .function(
            "sets.equivalent",
            [set_fn(
                "sets.equivalent",
                "list_sets_equivalent_list",
                |a, b| contains_all(a, b) && contains_all(b, a),
            )],
        )
        .function(
            "sets.intersects",
            [set_fn(
                "sets.intersects",
                "list_sets_intersects_list",
                |a, b| a.iter().any(|x| b.iter().any(|y| y.equals(x))),
            )],
        )
}

/// cel-go `ext.Encoders`: `base64.encode(bytes)` and `base64.decode(string)` (padding optional).
pub fn encoders() -> Library {
    let traversal = |sizes: &[SizeEstimate]| {
        let s = sizes.first().copied().unwrap_or(SizeEstimate::UNKNOWN);
        CallEstimate {
            cost: CostEstimate {
                min: 1 + s.min / costs::TRAVERSAL_DIVISOR,
                max: 1u64.saturating_add(s.max / costs::TRAVERSAL_DIVISOR),
            },
            result_size: None,
        }
    };
    Library::new("cel.lib.ext.encoders")
        .function(
            "base64.encode",
            [
                Overload::global("base64_encode_bytes", vec![Type::Bytes], Type::String)
                    .implement(|args| match args {
                        [Value::Bytes(b)] => Ok(Value::string(
                            &base64::engine::general_purpose::STANDARD.encode(b),
                        )),
                        _ => Err(bad("base64.encode", args)),
                    })
                    .estimate(traversal),
            ],
        )
        .function(
            "base64.decode",
            [
                Overload::global("base64_decode_string", vec![Type::String], Type::Bytes)
                    .implement(|args| match args {
                        [Value::String(s)] => {
                            let std = base64::engine::general_purpose::STANDARD;
                            let raw = base64::engine::general_purpose::STANDARD_NO_PAD;
                            std.decode(s.as_bytes())
                                .or_else(|_| raw.decode(s.as_bytes()))
                                .map(|b| Value::Bytes(b.into()))
                                .map_err(|e| EvalError::new(e.to_string()))
                        }
                        _ => Err(bad("base64.decode", args)),
                    })
                    .estimate(traversal),
            ],
        )
}

fn is_number(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_))
}

/// `math.@max` / `math.@min` over one number, two numbers or a list of numbers.
fn extremum(name: &str, args: &[Value], greatest: bool) -> R {
    let items: &[Value] = match args {
        [Value::List(l)] => l,
        _ => args,
    };
    let Some(first) = items.first() else {
        return Err(EvalError::new(format!(
            "{name}(list) argument must not be empty"
        )));
    };
    let mut best = first;
    for v in items {
        if !is_number(v) {
            return Err(bad(name, args));
        }
        let better = match v.compare(best) {
            Some(std::cmp::Ordering::Greater) => greatest,
            Some(std::cmp::Ordering::Less) => !greatest,
            _ => false,
        };
        if better {
            best = v;
        }
    }
    Ok(best.clone())
}

/// cel-go `ext.Math` (version 1): `math.greatest`/`math.least` macros, rounding, `abs`, `sign`,
/// float classification and bitwise functions.
pub fn math() -> Library {
    use Type::{Bool, Double, Dyn, Int, Uint};
    let nums = [Int, Uint, Double];
    let mut lib = Library::new("cel.lib.ext.math");
    lib.macros = vec!["math.greatest".into(), "math.least".into()];
    for (fname, greatest) in [("math.@max", true), ("math.@min", false)] {
        let imp = move |args: &[Value]| extremum(fname, args, greatest);
        let tag = if greatest { "max" } else { "min" };
        let mut ovs = vec![];
        for t in &nums {
            ovs.push(
                Overload::global(&format!("math_@{tag}_{t}"), vec![t.clone()], t.clone())
                    .implement(imp),
            );
            ovs.push(
                Overload::global(
                    &format!("math_@{tag}_list_{t}"),
                    vec![Type::list(t.clone())],
                    t.clone(),
                )
                .implement(imp),
            );
            for u in &nums {
                let result = if t == u { t.clone() } else { Dyn };
                ovs.push(
                    Overload::global(
                        &format!("math_@{tag}_{t}_{u}"),
                        vec![t.clone(), u.clone()],
                        result,
                    )
                    .implement(imp),
                );
            }
        }
        lib = lib.function(fname, ovs);
    }
    let unary_double = |name: &'static str, f: fn(f64) -> f64| {
        (
            name,
            vec![
                Overload::global(&format!("{name}_double"), vec![Double], Double).implement(
                    move |args| match args {
                        [Value::Double(d)] => Ok(Value::Double(f(*d))),
                        _ => Err(bad(name, args)),
                    },
                ),
            ],
        )
    };
    let classify = |name: &'static str, f: fn(f64) -> bool| {
        (
            name,
            vec![
                Overload::global(&format!("{name}_double"), vec![Double], Bool).implement(
                    move |args| match args {
                        [Value::Double(d)] => Ok(Value::Bool(f(*d))),
                        _ => Err(bad(name, args)),
                    },
                ),
            ],
        )
    };
    for (name, ovs) in [
        unary_double("math.ceil", f64::ceil),
        unary_double("math.floor", f64::floor),
        unary_double("math.round", f64::round),
        unary_double("math.trunc", f64::trunc),
        classify("math.isNaN", f64::is_nan),
        classify("math.isInf", f64::is_infinite),
        classify("math.isFinite", f64::is_finite),
    ] {
        lib = lib.function(name, ovs);
    }
    let abs = |args: &[Value]| -> R {
        match args {
            [Value::Int(i)] => i
                .checked_abs()
                .map(Value::Int)
                .ok_or_else(|| EvalError::new("integer overflow")),
            [Value::Uint(u)] => Ok(Value::Uint(*u)),
            [Value::Double(d)] => Ok(Value::Double(d.abs())),
            _ => Err(bad("math.abs", args)),
        }
    };
    let sign = |args: &[Value]| -> R {
        match args {
            [Value::Int(i)] => Ok(Value::Int(i.signum())),
            [Value::Uint(u)] => Ok(Value::Uint((*u > 0) as u64)),
            [Value::Double(d)] => Ok(Value::Double(if d.is_nan() || *d == 0.0 {
                *d
            } else {
                d.signum()
            })),
            _ => Err(bad("math.sign", args)),
        }
    };
    for (name, f) in [("math.abs", abs as fn(&[Value]) -> R), ("math.sign", sign)] {
        lib = lib.function(
            name,
            nums.iter().map(|t| {
                Overload::global(&format!("{name}_{t}"), vec![t.clone()], t.clone()).implement(f)
            }),
        );
    }
    let bitwise = |name: &'static str, fi: fn(i64, i64) -> i64, fu: fn(u64, u64) -> u64| {
        let imp = move |args: &[Value]| -> R {
            match args {
                [Value::Int(a), Value::Int(b)] => Ok(Value::Int(fi(*a, *b))),
                [Value::Uint(a), Value::Uint(b)] => Ok(Value::Uint(fu(*a, *b))),
                _ => Err(bad(name, args)),
            }
        };
        (
            name,
            vec![
                Overload::global(&format!("{name}_int_int"), vec![Int, Int], Int).implement(imp),
                Overload::global(&format!("{name}_uint_uint"), vec![Uint, Uint], Uint)
                    .implement(imp),
            ],
        )
    };
    for (name, ovs) in [
        bitwise("math.bitAnd", |a, b| a & b, |a, b| a & b),
        bitwise("math.bitOr", |a, b| a | b, |a, b| a | b),
        bitwise("math.bitXor", |a, b| a ^ b, |a, b| a ^ b),
    ] {
        lib = lib.function(name, ovs);
    }
    let not = |args: &[Value]| -> R {
        match args {
            [Value::Int(a)] => Ok(Value::Int(!a)),
            [Value::Uint(a)] => Ok(Value::Uint(!a)),
            _ => Err(bad("math.bitNot", args)),
        }
    };
    lib = lib.function(
        "math.bitNot",
        [
            Overload::global("math.bitNot_int", vec![Int], Int).implement(not),
            Overload::global("math.bitNot_uint", vec![Uint], Uint).implement(not),
        ],
    );
    for (name, left) in [("math.bitShiftLeft", true), ("math.bitShiftRight", false)] {
        // Shifts of 64 bits or more give 0; right shifts of ints are logical, as cel-go's.
        let imp = move |args: &[Value]| -> R {
            let shift = |bits: u64, n: i64| -> Result<u64, EvalError> {
                if n < 0 {
                    return Err(EvalError::new(format!("{name}() negative offset: {n}")));
                }
                Ok(if n >= 64 {
                    0
                } else if left {
                    bits << n
                } else {
                    bits >> n
                })
            };
            match args {
                [Value::Int(a), Value::Int(n)] => Ok(Value::Int(shift(*a as u64, *n)? as i64)),
                [Value::Uint(a), Value::Int(n)] => Ok(Value::Uint(shift(*a, *n)?)),
                _ => Err(bad(name, args)),
            }
        };
        lib = lib.function(
            name,
            [
                Overload::global(&format!("{name}_int_int"), vec![Int, Int], Int).implement(imp),
                Overload::global(&format!("{name}_uint_int"), vec![Uint, Int], Uint).implement(imp),
            ],
        );
    }
    lib
}
