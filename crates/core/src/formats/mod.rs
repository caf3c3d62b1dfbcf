//! The other agent loops' message formats: OpenAI Responses input items, Vercel AI SDK
//! `ModelMessage`s, Gemini `contents`, Bedrock Converse messages and LangChain.js messages.
//!
//! The rest of the crate reads Anthropic Messages and OpenAI Chat Completions (the "native"
//! formats, `message.rs`). A list in another format is read through a *view*: each message of
//! the view stands for a contiguous run of the caller's items and says the same thing in the
//! Anthropic form (text, image, document, thinking, `tool_use`, `tool_result` blocks). The
//! pipeline, the strategies, counting, the ledger and restore all run on the view unchanged,
//! and what they return is mapped back:
//! - a view message that is kept stands for the caller's very items;
//! - a message the library writes (the summary) is written in the list's own format;
//! - a kept message the library changed (a shortened tool result, removed thinking) is the
//!   caller's item with only that part changed, in its own format.
//!
//! Why runs of items and not one view message per item: each API's pairing rule is then the
//! Anthropic one, which the whole crate already keeps. A Responses turn is several items
//! (`reasoning`, `message`, `function_call`s) answered by several `function_call_output`s; as
//! one assistant message and one message of results, no cut can fall between a call and its
//! output, or between a `reasoning` item and the call it precedes.
//!
//! Every view message carries the items it stands for under [`SOURCE_KEY`] (no counter or
//! renderer reads that field), so whatever holds view messages — an archive, a summary's
//! thinking line — gives back the caller's items exactly.

use std::ops::Range;

use serde_json::{json, Value};

use crate::base::error::ValidationError;
use crate::model::message::type_name;
use crate::model::piece::Piece;

mod ai_sdk;
mod bedrock;
mod gemini;
mod langchain;
pub mod parts;
mod responses;
mod shared;

pub(crate) use shared::{kind, part_signature, Edit, ItemView, PartRef, Reader, Side};
pub use shared::{Format, FORMAT_NAMES};

/// The field of a view message that holds the caller's items it stands for:
/// `{"format": "<name>", "items": [...]}`.
pub const SOURCE_KEY: &str = "x-context-compact-source";

/// Reads item `index` of a list in `format` (never `Native`).
pub(crate) fn read_item(
    format: Format,
    index: usize,
    item: &Value,
    reader: &mut Reader,
) -> Result<ItemView, ValidationError> {
    let object = item.as_object().ok_or_else(|| {
        ValidationError::at(
            index,
            "",
            format!("expected {}, got {}", format.described(), type_name(item)),
        )
    })?;
    match format {
        Format::Responses => responses::read(index, object, reader),
        Format::AiSdk => ai_sdk::read(index, object, reader),
        Format::Gemini => gemini::read(index, object, reader),
        Format::Bedrock => bedrock::read(index, object, reader),
        Format::LangChain => langchain::read(index, object, reader),
        Format::Native => unreachable!("native messages are not read through a view"),
    }
}

/// The format an item unmistakably is in, when it says so (`None` for items several formats
/// share, such as `{role: 'user', content: 'hi'}`).
pub fn signature_of(item: &Value) -> Option<Format> {
    let object = item.as_object()?;
    if langchain::is_langchain(object) {
        return Some(Format::LangChain);
    }
    if object.contains_key("parts") || object.get("role").and_then(Value::as_str) == Some("model") {
        return Some(Format::Gemini);
    }
    if responses::is_responses(object) {
        return Some(Format::Responses);
    }
    if object.contains_key("providerOptions") {
        return Some(Format::AiSdk);
    }
    if object.contains_key("tool_calls")
        || object.contains_key("tool_call_id")
        || object.contains_key("function_call")
    {
        return Some(Format::Native);
    }
    let Some(Value::Array(parts)) = object.get("content") else {
        return match object.get("role").and_then(Value::as_str) {
            Some("function") => Some(Format::Native),
            _ => None,
        };
    };
    parts.iter().find_map(part_signature)
}

