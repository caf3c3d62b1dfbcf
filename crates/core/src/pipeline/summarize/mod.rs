//! Step 3, **summarize**: what replaces the region the plan chose, decided here — a recorded
//! checkpoint's summary message, reused as it was written; a summary prepared in the background
//! ([`super::background`]), when what it covers is unchanged; Anthropic's on-demand compaction
//! when asked for and possible (`native`); else our own summary, in rounds while still
//! over the threshold (`rounds`); or the notice of a strategy without a summary. Then
//! the thinking policy for the kept turns ([`crate::plan::thinking`]), and the warning for the
//! user's messages the summary could not hold.
//!
//! When the summary cannot be had from the LLM (every attempt failed, or a `Compactor` declined
//! to pay for it) and the list reaches the context window, the summary is written without one
//! (`summaryFallback: 'extractive'`): the loop always gets a list it can send.

pub(crate) mod native;
pub(crate) mod rounds;

use std::ops::Range;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::base::error::CompactError;
use crate::carry::appended::earlier_body;
use crate::model::added::{self, OwnSummaries};
use crate::options::{CompactOptions, SummaryFallback, SummaryRequestMode};
use crate::pipeline::background::{Precomputed, PrecomputedSummary};
use crate::pipeline::plan::Plan;
use crate::pipeline::report::reporter::{Planned, Reporter};
use crate::pipeline::shared::call::Call;
use crate::pipeline::shared::draft::{
    Draft, NativeFallback, NativeSummarized, Replacement, Summarized,
};
use crate::pipeline::shared::outcome::{Aborted, CompactOutcome, SummaryFallbackReport};
use crate::pipeline::shared::session::{own_summaries, stand_in_archive_path};
use crate::pipeline::summarize::native::summarize_natively;
use crate::plan::partition::Partition;
use crate::plan::thinking;
use crate::summary::extractive::ExtractiveSummarizer;
use crate::summary::summarize::{
    AttemptObserver, Summarizer, SummaryFailure, SummaryModelLearnt, SummaryUsage, UsageMeter,
};

// The summary calls this step makes (the summary layer's, `crate::summary::region` and
// `crate::summary::middle`), under the names they had when they lived here.
pub use crate::pipeline::summarize::rounds::MAX_ROUNDS;
pub use crate::summary::middle::{cap_chars, Summary};
pub use crate::summary::region::RegionSummary;

/// [`crate::summary::middle`]'s summary of a middle, asked with `options`.
#[allow(clippy::too_many_arguments)]
pub async fn summarize_middle(
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    usage: Option<&UsageMeter>,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    let request = options.summary_request(summarizer);
    let middle_summary = crate::summary::middle::summarize_middle(
        middle,
        middle_start,
        origins,
        &request,
        own,
        summarizer,
        usage,
        cancel,
        observer,
    );
    middle_summary.await
}

