//! Walks of values by a [`Schema`], as structured-merge-diff's `typed` package: validation of
//! an applied configuration (`Validate`, with upstream's messages), the field set of a value
//! (`ToFieldSet`), the comparison of two values (`Compare`: added, modified, removed), the merge
//! of a configuration into a live value (`Merge`, the configuration winning on leaves, list
//! items ordered as upstream orders them), the removal of items (`RemoveItems`) and
//! `EnsureNamedFieldsAreMembers`.

use crate::fieldpath::{values_equal, PathElement, Set};
use crate::schema::{Atom, ListKind, ListType, MapType, ScalarKind, Schema, TypeId, DEDUCED};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One problem of a value against its schema, as upstream's `ValidationError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    /// The path, printed as upstream prints it (`.spec.ports[port=80]`), empty at the root.
    pub path: String,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The problems of a value, printed as upstream's `ValidationErrors` (one: itself; several:
/// `errors:` and one indented line each).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.len() == 1 {
            return write!(f, "{}", self.0[0]);
        }
        f.write_str("errors:")?;
        for e in &self.0 {
            write!(f, "\n  {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// The form a value takes in its type.
#[derive(Clone, Copy)]
enum Form<'s> {
    Scalar(ScalarKind),
    List(&'s ListType),
    Map(&'s MapType),
    Invalid,
}

impl Form<'_> {
    fn same(&self, other: &Form<'_>) -> bool {
        matches!(
            (self, other),
            (Form::Scalar(_), Form::Scalar(_))
                | (Form::List(_), Form::List(_))
                | (Form::Map(_), Form::Map(_))
                | (Form::Invalid, Form::Invalid)
        )
    }
}

/// upstream's `deduceAtom` then `handleAtom`'s choice (map, scalar, list).
fn deduce<'s>(atom: &'s Atom, v: Option<&Value>) -> Form<'s> {
    match (v, atom) {
        (
            Some(Value::Number(_) | Value::String(_) | Value::Bool(_)),
            Atom {
                scalar: Some(k), ..
            },
        ) => return Form::Scalar(*k),
        (Some(Value::Array(_)), Atom { list: Some(l), .. }) => return Form::List(l),
        (Some(Value::Object(_)), Atom { map: Some(m), .. }) => return Form::Map(m),
        _ => {}
    }
    if let Some(m) = &atom.map {
        Form::Map(m)
    } else if let Some(k) = atom.scalar {
        Form::Scalar(k)
    } else if let Some(l) = &atom.list {
        Form::List(l)
    } else {
        Form::Invalid
    }
}

fn as_list(v: Option<&Value>) -> Option<&Vec<Value>> {
    match v {
        Some(Value::Array(a)) => Some(a),
        _ => None,
    }
}

fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    match v {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// The path element of a list item (upstream's `listItemToPathElement`).
pub(crate) fn list_item_pe(
    schema: &Schema,
    list: &ListType,
    index: usize,
    item: &Value,
) -> Result<PathElement, String> {
    match &list.kind {
        ListKind::Atomic => Ok(PathElement::Index(index)),
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        },
        ListKind::Map(keys) => {
            let m = match item {
                Value::Null => {
                    return Err("associative list with keys may not have a null element".into())
                }
                Value::Object(m) => m,
                _ => return Err("associative list with keys may not have non-map elements".into()),
            };
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                if let Some(v) = m.get(k) {
                    fields.push((k.clone(), v.clone()));
                    continue;
                }
                let default = schema
                    .atom(list.elem)
                    .map
                    .as_ref()
                    .and_then(|t| t.field(k))
                    .and_then(|f| f.default.clone());
                match default {
                    Some(d) => fields.push((k.clone(), d)),
                    None => {
                        return Err(format!(
                        "associative list with keys has an element that omits key field {k:?} (and doesn't have default value)"
                    ))
                    }
                }
            }
            Ok(PathElement::key(fields))
        }
    }
}

/// Go's `%v` of an unstructured value.
fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, x)| format!("{k}:{}", go_v(x)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        other => crest_gofmt::go_jsoniter(other),
    }
}

/// Go's `%#v` of an unstructured value.
fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Array(a) => format!(
            "[]interface {{}}{{{}}}",
            a.iter().map(go_sharp_v).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "map[string]interface {{}}{{{}}}",
            m.iter()
                .map(|(k, x)| format!(
                    "{}:{}",
                    crest_gofmt::go_jsoniter(&Value::from(k.as_str())),
                    go_sharp_v(x)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => crest_gofmt::go_jsoniter(other),
    }
}

/// Go's `%T` of an unstructured value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

struct Validator<'s> {
    schema: &'s Schema,
    allow_duplicates: bool,
    path: String,
    errors: Vec<ValidationError>,
}

