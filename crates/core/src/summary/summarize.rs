//! The summarizer seam (PRD F-004) and the retry policy around it (F-007, SPEC §5).
//!
//! Everything that can write a summary — the Anthropic and OpenAI HTTP providers, the offline
//! extractive summarizer, a JavaScript callback — implements [`Summarizer`]. One attempt is one
//! call; [`summarize_with_retries`] owns retrying, waiting and cancellation so every provider
//! behaves the same way.

use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::base::error::{CompactError, ErrorCode};
use crate::base::retry::RetryPolicy;
use crate::formats::{self, View};
use crate::model::added::{summary_identity_hex, OwnSummaries};
use crate::model::overflow::StatedLimits;
use crate::summary::prompt::{self, RenderLimits};

/// A boxed future, so that the trait stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the summary calls of one compaction cost, summed over every request as each provider
/// reported it (`result.summaryUsage`). The fields are disjoint, so they add up to the
/// request's whole input: `input_tokens` are billed at the full input price, `cache_read_tokens`
/// at the provider's cache-read price, `cache_write_tokens` at its cache-write price.
///
/// | field | Anthropic `usage` | OpenAI `usage` |
/// |---|---|---|
/// | `input_tokens` | `input_tokens` | `prompt_tokens - prompt_tokens_details.cached_tokens` |
/// | `cache_read_tokens` | `cache_read_input_tokens` | `prompt_tokens_details.cached_tokens` |
/// | `cache_write_tokens` | `cache_creation_input_tokens` | 0 (OpenAI bills no write) |
/// | `output_tokens` | `output_tokens` | `completion_tokens` |
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryUsage {
    /// Requests that reached the provider and were billed (failed attempts with a response
    /// included: a reply that called a tool still cost its input).
    pub requests: u64,
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
}

impl SummaryUsage {
    /// The whole input of the requests (full price + cache read + cache write).
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// Adds `other` to this.
    pub fn add(&mut self, other: &SummaryUsage) {
        self.requests += other.requests;
        self.input_tokens += other.input_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.output_tokens += other.output_tokens;
    }

    /// One request's usage from an Anthropic Messages `usage` object.
    pub fn from_anthropic(usage: &Value) -> SummaryUsage {
        let n = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        SummaryUsage {
            requests: 1,
            input_tokens: n("input_tokens"),
            cache_read_tokens: n("cache_read_input_tokens"),
            cache_write_tokens: n("cache_creation_input_tokens"),
            output_tokens: n("output_tokens"),
        }
    }

    /// One request's usage from an OpenAI Chat Completions `usage` object.
    pub fn from_openai(usage: &Value) -> SummaryUsage {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
        let prompt = n(usage.get("prompt_tokens"));
        let cached = n(usage.pointer("/prompt_tokens_details/cached_tokens")).min(prompt);
        SummaryUsage {
            requests: 1,
            input_tokens: prompt - cached,
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            output_tokens: n(usage.get("completion_tokens")),
        }
    }
}

/// What the summary model's own answers taught within one compaction (`result.summaryModelLearnt`),
/// so that it can be kept for the next: the window a refusal named (its maximum), and the
/// factor between what the model billed and our count of the same request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryModelLearnt {
    /// The summary model.
    pub model: String,
    /// The maximum a refusal stated, in the model's tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Billed input / our count of the request, the largest seen (usage, or a refusal's count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
}

/// Where the providers add the usage of each request they made, and where the summary parts
/// note what the model taught; shared by the attempts and rounds of one compaction.
#[derive(Debug, Default)]
pub struct UsageMeter {
    usage: Mutex<SummaryUsage>,
    learnt: Mutex<Option<SummaryModelLearnt>>,
}

impl UsageMeter {
    pub fn add(&self, usage: &SummaryUsage) {
        if let Ok(mut total) = self.usage.lock() {
            total.add(usage);
        }
    }

    /// The sum so far; `None` when no request was billed.
    pub fn total(&self) -> Option<SummaryUsage> {
        self.usage
            .lock()
            .ok()
            .map(|usage| *usage)
            .filter(|usage| usage.requests > 0)
    }

    /// What the summary model taught so far.
    pub fn learnt(&self) -> Option<SummaryModelLearnt> {
        self.learnt.lock().ok().and_then(|learnt| learnt.clone())
    }

