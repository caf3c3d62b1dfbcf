//! The HTTP providers against real HTTP servers on 127.0.0.1, continued: transport failures,
//! failed summaries, abort, the key never leaking, base URLs, zero configuration and keys, and
//! whole compactions against a server (the statuses are in `providers.rs`).

#[path = "providers/helpers.rs"]
mod helpers;
use helpers::*;

// ---------------------------------------------------------------------------------------------
// Transport failures

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let s = summarizer("anthropic", &base, json!({}));
    let e = run_failed(s.as_ref(), 1).await;
    assert_eq!(e.code, ErrorCode::ConnectionFailed);
    assert_eq!(e.attempts, 2);
    assert_eq!(e.status, None);
    assert!(e.message.contains("could not connect"), "{}", e.message);
    assert!(
        e.message.contains(&format!("127.0.0.1:{port}")),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn a_server_that_stalls_past_timeout_ms_times_out() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_ok("too late").set_delay(Duration::from_secs(10)),
    )
    .await;
    let s = summarizer("anthropic", &server.uri(), json!({"timeoutMs": 200}));
    let started = Instant::now();
    let e = run_failed(s.as_ref(), 1).await;
    assert_eq!(e.code, ErrorCode::Timeout);
    assert_eq!(e.attempts, 2);
    assert!(e.message.contains("200 ms"), "{}", e.message);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(requests(&server).await.len(), 2);
}

/// A server that answers every request with headers promising 1000 bytes, sends a few, and
/// closes the connection.
fn broken_body_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            seen.fetch_add(1, Ordering::SeqCst);
            // Read the whole request (headers, then Content-Length bytes).
            let mut data = Vec::new();
            let mut buf = [0u8; 8192];
            let header_end = loop {
                let n = stream.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break None;
                }
                data.extend_from_slice(&buf[..n]);
                if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                    break Some(pos + 4);
                }
            };
            let Some(header_end) = header_end else {
                continue;
            };
            let head = String::from_utf8_lossy(&data[..header_end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while data.len() < header_end + length {
                let n = stream.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                data.extend_from_slice(&buf[..n]);
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"type\":\"message\",\"content\":[{\"type\":\"te",
            );
            let _ = stream.flush();
            drop(stream);
        }
    });
    (base, count)
}

#[tokio::test]
async fn a_connection_reset_mid_body_is_retried_then_reported() {
    let (base, count) = broken_body_server();
    let s = summarizer("anthropic", &base, json!({}));
    let e = run_failed(s.as_ref(), 2).await;
    assert_eq!(e.code, ErrorCode::ConnectionFailed);
    assert_eq!(e.attempts, 3);
    assert_eq!(count.load(Ordering::SeqCst), 3);
    assert!(e.message.contains("broke while reading"), "{}", e.message);
}

#[tokio::test]
async fn malformed_json_in_a_200_is_an_invalid_response_and_retried() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        ResponseTemplate::new(200).set_body_raw("{\"content\": [oops", "application/json"),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 1).await;
    assert_eq!(e.code, ErrorCode::InvalidResponse);
    assert_eq!(requests(&server).await.len(), 2);
    assert!(e.message.contains("not JSON"), "{}", e.message);

    let server = MockServer::start().await;
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(200).set_body_json(json!({"object": "chat.completion"})),
    )
    .await;
    let e = run_failed(openai(&server).as_ref(), 0).await;
    assert_eq!(e.code, ErrorCode::InvalidResponse);
    assert!(e.message.contains("no choices"), "{}", e.message);
}

// ---------------------------------------------------------------------------------------------
// Failed summaries (retried like HTTP failures)

async fn anthropic_reply_fails(reply: Value, expected: ErrorCode) {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        ResponseTemplate::new(200).set_body_json(reply),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 1).await;
    assert_eq!(e.code, expected);
    assert_failed_attempts(&e, requests(&server).await.len());
}

/// Failed summaries are retried, except one cut at `max_tokens`: the same request would be
/// cut again, so it is sent once (the summary parts ask again with more room).
fn assert_failed_attempts(e: &CompactError, sent: usize) {
    let expected = if e.code == ErrorCode::Truncated { 1 } else { 2 };
    assert_eq!(e.attempts, expected, "{e:?}");
    assert_eq!(sent, expected as usize);
}

async fn openai_reply_fails(message: Value, finish_reason: &str, expected: ErrorCode) {
    let server = MockServer::start().await;
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]
        })),
    )
    .await;
    let e = run_failed(openai(&server).as_ref(), 1).await;
    assert_eq!(e.code, expected);
    assert_failed_attempts(&e, requests(&server).await.len());
}

