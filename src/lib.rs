//! The Node.js binding of `context-compact-core`.
//!
//! It only converts: messages arrive as the JS objects themselves, read into `serde_json`
//! values with `JSON.stringify`'s rules (`js_json`: faster than a JSON text crossing and no
//! copy of the conversation on the JS heap, see `benchmark/`), results leave as JSON or plain
//! objects, and core errors become JS errors with a `code`. The public, documented API is the thin
//! JavaScript layer in `index.js` / `index.d.ts`, which keeps the caller's own message objects
//! for everything that is retained. No core logic lives here.

#![deny(clippy::all)]

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use context_compact_core::archive;
use context_compact_core::base::error::ValidationError;
use context_compact_core::formats::{self, Format, Input};
use context_compact_core::model::trigger::{self, Calibration, TriggerInput, Usage};
use context_compact_core::model::{message, tokens};
use context_compact_core::pipeline::compact::{self, CompactOptions, CompactOutcome, Piece};
use context_compact_core::pipeline::{self, BeforeCompactInfo, CompactHooks, Confirmation};
use context_compact_core::plan::partition;
use context_compact_core::summary::prompt;
use context_compact_core::summary::providers::{self, ProviderOptions};
use context_compact_core::summary::summarize::{
    AttemptError, AttemptObserver, BoxFuture, Retry, Summarizer, SummaryFailure, SummaryRequest,
};
use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

mod js_json;
pub mod js_store;
mod logging;

use js_json::{JsMessageList, JsMessages};

// ---------------------------------------------------------------------------------------------
// Errors

/// Invalid input: the JS layer rethrows these as `TypeError`.
fn invalid(error: ValidationError) -> Error {
    Error::new(Status::InvalidArg, error.to_string())
}

fn internal(what: &str) -> Error {
    Error::new(
        Status::GenericFailure,
        format!("context-compact internal error in {what}; please report it"),
    )
}

/// Runs core code so that a panic becomes a JS error instead of killing the process.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(internal(what)))
}

fn parse_json(text: &str, what: &str) -> Result<Value> {
    message::parse_json_lenient(text)
        .map_err(|e| Error::new(Status::InvalidArg, format!("{what}: {e}")))
}

/// Messages cross from JS as the objects themselves, read with `JSON.stringify`'s rules (see
/// `js_json`): no JSON text is built on either side. Each message is read (on the JS thread,
/// as N-API requires), validated, counted and dropped before the next one is read, on the
/// same thread: its strings are counted while they are still in the core's cache, and the
/// whole conversation never exists at once in Rust. Reading everything first and counting on
/// the thread pool was measured slower (README, "Performance"): the pool's workers count from
/// cold caches, and on two cores they compete with V8's own background threads.
/// The first invalid message by index is reported, as `message::validate` does.
fn count_list(
    encoding: tokens::Encoding,
    messages: JsMessageList,
    format: Option<Format>,
) -> Result<Vec<usize>> {
    let mut counter = formats::ItemCounter::new(format);
    messages.for_each(|index, message| counter.push(encoding, index, message).map_err(invalid))?;
    Ok(counter.finish())
}

/// The `format` option (`None`: detect it from the list).
fn parse_format(format: Option<String>) -> Result<Option<Format>> {
    match format {
        None => Ok(None),
        Some(name) => Format::parse(&name).ok_or_else(|| {
            invalid(ValidationError::argument(
                "options.format",
                format!("expected {}, got {name:?}", formats::FORMAT_NAMES),
            ))
        }),
    }
}

/// The list read in its format (detected unless `format` names one), validated.
fn parse_input(messages: JsMessages, format: Option<Format>) -> Result<Input> {
    Input::read(messages.0, format).map_err(invalid)
}

fn parse_options(options_json: Option<String>) -> Result<CompactOptions> {
    parse_options_and_value(options_json).map(|(options, _)| options)
}

