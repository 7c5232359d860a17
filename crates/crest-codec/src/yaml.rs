//! YAML request bodies decoded with bounded work and memory.
//!
//! serde_yaml_ng reads a whole document's events before it deserializes any of it, and two
//! things in YAML expand on the way:
//!
//! - **Nesting.** libyaml walks its stack of possible simple keys (one per open flow
//!   collection) for every token it scans, so a document nested n levels deep in flow style
//!   costs O(n²) (`{a: {a: ...` 100,000 levels deep took over a minute in a debug build, `a: [[[`
//!   twenty seconds), all before serde_yaml_ng's recursion limit of 128 refuses it. JSON bodies
//!   are refused at serde_json's limit of 128 as the parser meets it.
//! - **Aliases.** Each alias is deserialized as a copy of its anchor's node, so a small document
//!   of aliases to aliases ("billion laughs") expands exponentially, and one of n aliases to an
//!   n-element list quadratically (serde_yaml_ng's repetition limit counts alias jumps, not the
//!   nodes they copy, so it lets the quadratic case through).
//!
//! [`check`] streams the document's events first (libyaml's parser stops where the caller stops
//! reading) and refuses it at the first collection nested deeper than serde_yaml_ng would
//! accept, worded as serde_yaml_ng words it, so YAML gets JSON's depth limit at the same cost;
//! and it counts the nodes decoding would produce, alias expansions included, without expanding
//! anything, refusing the document as goyaml.v2 (sigs.k8s.io/yaml's parser, in kube-apiserver)
//! does: `yaml: document contains excessive aliasing` once expansions make up too large a share
//! of the decoded nodes, and `yaml: anchor 'a' value contains itself` for an alias inside its own
//! anchor (which serde_yaml_ng would expand 128 levels deep before refusing).
//!
//! kube-apiserver's limits are goyaml.v2's: 10,000 levels of flow nesting and 10,000 of block
//! indentation (`exceeded max depth of 10000`), and 10,000 for JSON in encoding/json; Crest's
//! decoders have always stopped at 128 for both, so that is the limit here.

use crate::libyaml::{Event, Mark, Parser};
use serde_json::Value;
use std::collections::HashMap;

/// serde_yaml_ng's (and serde_json's) recursion limit: collections nested deeper are refused.
pub const MAX_DEPTH: usize = 128;

/// Decodes a YAML body (its one document) into JSON, after [`check`]. The error is the
/// decoder's message, for the caller to wrap as upstream wraps its converter's errors.
pub fn from_slice(body: &[u8]) -> Result<Value, String> {
    check(body)?;
    serde_yaml_ng::from_slice(body).map_err(|e| e.to_string())
}

/// Refuses a YAML body nested deeper than [`MAX_DEPTH`] or expanding too much through aliases
/// (see the module's documentation), reading its events once and stopping at the first
/// problem. Syntax errors pass: the decoder reports them in its own words.
pub fn check(body: &[u8]) -> Result<(), String> {
    let Some(mut parser) = Parser::new(body, false) else {
        return Ok(());
    };
    let mut doc = DocumentCheck::default();
    loop {
        let Some((event, mark)) = parser.next() else {
            return Ok(());
        };
        match event {
            Event::StreamEnd => return Ok(()),
            // Each document is decoded on its own (anchors do not cross documents).
            Event::DocumentStart => {
                doc = DocumentCheck::default();
                doc.count.node()?;
            }
            _ => doc.event(event, mark)?,
        }
    }
}

/// An open collection: the nodes it holds so far (itself included, aliases expanded) and the
/// index of its anchor in [`DocumentCheck::anchored`].
struct Open {
    nodes: u64,
    anchored: Option<usize>,
}

#[derive(Default)]
struct DocumentCheck {
    open: Vec<Open>,
    /// The anchored node each anchor names: the one whose definition started last, as the
    /// decoders register an anchor when its node starts (so `&a [&a 1, *a]` names the `1`).
    anchors: HashMap<String, usize>,
    /// The expanded node count of each anchored node; `None` while it is open.
    anchored: Vec<Option<u64>>,
    count: DecodeCount,
}

