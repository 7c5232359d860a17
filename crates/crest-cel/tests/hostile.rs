//! Hostile operands: no panic, no quadratic work, no result far larger than the cost budget
//! allows built before it is refused.

use std::time::{Duration, Instant};

use crest_cel::env::Env;
use crest_cel::eval::{Evaluation, Program};
use crest_cel::types::Type;
use crest_cel::value::{Key, ListKind, ListValue, MapValue, Value};

fn env() -> Env {
    let mut e = Env::standard();
    e.add_variable("s", Type::String);
    e.add_variable("t", Type::String);
    e.add_variable("l", Type::list(Type::Int));
    e.add_variable("ml", Type::list(Type::map(Type::String, Type::String)));
    e
}

/// Evaluates under a budget, within a wall-clock bound.
fn eval(src: &str, vars: [(&str, Value); 4], limit: u64) -> Evaluation {
    let c = env().compile(src).unwrap();
    let start = Instant::now();
    let ev = Program::new(&c).eval_with_limit(&vars, Some(limit));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{src}: {:?}",
        start.elapsed()
    );
    ev
}

fn vars(s: &str, t: &str, l: Vec<Value>, ml: Value) -> [(&'static str, Value); 4] {
    [
        ("s", Value::string(s)),
        ("t", Value::string(t)),
        ("l", Value::list(l)),
        ("ml", ml),
    ]
}

fn cancelled(ev: &Evaluation) -> bool {
    matches!(&ev.result, Err(e) if e.cancelled)
}

#[test]
fn large_results_are_refused_before_they_are_built() {
    let big = "a".repeat(1 << 20);
    let none = || Value::list(vec![]);
    // Each would be terabytes (or ten million elements) if built.
    for src in [
        "s.replace('', t).size() > 0",
        "s.replace('a', t).size() > 0",
        "s.split('').join(t).size() > 0",
        "lists.range(10000000).size() > 0",
    ] {
        let ev = eval(src, vars(&big, &big, vec![], none()), 1_000_000);
        assert!(cancelled(&ev), "{src}: {:?}", ev.result);
    }
    // Small ones run and are charged as before.
    let ev = eval(
        "'abc'.replace('', '-') == '-a-b-c-' && ['a', 'b'].join(', ') == 'a, b' && lists.range(3) == [0, 1, 2]",
        vars("", "", vec![], none()),
        1_000_000,
    );
    assert_eq!(ev.result, Ok(Value::Bool(true)));
}

#[test]
fn quadratic_list_functions_are_refused_before_they_run() {
    let l: Vec<Value> = (0..200_000).map(Value::Int).collect();
    for src in ["l.distinct().size() > 0", "l.sort().size() > 0"] {
        let ev = eval(src, vars("", "", l.clone(), Value::list(vec![])), 1_000_000);
        assert!(cancelled(&ev), "{src}: {:?}", ev.result);
    }
}

#[test]
fn substring_search_is_linear() {
    // Every offset is a near miss: a character-by-character comparison at each one would
    // take about 2.5e11 steps.
    let s = "a".repeat(1_000_000);
    let mut t = "a".repeat(500_000);
    t.push('b');
    for src in [
        "s.indexOf(t) == -1",
        "s.indexOf(t, 3) == -1",
        "s.lastIndexOf(t) == -1",
        "s.lastIndexOf(t, 900000) == -1",
    ] {
        let ev = eval(src, vars(&s, &t, vec![], Value::list(vec![])), u64::MAX);
        assert_eq!(ev.result, Ok(Value::Bool(true)), "{src}");
    }
    // Code point offsets, as before.
    for src in [
        "'ta©o©αT'.indexOf('©', 3) == 4",
        "'ta©o©αT'.indexOf('©') == 2",
        "'ta©o©αT'.lastIndexOf('©') == 4",
        "'ta©o©αT'.lastIndexOf('©', 3) == 2",
        "'ta©o©αT'.lastIndexOf('o©α', 3) == 3",
        "'ta©o©αT'.lastIndexOf('o©α', 2) == -1",
        "'ta©o©αT'.indexOf('', 7) == 7 && 'ta©o©αT'.lastIndexOf('', 2) == 2",
        "'ab'.lastIndexOf('abc') == -1 && ''.indexOf('') == 0 && ''.lastIndexOf('') == 0",
        "'bananananana'.lastIndexOf('nana', 8) == 8 && 'bananananana'.lastIndexOf('nana', 7) == 6",
    ] {
        let ev = eval(src, vars("", "", vec![], Value::list(vec![])), u64::MAX);
        assert_eq!(ev.result, Ok(Value::Bool(true)), "{src}");
    }
}

fn map_list(n: i64, offset: i64) -> Value {
    let items = (0..n)
        .map(|i| {
            let mut m = MapValue::default();
            for (k, v) in [("k", (i + offset).to_string()), ("v", "x".to_string())] {
                let key = Key::from_value(&Value::string(k)).unwrap();
                m.entries.insert(key, (Value::string(k), Value::string(&v)));
            }
            Value::Map(std::sync::Arc::new(m))
        })
        .collect();
    Value::List(std::sync::Arc::new(ListValue::with_kind(
        items,
        ListKind::Map(vec!["k".into()].into()),
    )))
}

#[test]
fn map_list_equality_and_merge_are_keyed_lookups() {
    // 50,000 elements: comparing every pair would be 2.5e9 steps.
    let a = map_list(50_000, 0);
    let b = map_list(50_000, 50_000);
    let vars = [
        ("s", Value::string("")),
        ("t", Value::string("")),
        ("l", Value::list(vec![])),
        ("ml", a.clone()),
    ];
    let ev = eval("ml == ml", vars.clone(), u64::MAX);
    assert_eq!(ev.result, Ok(Value::Bool(true)));
    let c = env().compile("ml + ml").unwrap();
    let start = Instant::now();
    let merged = Program::new(&c).eval(&vars).unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(matches!(&merged, Value::List(l) if l.len() == 50_000));
    let Value::List(la) = &a else { unreachable!() };
    let Value::List(lb) = &b else { unreachable!() };
    let start = Instant::now();
    assert_eq!(la.concat(lb).len(), 100_000);
    assert!(!la.equals(lb));
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn time_zone_offsets_do_not_overflow() {
    for tz in ["+999999:00", "-999999:00", "+00:99999999", "+2147483647:00"] {
        let src = format!("timestamp('2024-01-01T00:00:00Z').getHours('{tz}') == 0");
        let ev = eval(&src, vars("", "", vec![], Value::list(vec![])), u64::MAX);
        assert_eq!(
            ev.result.unwrap_err().message,
            format!("invalid time zone: {tz}")
        );
    }
    let ev = eval(
        "timestamp('2024-01-01T00:00:00Z').getHours('-05:30') == 18",
        vars("", "", vec![], Value::list(vec![])),
        u64::MAX,
    );
    assert_eq!(ev.result, Ok(Value::Bool(true)));
}

#[test]
fn durations_take_one_fraction() {
    let ev = eval(
        "duration('1.2.3s') == duration('1s')",
        vars("", "", vec![], Value::list(vec![])),
        u64::MAX,
    );
    assert_eq!(ev.result.unwrap_err().message, "invalid duration: 1.2.3s");
}

#[test]
fn a_pattern_that_is_not_a_literal_is_compiled_once() {
    // A 3,000-character pattern matched 30,000 times: compiled per call, minutes.
    let pattern: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    let pattern = format!("^({})$", pattern.join("|"));
    let src = "lists.range(30000).all(i, !s.matches(t))";
    let ev = eval(
        src,
        vars("x", &pattern, vec![], Value::list(vec![])),
        u64::MAX,
    );
    assert!(
        matches!(ev.result, Ok(Value::Bool(true))),
        "{:?}",
        ev.result
    );
    // An invalid one fails as before, each time.
    let ev = eval(
        "lists.range(30000).all(i, s.matches(t) || true)",
        vars("x", "a(", vec![], Value::list(vec![])),
        u64::MAX,
    );
    assert!(
        matches!(ev.result, Ok(Value::Bool(true))),
        "{:?}",
        ev.result
    );
    let ev = eval(
        "s.matches(t)",
        vars("x", "a(", vec![], Value::list(vec![])),
        u64::MAX,
    );
    assert_eq!(
        ev.result.unwrap_err().to_string(),
        "error parsing regexp: missing closing ): `a(`"
    );
}
