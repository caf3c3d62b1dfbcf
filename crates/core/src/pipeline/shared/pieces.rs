//! The pieces of the new list, shared by the fit, rehydrate, assemble and report steps: how the
//! draft becomes messages of the input (by index) and new ones, with the shortening the fit
//! step decided, and what they count.

use serde_json::Value;

use crate::model::tokens::{self, Encoding};
use crate::options::CompactOptions;
use crate::pipeline::measure::Estimator;
use crate::pipeline::shared::draft::{Draft, Replacement};
use crate::pipeline::shared::outcome::Piece;
use crate::plan::offload::{self, MessageCuts, OriginalRef};
use crate::plan::strategy::RegionItem;

/// The shortening the fit step decided: the cuts of each kept message, by input index, in
/// order. The index of a message here is its index in the offload archive.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fitting {
    pub cuts: Vec<(usize, MessageCuts)>,
    /// Raw tokens of the draft's messages with the cuts applied (stand-in archive paths).
    pub tokens: usize,
}

/// Where the archives of a compaction are (or, while fitting, a stand-in as long as a real
/// path, so what is counted then is not less than what is sent).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArchiveRefs<'a> {
    /// The archive of the replaced region, as the summary or notice names it.
    pub region: Option<&'a str>,
    /// The archive holding the offloaded originals (`keptOriginals.shortened`).
    pub offload: Option<&'a str>,
    /// The archive holding the originals of the kept messages whose thinking was removed
    /// (`keptOriginals.thinkingRemoved`).
    pub thinking: Option<&'a str>,
}

/// A message the fit step shortened: its input index, its position in the pieces, and the new
/// token count of each of its cuts.
pub(crate) type Shortened = (usize, usize, Vec<usize>);

/// The compacted list.
pub(crate) struct Assembled {
    pub pieces: Vec<Piece>,
    /// For each piece, the input message it is (unchanged or changed in place), or `None` for
    /// the summary or notice.
    pub sources: Vec<Option<usize>>,
    /// The messages the fit step shortened.
    pub shortened: Vec<Shortened>,
    /// Where each message the thinking policy changed ended up: (input index, its position in
    /// `pieces`, or `None` when it was left out).
    pub stripped: Vec<(usize, Option<usize>)>,
}

/// The pieces of the compacted list, the messages `fitting` shortened and where the messages
/// the thinking policy changed are.
pub(crate) fn assemble(
    messages: &[Value],
    draft: &Draft,
    fitting: &Fitting,
    refs: ArchiveRefs<'_>,
    encoding: Encoding,
) -> Assembled {
    let region = draft.region.clone();
    let mut pieces: Vec<Piece> = (0..region.start).map(Piece::Original).collect();
    pieces.push(Piece::New(draft.replacement_message(
        messages,
        refs.region,
        refs.thinking,
    )));
    let mut sources: Vec<Option<usize>> = (0..region.start).map(Some).collect();
    sources.push(None);
    let archive_name = refs
        .region
        .map(|path| path.rsplit(['/', '\\']).next().unwrap_or(path));
    let mut stripped = Vec::new();
    let items_start = pieces.len();
    pieces.extend(draft.region_items(messages, archive_name));
    if let Replacement::Rewrite(rewrite) = &draft.replacement {
        // Items are kept in order; the ones left out are not among the pieces.
        let mut position = items_start;
        for item in &rewrite.items {
            let index = match item {
                RegionItem::Keep(i) | RegionItem::Clear { index: i, .. } => *i,
            };
            let left_out = draft
                .stripped
                .iter()
                .any(|s| s.index == index && s.message.is_none());
            if draft.stripped.iter().any(|s| s.index == index) {
                stripped.push((index, (!left_out).then_some(position)));
            }
            if !left_out {
                position += 1;
                sources.push(Some(index));
            }
        }
    }
    for index in region.end..messages.len() {
        let piece = draft.kept_piece(Piece::Original(index));
        if draft.stripped.iter().any(|s| s.index == index) {
            stripped.push((index, piece.as_ref().map(|_| pieces.len())));
        }
        if piece.is_some() {
            sources.push(Some(index));
        }
        pieces.extend(piece);
    }
    debug_assert_eq!(sources.len(), pieces.len());

    let mut shortened = Vec::new();
    for (item, (index, cuts)) in fitting.cuts.iter().enumerate() {
        let original = OriginalRef {
            archive: refs.offload,
            item,
            kept_originals: true,
        };
        let (message, counts) = offload::apply_cuts(&messages[*index], cuts, &original, encoding);
        if let Some(position) = pieces
            .iter()
            .position(|p| matches!(p, Piece::Original(i) if i == index))
        {
            pieces[position] = Piece::New(message);
            shortened.push((*index, position, counts));
        }
    }
    Assembled {
        pieces,
        sources,
        shortened,
        stripped,
    }
}

/// The estimate a fitted result aims at: the threshold less room for the next turns
/// (`tailRetentionTokens`, at most half the threshold), so the very next turn does not compact
/// again.
pub(crate) fn target(estimator: &Estimator, options: &CompactOptions) -> u64 {
    let threshold = estimator.threshold();
    let room = (options.tail_retention_tokens() as u64).min(threshold / 2);
    threshold - room
}

/// Raw tokens of the messages of `draft` with `fitting` applied.
pub(crate) fn draft_tokens(
    messages: &[Value],
    counts: &[usize],
    draft: &Draft,
    fitting: &Fitting,
    refs: ArchiveRefs<'_>,
    options: &CompactOptions,
) -> usize {
    let assembled = assemble(messages, draft, fitting, refs, options.encoding);
    pieces_tokens(counts, &assembled.pieces, options)
}

/// Raw tokens of `pieces`: originals from `counts`, new messages counted.
pub(crate) fn pieces_tokens(counts: &[usize], pieces: &[Piece], options: &CompactOptions) -> usize {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Original(i) => counts[*i],
            Piece::New(message) => tokens::count_message(options.encoding, message),
        })
        .sum()
}
