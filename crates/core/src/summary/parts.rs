//! The transcript request in parts that fit the summary model as it counts (SPEC §13).
//!
//! A part is sized in tokens: the exact count of what is sent (instructions, the summary so
//! far, the rendered transcript), scaled by the factor between what the summary model bills
//! and that count — its family's ([`model_factor`]), one learnt earlier, or what its own usage
//! shows within this compaction — against its window less the output budget. Never by
//! characters: text dense with ids and hashes holds two characters a token, prose four.
//!
//! What the model answers resizes the rest:
//! - a refusal for size that states the model's count N and its maximum M sets the window to
//!   M and the factor to N over our count, and the part is split again (by about M/N, with a
//!   margin); one that states less is halved. At most [`MAX_REFUSALS`] refusals a part;
//! - a summary cut at `max_tokens` is asked again with twice the room (up to the model's
//!   output limit, within the window), or, at the limit, for half the part;
//! - usage that shows the model counting more than assumed sizes the later parts with it.
//!
//! Never the same request twice: each of these changes what is sent.

use std::ops::Range;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::base::error::{CompactError, ErrorCode};
use crate::base::retry::RetryPolicy;
use crate::carry::sections::strip_sections;
use crate::model::added::OwnSummaries;
use crate::model::encoding::Encoding;
use crate::model::overflow::StatedLimits;
use crate::model::tokens::count_text;
use crate::model::trigger::model_factor;
use crate::summary::prompt::{self, RenderLimits, TranscriptKey};
use crate::summary::summarize::{
    summarize_or_resize, AttemptError, AttemptObserver, Attempted, Summarizer, SummaryFailure,
    SummaryRequest, UsageMeter,
};

/// Tokens the providers add around the prompt: the system prompt (Anthropic's is ~45 tokens)
/// and the message framing.
const FRAMING_TOKENS: usize = 100;

/// The share of the window a planned part may fill: our count of a part is exact, but the
/// per-message counts it is planned with name tool results a little differently.
const PLAN_MARGIN: f64 = 0.95;

/// After a refusal that stated N and M, the part is split by M/N times this.
const SPLIT_MARGIN: f64 = 0.9;

/// Refusals for size a part may meet before the compaction fails.
pub const MAX_REFUSALS: u32 = 3;

/// The smallest prompt budget: below it, no part holds anything useful.
const MIN_PROMPT_TOKENS: usize = 1_000;

/// Tool results longer than this are shortened first when the transcript is too long.
const SHORTENED_TOOL_RESULT_CHARS: usize = 2_000;

/// Usage teaches a factor only from requests at least this large: on a small one, the framing
/// the provider adds weighs too much.
const MIN_TEACHING_TOKENS: usize = 1_000;

/// The text of a summary answer, without the `<summary>` tags the prompt asks for.
pub(crate) fn unwrap_summary_tags(text: &str) -> String {
    match (text.find("<summary>"), text.rfind("</summary>")) {
        (Some(start), Some(end)) if end > start => {
            text[start + "<summary>".len()..end].trim().to_string()
        }
        _ => text.trim().to_string(),
    }
}

/// What the parts of a middle produced.
pub(crate) struct PartsSummary {
    /// The model's text (the summary so far when the last part was written).
    pub text: Option<String>,
    pub attempts: u32,
    /// What was resized and why.
    pub warnings: Vec<String>,
}

/// What the parts are sized and asked with: the compaction's options, as plain values.
pub(crate) struct PartsOptions<'a> {
    pub encoding: Encoding,
    /// The model the options name (the summarizer's own comes first).
    pub model: Option<&'a str>,
    /// The summary model's window as configured (`summaryContextTokens`).
    pub context_tokens: Option<usize>,
    /// What earlier compactions taught of its window and factor: given with the options,
    /// and kept by the store for this model.
    pub window_learnt: Option<usize>,
    pub factor_learnt: Option<f64>,
    pub stored_window: Option<usize>,
    pub stored_factor: Option<f64>,
    /// The output budget (`summaryMaxTokens`).
    pub max_tokens: u32,
    pub retry: RetryPolicy,
    pub custom_instructions: Option<&'a str>,
    /// `promptStyle: 'continuation'`: the instructions that go on from the conversation.
    pub continuation: bool,
}

