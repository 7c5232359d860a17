//! core/v1 Services and Endpoints, discovery.k8s.io/v1 EndpointSlices: kubectl's typed client
//! (protobuf Service bodies), the built-in printers, upstream's defaults and validation, field
//! selectors, the status subresource; and the webhook Service resolver end to end (a real HTTPS
//! server on 127.0.0.1 reached through a Service and its Endpoints or EndpointSlices).

mod common;
use common::webhook::{echo, https_server, in_process, issue};
use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const SVCS: &str = "/api/v1/namespaces/default/services";
const EPS: &str = "/api/v1/namespaces/default/endpoints";
const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";

fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn kubectl_creates_and_prints_services() {
    let s = Server::start();
    // kubectl's typed client sends Services as protobuf.
    s.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    s.kubectl_ok(&[
        "create",
        "service",
        "externalname",
        "ext",
        "--external-name",
        "example.com",
    ]);
    s.kubectl_ok(&[
        "create",
        "service",
        "clusterip",
        "headless",
        "--clusterip=None",
    ]);
    let out = s.kubectl_ok(&["get", "svc", "-o", "wide"]);
    let t = table(&out);
    assert_eq!(
        t[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ],
        "{out}"
    );
    let row = |name: &str| t.iter().find(|r| r[0] == name).cloned().unwrap_or_default();
    assert_eq!(
        row("web")[..5],
        ["web", "ClusterIP", "<none>", "<none>", "80/TCP"],
        "{out}"
    );
    assert_eq!(row("web")[6], "app=web", "{out}");
    assert_eq!(
        row("ext")[..5],
        ["ext", "ExternalName", "<none>", "example.com", "<none>"],
        "{out}"
    );
    assert_eq!(
        row("headless")[..5],
        ["headless", "ClusterIP", "None", "<none>", "<none>"],
        "{out}"
    );
    // The defaults that apply without a cluster network; no cluster IP is allocated.
    let web: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "svc", "web", "-o", "json"])).expect("json");
    assert_eq!(
        web["spec"],
        json!({
            "ports": [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}],
            "selector": {"app": "web"}, "type": "ClusterIP", "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
            "ipFamilies": ["IPv4"],
        })
    );
    assert_eq!(web["status"], json!({"loadBalancer": {}}));
    assert!(web["metadata"].get("generation").is_none());
    // Short names, and field selectors on spec.type and spec.clusterIP.
    let out = s.kubectl_ok(&[
        "get",
        "svc",
        "--field-selector=spec.type=ExternalName",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "service/ext");
    let out = s.kubectl_ok(&[
        "get",
        "svc",
        "--field-selector=spec.clusterIP=None",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "service/headless");
    let (ok, _, err) = s.kubectl(&["get", "svc", "--field-selector=spec.ports=1"]);
    assert!(!ok);
    assert!(
        err.contains("field label not supported: spec.ports"),
        "{err}"
    );
    let out = s.kubectl_ok(&["api-resources", "--api-group="]);
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["services", "svc", "v1", "true", "Service"]),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["endpoints", "ep", "v1", "true", "Endpoints"]),
        "{out}"
    );
    let out = s.kubectl_ok(&["explain", "service.spec.clusterIP"]);
    assert!(out.contains("KIND:       Service"), "{out}");
}

#[test]
fn endpoints_and_endpointslices_print_as_upstream() {
    let s = Server::start();
    s.apply_yaml(
        r#"
apiVersion: v1
kind: Endpoints
metadata: {name: backends}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]
  ports: [{name: http, port: 80}, {name: https, port: 443}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: backends-abc
  labels: {kubernetes.io/service-name: backends}
addressType: IPv4
ports: [{name: http, port: 80}]
endpoints:
- addresses: [10.0.0.1]
- addresses: [10.0.0.2]
  conditions: {ready: false}
"#,
    );
    let out = s.kubectl_ok(&["get", "ep"]);
    let t = table(&out);
    assert_eq!(t[0], ["NAME", "ENDPOINTS", "AGE"], "{out}");
    // Ports in the stored (repacked) order: https before http by their hashes.
    assert_eq!(
        t[1][..4],
        [
            "backends",
            "10.0.0.1:443,10.0.0.2:443,10.0.0.1:80",
            "+",
            "1"
        ],
        "{out}"
    );
    let out = s.kubectl_ok(&["get", "endpointslices"]);
    let t = table(&out);
    assert_eq!(
        t[0],
        ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
        "{out}"
    );
    assert_eq!(
        t[1][..4],
        ["backends-abc", "IPv4", "80", "10.0.0.1,10.0.0.2"],
        "{out}"
    );
    // Defaults: the endpoint port's protocol, the slice port's protocol; slices keep a
    // generation.
    let ep: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "ep", "backends", "-o", "json"])).expect("ep");
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");
    let slice: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "endpointslice",
        "backends-abc",
        "-o",
        "json",
    ]))
    .expect("slice");
    assert_eq!(
        slice["ports"][0],
        json!({"name": "http", "port": 80, "protocol": "TCP"})
    );
    assert_eq!(slice["metadata"]["generation"], 1);
    // The published schema of a built-in group other than core: kubectl explain.
    let out = s.kubectl_ok(&["explain", "endpointslice.addressType"]);
    assert!(out.contains("GROUP:      discovery.k8s.io"), "{out}");
    assert!(
        out.contains("addressType specifies the type of address"),
        "{out}"
    );
}

