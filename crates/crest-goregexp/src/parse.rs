//! Go's `regexp/syntax` parser (Go 1.23), step for step: the same parse stack, literal
//! concatenation, alternation factoring and character class arithmetic, so that an invalid
//! expression fails with the error Go finds first, and the limits Go enforces (repeat counts,
//! tree height, compiled size, class runes) trip where Go's do. Nodes live in an arena and
//! are recycled through a free list as Go's `reuse` does, which matters for when the size and
//! height limits start being computed.

use std::collections::HashMap;

use crate::error::{Error, ErrorCode};
use crate::unicode::{self, clean_class, MAX_FOLD, MAX_RUNE, MIN_FOLD};

pub(crate) type Id = usize;

/// Go's `syntax.Op`, in Go's order (the parser compares them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Op {
    NoMatch = 1,
    EmptyMatch,
    Literal,
    CharClass,
    AnyCharNotNL,
    AnyChar,
    BeginLine,
    EndLine,
    BeginText,
    EndText,
    WordBoundary,
    NoWordBoundary,
    Capture,
    Star,
    Plus,
    Quest,
    Repeat,
    Concat,
    Alternate,
    /// Pseudo-ops of the parse stack (Go's `opPseudo` and up).
    LeftParen = 128,
    VerticalBar,
}

impl Op {
    fn is_pseudo(self) -> bool {
        self >= Op::LeftParen
    }
}

pub(crate) const FOLD_CASE: u16 = 1;
pub(crate) const CLASS_NL: u16 = 1 << 2;
pub(crate) const DOT_NL: u16 = 1 << 3;
pub(crate) const ONE_LINE: u16 = 1 << 4;
pub(crate) const NON_GREEDY: u16 = 1 << 5;
pub(crate) const PERL_X: u16 = 1 << 6;
pub(crate) const UNICODE_GROUPS: u16 = 1 << 7;
pub(crate) const WAS_DOLLAR: u16 = 1 << 8;
/// `syntax.Perl`, what `regexp.Compile` parses with.
pub(crate) const PERL: u16 = CLASS_NL | ONE_LINE | PERL_X | UNICODE_GROUPS;

const MAX_REPEAT: i32 = 1000;
const MAX_HEIGHT: usize = 1000;
/// Compiled size limit in instructions (128 MB of 40-byte instructions).
const MAX_SIZE: i64 = (128 << 20) / 40;
/// Limit on the runes of all character classes (128 MB of 4-byte runes).
const MAX_RUNES: usize = (128 << 20) / 4;

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub op: Op,
    pub flags: u16,
    pub sub: Vec<Id>,
    pub runes: Vec<u32>,
    pub min: i32,
    pub max: i32,
    pub cap: i32,
    pub name: String,
}

impl Node {
    fn new(op: Op) -> Node {
        Node {
            op,
            flags: 0,
            sub: vec![],
            runes: vec![],
            min: 0,
            max: 0,
            cap: 0,
            name: String::new(),
        }
    }
}

/// A parsed expression: the node arena and the root.
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub root: Id,
}

impl Tree {
    pub(crate) fn node(&self, id: Id) -> &Node {
        &self.nodes[id]
    }
}

type PResult<T> = Result<T, Error>;

fn err(code: ErrorCode, expr: &str) -> Error {
    Error {
        code,
        expr: expr.to_string(),
    }
}

/// Grows the stack for deep recursion (factoring long alternations, tall trees).
fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, f)
}

struct Parser<'s> {
    flags: u16,
    stack: Vec<Id>,
    nodes: Vec<Node>,
    free: Vec<Id>,
    num_cap: i32,
    whole: &'s str,
    num_runes: usize,
    repeats: i64,
    /// Heights, once tracked (Go starts after `MAX_HEIGHT` allocations).
    height: Option<HashMap<Id, usize>>,
    /// Compiled sizes, once tracked. Like Go's map, entries outlive a node's reuse.
    size: Option<HashMap<Id, i64>>,
}

/// Go's `syntax.Parse(s, flags)`.
pub(crate) fn parse(s: &str, flags: u16) -> PResult<Tree> {
    let mut p = Parser {
        flags,
        stack: vec![],
        nodes: vec![],
        free: vec![],
        num_cap: 0,
        whole: s,
        num_runes: 0,
        repeats: 0,
        height: None,
        size: None,
    };
    let root = p.run(s)?;
    Ok(Tree {
        nodes: p.nodes,
        root,
    })
}

impl<'s> Parser<'s> {
    fn limit(&self, code: ErrorCode) -> Error {
        err(code, self.whole)
    }

    fn new_regexp(&mut self, op: Op) -> Id {
        match self.free.pop() {
            Some(id) => {
                self.nodes[id] = Node::new(op);
                id
            }
            None => {
                self.nodes.push(Node::new(op));
                self.nodes.len() - 1
            }
        }
    }

    fn reuse(&mut self, id: Id) {
        if let Some(h) = self.height.as_mut() {
            h.remove(&id);
        }
        self.free.push(id);
    }

    fn op_of(&self, id: Id) -> Op {
        self.nodes[id].op
    }

    fn check_limits(&mut self, id: Id) -> PResult<()> {
        if self.num_runes > MAX_RUNES {
            return Err(self.limit(ErrorCode::Large));
        }
        self.check_size(id)?;
        self.check_height(id)
    }

    fn check_size(&mut self, id: Id) -> PResult<()> {
        if self.size.is_none() {
            // Cheap test first: the node count times the product of the repeats seen.
            if self.repeats == 0 {
                self.repeats = 1;
            }
            let n = &self.nodes[id];
            if n.op == Op::Repeat {
                let mut m = n.max;
                if m == -1 {
                    m = n.min;
                }
                if m <= 0 {
                    m = 1;
                }
                if i64::from(m) > MAX_SIZE / self.repeats {
                    self.repeats = MAX_SIZE;
                } else {
                    self.repeats *= i64::from(m);
                }
            }
            if (self.nodes.len() as i64) < MAX_SIZE / self.repeats {
                return Ok(());
            }
            self.size = Some(HashMap::new());
            for re in self.stack.clone() {
                self.check_size(re)?;
            }
        }
        if self.calc_size(id, true) > MAX_SIZE {
            return Err(self.limit(ErrorCode::Large));
        }
        Ok(())
    }

