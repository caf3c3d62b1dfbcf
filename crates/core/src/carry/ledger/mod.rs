//! The ledger (SPEC §4.5): facts about the summarized messages that must not depend on the
//! summary model's judgement — which files were read, created, modified or deleted, which
//! commands ran, which tool calls failed. Evaluations of other compactors found "which files
//! were touched" their weakest point, so these lists are extracted deterministically from the
//! tool calls and appended to every summary, merged across repeated compactions.

pub(crate) mod failure;
mod protocols;

// The shell reader is a crate of its own (`crates/shell-effects`): it knows nothing of messages.
pub(crate) use shell_effects::FileOp;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::base::text::clip;
use crate::carry::sections::LEDGER_HEADER;
use crate::model::exchanges::Exchanges;
use crate::model::message::tool_result_text;
use crate::model::tokens::{self, Encoding};

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
    /// How many times each created or modified file was written (a file written once: 1).
    pub edit_counts: BTreeMap<String, usize>,
    /// What an earlier, shortened ledger no longer names (see [`Ledger::render_within`]): by
    /// list (0–3 the file lists in the order of [`Ledger::sections`], 4 commands, 5 failed
    /// calls) and folder (`""` for commands and failed calls), how many.
    pub elided: BTreeMap<(usize, String), usize>,
}

/// The line of a shortened ledger that says where the full one is.
pub const FULL_LEDGER_NOTE: &str = "(Shortened to fit the summary. The full ledger is kept beside the archive: call the recall tool with ledger: true.)";

/// A call whose file operations wait for its result: a file tool whose result is an error did
/// nothing, so its operations are dropped then (an error flagged or said in the text:
/// [`failure`]; a create that failed never makes a file "created"). A shell command's effects stand even when it
/// fails (`sed -i … && pytest` fails after the edit).
struct PendingCall {
    /// The tool's name and input, to name the call when it failed.
    name: String,
    input: Value,
    files: Vec<(FileOp, String)>,
    /// Whole contents the call writes, by path.
    contents: Vec<(String, String)>,
    /// A file tool reading one whole file (no offset, range or limit): its result is the file.
    whole_read: bool,
    keep_on_error: bool,
    /// Its output is a `git diff` of the working tree, which names the files that differ.
    prints_worktree_diff: bool,
}

