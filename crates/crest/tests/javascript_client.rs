//! The official Kubernetes JavaScript client (`@kubernetes/client-node`, pinned in
//! `tests/js/package.json`) against Crest, through the kubeconfig Crest writes: CRD registration,
//! custom objects (defaulting, pruning, validation errors, patches, `/status`, conflicts),
//! discovery through `KubernetesObjectApi` with server-side apply, a raw watch, an informer and
//! a Lease. The steps are in `tests/js/client.mjs`; `.ci/run` installs Node's packages there
//! (`npm ci`).

mod common;

use common::Server;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn the_javascript_client_works_against_crest() {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js");
    assert!(
        js.join("node_modules/@kubernetes/client-node").is_dir(),
        "@kubernetes/client-node is not installed: run `npm ci` in {} (.ci/run does)",
        js.display()
    );
    let s = Server::start();
    let mut child = Command::new("node")
        .arg(js.join("client.mjs"))
        .current_dir(&js)
        .env("KUBECONFIG", &s.kubeconfig)
        // Files, not pipes: a full pipe would stall node until the deadline below.
        .stdout(std::fs::File::create(s.dir.join("node.out")).expect("node.out"))
        .stderr(std::fs::File::create(s.dir.join("node.err")).expect("node.err"))
        .spawn()
        .unwrap_or_else(|e| panic!("node is required for this test: {e}"));
    // Bounded: the script waits at most 10 s per step.
    let t0 = Instant::now();
    while child.try_wait().expect("node").is_none() {
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().expect("node");
    let read = |f: &str| std::fs::read_to_string(s.dir.join(f)).unwrap_or_default();
    let (stdout, stderr) = (read("node.out"), read("node.err"));
    assert!(
        status.success() && stdout.lines().last() == Some("all ok"),
        "the JavaScript client failed ({status}):\n{stdout}\n{stderr}"
    );
}
