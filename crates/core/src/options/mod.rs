//! **The options**, declared once: [`CompactOptions`] with its defaults ([`defaults`]), the
//! option table ([`table`]: each option's JSON name, kind, range or names, default and reader),
//! and the reading of the options object a JavaScript caller passes (into [`CompactOptions`],
//! and the provider and selective-rule options into their own structs). It sits below the
//! pipeline, whose steps read the struct.
//!
//! Absent or `null` fields keep their defaults. Every present field is checked one way
//! (SPEC §11): a wrong type, `NaN`, `Infinity`, a fraction where an integer is due, or a value
//! out of the option's documented range is an error naming the option and its range — nothing
//! is silently replaced or capped. Unknown fields are ignored here (so callers can pass one
//! options object to several functions); the JS layer warns about them.
//!
//! JSON has no `NaN` or `Infinity`; the JS layer passes them as `{"__contextCompactNonFinite":
//! "NaN"}` ([`NON_FINITE_KEY`]) so that the error can say what was given.
//!
//! Nothing below this layer reads JSON options: each lower layer takes the values it needs.

pub mod compact;
pub mod defaults;
pub mod held;
pub mod precomputed;
pub mod providers;
pub mod selective;
pub mod table;

use serde_json::{Map, Value};

use crate::base::error::ValidationError;
use crate::model::message::type_name;
use crate::model::tokens::Encoding;
use crate::model::trigger::Usage;

pub use compact::{
    token_budget, CompactOptions, FileReader, LearntFacts, PromptStyle, Rehydrate, SummaryFallback,
    SummaryRequestMode,
};

// ---------------------------------------------------------------------------------------------
// Reading the options from JSON

pub(crate) fn field<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.get(name).filter(|v| !v.is_null())
}

pub(crate) fn wrong(name: &str, expected: &str, got: &Value) -> ValidationError {
    ValidationError::argument(
        &format!("options.{name}"),
        format!("expected {expected}, got {}", describe(got)),
    )
}

pub use crate::base::{non_finite, NON_FINITE_KEY};

fn describe(value: &Value) -> String {
    if let Some(name) = non_finite(value) {
        return name.to_string();
    }
    match value {
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.len() <= 40 => format!("string {s:?}"),
        other => type_name(other).to_string(),
    }
}

/// The largest integer a JavaScript number holds exactly (2^53 − 1).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// The documented ranges of the integer options (index.d.ts says each).
pub mod ranges {
    use std::ops::RangeInclusive;
    /// A token count: a window, a threshold, a budget.
    pub const TOKENS: RangeInclusive<u64> = 1..=1_000_000_000;
    /// A token budget that may be 0 (nothing of it).
    pub const TOKENS_OR_ZERO: RangeInclusive<u64> = 0..=1_000_000_000;
    /// A count of messages or turns.
    pub const MESSAGES: RangeInclusive<u64> = 1..=100_000_000;
    pub const MESSAGES_OR_ZERO: RangeInclusive<u64> = 0..=100_000_000;
    /// `maxRetries`: more than 100 retries is a mistake, never a plan.
    pub const RETRIES: RangeInclusive<u64> = 0..=100;
    /// `retryBaseDelayMs`: at most a minute (the waits double from it).
    pub const RETRY_BASE_DELAY_MS: RangeInclusive<u64> = 0..=60_000;
    /// `timeoutMs`: at most an hour.
    pub const TIMEOUT_MS: RangeInclusive<u64> = 1..=3_600_000;
    /// `summaryMaxTokens`: an output budget.
    pub const OUTPUT_TOKENS: RangeInclusive<u64> = 1..=1_000_000;
    /// `summaryMaxChars`.
    pub const CHARACTERS: RangeInclusive<u64> = 1..=100_000_000;
    /// `maxToolOutputBytes` (0: any tool output fires).
    pub const BYTES: RangeInclusive<u64> = 0..=super::MAX_SAFE_INTEGER;
    /// `rehydrate.maxFiles`.
    pub const FILES: RangeInclusive<u64> = 0..=1_000;
}

pub(crate) fn range_text(range: &std::ops::RangeInclusive<u64>) -> String {
    format!("an integer from {} to {}", range.start(), range.end())
}

