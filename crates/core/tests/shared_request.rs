//! The shared summary request (issue 21, SPEC §4.10): with `agentRequest`, the anthropic and
//! openai providers send the loop's own request body with the loop's messages byte for byte and
//! one more user message holding the instructions, so the provider reads its prompt cache.
//! Against wiremock servers on 127.0.0.1 that answer as the APIs do; the cache accounting itself
//! is tested against the JS servers of `benchmark/servers/` (`__test__/summary/shared-request.test.ts`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use context_compact_core::base::error::ErrorCode;
use context_compact_core::compact;
use context_compact_core::pipeline::{CompactOptions, CompactOutcome};
use context_compact_core::summary::summarize::{NoObserver, SummaryRequestKind, SummaryUsage};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-test-SECRET-shared";

/// A coding session in the Anthropic form: a task, then tool rounds, then a last assistant
/// message whose tool call has no result yet.
fn anthropic_session(rounds: usize) -> Vec<Value> {
    let mut messages = vec![
        json!({"role": "user", "content": "Fix the failing parser tests in src/parser.rs. SHARED-TASK-7"}),
    ];
    for i in 0..rounds {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Reading file {i}. ").repeat(20)},
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "read_file", "input": {"path": format!("src/f{i}.rs"), "n": 1.5e3}}
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": format!("fn f{i}() {{ /* \u{e9}\"\\\u{1f600} */ }}\n").repeat(40)}
        ]}));
    }
    messages.push(json!({"role": "user", "content": "Now run the tests."}));
    messages.push(json!({"role": "assistant", "content": [
        {"type": "text", "text": "Running them."},
        {"type": "tool_use", "id": "toolu_last", "name": "bash", "input": {"command": "cargo test"}}
    ]}));
    messages
}

fn openai_session(rounds: usize) -> Vec<Value> {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing parser tests in src/parser.rs. SHARED-TASK-7"}),
    ];
    for i in 0..rounds {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}"), "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"src/f{i}.rs\"}}")}}
        ]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": format!("fn f{i}() {{}}\n").repeat(60)}));
    }
    messages.push(json!({"role": "user", "content": "Now run the tests."}));
    messages
}

fn anthropic_agent_request() -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 16000,
        "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
        "tools": [
            {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            {"name": "bash", "description": "Run a command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}
        ],
        "tool_choice": {"type": "auto"},
        "metadata": {"user_id": "u-1"},
        "stream": true
    })
}

fn openai_agent_request() -> Value {
    json!({
        "model": "gpt-4.1",
        "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}],
        "tool_choice": "auto",
        "prompt_cache_key": "session-42",
        "max_tokens": 9000,
        "stream": true,
        "stream_options": {"include_usage": true}
    })
}

fn configure(
    provider: &str,
    server: &MockServer,
    agent_request: Value,
    extra: Value,
) -> (CompactOptions, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut raw = json!({
        "provider": provider,
        "apiKey": KEY,
        "baseUrl": server.uri(),
        "agentRequest": agent_request,
        "force": true,
        "contextTokenLimit": 200_000,
        "tailRetentionRatio": 0.01,
        "maxRetries": 1,
        "outputDir": dir.path(),
        // The shape is what these tests check; when 'auto' chooses it is tested apart.
        "summaryRequest": "shared",
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            raw[k] = v;
        }
    }
    let mut options = CompactOptions::from_json(&raw).expect("valid options");
    options.retry_base_delay = std::time::Duration::ZERO;
    (options, raw, dir)
}