    /// Notes a window (the smallest stated wins) and a factor (the largest seen wins) for
    /// `model`.
    pub fn learn(&self, model: &str, window: Option<u64>, factor: Option<f64>) {
        if window.is_none() && factor.is_none() {
            return;
        }
        if let Ok(mut learnt) = self.learnt.lock() {
            let entry = learnt.get_or_insert_with(|| SummaryModelLearnt {
                model: model.to_string(),
                window: None,
                factor: None,
            });
            if let Some(window) = window {
                entry.window = Some(entry.window.map_or(window, |w| w.min(window)));
            }
            if let Some(factor) = factor.filter(|f| f.is_finite() && *f > 0.0) {
                let factor = (factor * 1000.0).round() / 1000.0;
                entry.factor = Some(entry.factor.map_or(factor, |f| f.max(factor)));
            }
        }
    }
}

/// Which request asked for a summary (`result.summaryRequest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryRequestKind {
    /// The loop's own request plus one instruction: it reads the loop's prompt cache.
    Shared,
    /// The middle rendered as a transcript in one user message.
    Transcript,
}

/// The loop's own request, for a summary that reads the loop's prompt cache (SPEC §4.10):
/// the provider sends `agent_request` with `conversation` as its messages, byte for byte, and
/// one more user message holding `instruction`.
#[derive(Debug, Clone, Copy)]
pub struct SharedRequest<'a> {
    /// The body the loop sends, without its messages (`agentRequest`).
    pub agent_request: &'a Map<String, Value>,
    /// The loop's whole list, as it sent it.
    pub conversation: &'a [Value],
    /// The instructions: which part to summarize, and that the rest stays verbatim.
    pub instruction: &'a str,
}

/// What a summarizer is asked to summarize.
#[derive(Debug, Clone)]
pub struct SummaryRequest<'a> {
    /// The messages to summarize, exactly as given (the middle, or one part of it).
    pub messages: &'a [Value],
    /// Their indices in the list the compaction round works on: the list passed to
    /// `compactMessages` in the first round, that round's result in a later one.
    pub range: Range<usize>,
    /// For each of `messages`, its index in the list passed to `compactMessages`, or `None`
    /// for a message the library made (an earlier round's summary).
    pub origins: &'a [Option<usize>],
    /// The rendered instructions and transcript; empty for a summarizer that renders it on
    /// demand ([`Summarizer::renders_prompt_on_demand`]), with [`SummaryRequest::render_prompt`].
    pub prompt: String,
    /// The instructions that open the prompt.
    pub instructions: String,
    /// How the transcript of `messages` is rendered into the prompt.
    pub render_limits: RenderLimits,
    /// The text of an earlier summary found in these messages, to be updated (UC-002).
    pub previous_summary: Option<String>,
    /// The summary model, when one was chosen.
    pub model: Option<String>,
    /// Extra instructions from the caller, already part of `prompt`.
    pub custom_instructions: Option<String>,
    /// The output budget for the summary, in tokens.
    pub max_tokens: u32,
    /// 1 for the first attempt, 2 for the first retry, …
    pub attempt: u32,
    /// Ask with the loop's own request instead of the transcript (only for a summarizer whose
    /// [`Summarizer::can_share`] said yes).
    pub shared: Option<SharedRequest<'a>>,
    /// Where an HTTP provider adds the usage its responses report.
    pub usage: Option<&'a UsageMeter>,
    /// The summaries and notices among `messages` that the library wrote (its records name
    /// them): skipped in the transcript, where the summary being updated is given on its own.
    /// Any other message, whatever it starts with, is the caller's.
    pub own: &'a OwnSummaries,
}