#[tokio::test]
async fn validation_errors_are_upstreams() {
    let s = Server::start();
    let (code, body) = s
        .http_json(
            "POST",
            SVCS,
            "application/json",
            Some(&json!({
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": "bad"},
                "spec": {"ports": [{"port": 80}, {"name": "b", "port": 80, "protocol": "TCP"},
                                   {"name": "c", "port": 0, "protocol": "ICMP"}]},
            })),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"bad\" is invalid: [spec.ports[0].name: Required value, spec.ports[2].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[2].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\", spec.ports[2].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}]"
    );
    assert_eq!(body["details"]["causes"][0]["field"], "spec.ports[0].name");
    // ExternalName needs its name; Service names are DNS-1035 labels.
    let (ok, _, err) = s.kubectl(&[
        "create",
        "service",
        "externalname",
        "1ext",
        "--external-name",
        "example.com",
    ]);
    assert!(!ok);
    assert!(
        err.contains("metadata.name: Invalid value: \"1ext\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character"),
        "{err}"
    );
    let (code, body) = s
        .http_json(
            "POST",
            SVCS,
            "application/json",
            Some(
                &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
                         "spec": {"type": "ExternalName"}}),
            ),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "Service \"x\" is invalid: spec.externalName: Required value"
    );
    // Endpoints and EndpointSlices.
    let (code, body) = s
        .http_json(
            "POST",
            EPS,
            "application/json",
            Some(
                &json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"},
                         "subsets": [{"ports": [{"port": 80}]},
                                     {"addresses": [{"ip": "169.254.0.1"}]}]}),
            ),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "Endpoints \"e\" is invalid: [subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`, subsets[1].addresses[0].ip: Invalid value: \"169.254.0.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)]"
    );
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "s"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["fd00::1"]}]});
    let (code, body) = s
        .http_json("POST", SLICES, "application/json", Some(&slice))
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "EndpointSlice.discovery.k8s.io \"s\" is invalid: endpoints[0].addresses[0]: Invalid value: \"fd00::1\": must be a valid IPv4 address"
    );
    // addressType is immutable.
    let mut ok_slice = slice.clone();
    ok_slice["endpoints"] = json!([{"addresses": ["10.0.0.1"]}]);
    let (code, _) = s
        .http_json("POST", SLICES, "application/json", Some(&ok_slice))
        .await;
    assert_eq!(code, 201);
    ok_slice["addressType"] = json!("FQDN");
    ok_slice["endpoints"] = json!([{"addresses": ["a.example.com"]}]);
    let (code, body) = s
        .http_json(
            "PUT",
            &format!("{SLICES}/s"),
            "application/json",
            Some(&ok_slice),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "EndpointSlice.discovery.k8s.io \"s\" is invalid: addressType: Invalid value: \"FQDN\": field is immutable"
    );
    // Unknown fields: typed decoding as for every built-in kind.
    let (code, _, bytes) = s
        .http(
            "POST",
            &format!("{SVCS}?fieldValidation=Strict"),
            &[("Content-Type", "application/json")],
            Some(
                serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": "strict"}, "spec": {"ports": [{"port": 1, "bogus": 1}]}}))
                .expect("json"),
            ),
        )
        .await;
    assert_eq!(code, 400);
    let body: Value = serde_json::from_slice(&bytes).expect("status");
    assert_eq!(
        body["message"],
        "Service in version \"v1\" cannot be handled as a Service: strict decoding error: unknown field \"spec.ports[0].bogus\""
    );
}