/// The list's format: `chosen` when the caller named one, else the one format the items'
/// signatures agree on (native when none says otherwise). A list whose items say two different
/// formats is refused, naming the first item that disagrees.
pub fn detect(items: &[Value], chosen: Option<Format>) -> Result<Format, ValidationError> {
    if let Some(format) = chosen {
        return Ok(format);
    }
    let mut seen: Option<(usize, Format)> = None;
    for (index, item) in items.iter().enumerate() {
        let Some(format) = signature_of(item) else {
            continue;
        };
        match seen {
            None => seen = Some((index, format)),
            Some((first, earlier)) if earlier != format => {
                return Err(mixed(index, format, first, earlier))
            }
            Some(_) => {}
        }
    }
    Ok(seen.map_or(Format::Native, |(_, format)| format))
}

fn mixed(index: usize, format: Format, first: usize, earlier: Format) -> ValidationError {
    ValidationError::at(
        index,
        "",
        format!(
            "is {}, but messages[{first}] is {}: a list must be in one format \
             (pass the `format` option to say which)",
            format.described(),
            earlier.described()
        ),
    )
}

/// Counts a list item by item as it is read (the binding reads each message from JavaScript,
/// counts it and drops it): each item is read in the list's format, which the first item that
/// says its format decides (unless the caller chose one).
///
/// Items before that one say no format (`{role: 'user', content: 'hi'}` reads the same in
/// several): they are counted as Anthropic / OpenAI messages and kept, up to
/// [`UNDECIDED_KEPT`] of them, to be read again once the format is known — so a list the other
/// functions refuse (a `system` message in a Bedrock list) is refused here too, and counted the
/// same way.
#[derive(Debug, Default)]
pub struct ItemCounter {
    chosen: Option<Format>,
    seen: Option<(usize, Format)>,
    counts: Vec<usize>,
    /// For each item, the format it says it is in, if any.
    signatures: Vec<Option<Format>>,
    undecided: Vec<(usize, Value)>,
}

/// How many leading items that say no format are kept to be read again. Lists in other formats
/// say theirs within their first few items; a long list of plain messages is native anyway.
pub const UNDECIDED_KEPT: usize = 256;

impl ItemCounter {
    pub fn new(chosen: Option<Format>) -> Self {
        ItemCounter {
            chosen,
            ..ItemCounter::default()
        }
    }

    /// Validates and counts item `index` (items come in order).
    pub fn push(
        &mut self,
        encoding: crate::model::tokens::Encoding,
        index: usize,
        item: Value,
    ) -> Result<(), ValidationError> {
        let decided_before = self.chosen.is_some() || self.seen.is_some();
        self.signatures.push(signature_of(&item));
        let format = self.format_of(index, &item)?;
        if !decided_before && self.seen.is_some() {
            // The format is known now: read the items before again in it (native ones were
            // read so already).
            for (earlier, value) in std::mem::take(&mut self.undecided) {
                if format != Format::Native {
                    self.counts[earlier] = count_item(encoding, format, earlier, &value)?;
                }
            }
        }
        self.counts
            .push(count_item(encoding, format, index, &item)?);
        if self.chosen.is_none() && self.seen.is_none() && self.undecided.len() < UNDECIDED_KEPT {
            self.undecided.push((index, item));
        }
        Ok(())
    }

    /// The counts, one per item.
    pub fn finish(self) -> Vec<usize> {
        self.counts
    }

    /// The format the items were read in: the chosen one, else the one the first item that
    /// says its format named, else native.
    pub fn format(&self) -> Format {
        self.chosen
            .or(self.seen.map(|(_, format)| format))
            .unwrap_or(Format::Native)
    }

    /// The counts, the format each item says it is in (if any), and the format they were read
    /// in: what a cache of per-item counts needs to tell when items counted apart must be
    /// counted again in the format of the list they end up in.
    pub fn finish_with_formats(self) -> (Vec<usize>, Vec<Option<Format>>, Format) {
        let format = self.format();
        (self.counts, self.signatures, format)
    }

    /// The format item `index` is read in.
    fn format_of(&mut self, index: usize, item: &Value) -> Result<Format, ValidationError> {
        if let Some(format) = self.chosen {
            return Ok(format);
        }
        match (signature_of(item), self.seen) {
            (Some(format), Some((first, earlier))) if format != earlier => {
                Err(mixed(index, format, first, earlier))
            }
            (Some(format), None) => {
                self.seen = Some((index, format));
                Ok(format)
            }
            (Some(format), Some(_)) => Ok(format),
            (None, seen) => Ok(seen.map_or(Format::Native, |(_, format)| format)),
        }
    }
}