async fn run(messages: &[Value], options: &CompactOptions, raw: &Value) -> CompactOutcome {
    let summarizer =
        context_compact_core::options::providers::from_options_with_env(raw, &|_: &str| None)
            .expect("provider");
    compact(
        messages,
        None,
        options,
        summarizer.as_ref(),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .expect("not aborted")
}

/// Answers like the Messages API: a tool call to requests that carry tools (the shared ones)
/// when `tool_calls` says so, else a summary; each with the given usage.
struct Anthropic {
    tool_calls: bool,
    seen: Arc<AtomicUsize>,
}

impl Respond for Anthropic {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.seen.fetch_add(1, Ordering::SeqCst);
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let shared = body.get("tools").is_some();
        let content = if shared && self.tool_calls {
            json!([{"type": "text", "text": "Let me check."}, {"type": "tool_use", "id": "toolu_x", "name": "bash", "input": {"command": "ls"}}])
        } else {
            json!([{"type": "text", "text": "## Goal\nfix the parser tests (SHARED-TASK-7)"}])
        };
        let usage = if shared {
            json!({"input_tokens": 120, "cache_creation_input_tokens": 800, "cache_read_input_tokens": 30_000, "output_tokens": 400})
        } else {
            json!({"input_tokens": 25_000, "output_tokens": 350})
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": if shared && self.tool_calls { "tool_use" } else { "end_turn" },
            "stop_sequence": null, "usage": usage
        }))
    }
}

async fn anthropic_server(tool_calls: bool) -> (MockServer, Arc<AtomicUsize>) {
    let server = MockServer::start().await;
    let seen = Arc::new(AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Anthropic {
            tool_calls,
            seen: seen.clone(),
        })
        .mount(&server)
        .await;
    (server, seen)
}

async fn bodies(server: &MockServer) -> Vec<(Value, String)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            (
                serde_json::from_slice(&r.body).unwrap(),
                String::from_utf8(r.body.clone()).unwrap(),
            )
        })
        .collect()
}

/// The serialized array of `messages` without its closing bracket: a request whose messages
/// start with these, byte for byte, holds this text.
fn prefix_bytes(messages: &[Value]) -> String {
    let text = serde_json::to_string(messages).unwrap();
    text[..text.len() - 1].to_string()
}

#[tokio::test]
async fn anthropic_shared_request_is_the_loops_request_plus_one_instruction() {
    let (server, _) = anthropic_server(false).await;
    let messages = anthropic_session(12);
    let agent = anthropic_agent_request();
    let (options, raw, _dir) = configure("anthropic", &server, agent.clone(), json!({}));
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));

    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 1);
    let (body, text) = &seen[0];
    // The loop's own parameters, untouched: what changes them breaks the cache.
    for key in ["model", "system", "tools", "tool_choice", "metadata"] {
        assert_eq!(body[key], agent[key], "{key}");
    }
    assert!(body.get("stream").is_none(), "one JSON reply, not a stream");
    assert_eq!(body["max_tokens"], 4096);
    // The conversation byte for byte, up to the last assistant message, whose unanswered
    // tool call is removed (seed 002); the instruction is the last user turn.
    let sent = body["messages"].as_array().unwrap();
    let last = messages.len() - 1;
    assert_eq!(&sent[..last], &messages[..last]);
    assert!(
        text.contains(&prefix_bytes(&messages[..last])),
        "the prefix is byte-identical"
    );
    assert_eq!(
        sent[last],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Running them."}]})
    );
    assert_eq!(sent.len(), messages.len() + 1);
    let instruction = &sent[last + 1];
    assert_eq!(instruction["role"], "user");
    let block = &instruction["content"][0];
    assert_eq!(block["cache_control"], json!({"type": "ephemeral"}));
    let words = block["text"].as_str().unwrap();
    assert!(words.starts_with("[context-compact] "), "{words}");
    assert!(words.contains("do not call any tool"), "{words}");
    assert!(
        words.contains("up to, but not including, message"),
        "{words}"
    );
    assert!(words.contains("## Goal"));

    // What the server billed, summed.
    assert_eq!(
        outcome.summary_usage,
        Some(SummaryUsage {
            requests: 1,
            input_tokens: 120,
            cache_read_tokens: 30_000,
            cache_write_tokens: 800,
            output_tokens: 400
        })
    );
    let summary = outcome.summary.unwrap();
    assert!(summary.contains("SHARED-TASK-7"), "{summary}");
    // The user's own words are appended after the model's text, as with the transcript request;
    // the session's first user message is the task.
    assert!(
        summary.contains(
            "## User messages (verbatim)\nWhat the user wrote in the compacted part of the conversation, word for word, oldest first.\n[task (the user's first request) · 60 characters]\nFix the failing parser tests in src/parser.rs. SHARED-TASK-7"
        ),
        "{summary}"
    );
}

