//! The summary of a middle as a transcript request (F-004) — bounded to what the summary model
//! can read, in parts sized in its tokens when it cannot read all of it
//! ([`crate::summary::parts`]), an earlier summary updated rather than summarized as chat
//! (UC-002) — and the sections the library appends after the model's text (the ledger, SPEC
//! §4.5).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::archive::learnt::model_key;
use crate::base::retry::RetryPolicy;
use crate::carry::ledger::Ledger;
use crate::carry::sections::strip_sections;
use crate::carry::todos;
use crate::carry::user_messages::UserMessages;
use crate::model::added::{self, OwnSummaries};
use crate::pipeline::options::{CompactOptions, PromptStyle};
use crate::pipeline::shared::session::earlier_body;
use crate::summary::parts::{summarize_in_parts, PartsOptions};
use crate::summary::prompt::{self, RenderLimits};
use crate::summary::summarize::{
    summarize_with_retries, AttemptObserver, Summarizer, SummaryFailure, SummaryRequest, UsageMeter,
};

/// The sections the library appends to a summary of `middle`, whoever writes its text (SPEC
/// §4.5, §4.12): the ledger of its tool calls, the agent's latest task list and the user's own
/// messages (the task first) within their budgets, each carried forward after those of
/// `earlier` (the body of the summary being updated). The latest failure follows them when the
/// archive is named ([`crate::carry::latest_error`]).
pub(crate) fn appended_sections(
    earlier: Option<&str>,
    middle: &[Value],
    options: &CompactOptions,
    own: &OwnSummaries,
) -> String {
    let summary_budget = options.summary_budget();
    let plan = todos::section(
        earlier,
        middle,
        &options.plan_tools,
        options.plan_budget(),
        options.encoding,
    );
    let mut users = String::new();
    let budget = options.user_messages_budget();
    if budget > 0 {
        let carried = match (earlier, earlier.and_then(UserMessages::parse)) {
            (_, Some(carried)) => UserMessages::extract(middle, own).merged_after(&carried),
            // An earlier summary without the section carried none: no task either.
            (Some(_), None) => UserMessages::extract(middle, own),
            (None, None) => UserMessages::extract_session(middle, own),
        };
        let carried = carried.fit(budget, options.encoding);
        if !carried.is_empty() {
            users = carried.render(budget);
        }
    }
    // The ledger's room: its share, and what the task list and the user's messages left.
    let count = |text: &str| crate::model::tokens::count_text(options.encoding, text);
    let room = summary_budget.ledger_room(count(&plan), count(&users));
    let ledger = Ledger::of_region(middle, earlier).render_within(room, options.encoding);
    let parts: Vec<String> = [ledger, plan, users]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    parts.join("\n\n")
}

/// What the summary budget left out of a summary of `middle` whose sections are `text`: the
/// task list and the latest failure, when their own options would have held them but their
/// shares of `summaryBudgetTokens` did not (`latest_failure_tokens`: the share the draft
/// writes the latest failure with). Said once, as warnings, like the sections that give way
/// for the result to fit.
pub(crate) fn budget_losses(
    text: &str,
    middle: &[Value],
    latest_failure_tokens: usize,
    options: &CompactOptions,
    own: &OwnSummaries,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let share = |tokens: usize| {
        format!("it does not fit its share of the summary budget ({tokens} tokens; raise summaryBudgetTokens to keep it)")
    };
    let earlier = earlier_body(middle, own);
    if crate::carry::sections::split(text).plan.is_none()
        && options.plan_max_tokens > 0
        && !todos::section(
            earlier,
            middle,
            &options.plan_tools,
            options.plan_max_tokens,
            options.encoding,
        )
        .is_empty()
    {
        warnings.push(format!(
            "the agent's task list was left out of the summary: {}",
            share(options.plan_budget())
        ));
    }
    let failure =
        |tokens| crate::carry::latest_error::section(middle, None, tokens, options.encoding, own);
    if latest_failure_tokens < options.latest_failure_max_tokens
        && failure(latest_failure_tokens).is_empty()
        && !failure(options.latest_failure_max_tokens).is_empty()
    {
        warnings.push(format!(
            "the latest failed tool call was left out of the summary: {}",
            share(latest_failure_tokens)
        ));
    }
    warnings
}

