//! Step 3, **summarize**: what replaces the region the plan chose, decided here — a recorded
//! checkpoint's summary message, reused as it was written; a summary prepared in the background
//! ([`super::background`]), when what it covers is unchanged; Anthropic's on-demand compaction
//! when asked for and possible (`native`); else our own summary, in rounds while still
//! over the threshold (`rounds`); or the notice of a strategy without a summary. Then
//! the thinking policy for the kept turns ([`crate::plan::thinking`]), and the warning for the
//! user's messages the summary could not hold.

use super::background::{Precomputed, PrecomputedSummary};
use super::call::Call;
use super::draft::{Draft, Replacement};
use super::middle::earlier_body;
use super::native::{summarize_natively, NativeFallback, NativeSummarized};
use super::outcome::{Aborted, CompactOutcome};
use super::plan::Plan;
use super::reporter::{Planned, Reporter};
use super::rounds::{self, Summarized};
use super::session::{own_summaries, stand_in_archive_path};
use crate::model::added::{self, OwnSummaries};
use crate::plan::partition::Partition;
use crate::plan::thinking;
use crate::summary::summarize::Summarizer;

// The summary calls this step makes, under the names they had when they lived here.
pub use super::middle::{cap_chars, summarize_middle, Summary};
pub use super::region::{summarize_region, RegionSummary};
pub use super::rounds::MAX_ROUNDS;

/// The draft, and the summarizer that wrote its summary (`None`: no summary call was made —
/// a notice, a reused checkpoint, Anthropic's compaction).
pub(crate) type Drafted<'a> = (Draft, Option<&'a dyn Summarizer>);

/// Step 3: the draft of `plan`. `precomputed`: a summary prepared in the background, already
/// checked against the list. `Ok(Err(outcome))`: the summary failed.
pub(crate) async fn summarize<'a>(
    call: &Call<'a>,
    plan: Plan,
    precomputed: Option<&Precomputed>,
    planned: &Planned,
    report: &Reporter<'_>,
) -> Result<Result<Drafted<'a>, CompactOutcome>, Aborted> {
    let (mut draft, summarizer) = match plan {
        Plan::Reuse(checkpoint) => {
            let region = checkpoint.head_length..checkpoint.covered_messages;
            // The checkpoint's summary message is reused as it was written, with whatever it
            // carried; nothing is added to it.
            let replacement = Replacement::Checkpoint(checkpoint);
            (
                Draft::new(region, replacement, call.options, OwnSummaries::none()),
                None,
            )
        }
        Plan::Rewrite(rewrite) => {
            let own = own_summaries(call.messages, call.options);
            let region = rewrite.region.clone();
            (
                Draft::new(region, Replacement::Rewrite(rewrite), call.options, own),
                None,
            )
        }
        Plan::Summary(partition) => {
            match summary(call, partition, precomputed, planned, report).await? {
                Ok(drafted) => drafted,
                Err(outcome) => return Ok(Err(outcome)),
            }
        }
    };
    kept_turns(call, &mut draft);
    Ok(Ok((draft, summarizer)))
}

/// The summary of the middle of `partition`: Anthropic's compaction block when asked for and
/// possible (prepared in the background, or asked for now), else our own (its first round
/// prepared in the background, when one was).
async fn summary<'a>(
    call: &Call<'a>,
    partition: Partition,
    precomputed: Option<&Precomputed>,
    planned: &Planned,
    report: &Reporter<'_>,
) -> Result<Result<Drafted<'a>, CompactOutcome>, Aborted> {
    let (messages, options) = (call.messages, call.options);
    let own = own_summaries(messages, options);
    let native = match precomputed {
        Some(pre) => match pre.native() {
            Some(native) => Some(Ok(native)),
            None => pre.native_fallback().map(Err),
        },
        None => {
            summarize_natively(
                messages,
                partition,
                options,
                &own,
                call.cancel,
                call.observer,
            )
            .await?
        }
    };
    let native_fallback = match native {
        Some(Ok(native)) => {
            let region = native.region.clone();
            let draft = Draft::new(region, Replacement::Native(native), options, own);
            return Ok(Ok((draft, None)));
        }
        Some(Err(fallback)) => Some(fallback),
        None => None,
    };
    let stand_in = stand_in_archive_path(options);
    let summarized = rounds::summarize(
        messages,
        call.counts,
        partition,
        &call.measured.estimator,
        &stand_in,
        options,
        &own,
        call.summarizer,
        call.cancel,
        call.observer,
        precomputed.and_then(Precomputed::first_round),
    )
    .await?;
    match summarized {
        Ok(summarized) => {
            let region = summarized.region.clone();
            let mut draft = Draft::new(region, Replacement::Summary(summarized), options, own);
            draft.native_fallback = native_fallback;
            Ok(Ok((draft, Some(call.summarizer))))
        }
        Err((error, usage)) => {
            let attempts = error.attempts;
            let mut outcome = report.failed(error, planned);
            outcome.summary_usage = usage;
            outcome.provider = Some(call.summarizer.provider().to_string());
            outcome.model = call.summarizer.model().map(str::to_string);
            outcome.attempts = attempts;
            if let Some(fallback) = native_fallback {
                outcome.warnings.push(fallback.warning);
                outcome.native_unavailable = fallback.unavailable_model;
            }
            Ok(Err(outcome))
        }
    }
}

/// The thinking policy for the kept turns (SPEC §3), decided from the agent's model; and the
/// user's messages the summary's section could not hold (beyond what the summary it updates
/// had left out already), said once, here.
fn kept_turns(call: &Call<'_>, draft: &mut Draft) {
    let (messages, options) = (call.messages, call.options);
    // After the API wrote the summary, the prefix check accepts the swap: `auto` keeps the
    // kept turns' thinking then (platform.claude.com/docs/en/build-with-claude/compaction-thinking-blocks).
    let decision = match (&draft.replacement, options.thinking) {
        (Replacement::Native(_), thinking::ThinkingPolicy::Auto) => thinking::Decision::Keep,
        (Replacement::Checkpoint(checkpoint), thinking::ThinkingPolicy::Auto)
            if added::native_summary(&checkpoint.message).is_some() =>
        {
            thinking::Decision::Keep
        }
        _ => thinking::decide(options.thinking, options.agent_model.as_deref()),
    };
    draft.stripped = thinking::strip_kept(messages, &draft.kept_after(messages.len()), decision);
    if matches!(
        draft.replacement,
        Replacement::Summary(_) | Replacement::Native(_)
    ) {
        let earlier = earlier_body(&messages[draft.region.clone()], &draft.own);
        let warning = draft
            .sections_text_mut()
            .and_then(|text| crate::summary::user_messages::losses_warning(text, earlier));
        draft.warnings.extend(warning);
        let (failure_tokens, own) = (draft.latest_failure.max_tokens, draft.own.clone());
        let region = &messages[draft.region.clone()];
        let losses = draft
            .sections_text_mut()
            .map(|text| super::middle::budget_losses(text, region, failure_tokens, options, &own));
        draft.warnings.extend(losses.into_iter().flatten());
    }
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
