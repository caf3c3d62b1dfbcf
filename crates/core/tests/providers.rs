//! The HTTP providers against real HTTP servers on 127.0.0.1 (wiremock, and a raw TCP server
//! for a connection that breaks mid-body), with retry waits made instant (`retry-after: 0`
//! or a zero backoff base). One named test per row of issue 3's list.

#[path = "providers/helpers.rs"]
mod helpers;
use helpers::*;
// ---------------------------------------------------------------------------------------------
// 200 success

#[tokio::test]
async fn anthropic_success_sends_the_documented_request() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_ok("## Goal\nrefactor the parser"),
    )
    .await;
    let s = anthropic(&server);
    assert_eq!(s.provider(), "anthropic");
    assert_eq!(s.model(), Some(providers::DEFAULT_ANTHROPIC_MODEL));

    // Through the real pipeline, so that the prompt is rendered from messages.
    let middle = vec![
        json!({"role": "user", "content": "please refactor src/parser.rs MIDDLE-MARKER-42"}),
        json!({"role": "assistant", "content": "Done, the parser is split in two."}),
    ];
    let options = CompactOptions {
        summary_max_tokens: 1234,
        retry_base_delay: Duration::ZERO,
        ..Default::default()
    };
    let origins: Vec<Option<usize>> = (0..middle.len()).map(Some).collect();
    let summary = context_compact_core::pipeline::summarize_middle(
        &middle,
        0,
        &origins,
        &options,
        &Default::default(),
        s.as_ref(),
        None,
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .expect("summary");
    assert!(summary.body.starts_with("## Goal\nrefactor the parser"));

    let seen = requests(&server).await;
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.url.path(), "/v1/messages");
    assert_eq!(r.headers.get("x-api-key").unwrap(), KEY);
    assert_eq!(r.headers.get("anthropic-version").unwrap(), "2023-06-01");
    assert!(r
        .headers
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    assert!(r.headers.get("authorization").is_none());
    let body: Value = r.body_json().unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert_eq!(body["max_tokens"], 1234);
    assert_eq!(body["messages"][0]["role"], "user");
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("MIDDLE-MARKER-42"), "{prompt}");
    assert!(prompt.contains("Done, the parser is split in two."));
    // The key is only in the header.
    assert!(!String::from_utf8_lossy(&r.body).contains(KEY));
}

#[tokio::test]
async fn openai_success_sends_the_documented_request() {
    let server = MockServer::start().await;
    mount(&server, COMPLETIONS, openai_ok("## Goal\nrefactor")).await;
    let s = summarizer("openai", &server.uri(), json!({"model": "gpt-4o"}));
    assert_eq!(s.provider(), "openai");
    assert_eq!(s.model(), Some("gpt-4o"));
    let (text, attempts) = run(s.as_ref(), 2).await.unwrap();
    assert_eq!(text, "## Goal\nrefactor");
    assert_eq!(attempts, 1);

    let seen = requests(&server).await;
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.url.path(), "/v1/chat/completions");
    assert_eq!(
        r.headers.get("authorization").unwrap(),
        &format!("Bearer {KEY}")
    );
    assert!(r.headers.get("x-api-key").is_none());
    let body: Value = r.body_json().unwrap();
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["max_tokens"], 1000);
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(body["messages"][0]["role"], "user");
    assert!(body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("MIDDLE-MARKER-42"));
    assert!(!String::from_utf8_lossy(&r.body).contains(KEY));
}

#[tokio::test]
async fn openai_reasoning_models_get_max_completion_tokens() {
    let server = MockServer::start().await;
    mount(&server, COMPLETIONS, openai_ok("summary")).await;
    let s = summarizer("openai", &server.uri(), json!({"model": "o3-mini"}));
    run(s.as_ref(), 0).await.unwrap();
    let body: Value = requests(&server).await[0].body_json().unwrap();
    assert_eq!(body["max_completion_tokens"], 1000);
    assert!(body.get("max_tokens").is_none());
}

