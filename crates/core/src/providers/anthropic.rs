//! The Anthropic Messages API: `POST {baseUrl}/v1/messages`.

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use serde_json::{json, Value};

use super::http::{self, Dialect, HttpProvider, HttpSummarizer, Protocol};
use super::shared;
use crate::base::error::ErrorCode;
use crate::base::text;
use crate::summary::summarize::{AttemptError, Retry, SharedRequest, SummaryUsage};

/// The API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The system prompt of summary requests (the instructions are in the user message).
pub const SYSTEM_PROMPT: &str = "You write faithful, structured summaries of conversations between a user and an AI agent, so that the agent can continue the work from the summary alone. Follow the instructions in the user message exactly.";

/// The Anthropic Messages API's dialect.
#[derive(Debug)]
pub struct Anthropic;

/// Summaries by the Anthropic Messages API.
pub type AnthropicSummarizer = HttpSummarizer<Anthropic>;

impl Dialect for Anthropic {
    const PROVIDER: &'static str = "anthropic";
    const PROTOCOL: Protocol = Protocol::Anthropic;
    const ENDPOINT: &'static str = "messages";

    fn headers(http: &HttpProvider) -> HeaderMap {
        let mut headers = HeaderMap::new();
        // Validated when the options were read.
        if let Ok(mut key) = HeaderValue::from_str(http.key.expose()) {
            key.set_sensitive(true);
            headers.insert("x-api-key", key);
        }
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers
    }

    fn body(http: &HttpProvider, prompt: &str, max_tokens: u32) -> Value {
        json!({
            "model": http.model,
            "max_tokens": http.max_tokens(max_tokens),
            "system": SYSTEM_PROMPT,
            "messages": [{ "role": "user", "content": prompt }],
        })
    }

    fn shared_body(http: &HttpProvider, shared: &SharedRequest<'_>, max_tokens: u32) -> Value {
        shared::anthropic_body(shared, http.max_tokens(max_tokens))
    }

    fn usage(usage: &Value) -> SummaryUsage {
        SummaryUsage::from_anthropic(usage)
    }

    fn parse_response(status: u16, body: &[u8]) -> Result<String, AttemptError> {
        parse_response(status, body)
    }

    fn can_share(http: &HttpProvider, request: &SharedRequest<'_>) -> Result<(), String> {
        shared::check_model(request, &http.model)?;
        shared::check_tool_choice(request)?;
        shared::check_anthropic_messages(request.conversation)?;
        shared::check_thinking(request, &http.model)
    }

    fn caches_by_itself(_prompt_tokens: u64) -> Result<String, String> {
        Err(shared::ANTHROPIC_CACHES_WHEN_ASKED.into())
    }
}

/// A 200's body as JSON: a Messages API message, or an error body sent with a 200 (retried).
pub(crate) fn parse_message(status: u16, body: &[u8]) -> Result<Value, AttemptError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        http::invalid_response(Protocol::Anthropic, status, "a body that is not JSON", body)
    })?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let error = &value["error"];
        return Err(AttemptError::new(
            ErrorCode::InvalidResponse,
            format!(
                "anthropic API returned HTTP {status} with an error: {} {}",
                error["type"].as_str().unwrap_or("error"),
                text::clip(error["message"].as_str().unwrap_or(""), 500)
            ),
            Retry::Yes,
        )
        .with_status(status));
    }
    Ok(value)
}

/// The `content` blocks of a message.
pub(crate) fn message_content<'a>(
    value: &'a Value,
    status: u16,
    body: &[u8],
) -> Result<&'a Vec<Value>, AttemptError> {
    value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            http::invalid_response(Protocol::Anthropic, status, "no content array", body)
        })
}

/// The summary text of a successful response: the concatenated `text` blocks. A refusal, a
/// `max_tokens` cut, empty text or a body that is not a message are failed attempts.
pub fn parse_response(status: u16, body: &[u8]) -> Result<String, AttemptError> {
    let value = parse_message(status, body)?;
    let content = message_content(&value, status, body)?;
    let text: String = content
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("");
    let stop_reason = value.get("stop_reason").and_then(Value::as_str);
    // A shared request keeps the loop's tools, so the model may call one instead of writing
    // the summary: a failed attempt (retried, then the transcript request).
    if let Some(call) = content
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
    {
        return Err(shared::tool_call_error(
            call.get("name").and_then(Value::as_str),
            status,
        ));
    }
    match stop_reason {
        Some("refusal") => Err(AttemptError::new(
            ErrorCode::Refused,
            "the model refused to write the summary (stop_reason: refusal)",
            Retry::Yes,
        )
        .with_status(status)),
        Some("max_tokens") => Err(AttemptError::new(
            ErrorCode::Truncated,
            format!(
                "the summary was cut off at the output limit (stop_reason: max_tokens, {} characters); raise summaryMaxTokens",
                text.len()
            ),
            Retry::Yes,
        )
        .with_status(status)),
        _ if text.trim().is_empty() => Err(AttemptError::new(
            ErrorCode::EmptySummary,
            format!(
                "the model returned an empty summary (stop_reason: {})",
                stop_reason.unwrap_or("none")
            ),
            Retry::Yes,
        )
        .with_status(status)),
        _ => {
            if let Some(usage) = value.get("usage") {
                tracing::debug!(
                    provider = "anthropic",
                    input_tokens = usage["input_tokens"].as_u64().unwrap_or(0),
                    output_tokens = usage["output_tokens"].as_u64().unwrap_or(0),
                    "summary received"
                );
            }
            Ok(text)
        }
    }
}