/// [`crate::summary::region`]'s summary of `messages[region]`, asked with `options`.
#[allow(clippy::too_many_arguments)]
pub async fn summarize_region(
    messages: &[Value],
    counts: &[usize],
    region: Range<usize>,
    origins: &[Option<usize>],
    estimate: u64,
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    meter: &UsageMeter,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<RegionSummary, SummaryFailure> {
    let request = options.summary_request(summarizer);
    let region_summary = crate::summary::region::summarize_region(
        messages, counts, region, origins, estimate, &request, own, summarizer, meter, cancel,
        observer,
    );
    region_summary.await
}

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
    // A `Compactor` declined to pay for this summary (its last ones left the list over the
    // threshold): no LLM call — the summary without one when the list reaches the window, the
    // input standing otherwise. The built-in summarizer costs nothing: it is not declined.
    if let Some(declined) = options
        .summary_declined
        .as_ref()
        .filter(|_| call.summarizer.provider() != EXTRACTIVE.provider())
    {
        if !falls_back(call) {
            return Ok(Err(report.failed(declined.clone(), planned)));
        }
        let failed = Failed {
            error: declined.clone(),
            usage: None,
            learnt: None,
            native: None,
        };
        return extractive(call, partition, own, failed, planned, report).await;
    }
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
        Err((error, usage, learnt)) if falls_back(call) => {
            let failed = Failed {
                error,
                usage,
                learnt,
                native: native_fallback,
            };
            extractive(call, partition, own, failed, planned, report).await
        }
        Err((error, usage, learnt)) => {
            let attempts = error.attempts;
            let mut outcome = report.failed(error, planned);
            outcome.summary_usage = usage;
            outcome.summary_model_learnt = learnt;
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

/// The summarizer that writes without an LLM, for the fallback (`'static`: the draft names the
/// summarizer that wrote its summary).
static EXTRACTIVE: ExtractiveSummarizer = ExtractiveSummarizer;

/// Whether a summary that cannot be had from the LLM is written without one
/// (`summaryFallback: 'extractive'`): only when the list reaches the context window, so that the
/// loop could not send it as it is. Under the window the PRD's rule stands (retry, then skip):
/// the loop sends its list unchanged and the next call tries the summary again.
fn falls_back(call: &Call<'_>) -> bool {
    call.options.summary_fallback == SummaryFallback::Extractive
        && call.measured.measure.tokens >= call.options.context_limit() as u64
}

/// Why the summary asked for could not be had: the failure (or a `Compactor`'s decline), what
/// the failed calls cost, and why on-demand compaction was not used when it was asked for.
struct Failed {
    error: CompactError,
    usage: Option<SummaryUsage>,
    /// What the summary model's answers taught before it failed.
    learnt: Option<SummaryModelLearnt>,
    native: Option<NativeFallback>,
}

/// The draft of `partition` with the summary written without an LLM (the extractive summary,
/// then the library's sections, in rounds like any summary while still over the threshold),
/// saying in the result that the summary is degraded and why.
async fn extractive<'a>(
    call: &Call<'a>,
    partition: Partition,
    own: OwnSummaries,
    failed: Failed,
    planned: &Planned,
    report: &Reporter<'_>,
) -> Result<Result<Drafted<'a>, CompactOutcome>, Aborted> {
    let Failed {
        error,
        usage,
        learnt,
        native,
    } = failed;
    // The transcript form, once: the built-in summarizer reads the messages, sends nothing.
    let options = CompactOptions {
        summary_request: SummaryRequestMode::Transcript,
        agent_request: None,
        max_retries: 0,
        ..call.options.clone()
    };
    let summarized = rounds::summarize(
        call.messages,
        call.counts,
        partition,
        &call.measured.estimator,
        &stand_in_archive_path(&options),
        &options,
        &own,
        &EXTRACTIVE,
        call.cancel,
        call.observer,
        None,
    )
    .await?;
    let mut summarized = match summarized {
        Ok(summarized) => summarized,
        // The built-in summarizer does not fail; if it did, the first failure is the one to say.
        Err(_) => {
            let mut outcome = report.failed(error, planned);
            outcome.summary_usage = usage;
            outcome.summary_model_learnt = learnt;
            return Ok(Err(outcome));
        }
    };
    let reason = format!("{}: {}", error.code.as_str(), error.message);
    let warning = format!(
        "the summary was written without an LLM (summaryFallback: 'extractive'): the list ({} tokens) reaches the context window ({} tokens), and the summary model's summary could not be had ({reason}); the originals are in the archive",
        call.measured.measure.tokens, call.options.context_limit()
    );
    tracing::warn!("{warning}");
    summarized.warnings.insert(0, warning);
    // The attempts of the summary model: the built-in summarizer makes none.
    summarized.attempts = error.attempts;
    summarized.usage = usage;
    summarized.learnt = learnt;
    summarized.fallback = Some(SummaryFallbackReport {
        used: "extractive",
        reason,
        code: error.code,
    });
    let region = summarized.region.clone();
    let mut draft = Draft::new(region, Replacement::Summary(summarized), call.options, own);
    draft.native_fallback = native;
    Ok(Ok((draft, Some(&EXTRACTIVE as &dyn Summarizer))))
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
            .and_then(|text| crate::carry::user_messages::losses_warning(text, earlier));
        draft.warnings.extend(warning);
        let (failure_tokens, own) = (draft.latest_failure.max_tokens, draft.own.clone());
        let region = &messages[draft.region.clone()];
        let losses = draft.sections_text_mut().map(|text| {
            crate::carry::appended::budget_losses(
                text,
                region,
                failure_tokens,
                &options.section_budgets(),
                &own,
            )
        });
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
                learnt: None,
                fallback: None,
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
