//! Step 4, **summarize**: the middle becomes a summary (F-004) — bounded to what the summary
//! model can read, an earlier summary updated rather than summarized as chat (UC-002), the
//! ledger appended (SPEC §4.5). When the result would still be over the threshold, further
//! rounds fold the oldest part of the tail into the summary (the Pi Agent seed's recursive
//! compaction, "保留更少的历史"), at most [`MAX_ROUNDS`] in all.

use std::ops::Range;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::background::{Precomputed, PrecomputedSummary};
use super::measure::Estimator;
use crate::base::error::CompactError;
use crate::base::error::ErrorCode;
use crate::formats::Format;
use crate::model::added::{self, OwnSummaries};
use crate::model::tokens;
use crate::pipeline::options::SummaryRequestMode;
use crate::pipeline::options::{CompactOptions, PromptStyle};
use crate::pipeline::outcome::Aborted;
use crate::plan::partition::{is_user_turn, partition, Partition};
use crate::summary::ledger::Ledger;
use crate::summary::prompt::{self, Landmark, RenderLimits, SharedScope, SharedStyle};
use crate::summary::providers::shared::leading_system;
use crate::summary::sections::strip_sections;
use crate::summary::summarize::{
    summarize_with_retries, AttemptObserver, RetryPolicy, SharedRequest, Summarizer,
    SummaryFailure, SummaryRequest, SummaryRequestKind, SummaryUsage, UsageMeter,
};
use crate::summary::todos;
use crate::summary::user_messages::UserMessages;

/// The most summary rounds one compaction runs: the first, and at most two more when the
/// result is still over the threshold.
pub const MAX_ROUNDS: u32 = 3;

/// What Anthropic's on-demand compaction produced.
pub(crate) struct NativeSummarized {
    pub region: Range<usize>,
    /// The signed `compaction` block, as returned.
    pub block: Value,
    /// The ledger of the region and the user's messages ([`appended_sections`]), kept beside
    /// the block so a later compaction keeps them.
    pub ledger: String,
    pub attempts: u32,
    pub model: String,
}

/// Why our own summary is written instead of the native one.
pub(crate) struct NativeFallback {
    pub warning: String,
    /// The model, when on-demand compaction is unavailable for it (not to be tried again).
    pub unavailable_model: Option<String>,
}

