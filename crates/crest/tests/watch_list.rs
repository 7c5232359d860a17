//! Watch, chunked lists and resourceVersion semantics (the API concepts seed, 004), through raw
//! HTTP and kubectl.

mod common;
use common::watch::*;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const SHORT: Duration = Duration::from_millis(600);

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_string())
        .collect()
}

fn pair(t: &str, n: &str) -> (String, String) {
    (t.to_string(), n.to_string())
}

#[tokio::test]
async fn watch_follows_the_seed_semantics() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    create_namespace(&s, "other").await;
    create_ct(&s, "default", "a", json!({"app": "x"})).await;
    create_ct(&s, "default", "b", json!({"app": "y"})).await;
    let rv0 = list_rv(&s).await;

    // No resourceVersion: synthetic ADDED for the current state, then the changes.
    let mut w = WatchReader::open(&s, &format!("{CT}/namespaces/default/crontabs?watch=1")).await;
    assert_eq!(w.status, 200);
    let mut all = WatchReader::open(
        &s,
        &format!("{CT}/crontabs?watch=true&resourceVersion={rv0}"),
    )
    .await;
    let mut one = WatchReader::open(
        &s,
        &format!("{CT}/namespaces/default/crontabs?watch=1&fieldSelector=metadata.name%3Da&resourceVersion={rv0}"),
    )
    .await;
    let first: Vec<Value> = vec![
        w.next(SHORT * 5).await.expect("ADDED a"),
        w.next(SHORT * 5).await.expect("ADDED b"),
    ];
    assert_eq!(
        summary(&first),
        vec![pair("ADDED", "a"), pair("ADDED", "b")]
    );
    assert!(
        w.next(SHORT).await.is_none(),
        "nothing else before a change"
    );

    let c = create_ct(&s, "default", "c", json!({})).await;
    let a2 = patch_ct(&s, "default", "a", json!({"spec": {"image": "v2"}})).await;
    delete_ct(&s, "default", "b").await;
    create_ct(&s, "other", "d", json!({})).await;

    let mut evs = vec![];
    for _ in 0..3 {
        evs.push(w.next(SHORT * 5).await.expect("event"));
    }
    assert_eq!(
        summary(&evs),
        vec![
            pair("ADDED", "c"),
            pair("MODIFIED", "a"),
            pair("DELETED", "b")
        ]
    );
    assert_eq!(rv_of(&evs[0]["object"]), rv_of(&c));
    assert_eq!(rv_of(&evs[1]["object"]), rv_of(&a2));
    assert_eq!(evs[1]["object"]["spec"]["image"], "v2");
    // A DELETED event carries the deletion's revision, newer than the last write before it.
    assert!(rv_of(&evs[2]["object"]) > rv_of(&a2), "{}", evs[2]);
    assert!(
        w.next(SHORT).await.is_none(),
        "other namespaces are not seen"
    );

    // From N: only later changes, across all namespaces, in order.
    let mut evs = vec![];
    for _ in 0..4 {
        evs.push(all.next(SHORT * 5).await.expect("event"));
    }
    assert_eq!(
        summary(&evs),
        vec![
            pair("ADDED", "c"),
            pair("MODIFIED", "a"),
            pair("DELETED", "b"),
            pair("ADDED", "d")
        ]
    );
    let rvs: Vec<i64> = evs.iter().map(|e| rv_of(&e["object"])).collect();
    assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{rvs:?}");
    // A single object.
    let ev = one.next(SHORT * 5).await.expect("a modified");
    assert_eq!(summary(&[ev]), vec![pair("MODIFIED", "a")]);
    assert!(one.next(SHORT).await.is_none());

    // Replaying from an old revision later gives the same events.
    let mut replay = WatchReader::open(
        &s,
        &format!("{CT}/crontabs?watch=1&resourceVersion={rv0}&timeoutSeconds=1"),
    )
    .await;
    let replayed = replay.until_end(Duration::from_secs(10)).await;
    assert_eq!(summary(&replayed), summary(&evs));

    // timeoutSeconds ends the watch; bookmarks carry only the resourceVersion.
    let started = Instant::now();
    let mut bm = WatchReader::open(
        &s,
        &format!("{CT}/namespaces/default/crontabs?watch=1&resourceVersion={}&allowWatchBookmarks=true&timeoutSeconds=3", rv_of(&evs[3]["object"])),
    )
    .await;
    let got = bm.until_end(Duration::from_secs(15)).await;
    assert!(bm.has_ended(), "timeoutSeconds ends the stream");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["type"], "BOOKMARK");
    assert_eq!(got[0]["object"]["kind"], "CronTab");
    assert_eq!(got[0]["object"]["apiVersion"], "stable.example.com/v1");
    assert!(rv_of(&got[0]["object"]) >= rv_of(&evs[3]["object"]));
    assert!(got[0]["object"].get("spec").is_none());

    // Streaming list: the state, then a bookmark marking the end of the initial events.
    let mut stream = WatchReader::open(
        &s,
        &format!("{CT}/namespaces/default/crontabs?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion="),
    )
    .await;
    assert_eq!(stream.status, 200);
    let mut init = vec![];
    for _ in 0..3 {
        init.push(stream.next(SHORT * 5).await.expect("initial event"));
    }
    assert_eq!(
        summary(&init[..2]),
        vec![pair("ADDED", "a"), pair("ADDED", "c")]
    );
    assert_eq!(init[2]["type"], "BOOKMARK");
    assert_eq!(
        init[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    create_ct(&s, "default", "e", json!({})).await;
    let ev = stream
        .next(SHORT * 5)
        .await
        .expect("change after the bookmark");
    assert_eq!(summary(&[ev]), vec![pair("ADDED", "e")]);

    // Leaving a label selection: DELETED with the previous content at the new revision.
    let mut sel = WatchReader::open(
        &s,
        &format!(
            "{CT}/namespaces/default/crontabs?watch=1&labelSelector=app%3Dx&resourceVersion={}",
            list_rv(&s).await
        ),
    )
    .await;
    let moved = patch_ct(
        &s,
        "default",
        "a",
        json!({"metadata": {"labels": {"app": "z"}}}),
    )
    .await;
    let ev = sel.next(SHORT * 5).await.expect("a leaves the selection");
    assert_eq!(
        summary(std::slice::from_ref(&ev)),
        vec![pair("DELETED", "a")]
    );
    assert_eq!(ev["object"]["metadata"]["labels"]["app"], "x");
    assert_eq!(rv_of(&ev["object"]), rv_of(&moved));

    // Invalid combinations are rejected as kube-apiserver rejects them.
    let (code, v) = get_json(
        &s,
        &format!("{CT}/crontabs?watch=1&resourceVersionMatch=NotOlderThan"),
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    );
    let (code, v) = get_json(&s, &format!("{CT}/crontabs?watch=1&sendInitialEvents=true")).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    );
    s.stop();
}

