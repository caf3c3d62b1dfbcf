//! Step 2, **plan**: what the strategy would do ([`crate::plan::strategy`], [`crate::plan::selective`], or
//! the PRD's partition), without side effects — or the region a recorded checkpoint or a
//! summary prepared in the background stands for — then the caller's confirmation (the Pi
//! Agent seed's `require_confirmation`), which may decline, and the `started` event.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::archive::checkpoint::Checkpoint;
use crate::base::error::{CompactError, ErrorCode};
use crate::model::trigger::TriggerKind;
use crate::options::CompactOptions;
use crate::pipeline::hooks::{BeforeCompactInfo, Confirmation};
use crate::pipeline::measure::Measured;
use crate::pipeline::report::reporter::{Planned, Reporter};
use crate::pipeline::shared::call::Call;
use crate::pipeline::shared::outcome::{Aborted, CompactOutcome};
use crate::plan::partition::{partition, Partition};
use crate::plan::selective;
use crate::plan::strategy::{self, RegionItem, Rewrite, Strategy};

/// What the notice of a strategy without a summary costs, for planning (its header names the
/// archive path, whose length varies; ~60 tokens with a typical path).
const NOTICE_TOKENS: usize = 90;

pub(crate) enum Plan {
    /// Summarize the middle of the partition.
    Summary(Partition),
    /// A strategy without a summary.
    Rewrite(Rewrite),
    /// Reuse the summary message of a checkpoint recorded for the start of the list (its
    /// head, then the messages it covers).
    Reuse(Arc<Checkpoint>),
}

impl Plan {
    /// The strategy that will run, where the part that changes begins and ends, and how many
    /// messages it summarizes, removes or changes.
    pub fn shape(&self) -> (Strategy, usize, usize, usize) {
        match self {
            Plan::Summary(p) => (Strategy::Summary, p.head_len, p.tail_start, p.middle_len()),
            Plan::Reuse(c) => (
                Strategy::Summary,
                c.head_length,
                c.covered_messages,
                c.covered_messages - c.head_length,
            ),
            Plan::Rewrite(r) => {
                let unchanged = r
                    .items
                    .iter()
                    .filter(|item| matches!(item, RegionItem::Keep(_)))
                    .count();
                (
                    r.strategy,
                    r.region.start,
                    r.region.end,
                    r.region.len() - unchanged,
                )
            }
        }
    }
}

/// The plan of `options.strategy`, and whether a selective compaction fell back to a full
/// summary. `None`: the strategy keeps every message.
pub(crate) fn plan(
    messages: &[Value],
    counts: &[usize],
    measured: &Measured,
    options: &CompactOptions,
) -> (Option<Plan>, bool) {
    let (plan, fallback) = match options.strategy {
        Strategy::Summary | Strategy::Noop => (
            Some(Plan::Summary(partition_over_threshold(
                messages,
                counts,
                options,
                options.overflow_recovery,
            ))),
            false,
        ),
        Strategy::Selective => {
            let estimator = measured.estimator;
            let still_over = |tokens: usize, count: usize, bytes: usize| {
                estimator.over(tokens)
                    || options.max_messages.is_some_and(|max| count > max)
                    || options.max_tool_output_bytes.is_some_and(|max| bytes > max)
            };
            match selective::plan(
                messages,
                counts,
                &options.selective_rules,
                options.encoding,
                NOTICE_TOKENS,
                still_over,
            ) {
                Some(rewrite) => (Some(Plan::Rewrite(rewrite)), false),
                // The seed's `_fallback_full_summary`, on the original list.
                None => (
                    Some(Plan::Summary(partition_over_threshold(
                        messages,
                        counts,
                        options,
                        options.overflow_recovery,
                    ))),
                    true,
                ),
            }
        }
        Strategy::KeepRecent => (
            strategy::plan_keep_recent(messages, options.keep_recent_messages, false)
                .map(Plan::Rewrite),
            false,
        ),
        Strategy::KeepSystemAndRecent => (
            strategy::plan_keep_recent(messages, options.keep_recent_messages, true)
                .map(Plan::Rewrite),
            false,
        ),
        Strategy::SlidingWindow => (
            strategy::plan_sliding_window(messages, counts, options.tail_retention_tokens())
                .map(Plan::Rewrite),
            false,
        ),
    };
    let plan = match plan {
        Some(Plan::Summary(p)) if p.middle_len() == 0 => None,
        other => other,
    };
    (plan, fallback)
}

/// The PRD's partition with the options' tail budget and rules.
pub(crate) fn summary_partition(
    messages: &[Value],
    counts: &[usize],
    options: &CompactOptions,
) -> Partition {
    partition(
        messages,
        counts,
        options.tail_retention_tokens(),
        options.tail_rules(),
    )
}

