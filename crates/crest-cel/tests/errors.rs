//! Compile errors with cel-go's exact wording and positions, limits, and the cost budget.

use std::collections::HashMap;
use std::sync::Arc;

use crest_cel::env::Env;
use crest_cel::eval::{EmptyActivation, Program};
use crest_cel::provider::TypeProvider;
use crest_cel::types::Type;
use crest_cel::value::Value;

struct Provider;

impl TypeProvider for Provider {
    fn has_type(&self, name: &str) -> bool {
        name == "Spec"
    }
    fn field_type(&self, name: &str, field: &str) -> Option<Type> {
        match (name, field) {
            ("Spec", "replicas") => Some(Type::Int),
            ("Spec", "name") => Some(Type::String),
            _ => None,
        }
    }
}

fn env() -> Env {
    let mut env = Env::standard();
    env.provider = Some(Arc::new(Provider));
    env.add_variable("i", Type::Int);
    env.add_variable("obj", Type::Object("Spec".into()));
    env
}

fn first_line(src: &str) -> String {
    let e = env()
        .compile(src)
        .expect_err("should not compile")
        .to_string();
    e.lines().next().unwrap_or("").to_string()
}

#[test]
fn kubernetes_seed_messages() {
    // The variable is named `self` in Kubernetes; the position is what matters here.
    let mut e = env();
    e.add_variable("self", Type::Int);
    let err = e.compile("self == true").unwrap_err().to_string();
    assert_eq!(
        err,
        "ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'\n | self == true\n | .....^"
    );
    let mut e = env();
    e.add_variable("self", Type::Object("Spec".into()));
    let err = e
        .compile("self.nonExistingField > 0")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err.lines().next().unwrap(),
        "ERROR: <input>:1:5: undefined field 'nonExistingField'"
    );
    let err = e.compile("has(self)").unwrap_err().to_string();
    assert_eq!(
        err.lines().next().unwrap(),
        "ERROR: <input>:1:4: invalid argument to has() macro"
    );
}

#[test]
fn checker_messages() {
    assert_eq!(
        first_line("x + 1"),
        "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')"
    );
    assert_eq!(
        first_line("'a'.foo(1)"),
        "ERROR: <input>:1:8: undeclared reference to 'foo' (in container '')"
    );
    assert_eq!(
        first_line("'a'.startsWith(1)"),
        "ERROR: <input>:1:15: found no matching overload for 'startsWith' applied to 'string.(int)'"
    );
    assert_eq!(
        first_line("i.field"),
        "ERROR: <input>:1:2: type 'int' does not support field selection"
    );
    assert_eq!(
        first_line("1.all(x, x)"),
        "ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)"
    );
}

#[test]
fn syntax_errors() {
    assert_eq!(
        env().compile("{").unwrap_err().to_string(),
        "ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | {\n | .^"
    );
    assert_eq!(
        first_line("a +"),
        "ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
    );
    assert_eq!(
        first_line("(1 + 2"),
        "ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting ')'"
    );
    assert_eq!(
        first_line("1 # 2"),
        "ERROR: <input>:1:3: Syntax error: token recognition error at: '#'"
    );
    assert_eq!(
        first_line("if"),
        "ERROR: <input>:1:1: reserved identifier: if"
    );
    assert_eq!(
        first_line("[1].map(1, 2)"),
        "ERROR: <input>:1:9: argument must be a simple name"
    );
    // Multi-line positions are line:column.
    assert_eq!(
        first_line("1 +\n  x"),
        "ERROR: <input>:2:3: undeclared reference to 'x' (in container '')"
    );
}

#[test]
fn limits_do_not_overflow_the_stack() {
    let deep_parens = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(first_line(&deep_parens).contains("expression recursion limit exceeded: 250"));
    let long_chain = vec!["1"; 20000].join(" + ");
    assert!(first_line(&long_chain).contains("expression recursion limit exceeded: 250"));
    let deep_lists = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    assert!(first_line(&deep_lists).contains("recursion limit"));
    let members = format!("a{}", ".b".repeat(5000));
    assert!(first_line(&members).contains("recursion limit"));
    // Long && chains are balanced, so they stay within the limit.
    let and_chain = vec!["true"; 1000].join(" && ");
    let c = env().compile(&and_chain).unwrap();
    assert_eq!(
        Program::new(&c).eval(&EmptyActivation),
        Ok(Value::Bool(true))
    );
    let big = "1".repeat(100_001);
    assert!(first_line(&big).contains("expression code point size exceeds limit"));
}

