//! The draft, shared by the steps after the summary: the region of the input that is replaced
//! and what replaces it (a summary, Anthropic's compaction block, a notice, or a reused
//! checkpoint's message), as the summarize step leaves it and the fit, archive and assemble
//! steps read it.

use std::ops::Range;

use serde_json::{json, Value};

use crate::archive::checkpoint::Checkpoint;
use crate::carry::latest_error;
use crate::carry::sections;
use crate::model::added;
use crate::options::CompactOptions;
use crate::pipeline::shared::outcome::{Piece, SummaryFallbackReport};
use crate::plan::strategy::{RegionItem, Rewrite};
use crate::plan::thinking::Stripped;
use crate::summary::summarize::{SummaryModelLearnt, SummaryRequestKind, SummaryUsage};

/// The new list before its archives are written: the region of the input that is replaced,
/// and what replaces it.
pub(crate) struct Draft {
    pub region: Range<usize>,
    pub replacement: Replacement,
    /// Kept messages the thinking policy changed (SPEC §3), in order.
    pub stripped: Vec<Stripped>,
    /// Why on-demand compaction was not used, when it was asked for.
    pub native_fallback: Option<NativeFallback>,
    /// What the steps after the summary gave up to fit (the result's warnings).
    pub warnings: Vec<String>,
    /// The current content of the files worked on, after the summary ([`rehydrate`]); empty
    /// for none.
    pub rehydrated: String,
    /// Which recall lines the summary carries (all, unless a tight window needs their tokens).
    pub recall: sections::RecallLines,
    /// The recall lines' share of the summary budget, in tokens.
    pub recall_max_tokens: usize,
    /// The budget of the latest failure of the region after the summary (`0` when off, or
    /// when a tight window needs its tokens).
    pub latest_failure: latest_error::Budget,
    /// The summaries and notices of the list the library wrote ([`own_summaries`]): whose
    /// recall lines and ledger carry forward.
    pub own: added::OwnSummaries,
}

pub(crate) enum Replacement {
    /// A summary message (model text + ledger).
    Summary(Summarized),
    /// Anthropic's signed compaction block, with the ledger beside it.
    Native(NativeSummarized),
    /// A notice, followed by what a strategy without a summary keeps of the region.
    Rewrite(Rewrite),
    /// The summary message of a checkpoint, as it was recorded: the region is the messages it
    /// covers, already archived.
    Checkpoint(std::sync::Arc<Checkpoint>),
}

/// What our own summary in rounds produced.
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
    /// What the summary model's answers taught (a window, a factor).
    pub learnt: Option<SummaryModelLearnt>,
    /// Written without an LLM in place of the summary asked for, and why (`summaryFallback`).
    pub fallback: Option<SummaryFallbackReport>,
}

/// What Anthropic's on-demand compaction produced.
pub(crate) struct NativeSummarized {
    pub region: Range<usize>,
    /// The signed `compaction` block, as returned.
    pub block: Value,
    /// The ledger of the region and the user's messages (`crate::carry::appended::appended_sections`),
    /// kept beside the block so a later compaction keeps them.
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

impl Draft {
    /// A draft replacing `region` with `replacement`, nothing else decided yet.
    pub fn new(
        region: Range<usize>,
        replacement: Replacement,
        options: &CompactOptions,
        own: added::OwnSummaries,
    ) -> Self {
        Draft {
            region,
            replacement,
            stripped: Vec::new(),
            native_fallback: None,
            warnings: Vec::new(),
            rehydrated: String::new(),
            recall: sections::RecallLines::All,
            recall_max_tokens: options.summary_budget().recall(),
            latest_failure: options.latest_failure_budget(),
            own,
        }
    }

    /// The content of the message that stands for the region, naming `archive`, and ending
    /// with the thinking line when kept messages after the region had their thinking removed
    /// (their originals in `thinking_archive`).
    pub fn replacement_text(
        &self,
        messages: &[Value],
        archive: Option<&str>,
        thinking_archive: Option<&str>,
    ) -> String {
        // What the header says was compacted: the caller's messages the new message stands for
        // (a view message of a list in another format stands for several of them), the same
        // number as the statistics' `compactedMessageCount`. The messages a strategy without a
        // summary keeps of the region follow the notice, and stand for themselves.
        let replaced = crate::formats::item_count(&messages[self.region.clone()])
            .saturating_sub(self.following_items(messages));
        let mut text = match &self.replacement {
            Replacement::Summary(summary) => {
                added::summary_message_text(replaced, archive, &summary.body)
            }
            Replacement::Native(native) => {
                let header = added::native_header(replaced, archive);
                if native.ledger.is_empty() {
                    header
                } else {
                    format!("{header}\n\n{}", native.ledger)
                }
            }
            Replacement::Rewrite(rewrite) => {
                let following = rewrite.items.len() - self.left_out_items();
                format!(
                    "{}\n\n{}",
                    added::notice_header(replaced, &rewrite.how(), following, archive),
                    rewrite.detail()
                )
            }
            // Its own text, naming its own archive.
            Replacement::Checkpoint(checkpoint) => added::summary_text(&checkpoint.message)
                .unwrap_or_default()
                .to_string(),
        };
        // A notice has no recall lines; a reused checkpoint's text has its own already.
        if !matches!(
            self.replacement,
            Replacement::Rewrite(_) | Replacement::Checkpoint(_)
        ) {
            // The last failed call and what it said, with where it is in the archive.
            if self.latest_failure.max_tokens > 0 {
                let failure = latest_error::section(
                    &messages[self.region.clone()],
                    archive,
                    self.latest_failure.max_tokens,
                    self.latest_failure.encoding,
                    &self.own,
                );
                if !failure.is_empty() {
                    text.push_str("\n\n");
                    text.push_str(&failure);
                }
            }
            // Where each compacted range is, in the form the recall tool takes.
            let recall = sections::recall_section(
                &messages[self.region.clone()],
                archive,
                self.recall,
                &self.own,
                self.recall_max_tokens,
                self.latest_failure.encoding,
            );
            if !recall.is_empty() {
                text.push_str("\n\n");
                text.push_str(&recall);
            }
        }
        if !self.rehydrated.is_empty() {
            text.push_str("\n\n");
            text.push_str(&self.rehydrated);
        }
        let tail: Vec<(usize, bool)> = self
            .stripped_after_region()
            .map(|s| (s.index - self.region.end, s.message.is_none()))
            .collect();
        if !tail.is_empty() {
            text.push_str("\n\n");
            text.push_str(&added::thinking_line_text(&tail, thinking_archive));
        }
        text
    }

