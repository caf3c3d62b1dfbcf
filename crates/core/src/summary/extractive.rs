//! The built-in extractive summarizer: offline, deterministic, free (SanBot strategy B, made
//! useful). It cannot paraphrase, so it quotes: the first and the latest user requests, the
//! sentences that state decisions, preferences and constraints, the errors seen, what the
//! assistant said last, and which tools were used; the ledger is appended by the pipeline.
//! One linear pass, so it runs on millions of tokens in well under a second.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::base::text::{self, sentences};
use crate::model::added;
use crate::model::exchanges::Exchanges;
use crate::model::message::{role_of, text_of, tool_result_text, Role};
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

/// A quote of `text`, trimmed, at most `max_chars` characters.
fn clip(text: &str, max_chars: usize) -> String {
    text::clip(text.trim(), max_chars)
}

fn contains_any(haystack_lower: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| haystack_lower.contains(n))
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
    let mut exchanges: Exchanges<String> = Exchanges::new();
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
        }
        // Only an assistant's tool calls count (a call in another role is not one the agent made).
        let results = exchanges.read(message, |call| {
            (role == Some(Role::Assistant)).then(|| {
                tool_uses.entry(call.name.to_string()).or_default().0 += 1;
                call.name.to_string()
            })
        });
        for (result, name) in results {
            let name = name.unwrap_or_else(|| "tool".into());
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

    let new = Extracted {
        first_request,
        latest_request,
        decisions,
        preferences,
        errors,
        last_assistant,
        tool_uses,
        messages: messages.len(),
        user_turns,
    };
    let earlier = previous.map(Earlier::parse).unwrap_or_default();
    render(&earlier.merged_with(new))
}

/// What one pass over the messages found.
struct Extracted {
    first_request: Option<String>,
    latest_request: Option<String>,
    decisions: Vec<String>,
    preferences: Vec<String>,
    errors: Vec<String>,
    last_assistant: Option<String>,
    tool_uses: BTreeMap<String, (usize, usize)>,
    messages: usize,
    user_turns: usize,
}

/// A summary being updated, read by its section headers ([`SECTION_HEADERS`]): its items (the
/// `- ` lines, and other lines of text) under each, whoever wrote it. The extractive
/// summarizer's own lines (the requests, the tool counts, the counts of messages) are read back
/// as such, so they are updated rather than repeated.
#[derive(Debug, Default)]
struct Earlier {
    sections: Vec<Vec<String>>,
}

const FIRST_REQUEST: &str = "First request: ";
const LATEST_REQUEST: &str = "Latest request: ";
const LAST_ASSISTANT: &str = "Last assistant message: ";
const SEE_LEDGER: &str = "See the ledger below.";
const NEXT_STEP: &str = "Continue from the latest request and the recent messages.";
const SIGNATURE: &str =
    "(Summary written by the built-in extractive summarizer: quotes, not paraphrase.)";
/// The lines an earlier version wrote between stacked summaries.
const OLD_FRAMES: [&str; 2] = ["Earlier summary (kept as written):", "Since then:"];

impl Earlier {
    fn parse(text: &str) -> Earlier {
        let mut sections: Vec<Vec<String>> = vec![Vec::new(); SECTION_HEADERS.len()];
        // Text before any header (a summary in prose) counts as the state it described.
        let mut current = 4;
        for line in text.lines() {
            let line = line.trim();
            if let Some(index) = SECTION_HEADERS.iter().position(|h| *h == line) {
                current = index;
                continue;
            }
            let item = line.strip_prefix("- ").unwrap_or(line).trim();
            if item.is_empty()
                || item == "(none)"
                || item == SIGNATURE
                || OLD_FRAMES.contains(&item)
                || item.starts_with("## ")
            {
                continue;
            }
            sections[current].push(item.to_string());
        }
        Earlier { sections }
    }

