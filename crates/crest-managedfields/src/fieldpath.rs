//! Field paths and field sets, as structured-merge-diff's `fieldpath` package (v4): path
//! elements (`PathElement`: a field name, the key of an associative-list item, the value of a
//! set item, an index), their total order, their printed form (`.spec.ports[port=80,protocol="TCP"]`)
//! and the trie of paths (`Set`: members and children, both sorted) with union, intersection,
//! difference, recursive difference and leaves.
//!
//! The FieldsV1 encoding (`f:<name>`, `k:<keys as JSON>`, `v:<value as JSON>`, `i:<index>`, `.`
//! for a node that is itself a member) is written in upstream's order by
//! [`Set::to_fields_v1_string`], byte for byte what kube-apiserver stores for built-in kinds;
//! [`Set::to_fields_v1`] gives the same content as a JSON value (whose keys `serde_json` sorts,
//! as kube-apiserver's unstructured objects, i.e. custom resources, print them).

use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::fmt;

/// One step of a path.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A field of a struct or the key of a map (`f:`).
    Field(String),
    /// An item of an associative list, by its key fields sorted by name (`k:`).
    Key(Vec<(String, Value)>),
    /// An item of a set (`v:`).
    Value(Value),
    /// An item of a list by position (`i:`).
    Index(usize),
}

impl PathElement {
    /// A field name element.
    pub fn field(name: &str) -> Self {
        PathElement::Field(name.to_string())
    }

    /// A key element; the fields are sorted by name as upstream's `KeyByFields`.
    pub fn key(mut fields: Vec<(String, Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The FieldsV1 form of this element (`f:name`, `k:{"name":"x"}`, `v:"a"`, `i:0`).
    pub fn to_fields_v1_key(&self) -> String {
        let mut s = String::new();
        match self {
            PathElement::Field(n) => {
                s.push_str("f:");
                s.push_str(n);
            }
            PathElement::Key(fields) => {
                s.push_str("k:{");
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    crest_gofmt::write_go_jsoniter_string(&mut s, k);
                    s.push(':');
                    crest_gofmt::write_go_jsoniter(&mut s, v);
                }
                s.push('}');
            }
            PathElement::Value(v) => {
                s.push_str("v:");
                crest_gofmt::write_go_jsoniter(&mut s, v);
            }
            PathElement::Index(i) => {
                s.push_str("i:");
                s.push_str(&i.to_string());
            }
        }
        s
    }

    /// Parses the FieldsV1 form of an element.
    pub fn from_fields_v1_key(s: &str) -> Result<Self, String> {
        if s.len() < 2 || s.as_bytes()[1] != b':' {
            return Err(format!("unknown path element type: {s:?}"));
        }
        let rest = &s[2..];
        match &s[..1] {
            "f" => Ok(PathElement::Field(rest.to_string())),
            "v" => serde_json::from_str(rest)
                .map(PathElement::Value)
                .map_err(|e| format!("parsing JSON: {e}: {rest:?}")),
            "i" => rest
                .parse::<usize>()
                .map(PathElement::Index)
                .map_err(|e| format!("parsing index: {e}: {rest:?}")),
            "k" => match serde_json::from_str::<Value>(rest) {
                Ok(Value::Object(m)) => Ok(PathElement::key(m.into_iter().collect())),
                Ok(_) => Err(format!("expected key value pairs but got {rest}")),
                Err(e) => Err(format!("parsing JSON: {e}: {rest:?}")),
            },
            _ => Err(format!("unknown path element type: {s:?}")),
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => cmp_field_list(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => cmp_value(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// Prints as upstream's `PathElement.String()`: `.name`, `[k=v,k2=v2]`, `[=v]`, `[i]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(n) => write!(f, ".{n}"),
            PathElement::Key(fields) => {
                let mut s = String::from("[");
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str(k);
                    s.push('=');
                    crest_gofmt::write_go_jsoniter(&mut s, v);
                }
                s.push(']');
                f.write_str(&s)
            }
            PathElement::Value(v) => {
                let mut s = String::from("[=");
                crest_gofmt::write_go_jsoniter(&mut s, v);
                s.push(']');
                f.write_str(&s)
            }
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path from the root of an object.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// The path of field names `names` (`Path::fields(&["spec", "image"])`).
    pub fn fields(names: &[&str]) -> Self {
        Path(names.iter().map(|n| PathElement::field(n)).collect())
    }
}

/// Prints as upstream's `Path.String()`: the elements one after the other (`.spec.image`).
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for pe in &self.0 {
            write!(f, "{pe}")?;
        }
        Ok(())
    }
}

fn cmp_field_list(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let c = x.0.cmp(&y.0).then_with(|| cmp_value(&x.1, &y.1));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

fn kind_rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// The total order of values of structured-merge-diff's `value.Compare`: numbers (ints and
/// floats compared numerically) < strings < booleans < lists < maps < null.
pub(crate) fn cmp_value(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => cmp_f64(x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0)),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let c = cmp_value(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => cmp_map(x, y),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => kind_rank(a).cmp(&kind_rank(b)),
    }
}

fn cmp_map(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    let mut a = x.iter().peekable();
    let mut b = y.iter().peekable();
    loop {
        match (a.peek(), b.peek()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                // The side without the key sorts after.
                Ordering::Less => return Ordering::Less,
                Ordering::Greater => return Ordering::Greater,
                Ordering::Equal => {
                    let c = cmp_value(va, vb);
                    if c != Ordering::Equal {
                        return c;
                    }
                    a.next();
                    b.next();
                }
            },
        }
    }
}

/// Values equal as structured-merge-diff's `value.Equals` (numbers numerically).
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => cmp_value(a, b) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && values_equal(va, vb))
        }
        _ => a == b,
    }
}

