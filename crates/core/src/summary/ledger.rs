//! The ledger (SPEC §4.5): facts about the summarized messages that must not depend on the
//! summary model's judgement — which files were read, created, modified or deleted, which
//! commands ran, which tool calls failed. Evaluations of other compactors found "which files
//! were touched" their weakest point, so these lists are extracted deterministically from the
//! tool calls and appended to every summary, merged across repeated compactions.

pub(crate) mod failure;
mod protocols;
mod shell;

pub(crate) use shell::FileOp;

use std::collections::HashMap;

use serde_json::Value;

use crate::model::message::{tool_calls, tool_result_text, tool_results};
use crate::summary::sections::LEDGER_HEADER;

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

/// A call whose file operations wait for its result: a file tool whose result is an error did
/// nothing, so its operations are dropped then (an error flagged or said in the text:
/// [`failure`]; a create that failed never makes a file "created"). A shell command's effects stand even when it
/// fails (`sed -i … && pytest` fails after the edit).
struct PendingCall {
    id: String,
    files: Vec<(FileOp, String)>,
    /// Whole contents the call writes, by path.
    contents: Vec<(String, String)>,
    /// A file tool reading one whole file (no offset, range or limit): its result is the file.
    whole_read: bool,
    keep_on_error: bool,
    /// Its output is a `git diff` of the working tree, which names the files that differ.
    prints_worktree_diff: bool,
    settled: bool,
}

/// The files a patch names, in Codex's envelope or as a unified diff.
fn files_in_patch(patch: &str) -> Vec<(FileOp, String)> {
    if patch.contains("*** Begin Patch")
        || ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
            .iter()
            .any(|marker| patch.contains(marker))
    {
        shell::codex_patch_files(patch)
    } else {
        shell::diff_files(patch, None)
    }
}

/// What a tool call does, as its failures and later successes are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// Runs a command line.
    Command,
    /// Writes, edits or deletes files (the tool's own file operations).
    WriteFile,
    /// Reads files.
    ReadFile,
    /// Anything else.
    Other,
}

/// Whether the tool call whose result is `output` failed: flagged (`is_error`), or said in the
/// text in one of the forms agents print (the table of [`failure`]'s docs). The ledger's
/// "Failed tool calls" and the summary's latest failure read failures this way.
pub fn call_failed(is_error: bool, output: &str) -> bool {
    failure::failed(is_error, output)
}

