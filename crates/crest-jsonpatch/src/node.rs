//! The document as evanphx/json-patch v4 holds it while a patch applies: a tree of `lazyNode`s,
//! whose three kinds of null behave differently, and whose scalars compare by their JSON text.
//!
//! v4 decodes the document into `map[string]*lazyNode` / `[]*lazyNode`, so a `null` in the
//! document (or nested in an operation's value) is a nil pointer: [`Node::Null`]. An operation's
//! own `"value": null` is a node without raw bytes ([`Node::PatchNull`]), and a copy of one is a
//! node whose raw bytes are `null` ([`Node::CopiedNull`]), which decodes as a nil map when
//! entered. v4 parses lazily; the tree here is built eagerly, which changes nothing observable
//! (a node's kind never changes once parsed).
//!
//! Containers carry an upper bound of their height, kept as values are inserted, so that the
//! nesting of the result is bounded (see [`crate::MAX_NESTING`]) without walking subtrees, and
//! every recursion over the tree stays shallow.

use crate::ApplyError as Error;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A nil `*lazyNode`: `null` in the document, nested in a value, or a missing `value`.
    Null,
    /// `lazyNode{raw: nil}`: an operation's `"value": null`.
    PatchNull,
    /// `lazyNode{raw: "null"}`: the copy of a [`Node::PatchNull`]. Entered, it is a nil map
    /// (reads find nothing, writes panic); tested, it equals `{}`.
    CopiedNull,
    Scalar(Scalar),
    Object(Obj),
    Array(Arr),
}