#[tokio::test]
async fn anthropic_empty_whitespace_refused_and_truncated_summaries_fail() {
    anthropic_reply_fails(
        json!({"type": "message", "content": [], "stop_reason": "end_turn"}),
        ErrorCode::EmptySummary,
    )
    .await;
    anthropic_reply_fails(
        json!({"type": "message", "content": [{"type": "text", "text": " \n\t "}], "stop_reason": "end_turn"}),
        ErrorCode::EmptySummary,
    )
    .await;
    anthropic_reply_fails(
        json!({"type": "message", "content": [{"type": "text", "text": "I can't help with that."}], "stop_reason": "refusal"}),
        ErrorCode::Refused,
    )
    .await;
    anthropic_reply_fails(
        json!({"type": "message", "content": [{"type": "text", "text": "## Goal\nhalf a sum"}], "stop_reason": "max_tokens"}),
        ErrorCode::Truncated,
    )
    .await;
}

#[tokio::test]
async fn openai_empty_whitespace_refused_and_truncated_summaries_fail() {
    openai_reply_fails(
        json!({"role": "assistant", "content": null}),
        "stop",
        ErrorCode::EmptySummary,
    )
    .await;
    openai_reply_fails(
        json!({"role": "assistant", "content": "   \n"}),
        "stop",
        ErrorCode::EmptySummary,
    )
    .await;
    openai_reply_fails(
        json!({"role": "assistant", "content": null, "refusal": "I'm sorry, I can't help with that."}),
        "stop",
        ErrorCode::Refused,
    )
    .await;
    openai_reply_fails(
        json!({"role": "assistant", "content": "## Goal\nhalf a sum"}),
        "length",
        ErrorCode::Truncated,
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// Abort

#[tokio::test]
async fn abort_mid_request_returns_at_once() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_ok("too late").set_delay(Duration::from_secs(30)),
    )
    .await;
    let s = anthropic(&server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let out =
        summarize_with_retries(s.as_ref(), request(PROMPT), fast(5), &cancel, &NoObserver).await;
    assert_eq!(out, Err(SummaryFailure::Aborted));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The request was in flight, and no retry followed the abort.
    assert_eq!(requests(&server).await.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// The key never leaks

#[tokio::test]
async fn the_api_key_appears_in_no_error_log_or_debug_output() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let _guard = tracing::subscriber::set_default(Capture(lines.clone()));
    let mut texts: Vec<String> = Vec::new();

    // Servers that echo the key back in their error bodies, JSON and HTML.
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(
            401,
            "authentication_error",
            &format!("invalid x-api-key {KEY}"),
        ),
    )
    .await;
    let s = anthropic(&server);
    texts.push(format!("{:?}", run_failed(s.as_ref(), 2).await));
    texts.push(format!("{:?}", attempt(s.as_ref()).await));

    let server = MockServer::start().await;
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(500).set_body_raw(format!("<html>Bearer {KEY}</html>"), "text/html"),
    )
    .await;
    let s = openai(&server);
    texts.push(format!("{:?}", run_failed(s.as_ref(), 1).await));
    texts.push(s.model().unwrap_or_default().to_string());

    let server = MockServer::start().await;
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(200).set_body_raw(format!("not json {KEY}"), "application/json"),
    )
    .await;
    texts.push(format!(
        "{:?}",
        run_failed(openai(&server).as_ref(), 0).await
    ));

    // Connection refused and a full compaction that fails.
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let s = summarizer("anthropic", &format!("http://127.0.0.1:{port}"), json!({}));
    texts.push(format!("{:?}", run_failed(s.as_ref(), 1).await));
    let messages: Vec<Value> = (0..10)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("turn {i}")}))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let options = CompactOptions {
        force: true,
        max_retries: 1,
        retry_base_delay: Duration::ZERO,
        output_dir: dir.path().into(),
        ..Default::default()
    };
    let outcome = compact(
        &messages,
        None,
        &options,
        s.as_ref(),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .unwrap();
    assert!(!outcome.compacted);
    texts.push(format!("{outcome:?}"));

    // Options and configuration.
    let options =
        ProviderOptions::from_json(&json!({"provider": "openai", "apiKey": KEY})).unwrap();
    texts.push(format!("{options:?}"));
    let config = resolve(&options, &no_env).unwrap();
    texts.push(format!("{config:?}"));
    let bad = ProviderOptions::from_json(&json!({"apiKey": format!("{KEY}\n")}));
    // A trailing newline is trimmed; an inner one is rejected without echoing the key.
    assert!(bad.is_ok());
    let bad = ProviderOptions::from_json(&json!({"apiKey": format!("{KEY}\nx")})).unwrap_err();
    texts.push(bad.to_string());

    let logged = lines.lock().unwrap().join("\n");
    assert!(!logged.is_empty(), "retries are logged");
    for text in texts.iter().chain(std::iter::once(&logged)) {
        assert!(!text.contains(KEY), "the key leaked: {text}");
        assert!(!text.contains("SECRET"), "part of the key leaked: {text}");
    }
    assert!(texts[0].contains("[redacted]"));
}