impl DocumentCheck {
    fn event(&mut self, event: Event, mark: Mark) -> Result<(), String> {
        match event {
            Event::Scalar { anchor, .. } => {
                self.count.node()?;
                if let Some(a) = anchor {
                    self.anchors.insert(a, self.anchored.len());
                    self.anchored.push(Some(1));
                }
                self.add(1);
            }
            Event::SequenceStart { anchor } | Event::MappingStart { anchor } => {
                if self.open.len() >= MAX_DEPTH {
                    return Err(format!(
                        "recursion limit exceeded at line {} column {}",
                        mark.line + 1,
                        mark.column + 1
                    ));
                }
                self.count.node()?;
                let anchored = anchor.map(|a| {
                    self.anchors.insert(a, self.anchored.len());
                    self.anchored.push(None);
                    self.anchored.len() - 1
                });
                self.open.push(Open { nodes: 1, anchored });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(done) = self.open.pop() {
                    if let Some(slot) = done.anchored.and_then(|i| self.anchored.get_mut(i)) {
                        *slot = Some(done.nodes);
                    }
                    self.add(done.nodes);
                }
            }
            Event::Alias { anchor } => {
                // An unknown anchor expands to nothing here (the decoder refuses it).
                let nodes = match self.anchors.get(&anchor).map(|&i| self.anchored.get(i)) {
                    Some(Some(Some(n))) => *n,
                    Some(Some(None)) => {
                        return Err(format!("yaml: anchor '{anchor}' value contains itself"))
                    }
                    _ => 0,
                };
                self.count.alias(nodes)?;
                self.add(nodes.saturating_add(1));
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart | Event::DocumentEnd => {}
        }
        Ok(())
    }

    /// Adds a finished node's count to the collection holding it.
    fn add(&mut self, nodes: u64) {
        if let Some(parent) = self.open.last_mut() {
            parent.nodes = parent.nodes.saturating_add(nodes);
        }
    }
}

/// goyaml.v2's count of decode operations (`decodeCount`) and of those that come from alias
/// expansion (`aliasCount`), and its verdict on their ratio.
#[derive(Default)]
struct DecodeCount {
    decoded: u64,
    aliased: u64,
}

impl DecodeCount {
    /// A node of the document itself.
    fn node(&mut self) -> Result<(), String> {
        self.decoded = self.decoded.saturating_add(1);
        self.verdict()
    }

    /// An alias (itself a node of the document) and the `nodes` its expansion decodes. Within
    /// an expansion the aliased share only grows while the allowed share only shrinks, so
    /// judging at its end is judging at every one of its steps, as goyaml.v2 does.
    fn alias(&mut self, nodes: u64) -> Result<(), String> {
        self.node()?;
        self.decoded = self.decoded.saturating_add(nodes);
        self.aliased = self.aliased.saturating_add(nodes);
        self.verdict()
    }

    fn verdict(&self) -> Result<(), String> {
        if self.aliased > 100
            && self.decoded > 1000
            && self.aliased as f64 / self.decoded as f64 > allowed_alias_ratio(self.decoded)
        {
            return Err("yaml: document contains excessive aliasing".into());
        }
        Ok(())
    }
}

/// goyaml.v2's `allowedAliasRatio`: up to 99% of a small document's decoded nodes may come from
/// aliases, 10% of a large one's, scaling between 400,000 and 4,000,000 decoded nodes (at most
/// about 400,000 nodes from aliases in all).
fn allowed_alias_ratio(decoded: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decoded <= LOW {
        0.99
    } else if decoded >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decoded - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// What serde_yaml_ng alone answers (no check first).
    fn serde_only(body: &str) -> Result<Value, String> {
        serde_yaml_ng::from_slice(body.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn ordinary_documents_pass_unchanged() {
        let docs = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: y}\ndata:\n  k: v\n",
            "a: &x [1, 2]\nb: *x\nc: &y {p: *x}\nd: [*y, *y]\n",
            "- - - - x\n- [a, {b: [c]}]\n",
            "",
            "{\"a\": [1, 2, {\"b\": null}]}",
            "a: 'quoted [ not { nesting'\nb: \"also [[[\"\nc: |\n  [[[[\n",
        ];
        for d in docs {
            assert_eq!(from_slice(d.as_bytes()), serde_only(d), "{d:?}");
        }
    }

    /// At the limit the document decodes; one level deeper it is refused with the message
    /// serde_yaml_ng gives, at the same place, for flow and block nesting and their mixes.
    #[test]
    fn the_depth_limit_is_the_decoders_with_its_message() {
        let shapes: Vec<Box<dyn Fn(usize) -> String>> = vec![
            Box::new(|n| format!("{}{}", "[".repeat(n), "]".repeat(n))),
            Box::new(|n| format!("{}x{}", "{a: ".repeat(n), "}".repeat(n))),
            Box::new(|n| format!("{}x\n", "- ".repeat(n))),
            Box::new(|n| format!("a: {}{}", "[".repeat(n - 1), "]".repeat(n - 1))),
            Box::new(|n| {
                let mut s = String::new();
                for i in 0..n {
                    s.push_str(&" ".repeat(i));
                    s.push_str("k:\n");
                }
                s
            }),
            Box::new(|n| {
                format!(
                    "- {}x{}\n",
                    "{a: [".repeat((n - 1) / 2),
                    "]}".repeat((n - 1) / 2)
                )
            }),
        ];
        for (i, shape) in shapes.iter().enumerate() {
            let ok = shape(MAX_DEPTH);
            assert!(from_slice(ok.as_bytes()).is_ok(), "shape {i} at the limit");
            let deep = shape(MAX_DEPTH + 2);
            let want = serde_only(&deep).expect_err("too deep for serde_yaml_ng");
            assert!(want.starts_with("recursion limit exceeded"), "{want}");
            assert_eq!(from_slice(deep.as_bytes()), Err(want), "shape {i}");
        }
    }

    /// 100,000 levels, in the shapes that make libyaml quadratic, are refused in about the
    /// time 128 levels take (seconds to minutes before).
    #[test]
    fn very_deep_documents_are_refused_fast() {
        let n = 100_000;
        let docs = [
            format!("{}x{}", "{a: ".repeat(n), "}".repeat(n)),
            format!("a: {}", "[".repeat(n)),
            "[".repeat(n),
            format!("{}x\n", "- ".repeat(n)),
        ];
        for d in &docs {
            let start = Instant::now();
            let e = from_slice(d.as_bytes()).expect_err("too deep");
            assert!(
                e.starts_with("recursion limit exceeded at line 1 column "),
                "{e}"
            );
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "{:?}",
                start.elapsed()
            );
        }
    }