/// The options, and the JSON object they came from (for the provider options). Invalid
/// provider options (`provider`, `apiKey`, `baseUrl`, `timeoutMs`) are rejected here too, so
/// that a `Compactor` reports them when it is created.
fn parse_options_and_value(options_json: Option<String>) -> Result<(CompactOptions, Value)> {
    let value = match options_json {
        Some(text) => parse_json(&text, "options")?,
        None => Value::Null,
    };
    let mut options = CompactOptions::from_json(&value).map_err(invalid)?;
    js_store::attach(&mut options, &value)?;
    ProviderOptions::from_json(&value).map_err(invalid)?;
    Ok((options, value))
}

fn parse_encoding(encoding: Option<String>) -> Result<tokens::Encoding> {
    match encoding {
        None => Ok(tokens::Encoding::default()),
        Some(name) => tokens::Encoding::parse(&name).ok_or_else(|| {
            invalid(ValidationError::argument(
                "options.encoding",
                format!("unknown encoding {name:?} (expected \"o200k_base\" or \"cl100k_base\")"),
            ))
        }),
    }
}

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

fn parse_calibration(calibration_json: Option<String>) -> Result<Option<Calibration>> {
    match calibration_json {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::new(Status::InvalidArg, format!("calibration: {e}"))),
    }
}

/// The trigger's estimate as JSON (`Measure`: rawTokens, tokens, source, factor, threshold),
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
        let measure = trigger::measure(
            TriggerInput {
                message_tokens: message_tokens as u64,
                tokens_after_last_assistant: tokens_after_last_assistant.map(|n| n as u64),
                extra_tokens: options.extra_tokens() as u64,
            },
            options.threshold_tokens() as u64,
            options.usage,
            options.trigger_model(),
            options.calibration.as_ref(),
        );
        let mut out = serde_json::to_value(measure).unwrap_or_default();
        if let (Some(count), Value::Object(map)) = (message_count, &mut out) {
            let fired = options.fired(
                &measure,
                count as usize,
                tool_output_bytes.unwrap_or(0.0) as usize,
            );
            map.insert("trigger".into(), json!(fired));
        }
        Ok(out.to_string())
    })
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
        let format = input.format();
        input
            .items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let bytes = if format == Format::Native {
                    trigger::tool_output_bytes(item)
                } else {
                    trigger::tool_output_bytes(
                        &formats::view_item(format, index, item).map_err(invalid)?,
                    )
                };
                Ok(bytes as f64)
            })
            .collect()
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
        let mut calibration = parse_calibration(calibration_json)?.unwrap_or_default();
        let usage = serde_json::from_str::<Value>(&usage_json)
            .ok()
            .and_then(|v| Usage::from_json(&v))
            .ok_or_else(|| {
                invalid(ValidationError::argument(
                    "usage",
                    "expected an API usage object",
                ))
            })?;
        calibration.observe(covered_raw_tokens as u64, usage.context_tokens());
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
        let messages = input.messages();
        let counts = tokens::count_each(options.encoding, messages);
        let plan = partition::partition(
            messages,
            &counts,
            tail_retention_tokens.ceil() as usize,
            partition::TailRules {
                keep_recent_turns: options.keep_recent_turns,
            },
        );
        Ok(NativePartition {
            head_len: input.item_index(plan.head_len) as u32,
            tail_start: input.item_index(plan.tail_start) as u32,
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
        let format = formats::detect(&messages.0, parse_format(format)?).map_err(invalid)?;
        let summary = json!({ "role": "user", "content": text });
        let written = formats::to_format(format, &summary);
        Ok(Value::Array(written).to_string())
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
        let format = parse_format(format)?;
        let problems = match formats::detect(&messages.0, format).map_err(invalid)? {
            Format::Native => context_compact_core::model::check::check_conversation(&messages.0),
            // A list in another format is checked on its view (the pairing rules are the
            // same), and the problems name the caller's items.
            _ => match Input::read(messages.0, format) {
                Ok(input) => {
                    context_compact_core::model::check::check_conversation(input.messages())
                        .into_iter()
                        .map(|mut problem| {
                            problem.index = input.item_index(problem.index);
                            problem
                        })
                        .collect()
                }
                Err(e) => vec![context_compact_core::model::check::Problem {
                    index: e.index.unwrap_or(0),
                    kind: context_compact_core::model::check::INVALID_MESSAGE,
                    message: e.to_string(),
                }],
            },
        };
        serde_json::to_string(&problems).map_err(|_| internal("checkMessages"))
    })
}