/// A set of paths, stored as a trie: the elements that are members at this level and the
/// sub-sets under elements, both sorted. Never holds an empty child set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: Vec<PathElement>,
    children: Vec<(PathElement, Set)>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Set::default()
    }

    /// A set of the given paths.
    pub fn from_paths<I: IntoIterator<Item = Path>>(paths: I) -> Self {
        let mut s = Set::new();
        for p in paths {
            s.insert(&p.0);
        }
        s
    }

    /// Whether the set has no paths.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// The members at this level.
    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    /// The child sets at this level.
    pub fn children(&self) -> &[(PathElement, Set)] {
        &self.children
    }

    /// Adds `path` (a no-op for the empty path).
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        if rest.is_empty() {
            if let Err(i) = self.members.binary_search(first) {
                self.members.insert(i, first.clone());
            }
            return;
        }
        let i = match self.children.binary_search_by(|(pe, _)| pe.cmp(first)) {
            Ok(i) => i,
            Err(i) => {
                self.children.insert(i, (first.clone(), Set::new()));
                i
            }
        };
        self.children[i].1.insert(rest);
    }

    /// Adds an element as a member at this level.
    pub(crate) fn insert_member(&mut self, pe: PathElement) {
        if let Err(i) = self.members.binary_search(&pe) {
            self.members.insert(i, pe);
        }
    }

    /// Adds a member, appending when it sorts last (the common case of a walk in order).
    pub(crate) fn push_member(&mut self, pe: PathElement) {
        match self.members.last() {
            Some(last) if *last >= pe => self.insert_member(pe),
            _ => self.members.push(pe),
        }
    }

    /// Puts a child set (appending when `pe` sorts last, the common case of a walk in order).
    pub(crate) fn put_child(&mut self, pe: PathElement, child: Set) {
        if child.is_empty() {
            return;
        }
        match self.children.last() {
            Some((last, _)) if *last < pe => self.children.push((pe, child)),
            None => self.children.push((pe, child)),
            _ => match self.children.binary_search_by(|(p, _)| p.cmp(&pe)) {
                Ok(i) => {
                    let merged = self.children[i].1.union(&child);
                    self.children[i].1 = merged;
                }
                Err(i) => self.children.insert(i, (pe, child)),
            },
        }
    }

    /// Drops the child set under `pe`.
    pub(crate) fn remove_child(&mut self, pe: &PathElement) {
        if let Ok(i) = self.children.binary_search_by(|(p, _)| p.cmp(pe)) {
            self.children.remove(i);
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path.split_first() {
            None => false,
            Some((first, [])) => self.members.binary_search(first).is_ok(),
            Some((first, rest)) => self.child(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.binary_search(pe).is_ok()
    }

    /// The child set under `pe`, if any.
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children
            .binary_search_by(|(p, _)| p.cmp(pe))
            .ok()
            .map(|i| &self.children[i].1)
    }

    /// The paths below `pe`, relative to it (upstream's `WithPrefix`).
    pub fn with_prefix(&self, pe: &PathElement) -> Set {
        self.child(pe).cloned().unwrap_or_default()
    }

    /// Whether every path of `self` is in `other` (no allocation).
    pub fn is_subset(&self, other: &Set) -> bool {
        let mut j = 0;
        for m in &self.members {
            while j < other.members.len() && other.members[j] < *m {
                j += 1;
            }
            if j >= other.members.len() || other.members[j] != *m {
                return false;
            }
        }
        self.children
            .iter()
            .all(|(pe, c)| other.child(pe).is_some_and(|o| c.is_subset(o)))
    }

    /// Whether the sets share a path (no allocation).
    pub fn intersects(&self, other: &Set) -> bool {
        self.members.iter().any(|m| other.has_member(m))
            || self
                .children
                .iter()
                .any(|(pe, c)| other.child(pe).is_some_and(|o| c.intersects(o)))
    }

    /// Every path of either set.
    pub fn union(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, |a, b| a.cmp(b), Op::Union);
        let mut children = Vec::with_capacity(self.children.len().max(other.children.len()));
        let (mut i, mut j) = (0, 0);
        while i < self.children.len() || j < other.children.len() {
            let ord = match (self.children.get(i), other.children.get(j)) {
                (Some(a), Some(b)) => a.0.cmp(&b.0),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match ord {
                Ordering::Less => {
                    children.push(self.children[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    children.push(other.children[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    let u = self.children[i].1.union(&other.children[j].1);
                    children.push((self.children[i].0.clone(), u));
                    i += 1;
                    j += 1;
                }
            }
        }
        Set { members, children }
    }

    /// The paths of both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, |a, b| a.cmp(b), Op::Inter);
        let mut children = Vec::new();
        for (pe, c) in &self.children {
            if let Some(o) = other.child(pe) {
                let x = c.intersection(o);
                if !x.is_empty() {
                    children.push((pe.clone(), x));
                }
            }
        }
        Set { members, children }
    }

    /// The paths of `self` not in `other`.
    pub fn difference(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, |a, b| a.cmp(b), Op::Diff);
        let mut children = Vec::with_capacity(self.children.len());
        for (pe, c) in &self.children {
            match other.child(pe) {
                Some(o) => {
                    let d = c.difference(o);
                    if !d.is_empty() {
                        children.push((pe.clone(), d));
                    }
                }
                None => children.push((pe.clone(), c.clone())),
            }
        }
        Set { members, children }
    }

    /// Removes the paths of `other` (in place [`Set::difference`]).
    pub fn subtract(&mut self, other: &Set) {
        if other.is_empty() {
            return;
        }
        if !other.members.is_empty() {
            self.members.retain(|m| !other.has_member(m));
        }
        if !other.children.is_empty() {
            self.children.retain_mut(|(pe, c)| {
                if let Some(o) = other.child(pe) {
                    c.subtract(o);
                }
                !c.is_empty()
            });
        }
    }

    /// The paths of `self` that are neither in `other` nor below a member of `other`.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let members = merge_sorted(&self.members, &other.members, |a, b| a.cmp(b), Op::Diff);
        let mut children = Vec::with_capacity(self.children.len());
        for (pe, c) in &self.children {
            if other.has_member(pe) {
                continue;
            }
            match other.child(pe) {
                Some(o) => {
                    let d = c.recursive_difference(o);
                    if !d.is_empty() {
                        children.push((pe.clone(), d));
                    }
                }
                None => children.push((pe.clone(), c.clone())),
            }
        }
        Set { members, children }
    }

    /// The members that have no children (upstream's `Leaves`).
    pub fn leaves(&self) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| self.child(m).is_none())
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                let l = c.leaves();
                (!l.is_empty()).then(|| (pe.clone(), l))
            })
            .collect();
        Set { members, children }
    }

    /// Every member path, in upstream's `Iterate` order: a level's members, then its children.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Upstream's FieldsV1 bytes (`SetToFields`): elements in upstream's order, a node that is
    /// both a member and a parent opening with `".":{}`, Go's JSON escaping.
    pub fn to_fields_v1_string(&self) -> String {
        let mut out = String::with_capacity(64);
        self.write_v1(false, &mut out);
        out
    }

    fn write_v1(&self, member: bool, out: &mut String) {
        out.push('{');
        let mut first = true;
        if member {
            out.push_str("\".\":{}");
            first = false;
        }
        let (mut i, mut j) = (0, 0);
        while i < self.members.len() || j < self.children.len() {
            if !first {
                out.push(',');
            }
            first = false;
            let ord = match (self.members.get(i), self.children.get(j)) {
                (Some(m), Some((c, _))) => m.cmp(c),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match ord {
                Ordering::Less => {
                    crest_gofmt::write_go_jsoniter_string(out, &self.members[i].to_fields_v1_key());
                    out.push_str(":{}");
                    i += 1;
                }
                Ordering::Greater => {
                    crest_gofmt::write_go_jsoniter_string(
                        out,
                        &self.children[j].0.to_fields_v1_key(),
                    );
                    out.push(':');
                    self.children[j].1.write_v1(false, out);
                    j += 1;
                }
                Ordering::Equal => {
                    crest_gofmt::write_go_jsoniter_string(
                        out,
                        &self.children[j].0.to_fields_v1_key(),
                    );
                    out.push(':');
                    self.children[j].1.write_v1(true, out);
                    i += 1;
                    j += 1;
                }
            }
        }
        out.push('}');
    }

    /// The FieldsV1 content as a JSON object.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.to_v1_map(false))
    }

    fn to_v1_map(&self, member: bool) -> Map<String, Value> {
        let empty = || Value::Object(Map::new());
        let mut entries: Vec<(String, Value)> =
            Vec::with_capacity(self.members.len() + self.children.len() + 1);
        if member {
            entries.push((".".into(), empty()));
        }
        let mut ci = 0;
        for pe in &self.members {
            while ci < self.children.len() && self.children[ci].0 < *pe {
                ci += 1;
            }
            if !(ci < self.children.len() && self.children[ci].0 == *pe) {
                entries.push((pe.to_fields_v1_key(), empty()));
            }
        }
        let mut mi = 0;
        for (pe, c) in &self.children {
            while mi < self.members.len() && self.members[mi] < *pe {
                mi += 1;
            }
            let is_member = mi < self.members.len() && self.members[mi] == *pe;
            entries.push((pe.to_fields_v1_key(), Value::Object(c.to_v1_map(is_member))));
        }
        entries.into_iter().collect()
    }

    /// Decodes FieldsV1 (upstream's `FieldsToSet`).
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        match v {
            Value::Object(m) => Self::from_v1_map(m).map(|(s, _)| s),
            Value::Null => Ok(Set::new()),
            other => Err(format!(
                "expected an object for the field set, got {}",
                crest_gofmt::go_jsoniter(other)
            )),
        }
    }

    /// Decodes FieldsV1 from its bytes.
    pub fn from_fields_v1_str(s: &str) -> Result<Set, String> {
        let v: Value = serde_json::from_str(s).map_err(|e| format!("parsing JSON: {e}"))?;
        Self::from_fields_v1(&v)
    }

    /// The set and whether `.` was present.
    fn from_v1_map(m: &Map<String, Value>) -> Result<(Set, bool), String> {
        let mut s = Set::new();
        let mut dot = false;
        let mut entries: Vec<(PathElement, &Value)> = Vec::with_capacity(m.len());
        for (k, v) in m {
            if k == "." {
                dot = true;
                continue;
            }
            entries.push((PathElement::from_fields_v1_key(k)?, v));
        }
        if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        for (pe, v) in entries {
            let Value::Object(cm) = v else {
                return Err(format!(
                    "expected an object for {}, got {}",
                    pe.to_fields_v1_key(),
                    crest_gofmt::go_jsoniter(v)
                ));
            };
            if cm.is_empty() {
                s.push_member(pe);
                continue;
            }
            let (child, member) = Self::from_v1_map(cm)?;
            if member {
                s.push_member(pe.clone());
            }
            s.put_child(pe, child);
        }
        Ok((s, dot))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Inter,
    Diff,
}

