//! Counting, the trigger, the partition, validation and checks.

use crate::convert::{
    count_list, guarded, internal, invalid, parse_encoding, parse_format, parse_input,
    parse_options,
};
use crate::js_json::{JsMessageList, JsMessages};
use crate::options::call_options;
use context_compact_core::archive;
use context_compact_core::base::error::ValidationError;
use context_compact_core::formats;
use context_compact_core::model::tokens;
use context_compact_core::model::trigger::Calibration;
use context_compact_core::pipeline::measure;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::plan::partition;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Counting, trigger, partition

/// Exact token count of a message list.
#[napi]
pub fn count_tokens_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessageList,
    encoding: Option<String>,
    format: Option<String>,
) -> Result<u32> {
    guarded("countTokens", || {
        let encoding = parse_encoding(encoding)?;
        let counts = count_list(encoding, messages, parse_format(format)?)?;
        Ok(counts.into_iter().sum::<usize>() as u32)
    })
}

/// Token count of each message of a message list.
#[napi]
pub fn count_each_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessageList,
    encoding: Option<String>,
    format: Option<String>,
) -> Result<Vec<u32>> {
    guarded("countTokens", || {
        let encoding = parse_encoding(encoding)?;
        Ok(count_list(encoding, messages, parse_format(format)?)?
            .into_iter()
            .map(|n| n as u32)
            .collect())
    })
}

/// Per-message counts, as `count_each_json`, with what a cache of them needs (`Compactor`).
#[napi(object)]
pub struct ItemCounts {
    pub counts: Vec<u32>,
    /// The format each message says it is in (`""` when it says none).
    pub signatures: Vec<String>,
    /// The format the messages were read in.
    pub format: String,
}

/// Token count of each message, with the format each says it is in and the one they were read
/// in (see `formats::ItemCounter`).
#[napi]
pub fn count_items_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessageList,
    encoding: Option<String>,
    format: Option<String>,
) -> Result<ItemCounts> {
    guarded("countTokens", || {
        let encoding = parse_encoding(encoding)?;
        let mut counter = formats::ItemCounter::new(parse_format(format)?);
        messages
            .for_each(|index, message| counter.push(encoding, index, message).map_err(invalid))?;
        let (counts, signatures, format) = counter.finish_with_formats();
        Ok(ItemCounts {
            counts: counts.into_iter().map(|n| n as u32).collect(),
            signatures: signatures
                .into_iter()
                .map(|s| s.map_or(String::new(), |f| f.name().to_string()))
                .collect(),
            format: format.name().to_string(),
        })
    })
}

pub(crate) fn parse_calibration(calibration_json: Option<String>) -> Result<Option<Calibration>> {
    match calibration_json {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::new(Status::InvalidArg, format!("calibration: {e}"))),
    }
}

/// The trigger's estimate as JSON (`Measure`: rawTokens, tokens, source, factor, threshold,
/// window),
/// given the messages' total tokens and the tokens after the last assistant message (counted by
/// the caller, possibly from a cache).
///
/// With `message_count` (and `tool_output_bytes` when `maxToolOutputBytes` is set), the JSON
/// also has `trigger`: what would fire a compaction (`tokens`, `messages`, `tool_output`,
/// `force`) or `null`.
#[napi]
pub fn measure_json(
    message_tokens: f64,
    tokens_after_last_assistant: Option<f64>,
    options_json: Option<String>,
    calibration_json: Option<String>,
    message_count: Option<f64>,
    tool_output_bytes: Option<f64>,
) -> Result<String> {
    guarded("shouldCompact", || {
        let mut options = parse_options(options_json)?;
        options.calibration = parse_calibration(calibration_json)?;
        let list = Listed {
            message_tokens,
            tokens_after_last_assistant,
            message_count,
            tool_output_bytes,
        };
        measure_with(&options, options.extra_tokens(), list)
    })
}

/// `measure_json` with a `Compactor`'s held options (`options::HeldOptions`' id) and only the
/// options this call changes (`changes_json`, a JSON object, or nothing): a step costs no
/// reading of options, and `system` and `tools` are counted once per held options.
#[napi]
pub fn measure_held_json(
    options_id: u32,
    changes_json: Option<String>,
    message_tokens: f64,
    tokens_after_last_assistant: Option<f64>,
    calibration_json: Option<String>,
    message_count: Option<f64>,
    tool_output_bytes: Option<f64>,
) -> Result<String> {
    guarded("shouldCompact", || {
        let call = call_options(options_id, changes_json.as_deref(), true)?;
        let extra = call.extra_tokens();
        let mut options = call.measuring();
        options.calibration = parse_calibration(calibration_json)?;
        let list = Listed {
            message_tokens,
            tokens_after_last_assistant,
            message_count,
            tool_output_bytes,
        };
        measure_with(&options, extra, list)
    })
}

