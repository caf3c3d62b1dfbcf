//! What the provider tests share: the summarizers under test against a local server, the
//! requests they are given, the responses the servers answer with.
#![allow(dead_code, unused_imports)]

pub use std::io::{Read, Write};
pub use std::net::TcpListener;
pub use std::sync::atomic::{AtomicUsize, Ordering};
pub use std::sync::{Arc, Mutex};
pub use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use context_compact_core::base::error::{CompactError, ErrorCode};
pub use context_compact_core::base::retry::RetryPolicy;
pub use context_compact_core::compact;
pub use context_compact_core::pipeline::CompactOptions;
pub use context_compact_core::providers::{
    self, http, resolve, ApiKey, KeySource, ProviderKind, ProviderOptions,
};
pub use context_compact_core::summary::summarize::{
    summarize_with_retries, AttemptError, AttemptObserver, NoObserver, Retry, Summarizer,
    SummaryFailure, SummaryRequest,
};
#[path = "../common/mod.rs"]
pub mod common;
pub use common::Capture;
pub use serde_json::{json, Value};
pub use tokio_util::sync::CancellationToken;
pub use wiremock::matchers::{method, path};
pub use wiremock::{Mock, MockServer, ResponseTemplate};

pub const KEY: &str = "sk-test-SECRET-123";
pub const PROMPT: &str = "Summarize this.\n[user]\nplease refactor src/parser.rs MIDDLE-MARKER-42";

pub fn no_env(_: &str) -> Option<String> {
    None
}

pub fn summarizer(provider: &str, base_url: &str, extra: Value) -> Box<dyn Summarizer> {
    let mut options = json!({ "provider": provider, "apiKey": KEY, "baseUrl": base_url });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            options[k] = v;
        }
    }
    context_compact_core::options::providers::from_options_with_env(&options, &no_env)
        .expect("valid options")
}

pub fn anthropic(server: &MockServer) -> Box<dyn Summarizer> {
    summarizer("anthropic", &server.uri(), json!({}))
}

pub fn openai(server: &MockServer) -> Box<dyn Summarizer> {
    summarizer("openai", &server.uri(), json!({}))
}

pub fn request(prompt: &str) -> SummaryRequest<'static> {
    SummaryRequest {
        messages: &[],
        range: 0..0,
        origins: &[],
        prompt: prompt.to_string(),
        instructions: String::new(),
        render_limits: Default::default(),
        previous_summary: None,
        model: None,
        custom_instructions: None,
        max_tokens: 1000,
        attempt: 1,
        shared: None,
        usage: None,
        own: Box::leak(Box::default()),
    }
}

pub fn fast(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::ZERO,
    }
}

pub async fn run(s: &dyn Summarizer, max_retries: u32) -> Result<(String, u32), SummaryFailure> {
    summarize_with_retries(
        s,
        request(PROMPT),
        fast(max_retries),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
}

pub async fn run_failed(s: &dyn Summarizer, max_retries: u32) -> CompactError {
    match run(s, max_retries).await {
        Err(SummaryFailure::Failed(e)) => e,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// One attempt, without the retry loop (to see the attempt's own error).
pub async fn attempt(s: &dyn Summarizer) -> AttemptError {
    s.summarize(&request(PROMPT))
        .await
        .expect_err("the attempt should fail")
}

pub async fn requests(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap_or_default()
}

pub fn anthropic_ok(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}
    }))
}

pub fn openai_ok(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    }))
}

pub fn anthropic_error(status: u16, kind: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "type": "error", "error": {"type": kind, "message": message}
    }))
}

pub async fn mount(server: &MockServer, route: &str, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(response)
        .mount(server)
        .await;
}

pub async fn mount_once(server: &MockServer, route: &str, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(response)
        .up_to_n_times(1)
        .mount(server)
        .await;
}

pub const MESSAGES: &str = "/v1/messages";
pub const COMPLETIONS: &str = "/v1/chat/completions";