/// Validates one item in `format` and counts it.
fn count_item(
    encoding: crate::model::tokens::Encoding,
    format: Format,
    index: usize,
    item: &Value,
) -> Result<usize, ValidationError> {
    if format == Format::Native {
        crate::model::message::validate_message(index, item)?;
        return Ok(crate::model::tokens::count_message(encoding, item));
    }
    Ok(crate::model::tokens::count_message(
        encoding,
        &view_item(format, index, item)?,
    ))
}

/// A list in another format, read as view messages.
#[derive(Debug, Clone)]
pub struct View {
    pub format: Format,
    /// The view messages (Anthropic form), each with its items under [`SOURCE_KEY`].
    pub messages: Vec<Value>,
    /// For each view message, the caller's items it stands for.
    pub groups: Vec<Range<usize>>,
}

/// Reads a list in `format` (not native) as a [`View`]. Errors name the caller's item and
/// field.
pub fn view(format: Format, items: &[Value]) -> Result<View, ValidationError> {
    debug_assert_ne!(format, Format::Native);
    let mut reader = Reader::default();
    let mut messages = Vec::new();
    let mut groups: Vec<Range<usize>> = Vec::new();
    let mut current: Option<(Side, Vec<Value>, Range<usize>)> = None;
    for (index, item) in items.iter().enumerate() {
        let mut read = read_item(format, index, item, &mut reader)?;
        let acknowledges = acknowledges_summary(format, items, index);
        if acknowledges {
            read.blocks.clear();
        }
        let joins = match &current {
            Some(_) if acknowledges => true,
            Some((side, _, _)) => joins_previous(format, *side, read.side),
            None => false,
        };
        if !joins {
            if let Some((side, blocks, range)) = current.take() {
                messages.push(view_message(format, side, blocks, &items[range.clone()]));
                groups.push(range);
            }
            current = Some((read.side, Vec::new(), index..index));
        }
        if let Some((_, blocks, range)) = current.as_mut() {
            blocks.extend(read.blocks.into_iter().map(|(block, _)| block));
            range.end = index + 1;
        }
    }
    if let Some((side, blocks, range)) = current.take() {
        messages.push(view_message(format, side, blocks, &items[range.clone()]));
        groups.push(range);
    }
    Ok(View {
        format,
        messages,
        groups,
    })
}

/// Whether item `index` is the model turn [`View::to_items`] writes after our summary where the
/// roles must alternate. It belongs to the summary: it reads as part of the summary's view
/// message, adding nothing, so that the summary is replaced with its archive as one message
/// and the positions a summary's notice or thinking line counts are those of the view.
fn acknowledges_summary(format: Format, items: &[Value], index: usize) -> bool {
    format.alternates()
        && index > 0
        && !is_user(&items[index])
        && [SUMMARY_ACK, LEGACY_SUMMARY_ACK].contains(&first_text(&items[index]).as_str())
        && is_user(&items[index - 1])
        && first_text(&items[index - 1]).starts_with(crate::model::added::SUMMARY_PREFIX)
}

/// Whether an item on side `next` joins the view message of the item before it (`previous`):
/// results always join results (parallel calls' answers stay together), and in the Responses
/// API one assistant turn is several items.
fn joins_previous(format: Format, previous: Side, next: Side) -> bool {
    match (previous, next) {
        (Side::Results, Side::Results) => true,
        (Side::Assistant, Side::Assistant) => format == Format::Responses,
        _ => false,
    }
}

fn view_message(format: Format, side: Side, blocks: Vec<Value>, items: &[Value]) -> Value {
    let role = side.role();
    // A message of one text block is written as a string, the form our own summaries take in
    // the native formats, so that `added::summary_text` recognizes a summary in any format.
    let content = match blocks.as_slice() {
        [only]
            if side != Side::Results
                && only.get("type").and_then(Value::as_str) == Some("text") =>
        {
            only.get("text")
                .cloned()
                .unwrap_or(Value::String(String::new()))
        }
        _ => Value::Array(blocks),
    };
    json!({
        "role": role,
        "content": content,
        SOURCE_KEY: { "format": format.name(), "items": items },
    })
}