impl Validator<'_> {
    fn error(&mut self, message: String) {
        self.errors.push(ValidationError {
            path: self.path.clone(),
            message,
        });
    }

    fn walk(&mut self, ty: TypeId, v: &Value) {
        let atom = self.schema.atom(ty);
        match deduce(atom, Some(v)) {
            Form::Scalar(k) => self.scalar(k, v),
            Form::List(t) => match v {
                Value::Null => {}
                Value::Array(items) => self.list(t, items),
                other => self.error(format!("expected list, got &{{{}}}", go_v(other))),
            },
            Form::Map(t) => match v {
                Value::Null => {}
                Value::Object(m) => self.map(t, m),
                other => self.error(format!("expected map, got &{{{}}}", go_v(other))),
            },
            Form::Invalid => self.error("schema error: invalid atom: inlined".into()),
        }
    }

    fn scalar(&mut self, k: ScalarKind, v: &Value) {
        let ok = matches!(
            (k, v),
            (_, Value::Null)
                | (ScalarKind::Numeric, Value::Number(_))
                | (ScalarKind::String, Value::String(_))
                | (ScalarKind::Boolean, Value::Bool(_))
                | (
                    ScalarKind::Untyped,
                    Value::Number(_) | Value::String(_) | Value::Bool(_)
                )
        );
        if ok {
            return;
        }
        let msg = match k {
            ScalarKind::Numeric => format!("expected numeric (int or float), got {}", go_type(v)),
            ScalarKind::String => format!(
                "expected string, got &value.valueUnstructured{{Value:{}}}",
                go_sharp_v(v)
            ),
            ScalarKind::Boolean => format!("expected boolean, got &{{{}}}", go_v(v)),
            ScalarKind::Untyped => format!("expected any scalar, got &{{{}}}", go_v(v)),
        };
        self.error(msg);
    }

    fn list(&mut self, t: &ListType, items: &[Value]) {
        // A tree set: inserting into a sorted vector shifts half of it per item, quadratic for
        // the 30,000 items of a list in no particular order.
        let mut seen: BTreeSet<PathElement> = BTreeSet::new();
        for (i, item) in items.iter().enumerate() {
            let pe = if t.kind == ListKind::Atomic {
                PathElement::Index(i)
            } else {
                match list_item_pe(self.schema, t, i, item) {
                    Ok(pe) => pe,
                    Err(e) => {
                        self.error(format!("element {i}: {e}"));
                        return;
                    }
                }
            };
            if t.kind != ListKind::Atomic && !seen.insert(pe.clone()) && !self.allow_duplicates {
                self.error(format!("duplicate entries for key {pe}"));
            }
            let len = self.path.len();
            self.path.push_str(&pe.to_string());
            self.walk(t.elem, item);
            self.path.truncate(len);
        }
    }

    fn map(&mut self, t: &MapType, m: &Map<String, Value>) {
        let mut cur = t.cursor();
        for (k, v) in m {
            let len = self.path.len();
            self.path.push('.');
            self.path.push_str(k);
            match cur.type_of(k) {
                Some(ty) => self.walk(ty, v),
                None => {
                    self.error("field not declared in schema".into());
                    self.path.truncate(len);
                    return;
                }
            }
            self.path.truncate(len);
        }
    }
}

/// The problems of `v` against `schema` (upstream's `Validate`, duplicates refused, as for
/// an applied configuration).
pub fn validate(schema: &Schema, v: &Value) -> Result<(), ValidationErrors> {
    validate_with(schema, v, false)
}

/// [`validate`], duplicate items of associative lists allowed or not (upstream's
/// `AllowDuplicates`, used for objects being updated).
pub fn validate_with(
    schema: &Schema,
    v: &Value,
    allow_duplicates: bool,
) -> Result<(), ValidationErrors> {
    let mut w = Validator {
        schema,
        allow_duplicates,
        path: String::new(),
        errors: Vec::new(),
    };
    w.walk(schema.root(), v);
    if w.errors.is_empty() {
        Ok(())
    } else {
        Err(ValidationErrors(w.errors))
    }
}

/// The fields of `v` (upstream's `ToFieldSet`): every scalar, atomic list or map, list item,
/// map entry (keys of maps, not struct fields) and empty or null struct field.
pub fn to_field_set(schema: &Schema, v: &Value) -> Set {
    let mut s = Set::new();
    field_set(schema, schema.root(), v, &mut s);
    s
}

/// Fills `out`, the set under the current node, with the fields of `v`. Returns whether the
/// node itself is a member (a leaf).
fn field_set(schema: &Schema, ty: TypeId, v: &Value, out: &mut Set) -> bool {
    match deduce(schema.atom(ty), Some(v)) {
        Form::Scalar(_) | Form::Invalid => true,
        Form::List(t) => {
            if t.kind == ListKind::Atomic {
                return true;
            }
            let Value::Array(items) = v else {
                return false;
            };
            let mut pes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                pes.push(list_item_pe(schema, t, i, item).ok());
            }
            // Duplicated items are members as a whole (upstream's AllowDuplicates).
            let mut sorted: Vec<&PathElement> = pes.iter().flatten().collect();
            sorted.sort();
            let dup = |pe: &PathElement| {
                let i = sorted.partition_point(|x| *x < pe);
                sorted.get(i + 1).is_some_and(|x| *x == pe)
            };
            let mut found: Vec<(PathElement, Set)> = Vec::with_capacity(items.len());
            for (item, pe) in items.iter().zip(pes.iter()) {
                let Some(pe) = pe else { continue };
                let mut child = Set::new();
                // Duplicated items are members as a whole.
                if !dup(pe) {
                    field_set(schema, t.elem, item, &mut child);
                }
                found.push((pe.clone(), child));
            }
            // In element order, so that the set grows by appending.
            found.sort_by(|a, b| a.0.cmp(&b.0));
            for (pe, child) in found {
                if child.is_empty() {
                    out.push_member(pe);
                } else {
                    out.push_member(pe.clone());
                    out.put_child(pe, child);
                }
            }
            false
        }
        Form::Map(t) => {
            if t.atomic {
                return true;
            }
            let Value::Object(m) = v else {
                return false;
            };
            let mut cur = t.cursor();
            for (k, val) in m {
                let field = cur.field(k);
                let ty = field.map(|f| f.ty).or(t.elem).unwrap_or(DEDUCED);
                let mut child = Set::new();
                let leaf = field_set(schema, ty, val, &mut child);
                let pe = PathElement::Field(k.clone());
                let empty =
                    matches!(val, Value::Null) || matches!(val, Value::Object(o) if o.is_empty());
                if child.is_empty() {
                    if leaf || empty || field.is_none() {
                        out.push_member(pe);
                    }
                } else {
                    if leaf || empty || field.is_none() {
                        out.push_member(pe.clone());
                    }
                    out.put_child(pe, child);
                }
            }
            false
        }
    }
}

