//! The official Kubernetes JavaScript client (`@kubernetes/client-node`, pinned in
//! `tests/js/package.json`) against Crest, through the kubeconfig Crest writes: CRD registration,
//! custom objects (defaulting, pruning, validation errors, patches, `/status`, conflicts),
//! discovery through `KubernetesObjectApi` with server-side apply, a raw watch, an informer and
//! a Lease. The steps are in `tests/js/client.mjs`; `.ci/run` installs Node's packages there
//! (`npm ci`).

mod common;

use common::Server;
use std::path::Path;
use std::time::Duration;

#[test]
fn the_javascript_client_works_against_crest() {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js");
    assert!(
        js.join("node_modules/@kubernetes/client-node").is_dir(),
        "@kubernetes/client-node is not installed: run `npm ci` in {} (.ci/run does)",
        js.display()
    );
    let s = Server::start();
    // Bounded: the script waits at most 10 s per step.
    let script = js.join("client.mjs");
    let (ok, stdout, stderr) =
        s.run_client("node", &[script.as_os_str()], &js, Duration::from_secs(120));
    assert!(
        ok && stdout.lines().last() == Some("all ok"),
        "the JavaScript client failed:\n{stdout}\n{stderr}"
    );
}