#[test]
fn cost_budget_stops_evaluation() {
    let src = "[1,2,3,4,5,6,7,8,9,10].map(x, [1,2,3,4,5,6,7,8,9,10].map(y, [1,2,3,4,5,6,7,8,9,10].map(z, x * y * z)))";
    let c = env().compile(src).unwrap();
    let p = Program::new(&c);
    let unlimited = p.eval_with_limit(&EmptyActivation, None);
    assert!(unlimited.result.is_ok());
    assert!(unlimited.cost > 1000, "cost {}", unlimited.cost);
    let limited = p.eval_with_limit(&EmptyActivation, Some(1000));
    let err = limited.result.unwrap_err();
    assert!(err.cancelled);
    assert_eq!(
        err.message,
        "operation cancelled: actual cost limit exceeded"
    );
    // Cancellation is not absorbed by || or by comprehension error handling.
    let c = env().compile("true || [1,2,3].all(x, x > 0)").unwrap();
    assert!(Program::new(&c)
        .eval_with_limit(&EmptyActivation, Some(1))
        .result
        .is_ok());
    let c = env().compile("[1,2,3].exists(x, x > 5) || true").unwrap();
    let r = Program::new(&c)
        .eval_with_limit(&EmptyActivation, Some(3))
        .result;
    assert!(r.unwrap_err().cancelled);
    // String growth is charged by size.
    let c = env()
        .compile("[1,2,3,4,5,6,7,8].map(x, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' + 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')")
        .unwrap();
    let cost = Program::new(&c)
        .eval_with_limit(&EmptyActivation, None)
        .cost;
    assert!(cost > 8 * 14, "cost {cost}");
}

#[test]
fn errors_are_absorbed_commutatively() {
    let mut vars = HashMap::new();
    vars.insert("m".to_string(), Value::Map(Default::default()));
    let mut e = env();
    e.add_variable("m", Type::map(Type::String, Type::Bool));
    for (src, want) in [
        ("m.missing || true", Some(true)),
        ("true || m.missing", Some(true)),
        ("m.missing && false", Some(false)),
        ("false && m.missing", Some(false)),
        ("m.missing || false", None),
        ("[1, 0].all(x, 1 / x > 0)", None),
        ("[0, 1].exists(x, 1 / x > 0)", Some(true)),
        ("[0, 1].exists_one(x, 1 / x > 0)", None),
    ] {
        let c = e.compile(src).unwrap();
        let r = Program::new(&c).eval(&vars);
        match want {
            Some(b) => assert_eq!(r, Ok(Value::Bool(b)), "{src}"),
            None => assert!(r.is_err(), "{src}: {r:?}"),
        }
    }
}

#[test]
fn field_access_and_has_on_objects() {
    let c = env()
        .compile("has(obj.replicas) && obj.replicas > 1")
        .unwrap();
    assert_eq!(c.result_type(), Type::Bool);
    let c = env().compile("obj.?name.orValue('none')").unwrap();
    assert_eq!(c.result_type(), Type::String);
}

#[test]
fn garbage_input_never_panics() {
    // A tiny deterministic generator over CEL's characters.
    let alphabet: Vec<char> = "ab1.0u()[]{}?:!-+*/%<>=&|,'\"`\\ xrntlqhs_e9"
        .chars()
        .collect();
    let mut seed: u64 = 0x2545F4914F6CDD1D;
    for _ in 0..3000 {
        let len = (seed % 24) as usize;
        let mut s = String::new();
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        let e = env();
        if let Ok(ast) = e.parse(&s) {
            let _ = Program::unchecked(&ast, &e).eval_with_limit(&EmptyActivation, Some(10_000));
            if let Ok(c) = crest_cel::checker::check(&ast, &e) {
                let _ = Program::new(&c).eval_with_limit(&EmptyActivation, Some(10_000));
            }
        }
    }
}

#[test]
fn static_cost_uses_size_estimates() {
    use crest_cel::cost::{estimate_cost, CostEstimator, NoSizes, SizeEstimate};
    struct Sizes;
    impl CostEstimator for Sizes {
        fn estimate_size(&self, path: &[String], _: &Type) -> Option<SizeEstimate> {
            match path.join(".").as_str() {
                "items" => Some(SizeEstimate { min: 0, max: 10 }),
                "items.@items" => Some(SizeEstimate { min: 0, max: 5 }),
                _ => None,
            }
        }
    }
    let mut e = env();
    e.add_variable("items", Type::list(Type::list(Type::Int)));
    let c = e.compile("items.all(x, x.all(y, y > 0))").unwrap();
    let bounded = estimate_cost(&c, &Sizes);
    // Reading `items` and the result; no iterations at the minimum size.
    assert_eq!(bounded.min, 2);
    assert!(bounded.max > 10 * 5 && bounded.max < 1000, "{bounded:?}");
    let unbounded = estimate_cost(&c, &NoSizes);
    assert_eq!(unbounded.max, u64::MAX);
}
