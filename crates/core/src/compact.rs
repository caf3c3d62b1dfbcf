//! The compaction pipeline: trigger → partition → summary → archive → assembly → stats.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::archive;
use crate::error::{CompactError, ErrorCode, ValidationError};
use crate::ledger::{Ledger, LEDGER_HEADER};
use crate::memory::Extracted;
use crate::partition::{Partition, TailRules};
use crate::prompt::{self, RenderLimits};
use crate::selective::SelectiveRules;
use crate::strategy::{Removal, Strategy};
use crate::summarize::{
    summarize_with_retries, AttemptObserver, RetryPolicy, Summarizer, SummaryFailure,
    SummaryRequest,
};
use crate::tokens::{self, Encoding};
use crate::trigger::{self, Calibration, Measure, TriggerInput, TriggerKind, Usage};

/// Which prompt asks for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptStyle {
    /// Our structured prompt with fixed section headers (F-004). The default.
    #[default]
    Structured,
    /// The Agent-SDK seed's continuation-summary prompt.
    Continuation,
}

/// Options of a compaction. Every field has a default (`CompactOptions::default()`), so zero
/// configuration works.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// The model's context window in tokens. Default 200 000 (PRD `CONTEXT_TOKEN_LIMIT`).
    pub context_token_limit: usize,
    /// Compact when tokens ≥ limit × this. Default 0.92 (PRD `COMPACT_THRESHOLD_RATIO`).
    pub threshold_ratio: f64,
    /// The tail keeps about limit × this many tokens. Default 0.10 (PRD `TAIL_RETENTION_RATIO`).
    pub tail_retention_ratio: f64,
    /// Retries after the first summary attempt. Default 2 (PRD `COMPACT_MAX_RETRIES`).
    pub max_retries: u32,
    /// The first retry backoff (doubling, ×0.75–1 jitter). Default 500 ms.
    pub retry_base_delay: Duration,
    /// The tokenizer. Default `o200k_base`.
    pub encoding: Encoding,
    /// The summary model (passed to the summarizer).
    pub model: Option<String>,
    /// The output budget of the summary in tokens. Default 4096.
    pub summary_max_tokens: u32,
    /// The summary model's context window; by default from the model table.
    pub summary_context_tokens: Option<usize>,
    /// Appended to the summary instructions.
    pub custom_instructions: Option<String>,
    /// Which prompt to use. Default structured.
    pub prompt_style: PromptStyle,
    /// Where archives go. Default `./.context-compact`.
    pub output_dir: PathBuf,
    /// The session whose archives these are. Default `default`.
    pub session_id: String,
    /// Compact even below the threshold. Default false.
    pub force: bool,
    /// Skip compaction (with `ARCHIVE_FAILED`) when the archive cannot be written. Default false.
    pub require_archive: bool,
    /// Anthropic's top-level system prompt: counted into the trigger, never changed.
    pub system: Option<Value>,
    /// Tool definitions: counted into the trigger, never changed.
    pub tools: Option<Value>,
    /// Keep at least this many user turns in the tail. Default 0.
    pub keep_recent_turns: usize,
    /// The model the agent talks to: scales the trigger's estimate by its family's factor
    /// and gives `context_token_limit` when that is not set.
    pub agent_model: Option<String>,
    /// The usage the API reported for the last assistant message.
    pub usage: Option<Usage>,
    /// What a `Compactor` learned from earlier usage.
    pub calibration: Option<Calibration>,
    /// How to compact. Default [`Strategy::Summary`].
    pub strategy: Strategy,
    /// The rules of [`Strategy::Selective`]. Default: the agent-SDK seed's table.
    pub selective_rules: SelectiveRules,
    /// How many recent messages `keep-recent` / `keep-system-and-recent` keep. Default 20
    /// (SanBot's `keepRecentMessages`).
    pub keep_recent_messages: usize,
    /// `compression.enabled` (type seed): false never compacts, whatever else is set.
    /// Default true.
    pub enabled: bool,
    /// `compression.threshold`: an absolute token threshold replacing limit × ratio.
    pub threshold_override: Option<usize>,
    /// `compression.targetTokens`: the tail budget of a summary and the `sliding-window`
    /// window, replacing limit × tailRetentionRatio.
    pub target_tokens: Option<usize>,
    /// Also compact when there are more messages than this (SanBot). Default off.
    pub max_messages: Option<usize>,
    /// Also compact when the tool results' text exceeds this many UTF-8 bytes (SanBot).
    /// Default off.
    pub max_tool_output_bytes: Option<usize>,
    /// Cap on the length of the model-written summary, in characters (Pi Agent seed's
    /// `summary_max_length`); the ledger is kept whole. Default none.
    pub summary_max_chars: Option<usize>,
    /// Append key information of the compacted messages to `<outputDir>/<sessionId>/extracted/`
    /// (SanBot). Default false.
    pub extract_memory: bool,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            context_token_limit: crate::CONTEXT_TOKEN_LIMIT,
            threshold_ratio: crate::COMPACT_THRESHOLD_RATIO,
            tail_retention_ratio: crate::TAIL_RETENTION_RATIO,
            max_retries: crate::COMPACT_MAX_RETRIES,
            retry_base_delay: Duration::from_millis(500),
            encoding: Encoding::O200kBase,
            model: None,
            summary_max_tokens: 4096,
            summary_context_tokens: None,
            custom_instructions: None,
            prompt_style: PromptStyle::Structured,
            output_dir: PathBuf::from(archive::DEFAULT_OUTPUT_DIR),
            session_id: archive::DEFAULT_SESSION_ID.to_string(),
            force: false,
            require_archive: false,
            system: None,
            tools: None,
            keep_recent_turns: 0,
            agent_model: None,
            usage: None,
            calibration: None,
            strategy: Strategy::Summary,
            selective_rules: SelectiveRules::default(),
            keep_recent_messages: 20,
            enabled: true,
            threshold_override: None,
            target_tokens: None,
            max_messages: None,
            max_tool_output_bytes: None,
            summary_max_chars: None,
            extract_memory: false,
        }
    }
}

