//! Anthropic's on-demand compaction client (`providers::anthropic_compaction`) against a local
//! server (wiremock), with retry waits made instant (a zero backoff base).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use context_compact_core::base::error::ErrorCode;
use context_compact_core::base::retry::RetryPolicy;
use context_compact_core::providers::anthropic_compaction::{
    AnthropicCompactionClient, NativeCompaction, NativeFailure, COMPACTION_BETA,
    NO_TOOLS_INSTRUCTION,
};
use context_compact_core::providers::{
    self, resolve, ProviderKind, ProviderOptions, DEFAULT_COMPACTION_MODEL,
};
use context_compact_core::summary::summarize::NoObserver;
mod common;
use common::Capture;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ant-test-SECRET-456";
const MESSAGES: &str = "/v1/messages";

fn no_env(_: &str) -> Option<String> {
    None
}

fn options(base_url: &str, extra: Value) -> Value {
    let mut options =
        json!({ "provider": "anthropic-compaction", "apiKey": KEY, "baseUrl": base_url });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            options[k] = v;
        }
    }
    options
}

fn client_with(server: &MockServer, extra: Value) -> AnthropicCompactionClient {
    providers::compaction_from_options_with_env(&options(&server.uri(), extra), &no_env)
        .expect("valid options")
        .expect("anthropic-compaction")
        .native
        .expect("a key was given")
}

fn client(server: &MockServer) -> AnthropicCompactionClient {
    client_with(server, json!({}))
}

fn fast(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::ZERO,
    }
}

/// The conversation as a caller's JSON text: keys out of alphabetical order, unicode, numbers
/// whose spelling a float would lose.
const HISTORY: &str = r#"[{"role":"user","content":"I am building a recipe app. Name the entities."},{"role":"assistant","content":[{"type":"text","text":"Recipe, Ingredient, Step.","zeta":1,"alpha":2},{"type":"tool_use","id":"toolu_1","name":"grep","input":{"q":"é ✓ 😀 a/b+c","f":0.10,"big":123456789012345678901234567890}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"3 matches"}]}]"#;

fn history() -> Vec<Value> {
    serde_json::from_str(HISTORY).unwrap()
}

async fn compact(
    c: &AnthropicCompactionClient,
    max_retries: u32,
) -> Result<NativeCompaction, NativeFailure> {
    c.compact(
        &history(),
        None,
        None,
        None,
        4096,
        fast(max_retries),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
}

async fn failed(c: &AnthropicCompactionClient, max_retries: u32) -> (ErrorCode, u32, String) {
    match compact(c, max_retries).await {
        Err(NativeFailure::Failed(e)) => (e.code, e.attempts, e.message),
        other => panic!("expected Failed, got {other:?}"),
    }
}

async fn requests(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap_or_default()
}

async fn mount(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(MESSAGES))
        .respond_with(response)
        .mount(server)
        .await;
}

async fn mount_once(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(MESSAGES))
        .respond_with(response)
        .up_to_n_times(1)
        .mount(server)
        .await;
}

/// The block of the documented response, as raw bytes: a signature with `/`, `+` and `=`,
/// unicode and escapes in the summary, a field the API may add later, numbers as written.
const BLOCK: &str = r#"{"type":"compaction","content":"Summary: the user is designing a recipe app — entities Recipe, Ingredient, Step 😀.\n\"quoted\" \\ path/to","signature":"EuYBCkQY+abc/DEF==/+x","extra":{"n":1e21,"f":0.10,"big":123456789012345678901234567890}}"#;

fn ok_body(block: &str) -> String {
    format!(
        r#"{{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{block}],"stop_reason":"compaction","usage":{{"input_tokens":0,"output_tokens":0,"iterations":[{{"type":"compaction","input_tokens":144,"output_tokens":276}}]}}}}"#
    )
}

fn ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(ok_body(BLOCK), "application/json")
}

fn empty(stop_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [], "stop_reason": stop_reason,
        "usage": {"input_tokens": 0, "output_tokens": 0,
                  "iterations": [{"type": "compaction", "input_tokens": 144, "output_tokens": 0}]}
    }))
}

fn api_error(status: u16, kind: &str, message: &str, code: Option<&str>) -> ResponseTemplate {
    let mut error = json!({"type": kind, "message": message});
    if let Some(code) = code {
        error["details"] = json!({"error_code": code});
    }
    ResponseTemplate::new(status)
        .set_body_json(json!({"type": "error", "error": error, "request_id": "req_1"}))
}

// ---------------------------------------------------------------------------------------------
// The request

