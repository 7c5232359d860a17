//! Events: core/v1 and events.k8s.io/v1 as two views of the same stored objects (conversion on
//! writes, reads, lists, watches, tables and patches), upstream's validation per request
//! version, printEvent, field selectors of both views, `kubectl describe` of a custom resource
//! showing its Events, expiry after `--event-ttl`, garbage collection, and a real kopf operator
//! recording an Event.

mod common;
use common::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CORE: &str = "/api/v1/namespaces/default/events";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

/// A core/v1 Event about `kind`/`name` in default (legacy style: no eventTime).
fn core_event(name: &str, kind: &str, about: &str, reason: &str, message: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
           "involvedObject": {"apiVersion": "stable.example.com/v1", "kind": kind, "name": about, "namespace": "default"},
           "reason": reason, "message": message, "type": "Normal",
           "source": {"component": "tester"},
           "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z", "count": 1})
}

/// An events.k8s.io/v1 Event (new style: eventTime and the reporting fields).
fn new_event(name: &str, about: &str) -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
           "eventTime": "2024-05-01T10:00:00.123456Z", "reportingController": "example.com/ctl",
           "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal",
           "note": "synced it", "regarding": {"kind": "ConfigMap", "name": about, "namespace": "default"}})
}

fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn both_views_read_and_write_the_same_events() {
    let s = Server::start();
    // Written as core/v1, read as events.k8s.io/v1.
    let (code, v) = s
        .http_json(
            "POST",
            CORE,
            JSON,
            Some(&core_event("legacy", "CronTab", "a", "Made", "made it")),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    // Go's encoding of the core type: zero timestamps as null, reporting fields as "".
    assert_eq!(v["eventTime"], Value::Null, "{v}");
    assert_eq!(v["reportingComponent"], "", "{v}");
    let (code, v) = s
        .http_json("GET", &format!("{EVENTS}/legacy"), JSON, None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["apiVersion"], "events.k8s.io/v1");
    assert_eq!(v["regarding"]["name"], "a");
    assert_eq!(v["note"], "made it");
    assert_eq!(v["deprecatedSource"]["component"], "tester");
    assert_eq!(v["deprecatedCount"], 1);
    assert_eq!(v["deprecatedFirstTimestamp"], "2024-01-01T00:00:00Z");
    for core_only in [
        "involvedObject",
        "message",
        "source",
        "count",
        "firstTimestamp",
    ] {
        assert!(v.get(core_only).is_none(), "{core_only} in {v}");
    }

    // Written as events.k8s.io/v1, read as core/v1.
    let (code, v) = s
        .http_json("POST", EVENTS, JSON, Some(&new_event("modern", "cm1")))
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["apiVersion"], "events.k8s.io/v1");
    assert_eq!(v["note"], "synced it");
    let (code, v) = s
        .http_json("GET", &format!("{CORE}/modern"), JSON, None)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["apiVersion"], "v1");
    assert_eq!(v["involvedObject"]["name"], "cm1");
    assert_eq!(v["message"], "synced it");
    assert_eq!(v["reportingComponent"], "example.com/ctl");
    assert_eq!(v["reportingInstance"], "ctl-1");
    assert!(
        v.get("note").is_none() && v.get("regarding").is_none(),
        "{v}"
    );

    // Lists of each view convert every item.
    let (_, list) = s.http_json("GET", EVENTS, JSON, None).await;
    assert_eq!(list["kind"], "EventList");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{list}");
    assert!(items
        .iter()
        .all(|i| i["apiVersion"] == "events.k8s.io/v1" && i.get("regarding").is_some()));
    let (_, list) = s.http_json("GET", CORE, JSON, None).await;
    assert!(list["items"]
        .as_array()
        .expect("items")
        .iter()
        .all(|i| i.get("involvedObject").is_some()));

    // A merge patch through events.k8s.io names its fields; the core view sees the change.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{EVENTS}/legacy"),
            MERGE,
            Some(&json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["regarding"]["name"], "a", "{v}");
    // Under events.k8s.io/v1 an Event's fields are immutable (ValidateEventUpdate).
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{EVENTS}/modern"),
            MERGE,
            Some(&json!({"note": "changed"})),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "Event.events.k8s.io \"modern\" is invalid: message: Invalid value: \"changed\": field is immutable"
    );
    // core/v1 keeps the legacy rules: the message may change.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CORE}/modern"),
            MERGE,
            Some(&json!({"message": "changed"})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    let (_, v) = s
        .http_json("GET", &format!("{EVENTS}/modern"), JSON, None)
        .await;
    assert_eq!(v["note"], "changed");

    // A watch of the events.k8s.io view sends converted objects.
    let (code, _, body) = s
        .http(
            "GET",
            &format!("{EVENTS}?watch=1&resourceVersion=0&timeoutSeconds=1"),
            &[],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let text = String::from_utf8_lossy(&body);
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("watch event"))
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    for e in &events {
        assert_eq!(e["type"], "ADDED");
        assert_eq!(e["object"]["apiVersion"], "events.k8s.io/v1");
        assert!(e["object"].get("regarding").is_some(), "{e}");
    }

    // Deletion through one view removes the object from both.
    let (code, _) = s
        .http_json("DELETE", &format!("{EVENTS}/legacy"), JSON, None)
        .await;
    assert_eq!(code, 200);
    let (code, _) = s
        .http_json("GET", &format!("{CORE}/legacy"), JSON, None)
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn kubectl_prints_events_of_both_views() {
    let s = Server::start();
    for (name, about, reason) in [("e1", "alpha", "Made"), ("e2", "beta", "Broke")] {
        let (code, v) = s
            .http_json(
                "POST",
                CORE,
                JSON,
                Some(&core_event(
                    name,
                    "CronTab",
                    about,
                    reason,
                    &format!("  {about} msg  "),
                )),
            )
            .await;
        assert_eq!(code, 201, "{v}");
    }
    let out = s.kubectl_ok(&["get", "ev"]);
    let r = rows(&out);
    assert_eq!(
        r[0],
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    assert_eq!(
        r[1][1..],
        ["Normal", "Made", "crontab/alpha", "alpha msg"],
        "{out}"
    );
    assert!(r[1][0].ends_with('d') || r[1][0].ends_with('y'), "{out}");
    let out = s.kubectl_ok(&["get", "events", "-o", "wide"]);
    let r = rows(&out);
    assert_eq!(
        r[0],
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME"
        ],
        "{out}"
    );
    // Subobject is empty: kubectl prints nothing there.
    assert_eq!(
        r[2][1..5],
        ["Normal", "Broke", "crontab/beta", "tester"],
        "{out}"
    );
    assert_eq!(r[2][7..], ["1", "e2"], "{out}");
    // The events.k8s.io view prints the same columns.
    let out = s.kubectl_ok(&["get", "events.v1.events.k8s.io"]);
    let r = rows(&out);
    assert_eq!(
        r[0],
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    assert_eq!(
        r[1][1..],
        ["Normal", "Made", "crontab/alpha", "alpha msg"],
        "{out}"
    );
    // A new-style event: Last Seen from eventTime, count 1, source from the reporting fields.
    let (code, v) = s
        .http_json("POST", EVENTS, JSON, Some(&new_event("e3", "cm")))
        .await;
    assert_eq!(code, 201, "{v}");
    let out = s.kubectl_ok(&["get", "ev", "e3", "-o", "wide"]);
    let r = rows(&out);
    assert_eq!(
        r[1][1..5],
        ["Normal", "Synced", "configmap/cm", "example.com/ctl, ctl-1"],
        "{out}"
    );
    assert_eq!(r[1][7..], ["1", "e3"], "{out}");

    // Discovery: both have the short name ev (upstream serves both with the one event REST).
    let out = s.kubectl_ok(&["api-resources"]);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        lines.contains(&vec!["events", "ev", "v1", "true", "Event"]),
        "{out}"
    );
    assert!(
        lines.contains(&vec!["events", "ev", "events.k8s.io/v1", "true", "Event"]),
        "{out}"
    );
    let out = s.kubectl_ok(&["explain", "events.note", "--api-version=events.k8s.io/v1"]);
    assert!(
        out.contains("note is a human-readable description"),
        "{out}"
    );
}

#[tokio::test]
async fn field_selectors_of_both_views() {
    let s = Server::start();
    for e in [
        core_event("a1", "CronTab", "alpha", "Made", "m"),
        core_event("b1", "CronTab", "beta", "Broke", "m"),
    ] {
        let (code, v) = s.http_json("POST", CORE, JSON, Some(&e)).await;
        assert_eq!(code, 201, "{v}");
    }
    let (code, v) = s
        .http_json("POST", EVENTS, JSON, Some(&new_event("n1", "alpha")))
        .await;
    assert_eq!(code, 201, "{v}");
    let names = |path: String| {
        let s = &s;
        async move {
            let (code, v) = s.http_json("GET", &path, JSON, None).await;
            assert_eq!(code, 200, "{path}: {v}");
            let mut n: Vec<String> = v["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
                .collect();
            n.sort();
            n
        }
    };
    let core = |sel: &str| format!("{CORE}?fieldSelector={}", urlencode(sel));
    let events = |sel: &str| format!("{EVENTS}?fieldSelector={}", urlencode(sel));
    assert_eq!(names(core("involvedObject.name=alpha")).await, ["a1", "n1"]);
    assert_eq!(
        names(core("involvedObject.kind=CronTab,reason=Broke")).await,
        ["b1"]
    );
    assert_eq!(
        names(core("type=Normal,involvedObject.name!=alpha")).await,
        ["b1"]
    );
    // source: source.component, else the reporting controller.
    assert_eq!(names(core("source=tester")).await, ["a1", "b1"]);
    assert_eq!(names(core("source=example.com/ctl")).await, ["n1"]);
    assert_eq!(
        names(core("reportingComponent=example.com/ctl")).await,
        ["n1"]
    );
    assert_eq!(names(core("metadata.name=b1")).await, ["b1"]);
    // events.k8s.io names the same fields its own way.
    assert_eq!(names(events("regarding.name=alpha")).await, ["a1", "n1"]);
    assert_eq!(names(events("regarding.kind=ConfigMap")).await, ["n1"]);
    assert_eq!(
        names(events("reportingController=example.com/ctl")).await,
        ["n1"]
    );
    assert_eq!(names(events("source=tester,reason=Made")).await, ["a1"]);
    // Each view refuses the other's labels, as upstream's conversions do.
    let (code, v) = s
        .http_json("GET", &events("involvedObject.name=alpha"), JSON, None)
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "field label not supported: involvedObject.name"
    );
    let (code, v) = s
        .http_json("GET", &core("regarding.name=alpha"), JSON, None)
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["message"], "field label not supported: regarding.name");
    // A watch selects the same way (on the stored object) and sends the view's objects.
    let (code, _, body) = s
        .http(
            "GET",
            &format!(
                "{}&watch=1&resourceVersion=0&timeoutSeconds=1",
                events("regarding.name=alpha")
            ),
            &[],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let text = String::from_utf8_lossy(&body);
    let mut watched: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("watch event"))
        .map(|e| {
            assert!(e["object"].get("regarding").is_some(), "{e}");
            e["object"]["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    watched.sort();
    assert_eq!(watched, ["a1", "n1"], "{text}");
    // kubectl with a field selector; deletecollection selects the same way.
    let out = s.kubectl_ok(&[
        "get",
        "ev",
        "--field-selector",
        "involvedObject.name=beta",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "event/b1");
    s.kubectl_ok(&[
        "delete",
        "events.events.k8s.io",
        "--field-selector",
        "regarding.name=alpha",
    ]);
    assert_eq!(names(CORE.to_string()).await, ["b1"]);
}

fn urlencode(s: &str) -> String {
    s.replace('%', "%25")
        .replace('=', "%3D")
        .replace(',', "%2C")
        .replace('/', "%2F")
        .replace('!', "%21")
}

#[tokio::test]
async fn validation_follows_the_request_version() {
    let s = Server::start();
    // core/v1 legacy rules: the involved object's namespace must match.
    let mut e = core_event("wrong-ns", "CronTab", "x", "R", "m");
    e["involvedObject"]["namespace"] = "other".into();
    let (code, v) = s.http_json("POST", CORE, JSON, Some(&e)).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "Event \"wrong-ns\" is invalid: involvedObject.namespace: Invalid value: \"other\": does not match event.namespace"
    );
    assert_eq!(
        v["details"]["causes"][0]["field"],
        "involvedObject.namespace"
    );
    // A new-style core/v1 Event (eventTime set) needs the reporting fields, named as the
    // internal type names them.
    let e = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "half"},
                   "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                   "eventTime": "2024-05-01T10:00:00.000000Z", "reason": "R"});
    let (code, v) = s.http_json("POST", CORE, JSON, Some(&e)).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "Event \"half\" is invalid: [reportingController: Required value, reportingController: Invalid value: \"\": name part must be non-empty, reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), reportingInstance: Required value, action: Required value]"
    );
    // events.k8s.io/v1 is strict.
    let mut e = new_event("strict", "cm");
    e["type"] = "Odd".into();
    e["deprecatedCount"] = 4.into();
    e["series"] = json!({"count": 1, "lastObservedTime": "2024-05-01T10:00:00.000000Z"});
    let (code, v) = s.http_json("POST", EVENTS, JSON, Some(&e)).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "Event.events.k8s.io \"strict\" is invalid: [series.count: Invalid value: \"\": should be at least 2, type: Invalid value: \"\": has invalid value: Odd, count: Invalid value: \"\": needs to be unset]"
    );
    let mut e = new_event("no-time", "cm");
    e.as_object_mut().expect("object").remove("eventTime");
    let (code, v) = s.http_json("POST", EVENTS, JSON, Some(&e)).await;
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("eventTime: Required value"),
        "{v}"
    );
    // Typed decoding: a core/v1 field is unknown to events.k8s.io/v1 (Strict: 400).
    let mut e = new_event("typed", "cm");
    e["message"] = "core's field".into();
    let (code, v) = s
        .http_json(
            "POST",
            &format!("{EVENTS}?fieldValidation=Strict"),
            JSON,
            Some(&e),
        )
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "Event in version \"v1\" cannot be handled as a Event: strict decoding error: unknown field \"message\""
    );
    // Through kubectl: Strict (its default) refuses an unknown field, Warn drops it with a
    // warning, Ignore silently.
    let yaml = |name: &str| {
        format!(
            "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: {name}\neventTime: \"2024-05-01T10:00:00.000000Z\"\nreportingController: example.com/ctl\nreportingInstance: i\naction: Sync\nreason: Synced\ntype: Normal\nregarding:\n  kind: ConfigMap\n  name: cm\n  namespace: default\n  bogus: 1\n"
        )
    };
    let (ok, _, err) = s.kubectl_stdin(
        &["create", "--validate=strict", "-f", "-"],
        Some(&yaml("k1")),
    );
    assert!(!ok);
    assert!(
        err.contains("strict decoding error: unknown field \"regarding.bogus\""),
        "{err}"
    );
    let (ok, _, err) =
        s.kubectl_stdin(&["create", "--validate=warn", "-f", "-"], Some(&yaml("k2")));
    assert!(ok, "{err}");
    assert!(err.contains("unknown field \"regarding.bogus\""), "{err}");
    let (ok, _, err) = s.kubectl_stdin(
        &["create", "--validate=false", "-f", "-"],
        Some(&yaml("k3")),
    );
    assert!(ok && err.is_empty(), "{err}");
    let (_, v) = s.http_json("GET", &format!("{CORE}/k2"), JSON, None).await;
    assert_eq!(
        v["involvedObject"],
        json!({"kind": "ConfigMap", "name": "cm", "namespace": "default"})
    );
}

