//! Several Crest replicas on one three-member etcd cluster, sharing a pki dir (issue #18):
//! consistent reads across replicas, resourceVersions, watches and continue tokens valid on
//! every replica, CRDs served by all, and the controllers' leader election (fail-over after
//! kill -9, hand-over at graceful shutdown). Needs Debian's `etcd` (fails if it is missing).

mod common;

use common::replicas::*;
use common::watch::WatchReader;
use common::{Server, CRDS, CRONTAB_CRD, MY_CRONTAB};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// One test at a time: they measure latencies (1 s, 2 s) on a small machine.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// An etcd cluster of three, a shared pki dir, and `n` replicas started one after the other
/// (the first writes the pki files) with `extra` flags.
fn cluster(n: usize, extra: &[&str]) -> (EtcdCluster, tempfile::TempDir, Vec<Server>) {
    let etcd = EtcdCluster::start(3);
    let pki = tempfile::tempdir().expect("tempdir");
    let replicas = (0..n)
        .map(|_| Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), extra))
        .collect();
    (etcd, pki, replicas)
}

#[test]
fn reads_resource_versions_watches_and_continue_tokens_across_replicas() {
    let _serial = serial();
    let started = Instant::now();
    let (_etcd, pki, replicas) = cluster(2, &[]);
    let (a, b) = (&replicas[0], &replicas[1]);
    let c = admin_client(pki.path(), Duration::from_secs(10));
    runtime().block_on(async {
        // A write through one replica is read back through the other at once: GET and LIST,
        // and an update through the other is read back through the first.
        for i in 0..20 {
            let name = format!("cm-{i}");
            let (code, created) = call(
                &c,
                "POST",
                &format!("{}{CMS}", a.base),
                Some(&configmap(&name, i)),
            )
            .await;
            assert_eq!(code, 201, "create through A: {created}");
            let written = rv(&created);
            let (code, got) = call(&c, "GET", &format!("{}{CMS}/{name}", b.base), None).await;
            assert_eq!(
                code, 200,
                "GET through B right after the create through A: {got}"
            );
            assert_eq!(rv(&got), written, "B's GET of {name}: {got}");
            let (code, list) = call(&c, "GET", &format!("{}{CMS}", b.base), None).await;
            assert_eq!(code, 200, "{list}");
            assert!(
                rv(&list) >= written,
                "B's LIST is older than A's write: {list}"
            );
            let item = list["items"]
                .as_array()
                .expect("items")
                .iter()
                .find(|it| it["metadata"]["name"] == name.as_str())
                .unwrap_or_else(|| panic!("B's LIST lacks {name} written through A"));
            assert_eq!(rv(item), written);

            let mut changed = got.clone();
            changed["data"]["value"] = json!((1000 + i).to_string());
            let (code, updated) = call(
                &c,
                "PUT",
                &format!("{}{CMS}/{name}", b.base),
                Some(&changed),
            )
            .await;
            assert_eq!(code, 200, "conditional update through B: {updated}");
            let (code, got) = call(&c, "GET", &format!("{}{CMS}/{name}", a.base), None).await;
            assert_eq!(code, 200, "{got}");
            assert_eq!(rv(&got), rv(&updated), "A's GET after B's update: {got}");
            assert_eq!(value_of(&got), Some(1000 + i));
        }

        // A resourceVersion from A is valid on B: GET and LIST not older than it.
        let (_, last) = call(
            &c,
            "POST",
            &format!("{}{CMS}", a.base),
            Some(&configmap("rv-probe", 1)),
        )
        .await;
        let from_a = rv(&last);
        let (code, got) = call(
            &c,
            "GET",
            &format!("{}{CMS}/rv-probe?resourceVersion={from_a}", b.base),
            None,
        )
        .await;
        assert_eq!(code, 200, "GET ?resourceVersion= from A, on B: {got}");
        assert!(rv(&got) >= from_a);
        let (code, list) = call(
            &c,
            "GET",
            &format!(
                "{}{CMS}?resourceVersion={from_a}&resourceVersionMatch=NotOlderThan",
                b.base
            ),
            None,
        )
        .await;
        assert_eq!(code, 200, "LIST NotOlderThan A's rv, on B: {list}");
        assert!(rv(&list) >= from_a);

        // A watch on B from A's resourceVersion delivers A's later writes, in order.
        let mut watch = WatchReader::open(
            b,
            &format!("{CMS}?watch=1&resourceVersion={from_a}&allowWatchBookmarks=false"),
        )
        .await;
        assert_eq!(watch.status, 200, "watch on B from A's rv");
        let mut expected = vec![];
        let mut current = last.clone();
        for v in 2..5 {
            current["data"]["value"] = json!(v.to_string());
            let (code, updated) = call(
                &c,
                "PUT",
                &format!("{}{CMS}/rv-probe", a.base),
                Some(&current),
            )
            .await;
            assert_eq!(code, 200, "{updated}");
            expected.push(rv(&updated));
            current = updated;
        }
        let mut seen = vec![];
        let deadline = Instant::now() + Duration::from_secs(5);
        while seen.len() < expected.len() && Instant::now() < deadline {
            let Some(ev) = watch.next(Duration::from_millis(500)).await else {
                continue;
            };
            if ev["type"] == "BOOKMARK" {
                continue;
            }
            assert_eq!(ev["type"], "MODIFIED", "unexpected event {ev}");
            seen.push(rv(&ev["object"]));
        }
        assert_eq!(
            seen, expected,
            "the watch on B from A's rv {from_a} must deliver A's three updates in order"
        );

        // Continue tokens: a paged LIST started on A (limit=2) completes on B, alternating.
        let ns = "paged";
        let (code, v) = call(
            &c,
            "POST",
            &format!("{}/api/v1/namespaces", a.base),
            Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        let paged = format!("/api/v1/namespaces/{ns}/configmaps");
        for i in 0..7 {
            let (code, v) = call(
                &c,
                "POST",
                &format!("{}{paged}", a.base),
                Some(&configmap(&format!("p-{i}"), i)),
            )
            .await;
            assert_eq!(code, 201, "{v}");
        }
        let (_, full) = call(&c, "GET", &format!("{}{paged}", a.base), None).await;
        let all: Vec<String> = names(&full);
        assert!(all.len() >= 7, "{full}");
        let mut got: Vec<String> = vec![];
        let mut token = String::new();
        let mut pages = 0;
        let mut on_b = 0;
        loop {
            let server = if pages % 2 == 0 { a } else { b };
            let mut url = format!("{}{paged}?limit=2", server.base);
            if !token.is_empty() {
                url.push_str(&format!("&continue={token}"));
            }
            let (code, page) = call(&c, "GET", &url, None).await;
            assert_eq!(code, 200, "page {pages} from {}: {page}", server.base);
            if pages % 2 == 1 {
                on_b += 1;
            }
            pages += 1;
            got.extend(names(&page));
            token = page["metadata"]["continue"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if token.is_empty() {
                break;
            }
            assert!(pages < 20, "paging does not end");
        }
        assert_eq!(
            got, all,
            "pages from A and B together must be the whole list"
        );
        assert!(
            on_b >= 2,
            "B must have served continue tokens of A ({pages} pages)"
        );
    });
    eprintln!("across replicas: {:?}", started.elapsed());
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|it| it["metadata"]["name"].as_str().expect("name").to_string())
        .collect()
}

fn established(crd: &Value) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    })
}