/// The result of comparing two values (upstream's `Comparison`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// In the new value only.
    pub added: Set,
    /// In both, different.
    pub modified: Set,
    /// In the old value only.
    pub removed: Set,
}

impl Comparison {
    /// Whether the values were the same.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// The comparison without the paths in or below `fields` (upstream's `ExcludeFields`).
    pub fn exclude(self, fields: &Set) -> Comparison {
        if fields.is_empty() {
            return self;
        }
        Comparison {
            added: self.added.recursive_difference(fields),
            modified: self.modified.recursive_difference(fields),
            removed: self.removed.recursive_difference(fields),
        }
    }
}

/// Compares `lhs` (old; `None`: nothing) with `rhs` (new).
pub fn compare(schema: &Schema, lhs: Option<&Value>, rhs: Option<&Value>) -> Comparison {
    let mut c = Comparison::default();
    if lhs.is_none() && rhs.is_none() {
        return c;
    }
    cmp_node(schema, schema.root(), lhs, rhs, &mut c);
    c
}

/// How a node itself compares (besides what its children hold).
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Same,
    Added,
    Modified,
    Removed,
}

fn leaf_mark(lhs: Option<&Value>, rhs: Option<&Value>) -> Mark {
    match (lhs, rhs) {
        (None, _) => Mark::Added,
        (_, None) => Mark::Removed,
        (Some(l), Some(r)) if !values_equal(l, r) => Mark::Modified,
        _ => Mark::Same,
    }
}

impl Comparison {
    /// Records the comparison of the child `pe`: its mark and its own sets.
    fn put(&mut self, pe: PathElement, mark: Mark, sub: Comparison) {
        match mark {
            Mark::Same => {}
            Mark::Added => self.added.push_member(pe.clone()),
            Mark::Modified => self.modified.push_member(pe.clone()),
            Mark::Removed => self.removed.push_member(pe.clone()),
        }
        if !sub.added.is_empty() {
            self.added.put_child(pe.clone(), sub.added);
        }
        if !sub.modified.is_empty() {
            self.modified.put_child(pe.clone(), sub.modified);
        }
        if !sub.removed.is_empty() {
            self.removed.put_child(pe, sub.removed);
        }
    }
}

/// Compares a node; `c` receives the paths below it, the node's own mark is returned.
fn cmp_node(
    schema: &Schema,
    ty: TypeId,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    c: &mut Comparison,
) -> Mark {
    let atom = schema.atom(ty);
    let fl = deduce(atom, lhs);
    let fr = deduce(atom, rhs);
    let leaf = if rhs.is_none() {
        cmp_form(schema, fl, lhs, rhs, c)
    } else if lhs.is_none() || fl.same(&fr) {
        cmp_form(schema, fr, lhs, rhs, c)
    } else {
        let first = cmp_form(schema, fl, lhs, rhs, c);
        let second = cmp_form(schema, fr, lhs, rhs, c);
        match (first, second) {
            (Some(m), _) | (None, Some(m)) => Some(m),
            _ => None,
        }
    };
    match leaf {
        Some(m) => m,
        None if lhs.is_none() => Mark::Added,
        None if rhs.is_none() => Mark::Removed,
        None => Mark::Same,
    }
}

/// The node's mark when it is a leaf, `None` when its children were compared.
fn cmp_form(
    schema: &Schema,
    form: Form<'_>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    c: &mut Comparison,
) -> Option<Mark> {
    match form {
        Form::Scalar(_) | Form::Invalid => Some(leaf_mark(lhs, rhs)),
        Form::List(t) => {
            let (l, r) = (as_list(lhs), as_list(rhs));
            let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
            if t.kind == ListKind::Atomic || empty {
                return Some(leaf_mark(lhs, rhs));
            }
            cmp_list(schema, t, l, r, c);
            None
        }
        Form::Map(t) => {
            let (l, r) = (as_map(lhs), as_map(rhs));
            let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
            if t.atomic || empty {
                return Some(leaf_mark(lhs, rhs));
            }
            let mut cur = t.cursor();
            zip_maps(l, r, |k, lv, rv| {
                let mut sub = Comparison::default();
                let mark = cmp_node(schema, cur.type_of(k).unwrap_or(DEDUCED), lv, rv, &mut sub);
                if mark != Mark::Same || !sub.is_same() {
                    c.put(PathElement::Field(k.to_string()), mark, sub);
                }
            });
            None
        }
    }
}

