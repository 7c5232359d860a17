//! kubectl's JSONPath (`k8s.io/client-go/util/jsonpath`), as kube-apiserver's CRD table convertor
//! uses it for `additionalPrinterColumns`: the template grammar (fields, `['key']`, indexes and
//! slices, `[*]`, `..`, unions, `[?()]` filters, quoted text, numbers) and its evaluation over
//! an unstructured object with missing keys allowed. A path is parsed once per CRD version.
//!
//! Values keep the types kube-apiserver's unstructured decoding gives them: JSON integers are
//! int64, other numbers float64; number literals in a template are Go `int`s (compared as
//! float64), which is why `[?(@.n==1)]` never matches an integer field server-side, as upstream.

use crest_gofmt::go_atoi;
use serde_json::Value;

/// A parsed template: text and `{...}` actions.
#[derive(Clone, Debug)]
pub struct JsonPath {
    root: Vec<Node>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

#[derive(Clone, Debug)]
enum Node {
    List(Vec<Node>),
    Text(String),
    Field(String),
    Array([Param; 3]),
    Filter(Box<Filter>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    Identifier(String),
}

#[derive(Clone, Debug)]
struct Filter {
    left: Vec<Node>,
    right: Vec<Node>,
    op: String,
}

/// One result: a value of the object, or a template literal.
#[derive(Clone, Debug)]
pub enum Item<'a> {
    Json(&'a Value),
    Text(&'a str),
    /// A Go `int` literal.
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl<'a> Item<'a> {
    fn json(&self) -> Option<&'a Value> {
        match self {
            Item::Json(v) => Some(v),
            _ => None,
        }
    }
}

type Eval<'a> = Result<Vec<Item<'a>>, (Vec<Item<'a>>, String)>;

/// How many intermediate results one evaluation may produce. Each `..` can multiply the results
/// by the depth of the object (`{........x}` over a chain 120 deep is ~10^8 items), so without a
/// bound a printer column could hang a request; more than the values a 3 MiB object holds.
const BUDGET: usize = 1 << 21;

/// Charges `n` results against the evaluation's budget.
fn charge<'a>(budget: &mut usize, n: usize) -> Result<(), (Vec<Item<'a>>, String)> {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => {
            *budget = 0;
            Err((vec![], "too many results to evaluate".into()))
        }
    }
}

impl JsonPath {
    /// Parses a template (`{.spec.replicas}`), with upstream's error messages.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let mut p = Parser {
            input: text,
            pos: 0,
            start: 0,
        };
        let root = p.parse_text()?;
        Ok(JsonPath { root })
    }

    /// The first node is a plain field (`.spec...`): evaluation only needs that member.
    pub fn first_field(&self) -> Option<&str> {
        match self.root.first()? {
            Node::List(nodes) => match nodes.first()? {
                Node::Field(f) => Some(f),
                _ => None,
            },
            _ => None,
        }
    }

