//! Tree-walking evaluator with CEL semantics: errors are values that `&&`, `||` and
//! `@not_strictly_false` may absorb (commutatively), comprehensions fold with an accumulator,
//! and every step is charged against a cost budget (cel-go's runtime cost model: calls and
//! identifier/field reads cost 1, literals 0, list/map/message literals 10/30/40, string and
//! list work proportional to size), so no expression can run unbounded.

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::ast::*;
use crate::checked::CheckedAst;
use crate::decls::{Functions, Overload};
use crate::env::{builtin_type, candidate_names, Env};
use crate::parser::{RED_ZONE, STACK_CHUNK};
use crate::provider::TypeProvider;
use crate::stdlib;
use crate::value::{Key, ListKind, MapValue, ObjectValue, Value};

pub use crate::runtime::{costs, EvalError};

/// Variable values for one evaluation.
pub trait Activation {
    fn resolve(&self, name: &str) -> Option<Value>;
}

impl Activation for HashMap<String, Value> {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.get(name).cloned()
    }
}

/// Variables from a closure (e.g. `self` and `oldSelf` without building a map).
pub struct FnActivation<F>(pub F);

impl<F: Fn(&str) -> Option<Value>> Activation for FnActivation<F> {
    fn resolve(&self, name: &str) -> Option<Value> {
        (self.0)(name)
    }
}

impl<const N: usize> Activation for [(&str, Value); N] {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
}

/// No variables.
pub struct EmptyActivation;

impl Activation for EmptyActivation {
    fn resolve(&self, _: &str) -> Option<Value> {
        None
    }
}

pub type Function = Arc<dyn Fn(&[Value]) -> Result<Value, EvalError> + Send + Sync>;

/// Runtime costs of calls that override the default model (cel-go
/// `interpreter.ActualCostEstimator`): consulted for every call, before an overload's own
/// `runtime_cost`. `overload_id` is the overload that ran ("" when the standard library
/// dispatched dynamically among several).
pub trait ActualCostEstimator: Send + Sync {
    fn call_cost(
        &self,
        function: &str,
        overload_id: &str,
        args: &[Value],
        result: &Value,
    ) -> Option<u64>;
}

/// A compiled expression ready to evaluate many times.
#[derive(Clone)]
pub struct Program {
    expr: Arc<Expr>,
    container: String,
    /// Checked programs have resolved names; unchecked ones resolve them at run time.
    checked: bool,
    functions: HashMap<String, Function>,
    decls: Arc<Functions>,
    overloads: Arc<HashMap<ExprId, Vec<String>>>,
    cost_estimator: Option<Arc<dyn ActualCostEstimator>>,
    provider: Option<Arc<dyn TypeProvider>>,
    /// Resolved when the program is built: the candidate overloads (with implementations) of
    /// each call to a library function, and the compiled regex of each `matches` literal.
    resolved: Arc<IdMap<Vec<Overload>>>,
    regexes: Arc<IdMap<Arc<regex::Regex>>>,
}

/// Expression ids are small distinct integers: a multiplicative hash suffices.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ *b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, i: i64) {
        self.0 = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type IdMap<V> = HashMap<ExprId, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The outcome of one evaluation with its cost.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub result: Result<Value, EvalError>,
    pub cost: u64,
}

impl Program {
    pub fn new(checked: &CheckedAst) -> Program {
        Program {
            expr: Arc::new(checked.ast.expr.clone()),
            container: String::new(),
            checked: true,
            functions: HashMap::new(),
            decls: checked.functions.clone(),
            overloads: Arc::new(checked.overloads.clone()),
            cost_estimator: None,
            provider: checked.provider.clone(),
            resolved: Arc::default(),
            regexes: Arc::default(),
        }
        .resolve()
    }

    /// Resolves what can be at build time (see `resolved`, `regexes`).
    fn resolve(mut self) -> Program {
        let mut resolved = IdMap::default();
        let mut regexes = IdMap::default();
        let expr = self.expr.clone();
        self.walk(&expr, &mut resolved, &mut regexes);
        self.resolved = Arc::new(resolved);
        self.regexes = Arc::new(regexes);
        self
    }

