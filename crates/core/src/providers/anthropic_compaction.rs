//! Anthropic's on-demand compaction (beta `compact-2026-09-04`): the API itself summarizes the
//! messages it is sent and returns a signed `compaction` block, which later requests send first
//! in place of the messages it summarizes.
//!
//! Source: <https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand>
//! ("Request a summary", "Write your own summarization prompt", "Handle a missing summary or an
//! error") and the supported models of its feature metadata
//! (<https://platform.claude.com/docs/en/build-with-claude/compaction-keep-recent-turns>).
//!
//! ```text
//! POST {baseUrl}/v1/messages
//! x-api-key, anthropic-version: 2023-06-01, anthropic-beta: compact-2026-09-04
//! { model, max_tokens, system?, tools?, messages, compaction: { type: "summarize", instructions? } }
//! → 200 { content: [{ type: "compaction", content: "…", signature: "…" }], stop_reason: "compaction", usage }
//! ```
//!
//! How each outcome is reported ([`NativeFailure`]):
//! - `stop_reason: "compaction"` with a block whose `content` is text: [`NativeCompaction`], the
//!   block exactly as returned, twice: as a `Value` (parsed with `preserve_order` and
//!   `arbitrary_precision`: fields keep their order, nothing is added, numbers keep their
//!   digits) and as the response's own bytes (`raw_block`). Serializing the `Value` gives those
//!   bytes back except where JSON allows two spellings: serde_json writes exponents as `e+21`
//!   (for `1e21` or `1E21`) and writes non-ASCII characters and `/` unescaped (for `\u00e9`,
//!   `\/`). Both spellings parse to the same value; the changes the page says the API rejects
//!   are an altered `content` or `signature` and added fields (such as `citations: null`).
//! - A 200 without a summary (empty `content`, or a block whose `content` is `null`), by
//!   `stop_reason`: `max_tokens` is retried with twice the `max_tokens` (within the model's
//!   output limit; `TRUNCATED`); `tool_use` is retried (`EMPTY_SUMMARY`; custom instructions
//!   always end with [`NO_TOOLS_INSTRUCTION`]); `model_context_window_exceeded` (`BAD_REQUEST`:
//!   send fewer messages or shorter instructions), `refusal` (`REFUSED`) and `end_turn`
//!   (`EMPTY_SUMMARY`) are not retried, as the page says to continue without a summary.
//! - HTTP errors follow the summaries' policy ([`http::classify_status`]): a 529
//!   `overloaded_error` with `error.details.error_code: compaction_unavailable` is retried, a
//!   401 is `AUTHENTICATION_FAILED` at once, a 400 `compaction_nothing_to_summarize` is
//!   `BAD_REQUEST` at once.
//! - [`NativeFailure::Unavailable`]: a 400 or 404 whose error (type `invalid_request_error`,
//!   `not_found_error` or none) has a message about compaction (`compaction` or the beta's
//!   name), no `compaction_…` error code and no mention of tools. That covers the documented
//!   "the `compaction` parameter requires anthropic-beta: compact-2026-09-04" (a proxy that
//!   drops the header), a model without compaction, and platforms that do not offer it (Amazon
//!   Bedrock: "not available", with no documented error body, so a validation error that names
//!   the unknown `compaction` field is expected). The errors the page lists for a request's own
//!   content (`compaction_nothing_to_summarize`, …; "the last assistant turn ends in a tool
//!   call") are `Failed`.

use std::time::SystemTime;

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::anthropic::ANTHROPIC_VERSION;
use super::http::{self, ApiErrorBody, HttpProvider, Protocol};
use crate::base::error::{CompactError, ErrorCode};
use crate::base::retry::RetryPolicy;
use crate::summary::summarize::{AttemptError, AttemptObserver, Retries, Retry, SummaryFailure};

/// The beta header value that enables on-demand compaction.
pub const COMPACTION_BETA: &str = "compact-2026-09-04";