/// How large a request may be, as far as this compaction knows.
struct Sizing {
    encoding: Encoding,
    /// The summary model's window, in its tokens (`None`: unknown, one part).
    window: Option<usize>,
    /// Its tokens per token of ours.
    factor: f64,
    /// The output budget (already within the model's output limit).
    max_tokens: u32,
    /// The model's output limit, when known.
    output_limit: Option<u32>,
    /// The most tokens (ours) a prompt may have, set by refusals.
    ceiling: Option<usize>,
}

impl Sizing {
    fn new(
        options: &PartsOptions,
        summarizer: &dyn Summarizer,
        meter: Option<&UsageMeter>,
    ) -> Self {
        let learnt = meter.and_then(UsageMeter::learnt);
        let configured = options
            .context_tokens
            .or_else(|| summarizer.context_window());
        // A window a refusal stated is the truth for this model: the smallest known wins.
        let window = [
            configured,
            options.window_learnt,
            options.stored_window,
            learnt.as_ref().and_then(|l| l.window).map(|w| w as usize),
        ]
        .into_iter()
        .flatten()
        .min();
        let family = summarizer
            .model()
            .or(options.model)
            .map_or(1.0, model_factor);
        let factor = [
            Some(family),
            options.factor_learnt,
            options.stored_factor,
            learnt.as_ref().and_then(|l| l.factor),
        ]
        .into_iter()
        .flatten()
        .filter(|f| f.is_finite() && *f > 0.0)
        .fold(1.0, f64::max);
        let output_limit = summarizer.max_output_tokens();
        Sizing {
            encoding: options.encoding,
            window,
            factor,
            max_tokens: options
                .max_tokens
                .clamp(1, output_limit.unwrap_or(u32::MAX).max(1)),
            output_limit,
            ceiling: None,
        }
    }

    /// The most tokens (ours) one prompt may have; `None`: no bound is known.
    fn prompt_budget(&self) -> Option<usize> {
        let by_window = self.window.map(|window| {
            let room = window.saturating_sub(self.max_tokens as usize + FRAMING_TOKENS);
            (room as f64 * PLAN_MARGIN / self.factor) as usize
        });
        let budget = match (by_window, self.ceiling) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        budget.map(|b| b.max(MIN_PROMPT_TOKENS))
    }

    fn count(&self, text: &str) -> usize {
        count_text(self.encoding, text)
    }
}

/// The middle, rendered and counted per message, as the planner sees it (counted only when a
/// budget asks for it: without a known window the middle is one part).
struct Middle<'a> {
    messages: &'a [Value],
    own: &'a OwnSummaries,
    full: Option<Vec<usize>>,
    short: Option<Vec<usize>>,
}

impl<'a> Middle<'a> {
    fn new(messages: &'a [Value], own: &'a OwnSummaries) -> Self {
        Middle {
            messages,
            own,
            full: None,
            short: None,
        }
    }

    fn counts(&mut self, limits: RenderLimits, sizing: &Sizing) -> &[usize] {
        let (messages, own) = (self.messages, self.own);
        let slot = if limits == RenderLimits::default() {
            &mut self.full
        } else {
            &mut self.short
        };
        slot.get_or_insert_with(|| counts(messages, limits, own, sizing))
    }
}

/// Each message's tokens as its part would render it (any key of the real one's length
/// counts the same).
fn counts(
    messages: &[Value],
    limits: RenderLimits,
    own: &OwnSummaries,
    sizing: &Sizing,
) -> Vec<usize> {
    let key = TranscriptKey::fixed("0000000000000000");
    messages
        .iter()
        .map(|m| {
            sizing.count(&prompt::render_transcript(
                std::slice::from_ref(m),
                limits,
                own,
                &key,
            ))
        })
        .collect()
}

/// The render limits that make `message` alone fit `budget` tokens of transcript: its long
/// texts clipped (head and tail kept) until it does.
fn clipped_limits(
    message: &Value,
    base: RenderLimits,
    budget: usize,
    own: &OwnSummaries,
    sizing: &Sizing,
) -> RenderLimits {
    let key = TranscriptKey::fixed("0000000000000000");
    let render = |limits: RenderLimits| {
        prompt::render_transcript(std::slice::from_ref(message), limits, own, &key)
    };
    let text = render(base);
    let mut tokens = sizing.count(&text);
    let mut chars = text.chars().count();
    let mut limits = base;
    for _ in 0..12 {
        if tokens <= budget {
            break;
        }
        let scaled = (chars as f64 * budget as f64 / tokens.max(1) as f64 * 0.9) as usize;
        chars = scaled.max(200).min(chars.saturating_sub(1).max(200));
        limits = RenderLimits {
            max_tool_result_chars: chars.min(base.max_tool_result_chars),
            max_tool_input_chars: chars.min(base.max_tool_input_chars),
            max_text_chars: chars.min(base.max_text_chars),
        };
        let next = sizing.count(&render(limits));
        if chars == 200 && next >= tokens {
            break;
        }
        tokens = next;
    }
    limits
}