#[test]
fn a_crd_created_through_one_replica_is_served_by_the_other_within_a_second() {
    let _serial = serial();
    let started = Instant::now();
    let (_etcd, pki, replicas) = cluster(2, &[]);
    let (a, b) = (&replicas[0], &replicas[1]);
    let c = admin_client(pki.path(), Duration::from_secs(10));
    let (ok, out, err) = a.kubectl_stdin(&["apply", "-f", "-"], Some(CRONTAB_CRD));
    assert!(ok, "kubectl apply of the CRD through A: {out}{err}");
    runtime().block_on(async {
        let crd_url = format!("{}{CRDS}/crontabs.stable.example.com", a.base);
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (code, crd) = call(&c, "GET", &crd_url, None).await;
            assert_eq!(code, 200, "{crd}");
            if established(&crd) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the CRD is not Established after 15 s: {crd}\n{}",
                logs(&[a, b])
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let at = Instant::now();
        // B: discovery, then create and get a CronTab, within a second.
        let ct = format!("{}/apis/stable.example.com/v1/namespaces/default/crontabs", b.base);
        loop {
            let (code, disc) =
                call(&c, "GET", &format!("{}/apis/stable.example.com/v1", b.base), None).await;
            let discovered = code == 200
                && disc["resources"]
                    .as_array()
                    .is_some_and(|rs| rs.iter().any(|r| r["name"] == "crontabs"));
            if discovered {
                let body = json!({
                    "apiVersion": "stable.example.com/v1",
                    "kind": "CronTab",
                    "metadata": {"name": "through-b"},
                    "spec": {"cronSpec": "* * * * */5", "image": "img"},
                });
                let (code, v) = call(&c, "POST", &ct, Some(&body)).await;
                if code == 201 {
                    let (code, v) = call(&c, "GET", &format!("{ct}/through-b"), None).await;
                    assert_eq!(code, 200, "{v}");
                    break;
                }
                assert!(code == 404 || code == 503, "create of a CronTab through B: {code} {v}");
            }
            assert!(
                at.elapsed() < Duration::from_secs(1),
                "B does not serve the CRD 1 s after it became Established (discovery {code}: {disc})\n{}",
                logs(&[a, b])
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        eprintln!("CRD served by B {:?} after it became Established", at.elapsed());
    });
    // kubectl against B.
    b.apply_yaml(MY_CRONTAB);
    let out = b.kubectl_ok(&["get", "crontabs", "-o", "name"]);
    assert!(
        out.contains("crontab.stable.example.com/my-new-cron-object"),
        "{out}"
    );
    assert!(
        out.contains("crontab.stable.example.com/through-b"),
        "{out}"
    );
    let out = a.kubectl_ok(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.image}",
    ]);
    assert_eq!(out, "my-awesome-cron-image");
    eprintln!("CRD across replicas: {:?}", started.elapsed());
}

