//! Function declarations the checker resolves calls against, and the extension API other
//! crates register function libraries through (the shape of cel-go's `cel.Lib` /
//! `cel.Function(name, cel.Overload(...))`): an [`Overload`] has a signature for the checker,
//! and optionally an implementation for the evaluator and cost functions for the static
//! estimator and the runtime budget. The standard library (cel-go `stdlib`), optionals and the
//! strings extension are declared here; their implementations are `stdlib.rs`, dispatched by
//! name, and an overload with an implementation takes precedence over that.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::estimate::{CallArg, CostEstimate, SizeEstimate};
use crate::runtime::EvalError;
use crate::types::Type;
use crate::types::Type as T;
use crate::value::Value;

/// An overload's implementation: receives the receiver (member overloads) then the arguments.
pub type Implementation = Arc<dyn Fn(&[Value]) -> Result<Value, EvalError> + Send + Sync>;

/// Static cost of one call from the sizes of the receiver and arguments (cel-go
/// `checker.CostEstimator.EstimateCallCost`). The call's own cost only: the arguments' costs
/// are added by the estimator.
pub type EstimateFn = Arc<dyn Fn(&[SizeEstimate]) -> CallEstimate + Send + Sync>;

/// [`EstimateFn`] seeing each operand's literal value and type too (cel-go estimators read
/// literal arguments, e.g. `slice(1, 3)`'s bounds).
pub type EstimateArgsFn = Arc<dyn Fn(&[CallArg<'_>]) -> CallEstimate + Send + Sync>;

/// Runtime cost of one call from its arguments and result (cel-go
/// `interpreter.ActualCostEstimator.CallCost`), replacing the default call cost.
pub type RuntimeCostFn = Arc<dyn Fn(&[Value], &Value) -> u64 + Send + Sync>;

/// The static estimate of one call: its cost and, when known, the size of its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallEstimate {
    pub cost: CostEstimate,
    pub result_size: Option<SizeEstimate>,
}

#[derive(Clone)]
pub struct Overload {
    pub id: String,
    /// For member overloads the first parameter is the receiver.
    pub params: Vec<Type>,
    pub result: Type,
    pub member: bool,
    /// Type parameters (`Type::TypeParam`) occurring in the signature.
    pub type_params: Vec<String>,
    pub implementation: Option<Implementation>,
    pub estimate: Option<EstimateFn>,
    /// Preferred over `estimate` when set.
    pub estimate_args: Option<EstimateArgsFn>,
    pub runtime_cost: Option<RuntimeCostFn>,
}

impl fmt::Debug for Overload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Overload")
            .field("id", &self.id)
            .field("params", &self.params)
            .field("result", &self.result)
            .field("member", &self.member)
            .field("implementation", &self.implementation.is_some())
            .finish()
    }
}

impl Overload {
    /// A global overload `name(params...) -> result` (cel-go `cel.Overload`).
    pub fn global(id: &str, params: Vec<Type>, result: Type) -> Overload {
        Overload::new(id, false, params, result)
    }

    /// A receiver-style overload `params[0].name(params[1..]...) -> result` (cel-go
    /// `cel.MemberOverload`).
    pub fn member(id: &str, params: Vec<Type>, result: Type) -> Overload {
        Overload::new(id, true, params, result)
    }

    fn new(id: &str, member: bool, params: Vec<Type>, result: Type) -> Overload {
        let mut type_params = Vec::new();
        for t in params.iter().chain(std::iter::once(&result)) {
            collect_params(t, &mut type_params);
        }
        Overload {
            id: id.to_string(),
            params,
            result,
            member,
            type_params,
            implementation: None,
            estimate: None,
            estimate_args: None,
            runtime_cost: None,
        }
    }

    /// The implementation (cel-go's `cel.FunctionBinding`).
    pub fn implement(
        mut self,
        f: impl Fn(&[Value]) -> Result<Value, EvalError> + Send + Sync + 'static,
    ) -> Overload {
        self.implementation = Some(Arc::new(f));
        self
    }

    /// The static cost estimate of a call of this overload.
    pub fn estimate(
        mut self,
        f: impl Fn(&[SizeEstimate]) -> CallEstimate + Send + Sync + 'static,
    ) -> Overload {
        self.estimate = Some(Arc::new(f));
        self
    }