    /// The field names of a path made only of plain fields (`.spec.replicas`).
    pub fn field_path(&self) -> Option<Vec<&str>> {
        match self.root.as_slice() {
            [Node::List(nodes)] => nodes
                .iter()
                .map(|n| match n {
                    Node::Field(f) => Some(f.as_str()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// `FindResults` with missing keys allowed: one result list per top-level node.
    pub fn find<'a>(&'a self, data: &'a Value) -> Result<Vec<Vec<Item<'a>>>, String> {
        let cur = [Item::Json(data)];
        let mut out = Vec::with_capacity(self.root.len());
        let mut budget = BUDGET;
        for node in &self.root {
            out.push(walk(&cur, node, &mut budget).map_err(|(_, e)| e)?);
        }
        Ok(out)
    }

    /// The first result of the first node, as the table convertor takes it.
    pub fn first<'a>(&'a self, data: &'a Value) -> Option<Item<'a>> {
        // Most columns are a single action of plain fields: follow them without allocating.
        if let [Node::List(nodes)] = self.root.as_slice() {
            if nodes.iter().all(|n| matches!(n, Node::Field(_))) {
                let mut cur = data;
                for n in nodes {
                    let Node::Field(f) = n else { return None };
                    cur = cur.as_object()?.get(f.as_str())?;
                }
                return Some(Item::Json(cur));
            }
        }
        self.find(data).ok()?.into_iter().next()?.into_iter().next()
    }
}

// ---- evaluation ----

fn is_nil(i: &Item<'_>) -> bool {
    matches!(i, Item::Json(Value::Null))
}

fn walk<'a>(input: &[Item<'a>], node: &'a Node, budget: &mut usize) -> Eval<'a> {
    let out = walk_node(input, node, budget)?;
    if !matches!(node, Node::Recursive) {
        // (`..` charges as it descends.)
        charge(budget, out.len())?;
    }
    Ok(out)
}

fn walk_node<'a>(input: &[Item<'a>], node: &'a Node, budget: &mut usize) -> Eval<'a> {
    match node {
        Node::List(nodes) => eval_list(input, nodes, budget),
        Node::Text(t) => Ok(vec![Item::Text(t)]),
        Node::Field(f) => Ok(eval_field(input, f)),
        Node::Array(params) => eval_array(input, params),
        Node::Filter(f) => eval_filter(input, f, budget),
        Node::Int(i) => Ok(input.iter().map(|_| Item::Int(*i)).collect()),
        Node::Float(f) => Ok(input.iter().map(|_| Item::Float(*f)).collect()),
        Node::Bool(b) => Ok(input.iter().map(|_| Item::Bool(*b)).collect()),
        Node::Wildcard => Ok(eval_wildcard(input)),
        Node::Recursive => {
            let mut out = vec![];
            eval_recursive(input, &mut out, budget)?;
            Ok(out)
        }
        Node::Union(lists) => {
            let mut out = vec![];
            for l in lists {
                out.extend(eval_list(input, l, budget).map_err(|(_, e)| (input.to_vec(), e))?);
            }
            Ok(out)
        }
        // `range`/`end` loops make no sense in a column; upstream's other identifiers fail.
        Node::Identifier(name) => Err((input.to_vec(), format!("unrecognized identifier {name}"))),
    }
}

fn eval_list<'a>(input: &[Item<'a>], nodes: &'a [Node], budget: &mut usize) -> Eval<'a> {
    let mut cur = input.to_vec();
    for n in nodes {
        cur = walk(&cur, n, budget)?;
    }
    Ok(cur)
}

fn eval_field<'a>(input: &[Item<'a>], name: &str) -> Vec<Item<'a>> {
    input
        .iter()
        .filter_map(|i| i.json()?.as_object()?.get(name).map(Item::Json))
        .collect()
}

fn go_type(i: &Item<'_>) -> &'static str {
    match i {
        Item::Json(v) => crest_gofmt::go_type(v),
        Item::Text(_) => "string",
        Item::Bool(_) => "bool",
        Item::Int(_) => "int",
        Item::Float(_) => "float64",
    }
}

fn eval_array<'a>(input: &[Item<'a>], params: &[Param; 3]) -> Eval<'a> {
    let mut out = vec![];
    for item in input {
        if is_nil(item) {
            continue;
        }
        let Some(Value::Array(arr)) = item.json() else {
            return Err((
                input.to_vec(),
                format!("{} is not array or slice", go_type(item)),
            ));
        };
        let len = arr.len() as i64;
        let mut p = *params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        if p[1].value == p[0].value {
            // Upstream returns what it has so far when zero elements are asked for.
            return Ok(out);
        }
        let oob = |i: i64| {
            (
                input.to_vec(),
                format!("array index out of bounds: index {i}, length {len}"),
            )
        };
        if p[0].value >= len || p[0].value < 0 {
            return Err(oob(p[0].value));
        }
        if p[1].value > len || p[1].value < 0 {
            return Err(oob(p[1].value - 1));
        }
        if p[0].value > p[1].value {
            return Err((
                input.to_vec(),
                format!(
                    "starting index {} is greater than ending index {}",
                    p[0].value, p[1].value
                ),
            ));
        }
        let mut step = 1;
        if p[2].known {
            if p[2].value <= 0 {
                return Err((input.to_vec(), "step must be > 0".into()));
            }
            step = p[2].value as usize;
        }
        out.extend(
            arr[p[0].value as usize..p[1].value as usize]
                .iter()
                .step_by(step)
                .map(Item::Json),
        );
    }
    Ok(out)
}

