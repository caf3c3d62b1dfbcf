//! Step 3, **summarize**, our own summary in rounds: the middle becomes a summary (F-004); when
//! the result would still be over the threshold, further rounds fold the oldest part of the
//! tail into the summary (the Pi Agent seed's recursive compaction, "保留更少的历史"), at most
//! [`MAX_ROUNDS`] in all.

use std::ops::Range;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::base::error::CompactError;
use crate::model::added::{self, OwnSummaries};
use crate::model::tokens;
use crate::options::CompactOptions;
use crate::pipeline::measure::Estimator;
use crate::pipeline::shared::draft::Summarized;
use crate::pipeline::shared::outcome::Aborted;
use crate::plan::partition::{is_user_turn, partition, Partition};
use crate::summary::middle::{summarize_after, Summary};
use crate::summary::region::{summarize_region, summarize_shared};
use crate::summary::summarize::{
    AttemptObserver, Summarizer, SummaryFailure, SummaryModelLearnt, SummaryRequestKind,
    SummaryUsage, UsageMeter,
};

/// The most summary rounds one compaction runs: the first, and at most two more when the
/// result is still over the threshold.
pub const MAX_ROUNDS: u32 = 3;

/// A failed summary: why, what its calls cost, and what they taught.
pub(crate) type Failed = (
    CompactError,
    Option<SummaryUsage>,
    Option<SummaryModelLearnt>,
);

/// Summarizes the middle of `plan`, then, while the result (estimated with `stand_in` as the
/// archive path) is still over the threshold and its tail holds more than one user turn, folds
/// the oldest part of the tail into the summary with half the tail budget. Every round
/// summarizes messages of the input, so the summary always replaces one contiguous region and
/// one archive holds all of it. A failed first round is the compaction's error; a failed later
/// round leaves the earlier summary standing, with a warning.
///
/// `first`: a first round already made (a summary prepared in the background, covering the
/// start of `plan`'s middle), used instead of a summary call. Its region ends where the list
/// ended then; the first fold, when one is needed, takes what the full tail budget cuts now.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize(
    messages: &[Value],
    counts: &[usize],
    plan: Partition,
    estimator: &Estimator,
    stand_in: &str,
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
    first: Option<Summarized>,
) -> Result<Result<Summarized, Failed>, Aborted> {
    let origins: Vec<Option<usize>> = (0..messages.len()).map(Some).collect();
    let meter = UsageMeter::default();
    let rounds = Rounds {
        messages,
        counts,
        options,
        own,
        summarizer,
        cancel,
        observer,
        meter: &meter,
        origins: &origins,
    };
    let precomputed = first.is_some();
    let mut summarized = match first {
        Some(first) => {
            // What the precomputed summary cost is part of what this summary cost.
            if let Some(usage) = &first.usage {
                meter.add(usage);
            }
            first
        }
        None => match rounds
            .first(plan, estimator.after(counts.iter().sum()))
            .await
        {
            Ok(summarized) => summarized,
            Err(SummaryFailure::Aborted) => return Err(Aborted),
            Err(SummaryFailure::Failed(error)) => {
                return Ok(Err((error, meter.total(), meter.learnt())))
            }
        },
    };
    let head_tokens: usize = counts[..plan.head_len].iter().sum();
    let mut budget = options.tail_retention_tokens();
    // After a precomputed first round, the first fold tries the full tail budget: what the
    // trigger cuts now, the previous summary updated with what it does not cover.
    let mut full_budget_first = precomputed;
    while summarized.rounds < MAX_ROUNDS {
        let region = summarized.region.clone();
        let text = added::summary_message_text(
            crate::formats::item_count(&messages[region.clone()]),
            Some(stand_in),
            &summarized.body,
        );
        let tail_tokens: usize = counts[region.end..].iter().sum();
        let total = head_tokens + tokens::count_text(options.encoding, &text) + tail_tokens;
        if !estimator.over(total) {
            break;
        }
        let full_budget = std::mem::take(&mut full_budget_first);
        let Some(fold) = rounds.fold(region.clone(), &mut budget, full_budget) else {
            break;
        };
        match rounds
            .fold_in(&summarized, region.start, fold.clone())
            .await
        {
            Ok(summary) => {
                summarized.region = region.start..fold.end;
                summarized.body = summary.body;
                summarized.attempts += summary.attempts;
                summarized.warnings.extend(summary.warnings);
                summarized.rounds += 1;
            }
            Err(SummaryFailure::Aborted) => return Err(Aborted),
            Err(SummaryFailure::Failed(error)) => {
                summarized.attempts += error.attempts;
                summarized.warnings.push(format!(
                    "the result is still over the threshold; a further compaction round failed: {error}"
                ));
                break;
            }
        }
    }
    summarized.usage = meter.total();
    summarized.learnt = meter.learnt();
    Ok(Ok(summarized))
}