#[tokio::test]
async fn updates_keep_cluster_ips_and_status_is_a_subresource() {
    let s = Server::start();
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fixed"},
        "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 53, "protocol": "UDP"}],
                 "type": "LoadBalancer"},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}});
    let (code, created) = s
        .http_json("POST", SVCS, "application/json", Some(&svc))
        .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["spec"]["clusterIPs"], json!(["10.96.0.10"]));
    assert_eq!(created["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(created["spec"]["externalTrafficPolicy"], "Cluster");
    // Status is reset on create and written through /status only.
    assert_eq!(created["status"], json!({"loadBalancer": {}}));
    let out = s.kubectl_ok(&["get", "svc", "fixed"]);
    assert_eq!(
        table(&out)[1][..5],
        ["fixed", "LoadBalancer", "10.96.0.10", "<pending>", "53/UDP"]
    );
    let mut st = created.clone();
    st["status"] = json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}});
    st["spec"]["ports"] = json!([{"port": 54, "protocol": "UDP"}]);
    let (code, updated) = s
        .http_json(
            "PUT",
            &format!("{SVCS}/fixed/status"),
            "application/json",
            Some(&st),
        )
        .await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(
        updated["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "192.0.2.1", "ipMode": "VIP"}])
    );
    assert_eq!(updated["spec"]["ports"][0]["port"], 53);
    let out = s.kubectl_ok(&["get", "svc", "fixed"]);
    assert_eq!(table(&out)[1][3], "192.0.2.1");
    // A merge patch that leaves the cluster IP out keeps it; changing it is refused.
    let (code, patched) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/fixed"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"clusterIP": null, "clusterIPs": null}})),
        )
        .await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["spec"]["clusterIP"], "10.96.0.10");
    let (code, body) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/fixed"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"clusterIP": "10.96.0.11", "clusterIPs": ["10.96.0.11"]}})),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "Service \"fixed\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.11\"}: may not change once set"
    );
}

