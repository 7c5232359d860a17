//! What the API shows about itself, built from the served resources with no HTTP: discovery
//! documents, OpenAPI documents, the version.

pub(crate) mod discovery;
pub(crate) mod openapi;

use serde_json::{json, Value};

/// The Kubernetes version Crest's API behaves as.
pub(crate) const KUBERNETES_VERSION: &str = "v1.32.0";

pub(crate) fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": KUBERNETES_VERSION,
        "gitCommit": "crest",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": format!("crest-{}", env!("CARGO_PKG_VERSION")),
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if std::env::consts::ARCH == "x86_64" { "amd64" } else { std::env::consts::ARCH }),
    })
}
