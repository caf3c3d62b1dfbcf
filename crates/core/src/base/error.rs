//! Errors.
//!
//! Two kinds, kept apart on purpose (the oxc / node-rs convention): [`ValidationError`] is the
//! caller's mistake and becomes a thrown `TypeError` in JavaScript; [`CompactError`] describes
//! why a compaction was skipped (LLM or disk trouble) and is returned as data on the result,
//! never thrown.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Invalid input: names the message index and the field, e.g.
/// `messages[3].content[1].tool_use_id is missing`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// The index of the offending message, when the problem is in one.
    pub index: Option<usize>,
    /// The path of the field inside the message (`role`, `content[2].tool_use_id`), or empty.
    pub field: String,
    problem: String,
}

impl ValidationError {
    pub(crate) fn at(index: usize, field: &str, problem: String) -> Self {
        ValidationError {
            index: Some(index),
            field: field.to_string(),
            problem,
        }
    }

    pub(crate) fn not_an_array(got: &str) -> Self {
        ValidationError {
            index: None,
            field: String::new(),
            problem: format!("messages must be an array of message objects, got {got}"),
        }
    }

    /// An error about an argument other than the message list (an option, a session id).
    pub fn argument(name: &str, problem: impl Into<String>) -> Self {
        ValidationError {
            index: None,
            field: name.to_string(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(index) => {
                write!(f, "messages[{index}]")?;
                if !self.field.is_empty() {
                    if !self.field.starts_with('[') {
                        f.write_str(".")?;
                    }
                    f.write_str(&self.field)?;
                }
                // "is missing" reads as a sentence; other problems follow a colon.
                if self.problem.starts_with("is ") {
                    write!(f, " {}", self.problem)
                } else {
                    write!(f, ": {}", self.problem)
                }
            }
            None if self.field.is_empty() => f.write_str(&self.problem),
            None => write!(f, "{}: {}", self.field, self.problem),
        }
    }
}

impl std::error::Error for ValidationError {}

/// Why a compaction did not happen. Stable, documented string codes so callers can branch
/// without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Over the threshold, but there was nothing between head and tail to summarize.
    NothingToCompact,
    /// The summarizer callback threw, rejected or returned a non-string.
    SummarizerError,
    /// The summary was empty or whitespace.
    EmptySummary,
    /// The model refused to summarize.
    Refused,
    /// The summary was cut off by the output limit (`max_tokens` / `length`).
    Truncated,
    /// HTTP 429 after every retry.
    RateLimited,
    /// A spend limit or quota was reached (a 429 that retrying cannot fix).
    QuotaExceeded,
    /// HTTP 529 / `overloaded_error` after every retry.
    Overloaded,
    /// HTTP 5xx after every retry.
    ServerError,
    /// HTTP 401 / 403.
    AuthenticationFailed,
    /// HTTP 400, 404, 413, 422 and other 4xx the API will not accept on retry.
    BadRequest,
    /// The request timed out (`timeoutMs`) on every attempt.
    Timeout,
    /// The connection could not be made or broke.
    ConnectionFailed,
    /// The response was not the JSON the protocol promises.
    InvalidResponse,
    /// The model called a tool instead of writing the summary (a shared request keeps the
    /// loop's tools, so the model may).
    ToolCall,
    /// `requireArchive` was set and the archive could not be written.
    ArchiveFailed,
    /// `onBeforeCompact` declined.
    Declined,
    /// The provider needs an API key and none was found.
    MissingApiKey,
    /// The compacted list is still at or over the threshold (the result is returned, smaller;
    /// e.g. one user message larger than the window).
    StillOverLimit,
    /// A `Compactor` did not pay for another summary: its last compactions ended
    /// `STILL_OVER_LIMIT` and the list has not changed enough since for a summary to help.
    SummarySkipped,
    /// The compacted list would not be smaller than the input: the input is returned.
    NotSmaller,
    /// A custom strategy's `compress` failed or returned messages that cannot be used.
    StrategyFailed,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NothingToCompact => "NOTHING_TO_COMPACT",
            ErrorCode::SummarizerError => "SUMMARIZER_ERROR",
            ErrorCode::EmptySummary => "EMPTY_SUMMARY",
            ErrorCode::Refused => "REFUSED",
            ErrorCode::Truncated => "TRUNCATED",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::QuotaExceeded => "QUOTA_EXCEEDED",
            ErrorCode::Overloaded => "OVERLOADED",
            ErrorCode::ServerError => "SERVER_ERROR",
            ErrorCode::AuthenticationFailed => "AUTHENTICATION_FAILED",
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::ConnectionFailed => "CONNECTION_FAILED",
            ErrorCode::InvalidResponse => "INVALID_RESPONSE",
            ErrorCode::ToolCall => "TOOL_CALL",
            ErrorCode::ArchiveFailed => "ARCHIVE_FAILED",
            ErrorCode::Declined => "DECLINED",
            ErrorCode::MissingApiKey => "MISSING_API_KEY",
            ErrorCode::StillOverLimit => "STILL_OVER_LIMIT",
            ErrorCode::SummarySkipped => "SUMMARY_SKIPPED",
            ErrorCode::NotSmaller => "NOT_SMALLER",
            ErrorCode::StrategyFailed => "STRATEGY_FAILED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a compaction was skipped: returned on the result, never thrown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactError {
    pub code: ErrorCode,
    pub message: String,
    /// How many summary attempts were made (0 when none was needed).
    #[serde(default)]
    pub attempts: u32,
    /// The HTTP status of the last failed attempt, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `STILL_OVER_LIMIT` / `NOT_SMALLER`: the estimate of the compacted list (the trigger's
    /// measure), the input's estimate, and the threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
}

impl CompactError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CompactError {
            code,
            message: message.into(),
            attempts: 0,
            status: None,
            tokens: None,
            original_tokens: None,
            threshold: None,
        }
    }

    /// The same with the numbers of a result that does not fit.
    pub fn with_numbers(mut self, tokens: u64, original_tokens: u64, threshold: u64) -> Self {
        self.tokens = Some(tokens);
        self.original_tokens = Some(original_tokens);
        self.threshold = Some(threshold);
        self
    }
}

impl fmt::Display for CompactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CompactError {}