    fn calc_size(&mut self, id: Id, force: bool) -> i64 {
        deep(|| {
            if !force {
                if let Some(s) = self.size.as_ref().and_then(|m| m.get(&id)) {
                    return *s;
                }
            }
            let n = &self.nodes[id];
            let (op, min, max) = (n.op, i64::from(n.min), i64::from(n.max));
            let subs = n.sub.clone();
            let first = subs.first().copied();
            let sub = |p: &mut Self| first.map_or(0, |s| p.calc_size(s, false));
            let size: i64 = match op {
                Op::Literal => self.nodes[id].runes.len() as i64,
                Op::Capture | Op::Star => 2i64.saturating_add(sub(self)),
                Op::Plus | Op::Quest => 1i64.saturating_add(sub(self)),
                Op::Concat | Op::Alternate => {
                    let mut total: i64 = 0;
                    for s in &subs {
                        total = total.saturating_add(self.calc_size(*s, false));
                    }
                    if op == Op::Alternate && subs.len() > 1 {
                        total = total.saturating_add(subs.len() as i64 - 1);
                    }
                    total
                }
                Op::Repeat => {
                    let s = sub(self);
                    if max == -1 {
                        if min == 0 {
                            2i64.saturating_add(s)
                        } else {
                            1i64.saturating_add(min.saturating_mul(s))
                        }
                    } else {
                        max.saturating_mul(s).saturating_add(max - min)
                    }
                }
                _ => 0,
            };
            let size = size.max(1);
            if let Some(m) = self.size.as_mut() {
                m.insert(id, size);
            }
            size
        })
    }

    fn check_height(&mut self, id: Id) -> PResult<()> {
        if self.nodes.len() < MAX_HEIGHT {
            return Ok(());
        }
        if self.height.is_none() {
            self.height = Some(HashMap::new());
            for re in self.stack.clone() {
                self.check_height(re)?;
            }
        }
        if self.calc_height(id, true) > MAX_HEIGHT {
            return Err(self.limit(ErrorCode::NestingDepth));
        }
        Ok(())
    }

    fn calc_height(&mut self, id: Id, force: bool) -> usize {
        deep(|| {
            if !force {
                if let Some(h) = self.height.as_ref().and_then(|m| m.get(&id)) {
                    return *h;
                }
            }
            let mut h = 1;
            for s in self.nodes[id].sub.clone() {
                h = h.max(1 + self.calc_height(s, false));
            }
            if let Some(m) = self.height.as_mut() {
                m.insert(id, h);
            }
            h
        })
    }

    /// Pushes a node, turning one-rune classes into literals; None when the rune was merged
    /// into the literal below.
    fn push(&mut self, id: Id) -> PResult<Option<Id>> {
        self.num_runes += self.nodes[id].runes.len();
        let n = &self.nodes[id];
        let r = &n.runes;
        if n.op == Op::CharClass && r.len() == 2 && r[0] == r[1] {
            let r0 = r[0];
            if self.maybe_concat(Some(r0), self.flags & !FOLD_CASE) {
                return Ok(None);
            }
            let flags = self.flags & !FOLD_CASE;
            let n = &mut self.nodes[id];
            n.op = Op::Literal;
            n.runes.truncate(1);
            n.flags = flags;
        } else if n.op == Op::CharClass
            && ((r.len() == 4
                && r[0] == r[1]
                && r[2] == r[3]
                && unicode::simple_fold(r[0]) == r[2]
                && unicode::simple_fold(r[2]) == r[0])
                || (r.len() == 2
                    && r[0] + 1 == r[1]
                    && unicode::simple_fold(r[0]) == r[1]
                    && unicode::simple_fold(r[1]) == r[0]))
        {
            // A case-insensitive rune like [Aa].
            let r0 = r[0];
            if self.maybe_concat(Some(r0), self.flags | FOLD_CASE) {
                return Ok(None);
            }
            let flags = self.flags | FOLD_CASE;
            let n = &mut self.nodes[id];
            n.op = Op::Literal;
            n.runes.truncate(1);
            n.flags = flags;
        } else {
            self.maybe_concat(None, 0);
        }
        self.stack.push(id);
        self.check_limits(id)?;
        Ok(Some(id))
    }

    /// Merges the top literal into the one below it when their case folding agrees; with
    /// `r`, reuses the top node for it (and reports true).
    fn maybe_concat(&mut self, r: Option<u32>, flags: u16) -> bool {
        let n = self.stack.len();
        if n < 2 {
            return false;
        }
        let (re1, re2) = (self.stack[n - 1], self.stack[n - 2]);
        let (a, b) = (&self.nodes[re1], &self.nodes[re2]);
        if a.op != Op::Literal || b.op != Op::Literal || a.flags & FOLD_CASE != b.flags & FOLD_CASE
        {
            return false;
        }
        let moved = a.runes.clone();
        self.nodes[re2].runes.extend(moved);
        if let Some(r) = r {
            let a = &mut self.nodes[re1];
            a.runes = vec![r];
            a.flags = flags;
            return true;
        }
        self.stack.pop();
        self.reuse(re1);
        false
    }

    fn literal(&mut self, r: u32) -> PResult<()> {
        let id = self.new_regexp(Op::Literal);
        let flags = self.flags;
        let r = if flags & FOLD_CASE != 0 {
            min_fold_rune(r)
        } else {
            r
        };
        let n = &mut self.nodes[id];
        n.flags = flags;
        n.runes = vec![r];
        self.push(id)?;
        Ok(())
    }

    fn op(&mut self, op: Op) -> PResult<Option<Id>> {
        let id = self.new_regexp(op);
        self.nodes[id].flags = self.flags;
        self.push(id)
    }

