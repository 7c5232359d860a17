//! `openapi`: OpenAPI publishing. A group-version's v3 document served from the cache, and the
//! time from a CRD create to its custom resources being served (first create of one succeeds)
//! and to its OpenAPI v3 document carrying the kind, with 500 other CRDs installed.

use crate::{start, Row};
use std::path::Path;
use std::time::{Duration, Instant};

const INSTALLED: usize = 500;
const DOC_GETS: usize = 200;
const CREATES: usize = 9;

fn crd(group: &str, kind: &str) -> String {
    let plural = format!("{}s", kind.to_lowercase());
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{{"name":"{plural}.{group}"}},"spec":{{"group":"{group}","scope":"Namespaced","names":{{"plural":"{plural}","singular":"{}","kind":"{kind}"}},"versions":[{{"name":"v1","served":true,"storage":true,"subresources":{{"status":{{}}}},"schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{{"type":"object","required":["cronSpec"],"properties":{{"cronSpec":{{"type":"string","pattern":"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){{4}}$","description":"The cron spec"}},"image":{{"type":"string","maxLength":256}},"replicas":{{"type":"integer","minimum":1,"maximum":10,"default":1}},"port":{{"x-kubernetes-int-or-string":true}},"labels":{{"type":"object","additionalProperties":{{"type":"string"}}}},"items":{{"type":"array","items":{{"type":"object","required":["name"],"properties":{{"name":{{"type":"string"}},"value":{{"type":"string","nullable":true}}}}}},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"]}}}}}},"status":{{"type":"object","properties":{{"phase":{{"type":"string","enum":["Pending","Running","Done"]}}}}}}}}}}}}}}]}}}}"#,
        kind.to_lowercase()
    )
}

fn cr(group: &str, kind: &str) -> String {
    format!(
        r#"{{"apiVersion":"{group}/v1","kind":"{kind}","metadata":{{"name":"first"}},"spec":{{"cronSpec":"* * * * */5","image":"img"}}}}"#
    )
}

async fn post(client: &reqwest::Client, url: &str, body: String) -> u16 {
    client
        .post(url)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn json(r: reqwest::Response) -> serde_json::Value {
    let b = r.bytes().await.unwrap_or_default();
    serde_json::from_slice(&b).unwrap_or_default()
}

/// The v3 document path of a group-version from the discovery root, and whether it holds `kind`.
async fn doc_has_kind(client: &reqwest::Client, base: &str, group: &str, kind: &str) -> bool {
    let Ok(r) = client.get(format!("{base}/openapi/v3")).send().await else {
        return false;
    };
    let root: serde_json::Value = json(r).await;
    let Some(url) = root["paths"][format!("apis/{group}/v1")]["serverRelativeURL"].as_str() else {
        return false;
    };
    let Ok(r) = client.get(format!("{base}{url}")).send().await else {
        return false;
    };
    let doc: serde_json::Value = json(r).await;
    let name: String = group.split('.').rev().collect::<Vec<_>>().join(".");
    doc["components"]["schemas"][format!("{name}.v1.{kind}")].is_object()
}

pub(crate) async fn openapi(binary: &Path) -> Vec<Row> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = start(binary, dir.path());
    let base = server.base.clone();
    let client = crate::client(&base);
    let crds = format!("{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions");

    let t0 = Instant::now();
    for i in 0..INSTALLED {
        let group = format!("g{i}.bench.example.com");
        assert_eq!(
            post(&client, &crds, crd(&group, &format!("Kind{i}"))).await,
            201
        );
    }
    let install = t0.elapsed();

    // One group-version's document from the cache: build it once, then time plain GETs.
    let doc_url = format!("{base}/openapi/v3/apis/g0.bench.example.com/v1");
    let mut times = vec![];
    let mut size = 0;
    for i in 0..=DOC_GETS {
        let t = Instant::now();
        let r = client.get(&doc_url).send().await.expect("openapi get");
        assert!(r.status().is_success());
        let body = r.bytes().await.expect("body");
        if i > 0 {
            times.push(t.elapsed());
        }
        size = body.len();
    }
    let doc = median(times);

    let mut served = vec![];
    let mut published = vec![];
    for i in 0..CREATES {
        let group = format!("new{i}.bench.example.com");
        let kind = format!("New{i}");
        let t = Instant::now();
        assert_eq!(post(&client, &crds, crd(&group, &kind)).await, 201);
        let collection = format!(
            "{base}/apis/{group}/v1/namespaces/default/{}s",
            kind.to_lowercase()
        );
        while post(&client, &collection, cr(&group, &kind)).await != 201 {
            assert!(t.elapsed() < Duration::from_secs(30), "{kind} never served");
        }
        served.push(t.elapsed());
        while !doc_has_kind(&client, &base, &group, &kind).await {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "{kind} never published"
            );
        }
        published.push(t.elapsed());
    }
    drop(server);
    vec![
        (
            format!(
                "/openapi/v3 for one group-version from cache ({:.0} KiB, {INSTALLED} CRDs installed, median of {DOC_GETS})",
                size as f64 / 1024.0
            ),
            ms(doc),
            "< 5 ms".into(),
        ),
        (
            format!("CRD create -> served (first CR create succeeds) with {INSTALLED} CRDs installed (median of {CREATES})"),
            ms(median(served)),
            "< 100 ms".into(),
        ),
        (
            format!("CRD create -> OpenAPI v3 document has the kind, {INSTALLED} CRDs installed (median of {CREATES})"),
            ms(median(published)),
            "< 100 ms".into(),
        ),
        (
            format!("installing {INSTALLED} CRDs one by one (each create -> 201)"),
            format!("{:.1} s", install.as_secs_f64()),
            "-".into(),
        ),
    ]
}
