//! What the HTTP providers share: the key and the client ([`HttpProvider`]), sending one
//! request, turning every way an HTTP exchange can fail into an [`AttemptError`] with the
//! retry decision of SPEC §5 (the official SDKs' policy), and the one [`HttpSummarizer`] that
//! every HTTP provider is, parameterised by its [`Dialect`] (what its API says differently: the
//! endpoint, the headers, the bodies, the response). It sits below the providers, which import
//! it and implement a dialect; it imports none of them.
//!
//! The decision functions ([`classify_status`], [`retry_after`], [`should_retry_header`]) are
//! pure so that they can be tested without a server or a clock.

use std::fmt;
use std::marker::PhantomData;
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use crate::base::error::ErrorCode;
use crate::base::retry::MAX_RETRY_AFTER;
use crate::base::text::{clip, collapse_whitespace};
use crate::model::overflow;
use crate::summary::summarize::{
    AttemptError, BoxFuture, Retry, SharedRequest, Summarizer, SummaryRequest, SummaryUsage,
};

use super::shared;

/// What one HTTP summary API says in its own way. The exchange around it (sending, metering the
/// usage, the retry decision, redacting the key from errors) is [`HttpSummarizer`]'s, the same
/// for every dialect.
pub trait Dialect: fmt::Debug + Send + Sync + 'static {
    /// The provider's name, as outcomes and logs report it.
    const PROVIDER: &'static str;
    /// The shape of its error bodies.
    const PROTOCOL: Protocol;
    /// Its endpoint under the base URL's `/v1`.
    const ENDPOINT: &'static str;

    /// The request headers, with the key.
    fn headers(http: &HttpProvider) -> HeaderMap;
    /// The body of a request that sends the summary prompt.
    fn body(http: &HttpProvider, prompt: &str, max_tokens: u32) -> Value;
    /// The body of a request that shares the loop's own request (its cached prefix).
    fn shared_body(http: &HttpProvider, shared: &SharedRequest<'_>, max_tokens: u32) -> Value;
    /// The usage object of a response, read as the summary's usage.
    fn usage(usage: &Value) -> SummaryUsage;
    /// The summary text of a 2xx response, or why it is a failed attempt.
    fn parse_response(status: u16, body: &[u8]) -> Result<String, AttemptError>;
    /// Why the loop's request cannot be shared with this API, or `Ok`.
    fn can_share(http: &HttpProvider, request: &SharedRequest<'_>) -> Result<(), String>;
    /// See [`Summarizer::caches_by_itself`].
    fn caches_by_itself(prompt_tokens: u64) -> Result<String, String>;
}

/// Summaries by an HTTP API that speaks dialect `D`.
#[derive(Debug)]
pub struct HttpSummarizer<D: Dialect> {
    http: HttpProvider,
    url: String,
    dialect: PhantomData<D>,
}

impl<D: Dialect> HttpSummarizer<D> {
    pub fn new(http: HttpProvider) -> Self {
        let url = endpoint(&http.base_url, D::ENDPOINT);
        HttpSummarizer {
            http,
            url,
            dialect: PhantomData,
        }
    }

    /// The request body for a prompt.
    pub fn body(&self, prompt: &str, max_tokens: u32) -> Value {
        D::body(&self.http, prompt, max_tokens)
    }

    async fn attempt(&self, request: &SummaryRequest<'_>) -> Result<String, AttemptError> {
        let body = match &request.shared {
            Some(shared) => D::shared_body(&self.http, shared, request.max_tokens),
            None => self.body(&request.prompt, request.max_tokens),
        };
        let response = self
            .http
            .send(
                &self.url,
                D::headers(&self.http),
                &body,
                D::PROTOCOL,
                request,
            )
            .await?;
        shared::meter_usage(request, &response.body, D::usage);
        D::parse_response(response.status, &response.body)
    }
}

impl<D: Dialect> Summarizer for HttpSummarizer<D> {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        // The key never appears in an error, whatever the server echoed back.
        Box::pin(async move { self.attempt(request).await.map_err(|e| self.http.scrub(e)) })
    }

    fn provider(&self) -> &str {
        D::PROVIDER
    }

    fn model(&self) -> Option<&str> {
        Some(&self.http.model)
    }

    fn can_share(&self, request: &SharedRequest<'_>) -> Result<(), String> {
        D::can_share(&self.http, request)
    }

    fn caches_by_itself(&self, prompt_tokens: u64) -> Result<String, String> {
        D::caches_by_itself(prompt_tokens)
    }
}