    /// The static cost estimate of a call from its operands (sizes, types, literals).
    pub fn estimate_with_args(
        mut self,
        f: impl Fn(&[CallArg<'_>]) -> CallEstimate + Send + Sync + 'static,
    ) -> Overload {
        self.estimate_args = Some(Arc::new(f));
        self
    }

    /// The runtime cost of a call of this overload.
    pub fn runtime_cost(
        mut self,
        f: impl Fn(&[Value], &Value) -> u64 + Send + Sync + 'static,
    ) -> Overload {
        self.runtime_cost = Some(Arc::new(f));
        self
    }

    /// Whether runtime values fit the declared parameter types (dynamic dispatch among the
    /// overloads the checker left possible).
    pub fn accepts(&self, args: &[Value]) -> bool {
        self.params.len() == args.len()
            && self
                .params
                .iter()
                .zip(args.iter())
                .all(|(t, v)| value_has_type(v, t))
    }
}

/// Whether a runtime value may be passed where type `t` is declared (element types of
/// containers are not inspected, as cel-go's runtime dispatch does not).
pub fn value_has_type(v: &Value, t: &Type) -> bool {
    match t {
        T::Dyn | T::TypeParam(_) | T::Error | T::Any => true,
        T::Null => matches!(v, Value::Null),
        T::Bool => matches!(v, Value::Bool(_)),
        T::Int => matches!(v, Value::Int(_)),
        T::Uint => matches!(v, Value::Uint(_)),
        T::Double => matches!(v, Value::Double(_)),
        T::String => matches!(v, Value::String(_)),
        T::Bytes => matches!(v, Value::Bytes(_)),
        T::Timestamp => matches!(v, Value::Timestamp(_)),
        T::Duration => matches!(v, Value::Duration(_)),
        T::List(_) => matches!(v, Value::List(_)),
        T::Map(..) => matches!(v, Value::Map(_)),
        T::Type(_) => matches!(v, Value::Type(_)),
        T::Object(n) => matches!(v, Value::Object(o) if o.type_name == *n),
        T::Opaque(n, _) if n == "optional_type" => matches!(v, Value::Optional(_)),
        T::Opaque(n, _) => matches!(v, Value::Opaque(o) if o.type_name() == n),
    }
}

#[derive(Debug, Clone, Default)]
pub struct FunctionDecl {
    pub name: String,
    pub overloads: Vec<Overload>,
}

impl FunctionDecl {
    /// Whether any overload carries its own implementation (else `stdlib` runs the call).
    pub fn has_implementations(&self) -> bool {
        self.overloads.iter().any(|o| o.implementation.is_some())
    }

    pub fn overload(&self, id: &str) -> Option<&Overload> {
        self.overloads.iter().find(|o| o.id == id)
    }
}

/// All declared functions, by name.
#[derive(Debug, Clone, Default)]
pub struct Functions {
    pub by_name: HashMap<String, FunctionDecl>,
}

impl Functions {
    /// Declares an overload with a generated id (runtime by `stdlib` or `Program::with_function`).
    pub fn add(&mut self, name: &str, member: bool, params: Vec<Type>, result: Type) {
        let id = format!(
            "{}{}_{}",
            if member { "member_" } else { "" },
            name,
            params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("_")
        );
        self.add_overload(name, Overload::new(&id, member, params, result));
    }

    /// Declares an overload of function `name`; one with the same id is replaced.
    pub fn add_overload(&mut self, name: &str, o: Overload) {
        let decl = self
            .by_name
            .entry(name.to_string())
            .or_insert_with(|| FunctionDecl {
                name: name.to_string(),
                overloads: vec![],
            });
        match decl.overloads.iter_mut().find(|x| x.id == o.id) {
            Some(slot) => *slot = o,
            None => decl.overloads.push(o),
        }
    }

    pub fn get(&self, name: &str) -> Option<&FunctionDecl> {
        self.by_name.get(name)
    }
}

/// A set of functions and variables to add to an environment (cel-go `cel.Lib`).
///
/// ```
/// use crest_cel::decls::{Library, Overload};
/// use crest_cel::env::Env;
/// use crest_cel::eval::Program;
/// use crest_cel::types::Type;
/// use crest_cel::value::Value;
///
/// let lib = Library::new("example.greet")
///     .function(
///         "greet",
///         [Overload::member("string_greet_string", vec![Type::String, Type::String], Type::String)
///             .implement(|args| match args {
///                 [Value::String(who), Value::String(greeting)] => {
///                     Ok(Value::string(&format!("{greeting}, {who}!")))
///                 }
///                 _ => Err(crest_cel::eval::EvalError::new("no such overload")),
///             })],
///     )
///     .variable("name", Type::String);
/// let env = Env::standard().with_library(&lib);
/// let checked = env.compile("name.greet('Hello')").unwrap();
/// let act = std::collections::HashMap::from([("name".to_string(), Value::string("Crest"))]);
/// assert_eq!(Program::new(&checked).eval(&act).unwrap(), Value::string("Hello, Crest!"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Library {
    pub name: String,
    pub functions: Vec<(String, Vec<Overload>)>,
    pub variables: Vec<(String, Type)>,
    /// Parser macros the library needs (`math.greatest`, `math.least`).
    pub macros: Vec<String>,
}

impl Library {
    pub fn new(name: &str) -> Library {
        Library {
            name: name.to_string(),
            ..Library::default()
        }
    }