/// Anthropic's on-demand compaction of the middle of `plan`, when `provider:
/// 'anthropic-compaction'` is set and the conversation allows it; otherwise why not (the
/// caller then writes its own summary). `None`: not configured.
pub(crate) async fn summarize_natively(
    messages: &[Value],
    plan: Partition,
    options: &CompactOptions,
    own: &OwnSummaries,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Option<Result<NativeSummarized, NativeFallback>>, Aborted> {
    let Some(client) = options.native_compaction.as_deref() else {
        return Ok(None);
    };
    let model = client.model().to_string();
    let fallback = |why: String, unavailable: bool| {
        NativeFallback {
        warning: format!(
            "anthropic-compaction was not used ({why}); the summary was written by the anthropic provider instead"
        ),
        unavailable_model: unavailable.then(|| model.clone()),
    }
    };
    if options.compaction_unavailable_models.contains(&model) {
        return Ok(Some(Err(fallback(
            format!("on-demand compaction was found unavailable for {model} earlier"),
            false,
        ))));
    }
    if crate::summary::providers::anthropic_compaction::supports_compaction(&model) == Some(false) {
        return Ok(Some(Err(fallback(
            format!("{model} does not offer on-demand compaction"),
            true,
        ))));
    }
    // Leading system messages are the request's `system` parameter, not part of `messages`:
    // they are sent as such, and the block goes first after them in the result (first among
    // the messages of the next request).
    let system = system_parameter(options.system.as_ref(), &messages[..plan.head_len]);
    let middle = &messages[plan.middle()];
    let openai = middle.iter().any(|m| {
        matches!(
            crate::model::message::role_of(m),
            Some(crate::model::message::Role::Tool | crate::model::message::Role::Function)
        ) || !crate::model::message::openai_tool_calls(m).is_empty()
    });
    if openai {
        return Ok(Some(Err(fallback(
            "the messages are not in the Anthropic format".into(),
            false,
        ))));
    }
    let policy = RetryPolicy {
        max_retries: options.max_retries,
        base_delay: options.retry_base_delay,
    };
    let result = client
        .compact(
            middle,
            system.as_ref(),
            options.tools.as_ref(),
            options.custom_instructions.as_deref(),
            options.summary_max_tokens,
            policy,
            cancel,
            observer,
        )
        .await;
    use crate::summary::providers::anthropic_compaction::NativeFailure;
    match result {
        Ok(native) => {
            let ledger = appended_sections(earlier_body(middle, own), middle, options, own);
            Ok(Some(Ok(NativeSummarized {
                region: plan.middle(),
                block: native.block,
                ledger,
                attempts: native.attempts,
                model,
            })))
        }
        Err(NativeFailure::Aborted) => Err(Aborted),
        Err(NativeFailure::Unavailable { status, message }) => Ok(Some(Err(fallback(
            format!(
                "unavailable for {model}{}: {message}",
                status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
            ),
            true,
        )))),
        Err(NativeFailure::Failed(error)) => {
            Ok(Some(Err(fallback(format!("it failed: {error}"), false))))
        }
    }
}

/// The `system` parameter of a compaction request: the caller's `system` option, then the text
/// of the leading system messages of the list, in that order (a request puts its `system`
/// parameter before its messages). The API takes a string or an array of text blocks: one
/// string source alone is sent as that string, exactly as the agent sends it (the summarizer
/// reads it, and the kept turns' thinking stays valid only when it matches); anything else as
/// an array of text blocks — strings become `{type: "text", text}`, blocks are kept as they are
/// (`cache_control` included). Empty text is left out. `None` when there is no system prompt.
pub(crate) fn system_parameter(given: Option<&Value>, head: &[Value]) -> Option<Value> {
    let sources: Vec<&Value> = given
        .filter(|v| !v.is_null())
        .into_iter()
        .chain(head.iter().filter_map(|message| message.get("content")))
        .filter(|source| match source {
            Value::String(text) => !text.is_empty(),
            Value::Array(blocks) => !blocks.is_empty(),
            _ => false,
        })
        .collect();
    match sources.as_slice() {
        [] => None,
        [Value::String(text)] => Some(Value::String(text.clone())),
        _ => {
            let mut blocks = Vec::new();
            for source in sources {
                match source {
                    Value::String(text) => {
                        blocks.push(serde_json::json!({"type": "text", "text": text}))
                    }
                    Value::Array(parts) => blocks.extend(
                        parts
                            .iter()
                            .filter(|b| b.get("text").and_then(Value::as_str) != Some(""))
                            .cloned(),
                    ),
                    _ => {}
                }
            }
            (!blocks.is_empty()).then_some(Value::Array(blocks))
        }
    }
}

/// What the summary step produced.
pub(crate) struct Summarized {
    /// The part of the input the summary replaces.
    pub region: Range<usize>,
    /// The summary body (model text + ledger).
    pub body: String,
    pub attempts: u32,
    pub rounds: u32,
    pub warnings: Vec<String>,
    /// What the summary calls cost, summed.
    pub usage: Option<SummaryUsage>,
    /// Which request wrote the summary (the first round's; later rounds use the same).
    pub request: SummaryRequestKind,
}

/// Summarizes the middle of `plan`, then, while the result (estimated with `stand_in` as the
/// archive path) is still over the threshold and its tail holds more than one user turn, folds
/// the oldest part of the tail into the summary with half the tail budget. Every round
/// summarizes messages of the input, so the summary always replaces one contiguous region and
/// one archive holds all of it. A failed first round is the compaction's error; a failed later
/// round leaves the earlier summary standing, with a warning.
///
/// `first`: a first round already made (a summary prepared in the background, covering the
/// start of `plan`'s middle), used instead of a summary call. Its region ends where the list
/// ended then; the first fold, when one is needed, takes what the full tail budget cuts now.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize(
    messages: &[Value],
    counts: &[usize],
    plan: Partition,
    estimator: &Estimator,
    stand_in: &str,
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
    first: Option<Summarized>,
) -> Result<Result<Summarized, (CompactError, Option<SummaryUsage>)>, Aborted> {
    let origins: Vec<Option<usize>> = (0..messages.len()).map(Some).collect();
    let meter = UsageMeter::default();
    let estimate = estimator.after(counts.iter().sum());
    let precomputed = first.is_some();
    let mut summarized = match first {
        Some(first) => {
            // What the precomputed summary cost is part of what this summary cost.
            if let Some(usage) = &first.usage {
                meter.add(usage);
            }
            first
        }
        None => match summarize_region(
            messages,
            counts,
            plan.middle(),
            &origins,
            estimate,
            options,
            own,
            summarizer,
            &meter,
            cancel,
            observer,
        )
        .await
        {
            Ok(region) => Summarized {
                region: plan.middle(),
                body: region.summary.body,
                attempts: region.summary.attempts,
                rounds: 1,
                warnings: region.warnings,
                usage: None,
                request: region.request,
            },
            Err(SummaryFailure::Aborted) => return Err(Aborted),
            Err(SummaryFailure::Failed(error)) => return Ok(Err((error, meter.total()))),
        },
    };
    let head_tokens: usize = counts[..plan.head_len].iter().sum();
    let mut budget = options.tail_retention_tokens();
    // After a precomputed first round, the first fold tries the full tail budget: what the
    // trigger cuts now, the previous summary updated with what it does not cover.
    let mut full_budget_first = precomputed;
    while summarized.rounds < MAX_ROUNDS {
        let region = summarized.region.clone();
        let text = added::summary_message_text(
            crate::formats::item_count(&messages[region.clone()]),
            Some(stand_in),
            &summarized.body,
        );
        let tail_tokens: usize = counts[region.end..].iter().sum();
        let total = head_tokens + tokens::count_text(options.encoding, &text) + tail_tokens;
        if !estimator.over(total) {
            break;
        }
        if messages[region.end..]
            .iter()
            .filter(|m| is_user_turn(m))
            .count()
            <= 1
        {
            break;
        }
        let full = std::mem::take(&mut full_budget_first)
            .then(|| partition(messages, counts, budget, options.tail_rules()))
            .filter(|p| p.head_len == region.start && p.tail_start > region.end);
        let next = match full {
            Some(next) => next,
            None => {
                budget /= 2;
                partition(messages, counts, budget, options.tail_rules())
            }
        };
        if next.head_len != region.start || next.tail_start <= region.end {
            // Nothing more would be folded: no progress possible.
            break;
        }
        let fold = region.end..next.tail_start;
        // A shared first round shares again: the same conversation, a larger part to
        // summarize, so the request is again a cache read.
        let round = if summarized.request == SummaryRequestKind::Shared {
            summarize_shared(
                messages,
                region.start..fold.end,
                &origins,
                options,
                own,
                summarizer,
                &meter,
                cancel,
                observer,
            )
            .await
        } else {
            summarize_after(
                Some(summarized.body.clone()),
                Some(&summarized.body),
                &messages[fold.clone()],
                fold.start,
                &origins[fold.clone()],
                options,
                own,
                summarizer,
                Some(&meter),
                cancel,
                observer,
            )
            .await
        };
        match round {
            Ok(summary) => {
                summarized.region = region.start..fold.end;
                summarized.body = summary.body;
                summarized.attempts += summary.attempts;
                summarized.rounds += 1;
            }
            Err(SummaryFailure::Aborted) => return Err(Aborted),
            Err(SummaryFailure::Failed(error)) => {
                summarized.attempts += error.attempts;
                summarized.warnings.push(format!(
                    "the result is still over the threshold; a further compaction round failed: {error}"
                ));
                break;
            }
        }
    }
    summarized.usage = meter.total();
    Ok(Ok(summarized))
}

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
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
) -> Result<(), NotShared> {
    if options.summary_request == SummaryRequestMode::Transcript {
        return Err("summaryRequest is 'transcript'".into());
    }
    let Some(agent_request) = options.agent_request.as_deref() else {
        return Err("no agentRequest was given".into());
    };
    let format = options.format.unwrap_or(Format::Native);
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
        .summary_context_tokens
        .or_else(|| summarizer.context_window());
    if let Some(window) = window {
        let thinking = agent_request
            .get("thinking")
            .and_then(|t| t.get("budget_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let needed =
            estimate + SHARED_INSTRUCTION_TOKENS + u64::from(options.summary_max_tokens) + thinking;
        if needed > window as u64 {
            return Err(NotShared::Cannot(format!(
                "the conversation ({estimate} tokens) and the summary do not fit the summary model's window ({window} tokens)"
            )));
        }
    }
    if options.summary_request == SummaryRequestMode::Auto {
        summarizer
            .loop_is_cached(&shared, estimate)
            .map_err(NotShared::NotCached)?;
        shared_is_cheaper(
            messages,
            counts,
            region,
            options.extra_tokens(),
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
/// ([`can_share`]), falling back to the transcript request when the shared one fails for a
/// reason of its own (a tool call instead of a summary, no summary, a request the API
/// rejects); with the transcript request otherwise.
#[allow(clippy::too_many_arguments)]
pub async fn summarize_region(
    messages: &[Value],
    counts: &[usize],
    region: Range<usize>,
    origins: &[Option<usize>],
    estimate: u64,
    options: &CompactOptions,
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
/// tool or wrote nothing, or the API rejected the loop's request (its model, tools or size).
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
async fn summarize_shared(
    messages: &[Value],
    region: Range<usize>,
    origins: &[Option<usize>],
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    meter: &UsageMeter,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    let agent_request = options
        .agent_request
        .as_deref()
        .expect("checked by can_share");
    let middle = &messages[region.clone()];
    let sections = appended_sections(earlier_body(middle, own), middle, options, own);
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
        earlier: region
            .clone()
            .rev()
            .find(|&i| own.contains(&messages[i]) && !added::is_notice(&messages[i]))
            .filter(|&i| i >= lead)
            .map(number),
    };
    let style = match options.prompt_style {
        PromptStyle::Structured => SharedStyle::Structured,
        PromptStyle::Continuation => SharedStyle::Continuation,
    };
    let instruction =
        prompt::shared_instructions(&scope, style, options.custom_instructions.as_deref());
    let request = SummaryRequest {
        messages: middle,
        range: region.clone(),
        origins: &origins[region],
        prompt: String::new(),
        instructions: instruction.clone(),
        render_limits: RenderLimits::default(),
        previous_summary: None,
        model: options.model.clone(),
        custom_instructions: options.custom_instructions.clone(),
        max_tokens: options.summary_max_tokens,
        attempt: 0,
        shared: Some(SharedRequest {
            agent_request,
            conversation: messages,
            instruction: &instruction,
        }),
        usage: Some(meter),
        own,
    };
    let policy = RetryPolicy {
        max_retries: options.max_retries,
        base_delay: options.retry_base_delay,
    };
    let (text, attempts) =
        summarize_with_retries(summarizer, request, policy, cancel, observer).await?;
    let mut body = strip_sections(&unwrap_summary_tags(&text));
    if let Some(max) = options.summary_max_chars {
        body = cap_chars(&body, max);
    }
    append(&mut body, &sections);
    Ok(Summary { body, attempts })
}

/// The body of the last summary among `middle` (an earlier compaction's, UC-002), whose
/// sections are carried forward: one the library recorded (`own`), never a message that only
/// starts like one. Notices (strategies without a summary) hold none.
pub(crate) fn earlier_body<'a>(middle: &'a [Value], own: &OwnSummaries) -> Option<&'a str> {
    middle
        .iter()
        .rev()
        .find(|m| own.contains(m) && !added::is_notice(m))
        .and_then(added::summary_body)
}

/// The sections the library appends to a summary of `middle`, whoever writes its text (SPEC
/// §4.5, §4.12): the ledger of its tool calls, the agent's latest task list and the user's own
/// messages (the task first) within their budgets, each carried forward after those of
/// `earlier` (the body of the summary being updated). The latest failure follows them when the
/// archive is named ([`crate::summary::latest_error`]).
pub(crate) fn appended_sections(
    earlier: Option<&str>,
    middle: &[Value],
    options: &CompactOptions,
    own: &OwnSummaries,
) -> String {
    let mut parts = Vec::new();
    let ledger = match earlier.and_then(Ledger::parse) {
        Some(earlier) => Ledger::extract(middle).merged_after(&earlier),
        None => Ledger::extract(middle),
    };
    if !ledger.is_empty() {
        parts.push(ledger.render());
    }
    let plan = todos::section(
        earlier,
        middle,
        &options.plan_tools,
        options.plan_max_tokens,
        options.encoding,
    );
    if !plan.is_empty() {
        parts.push(plan);
    }
    let budget = options.user_messages_budget();
    if budget > 0 {
        let users = match (earlier, earlier.and_then(UserMessages::parse)) {
            (_, Some(carried)) => UserMessages::extract(middle, own).merged_after(&carried),
            // An earlier summary without the section carried none: no task either.
            (Some(_), None) => UserMessages::extract(middle, own),
            (None, None) => UserMessages::extract_session(middle, own),
        };
        let users = users.fit(budget, options.encoding);
        if !users.is_empty() {
            parts.push(users.render(budget));
        }
    }
    parts.join("\n\n")
}

/// `sections` after the model's text of a summary body.
fn append(body: &mut String, sections: &str) {
    if sections.is_empty() {
        return;
    }
    if !body.is_empty() {
        body.push_str("\n\n");
    }
    body.push_str(sections);
}

/// A finished summary body (model text + ledger).
pub struct Summary {
    pub body: String,
    pub attempts: u32,
}

/// How many characters of transcript fit in a token budget, conservatively (≈ 3 chars a token;
/// real text averages ~4, code ~3.5).
const CHARS_PER_TOKEN: usize = 3;

/// Summarizes the middle: finds an earlier summary to update, bounds the transcript to what
/// the summary model can read (shortening tool results, then summarizing in chunks folded with
/// the update prompt), and appends the ledger. `origins` maps each middle message to the
/// compaction's input (see [`SummaryRequest::origins`]).
#[allow(clippy::too_many_arguments)]
pub async fn summarize_middle(
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    usage: Option<&UsageMeter>,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    // Only a summary the library recorded is updated; notices (strategies without a summary)
    // start like summaries but hold none.
    let previous = middle
        .iter()
        .rev()
        .find(|m| own.contains(m) && !added::is_notice(m));
    // Anthropic's compaction block holds the summary itself; the text beside it, the ledger.
    let previous_summary = previous.and_then(|m| {
        let body = added::summary_body(m)?;
        Some(match added::native_summary(m) {
            Some(native) => format!("{}\n\n{body}", native.trim()),
            None => body.to_string(),
        })
    });
    summarize_after(
        previous_summary,
        previous.and_then(added::summary_body),
        middle,
        middle_start,
        origins,
        options,
        own,
        summarizer,
        usage,
        cancel,
        observer,
    )
    .await
}

/// [`summarize_middle`] updating `previous_summary` (what the summary model reads of the
/// earlier summary); `earlier` is that summary's body, whose sections are carried forward.
#[allow(clippy::too_many_arguments)]
async fn summarize_after(
    previous_summary: Option<String>,
    earlier: Option<&str>,
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &CompactOptions,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    usage: Option<&UsageMeter>,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    let sections = appended_sections(earlier, middle, options, own);
    let policy = RetryPolicy {
        max_retries: options.max_retries,
        base_delay: options.retry_base_delay,
    };
    let max_tokens = options.summary_max_tokens;

    let window = options
        .summary_context_tokens
        .or_else(|| summarizer.context_window());
    let budget_chars =
        window.map(|w| w.saturating_sub(max_tokens as usize + 2_000).max(1_000) * CHARS_PER_TOKEN);

    let chunks = if summarizer.wants_prompt() {
        plan_chunks(middle, budget_chars, own)
    } else {
        vec![Chunk {
            range: 0..middle.len(),
            limits: RenderLimits::default(),
        }]
    };

    let mut running_summary = previous_summary.as_deref().map(strip_sections);
    let mut attempts = 0;
    for chunk in chunks {
        let messages = &middle[chunk.range.clone()];
        let instructions = match options.prompt_style {
            PromptStyle::Structured => prompt::instructions(
                running_summary.as_deref(),
                options.custom_instructions.as_deref(),
            ),
            PromptStyle::Continuation => {
                prompt::continuation_instructions(options.custom_instructions.as_deref())
            }
        };
        let mut request = SummaryRequest {
            messages,
            range: middle_start + chunk.range.start..middle_start + chunk.range.end,
            origins: &origins[chunk.range.clone()],
            prompt: String::new(),
            instructions,
            render_limits: chunk.limits,
            previous_summary: running_summary.clone(),
            model: options.model.clone(),
            custom_instructions: options.custom_instructions.clone(),
            max_tokens,
            attempt: 0,
            shared: None,
            usage,
            own,
        };
        if summarizer.wants_prompt() && !summarizer.renders_prompt_on_demand() {
            request.prompt = request.render_prompt();
        }
        let (text, used) =
            summarize_with_retries(summarizer, request, policy, cancel, observer).await?;
        attempts += used;
        running_summary = Some(strip_sections(&unwrap_summary_tags(&text)));
    }
    let mut body = running_summary.unwrap_or_default();
    if let Some(max) = options.summary_max_chars {
        body = cap_chars(&body, max);
    }
    append(&mut body, &sections);
    Ok(Summary { body, attempts })
}

/// A part of the middle summarized in one request.
struct Chunk {
    range: std::ops::Range<usize>,
    limits: RenderLimits,
}

/// Tool results longer than this are shortened first when the transcript is too long.
const SHORTENED_TOOL_RESULT_CHARS: usize = 2_000;

fn plan_chunks(middle: &[Value], budget_chars: Option<usize>, own: &OwnSummaries) -> Vec<Chunk> {
    let Some(budget) = budget_chars else {
        return vec![Chunk {
            range: 0..middle.len(),
            limits: RenderLimits::default(),
        }];
    };
    let full = RenderLimits::default();
    let sizes: Vec<usize> = middle
        .iter()
        .map(|m| approx_rendered_chars(m, full, own))
        .collect();
    if sizes.iter().sum::<usize>() <= budget {
        return vec![Chunk {
            range: 0..middle.len(),
            limits: full,
        }];
    }
    let short = RenderLimits {
        max_tool_result_chars: SHORTENED_TOOL_RESULT_CHARS,
        ..RenderLimits::default()
    };
    let sizes: Vec<usize> = middle
        .iter()
        .map(|m| approx_rendered_chars(m, short, own))
        .collect();
    if sizes.iter().sum::<usize>() <= budget {
        return vec![Chunk {
            range: 0..middle.len(),
            limits: short,
        }];
    }
    // Chunks that each fit (a single oversized message gets a chunk of its own; its long
    // parts are clipped by the render limits).
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut used = 0;
    for (i, size) in sizes.iter().enumerate() {
        if i > start && used + size > budget {
            chunks.push(Chunk {
                range: start..i,
                limits: short,
            });
            start = i;
            used = 0;
        }
        used += size;
    }
    chunks.push(Chunk {
        range: start..middle.len(),
        limits: short,
    });
    chunks
}

fn approx_rendered_chars(message: &Value, limits: RenderLimits, own: &OwnSummaries) -> usize {
    // Any key of the length of the real one measures the same.
    let key = prompt::TranscriptKey::fixed("0000000000000000");
    prompt::render_transcript(std::slice::from_ref(message), limits, own, &key).len()
}

/// The summary length cap (`summaryMaxChars`, the Pi Agent seed's `summary_max_length`): the
/// model's text cut at `max` characters, at a line or sentence end when one is in the last
/// fifth, with a marker saying it was cut. The ledger is appended after the cap and kept whole:
/// it is the part of a summary that cannot be regenerated (SPEC §4.5).
pub fn cap_chars(text: &str, max: usize) -> String {
    const MARKER: &str = "\n[summary truncated]";
    if text.chars().count() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(MARKER.chars().count()).max(1);
    let cut: String = text.chars().take(keep).collect();
    let floor = cut.len() * 4 / 5;
    let end = cut
        .char_indices()
        .rev()
        .take_while(|(i, _)| *i >= floor)
        .find(|(_, c)| matches!(c, '\n' | '.' | '。'))
        .map_or(cut.len(), |(i, c)| i + c.len_utf8());
    let mut out = cut[..end].trim_end().to_string();
    out.push_str(MARKER);
    out
}

fn unwrap_summary_tags(text: &str) -> String {
    match (text.find("<summary>"), text.rfind("</summary>")) {
        (Some(start), Some(end)) if end > start => {
            text[start + "<summary>".len()..end].trim().to_string()
        }
        _ => text.trim().to_string(),
    }
}

impl Precomputed {
    /// The first summary round of a compaction, from this precomputed summary (`None` for
    /// on-demand compaction, see [`Self::native`]).
    pub(crate) fn first_round(&self) -> Option<Summarized> {
        match &self.summary {
            PrecomputedSummary::Summary {
                body,
                attempts,
                rounds,
                warnings,
                usage,
                request,
                ..
            } => Some(Summarized {
                region: self.head_length..self.covered_messages,
                body: body.clone(),
                attempts: *attempts,
                rounds: *rounds,
                warnings: warnings.clone(),
                usage: *usage,
                request: *request,
            }),
            PrecomputedSummary::Native { .. } => None,
        }
    }

    /// Why on-demand compaction was not used for it, when it was asked for.
    pub(crate) fn native_fallback(&self) -> Option<NativeFallback> {
        match &self.summary {
            PrecomputedSummary::Summary {
                native_fallback: Some(warning),
                native_unavailable,
                ..
            } => Some(NativeFallback {
                warning: warning.clone(),
                unavailable_model: native_unavailable.clone(),
            }),
            _ => None,
        }
    }

    /// The on-demand compaction this precomputed summary is, if it is one.
    pub(crate) fn native(&self) -> Option<NativeSummarized> {
        match &self.summary {
            PrecomputedSummary::Native {
                block,
                ledger,
                attempts,
                model,
            } => Some(NativeSummarized {
                region: self.head_length..self.covered_messages,
                block: block.clone(),
                ledger: ledger.clone(),
                attempts: *attempts,
                model: model.clone(),
            }),
            PrecomputedSummary::Summary { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_system_parameter_is_the_given_system_then_the_leading_system_messages() {
        let system = |text: &str| json!({"role": "system", "content": text});
        // Nothing: no parameter.
        assert_eq!(system_parameter(None, &[]), None);
        assert_eq!(system_parameter(Some(&Value::Null), &[system("")]), None);
        // One string, from either side: sent as it is.
        assert_eq!(
            system_parameter(None, &[system("You are a coding agent.")]),
            Some(json!("You are a coding agent."))
        );
        assert_eq!(
            system_parameter(Some(&json!("Be brief.")), &[]),
            Some(json!("Be brief."))
        );
        // Several: text blocks, the option first, blocks kept with their fields.
        let cached = json!([{"type": "text", "text": "Tools: grep.", "cache_control": {"type": "ephemeral"}}]);
        assert_eq!(
            system_parameter(
                Some(&json!("Be brief.")),
                &[
                    system("You are a coding agent."),
                    json!({"role": "developer", "content": cached}),
                    system(""),
                ]
            ),
            Some(json!([
                {"type": "text", "text": "Be brief."},
                {"type": "text", "text": "You are a coding agent."},
                {"type": "text", "text": "Tools: grep.", "cache_control": {"type": "ephemeral"}}
            ]))
        );
        // A given array of blocks stays an array, with the messages after it.
        assert_eq!(
            system_parameter(Some(&cached), &[system("More.")]),
            Some(json!([
                {"type": "text", "text": "Tools: grep.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "More."}
            ]))
        );
    }
}