/// Validates a session id.
#[napi]
pub fn validate_session_id(session_id: String) -> Result<()> {
    archive::validate_session_id(&session_id).map_err(invalid)
}

// ---------------------------------------------------------------------------------------------
// Cancellation: the JS layer creates a token per call and cancels it when its AbortSignal fires.

fn cancel_tokens() -> &'static Mutex<HashMap<u32, CancellationToken>> {
    static TOKENS: OnceLock<Mutex<HashMap<u32, CancellationToken>>> = OnceLock::new();
    TOKENS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Creates a cancellation token and returns its id.
#[napi]
pub fn create_cancel_token() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    cancel_tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, CancellationToken::new());
    id
}

/// Cancels the work using a token.
#[napi]
pub fn cancel_token(id: u32) {
    if let Some(token) = cancel_tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
    {
        token.cancel();
    }
}

/// Forgets a token.
#[napi]
pub fn release_cancel_token(id: u32) {
    cancel_tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id);
}

fn token_for(id: Option<u32>) -> CancellationToken {
    id.and_then(|id| {
        cancel_tokens()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    })
    .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The JavaScript summarizer callback behind the core's `Summarizer` trait.

/// One summary request, as passed to the JS layer (which adds the caller's message objects).
///
/// The prompt is not rendered up front: a JS summarizer may never read it (one that sends
/// `request.messages` to its own model), and for a long middle it is the largest thing a
/// compaction builds. The JS layer renders it on first access with `renderSummaryPromptJson`.
#[napi(object)]
pub struct SummarizeCall {
    /// Index of the first message to summarize in the list the round works on.
    pub start: u32,
    /// One past the last.
    pub end: u32,
    /// For each message to summarize, its index in the list given to `compactMessages`, or
    /// null for one the library made (an earlier round's summary, in `made`).
    pub origins: Vec<Option<u32>>,
    /// The JSON of the messages whose origin is null, in order.
    pub made: Vec<String>,
    /// The instructions that open the prompt.
    pub instructions: String,
    /// How long a tool result may be in the transcript (null: no limit).
    pub max_tool_result_chars: Option<f64>,
    pub previous_summary: Option<String>,
    pub model: Option<String>,
    pub custom_instructions: Option<String>,
    pub max_tokens: u32,
    pub attempt: u32,
}

type JsSummarizerFn =
    ThreadsafeFunction<SummarizeCall, Promise<String>, SummarizeCall, Status, false>;
type JsEventFn = ThreadsafeFunction<String, (), String, Status, false>;

struct JsSummarizer {
    callback: JsSummarizerFn,
    model: Option<String>,
    /// The list's view, when it is in another format: the JS summarizer is given the caller's
    /// items, so each view message's origin becomes its items' indices.
    view: Option<std::sync::Arc<formats::View>>,
}

impl Summarizer for JsSummarizer {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, std::result::Result<String, AttemptError>> {
        let mut made = Vec::new();
        let mut origins = Vec::with_capacity(request.origins.len());
        for (message, origin) in request.messages.iter().zip(request.origins) {
            match (origin, &self.view) {
                (Some(index), None) => origins.push(Some(*index as u32)),
                (Some(index), Some(view)) => origins.extend(
                    view.groups
                        .get(*index)
                        .cloned()
                        .unwrap_or_default()
                        .map(|item| Some(item as u32)),
                ),
                (None, None) => {
                    origins.push(None);
                    made.push(message.to_string());
                }
                (None, Some(view)) => {
                    for item in formats::to_format(view.format, message) {
                        origins.push(None);
                        made.push(item.to_string());
                    }
                }
            }
        }
        let call = SummarizeCall {
            start: request.range.start as u32,
            end: request.range.end as u32,
            origins,
            made,
            instructions: request.instructions.clone(),
            max_tool_result_chars: match request.render_limits.max_tool_result_chars {
                usize::MAX => None,
                chars => Some(chars as f64),
            },
            previous_summary: request.previous_summary.clone(),
            model: request.model.clone(),
            custom_instructions: request.custom_instructions.clone(),
            max_tokens: request.max_tokens,
            attempt: request.attempt,
        };
        Box::pin(async move {
            let failed = |e: Error| {
                AttemptError::new(
                    context_compact_core::base::error::ErrorCode::SummarizerError,
                    format!("the summarizer failed: {}", e.reason),
                    Retry::Yes,
                )
            };
            let promise = self.callback.call_async_catch(call).await.map_err(failed)?;
            promise.await.map_err(failed)
        })
    }

    fn provider(&self) -> &str {
        "custom"
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn renders_prompt_on_demand(&self) -> bool {
        true
    }
}

/// The summary prompt for messages (a JS summarizer's `request.prompt`, rendered when it is
/// first read): the same text the HTTP providers send.
#[napi]
pub fn render_summary_prompt_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    instructions: String,
    previous_summary: Option<String>,
    max_tool_result_chars: Option<f64>,
    format: Option<String>,
) -> Result<String> {
    guarded("renderSummaryPrompt", || {
        let input = parse_input(messages, parse_format(format)?)?;
        let messages = input.messages();
        let limits = match max_tool_result_chars {
            Some(chars) if chars.is_finite() && chars >= 0.0 => prompt::RenderLimits {
                max_tool_result_chars: chars as usize,
            },
            _ => prompt::RenderLimits::default(),
        };
        Ok(prompt::render_prompt(
            &instructions,
            previous_summary.as_deref(),
            messages,
            limits,
        ))
    })
}

/// The JS `onBeforeCompact` callback, wrapped by the JS layer so that it resolves with a
/// boolean (false: decline). Receives the `BeforeCompactInfo` as JSON.
type JsBeforeCompactFn = ThreadsafeFunction<String, Promise<bool>, String, Status, false>;

/// Forwards events to the JS `onEvent` bridge and asks `onBeforeCompact`.
struct EventBridge {
    callback: Option<JsEventFn>,
    before_compact: Option<JsBeforeCompactFn>,
}

impl CompactHooks for EventBridge {
    fn before_compact<'a>(&'a self, info: &'a BeforeCompactInfo) -> BoxFuture<'a, Confirmation> {
        let Some(callback) = &self.before_compact else {
            return Box::pin(async { Confirmation::Proceed });
        };
        let info = serde_json::to_string(info).unwrap_or_default();
        Box::pin(async move {
            let answer = match callback.call_async_catch(info).await {
                Ok(promise) => promise.await,
                Err(e) => Err(e),
            };
            match answer {
                Ok(true) => Confirmation::Proceed,
                Ok(false) => {
                    Confirmation::Decline("onBeforeCompact declined the compaction".into())
                }
                // A confirmation that failed is not a confirmation.
                Err(e) => Confirmation::Decline(format!("onBeforeCompact failed: {}", e.reason)),
            }
        })
    }

    fn event(&self, event: Value) {
        self.emit(event);
    }
}

impl EventBridge {
    fn emit(&self, event: Value) {
        if let Some(callback) = &self.callback {
            callback.call(event.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl AttemptObserver for EventBridge {
    fn retrying(&self, attempt: u32, error: &AttemptError, delay: std::time::Duration) {
        self.emit(json!({
            "type": "retry",
            "attempt": attempt,
            "delayMs": delay.as_millis() as u64,
            "error": { "code": error.code.as_str(), "message": error.message, "status": error.status },
        }));
    }
}

/// The JS `summarizer` callback when given, else the provider the options (or, with zero
/// configuration, the environment) choose: see `context_compact_core::summary::providers`.
fn choose_summarizer(
    callback: Option<JsSummarizerFn>,
    options: &CompactOptions,
    raw_options: &Value,
    input: &Input,
) -> Result<Box<dyn Summarizer>> {
    match callback {
        Some(callback) => Ok(Box::new(JsSummarizer {
            callback,
            model: options.model.clone(),
            view: input.view.clone().map(std::sync::Arc::new),
        })),
        None => {
            context_compact_core::options::providers::from_options(raw_options).map_err(invalid)
        }
    }
}

fn outcome_json(outcome: &CompactOutcome, format: Format) -> Value {
    let pieces: Vec<Value> = outcome
        .pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(index) => json!(index),
            Piece::New(message) => message.clone(),
        })
        .collect();
    json!({
        "compacted": outcome.compacted,
        "pieces": pieces,
        "summary": outcome.summary,
        "archivePath": outcome.archive_path.as_ref().map(|p| p.display().to_string()),
        "stats": outcome.stats,
        "error": outcome.error,
        "warnings": outcome.warnings,
        "headLength": outcome.partition.map(|p| p.head_len),
        "tailStart": outcome.partition.map(|p| p.tail_start),
        "triggerTokens": outcome.trigger_tokens,
        "thresholdTokens": outcome.threshold_tokens,
        "provider": outcome.provider,
        "model": outcome.model,
        "attempts": outcome.attempts,
        "measure": outcome.measure,
        "strategy": outcome.strategy,
        "trigger": outcome.trigger,
        "rounds": outcome.rounds,
        "removed": outcome.removed,
        "fallback": outcome.fallback,
        "extracted": outcome.extracted,
        "offloaded": outcome.offloaded,
        "offloadArchivePath": outcome.offload_archive_path.as_ref().map(|p| p.display().to_string()),
        "transformations": outcome.transformations,
        "thinkingArchivePath": outcome.thinking_archive_path.as_ref().map(|p| p.display().to_string()),
        "compactionUnavailable": outcome.native_unavailable,
        "format": format.name(),
    })
}

// One argument per thing JS hands over; bundling them in an object would only move the
// conversion code around.
#[allow(clippy::too_many_arguments)]
/// Runs a compaction. Resolves with the outcome as JSON, or rejects with `AbortError` when the
/// token is cancelled.
#[napi]
pub async fn compact_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    options_json: Option<String>,
    counts: Option<Vec<u32>>,
    summarizer: Option<JsSummarizerFn>,
    on_event: Option<JsEventFn>,
    cancel_id: Option<u32>,
    calibration_json: Option<String>,
    on_log: Option<logging::JsLogFn>,
    on_before_compact: Option<JsBeforeCompactFn>,
) -> Result<String> {
    let work = async move {
        let (mut options, raw_options) = parse_options_and_value(options_json)?;
        options.calibration = parse_calibration(calibration_json)?;
        let input = parse_input(messages, options.format)?;
        input.adjust(&mut options);
        // The caller's counts are per item; the pipeline works on the view's messages.
        let counts = counts
            .filter(|c| c.len() == input.items.len())
            .map(|c| input.counts(c.into_iter().map(|n| n as usize).collect()));
        // `provider: 'anthropic-compaction'`: Anthropic's on-demand compaction writes the
        // summary, the plain Anthropic summarizer its fallback (a JS `summarizer` wins over both).
        let compaction = match &summarizer {
            Some(_) => None,
            None => providers::compaction_from_options(&raw_options).map_err(invalid)?,
        };
        let summarizer = match compaction {
            Some(compaction) => {
                options.native_compaction = compaction.native.ok().map(std::sync::Arc::new);
                compaction.fallback
            }
            None => choose_summarizer(summarizer, &options, &raw_options, &input)?,
        };
        let events = EventBridge {
            callback: on_event,
            before_compact: on_before_compact,
        };
        let cancel = token_for(cancel_id);
        match pipeline::compact_with_hooks(
            input.messages(),
            counts,
            &options,
            summarizer.as_ref(),
            &cancel,
            &events,
            &events,
        )
        .await
        {
            Ok(outcome) => {
                let format = input.format();
                Ok(outcome_json(&input.outcome(outcome), format).to_string())
            }
            Err(compact::Aborted) => {
                Err(Error::new(Status::Cancelled, "This operation was aborted"))
            }
        }
    };
    logging::with_logger(on_log, AssertUnwindSafe(work).catch_unwind())
        .await
        .unwrap_or_else(|_| Err(internal("compactMessages")))
}

/// Writes an archive of messages and resolves with its path.
#[napi]
pub async fn persist_messages_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    output_dir: String,
    session_id: String,
    format: Option<String>,
    store_json: Option<String>,
) -> Result<String> {
    // A list in another format is archived as its view messages, each holding its items, as
    // a compaction archives it: restore reads both the same way.
    let messages = parse_input(messages, parse_format(format)?)?
        .messages()
        .to_vec();
    archive::validate_session_id(&session_id).map_err(invalid)?;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let dir = PathBuf::from(output_dir);
    let written = tokio::task::spawn_blocking(move || {
        archive::persist_in(&messages, &dir, store.as_deref(), &session_id)
    })
    .await
    .map_err(|_| internal("persistMessages"))?;
    match written {
        Ok(file) => Ok(file.path.display().to_string()),
        Err(e) => Err(Error::new(
            Status::GenericFailure,
            format!("could not write the archive: {e}"),
        )),
    }
}

/// `offloadToolResults`: shortens oversized tool results (or, with `scope: 'all'`, any message
/// text) to about `maxTokens`, archiving the originals. Resolves with
/// `{"pieces", "offloaded", "archivePath", "error"}` as JSON.
#[napi]
pub async fn offload_tool_results_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    max_tokens: u32,
    options_json: Option<String>,
) -> Result<String> {
    let options = parse_options(options_json)?;
    let input = parse_input(messages, options.format)?;
    let work = move || {
        let mut outcome = context_compact_core::pipeline::offload::offload_tool_results_in(
            input.messages(),
            max_tokens as usize,
            options.offload,
            &options.output_dir,
            options.archive_store.as_deref(),
            &options.session_id,
            options.encoding,
        );
        let view_pieces = std::mem::take(&mut outcome.pieces);
        let pieces: Vec<Value> = input
            .pieces(view_pieces)
            .into_iter()
            .map(|piece| match piece {
                Piece::Original(index) => json!(index),
                Piece::New(message) => message,
            })
            .collect();
        json!({
            "pieces": pieces,
            "offloaded": outcome.offloaded,
            "archivePath": outcome.archive_path.map(|p| p.display().to_string()),
            "error": outcome.error,
        })
        .to_string()
    };
    tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(work)))
        .await
        .map_err(|_| internal("offloadToolResults"))?
        .map_err(|_| internal("offloadToolResults"))
}

