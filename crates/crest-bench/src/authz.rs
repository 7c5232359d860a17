//! `authz`: what authorization costs a request. One server with a `--token-auth-file` user
//! whose only access is a RoleBinding (to a ClusterRole granting `get` on CronTabs in
//! `default`) and 1,000 CronTabs; GETs by name from keep-alive connections as the admin
//! (`system:masters`, allowed before RBAC is consulted) and as that user, alternated over
//! rounds, best of each. Then 10,000 RoleBindings (100 namespaces, other users) are created and
//! the user's GETs measured again: the RBAC index looks bindings up by subject, so they should
//! change nothing.

use crate::{create_crd, crontab, load, load_as, start_with, Row, COLLECTION};
use std::path::Path;

const ROUNDS: usize = 2;
const OBJECTS: usize = 1000;
const TOKEN: &str = "bench-user-token-0123456789abcdef";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

pub(crate) async fn authz(binary: &Path, clients: usize, seconds: u64) -> Vec<Row> {
    let tokens = tempfile::tempdir().expect("tempdir");
    let file = tokens.path().join("tokens.csv");
    std::fs::write(&file, format!("{TOKEN},bench-user,bench-uid\n")).expect("token file");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = file.to_string_lossy().to_string();
    let (server, _) = start_with(binary, dir.path(), &["--token-auth-file", &file]);
    let base = server.base.clone();
    let client = crate::client(&base);
    create_crd(&client, &base).await;
    load(&base, clients, 3600, OBJECTS, |i| {
        let body = crontab(&format!("az-{i}"));
        ("POST", COLLECTION.to_string(), Some(body), 201)
    })
    .await;
    post(
        &client,
        &base,
        format!("{RBAC}/clusterroles"),
        r#"{"metadata":{"name":"crontab-reader"},"rules":[{"apiGroups":["stable.example.com"],"resources":["crontabs"],"verbs":["get"]}]}"#.into(),
    )
    .await;
    post(
        &client,
        &base,
        format!("{RBAC}/namespaces/default/rolebindings"),
        r#"{"metadata":{"name":"bench-user"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"crontab-reader"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"bench-user"}]}"#.into(),
    )
    .await;
    let user = format!("Bearer {TOKEN}");
    let gets = |i: usize| ("GET", format!("{COLLECTION}/az-{}", i % OBJECTS), None, 200);
    // Warm-up, and a check that the user is allowed.
    let warm = load_as(&base, Some(&user), clients, 1, usize::MAX, gets).await;
    assert!(warm > 0.0, "the bench user's GETs are refused");
    let (mut admin, mut as_user) = (0f64, 0f64);
    for round in 0..ROUNDS {
        for user_first in [round % 2 == 0, round % 2 != 0] {
            if user_first {
                let r = load_as(&base, Some(&user), clients, seconds, usize::MAX, gets).await;
                as_user = as_user.max(r);
            } else {
                admin = admin.max(load(&base, clients, seconds, usize::MAX, gets).await);
            }
        }
    }
    // 10,000 RoleBindings of other users in 100 other namespaces.
    load(&base, clients, 3600, 100, |i| {
        let body = format!(r#"{{"metadata":{{"name":"bench-ns-{i}"}}}}"#);
        ("POST", "/api/v1/namespaces".to_string(), Some(body), 201)
    })
    .await;
    load(&base, clients, 3600, 10_000, |i| {
        let body = format!(
            r#"{{"metadata":{{"name":"rb-{i}"}},"roleRef":{{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"}},"subjects":[{{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"user-{i}"}},{{"kind":"ServiceAccount","name":"sa-{i}","namespace":"bench-ns-{}"}}]}}"#,
            i % 100
        );
        (
            "POST",
            format!("{RBAC}/namespaces/bench-ns-{}/rolebindings", i % 100),
            Some(body),
            201,
        )
    })
    .await;
    let mut after = 0f64;
    for _ in 0..ROUNDS {
        let r = load_as(&base, Some(&user), clients, seconds, usize::MAX, gets).await;
        after = after.max(r);
    }
    vec![
        (
            format!("GET by name as the admin ({clients} keep-alive HTTPS connections)"),
            format!("{admin:.0} /s"),
            String::new(),
        ),
        (
            "GET by name as a user allowed by a RoleBinding".into(),
            format!(
                "{as_user:.0} /s ({:.0}% of the admin's)",
                as_user / admin * 100.0
            ),
            ">= 90% of the admin's".into(),
        ),
        (
            "the same after 10,000 RoleBindings in other namespaces".into(),
            format!("{after:.0} /s ({:+.1}%)", (after / as_user - 1.0) * 100.0),
            "within 5%".into(),
        ),
    ]
}

async fn post(client: &reqwest::Client, base: &str, path: String, body: String) {
    let r = client
        .post(format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .expect("post");
    assert!(r.status().is_success(), "{path}: {}", r.status());
}