/// `limit × ratio` as an exact token count: the product rounded up, after snapping away
/// floating-point noise so that 200 000 × 0.92 is 184 000, not 184 000.000…03.
pub fn token_budget(limit: usize, ratio: f64) -> usize {
    let product = limit as f64 * ratio;
    let snapped = product.round();
    if (product - snapped).abs() < 1e-6 {
        snapped as usize
    } else {
        product.ceil() as usize
    }
}

impl CompactOptions {
    /// Checks ranges; called before any work.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.context_token_limit == 0 {
            return Err(ValidationError::argument(
                "contextTokenLimit",
                "must be a positive integer",
            ));
        }
        if !(self.threshold_ratio > 0.0 && self.threshold_ratio.is_finite()) {
            return Err(ValidationError::argument(
                "thresholdRatio",
                "must be a number greater than 0",
            ));
        }
        if !(0.0..=1.0).contains(&self.tail_retention_ratio) {
            return Err(ValidationError::argument(
                "tailRetentionRatio",
                "must be between 0 and 1",
            ));
        }
        if self.summary_max_tokens == 0 {
            return Err(ValidationError::argument(
                "summaryMaxTokens",
                "must be a positive integer",
            ));
        }
        if self.keep_recent_messages == 0 {
            return Err(ValidationError::argument(
                "keepRecentMessages",
                "must be a positive integer",
            ));
        }
        if self.summary_max_chars == Some(0) {
            return Err(ValidationError::argument(
                "summaryMaxChars",
                "must be a positive integer",
            ));
        }
        if self.threshold_override == Some(0) {
            return Err(ValidationError::argument(
                "compression.threshold",
                "must be a positive integer",
            ));
        }
        archive::validate_session_id(&self.session_id)?;
        Ok(())
    }

    /// The trigger threshold in tokens (F-002): `contextTokenLimit × thresholdRatio`, or
    /// `compression.threshold` when given.
    pub fn threshold_tokens(&self) -> usize {
        self.threshold_override
            .unwrap_or_else(|| token_budget(self.context_token_limit, self.threshold_ratio))
    }

    /// The tail budget in tokens (F-003): `contextTokenLimit × tailRetentionRatio`, or
    /// `compression.targetTokens` when given.
    pub fn tail_retention_tokens(&self) -> usize {
        self.target_tokens
            .unwrap_or_else(|| token_budget(self.context_token_limit, self.tail_retention_ratio))
    }

    /// The tail rules of the options.
    pub fn tail_rules(&self) -> TailRules {
        TailRules {
            keep_recent_turns: self.keep_recent_turns,
        }
    }

    /// What fires a compaction, in order: the token estimate, `maxMessages`,
    /// `maxToolOutputBytes`, then `force`. `None`: nothing (or `compression.enabled` is false).
    /// `tool_output_bytes` is only looked at when `maxToolOutputBytes` is set.
    pub fn fired(
        &self,
        measure: &Measure,
        message_count: usize,
        tool_output_bytes: usize,
    ) -> Option<TriggerKind> {
        if !self.enabled || message_count == 0 {
            None
        } else if measure.reached() {
            Some(TriggerKind::Tokens)
        } else if self.max_messages.is_some_and(|max| message_count > max) {
            Some(TriggerKind::Messages)
        } else if self
            .max_tool_output_bytes
            .is_some_and(|max| tool_output_bytes > max)
        {
            Some(TriggerKind::ToolOutput)
        } else if self.force {
            Some(TriggerKind::Force)
        } else {
            None
        }
    }

    /// The model whose billing the trigger estimates: `agent_model`, else `model`.
    pub fn trigger_model(&self) -> Option<&str> {
        self.agent_model.as_deref().or(self.model.as_deref())
    }

    /// The trigger's estimate for `messages` with their token `counts` (SPEC §4.2).
    pub fn measure(&self, messages: &[Value], counts: &[usize]) -> Measure {
        let after = trigger::last_assistant_index(messages)
            .map(|a| counts[a + 1..].iter().sum::<usize>() as u64);
        trigger::measure(
            TriggerInput {
                message_tokens: counts.iter().sum::<usize>() as u64,
                tokens_after_last_assistant: after,
                extra_tokens: self.extra_tokens() as u64,
            },
            self.threshold_tokens() as u64,
            self.usage,
            self.trigger_model(),
            self.calibration.as_ref(),
        )
    }

    /// Tokens of the top-level `system` and `tools` options.
    pub fn extra_tokens(&self) -> usize {
        self.system
            .as_ref()
            .map_or(0, |s| tokens::count_system(self.encoding, s))
            + self
                .tools
                .as_ref()
                .map_or(0, |t| tokens::count_tools(self.encoding, t))
    }
}

