//! The core reads in layers (see the crate docs): each top-level module of `src/` is a layer,
//! and a layer may import only the layers below it. This test reads the sources as text and
//! fails on any `crate::<layer>` reference (outside test code) that points up, and on any
//! import circle between top-level modules — a circle is a place where layers are tangled, and
//! a newcomer could no longer tell from the tree which way the arrows run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Bottom to top. A new top-level module must be placed here, in the layer it belongs to.
const LAYERS: &[&str] = &[
    "base", "model", "formats", "plan", "summary", "archive", "pipeline", "options",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a file without its test code: `#[cfg(test)] mod x { … }` blocks (matched by
/// braces) and the files of `#[cfg(test)] mod x;` declarations.
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        if !trimmed.starts_with("mod ") {
            // A test-only item that is not a module: skip the attribute only.
            rest = after;
            continue;
        }
        let semi = trimmed.find(';');
        let brace = trimmed.find('{');
        match (semi, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => rest = &trimmed[s + 1..],
            (_, Some(b)) => {
                let mut depth = 0usize;
                let mut end = trimmed.len();
                for (i, c) in trimmed[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &trimmed[end..];
            }
            _ => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// `(file, line, from layer, to layer)` for every `crate::name` reference between top-level
/// modules.
fn edges(src: &Path) -> Vec<(String, usize, String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let test_files: BTreeSet<PathBuf> = files
        .iter()
        .flat_map(|f| {
            let text = fs::read_to_string(f).unwrap();
            let dir = f.parent().unwrap().to_path_buf();
            let mut found = Vec::new();
            let mut rest = text.as_str();
            while let Some(at) = rest.find("#[cfg(test)]") {
                let after = rest[at + 12..].trim_start();
                if let Some(decl) = after.strip_prefix("mod ") {
                    if let Some((name, _)) = decl.split_once(';') {
                        if !name.contains('{') {
                            found.push(dir.join(format!("{}.rs", name.trim())));
                        }
                    }
                }
                rest = &rest[at + 12..];
            }
            found
        })
        .collect();
    let mut out = Vec::new();
    for file in files.iter().filter(|f| !test_files.contains(*f)) {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let from = top.trim_end_matches(".rs").to_string();
        if from == "lib" {
            continue;
        }
        let text = without_tests(&fs::read_to_string(file).unwrap());
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                let name: String = rest[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                rest = &rest[at + 7..];
                if !name.is_empty() && name != from {
                    out.push((rel.display().to_string(), n + 1, from.clone(), name));
                }
            }
        }
    }
    out
}

/// Every circle (strongly connected component of more than one module) of the graph.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = graph
        .iter()
        .flat_map(|(k, v)| std::iter::once(k).chain(v.iter()))
        .collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let mut circle: Vec<String> = nodes
            .iter()
            .filter(|m| reaches[*n].contains(**m) && reaches[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        circle.sort();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_top_level_module_is_a_known_layer() {
    let mut tops: Vec<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .filter(|name| name != "lib")
        .collect();
    tops.sort();
    let mut known: Vec<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    known.sort();
    assert_eq!(
        tops, known,
        "src/ holds exactly the layers of LAYERS, each a folder"
    );
    for layer in LAYERS {
        assert!(src().join(layer).is_dir(), "{layer} is a folder");
    }
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let rank = |name: &str| LAYERS.iter().position(|l| *l == name);
    let upward: Vec<String> = edges(&src())
        .into_iter()
        .filter(|(_, _, from, to)| match (rank(from), rank(to)) {
            (Some(f), Some(t)) => t > f,
            _ => true,
        })
        .map(|(file, line, from, to)| format!("src/{file}:{line}: {from} imports {to}"))
        .collect();
    assert!(
        upward.is_empty(),
        "imports that point up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_import_circle_between_top_level_modules() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, _, from, to) in edges(&src()) {
        graph.entry(from).or_default().insert(to);
    }
    assert_eq!(circles(&graph), Vec::<Vec<String>>::new());
}

/// The checks themselves can fail: a tree with a circle and an upward import is caught, test
/// code is not counted.
#[test]
fn the_checks_catch_a_circle_and_an_upward_import() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("model")).unwrap();
    fs::create_dir_all(root.join("plan")).unwrap();
    fs::write(root.join("lib.rs"), "pub mod model; pub mod plan;").unwrap();
    fs::write(
        root.join("model/mod.rs"),
        "use crate::plan::Cut;\n#[cfg(test)]\nmod tests;\n",
    )
    .unwrap();
    fs::write(root.join("model/tests.rs"), "use crate::pipeline::X;").unwrap();
    fs::write(
        root.join("plan/mod.rs"),
        "use crate::model::Message;\n#[cfg(test)]\nmod tests {\n    use crate::options::O;\n    fn f() { if true { } }\n}\nuse crate::base::E;\n",
    )
    .unwrap();
    let found = edges(root);
    let pairs: BTreeSet<(String, String)> = found
        .iter()
        .map(|(_, _, f, t)| (f.clone(), t.clone()))
        .collect();
    assert_eq!(
        pairs,
        [("model", "plan"), ("plan", "base"), ("plan", "model")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .into_iter()
            .collect()
    );
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in pairs {
        graph.entry(from).or_default().insert(to);
    }
    assert_eq!(
        circles(&graph),
        vec![vec!["model".to_string(), "plan".to_string()]]
    );
}