    /// Declares function `name` with these overloads (cel-go `cel.Function`).
    pub fn function(
        mut self,
        name: &str,
        overloads: impl IntoIterator<Item = Overload>,
    ) -> Library {
        self.functions
            .push((name.to_string(), overloads.into_iter().collect()));
        self
    }

    /// Declares a variable (cel-go `cel.Variable`).
    pub fn variable(mut self, name: &str, t: Type) -> Library {
        self.variables.push((name.to_string(), t));
        self
    }
}

fn collect_params(t: &Type, out: &mut Vec<String>) {
    match t {
        Type::TypeParam(n) if !out.contains(n) => out.push(n.clone()),
        Type::List(e) => collect_params(e, out),
        Type::Map(k, v) => {
            collect_params(k, out);
            collect_params(v, out);
        }
        Type::Opaque(_, ps) => ps.iter().for_each(|p| collect_params(p, out)),
        Type::Type(Some(t)) => collect_params(t, out),
        _ => {}
    }
}

/// The standard declarations plus optionals and the strings extension.
pub fn standard() -> Functions {
    use T::{Bool, Bytes, Double, Duration, Dyn, Int, String, Timestamp, Uint};
    let mut f = Functions::default();
    let a = || T::param("A");
    let b = || T::param("B");
    let la = || T::list(T::param("A"));
    let mab = || T::map(T::param("A"), T::param("B"));
    let opt_a = || T::optional(T::param("A"));

    f.add("_?_:_", false, vec![Bool, a(), a()], a());
    for op in ["_&&_", "_||_"] {
        f.add(op, false, vec![Bool, Bool], Bool);
    }
    f.add("!_", false, vec![Bool], Bool);
    f.add("@not_strictly_false", false, vec![Bool], Bool);
    f.add("-_", false, vec![Int], Int);
    f.add("-_", false, vec![Double], Double);
    for op in ["_==_", "_!=_"] {
        f.add(op, false, vec![a(), a()], Bool);
    }
    let numeric = [Int, Uint, Double];
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        for t in [Bool, String, Bytes, Timestamp, Duration] {
            f.add(op, false, vec![t.clone(), t], Bool);
        }
        // Cross-type numeric comparisons (cel-go enables them by default).
        for x in &numeric {
            for y in &numeric {
                f.add(op, false, vec![x.clone(), y.clone()], Bool);
            }
        }
    }
    for t in [Int, Uint, Double, String, Bytes] {
        f.add("_+_", false, vec![t.clone(), t.clone()], t);
    }
    f.add("_+_", false, vec![la(), la()], la());
    f.add("_+_", false, vec![Timestamp, Duration], Timestamp);
    f.add("_+_", false, vec![Duration, Timestamp], Timestamp);
    f.add("_+_", false, vec![Duration, Duration], Duration);
    for t in [Int, Uint, Double] {
        f.add("_-_", false, vec![t.clone(), t.clone()], t.clone());
        f.add("_*_", false, vec![t.clone(), t.clone()], t.clone());
        f.add("_/_", false, vec![t.clone(), t.clone()], t);
    }
    f.add("_-_", false, vec![Timestamp, Timestamp], Duration);
    f.add("_-_", false, vec![Timestamp, Duration], Timestamp);
    f.add("_-_", false, vec![Duration, Duration], Duration);
    f.add("_%_", false, vec![Int, Int], Int);
    f.add("_%_", false, vec![Uint, Uint], Uint);
    f.add("_[_]", false, vec![la(), Int], a());
    f.add("_[_]", false, vec![mab(), a()], b());
    f.add("@in", false, vec![a(), la()], Bool);
    f.add("@in", false, vec![a(), mab()], Bool);
    for t in [String, Bytes, la(), mab()] {
        f.add("size", false, vec![t.clone()], Int);
        f.add("size", true, vec![t], Int);
    }
    for name in ["contains", "startsWith", "endsWith", "matches"] {
        f.add(name, true, vec![String, String], Bool);
    }
    f.add("matches", false, vec![String, String], Bool);

