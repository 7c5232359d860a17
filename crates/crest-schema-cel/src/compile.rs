//! Compiling one schema node's `x-kubernetes-validations` (apiextensions `schema/cel`
//! `Compile`): each rule is parsed and type-checked with `self` (and `oldSelf`, an optional when
//! `optionalOldSelf` is set) bound to the node's type, must be a bool, and gets a static cost;
//! a `messageExpression` must be a string; a `fieldPath` is normalized for error reporting.

use std::sync::Arc;

use crest_cel::ast::{Expr, ExprKind, Literal, SourceInfo};
use crest_cel::checker::CheckedAst;
use crest_cel::cost::estimate_cost;
use crest_cel::env::Env;
use crest_cel::errors::{Issue, Issues};
use crest_cel::eval::Program;
use crest_cel::types::Type;
use crest_schema::Structural;
use serde_json::Value as Json;

use crate::model::{max_cardinality, DeclType, SizeEstimator, Types};

/// One entry of `x-kubernetes-validations`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rule {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

impl Rule {
    /// The rules of a node (`x-kubernetes-validations` as kept by the structural schema).
    pub fn list(s: &Structural) -> Vec<Rule> {
        let Some(Json::Array(items)) = &s.extensions.x_validations else {
            return vec![];
        };
        items.iter().map(Rule::from_json).collect()
    }

    fn from_json(v: &Json) -> Rule {
        let s = |k: &str| {
            v.get(k)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Rule {
            rule: s("rule"),
            message: s("message"),
            message_expression: s("messageExpression"),
            reason: v.get("reason").and_then(Json::as_str).map(str::to_string),
            field_path: s("fieldPath"),
            optional_old_self: v.get("optionalOldSelf").and_then(Json::as_bool),
        }
    }

    /// Go's `%#v` of the internal `apiextensions.ValidationRule`, as upstream prints the
    /// offending rule in CRD validation errors.
    pub fn go_repr(&self) -> String {
        let q = crest_gofmt::go_quote;
        let reason = match &self.reason {
            None => "(*apiextensions.FieldValueErrorReason)(nil)".to_string(),
            Some(_) => "(*apiextensions.FieldValueErrorReason)(0xc000010000)".to_string(),
        };
        let old = match self.optional_old_self {
            None => "(*bool)(nil)".to_string(),
            Some(_) => "(*bool)(0xc000010008)".to_string(),
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{old}}}",
            q(&self.rule),
            q(&self.message),
            q(&self.message_expression),
            q(&self.field_path),
        )
    }
}

/// What upstream's `apiservercel.Error` distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Invalid,
    Required,
    Internal,
}

#[derive(Debug, Clone)]
pub struct CompileError {
    pub kind: ErrorKind,
    pub detail: String,
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

/// The result of compiling one rule.
#[derive(Clone)]
pub struct CompiledRule {
    pub rule: Rule,
    /// None when the rule is empty or did not compile.
    pub program: Option<Program>,
    pub error: Option<CompileError>,
    pub uses_old_self: bool,
    /// Static worst-case cost of one evaluation.
    pub max_cost: u64,
    /// How often the node may occur when it is under unbounded lists or maps.
    pub max_cardinality: u64,
    pub message_expression: Option<Program>,
    pub message_expression_error: Option<CompileError>,
    pub message_expression_max_cost: u64,
    /// `fieldPath` as a field path relative to the node (`spec.x`, `m[key]`).
    pub normalized_field_path: Option<String>,
}

/// Per-call runtime cost limit (apiserver `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The environment rules of a node compile in.
pub struct NodeEnv {
    env: Env,
    optional_env: Env,
    estimator: SizeEstimator,
    max_cardinality: u64,
}

impl NodeEnv {
    pub fn new(types: Arc<Types>, decl: Arc<DeclType>) -> NodeEnv {
        let self_type = decl.cel_type();
        let mut env = crate::library::base_env();
        env.provider = Some(types);
        env.add_variable("self", self_type.clone());
        let mut optional_env = env.clone();
        env.add_variable("oldSelf", self_type.clone());
        optional_env.add_variable("oldSelf", Type::optional(self_type));
        NodeEnv {
            env,
            optional_env,
            max_cardinality: max_cardinality(decl.min_serialized_size),
            estimator: SizeEstimator { root: decl },
        }
    }

