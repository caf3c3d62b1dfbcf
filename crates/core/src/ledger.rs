//! The ledger (SPEC §4.5): facts about the summarized messages that must not depend on the
//! summary model's judgement — which files were read, created, modified or deleted, which
//! commands ran, which tool calls failed. Evaluations of other compactors found "which files
//! were touched" their weakest point, so these lists are extracted deterministically from the
//! tool calls and appended to every summary, merged across repeated compactions.

use std::collections::HashMap;

use serde_json::Value;

use crate::message::{tool_calls, tool_result_text, tool_results};

/// The header that starts the ledger section of a summary.
pub const LEDGER_HEADER: &str = "## Ledger (extracted from tool calls)";

/// Caps that keep the ledger bounded however long the session runs (newest kept).
const MAX_FILES: usize = 200;
const MAX_COMMANDS: usize = 60;
const MAX_FAILURES: usize = 30;
const MAX_ITEM_CHARS: usize = 200;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    pub files_read: Vec<String>,
    pub files_created: Vec<String>,
    pub files_modified: Vec<String>,
    pub files_deleted: Vec<String>,
    pub commands: Vec<String>,
    pub failed_calls: Vec<String>,
}

/// Input fields that name a file, in the spellings common tools use.
const PATH_FIELDS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "filename",
    "file",
    "notebook_path",
    "target_file",
    "absolute_path",
];
const COMMAND_FIELDS: &[&str] = &["command", "cmd", "script", "commandLine"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileOp {
    Read,
    Create,
    Modify,
    Delete,
}

fn file_op_of(tool_name: &str, input: &Value) -> Option<FileOp> {
    let name = tool_name.to_ascii_lowercase();
    // Anthropic's text editor tool says what it does in `command`.
    if let Some(command) = input.get("command").and_then(Value::as_str) {
        if name.contains("str_replace") || name.contains("text_editor") || name == "edit_file" {
            return Some(match command {
                "view" => FileOp::Read,
                "create" => FileOp::Create,
                _ => FileOp::Modify,
            });
        }
    }
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if has(&["delete", "remove", "unlink"]) {
        Some(FileOp::Delete)
    } else if has(&["create", "write", "save", "new_file"]) {
        Some(FileOp::Create)
    } else if has(&[
        "edit", "replace", "patch", "modify", "update", "insert", "append",
    ]) {
        Some(FileOp::Modify)
    } else if has(&["read", "view", "open", "cat", "get_file", "show", "load"]) {
        Some(FileOp::Read)
    } else {
        None
    }
}

fn path_of(input: &Value) -> Option<String> {
    PATH_FIELDS
        .iter()
        .find_map(|field| input.get(*field).and_then(Value::as_str))
        .map(str::to_string)
}

fn command_of(input: &Value) -> Option<String> {
    COMMAND_FIELDS
        .iter()
        .find_map(|field| input.get(*field).and_then(Value::as_str))
        .map(str::to_string)
}

fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    clip(line, MAX_ITEM_CHARS)
}

fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max_chars).collect();
    out.push('…');
    out
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if item.is_empty() {
        return;
    }
    if let Some(pos) = list.iter().position(|x| *x == item) {
        // Keep the newest position: it is what a resumed agent cares about.
        list.remove(pos);
    }
    list.push(item);
}

fn cap(list: &mut Vec<String>, max: usize) {
    if list.len() > max {
        let excess = list.len() - max;
        list.drain(..excess);
    }
}