/// The PRD's statistics (F-008). All zero when nothing was compacted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactStats {
    /// Tokens of the messages before compaction (raw tokenizer count).
    pub original_token_count: usize,
    /// Tokens of the returned messages (`countTokens(result.messages)`).
    pub compacted_token_count: usize,
    /// compactedTokenCount / originalTokenCount.
    pub compaction_ratio: f64,
    /// Messages replaced by the summary (the middle).
    pub compacted_message_count: usize,
    /// Messages kept verbatim (head + tail).
    pub retained_message_count: usize,
}

/// One element of the compacted list: a message of the input (by index) or a new one.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Original(usize),
    New(Value),
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactOutcome {
    pub compacted: bool,
    /// The new message list; empty when `compacted` is false (the input stands).
    pub pieces: Vec<Piece>,
    /// The content of the summary message.
    pub summary: Option<String>,
    pub archive_path: Option<PathBuf>,
    pub stats: CompactStats,
    pub error: Option<CompactError>,
    pub warnings: Vec<String>,
    pub partition: Option<Partition>,
    /// Tokens the trigger saw (messages + system + tools) and the threshold.
    pub trigger_tokens: usize,
    pub threshold_tokens: usize,
    /// Which summarizer was used, when one was called.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Summary attempts made.
    pub attempts: u32,
    /// The trigger's estimate (raw count, estimate, source).
    pub measure: Option<Measure>,
    /// The strategy that produced the result (a selective compaction that fell back to a
    /// full summary says `Summary`, with `fallback`).
    pub strategy: Strategy,
    /// What fired the compaction; `None` when nothing did.
    pub trigger: Option<TriggerKind>,
    /// Summary rounds run (recursive compaction, Pi Agent seed): 0 without a summary.
    pub rounds: u32,
    /// What a strategy without a summary removed or cleared.
    pub removed: Option<Removal>,
    /// A selective compaction was not enough and fell back to a full summary.
    pub fallback: bool,
    /// What `extractMemory` appended.
    pub extracted: Option<Extracted>,
}

