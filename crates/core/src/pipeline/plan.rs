//! Step 2, **plan**: what the strategy would do ([`crate::plan::strategy`], [`crate::plan::selective`], or
//! the PRD's partition), without side effects.

use serde_json::Value;

use super::measure::Measured;
use crate::pipeline::options::CompactOptions;
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
}

impl Plan {
    /// The strategy that will run, where the part that changes begins and ends, and how many
    /// messages it summarizes, removes or changes.
    pub fn shape(&self) -> (Strategy, usize, usize, usize) {
        match self {
            Plan::Summary(p) => (Strategy::Summary, p.head_len, p.tail_start, p.middle_len()),
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
            Some(Plan::Summary(summary_partition(messages, counts, options))),
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
                    Some(Plan::Summary(summary_partition(messages, counts, options))),
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
