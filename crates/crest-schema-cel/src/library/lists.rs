//! Kubernetes' lists library (apiserver `library/lists.go`, unversioned as 1.32 enables it):
//! `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf` on lists.

use std::cmp::Ordering;

use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::stdlib;
use crest_cel::types::Type;
use crest_cel::value::Value;

/// Element types with an ordering, in upstream's overload order.
fn comparable() -> Vec<(&'static str, Type)> {
    vec![
        ("int", Type::Int),
        ("uint", Type::Uint),
        ("double", Type::Double),
        ("bool", Type::Bool),
        ("duration", Type::Duration),
        ("timestamp", Type::Timestamp),
        ("string", Type::String),
        ("bytes", Type::Bytes),
    ]
}

fn summable() -> Vec<(&'static str, Type, Value)> {
    vec![
        ("int", Type::Int, Value::Int(0)),
        ("uint", Type::Uint, Value::Uint(0)),
        ("double", Type::Double, Value::Double(0.0)),
        (
            "duration",
            Type::Duration,
            Value::Duration(chrono::TimeDelta::zero()),
        ),
    ]
}

fn items(args: &[Value]) -> Result<&[Value], EvalError> {
    match args.first() {
        Some(Value::List(l)) => Ok(l),
        _ => Err(EvalError::new("no such overload")),
    }
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, EvalError> {
    a.compare(b)
        .ok_or_else(|| stdlib::no_such_overload("_<_", &[a.clone(), b.clone()]))
}

fn is_sorted(args: &[Value]) -> Result<Value, EvalError> {
    for w in items(args)?.windows(2) {
        if compare(&w[0], &w[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// The first element that no later one beats (`prefer`: the ordering of the current best
/// against a challenger that makes the challenger win).
fn extreme(args: &[Value], name: &str, prefer: Ordering) -> Result<Value, EvalError> {
    let mut best: Option<&Value> = None;
    for v in items(args)? {
        best = match best {
            Some(b) if compare(b, v)? != prefer => Some(b),
            _ => Some(v),
        };
    }
    best.cloned()
        .ok_or_else(|| EvalError::new(format!("{name} called on empty list")))
}

fn index_of(args: &[Value], last: bool) -> Result<Value, EvalError> {
    let (list, item) = match args {
        [Value::List(l), item] => (l, item),
        _ => return Err(EvalError::new("no such overload")),
    };
    let found = if last {
        list.iter().rposition(|x| x.equals(item))
    } else {
        list.iter().position(|x| x.equals(item))
    };
    Ok(Value::Int(found.map_or(-1, |i| i as i64)))
}

pub fn library() -> Library {
    let list = |t: &Type| Type::list(t.clone());
    let a = || Type::param("A");
    Library::new("kubernetes.lists")
        .function(
            "isSorted",
            comparable().into_iter().map(|(n, t)| {
                Overload::member(
                    &format!("list_{n}_is_sorted_bool"),
                    vec![list(&t)],
                    Type::Bool,
                )
                .implement(is_sorted)
            }),
        )
        .function(
            "sum",
            summable().into_iter().map(|(n, t, zero)| {
                Overload::member(&format!("list_{n}_sum_{n}"), vec![list(&t)], t).implement(
                    move |args| {
                        items(args)?
                            .iter()
                            .try_fold(zero.clone(), |acc, v| stdlib::add(&acc, v))
                    },
                )
            }),
        )
        .function(
            "max",
            comparable().into_iter().map(|(n, t)| {
                Overload::member(&format!("list_{n}_max_{n}"), vec![list(&t)], t)
                    .implement(|args| extreme(args, "max", Ordering::Less))
            }),
        )
        .function(
            "min",
            comparable().into_iter().map(|(n, t)| {
                Overload::member(&format!("list_{n}_min_{n}"), vec![list(&t)], t)
                    .implement(|args| extreme(args, "min", Ordering::Greater))
            }),
        )
        .function(
            "indexOf",
            [
                Overload::member("list_a_index_of_int", vec![list(&a()), a()], Type::Int)
                    .implement(|args| index_of(args, false)),
            ],
        )
        .function(
            "lastIndexOf",
            [
                Overload::member("list_a_last_index_of_int", vec![list(&a()), a()], Type::Int)
                    .implement(|args| index_of(args, true)),
            ],
        )
}
