//! OpenAPI value validation as kube-openapi's `SchemaValidator` does it for CRDs, including
//! the bookkeeping that decides which branch's errors `anyOf`/`oneOf` report (`MatchCount`),
//! and validation ratcheting (errors in subtrees unchanged from the old object are dropped).

use super::formats::{self, Format};
use super::node::{Node, Types};
use crate::correlation::{map_key_text, OldItems};
use crate::structural::{Structural, ValueValidation};
use crest_gofmt::{go_float, go_quote};
use serde_json::{Map, Number, Value};
use std::fmt::Write;

/// What kind of kube-openapi error this is; decides the Kubernetes field error it becomes.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    InvalidType,
    Required,
    TooLong(i64),
    TooMany {
        actual: i64,
        max: i64,
    },
    /// The values as listed, and the size of that list.
    Enum {
        values: std::sync::Arc<[String]>,
        size: usize,
    },
    Invalid,
    /// Errors without a field (junctor messages): reported at the base path with value "".
    Composite,
}

/// The offending value as kube-openapi records it.
#[derive(Clone, Debug)]
pub(crate) enum Bad {
    None,
    Str(String),
    Int(i64),
    Json(Value),
}

#[derive(Clone, Debug)]
pub(crate) struct RawError {
    pub kind: Kind,
    /// kube-openapi's path (`spec.replicas`, `.key` for additionalProperties at the root).
    pub name: String,
    pub message: String,
    pub value: Bad,
}

/// A kube-openapi path, rendered only when an error needs it.
#[derive(Clone, Copy)]
pub(crate) struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    seg: Seg<'a>,
}

#[derive(Clone, Copy)]
enum Seg<'a> {
    Root,
    /// A declared property: `name` at the root, `parent.name` below.
    Prop(&'a str),
    /// An additionalProperties key: always `parent.key`.
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    pub(super) const ROOT: Path<'static> = Path {
        parent: None,
        seg: Seg::Root,
    };

    fn prop(&'a self, k: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Seg::Prop(k),
        }
    }

    fn key(&'a self, k: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Seg::Key(k),
        }
    }

    fn index(&'a self, i: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            seg: Seg::Index(i),
        }
    }

    fn is_root(&self) -> bool {
        self.parent.is_none()
    }

    fn render(&self) -> String {
        let mut s = String::new();
        self.render_into(&mut s);
        s
    }

    fn render_into(&self, s: &mut String) {
        if let Some(p) = self.parent {
            p.render_into(s);
        }
        match self.seg {
            Seg::Root => {}
            Seg::Prop(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => {
                let _ = write!(s, "[{i}]");
            }
        }
    }
}

/// A JSON number as Kubernetes decodes it: int64 when it fits, else float64.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn num(n: &Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}

/// swag's `IsFloat64AJSONInteger` (relative tolerance 1e-9 within ±2^53).
pub(crate) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9007199254740991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f == f.trunc() {
        return true;
    }
    if f < 0.0 {
        return false;
    }
    let g = f.trunc();
    let diff = (f - g).abs();
    if g == 0.0 || diff < f64::MIN_POSITIVE {
        return diff < 1e-9 * f64::MIN_POSITIVE;
    }
    diff / (f + g).min(f64::MAX) < 1e-9
}

pub(crate) struct Engine {
    pub errs: Vec<RawError>,
}

impl Engine {
    pub(super) fn new() -> Self {
        Engine { errs: Vec::new() }
    }

    fn push(&mut self, kind: Kind, name: String, message: String, value: Bad) {
        self.errs.push(RawError {
            kind,
            name,
            message,
            value,
        });
    }

    /// Validates `data` against `s`; `old` is the correlated old value when ratcheting.
    /// Returns kube-openapi's match count for this subtree.
    pub(super) fn schema(
        &mut self,
        s: Node,
        data: &Value,
        path: &Path,
        old: Option<&Value>,
    ) -> u32 {
        let start = self.errs.len();
        let count = self.schema_inner(s, data, path, old);
        if let (Some(old), Some(st)) = (old, s.structural()) {
            if self.errs.len() > start && correlated_equal(old, data, Some(st)) {
                self.errs.truncate(start);
            }
        }
        count
    }