impl Ledger {
    /// Extracts the ledger of a list of messages.
    pub fn extract(messages: &[Value]) -> Ledger {
        let mut ledger = Ledger::default();
        let mut calls_by_id: HashMap<String, (String, Value)> = HashMap::new();
        for message in messages {
            for call in tool_calls(message) {
                let input = call.input.as_ref();
                calls_by_id.insert(call.id.to_string(), (call.name.to_string(), input.clone()));
                if let Some(command) = command_of(input) {
                    let is_editor_command = matches!(
                        command.as_str(),
                        "view" | "create" | "str_replace" | "insert" | "undo_edit"
                    ) && path_of(input).is_some();
                    if !is_editor_command {
                        push_unique(&mut ledger.commands, clip(command.trim(), MAX_ITEM_CHARS));
                        for deleted in deleted_by_shell(&command) {
                            push_unique(&mut ledger.files_deleted, deleted);
                        }
                    }
                }
                if let (Some(path), Some(op)) = (path_of(input), file_op_of(call.name, input)) {
                    let list = match op {
                        FileOp::Read => &mut ledger.files_read,
                        FileOp::Create => &mut ledger.files_created,
                        FileOp::Modify => &mut ledger.files_modified,
                        FileOp::Delete => &mut ledger.files_deleted,
                    };
                    push_unique(list, path);
                }
            }
            for result in tool_results(message) {
                if !result.is_error {
                    continue;
                }
                let (name, detail) = match calls_by_id.get(result.tool_use_id) {
                    Some((name, input)) => {
                        let what = command_of(input)
                            .or_else(|| path_of(input))
                            .unwrap_or_default();
                        (name.clone(), what)
                    }
                    None => ("tool".to_string(), String::new()),
                };
                let error = one_line(&tool_result_text(result.content));
                let mut item = name;
                if !detail.is_empty() {
                    item.push_str(&format!(" `{}`", clip(detail.trim(), 80)));
                }
                if !error.is_empty() {
                    item.push_str(": ");
                    item.push_str(&error);
                }
                push_unique(&mut ledger.failed_calls, item);
            }
        }
        ledger.cap();
        ledger
    }

    fn cap(&mut self) {
        cap(&mut self.files_read, MAX_FILES);
        cap(&mut self.files_created, MAX_FILES);
        cap(&mut self.files_modified, MAX_FILES);
        cap(&mut self.files_deleted, MAX_FILES);
        cap(&mut self.commands, MAX_COMMANDS);
        cap(&mut self.failed_calls, MAX_FAILURES);
    }

    pub fn is_empty(&self) -> bool {
        self.files_read.is_empty()
            && self.files_created.is_empty()
            && self.files_modified.is_empty()
            && self.files_deleted.is_empty()
            && self.commands.is_empty()
            && self.failed_calls.is_empty()
    }

    /// `earlier` followed by `self`: the union of both, newest last, bounded.
    pub fn merged_after(&self, earlier: &Ledger) -> Ledger {
        let mut merged = earlier.clone();
        for (into, from) in [
            (&mut merged.files_read, &self.files_read),
            (&mut merged.files_created, &self.files_created),
            (&mut merged.files_modified, &self.files_modified),
            (&mut merged.files_deleted, &self.files_deleted),
            (&mut merged.commands, &self.commands),
            (&mut merged.failed_calls, &self.failed_calls),
        ] {
            for item in from {
                push_unique(into, item.clone());
            }
        }
        merged.cap();
        merged
    }

