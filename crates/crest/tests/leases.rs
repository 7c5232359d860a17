//! coordination.k8s.io/v1 Leases: discovery, the built-in printer (NAME HOLDER AGE), upstream's
//! validation and wording, MicroTime round trips, and leader election through a real client
//! library (the Kubernetes Python client's `kubernetes.leaderelection` with its Lease lock).

mod common;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const JSON: &str = "application/json";

#[tokio::test]
async fn kubectl_discovers_applies_and_prints_leases() {
    let s = Server::start();
    let out = s.kubectl_ok(&["api-resources", "--api-group=coordination.k8s.io"]);
    assert!(
        out.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f == ["leases", "coordination.k8s.io/v1", "true", "Lease"]
        }),
        "{out}"
    );
    // Aggregated discovery lists the group with its resource.
    let (code, _, body) = s
        .http(
            "GET",
            "/apis",
            &[(
                "Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            )],
            None,
        )
        .await;
    assert_eq!(code, 200);
    let d: Value = serde_json::from_slice(&body).expect("json");
    let group = d["items"]
        .as_array()
        .and_then(|g| {
            g.iter()
                .find(|g| g["metadata"]["name"] == "coordination.k8s.io")
        })
        .unwrap_or_else(|| panic!("no coordination.k8s.io in {d}"));
    assert_eq!(group["versions"][0]["version"], "v1", "{group}");
    assert_eq!(
        group["versions"][0]["resources"][0]["resource"], "leases",
        "{group}"
    );
    assert_eq!(
        group["versions"][0]["resources"][0]["scope"], "Namespaced",
        "{group}"
    );

    s.apply_yaml(
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: controller\nspec:\n  holderIdentity: pod-a\n  leaseDurationSeconds: 15\n  acquireTime: \"2024-05-01T10:00:00.000001Z\"\n  renewTime: \"2024-05-01T10:00:05.123456Z\"\n",
    );
    s.apply_yaml("apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: unheld\n");
    let out = s.kubectl_ok(&["get", "leases"]);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "HOLDER", "AGE"], "{out}");
    assert_eq!(&lines[1][..2], ["controller", "pod-a"], "{out}");
    // No holder: an empty cell.
    assert_eq!(lines[2].len(), 2, "{out}");
    assert_eq!(lines[2][0], "unheld", "{out}");
    // MicroTime fields come back exactly as written.
    let renew = s.kubectl_ok(&[
        "get",
        "lease",
        "controller",
        "-o",
        "jsonpath={.spec.acquireTime} {.spec.renewTime}",
    ]);
    assert_eq!(
        renew,
        "2024-05-01T10:00:00.000001Z 2024-05-01T10:00:05.123456Z"
    );
    let out = s.kubectl_ok(&["explain", "lease.spec.renewTime"]);
    assert!(out.contains("KIND:       Lease"), "{out}");
    assert!(out.contains("MicroTime"), "{out}");
    s.kubectl_ok(&["delete", "lease", "controller"]);
    let (code, _, _) = s
        .http("GET", &format!("{LEASES}/controller"), &[], None)
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn validation_gated_fields_and_micro_times() {
    let s = Server::start();
    let lease = |name: &str, spec: Value| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": name}, "spec": spec})
    };
    let (code, v) = s
        .http_json(
            "POST",
            LEASES,
            JSON,
            Some(&lease(
                "bad",
                json!({"leaseDurationSeconds": 0, "leaseTransitions": -1}),
            )),
        )
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(v["reason"], "Invalid", "{v}");
    assert_eq!(
        v["message"],
        "Lease.coordination.k8s.io \"bad\" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]"
    );
    assert_eq!(v["details"]["group"], "coordination.k8s.io", "{v}");
    assert_eq!(v["details"]["kind"], "Lease", "{v}");

    // CoordinatedLeaderElection is alpha in 1.32 (off): strategy and preferredHolder dropped,
    // so they are neither validated nor stored.
    let (code, v) = s
        .http_json(
            "POST",
            LEASES,
            JSON,
            Some(&lease(
                "gated",
                json!({"holderIdentity": "a", "strategy": "Nope", "preferredHolder": "b",
                       "renewTime": "2024-05-01T12:00:05.500000+02:00"}),
            )),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["spec"],
        // The offset time comes back in UTC, as Go encodes the decoded MicroTime.
        json!({"holderIdentity": "a", "renewTime": "2024-05-01T10:00:05.500000Z"}),
        "{v}"
    );

    // A MicroTime must have six fractional digits (upstream's RFC3339Micro parse).
    let (code, v) = s
        .http_json(
            "POST",
            LEASES,
            JSON,
            Some(&lease(
                "whole",
                json!({"renewTime": "2024-05-01T10:00:05Z"}),
            )),
        )
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        r#"Lease in version "v1" cannot be handled as a Lease: parsing time "2024-05-01T10:00:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#
    );

    // Updates are conditional: no resourceVersion, no update (AllowUnconditionalUpdate false).
    let mut update = lease("gated", json!({"holderIdentity": "b"}));
    let (code, v) = s
        .http_json("PUT", &format!("{LEASES}/gated"), JSON, Some(&update))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "leases.coordination.k8s.io \"gated\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    let (_, current) = s
        .http_json("GET", &format!("{LEASES}/gated"), JSON, None)
        .await;
    update["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    let (code, v) = s
        .http_json("PUT", &format!("{LEASES}/gated"), JSON, Some(&update))
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"], json!({"holderIdentity": "b"}), "{v}");

    // AllowCreateOnUpdate: a PUT to a missing Lease creates it (201), its resourceVersion
    // ignored; ConfigMaps do not allow it (404).
    let mut put = lease("by-put", json!({"holderIdentity": "c"}));
    put["metadata"]["resourceVersion"] = json!("12345");
    let (code, v) = s
        .http_json("PUT", &format!("{LEASES}/by-put"), JSON, Some(&put))
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"], json!({"holderIdentity": "c"}), "{v}");
    assert_ne!(v["metadata"]["resourceVersion"], "12345", "{v}");
    assert!(v["metadata"]["uid"].is_string(), "{v}");
    let (code, v) = s
        .http_json("GET", &format!("{LEASES}/by-put"), JSON, None)
        .await;
    assert_eq!(code, 200, "{v}");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "by-put"}});
    let (code, v) = s
        .http_json(
            "PUT",
            "/api/v1/namespaces/default/configmaps/by-put",
            JSON,
            Some(&cm),
        )
        .await;
    assert_eq!(code, 404, "{v}");
}

