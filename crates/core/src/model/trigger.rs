//! The trigger's token estimate: what the agent's API will bill, not what our tokenizer counts
//! (SPEC §4.2, issue "a trigger that is never late").
//!
//! On the real Claude sessions in `shared/data/`, Anthropic billed 1.27–1.35× the `o200k_base`
//! count of the same messages, so a trigger on the raw count fires only after the API has
//! already refused the request ("prompt is too long"). The estimate therefore uses, in order:
//!
//! 1. **usage** — the usage the API reported for the last assistant message in the list
//!    (input, cache read, cache creation and output tokens: everything up to and including
//!    that message, as billed), plus the scaled count of the messages after it;
//! 2. **calibration** — what a `Compactor` learned from earlier usage in this conversation:
//!    billed ≈ offset + slope × raw;
//! 3. **learnt** — the factor an earlier conversation on the same model learnt from its usage,
//!    kept in the session store (the archive layer's `learnt` record) and handed in as
//!    [`Calibration::factor`];
//! 4. **model factor** — a per-model-family factor when the agent's model is named
//!    (`agentModel`, or `model`): measured for Claude, 1.0 for OpenAI's o200k models;
//! 5. **raw** — the exact tokenizer count (PRD F-002 as written).
//!
//! Beside the estimate, a refusal that states the model's maximum sets the window
//! ([`Calibration::window`]): the threshold is then taken from the smaller of the configured
//! window and that one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EstimateSource {
    Usage,
    Calibration,
    /// A factor learnt by an earlier conversation on the same model (the session store).
    Learnt,
    Model,
    Raw,
}

/// The factor between Anthropic's billed input tokens and `o200k_base` counts for Claude.
///
/// Measured by replaying every request of the two real Claude sessions in `shared/data/`
/// (Opus 4.5 and Sonnet 4.5; `__test__/counting/trigger.test.ts` does it again on every test run):
/// billed / o200k of the whole message list is 1.27–1.30 once the conversation is past 30K
/// tokens, and the billed growth per o200k token of new messages averages 1.27 and 1.35 in
/// the two sessions (single calls range 0.9–3.5). At the 92 % point of a 180K window the
/// trigger needs ≥ 1.286 to be on time, and fires before the 80 % point above 1.47. 1.35 is
/// the larger session average: on time with a 5 % margin, never near the 80 % point.
pub const CLAUDE_FACTOR: f64 = 1.35;

/// The factor for the Claude families whose tokenizer changed: Claude Opus 4.7 and later, and
/// the Claude 5 generation (`claude-sonnet-5`, `claude-opus-5`, `claude-haiku-5`, …).
///
/// Anthropic's announcement of Opus 4.7 (https://www.anthropic.com/news/claude-opus-4-7, April
/// 2026) says its updated tokenizer maps the same input to about 1.0–1.35× the tokens of the
/// earlier models, depending on the content; on top of the 1.35 above that is up to ~1.8× o200k.
/// Field reports on Claude 5-generation models (issue 35; the Hacker News measurement of the
/// Opus 4.7 tokenizer discussed at
/// https://nebelwolfi.xyz/blog/2026-04-18-claude-4-7-s-new-tokenizer-what-it-s-actually-costing-you/)
/// give ~1.55× o200k on agent sessions. 1.55 is used: conservative for prose (a trigger a little
/// early), and what was billed on the sessions reported. Usage, when the loop passes it, and
/// what a store learnt replace it.
pub const CLAUDE_NEW_TOKENIZER_FACTOR: f64 = 1.55;

/// Whether a Claude model name (lowercase, without a provider prefix) is of a family with the
/// newer tokenizer: Opus 4.7 and later 4.x minors, and any major version 5 or later
/// (`claude-opus-4-7`, `claude-sonnet-5`, `claude-5-haiku`, `claude-opus-5-1-20270101`).
fn has_new_claude_tokenizer(name: &str) -> bool {
    let rest = name.strip_prefix("claude").unwrap_or(name);
    // The version numbers in the name, in order: the family words are skipped, and a date
    // suffix (8 digits) is not a version.
    let numbers: Vec<u32> = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty() && part.len() <= 2)
        .filter_map(|part| part.parse().ok())
        .collect();
    match numbers.as_slice() {
        [major, ..] if *major >= 5 => true,
        [4, minor, ..] => *minor >= 7 && name.contains("opus"),
        _ => false,
    }
}

