//! Label and field selectors on list, watch and deletecollection.
//!
//! `labelSelector` follows k8s.io/apimachinery/pkg/labels (its lexer, parser, requirement
//! validation and wording); `fieldSelector` follows k8s.io/apimachinery/pkg/fields (terms split on
//! unescaped `,`, `!=` / `==` / `=`, `\\`, `\,` and `\=` escapes in values) and then each field is
//! checked the way the resource's field label conversion does it in kube-apiserver. Every error
//! is a 400 BadRequest whose message is upstream's error text.

use crest_api::{aggregate, FieldError, FieldPath};
use crest_api::{meta, ApiError};
use crest_gofmt::{go_float, go_quote};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;

// ---------------------------------------------------------------------------------------------
// Label selectors
// ---------------------------------------------------------------------------------------------

/// `selection.Operator` of a label requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LabelOp {
    In,
    NotIn,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    Exists,
    DoesNotExist,
}

/// The binary operators in upstream's order, as its "expected:" message lists them.
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

#[derive(Clone, Debug, PartialEq)]
struct Requirement {
    key: String,
    op: LabelOp,
    /// Sorted and deduplicated, as upstream's `sets.String.List()`.
    values: Vec<String>,
}

impl Requirement {
    /// `NewRequirement`: validates the operator's arity, Gt/Lt integers and the label values; the
    /// errors come back as one aggregated message.
    fn new(key: String, op: LabelOp, values: Vec<String>) -> Result<Self, String> {
        let mut errs = vec![];
        if let Some(e) = validate_label_key(&key, &FieldPath::new("key")) {
            errs.push(e);
        }
        let values_path = FieldPath::new("values");
        let vals_repr = || {
            let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
            format!("[]string{{{}}}", quoted.join(", "))
        };
        match op {
            LabelOp::In | LabelOp::NotIn => {
                if values.is_empty() {
                    errs.push(FieldError::invalid_repr(
                        &values_path,
                        &vals_repr(),
                        "for 'in', 'notin' operators, values set can't be empty",
                    ));
                }
            }
            LabelOp::Equals | LabelOp::DoubleEquals | LabelOp::NotEquals => {
                if values.len() != 1 {
                    errs.push(FieldError::invalid_repr(
                        &values_path,
                        &vals_repr(),
                        "exact-match compatibility requires one single value",
                    ));
                }
            }
            LabelOp::Exists | LabelOp::DoesNotExist => {
                if !values.is_empty() {
                    errs.push(FieldError::invalid_repr(
                        &values_path,
                        &vals_repr(),
                        "values set must be empty for exists and does not exist",
                    ));
                }
            }
            LabelOp::GreaterThan | LabelOp::LessThan => {
                if values.len() != 1 {
                    errs.push(FieldError::invalid_repr(
                        &values_path,
                        &vals_repr(),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(FieldError::invalid(
                            &values_path.index(i),
                            v.as_str(),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let msgs = crest_api::validation::is_valid_label_value(v);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    &values_path.index(i).key(&key),
                    v.as_str(),
                    msgs.join("; "),
                ));
            }
        }
        if errs.is_empty() {
            Ok(Requirement { key, op, values })
        } else {
            Err(aggregate(&errs))
        }
    }

    fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        let value = labels.and_then(|l| l.get(&self.key)).map(label_value);
        // The values are sorted (the parser collects them in a sorted set, as upstream's
        // `sets.String`): a lookup per object, not a scan of a 30,000-value `in` set.
        let listed = |v: &str| self.values.binary_search_by(|x| x.as_str().cmp(v)).is_ok();
        match self.op {
            LabelOp::In | LabelOp::Equals | LabelOp::DoubleEquals => {
                value.is_some_and(|v| listed(&v))
            }
            LabelOp::NotIn | LabelOp::NotEquals => value.is_none_or(|v| !listed(&v)),
            LabelOp::Exists => value.is_some(),
            LabelOp::DoesNotExist => value.is_none(),
            LabelOp::GreaterThan | LabelOp::LessThan => {
                let (Some(have), [want]) = (value, self.values.as_slice()) else {
                    return false;
                };
                match (have.parse::<i64>(), want.parse::<i64>()) {
                    (Ok(have), Ok(want)) if self.op == LabelOp::GreaterThan => have > want,
                    (Ok(have), Ok(want)) => have < want,
                    _ => false,
                }
            }
        }
    }
}

/// A label's value as a string (labels are strings; anything else compares by its JSON text).
fn label_value(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// `validateLabelKey`: `IsQualifiedName`, reported at `path`.
fn validate_label_key(key: &str, path: &FieldPath) -> Option<FieldError> {
    let msgs = crest_api::validation::is_qualified_name(key);
    (!msgs.is_empty()).then(|| FieldError::invalid(path, key, msgs.join("; ")))
}

/// The lexer's tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// The literal tokens (everything but identifiers, end of string and errors).
fn literal_token(s: &[u8]) -> Option<Tok> {
    Some(match s {
        b")" => Tok::ClosedPar,
        b"," => Tok::Comma,
        b"!" => Tok::DoesNotExist,
        b"==" => Tok::DoubleEquals,
        b"=" => Tok::Equals,
        b">" => Tok::GreaterThan,
        b"in" => Tok::In,
        b"<" => Tok::LessThan,
        b"!=" => Tok::NotEquals,
        b"notin" => Tok::NotIn,
        b"(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Upstream's byte lexer. A NUL byte reads like the end of the input (and is consumed), as Go's
/// `read` returns 0 for both.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn scan_id_or_keyword(&mut self) -> (Tok, String) {
        let mut buf = vec![];
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
        }
        match literal_token(&buf) {
            Some(t) => (t, Self::text(&buf)),
            None => (Tok::Identifier, Self::text(&buf)),
        }
    }

    fn scan_special_symbol(&mut self) -> (Tok, String) {
        let mut buf = vec![];
        let mut last: Option<(Tok, String)> = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special_symbol(ch) {
                self.unread();
                break;
            }
            buf.push(ch);
            if let Some(t) = literal_token(&buf) {
                last = Some((t, Self::text(&buf)));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        last.unwrap_or_else(|| {
            (
                Tok::Error,
                format!("error expected: keyword found '{}'", Self::text(&buf)),
            )
        })
    }

    fn lex(&mut self) -> (Tok, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Tok::EndOfString, String::new());
        }
        self.unread();
        if is_special_symbol(ch) {
            self.scan_special_symbol()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

/// Whether `in` / `notin` are keywords (key and operator) or plain identifiers (values).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Tok, String)>,
    position: usize,
}

impl Parser {
    fn new(selector: &str) -> Self {
        let mut lexer = Lexer {
            s: selector.as_bytes(),
            pos: 0,
        };
        let mut items = vec![];
        loop {
            let (t, lit) = lexer.lex();
            items.push((t, lit));
            if t == Tok::EndOfString {
                break;
            }
        }
        Parser { items, position: 0 }
    }

    fn item(&self, at: usize, ctx: Context) -> (Tok, String) {
        let (t, lit) = self
            .items
            .get(at)
            .cloned()
            .unwrap_or((Tok::EndOfString, String::new()));
        match t {
            Tok::In | Tok::NotIn if ctx == Context::Values => (Tok::Identifier, lit),
            _ => (t, lit),
        }
    }

    fn lookahead(&self, ctx: Context) -> (Tok, String) {
        self.item(self.position, ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Tok, String) {
        let r = self.item(self.position, ctx);
        self.position += 1;
        r
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = vec![];
        loop {
            let (t, lit) = self.lookahead(Context::Values);
            match t {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, lit) = self.consume(Context::Values);
                    match t {
                        Tok::EndOfString => return Ok(reqs),
                        Tok::Comma => {
                            let (t2, lit2) = self.lookahead(Context::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(format!(
                                    "found '{lit2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{lit}', expected: ',' or 'end of string'"))
                        }
                    }
                }
                Tok::EndOfString => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (LabelOp::Exists | LabelOp::DoesNotExist)) = op {
            return Requirement::new(key, op, vec![]);
        }
        let op = self.parse_operator()?;
        let values = match op {
            LabelOp::In | LabelOp::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(key, op, values)
    }

    /// The key, and `Exists` / `DoesNotExist` when no binary operator follows.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<LabelOp>), String> {
        let mut op = None;
        let (mut t, mut lit) = self.consume(Context::Values);
        if t == Tok::DoesNotExist {
            op = Some(LabelOp::DoesNotExist);
            (t, lit) = self.consume(Context::Values);
        }
        if t != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&lit, &FieldPath::root()) {
            return Err(e.to_string());
        }
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Tok::EndOfString | Tok::Comma) && op.is_none() {
            op = Some(LabelOp::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<LabelOp, String> {
        let (t, lit) = self.consume(Context::KeyAndOperator);
        Ok(match t {
            Tok::In => LabelOp::In,
            Tok::Equals => LabelOp::Equals,
            Tok::DoubleEquals => LabelOp::DoubleEquals,
            Tok::GreaterThan => LabelOp::GreaterThan,
            Tok::LessThan => LabelOp::LessThan,
            Tok::NotIn => LabelOp::NotIn,
            Tok::NotEquals => LabelOp::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    /// `(a, b, ...)`.
    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (t, lit) = self.consume(Context::Values);
        if t != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.lookahead(Context::Values);
        match t {
            Tok::Identifier | Tok::Comma => {
                let values = self.parse_identifiers_list()?;
                if self.consume(Context::Values).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Tok::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// A possibly empty, comma separated list of possibly empty identifiers.
    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (t, lit) = self.consume(Context::Values);
            match t {
                Tok::Identifier => {
                    set.insert(lit);
                    let (t2, lit2) = self.lookahead(Context::Values);
                    match t2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (t2, _) = self.lookahead(Context::Values);
                    if t2 == Tok::ClosedPar {
                        set.insert(String::new());
                        return Ok(set.into_iter().collect());
                    }
                    if t2 == Tok::Comma {
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// The one value of `=`, `==`, `!=`, `>` and `<` (empty at a `,` or the end).
    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (t, _) = self.lookahead(Context::Values);
        if matches!(t, Tok::EndOfString | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.consume(Context::Values);
        if t == Tok::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// `labels.Parse`: the requirements sorted by key, or upstream's error text.
fn parse_label_selector(selector: &str) -> Result<Vec<Requirement>, String> {
    let mut reqs = Parser::new(selector).parse()?;
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(reqs)
}

// ---------------------------------------------------------------------------------------------
// Field selectors
// ---------------------------------------------------------------------------------------------

/// One `field=value` / `field!=value` term, value unescaped.
#[derive(Clone, Debug, PartialEq)]
struct Term {
    field: String,
    value: String,
    negated: bool,
}

/// Splits on commas not escaped by a backslash (escapes kept for `unescape_value`).
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return vec![];
    }
    let mut terms = vec![];
    let (mut start, mut in_slash) = (0, false);
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// The first operator in the term splits it (`!=` before `==` before `=` at each position).
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

/// `fields.UnescapeValue`.
fn unescape_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ))
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v: its number.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ))
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// `fields.ParseSelector`: terms in the sorted order of their text.
fn parse_field_selector(selector: &str) -> Result<Vec<Term>, String> {
    let mut parts = split_terms(selector);
    parts.sort_unstable();
    let mut terms = vec![];
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let Some((lhs, op, rhs)) = split_term(part) else {
            return Err(format!(
                "invalid selector: '{selector}'; can't understand '{part}'"
            ));
        };
        terms.push(Term {
            field: lhs.to_string(),
            value: unescape_value(rhs)?,
            negated: op == "!=",
        });
    }
    Ok(terms)
}

/// Where a supported field's value comes from.
#[derive(Clone, Debug, PartialEq)]
enum FieldSource {
    Name,
    Namespace,
    /// A selectable field: the path's property names in the stored object.
    Path(Vec<String>),
    /// A field read from the first of several paths whose value is not empty (core/v1 Event's
    /// `source`: `source.component`, else `reportingComponent`).
    FirstOf(Vec<Vec<String>>),
}

/// Which fields a resource can be selected on: its field label conversion in kube-apiserver.
#[derive(Clone, Copy, Debug)]
pub enum FieldLabels<'a> {
    /// A custom resource (`crConverter.ConvertFieldLabel`): `metadata.name`, `metadata.namespace`
    /// when namespaced, and the version's `selectableFields` (`spec.color`: the JSON path without
    /// its leading `.`).
    CustomResource {
        namespaced: bool,
        selectable: &'a [String],
    },
    /// A built-in kind with its own field label conversion (`AddFieldLabelConversionsFor<Kind>`):
    /// each selectable label with the dotted path of the stored object's field it reads (e.g.
    /// core/v1 Event's `source` reads `source.component`), `metadata.name` and
    /// `metadata.namespace` included when selectable. Paths joined with `|` are read in turn,
    /// the first non-empty value counting (`source.component|reportingComponent`).
    Builtin { fields: &'a [(&'a str, &'a str)] },
    /// `runtime.DefaultMetaV1FieldSelectorConversion`: `metadata.name`, `metadata.namespace`.
    Default,
}

/// The resource's field label conversion: which fields it selects on, and kube-apiserver's
/// error for the others.
fn field_source(labels: FieldLabels<'_>, field: &str) -> Result<FieldSource, String> {
    match labels {
        FieldLabels::CustomResource {
            namespaced,
            selectable,
        } => match field {
            "metadata.name" => Ok(FieldSource::Name),
            "metadata.namespace" if namespaced => Ok(FieldSource::Namespace),
            f if selectable.iter().any(|s| s == f) => Ok(FieldSource::Path(
                f.split('.').map(str::to_string).collect(),
            )),
            f => Err(format!("field label not supported: {f}")),
        },
        FieldLabels::Builtin { fields } => match fields.iter().find(|(label, _)| *label == field) {
            Some((_, "metadata.name")) => Ok(FieldSource::Name),
            Some((_, "metadata.namespace")) => Ok(FieldSource::Namespace),
            Some((_, path)) if path.contains('|') => Ok(FieldSource::FirstOf(
                path.split('|')
                    .map(|p| p.split('.').map(str::to_string).collect())
                    .collect(),
            )),
            Some((_, path)) => Ok(FieldSource::Path(
                path.split('.').map(str::to_string).collect(),
            )),
            None => Err(format!("field label not supported: {field}")),
        },
        FieldLabels::Default => match field {
            "metadata.name" => Ok(FieldSource::Name),
            "metadata.namespace" => Ok(FieldSource::Namespace),
            f => Err(format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(f)
            )),
        },
    }
}

#[derive(Clone, Debug, PartialEq)]
struct FieldRequirement {
    source: FieldSource,
    /// The field as selected (for `name()`).
    field: String,
    value: String,
    negated: bool,
}

impl FieldRequirement {
    fn matches(&self, obj: &Value) -> bool {
        let actual = match &self.source {
            FieldSource::Name => meta::name(obj).to_string(),
            FieldSource::Namespace => meta::namespace(obj).to_string(),
            FieldSource::Path(path) => path_value(obj, path),
            FieldSource::FirstOf(paths) => paths
                .iter()
                .map(|p| path_value(obj, p))
                .find(|v| !v.is_empty())
                .unwrap_or_default(),
        };
        (actual == self.value) != self.negated
    }
}

/// The value at a path of property names, as upstream's field set holds it ("" when absent).
fn path_value(obj: &Value, path: &[String]) -> String {
    let mut cur = Some(obj);
    for p in path {
        cur = cur.and_then(|v| v.get(p.as_str()));
    }
    cur.map(go_sprint).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Go formatting
// ---------------------------------------------------------------------------------------------

/// Go's `fmt.Sprint` of a value decoded from JSON into `interface{}` (null prints as empty, as
/// upstream maps an absent or null selectable field to "").
fn go_sprint(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => go_float(f),
            _ => n.to_string(),
        },
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_sprint_nested).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_sprint_nested(&m[k.as_str()])))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

fn go_sprint_nested(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        other => go_sprint(other),
    }
}

// ---------------------------------------------------------------------------------------------
// ListFilter
// ---------------------------------------------------------------------------------------------

/// A parsed labelSelector + fieldSelector, checked against the resource.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    labels: Vec<Requirement>,
    fields: Vec<FieldRequirement>,
    /// The top-level fields the field selectors read (besides metadata).
    top_fields: Vec<String>,
}

impl ListFilter {
    /// Parses `labelSelector` and `fieldSelector` of a list, watch or deletecollection, in
    /// kube-apiserver's order: the label selector, the field selector's syntax, then its fields.
    pub fn parse(
        label_selector: &str,
        field_selector: &str,
        resource: FieldLabels<'_>,
    ) -> Result<Self, ApiError> {
        let labels = parse_label_selector(label_selector).map_err(ApiError::bad_request)?;
        let terms = parse_field_selector(field_selector).map_err(ApiError::bad_request)?;
        let mut fields = Vec::with_capacity(terms.len());
        for t in terms {
            let source = field_source(resource, &t.field).map_err(ApiError::bad_request)?;
            fields.push(FieldRequirement {
                source,
                field: t.field,
                value: t.value,
                negated: t.negated,
            });
        }
        let mut top_fields: Vec<String> = fields
            .iter()
            .flat_map(|f| match &f.source {
                FieldSource::Path(p) => p.first().into_iter().cloned().collect(),
                FieldSource::FirstOf(ps) => ps.iter().filter_map(|p| p.first().cloned()).collect(),
                FieldSource::Name | FieldSource::Namespace => vec![],
            })
            .collect();
        top_fields.sort();
        top_fields.dedup();
        Ok(ListFilter {
            labels,
            fields,
            top_fields,
        })
    }

    /// True when the filter selects everything.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// True when a label or field selector restricts the selection.
    pub fn has_selectors(&self) -> bool {
        !self.is_empty()
    }

    /// The single name a `metadata.name=X` selector pins, if any.
    pub fn name(&self) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.field == "metadata.name" && !f.negated)
            .map(|f| f.value.as_str())
    }

    /// Whether the object (JSON bytes) is selected; only the top-level fields the selectors read
    /// (`metadata`, and what the field selectors name) are parsed.
    pub fn matches_bytes(&self, b: &[u8]) -> Result<bool, ApiError> {
        if self.is_empty() {
            return Ok(true);
        }
        let internal = |e: serde_json::Error| ApiError::internal(e.to_string());
        // Keys with escapes cannot be borrowed: such objects are parsed whole.
        let Ok(top) = serde_json::from_slice::<HashMap<&str, &RawValue>>(b) else {
            let v: Value = serde_json::from_slice(b).map_err(internal)?;
            return Ok(self.matches(&v));
        };
        let read = self.top_fields.iter().map(String::as_str);
        let mut obj = serde_json::Map::new();
        for k in std::iter::once("metadata").chain(read) {
            if let Some(raw) = top.get(k) {
                obj.insert(
                    k.to_string(),
                    serde_json::from_str(raw.get()).map_err(internal)?,
                );
            }
        }
        Ok(self.matches(&Value::Object(obj)))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = meta::labels(obj);
        self.labels.iter().all(|r| r.matches(labels)) && self.fields.iter().all(|f| f.matches(obj))
    }
}

#[cfg(test)]
mod tests;
