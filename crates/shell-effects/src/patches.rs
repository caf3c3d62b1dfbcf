//! Patches: the files a unified diff or a Codex `apply_patch` envelope names, and what it does to
//! each. The scanner reads patches applied by commands (`patch`, `git apply`); the ledger reads
//! the ones file tools apply and the output of `git diff`.

use crate::FileOp;

/// Files named by a unified diff (`git diff`, `diff -u`, a `.patch`): the `diff --git` headers
/// when present, else the `---`/`+++` pairs. `strip` drops leading path components as
/// `patch -pN` does; without it, git's `a/` and `b/` prefixes are dropped.
pub fn diff_files(text: &str, strip: Option<usize>) -> Vec<(FileOp, String)> {
    let strip_path = |path: &str| -> Option<String> {
        let path = path.split('\t').next().unwrap_or(path).trim();
        let path = path.trim_matches('"');
        if path.is_empty() || path == "/dev/null" {
            return None;
        }
        match strip {
            Some(level) => {
                let parts: Vec<&str> = path.split('/').collect();
                if level >= parts.len() {
                    return None;
                }
                Some(parts[level..].join("/"))
            }
            None => Some(
                path.strip_prefix("a/")
                    .or_else(|| path.strip_prefix("b/"))
                    .unwrap_or(path)
                    .to_string(),
            ),
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut files = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if let Some(header) = line.strip_prefix("diff --git ") {
            let (mut old, mut new) = split_git_header(header);
            let mut op = FileOp::Modify;
            let mut renamed = false;
            index += 1;
            while index < lines.len()
                && !lines[index].starts_with("diff --git ")
                && !lines[index].starts_with("@@")
            {
                let header_line = lines[index];
                if header_line.starts_with("new file mode") {
                    op = FileOp::Create;
                } else if header_line.starts_with("deleted file mode") {
                    op = FileOp::Delete;
                } else if let Some(from) = header_line.strip_prefix("rename from ") {
                    renamed = true;
                    old = format!("a/{from}");
                } else if let Some(to) = header_line.strip_prefix("rename to ") {
                    renamed = true;
                    new = format!("b/{to}");
                }
                index += 1;
            }
            let old = strip_path(&old);
            let new = strip_path(&new);
            match (op, renamed) {
                (FileOp::Delete, _) => files.extend(old.map(|p| (FileOp::Delete, p))),
                (_, true) => {
                    files.extend(old.map(|p| (FileOp::Delete, p)));
                    files.extend(new.map(|p| (FileOp::Create, p)));
                }
                (op, false) => files.extend(new.map(|p| (op, p))),
            }
            continue;
        }
        if let (Some(old), Some(new)) = (
            line.strip_prefix("--- "),
            lines
                .get(index + 1)
                .and_then(|next| next.strip_prefix("+++ ")),
        ) {
            let old_is_null = old.split('\t').next().unwrap_or("").trim() == "/dev/null";
            let new_is_null = new.split('\t').next().unwrap_or("").trim() == "/dev/null";
            if new_is_null {
                files.extend(strip_path(old).map(|p| (FileOp::Delete, p)));
            } else {
                let op = if old_is_null {
                    FileOp::Create
                } else {
                    FileOp::Modify
                };
                files.extend(strip_path(new).map(|p| (op, p)));
            }
            index += 2;
            continue;
        }
        index += 1;
    }
    files
}

/// `a/x b/x` → (`a/x`, `b/x`), also when the names contain ` b/`.
fn split_git_header(header: &str) -> (String, String) {
    // The common case: the same path on both sides, so the halves mirror each other.
    if header.len() % 2 == 1 {
        let middle = header.len() / 2;
        if header.is_char_boundary(middle) && header.as_bytes()[middle] == b' ' {
            let (old, new) = (&header[..middle], &header[middle + 1..]);
            if old.get(2..) == new.get(2..) {
                return (old.to_string(), new.to_string());
            }
        }
    }
    match header.rfind(" b/") {
        Some(at) => (header[..at].to_string(), header[at + 1..].to_string()),
        None => match header.split_once(' ') {
            Some((old, new)) => (old.to_string(), new.to_string()),
            None => (header.to_string(), header.to_string()),
        },
    }
}

/// Files named by a Codex `apply_patch` envelope (`*** Add File: p`, `*** Update File: p`,
/// `*** Delete File: p`, `*** Move to: p`), as codex-rs/apply-patch/src/parser.rs defines it.
pub fn codex_patch_files(text: &str) -> Vec<(FileOp, String)> {
    let mut files = Vec::new();
    let mut updating: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            files.push((FileOp::Create, path.trim().to_string()));
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            files.push((FileOp::Delete, path.trim().to_string()));
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            let path = path.trim().to_string();
            files.push((FileOp::Modify, path.clone()));
            updating = Some(path);
            continue;
        } else if let Some(destination) = line.strip_prefix("*** Move to: ") {
            // A move rewrites the updated file under its new name and removes the old one.
            if let Some(source) = updating.take() {
                if let Some(last) = files.last_mut() {
                    if last.1 == source {
                        *last = (FileOp::Delete, source);
                    }
                }
            }
            files.push((FileOp::Create, destination.trim().to_string()));
        }
        updating = None;
    }
    files
}
