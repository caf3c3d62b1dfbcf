//! The thinking policy for kept turns (SPEC §3): `keep` leaves kept turns byte-identical,
//! `strip` removes every `thinking` / `redacted_thinking` block of the kept assistant turns
//! (never leaving a message empty), `auto` decides by the agent model. Every change is reported,
//! the originals archived and restored exactly, and signed or opaque blocks are kept byte for
//! byte or removed whole — never edited.

use context_compact_core::model::check::check_conversation;
use context_compact_core::pipeline::{CompactOptions, Piece};
use context_compact_core::plan::strategy::Strategy;
use context_compact_core::plan::thinking::ThinkingPolicy;
mod common;
use common::{assembled, restored, run};
use context_compact_core::model::added;
use serde_json::{json, Value};

/// Turns with thinking in every assistant message (signed, redacted, one thinking-only turn), a
/// DeepSeek-style `reasoning_content` field, and an unfinished tool loop at the end.
fn session(turns: usize) -> Vec<Value> {
    session_tagged(turns, "")
}

/// [`session`] with `tag` in its tool ids and prompts, so sessions can follow each other.
fn session_tagged(turns: usize, tag: &str) -> Vec<Value> {
    let mut m = Vec::new();
    for t in 0..turns {
        m.push(json!({"role": "user", "content": format!("{tag}step {t}: {}", "please go on ".repeat(30))}));
        m.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("I should run step {t}."), "signature": format!("EqQBCkYIARgCKkB+/sig{t}==")},
            {"type": "redacted_thinking", "data": format!("EmwKAhgBEgy3va{t}+/==")},
            {"type": "text", "text": format!("Running step {t}.")},
            {"type": "tool_use", "id": format!("{tag}t{t}"), "name": "bash", "input": {"command": format!("make step{t}")}}
        ], "reasoning_content": format!("reasoning {t}")}));
        m.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("{tag}t{t}"), "content": "ok ".repeat(80)}
        ]}));
        if t % 3 == 2 {
            m.push(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "only thinking here", "signature": "EqQB/only+=="}
            ]}));
            m.push(json!({"role": "user", "content": "continue"}));
        }
    }
    m.push(json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Last step: run the tests.", "signature": "EqQBlast+/=="},
        {"type": "tool_use", "id": format!("{tag}last"), "name": "bash", "input": {"command": "cargo test"}}
    ]}));
    m.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": format!("{tag}last"), "content": "test result: ok"}
    ]}));
    m
}

fn options(dir: &std::path::Path, thinking: ThinkingPolicy, model: Option<&str>) -> CompactOptions {
    CompactOptions {
        context_token_limit: 2_000,
        tail_retention_ratio: 0.3,
        force: true,
        thinking,
        agent_model: model.map(str::to_string),
        output_dir: dir.to_path_buf(),
        session_id: "s".into(),
        ..CompactOptions::default()
    }
}

fn thinking_blocks(messages: &[Value]) -> usize {
    messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
        .count()
}

#[test]
fn keep_leaves_kept_turns_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(8);
    let outcome = run(&messages, &options(dir.path(), ThinkingPolicy::Keep, None));
    assert!(outcome.compacted);
    assert!(outcome.transformations.is_empty());
    assert!(outcome.pieces[1..]
        .iter()
        .all(|p| matches!(p, Piece::Original(_))));
}

