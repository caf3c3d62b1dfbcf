//! Checkpoints and summaries prepared in the background (issue 22, SPEC §4.11): a compaction
//! is never paid for twice, and a precomputed summary is used only while what it covers is
//! unchanged.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{assembled, restored, run_with};
use context_compact_core::archive::checkpoint::{prefix_of_name, PrefixHashes};
use context_compact_core::archive::list_archives;
use context_compact_core::model::tokens::{self, Encoding};
use context_compact_core::pipeline::{CompactOptions, CompactOutcome, Piece};
use context_compact_core::plan::thinking::ThinkingPolicy;
use context_compact_core::resume::precompute::{precompute, Precomputed};
use context_compact_core::summary::summarize::{
    AttemptError, BoxFuture, NoObserver, Summarizer, SummaryRequest,
};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// A summarizer that counts its calls and says which one wrote a summary.
#[derive(Default)]
struct Counting {
    calls: AtomicUsize,
    previous: std::sync::Mutex<Vec<Option<String>>>,
}

impl Summarizer for Counting {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.previous
            .lock()
            .unwrap()
            .push(request.previous_summary.clone());
        Box::pin(async move { Ok(format!("## Goal\nsummary number {n}")) })
    }
    fn provider(&self) -> &str {
        "custom"
    }
}

impl Counting {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn turn(i: usize) -> [Value; 2] {
    [
        json!({"role": "user", "content": format!("question {i}: {}", "please look at this ".repeat(12))}),
        json!({"role": "assistant", "content": format!("answer {i}: {}", "here is what I found ".repeat(12))}),
    ]
}

fn history(turns: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful agent."})];
    for i in 0..turns {
        messages.extend(turn(i));
    }
    messages
}

fn options(dir: &std::path::Path, limit: usize) -> CompactOptions {
    CompactOptions {
        context_token_limit: limit,
        output_dir: dir.to_path_buf(),
        session_id: "s".into(),
        ..CompactOptions::default()
    }
}

/// The checkpoint files of session `s`.
fn checkpoint_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir.join("s"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| prefix_of_name(n).is_some())
        .collect()
}

fn total(messages: &[Value]) -> usize {
    tokens::count_messages(Encoding::O200kBase, messages)
}

/// The summary message of an outcome (the first message the library wrote).
fn summary_message(outcome: &CompactOutcome) -> Value {
    outcome
        .pieces
        .iter()
        .find_map(|p| match p {
            Piece::New(m) => Some(m.clone()),
            Piece::Original(_) => None,
        })
        .expect("a summary")
}