    fn walk(
        &self,
        e: &Expr,
        resolved: &mut IdMap<Vec<Overload>>,
        regexes: &mut IdMap<Arc<regex::Regex>>,
    ) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || {
            if let ExprKind::Call {
                target,
                function,
                args,
            } = &e.kind
            {
                if function == "matches" {
                    if let Some(ExprKind::Literal(Literal::String(p))) =
                        args.last().map(|a| &a.kind)
                    {
                        if let Ok(re) = crest_goregexp::compile(p) {
                            regexes.insert(e.id, Arc::new(re));
                        }
                    }
                }
                if let Some(decl) = self.decls.get(function).filter(|d| d.has_implementations()) {
                    let ids = self.overloads.get(&e.id);
                    let member = target.is_some();
                    let cands: Vec<Overload> = decl
                        .overloads
                        .iter()
                        .filter(|o| {
                            o.member == member
                                && o.implementation.is_some()
                                && ids.is_none_or(|ids| ids.contains(&o.id))
                        })
                        .cloned()
                        .collect();
                    resolved.insert(e.id, cands);
                }
            }
            for c in e.children() {
                self.walk(c, resolved, regexes);
            }
        })
    }

    /// A program for a parsed but unchecked expression (names resolve against the container
    /// at run time).
    pub fn unchecked(ast: &Ast, env: &Env) -> Program {
        Program {
            expr: Arc::new(ast.expr.clone()),
            container: env.container.clone(),
            checked: false,
            functions: HashMap::new(),
            decls: env.functions.clone(),
            overloads: Arc::new(HashMap::new()),
            cost_estimator: None,
            provider: env.provider.clone(),
            resolved: Arc::default(),
            regexes: Arc::default(),
        }
    }

    /// Adds a function implementation, tried before the standard library (member functions
    /// get the receiver first).
    pub fn with_function(mut self, name: &str, f: Function) -> Program {
        self.functions.insert(name.to_string(), f);
        self
    }

    /// Runtime call costs overriding the default model.
    pub fn with_cost_estimator(mut self, est: Arc<dyn ActualCostEstimator>) -> Program {
        self.cost_estimator = Some(est);
        self
    }

    pub fn eval(&self, act: &dyn Activation) -> Result<Value, EvalError> {
        self.eval_with_limit(act, None).result
    }

    /// Evaluates with a cost budget: over it, the result is an error ("operation cancelled:
    /// actual cost limit exceeded").
    pub fn eval_with_limit(&self, act: &dyn Activation, limit: Option<u64>) -> Evaluation {
        let mut it = Interp {
            prog: self,
            act,
            locals: Vec::new(),
            cost: 0,
            limit: limit.unwrap_or(u64::MAX),
            depth: 0,
        };
        let result = it.eval(&self.expr);
        Evaluation {
            result,
            cost: it.cost,
        }
    }
}

/// Receiver and two arguments cover nearly every call.
const INLINE_OPERANDS: usize = 3;

/// A call's evaluated operands, kept on the stack when few (no allocation per call).
enum Operands {
    Inline(usize, [Value; INLINE_OPERANDS]),
    Heap(Vec<Value>),
}

impl Operands {
    fn as_slice(&self) -> &[Value] {
        match self {
            Operands::Inline(n, vals) => &vals[..*n],
            Operands::Heap(vals) => vals,
        }
    }
}

struct Interp<'a> {
    prog: &'a Program,
    act: &'a dyn Activation,
    locals: Vec<(&'a str, Result<Value, EvalError>)>,
    cost: u64,
    limit: u64,
    /// Nesting of `eval` calls (when to check the stack).
    depth: u32,
}

type R = Result<Value, EvalError>;

fn cancelled() -> EvalError {
    EvalError {
        message: "operation cancelled: actual cost limit exceeded".into(),
        cancelled: true,
    }
}

impl<'a> Interp<'a> {
    fn charge(&mut self, c: u64) -> Result<(), EvalError> {
        self.cost = self.cost.saturating_add(c);
        if self.cost > self.limit {
            return Err(cancelled());
        }
        Ok(())
    }

    /// Refuses a call whose cost, known to be at least `bound` before it runs, would exceed
    /// the budget: quadratic comparisons and results far larger than the operands are never
    /// computed only to be charged for afterwards. Nothing is charged here.
    fn precheck(&self, bound: u64) -> Result<(), EvalError> {
        if self.cost.saturating_add(bound) > self.limit {
            return Err(cancelled());
        }
        Ok(())
    }