/// How long establishing a connection (TCP + TLS) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one request may take, response body included (`timeoutMs`), by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest excerpt of a non-JSON error body quoted in a message.
const MAX_BODY_EXCERPT: usize = 200;

/// An API key. Its `Debug` never shows it and it has no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the auth header (and for redaction).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// What both HTTP providers hold.
pub struct HttpProvider {
    pub client: reqwest::Client,
    pub base_url: Url,
    pub model: String,
    pub key: ApiKey,
    pub timeout: Duration,
    pub max_output_tokens: Option<u32>,
}

impl HttpProvider {
    /// `max_tokens` for a request: the caller's budget within the model's output limit.
    pub fn max_tokens(&self, requested: u32) -> u32 {
        let limit = self.max_output_tokens.unwrap_or(u32::MAX);
        requested.clamp(1, limit.max(1))
    }

    /// Posts one summary request (logged without its content) and returns the raw response;
    /// transport failures and non-2xx statuses come back as classified attempt errors.
    pub async fn send(
        &self,
        url: &str,
        headers: reqwest::header::HeaderMap,
        body: &serde_json::Value,
        protocol: Protocol,
        request: &crate::summary::summarize::SummaryRequest<'_>,
    ) -> Result<Response, AttemptError> {
        tracing::debug!(
            provider = protocol.name(),
            model = self.model.as_str(),
            attempt = request.attempt,
            prompt_chars = request.prompt.len(),
            "sending a summary request to {url}"
        );
        post_json(&self.client, url, headers, body, self.timeout, protocol).await
    }

    /// An attempt error with the key removed from its message.
    pub fn scrub(&self, mut error: AttemptError) -> AttemptError {
        error.message = redact(&error.message, self.key.expose());
        error
    }
}

impl fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProvider")
            .field("base_url", &self.base_url.as_str())
            .field("model", &self.model)
            .field("key", &self.key)
            .field("timeout", &self.timeout)
            .field("max_output_tokens", &self.max_output_tokens)
            .finish()
    }
}

/// Which wire protocol a provider speaks (for error bodies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Anthropic,
    OpenAi,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Anthropic => "anthropic",
            Protocol::OpenAi => "openai",
        }
    }
}

/// True for `localhost`, `127.0.0.0/8` and `::1`: such base URLs bypass any system proxy.
pub fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => {
            let domain = host.trim_end_matches('.').to_ascii_lowercase();
            domain == "localhost" || domain.ends_with(".localhost")
        }
    }
}

/// A client for one base URL: rustls, an explicit connect timeout, no proxy for loopback
/// addresses (a proxy configured for the internet must not intercept a local model server).
/// The request timeout is set on each request.
pub fn build_client(base_url: &Url) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("context-compact/", env!("CARGO_PKG_VERSION")));
    if is_loopback(base_url) {
        builder = builder.no_proxy();
    }
    builder.build()
}

/// `{base}/v1/{path}`, without doubling a `/v1` the base URL already ends with.
pub fn endpoint(base_url: &Url, path: &str) -> String {
    let base = base_url.as_str().trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/{path}")
    } else {
        format!("{base}/v1/{path}")
    }
}

