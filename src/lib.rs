//! The Node.js binding of `context-compact-core`.
//!
//! It only converts: messages arrive as one JSON string (measured cheaper than converting
//! objects property by property, see `benchmark/`), results leave as JSON or plain objects, and
//! core errors become JS errors with a `code`. The public, documented API is the thin
//! JavaScript layer in `index.js` / `index.d.ts`, which keeps the caller's own message objects
//! for everything that is retained. No core logic lives here.

#![deny(clippy::all)]

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use context_compact_core::compact::{self, CompactOptions, CompactOutcome, Piece};
use context_compact_core::error::ValidationError;
use context_compact_core::extractive::ExtractiveSummarizer;
use context_compact_core::summarize::{
    AttemptError, AttemptObserver, BoxFuture, Retry, Summarizer, SummaryFailure, SummaryRequest,
};
use context_compact_core::{archive, message, partition, tokens};
use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

mod logging;

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

fn parse_messages(messages_json: &str) -> Result<Vec<Value>> {
    let value = parse_json(messages_json, "messages")?;
    let list = match value {
        Value::Array(list) => list,
        other => return Err(invalid(message::validate_list(&other).unwrap_err())),
    };
    message::validate(&list).map_err(invalid)?;
    Ok(list)
}

fn parse_options(options_json: Option<String>) -> Result<CompactOptions> {
    let value = match options_json {
        Some(text) => parse_json(&text, "options")?,
        None => Value::Null,
    };
    CompactOptions::from_json(&value).map_err(invalid)
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

/// Exact token count of a JSON message list.
#[napi]
pub fn count_tokens_json(messages_json: String, encoding: Option<String>) -> Result<u32> {
    guarded("countTokens", || {
        let encoding = parse_encoding(encoding)?;
        let messages = parse_messages(&messages_json)?;
        Ok(tokens::count_messages(encoding, &messages) as u32)
    })
}

/// Token count of each message of a JSON message list.
#[napi]
pub fn count_each_json(messages_json: String, encoding: Option<String>) -> Result<Vec<u32>> {
    guarded("countTokens", || {
        let encoding = parse_encoding(encoding)?;
        let messages = parse_messages(&messages_json)?;
        Ok(tokens::count_each(encoding, &messages)
            .into_iter()
            .map(|n| n as u32)
            .collect())
    })
}

/// The numbers behind a trigger decision.
#[napi(object)]
pub struct NativeMeasure {
    /// Tokens of the messages plus `system` and `tools`.
    pub tokens: u32,
    /// `contextTokenLimit × thresholdRatio`.
    pub threshold: u32,
    /// `tailRetentionTokens` for these options.
    pub tail_retention_tokens: u32,
}

/// Measures the trigger for options, given the messages' total tokens (counted by the caller,
/// possibly from a cache).
#[napi]
pub fn measure_json(message_tokens: u32, options_json: Option<String>) -> Result<NativeMeasure> {
    guarded("shouldCompact", || {
        let options = parse_options(options_json)?;
        Ok(NativeMeasure {
            tokens: message_tokens + options.extra_tokens() as u32,
            threshold: options.threshold_tokens() as u32,
            tail_retention_tokens: options.tail_retention_tokens() as u32,
        })
    })
}

/// Where a list is cut.
#[napi(object)]
pub struct NativePartition {
    pub head_len: u32,
    pub tail_start: u32,
}

/// Partitions a JSON message list.
#[napi]
pub fn partition_json(
    messages_json: String,
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
        let messages = parse_messages(&messages_json)?;
        let counts = tokens::count_each(options.encoding, &messages);
        let plan = partition::partition(
            &messages,
            &counts,
            tail_retention_tokens.ceil() as usize,
            partition::TailRules {
                keep_recent_turns: options.keep_recent_turns,
            },
        );
        Ok(NativePartition {
            head_len: plan.head_len as u32,
            tail_start: plan.tail_start as u32,
        })
    })
}