impl CompactOutcome {
    pub(crate) fn skipped(
        trigger_tokens: usize,
        threshold_tokens: usize,
        error: Option<CompactError>,
    ) -> Self {
        CompactOutcome {
            compacted: false,
            pieces: Vec::new(),
            summary: None,
            archive_path: None,
            stats: CompactStats::default(),
            error,
            warnings: Vec::new(),
            partition: None,
            trigger_tokens,
            threshold_tokens,
            provider: None,
            model: None,
            attempts: 0,
            measure: None,
            strategy: Strategy::Summary,
            trigger: None,
            rounds: 0,
            removed: None,
            fallback: false,
            extracted: None,
        }
    }
}

/// The caller's signal fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted;

/// Builds `[...head, { role: 'user', content: summary }, ...tail]` (F-005).
pub fn assemble_messages(head: &[Value], summary: &str, tail: &[Value]) -> Vec<Value> {
    if summary.trim().is_empty() {
        tracing::warn!("assembling messages with an empty summary");
    }
    let mut out = Vec::with_capacity(head.len() + 1 + tail.len());
    out.extend_from_slice(head);
    out.push(summary_message(summary));
    out.extend_from_slice(tail);
    out
}

/// `{ role: 'user', content: summary }`.
pub fn summary_message(summary: &str) -> Value {
    json!({ "role": "user", "content": summary })
}

/// The context window a summary model can read, for bounding the transcript.
pub fn summary_model_window(model: &str) -> Option<usize> {
    crate::models::context_window(model)
}

