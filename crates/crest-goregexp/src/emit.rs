//! A parsed Go expression written in the `regex` crate's syntax with Go's meaning: classes
//! as explicit ranges (Go's `\d`, `\w`, `\s`, `\b` are ASCII; Go's Unicode tables and case
//! folding), literals escaped, `(?i)` literals as their folding orbits, flags resolved
//! (`$` is `\z` unless multi-line, `.` excludes `\n` unless `s`), capture names dropped (Go
//! allows duplicates). The `regex` crate's leftmost-first matching is Go's.

use crate::parse::{Id, Op, Tree, FOLD_CASE, NON_GREEDY};
use crate::unicode::{self, MAX_RUNE};

/// A class that matches nothing.
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";

pub(crate) fn emit(tree: &Tree) -> String {
    let mut out = String::new();
    node(tree, tree.root, &mut out);
    out
}

fn push_char(out: &mut String, r: u32) {
    match char::from_u32(r) {
        Some(c) if c.is_ascii_alphanumeric() => out.push(c),
        _ => out.push_str(&format!("\\x{{{r:X}}}")),
    }
}

/// `[...]` of a rune class, without the surrogates (no `str` holds them).
fn push_class(out: &mut String, runes: &[u32]) {
    let mut ranges = vec![];
    for p in runes.chunks(2) {
        let (lo, hi) = (p[0], p[1].min(MAX_RUNE));
        if lo > hi {
            continue;
        }
        if hi < 0xD800 || lo > 0xDFFF {
            ranges.push((lo, hi));
            continue;
        }
        if lo < 0xD800 {
            ranges.push((lo, 0xD7FF));
        }
        if hi > 0xDFFF {
            ranges.push((0xE000, hi));
        }
    }
    if ranges.is_empty() {
        out.push_str(NOTHING);
        return;
    }
    out.push('[');
    for (lo, hi) in ranges {
        out.push_str(&format!("\\x{{{lo:X}}}"));
        if hi != lo {
            out.push_str(&format!("-\\x{{{hi:X}}}"));
        }
    }
    out.push(']');
}

fn push_rune(out: &mut String, r: u32, fold: bool) {
    if (0xD800..=0xDFFF).contains(&r) {
        out.push_str(NOTHING);
    } else if fold && unicode::simple_fold(r) != r {
        push_class(out, &unicode::fold_closure(&[r, r]));
    } else {
        push_char(out, r);
    }
}

/// Whether the emitted form of `id` is one atom (a repetition may follow it).
fn is_atom(tree: &Tree, id: Id) -> bool {
    let n = tree.node(id);
    match n.op {
        Op::Literal => n.runes.len() == 1,
        Op::NoMatch
        | Op::CharClass
        | Op::AnyCharNotNL
        | Op::AnyChar
        | Op::BeginLine
        | Op::EndLine
        | Op::BeginText
        | Op::EndText
        | Op::WordBoundary
        | Op::NoWordBoundary
        | Op::Capture
        | Op::EmptyMatch => true,
        _ => false,
    }
}

fn group(tree: &Tree, id: Id, out: &mut String) {
    out.push_str("(?:");
    node(tree, id, out);
    out.push(')');
}

fn node(tree: &Tree, id: Id, out: &mut String) {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        let n = tree.node(id);
        match n.op {
            Op::NoMatch => out.push_str(NOTHING),
            Op::EmptyMatch => out.push_str("(?:)"),
            Op::Literal => {
                for &r in &n.runes {
                    push_rune(out, r, n.flags & FOLD_CASE != 0);
                }
            }
            Op::CharClass => push_class(out, &n.runes),
            Op::AnyCharNotNL => out.push_str(r"[^\n]"),
            Op::AnyChar => out.push_str("(?s:.)"),
            Op::BeginLine => out.push_str("(?m:^)"),
            Op::EndLine => out.push_str("(?m:$)"),
            Op::BeginText => out.push_str(r"\A"),
            Op::EndText => out.push_str(r"\z"),
            Op::WordBoundary => out.push_str(r"(?-u:\b)"),
            Op::NoWordBoundary => out.push_str(r"(?-u:\B)"),
            Op::Capture => {
                out.push('(');
                if let Some(&s) = n.sub.first() {
                    node(tree, s, out);
                }
                out.push(')');
            }
            Op::Star | Op::Plus | Op::Quest | Op::Repeat => {
                let Some(&s) = n.sub.first() else {
                    return;
                };
                if is_atom(tree, s) {
                    node(tree, s, out);
                } else {
                    group(tree, s, out);
                }
                match n.op {
                    Op::Star => out.push('*'),
                    Op::Plus => out.push('+'),
                    Op::Quest => out.push('?'),
                    _ if n.max == -1 => out.push_str(&format!("{{{},}}", n.min)),
                    _ if n.max == n.min => out.push_str(&format!("{{{}}}", n.min)),
                    _ => out.push_str(&format!("{{{},{}}}", n.min, n.max)),
                }
                if n.flags & NON_GREEDY != 0 {
                    out.push('?');
                }
            }
            Op::Concat => {
                for &s in &n.sub {
                    if tree.node(s).op == Op::Alternate {
                        group(tree, s, out);
                    } else {
                        node(tree, s, out);
                    }
                }
            }
            Op::Alternate => {
                for (i, &s) in n.sub.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    node(tree, s, out);
                }
            }
            Op::LeftParen | Op::VerticalBar => {}
        }
    })
}
