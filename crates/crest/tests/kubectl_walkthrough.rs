//! The seed walkthrough (002: "Create a CustomResourceDefinition", "Create custom objects", CRD
//! deletion) replayed with the real kubectl, compared with the seed's outputs.

mod common;
use common::*;

#[test]
fn seed_walkthrough_with_kubectl() {
    let s = Server::start();
    let out = s.apply_yaml(CRONTAB_CRD);
    assert!(
        out.contains(
            "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created"
        ),
        "{out}"
    );
    s.wait_established("crontabs.stable.example.com");

    let out = s.apply_yaml(MY_CRONTAB);
    assert!(
        out.contains("crontab.stable.example.com/my-new-cron-object created"),
        "{out}"
    );

    // `kubectl get crontab` prints the NAME/AGE table.
    let out = s.kubectl_ok(&["get", "crontab"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["NAME", "AGE"], "{out}");
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(row[0], "my-new-cron-object");
    assert!(row[1].ends_with('s'), "age like 6s: {out}");

    // Plural, singular, short name, any case.
    for name in [
        "crontabs",
        "crontab",
        "ct",
        "CronTab",
        "CRONTABS",
        "crontabs.stable.example.com",
    ] {
        let out = s.kubectl_ok(&["get", name, "-o", "name"]);
        assert_eq!(
            out.trim(),
            "crontab.stable.example.com/my-new-cron-object",
            "{name}"
        );
    }

    // `kubectl get ct -o yaml` has the seed's fields.
    let out = s.kubectl_ok(&["get", "ct", "-o", "yaml"]);
    let v: serde_json::Value = serde_yaml_ng::from_str(&out).expect("yaml");
    assert_eq!(v["kind"], "List");
    let item = &v["items"][0];
    assert_eq!(item["apiVersion"], "stable.example.com/v1");
    assert_eq!(item["kind"], "CronTab");
    assert_eq!(item["spec"]["cronSpec"], "* * * * */5");
    assert_eq!(item["spec"]["image"], "my-awesome-cron-image");
    let md = &item["metadata"];
    assert_eq!(md["name"], "my-new-cron-object");
    assert_eq!(md["namespace"], "default");
    assert_eq!(md["generation"], 1);
    assert!(md["uid"].as_str().is_some_and(|u| u.len() == 36), "{md}");
    assert!(
        md["resourceVersion"]
            .as_str()
            .is_some_and(|r| r.parse::<u64>().is_ok()),
        "{md}"
    );
    let ts = md["creationTimestamp"].as_str().expect("creationTimestamp");
    assert!(ts.ends_with('Z') && ts.len() == 20, "RFC 3339: {ts}");
    let last_applied = md["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .expect("annotation");
    assert!(
        last_applied.contains("\"cronSpec\":\"* * * * */5\""),
        "{last_applied}"
    );

    // Deleting the CRD removes the API and its objects.
    let (ok, out, err) = s.kubectl_stdin(&["delete", "-f", "-"], Some(CRONTAB_CRD));
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(
            "customresourcedefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" deleted"
        ),
        "{out}"
    );
    // kubectl still knows the resource from its discovery cache, so it asks and gets the 404
    // (kubectl 1.32 words the seed's message as below).
    let (ok, _, err) = s.kubectl(&["get", "crontabs"]);
    assert!(!ok);
    assert!(
        err.contains(r#"Error from server (NotFound): Unable to list "stable.example.com/v1, Resource=crontabs": the server could not find the requested resource"#),
        "{err}"
    );
    let (ok, out, _) = s.kubectl(&["get", "crd", "-o", "name"]);
    assert!(ok && out.trim().is_empty(), "{out}");

    // Re-creating it starts empty.
    s.install_crd(CRONTAB_CRD);
    let (ok, out, err) = s.kubectl(&["get", "crontabs"]);
    assert!(ok, "{err}");
    assert!(out.trim().is_empty(), "{out}");
    assert!(
        err.contains("No resources found in default namespace."),
        "{err}"
    );
}