#[test]
fn strip_removes_thinking_from_every_kept_turn_reports_it_and_restores_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let messages = session(8);
    let outcome = run(&messages, &options(dir.path(), ThinkingPolicy::Strip, None));
    assert!(outcome.compacted, "{:?}", outcome.error);
    let out = assembled(&messages, &outcome);
    assert_eq!(thinking_blocks(&out), 0);
    assert!(
        check_conversation(&out).is_empty(),
        "{:?}",
        check_conversation(&out)
    );
    // No empty message; reasoning_content of kept turns kept; user turns untouched.
    for m in &out {
        if let Some(blocks) = m["content"].as_array() {
            assert!(!blocks.is_empty());
        }
    }
    // Every field but the removed blocks is kept, DeepSeek-style reasoning_content included.
    for t in outcome.transformations.iter() {
        if let Some(index) = t.index {
            let (kept, original) = (&out[index], &messages[t.original_index]);
            assert_eq!(kept["reasoning_content"], original["reasoning_content"]);
            let rest: Vec<&Value> = original["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
                .collect();
            assert_eq!(
                kept["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .collect::<Vec<_>>(),
                rest
            );
        }
    }
    // Every removed block is reported with where it was in the input.
    assert!(!outcome.transformations.is_empty());
    for t in &outcome.transformations {
        assert_eq!(t.kind, "thinking_dropped");
        let block = &messages[t.original_index]["content"]
            [t.path.rsplit('.').next().unwrap().parse::<usize>().unwrap()];
        assert_eq!(block["type"], t.block_type.as_str());
        assert_eq!(
            t.path,
            format!(
                "messages.{}.{}",
                t.original_index,
                t.path.splitn(3, '.').nth(2).unwrap()
            )
        );
        match t.index {
            Some(index) => assert!(out[index]["content"].is_array()),
            None => assert_eq!(
                messages[t.original_index]["content"]
                    .as_array()
                    .unwrap()
                    .len(),
                1
            ),
        }
    }
    assert!(
        outcome.transformations.iter().any(|t| t.index.is_none()),
        "a thinking-only turn is left out"
    );
    assert!(outcome.thinking_archive_path.is_some());
    // The summary says what happened, and restore gives back the original byte for byte.
    let summary = outcome.summary.clone().unwrap();
    assert!(summary.contains("thinking was removed from kept messages after this one"));
    assert_eq!(
        serde_json::to_string(&restored(&out, dir.path())).unwrap(),
        serde_json::to_string(&messages).unwrap()
    );
}

#[test]
fn auto_strips_for_prefix_bound_models_and_keeps_for_older_ones() {
    let messages = session(8);
    for (model, stripped) in [
        (None, true),
        (Some("claude-opus-5-5"), true),
        (Some("claude-fable-5-1"), true),
        (Some("claude-sonnet-4-5-20250929"), false),
        (Some("claude-opus-4-7"), false),
        (Some("gpt-5"), false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let outcome = run(&messages, &options(dir.path(), ThinkingPolicy::Auto, model));
        let out = assembled(&messages, &outcome);
        assert_eq!(thinking_blocks(&out) == 0, stripped, "{model:?}");
        assert_eq!(!outcome.transformations.is_empty(), stripped, "{model:?}");
        assert_eq!(restored(&out, dir.path()), messages, "{model:?}");
    }
}

#[test]
fn restore_stays_exact_after_later_compactions_and_every_strategy() {
    for strategy in [
        Strategy::Summary,
        Strategy::KeepRecent,
        Strategy::SlidingWindow,
        Strategy::Selective,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut original = session(6);
        let mut current = original.clone();
        for round in 0..3 {
            let mut opts = options(dir.path(), ThinkingPolicy::Strip, None);
            opts.strategy = strategy;
            opts.keep_recent_messages = 8;
            let outcome = run(&current, &opts);
            if outcome.compacted {
                current = assembled(&current, &outcome);
                let problems = check_conversation(&current);
                assert!(
                    problems.is_empty(),
                    "{strategy:?} round {round}: {problems:?}"
                );
            }
            // The conversation goes on.
            let more = session_tagged(3, &format!("r{round}-"));
            original.extend(more.iter().cloned());
            current.extend(more);
        }
        assert_eq!(
            serde_json::to_string(&restored(&current, dir.path())).unwrap(),
            serde_json::to_string(&original).unwrap(),
            "{strategy:?}"
        );
        assert!(current.iter().any(added::is_summary_message));
    }
}
