//! The outcomes of one compaction call, shared by the steps: each step that stops the
//! compaction (nothing fired, nothing to compact, declined, a failed summary, a result that
//! would not be smaller) says so through the [`Reporter`], which records it and emits the
//! `failed` event; the report step ([`super`]) builds the outcome of one that went through.

use serde_json::{json, Value};

use crate::base::error::{CompactError, ErrorCode};
use crate::options::CompactOptions;
use crate::pipeline::hooks::CompactHooks;
use crate::pipeline::measure::Measured;
use crate::pipeline::report::record;
use crate::pipeline::shared::call::Call;
use crate::pipeline::shared::outcome::CompactOutcome;
use crate::plan::partition::Partition;
use crate::plan::strategy::Strategy;

/// Builds the outcomes of one compaction call.
pub(crate) struct Reporter<'a> {
    pub(crate) messages: &'a [Value],
    pub(crate) counts: &'a [usize],
    pub(crate) measured: &'a Measured,
    pub(crate) options: &'a CompactOptions,
    pub(crate) hooks: &'a dyn CompactHooks,
    /// What was said before the compaction went on (that it could not go on from a
    /// checkpoint), added last to the outcome of the steps after.
    pub(crate) notes: Vec<String>,
}

/// What the plan step decided: the strategy that runs, where the part that changes is, and
/// whether a selective compaction fell back to a summary.
pub(crate) struct Planned {
    pub strategy: Strategy,
    pub partition: Partition,
    pub fallback: bool,
}

impl<'a> Reporter<'a> {
    pub fn new(call: &Call<'a>) -> Self {
        Reporter {
            messages: call.messages,
            counts: call.counts,
            measured: call.measured,
            options: call.options,
            hooks: call.hooks,
            notes: Vec::new(),
        }
    }

    pub(crate) fn original_tokens(&self) -> usize {
        self.counts.iter().sum()
    }

    /// Nothing to do (below the threshold, or the no-op strategy): nothing is written.
    pub fn skipped(&self, error: Option<CompactError>) -> CompactOutcome {
        let mut outcome = CompactOutcome::skipped(
            self.measured.measure.tokens as usize,
            self.measured.measure.threshold as usize,
            error,
        );
        outcome.strategy = self.options.strategy;
        outcome
    }

    /// The input stands, with `error` saying why; recorded in the audit log.
    pub fn not_compacted(&self, error: CompactError, planned: &Planned) -> CompactOutcome {
        let mut outcome = self.skipped(Some(error));
        outcome.strategy = planned.strategy;
        outcome.fallback = planned.fallback;
        outcome.trigger = self.measured.trigger;
        outcome.measure = Some(self.measured.measure);
        outcome.partition = Some(planned.partition);
        record::record_outcome(self.options, &mut outcome);
        outcome
    }

    /// [`Self::not_compacted`] after the compaction started: also a `failed` event.
    pub fn failed(&self, error: CompactError, planned: &Planned) -> CompactOutcome {
        let mut outcome = self.not_compacted(error, planned);
        if let Some(error) = &outcome.error {
            self.hooks
                .event(json!({ "type": "failed", "error": error }));
        }
        outcome.warnings.extend(self.notes.iter().cloned());
        outcome
    }

    /// `NOT_SMALLER` when a list of `tokens` (raw) has no fewer tokens than the input.
    pub fn not_smaller(&self, tokens: usize) -> Option<CompactError> {
        let original = self.original_tokens();
        if tokens < original {
            return None;
        }
        let estimator = &self.measured.estimator;
        Some(
            CompactError::new(
                ErrorCode::NotSmaller,
                format!(
                    "the compacted list would have {tokens} tokens, not fewer than the {original} of the input; the input is returned unchanged"
                ),
            )
            .with_numbers(
                estimator.after(tokens),
                self.measured.measure.tokens,
                estimator.threshold(),
            ),
        )
    }
}

/// The `completed` event of a compaction that went through.
pub(crate) fn completed_event(outcome: &CompactOutcome) -> Value {
    let stats = outcome.stats;
    let mut event = json!({
        "type": "completed",
        "originalTokens": stats.original_token_count,
        "newTokens": stats.compacted_token_count,
        "savedRatio": if stats.original_token_count == 0 {
            0.0
        } else {
            1.0 - stats.compacted_token_count as f64 / stats.original_token_count as f64
        },
        "summary": outcome.summary,
        "strategy": outcome.strategy.as_str(),
        "rounds": outcome.rounds,
        "archivePath": outcome.archive_path.as_ref().map(|p| p.display().to_string()),
        "error": outcome.error,
    });
    if let Some(checkpoint) = &outcome.checkpoint {
        event["checkpoint"] = json!(checkpoint);
    }
    event
}