/// A successful (2xx) response.
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Any response, whatever its status.
pub struct RawResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// Sends one JSON POST and reads the whole body, whatever the status; transport failures
/// become `CONNECTION_FAILED` / `TIMEOUT` (both retried). For callers that read error bodies
/// themselves (see [`post_json`] for the usual case).
pub async fn post_json_raw(
    client: &reqwest::Client,
    url: &str,
    headers: HeaderMap,
    body: &Value,
    timeout: Duration,
) -> Result<RawResponse, AttemptError> {
    let response = client
        .post(url)
        .headers(headers)
        .timeout(timeout)
        .json(body)
        .send()
        .await
        .map_err(|e| transport_error(&e, url, timeout, false))?;
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| transport_error(&e, url, timeout, true))?;
    Ok(RawResponse {
        status,
        headers,
        body: bytes.to_vec(),
    })
}

/// Sends one JSON POST and reads the whole body. Non-2xx statuses become classified errors;
/// transport failures become `CONNECTION_FAILED` / `TIMEOUT` (both retried).
pub async fn post_json(
    client: &reqwest::Client,
    url: &str,
    headers: HeaderMap,
    body: &Value,
    timeout: Duration,
    protocol: Protocol,
) -> Result<Response, AttemptError> {
    let response = post_json_raw(client, url, headers, body, timeout).await?;
    if response.status.is_success() {
        return Ok(Response {
            status: response.status.as_u16(),
            body: response.body,
        });
    }
    Err(status_error(
        response.status,
        &response.headers,
        &response.body,
        protocol,
        SystemTime::now(),
    ))
}

/// A transport failure (no HTTP status): connection refused or reset, DNS, TLS, timeouts.
fn transport_error(
    error: &reqwest::Error,
    url: &str,
    timeout: Duration,
    reading_body: bool,
) -> AttemptError {
    let cause = root_cause(error);
    if error.is_timeout() {
        let what = if reading_body {
            "while reading the response"
        } else {
            "waiting for the response"
        };
        return AttemptError::new(
            ErrorCode::Timeout,
            format!(
                "the request to {url} timed out after {} ms {what} (timeoutMs)",
                timeout.as_millis()
            ),
            Retry::Yes,
        );
    }
    let message = if error.is_connect() {
        format!("could not connect to {url}: {cause}")
    } else if reading_body || error.is_body() || error.is_decode() {
        format!("the connection to {url} broke while reading the response: {cause}")
    } else {
        format!("the request to {url} failed: {cause}")
    };
    AttemptError::new(ErrorCode::ConnectionFailed, message, Retry::Yes)
}

/// The innermost error message (e.g. `Connection refused (os error 111)`).
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    let text = current.to_string();
    if text.is_empty() {
        error.to_string()
    } else {
        text
    }
}

/// `x-should-retry: true|false`: the server's own retry decision, which overrides ours.
pub fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    let value = headers.get("x-should-retry")?.to_str().ok()?.trim();
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// The wait a server asks for, from `retry-after-ms` (milliseconds, may be fractional), else
/// `retry-after` (seconds, or an HTTP date), clamped to [`MAX_RETRY_AFTER`]. Invalid,
/// negative and past values are ignored (`None`: the backoff applies).
pub fn retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    let clamp = |d: Duration| d.min(MAX_RETRY_AFTER);
    if let Some(ms) = retry_after_ms.and_then(parse_non_negative) {
        return Some(clamp(Duration::from_secs_f64(
            (ms / 1000.0).min(MAX_RETRY_AFTER.as_secs_f64()),
        )));
    }
    let value = retry_after?.trim();
    if let Some(seconds) = parse_non_negative(value) {
        return Some(clamp(Duration::from_secs_f64(
            seconds.min(MAX_RETRY_AFTER.as_secs_f64()),
        )));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    date.duration_since(now).ok().map(clamp)
}

fn parse_non_negative(text: &str) -> Option<f64> {
    let value: f64 = text.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value)
}

/// The wait a response asks for (see [`retry_after`]).
pub fn retry_after_from_headers(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    retry_after(get("retry-after-ms"), get("retry-after"), now)
}

// The spend-limit and quota codes live beside the overflow texts, which must tell them apart
// from an overflow; they are used here for the retry decision.
pub use crate::model::overflow::is_quota_code;

