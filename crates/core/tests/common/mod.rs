//! Helpers shared by the integration tests that drive the whole pipeline.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use context_compact_core::archive::{restore_messages, Restored};
use context_compact_core::compact;
use context_compact_core::pipeline::{CompactOptions, CompactOutcome, Piece};
use context_compact_core::summary::extractive::ExtractiveSummarizer;
use context_compact_core::summary::summarize::{NoObserver, Summarizer};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// One compaction with `summarizer`, on a runtime of its own.
pub fn run_with(
    messages: &[Value],
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
) -> CompactOutcome {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(compact(
            messages,
            None,
            options,
            summarizer,
            &CancellationToken::new(),
            &NoObserver,
        ))
        .unwrap()
}

/// One compaction with the extractive summarizer.
/// The warnings of `outcome` but the one that says the summary's section of user messages
/// could not hold them all: the small windows of the tests leave that section a few tokens.
#[allow(dead_code)]
pub fn other_warnings(outcome: &CompactOutcome) -> Vec<&String> {
    outcome
        .warnings
        .iter()
        .filter(|w| !w.starts_with("the summary's section of the user's messages"))
        .collect()
}

pub fn run(messages: &[Value], options: &CompactOptions) -> CompactOutcome {
    run_with(messages, options, &ExtractiveSummarizer)
}

/// The compacted list an outcome describes.
pub fn assembled(messages: &[Value], outcome: &CompactOutcome) -> Vec<Value> {
    outcome
        .pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(i) => messages[*i].clone(),
            Piece::New(message) => message.clone(),
        })
        .collect()
}

/// `current` restored from the archives of session `s` under `dir`.
pub fn restored(current: &[Value], dir: &Path) -> Vec<Value> {
    restore_messages(current, dir, "s")
        .unwrap()
        .into_iter()
        .map(|r| match r {
            Restored::Original(i) => current[i].clone(),
            Restored::Archived(m) => m,
        })
        .collect()
}

/// Collects every tracing event (message and fields) emitted on this thread.
pub struct Capture(pub Arc<Mutex<Vec<String>>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut line = String::new();
        span.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut line = String::new();
        values.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = format!("{} ", event.metadata().level());
        event.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Turns whose assistant messages hold thinking, a turn that holds only thinking, and a giant
/// tool result at the end: a compaction under `thinking: strip` removes kept thinking and
/// shortens the giant result, so it has originals of both kinds to archive.
pub fn thinking_turns(tag: &str, count: usize, giant_lines: usize) -> Vec<Value> {
    let mut m = Vec::new();
    for t in 0..count {
        m.push(json!({"role": "user", "content": format!("{tag} step {t}: {}", "please go on ".repeat(20)), "z": t}));
        m.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("I should run step {t}."), "signature": format!("EqQB{tag}sig{t}==")},
            {"type": "redacted_thinking", "data": format!("Emw{tag}{t}+/==")},
            {"type": "text", "text": format!("Running step {t} 🦀.")},
            {"type": "tool_use", "id": format!("{tag}t{t}"), "name": "bash", "input": {"command": format!("make step{t}")}}
        ]}));
        m.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("{tag}t{t}"), "content": "ok ".repeat(60)}
        ]}));
    }
    m.push(json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "only thinking here", "signature": format!("E{tag}only==")}
    ]}));
    m.push(json!({"role": "user", "content": format!("{tag} now build")}));
    m.push(json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Build it.", "signature": format!("E{tag}build==")},
        {"type": "tool_use", "id": format!("{tag}giant"), "name": "bash", "input": {"command": "cargo build -vv"}}
    ]}));
    let log: Vec<String> = (0..giant_lines)
        .map(|i| format!("{tag} {i:05} compiling crate {i}"))
        .collect();
    m.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": format!("{tag}giant"), "content": log.join("\n")}
    ]}));
    m
}