    fn local(&self, name: &str) -> Option<&Result<Value, EvalError>> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    fn eval(&mut self, e: &'a Expr) -> R {
        // Checking the stack costs as much as a small node: check every few levels only (a
        // few frames fit easily in the red zone).
        self.depth = self.depth.wrapping_add(1);
        let r = if self.depth % 4 == 0 {
            stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.eval_node(e))
        } else {
            self.eval_node(e)
        };
        self.depth = self.depth.wrapping_sub(1);
        r
    }

    fn eval_node(&mut self, e: &'a Expr) -> R {
        match &e.kind {
            ExprKind::Literal(l) => Ok(match l {
                Literal::Null => Value::Null,
                Literal::Bool(b) => Value::Bool(*b),
                Literal::Int(i) => Value::Int(*i),
                Literal::Uint(u) => Value::Uint(*u),
                Literal::Double(d) => Value::Double(*d),
                Literal::String(s) => Value::String(s.clone()),
                Literal::Bytes(b) => Value::Bytes(b.clone()),
            }),
            ExprKind::Ident(name) => {
                self.charge(costs::SELECT_AND_IDENT)?;
                self.ident(name)
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
            } => {
                self.charge(costs::SELECT_AND_IDENT)?;
                if !self.prog.checked && !*test_only {
                    if let Some(v) = self.qualified(e) {
                        return Ok(v);
                    }
                }
                let v = self.eval(operand)?;
                if *test_only {
                    if let (Value::Object(o), Some(p)) = (&v, &self.prog.provider) {
                        if p.has_type(&o.type_name) && p.field_type(&o.type_name, field).is_none() {
                            return Err(EvalError::new(format!("no such field: {field}")));
                        }
                    }
                    has_field(&v, field)
                } else {
                    self.select(&v, field)
                }
            }
            ExprKind::Call {
                target,
                function,
                args,
            } => self.call(e.id, target.as_deref(), function, args),
            ExprKind::List {
                elements,
                optional_indices,
            } => {
                self.charge(costs::LIST_CREATE)?;
                let mut out = Vec::with_capacity(elements.len());
                for (i, el) in elements.iter().enumerate() {
                    let v = self.eval(el)?;
                    if optional_indices.contains(&i) {
                        match v {
                            Value::Optional(Some(x)) => out.push((*x).clone()),
                            Value::Optional(None) => {}
                            other => {
                                return Err(stdlib::no_such_overload(
                                    "optional list element",
                                    &[other],
                                ))
                            }
                        }
                    } else {
                        out.push(v);
                    }
                }
                Ok(Value::list(out))
            }
            ExprKind::Map { entries } => {
                self.charge(costs::MAP_CREATE)?;
                let mut m = IndexMap::with_capacity(entries.len());
                for en in entries {
                    let k = self.eval(&en.key)?;
                    let mut v = self.eval(&en.value)?;
                    if en.optional {
                        match v {
                            Value::Optional(Some(x)) => v = (*x).clone(),
                            Value::Optional(None) => continue,
                            other => {
                                return Err(stdlib::no_such_overload(
                                    "optional map entry",
                                    &[other],
                                ))
                            }
                        }
                    }
                    let key = Key::from_value(&k).ok_or_else(|| {
                        EvalError::new(format!("unsupported key type: {}", k.type_name()))
                    })?;
                    if m.contains_key(&key) {
                        return Err(EvalError::new(format!("Failed with repeated key: {k}")));
                    }
                    m.insert(key, (k, v));
                }
                Ok(Value::Map(Arc::new(MapValue { entries: m })))
            }
            ExprKind::Struct { type_name, fields } => {
                self.charge(costs::STRUCT_CREATE)?;
                let mut out = IndexMap::new();
                for f in fields {
                    let mut v = self.eval(&f.value)?;
                    if f.optional {
                        match v {
                            Value::Optional(Some(x)) => v = (*x).clone(),
                            Value::Optional(None) => continue,
                            other => {
                                return Err(stdlib::no_such_overload("optional field", &[other]))
                            }
                        }
                    }
                    out.insert(f.name.clone(), v);
                }
                let mut name = type_name.trim_start_matches('.').to_string();
                if !self.prog.checked {
                    if let Some(p) = &self.prog.provider {
                        if let Some(full) = candidate_names(&self.prog.container, type_name)
                            .into_iter()
                            .find(|c| p.has_type(c))
                        {
                            name = full;
                        }
                    }
                }
                let name = name.as_str();
                match &self.prog.provider {
                    Some(p) => p.new_object(name, out).map_err(EvalError::new),
                    None => Ok(Value::Object(Arc::new(ObjectValue {
                        type_name: name.to_string(),
                        fields: out,
                    }))),
                }
            }
            ExprKind::Comprehension(c) => self.comprehension(c),
        }
    }

    /// Field selection; an unset message field reads as the provider's default.
    fn select(&self, v: &Value, field: &str) -> R {
        if let (Value::Object(o), Some(p)) = (v, &self.prog.provider) {
            if !o.fields.contains_key(field) {
                if let Some(d) = p.field_default(&o.type_name, field) {
                    return Ok(d);
                }
            }
        }
        select(v, field)
    }

    fn ident(&mut self, name: &str) -> R {
        if !name.starts_with('.') {
            if let Some(v) = self.local(name) {
                return v.clone();
            }
        }
        if self.prog.checked {
            let name = name.strip_prefix('.').unwrap_or(name);
            if let Some(v) = self.act.resolve(name) {
                return Ok(v);
            }
            if let Some(t) = builtin_type(name) {
                return Ok(Value::Type(t.runtime_name().into()));
            }
            if let Some(i) = self.enum_value(name) {
                return Ok(Value::Int(i));
            }
            return Ok(Value::Type(name.into()));
        }
        for cand in candidate_names(&self.prog.container, name) {
            if let Some(v) = self.act.resolve(&cand) {
                return Ok(v);
            }
            if let Some(t) = builtin_type(&cand) {
                return Ok(Value::Type(t.runtime_name().into()));
            }
            if let Some(i) = self.enum_value(&cand) {
                return Ok(Value::Int(i));
            }
        }
        Err(EvalError::new(format!(
            "undeclared reference to '{}' (in container '{}')",
            name.trim_start_matches('.'),
            self.prog.container
        )))
    }

    /// Unchecked `a.b.c`: a variable whose name is the dotted path, if one is bound.
    fn qualified(&mut self, e: &Expr) -> Option<Value> {
        let q = e.qualified_name()?;
        let root = q.split('.').next().unwrap_or("");
        if self.local(root).is_some() {
            return None;
        }
        for cand in candidate_names(&self.prog.container, &q) {
            if let Some(v) = self.act.resolve(&cand) {
                return Some(v);
            }
            if let Some(i) = self.enum_value(&cand) {
                return Some(Value::Int(i));
            }
        }
        None
    }

    fn enum_value(&self, name: &str) -> Option<i64> {
        self.prog.provider.as_ref()?.enum_value(name)
    }

    fn call(
        &mut self,
        id: ExprId,
        target: Option<&'a Expr>,
        function: &'a str,
        args: &'a [Expr],
    ) -> R {
        self.charge(costs::CALL)?;
        match (function, args) {
            ("_&&_", [a, b]) => return self.logic(a, b, false),
            ("_||_", [a, b]) => return self.logic(a, b, true),
            ("_?_:_", [c, t, f]) => {
                return match self.eval(c)? {
                    Value::Bool(true) => self.eval(t),
                    Value::Bool(false) => self.eval(f),
                    other => Err(stdlib::no_such_overload("_?_:_", &[other])),
                }
            }
            ("@not_strictly_false", [a]) => {
                return match self.eval(a) {
                    Ok(Value::Bool(b)) => Ok(Value::Bool(b)),
                    Err(e) if e.cancelled => Err(e),
                    _ => Ok(Value::Bool(true)),
                }
            }
            ("_?._", [operand, field]) => {
                let v = self.eval(operand)?;
                let ExprKind::Literal(Literal::String(f)) = &field.kind else {
                    return Err(EvalError::new("invalid optional field selection"));
                };
                return optional_select(&v, f);
            }
            _ => {}
        }
        // `ns.f(x)` in an unchecked expression: a namespaced global function.
        if let Some(t) = target {
            if !self.prog.checked {
                if let Some(q) = t.qualified_name() {
                    let full = format!("{q}.{function}");
                    let root = q.split('.').next().unwrap_or("");
                    if self.local(root).is_none()
                        && self.act.resolve(root).is_none()
                        && (stdlib::is_global_function(&full)
                            || self.prog.functions.contains_key(&full)
                            || self.prog.decls.get(&full).is_some_and(|d| {
                                d.overloads
                                    .iter()
                                    .any(|o| !o.member && o.implementation.is_some())
                            }))
                    {
                        let vals = self.eval_args(None, args)?;
                        return self.dispatch(id, &full, false, vals.as_slice());
                    }
                }
            }
        }
        let vals = self.eval_args(target, args)?;
        self.dispatch(id, function, target.is_some(), vals.as_slice())
    }

    fn eval_args(
        &mut self,
        target: Option<&'a Expr>,
        args: &'a [Expr],
    ) -> Result<Operands, EvalError> {
        let n = args.len() + usize::from(target.is_some());
        if n <= INLINE_OPERANDS {
            let mut vals = [Value::Null, Value::Null, Value::Null];
            for (slot, e) in vals.iter_mut().zip(target.into_iter().chain(args)) {
                *slot = self.eval(e)?;
            }
            return Ok(Operands::Inline(n, vals));
        }
        let mut vals = Vec::with_capacity(n);
        for e in target.into_iter().chain(args) {
            vals.push(self.eval(e)?);
        }
        Ok(Operands::Heap(vals))
    }

    fn dispatch(&mut self, id: ExprId, function: &str, member: bool, vals: &[Value]) -> R {
        if let Some(f) = (!self.prog.functions.is_empty())
            .then(|| self.prog.functions.get(function))
            .flatten()
        {
            self.charge(traversal_cost(function, vals))?;
            return f(vals);
        }
        // An overload with its own implementation: among those the checker left possible,
        // the first the runtime values fit. Checked programs resolved the candidates when they
        // were built; unchecked ones look them up by name.
        let prog = self.prog;
        let by_name;
        let cands: Option<&[Overload]> = match prog.resolved.get(&id) {
            Some(c) => Some(c),
            None if !prog.checked => {
                by_name = prog.decls.get(function).filter(|d| d.has_implementations());
                by_name.map(|d| d.overloads.as_slice())
            }
            None => None,
        };
        if let Some(cands) = cands {
            let chosen = cands
                .iter()
                .find(|o| o.member == member && o.implementation.is_some() && o.accepts(vals));
            if let Some(o) = chosen {
                if let Some(imp) = &o.implementation {
                    // The overload's cost from its operands alone (its result not yet known).
                    if let Some(f) = &o.runtime_cost {
                        self.precheck(f(vals, &Value::Null))?;
                    }
                    self.precheck(stdlib::result_cost_bound(function, vals))?;
                    let r = imp(vals);
                    let custom = match &r {
                        Ok(v) => prog
                            .cost_estimator
                            .as_ref()
                            .and_then(|est| est.call_cost(function, &o.id, vals, v))
                            .or_else(|| o.runtime_cost.as_ref().map(|f| f(vals, v))),
                        Err(_) => None,
                    };
                    self.charge(custom.map_or(0, |c| c.saturating_sub(costs::CALL)))?;
                    return r;
                }
            }
        }
        if function == "matches" {
            if let (Some(re), [Value::String(s), Value::String(_)]) = (prog.regexes.get(&id), vals)
            {
                self.charge(traversal_cost(function, vals))?;
                return Ok(Value::Bool(re.is_match(s)));
            }
        }
        self.precheck(stdlib::result_cost_bound(function, vals))?;
        let r = stdlib::call(function, vals);
        let custom = match (&r, &prog.cost_estimator) {
            (Ok(v), Some(est)) => {
                let oid = match prog.overloads.get(&id) {
                    Some(ids) if ids.len() == 1 => ids[0].as_str(),
                    _ => "",
                };
                est.call_cost(function, oid, vals, v)
            }
            _ => None,
        };
        match custom {
            Some(c) => self.charge(c.saturating_sub(costs::CALL))?,
            None => self.charge(traversal_cost(function, vals))?,
        }
        r
    }

    /// `&&` / `||`: the first operand decides when it can; an error on one side is absorbed
    /// when the other side decides.
    fn logic(&mut self, a: &'a Expr, b: &'a Expr, is_or: bool) -> R {
        let left = self.eval(a);
        match &left {
            Ok(Value::Bool(v)) if *v == is_or => return left,
            Err(e) if e.cancelled => return left,
            _ => {}
        }
        let right = self.eval(b);
        match (&left, &right) {
            (_, Err(e)) if e.cancelled => right,
            (_, Ok(Value::Bool(v))) if *v == is_or => right,
            (Ok(Value::Bool(_)), Ok(Value::Bool(_))) => right,
            (Err(_), _) => left,
            (_, Err(_)) => right,
            (Ok(l), Ok(r)) => {
                let name = if is_or { "_||_" } else { "_&&_" };
                let bad = if matches!(l, Value::Bool(_)) { r } else { l };
                Err(stdlib::no_such_overload(name, std::slice::from_ref(bad)))
            }
        }
    }

    fn comprehension(&mut self, c: &'a Comprehension) -> R {
        let range = self.eval(&c.iter_range)?;
        let len = match &range {
            Value::List(l) => l.len(),
            Value::Map(m) => m.len(),
            other => {
                return Err(EvalError::new(format!(
                    "expression of type '{}' cannot be range of a comprehension",
                    other.type_name()
                )))
            }
        };
        let init = self.eval(&c.accu_init);
        if let Err(e) = &init {
            if e.cancelled {
                return init;
            }
        }
        let base = self.locals.len();
        self.locals.push((&c.accu_var, init));
        let shape = StepShape::of(c);
        let two = c.iter_var2.is_some();
        for i in 0..len {
            // The range stays shared: each element is cloned when its turn comes (a reference
            // count or a scalar), never collected up front.
            let (first, second) = match &range {
                Value::List(l) if two => (Value::Int(i as i64), Some(l[i].clone())),
                Value::List(l) => (l[i].clone(), None),
                Value::Map(m) => match m.entries.get_index(i) {
                    Some((_, (k, v))) => (k.clone(), two.then(|| v.clone())),
                    None => break,
                },
                _ => break,
            };
            self.locals.truncate(base + 1);
            self.locals.push((&c.iter_var, Ok(first)));
            if let (Some(name), Some(val)) = (&c.iter_var2, second) {
                self.locals.push((name, Ok(val)));
            }
            match self.eval(&c.loop_condition) {
                Ok(Value::Bool(true)) => {}
                Ok(Value::Bool(false)) => break,
                Ok(other) => {
                    self.locals.truncate(base);
                    return Err(stdlib::no_such_overload("loop condition", &[other]));
                }
                Err(e) => {
                    self.locals.truncate(base);
                    return Err(e);
                }
            }
            let step = self.step(c, &shape, base);
            if let Err(e) = &step {
                if e.cancelled {
                    self.locals.truncate(base);
                    return step;
                }
            }
            self.locals[base].1 = step;
        }
        self.locals.truncate(base + 1);
        let r = self.eval(&c.result);
        self.locals.truncate(base);
        r
    }

    /// Evaluates a loop step. The macros' `@result + [x]` appends in place (the accumulator
    /// is taken out of its slot, `accu`, first), keeping map/filter linear rather than
    /// quadratic; a one-element list literal is pushed without building the list.
    fn step(&mut self, c: &'a Comprehension, shape: &StepShape<'a>, accu: usize) -> R {
        let (cond, add) = match shape {
            StepShape::Plain => return self.eval(&c.loop_step),
            StepShape::Append { cond, add } => (*cond, *add),
        };
        if let Some(cond) = cond {
            self.charge(costs::CALL)?;
            match self.eval(cond)? {
                Value::Bool(true) => {}
                Value::Bool(false) => return self.locals[accu].1.clone(),
                other => return Err(stdlib::no_such_overload("_?_:_", &[other])),
            }
        }
        self.charge(costs::CALL)?;
        let rhs = match &add.kind {
            ExprKind::List {
                elements,
                optional_indices,
            } if elements.len() == 1 && optional_indices.is_empty() => {
                // What evaluating the literal charges.
                self.charge(costs::LIST_CREATE)?;
                let v = self.eval(&elements[0])?;
                let acc = std::mem::replace(&mut self.locals[accu].1, Ok(Value::Null))?;
                return match acc {
                    Value::List(mut l) if l.kind == ListKind::Ordered => {
                        Arc::make_mut(&mut l).push(v);
                        Ok(Value::List(l))
                    }
                    a => stdlib::add(&a, &Value::list(vec![v])),
                };
            }
            _ => self.eval(add)?,
        };
        let acc = std::mem::replace(&mut self.locals[accu].1, Ok(Value::Null))?;
        match (acc, rhs) {
            (Value::List(mut l), Value::List(r)) if l.kind == ListKind::Ordered => {
                Arc::make_mut(&mut l).extend(r.iter().cloned());
                Ok(Value::List(l))
            }
            (a, b) => stdlib::add(&a, &b),
        }
    }
}