impl SummaryRequest<'_> {
    /// The prompt: the instructions, the summary to update (if any) and the transcript.
    pub fn render_prompt(&self) -> String {
        prompt::render_prompt(
            &self.instructions,
            self.previous_summary.as_deref(),
            self.messages,
            self.render_limits,
            self.own,
        )
    }

    /// The messages to summarize as a summarizer that works on the caller's own items sees
    /// them (the JavaScript `summarizer`): for each, its item indices in the caller's list
    /// (`view`: the list's view when it is in another format, each view message standing for
    /// its items), or `None` for one the library made, given whole in `made`.
    pub fn caller_messages(&self, view: Option<&View>) -> CallerMessages {
        let mut made = Vec::new();
        let mut origins = Vec::with_capacity(self.origins.len());
        for (message, origin) in self.messages.iter().zip(self.origins) {
            match (origin, view) {
                (Some(index), None) => origins.push(Some(*index)),
                (Some(index), Some(view)) => origins.extend(
                    view.groups
                        .get(*index)
                        .cloned()
                        .unwrap_or_default()
                        .map(Some),
                ),
                (None, None) => {
                    origins.push(None);
                    made.push(message.clone());
                }
                (None, Some(view)) => {
                    for item in formats::to_format(view.format, message) {
                        origins.push(None);
                        made.push(item);
                    }
                }
            }
        }
        let own_summaries = self
            .messages
            .iter()
            .filter(|message| self.own.contains(message))
            .filter_map(summary_identity_hex)
            .collect();
        CallerMessages {
            origins,
            made,
            own_summaries,
        }
    }

    /// How long a tool result may be in the transcript (`None`: no limit).
    pub fn max_tool_result_chars(&self) -> Option<usize> {
        match self.render_limits.max_tool_result_chars {
            usize::MAX => None,
            chars => Some(chars),
        }
    }
}

/// See [`SummaryRequest::caller_messages`].
pub struct CallerMessages {
    /// Per message to summarize (or per item of a view message), its index in the caller's
    /// list, or `None` for one the library made.
    pub origins: Vec<Option<usize>>,
    /// The messages whose origin is `None`, in order.
    pub made: Vec<Value>,
    /// The identities (SHA-256, hex) of the library's own summaries among the messages: the
    /// prompt skips those (see [`prompt::render_prompt_for_caller`]).
    pub own_summaries: Vec<String>,
}

/// Whether a failed attempt may be retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Retry (while attempts remain).
    Yes,
    /// Do not retry: the same request would fail the same way.
    No,
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptError {
    pub code: ErrorCode,
    pub message: String,
    pub status: Option<u16>,
    pub retry: Retry,
    /// A wait the server asked for (`retry-after-ms` / `retry-after`), already clamped.
    pub retry_after: Option<Duration>,
    /// The request was refused as longer than the model reads, and what the refusal stated
    /// (the provider's count, its maximum): the same request would be refused again, a
    /// smaller one may not.
    pub too_long: Option<StatedLimits>,
}

impl AttemptError {
    /// The `retry` event said before attempt `attempt` is retried after `delay`.
    pub fn retry_event(&self, attempt: u32, delay: Duration) -> Value {
        serde_json::json!({
            "type": "retry",
            "attempt": attempt,
            "delayMs": delay.as_millis() as u64,
            "error": { "code": self.code.as_str(), "message": self.message, "status": self.status },
        })
    }

