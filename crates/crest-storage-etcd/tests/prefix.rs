//! Two stores with different prefixes on one etcd: each sees only its own keys, under
//! `/registry/`, while etcd holds them under the prefixes; revisions are etcd's, shared.

use bytes::Bytes;
use crest_storage::{RangeRequest, Storage, WatchEvent, WatchRequest, WriteOutcome};
use crest_storage_etcd::testing::EtcdCluster;
use crest_storage_etcd::{EtcdOptions, EtcdStore};
use std::time::Duration;

async fn put(s: &EtcdStore, key: &str, v: &'static str) -> crest_storage::KeyValue {
    match s
        .create(key, Bytes::from_static(v.as_bytes()))
        .await
        .expect("create")
    {
        WriteOutcome::Done(kv) => kv,
        other => panic!("{other:?}"),
    }
}

async fn all(s: &EtcdStore) -> Vec<(String, Bytes)> {
    s.range(RangeRequest {
        prefix: "/registry/".into(),
        count: true,
        ..Default::default()
    })
    .await
    .expect("range")
    .kvs
    .into_iter()
    .map(|kv| (kv.key, kv.value))
    .collect()
}

async fn next(w: &mut crest_storage::WatchStream) -> (String, crest_storage::Revision) {
    match tokio::time::timeout(Duration::from_secs(5), w.next()).await {
        Ok(Some(Ok(WatchEvent::Change(ev)))) => (ev.kv.key, ev.kv.mod_revision),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefixes_separate_stores_and_share_revisions() {
    let cluster = tokio::task::block_in_place(|| EtcdCluster::start(1));
    let open = |prefix: &str| {
        EtcdStore::connect(EtcdOptions {
            endpoints: cluster.client_urls(),
            prefix: prefix.into(),
            ..Default::default()
        })
    };
    let a = open("/registry").await.expect("connect a");
    let b = open("/crest-b/").await.expect("connect b");
    let mut wa = a
        .watch(WatchRequest::new("/registry/", 0))
        .await
        .expect("watch a");
    let mut wb = b
        .watch(WatchRequest::new("/registry/", 0))
        .await
        .expect("watch b");
    let a1 = put(&a, "/registry/namespaces/default", "a").await;
    let b1 = put(&b, "/registry/namespaces/default", "b").await;
    let b2 = put(&b, "/registry/pods/default/p", "b").await;
    assert_eq!(
        b1.mod_revision,
        a1.mod_revision + 1,
        "one revision sequence"
    );
    assert_eq!(b2.mod_revision, b1.mod_revision + 1);
    assert_eq!(a.current_revision().await.expect("rev"), b2.mod_revision);

    assert_eq!(
        all(&a).await,
        [(
            "/registry/namespaces/default".to_string(),
            Bytes::from_static(b"a")
        )]
    );
    assert_eq!(
        all(&b).await,
        [
            (
                "/registry/namespaces/default".to_string(),
                Bytes::from_static(b"b")
            ),
            (
                "/registry/pods/default/p".to_string(),
                Bytes::from_static(b"b")
            ),
        ]
    );
    // In etcd: kube-apiserver's layout under each prefix.
    let mut raw = etcd_client::Client::connect(cluster.client_urls(), None)
        .await
        .expect("etcd client");
    let keys: Vec<String> = raw
        .get(
            "/",
            Some(
                etcd_client::GetOptions::new()
                    .with_prefix()
                    .with_keys_only(),
            ),
        )
        .await
        .expect("raw range")
        .kvs()
        .iter()
        .map(|kv| String::from_utf8_lossy(kv.key()).into_owned())
        .collect();
    assert_eq!(
        keys,
        [
            "/crest-b/namespaces/default",
            "/crest-b/pods/default/p",
            "/registry/namespaces/default"
        ]
    );
    // Deletes, gets and watches map back too.
    match b
        .delete("/registry/pods/default/p", 0)
        .await
        .expect("delete")
    {
        WriteOutcome::Done(kv) => assert_eq!(kv.key, "/registry/pods/default/p"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        a.get("/registry/namespaces/default", 0)
            .await
            .expect("get")
            .map(|kv| kv.value),
        Some(Bytes::from_static(b"a"))
    );
    assert_eq!(
        next(&mut wa).await,
        ("/registry/namespaces/default".to_string(), a1.mod_revision)
    );
    assert_eq!(
        next(&mut wb).await,
        ("/registry/namespaces/default".to_string(), b1.mod_revision)
    );
    assert_eq!(
        next(&mut wb).await,
        ("/registry/pods/default/p".to_string(), b2.mod_revision)
    );
    let del = next(&mut wb).await;
    assert_eq!(
        del,
        ("/registry/pods/default/p".to_string(), b2.mod_revision + 1)
    );
    // Keys outside /registry are refused rather than mapped ambiguously.
    assert!(a.get("/other/x", 0).await.is_err());
    a.close().await;
    b.close().await;
}

/// `https://` endpoints with a CA and a client certificate (`--etcd-cafile`, `--etcd-certfile`,
/// `--etcd-keyfile`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_client_certificates() {
    let cluster = tokio::task::block_in_place(|| EtcdCluster::start_tls(1));
    assert!(cluster.client_urls()[0].starts_with("https://"));
    let s = EtcdStore::connect(EtcdOptions {
        endpoints: cluster.client_urls(),
        tls: cluster.tls(),
        ..Default::default()
    })
    .await
    .expect("connect over TLS");
    let kv = put(&s, "/registry/secrets/default/s", "x").await;
    assert_eq!(s.current_revision().await.expect("rev"), kv.mod_revision);
    s.close().await;
    // Without the client certificate etcd refuses the connection.
    let refused = EtcdStore::connect(EtcdOptions {
        endpoints: cluster.client_urls(),
        tls: cluster.tls().map(|t| crest_storage_etcd::EtcdTls {
            cert_file: None,
            key_file: None,
            ..t
        }),
        dial_timeout: Duration::from_millis(500),
        ..Default::default()
    })
    .await;
    assert!(refused.is_err());
}