#[tokio::test]
async fn sends_the_documented_request() {
    let server = MockServer::start().await;
    mount(&server, ok()).await;
    let c = client_with(&server, json!({"model": "claude-opus-4-7"}));
    assert_eq!(c.model(), "claude-opus-4-7");
    assert_eq!(c.supports_model(), Some(true));
    let messages = history();
    let system = json!([{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}]);
    let tools = json!([{"name": "grep", "description": "search", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}]);
    let out = c
        .compact(
            &messages,
            Some(&system),
            Some(&tools),
            Some("Preserve every file path."),
            3000,
            fast(0),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await
        .expect("a block");
    assert_eq!(out.attempts, 1);

    let seen = requests(&server).await;
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.url.path(), "/v1/messages");
    assert_eq!(r.headers.get("x-api-key").unwrap(), KEY);
    assert_eq!(r.headers.get("anthropic-version").unwrap(), "2023-06-01");
    assert_eq!(r.headers.get("anthropic-beta").unwrap(), COMPACTION_BETA);
    assert_eq!(
        r.headers.get("anthropic-beta").unwrap(),
        "compact-2026-09-04"
    );
    assert!(r
        .headers
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    assert!(r.headers.get("authorization").is_none());

    let raw = String::from_utf8(r.body.clone()).unwrap();
    let body: Value = serde_json::from_str(&raw).unwrap();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "max_tokens",
            "system",
            "tools",
            "messages",
            "compaction"
        ]
    );
    assert_eq!(body["model"], "claude-opus-4-7");
    assert_eq!(body["max_tokens"], 3000);
    assert_eq!(body["system"], system);
    assert_eq!(body["tools"], tools);
    assert_eq!(
        body["compaction"],
        json!({"type": "summarize", "instructions": format!("Preserve every file path.\n\n{NO_TOOLS_INSTRUCTION}")})
    );
    // The messages, byte for byte (key order, unicode, numbers as written).
    assert!(raw.contains(&format!("\"messages\":{HISTORY}")), "{raw}");
    assert_eq!(body["messages"], Value::Array(messages));
    // Nothing the API rejects on a compaction request.
    for field in [
        "context_management",
        "stop_sequences",
        "tool_choice",
        "output_config",
    ] {
        assert!(body.get(field).is_none(), "{field}");
    }
    assert!(!raw.contains(KEY));
}

#[tokio::test]
async fn without_system_tools_or_instructions_none_are_sent() {
    let server = MockServer::start().await;
    mount(&server, ok()).await;
    let c = client(&server);
    assert_eq!(c.model(), DEFAULT_COMPACTION_MODEL);
    compact(&c, 0).await.expect("a block");
    let body: Value = requests(&server).await[0].body_json().unwrap();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["model", "max_tokens", "messages", "compaction"]);
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert_eq!(body["compaction"], json!({"type": "summarize"}));
    // Blank instructions keep the API's own prompt.
    let b = c.body(&history(), None, None, Some("  "), 100);
    assert_eq!(b["compaction"], json!({"type": "summarize"}));
}

// ---------------------------------------------------------------------------------------------
// Success

#[tokio::test]
async fn the_block_comes_back_byte_identical() {
    let server = MockServer::start().await;
    mount(&server, ok()).await;
    let out = compact(&client(&server), 0).await.expect("a block");
    // The bytes of the block in the response, exactly.
    assert_eq!(out.raw_block, BLOCK);
    // Re-serialized, the parsed block is the same bytes (fields in order, nothing added,
    // escapes, unicode, digits), except the one spelling serde_json normalizes: an exponent
    // is written `e+21`. The value is the same number.
    assert_eq!(
        serde_json::to_string(&out.block).unwrap(),
        BLOCK.replace("1e21", "1e+21")
    );
    assert_eq!(
        serde_json::from_str::<Value>(&out.raw_block).unwrap(),
        out.block
    );
    assert_eq!(out.block["signature"], "EuYBCkQY+abc/DEF==/+x");
    assert!(out.block.get("citations").is_none());
    assert!(out.summary().starts_with("Summary: the user is designing"));
    assert!(out.summary().contains('😀'));
    assert_eq!(
        out.usage,
        json!({"input_tokens": 0, "output_tokens": 0, "iterations": [{"type": "compaction", "input_tokens": 144, "output_tokens": 276}]})
    );
    // The message that replaces the summarized ones carries the same bytes.
    let message = serde_json::to_string(&out.message()).unwrap();
    assert_eq!(
        message,
        format!(
            r#"{{"role":"assistant","content":[{}]}}"#,
            BLOCK.replace("1e21", "1e+21")
        )
    );

    // Optional escapes: `raw_block` keeps them; the value is the same text.
    let escaped = r#"{"type":"compaction","content":"caf\u00e9 a\/b","signature":"Eu\/+"}"#;
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(ok_body(escaped), "application/json"),
    )
    .await;
    let out = compact(&client(&server), 0).await.expect("a block");
    assert_eq!(out.raw_block, escaped);
    assert_eq!(out.summary(), "café a/b");
    assert_eq!(out.block["signature"], "Eu/+");
}

