//! A summary prepared ahead of the threshold (a `Compactor` with `background`), as the caller
//! hands it back in the options: what wrote it and what it covers. The pipeline makes one
//! (`pipeline::precompute`) and checks it still stands (`pipeline::background`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::summary::summarize::{SummaryRequestKind, SummaryUsage};

/// The format of a precomputed summary (what `pipeline::precompute` returns and `check` reads back).
pub const PRECOMPUTED_VERSION: u32 = 1;

/// A summary prepared before the threshold, with what it covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Precomputed {
    /// [`PRECOMPUTED_VERSION`].
    pub version: u32,
    /// The message format of the list it was made from.
    pub format: String,
    /// The head kept before the summary, and where the summarized messages end.
    pub head_length: usize,
    pub covered_messages: usize,
    /// `PrefixHashes::hex` of the head and of every covered message, as they were read when
    /// the summary was asked for.
    pub head_prefix: String,
    pub prefix: String,
    pub summary: PrecomputedSummary,
}

/// What wrote the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PrecomputedSummary {
    /// Our own summary (model text + ledger).
    #[serde(rename_all = "camelCase")]
    Summary {
        body: String,
        attempts: u32,
        rounds: u32,
        warnings: Vec<String>,
        usage: Option<SummaryUsage>,
        request: SummaryRequestKind,
        provider: String,
        model: Option<String>,
        /// Why on-demand compaction was not used, when it was asked for.
        native_fallback: Option<String>,
        native_unavailable: Option<String>,
    },
    /// Anthropic's signed compaction block, with the ledger beside it.
    #[serde(rename_all = "camelCase")]
    Native {
        block: Value,
        ledger: String,
        attempts: u32,
        model: String,
    },
}