#[test]
fn the_chat_app_pattern_calls_the_summarizer_only_for_a_new_level() {
    // A chat app keeps the whole history for its UI and compacts it on every request.
    let dir = tempfile::tempdir().unwrap();
    let mut messages = history(12);
    let limit = total(&messages) * 100 / 92 - 20; // just over the threshold
    let options = options(dir.path(), limit);
    let summarizer = Counting::default();
    let mut recorded: Vec<Value> = Vec::new();
    let mut levels = 0;
    for request in 0..20 {
        let before = summarizer.calls();
        let outcome = run_with(&messages, &options, &summarizer);
        assert!(outcome.compacted, "request {request}: {outcome:?}");
        assert!(
            outcome.error.is_none(),
            "request {request}: {:?}",
            outcome.error
        );
        let report = outcome.checkpoint.clone().expect("a checkpoint report");
        let called = summarizer.calls() - before;
        let message = summary_message(&outcome);
        if request == 0 {
            assert!(!report.reused && report.recorded);
            assert_eq!(called, 1);
            levels += 1;
            recorded.push(message);
        } else if report.extended {
            // A new level: the summary updated with what followed the checkpoint.
            assert!(report.reused && report.recorded, "{report:?}");
            assert!(called >= 1);
            let previous = summarizer
                .previous
                .lock()
                .unwrap()
                .last()
                .cloned()
                .flatten();
            assert!(
                previous.is_some_and(|p| p.contains("summary number")),
                "the earlier summary is updated"
            );
            levels += 1;
            recorded.push(message);
        } else {
            // The same summary message, byte for byte, and no LLM call.
            assert!(report.reused && !report.recorded, "{report:?}");
            assert_eq!(called, 0, "request {request}");
            assert_eq!(
                serde_json::to_string(&message).unwrap(),
                serde_json::to_string(recorded.last().unwrap()).unwrap(),
                "request {request}"
            );
            assert_eq!(outcome.provider, None);
            assert_eq!(outcome.summary_usage, None);
        }
        // Every result restores to the whole history, and its numbers add up.
        let list = assembled(&messages, &outcome);
        assert_eq!(restored(&list, dir.path()), messages, "request {request}");
        let stats = outcome.stats;
        assert_eq!(
            stats.compacted_message_count
                + stats.retained_message_count
                + stats.removed_message_count,
            messages.len()
        );
        assert_eq!(stats.original_token_count, total(&messages));
        assert_eq!(stats.compacted_token_count, total(&list));
        messages.extend(turn(100 + request));
    }
    assert!(levels >= 2, "a new level was needed at least once");
    assert_eq!(summarizer.calls(), levels, "one call per level");
    // One archive per level: a reuse writes no archive.
    assert_eq!(list_archives(dir.path(), "s").unwrap().len(), levels);
}

#[test]
fn a_second_process_reuses_the_first_ones_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let messages = history(12);
    let limit = total(&messages) * 100 / 92 - 20;
    let first = Counting::default();
    let a = run_with(&messages, &options(dir.path(), limit), &first);
    assert_eq!(first.calls(), 1);
    // Another process: nothing in memory, the same location; the list read anew.
    let mut later: Vec<Value> =
        serde_json::from_str(&serde_json::to_string(&messages).unwrap()).unwrap();
    later.extend(turn(50));
    let second = Counting::default();
    let b = run_with(&later, &options(dir.path(), limit), &second);
    assert_eq!(second.calls(), 0);
    let report = b.checkpoint.clone().unwrap();
    assert!(report.reused);
    assert_eq!(
        serde_json::to_string(&summary_message(&a)).unwrap(),
        serde_json::to_string(&summary_message(&b)).unwrap()
    );
    assert_eq!(
        restored(&assembled(&later, &b), dir.path()),
        later,
        "restore is exact"
    );
    // The audit log says so.
    let events = std::fs::read_to_string(dir.path().join("s/events.jsonl")).unwrap();
    assert!(events.lines().last().unwrap().contains("\"reused\":true"));
    // A changed covered message is another prefix: no reuse.
    let mut edited = later.clone();
    edited[3]["content"] = json!("an edited question");
    let third = Counting::default();
    let c = run_with(&edited, &options(dir.path(), limit), &third);
    assert_eq!(third.calls(), 1);
    assert!(!c.checkpoint.unwrap().reused);
}

#[test]
fn checkpoints_off_neither_reads_nor_records() {
    let dir = tempfile::tempdir().unwrap();
    let messages = history(12);
    let mut options = options(dir.path(), total(&messages) * 100 / 92 - 20);
    options.checkpoints = false;
    let summarizer = Counting::default();
    for _ in 0..2 {
        let outcome = run_with(&messages, &options, &summarizer);
        assert!(outcome.compacted);
        assert_eq!(outcome.checkpoint, None);
    }
    assert_eq!(summarizer.calls(), 2);
    assert_eq!(checkpoint_files(dir.path()).len(), 0);
    // A checkpoint the caller holds is not used either.
    options.checkpoints = true;
    let recorded = run_with(&messages, &options, &summarizer);
    let record = recorded.checkpoint_record.unwrap();
    options.checkpoints = false;
    options.known_checkpoints = vec![Arc::new(record)];
    run_with(&messages, &options, &summarizer);
    assert_eq!(summarizer.calls(), 4);
}

