//! The linearizability checker of the replica and fault tests (`common/linearizability.rs`) on
//! hand-written histories: valid ones pass, each kind of anomaly fails with a message naming
//! the key and the operations. No server.

#[path = "common/linearizability.rs"]
mod linearizability;

use linearizability::{check, check_final, Kind, Op, Outcome};
use std::time::Duration;

const K: &str = "default/k";

/// Builds histories: ops with times in milliseconds.
#[derive(Default)]
struct H {
    ops: Vec<Op>,
}

impl H {
    fn op(mut self, client: usize, kind: Kind, from_ms: u64, to_ms: u64, outcome: Outcome) -> Self {
        self.ops.push(Op {
            id: self.ops.len(),
            client,
            key: K.to_string(),
            kind,
            invoked: Duration::from_millis(from_ms),
            completed: Duration::from_millis(to_ms),
            outcome,
        });
        self
    }
    fn create(self, c: usize, value: i64, t: (u64, u64), rv: u64) -> Self {
        self.op(c, Kind::Create { value }, t.0, t.1, ok(rv, value))
    }
    fn update(self, c: usize, value: i64, expect: u64, t: (u64, u64), out: Outcome) -> Self {
        self.op(
            c,
            Kind::Update {
                value,
                expected_rv: Some(expect),
            },
            t.0,
            t.1,
            out,
        )
    }
    fn get(self, c: usize, t: (u64, u64), out: Outcome) -> Self {
        self.op(c, Kind::Get, t.0, t.1, out)
    }
    fn delete(self, c: usize, t: (u64, u64), out: Outcome) -> Self {
        self.op(c, Kind::Delete { expected_rv: None }, t.0, t.1, out)
    }
}

fn ok(rv: u64, value: i64) -> Outcome {
    Outcome::Ok {
        rv: Some(rv),
        value: Some(value),
    }
}

fn unknown() -> Outcome {
    Outcome::Unknown("connection reset".into())
}

fn failed() -> Outcome {
    Outcome::Failed("409 Conflict".into())
}

/// Asserts the history fails with a message containing every one of `want`.
fn assert_fails(ops: &[Op], want: &[&str]) {
    let errors = check(ops).expect_err("the history must fail the check");
    let text = errors.join("\n");
    for w in want {
        assert!(text.contains(w), "expected {w:?} in:\n{text}");
    }
}

#[test]
fn valid_histories_pass() {
    // Sequential: create, update, read, delete, read, re-create, read.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 30), ok(105, 2))
        .get(1, (40, 50), ok(105, 2))
        .delete(1, (60, 70), ok(105, 2))
        .get(0, (80, 90), Outcome::NotFound)
        .create(1, 5, (91, 92), 110)
        // Unconditional, answered with a Status: no position.
        .delete(
            1,
            (93, 94),
            Outcome::Ok {
                rv: None,
                value: None,
            },
        )
        .get(0, (95, 96), Outcome::NotFound)
        .create(1, 3, (100, 110), 120)
        .get(0, (120, 130), ok(120, 3));
    check(&h.ops).expect("sequential history");

    // Concurrent: two updates from the same state, one wins, the other conflicts; a read
    // overlapping the winner may see either state.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 60), ok(101, 2))
        .update(1, 3, 100, (20, 60), failed())
        .get(2, (25, 55), ok(100, 1))
        .get(3, (30, 65), ok(101, 2))
        .get(2, (70, 80), ok(101, 2));
    check(&h.ops).expect("concurrent history");

    // An unknown-outcome update that happened (a later read sees it), one that did not (a
    // later update from the old state succeeds), and a final read.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 30), unknown())
        .get(1, (40, 50), ok(102, 2))
        .update(1, 3, 102, (60, 70), unknown())
        .update(0, 4, 102, (80, 90), ok(104, 4));
    let fin = H::default().get(9, (200, 210), ok(104, 4));
    let mut fin_ops = fin.ops;
    fin_ops[0].id = 100;
    check_final(&h.ops, &fin_ops).expect("unknown outcomes");

    // An unknown-outcome delete explains a later not-found.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .delete(0, (20, 30), unknown())
        .get(1, (40, 50), Outcome::NotFound);
    check(&h.ops).expect("unknown delete");

    // Not found before anything was created.
    let h = H::default()
        .get(1, (0, 5), Outcome::NotFound)
        .create(0, 1, (0, 10), 100);
    check(&h.ops).expect("read before create");
}