#[tokio::test]
async fn kubectl_describe_shows_the_events_about_a_custom_resource() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    s.apply_yaml(MY_CRONTAB);
    let (_, ct) = s
        .http_json(
            "GET",
            "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object",
            JSON,
            None,
        )
        .await;
    let uid = ct["metadata"]["uid"].as_str().expect("uid").to_string();
    let mut about = core_event(
        "about-it",
        "CronTab",
        "my-new-cron-object",
        "Scheduled",
        "next run soon",
    );
    about["involvedObject"]["uid"] = uid.clone().into();
    let mut other = core_event(
        "about-other",
        "CronTab",
        "another",
        "Elsewhere",
        "not this one",
    );
    other["involvedObject"]["uid"] = "0000".into();
    // A new-style event about it through events.k8s.io, with no source: From is the controller.
    let mut modern = new_event("modern-about-it", "my-new-cron-object");
    modern["regarding"] = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                                 "name": "my-new-cron-object", "namespace": "default", "uid": uid});
    modern["type"] = "Warning".into();
    modern["reason"] = "Lagging".into();
    for (path, e) in [(CORE, &about), (CORE, &other), (EVENTS, &modern)] {
        let (code, v) = s.http_json("POST", path, JSON, Some(e)).await;
        assert_eq!(code, 201, "{v}");
    }
    let out = s.kubectl_ok(&["describe", "crontab", "my-new-cron-object"]);
    let events = out
        .split("Events:")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events section: {out}"));
    let r = rows(events);
    assert_eq!(r[1], ["Type", "Reason", "Age", "From", "Message"], "{out}");
    let reasons: Vec<(&str, &str, &str, &str)> = r[3..]
        .iter()
        .filter(|l| l.len() >= 5)
        .map(|l| (l[0].as_str(), l[1].as_str(), l[3].as_str(), l[4].as_str()))
        .collect();
    assert!(
        reasons.contains(&("Normal", "Scheduled", "tester", "next run soon")),
        "{out}"
    );
    assert!(
        reasons.contains(&("Warning", "Lagging", "example.com/ctl", "synced it")),
        "{out}"
    );
    assert!(!out.contains("Elsewhere"), "{out}");
    // `kubectl events --for` selects on involvedObject kind, apiVersion and name.
    let out = s.kubectl_ok(&["events", "--for", "crontab/my-new-cron-object"]);
    assert!(
        out.contains("Scheduled") && out.contains("Lagging"),
        "{out}"
    );
    assert!(!out.contains("Elsewhere"), "{out}");
}