/// `sections` after the model's text of a summary body, the text fitted first to what the
/// summary budget leaves it beside them ([`crate::carry::budget`]).
pub(super) fn append(body: &mut String, sections: &str, options: &CompactOptions) {
    let room = options
        .summary_budget()
        .body_room(sections, options.encoding);
    *body = crate::carry::budget::fit_text(body, room, options.encoding);
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
    /// What happened on the way that the caller should know (parts resized, refused, cut).
    pub warnings: Vec<String>,
}

/// Summarizes the middle: finds an earlier summary to update, bounds the transcript to what
/// the summary model can read (shortening tool results, then summarizing in parts folded with
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
pub(super) async fn summarize_after(
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
    let previous_summary = previous_summary.as_deref().map(strip_sections);
    let (text, attempts, warnings) = if summarizer.wants_prompt() {
        let parts = summarize_in_parts(
            previous_summary,
            middle,
            middle_start,
            origins,
            &parts_options(options, summarizer),
            own,
            summarizer,
            usage,
            cancel,
            observer,
        )
        .await?;
        (parts.text, parts.attempts, parts.warnings)
    } else {
        // A summarizer that reads the messages itself (the extractive one): one request.
        let instructions = match options.prompt_style {
            PromptStyle::Structured => prompt::instructions(
                previous_summary.as_deref(),
                options.custom_instructions.as_deref(),
            ),
            PromptStyle::Continuation => {
                prompt::continuation_instructions(options.custom_instructions.as_deref())
            }
        };
        let request = SummaryRequest {
            messages: middle,
            range: middle_start..middle_start + middle.len(),
            origins,
            prompt: String::new(),
            instructions,
            render_limits: RenderLimits::default(),
            previous_summary: previous_summary.clone(),
            model: options.model.clone(),
            custom_instructions: options.custom_instructions.clone(),
            max_tokens: options.summary_max_tokens,
            attempt: 0,
            shared: None,
            usage,
            own,
        };
        let policy = RetryPolicy {
            max_retries: options.max_retries,
            base_delay: options.retry_base_delay,
        };
        let (text, attempts) =
            summarize_with_retries(summarizer, request, policy, cancel, observer).await?;
        (
            Some(strip_sections(&unwrap_summary_tags(&text))),
            attempts,
            Vec::new(),
        )
    };
    let mut body = text.unwrap_or_default();
    if let Some(max) = options.summary_max_chars {
        body = cap_chars(&body, max);
    }
    append(&mut body, &sections, options);
    Ok(Summary {
        body,
        attempts,
        warnings,
    })
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

pub(super) use crate::summary::parts::unwrap_summary_tags;

/// What the parts of a transcript request are sized and asked with, from `options`: the
/// facts the store kept of the summary model (the summarizer's own, else the one the options
/// name) looked up here.
fn parts_options<'a>(options: &'a CompactOptions, summarizer: &dyn Summarizer) -> PartsOptions<'a> {
    let stored = summarizer
        .model()
        .or(options.model.as_deref())
        .and_then(|m| options.learnt_models.get(&model_key(m)))
        .copied()
        .unwrap_or_default();
    PartsOptions {
        encoding: options.encoding,
        model: options.model.as_deref(),
        context_tokens: options.summary_context_tokens,
        window_learnt: options.summary_window_learnt,
        factor_learnt: options.summary_factor_learnt,
        stored_window: stored.window.map(|w| w as usize),
        stored_factor: stored.factor,
        max_tokens: options.summary_max_tokens,
        retry: RetryPolicy {
            max_retries: options.max_retries,
            base_delay: options.retry_base_delay,
        },
        custom_instructions: options.custom_instructions.as_deref(),
        continuation: options.prompt_style == PromptStyle::Continuation,
    }
}