    pub fn compile(&self, rule: &Rule, s: &Structural) -> CompiledRule {
        let mut out = CompiledRule {
            rule: rule.clone(),
            program: None,
            error: None,
            uses_old_self: false,
            max_cost: 0,
            max_cardinality: 0,
            message_expression: None,
            message_expression_error: None,
            message_expression_max_cost: 0,
            normalized_field_path: None,
        };
        if rule.rule.trim().is_empty() {
            return out;
        }
        let env = if rule.optional_old_self == Some(true) {
            &self.optional_env
        } else {
            &self.env
        };
        let invalid = |detail: String| {
            Some(CompileError {
                kind: ErrorKind::Invalid,
                detail,
            })
        };
        let checked = match compile_validated(env, &rule.rule) {
            Ok(c) => c,
            Err(issues) => {
                out.error = invalid(format!("compilation failed: {issues}"));
                return out;
            }
        };
        if checked.result_type() != Type::Bool {
            out.error = invalid("cel expression must evaluate to a bool".into());
            return out;
        }
        out.uses_old_self = references(&checked.ast.expr, "oldSelf");
        if let Err(e) = instantiate(&checked.ast.expr) {
            out.error = invalid(format!("program instantiation failed: {e}"));
            return out;
        }
        out.max_cost = estimate_cost(&checked, &self.estimator).max;
        out.max_cardinality = self.max_cardinality;
        out.program =
            Some(Program::new(&checked).with_cost_estimator(crate::library::runtime_costs()));
        if !rule.message_expression.is_empty() {
            match compile_validated(env, &rule.message_expression) {
                Err(issues) => {
                    out.message_expression_error =
                        invalid(format!("messageExpression compilation failed: {issues}"));
                    return out;
                }
                Ok(c) if c.result_type() != Type::String => {
                    out.message_expression_error =
                        invalid("messageExpression must evaluate to a string".into());
                    return out;
                }
                Ok(c) => {
                    if let Err(e) = instantiate(&c.ast.expr) {
                        out.message_expression_error =
                            invalid(format!("messageExpression instantiation failed: {e}"));
                        return out;
                    }
                    out.message_expression_max_cost = estimate_cost(&c, &self.estimator).max;
                    out.message_expression =
                        Some(Program::new(&c).with_cost_estimator(crate::library::runtime_costs()));
                }
            }
        }
        if !rule.field_path.is_empty() {
            out.normalized_field_path = valid_field_path(&rule.field_path, s).ok();
        }
        out
    }
}

/// Parses and checks `src`, then runs the AST validators of Kubernetes' base environment
/// that concern regular expressions (cel-go's `ValidateRegexLiterals`, enabled since 1.29):
/// their issues fail the compilation as the checker's do.
fn compile_validated(env: &Env, src: &str) -> Result<CheckedAst, Issues> {
    let checked = env.compile(src)?;
    let mut issues = Issues::new(checked.ast.source.clone());
    regex_literals(&checked.ast.expr, &checked.ast.source, &mut issues);
    if issues.is_empty() {
        Ok(checked)
    } else {
        Err(issues)
    }
}

/// cel-go's `ValidateRegexLiterals`: the first argument of every `matches` call, when it is a
/// literal, must be a valid Go regexp, else "invalid matches argument" at the literal. As
/// upstream, the first argument after the receiver: the pattern of `s.matches(re)`, but the
/// string of the global `matches(s, re)`.
fn regex_literals(e: &Expr, source: &SourceInfo, issues: &mut Issues) {
    if let ExprKind::Call { function, args, .. } = &e.kind {
        if function == "matches" {
            if let Some(arg) = args.first() {
                if let ExprKind::Literal(Literal::String(p)) = &arg.kind {
                    if crest_goregexp::check(p).is_err() {
                        issues.issues.push(Issue {
                            offset: source.position(arg.id),
                            message: "invalid matches argument".into(),
                        });
                    }
                }
            }
        }
    }
    for c in e.children() {
        regex_literals(c, source, issues);
    }
}

/// What building cel-go's program with Kubernetes' options can fail on: regexes of
/// `matches` (`OptOptimize`) and of `find` / `findAll` (`OptimizeRegex` with the library's
/// optimizations) given as string literals are compiled then. The regex is the call's second
/// operand, the receiver counted; the first failure in planning order (operands before the
/// call) is Go's `regexp.Compile` error.
fn instantiate(e: &Expr) -> Result<(), crest_goregexp::Error> {
    for c in e.children() {
        instantiate(c)?;
    }
    if let ExprKind::Call {
        target,
        function,
        args,
    } = &e.kind
    {
        if matches!(function.as_str(), "matches" | "find" | "findAll") {
            let pattern = match target {
                Some(_) => args.first(),
                None => args.get(1),
            };
            if let Some(p) = pattern.and_then(constant_string) {
                crest_goregexp::check(p)?;
            }
        }
    }
    Ok(())
}

/// A string the planner knows as a constant: a literal, or a type conversion of one
/// (`OptOptimize` folds `string('..')` and `dyn('..')` of constants).
fn constant_string(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Literal(Literal::String(s)) => Some(s),
        ExprKind::Call {
            target: None,
            function,
            args,
        } if args.len() == 1 && matches!(function.as_str(), "string" | "dyn") => {
            constant_string(&args[0])
        }
        _ => None,
    }
}

/// Whether identifier `name` occurs in the expression.
fn references(e: &Expr, name: &str) -> bool {
    if let ExprKind::Ident(n) = &e.kind {
        if n == name {
            return true;
        }
    }
    e.children().into_iter().any(|c| references(c, name))
}

/// `cel.ValidFieldPath`: the path as a field path (`a.b`, `m[key]`) if every step names a
/// property or a key of `additionalProperties` of `schema`.
pub fn valid_field_path(json_path: &str, schema: &Structural) -> Result<String, String> {
    let mut path = String::new();
    let mut cur = schema;
    crate::fieldpath::walk(json_path, true, |name| {
        if !cur.properties.is_empty() {
            cur = cur
                .properties
                .get(name)
                .ok_or("does not refer to a valid field")?;
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(name);
        } else if let Some(ap) = cur.generic.additional_properties.as_ref() {
            cur = ap
                .structural
                .as_deref()
                .ok_or("does not refer to a valid field")?;
            path.push('[');
            path.push_str(name);
            path.push(']');
        } else {
            return Err("does not refer to a valid field".into());
        }
        Ok(())
    })?;
    Ok(path)
}
