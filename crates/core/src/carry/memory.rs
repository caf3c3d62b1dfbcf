//! Key-information extraction (the SanBot seed's "抽取关键信息 → L1", §4.3): when
//! `extractMemory` is on, a compaction appends what it finds in the messages it removes to
//! `<outputDir>/<sessionId>/extracted/`:
//!
//! | file | what | rule |
//! |---|---|---|
//! | `decisions.md` | decisions | sentences with "decided / decision / chose / choose to / 决定 / 选择 / 确定" |
//! | `facts.md` | facts | sentences naming a file path, a project or repository, or configuration ("config / setting / 配置 / 设置 / 项目 / 环境变量") |
//! | `preferences.md` | preferences | sentences with "prefer", "<someone> like(s)", "would like", "喜欢 / 偏好 / 习惯" |
//! | `runtime.md` | runtime context | the tool calls' ledger: files read / created / modified / deleted, commands run, failed calls with their error |
//!
//! Sentences come from user prompts and assistant text (tool output is only read through the
//! ledger; summaries and notices are skipped). Each file is a Markdown list, one `- ` line per
//! item; a line already in the file is not appended again, so repeated compactions of a session
//! never duplicate anything. Files are private (0600), appended under the session lock, and a
//! symlink planted at their name is refused, like the archives.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::base::text::{self, clip, collapse_whitespace};
use crate::carry::ledger::Ledger;
use crate::model::added;
use crate::model::message::{role_of, text_of, Role};
use crate::plan::partition::is_user_turn;

/// The directory, inside the session's, that holds the extracted files.
pub const EXTRACTED_DIR: &str = "extracted";

/// The longest line written (longer sentences are clipped).
const MAX_LINE_CHARS: usize = 300;
/// At most this many new lines per file and compaction.
const MAX_LINES: usize = 200;

static DECISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(decided|decides|decision|decisions|chose|chosen|choose to|choosing)\b|决定|选择|确定")
        .expect("valid regex")
});
static PREFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bprefer(s|red|ence|ences)?\b|\b(i|we|you|they|user|he|she)\s+(really\s+|also\s+|don't\s+|do\s+not\s+)?likes?\b|\b(would|i'd|we'd)\s+like\b|喜欢|偏好|习惯",
    )
    .expect("valid regex")
});
static FACT_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(project|projects|repository|repo|config|configuration|configured|setting|settings|environment variable|env var)\b|项目|配置|设置|环境变量",
    )
    .expect("valid regex")
});
/// A path: absolute, home- or dot-relative, or relative with a file extension; or a Windows path.
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:^|[\s"'(`])(?:(?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]+)*|[\w.@-]+(?:/[\w.@-]+)+\.\w{1,8}|[A-Za-z]:\\[\w\\. -]+)"#,
    )
    .expect("valid regex")
});

/// What one compaction found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memory {
    pub decisions: Vec<String>,
    pub facts: Vec<String>,
    pub preferences: Vec<String>,
    pub runtime: Vec<String>,
}

impl Memory {
    pub(crate) fn files(&self) -> [(&'static str, &'static str, &[String]); 4] {
        [
            ("decisions.md", "Decisions", &self.decisions),
            ("facts.md", "Facts", &self.facts),
            ("preferences.md", "Preferences", &self.preferences),
            ("runtime.md", "Runtime", &self.runtime),
        ]
    }
}

/// How many new lines a compaction appended to each file (`result.extracted`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Extracted {
    pub decisions: usize,
    pub facts: usize,
    pub preferences: usize,
    pub runtime: usize,
    /// `<outputDir>/<sessionId>/extracted`.
    pub dir: PathBuf,
}

/// One line of text, whitespace collapsed, clipped.
fn one_line(text: &str) -> String {
    clip(&collapse_whitespace(text), MAX_LINE_CHARS)
}

/// Sentences of a text (the extractive summarizer's split), without list markers.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text::sentences(text)
        .map(|s| s.trim_start_matches(['-', '*', '#', ' ']).trim())
        .filter(|s| !s.is_empty())
}

fn push_unique(list: &mut Vec<String>, seen: &mut HashSet<String>, item: String) {
    if !item.is_empty() && list.len() < MAX_LINES && seen.insert(item.clone()) {
        list.push(item);
    }
}

