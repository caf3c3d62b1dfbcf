//! The options of a compaction ([`CompactOptions`]): every field with a default, and what the
//! pipeline derives from them (the threshold, the tail budget, the trigger's measure). They are
//! read from the JSON a JavaScript caller passes by the option table ([`super::table`]); the
//! steps of the pipeline read this struct, and the layers below take only the plain values
//! they need from it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::defaults;
use crate::archive;
use crate::base::error::ValidationError;
use crate::base::retry::RetryPolicy;
use crate::carry::appended::SectionBudgets;
use crate::carry::budget::SummaryBudget;
use crate::formats::Format;
use crate::model::tokens;
use crate::model::tokens::Encoding;
use crate::model::trigger::Usage;
use crate::model::trigger::{self, Calibration, Measure, TriggerInput, TriggerKind};
use crate::plan::offload::Scope;
use crate::plan::partition::TailRules;
use crate::plan::selective::SelectiveRules;
use crate::plan::strategy::Strategy;
use crate::plan::thinking::ThinkingPolicy;
use crate::providers::anthropic_compaction::AnthropicCompactionClient;
use crate::summary::cache_evidence::CacheTokens;
use crate::summary::parts::PartsOptions;
use crate::summary::request::RequestOptions;
use crate::summary::summarize::{BoxFuture, Summarizer};

/// Which prompt asks for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptStyle {
    /// Our structured prompt with fixed section headers (F-004). The default.
    #[default]
    Structured,
    /// The Agent-SDK seed's continuation-summary prompt.
    Continuation,
}

// Which request asks for the summary: the summary layer's own choice, named here with the
// other options.
pub use crate::summary::request::SummaryRequestMode;

/// What a compaction does when every summary attempt failed and the list reaches the context
/// window (`summaryFallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryFallback {
    /// The summary is written without an LLM (the extractive summary and the library's
    /// sections): the loop gets a list it can send, and the result says the summary is degraded.
    /// The default.
    #[default]
    Extractive,
    /// The PRD's rule everywhere: the input comes back unchanged with the error.
    None,
}

