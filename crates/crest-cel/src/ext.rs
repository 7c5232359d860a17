//! cel-go extension libraries as [`Library`]s: `sets` (Kubernetes enables it) and `lists` (the
//! issue asks for it), both part of [`crate::env::Env::standard`], and the opt-in `math` and
//! `encoders` (base64) libraries, which Kubernetes does not enable but the conformance suite
//! covers.

use base64::Engine;

use crate::ast::Literal;
use crate::decls::{CallEstimate, Library, Overload};
use crate::estimate::{CallArg, CostEstimate, SizeEstimate};
use crate::runtime::{costs, EvalError};
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

/// cel-go's size-times-factor arithmetic: saturating, an unbounded size stays unbounded.
fn scale(n: u64, factor: f64) -> u64 {
    if n == u64::MAX {
        return u64::MAX;
    }
    let v = n as f64 * factor;
    if v >= u64::MAX as f64 {
        u64::MAX
    } else {
        v as u64
    }
}

/// Calls that allocate a list: `factor` per element of `size`, plus the call and the list.
fn list_call_estimate(factor: f64, size: SizeEstimate) -> CallEstimate {
    let base = costs::CALL + costs::LIST_CREATE;
    CallEstimate {
        cost: CostEstimate {
            min: scale(size.min, factor).saturating_add(base),
            max: scale(size.max, factor).saturating_add(base),
        },
        result_size: Some(size),
    }
}

fn list_call_cost(factor: f64, size: u64) -> u64 {
    scale(size, factor).saturating_add(costs::CALL + costs::LIST_CREATE)
}

/// A non-negative integer literal operand, else `default` (cel-go `nodeAsUintValue`).
fn literal_uint(arg: Option<&CallArg<'_>>, default: u64) -> u64 {
    match arg.and_then(|a| a.literal) {
        Some(Literal::Int(i)) if *i >= 0 => *i as u64,
        Some(Literal::Uint(u)) => *u,
        _ => default,
    }
}

fn squared(s: SizeEstimate) -> SizeEstimate {
    SizeEstimate {
        min: s.min.saturating_mul(s.min),
        max: s.max.saturating_mul(s.max),
    }
}

/// Sorting and de-duplication compare every pair in the worst case; strings and bytes add
/// their traversal factor.
fn self_compare_cost(l: &Value) -> u64 {
    let Value::List(l) = l else {
        return list_call_cost(2.0, 0);
    };
    let n = l.len() as u64;
    let factor = match l.first() {
        Some(Value::String(_) | Value::Bytes(_)) => 2.1,
        _ => 2.0,
    };
    list_call_cost(factor, n.saturating_mul(n))
}

fn comparable(v: &Value) -> bool {
    match v {
        Value::Int(_)
        | Value::Uint(_)
        | Value::Double(_)
        | Value::Bool(_)
        | Value::String(_)
        | Value::Bytes(_)
        | Value::Timestamp(_)
        | Value::Duration(_) => true,
        Value::Opaque(o) => o.compare(&**o).is_some(),
        _ => false,
    }
}

