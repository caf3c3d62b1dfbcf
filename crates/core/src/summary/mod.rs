//! Layer 5, **writing the summary**: the prompt and transcript, the [`summarize::Summarizer`]
//! seam with its retry policy, the extractive summarizer, the HTTP providers (Anthropic, OpenAI,
//! Anthropic's native compaction). The sections written beside every summary are
//! [`crate::carry`]'s; overflow errors are recognised in [`crate::model::overflow`].
//! Imports [`crate::base`], [`crate::model`], [`crate::formats`], [`crate::plan`],
//! [`crate::carry`].

pub mod cache_evidence;
pub mod extractive;
pub mod prompt;
pub mod summarize;