    /// Applies a repetition to the top of the stack; `before` starts at the operator, `after`
    /// follows it. Returns the rest of the pattern.
    fn repeat(
        &mut self,
        op: Op,
        min: i32,
        max: i32,
        before: &'s str,
        after: &'s str,
        last_repeat: &'s str,
    ) -> PResult<&'s str> {
        let mut flags = self.flags;
        let mut after = after;
        if self.flags & PERL_X != 0 {
            if let Some(rest) = after.strip_prefix('?') {
                after = rest;
                flags ^= NON_GREEDY;
            }
            if !last_repeat.is_empty() {
                // Perl forbids stacked repetition operators (a**, a++).
                return Err(err(
                    ErrorCode::InvalidRepeatOp,
                    &last_repeat[..last_repeat.len() - after.len()],
                ));
            }
        }
        let missing = || {
            err(
                ErrorCode::MissingRepeatArgument,
                &before[..before.len() - after.len()],
            )
        };
        let Some(&sub) = self.stack.last() else {
            return Err(missing());
        };
        if self.op_of(sub).is_pseudo() {
            return Err(missing());
        }
        let re = self.new_regexp(op);
        let n = &mut self.nodes[re];
        n.min = min;
        n.max = max;
        n.flags = flags;
        n.sub = vec![sub];
        let top = self.stack.len() - 1;
        self.stack[top] = re;
        self.check_limits(re)?;
        if op == Op::Repeat && (min >= 2 || max >= 2) && !self.repeat_is_valid(re, MAX_REPEAT) {
            return Err(err(
                ErrorCode::InvalidRepeatSize,
                &before[..before.len() - after.len()],
            ));
        }
        Ok(after)
    }

    /// Whether nested repetitions stay within `n` copies of the innermost expression.
    fn repeat_is_valid(&self, id: Id, n: i32) -> bool {
        deep(|| {
            let node = &self.nodes[id];
            let mut n = n;
            if node.op == Op::Repeat {
                let mut m = node.max;
                if m == 0 {
                    return true;
                }
                if m < 0 {
                    m = node.min;
                }
                if m > n {
                    return false;
                }
                if m > 0 {
                    n /= m;
                }
            }
            node.sub.iter().all(|&s| self.repeat_is_valid(s, n))
        })
    }

    /// The index above the topmost pseudo-op of the stack.
    fn above_pseudo(&self) -> usize {
        let mut i = self.stack.len();
        while i > 0 && !self.op_of(self.stack[i - 1]).is_pseudo() {
            i -= 1;
        }
        i
    }

    /// Replaces the top of the stack (above the topmost `|` or `(`) with its concatenation.
    fn concat(&mut self) -> PResult<()> {
        self.maybe_concat(None, 0);
        let i = self.above_pseudo();
        let subs = self.stack.split_off(i);
        if subs.is_empty() {
            let e = self.new_regexp(Op::EmptyMatch);
            self.push(e)?;
            return Ok(());
        }
        let c = self.collapse(subs, Op::Concat)?;
        self.push(c)?;
        Ok(())
    }

    /// Replaces the top of the stack (above the topmost `(`) with its alternation.
    fn alternate(&mut self) -> PResult<()> {
        let i = self.above_pseudo();
        let subs = self.stack.split_off(i);
        if let Some(&last) = subs.last() {
            self.clean_alt(last);
        }
        if subs.is_empty() {
            let e = self.new_regexp(Op::NoMatch);
            self.push(e)?;
            return Ok(());
        }
        let a = self.collapse(subs, Op::Alternate)?;
        self.push(a)?;
        Ok(())
    }

    fn clean_alt(&mut self, id: Id) {
        let n = &mut self.nodes[id];
        if n.op != Op::CharClass {
            return;
        }
        clean_class(&mut n.runes);
        if n.runes == [0, MAX_RUNE] {
            n.runes.clear();
            n.op = Op::AnyChar;
        } else if n.runes == [0, 0x9, 0xb, MAX_RUNE] {
            n.runes.clear();
            n.op = Op::AnyCharNotNL;
        }
    }

    /// `op` applied to `subs`, flattening nested nodes of the same op (and factoring
    /// alternations).
    fn collapse(&mut self, subs: Vec<Id>, op: Op) -> PResult<Id> {
        deep(|| {
            if subs.len() == 1 {
                return Ok(subs[0]);
            }
            let mut re = self.new_regexp(op);
            let mut list = vec![];
            for s in subs {
                if self.op_of(s) == op {
                    list.extend(self.nodes[s].sub.clone());
                    self.reuse(s);
                } else {
                    list.push(s);
                }
            }
            if op == Op::Alternate {
                list = self.factor(list)?;
                if list.len() == 1 {
                    let old = re;
                    re = list[0];
                    self.reuse(old);
                    return Ok(re);
                }
            }
            self.nodes[re].sub = list;
            Ok(re)
        })
    }

    /// Factors common prefixes out of an alternation's branches.
    fn factor(&mut self, mut sub: Vec<Id>) -> PResult<Vec<Id>> {
        if sub.len() < 2 {
            return Ok(sub);
        }
        // Round 1: common literal prefixes.
        let mut out = vec![];
        let mut start = 0;
        let mut str: Vec<u32> = vec![];
        let mut strflags = 0;
        for i in 0..=sub.len() {
            let mut istr = vec![];
            let mut iflags = 0;
            if i < sub.len() {
                (istr, iflags) = self.leading_string(sub[i]);
                if iflags == strflags {
                    let same = str.iter().zip(&istr).take_while(|(a, b)| a == b).count();
                    if same > 0 {
                        str.truncate(same);
                        continue;
                    }
                }
            }
            if i == start {
            } else if i == start + 1 {
                out.push(sub[start]);
            } else {
                let prefix = self.new_regexp(Op::Literal);
                self.nodes[prefix].flags = strflags;
                self.nodes[prefix].runes = str.clone();
                for slot in &mut sub[start..i] {
                    *slot = self.remove_leading_string(*slot, str.len());
                    self.check_limits(*slot)?;
                }
                let suffix = self.collapse(sub[start..i].to_vec(), Op::Alternate)?;
                let re = self.new_regexp(Op::Concat);
                self.nodes[re].sub = vec![prefix, suffix];
                out.push(re);
            }
            start = i;
            str = istr;
            strflags = iflags;
        }
        sub = out;

        // Round 2: a common first piece that is a character class, or a fixed repetition of
        // one.
        let mut out = vec![];
        let mut start = 0;
        let mut first: Option<Id> = None;
        for i in 0..=sub.len() {
            let mut ifirst = None;
            if i < sub.len() {
                ifirst = self.leading_regexp(sub[i]);
                if let (Some(f), Some(fi)) = (first, ifirst) {
                    let fnode = &self.nodes[f];
                    let simple = self.is_char_class(f)
                        || (fnode.op == Op::Repeat
                            && fnode.min == fnode.max
                            && self.is_char_class(fnode.sub[0]));
                    if simple && self.equal(f, fi) {
                        continue;
                    }
                }
            }
            if i == start {
            } else if i == start + 1 {
                out.push(sub[start]);
            } else if let Some(prefix) = first {
                for (j, slot) in sub.iter_mut().enumerate().take(i).skip(start) {
                    // The prefix is the first branch's: only the others' are recycled.
                    *slot = self.remove_leading_regexp(*slot, j != start);
                    self.check_limits(*slot)?;
                }
                let suffix = self.collapse(sub[start..i].to_vec(), Op::Alternate)?;
                let re = self.new_regexp(Op::Concat);
                self.nodes[re].sub = vec![prefix, suffix];
                out.push(re);
            }
            start = i;
            first = ifirst;
        }
        sub = out;

        // Round 3: runs of single runes and classes become one class.
        let mut out = vec![];
        let mut start = 0;
        for i in 0..=sub.len() {
            if i < sub.len() && self.is_char_class(sub[i]) {
                continue;
            }
            if i == start {
            } else if i == start + 1 {
                out.push(sub[start]);
            } else {
                let mut max = start;
                for j in start + 1..i {
                    let (a, b) = (&self.nodes[sub[max]], &self.nodes[sub[j]]);
                    if a.op < b.op || (a.op == b.op && a.runes.len() < b.runes.len()) {
                        max = j;
                    }
                }
                sub.swap(start, max);
                for j in start + 1..i {
                    self.merge_char_class(sub[start], sub[j]);
                    self.reuse(sub[j]);
                }
                self.clean_alt(sub[start]);
                out.push(sub[start]);
            }
            if i < sub.len() {
                out.push(sub[i]);
            }
            start = i + 1;
        }
        sub = out;

        // Round 4: runs of empty matches become one.
        let mut out = vec![];
        for i in 0..sub.len() {
            if i + 1 < sub.len()
                && self.op_of(sub[i]) == Op::EmptyMatch
                && self.op_of(sub[i + 1]) == Op::EmptyMatch
            {
                continue;
            }
            out.push(sub[i]);
        }
        Ok(out)
    }

    fn leading_string(&self, id: Id) -> (Vec<u32>, u16) {
        let mut n = &self.nodes[id];
        if n.op == Op::Concat && !n.sub.is_empty() {
            n = &self.nodes[n.sub[0]];
        }
        if n.op != Op::Literal {
            return (vec![], 0);
        }
        (n.runes.clone(), n.flags & FOLD_CASE)
    }

    fn remove_leading_string(&mut self, id: Id, n: usize) -> Id {
        deep(|| {
            let node = &self.nodes[id];
            if node.op == Op::Concat && !node.sub.is_empty() {
                let s = node.sub[0];
                let s = self.remove_leading_string(s, n);
                self.nodes[id].sub[0] = s;
                if self.op_of(s) == Op::EmptyMatch {
                    self.reuse(s);
                    match self.nodes[id].sub.len() {
                        0 | 1 => {
                            let node = &mut self.nodes[id];
                            node.op = Op::EmptyMatch;
                            node.sub.clear();
                        }
                        2 => {
                            let rest = self.nodes[id].sub[1];
                            self.reuse(id);
                            return rest;
                        }
                        _ => {
                            self.nodes[id].sub.remove(0);
                        }
                    }
                }
                return id;
            }
            let node = &mut self.nodes[id];
            if node.op == Op::Literal {
                node.runes.drain(..n.min(node.runes.len()));
                if node.runes.is_empty() {
                    node.op = Op::EmptyMatch;
                }
            }
            id
        })
    }

    fn leading_regexp(&self, id: Id) -> Option<Id> {
        let n = &self.nodes[id];
        if n.op == Op::EmptyMatch {
            return None;
        }
        if n.op == Op::Concat && !n.sub.is_empty() {
            let s = n.sub[0];
            if self.op_of(s) == Op::EmptyMatch {
                return None;
            }
            return Some(s);
        }
        Some(id)
    }

    fn remove_leading_regexp(&mut self, id: Id, reuse: bool) -> Id {
        let n = &self.nodes[id];
        if n.op == Op::Concat && !n.sub.is_empty() {
            let first = n.sub[0];
            if reuse {
                self.reuse(first);
            }
            self.nodes[id].sub.remove(0);
            match self.nodes[id].sub.len() {
                0 => {
                    self.nodes[id].op = Op::EmptyMatch;
                }
                1 => {
                    let rest = self.nodes[id].sub[0];
                    self.reuse(id);
                    return rest;
                }
                _ => {}
            }
            return id;
        }
        if reuse {
            self.reuse(id);
        }
        self.new_regexp(Op::EmptyMatch)
    }

    /// Go's `Regexp.Equal`.
    fn equal(&self, x: Id, y: Id) -> bool {
        deep(|| {
            let (a, b) = (&self.nodes[x], &self.nodes[y]);
            if a.op != b.op {
                return false;
            }
            match a.op {
                Op::EndText => a.flags & WAS_DOLLAR == b.flags & WAS_DOLLAR,
                Op::Literal | Op::CharClass => {
                    a.flags & FOLD_CASE == b.flags & FOLD_CASE && a.runes == b.runes
                }
                Op::Alternate | Op::Concat => {
                    a.sub.len() == b.sub.len()
                        && a.sub.iter().zip(&b.sub).all(|(&p, &q)| self.equal(p, q))
                }
                Op::Star | Op::Plus | Op::Quest => {
                    a.flags & NON_GREEDY == b.flags & NON_GREEDY && self.equal(a.sub[0], b.sub[0])
                }
                Op::Repeat => {
                    a.flags & NON_GREEDY == b.flags & NON_GREEDY
                        && a.min == b.min
                        && a.max == b.max
                        && self.equal(a.sub[0], b.sub[0])
                }
                Op::Capture => a.cap == b.cap && a.name == b.name && self.equal(a.sub[0], b.sub[0]),
                _ => true,
            }
        })
    }

    fn is_char_class(&self, id: Id) -> bool {
        let n = &self.nodes[id];
        (n.op == Op::Literal && n.runes.len() == 1)
            || matches!(n.op, Op::CharClass | Op::AnyCharNotNL | Op::AnyChar)
    }

    fn match_rune(&self, id: Id, r: u32) -> bool {
        let n = &self.nodes[id];
        match n.op {
            Op::Literal => n.runes.len() == 1 && n.runes[0] == r,
            Op::CharClass => n.runes.chunks(2).any(|p| p[0] <= r && r <= p[1]),
            Op::AnyCharNotNL => r != u32::from(b'\n'),
            Op::AnyChar => true,
            _ => false,
        }
    }

    /// dst = dst | src, for dst at least as complex an op as src.
    fn merge_char_class(&mut self, dst: Id, src: Id) {
        match self.op_of(dst) {
            Op::AnyCharNotNL if self.match_rune(src, u32::from(b'\n')) => {
                self.nodes[dst].op = Op::AnyChar;
            }
            Op::CharClass => {
                let s = self.nodes[src].clone();
                let d = &mut self.nodes[dst].runes;
                if s.op == Op::Literal {
                    append_literal(d, s.runes[0], s.flags);
                } else {
                    append_class(d, &s.runes);
                }
            }
            Op::Literal => {
                let s = self.nodes[src].clone();
                let d = &mut self.nodes[dst];
                if s.runes[0] == d.runes[0] && s.flags == d.flags {
                    return;
                }
                d.op = Op::CharClass;
                let (r0, f0) = (d.runes[0], d.flags);
                d.runes.clear();
                append_literal(&mut d.runes, r0, f0);
                append_literal(&mut d.runes, s.runes[0], s.flags);
            }
            _ => {}
        }
    }

    fn parse_vertical_bar(&mut self) -> PResult<()> {
        self.concat()?;
        if !self.swap_vertical_bar() {
            self.op(Op::VerticalBar)?;
        }
        Ok(())
    }

    /// If the top of the stack is an element above a `|`, swaps the two (merging single
    /// characters and classes on both sides into one class).
    fn swap_vertical_bar(&mut self) -> bool {
        let n = self.stack.len();
        if n >= 3
            && self.op_of(self.stack[n - 2]) == Op::VerticalBar
            && self.is_char_class(self.stack[n - 1])
            && self.is_char_class(self.stack[n - 3])
        {
            let mut re1 = self.stack[n - 1];
            let mut re3 = self.stack[n - 3];
            if self.op_of(re1) > self.op_of(re3) {
                std::mem::swap(&mut re1, &mut re3);
                self.stack[n - 3] = re3;
            }
            self.merge_char_class(re3, re1);
            self.reuse(re1);
            self.stack.truncate(n - 1);
            return true;
        }
        if n >= 2 {
            let re1 = self.stack[n - 1];
            let re2 = self.stack[n - 2];
            if self.op_of(re2) == Op::VerticalBar {
                if n >= 3 {
                    self.clean_alt(self.stack[n - 3]);
                }
                self.stack[n - 2] = re1;
                self.stack[n - 1] = re2;
                return true;
            }
        }
        false
    }

    fn parse_right_paren(&mut self) -> PResult<()> {
        self.concat()?;
        if self.swap_vertical_bar() {
            self.stack.pop();
        }
        self.alternate()?;
        let n = self.stack.len();
        if n < 2 {
            return Err(err(ErrorCode::UnexpectedParen, self.whole));
        }
        let (re1, re2) = (self.stack[n - 1], self.stack[n - 2]);
        self.stack.truncate(n - 2);
        if self.op_of(re2) != Op::LeftParen {
            return Err(err(ErrorCode::UnexpectedParen, self.whole));
        }
        self.flags = self.nodes[re2].flags;
        if self.nodes[re2].cap == 0 {
            self.push(re1)?;
        } else {
            let n = &mut self.nodes[re2];
            n.op = Op::Capture;
            n.sub = vec![re1];
            self.push(re2)?;
        }
        Ok(())
    }

    fn run(&mut self, s: &'s str) -> PResult<Id> {
        let mut t = s;
        let mut last_repeat: &'s str = "";
        while let Some(&b0) = t.as_bytes().first() {
            let mut repeat: &'s str = "";
            match b0 {
                b'(' => {
                    if self.flags & PERL_X != 0 && t.as_bytes().get(1) == Some(&b'?') {
                        // Flag changes and non-capturing groups.
                        t = self.parse_perl_flags(t)?;
                    } else {
                        self.num_cap += 1;
                        if let Some(id) = self.op(Op::LeftParen)? {
                            self.nodes[id].cap = self.num_cap;
                        }
                        t = &t[1..];
                    }
                }
                b'|' => {
                    self.parse_vertical_bar()?;
                    t = &t[1..];
                }
                b')' => {
                    self.parse_right_paren()?;
                    t = &t[1..];
                }
                b'^' => {
                    if self.flags & ONE_LINE != 0 {
                        self.op(Op::BeginText)?;
                    } else {
                        self.op(Op::BeginLine)?;
                    }
                    t = &t[1..];
                }
                b'$' => {
                    if self.flags & ONE_LINE != 0 {
                        if let Some(id) = self.op(Op::EndText)? {
                            self.nodes[id].flags |= WAS_DOLLAR;
                        }
                    } else {
                        self.op(Op::EndLine)?;
                    }
                    t = &t[1..];
                }
                b'.' => {
                    if self.flags & DOT_NL != 0 {
                        self.op(Op::AnyChar)?;
                    } else {
                        self.op(Op::AnyCharNotNL)?;
                    }
                    t = &t[1..];
                }
                b'[' => {
                    t = self.parse_class(t)?;
                }
                b'*' | b'+' | b'?' => {
                    let before = t;
                    let op = match b0 {
                        b'*' => Op::Star,
                        b'+' => Op::Plus,
                        _ => Op::Quest,
                    };
                    let after = &t[1..];
                    t = self.repeat(op, 0, 0, before, after, last_repeat)?;
                    repeat = before;
                }
                b'{' => {
                    let before = t;
                    match parse_repeat(t) {
                        None => {
                            // Not a repetition: a literal '{'.
                            self.literal(u32::from(b'{'))?;
                            t = &t[1..];
                        }
                        Some((min, max, after)) => {
                            if !(0..=MAX_REPEAT).contains(&min)
                                || max > MAX_REPEAT
                                || (max >= 0 && min > max)
                            {
                                return Err(err(
                                    ErrorCode::InvalidRepeatSize,
                                    &before[..before.len() - after.len()],
                                ));
                            }
                            t = self.repeat(Op::Repeat, min, max, before, after, last_repeat)?;
                            repeat = before;
                        }
                    }
                }
                b'\\' => {
                    t = self.backslash(t)?;
                }
                _ => {
                    let c = t.chars().next().unwrap_or('\0');
                    self.literal(c as u32)?;
                    t = &t[c.len_utf8()..];
                }
            }
            last_repeat = repeat;
        }
        self.concat()?;
        if self.swap_vertical_bar() {
            self.stack.pop();
        }
        self.alternate()?;
        if self.stack.len() != 1 {
            return Err(err(ErrorCode::MissingParen, s));
        }
        Ok(self.stack[0])
    }

    /// A backslash outside a class: assertions, `\Q...\E`, classes, or an escaped character.
    fn backslash(&mut self, t: &'s str) -> PResult<&'s str> {
        let b = t.as_bytes();
        if self.flags & PERL_X != 0 && b.len() >= 2 {
            match b[1] {
                b'A' => {
                    self.op(Op::BeginText)?;
                    return Ok(&t[2..]);
                }
                b'b' => {
                    self.op(Op::WordBoundary)?;
                    return Ok(&t[2..]);
                }
                b'B' => {
                    self.op(Op::NoWordBoundary)?;
                    return Ok(&t[2..]);
                }
                // Any byte: not supported.
                b'C' => return Err(err(ErrorCode::InvalidEscape, &t[..2])),
                b'Q' => {
                    let body = &t[2..];
                    let (lit, rest) = match body.find("\\E") {
                        Some(i) => (&body[..i], &body[i + 2..]),
                        None => (body, ""),
                    };
                    for c in lit.chars() {
                        self.literal(c as u32)?;
                    }
                    return Ok(rest);
                }
                b'z' => {
                    self.op(Op::EndText)?;
                    return Ok(&t[2..]);
                }
                _ => {}
            }
        }
        let re = self.new_regexp(Op::CharClass);
        self.nodes[re].flags = self.flags;
        if b.len() >= 2 && (b[1] == b'p' || b[1] == b'P') {
            let mut class = vec![];
            if let Some(rest) = self.parse_unicode_class(t, &mut class)? {
                self.nodes[re].runes = class;
                self.push(re)?;
                return Ok(rest);
            }
        }
        let mut class = vec![];
        if let Some(rest) = self.parse_perl_class_escape(t, &mut class) {
            self.nodes[re].runes = class;
            self.push(re)?;
            return Ok(rest);
        }
        self.reuse(re);
        let (c, rest) = parse_escape(t)?;
        self.literal(c)?;
        Ok(rest)
    }

    /// `(?` at the start of `s`: a named group, a flag group or a flag change.
    fn parse_perl_flags(&mut self, s: &'s str) -> PResult<&'s str> {
        let b = s.as_bytes();
        let with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
        let with_name = b.len() > 3 && b[2] == b'<';
        if with_p || with_name {
            let start = if with_p { 4 } else { 3 };
            let Some(end) = s.find('>') else {
                return Err(err(ErrorCode::InvalidNamedCapture, s));
            };
            let capture = &s[..=end];
            let name = s.get(start..end).unwrap_or("");
            if !is_valid_capture_name(name) {
                return Err(err(ErrorCode::InvalidNamedCapture, capture));
            }
            self.num_cap += 1;
            if let Some(id) = self.op(Op::LeftParen)? {
                self.nodes[id].cap = self.num_cap;
                self.nodes[id].name = name.to_string();
            }
            return Ok(&s[end + 1..]);
        }
        let mut t = &s[2..];
        let mut flags = self.flags;
        let mut negated = false;
        let mut saw_flag = false;
        while let Some(c) = t.chars().next() {
            t = &t[c.len_utf8()..];
            match c {
                'i' => {
                    flags |= FOLD_CASE;
                    saw_flag = true;
                }
                'm' => {
                    flags &= !ONE_LINE;
                    saw_flag = true;
                }
                's' => {
                    flags |= DOT_NL;
                    saw_flag = true;
                }
                'U' => {
                    flags |= NON_GREEDY;
                    saw_flag = true;
                }
                '-' => {
                    if negated {
                        break;
                    }
                    negated = true;
                    // Inverted, so that the flags above clear instead of set.
                    flags = !flags;
                    saw_flag = false;
                }
                ':' | ')' => {
                    if negated {
                        if !saw_flag {
                            break;
                        }
                        flags = !flags;
                    }
                    if c == ':' {
                        self.op(Op::LeftParen)?;
                    }
                    self.flags = flags;
                    return Ok(t);
                }
                _ => break,
            }
        }
        Err(err(ErrorCode::InvalidPerlOp, &s[..s.len() - t.len()]))
    }

    /// `\d`, `\s`, `\w` and negations at the start of `s`, appended to `class`.
    fn parse_perl_class_escape(&self, s: &'s str, class: &mut Vec<u32>) -> Option<&'s str> {
        let b = s.as_bytes();
        if self.flags & PERL_X == 0 || b.len() < 2 || b[0] != b'\\' {
            return None;
        }
        let g = unicode::perl_group(b[1])?;
        self.append_group(class, g);
        Some(&s[2..])
    }

    /// `[:alpha:]` and the like at the start of `s`, appended to `class`.
    fn parse_named_class(&self, s: &'s str, class: &mut Vec<u32>) -> PResult<Option<&'s str>> {
        if !s.starts_with("[:") {
            return Ok(None);
        }
        let Some(i) = s[2..].find(":]") else {
            return Ok(None);
        };
        let i = i + 2;
        let (name, rest) = (&s[..i + 2], &s[i + 2..]);
        let Some(g) = unicode::posix_group(name) else {
            return Err(err(ErrorCode::InvalidCharRange, name));
        };
        self.append_group(class, g);
        Ok(Some(rest))
    }

    fn append_group(&self, class: &mut Vec<u32>, (sign, runes): unicode::Group) {
        if self.flags & FOLD_CASE == 0 {
            if sign < 0 {
                append_negated_class(class, runes);
            } else {
                append_class(class, runes);
            }
        } else {
            let mut tmp = vec![];
            append_folded_class(&mut tmp, runes);
            clean_class(&mut tmp);
            if sign < 0 {
                append_negated_class(class, &tmp);
            } else {
                append_class(class, &tmp);
            }
        }
    }

    /// `\pN`, `\p{Name}`, `\PN`, `\p{^Name}` at the start of `s`, appended to `class`.
    fn parse_unicode_class(&self, s: &'s str, class: &mut Vec<u32>) -> PResult<Option<&'s str>> {
        let b = s.as_bytes();
        if self.flags & UNICODE_GROUPS == 0
            || b.len() < 2
            || b[0] != b'\\'
            || (b[1] != b'p' && b[1] != b'P')
        {
            return Ok(None);
        }
        let mut sign = if b[1] == b'P' { -1 } else { 1 };
        let after = &s[2..];
        let c = after.chars().next();
        let (seq, name, rest) = if c != Some('{') {
            // A one-letter name (or none, at the end of the pattern).
            let n = c.map_or(0, char::len_utf8);
            (&s[..2 + n], &after[..n], &after[n..])
        } else {
            let Some(end) = s.find('}') else {
                return Err(err(ErrorCode::InvalidCharRange, s));
            };
            (&s[..=end], &s[3..end], &s[end + 1..])
        };
        let name = match name.strip_prefix('^') {
            Some(n) => {
                sign = -sign;
                n
            }
            None => name,
        };
        let Some(table) = unicode::unicode_table(name) else {
            return Err(err(ErrorCode::InvalidCharRange, seq));
        };
        if self.flags & FOLD_CASE == 0 {
            if sign > 0 {
                append_class(class, &table.runes);
            } else {
                append_negated_class(class, &table.runes);
            }
        } else if sign > 0 {
            append_class(class, &table.folded);
        } else {
            append_negated_class(class, &table.folded);
        }
        Ok(Some(rest))
    }

    /// A bracketed class at the start of `s`; pushes it and returns the rest.
    fn parse_class(&mut self, s: &'s str) -> PResult<&'s str> {
        let mut t = &s[1..];
        let re = self.new_regexp(Op::CharClass);
        self.nodes[re].flags = self.flags;
        let mut class = vec![];
        let mut sign = 1;
        if let Some(rest) = t.strip_prefix('^') {
            sign = -1;
            t = rest;
            // A negated class matches \n only with ClassNL.
            if self.flags & CLASS_NL == 0 {
                class.extend([0xa, 0xa]);
            }
        }
        let mut first = true;
        while t.is_empty() || !t.starts_with(']') || first {
            // POSIX allows an unescaped '-' only first or last; Perl anywhere.
            if t.starts_with('-')
                && self.flags & PERL_X == 0
                && !first
                && (t.len() == 1 || !t[1..].starts_with(']'))
            {
                let next = t[1..].chars().next().map_or(0, char::len_utf8);
                return Err(err(ErrorCode::InvalidCharRange, &t[..1 + next]));
            }
            first = false;
            if t.len() > 2 && t.starts_with("[:") {
                if let Some(rest) = self.parse_named_class(t, &mut class)? {
                    t = rest;
                    continue;
                }
            }
            if let Some(rest) = self.parse_unicode_class(t, &mut class)? {
                t = rest;
                continue;
            }
            if let Some(rest) = self.parse_perl_class_escape(t, &mut class) {
                t = rest;
                continue;
            }
            // A character or a range.
            let range = t;
            let (lo, rest) = parse_class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (h, rest) = parse_class_char(&t[1..], s)?;
                t = rest;
                hi = h;
                if hi < lo {
                    return Err(err(
                        ErrorCode::InvalidCharRange,
                        &range[..range.len() - t.len()],
                    ));
                }
            }
            if self.flags & FOLD_CASE == 0 {
                append_range(&mut class, lo, hi);
            } else {
                append_folded_range(&mut class, lo, hi);
            }
        }
        t = &t[1..];
        clean_class(&mut class);
        if sign < 0 {
            class = negate_class(&class);
        }
        self.nodes[re].runes = class;
        self.push(re)?;
        Ok(t)
    }
}

fn is_valid_capture_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// A decimal number without leading zeros; -1 when it has more than 8 digits.
fn parse_int(s: &str) -> Option<(i32, &str)> {
    let b = s.as_bytes();
    if b.first().is_none_or(|c| !c.is_ascii_digit()) {
        return None;
    }
    if b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit() {
        return None;
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut n: i32 = 0;
    for &d in &b[..digits] {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i32::from(d - b'0');
    }
    Some((n, &s[digits..]))
}

/// `{min}`, `{min,}` (max -1) or `{min,max}` at the start of `s`; min is -1 when a number is
/// too large.
fn parse_repeat(s: &str) -> Option<(i32, i32, &str)> {
    let s = s.strip_prefix('{')?;
    let (mut min, mut s) = parse_int(s)?;
    let max;
    if s.is_empty() {
        return None;
    }
    if let Some(rest) = s.strip_prefix(',') {
        s = rest;
        if s.is_empty() {
            return None;
        }
        if s.starts_with('}') {
            max = -1;
        } else {
            let (m, rest) = parse_int(s)?;
            s = rest;
            max = m;
            if max < 0 {
                min = -1;
            }
        }
    } else {
        max = min;
    }
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

fn unhex(c: char) -> Option<u32> {
    c.to_digit(16)
}

/// Go's `parseEscape`: one escaped character at the start of `s` (which starts with `\`).
fn parse_escape(s: &str) -> PResult<(u32, &str)> {
    let mut t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(err(ErrorCode::TrailingBackslash, ""));
    };
    t = &t[c.len_utf8()..];
    let invalid = |t: &str| Err(err(ErrorCode::InvalidEscape, &s[..s.len() - t.len()]));
    let is_octal = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|d| (b'0'..=b'7').contains(d))
    };
    match c {
        // A single non-zero digit is a backreference: not supported.
        '1'..='7' if !is_octal(t) => invalid(t),
        '0'..='7' => {
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !is_octal(t) {
                    break;
                }
                r = r * 8 + u32::from(t.as_bytes()[0] - b'0');
                t = &t[1..];
            }
            Ok((r, t))
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return invalid(t);
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                // Any number of hex digits in braces, at least one.
                let mut nhex = 0;
                let mut r: u32 = 0;
                loop {
                    let Some(c) = t.chars().next() else {
                        return invalid(t);
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = unhex(c) else {
                        return invalid(t);
                    };
                    r = r * 16 + v;
                    if r > MAX_RUNE {
                        return invalid(t);
                    }
                    nhex += 1;
                }
                if nhex == 0 {
                    return invalid(t);
                }
                return Ok((r, t));
            }
            // Two hex digits (the second is consumed even when the first is not one).
            let x = unhex(c);
            let y = match t.chars().next() {
                Some(c2) => {
                    t = &t[c2.len_utf8()..];
                    unhex(c2)
                }
                None => None,
            };
            match (x, y) {
                (Some(x), Some(y)) => Ok((x * 16 + y, t)),
                _ => invalid(t),
            }
        }
        'a' => Ok((7, t)),
        'f' => Ok((0xc, t)),
        'n' => Ok((0xa, t)),
        'r' => Ok((0xd, t)),
        't' => Ok((0x9, t)),
        'v' => Ok((0xb, t)),
        // Escaped punctuation stands for itself.
        _ if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c as u32, t)),
        _ => invalid(t),
    }
}

