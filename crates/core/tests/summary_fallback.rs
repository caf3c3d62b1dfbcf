//! The loop always gets a list it can send (issue 35): when every summary attempt failed and the
//! list reaches the context window, the summary is written without an LLM (`summaryFallback:
//! 'extractive'`, the default); under the window the PRD's rule stands (retry, then skip). Also
//! a summary a `Compactor` declined to pay for, the empty tail (`tailRetentionRatio: 0`) and
//! what `STILL_OVER_LIMIT` says.

use std::sync::atomic::{AtomicUsize, Ordering};

use context_compact_core::base::error::{CompactError, ErrorCode};
use context_compact_core::model::check::check_conversation;
use context_compact_core::model::tokens::{self, Encoding};
use context_compact_core::options::SummaryFallback;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::plan::offload::Scope;
use context_compact_core::summary::summarize::{
    AttemptError, BoxFuture, Retry, Summarizer, SummaryRequest,
};
use serde_json::{json, Value};
mod common;
use common::{assembled, restored, run_with};

/// A summary model that fails every attempt the same way.
struct Failing {
    code: ErrorCode,
    calls: AtomicUsize,
}

impl Failing {
    fn new(code: ErrorCode) -> Self {
        Failing {
            code,
            calls: AtomicUsize::new(0),
        }
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Summarizer for Failing {
    fn summarize<'a>(
        &'a self,
        _request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let error = match self.code {
            ErrorCode::ServerError => {
                AttemptError::new(self.code, "HTTP 500: Internal server error", Retry::Yes)
                    .with_status(500)
            }
            code => AttemptError::new(code, format!("the summary failed: {code}"), Retry::Yes),
        };
        Box::pin(async move { Err(error) })
    }
    fn provider(&self) -> &str {
        "anthropic"
    }
}

/// A summary model that writes a short summary.
struct Writing(AtomicUsize);

impl Summarizer for Writing {
    fn summarize<'a>(
        &'a self,
        _request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok("## Goal\nPort the parser.".to_string()) })
    }
    fn provider(&self) -> &str {
        "anthropic"
    }
}

fn count(messages: &[Value]) -> usize {
    tokens::count_messages(Encoding::O200kBase, messages)
}

/// An agent session of `turns` tool calls: a system prompt, the task, then read / edit / test
/// turns with tool outputs of a few hundred tokens.
fn session(turns: usize) -> Vec<Value> {
    let mut m = vec![
        json!({"role": "system", "content": "You are a coding agent working in /repo."}),
        json!({"role": "user", "content": "Port the tokenizer in src/lex.c to Rust and keep the tests green. I prefer small commits."}),
    ];
    for t in 0..turns {
        let output: String = (0..40)
            .map(|i| format!("src/lex_{t}.rs:{i}: fn token_{i}(input: &str) -> Option<Token> {{ scan(input, {i}) }}\n"))
            .collect();
        m.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Step {t}: reading the next part of the lexer.")},
            {"type": "tool_use", "id": format!("call_{t}"), "name": "bash", "input": {"command": format!("cat src/lex_{t}.rs")}}
        ]}));
        m.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("call_{t}"), "content": output}
        ]}));
    }
    m.push(json!({"role": "assistant", "content": "All parts read; writing the port now."}));
    m.push(json!({"role": "user", "content": "go on"}));
    m
}

/// The numbers: a list of about 22,530 tokens for a 21,457-token window.
const WINDOW: usize = 21_457;

fn over_the_window() -> Vec<Value> {
    let mut turns = 1;
    while count(&session(turns + 1)) <= 22_530 {
        turns += 1;
    }
    let messages = session(turns + 1);
    assert!(count(&messages) > WINDOW && count(&messages) < 23_500);
    messages
}