#[test]
fn a_checkpoint_held_in_memory_is_reused_without_the_location() {
    let dir = tempfile::tempdir().unwrap();
    let messages = history(12);
    let limit = total(&messages) * 100 / 92 - 20;
    let summarizer = Counting::default();
    let first = run_with(&messages, &options(dir.path(), limit), &summarizer);
    let record = first.checkpoint_record.clone().unwrap();
    for name in checkpoint_files(dir.path()) {
        std::fs::remove_file(dir.path().join("s").join(name)).unwrap();
    }
    let mut options = options(dir.path(), limit);
    options.known_checkpoints = vec![Arc::new(record)];
    let again = run_with(&messages, &options, &summarizer);
    assert_eq!(summarizer.calls(), 1);
    assert!(again.checkpoint.unwrap().reused);
}

#[test]
fn kept_turns_that_lose_their_thinking_are_said_after_the_reused_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = history(12);
    let with_thinking = |i: usize| {
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("thinking {i}"), "signature": "sig"},
            {"type": "text", "text": format!("reply {i}")}
        ]})
    };
    messages.push(json!({"role": "user", "content": "go on"}));
    messages.push(with_thinking(0));
    let limit = total(&messages) * 100 / 92 - 20;
    let mut options = options(dir.path(), limit);
    options.thinking = ThinkingPolicy::Strip;
    let summarizer = Counting::default();
    let first = run_with(&messages, &options, &summarizer);
    assert!(first.compacted);
    assert!(!first.transformations.is_empty());
    // The checkpoint keeps the summary without the line about that call's kept turns.
    let record = first.checkpoint_record.clone().unwrap();
    assert!(!record.message["content"]
        .as_str()
        .unwrap()
        .contains("thinking was removed"));
    messages.push(json!({"role": "user", "content": "and then?"}));
    messages.push(with_thinking(1));
    let second = run_with(&messages, &options, &summarizer);
    assert_eq!(summarizer.calls(), 1);
    assert!(second.checkpoint.clone().unwrap().reused);
    let text = summary_message(&second)["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.starts_with(record.message["content"].as_str().unwrap()));
    assert!(text.contains("thinking was removed"));
    assert_eq!(
        restored(&assembled(&messages, &second), dir.path()),
        messages
    );
}

fn precomputed(messages: &[Value], options: &CompactOptions, summarizer: &Counting) -> Precomputed {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(precompute(
            messages,
            None,
            options,
            summarizer,
            &CancellationToken::new(),
            &NoObserver,
        ))
        .unwrap()
        .unwrap()
}

#[test]
fn a_precomputed_summary_is_applied_without_a_call_and_archived_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = history(10);
    let threshold_at = history(12);
    let limit = total(&threshold_at) * 100 / 92 - 20;
    let options = options(dir.path(), limit);
    let summarizer = Counting::default();
    // Before the threshold: summarized, nothing written.
    let pre = precomputed(&messages, &options, &summarizer);
    assert_eq!(summarizer.calls(), 1);
    assert!(pre.covered_messages > pre.head_length);
    assert_eq!(
        pre.prefix,
        PrefixHashes::of(&messages, "anthropic")
            .hex(pre.covered_messages)
            .unwrap()
    );
    assert!(list_archives(dir.path(), "s").unwrap().is_empty());
    // The loop goes on, past the threshold.
    messages.extend(turn(10));
    messages.extend(turn(11));
    let mut with = options.clone();
    with.precomputed = Some(Arc::new(pre.clone()));
    let outcome = run_with(&messages, &with, &summarizer);
    assert_eq!(summarizer.calls(), 1, "the swap calls no LLM");
    assert!(outcome.compacted && outcome.error.is_none(), "{outcome:?}");
    let background = outcome.background.clone().unwrap();
    assert_eq!(background.state, "applied");
    assert_eq!(
        outcome.partition.unwrap().tail_start,
        pre.covered_messages,
        "the summary stands for what it covered"
    );
    assert_eq!(list_archives(dir.path(), "s").unwrap().len(), 1);
    assert_eq!(
        restored(&assembled(&messages, &outcome), dir.path()),
        messages
    );
    // It left a checkpoint like any compaction.
    assert!(outcome.checkpoint.unwrap().recorded);
}