/// ValidateServiceUpdate and what the service REST storage checks before it (the allocator's
/// IP family fields), as kubectl and raw HTTP clients see them.
#[tokio::test]
async fn update_validation_is_upstreams() {
    let s = Server::start();
    s.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]);
    let get = |s: &Server| -> Value {
        serde_json::from_str(&s.kubectl_ok(&["get", "svc", "web", "-o", "json"])).expect("json")
    };
    assert_eq!(get(&s)["spec"]["ipFamilies"], json!(["IPv4"]));
    // The primary family is immutable.
    let (ok, _, err) = s.kubectl(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"ipFamilies":["IPv6"]}}"#,
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        r#"The Service "web" is invalid: spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6"}: may not change once set"#
    );
    // Upgraded to dual stack by the policy alone; the secondary family is released only
    // under SingleStack.
    s.kubectl_ok(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"ipFamilyPolicy":"PreferDualStack"}}"#,
    ]);
    assert_eq!(get(&s)["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    let (ok, _, err) = s.kubectl(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"ipFamilies":["IPv4"]}}"#,
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        r#"The Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary IP family"#
    );
    s.kubectl_ok(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"ipFamilyPolicy":"SingleStack"}}"#,
    ]);
    let v = get(&s);
    assert_eq!(v["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(v["spec"]["ipFamilyPolicy"], "SingleStack");
    // To ExternalName: the IP family fields go (and internalTrafficPolicy is not shown).
    s.kubectl_ok(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"type":"ExternalName","externalName":"example.com"}}"#,
    ]);
    let v = get(&s);
    for k in [
        "ipFamilies",
        "ipFamilyPolicy",
        "clusterIP",
        "internalTrafficPolicy",
    ] {
        assert!(v["spec"].get(k).is_none(), "{k}: {v}");
    }
    // Two cluster IPs under SingleStack, by PUT: the allocator's error.
    let mut svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fixed"},
        "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}});
    let (code, created) = s
        .http_json("POST", SVCS, "application/json", Some(&svc))
        .await;
    assert_eq!(code, 201, "{created}");
    svc["spec"]["clusterIPs"] = json!(["10.96.0.10", "fd00::10"]);
    let (code, body) = s
        .http_json(
            "PUT",
            &format!("{SVCS}/fixed"),
            "application/json",
            Some(&svc),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"fixed\" is invalid: spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"
    );
    assert_eq!(body["details"]["causes"][0]["field"], "spec.ipFamilyPolicy");
    assert_eq!(body["details"]["causes"][0]["reason"], "FieldValueInvalid");
    // With a dual-stack policy, the upgrade goes through; the primary address stays fixed
    // (swapped addresses no longer match the stored families: the allocator's check).
    svc["spec"]["ipFamilyPolicy"] = json!("RequireDualStack");
    let (code, body) = s
        .http_json(
            "PUT",
            &format!("{SVCS}/fixed"),
            "application/json",
            Some(&svc),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    let (code, body) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/fixed"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"clusterIP": "fd00::10", "clusterIPs": ["fd00::10", "10.96.0.10"]}})),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"fixed\" is invalid: [spec.clusterIPs[0]: Invalid value: \"fd00::10\": expected an IPv4 value as indicated by `ipFamilies[0]`, spec.clusterIPs[1]: Invalid value: \"10.96.0.10\": expected an IPv6 value as indicated by `ipFamilies[1]`]"
    );
    // Swapped with the families too: ValidateServiceUpdate's errors.
    let swapped = json!({"spec": {"clusterIP": "fd00::10", "clusterIPs": ["fd00::10", "10.96.0.10"],
                                  "ipFamilies": ["IPv6", "IPv4"]}});
    let (code, body) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/fixed"),
            "application/merge-patch+json",
            Some(&swapped),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"fixed\" is invalid: [spec.clusterIPs[0]: Invalid value: []string{\"fd00::10\", \"10.96.0.10\"}: may not change once set, spec.clusterIPs[1]: Invalid value: []string{\"fd00::10\", \"10.96.0.10\"}: may not change once set, spec.ipFamilies[0]: Invalid value: []core.IPFamily{\"IPv6\", \"IPv4\"}: may not change once set]"
    );
    // Each changed family is a cause (the message lists the repeated one once).
    let causes = body["details"]["causes"].as_array().map_or(0, Vec::len);
    assert_eq!(causes, 4, "{body}");
    // healthCheckNodePort is immutable while the Service needs one.
    let hc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hc"},
        "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                 "healthCheckNodePort": 30100, "ports": [{"port": 80}]}});
    let (code, body) = s
        .http_json("POST", SVCS, "application/json", Some(&hc))
        .await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/hc"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"healthCheckNodePort": 30101}})),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"hc\" is invalid: spec.healthCheckNodePort: Forbidden: field is immutable"
    );
    // A PUT without it keeps it; a change to Cluster traffic drops it.
    let mut put = hc.clone();
    put["spec"]
        .as_object_mut()
        .map(|m| m.remove("healthCheckNodePort"));
    let (code, body) = s
        .http_json("PUT", &format!("{SVCS}/hc"), "application/json", Some(&put))
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["healthCheckNodePort"], 30100);
    let (code, body) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/hc"),
            "application/merge-patch+json",
            Some(&json!({"spec": {"externalTrafficPolicy": "Cluster"}})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert!(body["spec"].get("healthCheckNodePort").is_none(), "{body}");
    // Node ports the allocator could not give: outside its range.
    let np = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}});
    let (code, body) = s
        .http_json("POST", SVCS, "application/json", Some(&np))
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"np\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"
    );
    // On create, the allocator's checks come before (and without) the rest of validation.
    let two = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "two"},
        "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1", "10.0.0.2"]}});
    let (code, body) = s
        .http_json("POST", SVCS, "application/json", Some(&two))
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"two\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.0.0.1\", \"10.0.0.2\"}: may specify no more than one IP for each IP family"
    );
}

// --- The webhook Service resolver, end to end ---

async fn post(base: &str, path: &str, obj: Value) {
    let resp = common::client_for(base)
        .post(format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .body(obj.to_string())
        .send()
        .await
        .expect("post");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    assert_eq!(status, 201, "POST {path}: {text}");
}

fn service(name: &str, port_name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
           "spec": {"ports": [{"name": port_name, "port": 443, "targetPort": 8443}]}})
}

fn endpoints(name: &str, port_name: &str, port: u16) -> Value {
    json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name},
           "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                        "ports": [{"name": port_name, "port": port}]}]})
}