/// One character of a class; `whole` is the class for the missing-bracket error.
fn parse_class_char<'a>(s: &'a str, whole: &str) -> PResult<(u32, &'a str)> {
    let Some(c) = s.chars().next() else {
        return Err(err(ErrorCode::MissingBracket, whole));
    };
    if c == '\\' {
        return parse_escape(s);
    }
    Ok((c as u32, &s[c.len_utf8()..]))
}

fn min_fold_rune(r: u32) -> u32 {
    if !(MIN_FOLD..=MAX_FOLD).contains(&r) {
        return r;
    }
    let mut m = r;
    let mut f = unicode::simple_fold(r);
    while f != r {
        m = m.min(f);
        f = unicode::simple_fold(f);
    }
    m
}

fn append_literal(r: &mut Vec<u32>, x: u32, flags: u16) {
    if flags & FOLD_CASE != 0 {
        append_folded_range(r, x, x);
    } else {
        append_range(r, x, x);
    }
}

/// Appends lo-hi, extending the last or next-to-last range when it overlaps or abuts.
pub(crate) fn append_range(r: &mut Vec<u32>, lo: u32, hi: u32) {
    let n = r.len();
    for i in [2, 4] {
        if n >= i {
            let (rlo, rhi) = (r[n - i], r[n - i + 1]);
            if lo <= rhi + 1 && rlo <= hi + 1 {
                if lo < rlo {
                    r[n - i] = lo;
                }
                if hi > rhi {
                    r[n - i + 1] = hi;
                }
                return;
            }
        }
    }
    r.extend([lo, hi]);
}