/// The factor for a named model family (1.0 when the family's tokenizer is `o200k_base` or
/// the family is unknown).
pub fn model_factor(model: &str) -> f64 {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if name.starts_with("claude") && has_new_claude_tokenizer(name) {
        CLAUDE_NEW_TOKENIZER_FACTOR
    } else if name.starts_with("claude") || name.contains("anthropic") {
        CLAUDE_FACTOR
    } else if (name.starts_with("gpt-4")
        && !name.starts_with("gpt-4o")
        && !name.starts_with("gpt-4."))
        || name.starts_with("gpt-3.5")
    {
        // cl100k_base models: cl100k counts code and non-English text ~5–10 % higher.
        1.10
    } else if name.starts_with("gemini") || name.starts_with("gemma") {
        // SentencePiece vocabularies; not measured here, set conservatively.
        1.20
    } else if name.starts_with("deepseek")
        || name.starts_with("qwen")
        || name.starts_with("glm")
        || name.starts_with("kimi")
    {
        1.15
    } else {
        1.0
    }
}

/// The usage an API reported for an assistant message, in any of the shapes the SDKs use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens billed as input (all of them: uncached + cache read + cache creation).
    pub input: u64,
    /// Tokens of the reply itself, which is part of the next request's input.
    pub output: u64,
}

impl Usage {
    /// Reads Anthropic (`input_tokens`, `cache_read_input_tokens`,
    /// `cache_creation_input_tokens`, `output_tokens`), OpenAI (`prompt_tokens`,
    /// `completion_tokens`), AI SDK (`inputTokens`, `outputTokens`) and pi (`input`,
    /// `cacheRead`, `cacheWrite`, `output`) usage objects. `None` when none of them matches.
    pub fn from_json(value: &Value) -> Option<Usage> {
        let object = value.as_object()?;
        let get = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_f64)
                .filter(|n| n.is_finite() && *n >= 0.0)
                .map(|n| n as u64)
        };
        let sum = |keys: &[&str]| -> Option<u64> {
            let values: Vec<u64> = keys.iter().filter_map(|k| get(k)).collect();
            (!values.is_empty()).then(|| values.iter().sum())
        };
        let (input, output) = if let Some(input) = sum(&[
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]) {
            (input, get("output_tokens").unwrap_or(0))
        } else if let Some(input) = get("prompt_tokens") {
            (input, get("completion_tokens").unwrap_or(0))
        } else if object.contains_key("cacheReadInputTokens")
            || object.contains_key("cacheWriteInputTokens")
        {
            // Bedrock Converse's TokenUsage: like Anthropic's, inputTokens leaves out what was
            // read from or written to the prompt cache.
            let input = sum(&[
                "inputTokens",
                "cacheReadInputTokens",
                "cacheWriteInputTokens",
            ])
            .unwrap_or(0);
            (input, get("outputTokens").unwrap_or(0))
        } else if let Some(input) = get("inputTokens") {
            // The AI SDK's inputTokens already include cached input tokens.
            (input, get("outputTokens").unwrap_or(0))
        } else if let Some(input) = sum(&["promptTokenCount", "toolUsePromptTokenCount"]) {
            // Gemini's usageMetadata: promptTokenCount includes the cached content; the
            // thoughts (thoughtsTokenCount) are not sent back, so only the candidates count as
            // what the next request carries.
            (input, get("candidatesTokenCount").unwrap_or(0))
        } else if let Some(input) = sum(&["input", "cacheRead", "cacheWrite"]) {
            (input, get("output").unwrap_or(0))
        } else {
            return None;
        };
        Some(Usage { input, output })
    }

    /// Everything up to and including the reply, as billed.
    pub fn context_tokens(&self) -> u64 {
        self.input + self.output
    }
}

