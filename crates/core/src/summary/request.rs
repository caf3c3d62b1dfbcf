//! What a summary request is asked with: the compaction's options as the summary layer reads
//! them, plain values ([`RequestOptions`]), and which request asks (`summaryRequest`).

use serde_json::{Map, Value};

use crate::carry::appended::SectionBudgets;
use crate::formats::Format;
use crate::summary::cache_evidence::CacheTokens;
use crate::summary::parts::PartsOptions;

/// Which request asks for the summary (`summaryRequest`, SPEC §4.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryRequestMode {
    /// The loop's own request plus one instruction when `agentRequest` is given and it can
    /// work (the list is in the provider's own format, the summary model is the loop's, and
    /// the list fits the model's window); the transcript otherwise. The default.
    #[default]
    Auto,
    /// The loop's own request whenever it can work; where it cannot, the transcript with a
    /// warning saying why.
    Shared,
    /// Always the transcript request: the middle rendered as text in one user message.
    Transcript,
}

impl SummaryRequestMode {
    pub fn parse(name: &str) -> Option<SummaryRequestMode> {
        match name {
            "auto" => Some(SummaryRequestMode::Auto),
            "shared" => Some(SummaryRequestMode::Shared),
            "transcript" => Some(SummaryRequestMode::Transcript),
            _ => None,
        }
    }
}

/// What a summary request is sized, asked and finished with: the compaction's options, as
/// plain values.
pub(crate) struct RequestOptions<'a> {
    /// The transcript request's sizing and asking (model, window, output budget, retries,
    /// instructions, prompt style).
    pub parts: PartsOptions<'a>,
    /// The sections written beside the summary.
    pub sections: SectionBudgets<'a>,
    /// `summaryMaxChars`: the cap of the model's text.
    pub summary_max_chars: Option<usize>,
    /// Which request asks for the summary (`summaryRequest`).
    pub summary_request: SummaryRequestMode,
    /// The body the loop sends, without its messages (`agentRequest`).
    pub agent_request: Option<&'a Map<String, Value>>,
    /// The format the list is read in.
    pub format: Format,
    /// The cache figures of the loop's last request (`usage`).
    pub usage_cache: Option<CacheTokens>,
    /// Tokens of the top-level `system` and `tools` options.
    pub extra_tokens: usize,
}