#[tokio::test]
async fn webhook_service_references_resolve_through_endpoints_and_slices() {
    let (ca, config) = issue("webhook-ca", &["hook.default.svc", "sliced.default.svc"]);
    let port = https_server(config, echo);
    let (running, _dir, base) = in_process().await;
    let resolver = running.service_resolver();
    let reference = |name: &str| json!({"namespace": "default", "name": name, "path": "/convert"});
    let body = br#"{"kind":"ConversionReview"}"#.to_vec();
    let timeout = Duration::from_secs(10);

    // Service -> its port 443 (named https) -> the Endpoints' https port on 127.0.0.1.
    post(&base, SVCS, service("hook", "https")).await;
    post(&base, EPS, endpoints("hook", "https", port)).await;
    let r = resolver
        .post(&reference("hook"), ca.as_bytes(), body.clone(), timeout)
        .await
        .expect("the webhook answers");
    assert_eq!(r.status, 200);
    let answer: Value = serde_json::from_slice(&r.body).expect("json");
    assert_eq!(
        answer,
        json!({"path": "/convert?timeout=10s", "host": "hook.default.svc:443",
               "got": {"kind": "ConversionReview"}})
    );

    // A Service whose endpoints are published as an EndpointSlice only (unnamed port).
    post(&base, SVCS, service("sliced", "")).await;
    post(
        &base,
        SLICES,
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": "sliced-1", "labels": {"kubernetes.io/service-name": "sliced"}},
               "addressType": "IPv4", "ports": [{"port": port}],
               "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}]}),
    )
    .await;
    let r = resolver
        .post(&reference("sliced"), ca.as_bytes(), body.clone(), timeout)
        .await
        .expect("the webhook answers through the slice");
    assert_eq!(r.status, 200);

    // Failures, worded as kube-apiserver's webhook client words them.
    let fail = |name: &'static str, ca: String| {
        let resolver = resolver.clone();
        let body = body.clone();
        async move {
            resolver
                .post(&reference(name), ca.as_bytes(), body, timeout)
                .await
                .expect_err("the call fails")
                .to_string()
        }
    };
    assert_eq!(
        fail("missing", ca.clone()).await,
        "Post \"https://missing.default.svc:443/convert?timeout=10s\": service \"missing\" not found"
    );
    post(&base, SVCS, service("lonely", "https")).await;
    assert_eq!(
        fail("lonely", ca.clone()).await,
        "Post \"https://lonely.default.svc:443/convert?timeout=10s\": endpoints \"lonely\" not found"
    );
    post(&base, SVCS, service("unready", "https")).await;
    post(
        &base,
        EPS,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "unready"},
               "subsets": [{"notReadyAddresses": [{"ip": "127.0.0.1"}],
                            "ports": [{"name": "https", "port": port}]}]}),
    )
    .await;
    assert_eq!(
        fail("unready", ca.clone()).await,
        "Post \"https://unready.default.svc:443/convert?timeout=10s\": no endpoints available for service \"unready\""
    );
    // The right endpoint, verified against another CA.
    let (other_ca, _) = issue("other-ca", &["hook.default.svc"]);
    assert_eq!(
        fail("hook", other_ca).await,
        "Post \"https://hook.default.svc:443/convert?timeout=10s\": tls: failed to verify certificate: x509: certificate signed by unknown authority"
    );
    // The right CA, but the certificate does not name this Service.
    post(&base, SVCS, service("wrongname", "https")).await;
    post(&base, EPS, endpoints("wrongname", "https", port)).await;
    assert_eq!(
        fail("wrongname", ca.clone()).await,
        "Post \"https://wrongname.default.svc:443/convert?timeout=10s\": tls: failed to verify certificate: x509: certificate is valid for hook.default.svc, sliced.default.svc, not wrongname.default.svc"
    );
    // Nothing listening at the endpoint.
    post(&base, SVCS, service("closed", "https")).await;
    post(&base, EPS, endpoints("closed", "https", 1)).await;
    assert_eq!(
        fail("closed", ca.clone()).await,
        "Post \"https://closed.default.svc:443/convert?timeout=10s\": dial tcp 127.0.0.1:1: connect: connection refused"
    );
    running.shutdown().await;
}

