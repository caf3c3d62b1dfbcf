//! The pipeline around the strategies:
//!
//! 1. **trigger** — the token estimate (SPEC §4.2), `maxMessages`, `maxToolOutputBytes`,
//!    `force`; `compression.enabled: false` never fires. A `token_limit_exceeded` event when the
//!    estimate reaches the threshold (type seed's `TokenLimitExceededEvent`).
//! 2. **plan** — what the strategy would do ([`crate::strategy`], [`crate::selective`], or the
//!    PRD's partition), without side effects.
//! 3. **confirmation** — [`CompactHooks::before_compact`] (Pi Agent seed's
//!    `require_confirmation`) may decline: nothing is written but the audit line.
//! 4. **compaction** — summary rounds (recursive: while the result is still over the
//!    threshold and its tail holds more than one user turn, again with half the tail budget,
//!    [`MAX_ROUNDS`] in all), or a rewrite (a strategy without a summary).
//! 5. **records** — archive, metadata, audit, key-information extraction, `completed` /
//!    `failed` events.

use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::archive;
use crate::compact::{
    summary_message, summary_round, Aborted, CompactOptions, CompactOutcome, CompactStats, Piece,
};
use crate::error::{CompactError, ErrorCode};
use crate::memory;
use crate::partition::{is_user_turn, partition, Partition};
use crate::prompt;
use crate::selective;
use crate::strategy::{self, Rewrite, Strategy};
use crate::summarize::{AttemptObserver, BoxFuture, Summarizer};
use crate::tokens;
use crate::trigger::{
    model_factor, tool_output_bytes, Calibration, EstimateSource, Measure, TriggerKind,
};

/// The most summary rounds one compaction runs: the first, and at most two more when the
/// result is still over the threshold (Pi Agent seed: "递归压缩，保留更少的历史").
pub const MAX_ROUNDS: u32 = 3;

/// What the notice of a strategy without a summary costs, for planning (its header names the
/// archive path, whose length varies; ~60 tokens with a typical path).
const NOTICE_TOKENS: usize = 90;

/// What the confirmation hook sees before anything is written (`onBeforeCompact(info)`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeCompactInfo {
    /// The trigger's estimate and the threshold.
    pub tokens: usize,
    pub threshold: usize,
    pub message_count: usize,
    /// Messages that would be summarized, removed or changed.
    pub middle_count: usize,
    /// Where the part that changes begins, and the index of the first message kept after it
    /// (a selective compaction may keep some messages in between).
    pub head_length: usize,
    pub tail_start: usize,
    pub trigger: TriggerKind,
    pub strategy: Strategy,
    /// A selective compaction that will fall back to a full summary.
    pub fallback: bool,
}

/// The answer of the confirmation hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    Proceed,
    /// Do not compact; the reason goes into the result's error (`DECLINED`).
    Decline(String),
}

/// The caller's hooks: confirmation and events. The napi binding implements it over the JS
/// callbacks `onBeforeCompact` and `onEvent`; the core never sees napi types.
pub trait CompactHooks: Send + Sync {
    /// Asked once per compaction, after planning and before any summary call or write.
    fn before_compact<'a>(&'a self, _info: &'a BeforeCompactInfo) -> BoxFuture<'a, Confirmation> {
        Box::pin(async { Confirmation::Proceed })
    }
    /// An event: `token_limit_exceeded`, `started`, `completed`, `failed` (`retry` events go
    /// through the [`AttemptObserver`]).
    fn event(&self, _event: Value) {}
}

/// No hooks.
pub struct NoHooks;
impl CompactHooks for NoHooks {}

enum Plan {
    Summary(Partition),
    Rewrite(Rewrite),
}

