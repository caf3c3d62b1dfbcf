//! Layer 5, **writing the summary**: what a summary request asks for and how it is retried —
//! the prompt and the transcript it frames, the [`summarize::Summarizer`] seam with its retry
//! loop, the extractive summarizer (no model), a long middle summarized in parts
//! ([`parts`]), the request for one region — the loop's own (shared) or the transcript
//! ([`region`], [`middle`]), asked with the options as plain values ([`request`]) — and the signs that the agent loop caches its
//! prompt ([`cache_evidence`]). Who answers a request over the network is the providers'
//! layer, above this one; the sections written beside every summary are
//! [`crate::carry`]'s; overflow errors are recognised in [`crate::model::overflow`].
//! Imports [`crate::base`], [`crate::model`], [`crate::formats`], [`crate::plan`],
//! [`crate::carry`].

pub mod cache_evidence;
pub mod extractive;
pub mod middle;
pub mod parts;
pub mod prompt;
pub mod region;
pub mod request;
pub mod summarize;