/// The error code and retry decision for an HTTP status (SPEC §5):
/// retried: 408, 409, 429, 5xx (529 and `overloaded_error` are `OVERLOADED`);
/// not retried: other 4xx (401/403 `AUTHENTICATION_FAILED`, 402 and quota 429s
/// `QUOTA_EXCEEDED`, the rest `BAD_REQUEST`).
/// `error_codes` are every type and code the body carries ([`ApiErrorBody::codes`]).
/// `x-should-retry` (`should_retry`) overrides the decision either way.
pub fn classify_status(
    status: u16,
    error_codes: &[&str],
    should_retry: Option<bool>,
) -> (ErrorCode, Retry) {
    let is_quota = error_codes.iter().any(|c| is_quota_code(c));
    let overloaded = error_codes.contains(&"overloaded_error");
    let (code, retry) = match status {
        401 | 403 => (ErrorCode::AuthenticationFailed, Retry::No),
        402 => (ErrorCode::QuotaExceeded, Retry::No),
        408 => (ErrorCode::Timeout, Retry::Yes),
        409 => (ErrorCode::ServerError, Retry::Yes),
        429 if is_quota => (ErrorCode::QuotaExceeded, Retry::No),
        429 => (ErrorCode::RateLimited, Retry::Yes),
        529 => (ErrorCode::Overloaded, Retry::Yes),
        500..=599 if overloaded => (ErrorCode::Overloaded, Retry::Yes),
        500..=599 => (ErrorCode::ServerError, Retry::Yes),
        400..=499 => (ErrorCode::BadRequest, Retry::No),
        _ => (ErrorCode::InvalidResponse, Retry::No),
    };
    let retry = match should_retry {
        Some(true) => Retry::Yes,
        Some(false) => Retry::No,
        None => retry,
    };
    (code, retry)
}

/// The `{type, message, code}` of an API error body: Anthropic
/// `{type:'error', error:{type, message, details:{error_code}}}`, OpenAI
/// `{error:{message, type, code}}`, or a bare `{message}` / `{error: "text"}` from compatible
/// servers.
#[derive(Debug, Default, PartialEq)]
pub struct ApiErrorBody {
    pub error_type: Option<String>,
    pub code: Option<String>,
    /// Anthropic's specific code under the general type (`error.details.error_code`).
    pub detail_code: Option<String>,
    pub message: Option<String>,
}

impl ApiErrorBody {
    /// The type and the codes, most general first, without repeats.
    pub fn codes(&self) -> Vec<&str> {
        let mut codes: Vec<&str> = Vec::new();
        for code in [&self.error_type, &self.code, &self.detail_code]
            .into_iter()
            .flatten()
        {
            if !codes.contains(&code.as_str()) {
                codes.push(code);
            }
        }
        codes
    }
}

pub fn parse_error_body(body: &[u8]) -> Option<ApiErrorBody> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let text = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let out = match value.get("error") {
        Some(error @ Value::Object(_)) => ApiErrorBody {
            error_type: text(error.get("type")),
            code: text(error.get("code")),
            detail_code: text(error.get("details").and_then(|d| d.get("error_code"))),
            message: text(error.get("message")),
        },
        Some(Value::String(message)) => ApiErrorBody {
            message: Some(message.clone()),
            ..Default::default()
        },
        _ => ApiErrorBody {
            code: text(value.get("code")),
            message: text(value.get("message")).or_else(|| text(value.get("detail"))),
            ..Default::default()
        },
    };
    Some(out)
}

/// A short, single-line excerpt of a body that is not the JSON we expected.
pub fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    clip(&collapse_whitespace(&text), MAX_BODY_EXCERPT)
}