/// A string, number or boolean, with the JSON text v4 compares.
#[derive(Clone, Debug)]
pub(crate) enum Scalar {
    /// From the document: its text is Go's `encoding/json` of the value (what
    /// `runtime.Encode` gave kube-apiserver's patcher).
    Doc(Value),
    /// From a patch: the text as sent (a scalar has no insignificant whitespace).
    Raw(Box<str>),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Obj {
    pub(crate) map: BTreeMap<String, Node>,
    /// At least 1 + the height of every member.
    pub(crate) height: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Arr {
    pub(crate) items: Vec<Node>,
    /// At least 1 + the height of every item.
    pub(crate) height: u32,
}

impl Node {
    /// An upper bound of how many containers nest in this node, itself included (0 for
    /// scalars and nulls).
    pub(crate) fn height(&self) -> u32 {
        match self {
            Node::Object(o) => o.height,
            Node::Array(a) => a.height,
            _ => 0,
        }
    }

    /// Raises the height bound of a container (nulls and scalars have none).
    pub(crate) fn raise_height(&mut self, h: u32) {
        match self {
            Node::Object(o) => o.height = o.height.max(h),
            Node::Array(a) => a.height = a.height.max(h),
            _ => {}
        }
    }

    /// The document's tree: nulls are nil nodes, scalars keep their values.
    pub(crate) fn from_doc(v: &Value) -> Node {
        match v {
            Value::Null => Node::Null,
            Value::Object(m) => {
                let mut height = 1;
                let map = m
                    .iter()
                    .map(|(k, v)| {
                        let n = Node::from_doc(v);
                        height = height.max(n.height().saturating_add(1));
                        (k.clone(), n)
                    })
                    .collect();
                Node::Object(Obj { map, height })
            }
            Value::Array(a) => {
                let mut height = 1;
                let items = a
                    .iter()
                    .map(|v| {
                        let n = Node::from_doc(v);
                        height = height.max(n.height().saturating_add(1));
                        n
                    })
                    .collect();
                Node::Array(Arr { items, height })
            }
            scalar => Node::Scalar(Scalar::Doc(scalar.clone())),
        }
    }

    /// An operation's value from its JSON text (valid JSON, as the body was parsed already);
    /// nested nulls are nil nodes, scalars keep their text.
    pub(crate) fn from_raw(text: &str) -> Result<Node, Error> {
        let mut r = Reader {
            b: text.as_bytes(),
            s: text,
            i: 0,
        };
        let n = r.value()?;
        r.ws();
        if r.i != r.b.len() {
            return Err(r.malformed());
        }
        Ok(n)
    }

    /// The patched document, as kube-apiserver decodes what v4's `json.Marshal` wrote: every
    /// kind of null is `null`.
    pub(crate) fn into_value(self) -> Result<Value, Error> {
        Ok(match self {
            Node::Null | Node::PatchNull | Node::CopiedNull => Value::Null,
            Node::Scalar(Scalar::Doc(v)) => v,
            Node::Scalar(Scalar::Raw(t)) => serde_json::from_str(&t)
                .map_err(|e| Error::Failed(format!("invalid value {t}: {e}")))?,
            Node::Object(o) => Value::Object(
                o.map
                    .into_iter()
                    .map(|(k, n)| Ok((k, n.into_value()?)))
                    .collect::<Result<_, Error>>()?,
            ),
            Node::Array(a) => Value::Array(
                a.items
                    .into_iter()
                    .map(Node::into_value)
                    .collect::<Result<_, Error>>()?,
            ),
        })
    }

    /// v4's `deepCopy`: the node marshalled (`json.Marshal`: keys sorted, HTML-escaped) and
    /// parsed again, with the size of the marshalled text, which the copy limit counts. A nil
    /// node copies as nil and counts nothing; a `"value": null` node becomes a [`CopiedNull`];
    /// inside containers every null becomes nil.
    ///
    /// [`CopiedNull`]: Node::CopiedNull
    pub(crate) fn deep_copy(&self) -> Node {
        match self {
            Node::Null => Node::Null,
            Node::PatchNull | Node::CopiedNull => Node::CopiedNull,
            _ => self.copy_nested(),
        }
    }

    fn copy_nested(&self) -> Node {
        match self {
            Node::Null | Node::PatchNull | Node::CopiedNull => Node::Null,
            Node::Scalar(Scalar::Doc(v)) => Node::Scalar(Scalar::Doc(v.clone())),
            Node::Scalar(Scalar::Raw(t)) => {
                Node::Scalar(Scalar::Raw(crest_gofmt::go_marshal_raw(t).into()))
            }
            Node::Object(o) => {
                let mut height = 1;
                let map = o
                    .map
                    .iter()
                    .map(|(k, n)| {
                        let c = n.copy_nested();
                        height = height.max(c.height().saturating_add(1));
                        (k.clone(), c)
                    })
                    .collect();
                Node::Object(Obj { map, height })
            }
            Node::Array(a) => {
                let mut height = 1;
                let items = a
                    .items
                    .iter()
                    .map(|n| {
                        let c = n.copy_nested();
                        height = height.max(c.height().saturating_add(1));
                        c
                    })
                    .collect();
                Node::Array(Arr { items, height })
            }
        }
    }

    /// The length of what `deepCopy` marshals (0 for a nil node, which it does not marshal).
    pub(crate) fn copy_size(&self) -> u64 {
        match self {
            Node::Null => 0,
            _ => self.marshalled_len(),
        }
    }

    fn marshalled_len(&self) -> u64 {
        let len = |s: String| s.len() as u64;
        match self {
            Node::Null | Node::PatchNull | Node::CopiedNull => 4,
            Node::Scalar(Scalar::Doc(v)) => len(crest_gofmt::go_json(v)),
            Node::Scalar(Scalar::Raw(t)) => len(crest_gofmt::go_marshal_raw(t)),
            Node::Object(o) => {
                let members: u64 = o
                    .map
                    .iter()
                    .map(|(k, n)| {
                        len(crest_gofmt::go_json(&Value::String(k.clone())))
                            + 1
                            + n.marshalled_len()
                    })
                    .sum();
                2 + members + (o.map.len() as u64).saturating_sub(1)
            }
            Node::Array(a) => {
                let items: u64 = a.items.iter().map(Node::marshalled_len).sum();
                2 + items + (a.items.len() as u64).saturating_sub(1)
            }
        }
    }

    /// v4's `lazyNode.equal(o)` with `self` the document's node and `o` the operation's value:
    /// objects compare member by member (a nil member equals only a nil member), arrays item by
    /// item, scalars by their JSON text (`1` is not `1.0`, `"A"` is not `"\u0041"`), an
    /// operation's `null` equals only another such `null`, and a copied one equals `{}`.
    /// Where v4 dereferences a nil node (a `null` item in an array it compares), it panics.
    /// Members are visited in key order (Go's map order is random, so where one member differs
    /// and another would panic, v4 answers either way).
    pub(crate) fn equal(&self, o: &Node) -> Result<bool, Error> {
        const NIL: &str = "a null array item compared by a test operation";
        if matches!(self, Node::Null) || matches!(o, Node::Null) {
            return Err(Error::Panics(NIL));
        }
        match self {
            Node::Scalar(_) | Node::PatchNull => Ok(match (self, o) {
                (Node::Scalar(a), Node::Scalar(b)) => a.text() == b.text(),
                (Node::PatchNull, Node::PatchNull) => true,
                _ => false,
            }),
            Node::Object(_) | Node::CopiedNull => {
                let empty = BTreeMap::new();
                let mine = match self {
                    Node::Object(m) => &m.map,
                    _ => &empty,
                };
                let theirs = match o {
                    Node::Object(t) => &t.map,
                    Node::CopiedNull => &empty,
                    _ => return Ok(false),
                };
                if mine.len() != theirs.len() {
                    return Ok(false);
                }
                for (k, v) in mine {
                    let Some(ov) = theirs.get(k) else {
                        return Ok(false);
                    };
                    match (matches!(v, Node::Null), matches!(ov, Node::Null)) {
                        (true, true) => continue,
                        (false, false) => {}
                        _ => return Ok(false),
                    }
                    if !v.equal(ov)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Node::Array(a) => {
                let theirs: &[Node] = match o {
                    Node::Array(t) => &t.items,
                    Node::CopiedNull => &[],
                    _ => return Ok(false),
                };
                if a.items.len() != theirs.len() {
                    return Ok(false);
                }
                for (v, ov) in a.items.iter().zip(theirs) {
                    if !v.equal(ov)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Node::Null => Err(Error::Panics(NIL)),
        }
    }
}

impl Scalar {
    /// The text v4 compares: the compacted raw bytes, which for the document are Go's encoding.
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Scalar::Doc(v) => crest_gofmt::go_json(v).into(),
            Scalar::Raw(t) => std::borrow::Cow::Borrowed(t),
        }
    }
}

/// A reader of JSON text already known to be valid (serde_json parsed the body), building
/// nodes that keep each scalar's text.
struct Reader<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn malformed(&self) -> Error {
        Error::Failed(format!("malformed JSON value at byte {}", self.i))
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn consume(&mut self, c: u8) -> Result<(), Error> {
        self.ws();
        if self.peek() != Some(c) {
            return Err(self.malformed());
        }
        self.i += 1;
        Ok(())
    }

    /// The text of the string starting here, quotes included.
    fn string(&mut self) -> Result<&str, Error> {
        let start = self.i;
        self.i += 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => return self.s.get(start..self.i).ok_or_else(|| self.malformed()),
                _ => {}
            }
        }
        Err(self.malformed())
    }

    fn value(&mut self) -> Result<Node, Error> {
        self.ws();
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut obj = Obj {
                    map: BTreeMap::new(),
                    height: 1,
                };
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Node::Object(obj));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.malformed());
                    }
                    let key: String = serde_json::from_str(self.string()?)
                        .map_err(|e| Error::Failed(e.to_string()))?;
                    self.consume(b':')?;
                    let n = self.value()?;
                    obj.height = obj.height.max(n.height().saturating_add(1));
                    // As Go decodes into a map, the last of duplicate members wins.
                    obj.map.insert(key, n);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Node::Object(obj));
                        }
                        _ => return Err(self.malformed()),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut arr = Arr {
                    items: Vec::new(),
                    height: 1,
                };
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Node::Array(arr));
                }
                loop {
                    let n = self.value()?;
                    arr.height = arr.height.max(n.height().saturating_add(1));
                    arr.items.push(n);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Node::Array(arr));
                        }
                        _ => return Err(self.malformed()),
                    }
                }
            }
            Some(b'"') => Ok(Node::Scalar(Scalar::Raw(self.string()?.into()))),
            Some(_) => {
                let start = self.i;
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                match self.s.get(start..self.i) {
                    Some("null") => Ok(Node::Null),
                    Some(t) if !t.is_empty() => Ok(Node::Scalar(Scalar::Raw(t.into()))),
                    _ => Err(self.malformed()),
                }
            }
            None => Err(self.malformed()),
        }
    }
}