/// Array elements, or map values in key order (as Go's fmtsort orders them).
fn children<'a>(v: &'a Value) -> Option<Vec<Item<'a>>> {
    match v {
        Value::Array(a) => Some(a.iter().map(Item::Json).collect()),
        Value::Object(m) => Some(m.values().map(Item::Json).collect()),
        _ => None,
    }
}

fn eval_wildcard<'a>(input: &[Item<'a>]) -> Vec<Item<'a>> {
    input
        .iter()
        .filter_map(|i| children(i.json()?))
        .flatten()
        .collect()
}

fn eval_recursive<'a>(
    input: &[Item<'a>],
    out: &mut Vec<Item<'a>>,
    budget: &mut usize,
) -> Result<(), (Vec<Item<'a>>, String)> {
    for i in input {
        let Some(v) = i.json() else { continue };
        if let Some(c) = children(v) {
            if !c.is_empty() {
                charge(budget, c.len())?;
                out.push(i.clone());
                eval_recursive(&c, out, budget)?;
            }
        }
    }
    Ok(())
}

fn eval_filter<'a>(input: &[Item<'a>], f: &'a Filter, budget: &mut usize) -> Eval<'a> {
    let mut out = vec![];
    for item in input {
        let elems = match item.json().and_then(children) {
            Some(c) => c,
            None => vec![item.clone()],
        };
        for elem in elems {
            let temp = [elem.clone()];
            // Missing keys are allowed: a failed left side still yields what it reached.
            let lefts = match eval_list(&temp, &f.left, budget) {
                Ok(l) => l,
                // An exhausted budget ends the evaluation; other errors are missing keys.
                Err(_) if *budget == 0 => {
                    return Err((vec![], "too many results to evaluate".into()))
                }
                Err((partial, _)) => partial,
            };
            let rights =
                eval_list(&temp, &f.right, budget).map_err(|(_, e)| (input.to_vec(), e))?;
            match (lefts.len(), rights.len()) {
                (0, _) => continue,
                (l, _) if l > 1 => {
                    return Err((
                        input.to_vec(),
                        "can only compare one element at a time".into(),
                    ))
                }
                _ if f.op == "exists" => {
                    out.push(elem);
                    continue;
                }
                (_, 0) => continue,
                (_, r) if r > 1 => {
                    return Err((
                        input.to_vec(),
                        "can only compare one element at a time".into(),
                    ))
                }
                _ => {}
            }
            match compare(&f.op, &lefts[0], &rights[0]) {
                Some(true) => out.push(elem),
                Some(false) => {}
                None => return Err((out, format!("unrecognized filter operator {}", f.op))),
            }
        }
    }
    Ok(out)
}

#[derive(PartialEq)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

fn basic<'a>(i: &Item<'a>) -> Option<Basic<'a>> {
    Some(match i {
        Item::Json(Value::Bool(b)) | Item::Bool(b) => Basic::Bool(*b),
        Item::Json(Value::Number(n)) => match n.as_i64() {
            Some(i) => Basic::Int(i),
            None => Basic::Float(n.as_f64()?),
        },
        Item::Json(Value::String(s)) => Basic::Str(s),
        Item::Text(s) => Basic::Str(s),
        // evalOperator turns Go ints into float64 before comparing.
        Item::Int(i) => Basic::Float(*i as f64),
        Item::Float(f) => Basic::Float(*f),
        _ => return None,
    })
}