#[test]
fn kubectl_apply_merges_service_ports_strategically() {
    let s = Server::start();
    let manifest = |ports: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: web, finalizers: [example.com/keep]}}\nspec:\n  selector: {{app: web}}\n  ports:\n{ports}"
        )
    };
    s.apply_yaml(&manifest(
        "  - {name: http, port: 80, targetPort: 8080}\n  - {name: https, port: 443}\n",
    ));
    // A port added by someone else (not in the last applied configuration) stays; the one the
    // manifest drops goes; the changed one is merged by its key (port).
    s.kubectl_ok(&[
        "patch",
        "svc",
        "web",
        "--type=strategic",
        "-p",
        r#"{"spec":{"ports":[{"name":"metrics","port":9090}]}}"#,
    ]);
    s.apply_yaml(&manifest(
        "  - {name: https, port: 443, targetPort: 8443}\n  - {name: alt, port: 8443}\n",
    ));
    let svc: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "svc", "web", "-o", "json"])).expect("json");
    let ports: Vec<(String, i64, Value)> = svc["spec"]["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or("").to_string(),
                p["port"].as_i64().unwrap_or(0),
                p["targetPort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        ports,
        // Upstream's order: the patch that added `metrics` put it first (mergeSortedSlice takes
        // an element the live list lacks before the server-only ones), and apply's
        // $setElementOrder keeps server-only elements where they were.
        [
            ("metrics".to_string(), 9090, json!(9090)),
            ("https".to_string(), 443, json!(8443)),
            ("alt".to_string(), 8443, json!(8443)),
        ],
        "{svc}"
    );
    // Finalizers merge as a set; `$deleteFromPrimitiveList` removes one.
    s.kubectl_ok(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/keep"]}}"#,
    ]);
    let out = s.kubectl_ok(&["get", "svc", "web", "-o", "jsonpath={.metadata.finalizers}"]);
    assert_eq!(out, "");
    // A list element without its merge key is refused.
    let (ok, _, err) = s.kubectl(&[
        "patch",
        "svc",
        "web",
        "-p",
        r#"{"spec":{"ports":[{"name":"nokey"}]}}"#,
    ]);
    assert!(!ok);
    assert!(
        err.contains("does not contain declared merge key: port"),
        "{err}"
    );
}

#[tokio::test]
async fn protobuf_endpoints_and_slices_are_decoded() {
    use k8s_pb::api::core::v1 as pb;
    use k8s_pb::api::discovery::v1 as discovery;
    use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    let s = Server::start();
    let meta = |name: &str| ObjectMeta {
        name: Some(name.into()),
        ..Default::default()
    };
    let eps = pb::Endpoints {
        metadata: Some(meta("pb")),
        subsets: vec![pb::EndpointSubset {
            addresses: vec![pb::EndpointAddress {
                ip: Some("10.0.0.7".into()),
                ..Default::default()
            }],
            ports: vec![pb::EndpointPort {
                port: Some(80),
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let proto = [("Content-Type", "application/vnd.kubernetes.protobuf")];
    let body = pb_body("v1", "Endpoints", &eps);
    let (code, _, bytes) = s.http("POST", EPS, &proto, Some(body)).await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&bytes));
    let v: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(
        v["subsets"],
        json!([{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"port": 80, "protocol": "TCP"}]}])
    );
    let slice = discovery::EndpointSlice {
        metadata: Some(meta("pb-1")),
        address_type: Some("IPv4".into()),
        endpoints: vec![discovery::Endpoint {
            addresses: vec!["10.0.0.7".into()],
            ..Default::default()
        }],
        ports: vec![discovery::EndpointPort {
            port: Some(80),
            ..Default::default()
        }],
    };
    let body = pb_body("discovery.k8s.io/v1", "EndpointSlice", &slice);
    let (code, _, bytes) = s.http("POST", SLICES, &proto, Some(body)).await;
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&bytes));
    let v: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(
        v["ports"],
        json!([{"name": "", "port": 80, "protocol": "TCP"}])
    );
    assert_eq!(
        v["endpoints"],
        json!([{"addresses": ["10.0.0.7"], "conditions": {}}])
    );
}