/// Extracts the key information of `messages` (the ones a compaction removes).
pub fn extract(messages: &[Value]) -> Memory {
    let mut memory = Memory::default();
    let mut seen: [HashSet<String>; 3] = Default::default();
    for message in messages {
        if added::is_summary_message(message) {
            continue;
        }
        let speaks = is_user_turn(message) || role_of(message) == Some(Role::Assistant);
        if !speaks {
            continue;
        }
        let text = text_of(message);
        for sentence in sentences(&text) {
            let line = one_line(sentence);
            if DECISION.is_match(sentence) {
                push_unique(&mut memory.decisions, &mut seen[0], line.clone());
            }
            if PREFERENCE.is_match(sentence) {
                push_unique(&mut memory.preferences, &mut seen[1], line.clone());
            }
            if PATH.is_match(sentence) || FACT_WORD.is_match(sentence) {
                push_unique(&mut memory.facts, &mut seen[2], line);
            }
        }
    }
    let ledger = Ledger::extract(messages);
    let mut seen = HashSet::new();
    let labelled = [
        ("read", &ledger.files_read),
        ("created", &ledger.files_created),
        ("modified", &ledger.files_modified),
        ("deleted", &ledger.files_deleted),
        ("ran", &ledger.commands),
        ("failed", &ledger.failed_calls),
    ];
    for (label, items) in labelled {
        for item in items {
            push_unique(
                &mut memory.runtime,
                &mut seen,
                one_line(&format!("{label}: {item}")),
            );
        }
    }
    memory
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session() -> Vec<Value> {
        vec![
            json!({"role": "user", "content": "I prefer tabs over spaces. 我喜欢简洁的代码。 The project is called orbit."}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "We decided to use SQLite for storage. I will edit src/db/schema.rs next. Looks like rain."},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "cargo test"}}
            ]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "error: 2 tests failed"}]}),
            json!({"role": "assistant", "content": "最终确定使用 Rust 2021。配置文件在 config/app.toml。"}),
        ]
    }

    #[test]
    fn each_kind_is_found() {
        let m = extract(&session());
        assert!(
            m.decisions
                .iter()
                .any(|l| l.contains("decided to use SQLite")),
            "{m:?}"
        );
        assert!(
            m.decisions.iter().any(|l| l.contains("确定使用 Rust")),
            "{m:?}"
        );
        assert!(
            m.preferences.iter().any(|l| l.contains("prefer tabs")),
            "{m:?}"
        );
        assert!(m.preferences.iter().any(|l| l.contains("喜欢")), "{m:?}");
        assert!(
            !m.preferences.iter().any(|l| l.contains("Looks like rain")),
            "{m:?}"
        );
        assert!(
            m.facts.iter().any(|l| l.contains("src/db/schema.rs")),
            "{m:?}"
        );
        assert!(
            m.facts
                .iter()
                .any(|l| l.contains("project is called orbit")),
            "{m:?}"
        );
        assert!(
            m.facts.iter().any(|l| l.contains("config/app.toml")),
            "{m:?}"
        );
        assert!(m.runtime.iter().any(|l| l == "ran: cargo test"), "{m:?}");
        assert!(
            m.runtime
                .iter()
                .any(|l| l.starts_with("failed: ") && l.contains("2 tests failed")),
            "{m:?}"
        );
    }

    #[test]
    fn files_are_private_and_never_duplicate_lines() {
        let dir = tempfile::tempdir().unwrap();
        let m = extract(&session());
        let first = crate::archive::memory::write(dir.path(), "s", &m).unwrap();
        assert!(first.decisions >= 2 && first.runtime >= 2, "{first:?}");
        let again = crate::archive::memory::write(dir.path(), "s", &m).unwrap();
        assert_eq!(
            (
                again.decisions,
                again.facts,
                again.preferences,
                again.runtime
            ),
            (0, 0, 0, 0)
        );
        let text = std::fs::read_to_string(dir.path().join("s/extracted/decisions.md")).unwrap();
        assert!(text.starts_with("# Decisions\n"));
        assert_eq!(text.matches("decided to use SQLite").count(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("s/extracted/facts.md"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
