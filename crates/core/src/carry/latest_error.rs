//! The latest failure of the compacted part, carried with the lines that say what went wrong.
//! An agent that was fixing an error needs the error itself after a compaction, and a summary
//! keeps at best its status line ("Exit code 2"): the message that says what failed is left in
//! the archive. So the last failed tool call of the compacted part (a failure flagged or said
//! in the text, [`crate::carry::ledger::failure`]) is written after the summary: the call (its
//! command or file), its informative lines within a small budget, the recall range that holds
//! the whole call and output, and whether a later call of the same command or on the same file
//! succeeded there. A later compaction carries it forward until a newer failure replaces it.
//!
//! The section names an archive, so it is written when the archive's name is known, like the
//! recall lines (the pipeline writes it into the replacement's text), from the region the summary replaces.

use serde_json::Value;

use crate::base::text::clip;
use crate::carry::ledger::{self, failure, CallKind};
use crate::carry::sections::{self, entry_header, LATEST_FAILURE_HEADER, RECALL_LINE};
use crate::model::added::{self, OwnSummaries};
use crate::model::exchanges::Exchanges;
use crate::model::message::tool_result_text;
use crate::model::tokens::{self, Encoding};

/// The most characters of the call's command or path shown (a heredoc can be pages long).
const MAX_SUBJECT_CHARS: usize = 300;
/// The most characters of one output line shown.
const MAX_LINE_CHARS: usize = 300;

const LINES_LABEL: &str = "error lines";
const INTRO: &str = "The last tool call of the compacted part that failed, and the lines of its output that say why:";
const LATER_SUCCEEDED: &str = "A later ";
const NO_LATER: &str = "No later ";

/// The budget of the section, and the encoding it is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// `0`: no section.
    pub max_tokens: usize,
    pub encoding: Encoding,
}

/// A failure as the section shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestFailure {
    pub tool: String,
    pub kind: CallKind,
    /// The command line or path(s), cut to [`MAX_SUBJECT_CHARS`].
    pub subject: String,
    /// The informative lines shown, in the output's order.
    pub lines: Vec<String>,
    /// Non-empty lines of the whole output.
    pub output_lines: usize,
    /// The recall line of the call and its result, when they were archived.
    pub recall: Option<String>,
    /// What the section says of later calls of the same command or file.
    pub later: String,
}

/// A call as its failure and later successes are matched: what it does, and to what.
fn key_of(kind: CallKind, subject: &str) -> (CallKind, String) {
    (kind, clip(subject.trim(), MAX_SUBJECT_CHARS))
}

/// What a later call of the same kind is called in the sentence about it.
fn later_call(kind: CallKind) -> &'static str {
    match kind {
        CallKind::Command => "call of the same command",
        CallKind::WriteFile => "write of the same file",
        CallKind::ReadFile => "read of the same file",
        CallKind::Other => "call of the same tool with the same input",
    }
}

fn kind_label(kind: CallKind) -> &'static str {
    match kind {
        CallKind::Command => "command",
        CallKind::WriteFile => "file written",
        CallKind::ReadFile => "file read",
        CallKind::Other => "call",
    }
}

fn kind_of_label(label: &str) -> Option<CallKind> {
    Some(match label {
        "command" => CallKind::Command,
        "file written" => CallKind::WriteFile,
        "file read" => CallKind::ReadFile,
        "call" => CallKind::Other,
        _ => return None,
    })
}

