//! Step 7, **assemble**: the new message list, as pieces — messages of the input (by index)
//! and new ones (the summary or notice, cleared and shortened messages).

use serde_json::{json, Value};

use super::fit::Fitting;
use super::{Draft, Replacement};
use crate::model::tokens::Encoding;
use crate::pipeline::outcome::Piece;
use crate::plan::offload::{self, OriginalRef};
use crate::plan::strategy::RegionItem;

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
    crate::model::models::context_window(model)
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
