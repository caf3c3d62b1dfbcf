//! Reading [`CompactOptions`] from the JSON object a JavaScript caller passes.
//!
//! Absent or `null` fields keep their defaults (from `CompactOptions::default()`); present
//! fields of the wrong type are errors that name the option. Unknown fields are ignored so
//! callers can pass one options object to several functions.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::compact::{CompactOptions, PromptStyle};
use crate::error::ValidationError;
use crate::message::type_name;
use crate::selective::SelectiveRules;
use crate::strategy::Strategy;
use crate::tokens::Encoding;
use crate::trigger::Usage;

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
            o.output_dir = PathBuf::from(dir);
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
                .and_then(crate::models::context_window)
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
        assert_eq!(o.selective_rules.tool_results, crate::selective::Rule::Drop);
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