#[test]
fn a_precomputed_summary_of_changed_messages_is_stale_and_never_archived() {
    let dir = tempfile::tempdir().unwrap();
    let messages = history(10);
    let limit = total(&history(12)) * 100 / 92 - 20;
    let mut options = options(dir.path(), limit);
    options.checkpoints = false;
    let summarizer = Counting::default();
    let pre = precomputed(&messages, &options, &summarizer);
    let covered = pre.covered_messages;
    /// A change to the list, and the reason it makes the precompute stale.
    type Change = (&'static str, Box<dyn Fn(&mut Vec<Value>)>);
    let cases: Vec<Change> = vec![
        (
            "covered_changed",
            Box::new(|m: &mut Vec<Value>| m[3]["content"] = json!("edited")),
        ),
        (
            "covered_changed",
            Box::new(|m: &mut Vec<Value>| {
                m[2].as_object_mut()
                    .unwrap()
                    .insert("name".into(), json!("x"));
            }),
        ),
        (
            "head_changed",
            Box::new(|m: &mut Vec<Value>| m[0]["content"] = json!("Another system prompt.")),
        ),
        (
            "covered_gone",
            Box::new(move |m: &mut Vec<Value>| m.truncate(covered - 1)),
        ),
        (
            "covered_changed",
            Box::new(|m: &mut Vec<Value>| {
                m.remove(4);
            }),
        ),
    ];
    for (reason, change) in cases {
        let mut list = messages.clone();
        list.extend(turn(10));
        list.extend(turn(11));
        change(&mut list);
        let mut with = options.clone();
        with.precomputed = Some(Arc::new(pre.clone()));
        with.force = true;
        let before = summarizer.calls();
        let archives = list_archives(dir.path(), "s").unwrap().len();
        let outcome = run_with(&list, &with, &summarizer);
        let background = outcome.background.clone().unwrap();
        assert_eq!(background.state, "stale");
        assert_eq!(background.reason, Some(reason));
        assert_eq!(background.covered_messages, covered);
        // Compacted in the foreground, from the current messages.
        assert!(outcome.compacted);
        assert_eq!(summarizer.calls(), before + 1);
        assert_eq!(list_archives(dir.path(), "s").unwrap().len(), archives + 1);
        assert_eq!(restored(&assembled(&list, &outcome), dir.path()), list);
    }
}

#[test]
fn a_precomputed_summary_that_no_longer_brings_the_list_under_goes_on_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let messages = history(10);
    let limit = total(&history(12)) * 100 / 92 - 20;
    let options = options(dir.path(), limit);
    let summarizer = Counting::default();
    let pre = precomputed(&messages, &options, &summarizer);
    // Far more than the tail keeps arrived since.
    let mut list = messages.clone();
    for i in 0..12 {
        list.extend(turn(20 + i));
    }
    let mut with = options.clone();
    with.precomputed = Some(Arc::new(pre.clone()));
    let outcome = run_with(&list, &with, &summarizer);
    assert_eq!(outcome.background.clone().unwrap().state, "applied");
    assert!(outcome.compacted && outcome.error.is_none(), "{outcome:?}");
    assert!(outcome.rounds >= 2);
    assert!(summarizer.calls() >= 2);
    // The fold updated the precomputed summary.
    let previous = summarizer.previous.lock().unwrap()[1].clone();
    assert!(previous.unwrap().contains("summary number 1"));
    assert!(outcome.partition.unwrap().tail_start > pre.covered_messages);
    assert_eq!(list_archives(dir.path(), "s").unwrap().len(), 1);
    assert_eq!(restored(&assembled(&list, &outcome), dir.path()), list);
}

