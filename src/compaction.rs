//! Compaction and summaries: the JavaScript summarizer and event callbacks behind the
//! core's traits, `compactMessages`, `generateSummary`, and the writes beside them
//! (persist, offload, a custom strategy's record).

use crate::cancel::token_for;
use crate::convert::{
    guarded, internal, invalid, parse_format, parse_input, parse_json, parse_options,
    parse_options_and_value,
};
use crate::counting::parse_calibration;
use crate::js_json::JsMessages;
use crate::options::call_options;
use crate::{checkpoints, js_store, logging};
use context_compact_core::archive;
use context_compact_core::formats::{Input, View};
use context_compact_core::ops::{generate, offload};
use context_compact_core::options;
use context_compact_core::pipeline::rehydrate::FileReader;
use context_compact_core::pipeline::report::custom;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::pipeline::{self, BeforeCompactInfo, CompactHooks, Confirmation};
use context_compact_core::resume::precompute::{self, Precomputed};
use context_compact_core::summary::prompt;
use context_compact_core::summary::summarize::{
    AttemptError, AttemptObserver, BoxFuture, Retry, Summarizer, SummaryFailure, SummaryRequest,
};
use futures::FutureExt;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;

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
    /// The identities (SHA-256, hex) of the messages to summarize that the library wrote (its
    /// records name them): the prompt skips those, and renders any other message as the
    /// caller's, whatever it starts with.
    pub own_summaries: Vec<String>,
}

/// What the JS layer's summarizer wrapper rejects with when the caller's summarizer resolved
/// with something other than a string (lib/addon/callbacks.js).
const NOT_A_STRING: &str = "the summarizer must resolve with a string";

pub(crate) type JsSummarizerFn =
    ThreadsafeFunction<SummarizeCall, Promise<String>, SummarizeCall, Status, false>;
pub(crate) type JsEventFn = ThreadsafeFunction<String, (), String, Status, false>;
/// The JS `rehydrate.read(path)`, wrapped by the JS layer so that it resolves with a string or
/// null (and rejects on anything else).
pub(crate) type JsReadFn =
    ThreadsafeFunction<String, Promise<Option<String>>, String, Status, false>;

/// The caller's `rehydrate.read` behind the core's `FileReader`: the loop's own file access.
struct JsFileReader {
    callback: JsReadFn,
}

impl FileReader for JsFileReader {
    fn read<'a>(
        &'a self,
        path: &'a str,
    ) -> BoxFuture<'a, std::result::Result<Option<String>, String>> {
        let path = path.to_string();
        Box::pin(async move {
            let promise = self
                .callback
                .call_async_catch(path)
                .await
                .map_err(|e| e.reason.clone())?;
            promise.await.map_err(|e| e.reason.clone())
        })
    }
}

pub(crate) struct JsSummarizer {
    callback: JsSummarizerFn,
    model: Option<String>,
    /// The list's view, when it is in another format: the JS summarizer is given the caller's
    /// items, so each view message's origin becomes its items' indices.
    view: Option<std::sync::Arc<View>>,
}