/// [`crate::compact::compact`] with the confirmation hook and events.
pub async fn compact_with_hooks(
    messages: &[Value],
    counts: Option<Vec<usize>>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
    hooks: &dyn CompactHooks,
) -> Result<CompactOutcome, Aborted> {
    let counts = counts.unwrap_or_else(|| tokens::count_each(options.encoding, messages));
    let measure = options.measure(messages, &counts);
    let tool_bytes = if options.max_tool_output_bytes.is_some() {
        messages.iter().map(tool_output_bytes).sum()
    } else {
        0
    };
    let trigger = options.fired(&measure, messages.len(), tool_bytes);
    let result = run(
        messages, &counts, measure, trigger, options, summarizer, cancel, observer, hooks,
    )
    .await;
    match result {
        Ok(mut outcome) => {
            outcome.measure = Some(measure);
            outcome.trigger = trigger;
            Ok(outcome)
        }
        Err(Aborted) => {
            archive::record_aborted(options);
            Err(Aborted)
        }
    }
}

/// The estimate of a list a compaction changed: the input's estimate minus the raw tokens
/// that went away, times what one raw token is billed. With a usage report, the part of the
/// billed input that is not in the messages (a system prompt or tools the caller did not pass)
/// stays in the estimate, as it stays in the next request; without one this is the changed
/// list's raw count times the factor (model family or calibration).
#[derive(Debug, Clone, Copy)]
struct Estimator {
    tokens: f64,
    raw: f64,
    extra: usize,
    /// Billed tokens per raw token removed. With usage, only what is known per token (a
    /// calibration slope or a model factor), else 1: the ratio a usage report implies includes
    /// the overhead outside the messages, and would make removals look bigger than they are.
    per_token: f64,
}

impl Estimator {
    fn new(measure: &Measure, options: &CompactOptions) -> Self {
        let per_token = match measure.source {
            EstimateSource::Usage => options
                .calibration
                .as_ref()
                .and_then(Calibration::slope)
                .or_else(|| options.trigger_model().map(model_factor))
                .unwrap_or(1.0),
            _ => measure.factor,
        };
        Estimator {
            tokens: measure.tokens as f64,
            raw: measure.raw_tokens as f64,
            extra: options.extra_tokens(),
            per_token: per_token.max(1.0),
        }
    }

    /// The estimate for a list whose messages have `message_tokens` raw tokens.
    fn after(&self, message_tokens: usize) -> u64 {
        let raw_after = (message_tokens + self.extra) as f64;
        let estimate = self.tokens - (self.raw - raw_after) * self.per_token;
        estimate.max(raw_after).ceil() as u64
    }
}