/// A candidate process running the Python client's leader election; its stdout lines are sent
/// to `lines`.
fn candidate(s: &Server, identity: &str, lines: mpsc::Sender<String>) -> Child {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/leader/candidate.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(&s.kubeconfig)
        .args([identity, "election"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs (the test needs python3 with the kubernetes package: .ci/run installs it)");
    let out = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    child
}

/// Waits for `want` on `rx` (a candidate's stdout), failing after `within`.
fn expect_line(rx: &mpsc::Receiver<String>, want: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l == want => return,
            Ok(_) => {}
            Err(e) => panic!("no {want:?} within {within:?}: {e}"),
        }
    }
}

#[tokio::test]
async fn python_leader_election_moves_when_the_leader_stops_renewing() {
    let check = Command::new("python3")
        .args([
            "-c",
            "import kubernetes.leaderelection.resourcelock.leaselock",
        ])
        .status()
        .expect("python3");
    assert!(
        check.success(),
        "the Python kubernetes client with its Lease lock is needed (pip install kubernetes; .ci/run does it)"
    );
    let s = Server::start();
    let holder = || async {
        let (_, v) = s
            .http_json("GET", &format!("{LEASES}/election"), JSON, None)
            .await;
        v
    };

    let (tx_a, rx_a) = mpsc::channel();
    let mut a = candidate(&s, "candidate-a", tx_a);
    expect_line(&rx_a, "LEADING candidate-a", Duration::from_secs(30));
    let lease = holder().await;
    assert_eq!(lease["spec"]["holderIdentity"], "candidate-a", "{lease}");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 4, "{lease}");
    // The client's times (isoformat with +00:00) are stored as Go encodes a MicroTime.
    let renew = lease["spec"]["renewTime"].as_str().unwrap_or_default();
    assert!(
        renew.len() == 27 && renew.ends_with('Z') && renew.as_bytes()[19] == b'.',
        "{lease}"
    );

    // A second candidate follows while the leader renews.
    let (tx_b, rx_b) = mpsc::channel();
    let mut b = candidate(&s, "candidate-b", tx_b);
    std::thread::sleep(Duration::from_secs(7));
    assert!(
        rx_b.try_recv().is_err(),
        "candidate-b must not lead while candidate-a renews"
    );
    let lease = holder().await;
    assert_eq!(lease["spec"]["holderIdentity"], "candidate-a", "{lease}");
    assert_ne!(
        lease["spec"]["renewTime"].as_str(),
        Some(renew),
        "the leader renews: {lease}"
    );

    // The leader stops renewing (killed): after the lease duration, candidate-b takes over.
    let _ = a.kill();
    let _ = a.wait();
    expect_line(&rx_b, "LEADING candidate-b", Duration::from_secs(30));
    let lease = holder().await;
    assert_eq!(lease["spec"]["holderIdentity"], "candidate-b", "{lease}");
    let _ = b.kill();
    let _ = b.wait();
}