#[tokio::test]
async fn events_expire_after_the_event_ttl_unless_written_again() {
    let s = Server::start_with(&["--event-ttl", "4s"]);
    for name in ["stale", "renewed"] {
        let (code, v) = s
            .http_json(
                "POST",
                CORE,
                JSON,
                Some(&core_event(name, "CronTab", "x", "R", "m")),
            )
            .await;
        assert_eq!(code, 201, "{v}");
    }
    let start = Instant::now();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    // A write renews the lease: "renewed" now lives until about 6 s.
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{CORE}/renewed"),
            MERGE,
            Some(&json!({"count": 2})),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    s.wait_gone(&format!("{CORE}/stale")).await;
    let gone_after = start.elapsed();
    assert!(
        gone_after >= Duration::from_millis(3900),
        "expired early: {gone_after:?}"
    );
    let (code, v) = s
        .http_json("GET", &format!("{CORE}/renewed"), JSON, None)
        .await;
    assert_eq!(
        code, 200,
        "the renewed event expired with the stale one: {v}"
    );
    s.wait_gone(&format!("{CORE}/renewed")).await;
    assert!(
        start.elapsed() >= Duration::from_millis(5900),
        "{:?}",
        start.elapsed()
    );
    // Other kinds are untouched.
    let (code, _) = s
        .http_json("GET", "/api/v1/namespaces/default", JSON, None)
        .await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn events_found_at_start_expire_from_when_they_were_written() {
    // An Event's lease is granted at its write, which the object does not record: at start,
    // its latest timestamp (creationTimestamp at least) stands for it.
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Server::start_in(dir.path());
    let (code, v) = s
        .http_json(
            "POST",
            CORE,
            JSON,
            Some(&core_event("old", "CronTab", "x", "R", "m")),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    s.stop();
    tokio::time::sleep(Duration::from_millis(3200)).await;
    // Restarted with a 3 s TTL: written over 3 s ago, it goes at once; a new one stays.
    let s = Server::start_in_with(dir.path(), &["--event-ttl", "3s"]);
    let (code, v) = s
        .http_json(
            "POST",
            CORE,
            JSON,
            Some(&core_event("new", "CronTab", "x", "R", "m")),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    s.wait_gone(&format!("{CORE}/old")).await;
    let (code, _) = s.http_json("GET", &format!("{CORE}/new"), JSON, None).await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn an_event_owned_by_a_deleted_object_is_collected() {
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let ct = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                    "metadata": {"name": "owner"}, "spec": {"cronSpec": "* * * * *", "image": "i"}});
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            JSON,
            Some(&ct),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let uid = v["metadata"]["uid"].as_str().expect("uid").to_string();
    let mut e = core_event("owned", "CronTab", "owner", "R", "m");
    e["metadata"]["ownerReferences"] = json!([{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "name": "owner", "uid": uid}]);
    let (code, v) = s.http_json("POST", CORE, JSON, Some(&e)).await;
    assert_eq!(code, 201, "{v}");
    let (code, _) = s
        .http_json(
            "POST",
            CORE,
            JSON,
            Some(&core_event("unowned", "CronTab", "owner", "R", "m")),
        )
        .await;
    assert_eq!(code, 201);
    s.kubectl_ok(&["delete", "crontab", "owner"]);
    s.wait_gone(&format!("{EVENTS}/owned")).await;
    let (code, _) = s
        .http_json("GET", &format!("{CORE}/unowned"), JSON, None)
        .await;
    assert_eq!(code, 200);
    // Events have no garbage collection policy of their own (upstream's Unsupported): a
    // foreground or orphan DELETE sets no finalizer and removes the Event at once.
    for (name, policy) in [("fg", "Foreground"), ("orphan", "Orphan")] {
        let (code, v) = s
            .http_json(
                "POST",
                CORE,
                JSON,
                Some(&core_event(name, "CronTab", "x", "R", "m")),
            )
            .await;
        assert_eq!(code, 201, "{v}");
        let options =
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy});
        let (code, v) = s
            .http_json("DELETE", &format!("{CORE}/{name}"), JSON, Some(&options))
            .await;
        assert_eq!(code, 200, "{v}");
        let (code, v) = s
            .http_json("GET", &format!("{CORE}/{name}"), JSON, None)
            .await;
        assert_eq!(code, 404, "{policy}: {v}");
    }
}