#[allow(clippy::too_many_arguments)]
async fn run(
    messages: &[Value],
    counts: &[usize],
    measure: Measure,
    trigger: Option<TriggerKind>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
    hooks: &dyn CompactHooks,
) -> Result<CompactOutcome, Aborted> {
    let trigger_tokens = measure.tokens as usize;
    let threshold_tokens = measure.threshold as usize;
    let skipped = |error: Option<CompactError>| {
        let mut outcome = CompactOutcome::skipped(trigger_tokens, threshold_tokens, error);
        outcome.strategy = options.strategy;
        outcome
    };
    let Some(trigger) = trigger else {
        return Ok(skipped(None));
    };
    if measure.reached() {
        hooks.event(json!({
            "type": "token_limit_exceeded",
            "tokensUsed": trigger_tokens,
            "tokenLimit": threshold_tokens,
        }));
    }
    if options.strategy == Strategy::Noop {
        // The type seed's NoOpCompressionStrategy: the list stands, nothing is written.
        return Ok(skipped(None));
    }

    let estimator = Estimator::new(&measure, options);
    let summary_plan = || {
        partition(
            messages,
            counts,
            options.tail_retention_tokens(),
            options.tail_rules(),
        )
    };
    let (plan, fallback) = match options.strategy {
        Strategy::Summary | Strategy::Noop => (Some(Plan::Summary(summary_plan())), false),
        Strategy::Selective => {
            let still_over = |tokens: usize, count: usize, bytes: usize| {
                estimator.after(tokens) >= measure.threshold
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
                None => (Some(Plan::Summary(summary_plan())), true),
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
    let Some(plan) = plan else {
        let mut outcome = skipped(Some(CompactError::new(
            ErrorCode::NothingToCompact,
            format!(
                "compaction was triggered ({}: {trigger_tokens} tokens, threshold {threshold_tokens}), but the {} strategy keeps every message; nothing to compact",
                trigger.as_str(),
                options.strategy.as_str()
            ),
        )));
        outcome.partition = Some(summary_plan());
        outcome.fallback = fallback;
        outcome.trigger = Some(trigger);
        archive::record_outcome(options, &mut outcome);
        return Ok(outcome);
    };

    let (strategy, head_length, tail_start, middle_count) = match &plan {
        Plan::Summary(p) => (Strategy::Summary, p.head_len, p.tail_start, p.middle_len()),
        Plan::Rewrite(r) => {
            let unchanged = r
                .items
                .iter()
                .filter(|item| matches!(item, strategy::RegionItem::Keep(_)))
                .count();
            (
                r.strategy,
                r.region.start,
                r.region.end,
                r.region.len() - unchanged,
            )
        }
    };
    let info = BeforeCompactInfo {
        tokens: trigger_tokens,
        threshold: threshold_tokens,
        message_count: messages.len(),
        middle_count,
        head_length,
        tail_start,
        trigger,
        strategy,
        fallback,
    };
    let confirmation = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Aborted),
        answer = hooks.before_compact(&info) => answer,
    };
    if let Confirmation::Decline(reason) = confirmation {
        let mut outcome = skipped(Some(CompactError::new(ErrorCode::Declined, reason)));
        outcome.strategy = strategy;
        outcome.fallback = fallback;
        outcome.trigger = Some(trigger);
        outcome.partition = Some(Partition {
            head_len: head_length,
            tail_start,
        });
        archive::record_outcome(options, &mut outcome);
        return Ok(outcome);
    }
    hooks.event(json!({
        "type": "started",
        "tokens": trigger_tokens,
        "threshold": threshold_tokens,
        "messageCount": messages.len(),
        "middleCount": info.middle_count,
        "trigger": trigger.as_str(),
        "strategy": strategy.as_str(),
    }));

    let mut outcome = match plan {
        Plan::Summary(p) => {
            summary_rounds(
                messages, counts, p, &measure, estimator, options, summarizer, cancel, observer,
            )
            .await?
        }
        Plan::Rewrite(rewrite) => {
            let mut outcome = apply_rewrite(messages, counts, &rewrite, options);
            outcome.trigger_tokens = trigger_tokens;
            outcome.threshold_tokens = threshold_tokens;
            outcome.trigger = Some(trigger);
            archive::record_outcome(options, &mut outcome);
            outcome
        }
    };
    outcome.fallback = fallback;
    outcome.trigger = Some(trigger);

    if outcome.compacted && options.extract_memory {
        extract_memory(messages, options, &mut outcome);
    }
    if outcome.compacted {
        let stats = outcome.stats;
        hooks.event(json!({
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
        }));
    } else if let Some(error) = &outcome.error {
        hooks.event(json!({ "type": "failed", "error": error }));
    }
    Ok(outcome)
}

/// The messages of `pieces`, materialized.
fn materialize(messages: &[Value], pieces: &[Piece]) -> Vec<Value> {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(i) => messages[*i].clone(),
            Piece::New(message) => message.clone(),
        })
        .collect()
}

