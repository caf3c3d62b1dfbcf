//! The post-condition of every compaction (SPEC §4.7): the result fits under the threshold by
//! the trigger's own estimate, or its error says why; a compaction never grows the list; kept
//! oversized tool results are shortened only as far as needed and restored exactly.

use context_compact_core::base::error::ErrorCode;
use context_compact_core::model::check::check_conversation;
use context_compact_core::model::tokens::{self, Encoding};
use context_compact_core::pipeline::{CompactOptions, Piece};
use context_compact_core::plan::offload::{self, Scope};
use context_compact_core::plan::strategy::Strategy;
use context_compact_core::summary::summarize::{
    AttemptError, BoxFuture, Summarizer, SummaryRequest,
};
mod common;
use common::{assembled, restored, run, run_with};
use serde_json::{json, Value};

/// A summarizer that writes more than it was given.
struct Verbose;
impl Summarizer for Verbose {
    fn summarize<'a>(
        &'a self,
        _request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        Box::pin(async { Ok("## Goal\n".to_string() + &"a very long summary ".repeat(300)) })
    }
    fn provider(&self) -> &str {
        "custom"
    }
}

fn count(messages: &[Value]) -> usize {
    tokens::count_messages(Encoding::O200kBase, messages)
}

fn log_lines(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("{i:06} building crate number {i} with features a,b,c in 0.{i}s\n"))
        .collect()
}

/// A session whose last tool result is `giant_lines` lines of output.
fn session(turns: usize, giant_lines: usize) -> Vec<Value> {
    let mut m = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for t in 0..turns {
        m.push(json!({"role": "user", "content": format!("step {t}: {}", "please continue ".repeat(20))}));
        m.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("running step {t}")},
            {"type": "tool_use", "id": format!("t{t}"), "name": "bash", "input": {"command": format!("make step{t}")}}
        ]}));
        m.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("t{t}"), "content": log_lines(20)}
        ]}));
    }
    m.push(json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "giant", "name": "bash", "input": {"command": "cargo build -vv"}}
    ]}));
    m.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "giant", "content": log_lines(giant_lines), "is_error": false}
    ]}));
    m
}

fn options(dir: &std::path::Path, limit: usize) -> CompactOptions {
    CompactOptions {
        context_token_limit: limit,
        output_dir: dir.to_path_buf(),
        session_id: "s".into(),
        ..CompactOptions::default()
    }
}

#[test]
fn a_tail_tool_result_larger_than_the_window_is_shortened_to_fit_and_restored_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(30, 6_000);
    let total = count(&messages);
    let giant = count(&messages[messages.len() - 1..]);
    // A window the giant result alone overflows.
    let opts = options(dir.path(), giant * 3 / 4);
    assert!(total >= opts.threshold_tokens());
    let outcome = run(&messages, &opts);
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let out = assembled(&messages, &outcome);
    let after = count(&out);
    assert_eq!(after, outcome.stats.compacted_token_count);
    // Below the threshold, with the tail budget of room and not much more: only as far as needed.
    let threshold = opts.threshold_tokens();
    assert!(after < threshold, "{after} ≥ {threshold}");
    assert!(
        after + opts.tail_retention_tokens() >= threshold - threshold / 100,
        "shortened more than needed: {after} tokens, threshold {threshold}"
    );
    // One tool result changed, reported with its path; its call is intact.
    assert_eq!(outcome.offloaded.len(), 1);
    let report = &outcome.offloaded[0];
    assert_eq!(report.original_index, messages.len() - 1);
    assert_eq!(report.index, out.len() - 1);
    assert_eq!(
        report.path,
        format!("messages.{}.content.0.content", out.len() - 1)
    );
    assert_eq!(report.kind, "tool_result");
    let text = out[report.index]["content"][0]["content"].as_str().unwrap();
    assert!(text.starts_with("000000 building crate"));
    assert!(text
        .trim_end()
        .ends_with("005999 building crate number 5999 with features a,b,c in 0.5999s"));
    assert!(text.contains("tokens elided from this tool result"));
    let archive = outcome.offload_archive_path.as_ref().unwrap();
    assert!(text.contains(&archive.display().to_string()));
    assert_eq!(out[report.index]["content"][0]["is_error"], false);
    assert!(
        check_conversation(&out).is_empty(),
        "{:?}",
        check_conversation(&out)
    );
    // Restore gives the original back, byte for byte.
    assert_eq!(
        serde_json::to_string(&restored(&out, dir.path())).unwrap(),
        serde_json::to_string(&messages).unwrap()
    );
}

