//! Static type checker (a port of cel-go's `checker` algorithm): resolves identifiers against
//! the environment and container, infers a type for every node with type-parameter
//! substitution, resolves overloads, and rewrites qualified names and namespaced function calls
//! to their resolved form (what the evaluator then runs). Messages are cel-go's.

use std::collections::HashMap;

use crate::ast::*;
use crate::decls::FunctionDecl;
use crate::env::Env;
use crate::errors::{Issue, Issues};
use crate::parser::{RED_ZONE, STACK_CHUNK};
use crate::types::Type;

pub use crate::checked::CheckedAst;

pub fn check(ast: &Ast, env: &Env) -> Result<CheckedAst, Issues> {
    let mut c = Checker {
        env,
        types: HashMap::new(),
        overloads: HashMap::new(),
        mapping: HashMap::new(),
        fresh: 0,
        scopes: Vec::new(),
        errors: Vec::new(),
        source: ast,
    };
    let mut expr = ast.expr.clone();
    c.check(&mut expr);
    if !c.errors.is_empty() {
        let mut issues = Issues::new(ast.source.clone());
        issues.issues = c.errors;
        return Err(issues);
    }
    let mut types = HashMap::with_capacity(c.types.len());
    for (id, t) in &c.types {
        types.insert(*id, c.substitute(t, true));
    }
    let mut bad_formats = vec![];
    format_issues(&expr, &types, &mut bad_formats);
    if !bad_formats.is_empty() {
        let mut issues = Issues::new(ast.source.clone());
        for (id, message) in bad_formats {
            issues.issues.push(Issue {
                offset: ast.source.position(id),
                message,
            });
        }
        return Err(issues);
    }
    Ok(CheckedAst {
        ast: Ast {
            expr,
            source: ast.source.clone(),
            next_id: ast.next_id,
        },
        types,
        overloads: c.overloads,
        functions: env.functions.clone(),
        provider: env.provider.clone(),
    })
}

struct Checker<'a> {
    env: &'a Env,
    types: HashMap<ExprId, Type>,
    overloads: HashMap<ExprId, Vec<String>>,
    /// Type parameter substitutions.
    mapping: HashMap<String, Type>,
    fresh: u32,
    /// Comprehension scopes: variable name -> type, innermost last.
    scopes: Vec<(String, Type)>,
    errors: Vec<Issue>,
    source: &'a Ast,
}

