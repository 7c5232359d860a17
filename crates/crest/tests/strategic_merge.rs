//! Strategic merge patches of built-in kinds follow the published patch strategies: lists with
//! the merge strategy are merged (by merge key, or as sets of scalars), with upstream's
//! directives, instead of being replaced as a JSON merge patch would.

mod common;
use common::*;
use serde_json::{json, Value};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const SMP: &str = "application/strategic-merge-patch+json";

fn owner(name: &str, uid: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid})
}

/// Creates a ConfigMap to own others (the garbage collector removes dependents of missing
/// owners); returns its uid.
async fn owner_cm(s: &Server, name: &str) -> String {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    let (code, body) = s
        .http_json("POST", CMS, "application/json", Some(&cm))
        .await;
    assert_eq!(code, 201, "{body}");
    body["metadata"]["uid"].as_str().expect("uid").to_string()
}

#[tokio::test]
async fn merge_lists_merge_and_directives_apply() {
    let s = Server::start();
    let (u1, u2, u3) = (
        owner_cm(&s, "one").await,
        owner_cm(&s, "two").await,
        owner_cm(&s, "three").await,
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "smp", "finalizers": ["example.com/a"], "ownerReferences": [owner("one", &u1)],
    }, "data": {"k": "v"}});
    let (code, body) = s
        .http_json("POST", CMS, "application/json", Some(&cm))
        .await;
    assert_eq!(code, 201, "{body}");
    let path = format!("{CMS}/smp");

    // ownerReferences merge by uid: a second owner joins the first.
    let patch = json!({"metadata": {"ownerReferences": [owner("two", &u2)]}});
    let (code, body) = s.http_json("PATCH", &path, SMP, Some(&patch)).await;
    assert_eq!(code, 200, "{body}");
    let uids: Vec<&str> = body["metadata"]["ownerReferences"]
        .as_array()
        .expect("owners")
        .iter()
        .filter_map(|o| o["uid"].as_str())
        .collect();
    assert_eq!(uids, [u2.as_str(), u1.as_str()], "{body}");

    // `$patch: delete` removes an element by its merge key.
    let patch = json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": u2}]}});
    let (code, body) = s.http_json("PATCH", &path, SMP, Some(&patch)).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["metadata"]["ownerReferences"],
        json!([owner("one", &u1)])
    );

    // A JSON merge patch of the same list replaces it.
    let patch = json!({"metadata": {"ownerReferences": [owner("three", &u3)]}});
    let (code, body) = s
        .http_json("PATCH", &path, "application/merge-patch+json", Some(&patch))
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["metadata"]["ownerReferences"],
        json!([owner("three", &u3)])
    );

    // finalizers merge as a set through kubectl; the parallel deletion list removes.
    s.kubectl_ok(&[
        "patch",
        "cm",
        "smp",
        "--type=strategic",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/b","example.com/a"]}}"#,
    ]);
    let out = s.kubectl_ok(&["get", "cm", "smp", "-o", "jsonpath={.metadata.finalizers}"]);
    assert_eq!(out, r#"["example.com/b","example.com/a"]"#);
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "example.com/b"]}});
    let (code, body) = s.http_json("PATCH", &path, SMP, Some(&patch)).await;
    assert_eq!(code, 200, "{body}");
    assert!(body["metadata"].get("finalizers").is_none(), "{body}");

    // An element without its merge key is refused with upstream's message (as a 400).
    let patch = json!({"metadata": {"ownerReferences": [{"name": "x"}]}});
    let (code, body) = s.http_json("PATCH", &path, SMP, Some(&patch)).await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "map: map[name:x] does not contain declared merge key: uid"
    );
    let patch = json!({"data": {"$patch": "bogus"}});
    let (code, body) = s.http_json("PATCH", &path, SMP, Some(&patch)).await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "unknown patch type: bogus in map: map[$patch:bogus]"
    );
}
