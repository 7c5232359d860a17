//! The result of type checking, beside the AST it annotates (re-exported from
//! [`crate::checker`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::ast::{Ast, ExprId};
use crate::decls::Functions;
use crate::provider::TypeProvider;
use crate::types::Type;

/// A type-checked expression: the rewritten tree and the type of every node.
#[derive(Clone)]
pub struct CheckedAst {
    pub ast: Ast,
    pub types: HashMap<ExprId, Type>,
    /// For each call, the ids of the overloads its argument types may select (cel-go's
    /// reference map); more than one means the choice is made at run time.
    pub overloads: HashMap<ExprId, Vec<String>>,
    /// The declarations the expression was checked against (implementations for programs).
    pub functions: Arc<Functions>,
    /// The message types it was checked against (field defaults and construction at run time).
    pub provider: Option<Arc<dyn TypeProvider>>,
}

impl std::fmt::Debug for CheckedAst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedAst")
            .field("ast", &self.ast)
            .field("types", &self.types)
            .field("overloads", &self.overloads)
            .finish()
    }
}

impl CheckedAst {
    /// The type of the whole expression.
    pub fn result_type(&self) -> Type {
        self.types
            .get(&self.ast.expr.id)
            .cloned()
            .unwrap_or(Type::Dyn)
    }
}
