//! Garbage collection of dependents (ownerReferences), as kube-controller-manager's collector
//! and the API server's deletion finalizers do it: background, foreground and orphan cascades,
//! absent owners, several owners.

mod common;

use common::{wait_until, Server, CRONTAB_CRD};
use std::time::Duration;

fn setup() -> Server {
    let server = Server::start();
    server.install_crd(CRONTAB_CRD);
    server
}

fn create(server: &Server, name: &str) -> String {
    server.apply_yaml(&format!(
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: {name}\nspec:\n  image: x\n"
    ));
    uid(server, name)
}

fn uid(server: &Server, name: &str) -> String {
    server.kubectl_ok(&["get", "crontab", name, "-o", "jsonpath={.metadata.uid}"])
}

/// A dependent of the given owners (name, uid), with optional finalizer and blockOwnerDeletion.
fn create_dependent(
    server: &Server,
    name: &str,
    owners: &[(&str, &str)],
    block: bool,
    finalizer: bool,
) {
    let refs: String = owners
        .iter()
        .map(|(n, u)| {
            format!(
                "  - apiVersion: stable.example.com/v1\n    kind: CronTab\n    name: {n}\n    uid: {u}\n    blockOwnerDeletion: {block}\n"
            )
        })
        .collect();
    let fin = if finalizer {
        "  finalizers:\n  - example.com/hold\n"
    } else {
        ""
    };
    server.apply_yaml(&format!(
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: {name}\n{fin}  ownerReferences:\n{refs}spec:\n  image: x\n"
    ));
}

fn exists(server: &Server, name: &str) -> bool {
    let (ok, _, err) = server.kubectl(&["get", "crontab", name, "-o", "name"]);
    assert!(ok || err.contains("NotFound"), "kubectl get failed: {err}");
    ok
}

fn wait_gone(server: &Server, name: &str) {
    wait_until(&format!("{name} was not garbage collected"), || {
        !exists(server, name)
    });
}

fn jsonpath(server: &Server, name: &str, path: &str) -> String {
    server.kubectl_ok(&["get", "crontab", name, "-o", &format!("jsonpath={path}")])
}

#[test]
fn background_deletion_collects_dependents() {
    let server = setup();
    let owner = create(&server, "owner");
    create_dependent(&server, "child", &[("owner", &owner)], false, false);
    create(&server, "bystander");
    server.kubectl_ok(&["delete", "crontab", "owner"]);
    wait_gone(&server, "child");
    assert!(exists(&server, "bystander"));
}

