//! The options of a compaction ([`CompactOptions`], every field with a default), and reading
//! them from the JSON object a JavaScript caller passes.
//!
//! Absent or `null` fields keep their defaults (from `CompactOptions::default()`); present
//! fields of the wrong type are errors that name the option. Unknown fields are ignored so
//! callers can pass one options object to several functions.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::archive;
use crate::base::error::ValidationError;
use crate::model::message::type_name;
use crate::plan::offload::Scope;
use crate::plan::partition::TailRules;
use crate::summary::providers::anthropic_compaction::AnthropicCompactionClient;
use crate::plan::selective::SelectiveRules;
use crate::plan::strategy::Strategy;
use crate::plan::thinking::ThinkingPolicy;
use crate::model::tokens;
use crate::model::tokens::Encoding;
use crate::model::trigger::Usage;
use crate::model::trigger::{self, Calibration, Measure, TriggerInput, TriggerKind};

/// Which prompt asks for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptStyle {
    /// Our structured prompt with fixed section headers (F-004). The default.
    #[default]
    Structured,
    /// The Agent-SDK seed's continuation-summary prompt.
    Continuation,
}

/// Options of a compaction. Every field has a default (`CompactOptions::default()`), so zero
/// configuration works.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// The model's context window in tokens. Default 200 000 (PRD `CONTEXT_TOKEN_LIMIT`).
    pub context_token_limit: usize,
    /// Compact when tokens ≥ limit × this. Default 0.92 (PRD `COMPACT_THRESHOLD_RATIO`).
    pub threshold_ratio: f64,
    /// The tail keeps about limit × this many tokens. Default 0.10 (PRD `TAIL_RETENTION_RATIO`).
    pub tail_retention_ratio: f64,
    /// Retries after the first summary attempt. Default 2 (PRD `COMPACT_MAX_RETRIES`).
    pub max_retries: u32,
    /// The first retry backoff (doubling, ×0.75–1 jitter). Default 500 ms.
    pub retry_base_delay: Duration,
    /// The tokenizer. Default `o200k_base`.
    pub encoding: Encoding,
    /// The summary model (passed to the summarizer).
    pub model: Option<String>,
    /// The output budget of the summary in tokens. Default 4096.
    pub summary_max_tokens: u32,
    /// The summary model's context window; by default from the model table.
    pub summary_context_tokens: Option<usize>,
    /// Appended to the summary instructions.
    pub custom_instructions: Option<String>,
    /// Which prompt to use. Default structured.
    pub prompt_style: PromptStyle,
    /// Where archives go. Default `./.context-compact`.
    pub output_dir: PathBuf,
    /// The session whose archives these are. Default `default`.
    pub session_id: String,
    /// Compact even below the threshold. Default false.
    pub force: bool,
    /// Skip compaction (with `ARCHIVE_FAILED`) when the archive cannot be written. Default false.
    pub require_archive: bool,
    /// Anthropic's top-level system prompt: counted into the trigger, never changed.
    pub system: Option<Value>,
    /// Tool definitions: counted into the trigger, never changed.
    pub tools: Option<Value>,
    /// Keep at least this many user turns in the tail. Default 0.
    pub keep_recent_turns: usize,
    /// The model the agent talks to: scales the trigger's estimate by its family's factor
    /// and gives `context_token_limit` when that is not set.
    pub agent_model: Option<String>,
    /// The usage the API reported for the last assistant message.
    pub usage: Option<Usage>,
    /// What a `Compactor` learned from earlier usage.
    pub calibration: Option<Calibration>,
    /// How to compact. Default [`Strategy::Summary`].
    pub strategy: Strategy,
    /// The rules of [`Strategy::Selective`]. Default: the agent-SDK seed's table.
    pub selective_rules: SelectiveRules,
    /// How many recent messages `keep-recent` / `keep-system-and-recent` keep. Default 20
    /// (SanBot's `keepRecentMessages`).
    pub keep_recent_messages: usize,
    /// `compression.enabled` (type seed): false never compacts, whatever else is set.
    /// Default true.
    pub enabled: bool,
    /// `compression.threshold`: an absolute token threshold replacing limit × ratio.
    pub threshold_override: Option<usize>,
    /// `compression.targetTokens`: the tail budget of a summary and the `sliding-window`
    /// window, replacing limit × tailRetentionRatio.
    pub target_tokens: Option<usize>,
    /// Also compact when there are more messages than this (SanBot). Default off.
    pub max_messages: Option<usize>,
    /// Also compact when the tool results' text exceeds this many UTF-8 bytes (SanBot).
    /// Default off.
    pub max_tool_output_bytes: Option<usize>,
    /// Cap on the length of the model-written summary, in characters (Pi Agent seed's
    /// `summary_max_length`); the ledger is kept whole. Default none.
    pub summary_max_chars: Option<usize>,
    /// Append key information of the compacted messages to `<outputDir>/<sessionId>/extracted/`
    /// (SanBot). Default false.
    pub extract_memory: bool,
    /// What the fit step may shorten when the kept messages alone keep the result over the
    /// threshold (SPEC §4.7). Default: tool results.
    pub offload: Scope,
    /// What happens to the thinking of kept assistant turns (SPEC §3). Default: auto.
    pub thinking: ThinkingPolicy,
    /// The message format (`format` option): `None` detects it from the list.
    pub format: Option<crate::formats::Format>,
    /// Anthropic's on-demand compaction as the summary writer (`provider:
    /// 'anthropic-compaction'`); made by the binding from the provider options.
    pub native_compaction: Option<Arc<AnthropicCompactionClient>>,
    /// Models on which on-demand compaction turned out to be unavailable: not tried again (a
    /// `Compactor` passes what it learned).
    pub compaction_unavailable_models: Vec<String>,
    /// Where archives go when `outputDir` is an object-store URL (then `output_dir` is that
    /// URL, for messages), or the caller's own store (the binding's `archiveStore`).
    pub archive_store: Option<Arc<crate::archive::store::ArchiveStore>>,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            context_token_limit: crate::CONTEXT_TOKEN_LIMIT,
            threshold_ratio: crate::COMPACT_THRESHOLD_RATIO,
            tail_retention_ratio: crate::TAIL_RETENTION_RATIO,
            max_retries: crate::COMPACT_MAX_RETRIES,
            retry_base_delay: Duration::from_millis(500),
            encoding: Encoding::O200kBase,
            model: None,
            summary_max_tokens: 4096,
            summary_context_tokens: None,
            custom_instructions: None,
            prompt_style: PromptStyle::Structured,
            output_dir: PathBuf::from(archive::DEFAULT_OUTPUT_DIR),
            session_id: archive::DEFAULT_SESSION_ID.to_string(),
            force: false,
            require_archive: false,
            system: None,
            tools: None,
            keep_recent_turns: 0,
            agent_model: None,
            usage: None,
            calibration: None,
            strategy: Strategy::Summary,
            selective_rules: SelectiveRules::default(),
            keep_recent_messages: 20,
            enabled: true,
            threshold_override: None,
            target_tokens: None,
            max_messages: None,
            max_tool_output_bytes: None,
            summary_max_chars: None,
            extract_memory: false,
            offload: Scope::ToolResults,
            thinking: ThinkingPolicy::Auto,
            format: None,
            native_compaction: None,
            compaction_unavailable_models: Vec::new(),
            archive_store: None,
        }
    }
}

