//! Recognising "the request is longer than the model's context window" errors (SPEC §4.8).
//!
//! When an API rejects a request as too long despite the trigger, the agent loop asks
//! [`is_context_overflow`] and compacts regardless of the estimate. Providers say it in their own
//! words, so the decision is a table of their texts ([`OVERFLOW_PATTERNS`], each with the provider
//! and where the text was found) plus the few error codes that name the condition outright.
//!
//! What is deliberately *not* an overflow, because compacting would not help:
//! - rate limits, throttling and quotas (HTTP 429, `rate_limit_error`, `ThrottlingException`,
//!   `RESOURCE_EXHAUSTED`, spend limits, "tokens per minute"), even when they talk about tokens:
//!   Bedrock's throttling text is "Too many tokens, please wait before trying again";
//! - an output limit alone: "max_tokens: 64001 > 64000, which is the maximum allowed number of
//!   output tokens" (Anthropic), "max_tokens is too large" (OpenAI);
//! - a request that overflows only because `max_tokens` by itself fills the window
//!   ("568 in the messages, 6048 in the completion" against 6048): lowering `max_tokens` is the
//!   fix. When input + `max_tokens` exceed the window and the input alone does not fill it,
//!   OpenAI, DeepSeek, vLLM and Anthropic report it with their overflow text; that *is* an
//!   overflow here, as in pi: a shorter conversation makes the request fit;
//! - byte limits (Anthropic 413 `request_too_large`, "Request exceeds the maximum allowed
//!   number of bytes"): a payload size, not a token count;
//! - a body-less 400/413: pi treats it as overflow only when the provider is Cerebras, which an
//!   error object does not tell us;
//! - the generic "too many tokens" / "token limit exceeded" of other tables, which also occur in
//!   throttling and per-minute limits.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};
use serde_json::Value;

/// What an error says about itself, gathered from wherever it was found (the SDK's error
/// object, its parsed body, its `cause` chain): HTTP statuses, machine codes (`code`, `type`,
/// `name`, `error_code`, `status` strings such as `INVALID_ARGUMENT`) and human messages.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ErrorSignals {
    pub statuses: Vec<u16>,
    pub codes: Vec<String>,
    pub messages: Vec<String>,
    /// llama.cpp's `n_ctx`: the context size the server runs with, a field of its error body.
    pub context_size: Option<u64>,
    /// llama.cpp's `n_prompt_tokens`: the refused prompt's size, as the server counted it.
    pub prompt_size: Option<u64>,
}

/// Signals beyond these bounds are ignored: an error is a few short texts, and the caller may
/// hand us anything.
const MAX_SIGNALS: usize = 256;
const MAX_MESSAGE_CHARS: usize = 64 * 1024;
/// How deep [`ErrorSignals::add_json`] follows nested objects (`{error: {error: {...}}}`).
const MAX_JSON_DEPTH: usize = 8;

impl ErrorSignals {
    /// The signals of an error as a caller gathered them from the error object: its statuses
    /// (those that are not HTTP statuses are ignored), codes and messages.
    pub fn from_parts(statuses: &[u32], codes: &[String], messages: &[String]) -> ErrorSignals {
        let mut signals = ErrorSignals::default();
        for status in statuses {
            if let Ok(status) = u16::try_from(*status) {
                signals.add_status(status);
            }
        }
        for code in codes {
            signals.add_code(code);
        }
        for message in messages {
            signals.add_message(message);
        }
        signals
    }

    pub fn add_status(&mut self, status: u16) {
        if self.statuses.len() < MAX_SIGNALS && !self.statuses.contains(&status) {
            self.statuses.push(status);
        }
    }

    pub fn add_code(&mut self, code: &str) {
        let code = code.trim();
        if code.is_empty() || code.len() > 200 || self.codes.len() >= MAX_SIGNALS {
            return;
        }
        // A numeric code is usually the HTTP status again (Google's `error.code: 400`, Azure's
        // `"code": "429"`); outside the HTTP range it is a provider's own number (Mistral 3051).
        if let Ok(n) = code.parse::<u16>() {
            if (100..=599).contains(&n) {
                self.add_status(n);
            }
            return;
        }
        if !self.codes.iter().any(|c| c == code) {
            self.codes.push(code.to_string());
        }
    }

    pub fn add_message(&mut self, message: &str) {
        if message.trim().is_empty() || self.messages.len() >= MAX_SIGNALS {
            return;
        }
        let message = match message.char_indices().nth(MAX_MESSAGE_CHARS) {
            Some((cut, _)) => &message[..cut],
            None => message,
        };
        if !self.messages.iter().any(|m| m == message) {
            self.messages.push(message.to_string());
        }
    }

    /// Adds what a parsed error body says: `message`/`detail`/`msg` texts, `code`/`type`/
    /// `status`/`error_code`/`reason`/`__type` codes and numeric statuses, at any depth
    /// (Anthropic `{type, error: {type, message, details: {error_code}}}`, OpenAI
    /// `{error: {message, type, code}}`, Google `{error: {code, message, status}}` or a list of
    /// them, bare `{message}` / `{error: "text"}`).
    pub fn add_json(&mut self, value: &Value) {
        self.add_json_at(value, 0);
    }

    fn add_json_at(&mut self, value: &Value, depth: usize) {
        if depth > MAX_JSON_DEPTH {
            return;
        }
        match value {
            Value::Array(items) => {
                for item in items.iter().take(16) {
                    self.add_json_at(item, depth + 1);
                }
            }
            Value::Object(map) => {
                for (key, field) in map {
                    match (key.as_str(), field) {
                        (
                            "message" | "detail" | "msg" | "errorMessage" | "error",
                            Value::String(s),
                        ) => self.add_message(s),
                        (
                            "code" | "type" | "status" | "error_code" | "reason" | "__type"
                            | "name" | "statusCode" | "httpStatusCode",
                            Value::String(s),
                        ) => self.add_code(s),
                        (
                            "code" | "status" | "statusCode" | "status_code" | "httpStatusCode",
                            Value::Number(n),
                        ) => {
                            if let Some(n) = n.as_u64().and_then(|n| u16::try_from(n).ok()) {
                                if (100..=599).contains(&n) {
                                    self.add_status(n);
                                }
                            }
                        }
                        ("n_ctx", Value::Number(n)) => {
                            self.context_size = n.as_u64().filter(|n| *n > 0);
                        }
                        ("n_prompt_tokens", Value::Number(n)) => {
                            self.prompt_size = n.as_u64().filter(|n| *n > 0);
                        }
                        (
                            "error" | "errors" | "details" | "detail" | "body" | "data" | "cause"
                            | "response" | "$metadata",
                            Value::Object(_) | Value::Array(_),
                        ) => self.add_json_at(field, depth + 1),
                        _ => {}
                    }
                }
            }
            Value::String(s) => self.add_message(s),
            _ => {}
        }
    }