impl Checker<'_> {
    fn error(&mut self, id: ExprId, message: String) {
        let offset = self.source.source.position(id);
        self.errors.push(Issue { offset, message });
    }

    fn set(&mut self, e: &Expr, t: Type) {
        self.types.insert(e.id, t);
    }

    fn get(&self, e: &Expr) -> Type {
        self.types.get(&e.id).cloned().unwrap_or(Type::Error)
    }

    fn new_var(&mut self) -> Type {
        let t = Type::TypeParam(format!("_var{}", self.fresh));
        self.fresh += 1;
        t
    }

    fn check(&mut self, e: &mut Expr) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.check_node(e))
    }

    fn check_node(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Literal(l) => {
                let t = match l {
                    Literal::Null => Type::Null,
                    Literal::Bool(_) => Type::Bool,
                    Literal::Int(_) => Type::Int,
                    Literal::Uint(_) => Type::Uint,
                    Literal::Double(_) => Type::Double,
                    Literal::String(_) => Type::String,
                    Literal::Bytes(_) => Type::Bytes,
                };
                self.set(e, t);
            }
            ExprKind::Ident(name) => {
                let name = name.clone();
                match self.lookup_ident(&name) {
                    Some((resolved, t)) => {
                        e.kind = ExprKind::Ident(resolved);
                        self.set(e, t);
                    }
                    None => {
                        let msg = format!(
                            "undeclared reference to '{}' (in container '{}')",
                            name.trim_start_matches('.'),
                            self.env.container
                        );
                        self.error(e.id, msg);
                        self.set(e, Type::Error);
                    }
                }
            }
            ExprKind::Select { .. } => self.check_select(e),
            ExprKind::Call { .. } => self.check_call(e),
            ExprKind::List {
                elements,
                optional_indices,
            } => {
                let mut elem: Option<Type> = None;
                for (i, el) in elements.iter_mut().enumerate() {
                    self.check(el);
                    let mut t = self.get(el);
                    if optional_indices.contains(&i) {
                        t = self.unwrap_optional_or_error(el, t);
                    }
                    elem = Some(self.join(elem, t));
                }
                let elem = elem.unwrap_or_else(|| self.new_var());
                self.set(e, Type::list(elem));
            }
            ExprKind::Map { entries } => {
                let (mut kt, mut vt): (Option<Type>, Option<Type>) = (None, None);
                for en in entries.iter_mut() {
                    self.check(&mut en.key);
                    self.check(&mut en.value);
                    let k = self.get(&en.key);
                    let mut v = self.get(&en.value);
                    if en.optional {
                        v = self.unwrap_optional_or_error(&en.value, v);
                    }
                    kt = Some(self.join(kt, k));
                    vt = Some(self.join(vt, v));
                }
                let k = kt.unwrap_or_else(|| self.new_var());
                let v = vt.unwrap_or_else(|| self.new_var());
                self.set(e, Type::map(k, v));
            }
            ExprKind::Struct { type_name, fields } => {
                let name = type_name.clone();
                let resolved = self.lookup_type_name(&name);
                let Some(resolved) = resolved else {
                    let msg = format!(
                        "undeclared reference to '{}' (in container '{}')",
                        name.trim_start_matches('.'),
                        self.env.container
                    );
                    let id = e.id;
                    for f in fields.iter_mut() {
                        self.check(&mut f.value);
                    }
                    self.error(id, msg);
                    self.set(e, Type::Error);
                    return;
                };
                *type_name = resolved.clone();
                let mut errs = vec![];
                for f in fields.iter_mut() {
                    self.check(&mut f.value);
                    let mut vt = self.get(&f.value);
                    if f.optional {
                        vt = self.unwrap_optional_or_error(&f.value, vt);
                    }
                    match self.env.field_type(&resolved, &f.name) {
                        Some(ft) => {
                            if !self.assignable(&ft, &vt) {
                                errs.push((
                                    f.id,
                                    format!(
                                        "expected type of field '{}' is '{}' but provided type is '{}'",
                                        f.name, ft, vt
                                    ),
                                ));
                            }
                        }
                        None => errs.push((f.id, format!("undefined field '{}'", f.name))),
                    }
                }
                for (id, m) in errs {
                    self.error(id, m);
                }
                self.set(e, Type::Object(resolved));
            }
            ExprKind::Comprehension(_) => self.check_comprehension(e),
        }
    }

    fn unwrap_optional_or_error(&mut self, e: &Expr, t: Type) -> Type {
        let t = self.substitute(&t, false);
        if let Some(inner) = t.optional_elem() {
            return inner.clone();
        }
        if t.is_dyn_or_error() || matches!(t, Type::TypeParam(_)) {
            return Type::Dyn;
        }
        self.error(
            e.id,
            format!("expected type 'optional_type' but found '{t}'"),
        );
        Type::Error
    }

    /// A local (comprehension) variable, then the environment's candidates in the container.
    fn lookup_ident(&self, name: &str) -> Option<(String, Type)> {
        if !name.starts_with('.') {
            if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
                return Some((name.to_string(), t.clone()));
            }
        }
        for cand in self.env.candidate_names(name) {
            if let Some(t) = self.env.ident_type(&cand) {
                // A global that a comprehension variable shadows stays absolute (`.y`).
                let shadowed = self.scopes.iter().any(|(n, _)| *n == cand);
                let resolved = if shadowed { format!(".{cand}") } else { cand };
                return Some((resolved, t));
            }
        }
        None
    }

    fn lookup_type_name(&self, name: &str) -> Option<String> {
        self.env
            .candidate_names(name)
            .into_iter()
            .find(|c| self.env.has_message_type(c))
    }

    fn check_select(&mut self, e: &mut Expr) {
        let id = e.id;
        let ExprKind::Select {
            operand,
            field,
            test_only,
        } = &mut e.kind
        else {
            return;
        };
        // A qualified name (`a.b.c`) may name a variable declared with dots.
        if !*test_only {
            if let Some(q) = operand.qualified_name() {
                let root = q.split('.').next().unwrap_or("");
                let shadowed = self.scopes.iter().any(|(n, _)| n == root);
                if !shadowed {
                    let full = format!("{q}.{field}");
                    for cand in self.env.candidate_names(&full) {
                        if let Some(t) = self.env.ident_type(&cand) {
                            e.kind = ExprKind::Ident(cand);
                            self.types.insert(id, t);
                            return;
                        }
                    }
                }
            }
        }
        let field = field.clone();
        let test_only = *test_only;
        let t = self.check_select_field(operand, &field, id);
        let t = if test_only { Type::Bool } else { t };
        self.types.insert(id, t);
    }

    fn check_select_field(&mut self, operand: &mut Expr, field: &str, id: ExprId) -> Type {
        self.check(operand);
        let ot = self.substitute(&self.get(operand), false);
        let (target, is_opt) = match ot.optional_elem() {
            Some(t) => (t.clone(), true),
            None => (ot.clone(), false),
        };
        let result = match &target {
            Type::Map(_, v) => (**v).clone(),
            Type::Object(name) => match self.env.field_type(name, field) {
                Some(t) => t,
                None => {
                    self.error(id, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::TypeParam(_) => {
                self.assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            t if t.is_dyn_or_error() => Type::Dyn,
            t => {
                self.error(id, format!("type '{t}' does not support field selection"));
                Type::Error
            }
        };
        if is_opt {
            Type::optional(result)
        } else {
            result
        }
    }

    fn check_call(&mut self, e: &mut Expr) {
        let id = e.id;
        let ExprKind::Call {
            target,
            function,
            args,
        } = &mut e.kind
        else {
            return;
        };
        let fname = function.clone();
        // `a.?b`: an optional field selection.
        if fname == "_?._" && args.len() == 2 {
            let field = match &args[1].kind {
                ExprKind::Literal(Literal::String(s)) => s.to_string(),
                _ => String::new(),
            };
            let t = self.check_select_field(&mut args[0], &field, id);
            self.set(&args[1], Type::String);
            let t = if t.optional_elem().is_some() {
                t
            } else {
                Type::optional(t)
            };
            self.types.insert(id, t);
            return;
        }
        if let Some(t) = target.as_deref() {
            // `ns.f(x)` may be a namespaced global function rather than a member call.
            if let Some(q) = t.qualified_name() {
                let root = q.split('.').next().unwrap_or("");
                let shadowed = self.scopes.iter().any(|(n, _)| n == root);
                if !shadowed {
                    let full = format!("{q}.{fname}");
                    if let Some((resolved, decl)) = self.lookup_function(&full) {
                        let decl = decl.clone();
                        *target = None;
                        *function = resolved;
                        for a in args.iter_mut() {
                            self.check(a);
                        }
                        let arg_types: Vec<Type> = args.iter().map(|a| self.get(a)).collect();
                        let t = self.resolve_overload(id, &decl, &arg_types, false);
                        self.types.insert(id, t);
                        return;
                    }
                }
            }
        }
        let mut arg_types = vec![];
        if let Some(t) = target.as_deref_mut() {
            self.check(t);
            arg_types.push(self.get(t));
        }
        for a in args.iter_mut() {
            self.check(a);
            arg_types.push(self.get(a));
        }
        let member = target.is_some();
        let decl = if member {
            self.env.functions.get(&fname).map(|d| (fname.clone(), d))
        } else {
            self.lookup_function(&fname)
        };
        match decl {
            Some((resolved, decl)) => {
                let decl = decl.clone();
                if !member {
                    *function = resolved;
                }
                let t = self.resolve_overload(id, &decl, &arg_types, member);
                self.types.insert(id, t);
            }
            None => {
                let msg = format!(
                    "undeclared reference to '{}' (in container '{}')",
                    fname.trim_start_matches('.'),
                    self.env.container
                );
                self.error(id, msg);
                self.types.insert(id, Type::Error);
            }
        }
    }

    fn lookup_function(&self, name: &str) -> Option<(String, &FunctionDecl)> {
        for cand in self.env.candidate_names(name) {
            if let Some(d) = self.env.functions.get(&cand) {
                return Some((cand, d));
            }
        }
        None
    }

    fn resolve_overload(
        &mut self,
        id: ExprId,
        decl: &FunctionDecl,
        args: &[Type],
        member: bool,
    ) -> Type {
        let mut result: Option<Type> = None;
        let mut matched = Vec::new();
        for ov in &decl.overloads {
            if ov.member != member || ov.params.len() != args.len() {
                continue;
            }
            // Instantiate the overload's type parameters with fresh variables.
            let mut subst: HashMap<String, Type> = HashMap::new();
            for tp in &ov.type_params {
                let v = self.new_var();
                subst.insert(tp.clone(), v);
            }
            let inst = |t: &Type| t.map_params(&mut |n| subst.get(n).cloned());
            let params: Vec<Type> = ov.params.iter().map(inst).collect();
            let res = inst(&ov.result);
            let saved = self.mapping.clone();
            let ok = args
                .iter()
                .zip(params.iter())
                .all(|(a, p)| self.assignable_raw(a, p));
            if !ok {
                self.mapping = saved;
                continue;
            }
            let rt = self.substitute(&res, false);
            matched.push(ov.id.clone());
            result = Some(match result {
                None => rt,
                Some(prev) if prev == Type::Dyn || prev == rt => prev,
                Some(_) => Type::Dyn,
            });
        }
        if !matched.is_empty() {
            self.overloads.insert(id, matched);
        }
        match result {
            Some(t) => t,
            None => {
                if args.contains(&Type::Error) {
                    return Type::Error;
                }
                let fmt: Vec<String> = args
                    .iter()
                    .map(|a| self.substitute(a, false).to_string())
                    .collect();
                let sig = if member && !fmt.is_empty() {
                    format!("{}.({})", fmt[0], fmt[1..].join(", "))
                } else {
                    format!("({})", fmt.join(", "))
                };
                self.error(
                    id,
                    format!(
                        "found no matching overload for '{}' applied to '{}'",
                        decl.name, sig
                    ),
                );
                Type::Error
            }
        }
    }

    fn check_comprehension(&mut self, e: &mut Expr) {
        let id = e.id;
        let ExprKind::Comprehension(c) = &mut e.kind else {
            return;
        };
        self.check(&mut c.iter_range);
        self.check(&mut c.accu_init);
        let accu_t = self.get(&c.accu_init);
        let range_t = self.substitute(&self.get(&c.iter_range), false);
        let (v1, v2) = match &range_t {
            Type::List(el) => {
                if c.iter_var2.is_some() {
                    (Type::Int, (**el).clone())
                } else {
                    ((**el).clone(), Type::Dyn)
                }
            }
            Type::Map(k, v) => ((**k).clone(), (**v).clone()),
            Type::TypeParam(_) => {
                self.assignable(&Type::Dyn, &range_t);
                (Type::Dyn, Type::Dyn)
            }
            t if t.is_dyn_or_error() => (Type::Dyn, Type::Dyn),
            t => {
                let msg = format!(
                    "expression of type '{t}' cannot be range of a comprehension (must be list, map, or dynamic)"
                );
                let rid = c.iter_range.id;
                self.error(rid, msg);
                (Type::Dyn, Type::Dyn)
            }
        };
        self.scopes.push((c.accu_var.clone(), accu_t.clone()));
        let mark = self.scopes.len();
        self.scopes.push((c.iter_var.clone(), v1));
        if let Some(v) = &c.iter_var2 {
            self.scopes.push((v.clone(), v2));
        }
        self.check(&mut c.loop_condition);
        let ct = self.get(&c.loop_condition);
        self.assert_type(c.loop_condition.id, &Type::Bool, &ct);
        self.check(&mut c.loop_step);
        let st = self.get(&c.loop_step);
        self.assert_type(c.loop_step.id, &accu_t, &st);
        self.scopes.truncate(mark);
        self.check(&mut c.result);
        self.scopes.pop();
        let rt = self.get(&c.result);
        let rt = self.substitute(&rt, false);
        self.types.insert(id, rt);
    }

    fn assert_type(&mut self, id: ExprId, want: &Type, got: &Type) {
        if !self.assignable(want, got) {
            let (w, g) = (self.substitute(want, false), self.substitute(got, false));
            self.error(id, format!("expected type '{w}' but found '{g}'"));
        }
    }

    /// Joins element types of an aggregate literal: the more general type, or dyn.
    fn join(&mut self, prev: Option<Type>, cur: Type) -> Type {
        match prev {
            None => cur,
            Some(p) => {
                let saved = self.mapping.clone();
                if self.assignable_raw(&p, &cur) {
                    most_general(&p, &cur)
                } else {
                    self.mapping = saved;
                    Type::Dyn
                }
            }
        }
    }

    /// Whether `got` can be used where `want` is expected, committing substitutions only on
    /// success.
    fn assignable(&mut self, want: &Type, got: &Type) -> bool {
        let saved = self.mapping.clone();
        if self.assignable_raw(got, want) {
            true
        } else {
            self.mapping = saved;
            false
        }
    }

    /// cel-go `internalIsAssignable(m, t1, t2)`: t1 (an argument) assignable to t2.
    fn assignable_raw(&mut self, t1: &Type, t2: &Type) -> bool {
        if let Type::TypeParam(_) = t2 {
            let (valid, has_sub) = self.valid_substitution(t1, t2);
            if valid {
                return true;
            }
            if has_sub {
                return false;
            }
        }
        if let Type::TypeParam(_) = t1 {
            return self.valid_substitution(t2, t1).0;
        }
        if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
            return true;
        }
        if *t1 == Type::Null {
            return nullable(t2) || *t2 == Type::Null;
        }
        if *t2 == Type::Null {
            return nullable(t1);
        }
        match (t1, t2) {
            (Type::List(a), Type::List(b)) => self.assignable_raw(a, b),
            (Type::Map(k1, v1), Type::Map(k2, v2)) => {
                self.assignable_raw(k1, k2) && self.assignable_raw(v1, v2)
            }
            (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
                n1 == n2
                    && p1.len() == p2.len()
                    && p1
                        .iter()
                        .zip(p2.iter())
                        .all(|(a, b)| self.assignable_raw(a, b))
            }
            (Type::Type(_), Type::Type(_)) => true,
            _ => t1 == t2,
        }
    }

    /// cel-go `isValidTypeSubstitution(m, t1, t2)` with t2 a type parameter.
    fn valid_substitution(&mut self, t1: &Type, t2: &Type) -> (bool, bool) {
        if t1 == t2 {
            return (true, true);
        }
        let Type::TypeParam(name) = t2 else {
            return (false, false);
        };
        if let Some(sub) = self.mapping.get(name).cloned() {
            if *t1 == sub {
                return (true, true);
            }
            if self.assignable_raw(t1, &sub) {
                let general = most_general(t1, &sub);
                if !self.references(name, &general) {
                    self.mapping.insert(name.clone(), general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if !self.references(name, t1) {
            self.mapping.insert(name.clone(), t1.clone());
            return (true, false);
        }
        (false, false)
    }

    /// Whether type parameter `name` occurs in `t` after substitution (occurs check).
    fn references(&self, name: &str, t: &Type) -> bool {
        let t = self.substitute(t, false);
        t.mentions(name)
    }

    fn substitute(&self, t: &Type, to_dyn: bool) -> Type {
        self.substitute_depth(t, to_dyn, 0)
    }

    fn substitute_depth(&self, t: &Type, to_dyn: bool, depth: u32) -> Type {
        if depth > 64 {
            return Type::Dyn;
        }
        t.map_params(&mut |n| match self.mapping.get(n) {
            Some(s) => Some(self.substitute_depth(s, to_dyn, depth + 1)),
            None if to_dyn => Some(Type::Dyn),
            None => None,
        })
    }
}

fn nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Object(_) | Type::Any | Type::Timestamp | Type::Duration | Type::Opaque(..)
    ) || matches!(t, Type::Opaque(n, _) if n == "optional_type")
}

/// cel-go `mostGeneral`: dyn and type parameters are more general than anything.
fn most_general(a: &Type, b: &Type) -> Type {
    if less_specific(a, b) {
        a.clone()
    } else {
        b.clone()
    }
}

fn less_specific(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Dyn | Type::TypeParam(_), _) => true,
        (_, Type::Dyn | Type::TypeParam(_)) => false,
        // null joins with any nullable type as that type.
        (a, Type::Null) if nullable(a) => true,
        (Type::List(x), Type::List(y)) => less_specific(x, y),
        (Type::Map(k1, v1), Type::Map(k2, v2)) => less_specific(k1, k2) && less_specific(v1, v2),
        (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1.iter().zip(p2.iter()).all(|(x, y)| less_specific(x, y))
        }
        (Type::Type(_), Type::Type(_)) => true,
        _ => a == b,
    }
}

/// cel-go's `string.format` validator: a literal format string applied to a list literal is
/// parsed at compile time, and each clause's argument checked against the clause by its
/// static type (`dyn` passes), with the messages evaluation would give; extra arguments are an
/// error too. Errors are placed at the offending argument, or else at the call.
fn format_issues(e: &Expr, types: &HashMap<ExprId, Type>, out: &mut Vec<(ExprId, String)>) {
    stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || {
        if let ExprKind::Call {
            target: Some(t),
            function,
            args,
        } = &e.kind
        {
            if let (ExprKind::Literal(Literal::String(f)), [list]) = (&t.kind, args.as_slice()) {
                if let ExprKind::List { elements, .. } = &list.kind {
                    if function == "format" {
                        if let Err((id, msg)) = check_format(f, elements, types) {
                            out.push((id.unwrap_or(e.id), msg));
                        }
                    }
                }
            }
        }
        for c in e.children() {
            format_issues(c, types, out);
        }
    })
}

/// cel-go's `parseFormatStringV2` with the checker's clause callbacks
/// (`stringFormatCheckerV2`): `Err((expr, message))`, the expression being the argument (or the
/// element of a list or map literal) at fault, else the call.
fn check_format(
    f: &str,
    args: &[Expr],
    types: &HashMap<ExprId, Type>,
) -> Result<(), (Option<ExprId>, String)> {
    use crate::format::{parse_clause, Clause};
    let b = f.as_bytes();
    let at_call = |m: String| (None, m);
    let (mut i, mut next) = (0, 0);
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        // The checker's argument fetch never fails: the end of the string is found first.
        if i + 1 >= b.len() {
            return Err(at_call("unexpected end of string".into()));
        }
        let Some(arg) = args.get(next) else {
            return Err(at_call(format!("index {next} out of range")));
        };
        let (clause, len) = parse_clause(&b[i + 1..])
            .map_err(|m| at_call(format!("could not parse formatting clause: {m}")))?;
        i += 1 + len;
        next += 1;
        let bad = |id: ExprId, t: &Type| {
            (
                Some(id),
                format!(
                    "error during formatting: {}",
                    clause.error(&t.runtime_name())
                ),
            )
        };
        if clause == Clause::String {
            check_string_clause(arg, types).map_err(|(id, t)| bad(id, &t))?;
        } else {
            let t = static_type(arg, types);
            if !clause.allows(&t) {
                return Err(bad(arg.id, &t));
            }
        }
    }
    if args.len() > next {
        return Err(at_call(format!(
            "too many arguments supplied to string.format (expected {next}, got {})",
            args.len()
        )));
    }
    Ok(())
}

fn static_type(e: &Expr, types: &HashMap<ExprId, Type>) -> Type {
    types.get(&e.id).cloned().unwrap_or(Type::Dyn)
}

/// `%s`: a printable type, and so the members of list and map literals (keys and values).
fn check_string_clause(e: &Expr, types: &HashMap<ExprId, Type>) -> Result<(), (ExprId, Type)> {
    let t = static_type(e, types);
    if !crate::format::string_clause_allows(&t) {
        return Err((e.id, t));
    }
    if matches!(e.kind, ExprKind::List { .. } | ExprKind::Map { .. }) {
        for c in e.children() {
            stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || check_string_clause(c, types))?;
        }
    }
    Ok(())
}