/// Validates a JSON message list (throws like the other functions; returns nothing).
#[napi]
pub fn validate_json(messages_json: String) -> Result<()> {
    guarded("validate", || parse_messages(&messages_json).map(|_| ()))
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
#[napi(object)]
pub struct SummarizeCall {
    /// Index of the first message to summarize in the list given to `compactMessages`.
    pub start: u32,
    /// One past the last.
    pub end: u32,
    pub prompt: String,
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
}

impl Summarizer for JsSummarizer {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, std::result::Result<String, AttemptError>> {
        let call = SummarizeCall {
            start: request.range.start as u32,
            end: request.range.end as u32,
            prompt: request.prompt.clone(),
            previous_summary: request.previous_summary.clone(),
            model: request.model.clone(),
            custom_instructions: request.custom_instructions.clone(),
            max_tokens: request.max_tokens,
            attempt: request.attempt,
        };
        Box::pin(async move {
            let failed = |e: Error| {
                AttemptError::new(
                    context_compact_core::error::ErrorCode::SummarizerError,
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
}

/// Forwards retry events to the JS `onEvent` bridge.
struct EventBridge {
    callback: Option<JsEventFn>,
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

fn choose_summarizer(
    callback: Option<JsSummarizerFn>,
    options: &CompactOptions,
) -> Box<dyn Summarizer> {
    match callback {
        Some(callback) => Box::new(JsSummarizer {
            callback,
            model: options.model.clone(),
        }),
        None => Box::new(ExtractiveSummarizer),
    }
}

fn outcome_json(outcome: &CompactOutcome) -> Value {
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
    })
}

/// Runs a compaction. Resolves with the outcome as JSON, or rejects with `AbortError` when the
/// token is cancelled.
#[napi]
pub async fn compact_json(
    messages_json: String,
    options_json: Option<String>,
    counts: Option<Vec<u32>>,
    summarizer: Option<JsSummarizerFn>,
    on_event: Option<JsEventFn>,
    cancel_id: Option<u32>,
) -> Result<String> {
    let work = async move {
        let options = parse_options(options_json)?;
        let messages = parse_messages(&messages_json)?;
        let counts = counts
            .filter(|c| c.len() == messages.len())
            .map(|c| c.into_iter().map(|n| n as usize).collect());
        let summarizer = choose_summarizer(summarizer, &options);
        let events = EventBridge { callback: on_event };
        let cancel = token_for(cancel_id);
        match compact::compact(
            &messages,
            counts,
            &options,
            summarizer.as_ref(),
            &cancel,
            &events,
        )
        .await
        {
            Ok(outcome) => Ok(outcome_json(&outcome).to_string()),
            Err(compact::Aborted) => {
                Err(Error::new(Status::Cancelled, "This operation was aborted"))
            }
        }
    };
    AssertUnwindSafe(work)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| Err(internal("compactMessages")))
}

/// Writes an archive of messages and resolves with its path.
#[napi]
pub async fn persist_messages_json(
    messages_json: String,
    output_dir: String,
    session_id: String,
) -> Result<String> {
    let messages = parse_messages(&messages_json)?;
    archive::validate_session_id(&session_id).map_err(invalid)?;
    let dir = PathBuf::from(output_dir);
    let written = tokio::task::spawn_blocking(move || {
        archive::persist_messages(&messages, &dir, &session_id)
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

/// Summarizes messages (the whole list is the "middle") and resolves with the summary text.
#[napi]
pub async fn generate_summary_json(
    messages_json: String,
    options_json: Option<String>,
    summarizer: Option<JsSummarizerFn>,
    cancel_id: Option<u32>,
) -> Result<String> {
    let work = async move {
        let options = parse_options(options_json)?;
        let messages = parse_messages(&messages_json)?;
        let summarizer = choose_summarizer(summarizer, &options);
        let cancel = token_for(cancel_id);
        let observer = EventBridge { callback: None };
        match compact::summarize_middle(
            &messages,
            0,
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
    AssertUnwindSafe(work)
        .catch_unwind()
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