/// The shape of a comprehension's step, found once per comprehension rather than per
/// iteration: the macros' appends (`@result + [x]`, or `cond ? @result + [x] : @result`) or
/// anything else.
enum StepShape<'a> {
    Plain,
    Append {
        cond: Option<&'a Expr>,
        add: &'a Expr,
    },
}

impl<'a> StepShape<'a> {
    fn of(c: &'a Comprehension) -> StepShape<'a> {
        let append = |e: &'a Expr| -> Option<&'a Expr> {
            match &e.kind {
                ExprKind::Call {
                    target: None,
                    function,
                    args,
                } if function == "_+_" && args.len() == 2 => match &args[0].kind {
                    ExprKind::Ident(n) if *n == c.accu_var => Some(&args[1]),
                    _ => None,
                },
                _ => None,
            }
        };
        match &c.loop_step.kind {
            ExprKind::Call {
                target: None,
                function,
                args,
            } if function == "_?_:_" && args.len() == 3 => {
                match (append(&args[1]), &args[2].kind) {
                    (Some(add), ExprKind::Ident(n)) if *n == c.accu_var => StepShape::Append {
                        cond: Some(&args[0]),
                        add,
                    },
                    _ => StepShape::Plain,
                }
            }
            _ => match append(&c.loop_step) {
                Some(add) => StepShape::Append { cond: None, add },
                None => StepShape::Plain,
            },
        }
    }
}

/// Work proportional to the size of strings and lists is charged by that size.
fn traversal_cost(function: &str, vals: &[Value]) -> u64 {
    // Scalars have no size: skip matching the name (most calls in loops are on numbers).
    if vals.iter().all(|v| value_size(v) == 0) {
        return 0;
    }
    match function {
        "_+_" | "_==_" | "_!=_" | "contains" | "startsWith" | "endsWith" | "matches" | "@in"
        | "split" | "join" | "replace" | "indexOf" | "lastIndexOf" | "lowerAscii"
        | "upperAscii" | "trim" | "reverse" => {
            vals.iter().map(value_size).sum::<u64>() / costs::TRAVERSAL_DIVISOR
        }
        _ => 0,
    }
}

fn value_size(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.len() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.len() as u64,
        _ => 0,
    }
}