/// A CRD `<plural>.example.com`, as JSON.
fn crd_json(plural: &str, kind: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    })
}

/// The controllers run on the replica at `base`: a new CRD becomes Established and a namespace
/// deletion completes.
async fn controllers_work(c: &reqwest::Client, base: &str, tag: &str, replicas: &[&Server]) {
    let name = format!("{tag}s");
    let (code, v) = call(
        c,
        "POST",
        &format!("{base}{CRDS}"),
        Some(&crd_json(
            &name,
            &format!("{}{}", tag[..1].to_uppercase(), &tag[1..]),
        )),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let ns = format!("ns-{tag}");
    let (code, v) = call(
        c,
        "POST",
        &format!("{base}/api/v1/namespaces"),
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = call(
        c,
        "POST",
        &format!("{base}/api/v1/namespaces/{ns}/configmaps"),
        Some(&configmap("inside", 1)),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = call(c, "DELETE", &format!("{base}/api/v1/namespaces/{ns}"), None).await;
    assert_eq!(code, 200, "{v}");
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut crd_ok = false;
    let mut ns_gone = false;
    while !(crd_ok && ns_gone) {
        let (_, crd) = call(c, "GET", &format!("{base}{CRDS}/{name}.example.com"), None).await;
        crd_ok = established(&crd);
        let (code, _) = call(c, "GET", &format!("{base}/api/v1/namespaces/{ns}"), None).await;
        ns_gone = code == 404;
        assert!(
            Instant::now() < deadline,
            "controllers after the fail-over: CRD Established {crd_ok}, namespace gone {ns_gone} (15 s)\n{}",
            logs(replicas)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn exactly_one_leader_and_fail_over_after_kill_9() {
    let _serial = serial();
    let started = Instant::now();
    let (_etcd, pki, mut replicas) = cluster(3, FAST_ELECTION);
    let c = admin_client(pki.path(), Duration::from_secs(10));
    let rt = runtime();
    let (leader, holder) = {
        let rs: Vec<&Server> = replicas.iter().collect();
        let (leader, holder) =
            rt.block_on(wait_leader(&c, &rs[0].base, &rs, Duration::from_secs(10)));
        // Exactly one of the three leads, and keeps leading (a few renewals).
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(
            leaders_logged(&rs),
            1,
            "exactly one replica must lead\n{}",
            logs(&rs)
        );
        assert_eq!(
            rt.block_on(lease_holder(&c, &rs[0].base)).as_deref(),
            Some(holder.as_str())
        );
        assert!(rs[leader].log().contains("became leader"));
        (leader, holder)
    };
    let survivor = (leader + 1) % 3;
    replicas[leader].kill9_in_place();
    let killed = Instant::now();
    let base = replicas[survivor].base.clone();
    let rs: Vec<&Server> = replicas.iter().collect();
    rt.block_on(async {
        let new_leader = loop {
            let now = lease_holder(&c, &base).await;
            if now.as_deref().is_some_and(|h| h != holder) {
                let h = now.expect("holder");
                let i = replica_of(&rs, &h);
                assert!(
                    i.is_some_and(|i| i != leader),
                    "new holder {h} is no survivor"
                );
                break i.expect("replica");
            }
            assert!(
                killed.elapsed() < Duration::from_secs(6),
                "no survivor took the Lease over within 6 s of the leader's kill -9 (lease duration 3 s); holder {now:?}\n{}",
                logs(&rs)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let took = killed.elapsed();
        eprintln!("Lease taken over {took:?} after kill -9 of the leader");
        // Exactly one survivor leads.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let leading: Vec<usize> = (0..3)
            .filter(|i| *i != leader && rs[*i].log().contains("became leader"))
            .collect();
        assert_eq!(leading, vec![new_leader], "exactly one survivor must lead\n{}", logs(&rs));
        let base = rs[new_leader].base.clone();
        controllers_work(&c, &base, "widget", &rs).await;
    });
    eprintln!("fail-over after kill -9: {:?}", started.elapsed());
}

#[test]
fn graceful_stop_of_the_leader_hands_over_at_once() {
    let _serial = serial();
    let started = Instant::now();
    // Default lease duration (15 s): a take-over under 2 s shows the Lease was released.
    let (_etcd, pki, mut replicas) = cluster(2, &["--leader-elect-retry-period", "500ms"]);
    let c = admin_client(pki.path(), Duration::from_secs(10));
    let rt = runtime();
    let (leader, holder) = {
        let rs: Vec<&Server> = replicas.iter().collect();
        rt.block_on(wait_leader(&c, &rs[0].base, &rs, Duration::from_secs(10)))
    };
    let other = 1 - leader;
    let base = replicas[other].base.clone();
    replicas[leader].sigterm();
    let stopped = Instant::now();
    let exited = replicas[leader].wait_exit(Duration::from_secs(20));
    let rs: Vec<&Server> = replicas.iter().collect();
    assert!(
        exited,
        "the leader did not exit within 20 s of SIGTERM\n{}",
        logs(&rs)
    );
    rt.block_on(async {
        loop {
            let now = lease_holder(&c, &base).await;
            if now.as_deref().is_some_and(|h| h != holder) {
                assert_eq!(replica_of(&rs, now.as_deref().expect("holder")), Some(other));
                break;
            }
            assert!(
                stopped.elapsed() < Duration::from_secs(2),
                "the other replica did not take over within 2 s of the leader's SIGTERM (Lease holder now {now:?}): was the Lease released?\n{}",
                logs(&rs)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        eprintln!("Lease handed over {:?} after SIGTERM", stopped.elapsed());
        controllers_work(&c, &base, "gadget", &rs).await;
    });
    eprintln!("graceful hand-over: {:?}", started.elapsed());
}