/// The PRD's partition; when the agent's API refused the list (`shrink`: overflow recovery)
/// and the tail budget holds every message after the head, the budget is halved until
/// something is left to summarize (down to the last message and the calls its tool results
/// answer). Answering `NOTHING_TO_COMPACT` there would leave the loop with a list it cannot
/// send, while a smaller tail fits; the fit step then shortens what the tail still holds.
/// Otherwise the PRD's rule stands: a tail budget that covers everything leaves nothing to
/// compact.
pub(crate) fn partition_over_threshold(
    messages: &[Value],
    counts: &[usize],
    options: &CompactOptions,
    shrink: bool,
) -> Partition {
    let mut budget = options.tail_retention_tokens();
    let mut found = partition(messages, counts, budget, options.tail_rules());
    while shrink && found.middle_len() == 0 && budget > 0 {
        budget /= 2;
        found = partition(messages, counts, budget, options.tail_rules());
    }
    found
}

/// Step 2: the plan — a checkpoint's when one stands for the start of the list; the region of
/// a summary prepared in the background (`background`) in place of the summary's — and the
/// caller's confirmation. `Ok(Err(outcome))`: nothing is compacted (the no-op strategy,
/// nothing to compact, declined).
pub(crate) async fn confirmed(
    call: &Call<'_>,
    report: &Reporter<'_>,
    trigger: TriggerKind,
    checkpoint: Option<Arc<Checkpoint>>,
    background: Option<Partition>,
) -> Result<Result<(Plan, Planned), CompactOutcome>, Aborted> {
    let (plan, fallback) = match checkpoint {
        Some(checkpoint) => (Plan::Reuse(checkpoint), false),
        None => {
            if call.options.strategy == Strategy::Noop {
                // The type seed's NoOpCompressionStrategy: the list stands, nothing is written.
                return Ok(Err(report.skipped(None)));
            }
            let (plan, fallback) = plan(call.messages, call.counts, call.measured, call.options);
            // A summary prepared in the background stands for the region it covers.
            let plan = match (plan, background) {
                (Some(Plan::Summary(_)), Some(covered)) => Some(Plan::Summary(covered)),
                (plan, _) => plan,
            };
            match plan {
                Some(plan) => (plan, fallback),
                None => return Ok(Err(nothing_to_compact(call, report, trigger, fallback))),
            }
        }
    };
    let (strategy, head_length, tail_start, middle_count) = plan.shape();
    let planned = Planned {
        strategy,
        partition: Partition {
            head_len: head_length,
            tail_start,
        },
        fallback,
    };
    let measure = call.measured.measure;
    let info = BeforeCompactInfo {
        tokens: measure.tokens as usize,
        threshold: measure.threshold as usize,
        message_count: call.messages.len(),
        middle_count,
        head_length,
        tail_start,
        trigger,
        strategy,
        fallback,
    };
    // The caller confirms a compaction that reuses a checkpoint as any other: it changes the
    // list and writes records.
    let confirmation = tokio::select! {
        biased;
        _ = call.cancel.cancelled() => return Err(Aborted),
        answer = call.hooks.before_compact(&info) => answer,
    };
    if let Confirmation::Decline(reason) = confirmation {
        let error = CompactError::new(ErrorCode::Declined, reason);
        return Ok(Err(report.not_compacted(error, &planned)));
    }
    let mut started = json!({
        "type": "started",
        "tokens": info.tokens,
        "threshold": info.threshold,
        "messageCount": info.message_count,
        "middleCount": info.middle_count,
        "trigger": trigger.as_str(),
        "strategy": strategy.as_str(),
    });
    if matches!(plan, Plan::Reuse(_)) {
        started["checkpoint"] = json!(true);
    }
    call.hooks.event(started);
    Ok(Ok((plan, planned)))
}

/// The outcome when the strategy keeps every message.
fn nothing_to_compact(
    call: &Call<'_>,
    report: &Reporter<'_>,
    trigger: TriggerKind,
    fallback: bool,
) -> CompactOutcome {
    let options = call.options;
    let measure = call.measured.measure;
    let error = CompactError::new(
        ErrorCode::NothingToCompact,
        format!(
            "compaction was triggered ({}: {} tokens, threshold {}), but the {} strategy keeps every message; nothing to compact",
            trigger.as_str(),
            measure.tokens,
            measure.threshold,
            options.strategy.as_str()
        ),
    );
    let planned = Planned {
        strategy: options.strategy,
        partition: summary_partition(call.messages, call.counts, options),
        fallback,
    };
    report.not_compacted(error, &planned)
}
