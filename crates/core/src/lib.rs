//! # context-compact-core
//!
//! Keeps LLM agent loops alive past their context window. When a conversation nears the
//! model's limit, [`compact`] keeps the head (leading system messages), keeps a recent tail by
//! token budget (never separating a tool result from its call), replaces the middle with a
//! structured summary written by a [`Summarizer`], archives the removed originals, and reports
//! statistics.
//!
//! This crate has no Node.js dependency; the napi binding at the repository root only converts
//! types and errors.
//!
//! ## Layers
//!
//! Each top-level folder is a layer, and a layer imports only the layers below it (a test,
//! `tests/layers.rs`, fails on an import that points up or on a circle):
//!
//! ```text
//!   ops         the operations beside a compaction: tool results shortened on their own
//!      |        (offload), a compaction said in the caller's message format
//!   resume      reusing earlier work across calls: the entry point (`compact`), checkpoints
//!      |        (looked up, checked, reused, gone on from, recorded), background summaries
//!   options     the options object read from JSON at the edge     (CompactOptions::from_json,
//!      |                                                            provider and selective rules)
//!   pipeline    one compaction as its steps, a step a module or a folder: measure -> plan ->
//!      |        summarize/ (or a checkpoint or a background summary) -> rehydrate -> fit ->
//!      |        archive -> assemble -> report/, over shared/ (the call, the draft, the pieces,
//!      |        the outcome)
//!   archive     archives on disk and object stores, restore, history, prune, audit writers,
//!      |        extracted memory files
//!   providers   the summary providers: one HttpSummarizer per API dialect (Anthropic,
//!      |        OpenAI), Anthropic's native compaction, the provider chosen from options
//!   summary     writing the summary: prompt, Summarizer + retries, extractive, cache evidence,
//!      |        the summary written in parts
//!      |
//!   carry       what is written beside every summary: the ledger (shell command lines read by
//!      |        the shell-effects crate), todos, user messages, latest failure, the sections
//!      |        and reserved lines, the summary budget, memory extraction
//!   plan        planning the cut: partition, strategies, selective rules, thinking, offload cuts
//!      |
//!   formats     the seven message formats read as one view (and mapped back)
//!      |
//!   model       messages, validation and checks, token counting, the model table, the
//!      |        trigger's measure, the messages the library adds, pieces of a result, tool
//!      |        calls paired with their results, overflow errors
//!   base        errors, the retry policy, text helpers
//! ```
//!
//! Lower layers take plain values (a budget, an encoding, a [`plan::partition::TailRules`], an
//! output directory), not the whole [`CompactOptions`]; only the pipeline reads that struct.
//!
//! The main types:
//! - [`model::tokens`]: exact token counts (`o200k_base` / `cl100k_base`).
//! - [`plan::partition::partition`]: head / middle / tail with the tool-pair rule.
//! - [`CompactOptions`] and [`compact`]: the pipeline ([`pipeline`]: triggers, confirmation
//!   hook, events, recursive summary rounds; its module docs draw the steps), run by
//!   [`resume`] with the checkpoints and background summaries of earlier calls.
//! - [`Summarizer`]: the seam for providers (HTTP, extractive, JavaScript).
//! - [`archive`]: durable, private archives of what was removed.
//! - [`plan::strategy`] / [`plan::selective`]: the other seeds' strategies (selective rules,
//!   keep-recent, sliding window, no-op); [`carry::memory`]: key-information extraction.
//! - [`model::overflow::is_context_overflow`]: recognises the providers' "prompt too long"
//!   errors.
//!
//! ```
//! use context_compact_core::{compact, CompactOptions, summary::extractive::ExtractiveSummarizer,
//!     summary::summarize::NoObserver};
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//!
//! let messages: Vec<_> = (0..40)
//!     .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message {i} ").repeat(50)}))
//!     .collect();
//! let dir = tempfile::tempdir().unwrap();
//! let options = CompactOptions { context_token_limit: 4_000, output_dir: dir.path().into(), ..Default::default() };
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! let outcome = runtime
//!     .block_on(compact(&messages, None, &options, &ExtractiveSummarizer, &CancellationToken::new(), &NoObserver))
//!     .unwrap();
//! assert!(outcome.compacted);
//! assert!(outcome.stats.compacted_token_count < outcome.stats.original_token_count);
//! ```

pub mod archive;
pub mod base;
pub mod carry;
pub mod formats;
pub mod model;
pub mod ops;
pub mod options;
pub mod pipeline;
pub mod plan;
pub mod providers;
pub mod resume;
pub mod summary;

// The names most callers need, at the root.
pub use pipeline::{CompactOptions, CompactOutcome, CompactStats};
pub use resume::{compact, compact_with_hooks};
pub use summary::summarize::Summarizer;

// The PRD's defaults, where callers have always found them (declared in `options::defaults`).
pub use options::defaults::{
    COMPACT_MAX_RETRIES, COMPACT_THRESHOLD_RATIO, CONTEXT_TOKEN_LIMIT, TAIL_RETENTION_RATIO,
};