/// The forked text/template comparisons; type mismatches are "false" (upstream ignores those
/// errors), except `!=`, which is true for them. `None`: unknown operator.
fn compare(op: &str, l: &Item<'_>, r: &Item<'_>) -> Option<bool> {
    let (a, b) = (basic(l), basic(r));
    let eq = || -> Option<bool> {
        let (a, b) = (a.as_ref()?, b.as_ref()?);
        match (a, b) {
            (Basic::Bool(x), Basic::Bool(y)) => Some(x == y),
            (Basic::Int(x), Basic::Int(y)) => Some(x == y),
            (Basic::Float(x), Basic::Float(y)) => Some(x == y),
            (Basic::Str(x), Basic::Str(y)) => Some(x == y),
            _ => None,
        }
    };
    let lt = || -> Option<bool> {
        let (a, b) = (a.as_ref()?, b.as_ref()?);
        match (a, b) {
            (Basic::Int(x), Basic::Int(y)) => Some(x < y),
            (Basic::Float(x), Basic::Float(y)) => Some(x < y),
            (Basic::Str(x), Basic::Str(y)) => Some(x < y),
            _ => None,
        }
    };
    Some(match op {
        "==" => eq().unwrap_or(false),
        "!=" => !eq().unwrap_or(false),
        "<" => lt().unwrap_or(false),
        "<=" => match lt() {
            Some(true) => true,
            Some(false) => eq().unwrap_or(false),
            None => false,
        },
        ">" => match lt() {
            Some(true) => false,
            Some(false) => !eq().unwrap_or(false),
            None => false,
        },
        ">=" => lt().map(|l| !l).unwrap_or(false),
        _ => return None,
    })
}

// ---- parsing ----

struct Parser<'s> {
    input: &'s str,
    pos: usize,
    start: usize,
}