    fn schema_inner(&mut self, s: Node, data: &Value, path: &Path, old: Option<&Value>) -> u32 {
        let vv = s.vv();
        let types = s.types();
        let (fmt_name, fmt) = match vv {
            Some(v) if !v.format.is_empty() => {
                formats::effective(&s.generic().type_, s.ext().x_int_or_string, &v.format)
            }
            _ => (String::new(), None),
        };
        if data.is_null() {
            let c = self.type_check(s, types, &fmt_name, data, path);
            if let Some(vv) = vv {
                self.enum_check(vv, data, path);
            }
            return c;
        }
        let mut count = 0;
        if !types.is_empty() || !fmt_name.is_empty() {
            count += self.type_check(s, types, &fmt_name, data, path) + 1;
        }
        count += self.junctors(vv, data, path) + 1;
        if let Value::String(st) = data {
            if let Some(vv) = vv {
                self.string_check(vv, st, path);
            }
            count += 1;
            if let Some(f) = fmt {
                if !formats::validates(f, st) {
                    self.format_error(&fmt_name, f, st, path);
                }
                count += 1;
            }
        }
        if let Value::Number(n) = data {
            if let Some(vv) = vv {
                self.number_check(vv, n, path);
            }
            count += 2;
        }
        if let Value::Array(a) = data {
            count += self.slice(s, vv, a, path, old) + 1;
        }
        if let Some(vv) = vv {
            self.enum_check(vv, data, path);
        }
        count += 1;
        if let Value::Object(m) = data {
            count += self.object(s, vv, m, path, old) + 1;
        }
        count + 1
    }

    fn invalid_type(&mut self, path: &Path, type_name: &str, value: &str) {
        let name = path.render();
        let message = format!(
            "{name} in body must be of type {type_name}: {}",
            go_quote(value)
        );
        self.push(
            Kind::InvalidType,
            name,
            message,
            Bad::Str(value.to_string()),
        );
    }

    /// kube-openapi's `typeValidator`; 1 when it passes, 0 when it reports an error.
    fn type_check(
        &mut self,
        s: Node,
        types: Types,
        fmt_name: &str,
        data: &Value,
        path: &Path,
    ) -> u32 {
        if data.is_null() {
            if !types.is_empty() && !types.contains("null") && !s.generic().nullable {
                self.invalid_type(path, types.joined(), "null");
                return 0;
            }
            return 1;
        }
        let (sch_type, format) = match data {
            Value::Bool(_) => ("boolean", ""),
            Value::String(_) => ("string", ""),
            Value::Number(n) => match num(n) {
                Num::Int(_) => ("integer", "int64"),
                Num::Float(_) => ("number", "float64"),
            },
            Value::Array(_) => ("array", ""),
            Value::Object(_) => ("object", ""),
            Value::Null => ("null", ""),
        };
        let is_float_int = match data {
            Value::Number(n) => match num(n) {
                Num::Float(f) => is_json_integer(f) && types.contains("integer"),
                Num::Int(_) => false,
            },
            _ => false,
        };
        let is_int_float = sch_type == "integer" && types.contains("number");
        let string_or_slice = matches!(data, Value::String(_) | Value::Array(_));
        let type_ok = types.contains(sch_type) || is_float_int || is_int_float;
        if !(string_or_slice || fmt_name.is_empty() || type_ok || format == fmt_name) {
            self.invalid_type(path, fmt_name, format);
            return 0;
        }
        let numeric = types.contains("number") || types.contains("integer");
        if !numeric && !fmt_name.is_empty() && string_or_slice {
            return 1;
        }
        if !type_ok {
            self.invalid_type(path, types.joined(), sch_type);
            return 0;
        }
        1
    }

    /// Runs `s` on `data` into a separate error list (junctor branches are never ratcheted).
    fn branch(&mut self, s: Node, data: &Value, path: &Path) -> (u32, Vec<RawError>) {
        let saved = std::mem::take(&mut self.errs);
        let count = self.schema(s, data, path, None);
        let errs = std::mem::replace(&mut self.errs, saved);
        (count, errs)
    }

    fn composite(&mut self, message: String) {
        self.push(Kind::Composite, String::new(), message, Bad::None);
    }