#[test]
fn stale_read_fails() {
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 30), ok(105, 2))
        .get(1, (40, 50), ok(100, 1));
    assert_fails(
        &h.ops,
        &["key default/k", "stale read", "op #2", "op #1", "rv 105"],
    );

    // Reads among themselves: a read after a read returns no older state.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 60), ok(105, 2))
        .get(1, (25, 35), ok(105, 2))
        .get(2, (40, 50), ok(100, 1));
    assert_fails(&h.ops, &["stale read", "op #3", "op #2"]);

    // A not-found after an acknowledged create, with no delete.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .get(1, (20, 30), Outcome::NotFound);
    assert_fails(
        &h.ops,
        &["stale read", "op #1 (client 1, default/k get", "op #0"],
    );

    // A delete acknowledged before the create cannot explain a later not-found.
    let h = H::default()
        .delete(
            0,
            (0, 5),
            Outcome::Ok {
                rv: None,
                value: None,
            },
        )
        .create(0, 1, (10, 20), 100)
        .get(1, (30, 40), Outcome::NotFound);
    assert_fails(&h.ops, &["stale read", "op #2", "op #1"]);
}

#[test]
fn lost_write_fails() {
    // Acknowledged update, final read shows the state before it.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 30), ok(105, 2));
    let mut fin = H::default().get(9, (100, 110), ok(100, 1)).ops;
    fin[0].id = 50;
    let errors = check_final(&h.ops, &fin).expect_err("lost write");
    let text = errors.join("\n");
    assert!(text.contains("key default/k"), "{text}");
    assert!(text.contains("acknowledged write lost"), "{text}");
    assert!(text.contains("op #1"), "{text}");
    assert!(text.contains("op #50"), "{text}");

    // Acknowledged create, final read finds nothing.
    let h = H::default().create(0, 1, (0, 10), 100);
    let mut fin = H::default().get(9, (100, 110), Outcome::NotFound).ops;
    fin[0].id = 50;
    let text = check_final(&h.ops, &fin)
        .expect_err("lost create")
        .join("\n");
    assert!(text.contains("acknowledged write lost"), "{text}");
    assert!(text.contains("op #0"), "{text}");
}

#[test]
fn lost_update_fails() {
    // Two updates from the same state both acknowledged.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 40), ok(101, 2))
        .update(1, 3, 100, (20, 40), ok(102, 3));
    assert_fails(
        &h.ops,
        &[
            "key default/k",
            "lost update",
            "op #2",
            "op #1",
            "over rv 100",
        ],
    );

    // A create over an existing object.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .create(1, 2, (20, 30), 101);
    assert_fails(
        &h.ops,
        &["created an object that existed", "op #1", "op #0"],
    );

    // An update applied over a state nobody wrote.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 99, (20, 30), ok(101, 2));
    assert_fails(&h.ops, &["over rv 99, which no create or update"]);
}

#[test]
fn real_time_violation_fails() {
    // B invoked after A completed, yet ordered before it.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .op(
            0,
            Kind::Update {
                value: 2,
                expected_rv: None,
            },
            20,
            30,
            ok(110, 2),
        )
        .op(
            1,
            Kind::Update {
                value: 3,
                expected_rv: None,
            },
            40,
            50,
            ok(105, 3),
        );
    assert_fails(
        &h.ops,
        &[
            "key default/k",
            "real-time order violated",
            "op #2",
            "op #1",
        ],
    );

    // Two writes with the same resourceVersion.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 30), ok(100, 2));
    assert_fails(&h.ops, &["share the resourceVersion 100"]);
}

#[test]
fn read_of_never_written_value_fails() {
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .get(1, (20, 30), ok(101, 42));
    assert_fails(
        &h.ops,
        &[
            "key default/k",
            "op #1",
            "read value 42, which no operation wrote",
        ],
    );

    // The value of a write that failed.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .update(0, 2, 100, (20, 30), failed())
        .get(1, (40, 50), ok(101, 2));
    assert_fails(
        &h.ops,
        &["op #2", "read the value of op #1", "which failed"],
    );

    // A value from the future: the write was invoked after the read completed.
    let h = H::default()
        .create(0, 1, (0, 10), 100)
        .get(1, (20, 30), ok(101, 2))
        .update(0, 2, 100, (40, 50), ok(101, 2));
    assert_fails(&h.ops, &["invoked after the read completed"]);
}
