//! A summary prepared ahead of the threshold (SPEC §4.11, a `Compactor` with `background`):
//! [`precompute`] summarizes the middle as the trigger would cut it now, without archiving
//! anything or taking a sequence number, and says by content which messages it covers. When
//! the threshold comes, [`check`] accepts it only if those messages are unchanged; the pipeline
//! then uses it in place of the summary call (`run`, step 3) and archives the covered messages
//! then, under the sequence number of that compaction. A precompute that does not pass is
//! dropped: nothing of it was ever written.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::checkpoint::format_name;
use super::measure;
use super::options::CompactOptions;
use super::outcome::Aborted;
use super::plan::summary_partition;
use super::summarize::{self, NativeFallback, NativeSummarized, Summarized};
use crate::archive::checkpoint::PrefixHashes;
use crate::base::error::{CompactError, ErrorCode};
use crate::model::tokens;
use crate::summary::summarize::{AttemptObserver, Summarizer, SummaryRequestKind, SummaryUsage};

/// The format of a precomputed summary (what [`precompute`] returns and [`check`] reads back).
pub const PRECOMPUTED_VERSION: u32 = 1;

/// A summary prepared before the threshold, with what it covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Precomputed {
    /// [`PRECOMPUTED_VERSION`].
    pub version: u32,
    /// The message format of the list it was made from.
    pub format: String,
    /// The head kept before the summary, and where the summarized messages end.
    pub head_length: usize,
    pub covered_messages: usize,
    /// [`PrefixHashes::hex`] of the head and of every covered message, as they were read when
    /// the summary was asked for.
    pub head_prefix: String,
    pub prefix: String,
    pub summary: PrecomputedSummary,
}

/// What wrote the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PrecomputedSummary {
    /// Our own summary (model text + ledger).
    #[serde(rename_all = "camelCase")]
    Summary {
        body: String,
        attempts: u32,
        rounds: u32,
        warnings: Vec<String>,
        usage: Option<SummaryUsage>,
        request: SummaryRequestKind,
        provider: String,
        model: Option<String>,
        /// Why on-demand compaction was not used, when it was asked for.
        native_fallback: Option<String>,
        native_unavailable: Option<String>,
    },
    /// Anthropic's signed compaction block, with the ledger beside it.
    #[serde(rename_all = "camelCase")]
    Native {
        block: Value,
        ledger: String,
        attempts: u32,
        model: String,
    },
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
    let own = super::own_summaries(messages, options);
    let native =
        summarize::summarize_natively(messages, partition, options, &own, cancel, observer).await?;
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
            let stand_in = super::stand_in_archive_path(options);
            let summarized = summarize::summarize(
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
                Err((error, _)) => return Ok(Err(error)),
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

/// Whether `precomputed` still stands for the start of `messages`: the same format, and every
/// message it covers — the head and the summarized ones — unchanged, by content. `Ok`: the
/// hashes of those messages (the checkpoint of the compaction goes on from them); `Err` says
/// why not (the reason reported with the `background_stale` event).
pub(crate) fn check(
    precomputed: &Precomputed,
    messages: &[Value],
    options: &CompactOptions,
) -> Result<PrefixHashes, &'static str> {
    let format = format_name(options);
    if precomputed.version != PRECOMPUTED_VERSION || precomputed.format != format {
        return Err("format_changed");
    }
    if precomputed.head_length >= precomputed.covered_messages {
        return Err("covered_changed");
    }
    if messages.len() < precomputed.covered_messages {
        return Err("covered_gone");
    }
    let hashes = PrefixHashes::up_to(messages, format, precomputed.covered_messages);
    if hashes.hex(precomputed.head_length).as_deref() != Some(precomputed.head_prefix.as_str()) {
        return Err("head_changed");
    }
    if hashes.hex(precomputed.covered_messages).as_deref() != Some(precomputed.prefix.as_str()) {
        return Err("covered_changed");
    }
    Ok(hashes)
}

impl Precomputed {
    /// The first summary round of a compaction, from this precomputed summary (`None` for
    /// on-demand compaction, see [`Self::native`]).
    pub(crate) fn first_round(&self) -> Option<Summarized> {
        match &self.summary {
            PrecomputedSummary::Summary {
                body,
                attempts,
                rounds,
                warnings,
                usage,
                request,
                ..
            } => Some(Summarized {
                region: self.head_length..self.covered_messages,
                body: body.clone(),
                attempts: *attempts,
                rounds: *rounds,
                warnings: warnings.clone(),
                usage: *usage,
                request: *request,
            }),
            PrecomputedSummary::Native { .. } => None,
        }
    }

    /// Why on-demand compaction was not used for it, when it was asked for.
    pub(crate) fn native_fallback(&self) -> Option<NativeFallback> {
        match &self.summary {
            PrecomputedSummary::Summary {
                native_fallback: Some(warning),
                native_unavailable,
                ..
            } => Some(NativeFallback {
                warning: warning.clone(),
                unavailable_model: native_unavailable.clone(),
            }),
            _ => None,
        }
    }

    /// The on-demand compaction this precomputed summary is, if it is one.
    pub(crate) fn native(&self) -> Option<NativeSummarized> {
        match &self.summary {
            PrecomputedSummary::Native {
                block,
                ledger,
                attempts,
                model,
            } => Some(NativeSummarized {
                region: self.head_length..self.covered_messages,
                block: block.clone(),
                ledger: ledger.clone(),
                attempts: *attempts,
                model: model.clone(),
            }),
            PrecomputedSummary::Summary { .. } => None,
        }
    }
}