impl SummaryFallback {
    pub fn parse(name: &str) -> Option<SummaryFallback> {
        match name {
            "extractive" => Some(SummaryFallback::Extractive),
            "none" => Some(SummaryFallback::None),
            _ => None,
        }
    }
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
    /// 0 is the PRD's extreme case: an empty tail, the result is the head and the summary.
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
    /// The summary model's window as an earlier refusal stated it (kept per model in the
    /// session store): the summary parts are sized within it as well. Internal, not an option
    /// of the JS API.
    pub summary_window_learnt: Option<usize>,
    /// The factor between what the summary model bills and our count of a request, as its usage
    /// taught earlier (kept per model in the session store): the parts are sized with it when it
    /// is above the model family's. Internal, not an option of the JS API.
    pub summary_factor_learnt: Option<f64>,
    /// What the store's record holds of every model (`archive::learnt`, keyed by
    /// `archive::learnt::model_key`): the summary model looks itself up here once it is chosen.
    /// Internal, set by the JS layer from the record it read.
    pub learnt_models: std::collections::BTreeMap<String, LearntFacts>,
    /// What happens when every summary attempt failed and the list reaches the window.
    /// Default [`SummaryFallback::Extractive`].
    pub summary_fallback: SummaryFallback,
    /// The caller declined to pay for a summary this time (a `Compactor` backing off after
    /// `STILL_OVER_LIMIT`): no LLM is called. When the list reaches the window and
    /// `summary_fallback` allows it, the summary is written without one; otherwise the input
    /// stands with this error. Default none.
    pub summary_declined: Option<crate::base::error::CompactError>,
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
    /// The body of the request the loop sends, without its messages (`agentRequest`: `model`,
    /// `system`, `tools`, `tool_choice`, `thinking`, … for Anthropic; `model`, `tools`,
    /// `tool_choice`, `reasoning_effort`, `prompt_cache_key`, … for OpenAI). With it, the
    /// HTTP providers send that request with the loop's messages and one instruction, so the
    /// summary reads the loop's prompt cache. Default none.
    pub agent_request: Option<Arc<Map<String, Value>>>,
    /// Which request asks for the summary. Default [`SummaryRequestMode::Auto`].
    pub summary_request: SummaryRequestMode,
    /// Keep at least this many user turns in the tail. Default 0.
    pub keep_recent_turns: usize,
    /// The model the agent talks to: scales the trigger's estimate by its family's factor
    /// and gives `context_token_limit` when that is not set.
    pub agent_model: Option<String>,
    /// The usage the API reported for the last assistant message.
    pub usage: Option<Usage>,
    /// The cache tokens that usage shows (`None` when no usage was given): under
    /// `summaryRequest: 'auto'`, tokens read or written say the loop caches.
    pub usage_cache: Option<CacheTokens>,
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
    /// What the fit step may shorten when the kept messages alone keep the result over the
    /// threshold (SPEC §4.7). Default: tool results.
    pub offload: Scope,
    /// What happens to the thinking of kept assistant turns (SPEC §3). Default: auto.
    pub thinking: ThinkingPolicy,
    /// The message format (`format` option): `None` detects it from the list.
    pub format: Option<crate::formats::Format>,
    /// Anthropic's on-demand compaction as the summary writer (`provider:
    /// 'anthropic-compaction'`); made by the binding from the provider options.
    pub native_compaction: Option<Arc<AnthropicCompactionClient>>,
    /// Models on which on-demand compaction turned out to be unavailable: not tried again (a
    /// `Compactor` passes what it learned).
    pub compaction_unavailable_models: Vec<String>,
    /// Where archives go when `outputDir` is an object-store URL (then `output_dir` is that
    /// URL, for messages), or the caller's own store (the binding's `archiveStore`).
    pub archive_store: Option<Arc<crate::archive::store::ArchiveStore>>,
    /// Checkpoints (SPEC §4.11): a summary compaction records what it covered in the session's
    /// archive location, and a later call on a list starting with those messages reuses it
    /// without an LLM call. Default true: a checkpoint only saves work (its summary message is
    /// the one the same compaction produced), and reusing it keeps the provider's cache of the
    /// compacted list valid.
    pub checkpoints: bool,
    /// Checkpoints the caller holds (a `Compactor`'s, in memory), looked up beside the stored
    /// ones.
    pub known_checkpoints: Vec<Arc<crate::archive::checkpoint::Checkpoint>>,
    /// A summary prepared in the background (`Compactor` `background`), applied in place of
    /// the summary call when the messages it covers are unchanged.
    pub precomputed: Option<Arc<super::precomputed::Precomputed>>,
    /// The budget in tokens of everything the library writes into a summary message
    /// (`summaryBudgetTokens`, [`crate::carry::budget`]): the summary's text, the ledger,
    /// the user's messages, the task list, the latest failure and the recall lines. Default
    /// (`None`): 10 % of the window (of `compression.threshold` when lower), at least 4 000
    /// tokens, at most 15 % of it.
    pub summary_budget_tokens: Option<usize>,
    /// The budget in tokens of the user's messages carried verbatim into a summary
    /// (`userMessagesMaxTokens`, SPEC §4.12); `Some(0)` turns them off. Default (`None`): a
    /// quarter of the tail budget, 5 000 tokens at the defaults.
    pub user_messages_max_tokens: Option<usize>,
    /// The caller's own plan tools (`planTools`), read like the built-in ones (Claude Code
    /// `TodoWrite`, Codex `update_plan`, Gemini CLI `write_todos`, opencode `todowrite`) for
    /// the task list carried after a summary ([`crate::carry::todos`]).
    pub plan_tools: Vec<String>,
    /// The budget in tokens of that task list (`planMaxTokens`); `0` turns it off.
    pub plan_max_tokens: usize,
    /// The budget in tokens of the latest failure carried after a summary
    /// (`latestFailureMaxTokens`, [`crate::carry::latest_error`]); `0` turns it off.
    pub latest_failure_max_tokens: usize,
    /// Show the current content of the files worked on most recently after the summary
    /// (`rehydrate`, SPEC §4.12). Default off: it costs up to `max_tokens` after every
    /// compaction.
    pub rehydrate: Option<Rehydrate>,
    /// The agent's API refused this list as too long (the `overflow` option): the compaction
    /// recovers from it, and a tail budget that holds every message shrinks rather than leave
    /// nothing to summarize. Default false.
    pub overflow_recovery: bool,
}

