//! The other seeds' features through the real pipeline: strategies (selective, keep-recent,
//! keep-system-and-recent, sliding-window, noop), triggers, the confirmation hook and events,
//! recursive summary rounds, the summary cap and key-information extraction.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use context_compact_core::archive::{restore_messages, Restored};
use context_compact_core::base::error::ErrorCode;
use context_compact_core::compact_with_hooks;
use context_compact_core::model::added;
use context_compact_core::model::check::{
    check_conversation, MISSING_TOOL_RESULT, ORPHAN_TOOL_RESULT,
};
use context_compact_core::model::tokens::{self, Encoding};
use context_compact_core::model::trigger::TriggerKind;
use context_compact_core::pipeline::{
    BeforeCompactInfo, CompactHooks, Confirmation, NoHooks, MAX_ROUNDS,
};
use context_compact_core::pipeline::{CompactOptions, CompactOutcome, Piece};
use context_compact_core::plan::strategy::Strategy;
use context_compact_core::summary::extractive::ExtractiveSummarizer;
use context_compact_core::summary::summarize::{
    AttemptError, BoxFuture, NoObserver, Summarizer, SummaryRequest,
};
use proptest::prelude::*;
use proptest::strategy::Strategy as PropStrategy;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A summarizer that counts its calls and answers with a fixed text.
struct Counting {
    calls: AtomicU32,
    reply: String,
}

impl Counting {
    fn new(reply: &str) -> Self {
        Counting {
            calls: AtomicU32::new(0),
            reply: reply.into(),
        }
    }
    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Summarizer for Counting {
    fn summarize<'a>(
        &'a self,
        _request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let reply = self.reply.clone();
        Box::pin(async move { Ok(reply) })
    }
    fn provider(&self) -> &str {
        "custom"
    }
}

/// Hooks that record events and answer the confirmation with `proceed`.
struct Recorder {
    proceed: bool,
    events: Mutex<Vec<Value>>,
    asked: Mutex<Vec<BeforeCompactInfo>>,
}

impl Recorder {
    fn new(proceed: bool) -> Self {
        Recorder {
            proceed,
            events: Mutex::new(Vec::new()),
            asked: Mutex::new(Vec::new()),
        }
    }
    fn types(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect()
    }
}

impl CompactHooks for Recorder {
    fn before_compact<'a>(&'a self, info: &'a BeforeCompactInfo) -> BoxFuture<'a, Confirmation> {
        self.asked.lock().unwrap().push(info.clone());
        let answer = if self.proceed {
            Confirmation::Proceed
        } else {
            Confirmation::Decline("the user said no".into())
        };
        Box::pin(async move { answer })
    }
    fn event(&self, event: Value) {
        self.events.lock().unwrap().push(event);
    }
}

fn run(
    messages: &[Value],
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    hooks: &dyn CompactHooks,
) -> CompactOutcome {
    runtime()
        .block_on(compact_with_hooks(
            messages,
            None,
            options,
            summarizer,
            &CancellationToken::new(),
            &NoObserver,
            hooks,
        ))
        .unwrap()
}

fn assembled(messages: &[Value], outcome: &CompactOutcome) -> Vec<Value> {
    outcome
        .pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(i) => messages[*i].clone(),
            Piece::New(message) => message.clone(),
        })
        .collect()
}

fn restored(compacted: &[Value], dir: &Path, session: &str) -> Vec<Value> {
    restore_messages(compacted, dir, session)
        .unwrap()
        .into_iter()
        .map(|r| match r {
            Restored::Original(i) => compacted[i].clone(),
            Restored::Archived(message) => message,
        })
        .collect()
}

fn pairing_problems(messages: &[Value]) -> Vec<String> {
    check_conversation(messages)
        .into_iter()
        .filter(|p| p.kind == ORPHAN_TOOL_RESULT || p.kind == MISSING_TOOL_RESULT)
        .map(|p| format!("{}: {}", p.index, p.message))
        .collect()
}

fn count(messages: &[Value]) -> usize {
    tokens::count_messages(Encoding::O200kBase, messages)
}