#[tokio::test]
async fn max_tokens_is_clamped_to_the_models_output_limit() {
    let server = MockServer::start().await;
    mount(&server, COMPLETIONS, openai_ok("summary")).await;
    let s = summarizer("openai", &server.uri(), json!({"model": "gpt-4"}));
    let mut r = request(PROMPT);
    r.max_tokens = 100_000;
    s.summarize(&r).await.unwrap();
    let body: Value = requests(&server).await[0].body_json().unwrap();
    assert_eq!(body["max_tokens"], 4096);
}

#[tokio::test]
async fn anthropic_text_blocks_are_concatenated() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        ResponseTemplate::new(200).set_body_json(json!({
            "type": "message",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "## Goal\n"},
                {"type": "text", "text": "ship it"}
            ],
            "stop_reason": "end_turn"
        })),
    )
    .await;
    let (text, _) = run(anthropic(&server).as_ref(), 0).await.unwrap();
    assert_eq!(text, "## Goal\nship it");
}

// ---------------------------------------------------------------------------------------------
// Retried statuses

#[tokio::test]
async fn rate_limited_429_with_retry_after_then_200_makes_two_requests() {
    let server = MockServer::start().await;
    mount_once(
        &server,
        MESSAGES,
        anthropic_error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        )
        .insert_header("retry-after", "0"),
    )
    .await;
    mount(&server, MESSAGES, anthropic_ok("summary after the wait")).await;
    // A long backoff base: only the server's `retry-after: 0` keeps this test fast.
    let policy = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_secs(30),
    };
    let started = Instant::now();
    let s = anthropic(&server);
    let (text, attempts) = summarize_with_retries(
        s.as_ref(),
        request(PROMPT),
        policy,
        &CancellationToken::new(),
        &NoObserver,
    )
    .await
    .unwrap();
    assert_eq!(text, "summary after the wait");
    assert_eq!(attempts, 2);
    assert_eq!(requests(&server).await.len(), 2);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn overloaded_529_every_time_makes_max_retries_plus_one_requests() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(529, "overloaded_error", "Overloaded"),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 2).await;
    assert_eq!(requests(&server).await.len(), 3);
    assert_eq!(e.code, ErrorCode::Overloaded);
    assert_eq!(e.attempts, 3);
    assert_eq!(e.status, Some(529));
    assert!(e.message.contains("HTTP 529"), "{}", e.message);
    assert!(e.message.contains("overloaded_error"), "{}", e.message);
    assert!(e.message.contains("Overloaded"), "{}", e.message);
}

#[tokio::test]
async fn max_retries_zero_means_one_request() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(529, "overloaded_error", "Overloaded"),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 0).await;
    assert_eq!(e.attempts, 1);
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn server_error_500_with_an_html_body_is_retried_with_a_short_message() {
    let server = MockServer::start().await;
    let html = format!(
        "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n<body>{}</body></html>",
        "<p>nginx exploded</p>".repeat(300)
    );
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(500).set_body_raw(html, "text/html"),
    )
    .await;
    let e = run_failed(openai(&server).as_ref(), 1).await;
    assert_eq!(requests(&server).await.len(), 2);
    assert_eq!(e.code, ErrorCode::ServerError);
    assert_eq!(e.status, Some(500));
    assert!(e.message.contains("HTTP 500"), "{}", e.message);
    assert!(
        e.message.contains("500 Internal Server Error"),
        "{}",
        e.message
    );
    assert!(
        e.message.len() < 400,
        "not clipped: {} chars",
        e.message.len()
    );
    assert!(!e.message.contains('\n'));
}

