//! The core reads in layers (see the crate docs): each top-level module of `src/` is a layer,
//! and a layer may import only the layers below it. This test reads the sources as text and
//! fails on any `crate::<layer>` reference (outside test code) that points up, and on any
//! import circle between top-level modules — a circle is a place where layers are tangled, and
//! a newcomer could no longer tell from the tree which way the arrows run.
//!
//! The same holds inside every folder, of the core and of the binding (`src/` at the root of
//! the repository): the files of one folder, and a folder's own module file with its children,
//! import each other without a circle (see "Circles inside a folder" below).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Bottom to top. A new top-level module must be placed here, in the layer it belongs to.
const LAYERS: &[&str] = &[
    "base",
    "model",
    "formats",
    "plan",
    "carry",
    "summary",
    "providers",
    "archive",
    "options",
    "pipeline",
    "resume",
    "ops",
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

// ---------------------------------------------------------------------------------------------
// Circles inside a folder.
//
// The arrows above are between layers only. Inside a layer, the files of one folder can still
// import each other in a circle (a `ledger` that needs a `sections` that needs the `ledger`),
// and a folder's own module file (`mod.rs`, or `x.rs` beside a folder `x/`) can lean on a
// child that leans back on it. The checks below read every module file of a source tree (the
// core's `src/`, the binding's `src/`) and draw, in every folder, an arrow from one child
// module to another when a file of the first mentions the second: `super::x`, `self::x`,
// `crate::layer::x`, `crate::x`, or a child's bare name (`x::f`) in its parent. A child folder
// counts as one module with everything under it. Comments, string literals and test code do
// not count; nor does a parent's `pub use` of its own children (the folder's face, which the
// rest of the crate may import through: a mention of a re-exported name is resolved to the
// child that defines it).
// ---------------------------------------------------------------------------------------------

/// A module path under the crate root (`[]` is the crate root, `["carry", "ledger"]` is
/// `crate::carry::ledger`).
type ModPath = Vec<String>;

/// The module of a file, from its path relative to the source root: `lib.rs` → `[]`,
/// `a/mod.rs` → `[a]`, `a/b.rs` → `[a, b]`.
fn module_of(rel: &Path) -> ModPath {
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = segs.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (segs.is_empty() && (stem == "lib" || stem == "main"))) {
        segs.push(stem.to_string());
    }
    segs
}

/// The files declared as test modules (`#[cfg(test)] mod x;`): they are not read.
fn test_module_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    for file in files {
        let text = fs::read_to_string(file).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        // Children of `a/mod.rs` and `lib.rs` live beside them; children of `a/b.rs` in `a/b/`.
        let dir = match stem.as_str() {
            "mod" | "lib" | "main" => file.parent().unwrap().to_path_buf(),
            _ => file.parent().unwrap().join(&stem),
        };
        let mut rest = text.as_str();
        while let Some(at) = rest.find("#[cfg(test)]") {
            let after = rest[at + 12..].trim_start();
            if let Some(decl) = after.strip_prefix("mod ") {
                if let Some((name, _)) = decl.split_once(';') {
                    if !name.contains('{') {
                        found.insert(dir.join(format!("{}.rs", name.trim())));
                        found.insert(dir.join(name.trim()).join("mod.rs"));
                    }
                }
            }
            rest = &rest[at + 12..];
        }
    }
    found
}

/// The code of a file with its comments and the contents of its string and character literals
/// blanked out (newlines kept), so that a path quoted in a doc comment or a string is not read
/// as an import.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                    out.push_str("  ");
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    out.push_str("  ");
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !(i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            // A raw string `r"…"`, `r#"…"#` (`br"…"` too: the `b` was copied as code).
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(&ch) => out.push(blank(ch)),
                }
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A character literal (`'x'`, `'\n'`, `'\u{1F600}'`), or a lifetime (`'a`).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The paths of a `use` tree: `a::{b, c::{d, self}}` → `a::b`, `a::c::d`, `a::c`, each with the
/// name it binds (the last segment, or the alias of `as`).
fn use_paths(tree: &str) -> Vec<(String, String)> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = tree
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ::", "::");
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (p.trim().to_string(), a.trim().to_string()),
            None => {
                let p = tree.trim().to_string();
                let last = p.rsplit("::").next().unwrap_or("").to_string();
                (p, last)
            }
        };
        let path = path.strip_suffix("::self").unwrap_or(&path).to_string();
        return vec![(path, alias)];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for ch in inner.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            if p == "self" {
                let path = prefix.trim_end_matches("::").to_string();
                let last = path.rsplit("::").next().unwrap_or("").to_string();
                vec![(path, last)]
            } else if let Some(alias) = p.strip_prefix("self as ") {
                vec![(
                    prefix.trim_end_matches("::").to_string(),
                    alias.trim().to_string(),
                )]
            } else {
                use_paths(&format!("{prefix}{p}"))
            }
        })
        .collect()
}