/// Records events; declines when asked to.
struct Recorder {
    events: std::sync::Mutex<Vec<Value>>,
    decline: bool,
}

impl context_compact_core::pipeline::CompactHooks for Recorder {
    fn before_compact<'a>(
        &'a self,
        _info: &'a context_compact_core::pipeline::BeforeCompactInfo,
    ) -> BoxFuture<'a, context_compact_core::pipeline::Confirmation> {
        let decline = self.decline;
        Box::pin(async move {
            if decline {
                context_compact_core::pipeline::Confirmation::Decline("no".into())
            } else {
                context_compact_core::pipeline::Confirmation::Proceed
            }
        })
    }
    fn event(&self, event: Value) {
        self.events.lock().unwrap().push(event);
    }
}

fn run_hooked(
    messages: &[Value],
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    decline: bool,
) -> (CompactOutcome, Vec<Value>) {
    let hooks = Recorder {
        events: std::sync::Mutex::new(Vec::new()),
        decline,
    };
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(context_compact_core::compact_with_hooks(
            messages,
            None,
            options,
            summarizer,
            &CancellationToken::new(),
            &NoObserver,
            &hooks,
        ))
        .unwrap();
    (outcome, hooks.events.into_inner().unwrap())
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[test]
fn events_say_what_checkpoints_did_and_completed_comes_last() {
    let dir = tempfile::tempdir().unwrap();
    let mut messages = history(12);
    let limit = total(&messages) * 100 / 92 - 20;
    let mut options = options(dir.path(), limit);
    options.extract_memory = true;
    let summarizer = Counting::default();
    let (first, events) = run_hooked(&messages, &options, &summarizer, false);
    assert_eq!(
        types(&events),
        ["token_limit_exceeded", "started", "completed"]
    );
    assert_eq!(events[2]["checkpoint"]["recorded"], true);
    assert!(first.extracted.is_some(), "extracted when compacted");
    // A reuse the caller declines changes nothing.
    let (declined, events) = run_hooked(&messages, &options, &summarizer, true);
    assert!(!declined.compacted);
    assert_eq!(declined.error.unwrap().code.as_str(), "DECLINED");
    assert_eq!(types(&events), ["token_limit_exceeded"]);
    // A reuse: announced, no summary call, nothing extracted twice.
    messages.extend(turn(40));
    let (reused, events) = run_hooked(&messages, &options, &summarizer, false);
    assert_eq!(summarizer.calls(), 1);
    assert_eq!(
        types(&events),
        [
            "token_limit_exceeded",
            "started",
            "checkpoint_reused",
            "completed"
        ]
    );
    assert_eq!(events[2]["extended"], false);
    assert_eq!(events[3]["checkpoint"]["reused"], true);
    let extracted = reused.extracted.unwrap();
    assert_eq!(extracted.decisions + extracted.facts + extracted.runtime, 0);
    // Far past what the checkpoint can bring under: extended (and recorded), then completed.
    for i in 0..14 {
        messages.extend(turn(60 + i));
    }
    let (extended, events) = run_hooked(&messages, &options, &summarizer, false);
    assert!(extended.checkpoint.as_ref().unwrap().extended);
    assert_eq!(
        types(&events),
        [
            "token_limit_exceeded",
            "started",
            "checkpoint_reused",
            "completed"
        ]
    );
    assert_eq!(events[3]["checkpoint"]["recorded"], true);
    assert_eq!(
        events[3]["originalTokens"],
        json!(total(&messages)),
        "said of the caller's list"
    );
    assert_eq!(
        restored(&assembled(&messages, &extended), dir.path()),
        messages
    );
}