fn is_terminator(r: Option<char>) -> bool {
    matches!(
        r,
        None | Some(' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
    )
}

fn is_alphanumeric(r: char) -> bool {
    r == '_' || r.is_alphabetic() || r.is_numeric()
}

impl<'s> Parser<'s> {
    fn rest(&self) -> &'s str {
        &self.input[self.pos..]
    }

    fn next(&mut self) -> Option<char> {
        let c = self.rest().chars().next()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
        }
    }

    fn consume(&mut self) -> &'s str {
        let v = &self.input[self.start..self.pos];
        self.start = self.pos;
        v
    }

    /// Text and actions up to the end of the input.
    fn parse_text(&mut self) -> Result<Vec<Node>, String> {
        let mut root = vec![];
        loop {
            if self.rest().starts_with('{') {
                if self.pos > self.start {
                    root.push(Node::Text(self.consume().to_string()));
                }
                self.pos += 1;
                self.consume();
                root.push(Node::List(self.parse_action()?));
                continue;
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            root.push(Node::Text(self.consume().to_string()));
        }
        Ok(root)
    }

    /// The nodes of one action, through its closing `}`.
    fn parse_action(&mut self) -> Result<Vec<Node>, String> {
        let mut cur = vec![];
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(cur);
            }
            if rest.starts_with("[?(") {
                cur.push(self.parse_filter()?);
                continue;
            }
            if rest.starts_with("..") {
                self.pos += 2;
                self.consume();
                cur.push(Node::Recursive);
                if self.peek().is_some_and(is_alphanumeric) {
                    cur.push(self.parse_field());
                }
                continue;
            }
            let r = self.next();
            match r {
                None | Some('\r' | '\n') => return Err("unclosed action".into()),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => cur.extend(self.parse_array()?),
                Some(q @ ('"' | '\'')) => cur.push(self.parse_quote(q)?),
                Some('.') => cur.push(self.parse_field()),
                Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                    self.backup(r);
                    cur.push(self.parse_number()?);
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup(r);
                    cur.push(self.parse_identifier());
                }
                Some(c) => {
                    return Err(format!(
                        "unrecognized character in action: U+{:04X} {c:?}",
                        c as u32
                    ))
                }
            }
        }
    }

    fn parse_identifier(&mut self) -> Node {
        loop {
            let r = self.next();
            if is_terminator(r) {
                self.backup(r);
                break;
            }
        }
        match self.consume() {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            v => Node::Identifier(v.to_string()),
        }
    }

    fn parse_field(&mut self) -> Node {
        self.consume();
        loop {
            let r = self.next();
            if r == Some('\\') {
                self.next();
            } else if is_terminator(r) {
                self.backup(r);
                break;
            }
        }
        match self.consume() {
            "*" => Node::Wildcard,
            v => Node::Field(v.replace('\\', "")),
        }
    }

    fn parse_number(&mut self) -> Result<Node, String> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            let r = self.next();
            if !matches!(r, Some(c) if c == '.' || c.is_numeric()) {
                self.backup(r);
                break;
            }
        }
        let v = self.consume();
        if let Some(i) = go_atoi(v) {
            return Ok(Node::Int(i));
        }
        v.parse::<f64>()
            .map(Node::Float)
            .map_err(|_| format!("cannot parse number {v}"))
    }

    /// `[...]`: an index or slice, a quoted key, or a union of those.
    fn parse_array(&mut self) -> Result<Vec<Node>, String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated array".into()),
                Some(']') => break,
                _ => {}
            }
        }
        let consumed = self.consume();
        let mut text = &consumed[1..consumed.len() - 1];
        if text == "*" {
            text = ":";
        }
        if text.contains(',') {
            let mut union = vec![];
            for s in text.split(',') {
                union.push(parse_action(&format!("[{}]", s.trim_matches(' ')))?);
            }
            return Ok(vec![Node::Union(union)]);
        }
        if let Some(key) = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            // Upstream re-parses the key as `.key`, so `['a.b']` is two fields.
            return parse_action(&format!(".{key}"));
        }
        let groups = slice_groups(text).ok_or_else(|| format!("invalid array index {text}"))?;
        let mut params = [Param::default(); 3];
        for i in 0..3 {
            match groups[i] {
                Some(g) => {
                    let g = if i > 0 { &g[1..] } else { g };
                    if i > 0 && g.is_empty() {
                        params[i].known = false;
                    } else {
                        params[i].known = true;
                        params[i].value =
                            go_atoi(g).ok_or_else(|| format!("array index {g} is not a number"))?;
                    }
                }
                None if i == 1 => {
                    // Go's int addition wraps (`[9223372036854775807]` is then out of bounds).
                    params[1] = Param {
                        value: params[0].value.wrapping_add(1),
                        known: true,
                        derived: true,
                    };
                }
                None => {}
            }
        }
        Ok(vec![Node::Array(params)])
    }

    fn parse_filter(&mut self) -> Result<Node, String> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end) = (false, false);
        let mut pair = '"';
        loop {
            let r = self.next();
            match r {
                None | Some('\n') => return Err("unterminated filter".into()),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    if self.input.as_bytes()[self.pos - 2] != b'\\' && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                _ => {}
            }
        }
        if self.next() != Some(']') {
            return Err("unclosed array expect ]".into());
        }
        let consumed = self.consume();
        let text = &consumed[..consumed.len() - 2];
        // `^([^!<>=]+)([!<>=]+)(.+?)$`
        let split = text
            .find(['!', '<', '>', '='])
            .filter(|&i| i > 0)
            .and_then(|i| {
                // The operator run is greedy but leaves at least one character to the right.
                let ops = match text[i..].find(|c: char| !matches!(c, '!' | '<' | '>' | '=')) {
                    Some(j) => i + j,
                    None if text.len() - i >= 2 => text.len() - 1,
                    None => return None,
                };
                Some((&text[..i], &text[i..ops], &text[ops..]))
            });
        Ok(Node::Filter(Box::new(match split {
            None => Filter {
                left: parse_action(text)?,
                right: vec![],
                op: "exists".into(),
            },
            Some((l, op, r)) => Filter {
                left: parse_action(l)?,
                right: parse_action(r)?,
                op: op.into(),
            },
        })))
    }

    fn parse_quote(&mut self, end: char) -> Result<Node, String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated quoted string".into()),
                Some(c) if c == end && self.input.as_bytes()[self.pos - 2] != b'\\' => break,
                _ => {}
            }
        }
        let v = self.consume();
        let s = unquote(v).map_err(|e| format!("unquote string {v} error {e}"))?;
        Ok(Node::Text(s))
    }
}