/// One module file read: its `use` declarations (whether `pub`, the path, the bound name) and
/// the paths mentioned in the rest of its code.
struct Read {
    uses: Vec<(bool, String, String)>,
    inline: Vec<String>,
}

fn read_module(text: &str) -> Read {
    let code = without_tests(&code_only(text));
    let mut uses = Vec::new();
    let mut rest_code = String::new();
    let mut rest = code.as_str();
    // `use` as a word (not `reuse`, not `self.use_x`), up to its `;`.
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        // `pub use`, `pub(crate) use`, `pub(super) use`, `pub(in path) use`.
        let public = before.ends_with("pub")
            || before.rsplit_once("pub(").is_some_and(|(_, tail)| {
                tail.ends_with(')') && !tail.contains(['(', ';', '{', '}', '\n'])
            });
        let Some(end) = rest[at..].find(';') else {
            break;
        };
        rest_code.push_str(&rest[..at]);
        for (path, name) in use_paths(&rest[at + 3..at + end]) {
            uses.push((public, path, name));
        }
        rest = &rest[at + end + 1..];
    }
    rest_code.push_str(rest);
    let mut inline = Vec::new();
    let chars: Vec<char> = rest_code.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        if ident(chars[i]) && (i == 0 || !(ident(chars[i - 1]) || chars[i - 1] == ':')) {
            let mut j = i;
            let mut path = String::new();
            loop {
                let start = j;
                while j < chars.len() && ident(chars[j]) {
                    j += 1;
                }
                path.extend(&chars[start..j]);
                if chars.get(j) == Some(&':')
                    && chars.get(j + 1) == Some(&':')
                    && chars.get(j + 2).is_some_and(|c| ident(*c))
                {
                    path.push_str("::");
                    j += 2;
                } else {
                    break;
                }
            }
            if path.contains("::") {
                inline.push(path);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    Read { uses, inline }
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(word).map(|a| a + from) {
        let before = at.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(at + word.len()).copied();
        let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
        if !before.is_some_and(word_char) && after.is_some_and(|b| b.is_ascii_whitespace()) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The modules of a source tree, with the file of each and what it reads.
struct Tree {
    files: BTreeMap<ModPath, String>,
    reads: BTreeMap<ModPath, Read>,
}

fn read_tree(root: &Path) -> Tree {
    let mut all = Vec::new();
    rust_files(root, &mut all);
    let tests = test_module_files(&all);
    let mut files = BTreeMap::new();
    let mut reads = BTreeMap::new();
    for file in all.iter().filter(|f| !tests.contains(*f)) {
        let rel = file.strip_prefix(root).unwrap();
        let module = module_of(rel);
        files.insert(module.clone(), rel.display().to_string());
        reads.insert(module, read_module(&fs::read_to_string(file).unwrap()));
    }
    Tree { files, reads }
}

impl Tree {
    /// The module a path names from inside `here`, and the item after it (if any): `crate::`,
    /// `self::`, `super::` or a child's bare name. A path of another crate (`std::`, `serde::`)
    /// or of a local item (`Format::Anthropic`) names none.
    fn resolve(&self, here: &[String], path: &str) -> Option<(ModPath, Option<String>)> {
        let segs: Vec<&str> = path.split("::").collect();
        let (mut base, rest): (ModPath, &[&str]) = match segs[0] {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (here.to_vec(), &segs[1..]),
            "super" => {
                let mut base = here.to_vec();
                let mut n = 0;
                while segs.get(n) == Some(&"super") {
                    base.pop()?;
                    n += 1;
                }
                (base, &segs[n..])
            }
            first => {
                let mut child = here.to_vec();
                child.push(first.to_string());
                if !self.files.contains_key(&child) {
                    return None;
                }
                (here.to_vec(), &segs[..])
            }
        };
        let mut rest = rest.iter();
        for seg in rest.by_ref() {
            let mut deeper = base.clone();
            deeper.push(seg.to_string());
            if self.files.contains_key(&deeper) {
                base = deeper;
            } else {
                return Some((base, Some(seg.to_string())));
            }
        }
        Some((base, None))
    }

    /// Where a named item of a module is defined: through the module's `pub use` of it, if any
    /// (a folder's face), else in the module itself.
    fn defined_in(&self, module: ModPath, item: Option<String>, depth: usize) -> ModPath {
        let Some(item) = item else { return module };
        if depth > 8 {
            return module;
        }
        let reexport = self.reads.get(&module).and_then(|read| {
            read.uses
                .iter()
                .find(|(public, _, name)| *public && *name == item)
                .and_then(|(_, path, _)| self.resolve(&module, path))
        });
        match reexport {
            Some((target, inner)) if target != module => self.defined_in(target, inner, depth + 1),
            _ => module,
        }
    }

    /// Every arrow between modules: `(from, to)`, `from` the module whose file mentions `to`.
    fn arrows(&self) -> BTreeSet<(ModPath, ModPath)> {
        let mut out = BTreeSet::new();
        for (here, read) in &self.reads {
            let uses = read.uses.iter().filter(|(public, path, _)| {
                // A parent's `pub use` of its own children is its face, not a use of them.
                !(*public
                    && self
                        .resolve(here, path)
                        .is_some_and(|(m, _)| m.len() > here.len() && m.starts_with(here)))
            });
            let paths = uses.map(|(_, p, _)| p).chain(read.inline.iter());
            for path in paths {
                if let Some((module, item)) = self.resolve(here, path) {
                    let to = self.defined_in(module, item, 0);
                    if to != *here {
                        out.insert((here.clone(), to));
                    }
                }
            }
        }
        out
    }

    /// The arrows inside each folder: for a module `P` (a folder's own file), an arrow between
    /// two of its children, or between a child and `P` itself, named by their files. A child
    /// stands for everything under it.
    fn folder_graphs(&self) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
        let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (from, to) in self.arrows() {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            let parent: ModPath = from[..common].to_vec();
            let node = |m: &ModPath| {
                let mut child = parent.clone();
                if m.len() > common {
                    child.push(m[common].clone());
                }
                self.files[&child].clone()
            };
            let folder = self.files[&parent].clone();
            out.entry(folder)
                .or_default()
                .entry(node(&from))
                .or_default()
                .insert(node(&to));
        }
        out
    }
}

/// Every import circle inside a folder of the source tree at `root` (its files relative to
/// `root`, sorted), none when the tree reads one way in every folder.
fn folder_circles(root: &Path) -> Vec<Vec<String>> {
    let tree = read_tree(root);
    tree.folder_graphs().values().flat_map(circles).collect()
}

fn binding_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src")
}

#[test]
fn no_import_circle_inside_a_folder() {
    let found: Vec<String> = [("crates/core/src", src()), ("src", binding_src())]
        .into_iter()
        .flat_map(|(name, root)| {
            folder_circles(&root)
                .into_iter()
                .map(move |c| format!("{name}: {{{}}}", c.join(", ")))
        })
        .collect();
    assert!(
        found.is_empty(),
        "import circles inside a folder (each a set of modules that import each other):\n{}",
        found.join("\n")
    );
}

/// Writes `files` (path, text) under a new temporary directory.
fn made_up_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

/// Every arrow inside a folder of the tree at `root`, as `from -> to`.
fn folder_arrows(root: &Path) -> Vec<String> {
    read_tree(root)
        .folder_graphs()
        .into_values()
        .flat_map(|graph| {
            graph
                .into_iter()
                .flat_map(|(from, to)| to.into_iter().map(move |t| format!("{from} -> {t}")))
        })
        .collect()
}

fn sorted(mut circles: Vec<Vec<String>>) -> Vec<Vec<String>> {
    circles.sort();
    circles
}

/// The checker finds each kind of circle inside a folder: between siblings (through
/// `crate::layer::x`, `super::x`, a name imported from a sibling), between a folder's `mod.rs`
/// and a child (through a bare child name or `self::x`, and `super::Item` back), between a
/// file and a child folder standing for all its files; and between the binding's files
/// (`crate::x`).
#[test]
fn the_folder_check_catches_a_circle_inside_a_folder() {
    let core = made_up_tree(&[
        (
            "lib.rs",
            "pub mod archive; pub mod formats; pub mod plan; pub mod summary;",
        ),
        (
            "summary/mod.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub use a::A;\n",
        ),
        (
            "summary/a.rs",
            "use crate::summary::b::B;\npub struct A;\npub fn g() {}\n",
        ),
        (
            "summary/b.rs",
            "use super::c;\npub struct B;\nfn f() { c::f() }\n",
        ),
        ("summary/c.rs", "pub fn f() {\n    super::a::g()\n}\n"),
        (
            "formats/mod.rs",
            "mod x;\npub enum Format { A }\npub fn read() { x::read() }\n",
        ),
        ("formats/x.rs", "use super::Format;\npub fn read() {}\n"),
        (
            "plan/mod.rs",
            "pub mod y;\npub const K: u8 = 1;\nfn f() -> u8 { self::y::g() }\n",
        ),
        ("plan/y.rs", "pub fn g() -> u8 {\n    super::K\n}\n"),
        ("archive/mod.rs", "pub mod history;\npub mod store;\n"),
        ("archive/history.rs", "use super::store::ArchiveStore;\n"),
        (
            "archive/store/mod.rs",
            "pub mod session;\npub struct ArchiveStore;\n",
        ),
        (
            "archive/store/session.rs",
            "use crate::archive::history::{self, Restored as R};\n",
        ),
    ]);
    let names = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        sorted(folder_circles(core.path())),
        vec![
            names(&["archive/history.rs", "archive/store/mod.rs"]),
            names(&["formats/mod.rs", "formats/x.rs"]),
            names(&["plan/mod.rs", "plan/y.rs"]),
            names(&["summary/a.rs", "summary/b.rs", "summary/c.rs"]),
        ]
    );

    let binding = made_up_tree(&[
        (
            "lib.rs",
            "pub mod convert;\nmod errors;\npub mod js_store;\n",
        ),
        ("errors.rs", "pub fn invalid() {}\n"),
        (
            "convert.rs",
            "use crate::js_store;\npub(crate) use crate::errors::invalid;\npub fn parse() {}\n",
        ),
        (
            "js_store.rs",
            "fn f() {\n    crate::convert::parse();\n    crate::errors::invalid()\n}\n",
        ),
    ]);
    assert_eq!(
        folder_circles(binding.path()),
        vec![names(&["convert.rs", "js_store.rs"])]
    );
}