/// client-go's leader election from a component whose client config asks for protobuf
/// (kube-scheduler, kube-controller-manager): the Lease body is decoded into the same pipeline.
#[tokio::test]
async fn protobuf_lease_bodies() {
    use k8s_pb::api::coordination::v1::{Lease, LeaseSpec};
    use k8s_pb::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
    let s = Server::start();
    let lease = |rv: Option<String>, renew_nanos: i32| Lease {
        metadata: Some(ObjectMeta {
            name: Some("kube-scheduler".into()),
            resource_version: rv,
            ..Default::default()
        }),
        spec: Some(LeaseSpec {
            holder_identity: Some("node-a_1".into()),
            lease_duration_seconds: Some(15),
            acquire_time: Some(MicroTime {
                seconds: Some(1_714_557_600),
                nanos: Some(0),
            }),
            renew_time: Some(MicroTime {
                seconds: Some(1_714_557_605),
                nanos: Some(renew_nanos),
            }),
            lease_transitions: Some(0),
            ..Default::default()
        }),
    };
    let pb = [("Content-Type", "application/vnd.kubernetes.protobuf")];
    let body = pb_body("coordination.k8s.io/v1", "Lease", &lease(None, 123_456_000));
    let (code, _, bytes) = s.http("POST", LEASES, &pb, Some(body)).await;
    let v: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["spec"],
        json!({"holderIdentity": "node-a_1", "leaseDurationSeconds": 15, "leaseTransitions": 0,
               "acquireTime": "2024-05-01T10:00:00.000000Z",
               "renewTime": "2024-05-01T10:00:05.123456Z"}),
        "{v}"
    );
    // A renewal: PUT with the resourceVersion read.
    let rv = v["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_string);
    let body = pb_body("coordination.k8s.io/v1", "Lease", &lease(rv, 999_999_000));
    let (code, _, bytes) = s
        .http("PUT", &format!("{LEASES}/kube-scheduler"), &pb, Some(body))
        .await;
    let v: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["renewTime"], "2024-05-01T10:00:05.999999Z", "{v}");
}

/// A Lease owned by another object is garbage collected with it.
#[tokio::test]
async fn leases_owned_by_a_deleted_object_are_collected() {
    let s = Server::start();
    s.kubectl_ok(&["create", "configmap", "owner"]);
    let uid = s.kubectl_ok(&["get", "cm", "owner", "-o", "jsonpath={.metadata.uid}"]);
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "owned", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}]},
        "spec": {"holderIdentity": "x"}});
    let (code, v) = s.http_json("POST", LEASES, JSON, Some(&lease)).await;
    assert_eq!(code, 201, "{v}");
    s.kubectl_ok(&["delete", "cm", "owner"]);
    s.wait_gone(&format!("{LEASES}/owned")).await;
}