/// `limit × ratio` as an exact token count: the product rounded up, after snapping away
/// floating-point noise so that 200 000 × 0.92 is 184 000, not 184 000.000…03.
pub fn token_budget(limit: usize, ratio: f64) -> usize {
    let product = limit as f64 * ratio;
    let snapped = product.round();
    if (product - snapped).abs() < 1e-6 {
        snapped as usize
    } else {
        product.ceil() as usize
    }
}

impl CompactOptions {
    /// Checks ranges; called before any work.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.context_token_limit == 0 {
            return Err(ValidationError::argument(
                "contextTokenLimit",
                "must be a positive integer",
            ));
        }
        if !(self.threshold_ratio > 0.0 && self.threshold_ratio.is_finite()) {
            return Err(ValidationError::argument(
                "thresholdRatio",
                "must be a number greater than 0",
            ));
        }
        if !(0.0..=1.0).contains(&self.tail_retention_ratio) {
            return Err(ValidationError::argument(
                "tailRetentionRatio",
                "must be between 0 and 1",
            ));
        }
        if self.summary_max_tokens == 0 {
            return Err(ValidationError::argument(
                "summaryMaxTokens",
                "must be a positive integer",
            ));
        }
        if self.keep_recent_messages == 0 {
            return Err(ValidationError::argument(
                "keepRecentMessages",
                "must be a positive integer",
            ));
        }
        if self.summary_max_chars == Some(0) {
            return Err(ValidationError::argument(
                "summaryMaxChars",
                "must be a positive integer",
            ));
        }
        if self.threshold_override == Some(0) {
            return Err(ValidationError::argument(
                "compression.threshold",
                "must be a positive integer",
            ));
        }
        archive::validate_session_id(&self.session_id)?;
        Ok(())
    }

    /// The trigger threshold in tokens (F-002): `contextTokenLimit × thresholdRatio`, or
    /// `compression.threshold` when given.
    pub fn threshold_tokens(&self) -> usize {
        self.threshold_override
            .unwrap_or_else(|| token_budget(self.context_token_limit, self.threshold_ratio))
    }

    /// The tail budget in tokens (F-003): `contextTokenLimit × tailRetentionRatio`, or
    /// `compression.targetTokens` when given.
    pub fn tail_retention_tokens(&self) -> usize {
        self.target_tokens
            .unwrap_or_else(|| token_budget(self.context_token_limit, self.tail_retention_ratio))
    }

    /// The tail rules of the options.
    pub fn tail_rules(&self) -> TailRules {
        TailRules {
            keep_recent_turns: self.keep_recent_turns,
        }
    }

    /// What fires a compaction, in order: the token estimate, `maxMessages`,
    /// `maxToolOutputBytes`, then `force`. `None`: nothing (or `compression.enabled` is false).
    /// `tool_output_bytes` is only looked at when `maxToolOutputBytes` is set.
    pub fn fired(
        &self,
        measure: &Measure,
        message_count: usize,
        tool_output_bytes: usize,
    ) -> Option<TriggerKind> {
        if !self.enabled || message_count == 0 {
            None
        } else if measure.reached() {
            Some(TriggerKind::Tokens)
        } else if self.max_messages.is_some_and(|max| message_count > max) {
            Some(TriggerKind::Messages)
        } else if self
            .max_tool_output_bytes
            .is_some_and(|max| tool_output_bytes > max)
        {
            Some(TriggerKind::ToolOutput)
        } else if self.force {
            Some(TriggerKind::Force)
        } else {
            None
        }
    }

    /// The model whose billing the trigger estimates: `agent_model`, else `model`.
    pub fn trigger_model(&self) -> Option<&str> {
        self.agent_model.as_deref().or(self.model.as_deref())
    }

    /// The trigger's estimate for `messages` with their token `counts` (SPEC §4.2).
    pub fn measure(&self, messages: &[Value], counts: &[usize]) -> Measure {
        let after = trigger::last_assistant_index(messages)
            .map(|a| counts[a + 1..].iter().sum::<usize>() as u64);
        trigger::measure(
            TriggerInput {
                message_tokens: counts.iter().sum::<usize>() as u64,
                tokens_after_last_assistant: after,
                extra_tokens: self.extra_tokens() as u64,
            },
            self.threshold_tokens() as u64,
            self.usage,
            self.trigger_model(),
            self.calibration.as_ref(),
        )
    }

    /// Tokens of the top-level `system` and `tools` options.
    pub fn extra_tokens(&self) -> usize {
        self.system
            .as_ref()
            .map_or(0, |s| tokens::count_system(self.encoding, s))
            + self
                .tools
                .as_ref()
                .map_or(0, |t| tokens::count_tools(self.encoding, t))
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the options from JSON

fn field<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.get(name).filter(|v| !v.is_null())
}

