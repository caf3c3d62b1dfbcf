//! The built-in extractive summarizer: offline, deterministic, free (SanBot strategy B, made
//! useful). It cannot paraphrase, so it quotes: the first and the latest user requests, the
//! sentences that state decisions, preferences and constraints, the errors seen, what the
//! assistant said last, and which tools were used; the ledger is appended by the pipeline.
//! One linear pass, so it runs on millions of tokens in well under a second.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::model::added;
use crate::model::message::{role_of, text_of, tool_calls, tool_result_text, tool_results, Role};
use crate::plan::partition::is_user_turn;
use crate::summary::prompt::SECTION_HEADERS;
use crate::summary::summarize::{AttemptError, BoxFuture, Summarizer, SummaryRequest};

/// The extractive summarizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractiveSummarizer;

impl Summarizer for ExtractiveSummarizer {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        let summary = extractive_summary_of(
            request.messages,
            request.previous_summary.as_deref(),
            request.own,
        );
        Box::pin(async move { Ok(summary) })
    }

    fn provider(&self) -> &str {
        "extractive"
    }

    fn wants_prompt(&self) -> bool {
        false
    }
}

const MAX_QUOTE_CHARS: usize = 400;
const MAX_ITEMS: usize = 12;

const DECISION_MARKERS: &[&str] = &[
    "decided",
    "decide to",
    "decision",
    "we chose",
    "i chose",
    "chose to",
    "choose to",
    "going with",
    "will use",
    "instead of",
    "switched to",
    "settled on",
    "决定",
    "选择",
    "确定",
    "采用",
];
const PREFERENCE_MARKERS: &[&str] = &[
    "prefer",
    "i like",
    "i'd like",
    "please always",
    "always ",
    "never ",
    "don't ",
    "do not ",
    "must ",
    "make sure",
    "avoid ",
    "喜欢",
    "偏好",
    "习惯",
    "不要",
    "必须",
];

fn clip(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max_chars).collect();
    out.push('…');
    out
}

fn contains_any(haystack_lower: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| haystack_lower.contains(n))
}

/// Sentences (or lines) of a text, roughly.
pub(crate) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '。', '！', '？'])
        .flat_map(|line| line.split(". "))
        .map(str::trim)
        .filter(|s| s.len() > 3)
}

fn push_unique(list: &mut Vec<String>, item: String, max: usize) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
        if list.len() > max {
            list.remove(0);
        }
    }
}

/// Builds the extractive summary of `messages`, updating `previous` when given. Every message
/// that starts like a summary is left out (see [`extractive_summary_of`] to tell the library's
/// own from the caller's).
pub fn extractive_summary(messages: &[Value], previous: Option<&str>) -> String {
    let all: Vec<&Value> = messages
        .iter()
        .filter(|m| added::is_summary_message(m))
        .collect();
    extractive_summary_of(messages, previous, &added::OwnSummaries::of(all))
}

