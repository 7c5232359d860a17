//! The official Python client's `DynamicClient` against Crest, through the kubeconfig Crest
//! writes: discovery of a new CRD's resource and subresources, create/get/list/merge patch,
//! `/scale` and `/status`, server-side apply, a watch from a list's resourceVersion, 404 and 409
//! as the client's typed errors, and a built-in kind (`tests/python/dynamic_client.py`; the
//! `kubernetes` package is installed by `.ci/run`). kopf and the client's leader election have
//! their own tests (events.rs, leases.rs).

mod common;

use common::Server;
use std::path::Path;
use std::time::Duration;

#[test]
fn the_python_dynamic_client_works_against_crest() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python");
    let s = Server::start();
    let script = dir.join("dynamic_client.py");
    let (ok, stdout, stderr) = s.run_client(
        "python3",
        &[script.as_os_str(), s.kubeconfig.as_os_str()],
        &dir,
        Duration::from_secs(120),
    );
    assert!(
        ok && stdout.lines().last() == Some("all ok"),
        "the Python client failed (is the kubernetes package installed? .ci/run installs it):\n{stdout}\n{stderr}"
    );
}
