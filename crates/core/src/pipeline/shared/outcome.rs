//! What a compaction did: the result's statistics (PRD F-008), the pieces of the new list,
//! and everything reported beside them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::archive::checkpoint::Checkpoint;
use crate::base::error::CompactError;
use crate::carry::memory::Extracted;
use crate::model::trigger::{Measure, TriggerKind};
use crate::plan::offload::Offloaded;
use crate::plan::partition::Partition;
use crate::plan::strategy::{Removal, Strategy};
use crate::summary::summarize::{SummaryModelLearnt, SummaryRequestKind, SummaryUsage};

pub use crate::model::piece::Piece;

/// The PRD's statistics (F-008). All zero when nothing was compacted.
///
/// The three message counts sort every message of the input (the caller's items: Responses
/// items, Gemini contents, … in the other formats) into exactly one of three, so
/// `compacted + retained + removed` is the input's length:
/// - *compacted*: a message we add stands for it — the summary, the signed compaction block of
///   on-demand compaction, or a strategy's notice — and names the archive that holds it. This is
///   the number that message's header states ("Earlier conversation (N messages) …").
/// - *retained*: it is in the result, unchanged or changed in place (a tool result shortened or
///   cleared, thinking removed).
/// - *removed*: it is left out and nothing stands for it (an assistant turn holding only
///   thinking after the summary, which the thinking policy leaves out; what a custom strategy
///   drops).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactStats {
    /// Tokens of the messages before compaction (raw tokenizer count).
    pub original_token_count: usize,
    /// Tokens of the returned messages (`countTokens(result.messages)`).
    pub compacted_token_count: usize,
    /// compactedTokenCount / originalTokenCount.
    pub compaction_ratio: f64,
    /// Messages the summary, compaction block or notice stands for (the PRD's middle; for a
    /// strategy without a summary, what it removed behind its notice).
    pub compacted_message_count: usize,
    /// Messages of the input present in the result, unchanged or changed in place (the PRD's
    /// head + tail, and what a strategy without a summary keeps of the region).
    pub retained_message_count: usize,
    /// Messages left out with nothing standing for them. (Records written before this count
    /// existed read as 0.)
    #[serde(default)]
    pub removed_message_count: usize,
}

impl CompactStats {
    /// Sets the three message counts of a result. `sizes[i]` is how many of the caller's items
    /// input message `i` is (1 for a list read as it is; a view message may stand for several);
    /// `region` is the part of the input the message we added stands for; `present` gives, for
    /// each message of the result that is an input message (unchanged or changed in place),
    /// its index and how many of its items are in the result. Items of a present message that
    /// the change left out count as compacted inside the region (its archive holds them) and as
    /// removed after it.
    pub(crate) fn set_message_counts(
        &mut self,
        sizes: &[usize],
        region: std::ops::Range<usize>,
        present: impl IntoIterator<Item = (usize, usize)>,
    ) {
        let mut kept: Vec<Option<usize>> = vec![None; sizes.len()];
        for (index, items) in present {
            if let Some(slot) = kept.get_mut(index) {
                *slot = Some(slot.unwrap_or(0) + items);
            }
        }
        let (mut compacted, mut retained, mut removed) = (0, 0, 0);
        for (index, (&size, kept)) in sizes.iter().zip(&kept).enumerate() {
            let kept = kept.unwrap_or(0).min(size);
            retained += kept;
            if region.contains(&index) {
                compacted += size - kept;
            } else {
                removed += size - kept;
            }
        }
        self.compacted_message_count = compacted;
        self.retained_message_count = retained;
        self.removed_message_count = removed;
    }
}