// ---------------------------------------------------------------------------------------------
// A 200 without a summary

#[tokio::test]
async fn a_block_whose_content_is_null_is_a_failed_compaction() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(
            ok_body(r#"{"type":"compaction","content":null,"signature":"EuYB"}"#),
            "application/json",
        ),
    )
    .await;
    let (code, attempts, message) = failed(&client(&server), 1).await;
    assert_eq!(code, ErrorCode::EmptySummary);
    assert_eq!(attempts, 2, "retried like an empty summary");
    assert!(message.contains("null"), "{message}");
}

#[tokio::test]
async fn each_documented_stop_reason_without_a_summary() {
    // (stop_reason, code, requests with max_retries = 2)
    for (stop_reason, code, requests_made) in [
        // Retried with a larger max_tokens (see below).
        ("max_tokens", ErrorCode::Truncated, 3),
        // "Resend with shorter instructions or fewer messages": the same request would fail.
        ("model_context_window_exceeded", ErrorCode::BadRequest, 1),
        // The model may write the summary next time.
        ("tool_use", ErrorCode::EmptySummary, 3),
        // "Continue without a summary."
        ("refusal", ErrorCode::Refused, 1),
        ("end_turn", ErrorCode::EmptySummary, 1),
    ] {
        let server = MockServer::start().await;
        mount(&server, empty(stop_reason)).await;
        let (got, attempts, message) = failed(&client(&server), 2).await;
        assert_eq!(got, code, "{stop_reason}");
        assert_eq!(attempts, requests_made, "{stop_reason}");
        assert_eq!(requests(&server).await.len() as u32, requests_made);
        assert!(message.contains(stop_reason), "{message}");
    }
}