/// A coding session: system prompt, then `n` turns, each a request, a tool call with a large
/// result, and an answer.
fn session(n: usize, output_lines: usize) -> Vec<Value> {
    let mut m = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for i in 0..n {
        m.push(json!({"role": "user", "content": format!("Please look at src/mod{i}.rs and fix the bug {i}.")}));
        m.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Reading src/mod{i}.rs.")},
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "read_file", "input": {"path": format!("src/mod{i}.rs")}}
        ]}));
        m.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("fn f{i}() {{}}\n").repeat(output_lines)}
        ]}));
        m.push(json!({"role": "assistant", "content": format!("Fixed bug {i}; we decided to keep the API.")}));
    }
    m
}

fn options(dir: &Path, total: usize, ratio: f64) -> CompactOptions {
    CompactOptions {
        context_token_limit: total,
        threshold_ratio: ratio,
        output_dir: dir.to_path_buf(),
        session_id: "s".into(),
        ..CompactOptions::default()
    }
}

#[test]
fn selective_below_the_threshold_makes_no_summary_call_and_can_be_restored() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(10, 200);
    let total = count(&messages);
    let mut opts = options(dir.path(), total, 0.8);
    opts.strategy = Strategy::Selective;
    let summarizer = Counting::new("## Goal\nnever used");
    let hooks = Recorder::new(true);
    let outcome = run(&messages, &opts, &summarizer, &hooks);
    assert!(outcome.compacted, "{outcome:?}");
    assert_eq!(summarizer.calls(), 0, "no LLM call");
    assert_eq!(outcome.strategy, Strategy::Selective);
    assert!(!outcome.fallback);
    assert_eq!(outcome.trigger, Some(TriggerKind::Tokens));
    let removed = outcome.removed.clone().unwrap();
    assert_eq!(removed.steps, vec!["toolResults"]);
    assert_eq!(removed.tool_results_cleared, 7);
    assert_eq!(removed.messages_removed, 0);
    let out = assembled(&messages, &outcome);
    assert!(
        pairing_problems(&out).is_empty(),
        "{:?}",
        pairing_problems(&out)
    );
    assert!((outcome.stats.compacted_token_count as f64) < total as f64 * 0.8);
    assert_eq!(outcome.stats.compacted_token_count, count(&out));
    // The notice says what happened and names the archive; the placeholders keep their ids.
    let notice = &out[1];
    assert!(added::is_notice(notice), "{notice}");
    let archive = outcome.archive_path.clone().unwrap();
    assert!(notice["content"]
        .as_str()
        .unwrap()
        .contains(&archive.display().to_string()));
    assert_eq!(out[4]["content"][0]["tool_use_id"], "toolu_0");
    assert!(out[4]["content"][0]["content"]
        .as_str()
        .unwrap()
        .starts_with("[context-compact] Tool result cleared"));
    // Kept tool results are the very same.
    assert_eq!(out.last(), messages.last());
    // Rollback: the archive gives everything back, in order.
    assert_eq!(restored(&out, dir.path(), "s"), messages);
    // Events: limit exceeded, started, completed.
    assert_eq!(
        hooks.types(),
        vec!["token_limit_exceeded", "started", "completed"]
    );
}

#[test]
fn a_usage_report_keeps_what_the_messages_do_not_hold_in_the_estimate() {
    // Without usage, clearing the old tool results is enough for this threshold; with a usage
    // report showing 1 000 billed tokens the messages do not hold (a system prompt and tools
    // the caller did not pass), it is not, and old turns go too.
    let messages = session(20, 200);
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), 1_000_000, 0.9);
    opts.strategy = Strategy::Selective;
    opts.force = true;
    let cleared = run(&messages, &opts, &Counting::new("x"), &NoHooks);
    assert_eq!(cleared.removed.unwrap().steps, vec!["toolResults"]);
    let after = cleared.stats.compacted_token_count;
    let total = count(&messages);
    opts.force = false;
    opts.threshold_override = Some(after + 500);
    opts.usage = Some(context_compact_core::model::trigger::Usage {
        input: (total + 1_000) as u64,
        output: 0,
    });
    let outcome = run(&messages, &opts, &Counting::new("x"), &NoHooks);
    assert!(outcome.compacted, "{outcome:?}");
    assert_eq!(outcome.trigger, Some(TriggerKind::Tokens));
    let removed = outcome.removed.unwrap();
    assert_eq!(removed.steps, vec!["toolResults", "turns"], "{removed:?}");
}