fn wrong(name: &str, expected: &str, got: &Value) -> ValidationError {
    ValidationError::argument(
        &format!("options.{name}"),
        format!("expected {expected}, got {}", describe(got)),
    )
}

fn describe(value: &Value) -> String {
    match value {
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.len() <= 40 => format!("string {s:?}"),
        other => type_name(other).to_string(),
    }
}

/// A non-negative integer option.
pub fn get_count(map: &Map<String, Value>, name: &str) -> Result<Option<u64>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(value) => {
            let n = value
                .as_f64()
                .ok_or_else(|| wrong(name, "a non-negative integer", value))?;
            if n < 0.0 || n.fract() != 0.0 || !n.is_finite() || n > 9.007_199_254_740_991e15 {
                return Err(wrong(name, "a non-negative integer", value));
            }
            Ok(Some(n as u64))
        }
    }
}

/// A finite number option.
pub fn get_number(map: &Map<String, Value>, name: &str) -> Result<Option<f64>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .filter(|n| n.is_finite())
            .map(Some)
            .ok_or_else(|| wrong(name, "a finite number", value)),
    }
}

/// A string option.
pub fn get_string(map: &Map<String, Value>, name: &str) -> Result<Option<String>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(wrong(name, "a string", other)),
    }
}

/// `storeOptions`: object_store configuration keys to values (strings; numbers and booleans
/// are taken as their text). The values are never echoed in an error: they may be secrets.
pub fn get_store_options(
    map: &Map<String, Value>,
) -> Result<std::collections::BTreeMap<String, String>, ValidationError> {
    let mut out = std::collections::BTreeMap::new();
    match field(map, "storeOptions") {
        None | Some(Value::Null) => {}
        Some(Value::Object(entries)) => {
            for (key, value) in entries {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Bool(b) => b.to_string(),
                    Value::Number(n) => n.to_string(),
                    _ => {
                        return Err(ValidationError::argument(
                            &format!("options.storeOptions.{key}"),
                            "must be a string",
                        ))
                    }
                };
                out.insert(key.clone(), text);
            }
        }
        Some(other) => {
            return Err(ValidationError::argument(
                "options.storeOptions",
                format!("expected an object of strings, got {}", type_name(other)),
            ))
        }
    }
    Ok(out)
}