#[tokio::test]
async fn a_tool_call_instead_of_a_summary_is_retried_then_sent_as_the_transcript_request() {
    let (server, seen) = anthropic_server(true).await;
    let messages = anthropic_session(8);
    let (options, raw, _dir) =
        configure("anthropic", &server, anthropic_agent_request(), json!({}));
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "two shared attempts (maxRetries 1), then the transcript"
    );
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("shared summary request failed (TOOL_CALL")),
        "{:?}",
        outcome.warnings
    );
    let sent = bodies(&server).await;
    assert!(
        sent[2].0.get("tools").is_none(),
        "the transcript request has no tools"
    );
    let usage = outcome.summary_usage.unwrap();
    assert_eq!(usage.requests, 3, "the failed attempts cost money too");
    assert_eq!(usage.cache_read_tokens, 60_000);
    assert_eq!(usage.input_tokens, 120 * 2 + 25_000);
}

#[tokio::test]
async fn openai_shared_request_keeps_the_loops_body_and_maps_the_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "## Goal\nfix the parser tests", "refusal": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5_000, "completion_tokens": 300, "total_tokens": 5_300, "prompt_tokens_details": {"cached_tokens": 4_864}}
        })))
        .mount(&server)
        .await;
    let messages = openai_session(10);
    let agent = openai_agent_request();
    let (options, raw, _dir) = configure("openai", &server, agent.clone(), json!({}));
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));
    let seen = bodies(&server).await;
    assert_eq!(seen.len(), 1);
    let (body, text) = &seen[0];
    for key in ["model", "tools", "tool_choice", "prompt_cache_key"] {
        assert_eq!(body[key], agent[key], "{key}");
    }
    for key in ["stream", "stream_options"] {
        assert!(body.get(key).is_none(), "{key}");
    }
    assert_eq!(body["max_tokens"], 4096);
    let sent = body["messages"].as_array().unwrap();
    assert_eq!(
        &sent[..messages.len()],
        &messages[..],
        "the system message stays first, as the loop sent it"
    );
    assert!(text.contains(&prefix_bytes(&messages)));
    assert_eq!(sent.len(), messages.len() + 1);
    assert_eq!(sent[messages.len()]["role"], "user");
    assert_eq!(
        outcome.summary_usage,
        Some(SummaryUsage {
            requests: 1,
            input_tokens: 136,
            cache_read_tokens: 4_864,
            cache_write_tokens: 0,
            output_tokens: 300
        })
    );
}