/// The caller's file access (`rehydrate.read`): the text of a file, or `None` when there is
/// none (deleted, not a text file). An error is the caller's failure, reported as a warning.
pub trait FileReader: Send + Sync {
    fn read<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Option<String>, String>>;
}

/// The `rehydrate` option.
#[derive(Clone)]
pub struct Rehydrate {
    /// At most this many files. Default 5.
    pub max_files: usize,
    /// Each file is cut to this many tokens. Default 5 000.
    pub max_tokens_per_file: usize,
    /// All files together. Default 50 000.
    pub max_tokens: usize,
    /// The caller's `read(path)`; without it, content comes from the conversation.
    pub reader: Option<Arc<dyn FileReader>>,
}

impl Default for Rehydrate {
    fn default() -> Self {
        Rehydrate {
            max_files: 5,
            max_tokens_per_file: 5_000,
            max_tokens: 50_000,
            reader: None,
        }
    }
}

impl std::fmt::Debug for Rehydrate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rehydrate")
            .field("max_files", &self.max_files)
            .field("max_tokens_per_file", &self.max_tokens_per_file)
            .field("max_tokens", &self.max_tokens)
            .field("reader", &self.reader.is_some())
            .finish()
    }
}

/// A model's window and factor as the store's record keeps them (what its refusals and usage
/// taught earlier).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize)]
pub struct LearntFacts {
    #[serde(default)]
    pub window: Option<u64>,
    #[serde(default)]
    pub factor: Option<f64>,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            context_token_limit: defaults::CONTEXT_TOKEN_LIMIT,
            threshold_ratio: defaults::COMPACT_THRESHOLD_RATIO,
            tail_retention_ratio: defaults::TAIL_RETENTION_RATIO,
            max_retries: defaults::COMPACT_MAX_RETRIES,
            retry_base_delay: Duration::from_millis(defaults::RETRY_BASE_DELAY_MS),
            encoding: Encoding::O200kBase,
            model: None,
            summary_max_tokens: defaults::SUMMARY_MAX_TOKENS,
            summary_context_tokens: None,
            summary_window_learnt: None,
            summary_factor_learnt: None,
            learnt_models: Default::default(),
            summary_fallback: SummaryFallback::Extractive,
            summary_declined: None,
            custom_instructions: None,
            prompt_style: PromptStyle::Structured,
            output_dir: PathBuf::from(archive::DEFAULT_OUTPUT_DIR),
            session_id: archive::DEFAULT_SESSION_ID.to_string(),
            force: false,
            require_archive: false,
            system: None,
            tools: None,
            agent_request: None,
            summary_request: SummaryRequestMode::Auto,
            keep_recent_turns: 0,
            agent_model: None,
            usage: None,
            usage_cache: None,
            calibration: None,
            strategy: Strategy::Summary,
            selective_rules: SelectiveRules::default(),
            keep_recent_messages: defaults::KEEP_RECENT_MESSAGES,
            enabled: true,
            threshold_override: None,
            target_tokens: None,
            max_messages: None,
            max_tool_output_bytes: None,
            summary_max_chars: None,
            extract_memory: false,
            offload: Scope::ToolResults,
            thinking: ThinkingPolicy::Auto,
            format: None,
            native_compaction: None,
            compaction_unavailable_models: Vec::new(),
            archive_store: None,
            checkpoints: true,
            known_checkpoints: Vec::new(),
            precomputed: None,
            summary_budget_tokens: None,
            user_messages_max_tokens: None,
            plan_tools: Vec::new(),
            plan_max_tokens: defaults::PLAN_MAX_TOKENS,
            latest_failure_max_tokens: defaults::LATEST_FAILURE_MAX_TOKENS,
            rehydrate: None,
            overflow_recovery: false,
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
        // The same ranges as the options read from JSON (`options::ranges`), for callers that
        // build the struct themselves.
        let int = |name: &str, value: usize, min: usize, max: usize| {
            if value < min || value > max {
                return Err(ValidationError::argument(
                    &format!("options.{name}"),
                    format!("expected an integer from {min} to {max}, got number {value}"),
                ));
            }
            Ok(())
        };
        let ratio = |name: &str, value: f64| {
            if !(value.is_finite() && value > 0.0 && value <= 1.0) {
                return Err(ValidationError::argument(
                    &format!("options.{name}"),
                    format!("expected a number greater than 0 and at most 1, got number {value}"),
                ));
            }
            Ok(())
        };
        int(
            "contextTokenLimit",
            self.context_token_limit,
            1,
            1_000_000_000,
        )?;
        ratio("thresholdRatio", self.threshold_ratio)?;
        // 0 is allowed: the PRD's empty tail (F-005's extreme case).
        if !(self.tail_retention_ratio.is_finite()
            && (0.0..=1.0).contains(&self.tail_retention_ratio))
        {
            return Err(ValidationError::argument(
                "options.tailRetentionRatio",
                format!(
                    "expected a number from 0 to 1, got number {}",
                    self.tail_retention_ratio
                ),
            ));
        }
        int("maxRetries", self.max_retries as usize, 0, 100)?;
        int(
            "summaryMaxTokens",
            self.summary_max_tokens as usize,
            1,
            1_000_000,
        )?;
        int(
            "keepRecentMessages",
            self.keep_recent_messages,
            1,
            100_000_000,
        )?;
        if let Some(chars) = self.summary_max_chars {
            int("summaryMaxChars", chars, 1, 100_000_000)?;
        }
        if let Some(total) = self.summary_budget_tokens {
            int("summaryBudgetTokens", total, 1, 1_000_000_000)?;
        }
        if let Some(threshold) = self.threshold_override {
            int("compression.threshold", threshold, 1, 1_000_000_000)?;
        }
        archive::validate_session_id(&self.session_id)?;
        Ok(())
    }

    /// The trigger threshold in tokens (F-002): `contextTokenLimit × thresholdRatio`, or
    /// `compression.threshold` when given.
    pub fn threshold_tokens(&self) -> usize {
        let threshold = self
            .threshold_override
            .unwrap_or_else(|| token_budget(self.context_token_limit, self.threshold_ratio));
        // A window the API stated caps every threshold: past it the request is refused.
        match self.learnt_window() {
            Some(window) => threshold.min(token_budget(window, self.threshold_ratio)),
            None => threshold,
        }
    }

    /// The window the model's API stated in a refusal (a `Compactor`'s calibration, or the
    /// session store's record), when it is smaller than `contextTokenLimit`.
    pub fn learnt_window(&self) -> Option<usize> {
        self.calibration
            .as_ref()
            .and_then(|c| c.window)
            .map(|w| usize::try_from(w).unwrap_or(usize::MAX).max(1))
            .filter(|w| *w < self.context_token_limit)
    }

    /// The context window the compaction works with: `contextTokenLimit`, or the window the
    /// model's API stated when that is smaller.
    pub fn context_limit(&self) -> usize {
        self.learnt_window().unwrap_or(self.context_token_limit)
    }

    /// The tail budget in tokens (F-003): `contextTokenLimit × tailRetentionRatio`, or
    /// `compression.targetTokens` when given.
    pub fn tail_retention_tokens(&self) -> usize {
        let tail = self
            .target_tokens
            .unwrap_or_else(|| token_budget(self.context_token_limit, self.tail_retention_ratio));
        match self.learnt_window() {
            Some(window) => tail.min(token_budget(window, self.tail_retention_ratio)),
            None => tail,
        }
    }

    /// The budget of the user's messages carried verbatim into a summary: the option, else a
    /// quarter of the tail budget (the tail is what the agent keeps word for word; its own
    /// words from before are worth a fraction of that). 0: none are carried.
    ///
    /// Within the summary budget: at most its share of it ([`SummaryBudget::user_messages`]).
    pub fn user_messages_budget(&self) -> usize {
        self.user_messages_max_tokens
            .unwrap_or_else(|| self.tail_retention_tokens() / 4)
            .min(self.summary_budget().user_messages())
    }

    /// The budget of everything the library writes into a summary message: the option, else
    /// [`SummaryBudget::default_for`] the window, or for `compression.threshold` when it is
    /// lower (the summary has to fit under it).
    pub fn summary_budget(&self) -> SummaryBudget {
        match self.summary_budget_tokens {
            Some(total) => SummaryBudget { total },
            None => {
                let window = match self.threshold_override {
                    Some(threshold) => threshold.min(self.context_token_limit),
                    None => self.context_token_limit,
                };
                SummaryBudget::default_for(window)
            }
        }
    }

    /// The budget of the task list carried after a summary: `planMaxTokens`, within its share
    /// of the summary budget.
    pub fn plan_budget(&self) -> usize {
        self.plan_max_tokens.min(self.summary_budget().plan())
    }

    /// The budget of the latest failure carried after a summary: `latestFailureMaxTokens`,
    /// within its share of the summary budget.
    pub fn latest_failure_budget(&self) -> crate::carry::latest_error::Budget {
        crate::carry::latest_error::Budget {
            max_tokens: self
                .latest_failure_max_tokens
                .min(self.summary_budget().latest_failure()),
            encoding: self.encoding,
        }
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

    /// The budgets of the sections written beside a summary, as the carry layer reads them.
    pub fn section_budgets(&self) -> SectionBudgets<'_> {
        SectionBudgets {
            encoding: self.encoding,
            summary: self.summary_budget(),
            plan_tools: &self.plan_tools,
            plan_max_tokens: self.plan_max_tokens,
            plan: self.plan_budget(),
            user_messages: self.user_messages_budget(),
            latest_failure_max_tokens: self.latest_failure_max_tokens,
        }
    }

    /// What a summary request by `summarizer` is asked with, as the summary layer reads it: the
    /// facts the store kept of the summary model (the summarizer's own, else the one the options
    /// name) looked up here.
    pub(crate) fn summary_request(&self, summarizer: &dyn Summarizer) -> RequestOptions<'_> {
        let stored = summarizer
            .model()
            .or(self.model.as_deref())
            .and_then(|m| self.learnt_models.get(&archive::learnt::model_key(m)))
            .copied()
            .unwrap_or_default();
        RequestOptions {
            parts: PartsOptions {
                encoding: self.encoding,
                model: self.model.as_deref(),
                context_tokens: self.summary_context_tokens,
                window_learnt: self.summary_window_learnt,
                factor_learnt: self.summary_factor_learnt,
                stored_window: stored.window.map(|w| w as usize),
                stored_factor: stored.factor,
                max_tokens: self.summary_max_tokens,
                retry: RetryPolicy {
                    max_retries: self.max_retries,
                    base_delay: self.retry_base_delay,
                },
                custom_instructions: self.custom_instructions.as_deref(),
                continuation: self.prompt_style == PromptStyle::Continuation,
            },
            sections: self.section_budgets(),
            summary_max_chars: self.summary_max_chars,
            summary_request: self.summary_request,
            agent_request: self.agent_request.as_deref(),
            format: self.format.unwrap_or(Format::Native),
            usage_cache: self.usage_cache,
            extra_tokens: self.extra_tokens(),
        }
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