    // Conversions.
    for t in [Int, Uint, Double, String, Timestamp] {
        f.add("int", false, vec![t], Int);
    }
    for t in [Int, Uint, Double, String] {
        f.add("uint", false, vec![t], Uint);
    }
    for t in [Int, Uint, Double, String] {
        f.add("double", false, vec![t], Double);
    }
    for t in [Int, Uint, Double, Bool, String, Bytes, Timestamp, Duration] {
        f.add("string", false, vec![t], String);
    }
    for t in [Bytes, String] {
        f.add("bytes", false, vec![t], Bytes);
    }
    for t in [Bool, String] {
        f.add("bool", false, vec![t], Bool);
    }
    for t in [Timestamp, String, Int] {
        f.add("timestamp", false, vec![t], Timestamp);
    }
    for t in [Duration, String] {
        f.add("duration", false, vec![t], Duration);
    }
    f.add("dyn", false, vec![a()], Dyn);
    f.add("type", false, vec![a()], T::type_of(a()));

    // Timestamp and duration accessors.
    for name in [
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDayOfMonth",
        "getDate",
        "getDayOfWeek",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    ] {
        f.add(name, true, vec![Timestamp], Int);
        f.add(name, true, vec![Timestamp, String], Int);
    }
    for name in ["getHours", "getMinutes", "getSeconds", "getMilliseconds"] {
        f.add(name, true, vec![Duration], Int);
    }

    // Optionals (cel-go `OptionalTypes`).
    f.add("optional.of", false, vec![a()], opt_a());
    f.add("optional.ofNonZeroValue", false, vec![a()], opt_a());
    f.add("optional.none", false, vec![], opt_a());
    f.add("hasValue", true, vec![opt_a()], Bool);
    f.add("value", true, vec![opt_a()], a());
    f.add("or", true, vec![opt_a(), opt_a()], opt_a());
    f.add("orValue", true, vec![opt_a(), a()], a());
    f.add("_[?_]", false, vec![la(), Int], opt_a());
    f.add("_[?_]", false, vec![mab(), a()], T::optional(b()));
    f.add("_[?_]", false, vec![T::optional(la()), Int], opt_a());
    f.add(
        "_[?_]",
        false,
        vec![T::optional(mab()), a()],
        T::optional(b()),
    );
    f.add("_[_]", false, vec![T::optional(la()), Int], opt_a());
    f.add(
        "_[_]",
        false,
        vec![T::optional(mab()), a()],
        T::optional(b()),
    );
    f.add("optional.unwrap", false, vec![T::list(opt_a())], la());
    f.add("unwrapOpt", true, vec![T::list(opt_a())], la());
    f.add("first", true, vec![la()], opt_a());
    f.add("last", true, vec![la()], opt_a());

    // Strings extension (cel-go `ext.Strings`, as Kubernetes enables it).
    f.add("charAt", true, vec![String, Int], String);
    f.add("indexOf", true, vec![String, String], Int);
    f.add("indexOf", true, vec![String, String, Int], Int);
    f.add("lastIndexOf", true, vec![String, String], Int);
    f.add("lastIndexOf", true, vec![String, String, Int], Int);
    f.add("lowerAscii", true, vec![String], String);
    f.add("upperAscii", true, vec![String], String);
    f.add("replace", true, vec![String, String, String], String);
    f.add("replace", true, vec![String, String, String, Int], String);
    f.add("split", true, vec![String, String], T::list(String));
    f.add("split", true, vec![String, String, Int], T::list(String));
    f.add("substring", true, vec![String, Int], String);
    f.add("substring", true, vec![String, Int, Int], String);
    f.add("trim", true, vec![String], String);
    f.add("join", true, vec![T::list(String)], String);
    f.add("join", true, vec![T::list(String), String], String);
    f.add("reverse", true, vec![String], String);
    f.add("strings.quote", false, vec![String], String);
    f.add("format", true, vec![String, T::list(Dyn)], String);

    // Two-variable comprehension helper (transformMap / transformMapEntry).
    f.add("cel.@mapInsert", false, vec![mab(), a(), b()], mab());
    f.add("cel.@mapInsert", false, vec![mab(), mab()], mab());
    f
}
