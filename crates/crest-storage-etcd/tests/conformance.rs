//! The storage contract suite (`crest_storage::conformance`) against [`EtcdStore`]: each case
//! gets a fresh single-member etcd (its fixture), whose client URL it leaves in the case's dir
//! for `open`; reopening connects again to the same etcd with the same prefix.

use crest_storage::conformance::Backend;
use crest_storage::{Storage, StorageError};
use crest_storage_etcd::testing::{EtcdCluster, PROGRESS_INTERVAL};
use crest_storage_etcd::{EtcdOptions, EtcdStore};
use std::sync::Arc;
use std::time::Duration;

fn etcd() -> Backend {
    Backend::new(|dir| {
        Box::pin(async move {
            let endpoints = std::fs::read_to_string(dir.join("endpoints"))
                .map_err(|e| StorageError::Internal(e.to_string()))?;
            let s: Arc<dyn Storage> = EtcdStore::connect(EtcdOptions {
                endpoints: endpoints.split(',').map(str::to_string).collect(),
                ..Default::default()
            })
            .await?;
            Ok(s)
        })
    })
    .fixture(|dir| {
        let cluster = EtcdCluster::start(1);
        std::fs::write(dir.join("endpoints"), cluster.endpoints_arg()).expect("write endpoints");
        Box::new(cluster)
    })
    // An empty etcd is at revision 1.
    .empty_revision(1)
    .progress_within(PROGRESS_INTERVAL + Duration::from_secs(1))
}

crest_storage::conformance_tests!(etcd());