    fn laughs(levels: usize, width: usize) -> String {
        let mut s = format!("l0: &l0 [{}]\n", vec!["lol"; width].join(", "));
        for i in 1..levels {
            s.push_str(&format!(
                "l{i}: &l{i} [{}]\n",
                vec![format!("*l{}", i - 1); width].join(", ")
            ));
        }
        s
    }

    #[test]
    fn billion_laughs_is_refused_without_expanding() {
        let start = Instant::now();
        assert_eq!(
            from_slice(laughs(9, 9).as_bytes()),
            Err("yaml: document contains excessive aliasing".into())
        );
        assert!(start.elapsed() < Duration::from_secs(2));
        // A few levels expand little: decoded.
        let v = from_slice(laughs(3, 9).as_bytes()).expect("small expansion");
        assert_eq!(v["l2"].as_array().map(Vec::len), Some(9));
    }

    /// n aliases of an n-element list: quadratic, which serde_yaml_ng's repetition limit
    /// (100 alias jumps per event) lets through.
    #[test]
    fn quadratic_aliasing_is_refused() {
        let n = 5_000;
        let body = format!(
            "a: &a [{}]\nb: [{}]\n",
            vec!["1"; n].join(","),
            vec!["*a"; n].join(",")
        );
        assert_eq!(
            from_slice(body.as_bytes()),
            Err("yaml: document contains excessive aliasing".into())
        );
    }

    #[test]
    fn an_alias_inside_its_own_anchor_is_refused() {
        let body = format!("a: &a [{}, *a]\n", vec!["1"; 1000].join(","));
        assert_eq!(
            from_slice(body.as_bytes()),
            Err("yaml: anchor 'a' value contains itself".into())
        );
        // An anchor names the node whose definition started last: the inner `1` here, so
        // this is no recursion.
        let v = from_slice(b"a: &a [&a 1, *a]\nb: *a\n").expect("no recursion");
        assert_eq!(v["a"], serde_json::json!([1, 1]));
        assert_eq!(v["b"], serde_json::json!(1));
    }

    #[test]
    fn goyaml_alias_ratio() {
        assert_eq!(allowed_alias_ratio(1), 0.99);
        assert_eq!(allowed_alias_ratio(400_000), 0.99);
        assert!((allowed_alias_ratio(2_200_000) - 0.545).abs() < 1e-9);
        assert_eq!(allowed_alias_ratio(4_000_000), 0.10);
        assert_eq!(allowed_alias_ratio(u64::MAX), 0.10);
    }

    #[test]
    fn later_documents_are_checked_too() {
        // serde_yaml_ng parses the next document to refuse a stream of several: it must not
        // get a deep one.
        let body = format!("a: 1\n---\n{}", "[".repeat(100_000));
        let e = from_slice(body.as_bytes()).expect_err("refused");
        assert!(
            e.starts_with("recursion limit exceeded at line 3 column "),
            "{e}"
        );
    }
}
