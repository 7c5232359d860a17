//! Foundation behaviour through kubectl not covered by the seed walkthrough: api-resources,
//! built-in namespaces, deletecollection, and CRD name conflicts.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn api_resources_namespaces_and_deletecollection() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let out = s.kubectl_ok(&["api-resources", "--no-headers"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for want in [
        vec!["namespaces", "ns", "v1", "false", "Namespace"],
        vec![
            "customresourcedefinitions",
            "crd,crds",
            "apiextensions.k8s.io/v1",
            "false",
            "CustomResourceDefinition",
        ],
        vec!["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"],
    ] {
        assert!(rows.contains(&want), "{want:?} missing in:\n{out}");
    }

    let out = s.kubectl_ok(&["get", "namespaces", "-o", "name"]);
    for ns in ["default", "kube-system", "kube-public"] {
        assert!(out.contains(&format!("namespace/{ns}\n")), "{out}");
    }

    for i in 0..3 {
        s.apply_yaml(&MY_CRONTAB.replace("my-new-cron-object", &format!("c{i}")));
    }
    let out = s.kubectl_ok(&["delete", "crontabs", "--all"]);
    assert_eq!(out.lines().count(), 3, "{out}");
    let (ok, out, err) = s.kubectl(&["get", "crontabs"]);
    assert!(ok && out.trim().is_empty(), "{out}{err}");
}

#[test]
fn conflicting_crd_names_are_not_accepted_or_served() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    // Same group, another plural, but the kind and short name the first CRD owns.
    let clash = CRONTAB_CRD
        .replace("crontabs.stable.example.com", "crontabz.stable.example.com")
        .replace("plural: crontabs", "plural: crontabz")
        .replace("singular: crontab", "singular: crontabz");
    s.apply_yaml(&clash);
    let out = s.kubectl_ok(&["get", "crd", "crontabz.stable.example.com", "-o", "json"]);
    let crd: Value = serde_json::from_str(&out).expect("json");
    let cond = |t: &str| {
        crd["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == t))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(cond("NamesAccepted")["status"], "False", "{crd}");
    // Upstream checks plural, singular, short names, kind, then list kind; the last conflict
    // names the reason.
    assert_eq!(cond("NamesAccepted")["reason"], "ListKindConflict", "{crd}");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "", "{crd}");
    assert_ne!(cond("Established")["status"], "True", "{crd}");
    let (ok, _, err) = s.kubectl(&["get", "crontabz"]);
    assert!(!ok, "not served");
    assert!(
        err.contains("the server doesn't have a resource type \"crontabz\""),
        "{err}"
    );
    // The first CRD keeps serving.
    s.apply_yaml(MY_CRONTAB);
    s.kubectl_ok(&["get", "ct", "my-new-cron-object"]);
}

/// Issue 28 item 5: every resource of the discovery lists carries its storageVersionHash
/// (`discovery.StorageVersionHash` of its storage version and kind; subresources none), and a
/// built-in's verbs come sorted as upstream's installer sorts them while a custom resource's
/// keep apiextensions' order. The expected hashes are those a kube-apiserver serves.
#[tokio::test]
async fn discovery_entries_carry_storage_version_hashes_and_upstreams_verb_order() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let find = |list: &serde_json::Value, name: &str| -> serde_json::Value {
        list["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {list}"))
            .clone()
    };
    let get = |path: &'static str| {
        let s = &s;
        async move {
            let (code, _, body) = s.http("GET", path, &[], None).await;
            assert_eq!(code, 200, "{path}");
            serde_json::from_slice::<serde_json::Value>(&body).expect("json")
        }
    };
    let core = get("/api/v1").await;
    for (name, hash) in [
        ("configmaps", "qFsyl6wFWjQ="),
        ("namespaces", "Q3oi5N2YM8M="),
        ("secrets", "S6u1pOWzb84="),
        ("serviceaccounts", "pbx9ZvyFpBE="),
        ("events", "r2yiGXH7wu8="),
    ] {
        assert_eq!(find(&core, name)["storageVersionHash"], hash, "{name}");
    }
    assert!(find(&core, "namespaces/status")
        .get("storageVersionHash")
        .is_none());
    assert_eq!(
        find(&core, "configmaps")["verbs"],
        serde_json::json!([
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch"
        ])
    );
    // events.k8s.io's Events are stored as the core ones.
    let events = get("/apis/events.k8s.io/v1").await;
    assert_eq!(
        find(&events, "events")["storageVersionHash"],
        "r2yiGXH7wu8="
    );
    let rbac = get("/apis/rbac.authorization.k8s.io/v1").await;
    assert_eq!(
        find(&rbac, "clusterroles")["storageVersionHash"],
        "bYE5ZWDrJ44="
    );
    let crds = get("/apis/apiextensions.k8s.io/v1").await;
    assert_eq!(
        find(&crds, "customresourcedefinitions")["storageVersionHash"],
        "M5uH+AlWATY="
    );
    let ct = get("/apis/stable.example.com/v1").await;
    let crontabs = find(&ct, "crontabs");
    assert_eq!(crontabs["storageVersionHash"], "EdX2FP+L0js=");
    assert_eq!(
        crontabs["verbs"],
        serde_json::json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ])
    );
}
