//! Issue 28 items 9 and 14: watch timeouts as upstream's ListResource picks them
//! (`--min-request-timeout`), and the deprecated `watch/` paths, which kube-apiserver 1.32 still
//! serves (`endpoints/installer.go`).

mod common;
use common::watch::*;
use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn create_cm(s: &Server, name: &str) {
    let (code, _, body) = s
        .http(
            "POST",
            CMS,
            &[("Content-Type", "application/json")],
            Some(
                serde_json::to_vec(&json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name}, "data": {"k": "v"}
                }))
                .unwrap(),
            ),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
}

/// Waits for the watch to end; how long it took from `since`, or `None` if it is still open
/// after `within`.
async fn ended_after(w: &mut WatchReader, since: Instant, within: Duration) -> Option<Duration> {
    w.until_end(within).await;
    w.has_ended().then(|| since.elapsed())
}

#[tokio::test]
async fn a_watch_without_a_timeout_ends_between_the_minimum_and_twice_it() {
    let s = Server::start_with(&["--min-request-timeout", "2"]);
    for query in ["watch=1", "watch=1&timeoutSeconds=0"] {
        let opened = Instant::now();
        let mut w = WatchReader::open(&s, &format!("{CMS}?{query}")).await;
        assert_eq!(w.status, 200, "{query}");
        let took = ended_after(&mut w, opened, Duration::from_secs(8))
            .await
            .unwrap_or_else(|| panic!("{query}: the watch is still open after 8 s"));
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_millis(4500),
            "{query}: ended after {took:?}, not in [2 s, 4 s)"
        );
    }
    // A timeoutSeconds of its own is kept.
    let opened = Instant::now();
    let mut w = WatchReader::open(&s, &format!("{CMS}?watch=1&timeoutSeconds=1")).await;
    let took = ended_after(&mut w, opened, Duration::from_secs(5))
        .await
        .expect("timeoutSeconds=1 ends");
    assert!(took < Duration::from_millis(1900), "{took:?}");
}

#[tokio::test]
async fn the_default_minimum_keeps_a_watch_with_timeout_zero_open() {
    let s = Server::start();
    // Upstream's default --min-request-timeout is 1800 s: timeoutSeconds=0 is not "now".
    // (Not the namespace's kube-root-ca.crt: only the test's own ConfigMaps.)
    let mut w = WatchReader::open(
        &s,
        &format!("{CMS}?watch=1&timeoutSeconds=0&fieldSelector=metadata.name!=kube-root-ca.crt"),
    )
    .await;
    assert_eq!(w.status, 200);
    assert!(w.next(Duration::from_secs(2)).await.is_none());
    assert!(!w.has_ended(), "the watch ended at once");
    create_cm(&s, "after").await;
    let ev = w
        .next(Duration::from_secs(5))
        .await
        .expect("the ADDED event");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "after");
}

#[tokio::test]
async fn the_deprecated_watch_paths_are_watches() {
    let s = Server::start();
    create_cm(&s, "a").await;
    create_cm(&s, "b").await;

    // The list of a namespace, of all namespaces, and of one object by name.
    let mut ns = WatchReader::open(
        &s,
        "/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=2",
    )
    .await;
    assert_eq!(ns.status, 200);
    let mut all = WatchReader::open(&s, "/api/v1/watch/configmaps?timeoutSeconds=2").await;
    assert_eq!(all.status, 200);
    let mut one = WatchReader::open(
        &s,
        "/api/v1/watch/namespaces/default/configmaps/b?timeoutSeconds=2",
    )
    .await;
    assert_eq!(one.status, 200);
    let names = |events: &[serde_json::Value]| -> Vec<String> {
        summary(events)
            .into_iter()
            .filter(|(t, n)| t == "ADDED" && n != "kube-root-ca.crt")
            .map(|(_, n)| n)
            .collect()
    };
    let ns_events = ns.until_end(Duration::from_secs(5)).await;
    assert_eq!(names(&ns_events), ["a", "b"]);
    let all_events = all.until_end(Duration::from_secs(5)).await;
    assert!(names(&all_events).contains(&"a".to_string()));
    assert!(names(&all_events).contains(&"b".to_string()));
    let one_events = one.until_end(Duration::from_secs(5)).await;
    assert_eq!(names(&one_events), ["b"]);

    // A cluster-scoped object by name, and a group's path.
    let mut nsw = WatchReader::open(&s, "/api/v1/watch/namespaces/default?timeoutSeconds=1").await;
    assert_eq!(nsw.status, 200);
    assert_eq!(
        names(&nsw.until_end(Duration::from_secs(4)).await),
        ["default"]
    );
    let crds = WatchReader::open(
        &s,
        "/apis/apiextensions.k8s.io/v1/watch/customresourcedefinitions?timeoutSeconds=1",
    )
    .await;
    assert_eq!(crds.status, 200);

    // A field selector must select the name of the path.
    let (code, _, body) = s
        .http(
            "GET",
            "/api/v1/watch/namespaces/default/configmaps/b?fieldSelector=metadata.name%3Da",
            &[],
            None,
        )
        .await;
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "fieldSelector metadata.name doesn't match requested name"
    );
    // Only GET, and no subresources.
    let (code, _, _) = s
        .http(
            "GET",
            "/api/v1/watch/namespaces/default/configmaps/b/status",
            &[],
            None,
        )
        .await;
    assert_eq!(code, 404);
    let (code, _, _) = s
        .http(
            "DELETE",
            "/api/v1/watch/namespaces/default/configmaps/b",
            &[],
            None,
        )
        .await;
    assert_eq!(code, 404);
}
