//! Conversion webhooks (issue 15, item 3, first part): the seed's hostPort <-> host + port
//! conversion served by a real HTTPS webhook on 127.0.0.1, called through Crest's webhook
//! client by `url` and by `service`, with caBundle verification; only the objects not yet in the
//! desired version are sent; the answer is checked and the metadata restored; failures are
//! worded as upstream's. Reads, lists, watches and writes go through it, also for objects
//! still stored in an earlier storage version (issue 28, item 1).

mod common;
use common::webhook::{https_server, https_server_counted, in_process, issue};
use serde_json::{json, Value};

/// The seed's webhook: v1beta1 `spec.hostPort: "host:port"` <-> v1 `spec.host`, `spec.port`.
/// It also adds a label (kept: labels may change) and a resourceVersion (restored).
fn convert_crontabs(_path: &str, _host: &str, review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    if desired.ends_with("/v9") {
        return json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": request["uid"], "result": {"status": "Failure", "message": "v9 is not a thing"}}});
    }
    let converted: Vec<Value> = request["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut o| {
            let spec = o["spec"].clone();
            o["spec"] = if desired.ends_with("/v1") {
                let hp = spec["hostPort"].as_str().unwrap_or_default().to_string();
                let (host, port) = hp.split_once(':').unwrap_or((&hp, ""));
                json!({"host": host, "port": port})
            } else {
                json!({"hostPort": format!("{}:{}", spec["host"].as_str().unwrap_or_default(), spec["port"].as_str().unwrap_or_default())})
            };
            o["apiVersion"] = json!(desired);
            o["metadata"]["labels"]["converted"] = json!("yes");
            o["metadata"]["resourceVersion"] = json!("12345");
            o
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"}, "convertedObjects": converted}})
}

/// The Service `default/convert` and its Endpoints, routing port 443 to the webhook on
/// 127.0.0.1:`port`.
async fn route_service_to(base: &str, port: u16) {
    for (path, body) in [
        (
            "/api/v1/namespaces/default/services",
            json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "convert"}, "spec": {"ports": [{"port": 443, "targetPort": port}]}}),
        ),
        (
            "/api/v1/namespaces/default/endpoints",
            json!({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "convert"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": port}]}]}),
        ),
    ] {
        let (code, v) = send("POST", &format!("{base}{path}"), Some(&body)).await;
        assert_eq!(code, 201, "{v}");
    }
}

fn crontab(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("example.com/{version}"), "kind": "CronTab",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "resourceVersion": "7"},
        "spec": spec})
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn conversion_webhooks_by_url_and_by_service() {
    let (ca, config) = issue("conversion-ca", &["127.0.0.1", "convert.default.svc"]);
    let port = https_server(config, convert_crontabs);
    let (running, _dir, base) = in_process().await;
    let resolver = running.service_resolver();
    let by_url = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1", "v1beta1"],
        "clientConfig": {"url": format!("https://127.0.0.1:{port}/convert"), "caBundle": b64(&ca)}}});

    // A list: only the v1beta1 object is sent; labels from the webhook stay, the
    // resourceVersion it set is restored.
    let mut objects = vec![
        crontab("v1beta1", "a", json!({"hostPort": "localhost:1234"})),
        crontab("v1", "b", json!({"host": "example.com", "port": "80"})),
    ];
    let input = crest_apiextensions::conversion::gvk_string("example.com/v1beta1", "CronTabList");
    resolver
        .convert(&by_url, &mut objects, "example.com/v1", &input, true)
        .await
        .expect("converted");
    assert_eq!(objects[0]["apiVersion"], "example.com/v1");
    assert_eq!(
        objects[0]["spec"],
        json!({"host": "localhost", "port": "1234"})
    );
    assert_eq!(objects[0]["metadata"]["labels"]["converted"], "yes");
    assert_eq!(objects[0]["metadata"]["resourceVersion"], "7");
    assert!(
        objects[1]["metadata"].get("labels").is_none(),
        "not sent: {}",
        objects[1]
    );

    // By Service: routed through the Service's Endpoints, verified as convert.default.svc.
    route_service_to(&base, port).await;
    let by_service = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1beta1"],
        "clientConfig": {"service": {"namespace": "default", "name": "convert", "path": "/convert"}, "caBundle": b64(&ca)}}});
    let mut one = vec![crontab("v1", "c", json!({"host": "h", "port": "9"}))];
    let input = crest_apiextensions::conversion::gvk_string("example.com/v1", "CronTab");
    resolver
        .convert(&by_service, &mut one, "example.com/v1beta1", &input, false)
        .await
        .expect("converted by service");
    assert_eq!(one[0]["spec"], json!({"hostPort": "h:9"}));

    // Failures, as upstream words them.
    let mut one = vec![crontab("v1", "d", json!({}))];
    let e = resolver
        .convert(&by_url, &mut one, "example.com/v9", &input, false)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        "conversion webhook for example.com/v1, Kind=CronTab failed: v9 is not a thing"
    );
    let down = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://127.0.0.1:1/convert", "caBundle": b64(&ca)}}});
    let e = resolver
        .convert(&down, &mut one, "example.com/v1beta1", &input, false)
        .await
        .unwrap_err();
    assert_eq!(
        e,
        "conversion webhook for example.com/v1, Kind=CronTab failed: Post \"https://127.0.0.1:1/convert?timeout=30s\": dial tcp 127.0.0.1:1: connect: connection refused"
    );
    let (other_ca, _) = issue("other-ca", &["127.0.0.1"]);
    let untrusted = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
        "clientConfig": {"url": format!("https://127.0.0.1:{port}/convert"), "caBundle": b64(&other_ca)}}});
    let e = resolver
        .convert(&untrusted, &mut one, "example.com/v1beta1", &input, false)
        .await
        .unwrap_err();
    assert!(
        e.ends_with(
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        ),
        "{e}"
    );
    running.shutdown().await;
}