#[test]
fn selective_that_is_not_enough_falls_back_to_a_summary_of_the_original_list() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(6, 5);
    let total = count(&messages);
    let mut opts = options(dir.path(), total, 0.3);
    opts.strategy = Strategy::Selective;
    opts.tail_retention_ratio = 0.05;
    let summarizer = Counting::new("## Goal\nsummary of everything");
    let outcome = run(&messages, &opts, &summarizer, &NoHooks);
    assert!(outcome.compacted, "{outcome:?}");
    assert!(summarizer.calls() >= 1);
    assert_eq!(outcome.strategy, Strategy::Summary);
    assert!(outcome.fallback);
    assert!(outcome.removed.is_none());
    let out = assembled(&messages, &outcome);
    assert!(pairing_problems(&out).is_empty());
    // Nothing of the selective attempt is in the result: the middle's originals are archived.
    assert_eq!(restored(&out, dir.path(), "s"), messages);
}

#[test]
fn selective_removes_whole_turns_and_drops_skills() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = session(12, 2);
    messages.insert(
        5,
        json!({"role": "user", "content": "SKILL: how to run tests", "metadata": {"type": "skill_prompt"}}),
    );
    let mut opts = options(dir.path(), 1_000_000, 0.9);
    opts.strategy = Strategy::Selective;
    opts.max_messages = Some(30);
    let summarizer = Counting::new("x");
    let outcome = run(&messages, &opts, &summarizer, &NoHooks);
    assert!(outcome.compacted);
    assert_eq!(summarizer.calls(), 0);
    assert_eq!(outcome.trigger, Some(TriggerKind::Messages));
    let removed = outcome.removed.clone().unwrap();
    assert_eq!(removed.steps, vec!["toolResults", "skills", "turns"]);
    assert_eq!(removed.skill_messages_dropped, 1);
    assert_eq!(removed.turns_removed, 7);
    let out = assembled(&messages, &outcome);
    assert!(out.len() <= 30, "{}", out.len());
    assert!(pairing_problems(&out).is_empty());
    assert_eq!(out[0], messages[0]);
    assert_eq!(restored(&out, dir.path(), "s"), messages);
}

#[test]
fn keep_recent_strategies_and_the_window_are_pair_safe_and_restorable() {
    for strategy in [
        Strategy::KeepRecent,
        Strategy::KeepSystemAndRecent,
        Strategy::SlidingWindow,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let messages = session(10, 20);
        let mut opts = options(dir.path(), 200_000, 0.9);
        opts.strategy = strategy;
        opts.force = true;
        opts.keep_recent_messages = 6;
        opts.target_tokens = Some(400);
        let summarizer = Counting::new("x");
        let outcome = run(&messages, &opts, &summarizer, &NoHooks);
        assert!(outcome.compacted, "{strategy:?}");
        assert_eq!(summarizer.calls(), 0);
        assert_eq!(outcome.strategy, strategy);
        assert_eq!(outcome.trigger, Some(TriggerKind::Force));
        let out = assembled(&messages, &outcome);
        assert!(pairing_problems(&out).is_empty(), "{strategy:?}");
        let system_kept = out[0] == messages[0];
        assert_eq!(
            system_kept,
            strategy != Strategy::KeepRecent,
            "{strategy:?}"
        );
        if strategy == Strategy::SlidingWindow {
            let kept: usize = count(&out[2..]);
            assert!(kept <= 400, "{kept}");
        } else {
            // The last 6 messages, moved back to the call of a tool result when needed.
            let conversation = if system_kept { &out[2..] } else { &out[1..] };
            assert!(conversation.len() >= 6 && conversation.len() <= 7);
            assert_eq!(conversation.last(), messages.last());
        }
        assert_eq!(restored(&out, dir.path(), "s"), messages, "{strategy:?}");
    }
}

#[test]
fn noop_and_disabled_compression_change_nothing_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(4, 50);
    let mut opts = options(dir.path(), 100, 0.5);
    opts.strategy = Strategy::Noop;
    let outcome = run(&messages, &opts, &ExtractiveSummarizer, &NoHooks);
    assert!(!outcome.compacted);
    assert!(outcome.error.is_none());
    assert_eq!(outcome.trigger, Some(TriggerKind::Tokens));
    opts.strategy = Strategy::Summary;
    opts.enabled = false;
    opts.force = true;
    let outcome = run(&messages, &opts, &ExtractiveSummarizer, &NoHooks);
    assert!(!outcome.compacted);
    assert_eq!(outcome.trigger, None);
    assert!(!dir.path().join("s").exists());
}