    pub fn new(code: ErrorCode, message: impl Into<String>, retry: Retry) -> Self {
        AttemptError {
            code,
            message: message.into(),
            status: None,
            retry,
            retry_after: None,
            too_long: None,
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
}

/// Something that writes summaries.
pub trait Summarizer: Send + Sync {
    /// Makes one attempt. Empty or whitespace-only text is treated as a failed attempt by the
    /// caller, so implementations may return it as is.
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>>;

    /// `anthropic`, `openai`, `extractive` or `custom`.
    fn provider(&self) -> &str;

    /// The model that writes the summaries, when there is one.
    fn model(&self) -> Option<&str> {
        None
    }

    /// A warning every result this summarizer writes carries (`result.warnings`): the
    /// zero-configuration fallback to the extractive summarizer says so, since the library
    /// writes nothing to stderr unless asked.
    fn notice(&self) -> Option<&str> {
        None
    }

    /// How many tokens the summarizer can read; the transcript is kept within it.
    /// `None`: no limit is known.
    fn context_window(&self) -> Option<usize> {
        self.model().and_then(crate::model::models::context_window)
    }

    /// The most output tokens one response may have (`max_tokens` is clamped to it); `None`:
    /// no limit is known.
    fn max_output_tokens(&self) -> Option<u32> {
        self.model()
            .and_then(crate::model::models::max_output_tokens)
    }

    /// False for summarizers that read the messages themselves and ignore the prompt (the
    /// extractive one), so that no prompt is rendered for them.
    fn wants_prompt(&self) -> bool {
        true
    }

    /// Whether this summarizer can send `shared` ([`SharedRequest`]) as the loop's own request:
    /// `Err` says why not (the list is not in its API's format, another model, …). Only the
    /// HTTP providers can.
    fn can_share(&self, _shared: &SharedRequest<'_>) -> Result<(), String> {
        Err(format!(
            "the {} summarizer does not send requests of its own",
            self.provider()
        ))
    }

    /// Whether the provider caches the loop's requests without being asked (OpenAI, prompts of
    /// 1,024 tokens or more): `Ok` says so, `Err` says why not, for the warning when nothing
    /// else shows that the loop caches ([`crate::summary::cache_evidence::find`]).
    /// `prompt_tokens` is the conversation's size. Only asked under `summaryRequest: 'auto'`,
    /// of summarizers whose [`Summarizer::can_share`] said yes.
    fn caches_by_itself(&self, _prompt_tokens: u64) -> Result<String, String> {
        Err(format!(
            "the {} provider caches only what a request asks it to",
            self.provider()
        ))
    }

    /// True for summarizers that render the prompt only if they need it (a JS callback may
    /// never read it), so that none is rendered up front: `prompt` is then empty and
    /// [`SummaryRequest::render_prompt`] makes it.
    fn renders_prompt_on_demand(&self) -> bool {
        false
    }
}

/// Observes attempts (for logs and `onEvent`).
pub trait AttemptObserver: Send + Sync {
    /// Called before each attempt.
    fn attempt_started(&self, _attempt: u32) {}
    /// Called when an attempt failed and another will follow after `delay`.
    fn retrying(&self, _attempt: u32, _error: &AttemptError, _delay: Duration) {}
}

/// An observer that does nothing.
pub struct NoObserver;
impl AttemptObserver for NoObserver {}

/// How a retried summary ended without a summary.
#[derive(Debug, Clone, PartialEq)]
pub enum SummaryFailure {
    /// Every attempt failed (or one failed that may not be retried).
    Failed(CompactError),
    /// The caller's signal aborted the work.
    Aborted,
}

/// The retry loop of SPEC §5 as steps, so that any kind of attempt can use it: the summaries
/// ([`summarize_with_retries`]) and Anthropic's on-demand compaction
/// (the providers' `anthropic_compaction`, a layer above). [`with_retries`] runs it over a closure.
///
/// ```text
/// loop { let n = retries.begin()?; match retries.run(attempt(n)).await? { Ok(v) => return, Err(e) => retries.failed(e).await? } }
/// ```
pub struct Retries<'a> {
    /// Who makes the attempts (`anthropic`, `custom`, …), for the logs.
    provider: &'a str,
    /// What is attempted (`summary`, `native compaction`), for the logs.
    what: &'static str,
    policy: RetryPolicy,
    cancel: &'a CancellationToken,
    observer: &'a dyn AttemptObserver,
    attempt: u32,
}

impl<'a> Retries<'a> {
    pub fn new(
        provider: &'a str,
        what: &'static str,
        policy: RetryPolicy,
        cancel: &'a CancellationToken,
        observer: &'a dyn AttemptObserver,
    ) -> Self {
        Retries {
            provider,
            what,
            policy,
            cancel,
            observer,
            attempt: 0,
        }
    }

    /// Starts the next attempt and returns its number (1 for the first), or `Aborted` when the
    /// signal has fired.
    pub fn begin(&mut self) -> Result<u32, SummaryFailure> {
        self.attempt += 1;
        if self.cancel.is_cancelled() {
            return Err(SummaryFailure::Aborted);
        }
        self.observer.attempt_started(self.attempt);
        Ok(self.attempt)
    }

    /// The number of the current attempt (0 before the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Runs one attempt, or returns `Aborted` as soon as the signal fires.
    pub async fn run<T>(&self, attempt: impl Future<Output = T>) -> Result<T, SummaryFailure> {
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(SummaryFailure::Aborted),
            outcome = attempt => Ok(outcome),
        }
    }

    /// After a failed attempt: `Failed` when it may not be retried or no retries are left,
    /// else waits (the server's `retry-after`, or the backoff) and returns `Ok` for the next
    /// attempt; `Aborted` when the signal fires while waiting.
    pub async fn failed(&mut self, error: AttemptError) -> Result<(), SummaryFailure> {
        let attempt = self.attempt;
        let retries_used = attempt.saturating_sub(1);
        if error.retry == Retry::No || retries_used >= self.policy.max_retries {
            tracing::warn!(
                provider = self.provider,
                attempt,
                code = error.code.as_str(),
                "{} failed: {}",
                self.what,
                error.message
            );
            return Err(SummaryFailure::Failed(CompactError {
                attempts: attempt,
                status: error.status,
                ..CompactError::new(error.code, error.message)
            }));
        }
        let delay = error
            .retry_after
            .unwrap_or_else(|| self.policy.backoff(retries_used));
        tracing::warn!(
            provider = self.provider,
            attempt,
            code = error.code.as_str(),
            delay_ms = delay.as_millis() as u64,
            "{} attempt failed, retrying: {}",
            self.what,
            error.message
        );
        self.observer.retrying(attempt, &error, delay);
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Err(SummaryFailure::Aborted),
            _ = tokio::time::sleep(delay) => Ok(()),
        }
    }
}

