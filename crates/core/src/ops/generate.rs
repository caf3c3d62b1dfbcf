//! `generateSummary`: the whole list is the part to summarize (the "middle"), with the same
//! request, retries and sections as a compaction's summary, and nothing written.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::model::tokens;
use crate::options::CompactOptions;
use crate::pipeline::summarize_region;
use crate::summary::summarize::{AttemptObserver, Summarizer, SummaryFailure, UsageMeter};

/// The summary of `messages` (its text), or why none could be had.
pub async fn generate_summary(
    messages: &[Value],
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<String, SummaryFailure> {
    let origins: Vec<Option<usize>> = (0..messages.len()).map(Some).collect();
    // The whole list is the part to summarize; its size decides whether the loop's own
    // request (agentRequest) fits the summary model.
    let counts: Vec<usize> = messages
        .iter()
        .map(|m| tokens::count_message(options.encoding, m))
        .collect();
    let estimate = counts.iter().sum::<usize>() + options.extra_tokens();
    let meter = UsageMeter::default();
    // An earlier summary among them is updated only when the session's records name it.
    let own = crate::archive::provenance::own_summaries(
        messages,
        &options.output_dir,
        options.archive_store.as_deref(),
        &options.session_id,
        &[],
    );
    summarize_region(
        messages,
        &counts,
        0..messages.len(),
        &origins,
        estimate as u64,
        options,
        &own,
        summarizer,
        &meter,
        cancel,
        observer,
    )
    .await
    .map(|region| region.summary.body)
}