/// The informative lines of a failed call's output within `max_tokens`: the line that says
/// best what went wrong first, then the other lines that name an error, then those that count
/// failures; shown in the output's order.
fn informative_lines(text: &str, max_tokens: usize, encoding: Encoding) -> Vec<String> {
    let scored = failure::scored_lines(text);
    let Some(best) = failure::best_line(text, &scored) else {
        return Vec::new();
    };
    let mut order: Vec<usize> = vec![best];
    for score in [3, 1] {
        order.extend((0..scored.len()).filter(|&i| i != best && scored[i].1 == score));
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut used = 0;
    for at in order {
        let line = clip(scored[at].0, MAX_LINE_CHARS);
        let cost = tokens::count_text(encoding, &line) + 1;
        if used + cost > max_tokens {
            if chosen.is_empty() {
                continue;
            }
            break;
        }
        used += cost;
        chosen.push(at);
    }
    chosen.sort_unstable();
    chosen
        .into_iter()
        .map(|at| clip(scored[at].0, MAX_LINE_CHARS))
        .collect()
}

/// One tool call of the region, as far as this section is concerned.
struct Call {
    tool: String,
    kind: CallKind,
    subject: String,
    at: usize,
}

/// The latest failure of `region` (the messages a summary replaces, as they are archived in
/// `archive`), else the one an earlier summary of the library's in it (`own`) carried; with whether a later call of the
/// same command or file succeeded in the region. The section within `max_tokens`; empty when
/// there is no failure, or the budget cannot hold it.
pub fn section(
    region: &[Value],
    archive: Option<&str>,
    max_tokens: usize,
    encoding: Encoding,
    own: &OwnSummaries,
) -> String {
    if max_tokens == 0 {
        return String::new();
    }
    let mut exchanges: Exchanges<Call> = Exchanges::new();
    // (key, message index) of each call that succeeded.
    let mut successes: Vec<((CallKind, String), usize)> = Vec::new();
    let mut fresh: Option<(Call, usize, String)> = None;
    let mut carried: Option<(LatestFailure, usize)> = None;
    for (index, message) in region.iter().enumerate() {
        if own.contains(message) {
            if let Some(failure) = added::summary_body(message).and_then(LatestFailure::parse) {
                carried = Some((failure, index));
                fresh = None;
            }
            continue;
        }
        let results = exchanges.read(message, |call| {
            let (kind, subject) = ledger::call_key(call.name, &call.input);
            Some(Call {
                tool: call.name.to_string(),
                kind,
                subject,
                at: index,
            })
        });
        for (result, call) in results {
            let Some(call) = call else {
                continue;
            };
            let output = tool_result_text(result.content);
            if failure::failed(result.is_error, &output) {
                fresh = Some((call, index, failure::unwrapped(&output).into_owned()));
            } else {
                successes.push((key_of(call.kind, &call.subject), index));
            }
        }
    }
    let later_success = |key: &(CallKind, String), after: usize| {
        successes
            .iter()
            .find(|(k, at)| k == key && *at > after)
            .map(|(_, at)| *at)
    };
    let archive_name = archive.map(|path| path.rsplit(['/', '\\']).next().unwrap_or(path));
    let succeeded_at = |kind: CallKind, at: usize| match archive_name {
        Some(name) => format!(
            "{LATER_SUCCEEDED}{} succeeded (message {at} of {name}).",
            later_call(kind)
        ),
        None => format!("{LATER_SUCCEEDED}{} succeeded.", later_call(kind)),
    };
    let failure = match (fresh, carried) {
        (Some((call, result_at, output)), _) => {
            let key = key_of(call.kind, &call.subject);
            let later = match later_success(&key, result_at) {
                Some(at) => succeeded_at(call.kind, at),
                None => format!(
                    "{NO_LATER}{} succeeded in the compacted part.",
                    later_call(call.kind)
                ),
            };
            LatestFailure {
                tool: call.tool,
                kind: call.kind,
                subject: key.1,
                lines: Vec::new(),
                output_lines: output.lines().filter(|l| !l.trim().is_empty()).count(),
                recall: archive
                    .map(|path| sections::recall_line(path, Some((call.at, result_at + 1)))),
                later,
            }
            .with_lines(&output, max_tokens, encoding)
        }
        (None, Some((mut failure, at))) => {
            if failure.later.starts_with(NO_LATER) {
                let key = key_of(failure.kind, &failure.subject);
                if let Some(success) = later_success(&key, at) {
                    failure.later = succeeded_at(failure.kind, success);
                }
            }
            Some(failure)
        }
        (None, None) => None,
    };
    failure
        .map(|failure| failure.render(max_tokens, encoding))
        .unwrap_or_default()
}

impl LatestFailure {
    /// This failure with the informative lines of `output` that fit beside its frame in
    /// `max_tokens`; `None` when not even the frame fits.
    fn with_lines(mut self, output: &str, max_tokens: usize, encoding: Encoding) -> Option<Self> {
        let frame = tokens::count_text(encoding, &self.render_all());
        // The entry header of the lines, and room for the count of lines in it.
        let room = max_tokens.checked_sub(frame + 16)?;
        self.lines = informative_lines(output, room, encoding);
        Some(self)
    }

    /// The section within `max_tokens` (the last lines dropped first); empty when even the
    /// frame does not fit.
    fn render(&self, max_tokens: usize, encoding: Encoding) -> String {
        let mut failure = self.clone();
        loop {
            let text = failure.render_all();
            if tokens::count_text(encoding, &text) <= max_tokens {
                return text;
            }
            if failure.lines.pop().is_none() {
                return String::new();
            }
        }
    }

    fn render_all(&self) -> String {
        let mut out = format!("{LATEST_FAILURE_HEADER}\n{INTRO}");
        match &self.recall {
            Some(line) => {
                out.push('\n');
                out.push_str(line);
            }
            None => out.push_str("\n(The originals were not archived.)"),
        }
        out.push('\n');
        out.push_str(&self.later);
        let tool = self.tool.replace(['\n', '[', ']'], " ");
        out.push('\n');
        out.push_str(&entry_header(
            kind_label(self.kind),
            self.subject.chars().count(),
            Some(&tool),
        ));
        out.push('\n');
        out.push_str(&self.subject);
        if !self.lines.is_empty() {
            let text = self.lines.join("\n");
            out.push('\n');
            out.push_str(&entry_header(
                LINES_LABEL,
                text.chars().count(),
                Some(&format!(
                    "{} of {} lines",
                    self.lines.len(),
                    self.output_lines.max(self.lines.len())
                )),
            ));
            out.push('\n');
            out.push_str(&text);
        }
        out
    }

    /// The section of a summary body written by [`section`].
    pub fn parse(body: &str) -> Option<LatestFailure> {
        let text = sections::split(body).latest_failure?;
        let (notes, entries) = sections::entries(text);
        let recall = notes
            .iter()
            .find(|line| line.starts_with(RECALL_LINE))
            .map(|line| line.to_string());
        let later = notes
            .iter()
            .find(|line| line.starts_with(LATER_SUCCEEDED) || line.starts_with(NO_LATER))?
            .to_string();
        let call = entries.first()?;
        let kind = kind_of_label(call.label)?;
        let mut failure = LatestFailure {
            tool: call
                .notes
                .first()
                .map(|t| t.to_string())
                .unwrap_or_default(),
            kind,
            subject: call.text.to_string(),
            lines: Vec::new(),
            output_lines: 0,
            recall,
            later,
        };
        if let Some(lines) = entries.get(1).filter(|e| e.label == LINES_LABEL) {
            failure.lines = lines.text.split('\n').map(str::to_string).collect();
            failure.output_lines = lines
                .notes
                .iter()
                .find_map(|note| {
                    note.split(" of ")
                        .nth(1)?
                        .strip_suffix(" lines")?
                        .parse()
                        .ok()
                })
                .unwrap_or(failure.lines.len());
        }
        Some(failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The library's summaries among `region` (those these tests write).
    fn own(region: &[Value]) -> OwnSummaries {
        OwnSummaries::of(region.iter().filter(|m| added::is_summary_message(m)))
    }

    const ENC: Encoding = Encoding::O200kBase;
    const ARCHIVE: &str = "/d/s/compact-20260101T000000Z-2.json";

    fn call(id: &str, name: &str, input: Value) -> Value {
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
    }

    fn result(id: &str, is_error: bool, text: &str) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": text}]})
    }

    fn compile_error() -> String {
        let mut text = String::from("Exit code 1\n");
        for n in 0..40 {
            text.push_str(&format!("Compiling dependency_{n} v1.0.{n}\n"));
        }
        text.push_str("== Compilation error in file lib/spotter/transcripts.ex ==\n** (CompileError) lib/spotter/transcripts.ex:12: undefined function foo/0 (there is no such import)\n    (elixir 1.18.0) expanding macro: Kernel.def/2\n");
        text
    }

    #[test]
    fn the_last_failure_with_its_informative_lines_and_range() {
        let region = vec![
            json!({"role": "user", "content": "Fix the build"}),
            call("1", "Bash", json!({"command": "mix compile"})),
            result("1", true, &compile_error()),
            call(
                "2",
                "Read",
                json!({"file_path": "/p/lib/spotter/transcripts.ex"}),
            ),
            result("2", false, "     1→defmodule Spotter.Transcripts do"),
        ];
        let text = section(&region, Some(ARCHIVE), 300, ENC, &own(&region));
        assert!(tokens::count_text(ENC, &text) <= 300, "{text}");
        assert!(text.starts_with(LATEST_FAILURE_HEADER));
        assert!(text.contains("\nRecall: archive=compact-20260101T000000Z-2.json from=1 to=3\n"));
        assert!(
            text.contains("\nNo later call of the same command succeeded in the compacted part.\n")
        );
        assert!(text.contains("\n[command · 11 characters · Bash]\nmix compile\n"));
        assert!(text
            .contains("** (CompileError) lib/spotter/transcripts.ex:12: undefined function foo/0"));
        // Status lines and the noise around the error are not carried.
        assert!(!text.contains("Exit code 1"));
        assert!(!text.contains("Compiling dependency_3 "));
        let failure = LatestFailure::parse(&text).unwrap();
        assert_eq!(failure.subject, "mix compile");
        assert_eq!(failure.kind, CallKind::Command);
        assert_eq!(failure.output_lines, 44);
        assert_eq!(failure.render(300, ENC), text);
        // Nothing failed: no section; no budget: none either.
        assert_eq!(
            section(&region[3..], Some(ARCHIVE), 300, ENC, &own(&region[3..])),
            ""
        );
        assert_eq!(section(&region, Some(ARCHIVE), 0, ENC, &own(&region)), "");
    }

    #[test]
    fn the_latest_failure_is_the_most_recent_in_any_form() {
        // pi's browser tool reports a failed script in its text, with no error flag; an
        // earlier flagged failure must not stand in for it.
        let script = "document.querySelector('#save').click()";
        let region = vec![
            call("1", "bash", json!({"command": "npm run build"})),
            result(
                "1",
                true,
                "src/a.ts(3,5): error TS2322: boom\n\nCommand exited with code 2",
            ),
            call("2", "browser_eval", json!({"script": script})),
            result(
                "2",
                false,
                "Error executing script: Frame with ID 7A3F was removed",
            ),
            call("3", "read", json!({"path": "/p/README.md"})),
            result("3", false, "# Readme\nError handling is described below."),
        ];
        let text = section(&region, Some(ARCHIVE), 400, ENC, &own(&region));
        assert!(
            text.contains("Error executing script: Frame with ID 7A3F was removed"),
            "{text}"
        );
        assert!(text.contains("browser_eval"), "{text}");
        assert!(!text.contains("TS2322"), "{text}");
        assert!(text.contains("from=2 to=4"), "{text}");
        // Each form agents print, as the latest of the region, is the one shown.
        for (output, line) in [
            (
                "Pre-commit validation failed:\n\n[FORMAT] Code is not formatted.",
                "Pre-commit validation failed:",
            ),
            (
                "Command failed with exit code 1: npm test",
                "Command failed with exit code 1: npm test",
            ),
            (
                "java.lang.IllegalStateException: closed",
                "java.lang.IllegalStateException: closed",
            ),
            (
                "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'k'",
                "KeyError: 'k'",
            ),
            (
                "# cmd\n./main.go:3:1: undefined: x\nexit status 1",
                "./main.go:3:1: undefined: x",
            ),
            (
                "<tool_use_error>File has not been read yet.</tool_use_error>",
                "File has not been read yet.",
            ),
        ] {
            let mut region = region.clone();
            region.push(call("4", "tool", json!({"command": "step four"})));
            region.push(result("4", false, output));
            let text = section(&region, Some(ARCHIVE), 400, ENC, &own(&region));
            assert!(
                text.contains(line) && text.contains("step four"),
                "{output:?}:\n{text}"
            );
            assert!(!text.contains("Frame with ID"), "{text}");
        }
    }

    #[test]
    fn a_later_success_of_the_same_command_or_file_is_said() {
        let region = vec![
            call("1", "Bash", json!({"command": "mix test"})),
            result(
                "1",
                true,
                "Exit code 2\n1) test parses (ParserTest)\n   Assertion with == failed",
            ),
            call(
                "2",
                "Edit",
                json!({"file_path": "/p/a.ex", "old_string": "x", "new_string": "y"}),
            ),
            result(
                "2",
                true,
                "<tool_use_error>String to replace not found in file.</tool_use_error>",
            ),
            call(
                "3",
                "Edit",
                json!({"file_path": "/p/a.ex", "old_string": "z", "new_string": "y"}),
            ),
            result("3", false, "The file /p/a.ex has been updated."),
        ];
        let text = section(&region, Some(ARCHIVE), 300, ENC, &own(&region));
        assert!(
            text.contains("[file written · 7 characters · Edit]\n/p/a.ex"),
            "{text}"
        );
        assert!(text.contains("A later write of the same file succeeded (message 5 of compact-20260101T000000Z-2.json)."));
        assert!(text.contains("String to replace not found in file."));
        // A failure said only in the text (an OpenAI Chat list: no flag).
        let chat = vec![
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"python -m pytest -x\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "a", "content": "<returncode>1</returncode>\n<output>\nE   ModuleNotFoundError: No module named 'requests'\n</output>"}),
        ];
        let text = section(&chat, None, 300, ENC, &own(&chat));
        assert!(text.contains("E   ModuleNotFoundError: No module named 'requests'"));
        assert!(text.contains("(The originals were not archived.)"));
    }

    #[test]
    fn carried_forward_until_a_newer_failure_and_told_of_a_later_success() {
        let first = vec![
            call("1", "Bash", json!({"command": "cargo test"})),
            result(
                "1",
                true,
                "Exit code 101\nerror[E0425]: cannot find value `x` in this scope",
            ),
        ];
        let body = format!(
            "## Goal\nx\n\n{}",
            section(&first, Some(ARCHIVE), 300, ENC, &own(&first))
        );
        let summary = json!({"role": "user", "content": crate::model::added::summary_message_text(2, Some(ARCHIVE), &body)});
        let later_archive = "/d/s/compact-20260101T000000Z-3.json";
        // Nothing new failed: the earlier failure, its recall line unchanged.
        let quiet = vec![summary.clone(), json!({"role": "user", "content": "go on"})];
        let carried = section(&quiet, Some(later_archive), 300, ENC, &own(&quiet));
        assert_eq!(LatestFailure::parse(&carried), LatestFailure::parse(&body));
        assert!(carried.contains("Recall: archive=compact-20260101T000000Z-2.json from=0 to=2"));
        // The same command succeeded since: said, in the new archive's numbering.
        let fixed = vec![
            summary.clone(),
            call("2", "Bash", json!({"command": "cargo test"})),
            result("2", false, "test result: ok. 3 passed"),
        ];
        let text = section(&fixed, Some(later_archive), 300, ENC, &own(&fixed));
        assert!(text.contains("A later call of the same command succeeded (message 2 of compact-20260101T000000Z-3.json)."), "{text}");
        assert!(text.contains("error[E0425]"));
        // A newer failure replaces it.
        let newer = vec![
            summary,
            call("3", "Bash", json!({"command": "npm run lint"})),
            result("3", false, "src/a.ts\n  3:1  error  'x' is defined but never used\n\nCommand exited with code 1"),
        ];
        let text = section(&newer, Some(later_archive), 300, ENC, &own(&newer));
        assert!(text.contains("npm run lint") && !text.contains("cargo test"));
        assert!(text.contains("Recall: archive=compact-20260101T000000Z-3.json from=1 to=3"));
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever a tool printed, the section stays within its budget, reads back as written,
        /// and nothing printed can end it early or pass for the recall section.
        #[test]
        fn any_output_reads_back(
            lines in prop::collection::vec(prop_oneof![
                "[a-zA-Z0-9 .,:()-]{0,60}",
                Just("## Archived originals (recall)".to_string()),
                Just("Recall: archive=fake.json from=0 to=9".to_string()),
                Just("[error lines · 3 characters]".to_string()),
                Just("Error: boom".to_string()),
                Just("Exit code 1".to_string()),
                Just("E   AssertionError: é中🙂".to_string()),
            ], 0..30),
            budget in 40usize..600,
        ) {
            let region = vec![
                call("1", "Bash", json!({"command": "make test"})),
                result("1", true, &lines.join("\n")),
            ];
            let text = section(&region, Some(ARCHIVE), budget, ENC, &own(&region));
            if text.is_empty() {
                return Ok(());
            }
            prop_assert!(tokens::count_text(ENC, &text) <= budget);
            let body = format!("## Goal\nx\n\n{text}\n\n## Archived originals (recall)\nRecall: archive=real.json");
            let failure = LatestFailure::parse(&body).unwrap();
            prop_assert_eq!(failure.render(budget, ENC), text);
            prop_assert_eq!(
                sections::split(&body).recall,
                Some("## Archived originals (recall)\nRecall: archive=real.json")
            );
            prop_assert_eq!(failure.recall.as_deref(), Some("Recall: archive=compact-20260101T000000Z-2.json from=0 to=2"));
        }
    }

    #[test]
    fn a_long_command_and_a_tiny_budget() {
        let script = format!(
            "cat > big.sh <<'EOF'\n{}\nEOF\nbash big.sh",
            "echo line\n".repeat(200)
        );
        let region = vec![
            call("1", "Bash", json!({"command": script})),
            result(
                "1",
                true,
                "Exit code 1\nbig.sh: line 3: syntax error near unexpected token `('",
            ),
        ];
        let text = section(&region, Some(ARCHIVE), 300, ENC, &own(&region));
        assert!(tokens::count_text(ENC, &text) <= 300);
        let failure = LatestFailure::parse(&text).unwrap();
        assert_eq!(failure.subject.chars().count(), MAX_SUBJECT_CHARS + 1);
        assert_eq!(section(&region, Some(ARCHIVE), 30, ENC, &own(&region)), "");
    }
}