/// Calls `attempt` (with the attempt number, 1 for the first) until it succeeds, retrying as
/// SPEC §5 says. Returns the value and the number of attempts it took.
pub async fn with_retries<T, F, Fut>(
    provider: &str,
    what: &'static str,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
    mut attempt: F,
) -> Result<(T, u32), SummaryFailure>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let mut retries = Retries::new(provider, what, policy, cancel, observer);
    loop {
        let n = retries.begin()?;
        match retries.run(attempt(n)).await? {
            Ok(value) => return Ok((value, n)),
            Err(error) => retries.failed(error).await?,
        }
    }
}

/// Calls `summarizer` until it produces a non-empty summary, retrying as SPEC §5 says.
/// Returns the trimmed summary and the number of attempts it took. The request is taken whole
/// (its `attempt` is set for each attempt) rather than cloned per attempt: its prompt can be
/// the size of the whole middle. A summary cut at `max_tokens` is not retried: the same
/// request would be cut again ([`summarize_or_resize`] asks with more room instead).
pub async fn summarize_with_retries(
    summarizer: &dyn Summarizer,
    mut request: SummaryRequest<'_>,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<(String, u32), SummaryFailure> {
    let mut retries = Retries::new(summarizer.provider(), "summary", policy, cancel, observer);
    match attempt_until_resized(summarizer, &mut request, &mut retries).await? {
        Attempted::Summary(text) => Ok((text, retries.attempt())),
        Attempted::TooLong(mut error) | Attempted::Truncated(mut error) => {
            // Not retried: `failed` ends the attempts with it.
            error.retry = Retry::No;
            let attempts = retries.attempt();
            let fallback = SummaryFailure::Failed(CompactError {
                attempts,
                status: error.status,
                ..CompactError::new(error.code, error.message.clone())
            });
            Err(retries.failed(error).await.err().unwrap_or(fallback))
        }
    }
}

/// How one request for a summary ended, for a caller that can change the request.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempted {
    /// The trimmed, non-empty summary.
    Summary(String),
    /// The model refused the request as too long ([`AttemptError::too_long`]): a smaller one
    /// is needed.
    TooLong(AttemptError),
    /// The summary was cut at `max_tokens`: more room, or less to summarize, is needed.
    Truncated(AttemptError),
}

/// [`summarize_with_retries`] for a caller that resizes the request itself: a refusal for size
/// and a summary cut at `max_tokens` end the attempts at once (the same request would meet
/// them again), as `TooLong` / `Truncated`; other failures are retried as SPEC §5 says.
/// Returns the outcome and the number of attempts made.
pub async fn summarize_or_resize(
    summarizer: &dyn Summarizer,
    request: &mut SummaryRequest<'_>,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<(Attempted, u32), SummaryFailure> {
    let mut retries = Retries::new(summarizer.provider(), "summary", policy, cancel, observer);
    let outcome = attempt_until_resized(summarizer, request, &mut retries).await?;
    Ok((outcome, retries.attempt()))
}