/// Calls `f` for every key of either map, in key order.
fn zip_maps<'v>(
    l: Option<&'v Map<String, Value>>,
    r: Option<&'v Map<String, Value>>,
    mut f: impl FnMut(&'v str, Option<&'v Value>, Option<&'v Value>),
) {
    match (l, r) {
        (None, None) => {}
        (Some(l), None) => l.iter().for_each(|(k, v)| f(k, Some(v), None)),
        (None, Some(r)) => r.iter().for_each(|(k, v)| f(k, None, Some(v))),
        (Some(l), Some(r)) => {
            let mut a = l.iter().peekable();
            let mut b = r.iter().peekable();
            loop {
                match (a.peek(), b.peek()) {
                    (None, None) => break,
                    (Some(&(k, v)), None) => {
                        f(k, Some(v), None);
                        a.next();
                    }
                    (None, Some(&(k, v))) => {
                        f(k, None, Some(v));
                        b.next();
                    }
                    (Some(&(ka, va)), Some(&(kb, vb))) => match ka.cmp(kb) {
                        std::cmp::Ordering::Less => {
                            f(ka, Some(va), None);
                            a.next();
                        }
                        std::cmp::Ordering::Greater => {
                            f(kb, None, Some(vb));
                            b.next();
                        }
                        std::cmp::Ordering::Equal => {
                            f(ka, Some(va), Some(vb));
                            a.next();
                            b.next();
                        }
                    },
                }
            }
        }
    }
}

type Indexed<'v> = BTreeMap<PathElement, Vec<&'v Value>>;

fn index_items<'v>(schema: &Schema, t: &ListType, items: Option<&'v Vec<Value>>) -> Indexed<'v> {
    let mut out: Indexed<'v> = BTreeMap::new();
    for (i, item) in items.into_iter().flatten().enumerate() {
        if let Ok(pe) = list_item_pe(schema, t, i, item) {
            out.entry(pe).or_default().push(item);
        }
    }
    out
}

fn cmp_list(
    schema: &Schema,
    t: &ListType,
    l: Option<&Vec<Value>>,
    r: Option<&Vec<Value>>,
    c: &mut Comparison,
) {
    let li = index_items(schema, t, l);
    let ri = index_items(schema, t, r);
    let mut visit = |pe: &PathElement, lv: &[&Value], rv: &[&Value]| {
        let mut sub = Comparison::default();
        let mark = match (lv, rv) {
            ([], []) => Mark::Same,
            ([a], [b]) => cmp_node(schema, t.elem, Some(a), Some(b), &mut sub),
            ([a], []) => cmp_node(schema, t.elem, Some(a), None, &mut sub),
            ([], [b]) => cmp_node(schema, t.elem, None, Some(b), &mut sub),
            // Duplicates before and after: compared as a whole.
            (a, b) if a.len() >= 2 && b.len() >= 2 => {
                if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| !values_equal(x, y)) {
                    Mark::Modified
                } else {
                    Mark::Same
                }
            }
            // Duplicates no more: the item compared as new, the duplicate marker removed.
            (a, b) if a.len() >= 2 => {
                if let Some(r) = b.first() {
                    let mut inner = Comparison::default();
                    let m = cmp_node(schema, t.elem, None, Some(r), &mut inner);
                    c.put(pe.clone(), m, inner);
                }
                Mark::Removed
            }
            // New duplicates: the old item compared as removed, the duplicate marker added.
            (a, _) => {
                if let Some(l) = a.first() {
                    let mut inner = Comparison::default();
                    let m = cmp_node(schema, t.elem, Some(l), None, &mut inner);
                    c.put(pe.clone(), m, inner);
                }
                Mark::Added
            }
        };
        if mark != Mark::Same || !sub.is_same() {
            c.put(pe.clone(), mark, sub);
        }
    };
    // Both sides in element order, so that the sets grow by appending.
    let mut a = li.iter().peekable();
    let mut b = ri.iter().peekable();
    loop {
        match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some((pe, lv)), None) => {
                visit(pe, lv, &[]);
                a.next();
            }
            (None, Some((pe, rv))) => {
                visit(pe, &[], rv);
                b.next();
            }
            (Some((pl, lv)), Some((pr, rv))) => match pl.cmp(pr) {
                std::cmp::Ordering::Less => {
                    visit(pl, lv, &[]);
                    a.next();
                }
                std::cmp::Ordering::Greater => {
                    visit(pr, &[], rv);
                    b.next();
                }
                std::cmp::Ordering::Equal => {
                    visit(pl, lv, rv);
                    a.next();
                    b.next();
                }
            },
        }
    }
}

/// Merges `rhs` (a configuration) into `lhs` (upstream's `Merge`): leaves and atomic parts
/// from `rhs` when it has them, granular maps and associative lists merged, list items in
/// upstream's order. `None` when neither side has anything.
pub fn merge(schema: &Schema, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    merge_node(schema, schema.root(), lhs, rhs)
}