#[tokio::test]
async fn status_408_and_409_are_retried() {
    for status in [408u16, 409] {
        let server = MockServer::start().await;
        mount(&server, COMPLETIONS, ResponseTemplate::new(status)).await;
        let e = run_failed(openai(&server).as_ref(), 1).await;
        assert_eq!(requests(&server).await.len(), 2, "status {status}");
        assert_eq!(e.status, Some(status));
    }
}

// ---------------------------------------------------------------------------------------------
// Not retried

async fn one_request_only(status: u16, kind: &str, expected: ErrorCode) {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(status, kind, "something is wrong"),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 3).await;
    assert_eq!(requests(&server).await.len(), 1, "status {status}");
    assert_eq!(e.code, expected, "status {status}");
    assert_eq!(e.attempts, 1);
    assert_eq!(e.status, Some(status));
    assert!(
        e.message.contains(&format!("HTTP {status}")),
        "{}",
        e.message
    );
    assert!(e.message.contains(kind), "{}", e.message);
    assert!(e.message.contains("something is wrong"), "{}", e.message);
}

#[tokio::test]
async fn bad_request_400_is_not_retried() {
    one_request_only(400, "invalid_request_error", ErrorCode::BadRequest).await;
}

#[tokio::test]
async fn unauthorized_401_is_not_retried() {
    one_request_only(401, "authentication_error", ErrorCode::AuthenticationFailed).await;
}

#[tokio::test]
async fn forbidden_403_is_not_retried() {
    one_request_only(403, "permission_error", ErrorCode::AuthenticationFailed).await;
}

#[tokio::test]
async fn not_found_404_is_not_retried() {
    one_request_only(404, "not_found_error", ErrorCode::BadRequest).await;
}

#[tokio::test]
async fn request_too_large_413_and_422_are_not_retried() {
    one_request_only(413, "request_too_large", ErrorCode::BadRequest).await;
    one_request_only(422, "unprocessable_entity", ErrorCode::BadRequest).await;
}

#[tokio::test]
async fn x_should_retry_false_stops_a_retryable_status() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(500, "api_error", "Internal server error")
            .insert_header("x-should-retry", "false"),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 3).await;
    assert_eq!(requests(&server).await.len(), 1);
    assert_eq!(e.code, ErrorCode::ServerError);
}

#[tokio::test]
async fn x_should_retry_true_retries_a_final_status() {
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(400, "invalid_request_error", "try again")
            .insert_header("x-should-retry", "true"),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 2).await;
    assert_eq!(requests(&server).await.len(), 3);
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert_eq!(e.attempts, 3);
}

#[tokio::test]
async fn spend_limit_429_is_not_retried() {
    // OpenAI's documented quota error.
    let server = MockServer::start().await;
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"error": {
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota", "param": null, "code": "insufficient_quota"
            }})),
    )
    .await;
    let e = run_failed(openai(&server).as_ref(), 3).await;
    assert_eq!(requests(&server).await.len(), 1);
    assert_eq!(e.code, ErrorCode::QuotaExceeded);
    assert_eq!(e.status, Some(429));
    assert!(e.message.contains("insufficient_quota"), "{}", e.message);
    assert!(
        e.message.contains("exceeded your current quota"),
        "{}",
        e.message
    );

    // A spend-limit name as the error type (older and compatible servers; Anthropic's own shape
    // is in `anthropic_spend_cap_in_error_details_is_sent_once`).
    let server = MockServer::start().await;
    mount(
        &server,
        MESSAGES,
        anthropic_error(
            429,
            "enforced_spend_limit_reached",
            "Your workspace reached its spend limit",
        ),
    )
    .await;
    let e = run_failed(anthropic(&server).as_ref(), 3).await;
    assert_eq!(requests(&server).await.len(), 1);
    assert_eq!(e.code, ErrorCode::QuotaExceeded);
}