/// What a call does and to what: its command line, the paths it writes or reads, else its
/// subject (a path or command field of a tool outside the table) or its input as JSON.
pub fn call_key(name: &str, input: &Value) -> (CallKind, String) {
    let tool_use = protocols::interpret(name, input);
    if let Some(command_line) = tool_use.command_line {
        return (CallKind::Command, command_line);
    }
    let mut files = tool_use.files;
    if let Some(patch) = &tool_use.patch {
        files.extend(files_in_patch(patch));
    }
    let mut paths: Vec<String> = Vec::new();
    for (_, path) in &files {
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
    if !paths.is_empty() {
        let kind = if files.iter().all(|(op, _)| *op == FileOp::Read) {
            CallKind::ReadFile
        } else {
            CallKind::WriteFile
        };
        return (kind, paths.join(", "));
    }
    let subject =
        protocols::subject_of(input).unwrap_or_else(|| crate::model::tokens::compact_json(input));
    (CallKind::Other, subject)
}

/// What a call acts on, as its failure is listed: the command line it runs, else the paths
/// it touches (a text editor's `create` names its path, not its command), else the path or
/// command fields a tool outside the table holds.
pub(crate) fn call_subject(name: &str, input: &Value) -> Option<String> {
    let tool_use = protocols::interpret(name, input);
    if let Some(command_line) = tool_use.command_line {
        return Some(command_line);
    }
    let mut paths: Vec<String> = Vec::new();
    for (_, path) in tool_use.files {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    if !paths.is_empty() {
        return Some(paths.join(", "));
    }
    protocols::subject_of(input)
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

/// One file operation of the tool calls, in the order they took effect (when their results
/// came; a call without a result, at the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileEvent {
    pub op: FileOp,
    pub path: String,
    /// The whole content of the file after the operation, when the conversation shows it: the
    /// content a whole write wrote, or the result of a whole read.
    pub content: Option<String>,
    /// Its call's result came and did not say it failed, flagged or in its text
    /// ([`failure::reported_failure`]): what rehydration may read again.
    pub succeeded: bool,
}

/// The file operations of `messages`' tool calls, in order (see [`FileEvent`]): what
/// rehydration reads to know which files were touched last, and which content the
/// conversation last showed of each.
pub(crate) fn file_events(messages: &[Value]) -> Vec<FileEvent> {
    let mut events = Vec::new();
    Ledger::walk(messages, &mut Ledger::default(), &mut |event| {
        events.push(event)
    });
    events
}

/// Input fields of a file tool that read part of a file only.
const PARTIAL_READ_FIELDS: &[&str] = &[
    "offset",
    "limit",
    "view_range",
    "start_line",
    "end_line",
    "line_start",
    "line_end",
    "startLine",
    "endLine",
    "lines",
    "range",
    "head",
    "tail",
    "max_lines",
];

fn reads_whole_file(input: &Value) -> bool {
    PARTIAL_READ_FIELDS
        .iter()
        .all(|field| input.get(*field).is_none_or(Value::is_null))
}

/// The file a whole read's output shows: the output itself, or, when the tool numbers its
/// lines (`cat -n`: Claude Code's `     1→text`, the text editor's `     1\ttext`, after an
/// OpenHands-style "Here's the result of running `cat -n`" line), the lines without their
/// numbers.
pub(crate) fn read_output_text(output: &str) -> String {
    let body = match output.split_once('\n') {
        Some((first, rest)) if first.starts_with("Here's the result of running `cat -n`") => rest,
        _ => output,
    };
    let strip = |line: &str| -> Option<String> {
        let trimmed = line.trim_start_matches(' ');
        let digits = trimmed.len()
            - trimmed
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        if digits == 0 {
            return None;
        }
        let rest = &trimmed[digits..];
        rest.strip_prefix('→')
            .or_else(|| rest.strip_prefix('\t'))
            .map(str::to_string)
    };
    let lines: Vec<&str> = body.split('\n').collect();
    let numbered: Option<Vec<String>> = lines
        .iter()
        .enumerate()
        // A last empty line is the file's final newline.
        .filter(|(i, line)| !(*i + 1 == lines.len() && line.is_empty()))
        .map(|(_, line)| strip(line))
        .collect();
    match numbered {
        Some(numbered) if !numbered.is_empty() => {
            let mut text = numbered.join("\n");
            if lines.last() == Some(&"") {
                text.push('\n');
            }
            text
        }
        _ => output.to_string(),
    }
}

impl Ledger {
    /// Extracts the ledger of a list of messages.
    ///
    /// File tools are read through the table in `protocols`, shell commands through the
    /// scanner in `shell`. Each path is listed once among created / modified / deleted, under
    /// what happened to it last: a file written after the session read it (or wrote it) existed
    /// before, so it counts as modified; a file deleted after it was created is listed as
    /// deleted.
    pub fn extract(messages: &[Value]) -> Ledger {
        let mut ledger = Ledger::default();
        Ledger::walk(messages, &mut ledger, &mut |_| {});
        ledger.cap();
        ledger
    }

    /// Reads the tool calls of `messages` in order: commands and failed calls into `ledger`,
    /// and each file operation, when it takes effect, both into `ledger` and to `on_file`.
    fn walk(messages: &[Value], ledger: &mut Ledger, on_file: &mut dyn FnMut(FileEvent)) {
        let mut calls_by_id: HashMap<String, (String, Value)> = HashMap::new();
        let mut pending: Vec<PendingCall> = Vec::new();
        let mut known = shell::KnownContents::default();
        for message in messages {
            for call in tool_calls(message) {
                let input = call.input.as_ref();
                calls_by_id.insert(call.id.to_string(), (call.name.to_string(), input.clone()));
                let tool_use = protocols::interpret(call.name, input);
                for (path, content) in &tool_use.contents {
                    known.remember(path, content);
                }
                let mut files = tool_use.files;
                if let Some(patch) = &tool_use.patch {
                    files.extend(files_in_patch(patch));
                }
                let mut prints_worktree_diff = false;
                if let Some(command_line) = &tool_use.command_line {
                    push_unique(
                        &mut ledger.commands,
                        clip(command_line.trim(), MAX_ITEM_CHARS),
                    );
                    let effects = shell::scan(command_line, &mut known);
                    files.extend(effects.files);
                    prints_worktree_diff = effects.prints_worktree_diff;
                }
                let whole_read = tool_use.command_line.is_none()
                    && files.len() == 1
                    && files[0].0 == FileOp::Read
                    && reads_whole_file(input);
                pending.push(PendingCall {
                    id: call.id.to_string(),
                    files,
                    contents: tool_use.contents,
                    whole_read,
                    keep_on_error: tool_use.command_line.is_some(),
                    prints_worktree_diff,
                    settled: false,
                });
            }
            for result in tool_results(message) {
                let output = tool_result_text(result.content);
                let failed = failure::failed(result.is_error, &output);
                if let Some(call) = pending
                    .iter_mut()
                    .rev()
                    .find(|call| !call.settled && call.id == result.tool_use_id)
                {
                    call.settled = true;
                    if !failed || call.keep_on_error {
                        // Rehydration reads again only what surely succeeded: beside the forms
                        // `failure::failed` reads, an error phrase at either end of the output
                        // ("Permission denied") counts. Only file events need it.
                        let succeeded = !failed
                            && (call.files.is_empty() || !failure::reported_failure(&output));
                        let read = (call.whole_read && !failed).then(|| read_output_text(&output));
                        for (op, path) in std::mem::take(&mut call.files) {
                            let content = match op {
                                FileOp::Read => read.clone(),
                                FileOp::Create | FileOp::Modify => call.content_of(&path),
                                FileOp::Delete => None,
                            };
                            settle(ledger, on_file, op, path, content, succeeded);
                        }
                    }
                    if call.prints_worktree_diff {
                        for (op, path) in shell::diff_files(&output, None) {
                            settle(ledger, on_file, op, path, None, true);
                        }
                    }
                }
                if !failed {
                    continue;
                }
                let (name, detail) = match calls_by_id.get(result.tool_use_id) {
                    Some((name, input)) => {
                        (name.clone(), call_subject(name, input).unwrap_or_default())
                    }
                    None => ("tool".to_string(), String::new()),
                };
                // The line that says what went wrong, not a status line ("Exit code 2").
                let error = clip(&failure::informative_line(&output), MAX_ITEM_CHARS);
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
        // Calls whose results are not among the messages: assume they did what they said.
        for call in pending.into_iter().filter(|call| !call.settled) {
            for (op, path) in call.files.clone() {
                let content = match op {
                    FileOp::Create | FileOp::Modify => call.content_of(&path),
                    FileOp::Read | FileOp::Delete => None,
                };
                // No result: not known to have succeeded.
                settle(ledger, on_file, op, path, content, false);
            }
        }
    }

    /// Notes one file operation; see [`Ledger::extract`] for how the lists relate.
    fn record(&mut self, op: FileOp, path: String) {
        if path.is_empty() {
            return;
        }
        let remove = |list: &mut Vec<String>, path: &str| list.retain(|item| item != path);
        match op {
            FileOp::Read => push_unique(&mut self.files_read, path),
            FileOp::Create | FileOp::Modify => {
                remove(&mut self.files_deleted, &path);
                let created_here = self.files_created.contains(&path);
                let existed =
                    self.files_modified.contains(&path) || self.files_read.contains(&path);
                if created_here || (op == FileOp::Create && !existed) {
                    push_unique(&mut self.files_created, path);
                } else {
                    push_unique(&mut self.files_modified, path);
                }
            }
            FileOp::Delete => {
                remove(&mut self.files_created, &path);
                remove(&mut self.files_modified, &path);
                push_unique(&mut self.files_deleted, path);
            }
        }
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

    /// `earlier` followed by `self`: the union of both, newest last, bounded. A file's latest
    /// status wins, as within one extraction.
    pub fn merged_after(&self, earlier: &Ledger) -> Ledger {
        let mut merged = earlier.clone();
        // Writes before reads: a file this ledger created and then read is still created.
        for (op, items) in [
            (FileOp::Create, &self.files_created),
            (FileOp::Modify, &self.files_modified),
            (FileOp::Delete, &self.files_deleted),
            (FileOp::Read, &self.files_read),
        ] {
            for item in items {
                merged.record(op, item.clone());
            }
        }
        for (into, from) in [
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
                    // An item comes from a tool call: on its line whatever it holds.
                    out.push_str(&super::reserved::one_line(item));
                    out.push('\n');
                }
            }
        }
        out.trim_end().to_string()
    }

    /// Reads back the ledger section of a summary written by [`Ledger::render`].
    /// The ledger is the section of that header ([`super::sections`]), so a header quoted
    /// inside the user's messages or a file's content is not read as one.
    pub fn parse(summary: &str) -> Option<Ledger> {
        let section = super::sections::split(summary).ledger?;
        let mut ledger = Ledger::default();
        let mut current: Option<usize> = None;
        // The lines after the header line (as written: the parser compares headers normalized).
        let body = section.split_once('\n').map_or("", |(_, body)| body);
        for line in body.lines() {
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

/// One file operation takes effect.
fn settle(
    ledger: &mut Ledger,
    on_file: &mut dyn FnMut(FileEvent),
    op: FileOp,
    path: String,
    content: Option<String>,
    succeeded: bool,
) {
    if path.is_empty() {
        return;
    }
    on_file(FileEvent {
        op,
        path: path.clone(),
        content,
        succeeded,
    });
    ledger.record(op, path);
}

impl PendingCall {
    /// The whole content this call writes to `path`, if it says it.
    fn content_of(&self, path: &str) -> Option<String> {
        self.contents
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, content)| content.clone())
    }
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

    fn tool_use(id: &str, name: &str, input: Value) -> Value {
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
    }

    fn tool_result(id: &str, is_error: bool, content: &str) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": content}]})
    }

    #[test]
    fn a_file_tool_that_fails_changes_nothing_but_a_failing_command_still_ran() {
        let messages = vec![
            tool_use(
                "1",
                "Edit",
                json!({"file_path": "/p/a.ex", "old_string": "x", "new_string": "y"}),
            ),
            tool_result("1", true, "String to replace not found in file."),
            tool_use(
                "2",
                "Bash",
                json!({"command": "sed -i 's/a/b/' /p/b.ex && mix test"}),
            ),
            tool_result("2", true, "1 test, 1 failure"),
        ];
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.files_modified, vec!["/p/b.ex"]);
        assert_eq!(ledger.failed_calls.len(), 2);
    }

    #[test]
    fn a_failure_said_in_the_text_is_a_failure() {
        // openhands-sdk-sonnet4-hello: an OpenAI Chat list (no `is_error`), the create of
        // hello.py failed, then a view failed on a relative path.
        let session: Vec<Value> = serde_json::from_value(json!([
            {"role": "user", "content": [{"type": "text", "text": "Hello! Can you create a new Python file named hello.py that prints 'Hello, World!'?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "I'll create it."}], "tool_calls": [{"id": "toolu_01", "type": "function", "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"create\", \"path\": \"/workspace/hello.py\", \"file_text\": \"print('Hello, World!')\", \"security_risk\": \"LOW\"}"}}]},
            {"role": "tool", "tool_call_id": "toolu_01", "content": [{"type": "text", "text": "Ran into [Errno 2] No such file or directory: '/workspace/hello.py' while trying to write to /workspace/hello.py"}]},
            {"role": "assistant", "content": [], "tool_calls": [{"id": "toolu_02", "type": "function", "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"view\", \"path\": \"hello.py\", \"security_risk\": \"LOW\"}"}}]},
            {"role": "tool", "tool_call_id": "toolu_02", "content": [{"type": "text", "text": "Invalid `path` parameter: hello.py. The path should be an absolute path, starting with `/`."}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "toolu_03", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"python hello.py\"}"}}]},
            {"role": "tool", "tool_call_id": "toolu_03", "content": [{"type": "text", "text": "Hello, World!\n[The command completed with exit code 0.]\n[Command finished with exit code 0]"}]}
        ])).unwrap();
        let ledger = Ledger::extract(&session);
        assert_eq!(ledger.files_created, Vec::<String>::new());
        assert_eq!(ledger.files_read, Vec::<String>::new());
        assert_eq!(
            ledger.failed_calls,
            vec![
                "str_replace_editor `/workspace/hello.py`: Ran into [Errno 2] No such file or directory: '/workspace/hello.py' while trying to write to /workspace/hello.py",
                "str_replace_editor `hello.py`: Invalid `path` parameter: hello.py. The path should be an absolute path, starting with `/`.",
            ]
        );
        // An edit the text says failed changes nothing; Claude Code's status line gives way to
        // the line that names the error.
        let messages = vec![
            tool_use(
                "1",
                "str_replace_editor",
                json!({"command": "str_replace", "path": "/p/a.py", "old_str": "x", "new_str": "y"}),
            ),
            json!({"role": "tool", "tool_call_id": "1", "content": "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /p/a.py."}),
            tool_use("2", "Bash", json!({"command": "mix test"})),
            tool_result(
                "2",
                true,
                "Exit code 2\n** (CompileError) lib/a.ex:3: undefined function foo/0",
            ),
        ];
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.files_modified, Vec::<String>::new());
        assert_eq!(
            ledger.failed_calls,
            vec![
                "str_replace_editor `/p/a.py`: No replacement was performed, old_str `x` did not appear verbatim in /p/a.py.",
                "Bash `mix test`: ** (CompileError) lib/a.ex:3: undefined function foo/0",
            ]
        );
    }

    #[test]
    fn each_file_is_listed_under_what_happened_to_it_last() {
        let messages = vec![
            tool_use("1", "Read", json!({"file_path": "/p/old.ex"})),
            tool_result("1", false, "..."),
            // Written after it was read: it existed, so it is modified, not created.
            tool_use(
                "2",
                "Write",
                json!({"file_path": "/p/old.ex", "content": "x"}),
            ),
            tool_result("2", false, "ok"),
            tool_use(
                "3",
                "Write",
                json!({"file_path": "/p/scratch.py", "content": "x"}),
            ),
            tool_result("3", false, "ok"),
            tool_use("4", "Bash", json!({"command": "rm /p/scratch.py"})),
            tool_result("4", false, ""),
        ];
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.files_created, Vec::<String>::new());
        assert_eq!(ledger.files_modified, vec!["/p/old.ex"]);
        assert_eq!(ledger.files_deleted, vec!["/p/scratch.py"]);
        assert_eq!(ledger.files_read, vec!["/p/old.ex"]);
    }

    #[test]
    fn scripts_written_in_one_call_are_followed_when_run_in_another() {
        let messages = vec![
            tool_use(
                "1",
                "bash",
                json!({"command": "cat <<'EOF' > setup.sh\nmkdir -p pkg\necho x > pkg/gen.py\nEOF"}),
            ),
            tool_result("1", false, ""),
            tool_use("2", "bash", json!({"command": "bash setup.sh"})),
            tool_result("2", false, ""),
        ];
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.files_created, vec!["setup.sh", "pkg/gen.py"]);
    }

    #[test]
    fn a_worktree_diff_in_a_result_names_the_changed_files() {
        let messages = vec![
            tool_use("1", "bash", json!({"command": "git add -A && git diff --cached"})),
            tool_result("1", false, "diff --git a/src/a.py b/src/a.py\nindex 1..2 100644\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n"),
            tool_use("2", "bash", json!({"command": "git show HEAD~3"})),
            tool_result("2", false, "diff --git a/historic.py b/historic.py\n"),
        ];
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.files_modified, vec!["src/a.py"]);
        assert_eq!(ledger.files_created, vec!["new.txt"]);
    }

    #[test]
    fn patch_tools_name_their_files() {
        let messages = vec![tool_use(
            "1",
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: src/new.rs\n+x\n*** End Patch"}),
        )];
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.files_modified, vec!["src/lib.rs"]);
        assert_eq!(ledger.files_created, vec!["src/new.rs"]);
    }

    #[test]
    fn a_numbered_read_output_is_the_file_without_its_line_numbers() {
        assert_eq!(
            read_output_text("     1→a\n     2→\tb\n     3→"),
            "a\n\tb\n"
        );
        assert_eq!(
            read_output_text(
                "Here's the result of running `cat -n` on /p/a.py:\n     1\tx = 1\n     2\ty = 2\n"
            ),
            "x = 1\ny = 2\n"
        );
        // Not every line numbered: the output as it is.
        assert_eq!(
            read_output_text("12 apples\nno number"),
            "12 apples\nno number"
        );
        let events = file_events(&[
            tool_use("1", "Read", json!({"file_path": "/p/a.py"})),
            tool_result("1", false, "     1→a"),
            tool_use("2", "Read", json!({"file_path": "/p/a.py", "offset": 3})),
            tool_result("2", false, "     3→c"),
            tool_use(
                "3",
                "Write",
                json!({"file_path": "/p/b.py", "content": "B"}),
            ),
            tool_result("3", true, "denied"),
        ]);
        assert_eq!(
            events,
            vec![
                FileEvent {
                    op: FileOp::Read,
                    path: "/p/a.py".into(),
                    content: Some("a".into()),
                    succeeded: true,
                },
                FileEvent {
                    op: FileOp::Read,
                    path: "/p/a.py".into(),
                    content: None,
                    succeeded: true,
                },
            ]
        );
    }

    #[test]
    fn merging_keeps_the_latest_status() {
        let earlier = Ledger {
            files_created: vec!["a.py".into()],
            files_modified: vec!["b.py".into()],
            ..Ledger::default()
        };
        let later = Ledger {
            files_deleted: vec!["a.py".into()],
            files_created: vec!["c.py".into()],
            files_read: vec!["c.py".into()],
            ..Ledger::default()
        };
        let merged = later.merged_after(&earlier);
        assert_eq!(merged.files_created, vec!["c.py"]);
        assert_eq!(merged.files_modified, vec!["b.py"]);
        assert_eq!(merged.files_deleted, vec!["a.py"]);
    }
}