/// `list.@sortByAssociatedKeys(keys)`: the list ordered as its keys sort (stable).
fn sort_by_keys(list: &Value, keys: &[Value]) -> R {
    let Value::List(items) = list else {
        return Err(bad("@sortByAssociatedKeys", std::slice::from_ref(list)));
    };
    if items.len() != keys.len() {
        return Err(EvalError::new(format!(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
            items.len(),
            keys.len()
        )));
    }
    let Some(first) = keys.first() else {
        return Ok(Value::list(vec![]));
    };
    if !comparable(first) {
        return Err(EvalError::new("list elements must be comparable"));
    }
    let kind = first.type_name();
    if keys.len() > 1 && keys.iter().any(|k| k.type_name() != kind) {
        return Err(EvalError::new("list elements must have the same type"));
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        keys[a]
            .compare(&keys[b])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(Value::list(
        order.into_iter().map(|i| items[i].clone()).collect(),
    ))
}

/// `depth` levels of nested lists spliced into their parent.
fn flatten_into(items: &[Value], depth: i64, out: &mut Vec<Value>) {
    stacker::maybe_grow(crate::parser::RED_ZONE, crate::parser::STACK_CHUNK, || {
        for v in items {
            match v {
                Value::List(inner) if depth > 0 => flatten_into(inner, depth - 1, out),
                _ => out.push(v.clone()),
            }
        }
    })
}

/// Largest list `lists.range` builds (cel-go's limit).
const MAX_RANGE_SIZE: i64 = 10_000_000;

/// cel-go `ext.Lists` (every version, with version 3's costs): `slice`, `flatten`, `distinct`,
/// `reverse`, `sort`, the `sortBy` macro and `lists.range`, with cel-go's error messages.
/// (`first` and `last` come with the optionals, as in cel-go.)
///
/// ```
/// use crest_cel::{env::Env, eval::{EmptyActivation, Program}, value::Value};
/// let checked = Env::standard()
///     .compile("[3, 1, 2, 1].distinct().sort() == [1, 2, 3] && ['bb', 'a'].sortBy(s, size(s)) == ['a', 'bb']")
///     .unwrap();
/// assert_eq!(Program::new(&checked).eval(&EmptyActivation), Ok(Value::Bool(true)));
/// ```
pub fn lists() -> Library {
    use Type::{Bool, Bytes, Double, Duration, Dyn, Int, String, Timestamp, Uint};
    let lt = || Type::list(Type::param("T"));
    let comparable_types = [Int, Uint, Double, Bool, Duration, Timestamp, String, Bytes];
    let output_size = |_: &[Value], r: &Value| list_call_cost(1.0, list_len(r));
    let target_size = |args: &[CallArg<'_>]| {
        args.first()
            .map(|a| a.size)
            .unwrap_or(SizeEstimate::UNKNOWN)
    };

    let slice = Overload::member("list_slice", vec![lt(), Int, Int], lt())
        .implement(|args| match args {
            [Value::List(l), Value::Int(start), Value::Int(end)] => {
                let (start, end) = (*start, *end);
                if start < 0 || end < 0 {
                    return Err(EvalError::new(format!(
                        "cannot slice({start}, {end}), negative indexes not supported"
                    )));
                }
                if start > end {
                    return Err(EvalError::new(format!(
                        "cannot slice({start}, {end}), start index must be less than or equal to end index"
                    )));
                }
                if (l.len() as u64) < end as u64 {
                    return Err(EvalError::new(format!(
                        "cannot slice({start}, {end}), list is length {}",
                        l.len()
                    )));
                }
                Ok(Value::list(l[start as usize..end as usize].to_vec()))
            }
            _ => Err(bad("slice", args)),
        })
        .estimate_with_args(move |args| {
            let start = literal_uint(args.get(1), 0);
            let end = literal_uint(args.get(2), target_size(args).max);
            list_call_estimate(1.0, SizeEstimate::exact(end.saturating_sub(start)))
        })
        .runtime_cost(output_size);

    let flatten = |args: &[Value]| -> R {
        let (l, depth) = match args {
            [Value::List(l)] => (l, 1),
            [Value::List(l), Value::Int(d)] => (l, *d),
            _ => return Err(bad("flatten", args)),
        };
        if depth < 0 {
            return Err(EvalError::new("level must be non-negative"));
        }
        let mut out = Vec::with_capacity(l.len());
        flatten_into(l, depth, &mut out);
        Ok(Value::list(out))
    };
    let flatten_estimate = move |args: &[CallArg<'_>]| {
        let depth = if args.len() > 1 {
            literal_uint(args.get(1), u64::MAX)
        } else {
            1
        };
        list_call_estimate(depth as f64, target_size(args))
    };
    let flatten_cost = |args: &[Value], _: &Value| {
        let depth = match args.get(1) {
            Some(Value::Int(d)) => *d as f64,
            _ => 1.0,
        };
        list_call_cost(depth, args.first().map_or(0, list_len))
    };
    // Any list is accepted at run time: one that is already flat is returned as is.
    let flatten_overloads = [
        Overload::member("list_flatten", vec![Type::list(lt())], lt())
            .implement(flatten)
            .estimate_with_args(flatten_estimate)
            .runtime_cost(flatten_cost),
        Overload::member(
            "list_flatten_int",
            vec![Type::list(Dyn), Int],
            Type::list(Dyn),
        )
        .implement(flatten)
        .estimate_with_args(flatten_estimate)
        .runtime_cost(flatten_cost),
    ];

    let sort_overloads = comparable_types.iter().map(|ct| {
        Overload::member(
            &format!("list_{ct}_sort"),
            vec![Type::list(ct.clone())],
            Type::list(ct.clone()),
        )
        .implement(|args| match args {
            [l @ Value::List(items)] => sort_by_keys(l, items),
            _ => Err(bad("sort", args)),
        })
        .estimate_with_args({
            let factor = if matches!(ct, String | Bytes) {
                2.1
            } else {
                2.0
            };
            move |args| list_call_estimate(factor, squared(target_size(args)))
        })
        .runtime_cost(|args, _| args.first().map_or(0, self_compare_cost))
    });
    let sort_by_overloads = comparable_types.iter().map(|ct| {
        Overload::member(
            &format!("list_{ct}_sortByAssociatedKeys"),
            vec![lt(), Type::list(ct.clone())],
            lt(),
        )
        .implement(|args| match args {
            [l @ Value::List(_), Value::List(keys)] => sort_by_keys(l, keys),
            _ => Err(bad("@sortByAssociatedKeys", args)),
        })
        .estimate_with_args({
            let factor = if matches!(ct, String | Bytes) {
                2.1
            } else {
                2.0
            };
            move |args| {
                let keys = args.get(1).map_or(SizeEstimate::UNKNOWN, |a| a.size);
                list_call_estimate(factor, squared(keys))
            }
        })
        .runtime_cost(|args, _| args.get(1).map_or(0, self_compare_cost))
    });

    let range = Overload::global("lists_range", vec![Int], Type::list(Int))
        .implement(|args| match args {
            [Value::Int(n)] if *n < 0 => Err(EvalError::new(format!(
                "lists.range: size must be non-negative, got {n}"
            ))),
            [Value::Int(n)] if *n > MAX_RANGE_SIZE => Err(EvalError::new(format!(
                "lists.range: size {n} exceeds maximum allowed ({MAX_RANGE_SIZE})"
            ))),
            [Value::Int(n)] => Ok(Value::list((0..*n).map(Value::Int).collect())),
            _ => Err(bad("lists.range", args)),
        })
        .estimate_with_args(|args| {
            list_call_estimate(
                1.0,
                SizeEstimate::exact(literal_uint(args.first(), u64::MAX)),
            )
        })
        .runtime_cost(output_size);

    let reverse = Overload::member("list_reverse", vec![lt()], lt())
        .implement(|args| match args {
            [Value::List(l)] => Ok(Value::list(l.iter().rev().cloned().collect())),
            _ => Err(bad("reverse", args)),
        })
        .estimate_with_args(move |args| list_call_estimate(1.0, target_size(args)))
        .runtime_cost(output_size);

    let distinct = Overload::member("list_distinct", vec![lt()], lt())
        .implement(|args| match args {
            [Value::List(l)] => {
                let mut out: Vec<Value> = Vec::with_capacity(l.len());
                for v in l.iter() {
                    if !out.iter().any(|u| u.equals(v)) {
                        out.push(v.clone());
                    }
                }
                Ok(Value::list(out))
            }
            _ => Err(bad("distinct", args)),
        })
        .estimate_with_args(move |args| list_call_estimate(2.0, squared(target_size(args))))
        .runtime_cost(|args, _| args.first().map_or(0, self_compare_cost));

    let mut lib = Library::new("cel.lib.ext.lists")
        .function("slice", [slice])
        .function("flatten", flatten_overloads)
        .function("sort", sort_overloads)
        .function("@sortByAssociatedKeys", sort_by_overloads)
        .function("lists.range", [range])
        .function("reverse", [reverse])
        .function("distinct", [distinct]);
    lib.macros = vec!["sortBy".into()];
    lib
}