/// What every round of one summary shares.
struct Rounds<'a> {
    messages: &'a [Value],
    counts: &'a [usize],
    options: &'a CompactOptions,
    own: &'a OwnSummaries,
    summarizer: &'a dyn Summarizer,
    cancel: &'a CancellationToken,
    observer: &'a dyn AttemptObserver,
    /// What the summary calls cost, summed.
    meter: &'a UsageMeter,
    /// Each message's index in the input (all of them: every round summarizes the input's).
    origins: &'a [Option<usize>],
}

impl Rounds<'_> {
    /// The first round: the middle of `plan`.
    async fn first(&self, plan: Partition, estimate: u64) -> Result<Summarized, SummaryFailure> {
        let region = summarize_region(
            self.messages,
            self.counts,
            plan.middle(),
            self.origins,
            estimate,
            &self.options.summary_request(self.summarizer),
            self.own,
            self.summarizer,
            self.meter,
            self.cancel,
            self.observer,
        )
        .await?;
        let mut warnings = region.warnings;
        warnings.extend(region.summary.warnings);
        Ok(Summarized {
            region: plan.middle(),
            body: region.summary.body,
            attempts: region.summary.attempts,
            rounds: 1,
            warnings,
            usage: None,
            request: region.request,
            learnt: None,
            fallback: None,
        })
    }

    /// The part of the tail after `region` the next round folds into the summary: what the
    /// tail budget (`full_budget`: the full one, once; else half the last) leaves out of the
    /// tail. `None`: no progress possible (the tail holds one user turn, or nothing more would
    /// be folded).
    fn fold(
        &self,
        region: Range<usize>,
        budget: &mut usize,
        full_budget: bool,
    ) -> Option<Range<usize>> {
        let (messages, counts, options) = (self.messages, self.counts, self.options);
        if messages[region.end..]
            .iter()
            .filter(|m| is_user_turn(m))
            .count()
            <= 1
        {
            return None;
        }
        let full = full_budget
            .then(|| partition(messages, counts, *budget, options.tail_rules()))
            .filter(|p| p.head_len == region.start && p.tail_start > region.end);
        let next = match full {
            Some(next) => next,
            None => {
                *budget /= 2;
                partition(messages, counts, *budget, options.tail_rules())
            }
        };
        if next.head_len != region.start || next.tail_start <= region.end {
            return None;
        }
        Some(region.end..next.tail_start)
    }

    /// A further round: `summarized` updated with `fold`.
    async fn fold_in(
        &self,
        summarized: &Summarized,
        start: usize,
        fold: Range<usize>,
    ) -> Result<Summary, SummaryFailure> {
        // A shared first round shares again: the same conversation, a larger part to
        // summarize, so the request is again a cache read.
        if summarized.request == SummaryRequestKind::Shared {
            summarize_shared(
                self.messages,
                start..fold.end,
                self.origins,
                &self.options.summary_request(self.summarizer),
                self.own,
                self.summarizer,
                self.meter,
                self.cancel,
                self.observer,
            )
            .await
        } else {
            summarize_after(
                Some(summarized.body.clone()),
                Some(&summarized.body),
                &self.messages[fold.clone()],
                fold.start,
                &self.origins[fold.clone()],
                &self.options.summary_request(self.summarizer),
                self.own,
                self.summarizer,
                Some(self.meter),
                self.cancel,
                self.observer,
            )
            .await
        }
    }
}
