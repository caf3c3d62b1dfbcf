//! Step 1, **measure**: the trigger's estimate of the list (SPEC §4.2: usage, calibration,
//! model factor or raw count), what fires a compaction, and the same estimate for the list a
//! compaction would return — the measure of the post-condition (SPEC §4.7).

use serde_json::{json, Value};

use crate::base::error::ValidationError;
use crate::model::overflow::{refusal_numbers, reported_prompt_tokens, ErrorSignals};
use crate::model::trigger::{
    model_factor, tool_output_bytes, Calibration, EstimateSource, Measure, TriggerKind,
};
use crate::options::CompactOptions;
use crate::pipeline::hooks::CompactHooks;

/// The trigger's view of a list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    pub measure: Measure,
    /// What fires a compaction; `None`: nothing does.
    pub trigger: Option<TriggerKind>,
    pub estimator: Estimator,
}

pub(crate) fn measure(messages: &[Value], counts: &[usize], options: &CompactOptions) -> Measured {
    let measure = options.measure(messages, counts);
    let tool_bytes = if options.max_tool_output_bytes.is_some() {
        messages.iter().map(tool_output_bytes).sum()
    } else {
        0
    };
    Measured {
        measure,
        trigger: options.fired(&measure, messages.len(), tool_bytes),
        estimator: Estimator::new(&measure, options),
    }
}

/// What `shouldCompact` reads: the trigger's estimate given the messages' total tokens and the
/// tokens after the last assistant message (counted by the caller, possibly from a cache), as
/// JSON (`Measure` and `window`). With `message_count` (and `tool_output_bytes` when
/// `maxToolOutputBytes` is set) it also has `trigger`: what would fire a compaction, or `null`.
/// `extra_tokens`: the count of `system` and `tools` (`options.extra_tokens()`, or what a caller
/// that holds the options counted once).
pub fn measure_counted(
    options: &CompactOptions,
    extra_tokens: usize,
    message_tokens: u64,
    tokens_after_last_assistant: Option<u64>,
    message_count: Option<usize>,
    tool_output_bytes: usize,
) -> Value {
    let measure = crate::model::trigger::measure(
        crate::model::trigger::TriggerInput {
            message_tokens,
            tokens_after_last_assistant,
            extra_tokens: extra_tokens as u64,
        },
        options.threshold_tokens() as u64,
        options.usage,
        options.trigger_model(),
        options.calibration.as_ref(),
    );
    let mut out = serde_json::to_value(measure).unwrap_or_default();
    if let Value::Object(map) = &mut out {
        map.insert("window".into(), json!(options.context_token_limit));
        if let Some(count) = message_count {
            let fired = options.fired(&measure, count, tool_output_bytes);
            map.insert("trigger".into(), json!(fired));
        }
    }
    out
}

/// A `Compactor`'s calibration after a usage report: `covered_raw_tokens` is the raw count of
/// what the usage covers (messages up to the last assistant message, plus system and tools).
/// The usage is checked as the `usage` option is: never read as some other number of tokens.
pub fn calibrate_usage(
    calibration: Option<Calibration>,
    covered_raw_tokens: u64,
    usage_json: &str,
) -> Result<Calibration, ValidationError> {
    let mut calibration = calibration.unwrap_or_default();
    let value = serde_json::from_str::<Value>(usage_json)
        .map_err(|_| ValidationError::argument("options.usage", "expected an API usage object"))?;
    let usage = crate::options::parse_usage(&value)?;
    calibration.observe(covered_raw_tokens, usage.context_tokens());
    Ok(calibration)
}

/// A calibration raised after a context-overflow error (SPEC §4.8): the request of
/// `raw_tokens` (messages + system + tools) was billed at least the prompt size the error
/// names, else more than the context window of `options`; and when the error states the
/// model's maximum, that (less the output the request reserved) is the window from now on.
/// `signals` are the error's messages, with llama.cpp's `n_ctx` and `n_prompt_tokens` when it
/// has them.
pub fn calibrate_overflow(
    calibration: Option<Calibration>,
    raw_tokens: u64,
    signals: &ErrorSignals,
    options: &CompactOptions,
) -> Calibration {
    let mut calibration = calibration.unwrap_or_default();
    let numbers = refusal_numbers(signals);
    if let Some(window) = numbers.prompt_window() {
        calibration.observe_window(window);
    }
    let reported = numbers.prompt.or_else(|| reported_prompt_tokens(signals));
    // The window learnt just now counts in the limit the request is said to have passed.
    let mut options = options.clone();
    options.calibration = Some(calibration);
    let billed = reported.unwrap_or(options.context_limit() as u64 + 1);
    calibration.observe_overflow(raw_tokens, billed);
    calibration
}

/// Whether a compaction fires, and what fires it (`None`: nothing does). The estimate reaching
/// the threshold is said to the caller (`token_limit_exceeded`), whether or not a compaction
/// follows.
pub(crate) fn announce(measured: &Measured, hooks: &dyn CompactHooks) -> Option<TriggerKind> {
    let trigger = measured.trigger?;
    if measured.measure.reached() {
        hooks.event(json!({
            "type": "token_limit_exceeded",
            "tokensUsed": measured.measure.tokens,
            "tokenLimit": measured.measure.threshold,
        }));
    }
    Some(trigger)
}

/// The estimate of a list a compaction changed: the input's estimate minus the raw tokens
/// that went away, times what one raw token is billed. With a usage report, the part of the
/// billed input that is not in the messages (a system prompt or tools the caller did not pass)
/// stays in the estimate, as it stays in the next request; without one this is the changed
/// list's raw count times the factor (model family or calibration).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Estimator {
    tokens: f64,
    raw: f64,
    extra: usize,
    /// Billed tokens per raw token removed. With usage, only what is known per token (a
    /// calibration slope or a model factor), else 1: the ratio a usage report implies includes
    /// the overhead outside the messages, and would make removals look bigger than they are.
    per_token: f64,
    threshold: u64,
}

impl Estimator {
    fn new(measure: &Measure, options: &CompactOptions) -> Self {
        let per_token = match measure.source {
            EstimateSource::Usage => options
                .calibration
                .as_ref()
                .and_then(|c| c.slope().or_else(|| c.learnt_factor()))
                .or_else(|| options.trigger_model().map(model_factor))
                .unwrap_or(1.0),
            _ => measure.factor,
        };
        Estimator {
            tokens: measure.tokens as f64,
            raw: measure.raw_tokens as f64,
            extra: options.extra_tokens(),
            per_token: per_token.max(1.0),
            threshold: measure.threshold,
        }
    }

    /// The estimate for a list whose messages have `message_tokens` raw tokens.
    pub fn after(&self, message_tokens: usize) -> u64 {
        let raw_after = (message_tokens + self.extra) as f64;
        let estimate = self.tokens - (self.raw - raw_after) * self.per_token;
        estimate.max(raw_after).ceil() as u64
    }

    /// Would a list of `message_tokens` raw tokens still reach the threshold?
    pub fn over(&self, message_tokens: usize) -> bool {
        self.after(message_tokens) >= self.threshold
    }

    /// The threshold the estimate is compared with.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Raw tokens to remove for the estimate to fall by `billed` tokens.
    pub fn raw_for(&self, billed: u64) -> usize {
        (billed as f64 / self.per_token).ceil() as usize
    }
}