fn merge_node(
    schema: &Schema,
    ty: TypeId,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Option<Value> {
    let atom = schema.atom(ty);
    let form = if rhs.is_none() {
        deduce(atom, lhs)
    } else {
        deduce(atom, rhs)
    };
    let leaf = || rhs.or(lhs).cloned();
    match form {
        Form::Scalar(_) | Form::Invalid => leaf(),
        Form::List(t) => {
            let (l, r) = (as_list(lhs), as_list(rhs));
            let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
            if t.kind == ListKind::Atomic || empty {
                return leaf();
            }
            let out = merge_list(schema, t, l, r);
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Form::Map(t) => {
            let (l, r) = (as_map(lhs), as_map(rhs));
            let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
            if t.atomic || empty {
                return leaf();
            }
            // Fast path: only the live value has the map.
            if let (Some(l), None) = (l, r) {
                return Some(Value::Object(l.clone()));
            }
            let mut out = Map::new();
            let mut cur = t.cursor();
            zip_maps(l, r, |k, lv, rv| {
                if let Some(v) = merge_node(schema, cur.type_of(k).unwrap_or(DEDUCED), lv, rv) {
                    out.insert(k.to_string(), v);
                }
            });
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// Merges `rhs` (a configuration) into `target` in place: the same result as [`merge`] with
/// `target` as the left side, without rebuilding what the configuration does not touch.
/// Returns whether `target` changed.
pub fn merge_into(schema: &Schema, target: &mut Value, rhs: &Value) -> bool {
    merge_in(schema, schema.root(), target, rhs)
}

fn replace(target: &mut Value, rhs: &Value) -> bool {
    if values_equal(target, rhs) {
        false
    } else {
        *target = rhs.clone();
        true
    }
}

fn merge_in(schema: &Schema, ty: TypeId, target: &mut Value, rhs: &Value) -> bool {
    match deduce(schema.atom(ty), Some(rhs)) {
        Form::Scalar(_) | Form::Invalid => replace(target, rhs),
        Form::List(t) => {
            let (l, r) = (as_list(Some(target)), as_list(Some(rhs)));
            let empty = l.is_none_or(|x| x.is_empty()) && r.is_none_or(|x| x.is_empty());
            if t.kind == ListKind::Atomic || empty {
                return replace(target, rhs);
            }
            let out = Value::Array(merge_list(schema, t, l, r));
            let changed = !values_equal(target, &out);
            *target = out;
            changed
        }
        Form::Map(t) => {
            let empty = as_map(Some(target)).is_none_or(|x| x.is_empty())
                && as_map(Some(rhs)).is_none_or(|x| x.is_empty());
            if t.atomic || empty {
                return replace(target, rhs);
            }
            let Value::Object(r) = rhs else {
                // A null configuration keeps the live map.
                return false;
            };
            let Value::Object(tm) = target else {
                *target = merge_node(schema, ty, None, Some(rhs))
                    .unwrap_or_else(|| Value::Object(Map::new()));
                return true;
            };
            let mut changed = false;
            let mut cur = t.cursor();
            for (k, rv) in r {
                let cty = cur.type_of(k).unwrap_or(DEDUCED);
                match tm.get_mut(k) {
                    Some(tv) => changed |= merge_in(schema, cty, tv, rv),
                    None => {
                        if let Some(v) = merge_node(schema, cty, None, Some(rv)) {
                            tm.insert(k.clone(), v);
                            changed = true;
                        }
                    }
                }
            }
            changed
        }
    }
}

/// The items of a list with their path elements, in order; unidentifiable items skipped.
fn identified<'v>(
    schema: &Schema,
    t: &ListType,
    items: Option<&'v Vec<Value>>,
) -> Vec<(PathElement, &'v Value)> {
    items
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, item)| list_item_pe(schema, t, i, item).ok().map(|pe| (pe, item)))
        .collect()
}

/// Upstream's item order: the live items in their order, the configuration's items (new or
/// shared) where the configuration puts them relative to the shared ones. A live item present
/// several times (duplicates, allowed in stored objects) is kept as it is where the
/// configuration does not mention it, else replaced by the configuration's item, once.
fn merge_list(
    schema: &Schema,
    t: &ListType,
    l: Option<&Vec<Value>>,
    r: Option<&Vec<Value>>,
) -> Vec<Value> {
    let lhs = identified(schema, t, l);
    let mut rhs = identified(schema, t, r);
    // The configuration has no duplicates (validated); should it have, the first counts.
    {
        // A tree set: inserting into a sorted vector shifts half of it per item, quadratic for
        // the 30,000 items of a list in no particular order.
        let mut seen: BTreeSet<&PathElement> = BTreeSet::new();
        let mut keep = vec![true; rhs.len()];
        for (i, (pe, _)) in rhs.iter().enumerate() {
            keep[i] = seen.insert(pe);
        }
        let mut k = keep.iter();
        rhs.retain(|_| *k.next().unwrap_or(&true));
    }
    // Live items by element: the value when it occurs once, None when duplicated.
    let mut live: BTreeMap<&PathElement, Option<&Value>> = BTreeMap::new();
    for (pe, v) in &lhs {
        live.entry(pe).and_modify(|x| *x = None).or_insert(Some(*v));
    }
    let in_rhs: BTreeMap<&PathElement, &Value> = rhs.iter().map(|(pe, v)| (pe, *v)).collect();
    let mut shared = rhs
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| live.contains_key(pe));
    let mut next_shared = shared.next();
    let mut merged: std::collections::BTreeSet<&PathElement> = Default::default();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let item = |pe: &PathElement, rv: Option<&Value>| {
        let lv = live.get(pe).copied().flatten();
        match (lv, rv) {
            (None, None) => None,
            _ => merge_node(schema, t.elem, lv, rv),
        }
    };
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let pe = &lhs[li].0;
            if *pe == rhs[ri].0 {
                merged.insert(pe);
                out.extend(item(pe, Some(rhs[ri].1)));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if in_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let (pe, v) = &lhs[li];
            if !in_rhs.contains_key(pe) {
                // Each occurrence as it is.
                out.extend(merge_node(schema, t.elem, Some(v), None));
                li += 1;
                continue;
            }
            if merged.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            let (pe, rv) = &rhs[ri];
            merged.insert(pe);
            out.extend(item(pe, Some(rv)));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        } else {
            // Only reachable for an item already merged; never loop forever.
            li += 1;
        }
    }
    out
}