/// [`extractive_summary`], leaving out only the summaries the library wrote (`own`, by its
/// records): a message that merely starts like one is the user's, quoted as such.
pub fn extractive_summary_of(
    messages: &[Value],
    previous: Option<&str>,
    own: &added::OwnSummaries,
) -> String {
    let mut first_request: Option<String> = None;
    let mut latest_request: Option<String> = None;
    let mut decisions = Vec::new();
    let mut preferences = Vec::new();
    let mut errors = Vec::new();
    let mut last_assistant: Option<String> = None;
    let mut tool_uses: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut call_names: BTreeMap<String, String> = BTreeMap::new();
    let mut user_turns = 0;

    for message in messages {
        if own.contains(message) {
            continue;
        }
        let role = role_of(message);
        if is_user_turn(message) {
            let text = text_of(message);
            if !text.trim().is_empty() {
                user_turns += 1;
                let quoted = clip(&text, MAX_QUOTE_CHARS);
                if first_request.is_none() {
                    first_request = Some(quoted.clone());
                }
                latest_request = Some(quoted);
                for sentence in sentences(&text) {
                    let lower = sentence.to_lowercase();
                    if contains_any(&lower, PREFERENCE_MARKERS) {
                        push_unique(&mut preferences, clip(sentence, 240), MAX_ITEMS);
                    } else if contains_any(&lower, DECISION_MARKERS) {
                        push_unique(&mut decisions, clip(sentence, 240), MAX_ITEMS);
                    }
                }
            }
        }
        if role == Some(Role::Assistant) {
            let text = text_of(message);
            if !text.trim().is_empty() {
                for sentence in sentences(&text) {
                    let lower = sentence.to_lowercase();
                    if contains_any(&lower, DECISION_MARKERS) {
                        push_unique(&mut decisions, clip(sentence, 240), MAX_ITEMS);
                    }
                }
                last_assistant = Some(clip(&text, MAX_QUOTE_CHARS * 2));
            }
            for call in tool_calls(message) {
                tool_uses.entry(call.name.to_string()).or_default().0 += 1;
                call_names.insert(call.id.to_string(), call.name.to_string());
            }
        }
        for result in tool_results(message) {
            let name = call_names
                .get(result.tool_use_id)
                .cloned()
                .unwrap_or_else(|| "tool".into());
            let text = tool_result_text(result.content);
            if result.is_error {
                tool_uses.entry(name.clone()).or_default().1 += 1;
                push_unique(
                    &mut errors,
                    format!("{name}: {}", clip(error_line(&text), 240)),
                    MAX_ITEMS,
                );
            } else {
                // Error lines inside successful results (compiler errors, failing tests).
                if let Some(line) = text.lines().take(2_000).find(|l| is_error_line(l)) {
                    push_unique(
                        &mut errors,
                        format!("{name}: {}", clip(line.trim(), 240)),
                        MAX_ITEMS,
                    );
                }
            }
        }
    }

    let mut out = String::new();
    if let Some(previous) = previous {
        let _ = writeln!(
            out,
            "Earlier summary (kept as written):\n{}\n",
            previous.trim()
        );
        out.push_str("Since then:\n\n");
    }
    let section = |out: &mut String, index: usize, lines: &[String]| {
        let _ = writeln!(out, "{}", SECTION_HEADERS[index]);
        if lines.is_empty() {
            out.push_str("(none)\n");
        }
        for line in lines {
            let _ = writeln!(out, "- {}", line.replace('\n', " "));
        }
        out.push('\n');
    };
    let mut goal = Vec::new();
    if let Some(first) = &first_request {
        goal.push(format!("First request: {first}"));
    }
    if let (Some(latest), Some(first)) = (&latest_request, &first_request) {
        if latest != first {
            goal.push(format!("Latest request: {latest}"));
        }
    }
    section(&mut out, 0, &goal);
    section(&mut out, 1, &decisions);
    section(&mut out, 2, &["See the ledger below.".to_string()]);
    let tools: Vec<String> = tool_uses
        .iter()
        .map(|(name, (calls, failures))| match failures {
            0 => format!("{name}: {calls} call(s)"),
            f => format!("{name}: {calls} call(s), {f} failed"),
        })
        .collect();
    section(&mut out, 3, &tools);
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut state = vec![format!(
        "{} message{} summarized ({user_turns} user turn{}).",
        messages.len(),
        plural(messages.len()),
        plural(user_turns)
    )];
    if let Some(last) = &last_assistant {
        state.push(format!("Last assistant message: {last}"));
    }
    section(&mut out, 4, &state);
    section(&mut out, 5, &errors);
    section(&mut out, 6, &preferences);
    section(
        &mut out,
        7,
        &["Continue from the latest request and the recent messages.".to_string()],
    );
    out.push_str(
        "(Summary written by the built-in extractive summarizer: quotes, not paraphrase.)",
    );
    out
}