    /// The earlier summary updated with `new`: each request, count and last message replaced
    /// or added up, each list merged without repeats and bounded (the latest kept).
    fn merged_with(mut self, new: Extracted) -> Vec<Vec<String>> {
        if self.sections.is_empty() {
            self.sections = vec![Vec::new(); SECTION_HEADERS.len()];
        }
        let take = |s: &mut Vec<Vec<String>>, i: usize| std::mem::take(&mut s[i]);
        let mut out: Vec<Vec<String>> = vec![Vec::new(); SECTION_HEADERS.len()];

        // Goal: the first request of the whole session, the latest one, and what another
        // writer said of the goal.
        let goal = take(&mut self.sections, 0);
        let earlier_first = goal
            .iter()
            .find_map(|i| i.strip_prefix(FIRST_REQUEST))
            .map(str::to_string);
        let earlier_latest = goal
            .iter()
            .find_map(|i| i.strip_prefix(LATEST_REQUEST))
            .map(str::to_string);
        let other: Vec<String> = goal
            .into_iter()
            .filter(|i| !i.starts_with(FIRST_REQUEST) && !i.starts_with(LATEST_REQUEST))
            .collect();
        out[0].extend(bounded(other, Vec::new(), MAX_ITEMS / 3));
        let first = earlier_first.or(new.first_request);
        let latest = new.latest_request.or(earlier_latest);
        if let Some(first) = &first {
            out[0].push(format!("{FIRST_REQUEST}{first}"));
        }
        if let Some(latest) = latest.filter(|l| Some(l) != first.as_ref()) {
            out[0].push(format!("{LATEST_REQUEST}{latest}"));
        }

        out[1] = bounded(take(&mut self.sections, 1), new.decisions, MAX_ITEMS);

        // File operations: the ledger says them; what another writer listed is kept, bounded.
        let files: Vec<String> = take(&mut self.sections, 2)
            .into_iter()
            .filter(|i| i != SEE_LEDGER)
            .collect();
        out[2] = bounded(files, Vec::new(), MAX_ITEMS);

        // Tool calls: counted over the whole session.
        let mut uses = new.tool_uses;
        let mut other = Vec::new();
        for item in take(&mut self.sections, 3) {
            match parse_tool_count(&item) {
                Some((name, calls, failed)) => {
                    let entry = uses.entry(name).or_default();
                    entry.0 += calls;
                    entry.1 += failed;
                }
                None => other.push(item),
            }
        }
        out[3] = bounded(other, Vec::new(), MAX_ITEMS / 3);
        // The most used tools, at most a list's worth.
        let mut counted: Vec<(&String, &(usize, usize))> = uses.iter().collect();
        counted.sort_by_key(|(name, (calls, _))| (std::cmp::Reverse(*calls), (*name).clone()));
        counted.truncate(MAX_ITEMS);
        counted.sort_by_key(|(name, _)| (*name).clone());
        out[3].extend(
            counted
                .into_iter()
                .map(|(name, (calls, failures))| match failures {
                    0 => format!("{name}: {calls} call(s)"),
                    f => format!("{name}: {calls} call(s), {f} failed"),
                }),
        );

        // Current state: the messages summarized so far, and the last thing the assistant said.
        let (mut messages, mut user_turns) = (new.messages, new.user_turns);
        let mut last = None;
        let mut other = Vec::new();
        for item in take(&mut self.sections, 4) {
            if let Some((m, u)) = parse_message_count(&item) {
                messages += m;
                user_turns += u;
            } else if let Some(text) = item.strip_prefix(LAST_ASSISTANT) {
                last = Some(text.to_string());
            } else {
                other.push(item);
            }
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        out[4] = bounded(other, Vec::new(), MAX_ITEMS / 3);
        out[4].push(format!(
            "{messages} message{} summarized ({user_turns} user turn{}).",
            plural(messages),
            plural(user_turns)
        ));
        if let Some(last) = new.last_assistant.or(last) {
            out[4].push(format!("{LAST_ASSISTANT}{last}"));
        }

        out[5] = bounded(take(&mut self.sections, 5), new.errors, MAX_ITEMS);
        out[6] = bounded(take(&mut self.sections, 6), new.preferences, MAX_ITEMS);
        let next: Vec<String> = take(&mut self.sections, 7)
            .into_iter()
            .filter(|i| i != NEXT_STEP)
            .collect();
        out[7] = bounded(next, Vec::new(), MAX_ITEMS / 3);
        out[7].push(NEXT_STEP.to_string());
        out
    }
}

/// `earlier` then `new`, each item once (at its latest place), the last `max` kept.
fn bounded(earlier: Vec<String>, new: Vec<String>, max: usize) -> Vec<String> {
    let mut list: Vec<String> = Vec::new();
    for item in earlier.into_iter().chain(new) {
        let item = item.replace('\n', " ");
        if let Some(at) = list.iter().position(|x| *x == item) {
            list.remove(at);
        }
        list.push(item);
    }
    let excess = list.len().saturating_sub(max);
    list.drain(..excess);
    list
}

/// `name: N call(s)` or `name: N call(s), F failed`.
fn parse_tool_count(item: &str) -> Option<(String, usize, usize)> {
    let (name, rest) = item.rsplit_once(": ")?;
    let (calls, failed) = match rest.split_once(" call(s), ") {
        Some((calls, failed)) => (calls, failed.strip_suffix(" failed")?.parse().ok()?),
        None => (rest.strip_suffix(" call(s)")?, 0),
    };
    Some((name.to_string(), calls.parse().ok()?, failed))
}

/// `N message(s) summarized (U user turn(s)).`
fn parse_message_count(item: &str) -> Option<(usize, usize)> {
    let (messages, rest) = item.split_once(' ')?;
    let rest = rest
        .strip_prefix("messages summarized (")
        .or_else(|| rest.strip_prefix("message summarized ("))?;
    let (turns, rest) = rest.split_once(' ')?;
    if rest != "user turns)." && rest != "user turn)." {
        return None;
    }
    Some((messages.parse().ok()?, turns.parse().ok()?))
}

/// The summary: each section that has something to say, then the signature.
fn render(sections: &[Vec<String>]) -> String {
    let mut out = String::new();
    for (header, lines) in SECTION_HEADERS.iter().zip(sections) {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{header}");
        for line in lines {
            let _ = writeln!(out, "- {}", line.replace('\n', " "));
        }
        out.push('\n');
    }
    out.push_str(SIGNATURE);
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
            // Every section but the file operations (the ledger says them) has something.
            assert_eq!(
                summary.contains(header),
                *header != "## File operations",
                "{header}: {summary}"
            );
        }
        assert!(!summary.contains("(none)"), "{summary}");
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

