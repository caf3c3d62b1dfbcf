//! A summary prepared ahead of the threshold (SPEC §4.11, a `Compactor` with `background`):
//! [`precompute`] summarizes the middle as the trigger would cut it now, without archiving
//! anything or taking a sequence number, and says by content which messages it covers. When
//! the threshold comes, `background::check` accepts it only if those messages are
//! unchanged; the summarize step then uses it in place of the summary call and archives the covered messages
//! then, under the sequence number of that compaction. A precompute that does not pass is
//! dropped: nothing of it was ever written.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::archive::checkpoint::PrefixHashes;
use crate::base::error::{CompactError, ErrorCode};
use crate::model::tokens;
use crate::options::CompactOptions;
use crate::pipeline::measure;
use crate::pipeline::plan::summary_partition;
use crate::pipeline::shared::outcome::Aborted;
use crate::pipeline::shared::session::{format_name, own_summaries, stand_in_archive_path};
use crate::pipeline::summarize::native::summarize_natively;
use crate::pipeline::summarize::rounds;
use crate::summary::summarize::{AttemptObserver, Summarizer};

pub use crate::pipeline::background::{Precomputed, PrecomputedSummary, PRECOMPUTED_VERSION};

/// What a background precompute on the caller's list answers: `{"precomputed",
/// "coveredItems"}` (what it covers said of the caller's items, for the events; the pipeline
/// reads the rest) or `{"error"}`.
pub fn answer(input: &crate::formats::Input, result: Result<Precomputed, CompactError>) -> Value {
    match result {
        Ok(precomputed) => {
            let covered = input.item_index(precomputed.covered_messages);
            serde_json::json!({ "precomputed": precomputed, "coveredItems": covered })
        }
        Err(error) => serde_json::json!({ "error": error }),
    }
}

/// Summarizes the middle of `messages` as the trigger would cut it now (the options' tail
/// budget and rules), without writing anything. `Err`: the summary could not be made, or
/// there is nothing to summarize (`NOTHING_TO_COMPACT`).
pub async fn precompute(
    messages: &[Value],
    counts: Option<Vec<usize>>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Result<Precomputed, CompactError>, Aborted> {
    let counts = counts
        .filter(|c| c.len() == messages.len())
        .unwrap_or_else(|| tokens::count_each(options.encoding, messages));
    let measured = measure::measure(messages, &counts, options);
    let partition = summary_partition(messages, &counts, options);
    if partition.middle_len() == 0 {
        return Ok(Err(CompactError::new(
            ErrorCode::NothingToCompact,
            "the recent messages the tail keeps are the whole list; nothing to summarize yet",
        )));
    }
    let own = own_summaries(messages, options);
    let native = summarize_natively(messages, partition, options, &own, cancel, observer).await?;
    let (covered, summary) = match native {
        Some(Ok(native)) => (
            native.region.end,
            PrecomputedSummary::Native {
                block: native.block,
                ledger: native.ledger,
                attempts: native.attempts,
                model: native.model,
            },
        ),
        fallback => {
            let fallback = fallback.and_then(Result::err);
            let stand_in = stand_in_archive_path(options);
            let summarized = rounds::summarize(
                messages,
                &counts,
                partition,
                &measured.estimator,
                &stand_in,
                options,
                &own,
                summarizer,
                cancel,
                observer,
                None,
            )
            .await?;
            let summarized = match summarized {
                Ok(summarized) => summarized,
                Err((error, _, _)) => return Ok(Err(error)),
            };
            (
                summarized.region.end,
                PrecomputedSummary::Summary {
                    body: summarized.body,
                    attempts: summarized.attempts,
                    rounds: summarized.rounds,
                    warnings: summarized.warnings,
                    usage: summarized.usage,
                    request: summarized.request,
                    provider: summarizer.provider().to_string(),
                    model: summarizer.model().map(str::to_string),
                    native_fallback: fallback.as_ref().map(|f| f.warning.clone()),
                    native_unavailable: fallback.and_then(|f| f.unavailable_model),
                },
            )
        }
    };
    let format = format_name(options);
    let hashes = PrefixHashes::up_to(messages, format, covered);
    Ok(Ok(Precomputed {
        version: PRECOMPUTED_VERSION,
        format: format.to_string(),
        head_length: partition.head_len,
        covered_messages: covered,
        head_prefix: hashes.hex(partition.head_len).unwrap_or_default(),
        prefix: hashes.hex(covered).unwrap_or_default(),
        summary,
    }))
}
