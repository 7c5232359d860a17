//! What needs the whole engine: the standard environment, with cel-go's extension libraries,
//! and compilation (parse, then check). Defined apart from [`crate::env`], which the checker
//! and the evaluator consult, so that neither depends on itself through `Env`.

use crate::checker::{check, CheckedAst};
use crate::env::Env;
use crate::errors::Issues;

impl Default for Env {
    fn default() -> Self {
        Env::standard()
    }
}

impl Env {
    /// The standard library, optionals, the strings, sets and lists extensions and
    /// two-variable comprehensions (what Kubernetes enables besides its own libraries; the
    /// lists extension as the issue asks, though Kubernetes 1.32 does not enable it yet); no
    /// variables.
    pub fn standard() -> Env {
        Env::bare()
            .with_library(&crate::ext::sets())
            .with_library(&crate::ext::lists())
    }

    /// Parses and type-checks.
    pub fn compile(&self, src: &str) -> Result<CheckedAst, Issues> {
        let ast = self.parse(src)?;
        check(&ast, self)
    }
}
