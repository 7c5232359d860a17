//! A per-key linearizability checker for histories of operations on Kubernetes objects.
//!
//! A history is a list of [`Op`]s: a client, a key (`namespace/name`), what was asked
//! ([`Kind`]: create, update — conditional on a resourceVersion or not —, delete — conditional
//! or not —, get), when it was invoked and when it completed (instants since the history
//! began), and how it ended ([`Outcome`]):
//!
//! - `Ok`: the server acknowledged it. A create or update carries the resourceVersion of the
//!   state it wrote; a get the resourceVersion and value tag it read; a delete whatever
//!   resourceVersion the deleted object in the response carried (Crest answers with the deleted
//!   state's resourceVersion, kube-apiserver with the deletion's revision: both are understood).
//! - `NotFound`: a get answered 404.
//! - `Failed`: the server refused (409, 404, 422, ...): it did not happen.
//! - `Unknown`: a timeout, a 5xx or a connection error: it may or may not have happened, at any
//!   instant after its invocation (even after the client gave up).
//!
//! Every create and update writes a value tag unique in the history (e.g. `data.value`), so a
//! read names the write it observed. Since every write gets a unique resourceVersion that totally
//! orders the writes of a key (etcd's revision), checking is a matter of placing events on that
//! order rather than searching interleavings.
//!
//! ## Positions
//!
//! Per key, the known state changes are placed on the resourceVersion order: a create or update
//! at `(rv, 0)` — acknowledged ones at the resourceVersion they were answered with, unknown-outcome
//! ones at the resourceVersion a read saw them with ("inferred"; never observed: not placed) —,
//! and a delete at `(p, 1)`, just after the state `p` it removed (`p`: the deleted state's
//! resourceVersion from the response, else from its precondition) or at `(d, 0)` when the response
//! carried the deletion's own revision `d`. A delete with no position — unconditional and
//! answered with a `Status` (as ConfigMaps are, upstream and in Crest), or of unknown outcome —
//! is not placed: it may have taken effect anywhere after its invocation (and, if acknowledged,
//! before its completion), and only serves to explain absences. A get that found the object sits
//! at `(rv, 0)`.
//!
//! ## What is checked (each failure is a message naming the key and the operations)
//!
//! 1. *Unique resourceVersions*: two different writes of a key never share a resourceVersion.
//! 2. *Reads return written values* (b): a get that found the object returns the value of a
//!    create/update of that key that was acknowledged or of unknown outcome (never one that
//!    failed, never a value nobody wrote), invoked before the get completed, with that write's
//!    resourceVersion (for an unknown-outcome write: the same resourceVersion in every read).
//! 3. *Real-time order* (a, c, d): for every acknowledged write and every get, let `LB` be the
//!    greatest position of the acknowledged writes/deletes and found gets that completed before it
//!    was invoked. An acknowledged write must be placed after `LB` (if A completed before B was
//!    invoked, rv(A) < rv(B)); a get that found the object must be at or after `LB` (no stale
//!    read, no read older than an earlier read); a get that answered 404 must be explained by a
//!    delete (acknowledged, or of unknown outcome) invoked before the get completed and placed
//!    after `LB` (a delete with no position explains it too unless it was acknowledged before the
//!    op at `LB` was invoked), unless nothing precedes it at all. A 404 gives later operations no
//!    lower bound (not checked).
//! 4. *Preconditions* (e): an update conditional on `e` (acknowledged, or unknown and observed)
//!    was applied to the state `e`: `e` is the resourceVersion of a create/update of the key, and
//!    no known write or delete lies between `e` and the update (no lost update; two updates
//!    from the same `e` cannot both succeed). A create applies to an absent object: the known
//!    write just before it is followed by a delete (known, or one of unknown outcome or position
//!    invoked before the create completed). An acknowledged delete removed a state `p` that some
//!    write produced and that was the latest at its time (no write placed between `p` and the
//!    delete other than a create after it), conditional deletes removed the state they named,
//!    and two acknowledged deletes never removed the same state.
//! 5. *Nothing acknowledged is lost* (f): [`check_final`] takes a final get per key, made once
//!    the history is over and the servers quiescent: it must show the last known state of the
//!    key (the greatest placed write, or absence when a placed delete follows it or a delete
//!    with no position could have), else the acknowledged writes after it were lost.
//!
//! A delete answered with the deleted object also names the write it removed: with a value tag
//! of an unknown-outcome write not otherwise placed, that write happened, at the response's
//! resourceVersion (Crest answers with the deleted state's).
//!
//! Not checked: values of objects across keys (no multi-key transactions), lists and watches.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What an operation asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Create with this value tag.
    Create { value: i64 },
    /// Update (replace) with this value tag, conditional on `expected_rv` when given.
    Update {
        value: i64,
        expected_rv: Option<u64>,
    },
    /// Delete, conditional on `expected_rv` when given (a resourceVersion precondition).
    Delete { expected_rv: Option<u64> },
    /// Get.
    Get,
}