    /// kube-openapi's `schemaPropsValidator`: anyOf, oneOf, allOf, not.
    fn junctors(&mut self, vv: Option<&ValueValidation>, data: &Value, path: &Path) -> u32 {
        let Some(vv) = vv else {
            return 0;
        };
        let mut count = 0;
        if !vv.any_of.is_empty() {
            let mut best: Option<(u32, Vec<RawError>)> = None;
            let mut first_success = None;
            for sub in &vv.any_of {
                let (c, errs) = self.branch(Node::N(sub), data, path);
                if errs.is_empty() {
                    best = None;
                    first_success = Some(c);
                    break;
                }
                if best.as_ref().is_none_or(|(bc, _)| c > *bc) {
                    best = Some((c, errs));
                }
            }
            if first_success.is_none() {
                self.composite(format!(
                    "{} must validate at least one schema (anyOf)",
                    go_quote(&path.render())
                ));
            }
            if let Some((c, errs)) = best {
                count += c;
                self.errs.extend(errs);
            } else if let Some(c) = first_success {
                count += c;
            }
        }
        if !vv.one_of.is_empty() {
            let mut best: Option<(u32, Vec<RawError>)> = None;
            let mut first_success = None;
            let mut validated = 0;
            for sub in &vv.one_of {
                let (c, errs) = self.branch(Node::N(sub), data, path);
                if errs.is_empty() {
                    validated += 1;
                    best = None;
                    if first_success.is_none() {
                        first_success = Some(c);
                    }
                    continue;
                }
                if validated == 0 && best.as_ref().is_none_or(|(bc, _)| c > *bc) {
                    best = Some((c, errs));
                }
            }
            if validated != 1 {
                let additional = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                self.composite(format!(
                    "{} must validate one and only one schema (oneOf). {additional}",
                    go_quote(&path.render())
                ));
                if let Some((c, errs)) = best {
                    count += c;
                    self.errs.extend(errs);
                }
            } else if let Some(c) = first_success {
                count += c;
            }
        }
        if !vv.all_of.is_empty() {
            let mut validated = 0;
            for sub in &vv.all_of {
                let before = self.errs.len();
                count += self.schema(Node::N(sub), data, path, None);
                if self.errs.len() == before {
                    validated += 1;
                }
            }
            if validated != vv.all_of.len() {
                let additional = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                self.composite(format!(
                    "{} must validate all the schemas (allOf){additional}",
                    go_quote(&path.render())
                ));
            }
        }
        if let Some(not) = &vv.not {
            let (_, errs) = self.branch(Node::N(not), data, path);
            if errs.is_empty() {
                self.composite(format!(
                    "{} must not validate the schema (not)",
                    go_quote(&path.render())
                ));
            }
        }
        count
    }

    /// kube-openapi's `stringValidator`: stops at the first failure.
    fn string_check(&mut self, vv: &ValueValidation, s: &str, path: &Path) {
        if vv.max_length.is_none() && vv.min_length.is_none() && vv.pattern.is_none() {
            return;
        }
        if let Some(max) = vv.max_length {
            if s.chars().count() as i64 > max {
                let name = path.render();
                let message = format!("{name} in body should be at most {max} chars long");
                self.push(Kind::TooLong(max), name, message, Bad::Str(s.to_string()));
                return;
            }
        }
        if let Some(min) = vv.min_length {
            if (s.chars().count() as i64) < min {
                let name = path.render();
                let message = format!("{name} in body should be at least {min} chars long");
                self.push(Kind::Invalid, name, message, Bad::Str(s.to_string()));
                return;
            }
        }
        if let Some(p) = &vv.pattern {
            let shown = match p.regex() {
                Ok(re) if re.is_match(s) => return,
                Ok(_) => p.source.clone(),
                Err(e) => format!("{}, but pattern is invalid: {e}", p.source),
            };
            let name = path.render();
            let message = format!("{name} in body should match '{shown}'");
            self.push(Kind::Invalid, name, message, Bad::Str(s.to_string()));
        }
    }

    fn format_error(&mut self, fmt_name: &str, _f: Format, s: &str, path: &Path) {
        let name = path.render();
        let message = format!("{name} in body must be of type {fmt_name}: {}", go_quote(s));
        self.push(Kind::InvalidType, name, message, Bad::Str(s.to_string()));
    }