// ---------------------------------------------------------------------------------------------
// Base URLs

#[tokio::test]
async fn base_url_with_and_without_v1() {
    let server = MockServer::start().await;
    mount(&server, COMPLETIONS, openai_ok("one")).await;
    mount(&server, "/proxy/v1/messages", anthropic_ok("two")).await;

    let with_v1 = summarizer("openai", &format!("{}/v1", server.uri()), json!({}));
    assert_eq!(run(with_v1.as_ref(), 0).await.unwrap().0, "one");
    let with_slash = summarizer("openai", &format!("{}/v1/", server.uri()), json!({}));
    assert_eq!(run(with_slash.as_ref(), 0).await.unwrap().0, "one");
    let without = summarizer("openai", &server.uri(), json!({}));
    assert_eq!(run(without.as_ref(), 0).await.unwrap().0, "one");
    let prefixed = summarizer("anthropic", &format!("{}/proxy/", server.uri()), json!({}));
    assert_eq!(run(prefixed.as_ref(), 0).await.unwrap().0, "two");

    let paths: Vec<String> = requests(&server)
        .await
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/proxy/v1/messages"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Zero configuration and keys

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

fn resolved(
    options: Value,
    env: &'static [(&'static str, &'static str)],
) -> providers::ProviderConfig {
    resolve(&ProviderOptions::from_json(&options).unwrap(), &env_of(env)).unwrap()
}

#[test]
fn zero_config_picks_anthropic_then_openai_then_extractive() {
    let c = resolved(json!({}), &[]);
    assert_eq!(c.kind, ProviderKind::Extractive);
    assert!(c.fell_back);

    let c = resolved(json!({}), &[("ANTHROPIC_API_KEY", "sk-ant-x")]);
    assert_eq!(c.kind, ProviderKind::Anthropic);
    assert_eq!(c.model.as_deref(), Some("claude-sonnet-4-6"));
    assert_eq!(c.api_key, Some(ApiKey::new("sk-ant-x")));
    assert_eq!(c.key_source, KeySource::Environment);
    assert_eq!(c.base_url.unwrap().as_str(), "https://api.anthropic.com/");
    assert_eq!(c.timeout, Duration::from_secs(60));

    let c = resolved(json!({}), &[("OPENAI_API_KEY", "sk-o")]);
    assert_eq!(c.kind, ProviderKind::OpenAi);
    assert_eq!(c.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(c.base_url.unwrap().as_str(), "https://api.openai.com/");

    let both: &[(&str, &str)] = &[
        ("ANTHROPIC_API_KEY", "sk-ant-x"),
        ("OPENAI_API_KEY", "sk-o"),
    ];
    assert_eq!(resolved(json!({}), both).kind, ProviderKind::Anthropic);
    // Empty variables count as unset.
    let c = resolved(
        json!({}),
        &[("ANTHROPIC_API_KEY", ""), ("OPENAI_API_KEY", "sk-o")],
    );
    assert_eq!(c.kind, ProviderKind::OpenAi);
}

#[test]
fn zero_config_honours_model_key_and_base_url_hints() {
    let both: &[(&str, &str)] = &[
        ("ANTHROPIC_API_KEY", "sk-ant-x"),
        ("OPENAI_API_KEY", "sk-o"),
    ];
    let c = resolved(json!({"model": "gpt-4o"}), both);
    assert_eq!(
        (c.kind, c.model.as_deref()),
        (ProviderKind::OpenAi, Some("gpt-4o"))
    );
    // A Claude model when only OpenAI is configured is the agent's model, not the summary's.
    let c = resolved(
        json!({"model": "claude-opus-4-1"}),
        &[("OPENAI_API_KEY", "sk-o")],
    );
    assert_eq!(
        (c.kind, c.model.as_deref()),
        (ProviderKind::OpenAi, Some("gpt-4o-mini"))
    );
    // An unknown model is kept.
    let c = resolved(json!({"model": "llama3.1"}), &[("OPENAI_API_KEY", "sk-o")]);
    assert_eq!(c.model.as_deref(), Some("llama3.1"));
    // An apiKey without provider.
    let c = resolved(json!({"apiKey": "sk-ant-api03-abc"}), &[]);
    assert_eq!(
        (c.kind, c.key_source),
        (ProviderKind::Anthropic, KeySource::Option)
    );
    let c = resolved(
        json!({"apiKey": "sk-proj-abc"}),
        &[("ANTHROPIC_API_KEY", "sk-ant-x")],
    );
    assert_eq!(c.kind, ProviderKind::OpenAi);
    assert_eq!(c.api_key, Some(ApiKey::new("sk-proj-abc")));
    // Base URLs: the option, then the environment, then the default.
    let env: &[(&str, &str)] = &[
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9999/anthropic"),
    ];
    let c = resolved(json!({}), env);
    assert_eq!(
        c.base_url.unwrap().as_str(),
        "http://127.0.0.1:9999/anthropic"
    );
    let c = resolved(json!({"baseUrl": "http://localhost:1/"}), env);
    assert_eq!(c.base_url.unwrap().as_str(), "http://localhost:1/");
    let c = resolved(json!({"timeoutMs": 1500}), env);
    assert_eq!(c.timeout, Duration::from_millis(1500));
    // An explicit provider ignores the other provider's key.
    let c = resolved(json!({"provider": "openai"}), &[("ANTHROPIC_API_KEY", "k")]);
    assert_eq!((c.kind, c.api_key), (ProviderKind::OpenAi, None));
    let c = resolved(json!({"provider": "extractive"}), env);
    assert_eq!(c.kind, ProviderKind::Extractive);
    assert!(!c.fell_back);
}

#[test]
fn invalid_provider_options_are_type_errors() {
    let bad = |v: Value| ProviderOptions::from_json(&v).unwrap_err().to_string();
    assert!(bad(json!({"provider": "bard"})).starts_with("options.provider"));
    assert!(bad(json!({"baseUrl": "not a url"})).starts_with("options.baseUrl"));
    assert!(bad(json!({"baseUrl": "file:///etc"})).starts_with("options.baseUrl"));
    assert!(bad(json!({"timeoutMs": -5})).starts_with("options.timeoutMs"));
    assert!(bad(json!({"timeoutMs": 0})).starts_with("options.timeoutMs"));
    let e = resolve(
        &ProviderOptions::default(),
        &env_of(&[("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", "::nope")]),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("OPENAI_BASE_URL"), "{e}");
}

#[tokio::test]
async fn an_explicit_provider_without_a_key_is_missing_api_key() {
    for provider in ["anthropic", "openai"] {
        let s = context_compact_core::options::providers::from_options_with_env(
            &json!({"provider": provider}),
            &no_env,
        )
        .unwrap();
        assert_eq!(s.provider(), provider);
        let e = run_failed(s.as_ref(), 3).await;
        assert_eq!(e.code, ErrorCode::MissingApiKey);
        assert_eq!(e.attempts, 1);
        assert!(e.message.contains("apiKey"), "{}", e.message);
    }
    let s = context_compact_core::options::providers::from_options_with_env(&json!({}), &no_env)
        .unwrap();
    assert_eq!(s.provider(), "extractive");
}

// ---------------------------------------------------------------------------------------------
// Whole compactions against a server

fn conversation(turns: usize, words: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for i in 0..turns {
        messages.push(
            json!({"role": "user", "content": format!("request {i}: {}", "word ".repeat(words))}),
        );
        messages.push(json!({"role": "assistant", "content": format!("answer {i}: {}", "done ".repeat(words))}));
    }
    messages
}

fn compact_options(dir: &std::path::Path) -> CompactOptions {
    CompactOptions {
        force: true,
        // A small window, so that the tail leaves a middle to summarize.
        context_token_limit: 2_000,
        max_retries: 2,
        retry_base_delay: Duration::ZERO,
        output_dir: dir.into(),
        ..Default::default()
    }
}

#[derive(Default)]
struct Delays(Mutex<Vec<Duration>>);

impl AttemptObserver for Delays {
    fn retrying(&self, _attempt: u32, _error: &AttemptError, delay: Duration) {
        self.0.lock().unwrap().push(delay);
    }
}

#[tokio::test]
async fn a_compaction_reports_the_provider_and_model_that_wrote_the_summary() {
    let server = MockServer::start().await;
    mount(&server, MESSAGES, anthropic_ok("## Goal\nkeep going")).await;
    let dir = tempfile::tempdir().unwrap();
    let messages = conversation(10, 20);
    let s = summarizer(
        "anthropic",
        &server.uri(),
        json!({"model": "claude-haiku-4-5"}),
    );
    let outcome = compact(
        &messages,
        None,
        &compact_options(dir.path()),
        s.as_ref(),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .unwrap();
    assert!(outcome.compacted, "{outcome:?}");
    assert_eq!(outcome.provider.as_deref(), Some("anthropic"));
    assert_eq!(outcome.model.as_deref(), Some("claude-haiku-4-5"));
    assert!(outcome.summary.unwrap().contains("keep going"));
}

#[tokio::test]
async fn an_overloaded_compaction_is_skipped_with_the_error() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(529, "overloaded_error", "Overloaded").insert_header("retry-after", "0"),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let messages = conversation(10, 20);
    let delays = Delays::default();
    let outcome = compact(
        &messages,
        None,
        &compact_options(dir.path()),
        anthropic(&server).as_ref(),
        &CancellationToken::new(),
        &delays,
    )
    .await
    .unwrap();
    assert!(!outcome.compacted);
    assert!(outcome.pieces.is_empty());
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ErrorCode::Overloaded);
    assert_eq!(error.attempts, 3);
    assert_eq!(error.status, Some(529));
    assert_eq!(outcome.attempts, 3);
    assert_eq!(outcome.provider.as_deref(), Some("anthropic"));
    assert_eq!(*delays.0.lock().unwrap(), [Duration::ZERO, Duration::ZERO]);
    assert_eq!(requests(&server).await.len(), 3);
    // Nothing archived.
    assert!(std::fs::read_dir(dir.path()).map_or(true, |d| d
        .flatten()
        .all(|e| !e.path().to_string_lossy().contains("compact-"))));
}

#[tokio::test]
async fn a_middle_larger_than_the_summary_window_is_summarized_in_chunks() {
    let server = MockServer::start().await;
    mount(&server, COMPLETIONS, openai_ok("## Goal\nchunk summary")).await;
    let dir = tempfile::tempdir().unwrap();
    // gpt-4 reads 8 192 tokens; the middle is far larger.
    let messages = conversation(120, 200);
    let mut options = compact_options(dir.path());
    options.summary_max_tokens = 1000;
    let s = summarizer("openai", &server.uri(), json!({"model": "gpt-4"}));
    let outcome = compact(
        &messages,
        None,
        &options,
        s.as_ref(),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .unwrap();
    assert!(outcome.compacted, "{outcome:?}");
    let seen = requests(&server).await;
    assert!(seen.len() > 1, "{} requests", seen.len());
    for (i, r) in seen.iter().enumerate() {
        let body: Value = r.body_json().unwrap();
        let prompt = body["messages"][0]["content"].as_str().unwrap();
        assert!(
            prompt.len() < 8_192 * 4,
            "request {i}: {} chars",
            prompt.len()
        );
        if i > 0 {
            assert!(
                prompt.contains("chunk summary"),
                "request {i} does not fold the summary so far"
            );
        }
    }
}

#[tokio::test]
async fn a_second_compaction_updates_the_first_summary() {
    let server = MockServer::start().await;
    mount_once(
        &server,
        MESSAGES,
        anthropic_ok("## Goal\nFIRST-SUMMARY-TEXT"),
    )
    .await;
    mount(&server, MESSAGES, anthropic_ok("## Goal\nsecond summary")).await;
    let dir = tempfile::tempdir().unwrap();
    let options = compact_options(dir.path());
    let s = anthropic(&server);
    let messages = conversation(10, 20);
    let first = compact(
        &messages,
        None,
        &options,
        s.as_ref(),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .unwrap();
    assert!(first.compacted);
    let mut next: Vec<Value> = first
        .pieces
        .iter()
        .map(|p| match p {
            context_compact_core::pipeline::Piece::Original(i) => messages[*i].clone(),
            context_compact_core::pipeline::Piece::New(v) => v.clone(),
        })
        .collect();
    next.extend(conversation(10, 20).into_iter().skip(1));
    let second = compact(
        &next,
        None,
        &options,
        s.as_ref(),
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .unwrap();
    assert!(second.compacted, "{second:?}");
    let seen = requests(&server).await;
    assert_eq!(seen.len(), 2);
    let body: Value = seen[1].body_json().unwrap();
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("FIRST-SUMMARY-TEXT"), "{prompt}");
    assert!(
        prompt.contains("previous_summary"),
        "the update prompt is used"
    );
}