/// What a `Compactor` learned about this conversation: billed ≈ offset + slope × raw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    /// The first and latest (raw, billed) observations.
    pub first: Option<(u64, u64)>,
    pub latest: Option<(u64, u64)>,
    /// How many usage reports were observed.
    pub samples: u32,
    /// Billed tokens per raw token at least, learned from a context-overflow error: the API
    /// refused a request of this many raw tokens as too long, so no estimate may again be
    /// lower than what it must have billed (SPEC §4.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<f64>,
    /// The most tokens a prompt may have on this model, as its API stated it when it refused a
    /// request (the maximum, less the output that request reserved), or as the session store
    /// kept it from an earlier refusal. The threshold and the tail budget are taken from the
    /// smaller of this and the configured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Billed tokens per counted token, learnt from usage by an earlier conversation on the same
    /// model (the session store): used until this conversation's own usage gives a slope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
}

/// The range a learnt factor must be in to be used (the slope's clamp is 0.8–3.0).
pub const MIN_FACTOR: f64 = 0.8;
pub const MAX_FACTOR: f64 = 3.0;

/// Below this much raw growth between observations the slope is too noisy to use.
const MIN_SLOPE_SPAN: u64 = 2_000;

/// Growth since the last usage report is extrapolated with the learned slope plus this margin.
/// The billed-per-token slope drifts upwards as a session goes on (in the real sessions from
/// ≈1.2 over the first half to ≈1.37 over the second), and a late trigger costs a failed
/// request while an early one costs a slightly earlier summary.
pub const EXTRAPOLATION_MARGIN: f64 = 1.15;

impl Calibration {
    /// Records that `raw` tokens (messages up to the reported assistant message, plus system
    /// and tools) were billed as `billed`.
    pub fn observe(&mut self, raw: u64, billed: u64) {
        if raw == 0 || billed == 0 {
            return;
        }
        match self.latest {
            // A compaction shrank the conversation: start over, the old line no longer holds.
            Some((latest_raw, _)) if raw < latest_raw => {
                self.first = Some((raw, billed));
            }
            None => self.first = Some((raw, billed)),
            _ => {}
        }
        self.latest = Some((raw, billed));
        self.samples += 1;
    }

    /// Records that a request of `raw` tokens (messages + system + tools) was refused as too
    /// long: it was billed at least `billed` (the number the error gave, else the window + 1).
    pub fn observe_overflow(&mut self, raw: u64, billed: u64) {
        if raw == 0 || billed == 0 {
            return;
        }
        let ratio = billed as f64 / raw as f64;
        self.floor = Some(self.floor.map_or(ratio, |f| f.max(ratio)));
    }

    /// The billed-per-raw slope, when enough growth was observed.
    pub fn slope(&self) -> Option<f64> {
        let (first, latest) = (self.first?, self.latest?);
        if latest.0 >= first.0 + MIN_SLOPE_SPAN && latest.1 > first.1 {
            Some(((latest.1 - first.1) as f64 / (latest.0 - first.0) as f64).clamp(0.8, 3.0))
        } else {
            None
        }
    }

    /// The billed ratio of the latest observation.
    pub fn ratio(&self) -> Option<f64> {
        let (raw, billed) = self.latest?;
        Some(billed as f64 / raw as f64)
    }

    /// Records that the API refused a request and stated that a prompt may have at most
    /// `window` tokens: the latest statement stands (a server restarted with another context
    /// size says so in its next refusal).
    pub fn observe_window(&mut self, window: u64) {
        if window > 0 {
            self.window = Some(window);
        }
    }

    /// The learnt factor, when it is a usable one.
    pub fn learnt_factor(&self) -> Option<f64> {
        self.factor
            .filter(|f| f.is_finite() && (MIN_FACTOR..=MAX_FACTOR).contains(f))
    }

    /// The estimate for `raw` tokens, if anything was learned.
    pub fn estimate(&self, raw: u64, fallback_slope: f64) -> Option<u64> {
        let (latest_raw, latest_billed) = self.latest?;
        let slope = self.slope().unwrap_or(fallback_slope) * EXTRAPOLATION_MARGIN;
        let estimate = latest_billed as f64 + slope * (raw as f64 - latest_raw as f64);
        Some(estimate.max(raw as f64).ceil() as u64)
    }
}