async fn attempt_until_resized(
    summarizer: &dyn Summarizer,
    request: &mut SummaryRequest<'_>,
    retries: &mut Retries<'_>,
) -> Result<Attempted, SummaryFailure> {
    loop {
        request.attempt = retries.begin()?;
        let outcome = retries.run(summarizer.summarize(request)).await?;
        let error = match outcome {
            Ok(text) if !text.trim().is_empty() => {
                return Ok(Attempted::Summary(text.trim().to_string()))
            }
            Ok(_) => {
                AttemptError::new(ErrorCode::EmptySummary, "the summary was empty", Retry::Yes)
            }
            Err(error) if error.too_long.is_some() => return Ok(Attempted::TooLong(error)),
            Err(error) if error.code == ErrorCode::Truncated => {
                return Ok(Attempted::Truncated(error))
            }
            Err(error) => error,
        };
        retries.failed(error).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Mutex;

    struct Scripted {
        outcomes: Mutex<Vec<Result<String, AttemptError>>>,
        calls: AtomicU32,
    }

    impl Scripted {
        fn new(mut outcomes: Vec<Result<String, AttemptError>>) -> Self {
            outcomes.reverse();
            Scripted {
                outcomes: Mutex::new(outcomes),
                calls: AtomicU32::new(0),
            }
        }
    }

    impl Summarizer for Scripted {
        fn summarize<'a>(
            &'a self,
            _request: &'a SummaryRequest<'a>,
        ) -> BoxFuture<'a, Result<String, AttemptError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let next = self
                .outcomes
                .lock()
                .unwrap()
                .pop()
                .expect("no more scripted outcomes");
            Box::pin(async move { next })
        }
        fn provider(&self) -> &str {
            "custom"
        }
    }

    fn request() -> SummaryRequest<'static> {
        SummaryRequest {
            messages: &[],
            range: 0..0,
            origins: &[],
            prompt: String::new(),
            instructions: String::new(),
            render_limits: RenderLimits::default(),
            previous_summary: None,
            model: None,
            custom_instructions: None,
            max_tokens: 100,
            attempt: 0,
            shared: None,
            usage: None,
            own: Box::leak(Box::new(OwnSummaries::none())),
        }
    }

    fn fast(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            base_delay: Duration::ZERO,
        }
    }

    fn failure() -> Result<String, AttemptError> {
        Err(AttemptError::new(ErrorCode::ServerError, "boom", Retry::Yes).with_status(500))
    }

    #[tokio::test]
    async fn retries_until_success() {
        let s = Scripted::new(vec![failure(), Ok("  ".into()), Ok(" summary ".into())]);
        let out = summarize_with_retries(
            &s,
            request(),
            fast(2),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await;
        assert_eq!(out, Ok(("summary".to_string(), 3)));
        assert_eq!(s.calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn gives_up_after_max_retries_plus_one_attempts() {
        let s = Scripted::new(vec![failure(), failure(), failure()]);
        let out = summarize_with_retries(
            &s,
            request(),
            fast(2),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await;
        match out {
            Err(SummaryFailure::Failed(e)) => {
                assert_eq!(e.attempts, 3);
                assert_eq!(e.status, Some(500));
                assert_eq!(e.code, ErrorCode::ServerError);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(s.calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn zero_retries_means_one_attempt() {
        let s = Scripted::new(vec![failure()]);
        let out = summarize_with_retries(
            &s,
            request(),
            fast(0),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await;
        assert!(matches!(
            out,
            Err(SummaryFailure::Failed(CompactError { attempts: 1, .. }))
        ));
    }

    #[tokio::test]
    async fn non_retryable_errors_stop_at_once() {
        let s = Scripted::new(vec![Err(AttemptError::new(
            ErrorCode::BadRequest,
            "bad",
            Retry::No,
        )
        .with_status(400))]);
        let out = summarize_with_retries(
            &s,
            request(),
            fast(5),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await;
        assert!(matches!(
            out,
            Err(SummaryFailure::Failed(CompactError {
                attempts: 1,
                code: ErrorCode::BadRequest,
                ..
            }))
        ));
    }

    #[tokio::test]
    async fn empty_summaries_are_failed_attempts() {
        let s = Scripted::new(vec![Ok(String::new()), Ok("\n\t ".into())]);
        let out = summarize_with_retries(
            &s,
            request(),
            fast(1),
            &CancellationToken::new(),
            &NoObserver,
        )
        .await;
        assert!(matches!(
            out,
            Err(SummaryFailure::Failed(CompactError {
                code: ErrorCode::EmptySummary,
                attempts: 2,
                ..
            }))
        ));
    }

    #[tokio::test]
    async fn a_cancelled_token_aborts_without_attempting() {
        let s = Scripted::new(vec![]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let out = summarize_with_retries(&s, request(), fast(2), &cancel, &NoObserver).await;
        assert_eq!(out, Err(SummaryFailure::Aborted));
        assert_eq!(s.calls.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let policy = RetryPolicy::default();
        for (retry, max_ms) in [
            (0u32, 500u128),
            (1, 1000),
            (2, 2000),
            (3, 4000),
            (4, 8000),
            (9, 8000),
        ] {
            let d = policy.backoff(retry).as_millis();
            assert!(
                d <= max_ms && d >= max_ms * 3 / 4 - 1,
                "retry {retry}: {d}ms"
            );
        }
    }
}