/// `v` without the items and fields of `items` (upstream's `RemoveItems`: a map or list left
/// empty by the removal becomes null, as upstream leaves it).
pub fn remove_items(schema: &Schema, v: &Value, items: &Set) -> Value {
    if items.is_empty() {
        return v.clone();
    }
    match remove_node(schema, schema.root(), v, items) {
        Value::Null => Value::Object(Map::new()),
        other => other,
    }
}

fn remove_node(schema: &Schema, ty: TypeId, v: &Value, items: &Set) -> Value {
    match deduce(schema.atom(ty), Some(v)) {
        Form::Scalar(_) | Form::Invalid => v.clone(),
        Form::List(t) => {
            let Value::Array(a) = v else {
                return v.clone();
            };
            if a.is_empty() || t.kind == ListKind::Atomic {
                return Value::Null;
            }
            let mut out = Vec::with_capacity(a.len());
            for (i, item) in a.iter().enumerate() {
                let Ok(pe) = list_item_pe(schema, t, i, item) else {
                    out.push(item.clone());
                    continue;
                };
                if items.has_member(&pe) {
                    continue;
                }
                match items.child(&pe) {
                    Some(sub) => out.push(remove_node(schema, t.elem, item, sub)),
                    None => out.push(item.clone()),
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Array(out)
            }
        }
        Form::Map(t) => {
            let Value::Object(m) = v else {
                return v.clone();
            };
            if m.is_empty() || t.atomic {
                return Value::Null;
            }
            let mut out = Map::new();
            let mut cur = t.cursor();
            for (k, val) in m {
                let pe = PathElement::Field(k.clone());
                let ty = cur.type_of(k).unwrap_or(DEDUCED);
                if items.has_member(&pe) {
                    continue;
                }
                match items.child(&pe) {
                    Some(sub) => {
                        out.insert(k.clone(), remove_node(schema, ty, val, sub));
                    }
                    None => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            if out.is_empty() {
                Value::Null
            } else {
                Value::Object(out)
            }
        }
    }
}

/// `set` with the struct fields that are parents of its paths made members too (upstream's
/// `EnsureNamedFieldsAreMembers`), so that removing them removes the field.
pub fn ensure_named_fields_are_members(schema: &Schema, set: &Set) -> Set {
    ensure_named(schema, Some(schema.root()), set)
}

fn ensure_named(schema: &Schema, ty: Option<TypeId>, set: &Set) -> Set {
    let atom = ty.map(|t| schema.atom(t));
    let map = atom.and_then(|a| a.map.as_ref());
    let list = atom.and_then(|a| a.list.as_ref());
    let mut out = Set::new();
    for m in set.members() {
        out.insert_member(m.clone());
    }
    for (pe, child) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => {
                if let Some(f) = map.and_then(|m| m.field(name)) {
                    out.insert_member(pe.clone());
                    Some(f.ty)
                } else {
                    map.and_then(|m| m.elem)
                }
            }
            PathElement::Key(_) => list.map(|l| l.elem),
            _ => None,
        };
        out.put_child(pe.clone(), ensure_named(schema, child_ty, child));
    }
    out
}

/// `set` reconciled with a schema that changed since it was written (upstream's
/// `ReconcileFieldSetWithSchema`): a granular map, struct or list that is now atomic is owned
/// as a whole. `None` when nothing changes (always for a schema deducing every type).
pub fn reconcile_with_schema(schema: &Schema, set: &Set) -> Option<Set> {
    if schema.root() == DEDUCED {
        return None;
    }
    reconcile_node(schema, schema.root(), set)
}

fn reconcile_node(schema: &Schema, ty: TypeId, set: &Set) -> Option<Set> {
    let atom = schema.atom(ty);
    let mut out: Option<Set> = None;
    for (pe, child) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => atom
                .map
                .as_ref()
                .and_then(|m| m.field(name).map(|f| f.ty).or(m.elem)),
            _ => atom.list.as_ref().map(|l| l.elem),
        };
        let Some(child_ty) = child_ty else { continue };
        let a = schema.atom(child_ty);
        // The form a schema alone picks: map, then scalar, then list.
        let now_atomic = match (&a.map, a.scalar, &a.list) {
            (Some(m), _, _) => m.atomic,
            (None, Some(_), _) => false,
            (None, None, Some(l)) => l.kind == ListKind::Atomic,
            _ => false,
        };
        if now_atomic {
            let o = out.get_or_insert_with(|| set.clone());
            o.remove_child(pe);
            o.insert_member(pe.clone());
        } else if let Some(fixed) = reconcile_node(schema, child_ty, child) {
            let o = out.get_or_insert_with(|| set.clone());
            o.remove_child(pe);
            o.put_child(pe.clone(), fixed);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::from_crd(
            Some(&json!({"type": "object", "properties": {
                "strs": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "bools": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "boolean"}},
                "nums": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}},
                "atomic": {"type": "array", "items": {"type": "string"}},
                "items": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "n"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "n": {"type": "integer"},
                        "flag": {"type": "boolean"}, "v": {"type": "integer"},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}},
                "inner": {"type": "object", "properties": {"x": {"type": "string"}}},
                "free": {"type": "object", "additionalProperties": {"type": "string"}},
            }})),
            &Map::new(),
        )
        .unwrap()
    }

    fn check(cases: &[(Value, Value, Value)]) {
        let s = schema();
        for (l, r, want) in cases {
            let got = merge(&s, Some(l), Some(r)).unwrap_or(Value::Null);
            assert_eq!(&got, want, "merge {l} <- {r}");
            let mut inplace = l.clone();
            merge_into(&s, &mut inplace, r);
            assert_eq!(&inplace, want, "merge_into {l} <- {r}");
        }
    }

    #[test]
    fn merge_of_sets_keeps_live_order_around_shared_items() {
        let c = |l: &[&str], r: &[&str], o: &[&str]| {
            (json!({"strs": l}), json!({"strs": r}), json!({"strs": o}))
        };
        check(&[
            c(&["x", "y", "z"], &["x", "y"], &["x", "y", "z"]),
            c(&["x", "y"], &["x", "y", "z"], &["x", "y", "z"]),
            c(&["x", "y"], &["y", "x"], &["y", "x"]),
            c(&["p", "q", "r"], &["s", "t"], &["p", "q", "r", "s", "t"]),
            c(
                &["p", "q", "r"],
                &["r", "s", "t"],
                &["p", "q", "r", "s", "t"],
            ),
            c(
                &["p", "q", "r", "w", "v"],
                &["r", "s", "t", "v"],
                &["p", "q", "r", "w", "s", "t", "v"],
            ),
            c(
                &["r", "s", "t", "v"],
                &["p", "r", "t"],
                &["p", "r", "s", "t", "v"],
            ),
            c(
                &["r", "p", "w", "v"],
                &["r", "v", "p", "w"],
                &["r", "v", "p", "w"],
            ),
            c(
                &["p", "q", "r", "s"],
                &["s", "t", "u", "p"],
                &["q", "r", "s", "t", "u", "p"],
            ),
            // Live duplicates: kept where untouched, once where applied.
            c(&["p", "q", "q"], &["r"], &["p", "q", "q", "r"]),
            c(&["p", "q", "q"], &["q"], &["p", "q"]),
            c(&["p", "q", "q"], &["p"], &["p", "q", "q"]),
            c(
                &["p", "q", "r", "s", "t", "r"],
                &["1", "q", "2", "t", "s"],
                &["p", "1", "q", "r", "2", "t", "r", "s"],
            ),
            c(
                &["p", "p", "q", "q"],
                &["q", "r", "s"],
                &["p", "p", "q", "r", "s"],
            ),
            c(
                &["r", "p", "w", "v", "r", "p"],
                &["r", "v", "p", "w"],
                &["r", "v", "p", "w"],
            ),
        ]);
        check(&[
            (
                json!({"bools": [true]}),
                json!({"bools": [false]}),
                json!({"bools": [true, false]}),
            ),
            (
                json!({"bools": [true, false, true]}),
                json!({"bools": [true]}),
                json!({"bools": [true, false]}),
            ),
            (
                json!({"nums": [1, 2, 3.5]}),
                json!({"nums": [1, 2, 3]}),
                json!({"nums": [1, 2, 3.5, 3]}),
            ),
            (
                json!({"strs": ["x"]}),
                json!({"strs": []}),
                json!({"strs": ["x"]}),
            ),
            (
                json!({"strs": []}),
                json!({"strs": ["x"]}),
                json!({"strs": ["x"]}),
            ),
        ]);
    }

    #[test]
    fn merge_of_keyed_lists_atomic_lists_and_empty_values() {
        let i = |name: &str, n: i64| json!({"name": name, "n": n});
        check(&[
            (
                json!({"items": [i("a", 1)]}),
                json!({"items": [i("a", 2)]}),
                json!({"items": [i("a", 1), i("a", 2)]}),
            ),
            (
                json!({"items": [i("a", 1), i("b", 1)]}),
                json!({"items": [i("a", 1), i("a", 2)]}),
                json!({"items": [i("a", 1), i("b", 1), i("a", 2)]}),
            ),
            (
                json!({"items": [i("b", 2)]}),
                json!({"items": [i("a", 1), i("b", 2), i("c", 3)]}),
                json!({"items": [i("a", 1), i("b", 2), i("c", 3)]}),
            ),
            (
                json!({"items": [i("a", 1), i("b", 2), i("c", 3)]}),
                json!({"items": [i("c", 3), i("a", 1)]}),
                json!({"items": [i("b", 2), i("c", 3), i("a", 1)]}),
            ),
            // A duplicated live item is replaced by the configuration's, not merged.
            (
                json!({"items": [{"name": "a", "n": 1, "flag": true}, i("b", 2), {"name": "a", "n": 1, "v": 2}]}),
                json!({"items": [{"name": "a", "n": 1, "v": 3}, i("c", 3), i("b", 2)]}),
                json!({"items": [{"name": "a", "n": 1, "v": 3}, i("c", 3), i("b", 2)]}),
            ),
            (
                json!({"items": [{"name": "a", "n": 1, "v": 1}, {"name": "a", "n": 1, "v": 2}]}),
                json!({"items": []}),
                json!({"items": [{"name": "a", "n": 1, "v": 1}, {"name": "a", "n": 1, "v": 2}]}),
            ),
            // Fields of a shared item merge.
            (
                json!({"items": [{"name": "a", "n": 1, "flag": true, "labels": {"x": "1"}}]}),
                json!({"items": [{"name": "a", "n": 1, "v": 5, "labels": {"y": "2"}}]}),
                json!({"items": [{"name": "a", "n": 1, "flag": true, "v": 5, "labels": {"x": "1", "y": "2"}}]}),
            ),
            (
                json!({"atomic": ["a", "a", "a"]}),
                json!({"atomic": null}),
                json!({"atomic": null}),
            ),
            (
                json!({"atomic": ["a", "b"]}),
                json!({"atomic": []}),
                json!({"atomic": []}),
            ),
            (
                json!({"atomic": ["a", "a", "a"]}),
                json!({"atomic": ["a", "a"]}),
                json!({"atomic": ["a", "a"]}),
            ),
            (json!({}), json!({"free": {}}), json!({"free": {}})),
            (json!({}), json!({"free": null}), json!({"free": null})),
            (
                json!({"free": null}),
                json!({"free": {}}),
                json!({"free": {}}),
            ),
            (
                json!({"free": {}}),
                json!({"free": null}),
                json!({"free": null}),
            ),
            (
                json!({"inner": {}}),
                json!({"inner": null}),
                json!({"inner": null}),
            ),
            (
                json!({"inner": {"x": "1"}}),
                json!({"inner": null}),
                json!({"inner": {"x": "1"}}),
            ),
        ]);
    }

    #[test]
    fn sets_follow_lists_and_maps_made_atomic() {
        let s = schema();
        let set = Set::from_fields_v1(&json!({"f:free": {"f:k": {}}, "f:strs": {"v:\"x\"": {}}}))
            .unwrap();
        assert_eq!(reconcile_with_schema(&s, &set), None);
        let atomic = Schema::from_crd(
            Some(&json!({"type": "object", "properties": {
                "strs": {"type": "array", "items": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"}}}})),
            &Map::new(),
        )
        .unwrap();
        assert_eq!(
            reconcile_with_schema(&atomic, &set).map(|s| s.to_fields_v1()),
            Some(json!({"f:free": {}, "f:strs": {}}))
        );
        assert_eq!(reconcile_with_schema(&Schema::deduced(), &set), None);
    }

    #[test]
    fn field_sets_compare_and_remove() {
        let s = schema();
        let v = json!({"strs": ["x"], "inner": {}, "free": {"k": "v"}, "atomic": ["a"],
            "items": [{"name": "a", "n": 1, "v": 2}]});
        assert_eq!(
            to_field_set(&s, &v).to_fields_v1_string(),
            r#"{"f:atomic":{},"f:free":{"f:k":{}},"f:inner":{},"f:items":{"k:{\"n\":1,\"name\":\"a\"}":{".":{},"f:n":{},"f:name":{},"f:v":{}}},"f:strs":{"v:\"x\"":{}}}"#
        );
        let c = compare(
            &s,
            Some(&json!({"inner": {"x": "1"}, "strs": ["x"]})),
            Some(&json!({"inner": {"x": "2"}, "free": {"k": "v"}})),
        );
        assert_eq!(
            c.modified.to_fields_v1_string(),
            r#"{"f:inner":{"f:x":{}}}"#
        );
        assert_eq!(
            c.added.to_fields_v1_string(),
            r#"{"f:free":{".":{},"f:k":{}}}"#
        );
        assert_eq!(
            c.removed.to_fields_v1_string(),
            r#"{"f:strs":{".":{},"v:\"x\"":{}}}"#
        );
        // Removing every field of a map leaves null, as upstream.
        let mut rm = Set::new();
        rm.insert(&[PathElement::field("free"), PathElement::field("k")]);
        assert_eq!(remove_items(&s, &v, &rm)["free"], Value::Null);
        let ensured = ensure_named_fields_are_members(&s, &rm);
        assert_eq!(
            ensured.to_fields_v1_string(),
            r#"{"f:free":{".":{},"f:k":{}}}"#
        );
    }
}