/// The longest `instructions` the API accepts, in characters (measured here in UTF-16 code
/// units, which is never fewer).
pub const MAX_INSTRUCTIONS_CHARS: usize = 16_384;

/// Appended to custom instructions: they replace the built-in prompt, and the page says to tell
/// the model not to call tools (a tool call ends the call with `stop_reason: tool_use` and no
/// summary).
pub const NO_TOOLS_INSTRUCTION: &str = "Do not call any tools. Respond with the summary text only.";

/// The models the documentation lists as supporting on-demand compaction (its feature metadata,
/// plus `claude-sonnet-5-5`). Later models probably support it too: see
/// [`supports_compaction`].
pub const SUPPORTED_MODELS: &[&str] = &[
    "claude-fable-5-1",
    "claude-mythos-5-1",
    "claude-fable-5",
    "claude-mythos-5",
    "claude-mythos-preview",
    "claude-opus-5-5",
    "claude-opus-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-5-5",
    "claude-sonnet-5",
    "claude-sonnet-4-6",
];

/// Model families older than the first that supports compaction: none of them does.
const UNSUPPORTED_PREFIXES: &[&str] = &[
    "claude-instant",
    "claude-1",
    "claude-2",
    "claude-3",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-haiku-4",
];

/// Whether a model offers on-demand compaction, from the documented list: `Some(true)` for a
/// listed model (also with a date suffix, `-20260101` or `@20260101`, or an `anthropic/`
/// prefix), `Some(false)` for older Claude models (`claude-3…`, `claude-sonnet-4-5`,
/// `claude-opus-4` to `4-5`, `claude-haiku-4…`), Amazon Bedrock model ids
/// (`anthropic.claude-…`, `us.anthropic.claude-…`; compaction is "not available" there) and
/// models that are not Claude's, `None` for other Claude models (newer ones probably support
/// it: try, and treat [`NativeFailure::Unavailable`] as the answer).
pub fn supports_compaction(model: &str) -> Option<bool> {
    let lower = model.trim().to_ascii_lowercase();
    if lower.starts_with("anthropic.") || lower.contains(".anthropic.") {
        return Some(false);
    }
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let name = name.split('@').next().unwrap_or(name);
    let name = strip_date(name);
    if !name.starts_with("claude") {
        return Some(false);
    }
    if SUPPORTED_MODELS.contains(&name) {
        return Some(true);
    }
    let older = |prefix: &&str| {
        name == *prefix
            || name
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('-'))
    };
    // `claude-opus-4` / `claude-sonnet-4` alone are the 4.0 models.
    if UNSUPPORTED_PREFIXES.iter().any(older)
        || name == "claude-opus-4"
        || name == "claude-sonnet-4"
    {
        return Some(false);
    }
    None
}

/// The name without a trailing `-YYYYMMDD` (or `-latest`).
fn strip_date(name: &str) -> &str {
    if let Some(rest) = name.strip_suffix("-latest") {
        return rest;
    }
    match name.rsplit_once('-') {
        Some((rest, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => name,
    }
}

/// A summary written by the API.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeCompaction {
    /// The `compaction` block exactly as returned (every field, in order): send it first in
    /// later requests, unchanged, with the beta header.
    pub block: Value,
    /// The same block as the bytes of the response (JSON text), for a caller that stores or
    /// forwards text.
    pub raw_block: String,
    /// The response's `usage` (`Null` when absent): the call is billed in `usage.iterations`,
    /// not in the top-level counts.
    pub usage: Value,
    /// How many requests it took.
    pub attempts: u32,
}

impl NativeCompaction {
    /// The summary's text (the block's `content`).
    pub fn summary(&self) -> &str {
        self.block
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The assistant message that replaces the summarized messages: `{role: "assistant",
    /// content: [block]}`.
    pub fn message(&self) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), Value::String("assistant".into()));
        message.insert("content".into(), Value::Array(vec![self.block.clone()]));
        Value::Object(message)
    }
}