fn webhook_crd(group: &str, url: &str, ca: &str) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("crontabs.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": true, "schema": schema},
                {"name": "v1", "served": true, "storage": false, "schema": schema},
            ],
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": url, "caBundle": b64(ca)}}}}})
}

async fn send(method: &str, url: &str, body: Option<&Value>) -> (u16, Value) {
    let client = common::client_for(url);
    let mut req = client.request(method.parse().expect("method"), url);
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await.expect("request");
    let code = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Waits (4 s at most) until a collection is served (its CRD established).
async fn wait_served(url: &str) {
    for _ in 0..200 {
        if send("GET", url, None).await.0 == 200 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("{url} is not served");
}

#[tokio::test]
async fn reads_lists_watches_and_writes_go_through_the_webhook() {
    let (ca, config) = issue("conversion-ca", &["127.0.0.1"]);
    let (port, accepted) = https_server_counted(config, convert_crontabs);
    let (running, _dir, base) = in_process().await;
    let crds = format!("{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    let (code, v) = send(
        "POST",
        &crds,
        Some(&webhook_crd(
            "example.com",
            &format!("https://127.0.0.1:{port}/convert"),
            &ca,
        )),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let v1 = format!("{base}/apis/example.com/v1/namespaces/default/crontabs");
    let v1beta1 = format!("{base}/apis/example.com/v1beta1/namespaces/default/crontabs");
    wait_served(&v1).await;

    // Written through the storage version, read through v1: converted by the webhook.
    let old = json!({"apiVersion": "example.com/v1beta1", "kind": "CronTab",
        "metadata": {"name": "old"}, "spec": {"hostPort": "localhost:1234"}});
    let (code, v) = send("POST", &v1beta1, Some(&old)).await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = send("GET", &format!("{v1}/old"), None).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["apiVersion"], "example.com/v1");
    assert_eq!(v["spec"], json!({"host": "localhost", "port": "1234"}));
    assert_eq!(v["metadata"]["labels"]["converted"], "yes");
    assert_ne!(
        v["metadata"]["resourceVersion"], "12345",
        "metadata restored: {v}"
    );

    // Written through v1: converted to v1beta1 to be stored.
    let new = json!({"apiVersion": "example.com/v1", "kind": "CronTab",
        "metadata": {"name": "new"}, "spec": {"host": "h", "port": "9"}});
    let (code, v) = send("POST", &v1, Some(&new)).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["apiVersion"], "example.com/v1");
    assert_eq!(v["spec"], json!({"host": "h", "port": "9"}));
    let (_, v) = send("GET", &format!("{v1beta1}/new"), None).await;
    assert_eq!(v["spec"], json!({"hostPort": "h:9"}), "{v}");

    // A list converts its items; a watch its events.
    let (code, list) = send("GET", &v1, None).await;
    assert_eq!(code, 200, "{list}");
    let specs: Vec<Value> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["spec"].clone())
        .collect();
    assert_eq!(
        specs,
        [
            json!({"host": "h", "port": "9"}),
            json!({"host": "localhost", "port": "1234"})
        ]
    );
    let resp = common::client_for(&v1)
        .get(format!("{v1}?watch=1&timeoutSeconds=1"))
        .send()
        .await
        .expect("watch");
    let text = resp.text().await.expect("events");
    let first: Value = serde_json::from_str(text.lines().next().expect("an event")).expect("json");
    assert_eq!(first["object"]["apiVersion"], "example.com/v1", "{first}");
    assert!(first["object"]["spec"].get("host").is_some(), "{first}");

    // A merge patch through v1 reads, patches and writes back through the webhook.
    let (code, v) = send("PATCH", &format!("{v1}/old"), None).await;
    assert_eq!(code, 415, "{v}");
    let resp = common::client_for(&v1)
        .patch(format!("{v1}/old"))
        .header("Content-Type", "application/merge-patch+json")
        .body(json!({"spec": {"port": "4321"}}).to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(resp.status().as_u16(), 200);
    let (_, v) = send("GET", &format!("{v1beta1}/old"), None).await;
    assert_eq!(v["spec"], json!({"hostPort": "localhost:4321"}), "{v}");

    // Every call above went over one kept-alive connection (requests were sequential).
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);

    // Field selectors read the version asked for: v1 selects on spec.host, which only the
    // converted objects have.
    let mut sel = webhook_crd(
        "sel.example.com",
        &format!("https://127.0.0.1:{port}/convert"),
        &ca,
    );
    sel["spec"]["versions"][0]["schema"] = json!({"openAPIV3Schema": {"type": "object",
        "properties": {"spec": {"type": "object", "properties": {"hostPort": {"type": "string"}}}}}});
    sel["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.hostPort"}]);
    sel["spec"]["versions"][1]["schema"] = json!({"openAPIV3Schema": {"type": "object",
        "properties": {"spec": {"type": "object", "properties": {"host": {"type": "string"}, "port": {"type": "string"}}}}}});
    sel["spec"]["versions"][1]["selectableFields"] = json!([{"jsonPath": ".spec.host"}]);
    let (code, v) = send("POST", &crds, Some(&sel)).await;
    assert_eq!(code, 201, "{v}");
    let sel_v1 = format!("{base}/apis/sel.example.com/v1/namespaces/default/crontabs");
    let sel_v1beta1 = format!("{base}/apis/sel.example.com/v1beta1/namespaces/default/crontabs");
    wait_served(&sel_v1beta1).await;
    for (name, hp) in [("one", "alpha:1"), ("two", "beta:2")] {
        let o = json!({"apiVersion": "sel.example.com/v1beta1", "kind": "CronTab",
            "metadata": {"name": name}, "spec": {"hostPort": hp}});
        let (code, v) = send("POST", &sel_v1beta1, Some(&o)).await;
        assert_eq!(code, 201, "{v}");
    }
    let (code, list) = send(
        "GET",
        &format!("{sel_v1}?fieldSelector=spec.host%3Dbeta"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{list}");
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["two"], "{list}");
    let (code, list) = send(
        "GET",
        &format!("{sel_v1beta1}?fieldSelector=spec.hostPort%3Dalpha:1"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1), "{list}");

    // Watches and deletecollection select the same way.
    let text = common::client_for(&sel_v1)
        .get(format!(
            "{sel_v1}?watch=1&timeoutSeconds=1&fieldSelector=spec.host%3Dbeta"
        ))
        .send()
        .await
        .expect("watch")
        .text()
        .await
        .expect("events");
    let watched: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(watched.len(), 1, "{text}");
    assert_eq!(watched[0]["object"]["metadata"]["name"], "two", "{text}");
    let (code, v) = send(
        "DELETE",
        &format!("{sel_v1}?fieldSelector=spec.host%3Dalpha"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{v}");
    let (_, left) = send("GET", &sel_v1, None).await;
    let names: Vec<&str> = left["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["two"], "{left}");

    // A webhook that is down: a prompt 500 worded as upstream's, nothing changed.
    let (code, v) = send(
        "POST",
        &crds,
        Some(&webhook_crd(
            "down.example.com",
            "https://127.0.0.1:1/convert",
            &ca,
        )),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let down_v1 = format!("{base}/apis/down.example.com/v1/namespaces/default/crontabs");
    let down_v1beta1 = format!("{base}/apis/down.example.com/v1beta1/namespaces/default/crontabs");
    wait_served(&down_v1beta1).await;
    let obj = json!({"apiVersion": "down.example.com/v1beta1", "kind": "CronTab", "metadata": {"name": "x"}, "spec": {"hostPort": "a:1"}});
    let (code, v) = send("POST", &down_v1beta1, Some(&obj)).await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = send("GET", &format!("{down_v1}/x"), None).await;
    assert_eq!(code, 500, "{v}");
    assert_eq!(
        v["message"],
        "conversion webhook for down.example.com/v1beta1, Kind=CronTab failed: Post \"https://127.0.0.1:1/convert?timeout=30s\": dial tcp 127.0.0.1:1: connect: connection refused"
    );
    let (code, v) = send("GET", &down_v1, None).await;
    assert_eq!(code, 500, "{v}");
    assert!(
        v["message"].as_str().unwrap_or_default().starts_with(
            "conversion webhook for down.example.com/v1beta1, Kind=CronTabList failed"
        ),
        "{v}"
    );
    running.shutdown().await;
}

/// kube-rs reads and writes both versions of a webhook-converted CRD, and kubectl prints each
/// version's view (the crest binary calling the test's webhook).
#[tokio::test]
async fn kube_rs_and_kubectl_read_and_write_both_versions() {
    use kube::api::{Api, ApiResource, DynamicObject, PostParams};
    use kube::core::GroupVersionKind;
    let (ca, config) = issue("conversion-ca", &["127.0.0.1", "convert.default.svc"]);
    let port = https_server(config, convert_crontabs);
    let s = common::Server::start();
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            Some(&webhook_crd(
                "example.com",
                &format!("https://127.0.0.1:{port}/convert"),
                &ca,
            )),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    s.wait_established("crontabs.example.com");
    let client = s.client().await;
    let api = |version: &str| -> Api<DynamicObject> {
        let gvk = GroupVersionKind::gvk("example.com", version, "CronTab");
        let ar = ApiResource::from_gvk_with_plural(&gvk, "crontabs");
        Api::namespaced_with(client.clone(), "default", &ar)
    };
    let (v1beta1, v1) = (api("v1beta1"), api("v1"));
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "CronTab",
        "metadata": {"name": "kr"}, "spec": {"host": "example.org", "port": "443"}}))
    .expect("object");
    let created = v1
        .create(&PostParams::default(), &obj)
        .await
        .expect("create through v1");
    assert_eq!(
        created.data["spec"],
        json!({"host": "example.org", "port": "443"})
    );
    let old = v1beta1.get("kr").await.expect("get through v1beta1");
    assert_eq!(old.data["spec"], json!({"hostPort": "example.org:443"}));
    let mut changed = old.clone();
    changed.data["spec"] = json!({"hostPort": "example.org:8443"});
    v1beta1
        .replace("kr", &PostParams::default(), &changed)
        .await
        .expect("replace through v1beta1");
    let new = v1.get("kr").await.expect("get through v1");
    assert_eq!(
        new.data["spec"],
        json!({"host": "example.org", "port": "8443"})
    );
    let out = s.kubectl_ok(&[
        "get",
        "crontabs.v1.example.com",
        "kr",
        "-o",
        "jsonpath={.spec.port}",
    ]);
    assert_eq!(out, "8443");
    let out = s.kubectl_ok(&[
        "get",
        "crontabs.v1beta1.example.com",
        "kr",
        "-o",
        "jsonpath={.spec.hostPort}",
    ]);
    assert_eq!(out, "example.org:8443");

    // The same through `clientConfig.service`: the Service's Endpoints route to the webhook,
    // verified as convert.default.svc, from kubectl's creates and reads.
    route_service_to(&s.base, port).await;
    let mut by_service = webhook_crd("svc.example.com", "", &ca);
    by_service["spec"]["conversion"]["webhook"]["clientConfig"] = json!({
        "service": {"namespace": "default", "name": "convert", "path": "/convert"}, "caBundle": b64(&ca)});
    let (code, v) = s
        .http_json(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            Some(&by_service),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    s.wait_established("crontabs.svc.example.com");
    s.apply_yaml(
        "apiVersion: svc.example.com/v1beta1\nkind: CronTab\nmetadata: {name: seed}\nspec: {hostPort: \"localhost:1234\"}\n",
    );
    let out = s.kubectl_ok(&[
        "get",
        "crontabs.v1.svc.example.com",
        "seed",
        "-o",
        "jsonpath={.spec.host} {.spec.port}",
    ]);
    assert_eq!(out, "localhost 1234");
}

/// The reviews [`counted`] answered.
static REVIEWS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// [`convert_crontabs`], counting the reviews.
fn counted(path: &str, host: &str, review: &Value) -> Value {
    REVIEWS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    convert_crontabs(path, host, review)
}

fn reviews() -> usize {
    REVIEWS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Objects stored in v1beta1 after the storage version moved to v1 (issue 28, item 1): every
/// path through v1 calls the webhook for them, as upstream's crConverter converts on every
/// decode; and still after v1beta1 is no longer served. Every write stores the object in v1,
/// a delete that only marks it and an update that changes nothing included (upstream encodes
/// every write in the storage version): v1 reads it without the webhook afterwards.
#[tokio::test]
async fn objects_in_the_old_storage_version_go_through_the_webhook() {
    let (ca, config) = issue("conversion-ca", &["127.0.0.1"]);
    let port = https_server(config, counted);
    let (running, _dir, base) = in_process().await;
    let crds = format!("{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    let (code, v) = send(
        "POST",
        &crds,
        Some(&webhook_crd(
            "moved.example.com",
            &format!("https://127.0.0.1:{port}/convert"),
            &ca,
        )),
    )
    .await;
    assert_eq!(code, 201, "{v}");
    let v1 = format!("{base}/apis/moved.example.com/v1/namespaces/default/crontabs");
    let v1beta1 = format!("{base}/apis/moved.example.com/v1beta1/namespaces/default/crontabs");
    wait_served(&v1beta1).await;
    for (name, hp) in [
        ("get", "a:1"),
        ("patch", "b:2"),
        ("fin", "c:3"),
        ("coll", "d:4"),
        ("late", "e:5"),
    ] {
        let mut o = json!({"apiVersion": "moved.example.com/v1beta1", "kind": "CronTab",
            "metadata": {"name": name}, "spec": {"hostPort": hp}});
        if name == "fin" {
            o["metadata"]["finalizers"] = json!(["example.com/keep"]);
        }
        if name == "coll" {
            o["metadata"]["labels"] = json!({"coll": "yes"});
        }
        let (code, v) = send("POST", &v1beta1, Some(&o)).await;
        assert_eq!(code, 201, "{v}");
    }
    // Storage moves to v1.
    let crd_url = format!("{crds}/crontabs.moved.example.com");
    let set_versions = |served_v1beta1: bool| {
        let crd_url = crd_url.clone();
        async move {
            let (_, mut crd) = send("GET", &crd_url, None).await;
            crd["spec"]["versions"][0]["storage"] = json!(false);
            crd["spec"]["versions"][0]["served"] = json!(served_v1beta1);
            crd["spec"]["versions"][1]["storage"] = json!(true);
            let (code, v) = send("PUT", &crd_url, Some(&crd)).await;
            assert_eq!(code, 200, "{v}");
        }
    };
    set_versions(true).await;
    let converted = |o: &Value, what: &str| {
        assert_eq!(o["apiVersion"], "moved.example.com/v1", "{what}: {o}");
        assert!(o["spec"]["host"].is_string(), "{what}: {o}");
        assert_eq!(o["metadata"]["labels"]["converted"], "yes", "{what}: {o}");
    };

    // GET, LIST (whole and chunked), watches from the cache and WatchList.
    let (code, v) = send("GET", &format!("{v1}/get"), None).await;
    assert_eq!(code, 200, "{v}");
    converted(&v, "get");
    assert_eq!(v["spec"], json!({"host": "a", "port": "1"}));
    let (_, list) = send("GET", &v1, None).await;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 5, "{list}");
    for i in &items {
        converted(i, "list");
    }
    let (_, page) = send("GET", &format!("{v1}?limit=2"), None).await;
    let cont = page["metadata"]["continue"].as_str().unwrap_or_default();
    let (_, page) = send("GET", &format!("{v1}?limit=2&continue={cont}"), None).await;
    for i in page["items"].as_array().cloned().unwrap_or_default() {
        converted(&i, "continued list");
    }
    for query in [
        "resourceVersion=0",
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
    ] {
        let text = common::client_for(&v1)
            .get(format!("{v1}?watch=1&timeoutSeconds=1&{query}"))
            .send()
            .await
            .expect("watch")
            .text()
            .await
            .expect("events");
        let events: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert_eq!(events.len(), 5, "{query}: {text}");
        for e in &events {
            converted(&e["object"], query);
        }
    }

    // A patch reads through the webhook, answers v1 and stores v1 (v1beta1 now converts).
    let resp = common::client_for(&v1)
        .patch(format!("{v1}/patch"))
        .header("Content-Type", "application/merge-patch+json")
        .body(json!({"spec": {"port": "4321"}}).to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(resp.status().as_u16(), 200);
    let v: Value = serde_json::from_str(&resp.text().await.expect("patched")).expect("json");
    converted(&v, "patch");
    assert_eq!(v["spec"], json!({"host": "b", "port": "4321"}));
    let (_, v) = send("GET", &format!("{v1beta1}/patch"), None).await;
    assert_eq!(v["spec"], json!({"hostPort": "b:4321"}), "{v}");

    // Delete answers the kept object, deletecollection the deleted ones, converted.
    let (code, v) = send("DELETE", &format!("{v1}/fin"), None).await;
    assert_eq!(code, 200, "{v}");
    converted(&v, "delete");
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    // Marked for deletion: written, so stored in v1 now.
    let before = reviews();
    let (_, v) = send("GET", &format!("{v1}/fin"), None).await;
    assert_eq!(v["apiVersion"], "moved.example.com/v1", "{v}");
    assert_eq!(reviews(), before, "read without the webhook: {v}");
    let (_, v) = send("GET", &format!("{v1beta1}/fin"), None).await;
    assert_eq!(v["spec"], json!({"hostPort": "c:3"}), "{v}");
    assert_eq!(reviews(), before + 1);
    // An update that changes nothing writes the object in v1 (a new resourceVersion).
    let (_, got) = send("GET", &format!("{v1}/get"), None).await;
    let (code, put) = send("PUT", &format!("{v1}/get"), Some(&got)).await;
    assert_eq!(code, 200, "{put}");
    converted(&put, "no-op update");
    assert_ne!(
        put["metadata"]["resourceVersion"], got["metadata"]["resourceVersion"],
        "rewritten in the storage version: {put}"
    );
    let before = reviews();
    let (_, v) = send("GET", &format!("{v1}/get"), None).await;
    assert_eq!(v["spec"], json!({"host": "a", "port": "1"}), "{v}");
    assert_eq!(reviews(), before, "read without the webhook: {v}");
    let (code, v) = send("DELETE", &format!("{v1}?labelSelector=coll%3Dyes"), None).await;
    assert_eq!(code, 200, "{v}");
    let items = v["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "{v}");
    converted(&items[0], "deletecollection");

    // v1beta1 no longer served: what is still stored in it converts all the same.
    set_versions(false).await;
    let mut code = 0;
    for _ in 0..100 {
        code = send("GET", &v1beta1, None).await.0;
        if code == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(code, 404, "v1beta1 is no longer served");
    let (code, v) = send("GET", &format!("{v1}/late"), None).await;
    assert_eq!(code, 200, "{v}");
    converted(&v, "get after v1beta1 stopped being served");
    assert_eq!(v["spec"], json!({"host": "e", "port": "5"}));
    running.shutdown().await;
}