/// Anthropic's monthly spend cap, as the API sends it: a 429 `rate_limit_error` without
/// `retry-after`, the specific code in `error.details.error_code` (the shape
/// @anthropic-ai/sdk's `EnforcedSpendLimitReachedError` is built from). Retrying cannot help
/// until the month ends, so it is sent once.
#[tokio::test]
async fn anthropic_spend_cap_in_error_details_is_sent_once() {
    for code in [
        "enforced_spend_limit_reached",
        "contract_spend_limit_reached",
    ] {
        let server = MockServer::start().await;
        mount(
            &server,
            MESSAGES,
            ResponseTemplate::new(429).set_body_json(json!({
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "You have reached your API usage limits. You will regain access on 2026-11-01 at 00:00 UTC.",
                    "details": {"error_code": code}
                },
                "request_id": "req_011CspendCap"
            })),
        )
        .await;
        let e = run_failed(anthropic(&server).as_ref(), 2).await;
        assert_eq!(requests(&server).await.len(), 1, "{code}");
        assert_eq!(e.code, ErrorCode::QuotaExceeded, "{code}");
        assert_eq!(e.attempts, 1);
        assert_eq!(e.status, Some(429));
        assert!(e.message.contains(code), "{}", e.message);
    }
}

/// OpenAI's hard spend limit: a 429 whose `error.code` is the specific limit and whose
/// `error.type` is the broader `insufficient_quota` or, as here, neither of the old names.
#[tokio::test]
async fn openai_spend_limit_codes_are_sent_once() {
    for code in [
        "organization_spend_limit_exceeded",
        "project_spend_limit_exceeded",
        "credit_balance_exhausted",
    ] {
        let server = MockServer::start().await;
        mount(
            &server,
            COMPLETIONS,
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_json(json!({"error": {
                    "message": "You have reached your spend limit.",
                    "type": "requests", "param": null, "code": code
                }})),
        )
        .await;
        let e = run_failed(openai(&server).as_ref(), 2).await;
        assert_eq!(requests(&server).await.len(), 1, "{code}");
        assert_eq!(e.code, ErrorCode::QuotaExceeded, "{code}");
        assert_eq!(e.status, Some(429));
    }
}

#[tokio::test]
async fn an_ordinary_429_after_every_retry_is_rate_limited() {
    let server = MockServer::start().await;
    mount(
        &server,
        COMPLETIONS,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})),
    )
    .await;
    let e = run_failed(openai(&server).as_ref(), 1).await;
    assert_eq!(requests(&server).await.len(), 2);
    assert_eq!(e.code, ErrorCode::RateLimited);
}

// ---------------------------------------------------------------------------------------------
// retry-after

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

#[test]
fn retry_after_values_are_parsed_and_clamped() {
    let now = at(1_700_000_000);
    let wait = |ms: Option<&str>, s: Option<&str>| http::retry_after(ms, s, now);
    assert_eq!(wait(None, Some("0")), Some(Duration::ZERO));
    assert_eq!(wait(None, Some("2")), Some(Duration::from_secs(2)));
    assert_eq!(wait(None, Some("1.5")), Some(Duration::from_millis(1500)));
    // Clamped to 60 s.
    assert_eq!(wait(None, Some("3600")), Some(Duration::from_secs(60)));
    // An HTTP date 30 s ahead.
    let date = httpdate::fmt_http_date(now + Duration::from_secs(30));
    assert_eq!(wait(None, Some(&date)), Some(Duration::from_secs(30)));
    // A date far ahead is clamped; a past date is ignored.
    let far = httpdate::fmt_http_date(now + Duration::from_secs(86_400));
    assert_eq!(wait(None, Some(&far)), Some(Duration::from_secs(60)));
    let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
    assert_eq!(wait(None, Some(&past)), None);
    // Invalid and negative values are ignored (the backoff applies).
    assert_eq!(wait(None, Some("-1")), None);
    assert_eq!(wait(None, Some("abc")), None);
    assert_eq!(wait(None, Some("")), None);
    assert_eq!(wait(None, Some("NaN")), None);
    assert_eq!(wait(None, Some("inf")), None);
    assert_eq!(wait(None, None), None);
    // retry-after-ms wins, and is clamped too.
    assert_eq!(
        wait(Some("250"), Some("30")),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        wait(Some("1.5"), Some("30")),
        Some(Duration::from_micros(1500))
    );
    assert_eq!(wait(Some("120000"), None), Some(Duration::from_secs(60)));
    // An invalid retry-after-ms falls back to retry-after.
    assert_eq!(wait(Some("abc"), Some("3")), Some(Duration::from_secs(3)));
    assert_eq!(wait(Some("-5"), Some("3")), Some(Duration::from_secs(3)));
}

