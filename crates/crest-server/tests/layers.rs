//! The layer folders of `src/` import only the layers below them (ARCHITECTURE.md, "Layers
//! inside crest-server"), and the files inside one layer import each other without cycles: no
//! import cycles, and a newcomer can trust the map.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer and the layers it may use (besides itself).
const LAYERS: [(&str, &[&str]); 8] = [
    ("store", &[]),
    ("registry", &["store"]),
    ("views", &["registry", "store"]),
    ("controllers", &["registry", "store"]),
    ("webhook", &["registry", "store"]),
    ("authn", &["registry", "store"]),
    ("authz", &["registry", "store"]),
    ("http", &["views", "authn", "authz", "registry", "store"]),
];

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read source");
            out.push((path.display().to_string(), text));
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn layers_import_only_the_layers_below() {
    let src = src();
    // Every module is in a layer folder; lib.rs is the composition root.
    for entry in std::fs::read_dir(&src).expect("read src") {
        let path = entry.expect("dir entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert!(
            name == "lib.rs" || LAYERS.iter().any(|(l, _)| *l == name),
            "src/{name} is outside the layer folders: put it in one (ARCHITECTURE.md)"
        );
    }
    let mut violations = vec![];
    for (layer, allowed) in LAYERS {
        let mut files = vec![];
        sources(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no sources in src/{layer}");
        for (file, text) in &files {
            for (other, _) in LAYERS {
                if other == layer || allowed.contains(&other) {
                    continue;
                }
                for (n, line) in text.lines().enumerate() {
                    if line.contains(&format!("crate::{other}")) {
                        violations.push(format!("{file}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against the layer order:\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_import_cycle_inside_a_layer() {
    let src = src();
    let mut files = vec![];
    sources(&src, &mut files);
    let files: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|(f, text)| {
            let rel = Path::new(&f)
                .strip_prefix(&src)
                .expect("under src")
                .to_path_buf();
            (rel, text)
        })
        .collect();
    let graph = import_graph(&files);
    let mut cycles = vec![];
    for (layer, _) in LAYERS {
        let inside = |f: &str| f.starts_with(&format!("{layer}/"));
        let edges: BTreeMap<&str, BTreeSet<&str>> = graph
            .iter()
            .filter(|(from, _)| inside(from))
            .map(|(from, to)| {
                let to = to.keys().map(String::as_str).filter(|t| inside(t));
                (from.as_str(), to.collect())
            })
            .collect();
        for scc in strongly_connected(&edges) {
            let members: BTreeSet<&str> = scc.iter().copied().collect();
            let mut why = vec![];
            for from in &scc {
                for (to, line) in &graph[*from] {
                    if members.contains(to.as_str()) {
                        why.push(format!("  src/{from}:{line} -> src/{to}"));
                    }
                }
            }
            cycles.push(format!(
                "src/{layer}: {}\n{}",
                scc.join(", "),
                why.join("\n")
            ));
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles between the files of one layer (a file must not import one that \
         imports it back):\n{}",
        cycles.join("\n")
    );
}

// --- The import graph: which file each file's paths lead to ---

/// A file's module path: `registry/core/mod.rs` is `registry::core`, `registry/feed.rs`
/// `registry::feed`, `lib.rs` the crate root.
fn module_of(rel: &Path) -> Vec<String> {
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if stem != "mod" && stem != "lib" {
        segs.push(stem.to_string());
    }
    segs
}

/// For each file (relative to src/, `/`-separated), the files its paths lead to, with the line
/// of the first such path. A parent's `mod child;` is a declaration, not an import of the child.
fn import_graph(files: &[(PathBuf, String)]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let name = |p: &Path| {
        p.iter()
            .map(|s| s.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    };
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|(rel, _)| (module_of(rel), name(rel)))
        .collect();
    // The file a path leads to: the longest prefix of it that is a module with a file.
    let file_of = |path: &[String]| {
        (0..=path.len())
            .rev()
            .find_map(|n| modules.get(&path[..n]))
            .cloned()
    };
    let is_module = |path: &[String]| modules.contains_key(path);
    let mut graph = BTreeMap::new();
    for (rel, text) in files {
        let here = name(rel);
        let mut edges: BTreeMap<String, usize> = BTreeMap::new();
        for (path, line) in paths(&module_of(rel), &lex(text), &is_module) {
            if let Some(to) = file_of(&path).filter(|to| *to != here) {
                edges.entry(to).or_insert(line);
            }
        }
        graph.insert(here, edges);
    }
    graph
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// The tokens of Rust source that paths are made of, with their lines; comments, string and
/// character literals, lifetimes and numbers are skipped.
fn lex(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, vec![]);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if (ch == 'r' || (ch == 'b' && at(i + 1) == 'r'))
            && matches!(at(i + 1 + usize::from(ch == 'b')), '"' | '#')
            && {
                // A raw string: r"..", r#".."#, br"..".
                let mut j = i + 1 + usize::from(ch == 'b');
                while at(j) == '#' {
                    j += 1;
                }
                at(j) == '"'
            }
        {
            let mut j = i + 1 + usize::from(ch == 'b');
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                line += usize::from(c[j] == '\n');
                j += 1;
            }
            i = j;
        } else if ch == '"' || (ch == 'b' && at(i + 1) == '"') {
            let mut j = i + 1 + usize::from(ch == 'b');
            while j < c.len() && c[j] != '"' {
                if c[j] == '\\' {
                    j += 1;
                }
                line += usize::from(at(j) == '\n');
                j += 1;
            }
            i = j + 1;
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a).
            let j = i + 1 + usize::from(ch == 'b');
            if at(j) == '\\' {
                let mut k = j + 2;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
            } else if at(j + 1) == '\'' {
                i = j + 2;
            } else {
                i = j;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if word == "r" && at(i) == '#' {
                // A raw identifier: never one of the path keywords.
                i += 1;
                continue;
            }
            out.push((Tok::Ident(word), line));
        } else if ch.is_ascii_digit() {
            while at(i).is_alphanumeric()
                || at(i) == '_'
                || (at(i) == '.' && at(i + 1).is_ascii_digit())
            {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// The crate-absolute paths (module path, then item names) a file's tokens use, with their
/// lines: `use` trees expanded, and the paths in code that start with `crate`, `self`,
/// `super`, a child module, or a name a `use` brought in (resolved through that `use`).
/// `file_module` is the file's module; `mod name { .. }` blocks inside it are followed.
fn paths(
    file_module: &[String],
    toks: &[(Tok, usize)],
    is_module: &dyn Fn(&[String]) -> bool,
) -> Vec<(Vec<String>, usize)> {
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(w), _)) => Some(w.as_str()),
        _ => None,
    };
    let is = |i: usize, t: Tok| toks.get(i).is_some_and(|(x, _)| *x == t);
    // Names `use` declarations bound, to the absolute paths they stand for.
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut out = vec![];
    // Inline modules: (name, the brace depth inside them).
    let mut inline: Vec<(String, usize)> = vec![];
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let module: Vec<String> = file_module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        match &toks[i].0 {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(name), true) = (ident(i + 1), is(i + 2, Tok::Punct('{'))) {
                    inline.push((name.to_string(), depth + 1));
                    i += 1;
                }
            }
            Tok::Ident(w) if w == "use" => {
                let line = toks[i].1;
                let mut tree = vec![];
                let end = use_tree(toks, i + 1, &[], &mut tree);
                for (path, bound) in tree {
                    if let Some(abs) = resolve(&module, &path, &aliases, is_module) {
                        if let Some(b) = bound.filter(|b| b != "_") {
                            aliases.insert(b, abs.clone());
                        }
                        out.push((abs, line));
                    }
                }
                i = end;
                continue;
            }
            Tok::Ident(_) if is(i + 1, Tok::Sep) && (i == 0 || !is(i - 1, Tok::Sep)) => {
                let line = toks[i].1;
                let mut path = vec![];
                let mut j = i;
                while let Some(w) = ident(j) {
                    path.push(w.to_string());
                    if !is(j + 1, Tok::Sep) {
                        break;
                    }
                    j += 2;
                }
                if let Some(abs) = resolve(&module, &path, &aliases, is_module) {
                    out.push((abs, line));
                }
                i = j + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Expands the use tree starting at `i` under `prefix` into (path, the name it binds); returns
/// the index after it (after the `;` at the top level).
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(i).map(|(t, _)| t) {
            Some(Tok::Ident(w)) if w == "as" => {
                if let Some((Tok::Ident(alias), _)) = toks.get(i + 1) {
                    out.push((path.clone(), Some(alias.clone())));
                }
                path.clear();
                i += 2;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                i += 1;
                if !matches!(toks.get(i), Some((Tok::Sep, _))) {
                    let bound = if w == "self" {
                        prefix.last().cloned()
                    } else {
                        Some(w.clone())
                    };
                    if w == "self" {
                        path.pop();
                    }
                    if matches!(toks.get(i), Some((Tok::Ident(a), _)) if a == "as") {
                        continue;
                    }
                    out.push((std::mem::take(&mut path), bound));
                }
            }
            Some(Tok::Sep) => i += 1,
            Some(Tok::Punct('*')) => {
                out.push((std::mem::take(&mut path), None));
                i += 1;
            }
            Some(Tok::Punct('{')) => {
                i = use_tree(toks, i + 1, &path, out);
                path.clear();
            }
            Some(Tok::Punct(',')) => {
                path = prefix.to_vec();
                i += 1;
            }
            Some(Tok::Punct('}')) => return i + 1,
            Some(Tok::Punct(';')) | None => return i + 1,
            Some(Tok::Punct(_)) => i += 1,
        }
    }
}

/// The absolute path a path written in `module` stands for; `None` for other crates' paths.
fn resolve(
    module: &[String],
    path: &[String],
    aliases: &BTreeMap<String, Vec<String>>,
    is_module: &dyn Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut base, rest) = match first.as_str() {
        "crate" => (vec![], &path[1..]),
        "self" => (module.to_vec(), &path[1..]),
        "super" => {
            let mut base = module.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        _ => {
            let child: Vec<String> = module.iter().chain([first]).cloned().collect();
            if is_module(&child) {
                (child, &path[1..])
            } else if let Some(abs) = aliases.get(first) {
                (abs.clone(), &path[1..])
            } else {
                return None;
            }
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The strongly connected components of more than one node (Tarjan's algorithm), each
/// sorted, in the order of their smallest node.
fn strongly_connected<'a>(edges: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    struct State<'a, 'e> {
        edges: &'e BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a, '_>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = vec![];
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                s.out.push(scc);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on_stack: BTreeSet::new(),
        out: vec![],
    };
    for &v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

#[test]
fn the_cycle_finder_finds_cycles_and_only_them() {
    let graph = |pairs: &[(&'static str, &'static str)]| {
        let mut g: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry(a).or_default().insert(b);
            g.entry(b).or_default();
        }
        g
    };
    // a -> b -> c -> a and d <-> e, with f hanging off both; g -> g is no cycle of files.
    let g = graph(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "f"),
        ("d", "e"),
        ("e", "d"),
        ("e", "f"),
        ("g", "g"),
        ("g", "a"),
    ]);
    assert_eq!(
        strongly_connected(&g),
        vec![vec!["a", "b", "c"], vec!["d", "e"]]
    );
    assert!(strongly_connected(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}

#[test]
fn paths_are_found_in_use_trees_and_code_and_mapped_to_files() {
    let files: Vec<(PathBuf, String)> = [
        ("lib.rs", "mod reg;"),
        (
            "reg/mod.rs",
            "//! See crate::reg::builtin (a comment).\npub(crate) mod builtin;\npub(crate) mod kinds;\nmod tests {\n    use super::*;\n}\n",
        ),
        ("reg/kinds/mod.rs", "pub(crate) mod a;\npub(crate) mod b;"),
        (
            "reg/kinds/a.rs",
            "use crate::{reg::{self as r, kinds::b::{self}}, other};\nfn f() { let s = \"crate::reg::builtin\"; r::builtin::x(); }",
        ),
        ("reg/kinds/b.rs", "fn g() -> char { '\"' }\nfn h() { super::super::Registry::new(); }"),
        (
            "reg/builtin.rs",
            "use super::kinds;\nfn defs<'a>() { kinds::a::defs(); }\nmod tests { use super::*; }",
        ),
    ]
    .into_iter()
    .map(|(p, t)| (PathBuf::from(p), t.to_string()))
    .collect();
    let graph = import_graph(&files);
    let to = |f: &str| graph[f].keys().map(String::as_str).collect::<Vec<_>>();
    assert_eq!(to("reg/mod.rs"), Vec::<&str>::new());
    assert_eq!(to("reg/kinds/mod.rs"), Vec::<&str>::new());
    assert_eq!(
        to("reg/kinds/a.rs"),
        ["lib.rs", "reg/builtin.rs", "reg/kinds/b.rs", "reg/mod.rs"]
    );
    assert_eq!(to("reg/kinds/b.rs"), ["reg/mod.rs"]);
    assert_eq!(to("reg/builtin.rs"), ["reg/kinds/a.rs", "reg/kinds/mod.rs"]);
    assert_eq!(graph["reg/kinds/a.rs"]["reg/builtin.rs"], 2);
    let edges: BTreeMap<&str, BTreeSet<&str>> = graph
        .iter()
        .map(|(f, to)| (f.as_str(), to.keys().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        strongly_connected(&edges),
        vec![vec!["reg/builtin.rs", "reg/kinds/a.rs"]]
    );
}
