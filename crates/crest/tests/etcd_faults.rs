//! Crest on etcd under faults (issue #18): a concurrent history of creates, updates, deletes and
//! reads against two replicas while an etcd member and a replica are killed, checked
//! linearizable per key with no acknowledged write lost (`common/linearizability.rs`); losing
//! one of three etcd members; losing all of etcd (prompt 5xx Status errors, /readyz failing,
//! service and watches resuming by themselves); etcd hanging (SIGSTOP); watches and lists from
//! a revision etcd compacted (410). Needs Debian's `etcd` and `etcdctl` (fails if they are
//! missing). The tests run one at a time: they measure latencies.

mod common;

use common::linearizability::{check_final, History, Kind, Outcome};
use common::replicas::*;
use common::watch::WatchReader;
use common::Server;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// One test at a time: they measure latencies on a small machine.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A tiny deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// How a write's HTTP answer classifies: acknowledged, definitely refused, or unknown.
fn write_outcome(answer: &Result<(u16, Value), String>) -> Outcome {
    match answer {
        Ok((200 | 201, v)) => Outcome::Ok {
            rv: v["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|s| s.parse().ok()),
            value: value_of(v),
        },
        // Refused before anything was written.
        Ok((code @ (400 | 404 | 409 | 422 | 429), v)) => {
            Outcome::Failed(format!("{code} {}", v["reason"].as_str().unwrap_or("")))
        }
        Ok((code, v)) => Outcome::Unknown(format!("{code} {}", short(v))),
        Err(e) => Outcome::Unknown(format!(
            "transport: {}",
            e.chars().take(120).collect::<String>()
        )),
    }
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(200).collect()
}

/// A replica's current base URL (it changes when the replica is restarted).
type Base = Arc<RwLock<String>>;

struct Client {
    id: usize,
    /// Index of the replica this client talks to.
    replica: usize,
    base: Base,
    http: reqwest::Client,
    history: Arc<History>,
    rng: Rng,
    seq: i64,
    /// The last resourceVersion this client saw per key.
    seen: HashMap<String, u64>,
    /// 5xx answers and transport errors, with their invocation instants.
    errors: Vec<(Duration, Duration, String)>,
}

impl Client {
    async fn step(&mut self, keys: &[String]) {
        let key = keys[(self.rng.next() % keys.len() as u64) as usize].clone();
        let name = key.split('/').nth(1).expect("ns/name").to_string();
        let base = self.base.read().expect("base").clone();
        let url = format!("{base}{CMS}/{name}");
        self.seq += 1;
        let value = self.id as i64 * 1_000_000 + self.seq;
        let choice = self.rng.next() % 100;
        let known = self.seen.get(&key).copied();
        let invoked = self.history.now();
        let (kind, answer) = if choice < 35 || (choice < 60 && known.is_none()) {
            (Kind::Get, request(&self.http, "GET", &url, None).await)
        } else if choice < 60 {
            let mut body = configmap(&name, value);
            body["metadata"]["resourceVersion"] = json!(known.expect("known").to_string());
            (
                Kind::Update {
                    value,
                    expected_rv: known,
                },
                request(&self.http, "PUT", &url, Some(&body)).await,
            )
        } else if choice < 70 {
            (
                Kind::Update {
                    value,
                    expected_rv: None,
                },
                request(&self.http, "PUT", &url, Some(&configmap(&name, value))).await,
            )
        } else if choice < 87 {
            (
                Kind::Create { value },
                request(
                    &self.http,
                    "POST",
                    &format!("{base}{CMS}"),
                    Some(&configmap(&name, value)),
                )
                .await,
            )
        } else {
            let body = match known {
                Some(rv) => json!({
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "preconditions": {"resourceVersion": rv.to_string()},
                }),
                None => json!({"apiVersion": "v1", "kind": "DeleteOptions"}),
            };
            (
                Kind::Delete { expected_rv: known },
                request(&self.http, "DELETE", &url, Some(&body)).await,
            )
        };
        let outcome = match (&kind, &answer) {
            (Kind::Get, Ok((404, _))) => Outcome::NotFound,
            (Kind::Get, Ok((200, v))) => Outcome::Ok {
                rv: v["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|s| s.parse().ok()),
                value: value_of(v),
            },
            (Kind::Get, other) => write_outcome(other),
            (_, a) => write_outcome(a),
        };
        match (&kind, &outcome) {
            (Kind::Delete { .. }, Outcome::Ok { .. }) | (_, Outcome::NotFound) => {
                self.seen.remove(&key);
            }
            (_, Outcome::Ok { rv: Some(rv), .. }) => {
                self.seen.insert(key.clone(), *rv);
            }
            (_, Outcome::Failed(_)) => {
                self.seen.remove(&key);
            }
            _ => {}
        }
        if let Outcome::Unknown(why) = &outcome {
            self.errors
                .push((invoked, self.history.now(), format!("{kind:?}: {why}")));
        }
        self.history.record(self.id, &key, kind, invoked, outcome);
    }
}

#[test]
fn concurrent_history_with_faults_is_linearizable() {
    let _serial = serial();
    let started = Instant::now();
    let mut etcd = EtcdCluster::start(3);
    let pki = tempfile::tempdir().expect("tempdir");
    let flags = ["--etcd-request-timeout", "3s"];
    let a = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &flags);
    let mut b = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &flags);
    let bases: Vec<Base> = vec![
        Arc::new(RwLock::new(a.base.clone())),
        Arc::new(RwLock::new(b.base.clone())),
    ];
    let http = admin_client(pki.path(), Duration::from_secs(8));
    let history = Arc::new(History::new());
    let keys: Vec<String> = (0..8).map(|i| format!("default/lin-{i}")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let rt = runtime();
    let clients: Vec<_> = (0..4)
        .map(|id| {
            let mut client = Client {
                id,
                replica: id % 2,
                base: bases[id % 2].clone(),
                http: http.clone(),
                history: history.clone(),
                rng: Rng(0x9E37_79B9_7F4A_7C15 ^ ((id as u64 + 1) * 0x1234_5678)),
                seq: 0,
                seen: HashMap::new(),
                errors: vec![],
            };
            let keys = keys.clone();
            let stop = stop.clone();
            rt.spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) && n < 3000 {
                    client.step(&keys).await;
                    n += 1;
                    // A client of a dead replica gets connection refused at once: pace it.
                    if client
                        .errors
                        .last()
                        .is_some_and(|e| e.1 + Duration::from_millis(5) > client.history.now())
                    {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                client
            })
        })
        .collect();

    // Faults: an etcd member killed and restarted, then replica B killed and restarted.
    let at = |t: f64| {
        let wake = Duration::from_secs_f64(t);
        let now = history.now();
        if wake > now {
            std::thread::sleep(wake - now);
        }
    };
    let raft_leader = raft_leader(&etcd);
    at(1.5);
    etcd.kill(raft_leader);
    let member_killed = history.now();
    at(3.5);
    etcd.restart(raft_leader);
    let member_back = history.now();
    at(5.0);
    b.kill9_in_place();
    let replica_killed = history.now();
    // Down for a second: its clients see connection errors meanwhile.
    at(6.0);
    let b2 = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &flags);
    *bases[1].write().expect("base") = b2.base.clone();
    let replica_back = history.now();
    at(replica_back.as_secs_f64().max(8.0) + 3.0);
    stop.store(true, Ordering::Relaxed);
    let clients: Vec<Client> = clients
        .into_iter()
        .map(|h| rt.block_on(h).expect("client task"))
        .collect();
    let ops = history.ops();

    // Final reads of every key through both replicas.
    let finals_history = History::new();
    rt.block_on(async {
        for key in &keys {
            let name = key.split('/').nth(1).expect("name");
            for (i, base) in [&a.base, &b2.base].iter().enumerate() {
                let invoked = finals_history.now();
                let answer = request(&http, "GET", &format!("{base}{CMS}/{name}"), None).await;
                let outcome = match &answer {
                    Ok((404, _)) => Outcome::NotFound,
                    Ok((200, v)) => Outcome::Ok {
                        rv: Some(rv(v)),
                        value: value_of(v),
                    },
                    other => write_outcome(other),
                };
                finals_history.record(100 + i, key, Kind::Get, invoked, outcome);
            }
        }
    });
    // The finals come after every op of the history.
    let offset = history.now() + Duration::from_secs(1);
    let finals: Vec<_> = finals_history
        .ops()
        .into_iter()
        .enumerate()
        .map(|(i, mut op)| {
            op.id = ops.len() + i;
            op.invoked += offset;
            op.completed += offset;
            op
        })
        .collect();

    let count = |f: &dyn Fn(&Outcome) -> bool| ops.iter().filter(|o| f(&o.outcome)).count();
    let acked_writes = ops
        .iter()
        .filter(|o| o.kind != Kind::Get && matches!(o.outcome, Outcome::Ok { .. }))
        .count();
    eprintln!(
        "history: {} ops ({} acknowledged writes, {} ok, {} not found, {} refused, {} unknown); etcd member {raft_leader} (raft leader) killed {:?}..{:?}, replica B killed {:?}..{:?}; total {:?}",
        ops.len(),
        acked_writes,
        count(&|o| matches!(o, Outcome::Ok { .. })),
        count(&|o| matches!(o, Outcome::NotFound)),
        count(&|o| matches!(o, Outcome::Failed(_))),
        count(&|o| matches!(o, Outcome::Unknown(_))),
        member_killed,
        member_back,
        replica_killed,
        replica_back,
        started.elapsed(),
    );
    for c in &clients {
        for (from, to, why) in c.errors.iter().take(5) {
            eprintln!(
                "  client {} (replica {}): {:.3}s..{:.3}s {why}",
                c.id,
                c.replica,
                from.as_secs_f64(),
                to.as_secs_f64()
            );
        }
    }
    if let Err(errors) = check_final(&ops, &finals) {
        let dump: Vec<String> = ops
            .iter()
            .chain(finals.iter())
            .map(|o| o.to_string())
            .collect();
        let path = std::env::temp_dir().join(format!("crest-history-{}.txt", std::process::id()));
        let _ = std::fs::write(&path, dump.join("\n"));
        panic!(
            "the history is not linearizable ({} violations; whole history in {}):\n{}\n{}",
            errors.len(),
            path.display(),
            errors
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
            logs(&[&a, &b, &b2])
        );
    }
    // The check is not vacuous: a final read showing an older acknowledged write fails it.
    let tampered = finals.iter().enumerate().find_map(|(i, fin)| {
        let Outcome::Ok { rv: Some(last), .. } = fin.outcome else {
            return None;
        };
        ops.iter()
            .filter(|o| o.key == fin.key && matches!(o.kind, Kind::Update { .. }))
            .find_map(|o| match o.outcome {
                Outcome::Ok {
                    rv: Some(rv),
                    value,
                } if rv < last => Some((i, rv, value)),
                _ => None,
            })
    });
    let (i, old_rv, old_value) = tampered.expect("a final read after an older acknowledged update");
    let mut stale = finals.clone();
    stale[i].outcome = Outcome::Ok {
        rv: Some(old_rv),
        value: old_value,
    };
    let errors = check_final(&ops, &stale).expect_err("a stale final read must fail the check");
    assert!(
        errors.iter().any(|e| e.contains("acknowledged write lost")),
        "{errors:?}"
    );
    assert!(
        acked_writes >= 50,
        "too few acknowledged writes ({acked_writes}) for the history to mean much"
    );
    // The fault bit: replica B's clients saw errors while it was down.
    assert!(
        clients
            .iter()
            .filter(|c| c.replica == 1)
            .flat_map(|c| c.errors.iter())
            .any(|(from, _, _)| *from >= replica_killed && *from <= replica_back),
        "replica B's clients saw no error while it was down: was it killed?"
    );
    // Replica A's clients: no 5xx and no connection error while only replica B was down.
    for c in clients.iter().filter(|c| c.replica == 0) {
        let during: Vec<_> = c
            .errors
            .iter()
            .filter(|(from, to, _)| *to >= replica_killed && *from <= replica_back)
            .collect();
        assert!(
            during.is_empty(),
            "client {} of replica A got errors while only replica B was down ({:?}..{:?}): {during:?}",
            c.id,
            replica_killed,
            replica_back
        );
    }
}