fn merge_sorted<T: Clone>(a: &[T], b: &[T], cmp: impl Fn(&T, &T) -> Ordering, op: Op) -> Vec<T> {
    let mut out = Vec::with_capacity(match op {
        Op::Union => a.len() + b.len(),
        _ => a.len(),
    });
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ord = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => cmp(x, y),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match ord {
            Ordering::Less => {
                if op != Op::Inter {
                    out.push(a[i].clone());
                }
                i += 1;
            }
            Ordering::Greater => {
                if op == Op::Union {
                    out.push(b[j].clone());
                }
                j += 1;
            }
            Ordering::Equal => {
                if op != Op::Diff {
                    out.push(a[i].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &[PathElement]) -> Vec<PathElement> {
        s.to_vec()
    }

    #[test]
    fn fields_v1_round_trip_is_byte_identical() {
        // As kube-apiserver writes a Deployment's kubectl-client-side-apply entry.
        let text = r#"{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}"#;
        let s = Set::from_fields_v1_str(text).unwrap();
        assert_eq!(s.to_fields_v1_string(), text);
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(s.to_fields_v1(), v);
    }

    #[test]
    fn upstream_order_of_elements() {
        let mut s = Set::new();
        s.insert(&[PathElement::Index(10)]);
        s.insert(&[PathElement::Index(2)]);
        s.insert(&[PathElement::Value(json!(10))]);
        s.insert(&[PathElement::Value(json!(9))]);
        s.insert(&[PathElement::Value(json!("a"))]);
        s.insert(&[PathElement::key(vec![("port".into(), json!(9))])]);
        s.insert(&[PathElement::key(vec![("port".into(), json!(10))])]);
        s.insert(&[PathElement::field("z")]);
        assert_eq!(
            s.to_fields_v1_string(),
            r#"{"f:z":{},"k:{\"port\":9}":{},"k:{\"port\":10}":{},"v:9":{},"v:10":{},"v:\"a\"":{},"i:2":{},"i:10":{}}"#
        );
    }

    #[test]
    fn go_escaping_in_keys() {
        let mut s = Set::new();
        s.insert(&[PathElement::Value(json!("<a&b>"))]);
        assert_eq!(
            s.to_fields_v1_string(),
            r#"{"v:\"\\u003ca\\u0026b\\u003e\"":{}}"#
        );
        assert_eq!(
            Set::from_fields_v1_str(&s.to_fields_v1_string()).unwrap(),
            s
        );
    }

    #[test]
    fn key_fields_sorted_and_printed() {
        let pe = PathElement::key(vec![
            ("protocol".into(), json!("TCP")),
            ("port".into(), json!(80)),
        ]);
        assert_eq!(pe.to_fields_v1_key(), r#"k:{"port":80,"protocol":"TCP"}"#);
        let path = Path(vec![
            PathElement::field("spec"),
            PathElement::field("ports"),
            pe,
        ]);
        assert_eq!(path.to_string(), r#".spec.ports[port=80,protocol="TCP"]"#);
        assert_eq!(
            Path(vec![PathElement::Value(json!("a")), PathElement::Index(3)]).to_string(),
            r#"[="a"][3]"#
        );
    }

    #[test]
    fn set_operations() {
        let f = |n: &str| PathElement::field(n);
        let a = Set::from_paths([
            Path(p(&[f("a")])),
            Path(p(&[f("b"), f("c")])),
            Path(p(&[f("b"), f("d")])),
        ]);
        let b = Set::from_paths([Path(p(&[f("b"), f("c")])), Path(p(&[f("e")]))]);
        assert_eq!(a.union(&b).paths().len(), 4, "{:?}", a.union(&b).paths());
        assert_eq!(a.intersection(&b).paths(), vec![Path(p(&[f("b"), f("c")]))]);
        assert_eq!(
            a.difference(&b).paths(),
            vec![Path(p(&[f("a")])), Path(p(&[f("b"), f("d")]))]
        );
        let prefix = Set::from_paths([Path(p(&[f("b")]))]);
        assert_eq!(a.difference(&prefix), a);
        let mut d = a.clone();
        d.subtract(&b);
        assert_eq!(d, a.difference(&b));
        assert_eq!(
            a.recursive_difference(&prefix).paths(),
            vec![Path(p(&[f("a")]))]
        );
        let mut c = Set::new();
        c.insert(&[f("x")]);
        c.insert(&[f("x"), f("y")]);
        assert_eq!(c.leaves().paths(), vec![Path(p(&[f("x"), f("y")]))]);
        assert!(c.has(&[f("x")]) && c.has(&[f("x"), f("y")]) && !c.has(&[f("y")]));
    }

    #[test]
    fn decode_errors() {
        assert!(Set::from_fields_v1(&json!({"x:a": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(Set::from_fields_v1(&json!({"i:a": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:[1]": {}})).is_err());
    }
}