/// How an operation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Acknowledged: a create/update's new resourceVersion (value: the written tag); a get's
    /// resourceVersion and value tag; a delete's response resourceVersion, if any.
    Ok { rv: Option<u64>, value: Option<i64> },
    /// A get answered 404.
    NotFound,
    /// Definitely did not happen (409, 404, 422, ...).
    Failed(String),
    /// May or may not have happened (timeout, 5xx, connection error).
    Unknown(String),
}

/// One operation of a history.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    /// Its index in the history (for messages).
    pub id: usize,
    pub client: usize,
    /// `namespace/name`.
    pub key: String,
    pub kind: Kind,
    /// Since the history began.
    pub invoked: Duration,
    pub completed: Duration,
    pub outcome: Outcome,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op #{} (client {}, {} ", self.id, self.client, self.key)?;
        match &self.kind {
            Kind::Create { value } => write!(f, "create value={value}")?,
            Kind::Update { value, expected_rv } => match expected_rv {
                Some(e) => write!(f, "update value={value} if rv={e}")?,
                None => write!(f, "update value={value} unconditionally")?,
            },
            Kind::Delete { expected_rv } => match expected_rv {
                Some(e) => write!(f, "delete if rv={e}")?,
                None => write!(f, "delete")?,
            },
            Kind::Get => write!(f, "get")?,
        }
        write!(
            f,
            ", {:.3}s..{:.3}s -> ",
            self.invoked.as_secs_f64(),
            self.completed.as_secs_f64()
        )?;
        match &self.outcome {
            Outcome::Ok { rv, value } => {
                write!(f, "ok")?;
                if let Some(rv) = rv {
                    write!(f, " rv={rv}")?;
                }
                if let Some(v) = value {
                    write!(f, " value={v}")?;
                }
            }
            Outcome::NotFound => write!(f, "not found")?,
            Outcome::Failed(why) => write!(f, "failed: {why}")?,
            Outcome::Unknown(why) => write!(f, "unknown: {why}")?,
        }
        write!(f, ")")
    }
}

/// A thread-safe recorder of a history.
pub(crate) struct History {
    start: Instant,
    ops: Mutex<Vec<Op>>,
}

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

impl History {
    pub(crate) fn new() -> History {
        History {
            start: Instant::now(),
            ops: Mutex::new(Vec::new()),
        }
    }

    /// Now, as an instant of this history.
    pub(crate) fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// Records an operation invoked at `invoked` (from [`History::now`]) that completes now.
    pub(crate) fn record(
        &self,
        client: usize,
        key: &str,
        kind: Kind,
        invoked: Duration,
        outcome: Outcome,
    ) {
        let completed = self.now();
        let mut ops = self.ops.lock().expect("history");
        let id = ops.len();
        ops.push(Op {
            id,
            client,
            key: key.to_string(),
            kind,
            invoked,
            completed,
            outcome,
        });
    }

    pub(crate) fn ops(&self) -> Vec<Op> {
        self.ops.lock().expect("history").clone()
    }
}