/// A boolean option.
pub fn get_bool(map: &Map<String, Value>, name: &str) -> Result<Option<bool>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(wrong(name, "a boolean", other)),
    }
}

/// The options object itself: absent/`null` means all defaults.
pub fn as_options_map(value: &Value) -> Result<Map<String, Value>, ValidationError> {
    match value {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map.clone()),
        other => Err(ValidationError::argument(
            "options",
            format!("expected an object, got {}", type_name(other)),
        )),
    }
}

/// Parses `encoding`.
pub fn get_encoding(map: &Map<String, Value>) -> Result<Option<Encoding>, ValidationError> {
    match get_string(map, "encoding")? {
        None => Ok(None),
        Some(name) => Encoding::parse(&name).map(Some).ok_or_else(|| {
            ValidationError::argument(
                "options.encoding",
                format!("unknown encoding {name:?} (expected \"o200k_base\" or \"cl100k_base\")"),
            )
        }),
    }
}

impl CompactOptions {
    /// Reads options from a JSON object (see the module docs).
    pub fn from_json(value: &Value) -> Result<CompactOptions, ValidationError> {
        let map = as_options_map(value)?;
        let mut o = CompactOptions::default();
        if let Some(v) = get_count(&map, "contextTokenLimit")? {
            o.context_token_limit = v as usize;
        }
        if let Some(v) = get_number(&map, "thresholdRatio")? {
            o.threshold_ratio = v;
        }
        if let Some(v) = get_number(&map, "tailRetentionRatio")? {
            o.tail_retention_ratio = v;
        }
        if let Some(v) = get_count(&map, "maxRetries")? {
            o.max_retries = v.min(100) as u32;
        }
        if let Some(v) = get_count(&map, "retryBaseDelayMs")? {
            o.retry_base_delay = Duration::from_millis(v);
        }
        if let Some(v) = get_encoding(&map)? {
            o.encoding = v;
        }
        o.model = get_string(&map, "model")?;
        if let Some(v) = get_count(&map, "summaryMaxTokens")? {
            o.summary_max_tokens = v.min(u32::MAX as u64) as u32;
        }
        o.summary_context_tokens = get_count(&map, "summaryContextTokens")?.map(|v| v as usize);
        o.custom_instructions = get_string(&map, "customInstructions")?;
        if let Some(style) = get_string(&map, "promptStyle")? {
            o.prompt_style = match style.as_str() {
                "structured" => PromptStyle::Structured,
                "continuation" => PromptStyle::Continuation,
                other => {
                    return Err(ValidationError::argument(
                        "options.promptStyle",
                        format!(
                            "unknown style {other:?} (expected \"structured\" or \"continuation\")"
                        ),
                    ))
                }
            };
        }
        if let Some(dir) = get_string(&map, "outputDir")? {
            if dir.is_empty() {
                return Err(ValidationError::argument(
                    "options.outputDir",
                    "must not be empty",
                ));
            }
            if crate::archive::store::is_store_url(&dir) {
                let retry = crate::summary::summarize::RetryPolicy {
                    max_retries: o.max_retries,
                    base_delay: o.retry_base_delay,
                };
                let store = crate::archive::store::ArchiveStore::open(
                    &dir,
                    &get_store_options(&map)?,
                    retry,
                    "options.outputDir",
                )?;
                o.archive_store = Some(Arc::new(store));
            }
            o.output_dir = PathBuf::from(dir);
        }
        if o.archive_store.is_none() && field(&map, "storeOptions").is_some() {
            return Err(ValidationError::argument(
                "options.storeOptions",
                "only applies when outputDir is an object-store URL (s3://, gs://, az://, file://)",
            ));
        }
        if let Some(id) = get_string(&map, "sessionId")? {
            o.session_id = id;
        }
        if let Some(v) = get_bool(&map, "force")? {
            o.force = v;
        }
        if let Some(v) = get_bool(&map, "requireArchive")? {
            o.require_archive = v;
        }
        match field(&map, "system") {
            None => {}
            Some(v @ (Value::String(_) | Value::Array(_))) => o.system = Some(v.clone()),
            Some(other) => {
                return Err(wrong(
                    "system",
                    "a string or an array of text blocks",
                    other,
                ))
            }
        }
        match field(&map, "tools") {
            None => {}
            Some(v @ Value::Array(_)) => o.tools = Some(v.clone()),
            Some(other) => return Err(wrong("tools", "an array of tool definitions", other)),
        }
        if let Some(v) = get_count(&map, "keepRecentTurns")? {
            o.keep_recent_turns = v as usize;
        }
        o.agent_model = get_string(&map, "agentModel")?;
        if get_count(&map, "contextTokenLimit")?.is_none() {
            if let Some(window) = o
                .agent_model
                .as_deref()
                .and_then(crate::model::models::context_window)
            {
                o.context_token_limit = window;
            }
        }
        match field(&map, "usage") {
            None => {}
            Some(value) => {
                o.usage = Some(Usage::from_json(value).ok_or_else(|| {
                    wrong(
                        "usage",
                        "an API usage object (input_tokens/output_tokens, prompt_tokens/completion_tokens or inputTokens/outputTokens)",
                        value,
                    )
                })?)
            }
        }
        if let Some(name) = get_string(&map, "strategy")? {
            o.strategy = Strategy::parse(&name).ok_or_else(|| {
                ValidationError::argument(
                    "options.strategy",
                    format!(
                        "unknown strategy {name:?} (expected one of {}, or an object with a compress method)",
                        Strategy::NAMES.join(", ")
                    ),
                )
            })?;
        }
        if let Some(rules) = field(&map, "selectiveRules") {
            o.selective_rules = SelectiveRules::from_json(rules)?;
        }
        if let Some(v) = get_count(&map, "keepRecentMessages")? {
            o.keep_recent_messages = v as usize;
        }
        o.max_messages = get_count(&map, "maxMessages")?.map(|v| v as usize);
        o.max_tool_output_bytes = get_count(&map, "maxToolOutputBytes")?.map(|v| v as usize);
        o.summary_max_chars = get_count(&map, "summaryMaxChars")?.map(|v| v as usize);
        if let Some(v) = get_bool(&map, "extractMemory")? {
            o.extract_memory = v;
        }
        if let Some(models) = field(&map, "compactionUnavailableModels") {
            o.compaction_unavailable_models = models
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .ok_or_else(|| {
                    wrong(
                        "compactionUnavailableModels",
                        "an array of model names",
                        models,
                    )
                })?;
        }
        if let Some(name) = get_string(&map, "thinking")? {
            o.thinking = ThinkingPolicy::parse(&name).ok_or_else(|| {
                ValidationError::argument(
                    "options.thinking",
                    format!("expected 'auto', 'keep' or 'strip', got {name:?}"),
                )
            })?;
        }
        if let Some(name) = get_string(&map, "format")? {
            o.format = crate::formats::Format::parse(&name).ok_or_else(|| {
                ValidationError::argument(
                    "options.format",
                    format!("expected {}, got {name:?}", crate::formats::FORMAT_NAMES),
                )
            })?;
        }
        match field(&map, "offload") {
            None => {}
            // `offload: false` reads as "off", `true` as the default.
            Some(Value::Bool(false)) => o.offload = Scope::Off,
            Some(Value::Bool(true)) => o.offload = Scope::ToolResults,
            Some(Value::String(name)) => {
                o.offload = Scope::parse(name).ok_or_else(|| {
                    ValidationError::argument(
                        "options.offload",
                        format!("expected 'tool-results', 'all', 'off' or a boolean, got {name:?}"),
                    )
                })?
            }
            Some(other) => {
                return Err(wrong(
                    "offload",
                    "'tool-results', 'all', 'off' or a boolean",
                    other,
                ))
            }
        }
        match field(&map, "compression") {
            None => {}
            Some(Value::Object(compression)) => {
                let name = |field: &str| format!("compression.{field}");
                if let Some(v) = get_bool(compression, "enabled")
                    .map_err(|_| wrong(&name("enabled"), "a boolean", &compression["enabled"]))?
                {
                    o.enabled = v;
                }
                o.threshold_override = get_count(compression, "threshold")
                    .map_err(|_| {
                        wrong(
                            &name("threshold"),
                            "a non-negative integer",
                            &compression["threshold"],
                        )
                    })?
                    .map(|v| v as usize);
                o.target_tokens = get_count(compression, "targetTokens")
                    .map_err(|_| {
                        wrong(
                            &name("targetTokens"),
                            "a non-negative integer",
                            &compression["targetTokens"],
                        )
                    })?
                    .map(|v| v as usize);
            }
            Some(other) => {
                return Err(wrong(
                    "compression",
                    "an object { enabled?, threshold?, targetTokens? }",
                    other,
                ))
            }
        }
        o.validate()?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_and_null_fields_keep_defaults() {
        let o = CompactOptions::from_json(&json!({"model": null})).unwrap();
        assert_eq!(o.context_token_limit, 200_000);
        assert_eq!(o.threshold_ratio, 0.92);
        assert_eq!(o.max_retries, 2);
        assert_eq!(o.session_id, "default");
        assert_eq!(o.output_dir, PathBuf::from("./.context-compact"));
        assert!(CompactOptions::from_json(&Value::Null).is_ok());
    }

    #[test]
    fn the_other_seeds_options_are_read() {
        let o = CompactOptions::from_json(&json!({
            "strategy": "keep-system-and-recent",
            "keepRecentMessages": 8,
            "maxMessages": 80,
            "maxToolOutputBytes": 51200,
            "summaryMaxChars": 1000,
            "extractMemory": true,
            "compression": {"enabled": true, "threshold": 6000, "targetTokens": 4000},
            "selectiveRules": {"toolResults": {"strategy": "drop"}}
        }))
        .unwrap();
        assert_eq!(o.strategy, Strategy::KeepSystemAndRecent);
        assert_eq!(o.keep_recent_messages, 8);
        assert_eq!(o.max_messages, Some(80));
        assert_eq!(o.max_tool_output_bytes, Some(51_200));
        assert_eq!(o.summary_max_chars, Some(1000));
        assert!(o.extract_memory);
        assert_eq!(o.threshold_tokens(), 6000);
        assert_eq!(o.tail_retention_tokens(), 4000);
        assert_eq!(o.selective_rules.tool_results, crate::plan::selective::Rule::Drop);
        let e = CompactOptions::from_json(&json!({"strategy": "smart"})).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("options.strategy: unknown strategy"),
            "{e}"
        );
        let e = CompactOptions::from_json(&json!({"compression": {"threshold": -1}})).unwrap_err();
        assert!(
            e.to_string().starts_with("options.compression.threshold"),
            "{e}"
        );
        let o = CompactOptions::from_json(&json!({"compression": {"enabled": false}})).unwrap();
        assert!(!o.enabled);
    }

    #[test]
    fn wrong_types_name_the_option() {
        let e = CompactOptions::from_json(&json!({"contextTokenLimit": "big"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.contextTokenLimit: expected a non-negative integer, got string \"big\""
        );
        let e = CompactOptions::from_json(&json!({"maxRetries": -1})).unwrap_err();
        assert!(e.to_string().starts_with("options.maxRetries"));
        let e = CompactOptions::from_json(&json!({"encoding": "p50k"})).unwrap_err();
        assert!(e.to_string().contains("unknown encoding"));
        let e = CompactOptions::from_json(&json!({"sessionId": "../etc"})).unwrap_err();
        assert!(e.to_string().starts_with("sessionId"));
    }
}