    /// kube-openapi's `numberValidator` with native int64/float64 comparisons.
    fn number_check(&mut self, vv: &ValueValidation, n: &Number, path: &Path) {
        if vv.multiple_of.is_none() && vv.maximum.is_none() && vv.minimum.is_none() {
            return;
        }
        let value = num(n);
        let bad = || Bad::Json(Value::Number(n.clone()));
        if let Some(factor) = vv.multiple_of {
            let failure = match value {
                // Go truncates the factor to int64; a zero factor would divide by zero there,
                // so it is checked as a float instead.
                Num::Int(d) if factor as i64 != 0 => {
                    let f = factor as i64;
                    if f < 0 {
                        Some(format!(
                            "factor MultipleOf declared for {} must be positive: {f}",
                            path.render()
                        ))
                    } else if d.wrapping_rem(f) != 0 {
                        Some(format!(
                            "{} in body should be a multiple of {f}",
                            path.render()
                        ))
                    } else {
                        None
                    }
                }
                _ => {
                    let d = match value {
                        Num::Int(i) => i as f64,
                        Num::Float(f) => f,
                    };
                    if factor < 0.0 {
                        Some(format!(
                            "factor MultipleOf declared for {} must be positive: {}",
                            path.render(),
                            go_float(factor)
                        ))
                    } else {
                        let mult = if factor < 1.0 {
                            1.0 / factor * d
                        } else {
                            d / factor
                        };
                        (!is_json_integer(mult)).then(|| {
                            format!(
                                "{} in body should be a multiple of {}",
                                path.render(),
                                go_float(factor)
                            )
                        })
                    }
                }
            };
            if let Some(m) = failure {
                self.push(Kind::Invalid, path.render(), m, bad());
            }
        }
        if let Some(min) = vv.minimum {
            let excl = vv.exclusive_minimum;
            let (fails, shown) = match value {
                Num::Int(d) => {
                    let m = min as i64;
                    ((!excl && d < m) || (excl && d <= m), m.to_string())
                }
                Num::Float(d) => ((!excl && d < min) || (excl && d <= min), go_float(min)),
            };
            if fails {
                let rel = if excl {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                let name = path.render();
                let message = format!("{name} in body should be {rel} {shown}");
                self.push(Kind::Invalid, name, message, bad());
            }
        }
        if let Some(max) = vv.maximum {
            let excl = vv.exclusive_maximum;
            let (fails, shown) = match value {
                Num::Int(d) => {
                    let m = max as i64;
                    ((!excl && d > m) || (excl && d >= m), m.to_string())
                }
                Num::Float(d) => ((!excl && d > max) || (excl && d >= max), go_float(max)),
            };
            if fails {
                let rel = if excl {
                    "less than"
                } else {
                    "less than or equal to"
                };
                let name = path.render();
                let message = format!("{name} in body should be {rel} {shown}");
                self.push(Kind::Invalid, name, message, bad());
            }
        }
    }

    /// kube-openapi's `basicCommonValidator` (enum), with Go's conversion-based comparison.
    fn enum_check(&mut self, vv: &ValueValidation, data: &Value, path: &Path) {
        let (Some(values), Some(index)) = (&vv.enum_, &vv.enum_index) else {
            return;
        };
        if values.is_empty() || (!data.is_null() && index.contains(data)) {
            return;
        }
        let name = path.render();
        // kube-openapi's message, "NAME in body should be one of [VALUES]", is only used to drop
        // repeated errors here: the list is stood for by its digest and length, so a large enum
        // is not copied into every failing value's error.
        let message = format!(
            "{name} in body should be one of {:016x}/{}",
            index.listed_digest, index.listed_len
        );
        self.push(
            Kind::Enum {
                values: index.shown.clone(),
                size: index.shown_size,
            },
            name,
            message,
            Bad::Json(data.clone()),
        );
    }

    /// kube-openapi's `schemaSliceValidator`.
    fn slice(
        &mut self,
        s: Node,
        vv: Option<&ValueValidation>,
        a: &[Value],
        path: &Path,
        old: Option<&Value>,
    ) -> u32 {
        let mut count = 0;
        if let Some(items) = s.items() {
            let old_items = old.and_then(|o| correlation(s.structural(), o));
            for (i, v) in a.iter().enumerate() {
                let child_old = old_items.as_ref().and_then(|c| c.get(v));
                count += self.schema(items, v, &path.index(i), child_old);
            }
        }
        if let Some(vv) = vv {
            let size = a.len() as i64;
            if let Some(min) = vv.min_items {
                if size < min {
                    let name = path.render();
                    let message = format!("{name} in body should have at least {min} items");
                    self.push(Kind::Invalid, name, message, Bad::Int(size));
                }
            }
            if let Some(max) = vv.max_items {
                if size > max {
                    let name = path.render();
                    let message = format!("{name} in body should have at most {max} items");
                    self.push(
                        Kind::TooMany { actual: size, max },
                        name,
                        message,
                        Bad::Int(size),
                    );
                }
            }
            if vv.unique_items && has_duplicates(a) {
                let name = path.render();
                let message = format!("{name} in body shouldn't contain duplicates");
                self.push(Kind::Invalid, name, message, Bad::None);
            }
        }
        count + 1
    }

    /// kube-openapi's `objectValidator`.
    fn object(
        &mut self,
        s: Node,
        vv: Option<&ValueValidation>,
        m: &Map<String, Value>,
        path: &Path,
        old: Option<&Value>,
    ) -> u32 {
        let n = m.len() as i64;
        if let Some(vv) = vv {
            if let Some(min) = vv.min_properties {
                if n < min {
                    let name = path.render();
                    let message = format!("{name} in body should have at least {min} properties");
                    self.push(Kind::Invalid, name, message, Bad::Int(n));
                    return 0;
                }
            }
            if let Some(max) = vv.max_properties {
                if n > max {
                    let name = path.render();
                    let message = format!("{name} in body should have at most {max} properties");
                    self.push(Kind::TooMany { actual: n, max }, name, message, Bad::Int(n));
                    return 0;
                }
            }
        }
        let old_map = old.and_then(Value::as_object);
        // The kind and apiVersion of the root are not ratcheted: both sides carry the same ones.
        let child_old = |k: &str| {
            if path.is_root() && (k == "kind" || k == "apiVersion") {
                return None;
            }
            old_map.and_then(|o| o.get(k))
        };
        let mut count = 0;
        match s.additional() {
            Some((false, None)) => {
                for k in m.keys() {
                    if !s.has_property(k) {
                        let name = path.render();
                        let message = format!("{name}.{k} in body is a forbidden property");
                        self.push(Kind::Invalid, name, message, Bad::Str(k.clone()));
                    }
                }
            }
            Some((_, Some(ap))) => {
                for (k, v) in m {
                    if !s.has_property(k) {
                        count += self.schema(ap, v, &path.key(k), child_old(k));
                    }
                }
            }
            _ => {}
        }
        s.for_each_property(|k, prop| {
            if let Some(v) = m.get(k) {
                count += self.schema(prop, v, &path.prop(k), child_old(k));
            }
        });
        if let Some(vv) = vv {
            for k in &vv.required {
                if !m.contains_key(k) {
                    let name = format!("{}.{k}", path.render());
                    let message = format!("{name} in body is required");
                    self.push(Kind::Required, name, message, Bad::None);
                }
            }
        }
        count
    }
}

/// Whether two items of `a` are equal (Go's `reflect.DeepEqual`: int and float differ). Items are
/// bucketed by their JSON text (maps are key-sorted, so equal items encode alike) and compared
/// only within a bucket: linear instead of quadratic for the large arrays a 3 MiB body can carry.
fn has_duplicates(a: &[Value]) -> bool {
    if a.len() < 2 {
        return false;
    }
    let mut seen: std::collections::HashMap<String, Vec<&Value>> =
        std::collections::HashMap::with_capacity(a.len());
    for x in a {
        let bucket = seen.entry(x.to_string()).or_default();
        if bucket.contains(&x) {
            return true;
        }
        bucket.push(x);
    }
    false
}

/// The old items a new list's items correlate with: only `x-kubernetes-list-type: map` lists
/// correlate (by their keys, a missing key taking its default); sets and atomic lists do not.
/// Indexed once per list, so an update is linear in the list's length whatever the order.
fn correlation<'o>(
    s: Option<&'o Structural>,
    old: &'o Value,
) -> Option<OldItems<'o, impl Fn(&Value) -> Option<String> + 'o>> {
    let s = s?;
    if s.list_type() != Some("map") {
        return None;
    }
    let old_list = old.as_array()?;
    let keys = &s.extensions.x_list_map_keys;
    let item_schema = s.items.as_deref();
    let default_of = move |k: &String| {
        item_schema
            .and_then(|i| i.properties.get(k))
            .and_then(|p| p.generic.default.as_ref())
    };
    Some(OldItems::new(old_list, move |x: &Value| {
        let o = x.as_object()?;
        Some(map_key_text(
            keys.iter().map(|k| o.get(k).or_else(|| default_of(k))),
        ))
    }))
}

