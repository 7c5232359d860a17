//! The module graphs of the pure crates are acyclic, as Go's package graph must be (cel-go's
//! packages are the model for crest-cel's modules).
//!
//! Each file of a crate's `src/` is a node; an edge a -> b is a path in a's code (`use crate::..`,
//! `crate::x::..`, `super::..`, `self::..`, or a child module's name in its parent) that names an
//! item of b. `mod child;` is not an edge, and lib.rs's `pub use` re-exports are the crate's
//! facade, not edges: a path to a re-exported name goes to the file that defines it. A cycle
//! of two or more files fails the test, with the names that make each edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates checked, relative to this crate's directory.
const CRATES: &[&str] = &[
    ".",
    "../crest-core-api",
    "../crest-goregexp",
    "../crest-gofmt",
];

#[test]
fn pure_crates_have_no_module_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    for krate in CRATES {
        let src = root.join(krate).join("src");
        let mut files = Vec::new();
        collect_rs(&src, &src, &mut files);
        assert!(!files.is_empty(), "no sources under {}", src.display());
        let graph = module_graph(&files);
        for cycle in cycles(&graph) {
            failures.push(format!("{}: {}", src.display(), describe(&graph, &cycle)));
        }
    }
    assert!(
        failures.is_empty(),
        "module cycles:\n{}",
        failures.join("\n")
    );
}

#[test]
fn finds_a_cycle_and_ignores_mod_declarations_and_reexports() {
    let files = vec![
        (
            "lib.rs".to_string(),
            "mod a;\nmod b;\npub use a::A;\npub use b::B;\n".to_string(),
        ),
        (
            "a.rs".to_string(),
            "pub struct A;\n#[cfg(test)]\nmod tests { use super::*; }\n".to_string(),
        ),
        (
            "b.rs".to_string(),
            "use crate::A;\npub struct B;\n".to_string(),
        ),
    ];
    let graph = module_graph(&files);
    assert!(cycles(&graph).is_empty(), "{graph:?}");
    assert_eq!(graph["b.rs"]["a.rs"], BTreeSet::from(["A".to_string()]));

    let mut cyclic = files.clone();
    cyclic[1]
        .1
        .push_str("fn f() -> crate::b::B { crate::b::B }\n");
    let graph = module_graph(&cyclic);
    assert_eq!(
        cycles(&graph),
        vec![vec!["a.rs".to_string(), "b.rs".to_string()]]
    );

    let mut nested = vec![
        ("lib.rs".to_string(), "mod p;\n".to_string()),
        (
            "p/mod.rs".to_string(),
            "mod q;\nuse q::Q;\npub struct P;\n".to_string(),
        ),
        (
            "p/q.rs".to_string(),
            "use super::{P as _, self as _};\npub struct Q;\n".to_string(),
        ),
    ];
    let graph = module_graph(&nested);
    assert_eq!(
        cycles(&graph),
        vec![vec!["p/mod.rs".to_string(), "p/q.rs".to_string()]]
    );
    nested[1].1 = "mod q;\npub struct P; // q::Q\nconst S: &str = \"q::Q\";\n".to_string();
    assert!(cycles(&module_graph(&nested)).is_empty());
}

fn collect_rs(dir: &Path, src: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.map(|e| e.path())
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        })
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_rs(&path, src, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(src)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((rel, text));
        }
    }
}

/// file -> file -> the names that make the edge.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The module path of a file relative to `src/`: lib.rs is the root, a/mod.rs and a.rs are `a`.
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let mut segs: Vec<String> = stem.split('/').map(str::to_string).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    segs
}