/// The index of the etcd member that is raft leader (etcdctl endpoint status).
fn raft_leader(etcd: &EtcdCluster) -> usize {
    let urls = etcd.client_urls();
    let out = std::process::Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args([
            "--endpoints",
            &urls.join(","),
            "endpoint",
            "status",
            "-w",
            "json",
        ])
        .output()
        .expect("etcdctl (Debian's etcd-client) is needed");
    let status: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "etcdctl endpoint status: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rows = status.as_array().expect("endpoint status rows");
    rows.iter()
        .position(|r| {
            r["Status"]["leader"].is_u64()
                && r["Status"]["leader"] == r["Status"]["header"]["member_id"]
        })
        .unwrap_or_else(|| panic!("no raft leader in {status}"))
}

#[test]
fn losing_one_of_three_etcd_members_keeps_writes_going() {
    let _serial = serial();
    let started = Instant::now();
    let mut etcd = EtcdCluster::start(3);
    let pki = tempfile::tempdir().expect("tempdir");
    let s = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &[]);
    let c = admin_client(pki.path(), Duration::from_secs(10));
    let rt = runtime();
    let leader = raft_leader(&etcd);
    // The raft leader first, then a follower; a writer keeps writing through Crest meanwhile.
    let victims = [leader, (leader + 1) % 3];
    for (round, victim) in victims.into_iter().enumerate() {
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (c, base, stop) = (c.clone(), s.base.clone(), stop.clone());
            rt.spawn(async move {
                // (invoked, completed, status or error) of each write.
                let mut writes: Vec<(Instant, Instant, Result<u16, String>)> = vec![];
                let name = format!("busy-{round}");
                let url = format!("{base}{CMS}/{name}");
                let (code, v) = call(
                    &c,
                    "POST",
                    &format!("{base}{CMS}"),
                    Some(&configmap(&name, 0)),
                )
                .await;
                assert_eq!(code, 201, "{v}");
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) && i < 2000 {
                    i += 1;
                    let t = Instant::now();
                    // Unconditional: a write in flight during the kill may or may not have
                    // happened, and the next one must not depend on it.
                    let answer = request(&c, "PUT", &url, Some(&configmap(&name, i))).await;
                    writes.push((t, Instant::now(), answer.map(|(code, _)| code)));
                }
                writes
            })
        };
        std::thread::sleep(Duration::from_millis(500));
        etcd.kill(victim);
        let killed = Instant::now();
        rt.block_on(async {
            let mut slowest = Duration::ZERO;
            let mut transient = 0;
            for i in 0..15 {
                let name = format!("m{victim}-{i}");
                let t = Instant::now();
                let (code, v) = call(
                    &c,
                    "POST",
                    &format!("{}{CMS}", s.base),
                    Some(&configmap(&name, i)),
                )
                .await;
                if matches!(code, 503 | 504)
                    && t.duration_since(killed) < ELECTION_WINDOW
                    && transient < 2
                {
                    eprintln!(
                        "write {i} invoked {:?} after the kill: {code} {v}",
                        t.duration_since(killed)
                    );
                    transient += 1;
                    continue;
                }
                assert_eq!(
                    code,
                    201,
                    "write {i} with etcd member {victim} down: {v}\n{}",
                    logs(&[&s])
                );
                let mut changed = v.clone();
                changed["data"]["value"] = json!("x");
                let (code, v) = call(
                    &c,
                    "PUT",
                    &format!("{}{CMS}/{name}", s.base),
                    Some(&changed),
                )
                .await;
                assert_eq!(code, 200, "update {i} with etcd member {victim} down: {v}");
                let (code, v) = call(&c, "GET", &format!("{}{CMS}/{name}", s.base), None).await;
                assert_eq!(code, 200, "read {i} with etcd member {victim} down: {v}");
                slowest = slowest.max(t.elapsed());
            }
            eprintln!(
                "etcd member {victim} ({}) down: 15 create+update+get rounds, slowest {slowest:?}",
                if round == 0 {
                    "raft leader"
                } else {
                    "follower"
                }
            );
        });
        std::thread::sleep(Duration::from_millis(1000));
        stop.store(true, Ordering::Relaxed);
        let writes = rt.block_on(writer).expect("writer");
        let in_flight: Vec<_> = writes
            .iter()
            .filter(|(from, to, _)| *from <= killed && *to >= killed)
            .collect();
        let failed_after: Vec<_> = writes
            .iter()
            .filter(|(from, _, r)| {
                *from > killed
                    && !matches!(r, Ok(200))
                    && !(from.duration_since(killed) < ELECTION_WINDOW
                        && matches!(r, Ok(503 | 504)))
            })
            .map(|(from, to, r)| (from.duration_since(killed), to.duration_since(killed), r))
            .collect();
        let slowest = writes
            .iter()
            .map(|(f, t, _)| *t - *f)
            .max()
            .unwrap_or_default();
        eprintln!(
            "busy writer around the kill of member {victim}: {} writes, in flight at the kill: {:?}, slowest {slowest:?}",
            writes.len(),
            in_flight.iter().map(|(f, t, r)| (*t - *f, r)).collect::<Vec<_>>()
        );
        assert!(
            failed_after.is_empty(),
            "writes sent after etcd member {victim} was killed failed (since the kill: invoked, completed, answer): {failed_after:?}"
        );
        etcd.restart(victim);
    }
    eprintln!("one member lost: {:?}", started.elapsed());
}

