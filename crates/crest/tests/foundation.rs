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