/// The files a patch names, in Codex's envelope or as a unified diff.
fn files_in_patch(patch: &str) -> Vec<(FileOp, String)> {
    if patch.contains("*** Begin Patch")
        || ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
            .iter()
            .any(|marker| patch.contains(marker))
    {
        shell_effects::codex_patch_files(patch)
    } else {
        shell_effects::diff_files(patch, None)
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
    /// `shell-effects` crate. Each path is listed once among created / modified / deleted, under
    /// what happened to it last: a file written after the session read it (or wrote it) existed
    /// before, so it counts as modified; a file deleted after it was created is listed as
    /// deleted.
    pub fn extract(messages: &[Value]) -> Ledger {
        let mut ledger = Ledger::default();
        Ledger::walk(messages, &mut ledger, &mut |_| {});
        ledger.cap();
        ledger
    }

    /// The ledger of a compacted region: the ledger `earlier` (the body of the summary the
    /// region holds, being updated) carries, then the region's own tool calls.
    pub fn of_region(messages: &[Value], earlier: Option<&str>) -> Ledger {
        match earlier.and_then(Ledger::parse) {
            Some(earlier) => Ledger::extract(messages).merged_after(&earlier),
            None => Ledger::extract(messages),
        }
    }

    /// Reads the tool calls of `messages` in order: commands and failed calls into `ledger`,
    /// and each file operation, when it takes effect, both into `ledger` and to `on_file`.
    fn walk(messages: &[Value], ledger: &mut Ledger, on_file: &mut dyn FnMut(FileEvent)) {
        let mut exchanges: Exchanges<PendingCall> = Exchanges::new();
        let mut known = shell_effects::KnownContents::default();
        for message in messages {
            let results = exchanges.read(message, |call| {
                let input = call.input.as_ref();
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
                    let effects = shell_effects::scan(command_line, &mut known);
                    files.extend(effects.files);
                    prints_worktree_diff = effects.prints_worktree_diff;
                }
                let whole_read = tool_use.command_line.is_none()
                    && files.len() == 1
                    && files[0].0 == FileOp::Read
                    && reads_whole_file(input);
                Some(PendingCall {
                    name: call.name.to_string(),
                    input: input.clone(),
                    files,
                    contents: tool_use.contents,
                    whole_read,
                    keep_on_error: tool_use.command_line.is_some(),
                    prints_worktree_diff,
                })
            });
            for (result, mut call) in results {
                let output = tool_result_text(result.content);
                let failed = failure::failed(result.is_error, &output);
                if let Some(call) = &mut call {
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
                        for (op, path) in shell_effects::diff_files(&output, None) {
                            settle(ledger, on_file, op, path, None, true);
                        }
                    }
                }
                if !failed {
                    continue;
                }
                let (name, detail) = match call {
                    Some(call) => {
                        let detail = call_subject(&call.name, &call.input).unwrap_or_default();
                        (call.name, detail)
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
        for call in exchanges.into_unanswered() {
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
        for (index, max) in [
            (0, MAX_FILES),
            (1, MAX_FILES),
            (2, MAX_FILES),
            (3, MAX_FILES),
            (4, MAX_COMMANDS),
            (5, MAX_FAILURES),
        ] {
            let list = self.list_mut(index);
            let excess = list.len().saturating_sub(max);
            let dropped: Vec<String> = list.drain(..excess).collect();
            for item in dropped {
                let folder = if index < 4 {
                    folder_of(&item)
                } else {
                    String::new()
                };
                *self.elided.entry((index, folder)).or_default() += 1;
            }
        }
        let written: std::collections::HashSet<&String> = self
            .files_created
            .iter()
            .chain(&self.files_modified)
            .collect();
        self.edit_counts.retain(|path, _| written.contains(path));
    }

    pub fn is_empty(&self) -> bool {
        self.files_read.is_empty()
            && self.files_created.is_empty()
            && self.files_modified.is_empty()
            && self.files_deleted.is_empty()
            && self.commands.is_empty()
            && self.failed_calls.is_empty()
            && self.elided.is_empty()
    }

    /// `earlier` followed by `self`: the union of both, newest last, bounded. A file's latest
    /// status wins, as within one extraction.
    pub fn merged_after(&self, earlier: &Ledger) -> Ledger {
        let mut merged = self.merged_whole(earlier);
        merged.cap();
        merged
    }

    /// [`Ledger::merged_after`] without the bounds of one summary's ledger.
    fn merged_whole(&self, earlier: &Ledger) -> Ledger {
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
        for (path, n) in &self.edit_counts {
            *merged.edit_counts.entry(path.clone()).or_default() += n;
        }
        for (key, n) in &self.elided {
            *merged.elided.entry(key.clone()).or_default() += n;
        }
        merged
    }

    /// The ledgers of one session's compactions, oldest first, as one, unbounded: every file
    /// each of them names under what happened to it last, each edit count the highest any of them says (each
    /// carries the earlier ones'), nothing left out that one of them names. What the recall tool
    /// answers for the full ledger.
    pub fn union<'a>(ledgers: impl IntoIterator<Item = &'a Ledger>) -> Ledger {
        let mut all = Ledger::default();
        for ledger in ledgers {
            let mut named = ledger.clone();
            named.elided.clear();
            let counts = std::mem::take(&mut named.edit_counts);
            all = named.merged_whole(&all);
            for (path, n) in counts {
                let slot = all.edit_counts.entry(path).or_default();
                *slot = (*slot).max(n);
            }
        }
        let written: std::collections::HashSet<&String> = all
            .files_created
            .iter()
            .chain(&all.files_modified)
            .collect();
        let counts = std::mem::take(&mut all.edit_counts);
        all.edit_counts = counts
            .into_iter()
            .filter(|(path, _)| written.contains(path))
            .collect();
        all
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

    /// Renders the ledger as the plain-text section appended to summaries: every list that
    /// has something to say (an empty one is left out), a file written more than once with
    /// its count.
    pub fn render(&self) -> String {
        self.render_keeping([usize::MAX; 4])
    }

    /// The ledger within `max_tokens` (its share of the summary budget). Past it, each list
    /// keeps by name its most recent items and, of the files written, the most edited; the
    /// other files are counted per folder ("41 more files under src/parsers/"), folders merged
    /// into their parents when there are many, and the commands and failed calls left out are
    /// counted; a line says where the full ledger is. Empty when not even that fits.
    pub fn render_within(&self, max_tokens: usize, encoding: Encoding) -> String {
        let fits = |text: &String| tokens::count_text(encoding, text) <= max_tokens;
        let full = self.render();
        if fits(&full) {
            return full;
        }
        // What gives way first: the commands (the least use to a resumed agent, and the
        // longest lines), then the failed calls down to the last few (the latest failure has
        // its own section), then the files read, then the files written and deleted, then the
        // last failed calls.
        const LEVELS: [usize; 8] = [64, 32, 16, 8, 4, 2, 1, 0];
        let all = usize::MAX;
        let mut plans: Vec<[usize; 4]> = Vec::new();
        plans.extend(LEVELS.iter().map(|&c| [all, all, c, all]));
        plans.extend(LEVELS[..5].iter().map(|&f| [all, all, 0, f]));
        plans.extend(LEVELS.iter().map(|&r| [r, all, 0, 4]));
        plans.extend(LEVELS.iter().map(|&w| [0, w, 0, 4]));
        plans.push([0, 0, 0, 0]);
        for keep in plans {
            let text = self.render_keeping(keep);
            if fits(&text) {
                return text;
            }
        }
        let files: usize = (0..4).map(|i| self.list(i).len()).sum::<usize>()
            + self
                .elided
                .iter()
                .filter(|((i, _), _)| *i < 4)
                .map(|(_, n)| n)
                .sum::<usize>();
        let text = format!("{LEDGER_HEADER}\n({files} files touched.) {FULL_LEDGER_NOTE}");
        if fits(&text) {
            text
        } else {
            String::new()
        }
    }

    /// The ledger naming at most `keep` items of each list — files read, files written
    /// (created, modified, deleted; and as many again of the most edited), commands, failed
    /// calls; `usize::MAX`: all of them.
    fn render_keeping(&self, keep: [usize; 4]) -> String {
        let mut out = String::from(LEDGER_HEADER);
        let mut shortened = false;
        for (index, (title, items)) in self.sections().into_iter().enumerate() {
            let keep = match index {
                0 => keep[0],
                1..=3 => keep[1],
                4 => keep[2],
                _ => keep[3],
            };
            let (named, more) = self.kept_of(index, items, keep);
            if named.is_empty() && more.is_empty() {
                continue;
            }
            shortened |= !more.is_empty();
            out.push_str(&format!("\n{title}:"));
            for item in named {
                out.push_str("\n- ");
                // An item comes from a tool call: on its line whatever it holds.
                out.push_str(&super::reserved::one_line(item));
                if index == 1 || index == 2 {
                    if let Some(n) = self.edit_counts.get(item).filter(|n| **n > 1) {
                        out.push_str(&format!(" ({n} edits)"));
                    }
                }
            }
            for line in more {
                out.push_str("\n- ");
                out.push_str(&line);
            }
        }
        if shortened {
            out.push('\n');
            out.push_str(FULL_LEDGER_NOTE);
        }
        out
    }

    /// Of list `index`, the items named (in their order) and the lines counting the rest.
    fn kept_of<'a>(
        &self,
        index: usize,
        items: &'a [String],
        keep: usize,
    ) -> (Vec<&'a String>, Vec<String>) {
        let recent = items.len().saturating_sub(keep);
        let mut named: Vec<bool> = (0..items.len()).map(|i| i >= recent).collect();
        if index == 1 || index == 2 {
            // The most edited files, beside the most recent.
            let mut by_edits: Vec<usize> = (0..items.len())
                .filter(|i| self.edit_counts.get(&items[*i]).is_some_and(|n| *n > 1))
                .collect();
            // The most edits first; of equal counts, the more recent.
            by_edits.sort_by_key(|i| {
                (
                    std::cmp::Reverse(self.edit_counts[&items[*i]]),
                    std::cmp::Reverse(*i),
                )
            });
            for i in by_edits.into_iter().take(keep.div_ceil(2)) {
                named[i] = true;
            }
        }
        let kept: Vec<&String> = items
            .iter()
            .zip(&named)
            .filter(|(_, n)| **n)
            .map(|(item, _)| item)
            .collect();
        let mut counts: BTreeMap<String, usize> = self
            .elided
            .iter()
            .filter(|((i, _), _)| *i == index)
            .map(|((_, folder), n)| (folder.clone(), *n))
            .collect();
        for (item, _) in items.iter().zip(&named).filter(|(_, n)| !**n) {
            let folder = if index < 4 {
                folder_of(item)
            } else {
                String::new()
            };
            *counts.entry(folder).or_default() += 1;
        }
        if counts.is_empty() {
            return (kept, Vec::new());
        }
        if index >= 4 {
            let n: usize = counts.values().sum();
            let what = if index == 4 {
                "commands"
            } else {
                "failed calls"
            };
            return (kept, vec![format!("({n} earlier {what} not listed)")]);
        }
        let max_groups = (keep / 2).clamp(2, 12);
        let counts = group_folders(counts, max_groups);
        let lines = counts
            .into_iter()
            .map(|(folder, n)| group_line(n, &folder))
            .collect();
        (kept, lines)
    }

    fn list(&self, index: usize) -> &Vec<String> {
        self.sections()[index].1
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
                    if let Some((n, folder)) = parse_group_line(item, index) {
                        *ledger.elided.entry((index, folder)).or_default() += n;
                        continue;
                    }
                    let (item, edits) = match index {
                        1 | 2 => split_edit_count(item),
                        _ => (item, 1),
                    };
                    if index == 1 || index == 2 {
                        ledger.edit_counts.insert(item.to_string(), edits);
                    }
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

/// The folder of a path, with its trailing slash (`src/parsers/` of `src/parsers/a.rs`; `./`
/// for a bare file name).
fn folder_of(path: &str) -> String {
    match path.trim_end_matches('/').rfind(['/', '\\']) {
        Some(at) => path[..=at].to_string(),
        None => "./".to_string(),
    }
}

/// The folder above `folder` (`src/` of `src/parsers/`), if there is one.
fn parent_folder(folder: &str) -> Option<String> {
    if folder == "./" || folder == "/" || folder.is_empty() {
        return None;
    }
    Some(folder_of(folder.trim_end_matches(['/', '\\'])))
}

/// Per-folder counts merged into their parent folders, the deepest first, until there are at
/// most `max` of them; past that, the smallest are counted together as "elsewhere" (an empty
/// folder).
fn group_folders(mut counts: BTreeMap<String, usize>, max: usize) -> Vec<(String, usize)> {
    while counts.len() > max {
        let deepest = counts
            .keys()
            .filter(|f| parent_folder(f).is_some())
            .max_by_key(|f| f.matches('/').count())
            .cloned();
        let Some(folder) = deepest else {
            break;
        };
        let depth = folder.matches('/').count();
        // Every folder of that depth at once: siblings meet in their parent.
        let level: Vec<String> = counts
            .keys()
            .filter(|f| f.matches('/').count() == depth && parent_folder(f).is_some())
            .cloned()
            .collect();
        for folder in level {
            let n = counts.remove(&folder).unwrap_or(0);
            let parent = parent_folder(&folder).unwrap_or_default();
            *counts.entry(parent).or_default() += n;
        }
    }
    let mut groups: Vec<(String, usize)> = counts.into_iter().collect();
    groups.sort_by_key(|(folder, n)| (std::cmp::Reverse(*n), folder.clone()));
    if groups.len() > max {
        let rest: usize = groups.drain(max.saturating_sub(1)..).map(|(_, n)| n).sum();
        groups.push((String::new(), rest));
    }
    groups
}

/// The line counting `n` files of a folder a shortened ledger does not name.
fn group_line(n: usize, folder: &str) -> String {
    let files = if n == 1 { "file" } else { "files" };
    if folder.is_empty() {
        format!("({n} more {files} elsewhere)")
    } else {
        format!(
            "({n} more {files} under {})",
            super::reserved::one_line(folder)
        )
    }
}

/// Reads a line of [`group_line`] (or the count of commands or failed calls left out) back:
/// how many, and the folder.
fn parse_group_line(item: &str, index: usize) -> Option<(usize, String)> {
    let inner = item.strip_prefix('(')?.strip_suffix(')')?;
    let (n, rest) = inner.split_once(' ')?;
    let n: usize = n.parse().ok()?;
    if index >= 4 {
        let what = if index == 4 {
            "earlier commands not listed"
        } else {
            "earlier failed calls not listed"
        };
        return (rest == what).then(|| (n, String::new()));
    }
    let rest = rest
        .strip_prefix("more files ")
        .or_else(|| rest.strip_prefix("more file "))?;
    if rest == "elsewhere" {
        return Some((n, String::new()));
    }
    rest.strip_prefix("under ").map(|f| (n, f.to_string()))
}

/// A file item and its edit count (`src/a.rs (3 edits)`; 1 without one).
fn split_edit_count(item: &str) -> (&str, usize) {
    if let Some(rest) = item.strip_suffix(" edits)") {
        if let Some((path, n)) = rest.rsplit_once(" (") {
            if let Ok(n) = n.parse::<usize>() {
                if n > 1 {
                    return (path, n);
                }
            }
        }
    }
    (item, 1)
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
    if matches!(op, FileOp::Create | FileOp::Modify) {
        *ledger.edit_counts.entry(path.clone()).or_default() += 1;
    }
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

    #[test]
    fn past_its_share_the_ledger_keeps_recent_and_most_edited_files_and_counts_the_rest() {
        let enc = Encoding::O200kBase;
        let mut messages = Vec::new();
        let mut id = 0;
        let mut write = |path: String, messages: &mut Vec<Value>| {
            id += 1;
            let call = id.to_string();
            messages.push(tool_use(
                &call,
                "Write",
                json!({"file_path": path, "content": "x"}),
            ));
            messages.push(tool_result(&call, false, "ok"));
        };
        // A file edited many times early on, then many files once each.
        write("src/core/engine.rs".into(), &mut messages);
        for _ in 0..9 {
            write("src/core/engine.rs".into(), &mut messages);
        }
        for i in 0..41 {
            write(format!("src/parsers/p{i}.rs"), &mut messages);
        }
        for i in 0..30 {
            write(format!("tests/t{i}.rs"), &mut messages);
        }
        let ledger = Ledger::extract(&messages);
        assert_eq!(ledger.edit_counts["src/core/engine.rs"], 10);
        let full = ledger.render();
        assert!(full.contains("- src/core/engine.rs (10 edits)"), "{full}");
        let budget = 150;
        let short = ledger.render_within(budget, enc);
        assert!(tokens::count_text(enc, &short) <= budget, "{short}");
        // The most edited by name, the most recent by name, the rest per folder.
        assert!(short.contains("- src/core/engine.rs (10 edits)"), "{short}");
        assert!(short.contains("- tests/t29.rs"), "{short}");
        assert!(
            short.contains("- (41 more files under src/parsers/)"),
            "{short}"
        );
        assert!(short.contains(FULL_LEDGER_NOTE), "{short}");
        // Read back, the counts stay counts (not files), and carry into the next merge.
        let parsed = Ledger::parse(&short).unwrap();
        assert!(!parsed.files_created.iter().any(|f| f.starts_with('(')));
        assert_eq!(parsed.elided[&(1, "src/parsers/".to_string())], 41);
        assert_eq!(parsed.edit_counts["src/core/engine.rs"], 10);
        let more: Vec<Value> = (0..5)
            .flat_map(|i| {
                let call = format!("m{i}");
                vec![
                    tool_use(
                        &call,
                        "Write",
                        json!({"file_path": format!("src/parsers/q{i}.rs"), "content": "x"}),
                    ),
                    tool_result(&call, false, "ok"),
                ]
            })
            .collect();
        let merged = Ledger::extract(&more).merged_after(&parsed);
        let again = merged.render_within(budget, enc);
        assert!(tokens::count_text(enc, &again) <= budget, "{again}");
        assert!(again.contains("src/parsers/"), "{again}");
        // Nothing fits: nothing is written.
        assert_eq!(ledger.render_within(5, enc), "");
        // Many folders merge into their parents.
        let groups = group_folders(
            (0..30)
                .map(|i| (format!("src/m{i}/"), 1))
                .chain([("docs/".to_string(), 2)])
                .collect(),
            3,
        );
        assert_eq!(
            groups,
            vec![("src/".to_string(), 30), ("docs/".to_string(), 2)]
        );
        assert_eq!(folder_of("a.rs"), "./");
        assert_eq!(parent_folder("src/parsers/"), Some("src/".to_string()));
        assert_eq!(parent_folder("src/"), Some("./".to_string()));
    }

    #[test]
    fn the_union_of_a_sessions_ledgers_names_every_file_once() {
        let first = Ledger {
            files_modified: vec!["a.rs".into(), "b.rs".into()],
            edit_counts: [("a.rs".to_string(), 3), ("b.rs".to_string(), 1)].into(),
            ..Ledger::default()
        };
        let second = Ledger {
            files_modified: vec!["a.rs".into(), "c.rs".into()],
            edit_counts: [("a.rs".to_string(), 5), ("c.rs".to_string(), 1)].into(),
            elided: [((2, "src/".to_string()), 7)].into(),
            ..Ledger::default()
        };
        let all = Ledger::union([&first, &second]);
        assert_eq!(all.files_modified, vec!["b.rs", "a.rs", "c.rs"]);
        assert_eq!(all.edit_counts["a.rs"], 5);
        assert!(all.elided.is_empty());
    }
}