#[test]
fn foreground_deletion_waits_for_blocking_dependents() {
    let server = setup();
    let owner = create(&server, "owner");
    create_dependent(&server, "child", &[("owner", &owner)], true, true);
    server.kubectl_ok(&[
        "delete",
        "crontab",
        "owner",
        "--cascade=foreground",
        "--wait=false",
    ]);
    // The owner stays, marked, while its blocking dependent is being deleted.
    wait_until("the dependent was not deleted", || {
        !jsonpath(&server, "child", "{.metadata.deletionTimestamp}").is_empty()
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        jsonpath(&server, "owner", "{.metadata.finalizers}"),
        r#"["foregroundDeletion"]"#
    );
    assert!(!jsonpath(&server, "owner", "{.metadata.deletionTimestamp}").is_empty());
    // The dependent's own finalizer holds it; releasing it lets the chain finish.
    server.kubectl_ok(&[
        "patch",
        "crontab",
        "child",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    wait_gone(&server, "child");
    wait_gone(&server, "owner");
}

#[test]
fn foreground_deletion_of_a_chain_goes_bottom_up() {
    let server = setup();
    let owner = create(&server, "owner");
    create_dependent(&server, "child", &[("owner", &owner)], true, false);
    let child = uid(&server, "child");
    create_dependent(&server, "grandchild", &[("child", &child)], true, false);
    // kubectl waits until the owner is gone, which needs the whole chain gone first.
    server.kubectl_ok(&["delete", "crontab", "owner", "--cascade=foreground"]);
    assert!(!exists(&server, "owner"));
    wait_gone(&server, "child");
    wait_gone(&server, "grandchild");
}

#[test]
fn orphan_deletion_keeps_dependents_without_the_reference() {
    let server = setup();
    let owner = create(&server, "owner");
    let other = create(&server, "other");
    create_dependent(
        &server,
        "child",
        &[("owner", &owner), ("other", &other)],
        false,
        false,
    );
    server.kubectl_ok(&["delete", "crontab", "owner", "--cascade=orphan"]);
    assert!(!exists(&server, "owner"));
    assert_eq!(
        jsonpath(&server, "child", "{.metadata.ownerReferences[*].name}"),
        "other"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(exists(&server, "child"), "an orphaned dependent stays");
}

#[test]
fn dependents_of_absent_owners_are_collected_and_other_owners_keep_them() {
    let server = setup();
    // An owner reference to a uid that does not exist under that name.
    create(&server, "impostor");
    create_dependent(
        &server,
        "orphaned",
        &[("impostor", "00000000-0000-0000-0000-000000000000")],
        false,
        false,
    );
    wait_gone(&server, "orphaned");

    let a = create(&server, "a");
    let b = create(&server, "b");
    create_dependent(&server, "shared", &[("a", &a), ("b", &b)], false, false);
    server.kubectl_ok(&["delete", "crontab", "a"]);
    wait_until("the reference to the deleted owner was not removed", || {
        jsonpath(&server, "shared", "{.metadata.ownerReferences[*].name}") == "b"
    });
    assert!(exists(&server, "shared"), "a remaining owner keeps it");
    server.kubectl_ok(&["delete", "crontab", "b"]);
    wait_gone(&server, "shared");
}

#[tokio::test]
async fn delete_options_set_the_deletion_finalizers() {
    let server = tokio::task::spawn_blocking(|| {
        let server = setup();
        create(&server, "owner");
        server
    })
    .await
    .expect("setup");
    let path = "/apis/stable.example.com/v1/namespaces/default/crontabs/owner";
    // A dry run changes nothing.
    let body = serde_json::json!({"propagationPolicy": "Foreground", "dryRun": ["All"]});
    let (code, obj) = server
        .http_json("DELETE", path, "application/json", Some(&body))
        .await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(
        obj["metadata"]["finalizers"],
        serde_json::json!(["foregroundDeletion"])
    );
    let (_, stored) = server
        .http_json("GET", path, "application/json", None)
        .await;
    assert!(stored["metadata"].get("finalizers").is_none(), "{stored}");

    let body = serde_json::json!({"propagationPolicy": "Orphan"});
    let (code, obj) = server
        .http_json("DELETE", path, "application/json", Some(&body))
        .await;
    assert_eq!(code, 200, "{obj}");
    assert_eq!(obj["metadata"]["finalizers"], serde_json::json!(["orphan"]));
    assert!(obj["metadata"]["deletionTimestamp"].is_string(), "{obj}");
    // The collector has no dependents to orphan: it drops the finalizer and the object goes.
    server.wait_gone(path).await;
}

/// Makes `name` a dependent of `owner` with a blocking reference (kubectl patch).
fn add_blocking_owner(server: &Server, name: &str, owner: &str) {
    let uid = uid(server, owner);
    server.kubectl_ok(&[
        "patch",
        "crontab",
        name,
        "--type=merge",
        "-p",
        &format!(
            r#"{{"metadata":{{"ownerReferences":[{{"apiVersion":"stable.example.com/v1","kind":"CronTab","name":"{owner}","uid":"{uid}","blockOwnerDeletion":true}}]}}}}"#
        ),
    ]);
}

#[test]
fn foreground_deletion_of_cycles_and_self_references_finishes() {
    let server = setup();
    // a <-> b, c1 -> c2 -> c3 -> c1, and s owning itself, all with blocking references: each
    // foreground deletion would otherwise wait for itself forever.
    for n in ["a", "b", "c1", "c2", "c3", "s", "bystander"] {
        create(&server, n);
    }
    add_blocking_owner(&server, "b", "a");
    add_blocking_owner(&server, "a", "b");
    add_blocking_owner(&server, "c2", "c1");
    add_blocking_owner(&server, "c3", "c2");
    add_blocking_owner(&server, "c1", "c3");
    add_blocking_owner(&server, "s", "s");
    for n in ["a", "c1", "s"] {
        server.kubectl_ok(&[
            "delete",
            "crontab",
            n,
            "--cascade=foreground",
            "--wait=false",
        ]);
    }
    for n in ["a", "b", "c1", "c2", "c3", "s"] {
        wait_gone(&server, n);
    }
    assert!(exists(&server, "bystander"));
}
