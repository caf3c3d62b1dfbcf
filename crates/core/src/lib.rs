//! # context-compact-core
//!
//! Keeps LLM agent loops alive past their context window. When a conversation nears the
//! model's limit, [`compact::compact`] keeps the head (leading system messages), keeps a recent
//! tail by token budget (never separating a tool result from its call), replaces the middle with
//! a structured summary written by a [`summarize::Summarizer`], archives the removed originals
//! on disk, and reports statistics.
//!
//! This crate has no Node.js dependency; the napi binding at the repository root only converts
//! types and errors.
//!
//! The main types:
//! - [`tokens`]: exact token counts (`o200k_base` / `cl100k_base`).
//! - [`partition::partition`]: head / middle / tail with the tool-pair rule.
//! - [`compact::CompactOptions`] and [`compact::compact`]: the pipeline.
//! - [`summarize::Summarizer`]: the seam for providers (HTTP, extractive, JavaScript).
//! - [`archive`]: durable, private archives of what was removed.
//! - [`strategy`] / [`selective`]: the other seeds' strategies (selective rules, keep-recent,
//!   sliding window, no-op); [`pipeline`]: triggers, confirmation hook, events, recursive
//!   summary rounds; [`memory`]: key-information extraction.
//! - [`overflow::is_context_overflow`]: recognises the providers' "prompt too long" errors.
//!
//! ```
//! use context_compact_core::{compact::{compact, CompactOptions}, extractive::ExtractiveSummarizer,
//!     summarize::NoObserver};
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
pub mod formats;
pub mod model;
pub mod options;
pub mod pipeline;
pub mod plan;
pub mod summary;

/// The PRD's default context window (tokens).
pub const CONTEXT_TOKEN_LIMIT: usize = 200_000;
/// The PRD's default trigger ratio.
pub const COMPACT_THRESHOLD_RATIO: f64 = 0.92;
/// The PRD's default tail budget ratio.
pub const TAIL_RETENTION_RATIO: f64 = 0.10;
/// The PRD's default retry count.
pub const COMPACT_MAX_RETRIES: u32 = 2;