    /// The signals of an HTTP error response: its status and its body, read as JSON when it is
    /// JSON and as text otherwise.
    pub fn from_response(status: u16, body: &[u8]) -> ErrorSignals {
        let mut signals = ErrorSignals::default();
        signals.add_status(status);
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => signals.add_json(&value),
            Err(_) => signals.add_message(&String::from_utf8_lossy(body)),
        }
        signals
    }
}

/// Error codes that mean a spend limit, quota or exhausted balance: waiting does not help, so a
/// 429 carrying one is not retried. Where they sit in the body:
/// - OpenAI: `error.type` / `error.code` `insufficient_quota`, and the codes of its spend-limit
///   guide: `organization_spend_limit_exceeded`, `project_spend_limit_exceeded`,
///   `organization_usage_limit_exceeded`, `credit_balance_exhausted`;
/// - Anthropic: `error.type` is `rate_limit_error` and the code is in `error.details.error_code`
///   (`enforced_spend_limit_reached`: the tier's monthly cap, sent without `retry-after`;
///   `contract_spend_limit_reached`), as the official SDK's error classes read it;
/// - older or compatible servers: the remaining names, as `type` or `code`.
const QUOTA_ERRORS: &[&str] = &[
    "insufficient_quota",
    "organization_spend_limit_exceeded",
    "project_spend_limit_exceeded",
    "organization_usage_limit_exceeded",
    "credit_balance_exhausted",
    "enforced_spend_limit_reached",
    "contract_spend_limit_reached",
    "spend_limit_reached",
    "billing_hard_limit_reached",
    "billing_error",
    "credit_balance_too_low",
];

/// True for a spend-limit / quota code (case-insensitive), wherever it was found.
pub fn is_quota_code(code: &str) -> bool {
    QUOTA_ERRORS.iter().any(|q| q.eq_ignore_ascii_case(code))
}

/// Error codes that name a context overflow outright.
const OVERFLOW_CODES: &[&str] = &[
    // OpenAI (Chat Completions and Responses), Groq, Azure OpenAI.
    "context_length_exceeded",
    // z.ai (pi's table).
    "model_context_window_exceeded",
    // llama.cpp server since ggml-org/llama.cpp#15780.
    "exceed_context_size_error",
    // Portkey's error library for Azure OpenAI (#10012).
    "context_length_error",
];

/// Codes of rate limits, throttling and quotas: the request may be fine, waiting or paying is
/// the fix, so they are never an overflow whatever their message says.
const NOT_OVERFLOW_CODES: &[&str] = &[
    "rate_limit_exceeded",           // OpenAI, Groq
    "rate_limit_error",              // Anthropic
    "ratelimiterror",                // the SDKs' class name
    "throttlingexception",           // Bedrock
    "resource_exhausted",            // Google
    "too_many_requests",             // generic
    "tokens",                        // OpenAI's TPM limit `type`
    "ramp_limit_exceeded",           // Anthropic
    "servicequotaexceededexception", // Bedrock
];

/// Rate-limit wording: "Rate limit reached for ... on tokens per min (TPM)" (OpenAI), "Request
/// too large for model ... on tokens per minute (TPM)" (Groq, HTTP 413), "Too many tokens,
/// please wait before trying again" (Bedrock `ThrottlingException`).
static NOT_OVERFLOW_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)rate[ _-]?limit|too many requests|throttl|tokens per min|\bTPM\b|please wait before trying again|quota",
    )
    .expect("valid pattern")
});