/// The numbers behind a trigger decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Measure {
    /// The exact tokenizer count: messages + system + tools.
    pub raw_tokens: u64,
    /// The estimate the trigger compares with the threshold.
    pub tokens: u64,
    pub source: EstimateSource,
    /// The factor applied to raw counts (1 for raw).
    pub factor: f64,
    /// `contextTokenLimit × thresholdRatio`.
    pub threshold: u64,
}

impl Measure {
    pub fn reached(&self) -> bool {
        self.tokens >= self.threshold
    }
}

/// What the estimate is computed from.
#[derive(Debug, Clone, Copy, Default)]
pub struct TriggerInput {
    /// Raw tokens of all messages.
    pub message_tokens: u64,
    /// Raw tokens of the messages after the last assistant message (`None`: no assistant
    /// message in the list).
    pub tokens_after_last_assistant: Option<u64>,
    /// Raw tokens of `system` + `tools`.
    pub extra_tokens: u64,
}

/// Estimates the tokens the API will bill for the next request.
pub fn measure(
    input: TriggerInput,
    threshold: u64,
    usage: Option<Usage>,
    model: Option<&str>,
    calibration: Option<&Calibration>,
) -> Measure {
    let measure = estimate(input, threshold, usage, model, calibration);
    // After a context-overflow error nothing may be estimated below what that request proved.
    match calibration.and_then(|c| c.floor) {
        Some(floor) if (measure.raw_tokens as f64 * floor).ceil() as u64 > measure.tokens => {
            Measure {
                tokens: (measure.raw_tokens as f64 * floor).ceil() as u64,
                source: EstimateSource::Calibration,
                factor: measure.factor.max(floor),
                ..measure
            }
        }
        _ => measure,
    }
}

fn estimate(
    input: TriggerInput,
    threshold: u64,
    usage: Option<Usage>,
    model: Option<&str>,
    calibration: Option<&Calibration>,
) -> Measure {
    let raw = input.message_tokens + input.extra_tokens;
    let model_factor = model.map(model_factor);
    // Only a slope is trusted: a single ratio early in a session is dominated by the system
    // prompt and tools the caller may not have passed (17× on the first request of a real
    // session), and would wildly overestimate new messages.
    let learned = calibration.and_then(Calibration::slope);
    // A factor an earlier conversation on this model learnt stands before the family's.
    let learnt = calibration.and_then(Calibration::learnt_factor);
    let model_factor = learnt.or(model_factor);
    let scale = learned.or(model_factor).unwrap_or(1.0);

    if let (Some(usage), Some(after)) = (usage, input.tokens_after_last_assistant) {
        // What the reply's usage does not cover is scaled like the rest of the conversation;
        // the usage itself tells the ratio when nothing better is known.
        let covered = raw - after;
        let implied = if covered > 0 {
            usage.context_tokens() as f64 / covered as f64
        } else {
            1.0
        };
        let after_scale = learned
            .or(model_factor)
            .unwrap_or_else(|| implied.clamp(1.0, 1.5))
            .max(1.0);
        let estimate = usage.context_tokens() + (after as f64 * after_scale).ceil() as u64;
        return Measure {
            raw_tokens: raw,
            tokens: estimate.max(raw),
            source: EstimateSource::Usage,
            factor: after_scale,
            threshold,
        };
    }
    if let Some(estimate) = calibration.and_then(|c| c.estimate(raw, model_factor.unwrap_or(1.0))) {
        return Measure {
            raw_tokens: raw,
            tokens: estimate,
            source: EstimateSource::Calibration,
            factor: scale,
            threshold,
        };
    }
    if let Some(factor) = learnt {
        return Measure {
            raw_tokens: raw,
            tokens: ((raw as f64 * factor).ceil() as u64).max(raw),
            source: EstimateSource::Learnt,
            factor,
            threshold,
        };
    }
    if let Some(factor) = model_factor.filter(|f| *f != 1.0) {
        return Measure {
            raw_tokens: raw,
            tokens: (raw as f64 * factor).ceil() as u64,
            source: EstimateSource::Model,
            factor,
            threshold,
        };
    }
    Measure {
        raw_tokens: raw,
        tokens: raw,
        source: EstimateSource::Raw,
        factor: 1.0,
        threshold,
    }
}