    fn sections(&self) -> [(&'static str, &Vec<String>); 6] {
        [
            ("Files read", &self.files_read),
            ("Files created", &self.files_created),
            ("Files modified", &self.files_modified),
            ("Files deleted", &self.files_deleted),
            ("Commands run", &self.commands),
            ("Failed tool calls", &self.failed_calls),
        ]
    }

    /// Renders the ledger as the plain-text section appended to summaries.
    pub fn render(&self) -> String {
        let mut out = String::from(LEDGER_HEADER);
        out.push('\n');
        for (title, items) in self.sections() {
            if items.is_empty() {
                out.push_str(&format!("{title}: (none)\n"));
            } else {
                out.push_str(&format!("{title}:\n"));
                for item in items {
                    out.push_str("- ");
                    out.push_str(&item.replace('\n', " "));
                    out.push('\n');
                }
            }
        }
        out.trim_end().to_string()
    }

    /// Reads back the ledger section of a summary written by [`Ledger::render`].
    pub fn parse(summary: &str) -> Option<Ledger> {
        let start = summary.find(LEDGER_HEADER)?;
        let mut ledger = Ledger::default();
        let mut current: Option<usize> = None;
        for line in summary[start + LEDGER_HEADER.len()..].lines() {
            if line.starts_with("## ") {
                break;
            }
            if let Some(item) = line.strip_prefix("- ") {
                if let Some(index) = current {
                    let list = ledger.list_mut(index);
                    list.push(item.to_string());
                }
                continue;
            }
            current = [
                "Files read",
                "Files created",
                "Files modified",
                "Files deleted",
                "Commands run",
                "Failed tool calls",
            ]
            .iter()
            .position(|title| line.starts_with(&format!("{title}:")));
        }
        Some(ledger)
    }

    fn list_mut(&mut self, index: usize) -> &mut Vec<String> {
        match index {
            0 => &mut self.files_read,
            1 => &mut self.files_created,
            2 => &mut self.files_modified,
            3 => &mut self.files_deleted,
            4 => &mut self.commands,
            _ => &mut self.failed_calls,
        }
    }
}

/// Paths a shell command deletes with `rm` (best effort: plain arguments only).
fn deleted_by_shell(command: &str) -> Vec<String> {
    let mut deleted = Vec::new();
    for segment in command.split(['&', ';', '|', '\n']) {
        let mut words = segment.split_whitespace();
        if words.next() != Some("rm") {
            continue;
        }
        for word in words {
            if word.starts_with('-') {
                continue;
            }
            deleted.push(word.trim_matches(['"', '\'']).to_string());
        }
    }
    deleted
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conversation() -> Vec<Value> {
        json!([
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "1", "name": "read_file", "input": {"path": "src/a.rs"}},
                {"type": "tool_use", "id": "2", "name": "write_file", "input": {"file_path": "src/b.rs", "content": "x"}},
                {"type": "tool_use", "id": "3", "name": "str_replace_based_edit_tool", "input": {"command": "str_replace", "path": "src/c.rs", "old_str": "a", "new_str": "b"}},
                {"type": "tool_use", "id": "4", "name": "bash", "input": {"command": "cargo test && rm -f old.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "1", "content": "fn a() {}"},
                {"type": "tool_result", "tool_use_id": "2", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "3", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "4", "is_error": true, "content": "error[E0425]: cannot find value `x`\nmore"}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "5", "type": "function", "function": {"name": "delete_file", "arguments": "{\"filename\":\"tmp.log\"}"}}]},
            {"role": "tool", "tool_call_id": "5", "content": "deleted"}
        ])
        .as_array()
        .unwrap()
        .clone()
    }

    #[test]
    fn extracts_file_operations_commands_and_failures() {
        let ledger = Ledger::extract(&conversation());
        assert_eq!(ledger.files_read, vec!["src/a.rs"]);
        assert_eq!(ledger.files_created, vec!["src/b.rs"]);
        assert_eq!(ledger.files_modified, vec!["src/c.rs"]);
        assert_eq!(ledger.files_deleted, vec!["old.txt", "tmp.log"]);
        assert_eq!(ledger.commands, vec!["cargo test && rm -f old.txt"]);
        assert_eq!(
            ledger.failed_calls,
            vec!["bash `cargo test && rm -f old.txt`: error[E0425]: cannot find value `x`"]
        );
    }

    #[test]
    fn renders_and_parses_back() {
        let ledger = Ledger::extract(&conversation());
        let text = format!("## Goal\nstuff\n\n{}", ledger.render());
        assert_eq!(Ledger::parse(&text), Some(ledger));
    }

    #[test]
    fn merging_keeps_earlier_items_and_dedups() {
        let earlier = Ledger {
            files_read: vec!["x".into(), "src/a.rs".into()],
            ..Ledger::default()
        };
        let merged = Ledger::extract(&conversation()).merged_after(&earlier);
        assert_eq!(merged.files_read, vec!["x", "src/a.rs"]);
    }
}
