//! The summary of a middle as a transcript request (F-004) — bounded to what the summary model
//! can read, in parts sized in its tokens when it cannot read all of it
//! ([`crate::summary::parts`]), an earlier summary updated rather than summarized as chat
//! (UC-002) — with the library's sections ([`crate::carry::appended`]) after the model's text.
//! What it is asked with comes as plain values ([`crate::summary::request`]), read from the
//! compaction's options.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::carry::appended::{append, appended_sections};
use crate::carry::sections::strip_sections;
use crate::model::added::{self, OwnSummaries};
use crate::summary::parts::{summarize_in_parts, unwrap_summary_tags};
use crate::summary::prompt::{self, RenderLimits};
use crate::summary::request::RequestOptions;
use crate::summary::summarize::{
    summarize_with_retries, AttemptObserver, Summarizer, SummaryFailure, SummaryRequest, UsageMeter,
};

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
pub(crate) async fn summarize_middle(
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &RequestOptions<'_>,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    usage: Option<&UsageMeter>,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    // Only a summary the library recorded is updated.
    let previous = own.last_summary_in(middle).map(|i| &middle[i]);
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
pub(crate) async fn summarize_after(
    previous_summary: Option<String>,
    earlier: Option<&str>,
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &RequestOptions<'_>,
    own: &OwnSummaries,
    summarizer: &dyn Summarizer,
    usage: Option<&UsageMeter>,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    let sections = appended_sections(earlier, middle, &options.sections, own);
    let previous_summary = previous_summary.as_deref().map(strip_sections);
    let (text, attempts, warnings) = if summarizer.wants_prompt() {
        let parts = summarize_in_parts(
            previous_summary,
            middle,
            middle_start,
            origins,
            &options.parts,
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
        let custom = options.parts.custom_instructions;
        let instructions = if options.parts.continuation {
            prompt::continuation_instructions(custom)
        } else {
            prompt::instructions(previous_summary.as_deref(), custom)
        };
        let request = SummaryRequest {
            messages: middle,
            range: middle_start..middle_start + middle.len(),
            origins,
            prompt: String::new(),
            instructions,
            render_limits: RenderLimits::default(),
            previous_summary: previous_summary.clone(),
            model: options.parts.model.map(str::to_string),
            custom_instructions: custom.map(str::to_string),
            max_tokens: options.parts.max_tokens,
            attempt: 0,
            shared: None,
            usage,
            own,
        };
        let (text, attempts) =
            summarize_with_retries(summarizer, request, options.parts.retry, cancel, observer)
                .await?;
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
    append(&mut body, &sections, &options.sections);
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
