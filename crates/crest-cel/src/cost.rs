//! Static cost estimation (the shape of cel-go's `checker.Cost`): a [min, max] cost range for a
//! checked expression, from the sizes of lists, maps and strings that a [`CostEstimator`]
//! supplies (Kubernetes derives them from maxItems/maxProperties/maxLength). Unbounded sizes
//! make the maximum `u64::MAX`, as cel-go's do.
//!
//! Covered: literals, identifiers and selections, calls (size-dependent string/list work
//! scaled by the traversal factor), list/map/message literals, and comprehensions (range size
//! times the per-iteration cost, multiplying through nested ranges). Per-function estimates of
//! extension libraries are a hook on the estimator.

use std::collections::HashMap;

use crate::ast::*;
use crate::checked::CheckedAst;
use crate::decls::{CallEstimate, Functions};
use crate::parser::{RED_ZONE, STACK_CHUNK};
use crate::runtime::costs;
use crate::types::Type;

pub use crate::estimate::{CallArg, CostEstimate, SizeEstimate};

/// Sizes the type environment knows. A path is a variable name followed by field names;
/// comprehension elements extend their range's path with `@items` (list elements), `@keys`
/// and `@values` (map keys and values), as cel-go's do.
pub trait CostEstimator {
    fn estimate_size(&self, path: &[String], t: &Type) -> Option<SizeEstimate>;

    /// Cost of a call, overriding the default model (for extension libraries).
    fn estimate_call_cost(
        &self,
        _function: &str,
        _arg_sizes: &[SizeEstimate],
    ) -> Option<CostEstimate> {
        None
    }

    /// Cost and result size of a call (cel-go `EstimateCallCost`), given the overloads the
    /// checker selected; consulted before the overloads' own estimates. The default defers
    /// to `estimate_call_cost`.
    fn estimate_call(
        &self,
        function: &str,
        _overload_ids: &[String],
        arg_sizes: &[SizeEstimate],
    ) -> Option<CallEstimate> {
        self.estimate_call_cost(function, arg_sizes)
            .map(|cost| CallEstimate {
                cost,
                result_size: None,
            })
    }

    /// [`Self::estimate_call`] with each operand's element size, type and literal value
    /// (Kubernetes' library estimator prices list functions by their element sizes). The
    /// default defers to `estimate_call`.
    fn estimate_call_args(
        &self,
        function: &str,
        overload_ids: &[String],
        args: &[CallArg<'_>],
    ) -> Option<CallEstimate> {
        let sizes: Vec<SizeEstimate> = args.iter().map(|a| a.size).collect();
        self.estimate_call(function, overload_ids, &sizes)
    }
}

/// An estimator that knows no sizes (everything unbounded).
pub struct NoSizes;

impl CostEstimator for NoSizes {
    fn estimate_size(&self, _: &[String], _: &Type) -> Option<SizeEstimate> {
        None
    }
}

pub fn estimate_cost(checked: &CheckedAst, est: &dyn CostEstimator) -> CostEstimate {
    let mut c = Coster {
        est,
        functions: &checked.functions,
        overloads: &checked.overloads,
        types: &checked.types,
        paths: HashMap::new(),
        locals: Vec::new(),
    };
    c.cost(&checked.ast.expr).0
}

struct Coster<'a> {
    est: &'a dyn CostEstimator,
    functions: &'a Functions,
    overloads: &'a HashMap<ExprId, Vec<String>>,
    types: &'a HashMap<ExprId, Type>,
    paths: HashMap<ExprId, Vec<String>>,
    /// Comprehension variables and the path they stand for.
    locals: Vec<(String, Vec<String>)>,
}

