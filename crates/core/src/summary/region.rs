//! One summary of one region: the shared request (the agent's own prefix, cheaper to cache) when
//! it can be used and is asked for (`summaryRequest`, SPEC §4.10), else the transcript request
//! ([`crate::summary::middle`]).

use std::ops::Range;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::base::error::{CompactError, ErrorCode};
use crate::carry::appended::{append, appended_sections, earlier_body};
use crate::carry::sections::strip_sections;
use crate::formats::Format;
use crate::model::added::OwnSummaries;
use crate::model::message::leading_system;
use crate::model::tokens;
use crate::summary::cache_evidence::{self, Sources};
use crate::summary::middle::{cap_chars, summarize_middle, Summary};
use crate::summary::parts::unwrap_summary_tags;
use crate::summary::prompt::{self, Landmark, RenderLimits, SharedScope, SharedStyle};
use crate::summary::request::{RequestOptions, SummaryRequestMode};
use crate::summary::summarize::{
    summarize_or_resize, AttemptError, AttemptObserver, Attempted, SharedRequest, Summarizer,
    SummaryFailure, SummaryRequest, SummaryRequestKind, UsageMeter,
};

/// A region's summary and how it was asked for.
pub struct RegionSummary {
    pub summary: Summary,
    pub request: SummaryRequestKind,
    /// Why the transcript request was used when `summaryRequest: 'shared'` asked otherwise, or
    /// why a shared request was given up.
    pub warnings: Vec<String>,
}

/// Tokens the shared request's instructions take, with room to spare.
const SHARED_INSTRUCTION_TOKENS: u64 = 1_000;

/// Why the transcript request is used instead of the loop's own.
enum NotShared {
    /// The shared request cannot work or is not asked for (no `agentRequest`, another model, …).
    Cannot(String),
    /// Under `'auto'`: the loop's requests are not in the provider's cache, so the shared request
    /// would pay for the whole conversation. The caller can change that, so it is a warning.
    NotCached(String),
}

impl From<String> for NotShared {
    fn from(why: String) -> Self {
        NotShared::Cannot(why)
    }
}

impl From<&str> for NotShared {
    fn from(why: &str) -> Self {
        NotShared::Cannot(why.into())
    }
}