/// Records a compaction a custom JS strategy made (the pipeline records its own): the audit line
/// and, with `extractMemory`, the key information of the removed messages. `record_json` holds
/// `{archivePath, stats, tokens, threshold, error, warnings}`. Resolves with
/// `{"warnings", "extracted"}` as JSON.
#[napi]
pub async fn record_custom_compaction_json(
    #[napi(ts_arg_type = "object[]")] removed: JsMessages,
    options_json: Option<String>,
    record_json: String,
) -> Result<String> {
    let options = parse_options(options_json)?;
    let removed = parse_input(removed, options.format)?.messages().to_vec();
    let record = parse_json(&record_json, "record")?;
    let work = move || {
        let mut outcome = CompactOutcome::skipped(
            record["tokens"].as_u64().unwrap_or(0) as usize,
            record["threshold"].as_u64().unwrap_or(0) as usize,
            serde_json::from_value(record["error"].clone()).ok(),
        );
        outcome.compacted = record["compacted"] == true;
        outcome.archive_path = record["archivePath"].as_str().map(PathBuf::from);
        outcome.stats = serde_json::from_value(record["stats"].clone()).unwrap_or_default();
        outcome.warnings = serde_json::from_value(record["warnings"].clone()).unwrap_or_default();
        outcome.provider = Some("custom".to_string());
        pipeline::report::record_external(&options, &removed, &mut outcome);
        json!({ "warnings": outcome.warnings, "extracted": outcome.extracted }).to_string()
    };
    tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(work)))
        .await
        .map_err(|_| internal("recordCustomCompaction"))?
        .map_err(|_| internal("recordCustomCompaction"))
}

