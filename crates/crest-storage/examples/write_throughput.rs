//! Durable create throughput of the embedded store alone (no HTTP):
//!
//!     cargo run --release -p crest-storage --example write_throughput -- [CLIENTS] [SECONDS] [VALUE_BYTES]
//!
//! Tells how much of the server's create rate the storage layer allows.

use bytes::Bytes;
use crest_storage::{EmbeddedOptions, EmbeddedStore, Storage};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().unwrap_or(0));
    let clients = args.next().filter(|&n| n > 0).unwrap_or(64);
    let seconds = args.next().filter(|&n| n > 0).unwrap_or(5) as u64;
    let size = args.next().filter(|&n| n > 0).unwrap_or(2048);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::open(dir.path(), EmbeddedOptions::default()).expect("open");
    // Incompressible (pseudo-random) bytes: the store's LZ4 compression gains nothing, so this is
    // the worst case for the bytes written per commit.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let value: Bytes = (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect::<Vec<u8>>()
        .into();
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let t0 = Instant::now();
    let mut tasks = vec![];
    for _ in 0..clients {
        let (store, value, next) = (store.clone(), value.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let key = format!("/registry/g/r/default/obj-{i}");
                store.create(&key, value.clone()).await.expect("create");
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let n = next.load(Ordering::Relaxed);
    println!(
        "{n} durable creates of {size} B from {clients} clients: {:.0}/s",
        n as f64 / t0.elapsed().as_secs_f64()
    );
    store.close().await;
}