/// How many of the caller's messages `messages` stand for: a view message stands for its
/// items, any other message for itself.
pub fn item_count(messages: &[Value]) -> usize {
    messages
        .iter()
        .map(|message| {
            message
                .get(SOURCE_KEY)
                .and_then(|source| source.get("items"))
                .and_then(Value::as_array)
                .map_or(1, Vec::len)
        })
        .sum()
}

/// How many of the caller's items a message of the pipeline's list is written as: a view
/// message (changed in place or not) as the items it carries that are still there, a message
/// we wrote or a native one as one.
pub fn written_item_count(message: &Value) -> usize {
    match source_items(message) {
        Some((format, items)) => rewrite(format, items, message).len(),
        None => 1,
    }
}

/// One item read on its own, as a view message (for counting an item by itself).
pub fn view_item(format: Format, index: usize, item: &Value) -> Result<Value, ValidationError> {
    let read = read_item(format, index, item, &mut Reader::default())?;
    Ok(json!({
        "role": read.side.role(),
        "content": read.blocks.into_iter().map(|(block, _)| block).collect::<Vec<_>>(),
    }))
}

/// Validates a list in `format`: what reading it checks.
pub fn validate(format: Format, items: &[Value]) -> Result<(), ValidationError> {
    if format == Format::Native {
        return crate::model::message::validate(items).map(|_| ());
    }
    let mut reader = Reader::default();
    for (index, item) in items.iter().enumerate() {
        read_item(format, index, item, &mut reader)?;
    }
    Ok(())
}

/// The block a view path names (`messages.3.content.1.content` → 1); 0 for a string content.
pub(crate) fn view_block_of_path(path: &str) -> usize {
    let mut parts = path.split('.').skip(2);
    match (parts.next(), parts.next()) {
        (Some("content"), Some(block)) => block.parse().unwrap_or(0),
        _ => 0,
    }
}

impl View {
    /// The item (of `items`, the list the view was read from) that holds block `block` of view
    /// message `message`; the run's first item when the block is not found.
    pub fn item_of_block(&self, items: &[Value], message: usize, block: usize) -> usize {
        let Some(range) = self.groups.get(message).cloned() else {
            return items.len();
        };
        let mut reader = Reader::default();
        let mut seen = 0;
        for index in range.clone() {
            // As `view` reads the run: the turn written after a summary adds no block.
            let blocks = if acknowledges_summary(self.format, items, index) {
                0
            } else {
                read_item(self.format, index, &items[index], &mut reader)
                    .map_or(0, |read| read.blocks.len())
            };
            if block < seen + blocks {
                return index;
            }
            seen += blocks;
        }
        range.start
    }

    /// The run of `items` a view message stands for, found by the items it carries (`None` for
    /// a message of our own).
    fn run_of(&self, items: &[Value], message: &Value) -> Option<Range<usize>> {
        let (_, source) = source_items(message)?;
        self.groups
            .iter()
            .find(|range| range.len() == source.len() && items[(*range).clone()] == source[..])
            .cloned()
    }

    /// The view's token counts from the caller's per-item counts.
    pub fn group_counts(&self, item_counts: &[usize]) -> Vec<usize> {
        self.groups
            .iter()
            .map(|range| item_counts[range.clone()].iter().sum())
            .collect()
    }

    /// The index of the view message that stands for item `item`.
    pub fn group_of(&self, item: usize) -> Option<usize> {
        self.groups.iter().position(|range| range.contains(&item))
    }