#[test]
fn endpoints_of_selectorless_services_are_mirrored_into_slices() {
    let s = Server::start();
    s.apply_yaml(
        r#"
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  ports: [{name: pg, port: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, labels: {team: data}}
subsets:
- addresses: [{ip: 10.0.0.5}]
  notReadyAddresses: [{ip: 10.0.0.6}]
  ports: [{name: pg, port: 5432}]
"#,
    );
    let slices = |s: &Server| {
        s.kubectl_ok(&[
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=db",
            "-o",
            "json",
        ])
    };
    wait_until("the mirrored slice", || {
        serde_json::from_str::<Value>(&slices(&s))
            .is_ok_and(|l| l["items"].as_array().is_some_and(|i| i.len() == 1))
    });
    let list: Value = serde_json::from_str(&slices(&s)).expect("json");
    let slice = &list["items"][0];
    assert_eq!(
        slice["metadata"]["labels"],
        json!({"team": "data", "kubernetes.io/service-name": "db",
               "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io"})
    );
    assert_eq!(slice["metadata"]["ownerReferences"][0]["kind"], "Endpoints");
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["ports"],
        json!([{"name": "pg", "port": 5432, "protocol": "TCP"}])
    );
    assert_eq!(
        slice["endpoints"],
        json!([
            {"addresses": ["10.0.0.5"], "conditions": {"ready": true, "serving": true, "terminating": false}},
            {"addresses": ["10.0.0.6"], "conditions": {"ready": false, "serving": false, "terminating": false}},
        ])
    );
    // kubectl describe reads the slices, as on a cluster.
    let out = s.kubectl_ok(&["describe", "svc", "db"]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("Endpoints:") && l.contains("10.0.0.5:5432")),
        "{out}"
    );
    // Changes follow; a selector or the Endpoints' deletion removes the mirror.
    s.kubectl_ok(&[
        "patch",
        "ep",
        "db",
        "--type=merge",
        "-p",
        r#"{"subsets":[{"addresses":[{"ip":"10.0.0.7"}],"ports":[{"name":"pg","port":5432}]}]}"#,
    ]);
    wait_until("the slice follows the Endpoints", || {
        slices(&s).contains("10.0.0.7")
    });
    s.kubectl_ok(&["delete", "ep", "db"]);
    wait_until("the mirror goes with its Endpoints", || {
        serde_json::from_str::<Value>(&slices(&s))
            .is_ok_and(|l| l["items"].as_array().is_some_and(Vec::is_empty))
    });
}

#[tokio::test]
async fn kube_rs_typed_services_endpoints_and_slices() {
    use k8s_openapi::api::core::v1::{Endpoints, Service};
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use kube::api::{Api, ListParams, PostParams};
    let s = Server::start();
    let client = s.client().await;
    let svcs: Api<Service> = Api::namespaced(client.clone(), "default");
    let svc: Service = serde_json::from_value(json!({
        "metadata": {"name": "typed"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": "https"}]},
    }))
    .expect("service");
    let created = svcs
        .create(&PostParams::default(), &svc)
        .await
        .expect("create");
    let spec = created.spec.expect("spec");
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(spec.session_affinity.as_deref(), Some("None"));
    assert_eq!(spec.ip_families, Some(vec!["IPv4".to_string()]));
    // This one and the `kubernetes` Service kube-apiserver keeps in `default`.
    let listed = svcs
        .list(&ListParams::default().fields("spec.type=ClusterIP"))
        .await
        .expect("list");
    let mut names: Vec<_> = listed
        .items
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["kubernetes", "typed"]);
    let eps: Api<Endpoints> = Api::namespaced(client.clone(), "default");
    let ep: Endpoints = serde_json::from_value(json!({
        "metadata": {"name": "typed"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "https", "port": 8443}]}],
    }))
    .expect("endpoints");
    eps.create(&PostParams::default(), &ep)
        .await
        .expect("create endpoints");
    // The mirrored slice reads back through k8s-openapi's strict types.
    let slices: Api<EndpointSlice> = Api::namespaced(client, "default");
    let lp = ListParams::default().labels("kubernetes.io/service-name=typed");
    let mut found = vec![];
    for _ in 0..100 {
        found = slices.list(&lp).await.expect("list slices").items;
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].address_type, "IPv4");
    assert_eq!(found[0].endpoints[0].addresses, ["10.0.0.1"]);
}