/// One planned part: which messages, rendered how.
struct Part {
    range: Range<usize>,
    limits: RenderLimits,
}

/// Summarizes `middle` (indices from `middle_start` in the round's list) in parts, each
/// updating the summary so far (`previous_summary`, an earlier summary's text without its
/// sections).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize_in_parts(
    previous_summary: Option<String>,
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &PartsOptions<'_>,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    meter: Option<&UsageMeter>,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<PartsSummary, SummaryFailure> {
    let policy = options.retry;
    let model = summarizer
        .model()
        .or(options.model)
        .unwrap_or(summarizer.provider())
        .to_string();
    let mut sizing = Sizing::new(options, summarizer, meter);
    let mut plan = Middle::new(middle, own);
    let mut running = previous_summary;
    let mut out = PartsSummary {
        text: None,
        attempts: 0,
        warnings: Vec::new(),
    };
    let instructions_of = |running: Option<&str>| {
        if options.continuation {
            prompt::continuation_instructions(options.custom_instructions)
        } else {
            prompt::instructions(running, options.custom_instructions)
        }
    };
    let overhead = |sizing: &Sizing, instructions: &str, running: Option<&str>| {
        let key = TranscriptKey::fixed("0000000000000000");
        prompt::render_prompt_with(
            instructions,
            running,
            &[],
            RenderLimits::default(),
            own,
            &key,
        )
        .map_or(0, |p| sizing.count(&p))
            + FRAMING_TOKENS
    };
    // Whether the whole middle fits unshortened: else long tool results are shortened in
    // every part, so that fewer parts are needed.
    let limits = {
        let instructions = instructions_of(running.as_deref());
        let fixed = overhead(&sizing, &instructions, running.as_deref());
        match sizing.prompt_budget() {
            Some(budget)
                if fixed
                    + plan
                        .counts(RenderLimits::default(), &sizing)
                        .iter()
                        .sum::<usize>()
                    > budget =>
            {
                RenderLimits {
                    max_tool_result_chars: SHORTENED_TOOL_RESULT_CHARS,
                    ..RenderLimits::default()
                }
            }
            _ => RenderLimits::default(),
        }
    };

    let mut start = 0;
    // Per part (reset when one is written): refusals and cut summaries met, and the most
    // messages the next try may hold (after a cut summary at the output limit).
    let mut refusals = 0u32;
    let mut truncations = 0u32;
    let mut most_messages = usize::MAX;
    while start < middle.len() {
        let instructions = instructions_of(running.as_deref());
        let fixed = overhead(&sizing, &instructions, running.as_deref());
        let part = next_part(&mut plan, start, limits, fixed, most_messages, &sizing);
        let messages = &middle[part.range.clone()];
        let mut request = SummaryRequest {
            messages,
            range: middle_start + part.range.start..middle_start + part.range.end,
            origins: &origins[part.range.clone()],
            prompt: String::new(),
            instructions,
            render_limits: part.limits,
            previous_summary: running.clone(),
            model: options.model.map(str::to_string),
            custom_instructions: options.custom_instructions.map(str::to_string),
            max_tokens: sizing.max_tokens,
            attempt: 0,
            shared: None,
            usage: meter,
            own,
        };
        // The exact count of what is sent (a summarizer that renders on demand gets the same
        // text).
        let rendered = request.render_prompt();
        let counted = sizing.count(&rendered) + FRAMING_TOKENS;
        if !summarizer.renders_prompt_on_demand() {
            request.prompt = rendered;
        } else {
            drop(rendered);
        }
        let before = meter.and_then(UsageMeter::total).unwrap_or_default();
        let (outcome, attempts) =
            summarize_or_resize(summarizer, &mut request, policy, cancel, observer).await?;
        out.attempts += attempts;
        match outcome {
            Attempted::Summary(text) => {
                learn_from_usage(
                    &mut sizing,
                    meter,
                    &before,
                    counted,
                    &model,
                    part.range.end < middle.len(),
                    &mut out.warnings,
                );
                running = Some(strip_sections(&unwrap_summary_tags(&text)));
                start = part.range.end;
                refusals = 0;
                truncations = 0;
                most_messages = usize::MAX;
            }
            Attempted::TooLong(error) => {
                refusals += 1;
                let stated = error.too_long.unwrap_or_default();
                resize_after_refusal(&mut sizing, &stated, counted);
                if let Some(meter) = meter {
                    let factor = stated.prompt.map(|n| n as f64 / counted.max(1) as f64);
                    meter.learn(&model, stated.maximum, factor);
                }
                if refusals >= MAX_REFUSALS {
                    return Err(too_long_failure(
                        &error,
                        &stated,
                        counted,
                        refusals,
                        out.attempts,
                    ));
                }
                let fixed = overhead(
                    &sizing,
                    &instructions_of(running.as_deref()),
                    running.as_deref(),
                );
                let split = count_parts(&mut plan, part.range.clone(), limits, fixed, &sizing);
                let warning = refusal_warning(&stated, counted, split);
                tracing::warn!("{warning}");
                out.warnings.push(warning);
            }
            Attempted::Truncated(error) => {
                // A cut summary is a failed attempt (SPEC §5): retried `maxRetries` times, each
                // time with more room or for less, so that no request is sent twice.
                truncations += 1;
                if truncations > options.retry.max_retries {
                    return Err(SummaryFailure::Failed(CompactError {
                        attempts: out.attempts,
                        status: error.status,
                        ..CompactError::new(ErrorCode::Truncated, error.message)
                    }));
                }
                let warning = match more_room(&sizing, counted) {
                    Some(larger) => {
                        let warning = format!(
                            "a summary part was cut at max_tokens {}; it was asked again with max_tokens {larger}",
                            sizing.max_tokens
                        );
                        sizing.max_tokens = larger;
                        warning
                    }
                    None if part.range.len() > 1 => {
                        most_messages = part.range.len() / 2;
                        format!(
                            "a summary part was cut at the summary model's output limit ({} tokens); it was split in two",
                            sizing.max_tokens
                        )
                    }
                    None => {
                        // One message: half as much of it (its long texts clipped further).
                        let smaller = (counted - FRAMING_TOKENS).max(2) / 2;
                        sizing.ceiling = Some(sizing.ceiling.map_or(smaller, |c| c.min(smaller)));
                        format!(
                            "a summary part was cut at the summary model's output limit ({} tokens); its message was shortened further",
                            sizing.max_tokens
                        )
                    }
                };
                tracing::warn!("{warning}");
                out.warnings.push(warning);
            }
        }
    }
    out.text = running;
    Ok(out)
}