/// A tree whose folders read one way passes, though it has arrows in every folder, and
/// mentions that are not imports in every place the checker must not read: comments, doc
/// links, strings, test code (inline and in a `#[cfg(test)] mod tests;` file), and a folder's
/// `pub use` face (a sibling importing the re-exported name imports the child that defines it).
#[test]
fn the_folder_check_passes_a_tree_without_a_circle() {
    let core = made_up_tree(&[
        ("lib.rs", "pub mod formats; pub mod summary;\n"),
        (
            "summary/mod.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub use c::C;\n",
        ),
        (
            "summary/a.rs",
            "//! Read by [`super::c`] and [`crate::summary::b`].\nuse crate::summary::b::B;\npub fn g() {}\n",
        ),
        (
            "summary/b.rs",
            "use super::C;\npub struct B;\nfn f() -> &'static str {\n    \"super::a::g\" // not crate::summary::a\n}\n/* super::a::g() */\n",
        ),
        (
            "summary/c.rs",
            "pub struct C;\nconst Q: char = '\"';\nconst S: &str = r#\"crate::summary::a\"#;\n#[cfg(test)]\nmod tests {\n    use crate::summary::a::g;\n    fn t() { if true { g() } }\n}\n#[cfg(test)]\nmod more;\n",
        ),
        ("summary/c/more.rs", "use crate::summary::a;\n"),
        (
            "formats/mod.rs",
            "mod parts;\nmod x;\npub(crate) use parts::Format;\npub fn read() { x::read() }\n",
        ),
        ("formats/parts.rs", "pub enum Format { A }\n"),
        ("formats/x.rs", "use super::Format;\npub fn read() {}\n"),
    ]);
    assert_eq!(folder_circles(core.path()), Vec::<Vec<String>>::new());
    // The arrows were read: the pass is not for want of any.
    let mut arrows = folder_arrows(core.path());
    arrows.sort();
    assert_eq!(
        arrows,
        [
            "formats/mod.rs -> formats/x.rs",
            "formats/x.rs -> formats/parts.rs",
            "summary/a.rs -> summary/b.rs",
            "summary/b.rs -> summary/c.rs",
        ]
    );
}