fn module_graph(files: &[(String, String)]) -> Graph {
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|(f, _)| (module_of(f), f.clone()))
        .collect();
    let lexed: BTreeMap<&str, Vec<Tok>> = files.iter().map(|(f, t)| (f.as_str(), lex(t))).collect();
    let root_file = modules.get(&Vec::new()).cloned();
    // Names the root re-exports (`pub use a::b::Name;`), with the path they come from.
    let mut reexports: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(root) = &root_file {
        for u in uses(&lexed[root.as_str()]) {
            if u.public {
                if let Some(name) = u.alias.clone().or_else(|| u.path.last().cloned()) {
                    reexports.insert(name, u.path.clone());
                }
            }
        }
    }
    let top: BTreeSet<String> = modules
        .keys()
        .filter(|m| m.len() == 1)
        .map(|m| m[0].clone())
        .collect();
    let mut graph = Graph::new();
    for (file, _) in files {
        let toks = &lexed[file.as_str()];
        let file_mod = module_of(file);
        let edges = graph.entry(file.clone()).or_default();
        for (scope, path, public_use) in references(toks) {
            if public_use && Some(file) == root_file.as_ref() {
                continue;
            }
            let mut module = file_mod.clone();
            module.extend(scope.iter().cloned());
            let Some(mut abs) =
                absolute(&module, &path, &children(&modules, &module, toks, &scope))
            else {
                continue;
            };
            // A name the root re-exports stands for the path it comes from.
            if let Some(first) = abs.first() {
                if !modules.contains_key(&vec![first.clone()]) {
                    if let Some(from) = reexports.get(first) {
                        let rest = abs[1..].to_vec();
                        abs = absolute(&[], from, &top).unwrap_or_default();
                        abs.extend(rest);
                    }
                }
            }
            let mut prefix = abs.len();
            let target = loop {
                if let Some(f) = modules.get(&abs[..prefix]) {
                    break f.clone();
                }
                if prefix == 0 {
                    break String::new();
                }
                prefix -= 1;
            };
            if target.is_empty() || &target == file {
                continue;
            }
            let name = abs
                .get(prefix..)
                .filter(|r| !r.is_empty())
                .map(|r| r.join("::"));
            edges
                .entry(target)
                .or_default()
                .insert(name.unwrap_or_else(|| "*".to_string()));
        }
    }
    graph
}

/// The child modules visible by bare name in `module`: file modules one level down, and the
/// inline modules declared in the file at that scope.
fn children(
    modules: &BTreeMap<Vec<String>, String>,
    module: &[String],
    toks: &[Tok],
    scope: &[String],
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = modules
        .keys()
        .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
        .filter_map(|m| m.last().cloned())
        .collect();
    out.extend(inline_modules(toks).into_iter().filter_map(|m| {
        (m.len() == scope.len() + 1 && m.starts_with(scope)).then(|| m[scope.len()].clone())
    }));
    out
}

fn absolute(
    module: &[String],
    path: &[String],
    children: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut base, mut rest) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (module.to_vec(), &path[1..]),
        "super" => (module.to_vec(), path),
        name if children.contains(name) => (module.to_vec(), path),
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Punct(char),
}

/// Tokens with comments, strings and character literals removed.
fn lex(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'"' {
            i = skip_string(b, i + 1);
        } else if (c == b'r' || (c == b'b' && b.get(i + 1) == Some(&b'r')))
            && matches!(b.get(i + 1 + usize::from(c == b'b')), Some(b'"' | b'#'))
        {
            // Raw string: r"..", r#".."#, br"..".
            let mut j = i + 1 + usize::from(c == b'b');
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(Tok::Ident(
                    String::from_utf8_lossy(&b[i..i + 1]).into_owned(),
                ));
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
        } else if c == b'b' && b.get(i + 1) == Some(&b'"') {
            i = skip_string(b, i + 2);
        } else if c == b'\'' || (c == b'b' && b.get(i + 1) == Some(&b'\'')) {
            // A character literal, or a lifetime / label.
            let j = i + 1 + usize::from(c == b'b');
            if b.get(j) == Some(&b'\\') {
                let mut k = j + 2;
                while k < b.len() && b[k] != b'\'' {
                    k += 1;
                }
                i = k + 1;
            } else {
                let ch_len = src[j..].chars().next().map_or(1, char::len_utf8);
                if b.get(j + ch_len) == Some(&b'\'') {
                    i = j + ch_len + 1;
                } else {
                    i = j; // lifetime: the name lexes as an identifier
                }
            }
        } else if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 {
            let start = i;
            while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric() || b[i] >= 0x80) {
                i += 1;
            }
            let word = &src[start..i];
            out.push(Tok::Ident(
                word.strip_prefix("r#").unwrap_or(word).to_string(),
            ));
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push(Tok::Path);
            i += 2;
        } else if c.is_ascii_whitespace() || c.is_ascii_digit() {
            i += 1;
        } else {
            out.push(Tok::Punct(c as char));
            i += 1;
        }
    }
    out
}