// ---------------------------------------------------------------------------------------------
// History: list, restore, prune (SanBot). File IO runs on the blocking pool.

/// Runs blocking history work and converts its error: invalid arguments become `InvalidArg`
/// (a TypeError in JS); the others are returned for the caller to convert.
async fn history_task<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> std::result::Result<T, archive::HistoryError> + Send + 'static,
) -> Result<std::result::Result<T, archive::HistoryError>> {
    tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(work)))
        .await
        .map_err(|_| internal(what))?
        .map_err(|_| internal(what))
}

fn history_error(error: archive::HistoryError) -> Error {
    match error {
        archive::HistoryError::Invalid(e) => invalid(e),
        other => Error::new(Status::GenericFailure, other.to_string()),
    }
}

/// The archives of a session as a JSON array of `ArchiveInfo`.
#[napi]
pub async fn list_archives_json(
    output_dir: String,
    session_id: String,
    store_json: Option<String>,
) -> Result<String> {
    archive::validate_session_id(&session_id).map_err(invalid)?;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let listed = history_task("listArchives", move || match store {
        Some(store) => {
            context_compact_core::archive::store::session::list_archives(&store, &session_id)
        }
        None => archive::list_archives(&PathBuf::from(output_dir), &session_id),
    })
    .await?;
    let infos = listed.map_err(history_error)?;
    serde_json::to_string(&infos).map_err(|_| internal("listArchives"))
}