#[tokio::test]
async fn the_transcript_request_stays_where_sharing_cannot_work() {
    let messages = anthropic_session(10);
    let transcript = |body: &Value| {
        body.get("tools").is_none() && body["messages"].as_array().is_some_and(|m| m.len() == 1)
    };
    // A summary model other than the loop's; a window the conversation does not fit; the
    // option itself; a tool_choice that forces a tool.
    let mut forced = anthropic_agent_request();
    forced["tool_choice"] = json!({"type": "any"});
    let cases = [
        (
            anthropic_agent_request(),
            json!({"model": "claude-haiku-4-5", "summaryRequest": "auto"}),
            false,
        ),
        (
            anthropic_agent_request(),
            json!({"summaryContextTokens": 8_000, "summaryRequest": "auto"}),
            false,
        ),
        (
            anthropic_agent_request(),
            json!({"summaryRequest": "transcript"}),
            false,
        ),
        (
            anthropic_agent_request(),
            json!({"model": "claude-haiku-4-5", "summaryRequest": "shared"}),
            true,
        ),
        (forced, json!({"summaryRequest": "auto"}), false),
    ];
    for (agent, extra, warns) in cases {
        let (server, _) = anthropic_server(false).await;
        let (options, raw, _dir) = configure("anthropic", &server, agent, extra.clone());
        let outcome = run(&messages, &options, &raw).await;
        assert!(outcome.compacted, "{extra}: {:?}", outcome.error);
        assert_eq!(
            outcome.summary_request,
            Some(SummaryRequestKind::Transcript),
            "{extra}"
        );
        let seen = bodies(&server).await;
        assert!(seen.iter().all(|(body, _)| transcript(body)), "{extra}");
        assert_eq!(
            outcome
                .warnings
                .iter()
                .any(|w| w.contains("summaryRequest is 'shared'")),
            warns,
            "{extra}: {:?}",
            outcome.warnings
        );
    }
    // No agentRequest at all: the transcript, and nothing to say about it.
    let (server, _) = anthropic_server(false).await;
    let (mut options, mut raw, _dir) = configure(
        "anthropic",
        &server,
        json!({"model": "claude-sonnet-4-5"}),
        json!({}),
    );
    options.agent_request = None;
    raw.as_object_mut().unwrap().remove("agentRequest");
    let outcome = run(&messages, &options, &raw).await;
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
}

#[tokio::test]
async fn a_request_the_api_rejects_falls_back_but_a_spend_cap_does_not() {
    // The server rejects the loop's tools (a 400 that a retry cannot fix): the transcript
    // request, which has none, is sent once.
    let server = MockServer::start().await;
    struct RejectTools;
    impl Respond for RejectTools {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            if body.get("tools").is_some() {
                return ResponseTemplate::new(400).set_body_json(json!({"type": "error", "error": {"type": "invalid_request_error", "message": "tools.0.input_schema: Field required"}}));
            }
            ResponseTemplate::new(200).set_body_json(json!({
                "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "## Goal\nfix"}], "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 9_000, "output_tokens": 100}
            }))
        }
    }
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(RejectTools)
        .mount(&server)
        .await;
    let messages = anthropic_session(6);
    let (options, raw, _dir) =
        configure("anthropic", &server, anthropic_agent_request(), json!({}));
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted);
    assert_eq!(
        bodies(&server).await.len(),
        2,
        "a 400 is not retried: one shared request, one transcript"
    );
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    assert!(
        outcome.warnings.iter().any(|w| w.contains("BAD_REQUEST")),
        "{:?}",
        outcome.warnings
    );

    // A spend cap would stop the transcript request too: one request, and the error.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(429).set_body_json(json!({"type": "error", "error": {"type": "rate_limit_error", "message": "spend limit", "details": {"error_code": "enforced_spend_limit_reached"}}})))
        .mount(&server)
        .await;
    let (spend_options, raw, _dir) =
        configure("anthropic", &server, anthropic_agent_request(), json!({}));
    let outcome = run(&messages, &spend_options, &raw).await;
    assert!(!outcome.compacted);
    assert_eq!(
        outcome.error.as_ref().map(|e| e.code),
        Some(ErrorCode::QuotaExceeded)
    );
    assert_eq!(bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn leading_system_messages_become_the_system_parameter_when_the_body_has_none() {
    let (server, _) = anthropic_server(false).await;
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."})];
    messages.extend(anthropic_session(6));
    let mut agent = anthropic_agent_request();
    agent.as_object_mut().unwrap().remove("system");
    let (options, raw, _dir) = configure("anthropic", &server, agent, json!({}));
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));
    let (body, _) = &bodies(&server).await[0];
    assert_eq!(body["system"], "You are a coding agent.");
    let sent = body["messages"].as_array().unwrap();
    assert_eq!(sent[0], messages[1], "no system message among the messages");
    assert!(sent.iter().all(|m| m["role"] != "system"));
}