#[tokio::test]
async fn chunked_lists_are_one_consistent_snapshot() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    let mut want = BTreeSet::new();
    for i in 0..25 {
        let n = format!("ct-{i:02}");
        create_ct(
            &s,
            "default",
            &n,
            json!({"tier": if i % 2 == 0 { "even" } else { "odd" }}),
        )
        .await;
        want.insert(n);
    }
    let base = format!("{CT}/namespaces/default/crontabs");
    let (code, p1) = get_json(&s, &format!("{base}?limit=10")).await;
    assert_eq!(code, 200, "{p1}");
    let r = p1["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    assert_eq!(names(&p1).len(), 10);
    assert_eq!(p1["metadata"]["remainingItemCount"], 15);
    let c1 = p1["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();

    // Writes between pages do not show up in later pages.
    delete_ct(&s, "default", "ct-15").await;
    create_ct(&s, "default", "ct-99", json!({})).await;
    patch_ct(
        &s,
        "default",
        "ct-20",
        json!({"spec": {"image": "changed"}}),
    )
    .await;

    let (code, p2) = get_json(&s, &format!("{base}?limit=10&continue={c1}")).await;
    assert_eq!(code, 200, "{p2}");
    assert_eq!(p2["metadata"]["resourceVersion"], r.as_str());
    assert_eq!(p2["metadata"]["remainingItemCount"], 5);
    let c2 = p2["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let (code, p3) = get_json(&s, &format!("{base}?limit=10&continue={c2}")).await;
    assert_eq!(code, 200, "{p3}");
    assert_eq!(p3["metadata"]["resourceVersion"], r.as_str());
    assert!(
        p3["metadata"].get("continue").is_none_or(|c| c == ""),
        "{}",
        p3["metadata"]
    );
    assert!(p3["metadata"].get("remainingItemCount").is_none());
    let got: BTreeSet<String> = [&p1, &p2, &p3].iter().flat_map(|p| names(p)).collect();
    assert_eq!(got, want);
    let ct20 = p3["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["metadata"]["name"] == "ct-20")
        .expect("ct-20 in the last page");
    assert_eq!(ct20["spec"]["image"], "my-awesome-cron-image");

    // Selectors: no remainingItemCount; pages still fill up to the limit.
    let (code, s1) = get_json(&s, &format!("{base}?limit=5&labelSelector=tier%3Deven")).await;
    assert_eq!(code, 200, "{s1}");
    assert_eq!(names(&s1), ["ct-00", "ct-02", "ct-04", "ct-06", "ct-08"]);
    assert!(s1["metadata"].get("remainingItemCount").is_none());
    assert!(s1["metadata"]["continue"].as_str().is_some());

    // resourceVersion R with resourceVersionMatch=Exact (or a limit and no match): the old state.
    for q in [
        format!("resourceVersion={r}&resourceVersionMatch=Exact"),
        format!("resourceVersion={r}&limit=100"),
    ] {
        let (code, old) = get_json(&s, &format!("{base}?{q}")).await;
        assert_eq!(code, 200, "{q}: {old}");
        assert_eq!(old["metadata"]["resourceVersion"], r.as_str(), "{q}");
        let n: BTreeSet<String> = names(&old).into_iter().collect();
        assert_eq!(n, want, "{q}");
    }
    // NotOlderThan: the current state.
    let (code, now) = get_json(
        &s,
        &format!("{base}?resourceVersion={r}&resourceVersionMatch=NotOlderThan"),
    )
    .await;
    assert_eq!(code, 200, "{now}");
    let n = names(&now);
    assert!(n.contains(&"ct-99".to_string()) && !n.contains(&"ct-15".to_string()));
    // "0": any version, served whole.
    let (code, any) = get_json(&s, &format!("{base}?resourceVersion=0&limit=2")).await;
    assert_eq!(code, 200);
    assert_eq!(names(&any).len(), 25);

    // Errors.
    let (code, v) = get_json(&s, &format!("{base}?limit=10&continue=not-a-token")).await;
    assert_eq!(
        (code, v["reason"].as_str()),
        (400, Some("BadRequest")),
        "{v}"
    );
    let (code, v) = get_json(
        &s,
        &format!("{base}?limit=10&continue={c1}&resourceVersion=5"),
    )
    .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "specifying resource version is not allowed when using continue"
    );
    let (code, v) = get_json(&s, &format!("{base}?resourceVersionMatch=Exact")).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    );
    let (code, v) = get_json(
        &s,
        &format!("{base}?resourceVersion=0&resourceVersionMatch=Exact"),
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
    );
    let (code, v) = get_json(
        &s,
        &format!("{base}?resourceVersion=1&resourceVersionMatch=Newest"),
    )
    .await;
    assert_eq!(code, 422, "{v}");
    assert!(v["message"].as_str().expect("message").ends_with(
        "resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""
    ), "{v}");
    let (code, v) = get_json(&s, &format!("{base}?sendInitialEvents=true")).await;
    assert_eq!(code, 422, "{v}");

    // A resourceVersion the server has not reached: 504 Too large resource version, Retry-After.
    let far = r.parse::<i64>().expect("rv") + 100_000;
    for path in [
        format!("{base}/ct-00?resourceVersion={far}"),
        format!("{base}?resourceVersion={far}"),
    ] {
        let started = Instant::now();
        let (code, headers, body) = s.http("GET", &path, &[], None).await;
        let v: Value = serde_json::from_slice(&body).expect("status");
        assert_eq!(code, 504, "{v}");
        assert_eq!(v["reason"], "Timeout");
        assert!(
            v["message"]
                .as_str()
                .expect("message")
                .starts_with(&format!(
                    "Timeout: Too large resource version: {far}, current: "
                )),
            "{v}"
        );
        assert_eq!(
            v["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
        assert_eq!(
            headers.get("retry-after").map(|h| h.to_str().unwrap_or("")),
            Some("1")
        );
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "waited before giving up"
        );
    }
    // GET with a reachable resourceVersion: not older than it.
    let (code, v) = get_json(&s, &format!("{base}/ct-20?resourceVersion={r}")).await;
    assert_eq!(code, 200);
    assert_eq!(v["spec"]["image"], "changed");
    s.stop();
}

/// With a tiny in-memory history, watches and pages come from storage; once storage has
/// compacted a revision, watches from it get 410 and continue tokens expire.
#[tokio::test]
async fn old_revisions_come_from_storage_until_compacted() {
    let s = Server::start_with(&[
        "--watch-history-capacity",
        "4",
        "--history-retention-seconds",
        "2",
    ]);
    s.apply_yaml(CRONTAB_CRD);
    let first = create_ct(&s, "default", "x-00", json!({})).await;
    for i in 1..12 {
        create_ct(&s, "default", &format!("x-{i:02}"), json!({})).await;
    }
    let base = format!("{CT}/namespaces/default/crontabs");
    let mut w = WatchReader::open(
        &s,
        &format!("{base}?watch=1&resourceVersion={}", rv_of(&first)),
    )
    .await;
    let mut evs = vec![];
    for _ in 0..11 {
        evs.push(w.next(SHORT * 5).await.expect("replayed from storage"));
    }
    let want: Vec<(String, String)> = (1..12)
        .map(|i| pair("ADDED", &format!("x-{i:02}")))
        .collect();
    assert_eq!(summary(&evs), want);
    create_ct(&s, "default", "x-12", json!({})).await;
    let ev = w
        .next(SHORT * 5)
        .await
        .expect("live event after the replay");
    assert_eq!(summary(&[ev]), vec![pair("ADDED", "x-12")]);

    let (code, p1) = get_json(&s, &format!("{base}?limit=5")).await;
    assert_eq!(code, 200);
    let r = p1["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    let c1 = p1["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    for i in 0..8 {
        patch_ct(
            &s,
            "default",
            &format!("x-{i:02}"),
            json!({"spec": {"image": "new"}}),
        )
        .await;
    }
    for i in 10..13 {
        delete_ct(&s, "default", &format!("x-{i:02}")).await;
    }
    // The history no longer reaches back to R: the page comes from storage, still at R.
    let (code, p2) = get_json(&s, &format!("{base}?limit=5&continue={c1}")).await;
    assert_eq!(code, 200, "{p2}");
    assert_eq!(p2["metadata"]["resourceVersion"], r.as_str());
    assert_eq!(names(&p2), ["x-05", "x-06", "x-07", "x-08", "x-09"]);
    assert_eq!(p2["metadata"]["remainingItemCount"], 3);

    // Keep writing until storage compacts past R (retention 2 s).
    let deadline = Instant::now() + Duration::from_secs(30);
    let expired = loop {
        patch_ct(&s, "default", "x-00", json!({"spec": {"replicas": 1}})).await;
        patch_ct(&s, "default", "x-00", json!({"spec": {"replicas": 2}})).await;
        let (code, v) = get_json(&s, &format!("{base}?limit=5&continue={c1}")).await;
        if code == 410 {
            break v;
        }
        assert_eq!(code, 200, "{v}");
        assert!(Instant::now() < deadline, "storage never compacted");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(expired["reason"], "Expired");
    assert!(expired["message"].as_str().expect("message").starts_with(
        "The provided continue parameter is too old to display a consistent list result."
    ));
    // The offered token continues (inconsistently) at the latest revision.
    let next = expired["metadata"]["continue"]
        .as_str()
        .expect("inconsistent continue token");
    let (code, p) = get_json(&s, &format!("{base}?limit=5&continue={next}")).await;
    assert_eq!(code, 200, "{p}");
    assert_eq!(names(&p)[0], "x-05");
    assert!(
        p["metadata"]["resourceVersion"]
            .as_str()
            .expect("rv")
            .parse::<i64>()
            .expect("rv")
            > r.parse::<i64>().expect("rv")
    );

    // A watch from a compacted revision: 200 with one ERROR event (410 Expired).
    let mut w = WatchReader::open(
        &s,
        &format!("{base}?watch=1&resourceVersion={}", rv_of(&first)),
    )
    .await;
    assert_eq!(w.status, 200);
    let ev = w.next(SHORT * 5).await.expect("error event");
    assert_eq!(ev["type"], "ERROR");
    assert_eq!(ev["object"]["code"], 410);
    assert_eq!(ev["object"]["reason"], "Expired");
    assert!(ev["object"]["message"]
        .as_str()
        .expect("message")
        .starts_with("too old resource version: "));
    let (code, v) = get_json(
        &s,
        &format!(
            "{base}?resourceVersion={}&resourceVersionMatch=Exact",
            rv_of(&first)
        ),
    )
    .await;
    assert_eq!(code, 410, "{v}");
    assert_eq!(
        v["message"],
        "The resourceVersion for the provided list is too old."
    );
    s.stop();
}

#[test]
fn kubectl_watch_and_chunked_get() {
    let s = Server::start();
    s.apply_yaml(CRONTAB_CRD);
    for i in 0..7 {
        s.apply_yaml(&format!(
            "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: k-{i}\n  labels:\n    idx: \"{i}\"\nspec:\n  image: img\n"
        ));
    }
    let whole = s.kubectl_ok(&["get", "crontabs", "-o", "name", "--chunk-size=0"]);
    let chunked = s.kubectl_ok(&["get", "crontabs", "-o", "name", "--chunk-size=3"]);
    assert_eq!(whole, chunked);
    assert_eq!(chunked.lines().count(), 7, "{chunked}");
    let sel = s.kubectl_ok(&[
        "get",
        "crontabs",
        "-o",
        "name",
        "-l",
        "idx in (1,3)",
        "--chunk-size=1",
    ]);
    assert_eq!(
        sel.lines().collect::<Vec<_>>(),
        [
            "crontab.stable.example.com/k-1",
            "crontab.stable.example.com/k-3"
        ]
    );
    let one = s.kubectl_ok(&[
        "get",
        "crontabs",
        "-o",
        "name",
        "--field-selector",
        "metadata.name=k-4",
    ]);
    assert_eq!(one.trim(), "crontab.stable.example.com/k-4");

    // `get -w` prints the current rows, then changes; `--watch-only` only the changes.
    let spawn = |args: &[&str]| {
        std::process::Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .arg("--kubeconfig")
            .arg(&s.kubeconfig)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("kubectl")
    };
    let mut watch = spawn(&["get", "crontabs", "-w", "--request-timeout=20s"]);
    let mut only = spawn(&[
        "get",
        "crontabs",
        "--watch-only",
        "-o",
        "name",
        "--request-timeout=20s",
    ]);
    std::thread::sleep(Duration::from_secs(2));
    s.apply_yaml("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: new-one\nspec:\n  image: img\n");
    std::thread::sleep(Duration::from_secs(2));
    let _ = watch.kill();
    let _ = only.kill();
    let out = String::from_utf8(watch.wait_with_output().expect("output").stdout).expect("utf8");
    let out_only =
        String::from_utf8(only.wait_with_output().expect("output").stdout).expect("utf8");
    assert!(out.starts_with("NAME"), "{out}");
    assert!(out.contains("k-0") && out.contains("new-one"), "{out}");
    assert_eq!(
        out_only.trim(),
        "crontab.stable.example.com/new-one",
        "{out_only}"
    );
    s.stop();
}

/// With `--plain-http`, HTTP/2 with prior knowledge (h2c) is served beside HTTP/1.1, watches
/// included (over HTTPS, the default, ALPN offers h2).
#[tokio::test]
async fn http2_prior_knowledge_clients_list_and_watch() {
    let s = Server::start_with(&["--plain-http"]);
    // kubectl sends no credentials over plain HTTP: the CRD goes in as raw HTTP, as the admin.
    let (code, _, body) = s
        .http(
            "POST",
            CRDS,
            &[("Content-Type", "application/yaml")],
            Some(CRONTAB_CRD.as_bytes().to_vec()),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let client = s
        .reqwest_builder()
        .http2_prior_knowledge()
        .build()
        .expect("h2c client");
    let resp = client
        .get(format!("{}{CT}/namespaces/default/crontabs", s.base))
        .send()
        .await
        .expect("h2c list");
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
    assert_eq!(resp.status().as_u16(), 200);
    let mut watch = client
        .get(format!(
            "{}{CT}/namespaces/default/crontabs?watch=1",
            s.base
        ))
        .send()
        .await
        .expect("h2c watch");
    create_ct(&s, "default", "over-h2", json!({})).await;
    let chunk = tokio::time::timeout(Duration::from_secs(5), watch.chunk())
        .await
        .expect("an event in time")
        .expect("chunk")
        .expect("not the end");
    let ev: Value = serde_json::from_slice(&chunk).expect("event JSON");
    assert_eq!(summary(&[ev]), vec![pair("ADDED", "over-h2")]);
    s.stop();
}
