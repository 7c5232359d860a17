//! The layer folders of `src/` import only the layers below them (ARCHITECTURE.md, "Layers
//! inside crest-server"): no import cycles, and a newcomer can trust the map.

use std::path::Path;

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

#[test]
fn layers_import_only_the_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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
