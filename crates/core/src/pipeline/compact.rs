//! The entry point of a compaction, and the names callers use for its parts.
//!
//! [`compact`] runs the pipeline ([`crate::pipeline`]): measure → plan → summarize → fit →
//! archive → assemble → report. The options are in [`crate::pipeline::options`] (read from JSON by the
//! options layer), what a compaction did in
//! [`crate::pipeline::shared::outcome`].

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::summary::summarize::{AttemptObserver, Summarizer};

pub use crate::pipeline::assemble::{assemble_messages, summary_message, summary_model_window};
pub use crate::pipeline::options::{token_budget, CompactOptions, PromptStyle};
pub use crate::pipeline::shared::outcome::{Aborted, CompactOutcome, CompactStats, Piece};
pub use crate::pipeline::summarize::middle::{cap_chars, summarize_middle, Summary};
pub use crate::pipeline::summarize::region::{summarize_region, RegionSummary};

/// Compacts `messages` (already validated). `counts` are their token counts when the caller
/// has them (the `Compactor` cache), otherwise they are computed.
///
/// Every attempt over the threshold is recorded in the session's audit log, and a compaction
/// also leaves its metadata and summary beside the archive (see [`crate::archive`]); below the
/// threshold nothing is written. Failures to write these records are warnings.
///
/// [`crate::pipeline::compact_with_hooks`] is the same with the confirmation hook and events.
pub async fn compact(
    messages: &[Value],
    counts: Option<Vec<usize>>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<CompactOutcome, Aborted> {
    crate::pipeline::compact_with_hooks(
        messages,
        counts,
        options,
        summarizer,
        cancel,
        observer,
        &crate::pipeline::NoHooks,
    )
    .await
}