/// A non-2xx response as a failed attempt: the status, the API's error type and message (or
/// a clipped excerpt of a non-JSON body), the retry decision and the server's requested wait.
pub fn status_error(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    protocol: Protocol,
    now: SystemTime,
) -> AttemptError {
    let parsed = parse_error_body(body);
    let (code, retry) = classify_status(
        status.as_u16(),
        &parsed.as_ref().map(ApiErrorBody::codes).unwrap_or_default(),
        should_retry_header(headers),
    );
    let reason = status.canonical_reason().unwrap_or("");
    let mut message = format!("{} API error: HTTP {}", protocol.name(), status.as_u16());
    if !reason.is_empty() {
        message.push(' ');
        message.push_str(reason);
    }
    match &parsed {
        Some(p) if !p.codes().is_empty() || p.message.is_some() => {
            let codes = p.codes();
            if !codes.is_empty() {
                message.push_str(&format!(" ({})", codes.join("/")));
            }
            if let Some(text) = &p.message {
                message.push_str(": ");
                message.push_str(&clip(text, 500));
            }
        }
        _ if body.iter().all(u8::is_ascii_whitespace) => {}
        _ => {
            message.push_str(": ");
            message.push_str(&excerpt(body));
        }
    }
    // A refusal for size is final for this request whatever its status (llama.cpp's first
    // version sent it as a 500): the same request would be refused again, so it is not
    // retried, and it is a bad request the caller can make smaller.
    let too_long = overflow::stated_limits_response(status.as_u16(), body);
    let (code, retry) = match too_long {
        Some(_) => (ErrorCode::BadRequest, Retry::No),
        None => (code, retry),
    };
    let mut error = AttemptError::new(code, message, retry).with_status(status.as_u16());
    error.retry_after = retry_after_from_headers(headers, now);
    error.too_long = too_long;
    error
}

/// Removes a secret from a message (defence in depth: servers sometimes echo what they got).
pub fn redact(text: &str, secret: &str) -> String {
    if secret.len() < 4 || !text.contains(secret) {
        return text.to_string();
    }
    text.replace(secret, "[redacted]")
}