/// Whether the loop's own request can ask for this summary (SPEC §4.10): `Err` says why not.
/// `estimate` is the list's size in the tokens the agent's API bills.
fn can_share(
    messages: &[Value],
    counts: &[usize],
    region: &Range<usize>,
    estimate: u64,
    options: &RequestOptions<'_>,
    summarizer: &dyn Summarizer,
) -> Result<(), NotShared> {
    if options.summary_request == SummaryRequestMode::Transcript {
        return Err("summaryRequest is 'transcript'".into());
    }
    let Some(agent_request) = options.agent_request else {
        return Err("no agentRequest was given".into());
    };
    let format = options.format;
    if format != Format::Native {
        return Err(format!(
            "the list is in the {} format, which the {} provider does not send as is",
            format.name(),
            summarizer.provider()
        )
        .into());
    }
    let shared = SharedRequest {
        agent_request,
        conversation: messages,
        instruction: "",
    };
    summarizer.can_share(&shared)?;
    let window = options
        .parts
        .context_tokens
        .or_else(|| summarizer.context_window());
    if let Some(window) = window {
        let thinking = agent_request
            .get("thinking")
            .and_then(|t| t.get("budget_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let needed =
            estimate + SHARED_INSTRUCTION_TOKENS + u64::from(options.parts.max_tokens) + thinking;
        if needed > window as u64 {
            return Err(NotShared::Cannot(format!(
                "the conversation ({estimate} tokens) and the summary do not fit the summary model's window ({window} tokens)"
            )));
        }
    }
    if options.summary_request == SummaryRequestMode::Auto {
        let evidence = cache_evidence::find(
            &Sources {
                agent_request: Some(agent_request),
                items: messages,
                format,
                usage: options.usage_cache,
            },
            summarizer.caches_by_itself(estimate),
        )
        .map_err(NotShared::NotCached)?;
        tracing::debug!("summaryRequest 'auto': the loop caches: {evidence}");
        shared_is_cheaper(
            messages,
            counts,
            region,
            options.extra_tokens,
            summarizer.provider(),
        )?;
    }
    Ok(())
}

/// Whether the shared request is expected to cost less than the transcript request (`'auto'`
/// chooses the cheaper). The loop's last request ended before its last assistant message: up
/// to there the shared request reads the cache (0.1× the input price on Anthropic; OpenAI's
/// discount is 50–90 % by model, 0.5× is assumed), and what came after is written (1.25× on
/// Anthropic) or paid in full. The transcript pays the region once. A tool result larger than
/// everything before it, returned after the loop's last request, makes the transcript cheaper
/// (measured on mini-gemini3-requests-1142: 7.5 % read, 11× the transcript's cost).
fn shared_is_cheaper(
    messages: &[Value],
    counts: &[usize],
    region: &Range<usize>,
    extra_tokens: usize,
    provider: &str,
) -> Result<(), String> {
    let (read, write) = if provider == "anthropic" {
        (0.1, 1.25)
    } else {
        (0.5, 1.0)
    };
    if counts.len() != messages.len() {
        return Ok(());
    }
    let prefix_end = messages
        .iter()
        .rposition(|m| {
            crate::model::message::role_of(m) == Some(crate::model::message::Role::Assistant)
        })
        .unwrap_or(0);
    let cached: usize = counts[..prefix_end].iter().sum::<usize>() + extra_tokens;
    let new: usize =
        counts[prefix_end..].iter().sum::<usize>() + SHARED_INSTRUCTION_TOKENS as usize;
    let shared = cached as f64 * read + new as f64 * write;
    let transcript = counts[region.clone()].iter().sum::<usize>() as f64;
    if shared <= transcript {
        Ok(())
    } else {
        Err(format!(
            "the shared request would cost about {shared:.0} input-token equivalents against {transcript:.0} for the transcript: most of it came after the loop's last request and is not in the cache"
        ))
    }
}

/// Summarizes `messages[region]`: with the loop's own request plus one instruction when it can
/// (`can_share`), falling back to the transcript request when the shared one fails for a
/// reason of its own (a tool call instead of a summary, no summary, a request the API
/// rejects); with the transcript request otherwise.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize_region(
    messages: &[Value],
    counts: &[usize],
    region: Range<usize>,
    origins: &[Option<usize>],
    estimate: u64,
    options: &RequestOptions<'_>,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    meter: &UsageMeter,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<RegionSummary, SummaryFailure> {
    let mut warnings = Vec::new();
    match can_share(messages, counts, &region, estimate, options, summarizer) {
        Ok(()) => {
            match summarize_shared(
                messages,
                region.clone(),
                origins,
                options,
                own,
                summarizer,
                meter,
                cancel,
                observer,
            )
            .await
            {
                Ok(summary) => {
                    return Ok(RegionSummary {
                        summary,
                        request: SummaryRequestKind::Shared,
                        warnings,
                    })
                }
                Err(SummaryFailure::Failed(error)) if shared_failure_falls_back(error.code) => {
                    let warning = format!(
                        "the shared summary request failed ({}: {}); the summary was written with the transcript request instead",
                        error.code.as_str(),
                        error.message
                    );
                    tracing::warn!("{warning}");
                    warnings.push(warning);
                }
                Err(failure) => return Err(failure),
            }
        }
        Err(NotShared::NotCached(why)) => {
            let warning = format!("the summary was written with the transcript request: {why}");
            tracing::warn!("{warning}");
            warnings.push(warning);
        }
        Err(NotShared::Cannot(why)) => {
            if options.summary_request == SummaryRequestMode::Shared {
                let warning = format!(
                    "summaryRequest is 'shared' but the transcript request was used: {why}"
                );
                tracing::warn!("{warning}");
                warnings.push(warning);
            } else if options.agent_request.is_some() {
                tracing::debug!("the transcript request is used: {why}");
            }
        }
    }
    let summary = summarize_middle(
        &messages[region.clone()],
        region.start,
        &origins[region],
        options,
        own,
        summarizer,
        Some(meter),
        cancel,
        observer,
    )
    .await?;
    Ok(RegionSummary {
        summary,
        request: SummaryRequestKind::Transcript,
        warnings,
    })
}

/// Failures of a shared request that the transcript request may not meet: the model called a
/// tool or wrote nothing, or the API rejected the loop's request (its model, tools or size: a
/// refusal as too long is a `BAD_REQUEST` whatever its status, and the transcript is then sent
/// in parts that fit).
/// Authentication, quota and availability failures would meet it too, so they stand.
fn shared_failure_falls_back(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::ToolCall
            | ErrorCode::EmptySummary
            | ErrorCode::Refused
            | ErrorCode::Truncated
            | ErrorCode::InvalidResponse
            | ErrorCode::BadRequest
    )
}