/// The next part from `start`: as many messages as fit the prompt budget less `fixed` (the
/// instructions and the summary so far), at least one; a message larger than that alone is
/// rendered with its long texts clipped so that it fits.
fn next_part(
    plan: &mut Middle<'_>,
    start: usize,
    limits: RenderLimits,
    fixed: usize,
    most_messages: usize,
    sizing: &Sizing,
) -> Part {
    let len = plan.messages.len();
    let Some(budget) = sizing.prompt_budget() else {
        return Part {
            range: start..len,
            limits,
        };
    };
    let room = budget.saturating_sub(fixed).max(MIN_PROMPT_TOKENS / 2);
    let counts = plan.counts(limits, sizing);
    let mut end = start;
    let mut used = 0;
    while end < len && end - start < most_messages.max(1) {
        if end > start && used + counts[end] > room {
            break;
        }
        used += counts[end];
        end += 1;
    }
    let limits = if end == start + 1 && counts[start] > room {
        let (message, own) = (&plan.messages[start], plan.own);
        clipped_limits(message, limits, room, own, sizing)
    } else {
        limits
    };
    Part {
        range: start..end,
        limits,
    }
}

/// How many parts `range` takes with the current sizing (for the warnings).
fn count_parts(
    plan: &mut Middle<'_>,
    range: Range<usize>,
    limits: RenderLimits,
    fixed: usize,
    sizing: &Sizing,
) -> usize {
    let mut parts = 0;
    let mut start = range.start;
    while start < range.end {
        let part = next_part(plan, start, limits, fixed, range.end - start, sizing);
        parts += 1;
        start = part.range.end;
    }
    parts.max(1)
}