/// A malformed successful response.
pub fn invalid_response(protocol: Protocol, status: u16, what: &str, body: &[u8]) -> AttemptError {
    AttemptError::new(
        ErrorCode::InvalidResponse,
        format!(
            "{} API returned HTTP {status} with {what}: {}",
            protocol.name(),
            excerpt(body)
        ),
        Retry::Yes,
    )
    .with_status(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_does_not_double_v1() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            endpoint(&u("https://api.anthropic.com"), "messages"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            endpoint(&u("http://localhost:11434/v1/"), "chat/completions"),
            "http://localhost:11434/v1/chat/completions"
        );
        assert_eq!(
            endpoint(&u("https://example.com/proxy/"), "chat/completions"),
            "https://example.com/proxy/v1/chat/completions"
        );
    }

    #[test]
    fn loopback_hosts() {
        for (url, expected) in [
            ("http://127.0.0.1:8080", true),
            ("http://127.1.2.3", true),
            ("http://localhost:1234", true),
            ("http://[::1]:99", true),
            ("https://api.openai.com", false),
            ("http://10.0.0.1", false),
        ] {
            assert_eq!(is_loopback(&Url::parse(url).unwrap()), expected, "{url}");
        }
    }

    #[test]
    fn error_bodies_of_both_protocols() {
        let a = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            parse_error_body(a).unwrap(),
            ApiErrorBody {
                error_type: Some("overloaded_error".into()),
                code: None,
                detail_code: None,
                message: Some("Overloaded".into())
            }
        );
        let o = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let p = parse_error_body(o).unwrap();
        assert_eq!(p.code.as_deref(), Some("insufficient_quota"));
        assert_eq!(p.codes(), ["insufficient_quota"]);
        assert!(parse_error_body(b"<html>").is_none());
    }

    #[test]
    fn anthropic_spend_cap_code_is_read_from_error_details() {
        // The tier's monthly cap: a 429 `rate_limit_error` whose specific code sits in
        // `error.details.error_code` (as @anthropic-ai/sdk's `EnforcedSpendLimitReachedError`
        // reads it), without `retry-after`.
        let body = br#"{"type":"error","error":{"type":"rate_limit_error","message":"You have reached your API usage limits. You will regain access on 2026-11-01 at 00:00 UTC.","details":{"error_code":"enforced_spend_limit_reached"}},"request_id":"req_1"}"#;
        let p = parse_error_body(body).unwrap();
        assert_eq!(p.error_type.as_deref(), Some("rate_limit_error"));
        assert_eq!(
            p.detail_code.as_deref(),
            Some("enforced_spend_limit_reached")
        );
        assert_eq!(
            p.codes(),
            ["rate_limit_error", "enforced_spend_limit_reached"]
        );
        assert_eq!(
            classify_status(429, &p.codes(), None),
            (ErrorCode::QuotaExceeded, Retry::No)
        );
        // An ordinary rate limit, and Anthropic's ramp limit (retry after `retry-after`), are retried.
        let ordinary = parse_error_body(
            br#"{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited","details":null}}"#,
        )
        .unwrap();
        assert_eq!(ordinary.detail_code, None);
        assert_eq!(
            classify_status(429, &ordinary.codes(), None),
            (ErrorCode::RateLimited, Retry::Yes)
        );
        assert_eq!(
            classify_status(429, &["rate_limit_error", "ramp_limit_exceeded"], None),
            (ErrorCode::RateLimited, Retry::Yes)
        );
        // OpenAI's spend-limit codes under the broader `insufficient_quota` type, or alone.
        for code in [
            "organization_spend_limit_exceeded",
            "project_spend_limit_exceeded",
            "organization_usage_limit_exceeded",
            "credit_balance_exhausted",
        ] {
            assert_eq!(
                classify_status(429, &["requests", code], None),
                (ErrorCode::QuotaExceeded, Retry::No),
                "{code}"
            );
        }
        // The message names both, so the log says which limit it was.
        let error = status_error(
            StatusCode::TOO_MANY_REQUESTS,
            &HeaderMap::new(),
            body,
            Protocol::Anthropic,
            SystemTime::now(),
        );
        assert!(
            error
                .message
                .contains("(rate_limit_error/enforced_spend_limit_reached)"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_refusal_for_size_is_final_and_says_what_it_stated() {
        let error = |status: u16, body: &[u8]| {
            status_error(
                StatusCode::from_u16(status).unwrap(),
                &HeaderMap::new(),
                body,
                Protocol::OpenAi,
                SystemTime::now(),
            )
        };
        let refused = error(
            400,
            br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 235122 tokens > 195904 maximum"}}"#,
        );
        assert_eq!(
            (refused.code, refused.retry),
            (ErrorCode::BadRequest, Retry::No)
        );
        assert_eq!(
            refused.too_long,
            Some(overflow::StatedLimits {
                prompt: Some(235_122),
                maximum: Some(195_904)
            })
        );
        // llama.cpp's first version said it with a 500: not retried, the same request would
        // meet it again.
        let old_llama = error(
            500,
            br#"{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift"}}"#,
        );
        assert_eq!(
            (old_llama.code, old_llama.retry),
            (ErrorCode::BadRequest, Retry::No)
        );
        assert_eq!(old_llama.too_long, Some(overflow::StatedLimits::default()));
        // Other 400s and 500s are what they were.
        let other = error(
            400,
            br#"{"error":{"message":"messages: roles must alternate"}}"#,
        );
        assert_eq!(other.too_long, None);
        let down = error(500, br#"{"error":{"message":"internal error"}}"#);
        assert_eq!(
            (down.code, down.retry, down.too_long),
            (ErrorCode::ServerError, Retry::Yes, None)
        );
    }

    #[test]
    fn an_excerpt_is_one_line() {
        assert_eq!(
            excerpt(b"<html>\n  <body>x</body>\n</html>"),
            "<html> <body>x</body> </html>"
        );
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("key sk-1234 here", "sk-1234"), "key [redacted] here");
        assert_eq!(redact("nothing", "sk-1234"), "nothing");
    }
}