/// After the raft leader of three members dies, writes invoked before the followers notice
/// (the election timeout) can be forwarded to the dead leader and lost; etcd answers them only
/// at its own request timeout, and Crest with a 503/504. Writes invoked later must all succeed.
const ELECTION_WINDOW: Duration = Duration::from_secs(3);

/// Whether `answer` is a 503/504 `Status` that came within `bound`: a problem, if not.
fn prompt_5xx(
    what: &str,
    answer: &Result<(u16, Value), String>,
    took: Duration,
    bound: Duration,
) -> Option<String> {
    eprintln!(
        "{what}: {:?} after {took:?}",
        answer.as_ref().map(|(c, _)| *c)
    );
    let short = |v: &Value| v.to_string().chars().take(300).collect::<String>();
    match answer {
        Ok((code @ (503 | 504), v)) if v["kind"] != "Status" || v["code"] != json!(*code) => Some(
            format!("{what}: {code} without a matching Status: {}", short(v)),
        ),
        Ok((503 | 504, v)) if took > bound => Some(format!(
            "{what} took {took:?}, more than {bound:?}: {}",
            short(v)
        )),
        Ok((503 | 504, _)) => None,
        Ok((code, v)) => Some(format!(
            "{what}: expected a 503/504 Status, got {code} after {took:?}: {}",
            short(v)
        )),
        Err(e) => Some(format!("{what}: no answer after {took:?}: {e}")),
    }
}