/// kopf's `kopf.info(body, ...)` posts a core/v1 Event about the CronTab; kubectl then lists
/// it and `kubectl describe` shows it. kopf (with the kubernetes client) must be installed:
/// `.ci/run` installs it.
#[tokio::test]
async fn a_kopf_operator_records_events_about_its_crontab() {
    let ok = Command::new("python3")
        .args(["-c", "import kopf, kubernetes"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "kopf is not installed: pip install kopf kubernetes (.ci/run does)"
    );
    // Python's clients want HTTPS with a CA-verified certificate: the default.
    let s = Server::start();
    s.install_crd(CRONTAB_CRD);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kopf_events.py");
    let log = s.dir.join("kopf.log");
    let mut kopf = Command::new("python3")
        .args([
            "-m",
            "kopf",
            "run",
            "--standalone",
            "--namespace",
            "default",
            script,
        ])
        .env("KUBECONFIG", &s.kubeconfig)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("kopf log"))
        .spawn()
        .expect("spawn kopf");
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let guard = Kill(&mut kopf);
    s.apply_yaml(MY_CRONTAB);
    let selector = "involvedObject.name=my-new-cron-object,reason=CronTabSeen";
    let mut out = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.contains("kopf saw my-new-cron-object") {
        assert!(
            Instant::now() < deadline,
            "kopf posted no event within 60s: {out}\nkopf's log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
        out = s
            .kubectl(&["get", "events", "--field-selector", selector])
            .1;
    }
    let r = rows(&out);
    assert_eq!(
        r[0],
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{out}"
    );
    assert_eq!(
        r[1][1..],
        [
            "Normal",
            "CronTabSeen",
            "crontab/my-new-cron-object",
            "kopf saw my-new-cron-object"
        ],
        "{out}"
    );
    let out = s.kubectl_ok(&["describe", "crontab", "my-new-cron-object"]);
    assert!(
        out.contains("CronTabSeen") && out.contains("kopf saw my-new-cron-object"),
        "{out}"
    );
    drop(guard);
}

/// client-go's typed clients configured for protobuf send Events so (core/v1 from the legacy
/// recorder, events.k8s.io/v1 from the new one).
#[tokio::test]
async fn protobuf_event_bodies_of_both_views() {
    use k8s_pb::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
    use k8s_pb::api::events::v1::Event as EventsV1Event;
    use k8s_pb::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
    let s = Server::start();
    let meta = |name: &str| {
        Some(ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        })
    };
    let about = Some(ObjectReference {
        kind: Some("CronTab".into()),
        namespace: Some("default".into()),
        name: Some("x".into()),
        api_version: Some("stable.example.com/v1".into()),
        ..Default::default()
    });
    let at = |seconds: i64| {
        Some(Time {
            seconds: Some(seconds),
            nanos: Some(0),
        })
    };
    let core = CoreEvent {
        metadata: meta("pb-core"),
        involved_object: about.clone(),
        reason: Some("Made".into()),
        message: Some("from protobuf".into()),
        source: Some(EventSource {
            component: Some("pb".into()),
            host: None,
        }),
        first_timestamp: at(1_700_000_000),
        last_timestamp: at(1_700_000_000),
        count: Some(1),
        r#type: Some("Normal".into()),
        ..Default::default()
    };
    let modern = EventsV1Event {
        metadata: meta("pb-events"),
        event_time: Some(MicroTime {
            seconds: Some(1_700_000_000),
            nanos: Some(0),
        }),
        reporting_controller: Some("example.com/ctl".into()),
        reporting_instance: Some("i".into()),
        action: Some("Sync".into()),
        reason: Some("Synced".into()),
        regarding: about,
        note: Some("from protobuf too".into()),
        r#type: Some("Normal".into()),
        ..Default::default()
    };
    let pb = [("Content-Type", "application/vnd.kubernetes.protobuf")];
    let (code, _, body) = s
        .http("POST", CORE, &pb, Some(pb_body("v1", "Event", &core)))
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let (code, _, body) = s
        .http(
            "POST",
            EVENTS,
            &pb,
            Some(pb_body("events.k8s.io/v1", "Event", &modern)),
        )
        .await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    let (_, v) = s
        .http_json("GET", &format!("{EVENTS}/pb-core"), JSON, None)
        .await;
    assert_eq!(v["note"], "from protobuf");
    assert_eq!(v["deprecatedFirstTimestamp"], "2023-11-14T22:13:20Z");
    let (_, v) = s
        .http_json("GET", &format!("{CORE}/pb-events"), JSON, None)
        .await;
    assert_eq!(v["message"], "from protobuf too");
    assert_eq!(v["eventTime"], "2023-11-14T22:13:20.000000Z");
    assert_eq!(v["reportingComponent"], "example.com/ctl");
}

/// Events allow create on update (upstream's AllowCreateOnUpdate): a PUT of an absent Event
/// creates it (201); other kinds answer 404.
#[tokio::test]
async fn put_creates_an_absent_event() {
    let s = Server::start();
    let e = core_event("put-me", "CronTab", "x", "R", "first");
    let (code, v) = s
        .http_json("PUT", &format!("{CORE}/put-me"), JSON, Some(&e))
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["message"], "first");
    let mut e = v.clone();
    e["message"] = "second".into();
    let (code, v) = s
        .http_json("PUT", &format!("{CORE}/put-me"), JSON, Some(&e))
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["message"], "second");
    let n = new_event("put-new", "cm");
    let (code, v) = s
        .http_json("PUT", &format!("{EVENTS}/put-new"), JSON, Some(&n))
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["note"], "synced it");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "absent"}});
    let (code, v) = s
        .http_json(
            "PUT",
            "/api/v1/namespaces/default/configmaps/absent",
            JSON,
            Some(&cm),
        )
        .await;
    assert_eq!(code, 404, "{v}");
}