/// Appends lo-hi and every rune case-folding-equivalent to one in it.
fn append_folded_range(r: &mut Vec<u32>, mut lo: u32, mut hi: u32) {
    if lo <= MIN_FOLD && hi >= MAX_FOLD {
        // Folding cannot add anything.
        append_range(r, lo, hi);
        return;
    }
    if hi < MIN_FOLD || lo > MAX_FOLD {
        append_range(r, lo, hi);
        return;
    }
    if lo < MIN_FOLD {
        append_range(r, lo, MIN_FOLD - 1);
        lo = MIN_FOLD;
    }
    if hi > MAX_FOLD {
        append_range(r, MAX_FOLD + 1, hi);
        hi = MAX_FOLD;
    }
    for c in lo..=hi {
        append_range(r, c, c);
        let mut f = unicode::simple_fold(c);
        while f != c {
            append_range(r, f, f);
            f = unicode::simple_fold(f);
        }
    }
}

fn append_class(r: &mut Vec<u32>, x: &[u32]) {
    for p in x.chunks(2) {
        append_range(r, p[0], p[1]);
    }
}

fn append_folded_class(r: &mut Vec<u32>, x: &[u32]) {
    for p in x.chunks(2) {
        append_folded_range(r, p[0], p[1]);
    }
}

/// Appends the negation of the clean class `x`.
fn append_negated_class(r: &mut Vec<u32>, x: &[u32]) {
    let mut next_lo = 0;
    for p in x.chunks(2) {
        if next_lo < p[0] {
            append_range(r, next_lo, p[0] - 1);
        }
        next_lo = p[1] + 1;
    }
    if next_lo <= MAX_RUNE {
        append_range(r, next_lo, MAX_RUNE);
    }
}

/// The negation of a clean class.
fn negate_class(r: &[u32]) -> Vec<u32> {
    let mut out = vec![];
    let mut next_lo = 0;
    for p in r.chunks(2) {
        if next_lo < p[0] {
            out.extend([next_lo, p[0] - 1]);
        }
        next_lo = p[1] + 1;
    }
    if next_lo <= MAX_RUNE {
        out.extend([next_lo, MAX_RUNE]);
    }
    out
}
