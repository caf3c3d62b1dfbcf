//! A summary prepared ahead of the threshold (SPEC §4.11, a `Compactor` with `background`), as
//! the caller gives it back in the options: what it is and what it covers, and whether it still
//! stands for the start of a list (`check`). `resume::precompute` (the layer around the steps)
//! makes one; the summarize step uses it in place of the summary call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::archive::checkpoint::PrefixHashes;
use crate::summary::summarize::{SummaryRequestKind, SummaryUsage};

/// The format of a precomputed summary (what `resume::precompute::precompute` returns and
/// `check` reads back).
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
    /// [`PrefixHashes::hex`] of the head and of every covered message, as they were read when
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

/// Whether `precomputed` still stands for the start of `messages`: the same format, and every
/// message it covers — the head and the summarized ones — unchanged, by content. `Ok`: the
/// hashes of those messages (the checkpoint of the compaction goes on from them); `Err` says
/// why not (the reason reported with the `background_stale` event).
pub(crate) fn check(
    precomputed: &Precomputed,
    messages: &[Value],
    format: &str,
) -> Result<PrefixHashes, &'static str> {
    if precomputed.version != PRECOMPUTED_VERSION || precomputed.format != format {
        return Err("format_changed");
    }
    if precomputed.head_length >= precomputed.covered_messages {
        return Err("covered_changed");
    }
    if messages.len() < precomputed.covered_messages {
        return Err("covered_gone");
    }
    let hashes = PrefixHashes::up_to(messages, format, precomputed.covered_messages);
    if hashes.hex(precomputed.head_length).as_deref() != Some(precomputed.head_prefix.as_str()) {
        return Err("head_changed");
    }
    if hashes.hex(precomputed.covered_messages).as_deref() != Some(precomputed.prefix.as_str()) {
        return Err("covered_changed");
    }
    Ok(hashes)
}
