//! A compaction of a list in another message format ([`crate::formats`]): the pipeline runs on
//! the list's view, and these say its options and its outcome in terms of the caller's items.
//! They are methods of [`Input`] for the caller's convenience, defined here because they speak
//! the pipeline's types, which the formats layer below does not know.

use crate::options::CompactOptions;
use crate::pipeline::shared::outcome::CompactOutcome;
use std::ops::Range;

use crate::formats::{view_block_of_path, written_item_count, Input};
use crate::model::piece::Piece;
use crate::model::tokens::Encoding;
use crate::plan::thinking::ThinkingPolicy;

impl Input {
    /// The options as they apply to this list: its format, and the thinking policy's `auto` keeps reasoning in
    /// formats whose APIs do not check it against the conversation before it
    /// ([`crate::formats::Format::may_carry_claude_thinking`]).
    pub fn adjust(&self, options: &mut CompactOptions) {
        // The pipeline works on the view; the format says whether it is the caller's own list
        // (a shared summary request sends that list as is).
        options.format = Some(self.format());
        if !self.format().may_carry_claude_thinking() && options.thinking == ThinkingPolicy::Auto {
            options.thinking = ThinkingPolicy::Keep;
        }
    }

    /// The caller's per-item counts (a `Compactor`'s cache) said of the view's messages; none
    /// when they are not one per item.
    pub fn view_counts(&self, item_counts: Option<Vec<usize>>) -> Option<Vec<usize>> {
        item_counts
            .filter(|c| c.len() == self.items.len())
            .map(|c| self.counts(c))
    }

    /// [`Input::outcome`] serialised, with the format of the list (`format`): the outcome as a
    /// caller of another language reads it.
    pub fn outcome_json(&self, outcome: CompactOutcome, encoding: Encoding) -> String {
        let mut json = serde_json::to_value(self.outcome(outcome, encoding)).unwrap_or_default();
        json["format"] = serde_json::json!(self.format().name());
        json.to_string()
    }

    /// A compaction's outcome on the view, said of the items: pieces, partition, message
    /// and token counts and the indices of what it reports. `encoding`: the one the outcome's
    /// counts are in.
    pub fn outcome(&self, mut outcome: CompactOutcome, encoding: Encoding) -> CompactOutcome {
        let Some(view) = &self.view else {
            return outcome;
        };
        let view_pieces = std::mem::take(&mut outcome.pieces);
        let sources = std::mem::take(&mut outcome.piece_sources);
        if outcome.compacted {
            // The statistics count the caller's items: a view message stands for its run, and a
            // changed one is written as the items it still has (removing a reasoning item's
            // content leaves the item out).
            let region = outcome.partition.map_or(0..0, |p| p.head_len..p.tail_start);
            let sizes: Vec<usize> = view.groups.iter().map(Range::len).collect();
            let present = view_pieces
                .iter()
                .zip(&sources)
                .filter_map(|(piece, source)| {
                    let index = (*source)?;
                    Some(match piece {
                        Piece::Original(_) => (index, sizes[index]),
                        Piece::New(message) => (index, written_item_count(message)),
                    })
                });
            outcome.stats.set_message_counts(&sizes, region, present);
        }
        let (pieces, positions) = view.to_items(&self.items, view_pieces);
        if outcome.compacted {
            // The model turn written after the summary where roles must alternate (Gemini,
            // Bedrock) is in the result: `compactedTokenCount` equals `countTokens(result)`.
            let added = view.added_turn_tokens(encoding, &pieces);
            let stats = &mut outcome.stats;
            stats.compacted_token_count += added;
            if added > 0 && stats.original_token_count > 0 {
                stats.compaction_ratio =
                    stats.compacted_token_count as f64 / stats.original_token_count as f64;
            }
        }
        let position_of = |index: usize| positions.get(index).copied().unwrap_or(pieces.len());
        if let Some(partition) = outcome.partition.as_mut() {
            partition.head_len = self.item_index(partition.head_len);
            partition.tail_start = self.item_index(partition.tail_start);
        }
        for offloaded in &mut outcome.offloaded {
            // A view message may stand for several items (parallel tool outputs, each its own
            // item in Responses and LangChain lists): the entry names the item holding the
            // shortened block. Offload removes no item, so it keeps its offset in the run.
            let first = self.item_index(offloaded.original_index);
            let item = view.item_of_block(
                &self.items,
                offloaded.original_index,
                view_block_of_path(&offloaded.path),
            );
            offloaded.original_index = item;
            offloaded.index = position_of(offloaded.index) + (item - first);
            offloaded.path = format!("messages.{}", offloaded.index);
        }
        for change in &mut outcome.transformations {
            change.original_index = self.item_index(change.original_index);
            change.index = change.index.map(position_of);
            change.path = format!("messages.{}", change.original_index);
        }
        // Checkpoints cover messages of the view; the caller counts its items.
        if let Some(checkpoint) = outcome.checkpoint.as_mut() {
            checkpoint.covered_messages = self.item_index(checkpoint.covered_messages);
        }
        if let Some(background) = outcome.background.as_mut() {
            background.covered_messages = self.item_index(background.covered_messages);
        }
        outcome.pieces = pieces;
        outcome
    }
}
