//! What kube-apiserver and kube-controller-manager create in every cluster, which client
//! libraries look up: the `default/kubernetes` Service with its Endpoints and EndpointSlice
//! (pkg/controlplane/controller/kubernetesservice, reconcilers/endpointsadapter.go), and the
//! `kube-root-ca.crt` ConfigMap of every namespace (the root CA publisher).

mod common;
use common::*;
use serde_json::{json, Value};

const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
     when using internal endpoints such as the internal service IP or kubernetes.default.svc. \
     No other usage is guaranteed across distributions of Kubernetes clusters.";

fn get(s: &Server, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    serde_json::from_str(&s.kubectl_ok(&all)).expect("json")
}

fn port(s: &Server) -> u64 {
    s.base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port")
}

fn rv(v: &Value) -> String {
    v["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string()
}

#[test]
fn the_kubernetes_service_names_this_server() {
    let s = Server::start();
    wait_until("the kubernetes EndpointSlice", || {
        s.kubectl(&["get", "endpointslice", "kubernetes"]).0
    });
    let svc = get(&s, &["service", "kubernetes"]);
    assert_eq!(
        svc["metadata"]["labels"],
        json!({"component": "apiserver", "provider": "kubernetes"})
    );
    let spec = &svc["spec"];
    assert_eq!(spec["clusterIP"], "10.0.0.1", "{svc}");
    assert_eq!(spec["clusterIPs"], json!(["10.0.0.1"]));
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec.get("selector"), None);
    assert_eq!(
        spec["ports"],
        json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port(&s)}])
    );

    let eps = get(&s, &["endpoints", "kubernetes"]);
    assert_eq!(
        eps["metadata"]["labels"],
        json!({"endpointslice.kubernetes.io/skip-mirror": "true"})
    );
    assert_eq!(
        eps["subsets"],
        json!([{"addresses": [{"ip": "127.0.0.1"}],
                "ports": [{"name": "https", "port": port(&s), "protocol": "TCP"}]}])
    );
    let slice = get(&s, &["endpointslice", "kubernetes"]);
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"kubernetes.io/service-name": "kubernetes"})
    );
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["endpoints"],
        json!([{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}])
    );
    assert_eq!(
        slice["ports"],
        json!([{"name": "https", "port": port(&s), "protocol": "TCP"}])
    );
    // The mirroring controller leaves the Endpoints alone (skip-mirror): one slice only.
    let slices = get(
        &s,
        &[
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=kubernetes",
        ],
    );
    assert_eq!(
        slices["items"].as_array().map(Vec::len),
        Some(1),
        "{slices}"
    );

    // Endpoints changed by someone else are put back; what is right is not rewritten.
    s.kubectl_ok(&[
        "patch",
        "endpoints",
        "kubernetes",
        "--type=merge",
        "-p",
        r#"{"subsets":[{"addresses":[{"ip":"10.9.9.9"}],"ports":[{"name":"https","port":1,"protocol":"TCP"}]}]}"#,
    ]);
    wait_until("the Endpoints put back", || {
        get(&s, &["endpoints", "kubernetes"])["subsets"][0]["addresses"][0]["ip"] == "127.0.0.1"
    });
    assert_eq!(rv(&get(&s, &["service", "kubernetes"])), rv(&svc));
    assert_eq!(rv(&get(&s, &["endpointslice", "kubernetes"])), rv(&slice));

    // A deleted Service comes back (kube-apiserver creates it when missing).
    s.kubectl_ok(&["delete", "service", "kubernetes"]);
    wait_until("the Service created again", || {
        s.kubectl(&["get", "service", "kubernetes"]).0
    });
}

#[test]
fn the_service_range_and_advertise_address_flags() {
    let s = Server::start_with(&[
        "--service-cluster-ip-range",
        "10.96.0.0/12",
        "--advertise-address",
        "10.1.2.3",
    ]);
    wait_until("the kubernetes Endpoints", || {
        s.kubectl(&["get", "endpoints", "kubernetes"]).0
    });
    let svc = get(&s, &["service", "kubernetes"]);
    assert_eq!(svc["spec"]["clusterIP"], "10.96.0.1", "{svc}");
    let eps = get(&s, &["endpoints", "kubernetes"]);
    assert_eq!(eps["subsets"][0]["addresses"], json!([{"ip": "10.1.2.3"}]));

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crest"))
        .args(["serve", "--service-cluster-ip-range", "10.0.0.0/31"])
        .output()
        .expect("crest");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--service-cluster-ip-range"), "{err}");
}

#[test]
fn every_namespace_gets_the_root_ca_config_map() {
    let s = Server::start();
    let ca = std::fs::read_to_string(s.ca_path()).expect("ca");
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        wait_until(&format!("kube-root-ca.crt in {ns}"), || {
            s.kubectl(&["get", "configmap", "kube-root-ca.crt", "-n", ns])
                .0
        });
    }
    let cm = get(&s, &["configmap", "kube-root-ca.crt"]);
    assert_eq!(cm["data"], json!({"ca.crt": ca}), "{cm}");
    assert_eq!(
        cm["metadata"]["annotations"],
        json!({"kubernetes.io/description": DESCRIPTION})
    );
    let shown = get(
        &s,
        &["configmap", "kube-root-ca.crt", "--show-managed-fields"],
    );
    assert_eq!(
        shown["metadata"]["managedFields"][0]["manager"],
        "kube-controller-manager"
    );

    // A new namespace gets one; a deleted one comes back; changed data is put back.
    s.kubectl_ok(&["create", "namespace", "team-a"]);
    wait_until("kube-root-ca.crt in team-a", || {
        s.kubectl(&["get", "configmap", "kube-root-ca.crt", "-n", "team-a"])
            .0
    });
    s.kubectl_ok(&["delete", "configmap", "kube-root-ca.crt", "-n", "team-a"]);
    wait_until("kube-root-ca.crt created again", || {
        s.kubectl(&["get", "configmap", "kube-root-ca.crt", "-n", "team-a"])
            .0
    });
    s.kubectl_ok(&[
        "patch",
        "configmap",
        "kube-root-ca.crt",
        "-n",
        "team-a",
        "--type=merge",
        "-p",
        r#"{"data":{"ca.crt":"forged","extra":"x"}}"#,
    ]);
    wait_until("kube-root-ca.crt put back", || {
        get(&s, &["configmap", "kube-root-ca.crt", "-n", "team-a"])["data"] == json!({"ca.crt": ca})
    });
    // A pod's in-cluster view: the ConfigMap verifies the server.
    let dir = tempfile::tempdir().expect("tempdir");
    let published = dir.path().join("ca.crt");
    std::fs::write(&published, cm["data"]["ca.crt"].as_str().expect("ca")).expect("write");
    let out = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
        .arg(&published)
        .arg(format!("{}/livez", s.base))
        .output()
        .expect("curl");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "{out:?}");
}