#[tokio::test]
async fn max_tokens_is_resent_larger_then_succeeds() {
    let server = MockServer::start().await;
    mount_once(&server, empty("max_tokens")).await;
    mount(&server, ok()).await;
    let out = compact(&client(&server), 2).await.expect("a block");
    assert_eq!(out.attempts, 2);
    let seen = requests(&server).await;
    let sent: Vec<u64> = seen
        .iter()
        .map(|r| {
            r.body_json::<Value>().unwrap()["max_tokens"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(sent, [4096, 8192]);
}

#[tokio::test]
async fn max_tokens_at_the_models_output_limit_is_not_retried() {
    let server = MockServer::start().await;
    mount(&server, empty("max_tokens")).await;
    let c = client(&server);
    // Far over any model's output limit: clamped, and no larger value exists.
    let out = c
        .compact(
            &history(),
            None,
            None,
            None,
            u32::MAX,
            fast(3),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await;
    assert!(matches!(
        out,
        Err(NativeFailure::Failed(ref e)) if e.code == ErrorCode::Truncated && e.attempts == 1
    ));
}

// ---------------------------------------------------------------------------------------------
// HTTP errors

#[tokio::test]
async fn compaction_unavailable_529_is_retried_then_succeeds() {
    let server = MockServer::start().await;
    mount_once(
        &server,
        api_error(
            529,
            "overloaded_error",
            "Compaction is temporarily unavailable.",
            Some("compaction_unavailable"),
        ),
    )
    .await;
    mount(&server, ok()).await;
    let out = compact(&client(&server), 2).await.expect("a block");
    assert_eq!(out.attempts, 2);
    assert_eq!(requests(&server).await.len(), 2);
}

#[tokio::test]
async fn compaction_unavailable_529_every_time_fails_as_overloaded() {
    let server = MockServer::start().await;
    mount(
        &server,
        api_error(
            529,
            "overloaded_error",
            "Compaction is temporarily unavailable.",
            Some("compaction_unavailable"),
        ),
    )
    .await;
    let (code, attempts, message) = failed(&client(&server), 2).await;
    assert_eq!((code, attempts), (ErrorCode::Overloaded, 3));
    assert!(message.contains("compaction_unavailable"), "{message}");
}

#[tokio::test]
async fn unsupported_model_beta_header_and_bedrock_errors_are_unavailable() {
    let cases = [
        api_error(
            400,
            "invalid_request_error",
            "The model claude-haiku-4-5 does not support compaction.",
            None,
        ),
        api_error(
            400,
            "invalid_request_error",
            "the `compaction` parameter requires anthropic-beta: compact-2026-09-04",
            None,
        ),
        // Bedrock-like: a validation error about the unknown field, in a bare body.
        ResponseTemplate::new(400).set_body_json(json!({
            "message": "Malformed input request: extraneous key [compaction] is not permitted, please reformat your input and try again."
        })),
        api_error(
            400,
            "invalid_request_error",
            "compaction: Extra inputs are not permitted",
            None,
        ),
        api_error(
            404,
            "not_found_error",
            "compaction is not available for this model",
            None,
        ),
    ];
    for response in cases {
        let server = MockServer::start().await;
        mount(&server, response).await;
        match compact(&client(&server), 3).await {
            Err(NativeFailure::Unavailable { status, message }) => {
                assert!(matches!(status, Some(400 | 404)));
                assert!(message.to_lowercase().contains("compaction"), "{message}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
        assert_eq!(requests(&server).await.len(), 1, "not retried");
    }
}

#[tokio::test]
async fn request_problems_are_failed_not_unavailable() {
    for (response, expected) in [
        (
            api_error(
                400,
                "invalid_request_error",
                "There is nothing to summarize.",
                Some("compaction_nothing_to_summarize"),
            ),
            ErrorCode::BadRequest,
        ),
        (
            api_error(
                400,
                "invalid_request_error",
                "compaction: the last assistant turn ends in a tool_use block with no tool_result",
                None,
            ),
            ErrorCode::BadRequest,
        ),
        (
            api_error(404, "not_found_error", "model: claude-nope", None),
            ErrorCode::BadRequest,
        ),
    ] {
        let server = MockServer::start().await;
        mount(&server, response).await;
        let (code, attempts, _) = failed(&client(&server), 3).await;
        assert_eq!((code, attempts), (expected, 1));
    }
}

#[tokio::test]
async fn unauthorized_401_fails_at_once_without_the_key() {
    let server = MockServer::start().await;
    mount(
        &server,
        api_error(
            401,
            "authentication_error",
            &format!("invalid x-api-key {KEY}"),
            None,
        ),
    )
    .await;
    let (code, attempts, message) = failed(&client(&server), 3).await;
    assert_eq!((code, attempts), (ErrorCode::AuthenticationFailed, 1));
    assert_eq!(requests(&server).await.len(), 1);
    assert!(!message.contains(KEY), "{message}");
    assert!(message.contains("[redacted]"), "{message}");
}

// ---------------------------------------------------------------------------------------------
// Cancellation

#[tokio::test]
async fn cancellation_aborts_the_request_in_flight() {
    let server = MockServer::start().await;
    mount(&server, ok().set_delay(Duration::from_secs(30))).await;
    let c = client(&server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let out = c
        .compact(
            &history(),
            None,
            None,
            None,
            4096,
            fast(3),
            &cancel,
            &NoObserver,
        )
        .await;
    assert_eq!(out, Err(NativeFailure::Aborted));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(requests(&server).await.len(), 1);

    // A signal that already fired: no request at all.
    let server = MockServer::start().await;
    mount(&server, ok()).await;
    let c = client(&server);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = c
        .compact(
            &history(),
            None,
            None,
            None,
            4096,
            fast(3),
            &cancel,
            &NoObserver,
        )
        .await;
    assert_eq!(out, Err(NativeFailure::Aborted));
    assert!(requests(&server).await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// The key never leaks

#[tokio::test]
async fn the_api_key_appears_in_no_error_or_log() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let _guard = tracing::subscriber::set_default(Capture(lines.clone()));
    let mut texts: Vec<String> = Vec::new();
    let echo = format!("invalid x-api-key {KEY}");
    for response in [
        api_error(401, "authentication_error", &echo, None),
        api_error(
            529,
            "overloaded_error",
            &echo,
            Some("compaction_unavailable"),
        ),
        // An Unavailable whose message echoes the key.
        api_error(
            400,
            "invalid_request_error",
            &format!("compaction is not supported for key {KEY}"),
            None,
        ),
        ResponseTemplate::new(200).set_body_raw(format!("not json {KEY}"), "application/json"),
    ] {
        let server = MockServer::start().await;
        mount(&server, response).await;
        let c = client(&server);
        texts.push(format!("{:?}", compact(&c, 1).await));
        texts.push(format!("{c:?}"));
    }
    let providers = providers::compaction_from_options_with_env(
        &options("http://127.0.0.1:1", json!({})),
        &no_env,
    )
    .unwrap()
    .unwrap();
    texts.push(format!("{providers:?}"));

    let logged = lines.lock().unwrap().join("\n");
    assert!(logged.contains("retrying"), "retries are logged: {logged}");
    for text in texts.iter().chain(std::iter::once(&logged)) {
        assert!(!text.contains(KEY), "the key leaked: {text}");
        assert!(!text.contains("SECRET"), "part of the key leaked: {text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Options

#[tokio::test]
async fn anthropic_compaction_options_resolve_like_anthropic() {
    let env = |name: &str| match name {
        "ANTHROPIC_API_KEY" => Some("sk-ant-env".to_string()),
        "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/anthropic".to_string()),
        _ => None,
    };
    let options =
        ProviderOptions::from_json(&json!({"provider": "anthropic-compaction", "timeoutMs": 1500}))
            .unwrap();
    assert_eq!(options.provider, Some(ProviderKind::AnthropicCompaction));
    let config = resolve(&options, &env).unwrap();
    assert_eq!(config.kind.as_str(), "anthropic-compaction");
    assert_eq!(config.model.as_deref(), Some("claude-sonnet-4-6"));
    assert_eq!(
        config.base_url.as_ref().unwrap().as_str(),
        "http://127.0.0.1:9/anthropic"
    );
    assert_eq!(config.timeout, Duration::from_millis(1500));
    assert_eq!(config.api_key.unwrap().expose(), "sk-ant-env");

    // Never inferred.
    let config = resolve(&ProviderOptions::default(), &env).unwrap();
    assert_eq!(config.kind, ProviderKind::Anthropic);
    // Only `anthropic-compaction` makes a compaction client.
    assert!(
        providers::compaction_from_options_with_env(&json!({"provider": "anthropic"}), &env)
            .unwrap()
            .is_none()
    );
    // The error names the new provider among the accepted ones.
    let e = ProviderOptions::from_json(&json!({"provider": "native"})).unwrap_err();
    assert!(e.to_string().contains("anthropic-compaction"), "{e}");
}

#[tokio::test]
async fn the_fallback_is_the_plain_anthropic_summarizer_on_the_same_server() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-7",
            "content": [{"type": "text", "text": "## Goal\nthe summary"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}
        })),
    )
    .await;
    let made = providers::compaction_from_options_with_env(
        &options(&server.uri(), json!({"model": "claude-opus-4-7"})),
        &no_env,
    )
    .unwrap()
    .unwrap();
    assert_eq!(made.native.as_ref().unwrap().model(), "claude-opus-4-7");
    assert_eq!(made.fallback.provider(), "anthropic");
    assert_eq!(made.fallback.model(), Some("claude-opus-4-7"));
    // `from_options` gives the same fallback, so a pipeline without native compaction works.
    let plain = context_compact_core::options::providers::from_options_with_env(
        &options(&server.uri(), json!({"model": "claude-opus-4-7"})),
        &no_env,
    )
    .unwrap();
    assert_eq!(plain.provider(), "anthropic");

    let request = context_compact_core::summary::summarize::SummaryRequest {
        messages: &[],
        range: 0..0,
        origins: &[],
        prompt: "Summarize this.".into(),
        instructions: String::new(),
        render_limits: Default::default(),
        previous_summary: None,
        model: None,
        custom_instructions: None,
        max_tokens: 1000,
        attempt: 1,
        shared: None,
        usage: None,
        own: &Default::default(),
    };
    let text = made.fallback.summarize(&request).await.unwrap();
    assert_eq!(text, "## Goal\nthe summary");
    let r = &requests(&server).await[0];
    assert!(r.headers.get("anthropic-beta").is_none());
    let body: Value = r.body_json().unwrap();
    assert!(body.get("compaction").is_none());
    assert_eq!(body["model"], "claude-opus-4-7");
}

#[tokio::test]
async fn without_a_key_the_client_is_missing_api_key() {
    let made = providers::compaction_from_options_with_env(
        &json!({"provider": "anthropic-compaction"}),
        &no_env,
    )
    .unwrap()
    .unwrap();
    let error = made.native.unwrap_err();
    assert_eq!(error.code, ErrorCode::MissingApiKey);
    assert!(
        error.message.contains("ANTHROPIC_API_KEY"),
        "{}",
        error.message
    );
    assert_eq!(made.fallback.provider(), "anthropic");
}