/// The providers' overflow texts (matched case-insensitively). Each pattern is specific enough
/// not to match the rate-limit and output-limit errors above.
pub const OVERFLOW_PATTERNS: &[(&str, &str)] = &[
    // Anthropic, also through Bedrock and Vertex: "prompt is too long: 213462 tokens > 200000
    // maximum" (pi overflow.ts; anthropics/claude-code and earendil-works/pi#102).
    // Ollama with `truncate: false`: "prompt too long; exceeded max context length by 4 tokens".
    // z.ai code 1261 "Prompt too long" (pi).
    ("anthropic/ollama/z.ai", r"\bprompt (?:is )?too long\b"),
    // Anthropic when input + max_tokens exceed the window: "input length and `max_tokens`
    // exceed context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and
    // try again" (anthropics/claude-code#408, continuedev/continue#6080).
    (
        "anthropic",
        r"input length and `?max_tokens`? exceed context limit",
    ),
    // OpenAI Chat Completions: "This model's maximum context length is 8192 tokens. However,
    // your messages resulted in 8227 tokens." (crewAIInc/crewAI-examples#121); DeepSeek
    // "...65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the
    // completion)" (FoundationAgents/OpenManus#79); vLLM (vllm-project/vllm#20409, #33425);
    // OpenRouter "This endpoint's maximum context length is 32768 tokens. However, you requested
    // about 42832 tokens" (refly-ai/refly#1177); Groq, Azure OpenAI.
    (
        "openai/deepseek/vllm/openrouter",
        r"maximum context length is \d+ tokens",
    ),
    // OpenAI Responses API: "Your input exceeds the context window of this model. Please adjust
    // your input and try again." (anomalyco/opencode#6071, dyad-sh/dyad#1672).
    ("openai", r"exceeds the context window"),
    // The OpenAI code as text (streamed error events, wrapped errors).
    ("openai", r"context[_ ]length[_ ]exceeded"),
    // Gemini API and Vertex AI: "The input token count (1200293) exceeds the maximum number of
    // tokens allowed (1048576)." (google-gemini/gemini-cli#6678, googleapis/python-genai#2466);
    // without the count in arkavo-org/arkavo-edge#371.
    (
        "gemini/vertex",
        r"input token count(?: \(\d+\))? exceeds the maximum number of tokens",
    ),
    // Bedrock: "Input is too long for requested model." (`ValidationException`,
    // aws-samples/assessment-generator#2, continuedev/continue#6005).
    ("bedrock", r"input is too long for requested model"),
    // Bedrock (Titan): "Too many input tokens. Max input tokens: 8192, request input token count:
    // 9279".
    ("bedrock", r"too many input tokens"),
    // xAI: "This model's maximum prompt length is 131072 but the request contains 136973
    // tokens." (cline/cline#3120).
    ("xai", r"maximum prompt length is \d+"),
    // Groq: "Please reduce the length of the messages or completion." with
    // `context_length_exceeded` (UKGovernmentBEIS/inspect_ai tests; pi overflow.ts).
    ("groq", r"reduce the length of the messages"),
    // Mistral: "Prompt contains 65673 tokens, too large for model with 32768 maximum context
    // length" (code 3051, discuss.google.dev/t/165446), also "... and 0 draft tokens, too large".
    (
        "mistral",
        r"too large for model with \d+ maximum context length",
    ),
    // llama.cpp server: "the request exceeds the available context size. try increasing the
    // context size or enable context shift" (ggml-org/llama.cpp#15780, oobabooga/textgen#7257),
    // later "request (33056 tokens) exceeds the available context size (32768 tokens)".
    ("llama.cpp", r"exceeds the available context size"),
    // vLLM engine: "The decoder prompt (length 12324) is longer than the maximum model length of
    // 8192." (vllm/v1/engine/processor.py).
    ("vllm", r"is longer than the maximum model length of \d+"),
    // Together: "The input (516368 tokens) is longer than the model's context length (262144
    // tokens)." (pi overflow.test.ts).
    ("together", r"is longer than the model'?s context length"),
    // LiteLLM / OpenAI-compatible: "Input length (265330) exceeds model's maximum context length
    // (262144)", "Requested token count exceeds the model's maximum context length of 131072
    // tokens" (pi overflow.ts).
    (
        "openai-compatible",
        r"exceeds (?:the )?(?:model'?s )?maximum context length",
    ),
    // OpenRouter/Poolside: "Input length 300000 exceeds the maximum allowed input length of
    // 262144 tokens." (pi overflow.ts).
    (
        "openrouter",
        r"exceeds the maximum allowed input length of [\d,]+ tokens",
    ),
    // Hugging Face TGI: "Input validation error: `inputs` tokens + `max_new_tokens` must be <=
    // 32768. Given: 33717 `inputs` tokens and 256 `max_new_tokens`" (huggingface/chat-ui#1149).
    (
        "huggingface",
        r"`?inputs`? tokens \+ `?max_new_tokens`? must be <=",
    ),
    // LM Studio: "tokens to keep from the initial prompt is greater than the context length".
    ("lm-studio", r"greater than the context length"),
    // GitHub Copilot: "prompt token count of 200000 exceeds the limit of 128000".
    (
        "github-copilot",
        r"token count of \d+ exceeds the limit of \d+",
    ),
    // MiniMax: "invalid params, context window exceeds limit".
    ("minimax", r"context window exceeds limit"),
    // Kimi / Moonshot: "Your request exceeded model token limit: 262144 (requested: 300000)".
    ("kimi", r"exceeded model token limit"),
    // z.ai as text.
    ("z.ai", r"model_context_window_exceeded"),
    // DashScope / Qwen: "Range of input length should be [1, 129024]".
    ("dashscope", r"range of input length should be \["),
];

static OVERFLOW_TEXT: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(
        OVERFLOW_PATTERNS
            .iter()
            .map(|(_, pattern)| format!("(?i){pattern}")),
    )
    .expect("valid patterns")
});

/// The window and the requested output, where an overflow text states both: when `max_tokens`
/// alone fills the window, a shorter conversation cannot make the request fit.
struct OutputReservation {
    window: u64,
    output: u64,
}

static WINDOW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)maximum (?:context|model) length (?:is|of) (\d+)").expect("valid pattern")
});

/// The output part of the OpenAI-style texts: "(62247 in the messages, 4096 in the
/// completion)", the legacy "(4014 in your prompt; 256 for the completion)", vLLM "plus 2045
/// 'max_tokens'", "'max_tokens' or 'max_completion_tokens' is too large: 1000", "you requested
/// 8000 output tokens".
static OUTPUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(\d+) (?:in|for) the completion|plus (\d+) .?max_tokens|max_completion_tokens.? is too large: (\d+)|requested (\d+) output tokens",
    )
    .expect("valid pattern")
});