#[test]
fn status_classification_follows_the_sdks() {
    use ErrorCode::*;
    let c = |s, t: Option<&str>, r| http::classify_status(s, &t.into_iter().collect::<Vec<_>>(), r);
    assert_eq!(c(408, None, None), (Timeout, Retry::Yes));
    assert_eq!(c(409, None, None), (ServerError, Retry::Yes));
    assert_eq!(c(429, None, None), (RateLimited, Retry::Yes));
    assert_eq!(c(500, None, None), (ServerError, Retry::Yes));
    assert_eq!(c(502, None, None), (ServerError, Retry::Yes));
    assert_eq!(
        c(503, Some("overloaded_error"), None),
        (Overloaded, Retry::Yes)
    );
    assert_eq!(c(529, None, None), (Overloaded, Retry::Yes));
    assert_eq!(c(400, None, None), (BadRequest, Retry::No));
    assert_eq!(c(401, None, None), (AuthenticationFailed, Retry::No));
    assert_eq!(c(403, None, None), (AuthenticationFailed, Retry::No));
    assert_eq!(c(404, None, None), (BadRequest, Retry::No));
    assert_eq!(c(402, None, None), (QuotaExceeded, Retry::No));
    assert_eq!(
        http::classify_status(429, &["insufficient_quota"], None),
        (QuotaExceeded, Retry::No)
    );
    assert_eq!(
        http::classify_status(429, &["requests", "insufficient_quota"], None),
        (QuotaExceeded, Retry::No)
    );
    assert_eq!(c(500, None, Some(false)), (ServerError, Retry::No));
    assert_eq!(c(400, None, Some(true)), (BadRequest, Retry::Yes));
    assert_eq!(
        http::classify_status(429, &["insufficient_quota"], Some(true)),
        (QuotaExceeded, Retry::Yes)
    );
}

async fn retry_after_of(headers: &[(&str, &str)]) -> Option<Duration> {
    let server = MockServer::start().await;
    let mut response = anthropic_error(429, "rate_limit_error", "slow down");
    for (k, v) in headers {
        response = response.insert_header(*k, *v);
    }
    mount(&server, MESSAGES, response).await;
    let e = attempt(anthropic(&server).as_ref()).await;
    assert_eq!(e.code, ErrorCode::RateLimited);
    assert_eq!(e.retry, Retry::Yes);
    e.retry_after
}

#[tokio::test]
async fn odd_retry_after_values_from_a_server() {
    assert_eq!(
        retry_after_of(&[("retry-after", "3600")]).await,
        Some(Duration::from_secs(60))
    );
    assert_eq!(retry_after_of(&[("retry-after", "-1")]).await, None);
    assert_eq!(retry_after_of(&[("retry-after", "abc")]).await, None);
    assert_eq!(
        retry_after_of(&[("retry-after", "30"), ("retry-after-ms", "20")]).await,
        Some(Duration::from_millis(20))
    );
    let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(20));
    let wait = retry_after_of(&[("retry-after", date.as_str())])
        .await
        .expect("a date in the future");
    assert!(
        wait <= Duration::from_secs(20) && wait >= Duration::from_secs(18),
        "{wait:?}"
    );
    assert_eq!(retry_after_of(&[]).await, None);
}