fn select(v: &Value, field: &str) -> R {
    match v {
        Value::Map(m) => m
            .get_str(field)
            .cloned()
            .ok_or_else(|| EvalError::new(format!("no such key: {field}"))),
        Value::Object(o) => o
            .fields
            .get(field)
            .cloned()
            .ok_or_else(|| EvalError::new(format!("no such field: {field}"))),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => optional_select(inner, field),
        other => Err(EvalError::new(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

fn optional_select(v: &Value, field: &str) -> R {
    let some = |x: &Value| Value::Optional(Some(Arc::new(x.clone())));
    match v {
        Value::Map(m) => Ok(m.get_str(field).map(some).unwrap_or(Value::Optional(None))),
        Value::Object(o) => Ok(o
            .fields
            .get(field)
            .map(some)
            .unwrap_or(Value::Optional(None))),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => optional_select(inner, field),
        other => Err(EvalError::new(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

fn has_field(v: &Value, field: &str) -> R {
    match v {
        Value::Map(m) => Ok(Value::Bool(m.get_str(field).is_some())),
        Value::Object(o) => Ok(Value::Bool(o.fields.contains_key(field))),
        Value::Optional(None) => Ok(Value::Bool(false)),
        Value::Optional(Some(inner)) => has_field(inner, field),
        other => Err(EvalError::new(format!(
            "invalid type for field selection: {}",
            other.type_name()
        ))),
    }
}