impl Summarizer for JsSummarizer {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, std::result::Result<String, AttemptError>> {
        let caller = request.caller_messages(self.view.as_deref());
        let call = SummarizeCall {
            start: request.range.start as u32,
            end: request.range.end as u32,
            origins: caller.origins.iter().map(|o| o.map(|i| i as u32)).collect(),
            made: caller.made.iter().map(Value::to_string).collect(),
            instructions: request.instructions.clone(),
            max_tool_result_chars: request.max_tool_result_chars().map(|n| n as f64),
            previous_summary: request.previous_summary.clone(),
            model: request.model.clone(),
            custom_instructions: request.custom_instructions.clone(),
            max_tokens: request.max_tokens,
            attempt: request.attempt,
            own_summaries: caller.own_summaries,
        };
        Box::pin(async move {
            let failed = |e: Error| {
                // A summarizer that resolves with something other than a string has a bug that
                // another attempt would meet again: reported at once, not retried (the JS layer
                // rejects with this sentence, lib/addon/callbacks.js).
                let retry = if e.reason.contains(NOT_A_STRING) {
                    Retry::No
                } else {
                    Retry::Yes
                };
                AttemptError::new(
                    context_compact_core::base::error::ErrorCode::SummarizerError,
                    format!("the summarizer failed: {}", e.reason),
                    retry,
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
    own_summaries: Option<Vec<String>>,
) -> Result<String> {
    guarded("renderSummaryPrompt", || {
        let input = parse_input(messages, parse_format(format)?)?;
        Ok(prompt::render_prompt_for_caller(
            &instructions,
            previous_summary.as_deref(),
            input.messages(),
            max_tool_result_chars,
            &own_summaries.unwrap_or_default(),
        ))
    })
}

/// The JS `onBeforeCompact` callback, wrapped by the JS layer so that it resolves with a
/// boolean (false: decline). Receives the `BeforeCompactInfo` as JSON.
pub(crate) type JsBeforeCompactFn =
    ThreadsafeFunction<String, Promise<bool>, String, Status, false>;

/// Forwards events to the JS `onEvent` bridge and asks `onBeforeCompact`.
pub(crate) struct EventBridge {
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
            Confirmation::from_answer(answer.map_err(|e| e.reason))
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
        self.emit(error.retry_event(attempt, delay));
    }
}

/// The list read in its format, its counts said of the view, and the summarizer.
type Prepared = (Input, Option<Vec<usize>>, Box<dyn Summarizer>);

/// What `compactMessages` and a background precompute both do first: the list read in its
/// format (the options adjusted to it), the caller's per-item counts said of the view, and the
/// summarizer: a JS `summarizer`, else Anthropic's on-demand compaction with the plain
/// Anthropic summarizer as its fallback (`provider: 'anthropic-compaction'`), else the provider.
fn prepare(
    messages: JsMessages,
    counts: Option<Vec<u32>>,
    options: &mut CompactOptions,
    raw_options: &Value,
    summarizer: Option<JsSummarizerFn>,
) -> Result<Prepared> {
    let input = parse_input(messages, options.format)?;
    input.adjust(options);
    // The caller's counts are per item; the pipeline works on the view's messages.
    let counts = input.view_counts(counts.map(|c| c.into_iter().map(|n| n as usize).collect()));
    let summarizer = match summarizer {
        Some(callback) => js_summarizer(callback, options, &input),
        None => options::providers::choose(raw_options, options).map_err(invalid)?,
    };
    Ok((input, counts, summarizer))
}

/// The caller's JS `summarizer` behind the core's `Summarizer` (the caller's items in requests).
fn js_summarizer(
    callback: JsSummarizerFn,
    options: &CompactOptions,
    input: &Input,
) -> Box<dyn Summarizer> {
    Box::new(JsSummarizer {
        callback,
        model: options.model.clone(),
        view: input.view.clone().map(std::sync::Arc::new),
    })
}

/// What `compactJson` is handed beside the messages: the options (as JSON, read once per
/// `Compactor`, see `convert`), what a `Compactor` holds, and the caller's callbacks.
#[napi(object, object_to_js = false)]
pub struct CompactCall {
    /// The options as JSON; with `options_held`, only those this call changes (a JSON object,
    /// `null` unsetting one).
    pub options_json: Option<String>,
    /// A `Compactor`'s held options (`options::HeldOptions`' id): read once per compactor.
    pub options_held: Option<u32>,
    /// The caller's per-item token counts (a `Compactor`'s cache).
    pub counts: Option<Vec<u32>>,
    pub summarizer: Option<JsSummarizerFn>,
    pub on_event: Option<JsEventFn>,
    pub cancel_id: Option<u32>,
    pub calibration_json: Option<String>,
    pub on_log: Option<logging::JsLogFn>,
    pub on_before_compact: Option<JsBeforeCompactFn>,
    /// A `Compactor`'s checkpoint shelf (`checkpoints::CheckpointShelf`'s id: the records stay
    /// in the addon), and a summary it prepared in the background.
    pub checkpoint_shelf: Option<u32>,
    pub precomputed_json: Option<String>,
    /// `rehydrate.read`.
    pub on_read: Option<JsReadFn>,
}

/// Runs a compaction. Resolves with the outcome as JSON, or rejects with `AbortError` when the
/// token is cancelled.
#[napi]
pub async fn compact_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    call: CompactCall,
) -> Result<String> {
    let CompactCall {
        options_json,
        options_held,
        counts,
        summarizer,
        on_event,
        cancel_id,
        calibration_json,
        on_log,
        on_before_compact,
        checkpoint_shelf,
        precomputed_json,
        on_read,
    } = call;
    let work = async move {
        let (mut options, raw_options) = match options_held {
            Some(id) => {
                let (mut options, value) =
                    call_options(id, options_json.as_deref(), false)?.into_owned();
                // The caller's own store is registered per call: attached to this call's copy.
                js_store::attach(&mut options, &value)?;
                (options, value)
            }
            None => parse_options_and_value(options_json)?,
        };
        options.calibration = parse_calibration(calibration_json)?;
        // What a Compactor holds: its checkpoints, and a summary it prepared in the background.
        // (the shelf's records are shared, not copied: this costs the same below the threshold
        // however many compactions came before, see `checkpoints`).
        if let (Some(id), true) = (checkpoint_shelf, options.checkpoints) {
            options.known_checkpoints = checkpoints::held(id);
        }
        if let Some(json) = precomputed_json {
            options.precomputed = Some(std::sync::Arc::new(
                serde_json::from_value::<Precomputed>(parse_json(&json, "precomputed")?)
                    .map_err(|e| Error::new(Status::InvalidArg, format!("precomputed: {e}")))?,
            ));
        }
        if let (Some(read), Some(rehydrate)) = (on_read, options.rehydrate.as_mut()) {
            rehydrate.reader = Some(std::sync::Arc::new(JsFileReader { callback: read }));
        }
        let (input, counts, summarizer) =
            prepare(messages, counts, &mut options, &raw_options, summarizer)?;
        let events = EventBridge {
            callback: on_event,
            before_compact: on_before_compact,
        };
        let cancel = token_for(cancel_id);
        match context_compact_core::compact_with_hooks(
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
                // The record this compaction made or reused is the compactor's to keep.
                if let (Some(id), Some(record)) = (checkpoint_shelf, &outcome.checkpoint_record) {
                    checkpoints::keep(id, record);
                }
                // As the JS layer reads it (`lib/messages/result.js`).
                Ok(input.outcome_json(outcome, options.encoding))
            }
            Err(pipeline::Aborted) => {
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
        archive::session::persist_in(&messages, &dir, store.as_deref(), &session_id)
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
    let work = move || offload::offload_input(&input, max_tokens as usize, &options).to_string();
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
    let work = move || custom::record_custom(&options, &removed, &record).to_string();
    tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(work)))
        .await
        .map_err(|_| internal("recordCustomCompaction"))?
        .map_err(|_| internal("recordCustomCompaction"))
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
        let (mut options, raw_options) = parse_options_and_value(options_json)?;
        let input = parse_input(messages, options.format)?;
        options.format = Some(input.format());
        let summarizer = match summarizer {
            Some(callback) => js_summarizer(callback, &options, &input),
            None => options::providers::from_options(&raw_options).map_err(invalid)?,
        };
        let cancel = token_for(cancel_id);
        let observer = EventBridge {
            callback: None,
            before_compact: None,
        };
        match generate::generate_summary(
            input.messages(),
            &options,
            summarizer.as_ref(),
            &cancel,
            &observer,
        )
        .await
        {
            Ok(summary) => Ok(summary),
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

/// Prepares the summary of the middle of `messages` as the trigger would cut it now, writing
/// nothing (a `Compactor`'s `background`). Resolves with `{"precomputed": …}` (what
/// `compactJson` takes back as `precomputed_json`) or `{"error": {code, message, attempts}}`;
/// rejects with `AbortError` when the token is cancelled.
#[napi]
pub async fn precompute_summary_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    call: CompactCall,
) -> Result<String> {
    // The same call as a compaction's; what only a compaction reads is not given.
    let CompactCall {
        options_json,
        counts,
        summarizer,
        on_event,
        cancel_id,
        calibration_json,
        on_log,
        ..
    } = call;
    let work = async move {
        let (mut options, raw_options) = parse_options_and_value(options_json)?;
        options.calibration = parse_calibration(calibration_json)?;
        let (input, counts, summarizer) =
            prepare(messages, counts, &mut options, &raw_options, summarizer)?;
        let observer = EventBridge {
            callback: on_event,
            before_compact: None,
        };
        let cancel = token_for(cancel_id);
        match precompute::precompute(
            input.messages(),
            counts,
            &options,
            summarizer.as_ref(),
            &cancel,
            &observer,
        )
        .await
        {
            Ok(result) => Ok(precompute::answer(&input, result).to_string()),
            Err(pipeline::Aborted) => {
                Err(Error::new(Status::Cancelled, "This operation was aborted"))
            }
        }
    };
    logging::with_logger(on_log, AssertUnwindSafe(work).catch_unwind())
        .await
        .unwrap_or_else(|_| Err(internal("precomputeSummary")))
}