    /// The pieces of a result on the view, as pieces of the caller's list (`items`): a kept
    /// view message is its items; a new or changed one is written in the list's format. Also
    /// returns, for each view piece, where its first item landed.
    pub fn to_items(&self, items: &[Value], pieces: Vec<Piece>) -> (Vec<Piece>, Vec<usize>) {
        let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
        let mut positions = Vec::with_capacity(pieces.len());
        for piece in pieces {
            // Bedrock refuses two user messages in a row ("A conversation must alternate
            // between user and assistant roles"), as older Gemini models do: a summary (a user
            // message) followed by a kept user message gets a short model turn between them.
            if self.format.alternates() && !out.is_empty() {
                let next_is_user = match &piece {
                    Piece::Original(index) => is_user(&items[self.groups[*index].start]),
                    Piece::New(message) => is_user(message),
                };
                let last_is_ours = matches!(out.last(), Some(Piece::New(m))
                    if is_user(m) && first_text(m).starts_with(crate::model::added::SUMMARY_PREFIX));
                if next_is_user && last_is_ours {
                    out.push(Piece::New(write_ack(self.format)));
                }
            }
            positions.push(out.len());
            match piece {
                Piece::Original(index) => {
                    out.extend(self.groups[index].clone().map(Piece::Original))
                }
                Piece::New(message) => {
                    let written = to_format(self.format, &message);
                    // A changed view message whose run has several items (parallel tool outputs,
                    // a Responses turn): the items the change left as they were are the
                    // caller's own objects, not copies.
                    let run = self
                        .run_of(items, &message)
                        .filter(|run| run.len() == written.len());
                    out.extend(written.into_iter().enumerate().map(|(k, item)| match &run {
                        Some(run) if items[run.start + k] == item => Piece::Original(run.start + k),
                        _ => Piece::New(item),
                    }))
                }
            }
        }
        (out, positions)
    }
}

impl View {
    /// Tokens of the model turns [`View::to_items`] wrote after our summary among `pieces` (its
    /// result): they are the caller's items too, so the result's count includes them.
    pub fn added_turn_tokens(
        &self,
        encoding: crate::model::tokens::Encoding,
        pieces: &[Piece],
    ) -> usize {
        let ack = write_ack(self.format);
        pieces
            .iter()
            .filter(|piece| matches!(piece, Piece::New(item) if *item == ack))
            .map(|_| count_item(encoding, self.format, 0, &ack).unwrap_or(0))
            .sum()
    }
}

/// The model turn between our summary and a kept user message, in lists whose API wants the
/// roles to alternate ([`Format::alternates`]). Like every message the library adds, it starts
/// with [`crate::model::added::SUMMARY_PREFIX`], so callers can tell it from their own turns.
pub const SUMMARY_ACK: &str = "[context-compact] Understood; continuing from the summary.";

/// The same turn as lists compacted before it carried the marker hold it: still recognised, so
/// restoring them stays exact.
const LEGACY_SUMMARY_ACK: &str = "Understood; continuing from the summary.";

fn write_ack(format: Format) -> Value {
    match format {
        Format::Gemini => gemini::text_content(true, SUMMARY_ACK),
        _ => bedrock::text_message(true, SUMMARY_ACK),
    }
}

fn is_user(item: &Value) -> bool {
    item.get("role").and_then(Value::as_str) == Some("user")
}

