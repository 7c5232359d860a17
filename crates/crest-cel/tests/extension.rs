//! The extension API: libraries of overloads with implementations and cost functions,
//! opaque values, dynamic dispatch among overloads, runtime cost overrides.

use std::any::Any;
use std::cmp::Ordering;
use std::sync::Arc;

use crest_cel::cost::{estimate_cost, CostEstimate, NoSizes};
use crest_cel::decls::{CallEstimate, Library, Overload};
use crest_cel::env::Env;
use crest_cel::eval::{ActualCostEstimator, EmptyActivation, EvalError, Program};
use crest_cel::types::Type;
use crest_cel::value::{OpaqueValue, Value};

#[derive(Debug)]
struct Qty(i64);

impl OpaqueValue for Qty {
    fn type_name(&self) -> &str {
        "example.Qty"
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other
            .as_any()
            .downcast_ref::<Qty>()
            .is_some_and(|o| o.0 == self.0)
    }
    fn compare(&self, other: &dyn OpaqueValue) -> Option<Ordering> {
        other
            .as_any()
            .downcast_ref::<Qty>()
            .map(|o| self.0.cmp(&o.0))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn qty_type() -> Type {
    Type::Opaque("example.Qty".into(), vec![])
}

fn qty(args: &[Value]) -> Result<Value, EvalError> {
    match args {
        [Value::String(s)] => s
            .parse::<i64>()
            .map(|n| Value::Opaque(Arc::new(Qty(n))))
            .map_err(|_| EvalError::new("invalid quantity")),
        [Value::Int(n)] => Ok(Value::Opaque(Arc::new(Qty(*n)))),
        _ => Err(EvalError::new("no such overload")),
    }
}

fn lib() -> Library {
    Library::new("example.qty")
        .function(
            "qty",
            [
                Overload::global("qty_string", vec![Type::String], qty_type()).implement(qty),
                Overload::global("qty_int", vec![Type::Int], qty_type()).implement(qty),
            ],
        )
        .function(
            "isLessThan",
            [
                Overload::member("qty_less", vec![qty_type(), qty_type()], Type::Bool)
                    .implement(|args| match args {
                        [a, b] => Ok(Value::Bool(a.compare(b) == Some(Ordering::Less))),
                        _ => Err(EvalError::new("no such overload")),
                    })
                    .estimate(|_| CallEstimate {
                        cost: CostEstimate::fixed(7),
                        result_size: None,
                    })
                    .runtime_cost(|_, _| 7),
            ],
        )
        .function(
            "ex.double",
            [
                Overload::global("ex_double_int", vec![Type::Int], Type::Int).implement(|args| {
                    match args {
                        [Value::Int(n)] => Ok(Value::Int(n * 2)),
                        _ => Err(EvalError::new("no such overload")),
                    }
                }),
            ],
        )
}

fn eval(src: &str) -> Value {
    let env = Env::standard().with_library(&lib());
    let checked = env.compile(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    Program::new(&checked)
        .eval(&EmptyActivation)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
}

#[test]
fn library_functions() {
    assert_eq!(eval("qty('5').isLessThan(qty(6))"), Value::Bool(true));
    assert_eq!(eval("qty('5') == qty(5)"), Value::Bool(true));
    assert_eq!(eval("type(qty(1)) == type(qty('2'))"), Value::Bool(true));
    assert_eq!(eval("ex.double(21)"), Value::Int(42));
    // Runtime choice among overloads from a dyn argument.
    assert_eq!(eval("qty(dyn('3')) == qty(dyn(3))"), Value::Bool(true));
    let env = Env::standard().with_library(&lib());
    let err = env.compile("qty(1.5)").unwrap_err().to_string();
    assert!(
        err.contains("found no matching overload for 'qty' applied to '(double)'"),
        "{err}"
    );
    // Unchecked programs dispatch namespaced and overloaded functions too.
    let ast = env.parse("ex.double(2) + 1").unwrap();
    let v = Program::unchecked(&ast, &env)
        .eval(&EmptyActivation)
        .unwrap();
    assert_eq!(v, Value::Int(5));
}

#[test]
fn costs() {
    let env = Env::standard().with_library(&lib());
    let checked = env.compile("qty(1).isLessThan(qty(2))").unwrap();
    // Two calls of 1 and the declared 7.
    assert_eq!(estimate_cost(&checked, &NoSizes), CostEstimate::fixed(9));
    let run = Program::new(&checked).eval_with_limit(&EmptyActivation, None);
    assert_eq!(run.cost, 9);

    struct Dear;
    impl ActualCostEstimator for Dear {
        fn call_cost(&self, f: &str, id: &str, _: &[Value], _: &Value) -> Option<u64> {
            (f == "qty" && id == "qty_int").then_some(100)
        }
    }
    let run = Program::new(&checked)
        .with_cost_estimator(Arc::new(Dear))
        .eval_with_limit(&EmptyActivation, Some(150));
    assert!(run.result.unwrap_err().cancelled);
}