/// One shared request for `messages[region]`: the loop's request with the whole list, and
/// instructions naming the region. The ledger is built from the region as for the transcript.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize_shared(
    messages: &[Value],
    region: Range<usize>,
    origins: &[Option<usize>],
    options: &RequestOptions<'_>,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    meter: &UsageMeter,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    let agent_request = options.agent_request.expect("checked by can_share");
    let middle = &messages[region.clone()];
    let sections = appended_sections(earlier_body(middle, own), middle, &options.sections, own);
    // Anthropic takes the leading system messages as the request's `system`: they are not
    // among the messages the instructions count.
    let lead = if summarizer.provider() == "anthropic" {
        leading_system(messages)
    } else {
        0
    };
    let number = |index: usize| index - lead + 1;
    let scope = SharedScope {
        total: messages.len() - lead,
        from: (region.start > lead)
            .then(|| Landmark::of(&messages[region.start], number(region.start))),
        until: (region.end < messages.len())
            .then(|| Landmark::of(&messages[region.end], number(region.end))),
        // The summary being updated: the last one of the library's in the region.
        earlier: own
            .last_summary_in(&messages[region.clone()])
            .map(|i| region.start + i)
            .filter(|&i| i >= lead)
            .map(number),
    };
    let style = if options.parts.continuation {
        SharedStyle::Continuation
    } else {
        SharedStyle::Structured
    };
    let custom = options.parts.custom_instructions;
    let instruction = prompt::shared_instructions(&scope, style, custom);
    let request = SummaryRequest {
        messages: middle,
        range: region.clone(),
        origins: &origins[region],
        prompt: String::new(),
        instructions: instruction.clone(),
        render_limits: RenderLimits::default(),
        previous_summary: None,
        model: options.parts.model.map(str::to_string),
        custom_instructions: custom.map(str::to_string),
        max_tokens: options.parts.max_tokens,
        attempt: 0,
        shared: Some(SharedRequest {
            agent_request,
            conversation: messages,
            instruction: &instruction,
        }),
        usage: Some(meter),
        own,
    };
    let mut request = request;
    let (outcome, attempts) = summarize_or_resize(
        summarizer,
        &mut request,
        options.parts.retry,
        cancel,
        observer,
    )
    .await?;
    let text = match outcome {
        Attempted::Summary(text) => text,
        Attempted::TooLong(error) => {
            // What the refusal stated sizes the transcript parts that follow it (the caller
            // falls back to them): the window, and the model's count over ours of the request.
            let stated = error.too_long.unwrap_or_default();
            let encoding = options.parts.encoding;
            let counted = tokens::count_messages(encoding, messages)
                + options.extra_tokens
                + tokens::count_text(encoding, &instruction);
            let model = summarizer
                .model()
                .or(options.parts.model)
                .unwrap_or(summarizer.provider());
            meter.learn(
                model,
                stated.maximum,
                stated.prompt.map(|n| n as f64 / counted.max(1) as f64),
            );
            return Err(final_failure(error, attempts));
        }
        Attempted::Truncated(error) => return Err(final_failure(error, attempts)),
    };
    let mut body = strip_sections(&unwrap_summary_tags(&text));
    if let Some(max) = options.summary_max_chars {
        body = cap_chars(&body, max);
    }
    append(&mut body, &sections, &options.sections);
    Ok(Summary {
        body,
        attempts,
        warnings: Vec::new(),
    })
}

/// A failure that the same request would meet again (a refusal for size, a summary cut at
/// `max_tokens`): the end of the shared request's attempts.
fn final_failure(error: AttemptError, attempts: u32) -> SummaryFailure {
    SummaryFailure::Failed(CompactError {
        attempts,
        status: error.status,
        ..CompactError::new(error.code, error.message)
    })
}