/// Why no block came back.
#[derive(Debug, Clone, PartialEq)]
pub enum NativeFailure {
    /// The endpoint or model does not offer compaction: fall back to our own summary and don't
    /// try again for this model.
    Unavailable {
        status: Option<u16>,
        message: String,
    },
    /// It was tried and failed (after the retries the policy allows): fall back for this call.
    Failed(CompactError),
    /// The caller's signal aborted the work.
    Aborted,
}

impl From<SummaryFailure> for NativeFailure {
    fn from(failure: SummaryFailure) -> Self {
        match failure {
            SummaryFailure::Failed(error) => NativeFailure::Failed(error),
            SummaryFailure::Aborted => NativeFailure::Aborted,
        }
    }
}

/// What one attempt can end with, besides a retryable or final error.
enum Attempt {
    Compacted(Compacted),
    Unavailable { status: u16, message: String },
}

/// On-demand compaction by the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicCompactionClient {
    http: HttpProvider,
    url: String,
}

impl AnthropicCompactionClient {
    pub fn new(http: HttpProvider) -> Self {
        let url = http::endpoint(&http.base_url, "messages");
        AnthropicCompactionClient { http, url }
    }

    /// The model the compaction request runs on.
    pub fn model(&self) -> &str {
        &self.http.model
    }

    /// [`supports_compaction`] for this client's model.
    pub fn supports_model(&self) -> Option<bool> {
        supports_compaction(&self.http.model)
    }