    /// The message that stands for the region: a user message with the summary or notice, or
    /// (on-demand compaction) an assistant message whose first block is the signed compaction
    /// block, as returned, with the text beside it.
    pub fn replacement_message(
        &self,
        messages: &[Value],
        archive: Option<&str>,
        thinking_archive: Option<&str>,
    ) -> Value {
        if let Replacement::Checkpoint(checkpoint) = &self.replacement {
            // Byte for byte as recorded, unless kept messages after it lost their thinking
            // this time: then the line saying so follows its text.
            if self.stripped_after_region().next().is_none() {
                return checkpoint.message.clone();
            }
            let text = self.replacement_text(messages, archive, thinking_archive);
            return added::with_summary_text(&checkpoint.message, text);
        }
        let text = self.replacement_text(messages, archive, thinking_archive);
        match &self.replacement {
            Replacement::Native(native) => json!({
                "role": "assistant",
                "content": [native.block.clone(), { "type": "text", "text": text }],
            }),
            _ => summary_message(&text),
        }
    }

    /// The kept messages after the region whose thinking was removed (those inside the region
    /// come back from the region's archive).
    pub fn stripped_after_region(&self) -> impl Iterator<Item = &Stripped> {
        self.stripped.iter().filter(|s| s.index >= self.region.end)
    }

    fn stripped_at(&self, index: usize) -> Option<&Stripped> {
        self.stripped.iter().find(|s| s.index == index)
    }

    /// How many of the caller's items the messages a strategy without a summary keeps of the
    /// region are, as they will be written (removing thinking may leave an item out).
    fn following_items(&self, messages: &[Value]) -> usize {
        self.region_items(messages, None)
            .iter()
            .map(|piece| match piece {
                Piece::Original(index) => crate::formats::item_count(&messages[*index..=*index]),
                Piece::New(message) => crate::formats::written_item_count(message),
            })
            .sum()
    }

    /// Kept messages of the region left out because they held only thinking.
    fn left_out_items(&self) -> usize {
        self.stripped
            .iter()
            .filter(|s| self.region.contains(&s.index) && s.message.is_none())
            .count()
    }

    /// What a strategy without a summary keeps of the region (cleared results name the
    /// archive file), with the thinking policy applied.
    pub fn region_items(&self, messages: &[Value], archive_name: Option<&str>) -> Vec<Piece> {
        match &self.replacement {
            Replacement::Summary(_) | Replacement::Native(_) | Replacement::Checkpoint(_) => {
                Vec::new()
            }
            Replacement::Rewrite(rewrite) => rewrite
                .render_items(messages, archive_name)
                .into_iter()
                .filter_map(|piece| self.kept_piece(piece))
                .collect(),
        }
    }

    /// `piece` with the thinking policy applied: a stripped copy, or nothing when left out.
    pub fn kept_piece(&self, piece: Piece) -> Option<Piece> {
        match piece {
            Piece::Original(index) => match self.stripped_at(index) {
                Some(stripped) => stripped.message.clone().map(Piece::New),
                None => Some(Piece::Original(index)),
            },
            new => Some(new),
        }
    }

    /// The input messages kept unchanged after the replacement: what the fit step may shorten.
    pub fn kept_after(&self, len: usize) -> Vec<usize> {
        let mut kept = Vec::new();
        if let Replacement::Rewrite(rewrite) = &self.replacement {
            kept.extend(rewrite.items.iter().filter_map(|item| match item {
                RegionItem::Keep(i) => Some(*i),
                RegionItem::Clear { .. } => None,
            }));
        }
        kept.extend(self.region.end..len);
        kept
    }

    /// The text that holds the sections the library appends to a summary ([`crate::carry::sections`]):
    /// the summary's body, or the text beside a native compaction block.
    pub fn sections_text_mut(&mut self) -> Option<&mut String> {
        match &mut self.replacement {
            Replacement::Summary(summary) => Some(&mut summary.body),
            Replacement::Native(native) => Some(&mut native.ledger),
            // A checkpoint's summary message is reused byte for byte.
            Replacement::Rewrite(_) | Replacement::Checkpoint(_) => None,
        }
    }

    /// How the archive's messages are described in a warning.
    pub fn removed_what(&self) -> &'static str {
        match self.replacement {
            Replacement::Summary(_) | Replacement::Native(_) | Replacement::Checkpoint(_) => {
                "compacted"
            }
            Replacement::Rewrite(_) => "removed",
        }
    }
}

/// `{ role: 'user', content: summary }`.
pub fn summary_message(summary: &str) -> Value {
    json!({ "role": "user", "content": summary })
}