/// Summary rounds: the first on the input; then, while the result is still over the threshold
/// and its tail has more than one user turn, another on the result with half the tail budget
/// (its middle is the previous summary plus the oldest part of the tail, which the summary
/// prompt updates). Every round is a compaction of its own in the records (archive, metadata,
/// audit line); the outcome describes all of them against the input.
#[allow(clippy::too_many_arguments)]
async fn summary_rounds(
    messages: &[Value],
    counts: &[usize],
    plan: Partition,
    measure: &Measure,
    estimator: Estimator,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<CompactOutcome, Aborted> {
    let (trigger_tokens, threshold_tokens) = (measure.tokens as usize, measure.threshold as usize);
    let input_origins: Vec<Option<usize>> = (0..messages.len()).map(Some).collect();
    let mut outcome = summary_round(
        messages,
        &input_origins,
        counts,
        plan,
        trigger_tokens,
        threshold_tokens,
        options,
        summarizer,
        cancel,
        observer,
    )
    .await?;
    archive::record_outcome(options, &mut outcome);
    if !outcome.compacted {
        return Ok(outcome);
    }
    let head_len = plan.head_len;
    let mut budget = options.tail_retention_tokens();
    while outcome.rounds < MAX_ROUNDS {
        let current = materialize(messages, &outcome.pieces);
        let current_origins: Vec<Option<usize>> = outcome
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Original(i) => Some(*i),
                Piece::New(_) => None,
            })
            .collect();
        let current_counts: Vec<usize> = outcome
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Original(i) => counts[*i],
                Piece::New(message) => tokens::count_message(options.encoding, message),
            })
            .collect();
        let total: usize = current_counts.iter().sum();
        if estimator.after(total) < measure.threshold {
            break;
        }
        let tail_turns = current[head_len + 1..]
            .iter()
            .filter(|m| is_user_turn(m))
            .count();
        if tail_turns <= 1 {
            break;
        }
        budget /= 2;
        let next_plan = partition(&current, &current_counts, budget, options.tail_rules());
        if next_plan.head_len != head_len || next_plan.tail_start <= head_len + 1 {
            // Nothing but the summary itself would be folded: no progress possible.
            break;
        }
        let mut next = summary_round(
            &current,
            &current_origins,
            &current_counts,
            next_plan,
            trigger_tokens,
            threshold_tokens,
            options,
            summarizer,
            cancel,
            observer,
        )
        .await?;
        archive::record_outcome(options, &mut next);
        if !next.compacted {
            if let Some(error) = &next.error {
                outcome.warnings.push(format!(
                    "the result is still over the threshold; a further compaction round failed: {error}"
                ));
            }
            outcome.warnings.append(&mut next.warnings);
            break;
        }
        outcome = compose(messages.len(), outcome, next);
    }
    Ok(outcome)
}

/// The outcome of two successive rounds, against the input of the first.
fn compose(input_len: usize, first: CompactOutcome, mut second: CompactOutcome) -> CompactOutcome {
    let pieces: Vec<Piece> = second
        .pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(j) => first.pieces[*j].clone(),
            Piece::New(message) => Piece::New(message.clone()),
        })
        .collect();
    let retained = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Original(_)))
        .count();
    let original = first.stats.original_token_count;
    let compacted = second.stats.compacted_token_count;
    let head_len = first.partition.map_or(0, |p| p.head_len);
    let tail_start = pieces
        .iter()
        .skip(head_len + 1)
        .find_map(|p| match p {
            Piece::Original(i) => Some(*i),
            Piece::New(_) => None,
        })
        .unwrap_or(input_len);
    let mut warnings = first.warnings;
    warnings.append(&mut second.warnings);
    CompactOutcome {
        compacted: true,
        pieces,
        summary: second.summary,
        archive_path: second.archive_path,
        stats: CompactStats {
            original_token_count: original,
            compacted_token_count: compacted,
            compaction_ratio: if original == 0 {
                0.0
            } else {
                compacted as f64 / original as f64
            },
            compacted_message_count: input_len - retained,
            retained_message_count: retained,
        },
        error: None,
        warnings,
        partition: Some(Partition {
            head_len,
            tail_start,
        }),
        trigger_tokens: first.trigger_tokens,
        threshold_tokens: first.threshold_tokens,
        provider: second.provider,
        model: second.model,
        attempts: first.attempts + second.attempts,
        measure: None,
        strategy: Strategy::Summary,
        trigger: first.trigger,
        rounds: first.rounds + 1,
        removed: None,
        fallback: first.fallback,
        extracted: None,
    }
}