    /// The request body: `model`, `max_tokens` (clamped to the model's output limit when known),
    /// `system` and `tools` when given (send the conversation's own), the messages exactly as
    /// given, and `compaction: {type: "summarize", instructions?}`. Blank instructions are left
    /// out (the API's built-in prompt applies); others are followed by
    /// [`NO_TOOLS_INSTRUCTION`] and cut to [`MAX_INSTRUCTIONS_CHARS`].
    ///
    /// The caller must not end `messages` with an assistant turn whose tool call has no result
    /// (the API rejects it), and must send at least one user or assistant message.
    pub fn body(
        &self,
        messages: &[Value],
        system: Option<&Value>,
        tools: Option<&Value>,
        instructions: Option<&str>,
        max_tokens: u32,
    ) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), Value::String(self.http.model.clone()));
        body.insert(
            "max_tokens".into(),
            Value::from(self.http.max_tokens(max_tokens)),
        );
        if let Some(system) = system.filter(|v| !v.is_null()) {
            body.insert("system".into(), system.clone());
        }
        if let Some(tools) = tools.filter(|v| !v.is_null()) {
            body.insert("tools".into(), tools.clone());
        }
        body.insert("messages".into(), Value::Array(messages.to_vec()));
        let mut compaction = Map::new();
        compaction.insert("type".into(), Value::String("summarize".into()));
        if let Some(text) = instructions.and_then(full_instructions) {
            compaction.insert("instructions".into(), Value::String(text));
        }
        body.insert("compaction".into(), Value::Object(compaction));
        Value::Object(body)
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        // Validated when the options were read.
        if let Ok(mut key) = HeaderValue::from_str(self.http.key.expose()) {
            key.set_sensitive(true);
            headers.insert("x-api-key", key);
        }
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers.insert("anthropic-beta", HeaderValue::from_static(COMPACTION_BETA));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers
    }

    /// Asks the API to summarize `messages`, retrying as the summaries do (`policy`, backoff,
    /// `retry-after`, `x-should-retry`); a `max_tokens` stop is retried with twice the
    /// `max_tokens`. See the module documentation for how each outcome is reported.
    #[allow(clippy::too_many_arguments)]
    pub async fn compact(
        &self,
        messages: &[Value],
        system: Option<&Value>,
        tools: Option<&Value>,
        instructions: Option<&str>,
        max_tokens: u32,
        policy: RetryPolicy,
        cancel: &CancellationToken,
        observer: &dyn AttemptObserver,
    ) -> Result<NativeCompaction, NativeFailure> {
        // Built once: the messages can be the whole conversation.
        let mut body = self.body(messages, system, tools, instructions, max_tokens);
        let mut requested = max_tokens.max(1);
        let mut retries = Retries::new(
            "anthropic-compaction",
            "native compaction",
            policy,
            cancel,
            observer,
        );
        loop {
            let attempt = retries.begin()?;
            body["max_tokens"] = Value::from(self.http.max_tokens(requested));
            let outcome = retries
                .run(self.attempt(&body, messages.len(), attempt))
                .await?
                .map_err(|e| self.http.scrub(e));
            match outcome {
                Ok(Attempt::Compacted(Compacted {
                    block,
                    raw_block,
                    usage,
                })) => {
                    tracing::debug!(
                        provider = "anthropic-compaction",
                        model = self.http.model.as_str(),
                        attempt,
                        summary_chars = block["content"].as_str().map_or(0, str::len),
                        "compaction block received"
                    );
                    return Ok(NativeCompaction {
                        block,
                        raw_block,
                        usage,
                        attempts: attempt,
                    });
                }
                Ok(Attempt::Unavailable { status, message }) => {
                    let message = http::redact(&message, self.http.key.expose());
                    tracing::warn!(
                        provider = "anthropic-compaction",
                        model = self.http.model.as_str(),
                        status,
                        "on-demand compaction is not available: {message}"
                    );
                    return Err(NativeFailure::Unavailable {
                        status: Some(status),
                        message,
                    });
                }
                Err(mut error) => {
                    if error.code == ErrorCode::Truncated {
                        // Resend with a larger max_tokens, when the model allows one.
                        let sent = self.http.max_tokens(requested);
                        let next = self.http.max_tokens(requested.saturating_mul(2));
                        if next > sent {
                            requested = requested.saturating_mul(2);
                        } else {
                            error.retry = Retry::No;
                        }
                    }
                    retries.failed(error).await?;
                }
            }
        }
    }

    async fn attempt(
        &self,
        body: &Value,
        message_count: usize,
        attempt: u32,
    ) -> Result<Attempt, AttemptError> {
        tracing::debug!(
            provider = "anthropic-compaction",
            model = self.http.model.as_str(),
            attempt,
            messages = message_count,
            max_tokens = body["max_tokens"].as_u64().unwrap_or(0),
            "sending a compaction request to {}",
            self.url
        );
        let response = http::post_json_raw(
            &self.http.client,
            &self.url,
            self.headers(),
            body,
            self.http.timeout,
        )
        .await?;
        let status = response.status.as_u16();
        if response.status.is_success() {
            return parse_response(status, &response.body).map(Attempt::Compacted);
        }
        if let Some(parsed) = http::parse_error_body(&response.body) {
            if is_unavailable(status, &parsed) {
                let error = http::status_error(
                    response.status,
                    &response.headers,
                    &response.body,
                    Protocol::Anthropic,
                    SystemTime::now(),
                );
                return Ok(Attempt::Unavailable {
                    status,
                    message: error.message,
                });
            }
        }
        Err(http::status_error(
            response.status,
            &response.headers,
            &response.body,
            Protocol::Anthropic,
            SystemTime::now(),
        ))
    }
}

/// The instructions as sent: the caller's (cut so that the whole fits) and
/// [`NO_TOOLS_INSTRUCTION`]; `None` when blank.
fn full_instructions(text: &str) -> Option<String> {
    let text = text.trim_end();
    if text.trim().is_empty() {
        return None;
    }
    let suffix = format!("\n\n{NO_TOOLS_INSTRUCTION}");
    let room = MAX_INSTRUCTIONS_CHARS - suffix.encode_utf16().count();
    let mut used = 0;
    let mut cut = text.len();
    for (index, c) in text.char_indices() {
        used += c.len_utf16();
        if used > room {
            cut = index;
            break;
        }
    }
    Some(format!("{}{suffix}", &text[..cut]))
}