#[tokio::test]
async fn auto_chooses_the_cheaper_request() {
    // A long conversation whose newest part is small: most of it is in the loop's cache.
    let messages = anthropic_session(40);
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        anthropic_agent_request(),
        json!({"summaryRequest": "auto"}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);

    // The same conversation after a tool result larger than all of it, returned after the
    // loop's last request: it is not in the cache, and writing it would cost more than
    // sending the middle as a transcript.
    let mut messages = anthropic_session(10);
    let last = messages.len() - 1;
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_last", "content": "test output line\n".repeat(20_000)}
    ]}));
    let _ = last;
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        anthropic_agent_request(),
        // No tail (a ratio is more than 0: the tail budget is given in tokens).
        json!({"summaryRequest": "auto", "compression": {"targetTokens": 0}}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    assert!(
        outcome
            .warnings
            .iter()
            .all(|w| !w.contains("summaryRequest")),
        "auto says nothing: {:?}",
        outcome.warnings
    );
}

#[tokio::test]
async fn auto_uses_the_transcript_when_the_loop_caches_nothing() {
    // The loop's request as a README user first writes it: no `cache_control` anywhere. The
    // loop wrote nothing to the cache, so sharing would write the whole conversation: the
    // transcript is used, and one warning says how to turn caching on.
    let messages = anthropic_session(40);
    let mut uncached = anthropic_agent_request();
    uncached["system"] = json!("You are a coding agent.");
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        uncached.clone(),
        json!({"summaryRequest": "auto"}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    let about_caching: Vec<_> = outcome
        .warnings
        .iter()
        .filter(|w| w.contains("cache_control"))
        .collect();
    assert_eq!(about_caching.len(), 1, "{:?}", outcome.warnings);
    assert!(
        about_caching[0].contains("top level"),
        "{}",
        about_caching[0]
    );

    // The same loop with Anthropic's top-level `cache_control` (automatic caching): shared.
    let mut automatic = uncached.clone();
    automatic["cache_control"] = json!({"type": "ephemeral"});
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        automatic,
        json!({"summaryRequest": "auto"}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);

    // A breakpoint the loop put on one of its messages is caching too.
    let mut marked = messages.clone();
    marked[3]["content"][0]["cache_control"] = json!({"type": "ephemeral"});
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        uncached,
        json!({"summaryRequest": "auto"}),
    );
    let outcome = run(&marked, &options, &raw).await;
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));

    // 'shared' is what the caller asked for: sent as asked, caching or not.
    let (server, _) = anthropic_server(false).await;
    let mut plain = anthropic_agent_request();
    plain["system"] = json!("You are a coding agent.");
    let (options, raw, _dir) = configure("anthropic", &server, plain, json!({}));
    let outcome = run(&messages, &options, &raw).await;
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));
}