/// After a refusal for size: the stated maximum becomes the window, the stated count over ours
/// the factor, and the next prompt is smaller than the refused one by about M/N with a margin
/// — by half when the refusal stated less.
fn resize_after_refusal(sizing: &mut Sizing, stated: &StatedLimits, counted: usize) {
    if let Some(maximum) = stated.maximum {
        let maximum = maximum as usize;
        sizing.window = Some(sizing.window.map_or(maximum, |w| w.min(maximum)));
    }
    if let Some(prompt) = stated.prompt.filter(|n| *n > 0) {
        let factor = prompt as f64 / counted.max(1) as f64;
        if factor > sizing.factor {
            sizing.factor = factor;
        }
    }
    let smaller = match (stated.prompt, stated.maximum) {
        (Some(n), Some(m)) if n > 0 => {
            // M may be the whole window (OpenAI) or the input's share of it (Anthropic's
            // "N tokens > M maximum"): the output budget is taken off either way.
            let room = (m as usize)
                .saturating_sub(sizing.max_tokens as usize)
                .max(m as usize / 2);
            (counted as f64 * room as f64 / n as f64 * SPLIT_MARGIN) as usize
        }
        _ => counted / 2,
    };
    // Never the same request again: smaller than the refused one whatever was stated.
    let smaller = smaller.min(counted * 9 / 10);
    sizing.ceiling = Some(sizing.ceiling.map_or(smaller, |c| c.min(smaller)));
}

/// A larger `max_tokens` for a cut summary: twice the last, within the model's output limit and
/// the window; `None` when it is already at the limit.
fn more_room(sizing: &Sizing, counted: usize) -> Option<u32> {
    let limit = sizing.output_limit.unwrap_or(u32::MAX);
    let current = sizing.max_tokens;
    if current >= limit {
        return None;
    }
    let mut larger = current.saturating_mul(2).min(limit);
    if let Some(window) = sizing.window {
        let input = (counted as f64 * sizing.factor) as usize;
        let room = window.saturating_sub(input) as u64;
        larger = larger.min(room.min(u32::MAX as u64) as u32);
    }
    (larger > current).then_some(larger)
}

/// Usage of a part that shows the model counting more than assumed: the later parts are sized
/// with it, and the factor is noted for the next compaction.
fn learn_from_usage(
    sizing: &mut Sizing,
    meter: Option<&UsageMeter>,
    before: &crate::summary::summarize::SummaryUsage,
    counted: usize,
    model: &str,
    more_parts: bool,
    warnings: &mut Vec<String>,
) {
    let Some(meter) = meter else { return };
    let Some(after) = meter.total() else { return };
    let requests = after.requests.saturating_sub(before.requests);
    let billed = after.total_input().saturating_sub(before.total_input());
    if requests == 0 || billed == 0 || counted < MIN_TEACHING_TOKENS {
        return;
    }
    let factor = billed as f64 / requests as f64 / counted as f64;
    meter.learn(model, None, Some(factor));
    // A few percent over what was assumed is within the plan's margin.
    if factor > sizing.factor * 1.02 {
        if more_parts {
            warnings.push(format!(
                "the summary model counts {factor:.2}× our count of its requests (its usage); the later parts were sized for it"
            ));
        }
        sizing.factor = factor;
    }
}

fn refusal_warning(stated: &StatedLimits, counted: usize, parts: usize) -> String {
    let size = match stated.prompt {
        Some(n) => format!("{n} tokens"),
        None => format!("{counted} tokens by our count"),
    };
    let maximum = match stated.maximum {
        Some(m) => format!(" (maximum {m})"),
        None => String::new(),
    };
    let into = if parts > 1 {
        format!("it was split into {parts} parts")
    } else {
        "it was asked again shortened to fit".to_string()
    };
    format!("the summary model refused a part of {size}{maximum} as too long; {into}")
}

fn too_long_failure(
    error: &AttemptError,
    stated: &StatedLimits,
    counted: usize,
    refusals: u32,
    attempts: u32,
) -> SummaryFailure {
    let maximum = stated
        .maximum
        .map_or(String::new(), |m| format!(", maximum {m}"));
    let size = stated.prompt.unwrap_or(counted as u64);
    SummaryFailure::Failed(CompactError {
        attempts,
        status: error.status,
        ..CompactError::new(
            ErrorCode::BadRequest,
            format!(
                "the summary model refused a part as too long {refusals} times, each split smaller (last: {size} tokens{maximum}); set summaryContextTokens to the summary model's window, or use a model with a larger one: {}",
                error.message
            ),
        )
    })
}