/// Upstream's `CorrelatedObject.CachedDeepEqual`: deep equality that only descends through
/// correlatable children; an unknown key (no property or additionalProperties schema) or an
/// uncorrelatable map-list item makes the values unequal.
pub(crate) fn correlated_equal(old: &Value, new: &Value, s: Option<&Structural>) -> bool {
    match (old, new) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Array(o), Value::Array(n)) => {
            if o.len() != n.len() {
                return false;
            }
            let Some(s) = s else {
                return o == n;
            };
            if s.list_type() != Some("map") {
                return o == n;
            }
            let Some(old_items) = correlation(Some(s), old) else {
                return false;
            };
            n.iter().all(|item| match old_items.get(item) {
                Some(oi) => s.items.is_some() && correlated_equal(oi, item, s.items.as_deref()),
                None => false,
            })
        }
        (Value::Object(o), Value::Object(n)) => {
            if o.len() != n.len() {
                return false;
            }
            let Some(s) = s else {
                return n.is_empty();
            };
            n.iter().all(|(k, v)| {
                let Some(ov) = o.get(k) else {
                    return false;
                };
                let child = s
                    .properties
                    .get(k)
                    .or_else(|| s.additional_properties_schema());
                match child {
                    Some(c) => correlated_equal(ov, v, Some(c)),
                    None => false,
                }
            })
        }
        (Value::Array(_), _)
        | (_, Value::Array(_))
        | (Value::Object(_), _)
        | (_, Value::Object(_)) => false,
        _ => old == new,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_integers() {
        assert!(is_json_integer(3.0));
        assert!(!is_json_integer(3.5));
        assert!(is_json_integer(3.0000000001));
        assert!(!is_json_integer(-3.5));
        assert!(!is_json_integer(1e300));
        assert!(!is_json_integer(f64::NAN));
    }

    /// Whether `data` equals enum value `e` after Go's conversion of `data` to `e`'s type: the
    /// one-by-one comparison [`crate::EnumIndex`] must agree with.
    fn enum_matches(data: &Value, e: &Value) -> bool {
        match (data, e) {
            (Value::Number(d), Value::Number(x)) => match (num(d), num(x)) {
                (Num::Int(a), Num::Int(b)) => a == b,
                (Num::Int(a), Num::Float(b)) => a as f64 == b,
                (Num::Float(a), Num::Int(b)) => a as i64 == b,
                (Num::Float(a), Num::Float(b)) => a == b,
            },
            // Go converts an integer to a string as the rune with that code point.
            (Value::Number(d), Value::String(x)) => match num(d) {
                Num::Int(i) => {
                    let c = u32::try_from(i)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or('\u{FFFD}');
                    x.chars().eq(std::iter::once(c))
                }
                Num::Float(_) => false,
            },
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => false,
        }
    }

    #[test]
    fn enum_conversions() {
        assert!(enum_matches(&Value::from(1), &Value::from(1.0)));
        assert!(enum_matches(&Value::from(1.5), &Value::from(1)));
        assert!(enum_matches(&Value::from(65), &Value::from("A")));
        assert!(!enum_matches(&Value::from("1"), &Value::from(1)));
        let values: Vec<Value> = serde_json::from_str(
            r#"[1, 1.0, 1.5, -0.0, 0, 65, -1, 1114112, 3e300, "A", "1", "\ufffd", "", true, false,
                null, [1], [1.0], {"a": 1}, {"a": 1.0}, {}]"#,
        )
        .unwrap();
        for e in &values {
            let index = crate::EnumIndex::new(std::slice::from_ref(e));
            for d in values.iter().filter(|d| !d.is_null()) {
                assert_eq!(index.contains(d), enum_matches(d, e), "{d} in [{e}]");
            }
        }
        let all = crate::EnumIndex::new(&values);
        for d in values.iter().filter(|d| !d.is_null()) {
            assert_eq!(
                all.contains(d),
                values.iter().any(|e| enum_matches(d, e)),
                "{d}"
            );
        }
    }
}