/// Restores a compacted message list. Resolves with `{"pieces": [...]}` (an index into
/// the input, or a message read back from an archive) or, when an archive is missing or
/// unusable, `{"error": {"code", "message"}}` for the JS layer to throw.
#[napi]
pub async fn restore_messages_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    output_dir: Option<String>,
    session_id: Option<String>,
    format: Option<String>,
    store_json: Option<String>,
) -> Result<String> {
    let input = std::sync::Arc::new(parse_input(messages, parse_format(format)?)?);
    let for_restore = input.clone();
    if let Some(session_id) = &session_id {
        archive::validate_session_id(session_id).map_err(invalid)?;
    }
    let store = js_store::location(
        output_dir.as_deref().unwrap_or(archive::DEFAULT_OUTPUT_DIR),
        store_json.as_deref(),
    )?;
    let restored = history_task("restoreMessages", move || match store {
        Some(store) => context_compact_core::archive::store::session::restore_messages(
            &store,
            for_restore.messages(),
            session_id.as_deref().unwrap_or(archive::DEFAULT_SESSION_ID),
        ),
        None => archive::restore_messages_with_defaults(
            for_restore.messages(),
            output_dir.as_deref().map(std::path::Path::new),
            session_id.as_deref(),
        ),
    })
    .await?;
    let out = match restored {
        Ok(pieces) => {
            let pieces: Vec<Value> = input
                .restored(pieces)
                .into_iter()
                .map(|piece| match piece {
                    archive::Restored::Original(index) => json!(index),
                    archive::Restored::Archived(message) => message,
                })
                .collect();
            json!({ "pieces": pieces })
        }
        Err(archive::HistoryError::Invalid(e)) => return Err(invalid(e)),
        Err(e) => json!({ "error": { "code": e.code(), "message": e.to_string() } }),
    };
    Ok(out.to_string())
}