impl Coster<'_> {
    /// The estimate of the selected overloads' own cost functions: the widest range if
    /// several may run.
    fn overload_estimate(
        &self,
        function: &str,
        ids: &[String],
        sizes: &[SizeEstimate],
        args: &[CallArg<'_>],
    ) -> Option<CallEstimate> {
        let decl = self.functions.get(function)?;
        let mut out: Option<CallEstimate> = None;
        for id in ids {
            let Some(o) = decl.overload(id) else {
                continue;
            };
            let c = match (&o.estimate_args, &o.estimate) {
                (Some(f), _) => f(args),
                (None, Some(f)) => f(sizes),
                (None, None) => continue,
            };
            out = Some(match out {
                None => c,
                Some(p) => CallEstimate {
                    cost: p.cost.union(c.cost),
                    result_size: match (p.result_size, c.result_size) {
                        (Some(a), Some(b)) => Some(SizeEstimate {
                            min: a.min.min(b.min),
                            max: a.max.max(b.max),
                        }),
                        _ => None,
                    },
                },
            });
        }
        out
    }

    fn ty(&self, e: &Expr) -> Type {
        self.types.get(&e.id).cloned().unwrap_or(Type::Dyn)
    }

    fn size_of_path(&self, path: &[String], e: &Expr) -> SizeEstimate {
        self.est
            .estimate_size(path, &self.ty(e))
            .unwrap_or(SizeEstimate::UNKNOWN)
    }

    /// The cost of `e` and the size of its value.
    fn cost(&mut self, e: &Expr) -> (CostEstimate, SizeEstimate) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.cost_node(e))
    }

    fn cost_node(&mut self, e: &Expr) -> (CostEstimate, SizeEstimate) {
        match &e.kind {
            ExprKind::Literal(l) => {
                let size = match l {
                    Literal::String(s) => SizeEstimate::exact(s.chars().count() as u64),
                    Literal::Bytes(b) => SizeEstimate::exact(b.len() as u64),
                    _ => SizeEstimate::exact(1),
                };
                (CostEstimate::ZERO, size)
            }
            ExprKind::Ident(name) => {
                let path = self
                    .locals
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, p)| p.clone())
                    .unwrap_or_else(|| vec![name.clone()]);
                let size = self.size_of_path(&path, e);
                self.paths.insert(e.id, path);
                (CostEstimate::fixed(costs::SELECT_AND_IDENT), size)
            }
            ExprKind::Select { operand, field, .. } => {
                let (oc, _) = self.cost(operand);
                let mut size = SizeEstimate::UNKNOWN;
                if let Some(p) = self.paths.get(&operand.id).cloned() {
                    let mut p = p;
                    p.push(field.clone());
                    size = self.size_of_path(&p, e);
                    self.paths.insert(e.id, p);
                }
                (oc.plus(CostEstimate::fixed(costs::SELECT_AND_IDENT)), size)
            }
            ExprKind::Call {
                target,
                function,
                args,
            } => {
                let mut total = CostEstimate::ZERO;
                let mut sizes = vec![];
                let mut arg_costs = vec![];
                for a in target.iter().map(|t| &**t).chain(args.iter()) {
                    let (c, s) = self.cost(a);
                    arg_costs.push(c);
                    // cel-go's sizeEstimate: a scalar of unknown size counts as size 1.
                    let scalar = matches!(
                        self.ty(a),
                        Type::Bool
                            | Type::Int
                            | Type::Uint
                            | Type::Double
                            | Type::Timestamp
                            | Type::Duration
                    );
                    sizes.push(if scalar && s == SizeEstimate::UNKNOWN {
                        SizeEstimate::exact(1)
                    } else {
                        s
                    });
                }
                match function.as_str() {
                    // Short-circuiting: the second operand may not run.
                    "_&&_" | "_||_" if arg_costs.len() == 2 => {
                        let c = arg_costs[0].plus(CostEstimate {
                            min: 0,
                            max: arg_costs[1].max,
                        });
                        return (c, SizeEstimate::exact(1));
                    }
                    "_?_:_" if arg_costs.len() == 3 => {
                        let c = arg_costs[0].plus(arg_costs[1].union(arg_costs[2]));
                        let s = SizeEstimate {
                            min: sizes[1].min.min(sizes[2].min),
                            max: sizes[1].max.max(sizes[2].max),
                        };
                        return (c, s);
                    }
                    _ => {}
                }
                for c in &arg_costs {
                    total = total.plus(*c);
                }
                let ids: &[String] = self.overloads.get(&e.id).map_or(&[], |v| v);
                let types: Vec<Type> = target
                    .iter()
                    .map(|t| &**t)
                    .chain(args.iter())
                    .map(|a| self.ty(a))
                    .collect();
                let call_args: Vec<CallArg<'_>> = target
                    .iter()
                    .map(|t| &**t)
                    .chain(args.iter())
                    .zip(sizes.iter().zip(types.iter()))
                    .map(|(a, (size, ty))| CallArg {
                        size: *size,
                        elem_size: match self.paths.get(&a.id) {
                            Some(p) => {
                                let mut p = p.clone();
                                p.push("@items".into());
                                self.size_of_path(&p, a)
                            }
                            None => SizeEstimate::UNKNOWN,
                        },
                        ty,
                        literal: match &a.kind {
                            ExprKind::Literal(l) => Some(l),
                            _ => None,
                        },
                    })
                    .collect();
                let custom = self
                    .est
                    .estimate_call_args(function, ids, &call_args)
                    .or_else(|| self.overload_estimate(function, ids, &sizes, &call_args));
                let call = match custom {
                    Some(c) => {
                        if let Some(s) = c.result_size {
                            return (total.plus(c.cost), s);
                        }
                        c.cost
                    }
                    None => {
                        // Scalars carry no traversal cost whatever their estimated size.
                        let operands = target.iter().map(|t| &**t).chain(args.iter());
                        let traversed: Vec<SizeEstimate> = operands
                            .zip(sizes.iter())
                            .map(|(a, s)| match self.ty(a) {
                                Type::String
                                | Type::Bytes
                                | Type::List(_)
                                | Type::Map(..)
                                | Type::Dyn
                                | Type::TypeParam(_) => *s,
                                _ => SizeEstimate::exact(0),
                            })
                            .collect();
                        default_call_cost(function, &traversed)
                    }
                };
                let size = match function.as_str() {
                    "_+_" if sizes.len() == 2 => SizeEstimate {
                        min: sizes[0].min.saturating_add(sizes[1].min),
                        max: sizes[0].max.saturating_add(sizes[1].max),
                    },
                    "_[_]" => {
                        // The element's path, for nested sizes.
                        if let Some(p) = self.paths.get(&args[0].id).cloned() {
                            let mut p = p;
                            p.push("@items".into());
                            let s = self.size_of_path(&p, e);
                            self.paths.insert(e.id, p);
                            s
                        } else {
                            SizeEstimate::UNKNOWN
                        }
                    }
                    _ => SizeEstimate::UNKNOWN,
                };
                (total.plus(call), size)
            }
            ExprKind::List { elements, .. } => {
                let mut c = CostEstimate::fixed(costs::LIST_CREATE);
                for el in elements {
                    c = c.plus(self.cost(el).0);
                }
                (c, SizeEstimate::exact(elements.len() as u64))
            }
            ExprKind::Map { entries } => {
                let mut c = CostEstimate::fixed(costs::MAP_CREATE);
                for en in entries {
                    c = c.plus(self.cost(&en.key).0).plus(self.cost(&en.value).0);
                }
                (c, SizeEstimate::exact(entries.len() as u64))
            }
            ExprKind::Struct { fields, .. } => {
                let mut c = CostEstimate::fixed(costs::STRUCT_CREATE);
                for f in fields {
                    c = c.plus(self.cost(&f.value).0);
                }
                (c, SizeEstimate::UNKNOWN)
            }
            ExprKind::Comprehension(comp) => {
                let (rc, rsize) = self.cost(&comp.iter_range);
                let (ic, _) = self.cost(&comp.accu_init);
                let range_path = self.paths.get(&comp.iter_range.id).cloned();
                let is_map = matches!(self.ty(&comp.iter_range), Type::Map(..));
                let elem_path = |suffix: &str| {
                    range_path.clone().map(|mut p| {
                        p.push(suffix.to_string());
                        p
                    })
                };
                let mark = self.locals.len();
                let (p1, p2) = match (is_map, comp.iter_var2.is_some()) {
                    (true, _) => (elem_path("@keys"), elem_path("@values")),
                    (false, true) => (None, elem_path("@items")),
                    (false, false) => (elem_path("@items"), None),
                };
                self.locals.push((
                    comp.iter_var.clone(),
                    p1.unwrap_or_else(|| vec![comp.iter_var.clone()]),
                ));
                if let Some(v2) = &comp.iter_var2 {
                    self.locals
                        .push((v2.clone(), p2.unwrap_or_else(|| vec![v2.clone()])));
                }
                let (cc, _) = self.cost(&comp.loop_condition);
                let (sc, _) = self.cost(&comp.loop_step);
                self.locals.truncate(mark);
                let (resc, ressize) = self.cost(&comp.result);
                let per_iter = cc.plus(sc);
                let c = rc.plus(ic).plus(per_iter.multiply(rsize)).plus(resc);
                (c, ressize)
            }
        }
    }
}

fn default_call_cost(function: &str, sizes: &[SizeEstimate]) -> CostEstimate {
    let traversal = |s: &SizeEstimate| CostEstimate {
        min: s.min / costs::TRAVERSAL_DIVISOR,
        max: s.max / costs::TRAVERSAL_DIVISOR,
    };
    let base = CostEstimate::fixed(costs::CALL);
    match function {
        "_+_" | "_==_" | "_!=_" | "contains" | "startsWith" | "endsWith" | "matches" | "@in"
        | "split" | "join" | "replace" | "indexOf" | "lastIndexOf" | "lowerAscii"
        | "upperAscii" | "trim" | "reverse" => sizes.iter().fold(base, |c, s| c.plus(traversal(s))),
        _ => base,
    }
}
