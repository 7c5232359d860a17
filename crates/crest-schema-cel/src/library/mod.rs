//! Kubernetes' CEL libraries as 1.32's base environment enables them for CRD validation rules
//! (apiserver `pkg/cel/environment/base.go`): lists, regex, URLs, quantity, IP, CIDR and format,
//! on top of what `crest_cel::env::Env::standard` holds (the strings extension v2, optionals,
//! sets, two-variable comprehensions), plus semver (1.33, version 1) because the issue asks for
//! it. The cel-go lists extension is not part of 1.32's environment. `cost` prices their calls
//! as upstream's `library.CostEstimator`.

use std::sync::{Arc, OnceLock};

use crest_cel::env::Env;
/// Go's `strconv.Atoi`.
pub(crate) use crest_gofmt::go_atoi;
/// Go's `strconv.Quote`, as the libraries' error messages print values.
pub use crest_gofmt::go_quote;

pub mod cost;
pub mod format;
pub mod ip;
pub mod lists;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod urls;

/// The libraries Kubernetes adds to the CEL standard environment.
pub fn libraries() -> Vec<crest_cel::decls::Library> {
    vec![
        urls::library(),
        regex::library(),
        lists::library(),
        quantity::library(),
        ip::ip_library(),
        ip::cidr_library(),
        format::library(),
        semver::library(),
    ]
}

/// The environment every rule compiles in (before its variables), built once.
pub fn base_env() -> Env {
    static BASE: OnceLock<Env> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut env = Env::standard();
        for lib in libraries() {
            env.add_library(&lib);
        }
        env
    })
    .clone()
}

/// The runtime cost model programs are built with.
pub fn runtime_costs() -> Arc<cost::LibraryCosts> {
    static COSTS: OnceLock<Arc<cost::LibraryCosts>> = OnceLock::new();
    COSTS.get_or_init(|| Arc::new(cost::LibraryCosts)).clone()
}

#[cfg(test)]
mod tests;