/// The text of the first block of a Bedrock message or Gemini content.
fn first_text(message: &Value) -> String {
    message
        .get("content")
        .or(message.get("parts"))
        .and_then(Value::as_array)
        .and_then(|blocks| blocks.first())
        .and_then(|block| block.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// A view message written in `format`: the items it stands for when it carries them and is
/// unchanged; those items with the changed parts edited when it carries them and was changed;
/// else new items saying the same thing (our summary).
pub fn to_format(format: Format, message: &Value) -> Vec<Value> {
    if format == Format::Native {
        return vec![message.clone()];
    }
    match source_items(message) {
        Some((source_format, items)) => rewrite(source_format, items, message),
        None => write_new(format, message),
    }
}

fn source_items(message: &Value) -> Option<(Format, &Vec<Value>)> {
    let source = message.get(SOURCE_KEY)?;
    let format = Format::parse(source.get("format")?.as_str()?)??;
    Some((format, source.get("items")?.as_array()?))
}

/// A view message's blocks (a string content is one text block).
fn blocks_of(message: &Value) -> Vec<Value> {
    match message.get("content") {
        Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    }
}

/// A block without the ids a reading may make up (Gemini calls without ids get fresh ones), so
/// that the same item read alone and in its list compares equal.
fn without_ids(block: &Value) -> Value {
    let mut block = block.clone();
    if let Some(object) = block.as_object_mut() {
        if object.get("type").and_then(Value::as_str) == Some("tool_use") {
            object.remove("id");
        }
        object.remove("tool_use_id");
    }
    block
}

/// Applies the changes between the view of `items` and `changed` to the items themselves.
fn rewrite(format: Format, items: &[Value], changed: &Value) -> Vec<Value> {
    let mut reader = Reader::default();
    let mut original: Vec<(usize, PartRef, Value)> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        if acknowledges_summary(format, items, index) {
            continue;
        }
        match read_item(format, index, item, &mut reader) {
            Ok(read) => original.extend(
                read.blocks
                    .into_iter()
                    .map(|(block, part)| (index, part, block)),
            ),
            // Items that no longer read (they were in the list when it was read) stay as they
            // are.
            Err(_) => return items.to_vec(),
        }
    }
    let new_blocks = blocks_of(changed);
    let same = original.len() == new_blocks.len()
        && original
            .iter()
            .zip(&new_blocks)
            .all(|((_, _, a), b)| without_ids(a) == without_ids(b));
    if same {
        return items.to_vec();
    }
    // The library only removes blocks or changes them in place, in order: align each new block
    // with the next original block of its type.
    let mut edits: Vec<Vec<(PartRef, Edit)>> = vec![Vec::new(); items.len()];
    let mut next = 0;
    for (item, part, block) in &original {
        match new_blocks.get(next) {
            Some(new) if kind(new) == kind(block) => {
                if without_ids(new) != without_ids(block) {
                    edits[*item].push((*part, Edit::Replace(new.clone())));
                }
                next += 1;
            }
            _ => edits[*item].push((*part, Edit::Remove)),
        }
    }
    items
        .iter()
        .zip(edits)
        .filter_map(|(item, edits)| {
            if edits.is_empty() {
                return Some(item.clone());
            }
            let mut item = item.clone();
            // From the last part, so earlier parts keep their positions.
            let mut edits = edits;
            edits.sort_by_key(|(part, _)| std::cmp::Reverse(part_order(*part)));
            for (part, edit) in edits {
                if !apply_edit(format, &mut item, part, &edit) {
                    return None;
                }
            }
            Some(item)
        })
        .collect()
}

fn part_order(part: PartRef) -> usize {
    match part {
        PartRef::Item | PartRef::Text => 0,
        PartRef::Part(n) | PartRef::ToolCall(n) => n + 1,
    }
}

/// Applies one edit; false when the item is left with nothing and is dropped.
fn apply_edit(format: Format, item: &mut Value, part: PartRef, edit: &Edit) -> bool {
    match format {
        Format::Responses => responses::edit(item, part, edit),
        Format::AiSdk => ai_sdk::edit(item, part, edit),
        Format::Gemini => gemini::edit(item, part, edit),
        Format::Bedrock => bedrock::edit(item, part, edit),
        Format::LangChain => langchain::edit(item, part, edit),
        Format::Native => true,
    }
}

/// New items in `format` saying what a view message says (our summary, a notice).
fn write_new(format: Format, message: &Value) -> Vec<Value> {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("user");
    // A summary is plain text; a native compaction block (Anthropic's own) is not readable by
    // other APIs, so only the text beside it is written.
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|block| kind(block) == "text")
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    };
    let assistant = role == "assistant";
    vec![match format {
        Format::Responses => responses::text_item(assistant, &text),
        Format::AiSdk => ai_sdk::text_message(assistant, &text),
        Format::Gemini => gemini::text_content(assistant, &text),
        Format::Bedrock => bedrock::text_message(assistant, &text),
        Format::LangChain => langchain::text_message(assistant, &text),
        Format::Native => message.clone(),
    }]
}

/// The validity report of a list (`check::check_conversation`). A list in another format is
/// checked on its view (the pairing rules are the same), and the problems name the caller's
/// items; items that cannot be read are an `invalid_message` problem. Only a format that
/// cannot be told is an error.
pub fn check_items(
    items: Vec<Value>,
    chosen: Option<Format>,
) -> Result<Vec<crate::model::check::Problem>, ValidationError> {
    use crate::model::check::{check_conversation, Problem, INVALID_MESSAGE};
    if detect(&items, chosen)? == Format::Native {
        return Ok(check_conversation(&items));
    }
    Ok(match Input::read(items, chosen) {
        Ok(input) => check_conversation(input.messages())
            .into_iter()
            .map(|mut problem| {
                problem.index = input.item_index(problem.index);
                problem
            })
            .collect(),
        Err(e) => vec![Problem {
            index: e.index.unwrap_or(0),
            kind: INVALID_MESSAGE,
            message: e.to_string(),
        }],
    })
}

