//! crest-cel: the Common Expression Language (CEL) for Crest, with no Kubernetes knowledge.
//!
//! - [`parser`]: source text -> [`ast::Ast`] (macros expanded, positions kept), with cel-go's
//!   syntax error wording and limits. Hand-written rather than the `cel` crate's ANTLR
//!   parser: see the module docs.
//! - [`checker`]: static types and overload resolution against an [`env::Env`] (standard
//!   library, optionals, strings extension; message types through [`types::TypeProvider`]),
//!   with cel-go's error messages.
//! - [`eval`]: evaluation with CEL's error/absorption semantics and a runtime cost budget.
//! - [`cost`]: static cost estimation from size estimates.
//!
//! ```
//! use crest_cel::{env::Env, eval::{Program, EmptyActivation}, value::Value};
//! let checked = Env::standard().compile("[1, 2, 3].all(x, x > 0)").unwrap();
//! let v = Program::new(&checked).eval(&EmptyActivation).unwrap();
//! assert_eq!(v, Value::Bool(true));
//! ```

pub mod ast;
pub mod checker;
pub mod cost;
pub mod decls;
pub mod env;
pub mod errors;
pub mod eval;
mod lexer;
pub mod parser;
pub mod stdlib;
pub mod types;
pub mod value;