/// Prunes old archives; resolves with `{"removed": [...], "kept": n}` as JSON.
#[napi]
pub async fn prune_archives_json(
    output_dir: String,
    older_than_days: Option<f64>,
    session_id: Option<String>,
    store_json: Option<String>,
) -> Result<String> {
    let mut options = archive::PruneOptions::default();
    if let Some(days) = older_than_days {
        options.older_than_days = days;
    }
    options.session_id = session_id;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let pruned = history_task("pruneArchives", move || match store {
        Some(store) => {
            context_compact_core::archive::store::session::prune_archives(&store, &options)
        }
        None => archive::prune_archives(&PathBuf::from(output_dir), &options),
    })
    .await?;
    let report = pruned.map_err(history_error)?;
    serde_json::to_string(&report).map_err(|_| internal("pruneArchives"))
}

/// Summarizes messages (the whole list is the "middle") and resolves with the summary text.
#[napi]
pub async fn generate_summary_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    options_json: Option<String>,
    summarizer: Option<JsSummarizerFn>,
    cancel_id: Option<u32>,
    on_log: Option<logging::JsLogFn>,
) -> Result<String> {
    let work = async move {
        let (options, raw_options) = parse_options_and_value(options_json)?;
        let input = parse_input(messages, options.format)?;
        let messages = input.messages();
        let summarizer = choose_summarizer(summarizer, &options, &raw_options, &input)?;
        let cancel = token_for(cancel_id);
        let observer = EventBridge {
            callback: None,
            before_compact: None,
        };
        let origins: Vec<Option<usize>> = (0..messages.len()).map(Some).collect();
        match compact::summarize_middle(
            messages,
            0,
            &origins,
            &options,
            summarizer.as_ref(),
            &cancel,
            &observer,
        )
        .await
        {
            Ok(summary) => Ok(summary.body),
            Err(SummaryFailure::Aborted) => {
                Err(Error::new(Status::Cancelled, "This operation was aborted"))
            }
            Err(SummaryFailure::Failed(error)) => Err(Error::new(
                Status::GenericFailure,
                format!(
                    "{}: {} (after {} attempt(s))",
                    error.code, error.message, error.attempts
                ),
            )),
        }
    };
    logging::with_logger(on_log, AssertUnwindSafe(work).catch_unwind())
        .await
        .unwrap_or_else(|_| Err(internal("generateSummary")))
}