/// A summary message in the format of `items` (detected unless `chosen` names one), as the
/// items it is written as: `[...head, summary, ...tail]` in the caller's own format.
pub fn summary_message(
    text: &str,
    items: &[Value],
    chosen: Option<Format>,
) -> Result<Vec<Value>, ValidationError> {
    let format = detect(items, chosen)?;
    Ok(to_format(
        format,
        &json!({ "role": "user", "content": text }),
    ))
}

/// A caller's list read in its format: the items themselves, and (for a format other than the
/// native ones) their view.
#[derive(Debug, Clone)]
pub struct Input {
    pub items: Vec<Value>,
    pub view: Option<View>,
}

impl Input {
    /// Detects (or takes) the format, validates the items and reads their view. Errors name
    /// the item and field.
    pub fn read(items: Vec<Value>, chosen: Option<Format>) -> Result<Input, ValidationError> {
        let format = detect(&items, chosen)?;
        if format == Format::Native {
            crate::model::message::validate(&items)?;
            return Ok(Input { items, view: None });
        }
        let view = view(format, &items)?;
        Ok(Input {
            items,
            view: Some(view),
        })
    }

    pub fn format(&self) -> Format {
        self.view.as_ref().map_or(Format::Native, |v| v.format)
    }

    /// The messages the library works on: the view, or the items when they are native.
    pub fn messages(&self) -> &[Value] {
        match &self.view {
            Some(view) => &view.messages,
            None => &self.items,
        }
    }

    /// Per-message counts of [`Input::messages`] from per-item counts.
    pub fn counts(&self, item_counts: Vec<usize>) -> Vec<usize> {
        match &self.view {
            Some(view) => view.group_counts(&item_counts),
            None => item_counts,
        }
    }

    /// The index of the first item of message `index` of [`Input::messages`] (the item count
    /// for the end).
    pub fn item_index(&self, index: usize) -> usize {
        match &self.view {
            Some(view) => view
                .groups
                .get(index)
                .map_or(self.items.len(), |range| range.start),
            None => index,
        }
    }

    /// The UTF-8 bytes of the tool results each item carries (the `maxToolOutputBytes`
    /// trigger), each item read on its own in the list's format.
    pub fn tool_output_bytes(&self) -> Result<Vec<usize>, ValidationError> {
        let format = self.format();
        let bytes = crate::model::trigger::tool_output_bytes;
        self.items
            .iter()
            .enumerate()
            .map(|(index, item)| match format {
                Format::Native => Ok(bytes(item)),
                _ => Ok(bytes(&view_item(format, index, item)?)),
            })
            .collect()
    }

    /// Pieces on [`Input::messages`] as pieces of the items.
    pub fn pieces(&self, pieces: Vec<Piece>) -> Vec<Piece> {
        match &self.view {
            Some(view) => view.to_items(&self.items, pieces).0,
            None => pieces,
        }
    }

    /// A restore's result on the view, said of the items. (The model turn written after a
    /// summary in Bedrock and Gemini lists is part of the summary's view message, and goes with
    /// it.)
    pub fn restored(
        &self,
        restored: Vec<crate::model::piece::Restored>,
    ) -> Vec<crate::model::piece::Restored> {
        use crate::model::piece::Restored;
        let mut out = Vec::with_capacity(restored.len());
        for piece in restored {
            match (piece, &self.view) {
                (Restored::Original(index), Some(view)) => {
                    out.extend(view.groups[index].clone().map(Restored::Original))
                }
                (Restored::Original(index), None) => out.push(Restored::Original(index)),
                // An archived view message gives back the items it holds, in their own format,
                // whatever this list reads as: a list in another format whose kept messages say
                // no format (an AI SDK chat without tool calls reads as native) still gets its
                // own items back.
                (Restored::Archived(message), view) => {
                    let format = source_items(&message)
                        .map(|(format, _)| format)
                        .or(view.as_ref().map(|view| view.format));
                    match format {
                        Some(format) => out.extend(
                            to_format(format, &message)
                                .into_iter()
                                .map(Restored::Archived),
                        ),
                        None => out.push(Restored::Archived(message)),
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