/// What a compaction did. As JSON (what the addon hands to the JS layer, `lib/messages/result.js`):
/// camelCase fields, the partition as `headLength` and `tailStart`; the internal ones skipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactOutcome {
    pub compacted: bool,
    /// The new message list; empty when `compacted` is false (the input stands).
    pub pieces: Vec<Piece>,
    /// For each of `pieces`, the input message it is, unchanged or changed in place; `None`
    /// for a message the library wrote (the summary or notice). Said of the pipeline's list:
    /// [`crate::formats::Input::outcome`] uses it to count the caller's items, then drops it.
    #[serde(skip)]
    pub(crate) piece_sources: Vec<Option<usize>>,
    /// The content of the summary message.
    pub summary: Option<String>,
    pub archive_path: Option<PathBuf>,
    pub stats: CompactStats,
    pub error: Option<CompactError>,
    pub warnings: Vec<String>,
    #[serde(flatten, serialize_with = "partition_fields")]
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
    /// Kept messages whose oversized text was shortened to fit (SPEC §4.7).
    pub offloaded: Vec<Offloaded>,
    /// Where the originals of the offloaded messages are.
    pub offload_archive_path: Option<PathBuf>,
    /// Every change the thinking policy made to a kept message (SPEC §3), in the spirit of
    /// Anthropic's `input_transformations`.
    pub transformations: Vec<Transformation>,
    /// Where the originals of the kept messages whose thinking was removed are.
    pub thinking_archive_path: Option<PathBuf>,
    /// The model on which Anthropic's on-demand compaction turned out to be unavailable (a
    /// `Compactor` does not try it again).
    #[serde(rename = "compactionUnavailable")]
    pub native_unavailable: Option<String>,
    /// What the summary calls cost (`result.summaryUsage`); `None` when no LLM was called.
    pub summary_usage: Option<SummaryUsage>,
    /// What the summary model's answers taught in this compaction (`result.summaryModelLearnt`):
    /// the window a refusal stated, the factor between what it billed and our count. `None`
    /// when they taught nothing.
    pub summary_model_learnt: Option<SummaryModelLearnt>,
    /// Which request wrote the summary that was used (`result.summaryRequest`); `None` when
    /// no summary request was made.
    pub summary_request: Option<SummaryRequestKind>,
    /// The summary was written without an LLM because every summary attempt failed, or a
    /// `Compactor` declined to pay for one, while the list reached the window
    /// (`result.summaryFallback`); `None` when the summary is the one asked for.
    pub summary_fallback: Option<SummaryFallbackReport>,
    /// What checkpoints did for this call (`result.checkpoint`); `None` when none was reused
    /// or recorded.
    pub checkpoint: Option<CheckpointReport>,
    /// The checkpoint this call recorded or reused, for a caller that keeps them in memory
    /// (a `Compactor`'s shelf, in the binding: never sent to JS, whose every call would pay
    /// for its summary).
    #[serde(skip)]
    pub checkpoint_record: Option<Checkpoint>,
    /// What happened to a summary prepared in the background (`None`: none was given).
    pub background: Option<BackgroundReport>,
    /// The files whose current content follows the summary (`rehydrate`), last touched first.
    pub rehydrated: Vec<RehydratedFile>,
    /// The ledger of everything the summary stands for, before it was shortened to its share
    /// of the summary budget: recorded beside the archive, where the recall tool reads it.
    #[serde(skip)]
    pub full_ledger: Option<String>,
}

/// The partition as the result states it: where the head ends and the tail starts.
fn partition_fields<S: serde::Serializer>(
    partition: &Option<Partition>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(2))?;
    map.serialize_entry("headLength", &partition.map(|p| p.head_len))?;
    map.serialize_entry("tailStart", &partition.map(|p| p.tail_start))?;
    map.end()
}

/// A summary written without an LLM in place of the one asked for (`result.summaryFallback`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryFallbackReport {
    /// What wrote it: `extractive`.
    pub used: &'static str,
    /// Why: `<code>: <message>` of the failure (or of the decline).
    pub reason: String,
    /// The code alone, to branch on.
    pub code: crate::base::error::ErrorCode,
}