/// Requests while etcd is gone or hung, all at once: each must fail promptly (a 503/504
/// Status within `bound`), and /readyz must fail naming etcd. The problems found.
async fn requests_fail_promptly(c: &reqwest::Client, base: &str, bound: Duration) -> Vec<String> {
    let cases: Vec<(&str, String, Option<Value>)> = vec![
        ("POST", format!("{base}{CMS}"), Some(configmap("during", 1))),
        (
            "PUT",
            format!("{base}{CMS}/before"),
            Some(configmap("before", 2)),
        ),
        ("GET", format!("{base}{CMS}/before"), None),
        ("GET", format!("{base}{CMS}"), None),
        ("DELETE", format!("{base}{CMS}/before"), None),
    ];
    let answers =
        futures::future::join_all(cases.into_iter().map(|(method, url, body)| async move {
            let t = Instant::now();
            let answer = request(c, method, &url, body.as_ref()).await;
            (format!("{method} {url}"), answer, t.elapsed())
        }))
        .await;
    let mut problems: Vec<String> = answers
        .iter()
        .filter_map(|(what, answer, took)| prompt_5xx(what, answer, *took, bound))
        .collect();
    // /readyz fails, and says why.
    let t = Instant::now();
    let answer = request(c, "GET", &format!("{base}/readyz?verbose"), None).await;
    let took = t.elapsed();
    eprintln!("/readyz?verbose: {answer:?} after {took:?}");
    match answer {
        Ok((200, v)) => problems.push(format!(
            "/readyz answered 200 while etcd does not answer: {v}"
        )),
        Ok((_, v)) if !v.as_str().unwrap_or_default().contains("[-]etcd") => {
            problems.push(format!("/readyz?verbose does not name etcd: {v}"))
        }
        Ok(_) => {}
        Err(e) => problems.push(format!("/readyz did not answer: {e}")),
    }
    if took > bound {
        problems.push(format!("/readyz took {took:?}, more than {bound:?}"));
    }
    problems
}