    fn turn(i: usize, file: &str) -> Vec<Value> {
        vec![
            json!({"role": "user", "content": format!("step {i}: please fix {file}. Always run the tests {i}.")}),
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("We decided to patch {file} ({i}).")}, {"type": "tool_use", "id": format!("c{i}"), "name": "bash", "input": {"command": format!("cargo test {i}")}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("c{i}"), "is_error": i.is_multiple_of(3), "content": format!("error: failure number {i}")}]}),
        ]
    }

    #[test]
    fn an_update_merges_and_drops_instead_of_stacking() {
        let mut summary: Option<String> = None;
        let mut sizes = Vec::new();
        for round in 0..40 {
            let messages = turn(round, &format!("src/f{round}.rs"));
            let next = extractive_summary(&messages, summary.as_deref());
            sizes.push(next.len());
            summary = Some(next);
        }
        let summary = summary.unwrap();
        // Each header once, no earlier summary kept whole, no empty section.
        for header in SECTION_HEADERS {
            assert!(summary.matches(header).count() <= 1, "{summary}");
        }
        assert!(!summary.contains("Earlier summary"), "{summary}");
        assert!(!summary.contains("(none)"), "{summary}");
        assert_eq!(summary.matches(SIGNATURE).count(), 1);
        // The session's first request stays; the latest replaces the one before.
        assert!(
            summary.contains("First request: step 0: please fix src/f0.rs"),
            "{summary}"
        );
        assert!(summary.contains("Latest request: step 39:"), "{summary}");
        assert!(!summary.contains("Latest request: step 38:"), "{summary}");
        // Counts add up over the session.
        assert!(summary.contains("bash: 40 call(s), 14 failed"), "{summary}");
        assert!(
            summary.contains("120 messages summarized (40 user turns)."),
            "{summary}"
        );
        // Lists keep their latest items, bounded.
        assert!(summary.contains("We decided to patch src/f39.rs (39)"));
        assert!(!summary.contains("We decided to patch src/f0.rs (0)"));
        assert!(summary.contains("failure number 39"));
        // The size stops growing.
        assert!(sizes[39] < sizes[15] + 200, "{sizes:?}");
    }

    #[test]
    fn another_writers_summary_is_updated_section_by_section() {
        let earlier = "## Goal\n- Port the parser to Rust\n\n## Key decisions\n- use nom\n\n## Errors and fixes\n(none)\n\n## Next steps\n- add tests";
        let messages = turn(1, "src/lexer.rs");
        let summary = extractive_summary(&messages, Some(earlier));
        assert!(
            summary.starts_with("## Goal\n- Port the parser to Rust\n- First request: step 1"),
            "{summary}"
        );
        assert!(
            summary
                .contains("## Key decisions\n- use nom\n- We decided to patch src/lexer.rs (1)."),
            "{summary}"
        );
        assert!(
            summary.contains("## Next steps\n- add tests\n- Continue"),
            "{summary}"
        );
        assert!(!summary.contains("(none)"));
        // A summary in an earlier version's stacked form is read the same way.
        let stacked =
            format!("Earlier summary (kept as written):\n{earlier}\n\nSince then:\n\n{earlier}");
        let summary = extractive_summary(&messages, Some(&stacked));
        assert_eq!(summary.matches("## Goal").count(), 1);
        assert_eq!(summary.matches("use nom").count(), 1);
    }
}
