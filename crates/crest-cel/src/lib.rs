//! crest-cel: the Common Expression Language (CEL) for Crest, with no Kubernetes knowledge.
//!
//! - [`parser`]: source text -> [`ast::Ast`] (macros expanded, positions kept), with cel-go's
//!   syntax error wording and limits. Hand-written rather than the `cel` crate's ANTLR
//!   parser: see the module docs.
//! - [`checker`]: static types and overload resolution against an [`env::Env`] (standard
//!   library, optionals, strings extension; message types through [`provider::TypeProvider`]),
//!   with cel-go's error messages; like cel-go's strings extension validator, a literal
//!   `format` string applied to a list literal is checked at compile time (clauses, argument
//!   count and each argument's static type).
//! - [`eval`]: evaluation with CEL's error/absorption semantics and a runtime cost budget.
//! - [`cost`]: static cost estimation from size estimates.
//! - [`decls`]: function declarations and the extension API: a [`decls::Library`] of
//!   [`decls::Overload`]s (signature, implementation, static and runtime cost), added with
//!   [`env::Env::add_library`]; values of extension types are [`value::OpaqueValue`]s.
//! - [`ext`]: cel-go's extension libraries. [`env::Env::standard`] has sets and lists
//!   (`slice`, `flatten`, `distinct`, `reverse`, `sort`, `sortBy`, `lists.range`): the issue
//!   asks for the lists functions in Kubernetes' environment, so they are there although
//!   Kubernetes 1.32 does not enable cel-go's lists extension; [`env::Env::bare`] has neither.
//!
//! ```
//! use crest_cel::{env::Env, eval::{Program, EmptyActivation}, value::Value};
//! let checked = Env::standard().compile("[1, 2, 3].all(x, x > 0)").unwrap();
//! let v = Program::new(&checked).eval(&EmptyActivation).unwrap();
//! assert_eq!(v, Value::Bool(true));
//! ```
//!
//! A host library with a typed variable, a member overload with a type parameter, and cost
//! functions for the static estimate and the runtime budget:
//!
//! ```
//! use crest_cel::cost::{estimate_cost, CostEstimate, NoSizes, SizeEstimate};
//! use crest_cel::decls::{CallEstimate, Library, Overload};
//! use crest_cel::{env::Env, eval::Program, types::Type, value::Value};
//!
//! let lib = Library::new("example.lists")
//!     .function("second", [Overload::member(
//!         "list_second",
//!         vec![Type::list(Type::param("T"))],
//!         Type::param("T"),
//!     )
//!     .implement(|args| match args {
//!         [Value::List(l)] if l.len() > 1 => Ok(l[1].clone()),
//!         _ => Err(crest_cel::eval::EvalError::new("no second element")),
//!     })
//!     .estimate(|_| CallEstimate { cost: CostEstimate::fixed(2), result_size: None })
//!     .runtime_cost(|_, _| 2)])
//!     .variable("xs", Type::list(Type::Int));
//! let env = Env::standard().with_library(&lib);
//! let checked = env.compile("xs.second() + 1").unwrap();
//! assert_eq!(checked.result_type(), Type::Int);
//! assert_eq!(estimate_cost(&checked, &NoSizes), CostEstimate::fixed(4));
//! let act = [("xs", Value::list(vec![Value::Int(1), Value::Int(2)]))];
//! let run = Program::new(&checked).eval_with_limit(&act, Some(100));
//! assert_eq!(run.result.unwrap(), Value::Int(3));
//! assert_eq!(run.cost, 4);
//! ```

pub mod ast;
mod checked;
pub mod checker;
mod compile;
pub mod cost;
pub mod decls;
pub mod env;
pub mod errors;
mod estimate;
pub mod eval;
pub mod ext;
pub mod format;
mod lexer;
pub mod parser;
pub mod provider;
mod runtime;
pub mod stdlib;
pub mod types;
pub mod value;