/// Compacts `messages` (already validated). `counts` are their token counts when the caller
/// has them (the `Compactor` cache), otherwise they are computed.
///
/// Every attempt over the threshold is recorded in the session's audit log, and a compaction
/// also leaves its metadata and summary beside the archive (see [`archive`]); below the
/// threshold nothing is written. Failures to write these records are warnings.
///
/// [`crate::pipeline::compact_with_hooks`] is the same with the confirmation hook and events.
pub async fn compact(
    messages: &[Value],
    counts: Option<Vec<usize>>,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<CompactOutcome, Aborted> {
    crate::pipeline::compact_with_hooks(
        messages,
        counts,
        options,
        summarizer,
        cancel,
        observer,
        &crate::pipeline::NoHooks,
    )
    .await
}

/// One summary round: summarizes the middle of `plan` (not empty), archives it and builds the
/// outcome (not recorded). `trigger_tokens` / `threshold_tokens` are reported as given;
/// `origins` maps `messages` to the compaction's input (see [`SummaryRequest::origins`]).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summary_round(
    messages: &[Value],
    origins: &[Option<usize>],
    counts: &[usize],
    plan: Partition,
    trigger_tokens: usize,
    threshold_tokens: usize,
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<CompactOutcome, Aborted> {
    let message_tokens: usize = counts.iter().sum();
    let middle = &messages[plan.middle()];
    let summary = match summarize_middle(
        middle,
        plan.head_len,
        &origins[plan.middle()],
        options,
        summarizer,
        cancel,
        observer,
    )
    .await
    {
        Ok(summary) => summary,
        Err(SummaryFailure::Aborted) => return Err(Aborted),
        Err(SummaryFailure::Failed(error)) => {
            let attempts = error.attempts;
            let mut outcome =
                CompactOutcome::skipped(trigger_tokens, threshold_tokens, Some(error));
            outcome.partition = Some(plan);
            outcome.provider = Some(summarizer.provider().to_string());
            outcome.model = summarizer.model().map(str::to_string);
            outcome.attempts = attempts;
            return Ok(outcome);
        }
    };

    let mut warnings = Vec::new();
    let archive_path =
        match archive::persist_messages(middle, &options.output_dir, &options.session_id) {
            Ok(file) => Some(file.path),
            Err(e) => {
                let message = format!(
                    "could not archive the {} compacted messages in {}: {e}",
                    middle.len(),
                    options.output_dir.display()
                );
                if options.require_archive {
                    tracing::error!("{message}; compaction skipped (requireArchive)");
                    let mut outcome = CompactOutcome::skipped(
                        trigger_tokens,
                        threshold_tokens,
                        Some(CompactError::new(ErrorCode::ArchiveFailed, message)),
                    );
                    outcome.partition = Some(plan);
                    outcome.attempts = summary.attempts;
                    return Ok(outcome);
                }
                tracing::warn!("{message}");
                warnings.push(message);
                None
            }
        };

    let archive_display = archive_path.as_ref().map(|p| p.display().to_string());
    let content =
        prompt::summary_message_text(middle.len(), archive_display.as_deref(), &summary.body);
    let summary_tokens = tokens::count_text(options.encoding, &content);
    let head_tokens: usize = counts[..plan.head_len].iter().sum();
    let tail_tokens: usize = counts[plan.tail_start..].iter().sum();
    let compacted_token_count = head_tokens + summary_tokens + tail_tokens;

    let mut pieces: Vec<Piece> = (0..plan.head_len).map(Piece::Original).collect();
    pieces.push(Piece::New(summary_message(&content)));
    pieces.extend((plan.tail_start..messages.len()).map(Piece::Original));

    Ok(CompactOutcome {
        compacted: true,
        pieces,
        stats: CompactStats {
            original_token_count: message_tokens,
            compacted_token_count,
            compaction_ratio: if message_tokens == 0 {
                0.0
            } else {
                compacted_token_count as f64 / message_tokens as f64
            },
            compacted_message_count: middle.len(),
            retained_message_count: plan.head_len + (messages.len() - plan.tail_start),
        },
        summary: Some(content),
        archive_path,
        error: None,
        warnings,
        partition: Some(plan),
        trigger_tokens,
        threshold_tokens,
        provider: Some(summarizer.provider().to_string()),
        model: summarizer.model().map(str::to_string),
        attempts: summary.attempts,
        measure: None,
        strategy: Strategy::Summary,
        trigger: None,
        rounds: 1,
        removed: None,
        fallback: false,
        extracted: None,
    })
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
pub async fn summarize_middle(
    middle: &[Value],
    middle_start: usize,
    origins: &[Option<usize>],
    options: &CompactOptions,
    summarizer: &dyn Summarizer,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Summary, SummaryFailure> {
    // Notices (strategies without a summary) start like summaries but hold none.
    let previous = middle
        .iter()
        .rev()
        .find(|m| prompt::is_summary_message(m) && !prompt::is_notice(m));
    let previous_summary = previous.and_then(prompt::summary_body).map(str::to_string);
    let previous_ledger = previous_summary.as_deref().and_then(Ledger::parse);
    let ledger = match &previous_ledger {
        Some(earlier) => Ledger::extract(middle).merged_after(earlier),
        None => Ledger::extract(middle),
    };
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
        plan_chunks(middle, budget_chars)
    } else {
        vec![Chunk {
            range: 0..middle.len(),
            limits: RenderLimits::default(),
        }]
    };

    let mut running_summary = previous_summary.as_deref().map(strip_ledger);
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
        };
        if summarizer.wants_prompt() && !summarizer.renders_prompt_on_demand() {
            request.prompt = request.render_prompt();
        }
        let (text, used) =
            summarize_with_retries(summarizer, request, policy, cancel, observer).await?;
        attempts += used;
        running_summary = Some(strip_ledger(&unwrap_summary_tags(&text)));
    }
    let mut body = running_summary.unwrap_or_default();
    if let Some(max) = options.summary_max_chars {
        body = cap_chars(&body, max);
    }
    if !ledger.is_empty() {
        body.push_str("\n\n");
        body.push_str(&ledger.render());
    }
    Ok(Summary { body, attempts })
}

/// A part of the middle summarized in one request.
struct Chunk {
    range: std::ops::Range<usize>,
    limits: RenderLimits,
}

/// Tool results longer than this are shortened first when the transcript is too long.
const SHORTENED_TOOL_RESULT_CHARS: usize = 2_000;