#[test]
fn message_count_and_tool_output_triggers_fire_like_the_token_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(6, 10);
    let mut opts = options(dir.path(), 1_000_000, 0.9);
    opts.tail_retention_ratio = 0.0001;
    let s = Counting::new("## Goal\nx");
    assert!(!run(&messages, &opts, &s, &NoHooks).compacted);
    opts.max_messages = Some(messages.len());
    assert!(
        !run(&messages, &opts, &s, &NoHooks).compacted,
        "> N, not ≥ N"
    );
    opts.max_messages = Some(messages.len() - 1);
    let outcome = run(&messages, &opts, &s, &NoHooks);
    assert_eq!(outcome.trigger, Some(TriggerKind::Messages));
    assert!(outcome.compacted);
    opts.max_messages = None;
    let bytes: usize = messages
        .iter()
        .map(context_compact_core::model::trigger::tool_output_bytes)
        .sum();
    assert_eq!(bytes, 6 * 10 * "fn f0() {}\n".len());
    opts.max_tool_output_bytes = Some(bytes);
    assert!(!run(&messages, &opts, &s, &NoHooks).compacted);
    opts.max_tool_output_bytes = Some(bytes - 1);
    let outcome = run(&messages, &opts, &s, &NoHooks);
    assert_eq!(outcome.trigger, Some(TriggerKind::ToolOutput));
    assert!(outcome.compacted);
}

#[test]
fn a_declined_compaction_leaves_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(6, 10);
    let mut opts = options(dir.path(), 100, 0.5);
    opts.tail_retention_ratio = 0.5;
    let s = Counting::new("## Goal\nx");
    let hooks = Recorder::new(false);
    let outcome = run(&messages, &opts, &s, &hooks);
    assert!(!outcome.compacted);
    assert!(outcome.pieces.is_empty());
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ErrorCode::Declined);
    assert_eq!(error.message, "the user said no");
    assert_eq!(s.calls(), 0);
    let asked = hooks.asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].message_count, messages.len());
    assert_eq!(asked[0].threshold, 50);
    assert!(asked[0].middle_count > 0);
    assert_eq!(hooks.types(), vec!["token_limit_exceeded"]);
    // Only the audit line: no archive.
    let names: Vec<String> = std::fs::read_dir(dir.path().join("s"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(names, vec!["events.jsonl"]);
}

#[test]
fn failures_are_reported_as_failed_events() {
    struct Failing;
    impl Summarizer for Failing {
        fn summarize<'a>(
            &'a self,
            _request: &'a SummaryRequest<'a>,
        ) -> BoxFuture<'a, Result<String, AttemptError>> {
            Box::pin(async { Ok(String::new()) })
        }
        fn provider(&self) -> &str {
            "custom"
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let messages = session(6, 10);
    let mut opts = options(dir.path(), 100, 0.5);
    opts.max_retries = 0;
    // The list is over its 100-token window: by default the summary would be written without an
    // LLM (summaryFallback, tests/summary_fallback.rs); here the failure is the result.
    opts.summary_fallback = context_compact_core::options::SummaryFallback::None;
    let hooks = Recorder::new(true);
    let outcome = run(&messages, &opts, &Failing, &hooks);
    assert_eq!(outcome.error.unwrap().code, ErrorCode::EmptySummary);
    assert_eq!(
        hooks.types(),
        vec!["token_limit_exceeded", "started", "failed"]
    );
    assert_eq!(
        hooks.events.lock().unwrap()[2]["error"]["code"],
        "EMPTY_SUMMARY"
    );
}

#[test]
fn recursive_rounds_end_below_the_threshold_or_after_the_last_round() {
    let dir = tempfile::tempdir().unwrap();
    // Small turns: the tail budget is large enough that one round leaves it over the threshold.
    let messages = session(40, 3);
    let total = count(&messages);
    let mut opts = options(dir.path(), total, 0.5);
    opts.tail_retention_ratio = 0.45;
    let s = Counting::new("## Goal\nfix bugs");
    let hooks = Recorder::new(true);
    let outcome = run(&messages, &opts, &s, &hooks);
    assert!(outcome.compacted);
    assert!(outcome.rounds >= 2, "rounds {}", outcome.rounds);
    assert!(outcome.rounds <= MAX_ROUNDS);
    assert_eq!(s.calls(), outcome.rounds);
    let out = assembled(&messages, &outcome);
    assert_eq!(outcome.stats.compacted_token_count, count(&out));
    assert!(outcome.stats.compacted_token_count < total / 2 || outcome.rounds == MAX_ROUNDS);
    assert_eq!(
        outcome.stats.retained_message_count + outcome.stats.compacted_message_count,
        messages.len()
    );
    assert!(pairing_problems(&out).is_empty());
    // One summary, nesting the earlier rounds: restore still gives the whole session back.
    assert_eq!(
        out.iter().filter(|m| added::is_summary_message(m)).count(),
        1
    );
    assert_eq!(restored(&out, dir.path(), "s"), messages);
    let completed = hooks.events.lock().unwrap().last().cloned().unwrap();
    assert_eq!(completed["type"], "completed");
    assert_eq!(completed["rounds"], outcome.rounds);
    assert!(completed["savedRatio"].as_f64().unwrap() > 0.0);

    // A tail of one turn is not compacted again.
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), total, 0.5);
    opts.output_dir = dir.path().to_path_buf();
    opts.tail_retention_ratio = 0.0001;
    // A summary budget that lets the long summary through (the default would cut it).
    opts.summary_budget_tokens = Some(1_000_000);
    let s = Counting::new(&"long summary ".repeat(2_000));
    let outcome = run(&messages, &opts, &s, &NoHooks);
    assert_eq!(s.calls(), 1);
    // The one round's summary is longer than what it replaced: the input stands.
    assert!(!outcome.compacted);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ErrorCode::NotSmaller);
    assert!(error.tokens.unwrap() >= error.original_tokens.unwrap());
}