/// Does this output line state an error (compiler errors, failing tests, tracebacks)?
fn is_error_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    let lower_start: String = trimmed.chars().take(12).collect::<String>().to_lowercase();
    lower_start.starts_with("error")
        || lower_start.starts_with("fatal")
        || lower_start.starts_with("traceback")
        || trimmed.starts_with("FAILED")
        || trimmed.starts_with("FAIL ")
        || trimmed.starts_with('×')
        || trimmed.starts_with('✗')
        || trimmed.contains("panicked at")
        || trimmed.contains("AssertionError")
        || trimmed.contains("Exception:")
}

/// The line of a failed tool's output that says what went wrong: the first error line, else the
/// first line that is not a runner's banner ("RUN v3.2.4 /repo", "> npm test", "$ cmd"), else the
/// first line. A test runner prints its banner first, and quoting it says nothing.
fn error_line(text: &str) -> &str {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let banner = |l: &&str| {
        l.starts_with("RUN ") || l.starts_with("> ") || l.starts_with("$ ") || l.starts_with("+ ")
    };
    lines()
        .take(2_000)
        .find(|l| is_error_line(l))
        .or_else(|| lines().find(|l| !banner(l)))
        .or_else(|| lines().next())
        .unwrap_or("(no output)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quotes_requests_decisions_errors_and_preferences() {
        let messages = json!([
            {"role": "user", "content": "Please port the parser to Rust. I prefer small commits."},
            {"role": "assistant", "content": [{"type": "text", "text": "We decided to use nom for parsing."}, {"type": "tool_use", "id": "1", "name": "bash", "input": {"command": "cargo build"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "is_error": true, "content": "error[E0432]: unresolved import `nom`"}]},
            {"role": "assistant", "content": "Added nom to Cargo.toml; the build passes now."},
            {"role": "user", "content": "Now add tests."}
        ]);
        let summary = extractive_summary(messages.as_array().unwrap(), None);
        assert!(
            summary.contains("First request: Please port the parser to Rust."),
            "{summary}"
        );
        assert!(summary.contains("Latest request: Now add tests."));
        assert!(summary.contains("We decided to use nom for parsing"));
        assert!(summary.contains("bash: error[E0432]: unresolved import `nom`"));
        assert!(summary.contains("I prefer small commits"));
        assert!(summary.contains("bash: 1 call(s), 1 failed"));
        assert!(summary.contains("Last assistant message: Added nom"));
        for header in SECTION_HEADERS {
            assert!(summary.contains(header));
        }
    }

    #[test]
    fn a_failed_test_run_is_quoted_by_its_failure_not_its_banner() {
        let vitest = "\n RUN  v3.2.4 /repo\n\n ✓ src/a.test.ts (3 tests) 5ms\n × src/b.test.ts > adds 2ms\n   → expected 3 to be 4\n\n Test Files  1 failed | 1 passed (2)";
        assert_eq!(error_line(vitest), "× src/b.test.ts > adds 2ms");
        let npm = "> app@1.0.0 test\n> jest\n\nFAIL src/sum.test.js\n  ● adds";
        assert_eq!(error_line(npm), "FAIL src/sum.test.js");
        assert_eq!(
            error_line("> build\nsomething odd happened"),
            "something odd happened"
        );
        assert_eq!(error_line("   \n"), "(no output)");
        let messages = vec![
            json!({"role": "user", "content": "run the tests"}),
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "bash", "input": {"command": "npx vitest run"}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "is_error": true, "content": vitest}]}),
        ];
        let summary = extractive_summary(&messages, None);
        assert!(
            summary.contains("bash: × src/b.test.ts > adds 2ms"),
            "{summary}"
        );
        assert!(!summary.contains("RUN  v3.2.4"), "{summary}");
    }

    #[test]
    fn keeps_the_previous_summary() {
        let messages = json!([{"role": "user", "content": "next"}]);
        let summary = extractive_summary(messages.as_array().unwrap(), Some("## Goal\nold"));
        assert!(summary.starts_with("Earlier summary (kept as written):\n## Goal\nold"));
    }
}