fn plan_chunks(middle: &[Value], budget_chars: Option<usize>) -> Vec<Chunk> {
    let Some(budget) = budget_chars else {
        return vec![Chunk {
            range: 0..middle.len(),
            limits: RenderLimits::default(),
        }];
    };
    let full = RenderLimits::default();
    let sizes: Vec<usize> = middle
        .iter()
        .map(|m| approx_rendered_chars(m, full))
        .collect();
    if sizes.iter().sum::<usize>() <= budget {
        return vec![Chunk {
            range: 0..middle.len(),
            limits: full,
        }];
    }
    let short = RenderLimits {
        max_tool_result_chars: SHORTENED_TOOL_RESULT_CHARS,
    };
    let sizes: Vec<usize> = middle
        .iter()
        .map(|m| approx_rendered_chars(m, short))
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

fn approx_rendered_chars(message: &Value, limits: RenderLimits) -> usize {
    prompt::render_transcript(std::slice::from_ref(message), limits).len()
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

fn strip_ledger(summary: &str) -> String {
    match summary.find(LEDGER_HEADER) {
        Some(pos) => summary[..pos].trim_end().to_string(),
        None => summary.trim().to_string(),
    }
}

fn unwrap_summary_tags(text: &str) -> String {
    match (text.find("<summary>"), text.rfind("</summary>")) {
        (Some(start), Some(end)) if end > start => {
            text[start + "<summary>".len()..end].trim().to_string()
        }
        _ => text.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::{AttemptError, BoxFuture, NoObserver};
    use std::sync::Mutex;

    /// (prompt, previous summary, range) of each request.
    type Seen = (String, Option<String>, std::ops::Range<usize>);

    struct Recording {
        requests: Mutex<Vec<Seen>>,
        reply: String,
    }

    impl Summarizer for Recording {
        fn summarize<'a>(
            &'a self,
            request: &'a SummaryRequest<'a>,
        ) -> BoxFuture<'a, Result<String, AttemptError>> {
            self.requests.lock().unwrap().push((
                request.prompt.clone(),
                request.previous_summary.clone(),
                request.range.clone(),
            ));
            let reply = self.reply.clone();
            Box::pin(async move { Ok(reply) })
        }
        fn provider(&self) -> &str {
            "custom"
        }
    }

    fn recording(reply: &str) -> Recording {
        Recording {
            requests: Mutex::new(Vec::new()),
            reply: reply.into(),
        }
    }

    fn conversation(turns: usize, words: usize) -> Vec<Value> {
        let mut messages = vec![json!({"role": "system", "content": "You are helpful."})];
        for i in 0..turns {
            messages.push(json!({"role": "user", "content": format!("question {i} {}", "word ".repeat(words))}));
            messages.push(json!({"role": "assistant", "content": format!("answer {i} {}", "word ".repeat(words))}));
        }
        messages
    }

    fn options(limit: usize) -> CompactOptions {
        let dir = std::env::temp_dir().join(format!("cc-test-{}", std::process::id()));
        CompactOptions {
            context_token_limit: limit,
            output_dir: dir,
            ..CompactOptions::default()
        }
    }

    async fn run(
        messages: &[Value],
        options: &CompactOptions,
        summarizer: &dyn Summarizer,
    ) -> CompactOutcome {
        compact(
            messages,
            None,
            options,
            summarizer,
            &CancellationToken::new(),
            &NoObserver,
        )
        .await
        .unwrap()
    }

    #[test]
    fn budgets_are_exact_at_the_boundary() {
        assert_eq!(token_budget(200_000, 0.92), 184_000);
        assert_eq!(token_budget(200_000, 0.10), 20_000);
        assert_eq!(token_budget(999, 0.92), 920);
        assert_eq!(token_budget(180_000, 0.92), 165_600);
    }

    #[tokio::test]
    async fn below_threshold_nothing_happens() {
        let messages = conversation(3, 5);
        let s = recording("x");
        let outcome = run(&messages, &options(200_000), &s).await;
        assert!(!outcome.compacted);
        assert_eq!(outcome.stats, CompactStats::default());
        assert!(outcome.error.is_none());
        assert!(s.requests.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn at_the_threshold_compacts_and_reports_exact_stats() {
        let messages = conversation(20, 50);
        let total = tokens::count_messages(Encoding::O200kBase, &messages);
        // A limit whose 92 % is exactly the total: compacts (≥).
        let mut opts = options(1);
        opts.threshold_ratio = 1.0;
        opts.context_token_limit = total;
        opts.tail_retention_ratio = 0.1;
        let s = recording("## Goal\nanswer questions");
        let outcome = run(&messages, &opts, &s).await;
        assert!(outcome.compacted, "{outcome:?}");
        let plan = outcome.partition.unwrap();
        assert_eq!(plan.head_len, 1);
        let rebuilt: Vec<Value> = outcome
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Original(i) => messages[*i].clone(),
                Piece::New(v) => v.clone(),
            })
            .collect();
        assert_eq!(rebuilt[0], messages[0]);
        assert_eq!(rebuilt[1]["role"], "user");
        assert_eq!(
            rebuilt[1]["content"].as_str().unwrap(),
            outcome.summary.as_deref().unwrap()
        );
        assert_eq!(outcome.stats.original_token_count, total);
        assert_eq!(
            outcome.stats.compacted_token_count,
            tokens::count_messages(Encoding::O200kBase, &rebuilt)
        );
        assert_eq!(outcome.stats.compacted_message_count, plan.middle_len());
        assert_eq!(
            outcome.stats.retained_message_count,
            messages.len() - plan.middle_len()
        );
        assert!(outcome.archive_path.is_some());
        // One token fewer: below the threshold.
        opts.context_token_limit = total + 1;
        let outcome = run(&messages, &opts, &s).await;
        assert!(!outcome.compacted);
    }

    #[tokio::test]
    async fn a_previous_summary_is_updated_not_summarized_as_chat() {
        let mut messages = conversation(10, 30);
        let earlier = prompt::summary_message_text(5, None, "## Goal\nthe old goal");
        messages.insert(1, json!({"role": "user", "content": earlier}));
        let s = recording("## Goal\nnew");
        let mut opts = options(100);
        opts.force = true;
        let outcome = run(&messages, &opts, &s).await;
        assert!(outcome.compacted);
        let requests = s.requests.lock().unwrap();
        let (prompt_text, previous, _) = &requests[0];
        assert_eq!(previous.as_deref(), Some("## Goal\nthe old goal"));
        assert!(prompt_text.contains("<previous_summary>\n## Goal\nthe old goal"));
        assert!(!prompt_text.contains("[user]\n[context-compact]"));
    }

    #[tokio::test]
    async fn an_oversized_middle_is_summarized_in_chunks() {
        let messages = conversation(200, 400);
        let s = recording("## Goal\nchunk summary");
        let mut opts = options(100);
        opts.force = true;
        opts.summary_context_tokens = Some(12_000);
        let outcome = run(&messages, &opts, &s).await;
        assert!(outcome.compacted);
        let requests = s.requests.lock().unwrap();
        assert!(requests.len() > 1, "{} requests", requests.len());
        for (i, (prompt_text, previous, _)) in requests.iter().enumerate() {
            assert!(
                prompt_text.len() <= (12_000 - 4096) * 3 + 10_000,
                "chunk {i} too long: {}",
                prompt_text.len()
            );
            assert_eq!(previous.is_some(), i > 0);
        }
        // Chunks cover the middle in order without gaps.
        let plan = outcome.partition.unwrap();
        assert_eq!(requests.first().unwrap().2.start, plan.head_len);
        assert_eq!(requests.last().unwrap().2.end, plan.tail_start);
        for pair in requests.windows(2) {
            assert_eq!(pair[0].2.end, pair[1].2.start);
        }
    }

    #[tokio::test]
    async fn unwritable_archive_degrades_or_fails_closed() {
        let messages = conversation(10, 30);
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut opts = options(100);
        opts.force = true;
        opts.output_dir = file.path().join("under-a-file");
        let s = recording("## Goal\nx");
        let outcome = run(&messages, &opts, &s).await;
        assert!(outcome.compacted);
        assert!(outcome.archive_path.is_none());
        assert_eq!(outcome.warnings.len(), 1);
        opts.require_archive = true;
        let outcome = run(&messages, &opts, &s).await;
        assert!(!outcome.compacted);
        assert_eq!(outcome.error.unwrap().code, ErrorCode::ArchiveFailed);
    }
}