#[test]
fn the_summary_cap_cuts_the_model_text_and_keeps_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(6, 10);
    let mut opts = options(dir.path(), 100, 0.5);
    opts.summary_max_chars = Some(200);
    // A window of 100 tokens gives the summary 15: room for the ledger here.
    opts.summary_budget_tokens = Some(10_000);
    let s = Counting::new(&"The agent fixed many bugs. ".repeat(100));
    let outcome = run(&messages, &opts, &s, &NoHooks);
    let summary = outcome.summary.unwrap();
    let message = json!({"role": "user", "content": summary});
    let body = added::summary_body(&message).unwrap();
    let (text, ledger) = body.split_once("## Ledger").unwrap();
    assert!(text.trim_end().chars().count() <= 200, "{text}");
    assert!(text.contains("[summary truncated]"));
    assert!(ledger.contains("src/mod0.rs"));
}

#[test]
fn memory_is_extracted_once_across_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(6, 10);
    let mut opts = options(dir.path(), 100, 0.5);
    opts.extract_memory = true;
    // Two compactions of the same messages (a checkpoint would make the second a reuse, which
    // extracts nothing).
    opts.checkpoints = false;
    let s = Counting::new("## Goal\nx");
    let first = run(&messages, &opts, &s, &NoHooks);
    let extracted = first.extracted.unwrap();
    assert!(extracted.decisions >= 1 && extracted.facts >= 1 && extracted.runtime >= 1);
    assert_eq!(extracted.dir, dir.path().join("s").join("extracted"));
    let second = run(&messages, &opts, &s, &NoHooks);
    let again = second.extracted.unwrap();
    assert_eq!((again.decisions, again.facts, again.runtime), (0, 0, 0));
    let decisions = std::fs::read_to_string(extracted.dir.join("decisions.md")).unwrap();
    assert_eq!(decisions.matches("Fixed bug 0;").count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Property: every strategy keeps the pairing rules on generated conversations, and a restore
// gives the input back.

/// A turn: a prompt, then steps that may call tools in parallel (Anthropic or OpenAI style).
fn generated(turns: &[Vec<(usize, usize)>], openai: bool, system: bool) -> Vec<Value> {
    let mut m = Vec::new();
    if system {
        m.push(json!({"role": "system", "content": "You are a coding agent."}));
    }
    for (t, steps) in turns.iter().enumerate() {
        m.push(
            json!({"role": "user", "content": format!("request {t} {}", "word ".repeat(t % 7))}),
        );
        for (s, &(calls, size)) in steps.iter().enumerate() {
            let ids: Vec<String> = (0..calls).map(|c| format!("call_{t}_{s}_{c}")).collect();
            let output = "output line\n".repeat(size);
            if openai {
                if calls == 0 {
                    m.push(json!({"role": "assistant", "content": format!("step {s}")}));
                } else {
                    let tool_calls: Vec<Value> = ids
                        .iter()
                        .map(|id| json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}))
                        .collect();
                    m.push(json!({"role": "assistant", "content": null, "tool_calls": tool_calls}));
                    for id in &ids {
                        m.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
                    }
                }
            } else {
                let mut content = vec![json!({"type": "text", "text": format!("step {s}")})];
                for id in &ids {
                    content.push(json!({"type": "tool_use", "id": id, "name": "read_file", "input": {"path": "src/a.rs"}}));
                }
                m.push(json!({"role": "assistant", "content": content}));
                if calls > 0 {
                    let results: Vec<Value> = ids
                        .iter()
                        .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": output}))
                        .collect();
                    m.push(json!({"role": "user", "content": results}));
                }
            }
        }
    }
    m
}