/// What the caller counted of the list (see `measure_json`).
struct Listed {
    message_tokens: f64,
    tokens_after_last_assistant: Option<f64>,
    message_count: Option<f64>,
    tool_output_bytes: Option<f64>,
}

/// The measure with `options` (their calibration among them) and the count of `system` and
/// `tools` (`extra_tokens`).
fn measure_with(options: &CompactOptions, extra_tokens: usize, list: Listed) -> Result<String> {
    Ok(measure::measure_counted(
        options,
        extra_tokens,
        list.message_tokens as u64,
        list.tokens_after_last_assistant.map(|n| n as u64),
        list.message_count.map(|n| n as usize),
        list.tool_output_bytes.unwrap_or(0.0) as usize,
    )
    .to_string())
}

/// The UTF-8 bytes of the tool results each message of a JSON list carries (the
/// `maxToolOutputBytes` trigger).
#[napi]
pub fn tool_output_bytes_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    format: Option<String>,
) -> Result<Vec<f64>> {
    guarded("toolOutputBytes", || {
        // Per item: each is read on its own in the list's format.
        let input = parse_input(messages, parse_format(format)?)?;
        let bytes = input.tool_output_bytes().map_err(invalid)?;
        Ok(bytes.into_iter().map(|n| n as f64).collect())
    })
}

/// Records a usage report into a `Compactor`'s calibration: `covered_raw_tokens` is the raw
/// count of what the usage covers (messages up to the last assistant message, plus system and
/// tools). Returns the new calibration as JSON.
#[napi]
pub fn calibrate_json(
    calibration_json: Option<String>,
    covered_raw_tokens: f64,
    usage_json: String,
) -> Result<String> {
    guarded("calibrate", || {
        let calibration = parse_calibration(calibration_json)?;
        let calibration =
            measure::calibrate_usage(calibration, covered_raw_tokens as u64, &usage_json)
                .map_err(invalid)?;
        Ok(serde_json::to_string(&calibration).unwrap_or_default())
    })
}

/// The tail budget for options (`contextTokenLimit × tailRetentionRatio`).
#[napi]
pub fn tail_retention_tokens_json(options_json: Option<String>) -> Result<u32> {
    guarded("tailRetentionTokens", || {
        Ok(parse_options(options_json)?.tail_retention_tokens() as u32)
    })
}

/// Where a list is cut.
#[napi(object)]
pub struct NativePartition {
    pub head_len: u32,
    pub tail_start: u32,
}

/// Partitions a message list.
#[napi]
pub fn partition_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    tail_retention_tokens: f64,
    options_json: Option<String>,
) -> Result<NativePartition> {
    guarded("partitionMessages", || {
        if tail_retention_tokens.is_nan() || tail_retention_tokens < 0.0 {
            return Err(invalid(ValidationError::argument(
                "tailRetentionTokens",
                "must be a non-negative number",
            )));
        }
        let options = parse_options(options_json)?;
        let input = parse_input(messages, options.format)?;
        let rules = partition::TailRules {
            keep_recent_turns: options.keep_recent_turns,
        };
        let tail = tail_retention_tokens.ceil() as usize;
        let plan = partition::partition_input(&input, options.encoding, tail, rules);
        Ok(NativePartition {
            head_len: plan.head_len as u32,
            tail_start: plan.tail_start as u32,
        })
    })
}

/// A summary message in the format of `messages` (detected unless `format` names one), for
/// `assembleMessages`: `[...head, summary, ...tail]` in the caller's own format.
#[napi]
pub fn summary_message_json(
    text: String,
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    format: Option<String>,
) -> Result<String> {
    guarded("assembleMessages", || {
        let written = formats::summary_message(&text, &messages.0, parse_format(format)?);
        Ok(Value::Array(written.map_err(invalid)?).to_string())
    })
}

/// Validates a message list (throws like the other functions; returns nothing).
#[napi]
pub fn validate_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    format: Option<String>,
) -> Result<()> {
    guarded("validate", || {
        parse_input(messages, parse_format(format)?).map(|_| ())
    })
}

/// The validity report of a message list (`check::check_conversation`), as a JSON array
/// of `{ index, kind, message }`. Only a value that is not an array throws; invalid messages
/// are reported as `invalid_message` problems.
#[napi]
pub fn check_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    format: Option<String>,
) -> Result<String> {
    guarded("checkMessages", || {
        let problems = formats::check_items(messages.0, parse_format(format)?).map_err(invalid)?;
        serde_json::to_string(&problems).map_err(|_| internal("checkMessages"))
    })
}

/// Validates a session id.
#[napi]
pub fn validate_session_id(session_id: String) -> Result<()> {
    archive::validate_session_id(&session_id).map_err(invalid)
}

/// Preloads an encoding's tables (the first count otherwise pays for it).
#[napi]
pub fn preload_encoding(encoding: Option<String>) -> Result<()> {
    tokens::preload(parse_encoding(encoding)?);
    Ok(())
}
