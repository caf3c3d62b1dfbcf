//! Layer 5, **writing the summary**: the prompt and transcript, the [`summarize::Summarizer`]
//! seam with its retry policy, the extractive summarizer, the HTTP providers (Anthropic, OpenAI,
//! Anthropic's native compaction) and recognising the providers' overflow errors. The sections
//! written beside every summary are [`crate::carry`]'s.
//! Imports [`crate::base`], [`crate::model`], [`crate::formats`], [`crate::plan`],
//! [`crate::carry`].

pub mod cache_evidence;
pub mod extractive;
pub mod overflow;
pub mod prompt;
pub mod providers;
pub mod summarize;
