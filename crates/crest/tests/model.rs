//! Model-based test: random sequences of creates, updates and deletes, interleaved with watches
//! opened at various revisions and chunked lists whose pages are read between writes, checked
//! against a simple in-memory model: no lost, duplicated or reordered events, every page of a
//! list at the same revision and together exactly the state at that revision.
//!
//! The server keeps a tiny in-memory history, so watches and later pages also exercise the
//! storage fallback. Seeds are fixed (set CREST_MODEL_SEED to try another one).

mod common;
use common::watch::*;
use common::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Write {
    Put { name: String, rv: i64, added: bool },
    Delete { name: String },
}

/// name -> resourceVersion of its current state.
type State = BTreeMap<String, i64>;

struct PendingList {
    /// Writes done when the list started: its items must be the state after them.
    after_writes: usize,
    limit: u64,
    rv: String,
    cont: String,
    items: State,
}

struct OpenWatch {
    reader: WatchReader,
    after_writes: usize,
}

const BASE: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

async fn start_list(s: &Server, limit: u64, after_writes: usize) -> PendingList {
    let mut l = PendingList {
        after_writes,
        limit,
        rv: String::new(),
        cont: String::new(),
        items: State::new(),
    };
    page(s, &mut l).await;
    l
}

/// Reads the next page; true when the list is complete.
async fn page(s: &Server, l: &mut PendingList) -> bool {
    let path = if l.cont.is_empty() {
        format!("{BASE}?limit={}", l.limit)
    } else {
        format!("{BASE}?limit={}&continue={}", l.limit, l.cont)
    };
    let (code, v) = get_json(s, &path).await;
    assert_eq!(code, 200, "{path}: {v}");
    let rv = v["metadata"]["resourceVersion"].as_str().expect("rv");
    if l.rv.is_empty() {
        l.rv = rv.to_string();
    }
    assert_eq!(rv, l.rv, "every page of one list is at the same revision");
    let items = v["items"].as_array().expect("items");
    assert!(items.len() as u64 <= l.limit);
    for i in items {
        let name = i["metadata"]["name"].as_str().expect("name").to_string();
        assert!(
            l.items.insert(name.clone(), rv_of(i)).is_none(),
            "{name} listed twice"
        );
    }
    l.cont = v["metadata"]["continue"].as_str().unwrap_or("").to_string();
    l.cont.is_empty()
}

fn state_after(writes: &[Write], n: usize) -> State {
    let mut st = State::new();
    for w in &writes[..n] {
        match w {
            Write::Put { name, rv, .. } => {
                st.insert(name.clone(), *rv);
            }
            Write::Delete { name } => {
                st.remove(name);
            }
        }
    }
    st
}

/// Reads a watch's events and checks them against the writes after its start.
async fn check_watch(w: &mut OpenWatch, writes: &[Write], seed: u64) {
    let expected = &writes[w.after_writes..];
    let mut last_rv = 0;
    for (i, want) in expected.iter().enumerate() {
        let ev = w
            .reader
            .next(Duration::from_secs(10))
            .await
            .unwrap_or_else(|| {
                panic!(
                    "seed {seed}: watch from write {} lost event {i} ({want:?})",
                    w.after_writes
                )
            });
        let t = ev["type"].as_str().expect("type");
        let obj = &ev["object"];
        let name = obj["metadata"]["name"].as_str().expect("name");
        let rv = rv_of(obj);
        assert!(
            rv > last_rv,
            "seed {seed}: events out of order: {rv} after {last_rv}"
        );
        last_rv = rv;
        match want {
            Write::Put {
                name: n,
                rv: r,
                added,
            } => {
                assert_eq!(
                    (t, name, rv),
                    (if *added { "ADDED" } else { "MODIFIED" }, n.as_str(), *r),
                    "seed {seed}: event {i} of the watch from write {}",
                    w.after_writes
                );
            }
            Write::Delete { name: n } => {
                assert_eq!((t, name), ("DELETED", n.as_str()), "seed {seed}: event {i}");
            }
        }
    }
    assert!(
        w.reader.next(Duration::from_millis(100)).await.is_none(),
        "seed {seed}: a watch got more events than there were writes"
    );
}

