//! OpenAI-compatible Chat Completions: `POST {baseUrl}/v1/chat/completions` (OpenAI, vLLM,
//! Ollama, DeepSeek, …; a `baseUrl` ending in `/v1` is accepted as is).

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};

use super::http::{self, Dialect, HttpProvider, HttpSummarizer, Protocol};
use super::shared;
use crate::base::error::ErrorCode;
use crate::base::text;
use crate::summary::summarize::{AttemptError, Retry, SharedRequest, SummaryUsage};

/// The Chat Completions API's dialect.
#[derive(Debug)]
pub struct OpenAi;

/// Summaries by a Chat Completions server.
pub type OpenAiSummarizer = HttpSummarizer<OpenAi>;

/// Output tokens added to a reasoning model's `max_completion_tokens` in a shared request for
/// its reasoning, which the budget also holds.
const REASONING_HEADROOM: u32 = 8_192;

/// Reasoning models (o-series, gpt-5) take `max_completion_tokens`; `max_tokens` is rejected.
pub fn uses_max_completion_tokens(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let o_series = name.len() >= 2 && name.starts_with('o') && name.as_bytes()[1].is_ascii_digit();
    o_series || name.starts_with("gpt-5")
}

impl Dialect for OpenAi {
    const PROVIDER: &'static str = "openai";
    const PROTOCOL: Protocol = Protocol::OpenAi;
    const ENDPOINT: &'static str = "chat/completions";

    fn headers(http: &HttpProvider) -> HeaderMap {
        let mut headers = HeaderMap::new();
        // Validated when the options were read.
        if let Ok(mut auth) = HeaderValue::from_str(&format!("Bearer {}", http.key.expose())) {
            auth.set_sensitive(true);
            headers.insert(AUTHORIZATION, auth);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers
    }

    fn body(http: &HttpProvider, prompt: &str, max_tokens: u32) -> Value {
        let limit_field = if uses_max_completion_tokens(&http.model) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        let mut body = json!({
            "model": http.model,
            "messages": [{ "role": "user", "content": prompt }],
        });
        body[limit_field] = json!(http.max_tokens(max_tokens));
        body
    }

    fn shared_body(http: &HttpProvider, shared: &SharedRequest<'_>, max_tokens: u32) -> Value {
        let reasoning = uses_max_completion_tokens(&http.model)
            || shared.agent_request.contains_key("max_completion_tokens");
        let (field, budget) = if reasoning {
            // The completion budget of a reasoning model also holds its reasoning
            // tokens: room for them beside the summary.
            (
                "max_completion_tokens",
                max_tokens.saturating_add(REASONING_HEADROOM),
            )
        } else {
            ("max_tokens", max_tokens)
        };
        shared::openai_body(shared, field, http.max_tokens(budget))
    }

    fn usage(usage: &Value) -> SummaryUsage {
        SummaryUsage::from_openai(usage)
    }

    fn parse_response(status: u16, body: &[u8]) -> Result<String, AttemptError> {
        parse_response(status, body)
    }

    fn can_share(http: &HttpProvider, request: &SharedRequest<'_>) -> Result<(), String> {
        shared::check_model(request, &http.model)?;
        shared::check_tool_choice(request)?;
        shared::check_openai_messages(request.conversation)
    }

    fn caches_by_itself(prompt_tokens: u64) -> Result<String, String> {
        shared::check_openai_caching(prompt_tokens)
    }
}

/// The summary text of a successful response: `choices[0].message.content`. A refusal, a
/// `length` cut, `null` or empty content or a malformed body are failed attempts.
pub fn parse_response(status: u16, body: &[u8]) -> Result<String, AttemptError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        http::invalid_response(Protocol::OpenAi, status, "a body that is not JSON", body)
    })?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .unwrap_or("");
        return Err(AttemptError::new(
            ErrorCode::InvalidResponse,
            format!(
                "openai API returned HTTP {status} with an error: {}",
                text::clip(message, 500)
            ),
            Retry::Yes,
        )
        .with_status(status));
    }
    let Some(choice) = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return Err(http::invalid_response(
            Protocol::OpenAi,
            status,
            "no choices",
            body,
        ));
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err(http::invalid_response(
            Protocol::OpenAi,
            status,
            "no choices[0].message",
            body,
        ));
    };
    if let Some(refusal) = message
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
    {
        return Err(AttemptError::new(
            ErrorCode::Refused,
            format!(
                "the model refused to write the summary: {}",
                text::clip(refusal, 300)
            ),
            Retry::Yes,
        )
        .with_status(status));
    }
    let finish_reason = choice.get("finish_reason").and_then(Value::as_str);
    // A shared request keeps the loop's tools, so the model may call one instead of writing
    // the summary: a failed attempt (retried, then the transcript request).
    if let Some(call) = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .and_then(|calls| calls.first())
    {
        return Err(shared::tool_call_error(
            call.pointer("/function/name").and_then(Value::as_str),
            status,
        ));
    }
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        // Some compatible servers return content parts.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    match finish_reason {
        Some("length") => Err(AttemptError::new(
            ErrorCode::Truncated,
            format!(
                "the summary was cut off at the output limit (finish_reason: length, {} characters); raise summaryMaxTokens",
                text.len()
            ),
            Retry::Yes,
        )
        .with_status(status)),
        Some("content_filter") => Err(AttemptError::new(
            ErrorCode::Refused,
            "the summary was withheld by the content filter (finish_reason: content_filter)",
            Retry::Yes,
        )
        .with_status(status)),
        _ if text.trim().is_empty() => Err(AttemptError::new(
            ErrorCode::EmptySummary,
            format!(
                "the model returned an empty summary (finish_reason: {})",
                finish_reason.unwrap_or("none")
            ),
            Retry::Yes,
        )
        .with_status(status)),
        _ => {
            if let Some(usage) = value.get("usage") {
                tracing::debug!(
                    provider = "openai",
                    prompt_tokens = usage["prompt_tokens"].as_u64().unwrap_or(0),
                    completion_tokens = usage["completion_tokens"].as_u64().unwrap_or(0),
                    "summary received"
                );
            }
            Ok(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_models_take_max_completion_tokens() {
        for m in [
            "o1",
            "o3-mini",
            "o4-mini",
            "gpt-5",
            "gpt-5-mini",
            "openai/o3",
        ] {
            assert!(uses_max_completion_tokens(m), "{m}");
        }
        for m in [
            "gpt-4o-mini",
            "gpt-4.1",
            "llama3",
            "deepseek-chat",
            "olmo-2",
        ] {
            assert!(!uses_max_completion_tokens(m), "{m}");
        }
    }
}