/// A position on a key's resourceVersion order: `(rv, 0)` for the state written at `rv`,
/// `(p, 1)` for a delete just after the state `p`.
type Pos = (u64, u8);

fn show_pos(p: Pos) -> String {
    if p.1 == 0 {
        format!("rv {}", p.0)
    } else {
        format!("the deletion of rv {}", p.0)
    }
}

/// Checks a history (every key); returns every violation found, as messages naming the key
/// and the operations.
pub(crate) fn check(ops: &[Op]) -> Result<(), Vec<String>> {
    let mut by_key: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in ops {
        by_key.entry(op.key.as_str()).or_default().push(op);
    }
    let mut errors = Vec::new();
    for (key, ops) in by_key {
        errors.extend(KeyCheck::new(key, &ops).run());
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks `ops` and then that `finals` (one get per key, made after the history ended) show
/// the last state of each key (no acknowledged write lost). `finals` are checked as part of the
/// history too, so they must have been recorded after every other operation completed.
pub(crate) fn check_final(ops: &[Op], finals: &[Op]) -> Result<(), Vec<String>> {
    let mut all: Vec<Op> = ops.to_vec();
    all.extend(finals.iter().cloned());
    let mut errors = match check(&all) {
        Ok(()) => Vec::new(),
        Err(e) => e,
    };
    for fin in finals {
        let key_ops: Vec<&Op> = all.iter().filter(|o| o.key == fin.key).collect();
        let kc = KeyCheck::new(&fin.key, &key_ops);
        if let Some(e) = kc.final_state(fin) {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The facts of one key's history.
struct KeyCheck<'a> {
    key: &'a str,
    ops: Vec<&'a Op>,
    /// The placed events: position -> the op (create/update/delete).
    placed: BTreeMap<Pos, &'a Op>,
    /// Each placed create/update op's rv (acknowledged or inferred), by op id.
    write_rv: HashMap<usize, u64>,
    /// Each placed delete op's position, by op id.
    delete_pos: HashMap<usize, Pos>,
    errors: Vec<String>,
}

impl<'a> KeyCheck<'a> {
    fn new(key: &'a str, ops: &[&'a Op]) -> Self {
        let mut kc = KeyCheck {
            key,
            ops: ops.to_vec(),
            placed: BTreeMap::new(),
            write_rv: HashMap::new(),
            delete_pos: HashMap::new(),
            errors: Vec::new(),
        };
        kc.place();
        kc
    }

    fn err(&mut self, msg: String) {
        self.errors.push(format!("key {}: {msg}", self.key));
    }

    /// Whether the unplaced delete `d` may have taken effect after `op` did: unless `d` was
    /// acknowledged before `op` was invoked.
    fn not_before(d: &Op, op: &Op) -> bool {
        !(matches!(d.outcome, Outcome::Ok { .. }) && d.completed < op.invoked)
    }

    fn value_of(op: &Op) -> Option<i64> {
        match op.kind {
            Kind::Create { value } | Kind::Update { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Places acknowledged writes, unknown writes observed by reads, and deletes; checks rule 1
    /// and rule 2.
    fn place(&mut self) {
        let ops = self.ops.clone();
        let writes: HashMap<i64, &Op> = ops
            .iter()
            .filter_map(|o| Self::value_of(o).map(|v| (v, *o)))
            .collect();
        // Acknowledged creates/updates.
        for op in &ops {
            if Self::value_of(op).is_none() {
                continue;
            }
            if let Outcome::Ok { rv, .. } = &op.outcome {
                match rv {
                    Some(rv) => self.put_write(op, *rv),
                    None => self.err(format!("{op} was acknowledged without a resourceVersion")),
                }
            }
        }
        // Reads name the writes they saw; so do deletes of unknown-outcome writes.
        for op in &ops {
            if let (
                Kind::Delete { .. },
                Outcome::Ok {
                    rv: Some(rv),
                    value: Some(value),
                },
            ) = (&op.kind, &op.outcome)
            {
                if let Some(w) = writes.get(value) {
                    if matches!(w.outcome, Outcome::Unknown(_))
                        && !self.write_rv.contains_key(&w.id)
                    {
                        self.put_write(w, *rv);
                    }
                }
                continue;
            }
            let (Kind::Get, Outcome::Ok { rv, value }) = (&op.kind, &op.outcome) else {
                continue;
            };
            let (Some(rv), Some(value)) = (rv, value) else {
                self.err(format!("{op} found the object without rv or value"));
                continue;
            };
            let Some(w) = writes.get(value) else {
                self.err(format!("{op} read value {value}, which no operation wrote"));
                continue;
            };
            if w.invoked > op.completed {
                self.err(format!(
                    "{op} read the value of {w}, invoked after the read completed"
                ));
            }
            match &w.outcome {
                Outcome::Failed(_) => {
                    self.err(format!("{op} read the value of {w}, which failed"));
                }
                Outcome::Ok { rv: Some(wrv), .. } if wrv != rv => self.err(format!(
                    "{op} read the value of {w} at rv {rv}, but that write was acknowledged at rv {wrv}"
                )),
                Outcome::Unknown(_) => match self.write_rv.get(&w.id) {
                    Some(prev) if prev != rv => {
                        let prev = *prev;
                        self.err(format!(
                            "{op} read the value of {w} at rv {rv}, another read at rv {prev}"
                        ))
                    }
                    Some(_) => {}
                    None => self.put_write(w, *rv),
                },
                _ => {}
            }
        }
        // Deletes: acknowledged ones, and unknown conditional ones whose state was followed by a
        // create (then it must have happened, or nothing else could have removed it).
        let write_rvs: BTreeMap<u64, &Op> = self
            .placed
            .iter()
            .filter(|(p, _)| p.1 == 0)
            .map(|(p, o)| (p.0, *o))
            .collect();
        for op in &ops {
            let Kind::Delete { expected_rv } = op.kind else {
                continue;
            };
            let pos = match (&op.outcome, expected_rv) {
                (Outcome::Ok { rv: Some(rv), .. }, _) => {
                    if let Some(w) = write_rvs.get(rv) {
                        if let (Outcome::Ok { value: Some(v), .. }, Some(wv)) =
                            (&op.outcome, Self::value_of(w))
                        {
                            if *v != wv {
                                self.err(format!(
                                    "{op} answered with value {v} at rv {rv}, but {w} wrote rv {rv}"
                                ));
                            }
                        }
                        if let Some(e) = expected_rv.filter(|e| e != rv) {
                            self.err(format!(
                                "{op} removed the state at rv {rv}, not the one at rv {e} its precondition named"
                            ));
                        }
                        (*rv, 1)
                    } else {
                        (*rv, 0)
                    }
                }
                (Outcome::Ok { rv: None, .. }, Some(e)) => (e, 1),
                _ => continue,
            };
            if let Some(other) = self.placed.get(&pos) {
                let other = *other;
                if matches!(other.kind, Kind::Delete { .. }) {
                    self.err(format!(
                        "{op} and {other} both removed the state at {}",
                        show_pos(pos)
                    ));
                } else {
                    self.err(format!(
                        "{op} and {other} share the resourceVersion {}",
                        pos.0
                    ));
                }
                continue;
            }
            self.placed.insert(pos, op);
            self.delete_pos.insert(op.id, pos);
        }
    }

    fn put_write(&mut self, op: &'a Op, rv: u64) {
        if let Some(other) = self.placed.get(&(rv, 0)) {
            let other = *other;
            if other.id != op.id {
                self.err(format!("{op} and {other} share the resourceVersion {rv}"));
            }
            return;
        }
        self.placed.insert((rv, 0), op);
        self.write_rv.insert(op.id, rv);
    }

    /// The position of an op as a lower bound for later ones: acknowledged writes/deletes (placed)
    /// and found reads.
    fn known_pos(&self, op: &Op) -> Option<Pos> {
        match (&op.kind, &op.outcome) {
            (Kind::Get, Outcome::Ok { rv: Some(rv), .. }) => Some((*rv, 0)),
            (Kind::Create { .. } | Kind::Update { .. }, Outcome::Ok { .. }) => {
                self.write_rv.get(&op.id).map(|rv| (*rv, 0))
            }
            (Kind::Delete { .. }, Outcome::Ok { .. }) => self.delete_pos.get(&op.id).copied(),
            _ => None,
        }
    }

    /// The greatest known position of the ops that completed before `op` was invoked, and the
    /// op at it.
    fn lower_bound(&self, op: &Op) -> Option<(Pos, &'a Op)> {
        self.ops
            .iter()
            .filter(|o| o.completed < op.invoked)
            .filter_map(|o| self.known_pos(o).map(|p| (p, *o)))
            .max_by_key(|(p, _)| *p)
    }

    fn run(mut self) -> Vec<String> {
        self.real_time();
        self.preconditions();
        self.errors
    }

    /// Rule 3.
    fn real_time(&mut self) {
        for op in self.ops.clone() {
            let lb = self.lower_bound(op);
            let Some((lb_pos, lb_op)) = lb else {
                continue;
            };
            match (&op.kind, &op.outcome) {
                (Kind::Get, Outcome::Ok { rv: Some(rv), .. }) if (*rv, 0) < lb_pos => {
                    self.err(format!(
                        "stale read: {op} returned rv {rv}, but {lb_op} completed before it was invoked, at {}",
                        show_pos(lb_pos)
                    ));
                }
                (Kind::Get, Outcome::NotFound) => {
                    let explained = self.ops.iter().any(|d| {
                        matches!(d.kind, Kind::Delete { .. })
                            && !matches!(d.outcome, Outcome::Failed(_))
                            && d.invoked < op.completed
                            && match self.delete_pos.get(&d.id) {
                                Some(p) => *p >= lb_pos,
                                // A delete without a position (an unknown outcome, or an
                                // unconditional delete answered with a Status): after its
                                // precondition's state, or anywhere.
                                None => match d.kind {
                                    Kind::Delete { expected_rv } => {
                                        expected_rv.is_none_or(|e| (e, 1) >= lb_pos)
                                            && Self::not_before(d, lb_op)
                                    }
                                    _ => false,
                                },
                            }
                    });
                    if !explained {
                        self.err(format!(
                            "stale read: {op} found nothing, but {lb_op} completed before it was invoked, at {}, and no delete after that could explain it",
                            show_pos(lb_pos)
                        ));
                    }
                }
                (
                    Kind::Create { .. } | Kind::Update { .. } | Kind::Delete { .. },
                    Outcome::Ok { .. },
                ) => {
                    if let Some(p) = self.known_pos(op) {
                        if p <= lb_pos {
                            self.err(format!(
                                "real-time order violated: {op} is at {}, but {lb_op} completed before it was invoked, at {}",
                                show_pos(p),
                                show_pos(lb_pos)
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Rule 4.
    fn preconditions(&mut self) {
        let placed: Vec<(Pos, &'a Op)> = self.placed.iter().map(|(p, o)| (*p, *o)).collect();
        for (i, (pos, op)) in placed.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| placed[j]);
            match &op.kind {
                Kind::Update {
                    expected_rv: Some(e),
                    ..
                } => {
                    if self
                        .placed
                        .get(&(*e, 0))
                        .is_none_or(|w| Self::value_of(w).is_none())
                    {
                        self.err(format!(
                            "{op} was applied over rv {e}, which no create or update of the key produced"
                        ));
                    } else if let Some((ppos, pop)) = prev.filter(|(ppos, _)| *ppos > (*e, 0)) {
                        self.err(format!(
                            "lost update: {op} (at {}) was applied over rv {e}, but {pop} came between, at {}",
                            show_pos(*pos),
                            show_pos(ppos)
                        ));
                    }
                }
                Kind::Update {
                    expected_rv: None, ..
                } => {
                    if let Some((ppos, pop)) =
                        prev.filter(|(_, o)| matches!(o.kind, Kind::Delete { .. }))
                    {
                        self.err(format!(
                            "{op} (at {}) updated an object that {pop} had deleted, at {}",
                            show_pos(*pos),
                            show_pos(ppos)
                        ));
                    }
                }
                Kind::Create { .. } => {
                    let Some((ppos, pop)) = prev else { continue };
                    if matches!(pop.kind, Kind::Delete { .. }) {
                        continue;
                    }
                    // An unplaced delete (unknown outcome, or no position) may have removed it.
                    let maybe = self.ops.iter().any(|d| {
                        matches!(d.kind, Kind::Delete { .. })
                            && !self.delete_pos.contains_key(&d.id)
                            && !matches!(d.outcome, Outcome::Failed(_))
                            && d.invoked < op.completed
                            && Self::not_before(d, pop)
                            && match d.kind {
                                Kind::Delete {
                                    expected_rv: Some(e),
                                } => (e, 0) == ppos,
                                _ => true,
                            }
                    });
                    if !maybe {
                        self.err(format!(
                            "{op} (at {}) created an object that existed: {pop} wrote it at {} and nothing deleted it",
                            show_pos(*pos),
                            show_pos(ppos)
                        ));
                    }
                }
                Kind::Delete { .. } => {
                    if pos.1 == 1 {
                        if self
                            .placed
                            .get(&(pos.0, 0))
                            .is_none_or(|w| Self::value_of(w).is_none())
                        {
                            self.err(format!(
                                "{op} removed the state at rv {}, which no create or update of the key produced",
                                pos.0
                            ));
                        }
                    } else if let Some((ppos, pop)) =
                        prev.filter(|(_, o)| matches!(o.kind, Kind::Delete { .. }))
                    {
                        self.err(format!(
                            "{op} (at {}) deleted an object that {pop} had deleted already, at {}",
                            show_pos(*pos),
                            show_pos(ppos)
                        ));
                    }
                    if let Some((npos, nop)) = placed.get(i + 1) {
                        if !matches!(nop.kind, Kind::Create { .. }) {
                            self.err(format!(
                                "{op} deleted the object at {}, but {nop} came next, at {}, and was not a create",
                                show_pos(*pos),
                                show_pos(*npos)
                            ));
                        }
                    }
                }
                Kind::Get => {}
            }
        }
    }

    /// Rule 5: the final get `fin` shows the last known state.
    fn final_state(&self, fin: &Op) -> Option<String> {
        let last = self.placed.iter().next_back().map(|(p, o)| (*p, *o));
        let key = self.key;
        match (&fin.outcome, last) {
            (Outcome::Ok { rv: Some(rv), .. }, Some((p, o))) if (*rv, 0) != p => Some(format!(
                "key {key}: acknowledged write lost: the final {fin} shows rv {rv}, but the last write was {o}, at {}",
                show_pos(p)
            )),
            (Outcome::NotFound, Some((p, o))) if p.1 == 0 && !matches!(o.kind, Kind::Delete { .. }) => {
                // A delete without a position (unknown outcome, or answered with a Status) may
                // have removed it.
                let maybe = self.ops.iter().any(|d| {
                    matches!(d.kind, Kind::Delete { .. })
                        && !matches!(d.outcome, Outcome::Failed(_))
                        && !self.delete_pos.contains_key(&d.id)
                        && Self::not_before(d, o)
                        && match d.kind {
                            Kind::Delete { expected_rv: Some(e) } => e == p.0,
                            _ => true,
                        }
                });
                (!maybe).then(|| format!(
                    "key {key}: acknowledged write lost: the final {fin} found nothing, but the last write was {o}, at {} and nothing deleted it",
                    show_pos(p)
                ))
            }
            (Outcome::Ok { .. }, None) => None, // rule 2 reports it
            (Outcome::Failed(why) | Outcome::Unknown(why), _) => {
                Some(format!("key {key}: the final {fin} did not answer: {why}"))
            }
            _ => None,
        }
    }
}