/// Review findings: type changes drop what the old type needed (`dropTypeDependentFields`), a
/// Service with external IPs and no type is an accessible ClusterIP Service, PUT creates, and
/// a generateName cut inside a multi-byte character is refused, not a dropped connection.
#[tokio::test]
async fn type_changes_defaults_put_create_and_odd_generate_names() {
    let s = Server::start();
    let lb = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "selector": {"app": "x"}, "ports": [{"port": 80, "nodePort": 30080}]}});
    let (code, v) = s
        .http_json("POST", SVCS, "application/json", Some(&lb))
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["externalTrafficPolicy"], "Cluster", "{v}");
    let patch = json!({"spec": {"type": "ClusterIP"}});
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{SVCS}/lb"),
            "application/merge-patch+json",
            Some(&patch),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert!(v["spec"].get("externalTrafficPolicy").is_none(), "{v}");
    assert!(v["spec"]["ports"][0].get("nodePort").is_none(), "{v}");
    assert!(
        v["spec"].get("allocateLoadBalancerNodePorts").is_none(),
        "{v}"
    );

    let ext = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
        "spec": {"externalIPs": ["192.0.2.10"], "ports": [{"port": 80}]}});
    let (code, v) = s
        .http_json("POST", SVCS, "application/json", Some(&ext))
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["type"], "ClusterIP");
    assert_eq!(v["spec"]["externalTrafficPolicy"], "Cluster", "{v}");

    let put = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fresh"},
        "spec": {"ports": [{"port": 80}]}});
    let (code, v) = s
        .http_json(
            "PUT",
            &format!("{SVCS}/fresh"),
            "application/json",
            Some(&put),
        )
        .await;
    assert_eq!(code, 201, "{v}");

    let odd = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "é-"},
        "spec": {"ports": [{"port": 80}]}});
    let (code, v) = s
        .http_json("POST", SVCS, "application/json", Some(&odd))
        .await;
    assert_eq!(code, 422, "{v}");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "é-"}});
    let (code, v) = s
        .http_json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "application/json",
            Some(&cm),
        )
        .await;
    assert_eq!(code, 422, "{v}");
}

/// EndpointSlice strategy: FQDN slices warn, v1 writes drop deprecatedTopology, and a label
/// change bumps generation (upstream's PrepareForUpdate).
#[tokio::test]
async fn endpoint_slice_strategy() {
    let s = Server::start();
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "fq", "labels": {"a": "1"}}, "addressType": "FQDN",
        "endpoints": [{"addresses": ["backend.example.com"], "deprecatedTopology": {"zone": "z"}}]});
    let (code, headers, body) = s
        .http(
            "POST",
            SLICES,
            &[("Content-Type", "application/json")],
            Some(serde_json::to_vec(&slice).expect("json")),
        )
        .await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(code, 201, "{v}");
    assert!(
        warnings(&headers)
            .iter()
            .any(|w| w.contains("spec.addressType: FQDN endpoints are deprecated")),
        "{headers:?}"
    );
    assert!(v["endpoints"][0].get("deprecatedTopology").is_none(), "{v}");
    assert_eq!(v["metadata"]["generation"], 1);
    let patch = json!({"metadata": {"labels": {"a": "2"}}});
    let (code, v) = s
        .http_json(
            "PATCH",
            &format!("{SLICES}/fq"),
            "application/merge-patch+json",
            Some(&patch),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["generation"], 2, "{v}");
}

/// kube-apiserver's endpoints strategy canonicalizes every write (`RepackSubsets`): ports are
/// regrouped by the addresses offering them, an address not ready in one subset is not ready
/// for that port, and subsets and ports come in upstream's hash order.
#[test]
fn endpoints_are_repacked_as_upstream() {
    let s = Server::start();
    s.apply_yaml(
        r#"apiVersion: v1
kind: Endpoints
metadata:
  name: packed
subsets:
- addresses: [{ip: 10.0.0.2}, {ip: 10.0.0.1}]
  ports: [{name: http, port: 80}, {name: https, port: 443}]
- notReadyAddresses: [{ip: 10.0.0.2}]
  ports: [{name: https, port: 443}]
"#,
    );
    let out = s.kubectl_ok(&["get", "endpoints", "packed", "-o", "json"]);
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["subsets"],
        json!([
            {"addresses": [{"ip": "10.0.0.1"}], "notReadyAddresses": [{"ip": "10.0.0.2"}],
             "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]},
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
             "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
        ])
    );
    // Re-applying the same manifest changes nothing (the stored form is canonical).
    let rv = v["metadata"]["resourceVersion"].clone();
    s.kubectl_ok(&[
        "patch", "endpoints", "packed", "--type=merge", "-p",
        r#"{"subsets":[{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"name":"http","port":80},{"name":"https","port":443}]}]}"#,
    ]);
    let v: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "ep", "packed", "-o", "json"])).expect("json");
    assert_ne!(v["metadata"]["resourceVersion"], rv);
    assert_eq!(
        v["subsets"][0]["ports"],
        json!([{"name": "https", "port": 443, "protocol": "TCP"},
               {"name": "http", "port": 80, "protocol": "TCP"}])
    );
}