/// Waits until the replica serves again by itself: /readyz 200, a write and a read succeed.
async fn assert_service_resumes(c: &reqwest::Client, s: &Server, within: Duration) -> Duration {
    let t = Instant::now();
    loop {
        let ready = matches!(
            request(c, "GET", &format!("{}/readyz", s.base), None).await,
            Ok((200, _))
        );
        if ready {
            break;
        }
        assert!(
            t.elapsed() < within,
            "/readyz not 200 {within:?} after etcd came back\n{}",
            logs(&[s])
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (code, v) = call(
        c,
        "POST",
        &format!("{}{CMS}", s.base),
        Some(&configmap("after", 3)),
    )
    .await;
    assert_eq!(code, 201, "a write once /readyz is 200 again: {v}");
    let (code, v) = call(c, "GET", &format!("{}{CMS}/after", s.base), None).await;
    assert_eq!(code, 200, "a read once /readyz is 200 again: {v}");
    t.elapsed()
}

/// After the outage: the watch opened before it either delivers the `after` ConfigMap (it
/// continued), or ended (or sent an error), and a new watch from its last resourceVersion
/// delivers it or answers 410 Gone.
async fn assert_watch_resumes(s: &Server, watch: &mut WatchReader, mut last_rv: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match watch.next(Duration::from_millis(500)).await {
            Some(ev) if ev["type"] == "ADDED" && ev["object"]["metadata"]["name"] == "after" => {
                eprintln!("the watch opened before the outage continued");
                return;
            }
            Some(ev) if ev["type"] == "ERROR" => {
                eprintln!("the watch opened before the outage ended with {ev}");
                break;
            }
            Some(ev) => last_rv = rv(&ev["object"]).max(last_rv),
            None if watch.has_ended() => {
                eprintln!("the watch opened before the outage ended");
                break;
            }
            None => {}
        }
    }
    assert!(
        Instant::now() < deadline || watch.has_ended(),
        "the watch opened before the outage neither delivered the write after it nor ended"
    );
    let mut again = WatchReader::open(s, &format!("{CMS}?watch=1&resourceVersion={last_rv}")).await;
    if again.status == 410 {
        eprintln!("re-watch from {last_rv}: 410 Gone");
        return;
    }
    assert_eq!(again.status, 200, "re-watch from {last_rv}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match again.next(Duration::from_millis(500)).await {
            Some(ev) if ev["type"] == "ADDED" && ev["object"]["metadata"]["name"] == "after" => {
                eprintln!("re-watch from {last_rv} delivered the write");
                return;
            }
            Some(ev) if ev["type"] == "ERROR" => {
                assert_eq!(ev["object"]["code"], 410, "re-watch error: {ev}");
                return;
            }
            _ => {}
        }
    }
    panic!(
        "a re-watch from {last_rv} neither delivered the write after the outage nor answered 410"
    );
}