/// `parseAction`: the nodes of `{text}`'s first action.
fn parse_action(text: &str) -> Result<Vec<Node>, String> {
    let root = JsonPath::parse(&format!("{{{text}}}"))?.root;
    match root.into_iter().next() {
        Some(Node::List(nodes)) => Ok(nodes),
        _ => Ok(vec![]),
    }
}

/// `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`: the three groups (the last two with their `:`).
fn slice_groups(text: &str) -> Option<[Option<&str>; 3]> {
    fn num_len(s: &str) -> usize {
        let sign = usize::from(s.starts_with('-'));
        sign + s[sign..].bytes().take_while(u8::is_ascii_digit).count()
    }
    let first = num_len(text);
    let mut groups = [Some(&text[..first]), None, None];
    let mut rest = &text[first..];
    for g in groups.iter_mut().skip(1) {
        if let Some(after) = rest.strip_prefix(':') {
            let n = 1 + num_len(after);
            *g = Some(&rest[..n]);
            rest = &rest[n..];
        }
    }
    if !rest.is_empty() {
        return None;
    }
    // An empty first group counts as unmatched, as Go's submatch gives "".
    if groups[0] == Some("") {
        groups[0] = None;
    }
    Some(groups)
}

/// `UnquoteExtend`: Go's unquoting, for single- or double-quoted text.
fn unquote(s: &str) -> Result<String, &'static str> {
    const SYNTAX: &str = "invalid syntax";
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b[b.len() - 1] || !matches!(b[0], b'"' | b'\'') {
        return Err(SYNTAX);
    }
    let quote = b[0] as char;
    let inner = &s[1..s.len() - 1];
    if !inner.contains('\\') && !inner.contains(quote) {
        return Ok(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == quote {
            return Err(SYNTAX);
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next().ok_or(SYNTAX)?;
        let mut hex = |n: usize| -> Result<u32, &'static str> {
            let mut v = 0u32;
            for _ in 0..n {
                v = v * 16 + chars.next().and_then(|c| c.to_digit(16)).ok_or(SYNTAX)?;
            }
            Ok(v)
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            '\'' | '"' if e == quote => out.push(e),
            'x' => out.push(char::from_u32(hex(2)?).ok_or(SYNTAX)?),
            'u' => out.push(char::from_u32(hex(4)?).ok_or(SYNTAX)?),
            'U' => out.push(char::from_u32(hex(8)?).ok_or(SYNTAX)?),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    v = v * 8 + chars.next().and_then(|c| c.to_digit(8)).ok_or(SYNTAX)?;
                }
                if v > 255 {
                    return Err(SYNTAX);
                }
                out.push(char::from_u32(v).ok_or(SYNTAX)?);
            }
            _ => return Err(SYNTAX),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn first(path: &str, obj: &Value) -> Option<Value> {
        let p = JsonPath::parse(&format!("{{{path}}}")).unwrap();
        p.first(obj).map(|i| match i {
            Item::Json(v) => v.clone(),
            Item::Text(t) => json!(t),
            Item::Int(i) => json!(i),
            Item::Float(f) => json!(f),
            Item::Bool(b) => json!(b),
        })
    }

    #[test]
    fn parse_errors_as_upstream() {
        for (path, err) in [
            (".spec[", "unterminated array"),
            (".spec.a[x]", "invalid array index x"),
            (".spec.a[-]", "array index - is not a number"),
            (".spec.{a}", "unrecognized character in action: U+007B '{'"),
            (".spec[?(@.a==1)", "unclosed array expect ]"),
            (".spec 'a", "unterminated quoted string"),
            (".spec.a[?(@.x", "unterminated filter"),
        ] {
            assert_eq!(
                JsonPath::parse(&format!("{{{path}}}")).unwrap_err(),
                err,
                "{path}"
            );
        }
        assert_eq!(JsonPath::parse("{.a").unwrap_err(), "unclosed action");
    }

    #[test]
    fn evaluates_like_kubectl() {
        let o = json!({"spec": {"a": [{"b": 1, "n": "x"}, {"b": 2, "n": "y"}], "m": {"z": 1, "k": 2},
            "nil": null, "dot.key": 5, "f": 1.5}});
        assert_eq!(first(".spec.a[0].b", &o), Some(json!(1)));
        assert_eq!(first(".spec.a[-1].b", &o), Some(json!(2)));
        assert_eq!(first(".spec.a[*].b", &o), Some(json!(1)));
        assert_eq!(first(".spec.a[1:].n", &o), Some(json!("y")));
        assert_eq!(first(".spec.a[5].b", &o), None);
        assert_eq!(first(".spec.x", &o), None);
        assert_eq!(first(".spec.nil", &o), Some(Value::Null));
        assert_eq!(first(".spec.nil.x", &o), None);
        assert_eq!(first(".spec.m.*", &o), Some(json!(2)));
        assert_eq!(
            first(".spec.m[*]", &o),
            None,
            "[*] on a map is not an array"
        );
        assert_eq!(first("..n", &o), Some(json!("x")));
        assert_eq!(first(".spec.a[?(@.n==\"y\")].b", &o), Some(json!(2)));
        assert_eq!(first(".spec.a[?(@.n)].b", &o), Some(json!(1)));
        // Template ints are float64 and JSON integers int64: never equal server-side.
        assert_eq!(first(".spec.a[?(@.b==2)].n", &o), None);
        assert_eq!(first(".spec.a[?(@.b!=2)].n", &o), Some(json!("x")));
        assert_eq!(first(".spec['m']['k']", &o), Some(json!(2)));
        assert_eq!(first(".spec.dot\\.key", &o), Some(json!(5)));
        assert_eq!(first(".spec.a[0,1].b", &o), Some(json!(1)));
        assert_eq!(first(".spec.a[0]['b','n']", &o), Some(json!(1)));
        assert_eq!(first(".spec.f", &o), Some(json!(1.5)));
        assert_eq!(first(".spec.a.b", &o), None);
        assert_eq!(first("\"lit\"", &o), Some(json!("lit")));
    }

    #[test]
    fn extreme_indexes_do_not_overflow() {
        let o = json!({"a": [1, 2, 3]});
        // Go's int arithmetic wraps: the derived end of the last int64 index is out of bounds.
        assert_eq!(first(".a[9223372036854775807]", &o), None);
        assert_eq!(first(".a[-9223372036854775808]", &o), None);
        assert_eq!(first(".a[-9223372036854775808:]", &o), None);
        assert_eq!(first(".a[0:-9223372036854775808]", &o), None);
        assert_eq!(
            first(".a[0:9223372036854775807:9223372036854775807]", &o),
            None
        );
        assert_eq!(first(".a[1:3:9223372036854775807]", &o), Some(json!(2)));
    }

    #[test]
    fn repeated_recursive_descent_is_bounded() {
        // Each `..` multiplies the results by the depth: without a budget this path over a
        // chain 120 deep takes hours.
        let mut o = json!(1);
        for _ in 0..120 {
            o = json!({ "a": o });
        }
        let started = std::time::Instant::now();
        assert_eq!(first("..........z", &o), None);
        assert_eq!(first("..a[?(@..........z)]", &o), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // A single `..` over a wide object still finds what it looks for.
        let wide = json!({"items": vec![json!({"k": 1}); 100_000], "z": {"k": 2}});
        assert_eq!(first("..z.k", &wide), Some(json!(2)));
    }
}