/// An integer option within `range` (see [`ranges`]): anything else — another type, `NaN`,
/// `Infinity`, a fraction, a value out of range — is an error naming the option and its range.
pub fn get_int(
    map: &Map<String, Value>,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(value) => int_in(value, name, range).map(Some),
    }
}

/// `value` as an integer within `range`, or the error naming `name` (without `options.`).
pub fn int_in(
    value: &Value,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ValidationError> {
    let n = value
        .as_f64()
        .filter(|n| n.is_finite() && n.fract() == 0.0 && *n >= 0.0 && *n <= MAX_SAFE_INTEGER as f64)
        .map(|n| n as u64)
        .filter(|n| range.contains(n));
    n.ok_or_else(|| wrong(name, &range_text(&range), value))
}

/// A ratio option: a number greater than 0 and at most 1.
pub fn get_ratio(map: &Map<String, Value>, name: &str) -> Result<Option<f64>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .filter(|n| n.is_finite() && *n > 0.0 && *n <= 1.0)
            .map(Some)
            .ok_or_else(|| wrong(name, "a number greater than 0 and at most 1", value)),
    }
}

/// A ratio option that may be 0 (none of it): a number from 0 to 1.
pub fn get_ratio_or_zero(
    map: &Map<String, Value>,
    name: &str,
) -> Result<Option<f64>, ValidationError> {
    match field(map, name) {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .filter(|n| n.is_finite() && (0.0..=1.0).contains(n))
            .map(Some)
            .ok_or_else(|| wrong(name, "a number from 0 to 1", value)),
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

/// Where the archives of a call on an archive (`persistMessages`, `listArchives`,
/// `restoreMessages`, `pruneArchives`, a report, the learnt record) are, when the caller did
/// not hand its own store: `None` for the directory `output_dir`, else the object store of the
/// URL `output_dir` configured with `raw.storeOptions` (which applies to such a URL only).
pub fn store_location(
    output_dir: &str,
    raw: &Map<String, Value>,
) -> Result<Option<crate::archive::store::ArchiveStore>, ValidationError> {
    use crate::archive::store::{is_store_url, ArchiveStore};
    let store_options = get_store_options(raw)?;
    if is_store_url(output_dir) {
        let retry = crate::base::retry::RetryPolicy::default();
        return ArchiveStore::open(output_dir, &store_options, retry, "outputDir").map(Some);
    }
    if raw.get("storeOptions").is_some_and(|v| !v.is_null()) {
        return Err(ValidationError::argument(
            "options.storeOptions",
            "only applies when outputDir is an object-store URL (s3://, gs://, az://, file://)",
        ));
    }
    Ok(None)
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

/// The fields of the usage objects the trigger reads (Anthropic, OpenAI Chat, Bedrock, the AI
/// SDK, Gemini, pi).
const USAGE_FIELDS: &[&str] = &[
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "prompt_tokens",
    "completion_tokens",
    "inputTokens",
    "outputTokens",
    "cacheReadInputTokens",
    "cacheWriteInputTokens",
    "promptTokenCount",
    "toolUsePromptTokenCount",
    "candidatesTokenCount",
    "input",
    "output",
    "cacheRead",
    "cacheWrite",
];

/// `usage`, checked like an option: every token field it holds is an integer from 0 to
/// 1 000 000 000, and it says how many tokens the last request read. Otherwise an error says
/// what is wrong: a usage is never read as some other number of tokens.
pub fn parse_usage(value: &Value) -> Result<Usage, ValidationError> {
    let Some(object) = value.as_object().filter(|_| non_finite(value).is_none()) else {
        return Err(wrong("usage", "an API usage object", value));
    };
    for key in USAGE_FIELDS {
        if let Some(field) = object.get(*key).filter(|v| !v.is_null()) {
            int_in(field, &format!("usage.{key}"), ranges::TOKENS_OR_ZERO)?;
        }
    }
    Usage::from_json(value).ok_or_else(|| {
        wrong(
            "usage",
            "an API usage object that says how many input tokens the last request read (input_tokens, prompt_tokens, inputTokens, promptTokenCount or input)",
            value,
        )
    })
}

/// The first `NaN`/`Infinity` stand-in inside `value` ([`NON_FINITE_KEY`]), with its path.
pub(crate) fn find_non_finite(value: &Value, path: &str) -> Option<(String, String)> {
    if let Some(name) = non_finite(value) {
        return Some((path.to_string(), name.to_string()));
    }
    match value {
        Value::Object(map) => map
            .iter()
            .find_map(|(key, v)| find_non_finite(v, &format!("{path}.{key}"))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_non_finite(v, &format!("{path}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::strategy::Strategy;
    use serde_json::json;
    use std::path::PathBuf;

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
        assert_eq!(
            o.selective_rules.tool_results,
            crate::plan::selective::Rule::Drop
        );
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
    fn every_kind_of_mistake_is_one_error_naming_the_range() {
        let nan = json!({ NON_FINITE_KEY: "NaN" });
        for (value, shown) in [
            (nan.clone(), "NaN"),
            (json!({ NON_FINITE_KEY: "Infinity" }), "Infinity"),
            (json!(1.5), "number 1.5"),
            (json!(-1), "number -1"),
            (json!(0), "number 0"),
            (json!(1e300), "number 1e+300"),
            (json!(true), "boolean"),
        ] {
            let e = CompactOptions::from_json(&json!({"contextTokenLimit": value})).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "options.contextTokenLimit: expected an integer from 1 to 1000000000, got {shown}"
                )
            );
        }
        for value in [json!(5), json!(0), nan, json!(-0.1)] {
            let e = CompactOptions::from_json(&json!({"thresholdRatio": value})).unwrap_err();
            assert!(e.to_string().starts_with(
                "options.thresholdRatio: expected a number greater than 0 and at most 1, got "
            ));
        }
        // The tail budget may be 0 (the PRD's empty tail); nothing outside 0..=1.
        for value in [json!(1.5), json!({ NON_FINITE_KEY: "NaN" }), json!(-0.1)] {
            let e = CompactOptions::from_json(&json!({"tailRetentionRatio": value})).unwrap_err();
            assert!(e
                .to_string()
                .starts_with("options.tailRetentionRatio: expected a number from 0 to 1, got "));
        }
        let empty_tail = CompactOptions::from_json(&json!({"tailRetentionRatio": 0})).unwrap();
        assert_eq!(empty_tail.tail_retention_ratio, 0.0);
        assert_eq!(empty_tail.tail_retention_tokens(), 0);
        empty_tail.validate().unwrap();
        // summaryFallback: 'extractive' (the default) or 'none'.
        assert_eq!(
            CompactOptions::default().summary_fallback,
            SummaryFallback::Extractive
        );
        assert_eq!(
            CompactOptions::from_json(&json!({"summaryFallback": "none"}))
                .unwrap()
                .summary_fallback,
            SummaryFallback::None
        );
        let e = CompactOptions::from_json(&json!({"summaryFallback": "llm"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.summaryFallback: expected 'extractive' or 'none', got \"llm\""
        );
        // Not capped: refused.
        let e = CompactOptions::from_json(&json!({"maxRetries": 1_000_000_000})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.maxRetries: expected an integer from 0 to 100, got number 1000000000"
        );
        assert_eq!(
            CompactOptions::from_json(&json!({"maxRetries": 100}))
                .unwrap()
                .max_retries,
            100
        );
        // Usage: checked like an option, never read as some other number.
        let e = CompactOptions::from_json(&json!({"usage": {"input_tokens": 1e20}})).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("options.usage.input_tokens: expected an integer from 0 to 1000000000"));
        assert!(CompactOptions::from_json(&json!({"usage": {"output_tokens": 3}})).is_err());
        // A NaN inside the loop's request cannot be sent.
        let e = CompactOptions::from_json(
            &json!({"agentRequest": {"model": "m", "temperature": { NON_FINITE_KEY: "NaN" }}}),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.agentRequest.temperature: NaN cannot be sent as JSON"
        );
    }

    #[test]
    fn wrong_types_name_the_option() {
        let e = CompactOptions::from_json(&json!({"contextTokenLimit": "big"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "options.contextTokenLimit: expected an integer from 1 to 1000000000, got string \"big\""
        );
        let e = CompactOptions::from_json(&json!({"maxRetries": -1})).unwrap_err();
        assert!(e.to_string().starts_with("options.maxRetries"));
        let e = CompactOptions::from_json(&json!({"encoding": "p50k"})).unwrap_err();
        assert!(e.to_string().contains("unknown encoding"));
        let e = CompactOptions::from_json(&json!({"sessionId": "../etc"})).unwrap_err();
        assert!(e.to_string().starts_with("sessionId"));
    }
}