/// A replica on `etcd` (request timeout 2 s), its admin client, a written ConfigMap and a watch
/// open from its resourceVersion: what the outage tests start from.
struct Outage {
    s: Server,
    c: reqwest::Client,
    rt: tokio::runtime::Runtime,
    watch: WatchReader,
    before: u64,
}

fn before_outage(etcd: &EtcdCluster, pki: &std::path::Path) -> Outage {
    let s = Server::start_on_etcd(
        &etcd.endpoints_arg(),
        pki,
        &["--etcd-request-timeout", "2s"],
    );
    let c = admin_client(pki, Duration::from_secs(15));
    let rt = runtime();
    let (watch, before) = rt.block_on(async {
        let (code, v) = call(
            &c,
            "POST",
            &format!("{}{CMS}", s.base),
            Some(&configmap("before", 1)),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        let before = rv(&v);
        let watch = WatchReader::open(&s, &format!("{CMS}?watch=1&resourceVersion={before}")).await;
        assert_eq!(watch.status, 200);
        (watch, before)
    });
    Outage {
        s,
        c,
        rt,
        watch,
        before,
    }
}

#[test]
fn losing_all_of_etcd_gives_prompt_errors_and_service_resumes() {
    let _serial = serial();
    let started = Instant::now();
    let mut etcd = EtcdCluster::start(3);
    let pki = tempfile::tempdir().expect("tempdir");
    let Outage {
        s,
        c,
        rt,
        mut watch,
        before,
    } = before_outage(&etcd, pki.path());
    for i in 0..3 {
        etcd.kill(i);
    }
    let problems = rt.block_on(requests_fail_promptly(&c, &s.base, Duration::from_secs(4)));
    etcd.restart_all();
    let took = rt.block_on(assert_service_resumes(&c, &s, Duration::from_secs(20)));
    eprintln!("service resumed {took:?} after etcd came back");
    rt.block_on(assert_watch_resumes(&s, &mut watch, before));
    assert!(
        problems.is_empty(),
        "while etcd was gone (request timeout 2 s):\n{}",
        problems.join("\n")
    );
    eprintln!("all of etcd lost: {:?}", started.elapsed());
}

#[test]
fn etcd_hanging_gives_504_and_heals_on_resume() {
    let _serial = serial();
    let started = Instant::now();
    let etcd = EtcdCluster::start(3);
    let pki = tempfile::tempdir().expect("tempdir");
    let Outage {
        s,
        c,
        rt,
        mut watch,
        before,
    } = before_outage(&etcd, pki.path());
    for i in 0..3 {
        etcd.pause(i);
    }
    // Every request fails promptly (503 or 504), /readyz fails naming etcd; a write and a read
    // answer 504 (a timeout, as kube-apiserver's). Problems are collected, and reported once
    // etcd is resumed and the healing checked.
    let mut problems = rt.block_on(async {
        let mut problems = vec![];
        for (method, url, body) in [
            (
                "POST",
                format!("{}{CMS}", s.base),
                Some(configmap("hung", 1)),
            ),
            ("GET", format!("{}{CMS}/before", s.base), None),
        ] {
            let t = Instant::now();
            let answer = request(&c, method, &url, body.as_ref()).await;
            let took = t.elapsed();
            let what = format!("{method} while etcd hangs");
            problems.extend(prompt_5xx(&what, &answer, took, Duration::from_secs(4)));
            if !matches!(answer, Ok((504, _))) {
                problems.push(format!(
                    "{what} must answer 504 (a timeout): got {:?} after {took:?}",
                    answer.as_ref().map(|(c, v)| (c, v["message"].clone()))
                ));
            }
        }
        problems.extend(requests_fail_promptly(&c, &s.base, Duration::from_secs(4)).await);
        problems
    });
    for i in 0..3 {
        etcd.resume(i);
    }
    let took = rt.block_on(assert_service_resumes(&c, &s, Duration::from_secs(20)));
    eprintln!("service resumed {took:?} after etcd resumed");
    rt.block_on(assert_watch_resumes(&s, &mut watch, before));
    eprintln!("etcd hung: {:?}", started.elapsed());
    problems.dedup();
    assert!(
        problems.is_empty(),
        "while etcd hung (request timeout 2 s):\n{}\n{}",
        problems.join("\n"),
        logs(&[&s])
    );
}

/// etcd's current revision (etcdctl endpoint status).
fn etcd_revision(etcd: &EtcdCluster) -> u64 {
    let out = std::process::Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args([
            "--endpoints",
            &etcd.client_urls()[0],
            "endpoint",
            "status",
            "-w",
            "json",
        ])
        .output()
        .expect("etcdctl (Debian's etcd-client) is needed");
    let status: Value = serde_json::from_slice(&out.stdout).expect("endpoint status JSON");
    status[0]["Status"]["header"]["revision"]
        .as_u64()
        .unwrap_or_else(|| panic!("no revision in {status}"))
}

#[test]
fn watches_and_lists_from_a_compacted_revision_answer_410() {
    let _serial = serial();
    let started = Instant::now();
    let etcd = EtcdCluster::start(1);
    let pki = tempfile::tempdir().expect("tempdir");
    let a = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &[]);
    let c = admin_client(pki.path(), Duration::from_secs(10));
    let rt = runtime();
    let (from, updates) = rt.block_on(async {
        let (code, v) = call(
            &c,
            "POST",
            &format!("{}{CMS}", a.base),
            Some(&configmap("old", 0)),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        let from = rv(&v);
        let mut current = v;
        let mut updates = vec![];
        for i in 1..4 {
            current["data"]["value"] = json!(i.to_string());
            let (code, v) = call(&c, "PUT", &format!("{}{CMS}/old", a.base), Some(&current)).await;
            assert_eq!(code, 200, "{v}");
            updates.push(rv(&v));
            current = v;
        }
        (from, updates)
    });
    let revision = etcd_revision(&etcd);
    let out = std::process::Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args([
            "--endpoints",
            &etcd.client_urls()[0],
            "compact",
            &revision.to_string(),
            "--physical",
        ])
        .output()
        .expect("etcdctl compact");
    assert!(
        out.status.success(),
        "etcdctl compact: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A replica started after the compaction has nothing older in its cache: 410.
    let b = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &[]);
    rt.block_on(async {
        let mut w = WatchReader::open(&b, &format!("{CMS}?watch=1&resourceVersion={from}")).await;
        if w.status == 200 {
            let ev = w.next(Duration::from_secs(5)).await;
            assert!(
                ev.as_ref().is_some_and(|e| e["type"] == "ERROR" && e["object"]["code"] == 410),
                "a watch from compacted rv {from} on a replica started after the compaction must answer 410, got {ev:?}"
            );
        } else {
            assert_eq!(w.status, 410, "watch from compacted rv {from} on B");
        }
        let (code, v) = call(
            &c,
            "GET",
            &format!("{}{CMS}?resourceVersion={from}&resourceVersionMatch=Exact", b.base),
            None,
        )
        .await;
        assert_eq!(code, 410, "an Exact LIST at compacted rv {from} on B: {v}");
        assert_eq!(v["kind"], "Status", "{v}");
        // The replica that saw the writes may serve the watch from its cache (then with every
        // event after `from`, in order) or answer 410.
        let mut w = WatchReader::open(&a, &format!("{CMS}?watch=1&resourceVersion={from}")).await;
        if w.status == 200 {
            let mut seen = vec![];
            while seen.len() < updates.len() {
                let Some(ev) = w.next(Duration::from_secs(5)).await else { break };
                if ev["type"] == "ERROR" {
                    assert_eq!(ev["object"]["code"], 410, "{ev}");
                    seen.clear();
                    break;
                }
                seen.push(rv(&ev["object"]));
            }
            assert!(seen.is_empty() || seen == updates, "A's watch from {from}: {seen:?}, want {updates:?}");
            eprintln!("A's watch from the compacted rv: {}", if seen.is_empty() { "410" } else { "served from its cache" });
        } else {
            assert_eq!(w.status, 410, "watch from compacted rv {from} on A");
        }
        // From the compaction on, watches work.
        let (code, v) = call(&c, "GET", &format!("{}{CMS}/old", b.base), None).await;
        assert_eq!(code, 200, "{v}");
        let latest = rv(&v);
        let mut w = WatchReader::open(&b, &format!("{CMS}?watch=1&resourceVersion={latest}")).await;
        assert_eq!(w.status, 200);
        let mut changed = v.clone();
        changed["data"]["value"] = json!("new");
        let (code, v) = call(&c, "PUT", &format!("{}{CMS}/old", a.base), Some(&changed)).await;
        assert_eq!(code, 200, "{v}");
        let ev = w.next(Duration::from_secs(5)).await.expect("an event after the compaction");
        assert_eq!(rv(&ev["object"]), rv(&v), "{ev}");
    });
    eprintln!("compaction: {:?}", started.elapsed());
}

/// etcd's backend quota exhausted (its NOSPACE alarm): a write answers kube-apiserver's 500
/// with etcd's message (a storage error upstream has no status for: no reason), promptly;
/// reads go on and /readyz stays ready (etcd still answers), as with kube-apiserver.
#[test]
fn an_exhausted_etcd_quota_answers_writes_500_with_etcds_message() {
    let _serial = serial();
    let etcd = EtcdCluster::start_with_args(1, &["--quota-backend-bytes", "4194304"]);
    let pki = tempfile::tempdir().expect("tempdir");
    let s = Server::start_on_etcd(&etcd.endpoints_arg(), pki.path(), &[]);
    let c = admin_client(pki.path(), Duration::from_secs(20));
    let rt = runtime();
    rt.block_on(async {
        let post = |name: String, size: usize| {
            let (c, url) = (c.clone(), format!("{}{CMS}", s.base));
            async move {
                let body = json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name},
                    "data": {"v": "x".repeat(size)},
                });
                let r = c
                    .post(url)
                    .header("Content-Type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .expect("create");
                let code = r.status().as_u16();
                let bytes = r.bytes().await.unwrap_or_default();
                (
                    code,
                    serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null),
                )
            }
        };
        let (code, _) = post("first".into(), 10).await;
        assert_eq!(code, 201);
        let mut refused = None;
        for i in 0..64 {
            let (code, status) = post(format!("big-{i}"), 512 * 1024).await;
            if code != 201 {
                refused = Some((code, status));
                break;
            }
        }
        let (code, status) = refused.expect("a 4 MiB quota must run out within 32 MiB");
        assert_eq!(code, 500, "{status}");
        assert_eq!(status["kind"], "Status", "{status}");
        assert!(status.get("reason").is_none(), "{status}");
        assert!(
            status["message"]
                .as_str()
                .is_some_and(|m| m.contains("database space exceeded")),
            "{status}"
        );
        let started = Instant::now();
        let (code, _) = post("small".into(), 10).await;
        assert_eq!(code, 500);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let r = c
            .get(format!("{}{CMS}/first", s.base))
            .send()
            .await
            .expect("get");
        assert_eq!(r.status(), 200);
    });
}
