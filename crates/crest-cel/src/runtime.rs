//! What libraries share with the evaluator: its error value and cel-go's runtime cost
//! constants (re-exported from [`crate::eval`]).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    pub message: String,
    /// The cost budget ran out: never absorbed by `&&`/`||`, ends evaluation.
    pub cancelled: bool,
}

impl EvalError {
    pub fn new(message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into(),
            cancelled: false,
        }
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

/// cel-go's runtime cost constants.
pub mod costs {
    pub const SELECT_AND_IDENT: u64 = 1;
    pub const CALL: u64 = 1;
    pub const LIST_CREATE: u64 = 10;
    pub const MAP_CREATE: u64 = 30;
    pub const STRUCT_CREATE: u64 = 40;
    /// Per unit of size for string/bytes/list traversals (cel-go 0.1).
    pub const TRAVERSAL_DIVISOR: u64 = 10;
}