fn options(dir: &std::path::Path) -> CompactOptions {
    CompactOptions {
        context_token_limit: WINDOW,
        output_dir: dir.to_path_buf(),
        session_id: "s".into(),
        max_retries: 2,
        retry_base_delay: std::time::Duration::ZERO,
        ..CompactOptions::default()
    }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cc-fallback-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn every_failure_over_the_window_gets_a_list_under_it() {
    let messages = over_the_window();
    for code in [
        ErrorCode::ServerError,
        ErrorCode::Refused,
        ErrorCode::EmptySummary,
        ErrorCode::Truncated,
    ] {
        let dir = temp_dir(code.as_str());
        let summarizer = Failing::new(code);
        let outcome = run_with(&messages, &options(&dir), &summarizer);
        // Every attempt was made first: the first and `maxRetries` more.
        assert_eq!(summarizer.calls(), 3, "{code}");
        assert!(outcome.compacted, "{code}: {:?}", outcome.error);
        assert!(outcome.error.is_none(), "{code}: {:?}", outcome.error);
        let result = assembled(&messages, &outcome);
        let tokens = count(&result);
        assert!(
            tokens < WINDOW * 92 / 100,
            "{code}: {tokens} tokens for a {WINDOW}-token window"
        );
        assert_eq!(check_conversation(&result), vec![], "{code}");
        // The result says the summary is degraded, and why.
        let fallback = outcome.summary_fallback.as_ref().expect("summaryFallback");
        assert_eq!(fallback.used, "extractive");
        assert_eq!(fallback.code, code);
        assert!(
            fallback.reason.starts_with(&format!("{code}: ")),
            "{}",
            fallback.reason
        );
        assert!(
            outcome
                .warnings
                .iter()
                .any(|w| w.contains("without an LLM") && w.contains(code.as_str())),
            "{:?}",
            outcome.warnings
        );
        assert_eq!(outcome.provider.as_deref(), Some("extractive"));
        assert_eq!(outcome.attempts, 3);
        // The summary holds the library's sections and the extractive summary.
        let summary = outcome.summary.as_deref().unwrap();
        assert!(summary.contains("Port the tokenizer"), "{summary}");
        assert!(summary.contains("cat src/lex_0.rs"), "{summary}");
        // Restore gives the original list back exactly.
        assert_eq!(restored(&result, &dir), messages, "{code}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn under_the_window_the_prd_rule_stands() {
    // Over the threshold (92 %) but under the window: the loop can still send its list.
    let messages = over_the_window();
    let dir = temp_dir("under");
    let mut opts = options(&dir);
    opts.context_token_limit = count(&messages) + 1;
    let summarizer = Failing::new(ErrorCode::ServerError);
    let outcome = run_with(&messages, &opts, &summarizer);
    assert_eq!(summarizer.calls(), 3);
    assert!(!outcome.compacted);
    assert!(outcome.pieces.is_empty());
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::ServerError);
    assert!(outcome.summary_fallback.is_none());
    // At the window exactly, the list cannot be sent (no room for the reply): it falls back.
    opts.context_token_limit = count(&messages);
    let summarizer = Failing::new(ErrorCode::ServerError);
    let outcome = run_with(&messages, &opts, &summarizer);
    assert!(outcome.compacted);
    assert!(outcome.summary_fallback.is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn summary_fallback_none_keeps_the_prd_rule_over_the_window() {
    let messages = over_the_window();
    let dir = temp_dir("none");
    let mut opts = options(&dir);
    opts.summary_fallback = SummaryFallback::None;
    let summarizer = Failing::new(ErrorCode::Truncated);
    let outcome = run_with(&messages, &opts, &summarizer);
    assert!(!outcome.compacted);
    assert_eq!(outcome.error.as_ref().unwrap().code, ErrorCode::Truncated);
    assert!(outcome.summary_fallback.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_declined_summary_calls_no_llm() {
    let messages = over_the_window();
    let dir = temp_dir("declined");
    let mut opts = options(&dir);
    opts.summary_declined = Some(CompactError::new(
        ErrorCode::SummarySkipped,
        "no summary was paid for",
    ));
    // Over the window: written without an LLM, said as the reason.
    let summarizer = Writing(AtomicUsize::new(0));
    let outcome = run_with(&messages, &opts, &summarizer);
    assert_eq!(summarizer.0.load(Ordering::SeqCst), 0);
    assert!(outcome.compacted);
    let fallback = outcome.summary_fallback.as_ref().unwrap();
    assert_eq!(fallback.code, ErrorCode::SummarySkipped);
    assert_eq!(fallback.reason, "SUMMARY_SKIPPED: no summary was paid for");
    let result = assembled(&messages, &outcome);
    assert!(count(&result) < WINDOW);
    assert_eq!(restored(&result, &dir), messages);
    // Under the window: the list stands, with the decline as the error. (In another session:
    // the checkpoint the first one recorded would stand for the list, with no call at all.)
    opts.output_dir = temp_dir("declined-under");
    opts.context_token_limit = count(&messages) + 1;
    let outcome = run_with(&messages, &opts, &summarizer);
    assert_eq!(summarizer.0.load(Ordering::SeqCst), 0);
    assert!(!outcome.compacted);
    assert_eq!(
        outcome.error.as_ref().unwrap().code,
        ErrorCode::SummarySkipped
    );
    // With the fallback off, neither.
    opts.context_token_limit = WINDOW;
    opts.output_dir = temp_dir("declined-none");
    opts.summary_fallback = SummaryFallback::None;
    let outcome = run_with(&messages, &opts, &summarizer);
    assert_eq!(summarizer.0.load(Ordering::SeqCst), 0);
    assert!(!outcome.compacted);
    for dir in [dir, temp_dir("declined-under"), temp_dir("declined-none")] {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn an_empty_tail_leaves_the_head_and_the_summary() {
    let messages = over_the_window();
    let dir = temp_dir("empty-tail");
    let mut opts = options(&dir);
    opts.tail_retention_ratio = 0.0;
    opts.validate().unwrap();
    let summarizer = Writing(AtomicUsize::new(0));
    let outcome = run_with(&messages, &opts, &summarizer);
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert!(outcome.error.is_none());
    let result = assembled(&messages, &outcome);
    assert_eq!(result.len(), 2);
    assert_eq!(result[0], messages[0]);
    assert_eq!(result[1]["role"], "user");
    assert_eq!(outcome.stats.retained_message_count, 1);
    assert_eq!(outcome.stats.compacted_message_count, messages.len() - 1);
    assert_eq!(check_conversation(&result), vec![]);
    assert_eq!(restored(&result, &dir), messages);
    // The empty tail through the fallback too.
    let failing = Failing::new(ErrorCode::Refused);
    let dir2 = temp_dir("empty-tail-fallback");
    opts.output_dir = dir2.clone();
    let outcome = run_with(&messages, &opts, &failing);
    assert!(outcome.compacted);
    let result = assembled(&messages, &outcome);
    assert_eq!(result.len(), 2);
    assert_eq!(restored(&result, &dir2), messages);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn still_over_limit_names_the_message_and_the_option() {
    // A user message larger than the window after some history: the summary cannot help.
    let mut messages = session(4);
    let huge = "the full log follows: ".to_string() + &"line of pasted output 0123 ".repeat(4_000);
    messages.push(json!({"role": "assistant", "content": "Paste the log, please."}));
    messages.push(json!({"role": "user", "content": huge}));
    messages.push(json!({"role": "assistant", "content": "Looking at it"}));
    let index = messages.len() - 2;
    let size = count(&messages[index..=index]);
    assert!(size > 20_000);
    let dir = temp_dir("still-over");
    let mut opts = options(&dir);
    opts.context_token_limit = 20_000;
    let summarizer = Writing(AtomicUsize::new(0));
    let outcome = run_with(&messages, &opts, &summarizer);
    assert!(outcome.compacted);
    let error = outcome.error.as_ref().unwrap();
    assert_eq!(error.code, ErrorCode::StillOverLimit);
    let raw = tokens::count_message(Encoding::O200kBase, &messages[index]);
    assert!(
        error.message.contains(&format!(
            "message {index} (user, {raw} tokens; at 2 in the result) keeps it over: offload: 'all' would shorten its text"
        )),
        "{}",
        error.message
    );
    // With offload: 'all' it is shortened, and the result fits.
    opts.offload = Scope::All;
    let outcome = run_with(&messages, &opts, &summarizer);
    assert!(outcome.compacted);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let _ = std::fs::remove_dir_all(&dir);
}