/// A 400/404 that says the endpoint or model does not offer compaction (see the module
/// documentation).
fn is_unavailable(status: u16, error: &ApiErrorBody) -> bool {
    if !matches!(status, 400 | 404) {
        return false;
    }
    let type_ok = matches!(
        error.error_type.as_deref(),
        None | Some("invalid_request_error") | Some("not_found_error")
    );
    let request_problem = [&error.code, &error.detail_code]
        .into_iter()
        .flatten()
        .any(|code| code.starts_with("compaction_"));
    let Some(message) = &error.message else {
        return false;
    };
    let message = message.to_ascii_lowercase();
    let about_compaction = message.contains("compaction") || message.contains(COMPACTION_BETA);
    let about_tools = message.contains("tool");
    type_ok && !request_problem && about_compaction && !about_tools
}

/// The parts of a 200 that holds a summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    /// The `compaction` block as parsed.
    pub block: Value,
    /// The block's bytes in the response.
    pub raw_block: String,
    /// `usage`, or `Null`.
    pub usage: Value,
}

/// The response's `content` blocks as their bytes.
#[derive(Deserialize)]
struct RawContent<'a> {
    #[serde(borrow)]
    content: Vec<&'a RawValue>,
}

/// The block and `usage` of a 200, or why it holds no summary.
pub fn parse_response(status: u16, body: &[u8]) -> Result<Compacted, AttemptError> {
    let value = super::anthropic::parse_message(status, body)?;
    let content = super::anthropic::message_content(&value, status, body)?;
    let stop_reason = value.get("stop_reason").and_then(Value::as_str);
    let fail = |code: ErrorCode, retry: Retry, what: String| {
        Err(AttemptError::new(code, what, retry).with_status(status))
    };
    match stop_reason {
        Some("compaction") => {}
        Some("max_tokens") => {
            return fail(
                ErrorCode::Truncated,
                Retry::Yes,
                "the compaction summary was cut off at max_tokens (stop_reason: max_tokens)"
                    .into(),
            )
        }
        Some("model_context_window_exceeded") => {
            return fail(
                ErrorCode::BadRequest,
                Retry::No,
                "no room for the compaction prompt in the model's context window (stop_reason: model_context_window_exceeded): send fewer messages or shorter instructions".into(),
            )
        }
        Some("tool_use") => {
            return fail(
                ErrorCode::EmptySummary,
                Retry::Yes,
                "the model called a tool instead of writing the compaction summary (stop_reason: tool_use)".into(),
            )
        }
        Some("refusal") => {
            return fail(
                ErrorCode::Refused,
                Retry::No,
                "the model declined to write the compaction summary (stop_reason: refusal)".into(),
            )
        }
        Some("end_turn") => {
            return fail(
                ErrorCode::EmptySummary,
                Retry::No,
                "the compaction call returned no summary (stop_reason: end_turn)".into(),
            )
        }
        other => {
            return fail(
                ErrorCode::EmptySummary,
                Retry::Yes,
                format!(
                    "the compaction call returned no summary (stop_reason: {})",
                    other.unwrap_or("none")
                ),
            )
        }
    }
    let Some((index, block)) = content
        .iter()
        .enumerate()
        .find(|(_, b)| b.get("type").and_then(Value::as_str) == Some("compaction"))
    else {
        return Err(http::invalid_response(
            Protocol::Anthropic,
            status,
            "stop_reason compaction but no compaction block",
            body,
        ));
    };
    match block.get("content") {
        Some(Value::String(text)) if !text.trim().is_empty() => {}
        Some(Value::String(_)) | Some(Value::Null) | None => {
            return fail(
                ErrorCode::EmptySummary,
                Retry::Yes,
                "the compaction block has no summary (content is null or empty)".into(),
            )
        }
        Some(_) => {
            return Err(http::invalid_response(
                Protocol::Anthropic,
                status,
                "a compaction block whose content is not text",
                body,
            ))
        }
    }
    if block
        .get("signature")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(http::invalid_response(
            Protocol::Anthropic,
            status,
            "a compaction block without a signature",
            body,
        ));
    }
    let raw_block = serde_json::from_slice::<RawContent>(body)
        .ok()
        .and_then(|raw| raw.content.get(index).map(|b| b.get().to_string()))
        .ok_or_else(|| {
            http::invalid_response(
                Protocol::Anthropic,
                status,
                "a content array that could not be read again",
                body,
            )
        })?;
    let usage = value.get("usage").cloned().unwrap_or(Value::Null);
    Ok(Compacted {
        block: block.clone(),
        raw_block,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_models_are_supported() {
        for model in SUPPORTED_MODELS {
            assert_eq!(supports_compaction(model), Some(true), "{model}");
        }
        assert_eq!(
            supports_compaction("claude-sonnet-4-6-20260217"),
            Some(true)
        );
        assert_eq!(supports_compaction("claude-opus-4-7@20260301"), Some(true));
        assert_eq!(supports_compaction("anthropic/claude-opus-5"), Some(true));
        assert_eq!(supports_compaction("Claude-Opus-5-5"), Some(true));
    }

    #[test]
    fn older_models_bedrock_ids_and_other_vendors_are_not() {
        for model in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-5",
            "claude-opus-4-1",
            "claude-opus-4",
            "claude-sonnet-4",
            "claude-haiku-4-5",
            "claude-3-5-haiku-latest",
            "claude-3-7-sonnet-20250219",
            "anthropic.claude-opus-4-6-v1",
            "us.anthropic.claude-sonnet-4-6",
            "gpt-4o",
        ] {
            assert_eq!(supports_compaction(model), Some(false), "{model}");
        }
    }

    #[test]
    fn unknown_claude_models_are_unknown() {
        for model in ["claude-opus-6", "claude-haiku-5", "claude-sonnet-4-7"] {
            assert_eq!(supports_compaction(model), None, "{model}");
        }
    }

    #[test]
    fn instructions_end_with_no_tools_and_fit_the_limit() {
        assert_eq!(full_instructions("  \n"), None);
        let text = full_instructions("Keep ids.").unwrap();
        assert_eq!(text, format!("Keep ids.\n\n{NO_TOOLS_INSTRUCTION}"));
        // Astral characters count twice (UTF-16), and the cut falls between characters.
        let long = "😀".repeat(MAX_INSTRUCTIONS_CHARS);
        let text = full_instructions(&long).unwrap();
        assert!(text.encode_utf16().count() <= MAX_INSTRUCTIONS_CHARS);
        assert!(text.ends_with(NO_TOOLS_INSTRUCTION));
        assert!(text.starts_with("😀😀"));
    }

    #[test]
    fn unavailable_errors_are_told_from_request_problems() {
        let parse = |body: &str| http::parse_error_body(body.as_bytes()).unwrap();
        let beta = parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"the `compaction` parameter requires anthropic-beta: compact-2026-09-04"}}"#,
        );
        assert!(is_unavailable(400, &beta));
        let model = parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"model claude-haiku-4-5 does not support compaction"}}"#,
        );
        assert!(is_unavailable(400, &model));
        let bedrock = parse(r#"{"message":"compaction: Extra inputs are not permitted"}"#);
        assert!(is_unavailable(400, &bedrock));
        assert!(!is_unavailable(401, &bedrock));
        let nothing = parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"There is nothing to summarize for compaction.","details":{"error_code":"compaction_nothing_to_summarize"}}}"#,
        );
        assert!(!is_unavailable(400, &nothing));
        let open_call = parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"compaction: the last assistant turn ends in a tool_use block without a tool_result"}}"#,
        );
        assert!(!is_unavailable(400, &open_call));
        let unrelated = parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}"#,
        );
        assert!(!is_unavailable(400, &unrelated));
    }
}
