//! This crate says which files a shell command line reads, writes and deletes. That is its one
//! concern: a best-effort, static reading of the text, never an execution.
//!
//! Agents that act through a shell (mini-swe-agent, Codex, any agent's `bash` tool) edit files
//! with `cat > f <<'EOF'`, `sed -i`, `mv`, `patch`, … rather than with file tools, so a record
//! of the files a session touched (context-compact's ledger) has to read their command lines.
//! The crate knows nothing of messages or agents: it takes a command line and gives back
//! `(FileOp, path)` pairs in the order the command performs them.
//!
//! # Example
//!
//! ```
//! use shell_effects::{scan, FileOp, KnownContents};
//!
//! let mut known = KnownContents::default();
//! let effects = scan("cd /testbed && sed -i 's/a/b/' x.py && rm -f *.pyc", &mut known);
//! assert_eq!(
//!     effects.files,
//!     vec![
//!         (FileOp::Modify, "/testbed/x.py".to_string()),
//!         (FileOp::Delete, "/testbed/*.pyc".to_string()),
//!     ]
//! );
//! ```
//!
//! # What it reads
//!
//! - The lexer (`lexer`) knows quoting ('…', "…", backslashes),
//!   comments, control operators (`&&` `||` `;` `|` `&` newlines, subshell parentheses),
//!   redirections and heredocs. Heredoc bodies are data, never scanned as commands, but they are
//!   remembered in [`KnownContents`]: `cat > x.sh <<EOF` followed by `./x.sh` (or `bash x.sh`)
//!   scans the script's body, and `patch < fix.diff` reads a patch written earlier.
//! - The scanner (`effects`) knows what the common commands do to files. `cd` is followed
//!   within one command line: after `cd /abs` or `cd rel`, relative paths are reported joined to
//!   that directory (so `cd /testbed && sed -i … a.py` names `/testbed/a.py`); after a `cd` that
//!   cannot be resolved statically (`cd $DIR`, `cd -`, `cd ~`), paths are reported as written. A
//!   subshell's `cd` ends with the subshell, and a command line starts in the agent's working
//!   directory (paths relative to it stay relative): most harnesses run each command in a fresh
//!   shell, and those that keep one do not say so in the transcript.
//! - Words built from expansions (`$VAR`, `$(…)`, backticks) are never reported as paths:
//!   their value is unknown. Globs are reported as written (`rm -f *.pyc`).
//! - Patches ([`diff_files`], [`codex_patch_files`]): the files a unified diff or a Codex
//!   `apply_patch` envelope names, for commands that apply them and for callers that read them
//!   from tool inputs or `git diff` output.
//!
//! It must never panic, whatever the input (a proptest checks random strings).

mod effects;
mod lexer;
mod patches;

use std::collections::HashMap;

pub use patches::{codex_patch_files, diff_files};

use effects::{basename, Cwd, Scanner, SHELLS};

/// What a command does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Read,
    Create,
    Modify,
    Delete,
}

/// How deep scripts that run scripts (`bash -c`, `./x.sh`, `source`) are followed.
pub(crate) const MAX_DEPTH: usize = 4;
/// Contents kept for later commands to run or apply: bounded so a long session stays small.
const MAX_KNOWN_CONTENT_BYTES: usize = 256 * 1024;
const MAX_KNOWN_TOTAL_BYTES: usize = 4 * 1024 * 1024;

/// What scanning one command line found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ShellEffects {
    /// File operations in the order the command performs them.
    pub files: Vec<(FileOp, String)>,
    /// The command prints the working tree's changes as a patch (`git diff` against the index
    /// or HEAD), so its output names files that differ from the last commit.
    pub prints_worktree_diff: bool,
}

/// Contents the session wrote to files (through heredocs or file tools), by path as the ledger
/// reports it, so a later command that runs or applies such a file can be followed.
#[derive(Debug, Default)]
pub struct KnownContents {
    by_path: HashMap<String, String>,
    total_bytes: usize,
}

impl KnownContents {
    pub fn remember(&mut self, path: &str, content: &str) {
        if content.len() > MAX_KNOWN_CONTENT_BYTES {
            self.forget(path);
            return;
        }
        if self.total_bytes + content.len() > MAX_KNOWN_TOTAL_BYTES {
            return;
        }
        self.forget(path);
        self.total_bytes += content.len();
        self.by_path.insert(path.to_string(), content.to_string());
    }

    fn forget(&mut self, path: &str) {
        if let Some(old) = self.by_path.remove(path) {
            self.total_bytes -= old.len();
        }
    }

    pub(crate) fn get(&self, path: &str) -> Option<&str> {
        self.by_path.get(path).map(String::as_str)
    }
}

/// Scans a command line. `known` supplies the contents of files written earlier and learns
/// the ones this command writes.
pub fn scan(command: &str, known: &mut KnownContents) -> ShellEffects {
    let mut effects = ShellEffects::default();
    let mut scanner = Scanner {
        known,
        effects: &mut effects,
    };
    scanner.run(command, Cwd::Agent, 0);
    effects
}

/// A command array (Codex `shell`/`local_shell`: `["bash", "-lc", "…"]`, or
/// `["apply_patch", "…"]`) as one command line: the script of a `sh -c` form, else the words
/// quoted and joined.
pub fn command_line_of_argv(argv: &[&str]) -> String {
    if let [shell, flag, script, ..] = argv {
        if SHELLS.contains(&basename(shell)) && flag.starts_with('-') && flag.contains('c') {
            return script.to_string();
        }
    }
    argv.iter()
        .map(|word| quote(word))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests;