/// What checkpoints did for a call (`result.checkpoint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointReport {
    /// A checkpoint recorded earlier covered the start of the list: its summary message
    /// stands for those messages, byte for byte, with no LLM call for them.
    pub reused: bool,
    /// With the checkpoint in place the list was still over the threshold, so compaction went
    /// on from it: its summary updated with what followed (UC-002), an LLM call for those
    /// messages only.
    pub extended: bool,
    /// How many messages of the input the reused checkpoint covers (the head and the messages
    /// its summary stands for), or, when none was reused, the recorded one.
    pub covered_messages: usize,
    /// The archive of the messages it covers.
    pub archive_path: String,
    /// This call left a checkpoint for later calls.
    pub recorded: bool,
}

/// One file shown after the summary (`result.rehydrated`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RehydratedFile {
    pub path: String,
    /// Tokens of its entry in the summary message.
    pub tokens: usize,
    /// Whether it was cut to its budget.
    pub cut: bool,
    /// `read` (the caller's `read(path)`) or `conversation`.
    pub source: &'static str,
}

/// What happened to a summary prepared in the background, at the call that could use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundReport {
    /// `applied` (it replaced the summary call) or `stale` (dropped, never archived).
    pub state: &'static str,
    /// Why it was stale: `head_changed`, `covered_changed`, `covered_gone`, `format_changed`,
    /// `grown`.
    pub reason: Option<&'static str>,
    /// How many messages of the input it covers.
    pub covered_messages: usize,
}

/// One change to a kept message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transformation {
    /// `thinking_dropped`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Where the block was in the messages passed in: `messages.7.content.0`.
    pub path: String,
    pub original_index: usize,
    /// The message's position in the result, or `None` when it was left out (it held only
    /// thinking).
    pub index: Option<usize>,
    /// `thinking` or `redacted_thinking`.
    pub block_type: String,
}

impl CompactOutcome {
    pub fn skipped(
        trigger_tokens: usize,
        threshold_tokens: usize,
        error: Option<CompactError>,
    ) -> Self {
        CompactOutcome {
            compacted: false,
            pieces: Vec::new(),
            piece_sources: Vec::new(),
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
            offloaded: Vec::new(),
            offload_archive_path: None,
            transformations: Vec::new(),
            thinking_archive_path: None,
            native_unavailable: None,
            summary_usage: None,
            summary_model_learnt: None,
            summary_request: None,
            summary_fallback: None,
            checkpoint: None,
            checkpoint_record: None,
            background: None,
            rehydrated: Vec::new(),
            full_ledger: None,
        }
    }
}

/// The caller's signal fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_serialises_to_the_fields_the_js_layer_reads() {
        let mut outcome = CompactOutcome::skipped(5, 10, None);
        outcome.partition = Some(Partition {
            head_len: 1,
            tail_start: 3,
        });
        outcome.pieces = vec![
            Piece::Original(0),
            Piece::New(serde_json::json!({"role": "user"})),
        ];
        outcome.native_unavailable = Some("m".into());
        outcome.full_ledger = Some("internal".into());
        let json = serde_json::to_value(&outcome).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort();
        let mut expected = vec![
            "compacted",
            "pieces",
            "summary",
            "archivePath",
            "stats",
            "error",
            "warnings",
            "headLength",
            "tailStart",
            "triggerTokens",
            "thresholdTokens",
            "provider",
            "model",
            "attempts",
            "measure",
            "strategy",
            "trigger",
            "rounds",
            "removed",
            "fallback",
            "extracted",
            "offloaded",
            "offloadArchivePath",
            "transformations",
            "thinkingArchivePath",
            "compactionUnavailable",
            "summaryUsage",
            "summaryModelLearnt",
            "summaryRequest",
            "summaryFallback",
            "checkpoint",
            "background",
            "rehydrated",
        ];
        expected.sort();
        assert_eq!(keys, expected);
        assert_eq!(json["pieces"], serde_json::json!([0, {"role": "user"}]));
        assert_eq!(
            (json["headLength"].clone(), json["tailStart"].clone()),
            (1.into(), 3.into())
        );
        assert_eq!(json["compactionUnavailable"], "m");
        assert_eq!(json["triggerTokens"], 5);
    }
}