#[tokio::test]
async fn auto_shares_on_openai_which_caches_on_its_own() {
    // OpenAI caches prompts of 1,024 tokens or more without being asked.
    let messages = openai_session(30);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "<summary>The parser was fixed.</summary>"}}],
            "usage": {"prompt_tokens": 9000, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 8000}}
        })))
        .mount(&server)
        .await;
    let (options, raw, _dir) = configure(
        "openai",
        &server,
        openai_agent_request(),
        json!({"summaryRequest": "auto"}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(outcome.summary_request, Some(SummaryRequestKind::Shared));
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

/// The loop of a README user as it is stored: no `cache_control` in its request body nor in its
/// messages. A loop that adds its breakpoints as it builds each request (as Claude Code does)
/// looks the same here: only its usage, or breakpoints it keeps, show the cache.
fn per_request_agent_request() -> Value {
    let mut agent = anthropic_agent_request();
    agent["system"] = json!("You are a coding agent.");
    agent
}

/// Whether the server saw the shared request: the loop's messages up to its last assistant
/// message byte for byte (its unanswered tool call removed), then one instruction.
fn saw_the_loops_prefix(seen: &[(Value, String)], messages: &[Value]) -> bool {
    let last = messages.len() - 1;
    seen.len() == 1
        && seen[0].1.contains(&prefix_bytes(&messages[..last]))
        && seen[0].0["messages"].as_array().map(Vec::len) == Some(messages.len() + 1)
}

#[tokio::test]
async fn auto_reads_the_usage_the_loop_passes() {
    // 'auto' with the usage of the loop's last response, in each shape an SDK reports it: cache
    // reads or writes say the loop caches, whatever its stored messages carry.
    let messages = anthropic_session(40);
    let shapes = [
        json!({"input_tokens": 1, "cache_creation_input_tokens": 128_130, "cache_read_input_tokens": 0, "output_tokens": 301}),
        json!({"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 30_000, "output_tokens": 301}),
        json!({"prompt_tokens": 31_000, "completion_tokens": 301, "prompt_tokens_details": {"cached_tokens": 30_000}}),
        json!({"input_tokens": 31_000, "output_tokens": 301, "input_tokens_details": {"cached_tokens": 30_000}}),
        json!({"inputTokens": 31_000, "outputTokens": 301, "cachedInputTokens": 30_000}),
        json!({"inputTokens": 31_000, "outputTokens": 301, "inputTokenDetails": {"noCacheTokens": 1_000, "cacheReadTokens": 0, "cacheWriteTokens": 30_000}}),
        json!({"input_tokens": 31_000, "output_tokens": 301, "total_tokens": 31_301, "input_token_details": {"cache_read": 30_000}}),
        json!({"inputTokens": 1_000, "outputTokens": 301, "cacheReadInputTokens": 30_000, "cacheWriteInputTokens": 0}),
    ];
    for usage in shapes {
        let (server, _) = anthropic_server(false).await;
        let (options, raw, _dir) = configure(
            "anthropic",
            &server,
            per_request_agent_request(),
            json!({"summaryRequest": "auto", "usage": usage}),
        );
        let outcome = run(&messages, &options, &raw).await;
        assert!(outcome.compacted, "{usage}: {:?}", outcome.error);
        assert_eq!(
            outcome.summary_request,
            Some(SummaryRequestKind::Shared),
            "{usage}: {:?}",
            outcome.warnings
        );
        assert!(
            outcome.warnings.is_empty(),
            "{usage}: {:?}",
            outcome.warnings
        );
        assert!(
            saw_the_loops_prefix(&bodies(&server).await, &messages),
            "{usage}"
        );
    }

    // A usage without cache tokens, and no breakpoint anywhere: the transcript, and the warning
    // says what was looked at and how to turn caching on.
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        per_request_agent_request(),
        json!({"summaryRequest": "auto", "usage": {"input_tokens": 31_000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 301}}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    let seen = bodies(&server).await;
    assert!(seen
        .iter()
        .all(|(body, _)| body.get("tools").is_none()
            && body["messages"].as_array().unwrap().len() == 1));
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    let warning = &outcome.warnings[0];
    for said in [
        "the transcript request",
        "no sign the loop caches",
        "no top-level `cache_control` in agentRequest",
        "none in the messages",
        "the usage passed shows no cache reads or writes",
        "`usage`",
    ] {
        assert!(warning.contains(said), "{said}: {warning}");
    }
    assert!(
        !warning.contains("asks for no"),
        "it says what it saw: {warning}"
    );

    // No usage at all: the warning says none was passed.
    let (server, _) = anthropic_server(false).await;
    let (options, raw, _dir) = configure(
        "anthropic",
        &server,
        per_request_agent_request(),
        json!({"summaryRequest": "auto"}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("no usage was passed")),
        "{:?}",
        outcome.warnings
    );
}

#[tokio::test]
async fn auto_reads_the_breakpoints_wherever_the_loop_keeps_them() {
    let messages = anthropic_session(40);
    let ephemeral = json!({"type": "ephemeral"});
    // Each place a loop may keep a breakpoint: a tool result, a block inside one, a text block,
    // a leading system message, a tool of agentRequest, and agentRequest's top level.
    let mut on_tool_result = messages.clone();
    on_tool_result[60]["content"][0]["cache_control"] = ephemeral.clone();
    let mut inside_tool_result = messages.clone();
    inside_tool_result[62]["content"][0]["content"] =
        json!([{"type": "text", "text": "fn f() {}", "cache_control": ephemeral}]);
    let mut on_text = messages.clone();
    on_text[59]["content"][0]["cache_control"] = ephemeral.clone();
    let mut with_system = vec![json!({"role": "system", "content": [
        {"type": "text", "text": "You are a coding agent.", "cache_control": ephemeral}
    ]})];
    with_system.extend(messages.iter().cloned());
    let plain = per_request_agent_request();
    let mut on_tool = plain.clone();
    on_tool["tools"][1]["cache_control"] = ephemeral.clone();
    let mut top_level = plain.clone();
    top_level["cache_control"] = ephemeral.clone();
    let mut system_block = plain.clone();
    system_block["system"] =
        json!([{"type": "text", "text": "You are a coding agent.", "cache_control": ephemeral}]);
    let cases = [
        ("a tool result", on_tool_result, plain.clone()),
        (
            "a block of a tool result",
            inside_tool_result,
            plain.clone(),
        ),
        ("a text block", on_text, plain.clone()),
        ("a leading system message", with_system, plain.clone()),
        ("a tool", messages.clone(), on_tool),
        ("the top level", messages.clone(), top_level),
        ("the system prompt", messages.clone(), system_block),
    ];
    for (place, list, agent) in cases {
        let (server, _) = anthropic_server(false).await;
        let (options, raw, _dir) = configure(
            "anthropic",
            &server,
            agent,
            json!({"summaryRequest": "auto"}),
        );
        let outcome = run(&list, &options, &raw).await;
        assert!(outcome.compacted, "{place}: {:?}", outcome.error);
        assert_eq!(
            outcome.summary_request,
            Some(SummaryRequestKind::Shared),
            "{place}: {:?}",
            outcome.warnings
        );
        assert!(
            outcome.warnings.is_empty(),
            "{place}: {:?}",
            outcome.warnings
        );
        let seen = bodies(&server).await;
        // A leading system message is the request's `system`, not one of its messages.
        let sent = if place == "a leading system message" {
            &list[1..]
        } else {
            &list[..]
        };
        assert!(saw_the_loops_prefix(&seen, sent), "{place}");
    }
}

#[tokio::test]
async fn auto_on_openai_says_why_a_short_conversation_is_not_shared() {
    // Under 1,024 tokens OpenAI caches nothing by itself; with no other sign, the transcript,
    // and the warning names the size.
    let messages = vec![
        json!({"role": "user", "content": "Fix the parser. SHARED-TASK-7"}),
        json!({"role": "assistant", "content": "Looking at src/parser.rs and its tests. ".repeat(20)}),
        json!({"role": "user", "content": "go on"}),
        json!({"role": "assistant", "content": "Done."}),
        json!({"role": "user", "content": "thanks"}),
    ];
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "<summary>The parser was fixed.</summary>"}}],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20}
        })))
        .mount(&server)
        .await;
    let (options, raw, _dir) = configure(
        "openai",
        &server,
        openai_agent_request(),
        json!({"summaryRequest": "auto", "contextTokenLimit": 1_000, "compression": {"targetTokens": 0}}),
    );
    let outcome = run(&messages, &options, &raw).await;
    assert!(outcome.compacted, "{:?}", outcome.error);
    assert_eq!(
        outcome.summary_request,
        Some(SummaryRequestKind::Transcript)
    );
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("no sign the loop caches")
                && w.contains("tokens OpenAI caches from")),
        "{:?}",
        outcome.warnings
    );
}