/// Carries out a strategy without a summary: archives the region, puts the notice and what
/// stays of the region in its place.
fn apply_rewrite(
    messages: &[Value],
    counts: &[usize],
    rewrite: &Rewrite,
    options: &CompactOptions,
) -> CompactOutcome {
    let region = rewrite.region.clone();
    let mut warnings = Vec::new();
    let archive_path = match archive::persist_messages(
        &messages[region.clone()],
        &options.output_dir,
        &options.session_id,
    ) {
        Ok(file) => Some(file.path),
        Err(e) => {
            let message = format!(
                "could not archive the {} removed messages in {}: {e}",
                region.len(),
                options.output_dir.display()
            );
            if options.require_archive {
                tracing::error!("{message}; compaction skipped (requireArchive)");
                let mut outcome = CompactOutcome::skipped(
                    0,
                    0,
                    Some(CompactError::new(ErrorCode::ArchiveFailed, message)),
                );
                outcome.strategy = rewrite.strategy;
                outcome.partition = Some(Partition {
                    head_len: region.start,
                    tail_start: region.end,
                });
                return outcome;
            }
            tracing::warn!("{message}");
            warnings.push(message);
            None
        }
    };
    let archive_name = archive_path
        .as_ref()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    let items = rewrite.render_items(messages, archive_name);
    let archive_display = archive_path.as_ref().map(|p| p.display().to_string());
    let notice = format!(
        "{}\n\n{}",
        prompt::notice_header(
            region.len(),
            &rewrite.how(),
            items.len(),
            archive_display.as_deref()
        ),
        rewrite.detail()
    );
    let mut pieces: Vec<Piece> = (0..region.start).map(Piece::Original).collect();
    pieces.push(Piece::New(summary_message(&notice)));
    pieces.extend(items);
    pieces.extend((region.end..messages.len()).map(Piece::Original));

    let original: usize = counts.iter().sum();
    let compacted: usize = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(i) => counts[*i],
            Piece::New(message) => tokens::count_message(options.encoding, message),
        })
        .sum();
    let retained = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Original(_)))
        .count();
    let mut outcome = CompactOutcome::skipped(0, 0, None);
    outcome.compacted = true;
    outcome.pieces = pieces;
    outcome.archive_path = archive_path;
    outcome.stats = CompactStats {
        original_token_count: original,
        compacted_token_count: compacted,
        compaction_ratio: if original == 0 {
            0.0
        } else {
            compacted as f64 / original as f64
        },
        compacted_message_count: messages.len() - retained,
        retained_message_count: retained,
    };
    outcome.warnings = warnings;
    outcome.partition = Some(Partition {
        head_len: region.start,
        tail_start: region.end,
    });
    outcome.strategy = rewrite.strategy;
    outcome.removed = Some(rewrite.removal.clone());
    outcome
}

/// SanBot's key-information extraction over the input messages the compaction replaced.
fn extract_memory(messages: &[Value], options: &CompactOptions, outcome: &mut CompactOutcome) {
    let mut kept = vec![false; messages.len()];
    for piece in &outcome.pieces {
        if let Piece::Original(i) = piece {
            kept[*i] = true;
        }
    }
    let gone: Vec<Value> = messages
        .iter()
        .zip(&kept)
        .filter(|(_, kept)| !**kept)
        .map(|(m, _)| m.clone())
        .collect();
    let found = memory::extract(&gone);
    match memory::write(&options.output_dir, &options.session_id, &found) {
        Ok(extracted) => outcome.extracted = Some(extracted),
        Err(e) => {
            let message = format!("could not write the extracted memory: {e}");
            tracing::warn!("{message}");
            outcome.warnings.push(message);
        }
    }
}