/// Preloads an encoding's tables (the first count otherwise pays for it).
#[napi]
pub fn preload_encoding(encoding: Option<String>) -> Result<()> {
    parse_encoding(encoding)?.preload();
    Ok(())
}

#[napi_derive::module_init]
fn init() {
    logging::install();
}

// ---------------------------------------------------------------------------------------------
// Overflow recovery (SPEC §4.8)

fn error_signals(
    statuses: Vec<u32>,
    codes: Vec<String>,
    messages: Vec<String>,
) -> context_compact_core::summary::overflow::ErrorSignals {
    let mut signals = context_compact_core::summary::overflow::ErrorSignals::default();
    for status in statuses {
        if let Ok(status) = u16::try_from(status) {
            signals.add_status(status);
        }
    }
    for code in &codes {
        signals.add_code(code);
    }
    for message in &messages {
        signals.add_message(message);
    }
    signals
}

/// Whether an API error was a context overflow (`overflow::is_context_overflow`), from the
/// statuses, codes and messages `index.js` gathered from the error object. Never throws: a
/// panic answers `false`, as the public `isContextOverflow` promises a boolean for any input.
#[napi]
pub fn is_context_overflow_signals(
    statuses: Vec<u32>,
    codes: Vec<String>,
    messages: Vec<String>,
) -> bool {
    std::panic::catch_unwind(move || {
        context_compact_core::summary::overflow::is_context_overflow(&error_signals(
            statuses, codes, messages,
        ))
    })
    .unwrap_or(false)
}

/// A calibration raised after a context-overflow error: the request of `raw_tokens` (messages
/// + system + tools) was billed at least the prompt size the error names, else more than the
/// context window of the options. Returns the calibration as JSON.
#[napi]
pub fn calibrate_overflow_json(
    calibration_json: Option<String>,
    raw_tokens: f64,
    messages: Vec<String>,
    options_json: Option<String>,
) -> Result<String> {
    guarded("calibrateOverflow", || {
        let mut calibration = parse_calibration(calibration_json)?.unwrap_or_default();
        let options = parse_options(options_json)?;
        let reported = context_compact_core::summary::overflow::reported_prompt_tokens(
            &error_signals(Vec::new(), Vec::new(), messages),
        );
        let billed = reported.unwrap_or(options.context_token_limit as u64 + 1);
        calibration.observe_overflow(raw_tokens as u64, billed);
        Ok(serde_json::to_string(&calibration).unwrap_or_default())
    })
}