#[test]
fn a_user_message_larger_than_the_window_says_still_over_limit_unless_offload_is_all() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = session(10, 10);
    messages.push(json!({"role": "assistant", "content": "What should I do next?"}));
    messages.push(
        json!({"role": "user", "content": format!("Here is the log:\n{}", log_lines(4_000))}),
    );
    let giant = count(&messages[messages.len() - 1..]);
    let mut opts = options(dir.path(), giant * 3 / 4);
    let outcome = run(&messages, &opts);
    // Smaller, but not under the threshold: returned, and it says so with the numbers.
    assert!(outcome.compacted);
    let error = outcome.error.clone().unwrap();
    assert_eq!(error.code, ErrorCode::StillOverLimit);
    assert!(error.tokens.unwrap() >= error.threshold.unwrap());
    assert_eq!(error.threshold.unwrap() as usize, opts.threshold_tokens());
    assert!(
        error.message.contains("offload: 'all'"),
        "{}",
        error.message
    );
    assert!(outcome
        .warnings
        .iter()
        .any(|w| w.contains("still over the threshold")));
    assert!(outcome.offloaded.is_empty());
    // With offload: 'all' the user's text is shortened too, and the result fits.
    opts.offload = Scope::All;
    let outcome = run(&messages, &opts);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.offloaded.len(), 1);
    assert_eq!(outcome.offloaded[0].kind, "text");
    let out = assembled(&messages, &outcome);
    assert!(count(&out) < opts.threshold_tokens());
    assert_eq!(restored(&out, dir.path()), messages);
    // With offload off, a giant tool result cannot fit either.
    let messages = session(10, 6_000);
    let giant = count(&messages[messages.len() - 1..]);
    let mut opts = options(dir.path(), giant * 3 / 4);
    opts.offload = Scope::Off;
    let outcome = run(&messages, &opts);
    assert_eq!(outcome.error.unwrap().code, ErrorCode::StillOverLimit);
}

#[test]
fn a_compaction_that_would_grow_the_list_returns_the_input() {
    let dir = tempfile::tempdir().unwrap();
    // A tail pair that is nearly the whole conversation: the summary costs more than it saves.
    let messages = vec![
        json!({"role": "user", "content": "hi"}),
        json!({"role": "assistant", "content": "hello"}),
        json!({"role": "user", "content": format!("task: {}", "details ".repeat(400))}),
        json!({"role": "assistant", "content": format!("done: {}", "result ".repeat(400))}),
    ];
    let mut opts = options(dir.path(), 3_000);
    opts.force = true;
    // A summary budget that lets the verbose summary through (the default would cut it).
    opts.summary_budget_tokens = Some(100_000);
    let outcome = run_with(&messages, &opts, &Verbose);
    assert!(!outcome.compacted);
    assert!(outcome.pieces.is_empty());
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ErrorCode::NotSmaller);
    assert!(error.message.contains("not fewer"));
    // Nothing was archived.
    assert!(
        context_compact_core::archive::list_archives(dir.path(), "s")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn every_strategy_meets_the_post_condition_or_says_why() {
    for strategy in [
        Strategy::Summary,
        Strategy::Selective,
        Strategy::KeepRecent,
        Strategy::KeepSystemAndRecent,
        Strategy::SlidingWindow,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let messages = session(40, 3_000);
        let giant = count(&messages[messages.len() - 1..]);
        let mut opts = options(dir.path(), giant);
        opts.strategy = strategy;
        opts.keep_recent_messages = 6;
        let outcome = run(&messages, &opts);
        let name = strategy.as_str();
        if !outcome.compacted {
            let code = outcome.error.as_ref().map(|e| e.code);
            assert!(
                matches!(
                    code,
                    Some(ErrorCode::NotSmaller | ErrorCode::NothingToCompact)
                ),
                "{name}: {code:?}"
            );
            continue;
        }
        let out = assembled(&messages, &outcome);
        let after = count(&out);
        assert!(after < count(&messages), "{name} grew the list");
        match &outcome.error {
            None => assert!(
                after < opts.threshold_tokens(),
                "{name}: {after} over, no error"
            ),
            Some(error) => assert_eq!(error.code, ErrorCode::StillOverLimit, "{name}"),
        }
        assert!(check_conversation(&out).is_empty(), "{name}");
        assert_eq!(restored(&out, dir.path()), messages, "{name}");
    }
}

#[test]
fn offload_on_its_own_shortens_only_what_is_over_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(3, 2_000);
    let outcome = context_compact_core::ops::offload::offload_tool_results(
        &messages,
        1_000,
        Scope::ToolResults,
        dir.path(),
        "s",
        Encoding::O200kBase,
    );
    assert!(outcome.error.is_none());
    assert_eq!(outcome.offloaded.len(), 1);
    assert!(
        outcome.offloaded[0].tokens <= 1_000 + 20,
        "{:?}",
        outcome.offloaded
    );
    let out: Vec<Value> = outcome
        .pieces
        .iter()
        .map(|p| match p {
            Piece::Original(i) => messages[*i].clone(),
            Piece::New(m) => m.clone(),
        })
        .collect();
    assert_eq!(
        out.iter()
            .filter(|m| offload::original_of(m).is_some())
            .count(),
        1
    );
    assert_eq!(restored(&out, dir.path()), messages);
    // Nothing over the limit: nothing written.
    let dir = tempfile::tempdir().unwrap();
    let small = session(3, 5);
    let outcome = context_compact_core::ops::offload::offload_tool_results(
        &small,
        1_000,
        Scope::ToolResults,
        dir.path(),
        "s",
        Encoding::O200kBase,
    );
    assert!(outcome.offloaded.is_empty() && outcome.archive_path.is_none());
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