fn skip_string(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// The inline modules (`mod name { .. }`) of a file, as paths within it.
fn inline_modules(toks: &[Tok]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    walk(toks, |_, scope| out.push(scope.to_vec()));
    out.sort();
    out.dedup();
    out
}

/// Calls `at(index, scope)` at each token, with the inline module scope it is in.
fn walk(toks: &[Tok], mut at: impl FnMut(usize, &[String])) {
    let mut scope: Vec<String> = Vec::new();
    let mut opened: Vec<Option<String>> = Vec::new(); // per open brace: the module it opened
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Ident(m) if m == "mod" => {
                if let (Some(name), Some(Tok::Punct('{'))) =
                    (ident(toks.get(i + 1)), toks.get(i + 2))
                {
                    scope.push(name.to_string());
                    opened.push(Some(name.to_string()));
                    at(i, &scope);
                    i += 3;
                    continue;
                }
            }
            Tok::Punct('{') => opened.push(None),
            Tok::Punct('}') => {
                if let Some(Some(_)) = opened.pop() {
                    scope.pop();
                }
            }
            _ => {}
        }
        at(i, &scope);
        i += 1;
    }
}

struct Use {
    path: Vec<String>,
    alias: Option<String>,
    public: bool,
}

/// The `use` items of a file's top level (scope ignored: used for the root's re-exports).
fn uses(toks: &[Tok]) -> Vec<Use> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if ident(toks.get(i)) == Some("use") {
            let public = is_pub_before(toks, i);
            let mut leaves = Vec::new();
            i = use_tree(toks, i + 1, &[], &mut leaves);
            out.extend(leaves.into_iter().map(|(path, alias)| Use {
                path,
                alias,
                public,
            }));
        } else {
            i += 1;
        }
    }
    out
}

fn is_pub_before(toks: &[Tok], i: usize) -> bool {
    // `pub use`, `pub(crate) use`, `pub(super) use`, `pub(in a::b) use`
    let mut j = i;
    if j > 0 && toks[j - 1] == Tok::Punct(')') {
        while j > 0 && toks[j - 1] != Tok::Punct('(') {
            j -= 1;
        }
        j = j.saturating_sub(1);
    }
    j > 0 && ident(toks.get(j - 1)) == Some("pub")
}

/// Parses a use tree from `i`, pushing each leaf's full path; returns the index after it.
fn use_tree(
    toks: &[Tok],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix.to_vec();
    if toks.get(i) == Some(&Tok::Path) {
        i += 1; // `use ::std::..`
    }
    loop {
        match toks.get(i) {
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                i += 1;
                if toks.get(i) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                let mut alias = None;
                if ident(toks.get(i)) == Some("as") {
                    alias = ident(toks.get(i + 1)).map(str::to_string);
                    i += 2;
                }
                out.push((path, alias));
                return i;
            }
            Some(Tok::Punct('*')) => {
                path.push("*".to_string());
                out.push((path, None));
                return i + 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        None => return i,
                        _ => i = use_tree(toks, i, &path, out),
                    }
                }
            }
            _ => return i,
        }
    }
}

/// Every path in a file that may name an item of the crate: the leaves of `use` trees, and
/// paths starting with `crate`, `super`, `self` or any identifier followed by `::` elsewhere
/// (resolved later against the child modules). Each with its inline module scope and whether
/// it comes from a `pub use`.
fn references(toks: &[Tok]) -> Vec<(Vec<String>, Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut skip_to = 0;
    walk(toks, |i, scope| {
        if i < skip_to {
            return;
        }
        if ident(toks.get(i)) == Some("use") {
            let public = is_pub_before(toks, i);
            let mut leaves = Vec::new();
            skip_to = use_tree(toks, i + 1, &[], &mut leaves);
            out.extend(leaves.into_iter().map(|(p, _)| (scope.to_vec(), p, public)));
            return;
        }
        // A path in code: an identifier after no `::`, followed by `::`.
        if let Some(first) = ident(toks.get(i)) {
            if toks.get(i + 1) != Some(&Tok::Path) || (i > 0 && toks[i - 1] == Tok::Path) {
                return;
            }
            let mut path = vec![first.to_string()];
            let mut j = i + 1;
            while toks.get(j) == Some(&Tok::Path) {
                match ident(toks.get(j + 1)) {
                    Some(s) => path.push(s.to_string()),
                    None => break,
                }
                j += 2;
            }
            skip_to = j;
            out.push((scope.to_vec(), path, false));
        }
    });
    out
}

/// The strongly connected components of two or more files (Tarjan), each sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(edges) = s.graph.get(v) {
            for w in edges.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// A cycle's files with the edges among them.
fn describe(graph: &Graph, cycle: &[String]) -> String {
    let mut parts = Vec::new();
    for a in cycle {
        for (b, names) in &graph[a] {
            if cycle.contains(b) {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                parts.push(format!("{a} -> {b} ({})", names.join(", ")));
            }
        }
    }
    format!("[{}]\n    {}", cycle.join(", "), parts.join("\n    "))
}