/// What made a compaction run (seeds 002/004: token, message-count and tool-output triggers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// The token estimate reached the threshold.
    Tokens,
    /// There were more messages than `maxMessages`.
    Messages,
    /// The tool results' text exceeded `maxToolOutputBytes` (UTF-8 bytes).
    ToolOutput,
    /// Nothing fired, but the caller asked for it (`force`).
    Force,
}

impl TriggerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Tokens => "tokens",
            TriggerKind::Messages => "messages",
            TriggerKind::ToolOutput => "tool_output",
            TriggerKind::Force => "force",
        }
    }
}

/// The UTF-8 bytes of the tool results a message carries: the text of each result (strings and
/// `text` blocks; other blocks such as images count as their short `[type]` label, since the
/// trigger is about tool *output* piling up, which images do not do in tokens).
pub fn tool_output_bytes(message: &Value) -> usize {
    crate::model::message::tool_results(message)
        .iter()
        .map(|result| crate::model::message::tool_result_text(result.content).len())
        .sum()
}

/// Index of the last assistant message.
pub fn last_assistant_index(messages: &[Value]) -> Option<usize> {
    messages.iter().rposition(|m| {
        crate::model::message::role_of(m) == Some(crate::model::message::Role::Assistant)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_shapes_of_every_sdk_are_read() {
        let anthropic = json!({"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 7});
        assert_eq!(
            Usage::from_json(&anthropic),
            Some(Usage {
                input: 115,
                output: 7
            })
        );
        let openai = json!({"prompt_tokens": 50, "completion_tokens": 3, "total_tokens": 53});
        assert_eq!(
            Usage::from_json(&openai),
            Some(Usage {
                input: 50,
                output: 3
            })
        );
        let ai_sdk = json!({"inputTokens": 40, "outputTokens": 2, "totalTokens": 42});
        assert_eq!(
            Usage::from_json(&ai_sdk),
            Some(Usage {
                input: 40,
                output: 2
            })
        );
        let pi = json!({"input": 1, "cacheRead": 2, "cacheWrite": 3, "output": 4});
        assert_eq!(
            Usage::from_json(&pi),
            Some(Usage {
                input: 6,
                output: 4
            })
        );
        let bedrock = json!({"inputTokens": 12, "outputTokens": 3, "totalTokens": 515,
            "cacheReadInputTokens": 400, "cacheWriteInputTokens": 100});
        assert_eq!(
            Usage::from_json(&bedrock),
            Some(Usage {
                input: 512,
                output: 3
            })
        );
        let gemini = json!({"promptTokenCount": 900, "cachedContentTokenCount": 800,
            "candidatesTokenCount": 20, "thoughtsTokenCount": 300, "totalTokenCount": 1220});
        assert_eq!(
            Usage::from_json(&gemini),
            Some(Usage {
                input: 900,
                output: 20
            })
        );
        assert_eq!(Usage::from_json(&json!({"foo": 1})), None);
    }

    #[test]
    fn without_usage_or_model_the_raw_count_stands() {
        let m = measure(
            TriggerInput {
                message_tokens: 100,
                tokens_after_last_assistant: Some(10),
                extra_tokens: 5,
            },
            200,
            None,
            None,
            None,
        );
        assert_eq!((m.tokens, m.source), (105, EstimateSource::Raw));
        let m = measure(
            TriggerInput {
                message_tokens: 100,
                ..Default::default()
            },
            200,
            None,
            Some("gpt-4o"),
            None,
        );
        assert_eq!((m.tokens, m.source), (100, EstimateSource::Raw));
    }

    #[test]
    fn claude_models_are_scaled() {
        let m = measure(
            TriggerInput {
                message_tokens: 1000,
                ..Default::default()
            },
            2000,
            None,
            Some("claude-sonnet-4-5"),
            None,
        );
        assert_eq!((m.tokens, m.source), (1350, EstimateSource::Model));
    }

    #[test]
    fn usage_covers_up_to_the_last_assistant_message() {
        let usage = Usage {
            input: 1000,
            output: 50,
        };
        let m = measure(
            TriggerInput {
                message_tokens: 900,
                tokens_after_last_assistant: Some(100),
                extra_tokens: 0,
            },
            5000,
            Some(usage),
            Some("claude-opus-4-5"),
            None,
        );
        assert_eq!(m.source, EstimateSource::Usage);
        assert_eq!(m.tokens, 1050 + 135);
        // Without a model the usage's own ratio scales the rest.
        let m = measure(
            TriggerInput {
                message_tokens: 900,
                tokens_after_last_assistant: Some(100),
                extra_tokens: 0,
            },
            5000,
            Some(usage),
            None,
            None,
        );
        assert_eq!(m.tokens, 1050 + (100.0f64 * 1050.0 / 800.0).ceil() as u64);
        // No assistant message: the usage cannot be placed and is ignored.
        let m = measure(
            TriggerInput {
                message_tokens: 900,
                tokens_after_last_assistant: None,
                extra_tokens: 0,
            },
            5000,
            Some(usage),
            None,
            None,
        );
        assert_eq!(m.source, EstimateSource::Raw);
    }

    #[test]
    fn calibration_learns_a_line_and_resets_after_compaction() {
        let mut c = Calibration::default();
        c.observe(10_000, 15_000);
        assert_eq!(c.slope(), None);
        assert_eq!(c.estimate(11_000, 1.0), Some(16_150));
        c.observe(20_000, 28_000);
        assert_eq!(c.slope(), Some(1.3));
        assert_eq!(c.estimate(30_000, 1.0), Some(28_000 + 14_950));
        c.observe(5_000, 9_000);
        assert_eq!(c.first, Some((5_000, 9_000)));
        assert_eq!(c.slope(), None);
    }

    #[test]
    fn the_families_with_the_newer_tokenizer_have_their_factor() {
        for name in [
            "claude-opus-4-7",
            "claude-opus-4-8-20260901",
            "anthropic/claude-opus-4-7",
            "claude-sonnet-5",
            "claude-opus-5-1",
            "claude-haiku-5-20270101",
            "claude-5-sonnet",
            "claude-sonnet-6",
        ] {
            assert_eq!(model_factor(name), CLAUDE_NEW_TOKENIZER_FACTOR, "{name}");
        }
        for name in [
            "claude-opus-4-6",
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-5",
            "claude-sonnet-4-7",
            "claude-3-7-sonnet-20250219",
            "claude-haiku-4-5",
        ] {
            assert_eq!(model_factor(name), CLAUDE_FACTOR, "{name}");
        }
    }

    #[test]
    fn a_learnt_factor_stands_before_the_family_and_after_usage() {
        let input = TriggerInput {
            message_tokens: 10_000,
            tokens_after_last_assistant: Some(1_000),
            extra_tokens: 0,
        };
        let learnt = Calibration {
            factor: Some(1.55),
            ..Default::default()
        };
        let m = measure(input, 50_000, None, Some("local-model"), Some(&learnt));
        assert_eq!(
            (m.tokens, m.source, m.factor),
            (15_500, EstimateSource::Learnt, 1.55)
        );
        let m = measure(
            input,
            50_000,
            None,
            Some("claude-sonnet-4-5"),
            Some(&learnt),
        );
        assert_eq!(m.source, EstimateSource::Learnt);
        // Usage stands first; the learnt factor scales what it does not cover.
        let usage = Usage {
            input: 12_000,
            output: 100,
        };
        let m = measure(input, 50_000, Some(usage), None, Some(&learnt));
        assert_eq!(m.source, EstimateSource::Usage);
        assert_eq!(m.tokens, 12_100 + 1_550);
        // An out-of-range factor is not used.
        let wild = Calibration {
            factor: Some(40.0),
            ..Default::default()
        };
        let m = measure(input, 50_000, None, None, Some(&wild));
        assert_eq!(m.source, EstimateSource::Raw);
        // The window is the latest one stated.
        let mut c = Calibration::default();
        c.observe_window(16_384);
        c.observe_window(8_192);
        assert_eq!(c.window, Some(8_192));
        c.observe_window(0);
        assert_eq!(c.window, Some(8_192));
    }
}