async fn run(seed: u64, ops: usize) {
    let s = Server::start_with(&["--watch-history-capacity", "40"]);
    s.apply_yaml(CRONTAB_CRD);
    let mut rng = Rng(seed.max(1));
    let mut writes: Vec<Write> = vec![];
    let mut current = State::new();
    let mut lists: Vec<PendingList> = vec![];
    let mut done_lists: Vec<PendingList> = vec![];
    let mut watches: Vec<OpenWatch> = vec![];

    let rv0 = list_rv(&s).await.to_string();
    watches.push(OpenWatch {
        reader: WatchReader::open(&s, &format!("{BASE}?watch=1&resourceVersion={rv0}")).await,
        after_writes: 0,
    });

    for _ in 0..ops {
        let name = format!("m-{:02}", rng.below(24));
        match rng.below(12) {
            0..=4 => {
                if current.contains_key(&name) {
                    let v = patch_ct(
                        &s,
                        "default",
                        &name,
                        json!({"spec": {"replicas": rng.below(1000)}}),
                    )
                    .await;
                    current.insert(name.clone(), rv_of(&v));
                    writes.push(Write::Put {
                        name,
                        rv: rv_of(&v),
                        added: false,
                    });
                } else {
                    let v = create_ct(&s, "default", &name, json!({"r": rng.below(3).to_string()}))
                        .await;
                    current.insert(name.clone(), rv_of(&v));
                    writes.push(Write::Put {
                        name,
                        rv: rv_of(&v),
                        added: true,
                    });
                }
            }
            5..=6 => {
                if current.remove(&name).is_some() {
                    delete_ct(&s, "default", &name).await;
                    writes.push(Write::Delete { name });
                }
            }
            7..=8 => {
                let l = start_list(&s, 1 + rng.below(6), writes.len()).await;
                if l.cont.is_empty() {
                    done_lists.push(l);
                } else {
                    lists.push(l);
                }
            }
            9..=10 => {
                if !lists.is_empty() {
                    let i = rng.below(lists.len() as u64) as usize;
                    if page(&s, &mut lists[i]).await {
                        done_lists.push(lists.swap_remove(i));
                    }
                }
            }
            _ => {
                let (code, v) = get_json(&s, BASE).await;
                assert_eq!(code, 200);
                let rv = v["metadata"]["resourceVersion"]
                    .as_str()
                    .expect("rv")
                    .to_string();
                let listed: State = v["items"]
                    .as_array()
                    .expect("items")
                    .iter()
                    .map(|i| {
                        (
                            i["metadata"]["name"].as_str().expect("name").to_string(),
                            rv_of(i),
                        )
                    })
                    .collect();
                assert_eq!(
                    listed, current,
                    "seed {seed}: a plain list reads the latest state"
                );
                watches.push(OpenWatch {
                    reader: WatchReader::open(&s, &format!("{BASE}?watch=1&resourceVersion={rv}"))
                        .await,
                    after_writes: writes.len(),
                });
            }
        }
    }
    for mut l in lists {
        while !page(&s, &mut l).await {}
        done_lists.push(l);
    }
    for l in &done_lists {
        assert_eq!(
            l.items,
            state_after(&writes, l.after_writes),
            "seed {seed}: a chunked list (limit {}) is the state at its revision",
            l.limit
        );
    }
    for w in &mut watches {
        check_watch(w, &writes, seed).await;
    }
    assert!(
        done_lists.len() > 3 && watches.len() > 3,
        "the sequence exercised lists and watches"
    );
    s.stop();
}

#[tokio::test]
async fn random_histories_match_the_model() {
    let seeds: Vec<u64> = match std::env::var("CREST_MODEL_SEED") {
        Ok(s) => vec![s.parse().expect("CREST_MODEL_SEED is a number")],
        Err(_) => vec![1, 7, 42],
    };
    for seed in seeds {
        run(seed, 250).await;
    }
}