fn conversation_strategy() -> impl PropStrategy<Value = Vec<Value>> {
    (
        proptest::collection::vec(
            proptest::collection::vec((0usize..4, 0usize..30), 1..4),
            1..12,
        ),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(turns, openai, system)| generated(&turns, openai, system))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_strategy_keeps_tool_pairs_and_restores(
        messages in conversation_strategy(),
        strategy_index in 0usize..5,
        keep in 1usize..12,
        ratio in 0.05f64..0.9,
    ) {
        let strategy = [
            Strategy::Summary,
            Strategy::Selective,
            Strategy::KeepRecent,
            Strategy::KeepSystemAndRecent,
            Strategy::SlidingWindow,
        ][strategy_index];
        let dir = tempfile::tempdir().unwrap();
        let total = count(&messages).max(1);
        let mut opts = options(dir.path(), total, ratio);
        opts.strategy = strategy;
        opts.force = true;
        opts.keep_recent_messages = keep;
        opts.tail_retention_ratio = ratio / 2.0;
        let outcome = run(&messages, &opts, &ExtractiveSummarizer, &NoHooks);
        prop_assert!(pairing_problems(&messages).is_empty());
        if outcome.compacted {
            let out = assembled(&messages, &outcome);
            prop_assert!(pairing_problems(&out).is_empty(), "{:?}: {:?}", strategy, pairing_problems(&out));
            prop_assert_eq!(outcome.stats.compacted_token_count, count(&out));
            prop_assert_eq!(restored(&out, dir.path(), "s"), messages);
        } else {
            prop_assert!(outcome.error.is_some());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Compactions with different strategies, one after the other with turns added in between:
    /// the pairing rules hold after each, and a restore gives the whole session back (notices
    /// and summaries nest in each other's archives).
    #[test]
    fn mixed_strategies_in_a_row_restore_the_whole_session(
        first in conversation_strategy(),
        later in proptest::collection::vec(conversation_strategy(), 1..4),
        picks in proptest::collection::vec(0usize..5, 4),
        keep in 1usize..10,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut full = first.clone();
        let mut current = first;
        let mut additions = later.into_iter();
        for pick in picks {
            let strategy = [
                Strategy::Summary,
                Strategy::Selective,
                Strategy::KeepRecent,
                Strategy::KeepSystemAndRecent,
                Strategy::SlidingWindow,
            ][pick];
            let total = count(&current).max(1);
            let mut opts = options(dir.path(), total, 0.5);
            opts.strategy = strategy;
            opts.force = true;
            opts.keep_recent_messages = keep;
            opts.tail_retention_ratio = 0.2;
            let outcome = run(&current, &opts, &ExtractiveSummarizer, &NoHooks);
            if outcome.compacted {
                current = assembled(&current, &outcome);
                prop_assert!(pairing_problems(&current).is_empty(), "{:?}", pairing_problems(&current));
            }
            prop_assert_eq!(&restored(&current, dir.path(), "s"), &full);
            if let Some(more) = additions.next() {
                // Continue the session (without a second system prompt).
                let more: Vec<Value> = more.into_iter().filter(|m| m["role"] != "system").collect();
                full.extend(more.iter().cloned());
                current.extend(more);
            }
        }
    }
}