/// Anthropic "exceed context limit: 189136 + 20000 > 204648" and TGI "must be <= 32768. Given:
/// 33717 `inputs` tokens and 256 `max_new_tokens`".
static ANTHROPIC_SUM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)exceed context limit: \d+ \+ (\d+) > (\d+)").expect("valid pattern")
});
static TGI_SUM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)must be <= (\d+)\. Given: \d+ `?inputs`? tokens and (\d+) `?max_new_tokens")
        .expect("valid pattern")
});

fn number(text: Option<regex::Match<'_>>) -> Option<u64> {
    text?.as_str().parse().ok()
}

fn output_reservation(message: &str) -> Option<OutputReservation> {
    if let Some(c) = ANTHROPIC_SUM.captures(message) {
        return Some(OutputReservation {
            output: number(c.get(1))?,
            window: number(c.get(2))?,
        });
    }
    if let Some(c) = TGI_SUM.captures(message) {
        return Some(OutputReservation {
            window: number(c.get(1))?,
            output: number(c.get(2))?,
        });
    }
    let window = number(WINDOW.captures(message)?.get(1))?;
    let c = OUTPUT.captures(message)?;
    let output = number(c.get(1).or(c.get(2)).or(c.get(3)).or(c.get(4)))?;
    Some(OutputReservation { window, output })
}

/// True when the error says the request did not fit the model's context window, so compacting
/// the conversation is the way out (see the module documentation for what is excluded).
pub fn is_context_overflow(signals: &ErrorSignals) -> bool {
    // First, even before an explicit overflow code: OpenAI answers `context_length_exceeded` to
    // "(64 in the messages, 8192 in the completion)" against 8192 (NextChat#3195), where only a
    // smaller `max_tokens` helps.
    let output_fills_window = signals
        .messages
        .iter()
        .filter_map(|m| output_reservation(m))
        .any(|r| r.output >= r.window);
    if output_fills_window {
        return false;
    }
    let has_code = |list: &[&str]| {
        signals
            .codes
            .iter()
            .any(|c| list.iter().any(|known| c.eq_ignore_ascii_case(known)))
    };
    if has_code(OVERFLOW_CODES) {
        return true;
    }
    let throttled = signals.statuses.contains(&429)
        || has_code(NOT_OVERFLOW_CODES)
        || signals.codes.iter().any(|c| is_quota_code(c))
        || signals
            .messages
            .iter()
            .any(|m| NOT_OVERFLOW_TEXT.is_match(m));
    !throttled && signals.messages.iter().any(|m| OVERFLOW_TEXT.is_match(m))
}

/// The prompt size an overflow error reports, when it names one: the largest number of at least
/// 1 000 in its messages ("prompt is too long: 210000 tokens > 200000 maximum", "you requested
/// 130000 tokens", "The input token count (1048577) exceeds …"). The request was at least this
/// large, so it is what a calibration raised after the error must not estimate below. Where a
/// message also names the completion, the largest number includes it: an estimate too high by
/// the completion is early, never late.
pub fn reported_prompt_tokens(signals: &ErrorSignals) -> Option<u64> {
    static NUMBER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d[\d,]{3,}").expect("valid pattern"));
    signals
        .messages
        .iter()
        .flat_map(|m| NUMBER.find_iter(m))
        .filter_map(|n| n.as_str().replace(',', "").parse::<u64>().ok())
        .filter(|n| *n >= 1_000)
        .max()
}

/// What a refusal states about itself: the prompt's size as the provider counted it, the model's
/// maximum, and the output the refused request reserved, when its text says them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RefusalNumbers {
    /// The request's size as the provider counted it ("prompt is too long: **N** tokens").
    pub prompt: Option<u64>,
    /// The model's maximum ("> **M** maximum", "maximum context length is **M** tokens").
    pub maximum: Option<u64>,
    /// The output the request reserved, where the text says it counts against the maximum
    /// ("(… in the messages, **K** in the completion)", "189136 + **K** > M").
    pub output: Option<u64>,
}

impl RefusalNumbers {
    /// The most a prompt may be: the maximum, less the output the refused request reserved
    /// (when that leaves a positive number). A later request reserving as much fits under it.
    pub fn prompt_window(&self) -> Option<u64> {
        let maximum = self.maximum?;
        match self.output {
            Some(output) if output < maximum => Some(maximum - output),
            _ => Some(maximum),
        }
    }
}

/// The texts that state a maximum, with the capture groups of the prompt size and of the
/// maximum (0: not stated). One pattern per wording of [`OVERFLOW_PATTERNS`] that carries
/// numbers; the sources are given there.
const REFUSAL_NUMBER_PATTERNS: &[(&str, usize, usize)] = &[
    // Anthropic (also through Bedrock and Vertex): "prompt is too long: 219898 tokens > 200000
    // maximum".
    (
        r"prompt is too long: ([\d,]+) tokens > ([\d,]+) maximum",
        1,
        2,
    ),
    // Anthropic: "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648".
    (r"exceed context limit: ([\d,]+) \+ [\d,]+ > ([\d,]+)", 1, 2),
    // OpenAI, DeepSeek, vLLM, OpenRouter, Groq: "maximum context length is 16385 tokens.
    // However, your messages resulted in 16468 tokens" / "you requested (about) 66343 tokens"
    // / vLLM "your request has 8 input tokens".
    (
        r"maximum context length is ([\d,]+) tokens?(?:[^0-9]{0,80}?(?:resulted in|requested(?: about)?|request has) ([\d,]+))?",
        2,
        1,
    ),
    // Gemini and Vertex: "The input token count (1200293) exceeds the maximum number of tokens
    // allowed (1048576)".
    (
        r"input token count \(([\d,]+)\) exceeds the maximum number of tokens allowed \(([\d,]+)\)",
        1,
        2,
    ),
    // Bedrock (Titan): "Max input tokens: 8192, request input token count: 9279".
    (
        r"max input tokens: ([\d,]+), request input token count: ([\d,]+)",
        2,
        1,
    ),
    // xAI: "maximum prompt length is 131072 but the request contains 136973 tokens".
    (
        r"maximum prompt length is ([\d,]+)(?: but the request contains ([\d,]+))?",
        2,
        1,
    ),
    // Mistral: "Prompt contains 65673 tokens, too large for model with 32768 maximum context
    // length".
    (
        r"prompt contains ([\d,]+) tokens.{0,40}? too large for model with ([\d,]+) maximum",
        1,
        2,
    ),
    // llama.cpp: "request (33056 tokens) exceeds the available context size (32768 tokens)".
    (
        r"request \(([\d,]+) tokens\) exceeds the available context size \(([\d,]+) tokens\)",
        1,
        2,
    ),
    // vLLM engine: "The decoder prompt (length 12324) is longer than the maximum model length
    // of 8192".
    (
        r"prompt \(length ([\d,]+)\) is longer than the maximum model length of ([\d,]+)",
        1,
        2,
    ),
    // Together: "The input (516368 tokens) is longer than the model's context length (262144
    // tokens)".
    (
        r"input \(([\d,]+) tokens\) is longer than the model'?s context length \(([\d,]+)",
        1,
        2,
    ),
    // LiteLLM / OpenAI-compatible: "Input length (265330) exceeds model's maximum context
    // length (262144)", "… exceeds the model's maximum context length of 131072 tokens".
    (
        r"input length \(([\d,]+)\) exceeds (?:the )?model'?s maximum context length \(([\d,]+)\)",
        1,
        2,
    ),
    (
        r"exceeds (?:the )?(?:model'?s )?maximum context length of ([\d,]+)",
        0,
        1,
    ),
    // OpenRouter/Poolside: "Input length 300000 exceeds the maximum allowed input length of
    // 262144 tokens".
    (
        r"input length ([\d,]+) exceeds the maximum allowed input length of ([\d,]+)",
        1,
        2,
    ),
    // TGI: "must be <= 32768. Given: 33717 `inputs` tokens and 256 `max_new_tokens`".
    (
        r"must be <= ([\d,]+)\. Given: ([\d,]+) `?inputs`? tokens",
        2,
        1,
    ),
    // GitHub Copilot: "prompt token count of 200000 exceeds the limit of 128000".
    (
        r"token count of ([\d,]+) exceeds the limit of ([\d,]+)",
        1,
        2,
    ),
    // Kimi / Moonshot: "exceeded model token limit: 262144 (requested: 300000)".
    (
        r"exceeded model token limit: ([\d,]+)(?: \(requested: ([\d,]+)\))?",
        2,
        1,
    ),
    // DashScope / Qwen: "Range of input length should be [1, 129024]".
    (r"range of input length should be \[\d+, ?([\d,]+)\]", 0, 1),
];

static REFUSAL_NUMBERS: LazyLock<Vec<(Regex, usize, usize)>> = LazyLock::new(|| {
    REFUSAL_NUMBER_PATTERNS
        .iter()
        .map(|(pattern, prompt, maximum)| {
            (
                Regex::new(&format!("(?i){pattern}")).expect("valid pattern"),
                *prompt,
                *maximum,
            )
        })
        .collect()
});

fn count(text: Option<regex::Match<'_>>) -> Option<u64> {
    text?
        .as_str()
        .replace(',', "")
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
}

/// The prompt size, the maximum and the reserved output a refusal states, read from the same
/// providers' texts [`is_context_overflow`] recognises (see [`REFUSAL_NUMBER_PATTERNS`]), and
/// from llama.cpp's `n_prompt_tokens` / `n_ctx` fields ([`ErrorSignals::context_size`]). A
/// number the texts do not state is `None`: nothing is guessed (Ollama's "exceeded max
/// context length by 4 tokens" states neither).
pub fn refusal_numbers(signals: &ErrorSignals) -> RefusalNumbers {
    // "you requested 17000 tokens (15000 in the messages, 2000 in the completion)": the
    // prompt is the part in the messages (the legacy text: "4014 in your prompt").
    static MESSAGES_PART: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\(([\d,]+) in (?:the messages|your prompt)").expect("valid pattern")
    });
    let mut found = RefusalNumbers {
        prompt: signals.prompt_size.or_else(|| {
            signals
                .messages
                .iter()
                .find_map(|m| count(MESSAGES_PART.captures(m)?.get(1)))
        }),
        maximum: signals.context_size,
        output: None,
    };
    for message in &signals.messages {
        for (pattern, prompt, maximum) in REFUSAL_NUMBERS.iter() {
            let Some(c) = pattern.captures(message) else {
                continue;
            };
            if found.maximum.is_none() {
                found.maximum = count(c.get(*maximum));
            }
            if found.prompt.is_none() && *prompt > 0 {
                found.prompt = count(c.get(*prompt));
            }
        }
        if found.output.is_none() {
            found.output = output_reservation(message).map(|r| r.output);
        }
    }
    found
}

/// What a refusal for size states about the request (the summary request's view of
/// [`refusal_numbers`]): the prompt as the provider counted it (N) and the most the model takes
/// (M). M is the model's window, or its input maximum where the provider states that instead
/// (Anthropic's "N tokens > M maximum" is the window less `max_tokens`); sizing against it less
/// the output budget is conservative either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatedLimits {
    /// The prompt's size in the provider's tokens (N), without the requested output where the
    /// text tells the two apart.
    pub prompt: Option<u64>,
    /// The maximum (M).
    pub maximum: Option<u64>,
}

/// What a refusal for size states about the request, when [`is_context_overflow`] says it is
/// one (`None` otherwise): the count N and the maximum M where it states them, else what it
/// states of the two, else neither (Bedrock's "Input is too long for requested model.", OpenAI's
/// Responses "exceeds the context window").
pub fn stated_limits(signals: &ErrorSignals) -> Option<StatedLimits> {
    if !is_context_overflow(signals) {
        return None;
    }
    let numbers = refusal_numbers(signals);
    Some(StatedLimits {
        prompt: numbers.prompt,
        maximum: numbers.maximum,
    })
}

/// [`stated_limits`] of an HTTP error response (the numbers a body carries as fields, such as
/// llama.cpp's `n_prompt_tokens` / `n_ctx`, included).
pub fn stated_limits_response(status: u16, body: &[u8]) -> Option<StatedLimits> {
    stated_limits(&ErrorSignals::from_response(status, body))
}

/// [`is_context_overflow`] of an HTTP error response (status and raw body).
pub fn is_context_overflow_response(status: u16, body: &[u8]) -> bool {
    is_context_overflow(&ErrorSignals::from_response(status, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(status: u16, value: Value) -> bool {
        is_context_overflow_response(status, value.to_string().as_bytes())
    }

    fn text(message: &str) -> bool {
        let mut s = ErrorSignals::default();
        s.add_message(message);
        is_context_overflow(&s)
    }

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(OVERFLOW_TEXT.len(), OVERFLOW_PATTERNS.len());
        LazyLock::force(&NOT_OVERFLOW_TEXT);
        LazyLock::force(&OUTPUT);
    }

    // Source: earendil-works/pi#102 (a real Messages API response, claude-opus-4-5).
    #[test]
    fn anthropic_prompt_is_too_long() {
        assert!(body(
            400,
            json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"},"request_id":"req_011CVjxiYzEFcAQC4Fk87zw2"})
        ));
    }

    // Source: continuedev/continue#6080; input + max_tokens over the window, input alone under it.
    #[test]
    fn anthropic_input_plus_max_tokens_is_an_overflow() {
        assert!(body(
            400,
            json!({"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"}})
        ));
        // ... but not when max_tokens alone fills the window.
        assert!(!text("input length and `max_tokens` exceed context limit: 1000 + 200000 > 200000, decrease input length or `max_tokens` and try again"));
    }

    // Source: SWE-agent's report "Failed because `max_tokens: 128000 > 64000, which is the
    // maximum allowed number of output tokens for claude-3-7-sonnet-20250219`".
    #[test]
    fn anthropic_max_tokens_over_the_output_limit_is_not() {
        assert!(!body(
            400,
            json!({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-3-7-sonnet-20250219"}})
        ));
    }

    // Source: daisuke-awaji/moca#254 (Claude through Bedrock's Converse API).
    #[test]
    fn bedrock_claude_prompt_is_too_long() {
        let mut s = ErrorSignals::default();
        s.add_code("ValidationException");
        s.add_status(400);
        s.add_message("The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum");
        assert!(is_context_overflow(&s));
    }

    // Source: aws-samples/assessment-generator#2 (AWS SDK v3 error as logged).
    #[test]
    fn bedrock_input_is_too_long() {
        assert!(body(
            400,
            json!({"errorType":"ValidationException","errorMessage":"Input is too long for requested model.","name":"ValidationException","$fault":"client","$metadata":{"httpStatusCode":400}})
        ));
        assert!(text("ValidationException: 400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9279 "));
    }

    // Bedrock throttling talks about tokens too; it is not an overflow.
    #[test]
    fn bedrock_throttling_is_not() {
        let mut s = ErrorSignals::default();
        s.add_code("ThrottlingException");
        s.add_status(429);
        s.add_message("Too many tokens, please wait before trying again.");
        assert!(!is_context_overflow(&s));
        assert!(!text(
            "ThrottlingException: Too many tokens, please wait before trying again."
        ));
    }

    // Source: NextChat#2358 / crewAI-examples#121 (OpenAI Chat Completions).
    #[test]
    fn openai_context_length_exceeded() {
        assert!(body(
            400,
            json!({"error":{"message":"This model's maximum context length is 16385 tokens. However, your messages resulted in 16468 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})
        ));
        // The code alone decides.
        assert!(body(
            400,
            json!({"error":{"message":"too long","code":"context_length_exceeded"}})
        ));
    }

    // Source: anomalyco/opencode#6071 (OpenAI Responses API streamed error event).
    #[test]
    fn openai_responses_input_exceeds_the_context_window() {
        assert!(body(
            400,
            json!({"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}})
        ));
        assert!(text("Your input exceeds the context window of this model. Please adjust your input and try again."));
    }

    // Source: mckaywrigley/chatbot-ui#102 (messages + completion over the window: an overflow).
    #[test]
    fn openai_messages_plus_completion() {
        assert!(text("This model's maximum context length is 4097 tokens. However, you requested 4120 tokens (3120 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."));
        // Source: llamastack/llama-stack discussion #981 (vLLM): the completion alone fills it.
        assert!(!text("This model's maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the length of the messages or completion."));
    }

    // Source: tailcallhq/forgecode#1185 (OpenAI's output-limit validation).
    #[test]
    fn openai_max_tokens_too_large_is_not() {
        assert!(!body(
            400,
            json!({"error":{"message":"max_tokens is too large: 20480. This model supports at most 16384 completion tokens, whereas you provided 20480.","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}})
        ));
    }

    // Source: ChatGPTNextWeb/NextChat#3195: the overflow code, but max_tokens alone fills the
    // window ("Hello" and max_tokens 8192 on gpt-4).
    #[test]
    fn openai_overflow_code_with_max_tokens_filling_the_window_is_not() {
        assert!(!body(
            400,
            json!({"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 8256 tokens (64 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})
        ));
    }

    // Source: OpenAI TPM limit and Groq's 413 TPM limit (ITSpecialist111/ai_automation_suggester#61).
    #[test]
    fn per_minute_token_limits_are_not() {
        assert!(!body(
            429,
            json!({"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.","type":"tokens","param":null,"code":"rate_limit_exceeded"}})
        ));
        assert!(!body(
            413,
            json!({"error":{"message":"Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}})
        ));
    }

    // Source: FoundationAgents/OpenManus#79 (DeepSeek; its code is the generic one).
    #[test]
    fn deepseek() {
        assert!(body(
            400,
            json!({"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}})
        ));
    }

    // Source: google-gemini/gemini-cli#6678 (Gemini API) and googleapis/python-genai#2466 (Vertex).
    #[test]
    fn gemini_and_vertex() {
        assert!(body(
            400,
            json!([{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","errors":[{"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT"}}])
        ));
        assert!(body(
            400,
            json!({"error":{"code":400,"message":"The input token count (81881) exceeds the maximum number of tokens allowed (65536).","status":"INVALID_ARGUMENT"}})
        ));
        // Source: google-gemini/gemini-cli#4231 (the body inside a proxy's message).
        assert!(text("{\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 400,\\n    \\\"message\\\": \\\"The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).\\\",\\n    \\\"status\\\": \\\"INVALID_ARGUMENT\\\"\\n  }\\n}\\n\",\"code\":400,\"status\":\"Bad Request\"}}"));
    }

    // A Gemini quota error mentions input tokens; it is a 429.
    #[test]
    fn gemini_quota_is_not() {
        assert!(!body(
            429,
            json!({"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000","status":"RESOURCE_EXHAUSTED"}})
        ));
    }

    // Source: refly-ai/refly#1177 (OpenRouter through the OpenAI SDK).
    #[test]
    fn openrouter() {
        assert!(text("400 This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."));
    }

    // Source: UKGovernmentBEIS/inspect_ai Groq tests; pi overflow.ts.
    #[test]
    fn groq() {
        assert!(body(
            400,
            json!({"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","code":"context_length_exceeded"}})
        ));
    }

    // Source: discuss.google.dev/t/mistral-large-2407-inference-context-length-error/165446.
    #[test]
    fn mistral() {
        assert!(body(
            400,
            json!({"object":"Error","message":"Prompt contains 65673 tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","code":3051})
        ));
        assert!(text("Prompt contains 218875 tokens and 0 draft tokens, too large for model with 32768 maximum context length"));
    }

    // Source: cline/cline#3120.
    #[test]
    fn xai() {
        assert!(text("400 \"This model's maximum prompt length is 131072 but the request contains 136973 tokens.\""));
    }

    // Source: pi overflow.test.ts and the Ollama server's truncate=false error.
    #[test]
    fn ollama() {
        assert!(body(
            400,
            json!({"error":"prompt too long; exceeded max context length by 4 tokens"})
        ));
    }

    // Source: ggml-org/llama.cpp#15780 and oobabooga/textgen#7257.
    #[test]
    fn llama_cpp() {
        assert!(body(
            400,
            json!({"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}})
        ));
        // The 500 the first version sent, recognised by its text.
        assert!(body(
            500,
            json!({"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift"}})
        ));
    }

    // Source: vllm-project/vllm#20409, #33425 and vllm/v1/engine/processor.py.
    #[test]
    fn vllm() {
        assert!(body(
            400,
            json!({"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})
        ));
        assert!(body(
            400,
            json!({"error":{"message":"This model's maximum context length is 2048 tokens. However, your request has 8 input tokens plus 2045 'max_tokens'. Please reduce one or the other. (parameter=input_tokens, max_tokens, value=(8, 2045))","type":"BadRequestError","param":"input_tokens, max_tokens","code":400}})
        ));
        assert!(!text("This model's maximum context length is 2048 tokens. However, your request has 8 input tokens plus 2048 'max_tokens'. Please reduce one or the other."));
        assert!(text(
            "The decoder prompt (length 12324) is longer than the maximum model length of 8192."
        ));
    }

    // Source: huggingface/chat-ui#1149 (TGI).
    #[test]
    fn huggingface_tgi() {
        assert!(text("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`"));
    }

    #[test]
    fn other_providers_of_pis_table() {
        for message in [
            "tokens to keep from the initial prompt is greater than the context length",
            "prompt token count of 200000 exceeds the limit of 128000",
            "invalid params, context window exceeds limit",
            "Your request exceeded model token limit: 262144 (requested: 300000)",
            "model_context_window_exceeded",
            "Range of input length should be [1, 129024]",
            "The input (516368 tokens) is longer than the model's context length (262144 tokens).",
            "Input length (265330) exceeds model's maximum context length (262144).",
            "Requested token count exceeds the model's maximum context length of 131072 tokens.",
            "Input length 300000 exceeds the maximum allowed input length of 262144 tokens.",
        ] {
            assert!(text(message), "{message}");
        }
    }

    #[test]
    fn rate_limits_auth_and_other_errors_are_not() {
        // Anthropic 429 (anthropics/claude-code#71670).
        assert!(!body(
            429,
            json!({"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}})
        ));
        // Anthropic spend cap.
        assert!(!body(
            429,
            json!({"type":"error","error":{"type":"rate_limit_error","message":"You have reached your API usage limits.","details":{"error_code":"enforced_spend_limit_reached"}}})
        ));
        assert!(!body(
            401,
            json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})
        ));
        assert!(!body(
            400,
            json!({"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\""}})
        ));
        assert!(!body(
            413,
            json!({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}})
        ));
        assert!(!body(
            529,
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})
        ));
        assert!(!is_context_overflow_response(400, b""));
        assert!(!text("400 status code (no body)"));
        assert!(!is_context_overflow(&ErrorSignals::default()));
        // Words of the table in another sense.
        assert!(!text("For context, here is the error"));
        assert!(!text("too many tokens"));
    }

    fn limits(status: u16, value: Value) -> Option<StatedLimits> {
        stated_limits_response(status, value.to_string().as_bytes())
    }

    fn limits_text(message: &str) -> Option<StatedLimits> {
        let mut s = ErrorSignals::default();
        s.add_message(message);
        stated_limits(&s)
    }

    fn both(prompt: u64, maximum: u64) -> Option<StatedLimits> {
        Some(StatedLimits {
            prompt: Some(prompt),
            maximum: Some(maximum),
        })
    }

    // The count N and the maximum M each provider states, read from its own body or text.
    #[test]
    fn refusals_state_the_count_and_the_maximum() {
        // Anthropic Messages (earendil-works/pi#102; issue 35's 1.3× server).
        assert_eq!(
            limits(
                400,
                json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 235122 tokens > 195904 maximum"}})
            ),
            both(235_122, 195_904)
        );
        // Anthropic, input + max_tokens over the window (continuedev/continue#6080).
        assert_eq!(
            limits_text("input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"),
            both(199_759, 200_000)
        );
        // Claude through Bedrock (daisuke-awaji/moca#254).
        assert_eq!(
            limits_text("The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"),
            both(200_049, 200_000)
        );
        // OpenAI Chat Completions `context_length_exceeded` (NextChat#2358).
        assert_eq!(
            limits(
                400,
                json!({"error":{"message":"This model's maximum context length is 16385 tokens. However, your messages resulted in 16468 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})
            ),
            both(16_468, 16_385)
        );
        // OpenAI / DeepSeek / vLLM with the completion: the messages are the prompt.
        assert_eq!(
            limits(
                400,
                json!({"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})
            ),
            both(112_946, 16_384)
        );
        // vLLM's newer wording (vllm-project/vllm#33425).
        assert_eq!(
            limits_text("This model's maximum context length is 2048 tokens. However, your request has 3000 input tokens plus 45 'max_tokens'. Please reduce one or the other."),
            both(3_000, 2_048)
        );
        // OpenRouter (refly-ai/refly#1177).
        assert_eq!(
            limits_text("400 This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one"),
            both(42_832, 32_768)
        );
        // Gemini API and Vertex AI (google-gemini/gemini-cli#6678).
        assert_eq!(
            limits(
                400,
                json!({"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}})
            ),
            both(1_200_293, 1_048_576)
        );
        // Bedrock Titan.
        assert_eq!(
            limits_text("ValidationException: 400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9279 "),
            both(9_279, 8_192)
        );
        // llama.cpp: the body's fields, and its newer text.
        assert_eq!(
            limits(
                400,
                json!({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}})
            ),
            both(14_429, 8_192)
        );
        assert_eq!(
            limits(
                400,
                json!({"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error"}})
            ),
            both(4_476, 4_096)
        );
        // Mistral, xAI, Together, LiteLLM, TGI, Copilot, Kimi.
        for (message, n, m) in [
            ("Prompt contains 65673 tokens, too large for model with 32768 maximum context length", 65_673, 32_768),
            ("This model's maximum prompt length is 131072 but the request contains 136973 tokens.", 136_973, 131_072),
            ("The input (516368 tokens) is longer than the model's context length (262144 tokens).", 516_368, 262_144),
            ("Input length (265330) exceeds model's maximum context length (262144).", 265_330, 262_144),
            ("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 8204 `inputs` tokens and 2047 `max_new_tokens`", 8_204, 8_192),
            ("prompt token count of 200000 exceeds the limit of 128000", 200_000, 128_000),
            ("Your request exceeded model token limit: 262144 (requested: 300000)", 300_000, 262_144),
            ("The decoder prompt (length 12324) is longer than the maximum model length of 8192.", 12_324, 8_192),
        ] {
            assert_eq!(limits_text(message), both(n, m), "{message}");
        }
    }

    #[test]
    fn refusals_that_state_less() {
        // The maximum alone.
        assert_eq!(
            limits_text("Requested token count exceeds the model's maximum context length of 131072 tokens."),
            Some(StatedLimits {
                prompt: None,
                maximum: Some(131_072)
            })
        );
        // Neither: Bedrock, OpenAI Responses, Ollama, llama.cpp's first text.
        for message in [
            "Input is too long for requested model.",
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
            "prompt too long; exceeded max context length by 4 tokens",
            "the request exceeds the available context size. try increasing the context size or enable context shift",
        ] {
            assert_eq!(
                limits_text(message),
                Some(StatedLimits::default()),
                "{message}"
            );
        }
        // Not a refusal for size: nothing.
        assert_eq!(
            limits(
                429,
                json!({"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.","code":"rate_limit_exceeded"}})
            ),
            None
        );
        assert_eq!(limits_text("max_tokens is too large: 20480"), None);
    }

    #[test]
    fn signals_are_bounded_and_deduplicated() {
        let mut s = ErrorSignals::default();
        for _ in 0..1000 {
            s.add_message("same");
            s.add_code("x");
            s.add_status(400);
        }
        assert_eq!(
            (s.messages.len(), s.codes.len(), s.statuses.len()),
            (1, 1, 1)
        );
        s.add_message(&"é".repeat(MAX_MESSAGE_CHARS + 10));
        assert_eq!(s.messages[1].chars().count(), MAX_MESSAGE_CHARS);
        s.add_code("429");
        assert!(s.statuses.contains(&429));
        s.add_code("3051");
        assert_eq!(s.codes, ["x"]);
        // Deep nesting stops without recursion trouble.
        let mut deep = json!({"message": "prompt is too long"});
        for _ in 0..1000 {
            deep = json!({ "error": deep });
        }
        let mut s = ErrorSignals::default();
        s.add_json(&deep);
        assert!(s.messages.is_empty());
    }

    fn numbers(message: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
        let mut s = ErrorSignals::default();
        s.add_message(message);
        let n = refusal_numbers(&s);
        (n.prompt, n.maximum, n.output)
    }

    #[test]
    fn refusals_state_their_prompt_and_maximum() {
        let cases: &[(&str, Option<u64>, Option<u64>)] = &[
            ("prompt is too long: 235122 tokens > 195904 maximum", Some(235_122), Some(195_904)),
            ("The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum", Some(200_049), Some(200_000)),
            ("This model's maximum context length is 16385 tokens. However, your messages resulted in 16468 tokens. Please reduce the length of the messages.", Some(16_468), Some(16_385)),
            ("This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input).", Some(42_832), Some(32_768)),
            ("The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", Some(1_200_293), Some(1_048_576)),
            ("Too many input tokens. Max input tokens: 8192, request input token count: 9279", Some(9_279), Some(8_192)),
            ("This model's maximum prompt length is 131072 but the request contains 136973 tokens.", Some(136_973), Some(131_072)),
            ("Prompt contains 65673 tokens, too large for model with 32768 maximum context length", Some(65_673), Some(32_768)),
            ("request (33056 tokens) exceeds the available context size (32768 tokens)", Some(33_056), Some(32_768)),
            ("The decoder prompt (length 12324) is longer than the maximum model length of 8192.", Some(12_324), Some(8_192)),
            ("The input (516368 tokens) is longer than the model's context length (262144 tokens).", Some(516_368), Some(262_144)),
            ("Input length (265330) exceeds model's maximum context length (262144).", Some(265_330), Some(262_144)),
            ("Requested token count exceeds the model's maximum context length of 131072 tokens.", None, Some(131_072)),
            ("Input length 300000 exceeds the maximum allowed input length of 262144 tokens.", Some(300_000), Some(262_144)),
            ("prompt token count of 200000 exceeds the limit of 128000", Some(200_000), Some(128_000)),
            ("Your request exceeded model token limit: 262144 (requested: 300000)", Some(300_000), Some(262_144)),
            ("Range of input length should be [1, 129024]", None, Some(129_024)),
            // Ollama says by how much, not the maximum: nothing is guessed.
            ("prompt too long; exceeded max context length by 4 tokens", None, None),
            ("the request exceeds the available context size. try increasing the context size or enable context shift", None, None),
        ];
        for (message, prompt, maximum) in cases {
            let (p, m, _) = numbers(message);
            assert_eq!((p, m), (*prompt, *maximum), "{message}");
        }
    }

    #[test]
    fn the_output_a_refused_request_reserved_leaves_the_prompt_window() {
        let mut s = ErrorSignals::default();
        s.add_message("This model's maximum context length is 16384 tokens. However, you requested 17000 tokens (15000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.");
        let n = refusal_numbers(&s);
        assert_eq!(
            (n.prompt, n.maximum, n.output),
            (Some(15_000), Some(16_384), Some(2_000))
        );
        assert_eq!(n.prompt_window(), Some(14_384));
        let mut s = ErrorSignals::default();
        s.add_message("input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and try again");
        let n = refusal_numbers(&s);
        assert_eq!(
            (n.prompt, n.maximum, n.output),
            (Some(189_136), Some(204_648), Some(20_000))
        );
        assert_eq!(n.prompt_window(), Some(184_648));
        assert_eq!(RefusalNumbers::default().prompt_window(), None);
    }

    #[test]
    fn llama_cpp_states_its_context_size_in_fields() {
        let s = ErrorSignals::from_response(
            400,
            json!({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}).to_string().as_bytes(),
        );
        let n = refusal_numbers(&s);
        assert_eq!((n.prompt, n.maximum), (Some(14_429), Some(8_192)));
        // A rate limit states no maximum.
        let s = ErrorSignals::from_response(429, br#"{"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000."}}"#);
        assert_eq!(refusal_numbers(&s).maximum, None);
    }
}
