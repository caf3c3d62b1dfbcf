//! Exact token counting (PRD F-001, SPEC §4.2).
//!
//! Text is counted with OpenAI's BPE encodings (`o200k_base` by default, `cl100k_base` on
//! request), with tiktoken's merge rule over OpenAI's vocabularies ([`crate::model::bpe`]),
//! which gives tiktoken's exact counts (cross-checked against `tiktoken-rs` and `bpe-openai` in
//! the tests and against js-tiktoken from JavaScript); special-token text such as `<|endoftext|>` is counted as ordinary text,
//! because that is what it is inside a user's message.
//!
//! What each part of a message counts (the table is `count_known_block`; the estimates are in
//! [`crate::model::media`]):
//! - a string content, `text` / `refusal` blocks, an OpenAI `refusal` or `name` field, a
//!   `compaction` summary, `search_result` (`source`, `title`, text), `mid_conv_system`: the
//!   tokens of the text;
//! - `thinking`: its text. Anthropic strips thinking of earlier turns before billing for most
//!   models (Opus 4.5+ and Sonnet 4.6+ keep it by default) but bills it in the current turn's
//!   tool loop; which applies depends on the model and on the caller's position in the loop, so
//!   thinking counts as sent: the raw count (F-001) is what the request carries, and a trigger
//!   counting it is early, never late. The `signature` is not text and counts nothing;
//! - `tool_use`, `server_tool_use`, `mcp_tool_use`: its `name` plus `JSON.stringify(input)` in
//!   the caller's key order; OpenAI `tool_calls` and legacy `function_call`: the name plus the
//!   arguments (`custom` tool calls: name plus input);
//! - `tool_result`, `mcp_tool_result` and `role: 'tool'`: their content, recursively; the
//!   server-tool results (`web_search_tool_result`, `code_execution_tool_result`, …): the text
//!   of their payload (`count_payload`);
//! - `image` / `image_url`: estimated from the pixel size in the image header (Anthropic:
//!   ≈ width × height / 750 after its downscaling; OpenAI: its 512-px tile rule), never
//!   tokenized as base64; `document` and OpenAI `file`: text sources counted, PDFs estimated
//!   per page; `input_audio`: from its duration;
//! - encrypted content (`redacted_thinking`, `encrypted_content`, …): from its size;
//! - `container_upload` and `fallback`: 0 (not rendered into the prompt);
//! - unknown block types: 0, with one warning per type per process.
//!
//! There is no per-message overhead: a message whose content is a string counts exactly as
//! that string (the PRD's rule), so counts are reproducible with any tiktoken implementation.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Mutex;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::model::bpe::{self, Ranks};
use crate::model::media;
pub use crate::model::media::{image_tokens, PDF_PAGE_TOKENS, UNKNOWN_IMAGE_TOKENS};
use crate::model::message::{
    block_type, parse_json_lenient, validate_message, ListError, MAX_CONTENT_DEPTH,
    PARALLEL_PARSE_MIN,
};

pub use crate::model::encoding::Encoding;

/// Loads the encoding's tables now rather than on first use.
pub fn preload(encoding: Encoding) {
    let _ = count_text(encoding, "a");
}

/// The exact token count of a string.
///
/// The text is split with the encoding's pretokenizer ([`crate::model::pretokenize`], which splits
/// exactly like tiktoken's regular expressions) and every piece is counted with tiktoken's
/// byte-pair merge ([`Ranks::count`]), exactly as tiktoken's `encode_ordinary` does. Piece counts
/// are remembered per thread: a conversation has ~200K pieces per 200K tokens but only a few
/// thousand distinct ones (gpt-tokenizer caches the same way).
pub fn count_text(encoding: Encoding, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let bpe = bpe::ranks(encoding);
    PIECE_COUNTS.with(|counts| {
        let mut counts = counts.borrow_mut();
        let counts = &mut counts[encoding as usize];
        let mut total = 0;
        let mut start = 0;
        for piece in crate::model::pretokenize::pieces(encoding, text) {
            total += counts.count(bpe, text.as_bytes(), start, piece.len());
            start += piece.len();
        }
        total
    })
}

/// Pieces longer than this are rare and not worth remembering.
const MAX_CACHED_PIECE_BYTES: usize = 64;
/// Sets of the caches of pieces of up to 8 bytes (7 pieces per set: 28 672 pieces, 256 KB) and
/// of 9 to 16 bytes (3 per set: 3 072 pieces, 64 KB), per thread and encoding. A 200K-token
/// conversation has ~200K pieces but only ~7 000 distinct ones, ~4 000 of which make 98 % of
/// its pieces, and a conversation not seen before brings ~1 300 new ones: the caches hold the
/// pieces of the last few conversations, and stay small enough for the core's L2 cache. A
/// table that grows to every piece ever seen (it was up to 5 MB) misses the CPU's caches on
/// nearly every piece once other work has evicted it: a warm count of new content took 3 to
/// 4 times as long after another tokenizer had run.
const SHORT_PIECE_SETS: usize = 1 << 12;
const MEDIUM_PIECE_SETS: usize = 1 << 10;
/// How many counts of longer pieces each thread remembers per encoding before starting over.
const MAX_LONG_PIECES: usize = 50_000;

/// The remembered piece counts of one encoding on one thread.
struct PieceCounts {
    /// Pieces of at most 8 bytes (~97 % of them).
    short: PieceCountCache<u64, 7>,
    /// Pieces of 9 to 16 bytes.
    medium: PieceCountCache<u128, 3>,
    /// Longer pieces, up to [`MAX_CACHED_PIECE_BYTES`].
    long: FxHashMap<Box<[u8]>, u32>,
}

impl Default for PieceCounts {
    fn default() -> Self {
        PieceCounts {
            short: PieceCountCache::new(SHORT_PIECE_SETS),
            medium: PieceCountCache::new(MEDIUM_PIECE_SETS),
            long: FxHashMap::default(),
        }
    }
}

impl PieceCounts {
    /// The token count of the piece `text[start..start + len]`.
    #[inline]
    fn count(&mut self, bpe: &Ranks, text: &[u8], start: usize, len: usize) -> usize {
        let piece = &text[start..start + len];
        let count = || bpe.count(piece);
        if len <= 8 {
            self.short
                .get_or_insert_with(u64::read(text, start, len), count)
        } else if len <= 16 {
            self.medium
                .get_or_insert_with(u128::read(text, start, len), count)
        } else if len <= MAX_CACHED_PIECE_BYTES {
            if let Some(&count) = self.long.get(piece) {
                return count as usize;
            }
            if self.long.len() >= MAX_LONG_PIECES {
                self.long.clear();
            }
            let count = count();
            self.long.insert(piece.into(), count as u32);
            count
        } else {
            count()
        }
    }
}

/// A piece of at most `size_of::<Self>()` bytes as a number: its bytes, little-endian, padded
/// with `0xFF`. No UTF-8 text contains the byte `0xFF`, so different pieces (of any lengths)
/// have different keys, and the all-`0xFF` key, [`PieceKey::NONE`], is no piece's.
trait PieceKey: Copy + Eq {
    const NONE: Self;
    /// The key of `text[start..start + len]`.
    fn read(text: &[u8], start: usize, len: usize) -> Self;
    /// A hash whose top bits are well mixed (they pick the set).
    fn hash(self) -> u64;
}

/// `2^64 / φ`: multiplying by it mixes every bit of a key into the top bits (Fibonacci hashing).
const FIBONACCI_MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

impl PieceKey for u64 {
    const NONE: u64 = u64::MAX;

    #[inline]
    fn read(text: &[u8], start: usize, len: usize) -> u64 {
        let padding = u64::MAX.checked_shl(8 * len as u32).unwrap_or(0);
        u64::from_le_bytes(bytes_from(text, start, len)) | padding
    }

    #[inline]
    fn hash(self) -> u64 {
        self.wrapping_mul(FIBONACCI_MULTIPLIER)
    }
}

impl PieceKey for u128 {
    const NONE: u128 = u128::MAX;

    #[inline]
    fn read(text: &[u8], start: usize, len: usize) -> u128 {
        let padding = u128::MAX.checked_shl(8 * len as u32).unwrap_or(0);
        u128::from_le_bytes(bytes_from(text, start, len)) | padding
    }

    #[inline]
    fn hash(self) -> u64 {
        ((self as u64) ^ ((self >> 64) as u64).rotate_left(29)).wrapping_mul(FIBONACCI_MULTIPLIER)
    }
}

/// `N` bytes that begin with `text[start..start + len]` (`len` ≤ `N`): the `N` bytes of the
/// text from `start` in one load where the text is long enough, else the piece and `0xFF`s.
#[inline]
fn bytes_from<const N: usize>(text: &[u8], start: usize, len: usize) -> [u8; N] {
    debug_assert!((1..=N).contains(&len));
    match text.get(start..start + N) {
        Some(window) => window.try_into().expect("N bytes"),
        None => {
            let mut bytes = [0xFF; N];
            bytes[..len].copy_from_slice(&text[start..start + len]);
            bytes
        }
    }
}

/// Token counts of short pieces by [`PieceKey`]: a set-associative cache of a fixed size.
/// The key's hash picks a set of `W` entries, one cache line; a piece not in its set replaces
/// the set's oldest entry. Nothing is allocated per piece, one number is compared per entry,
/// and the whole cache stays small enough to stay in the CPU's cache.
struct PieceCountCache<K, const W: usize> {
    /// Allocated at first use.
    sets: Box<[PieceSet<K, W>]>,
    set_count: usize,
    /// 64 − log2(number of sets): the hash's top bits pick the set.
    shift: u32,
}

/// `W` keys and their counts (a piece of at most 16 bytes has at most 16 tokens), in one
/// cache line for `PieceSet<u64, 7>` and `PieceSet<u128, 3>`.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PieceSet<K, const W: usize> {
    keys: [K; W],
    counts: [u8; W],
    /// The entry the next new piece replaces.
    next: u8,
}

impl<K: PieceKey, const W: usize> PieceCountCache<K, W> {
    fn new(set_count: usize) -> Self {
        assert!(set_count.is_power_of_two() && W < u8::MAX as usize);
        PieceCountCache {
            sets: Box::new([]),
            set_count,
            shift: 64 - set_count.trailing_zeros(),
        }
    }

    #[inline]
    fn get_or_insert_with(&mut self, key: K, count: impl FnOnce() -> usize) -> usize {
        if self.sets.is_empty() {
            self.allocate();
        }
        let set = &mut self.sets[(key.hash() >> self.shift) as usize];
        if let Some(way) = set.keys.iter().position(|&found| found == key) {
            return set.counts[way] as usize;
        }
        let count = count();
        let way = set.next as usize;
        set.keys[way] = key;
        set.counts[way] = u8::try_from(count).expect("at most 16 tokens");
        set.next = ((way + 1) % W) as u8;
        count
    }

    #[cold]
    fn allocate(&mut self) {
        let empty = PieceSet {
            keys: [K::NONE; W],
            counts: [0; W],
            next: 0,
        };
        self.sets = vec![empty; self.set_count].into();
    }
}

thread_local! {
    static PIECE_COUNTS: RefCell<[PieceCounts; 2]> = RefCell::default();
}

/// Below this much JSON text in a list, counting in parallel costs more than it saves.
const PARALLEL_MIN_MESSAGES: usize = 8;

/// The token count of every message, in order. Large lists are counted in parallel.
pub fn count_each(encoding: Encoding, messages: &[Value]) -> Vec<usize> {
    if messages.len() >= PARALLEL_MIN_MESSAGES {
        messages
            .par_iter()
            .with_min_len(4)
            .map(|message| count_message(encoding, message))
            .collect()
    } else {
        messages
            .iter()
            .map(|message| count_message(encoding, message))
            .collect()
    }
}

/// Parses, validates and counts a JSON message list (the text `JSON.stringify` made of it)
/// without keeping it: each message is parsed, checked and counted on one worker thread and
/// dropped there, so the whole tree never exists at once and freeing it is parallel too.
/// Errors are those of [`crate::model::message::parse_list`] (the first invalid message by index).
pub fn count_list_json(encoding: Encoding, text: &str) -> Result<Vec<usize>, ListError> {
    let raws: Vec<&serde_json::value::RawValue> = match serde_json::from_str(text) {
        Ok(raws) => raws,
        Err(_) => {
            let list = crate::model::message::parse_list(text)?;
            return Ok(count_each(encoding, &list));
        }
    };
    let count_one =
        |(index, raw): (usize, &&serde_json::value::RawValue)| -> Result<usize, ListError> {
            let message =
                parse_json_lenient(raw.get()).map_err(|e| ListError::Json(e.to_string()))?;
            validate_message(index, &message).map_err(ListError::Invalid)?;
            Ok(count_message(encoding, &message))
        };
    let counted: Vec<Result<usize, ListError>> = if raws.len() >= PARALLEL_PARSE_MIN {
        raws.par_iter().enumerate().map(count_one).collect()
    } else {
        raws.iter().enumerate().map(count_one).collect()
    };
    counted.into_iter().collect()
}

/// The total token count of a message list (PRD F-001). Empty list → 0.
pub fn count_messages(encoding: Encoding, messages: &[Value]) -> usize {
    count_each(encoding, messages).into_iter().sum()
}

/// The token count of one message: its content plus the other fields the APIs bill: OpenAI's
/// `tool_calls`, legacy `function_call`, `refusal`, participant `name` and `audio` reference.
pub fn count_message(encoding: Encoding, message: &Value) -> usize {
    let text = |key: &str| {
        message
            .get(key)
            .and_then(Value::as_str)
            .map_or(0, |text| count_text(encoding, text))
    };
    let mut total = match message.get("content") {
        Some(content) => count_content(encoding, content, 0),
        None => 0,
    };
    total += text("name") + text("refusal");
    for key in ["tool_calls", "toolCalls"] {
        if let Some(Value::Array(calls)) = message.get(key) {
            for call in calls {
                total += count_openai_tool_call(encoding, call);
            }
        }
    }
    // Legacy function calling: `{name, arguments}`, like a tool call's `function`.
    if let Some(call) = message.get("function_call").filter(|call| call.is_object()) {
        total += count_function(encoding, call, "arguments");
    }
    // `audio: {id}` points the model at one of its earlier spoken replies, which is billed as
    // audio input. Only the id is sent, so the length is unknown: a documented default, or the
    // reply's own duration when the whole response object (with `data`) was passed back.
    if let Some(audio) = message.get("audio").filter(|audio| audio.is_object()) {
        total += match audio.get("data").and_then(Value::as_str) {
            Some(data) => media::audio_tokens(data, media::AUDIO_OUTPUT_TOKENS_PER_SECOND),
            None => media::UNKNOWN_ASSISTANT_AUDIO_TOKENS,
        };
    }
    total
}

/// An OpenAI tool call: `function` calls carry `{name, arguments}` (a JSON string), `custom`
/// tool calls `{name, input}` (free text).
fn count_openai_tool_call(encoding: Encoding, call: &Value) -> usize {
    match (call.get("function"), call.get("custom")) {
        (Some(function), _) => count_function(encoding, function, "arguments"),
        (None, Some(custom)) => count_function(encoding, custom, "input"),
        (None, None) => 0,
    }
}

/// A function's `name` plus its arguments: the string as given, anything else as its JSON.
fn count_function(encoding: Encoding, function: &Value, arguments_key: &str) -> usize {
    let name = function.get("name").and_then(Value::as_str).unwrap_or("");
    let arguments = match function.get(arguments_key) {
        Some(Value::String(text)) => count_text(encoding, text),
        Some(Value::Null) | None => 0,
        Some(other) => count_text(encoding, &compact_json(other)),
    };
    count_text(encoding, name) + arguments
}

/// Counts a `content` value: a string, or an array of blocks (`null`: nothing).
fn count_content(encoding: Encoding, content: &Value, depth: usize) -> usize {
    match content {
        Value::String(text) => count_text(encoding, text),
        Value::Array(blocks) => blocks
            .iter()
            .map(|block| count_block(encoding, block, depth))
            .sum(),
        _ => 0,
    }
}

/// Counts one content block; a type [`count_known_block`] does not know counts 0, with one
/// warning per type per process.
fn count_block(encoding: Encoding, block: &Value, depth: usize) -> usize {
    count_known_block(encoding, block, depth).unwrap_or_else(|| {
        warn_unknown_block(block_type(block));
        0
    })
}

/// What a content block bills, by type: one row per block type of the Anthropic Messages API
/// (anthropic-sdk-python `types/content_block_param.py` and the beta
/// `types/beta/beta_content_block_param.py`) and per content part of OpenAI Chat Completions
/// (openai-node `resources/chat/completions`), plus the Responses API's text parts.
/// `None` for a type this table does not know.
fn count_known_block(encoding: Encoding, block: &Value, depth: usize) -> Option<usize> {
    if depth >= MAX_CONTENT_DEPTH {
        return Some(0);
    }
    let text = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_str)
            .map_or(0, |text| count_text(encoding, text))
    };
    let content = |key: &str| {
        block
            .get(key)
            .map_or(0, |content| count_content(encoding, content, depth + 1))
    };
    let opaque = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_str)
            .map_or(0, media::opaque_tokens)
    };
    Some(match block_type(block) {
        // Text the model reads. A text block's `citations` are not counted: Anthropic does not
        // bill the `cited_text` of citations passed back.
        "text" | "input_text" | "output_text" => text("text"),
        // Thinking is counted as sent (see the module docs); its `signature` is not text.
        "thinking" => text("thinking"),
        "refusal" => text("refusal"),
        // Anthropic's server-side compaction: the summary (`null` after a failed compaction,
        // which the server treats as a no-op) and any opaque state it round-trips.
        "compaction" => text("content") + opaque("encrypted_content"),
        "mid_conv_system" => content("content"),
        "search_result" => text("source") + text("title") + content("content"),

        // Tool calls: the name plus `JSON.stringify(input)`. Server and MCP tools are run by
        // the API itself, but the call is in the transcript all the same.
        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
            let input = block
                .get("input")
                .map_or(0, |input| count_text(encoding, &compact_json(input)));
            text("name") + input
        }
        "tool_result" | "mcp_tool_result" => content("content"),
        // A tool found by tool search. Its definition comes from `tools`, which
        // `count_tools` counts whole (deferred tools included); the reference is its name.
        "tool_reference" => text("tool_name"),
        // Server-tool results: web search, web fetch, code execution, bash, text editor,
        // tool search, advisor, and the `*_tool_result` types still to come.
        t if t.ends_with("_tool_result") => {
            count_payload(encoding, block.get("content"), depth + 1)
        }

        // Media: estimated from the file's header, never tokenized as base64.
        "image" => estimate_image_source(block.get("source")),
        "image_url" => estimate_openai_image(block.get("image_url")),
        "document" => estimate_document(encoding, block, depth),
        "input_audio" => block
            .get("input_audio")
            .and_then(|audio| audio.get("data"))
            .and_then(Value::as_str)
            .map_or(0, |data| {
                media::audio_tokens(data, media::AUDIO_INPUT_TOKENS_PER_SECOND)
            }),
        "file" => estimate_openai_file(encoding, block.get("file")),

        // Encrypted thinking: billed, but opaque to us.
        "redacted_thinking" => opaque("data"),
        // Not rendered into the prompt: `container_upload` puts a file in the code-execution
        // container (the model reads it through tools); `fallback` only marks a model hop.
        "container_upload" | "fallback" => 0,
        // An AI SDK tool approval: the SDK does not send it to the model.
        "tool_approval_response" => 0,
        _ => return None,
    })
}

/// Counts a server-tool result's `content`, which the API renders for the model: every string
/// and number in it counts as text (an error's `error_code`, a search result's `url`, `title`
/// and `page_age`, `stdout`, `stderr`, `return_code`, a viewed file's `content`, …), except
/// - nested blocks [`count_known_block`] knows (a fetched `document`, `tool_reference`s, text
///   blocks), which count as those blocks;
/// - `encrypted_*` fields (search results' page content, `encrypted_stdout`), which are
///   opaque: [`media::opaque_tokens`];
/// - fields that are not content: `type` tags, ids, file ids, cache and citation settings.
fn count_payload(encoding: Encoding, value: Option<&Value>, depth: usize) -> usize {
    let Some(value) = value else {
        return 0;
    };
    if depth >= MAX_CONTENT_DEPTH {
        return 0;
    }
    match value {
        Value::String(text) => count_text(encoding, text),
        Value::Number(number) => count_text(encoding, &number.to_string()),
        Value::Array(items) => items
            .iter()
            .map(|item| count_payload(encoding, Some(item), depth + 1))
            .sum(),
        Value::Object(fields) => {
            if let Some(count) = count_known_block(encoding, value, depth) {
                return count;
            }
            fields
                .iter()
                .map(|(key, field)| match key.as_str() {
                    "type" | "tool_use_id" | "file_id" | "cache_control" | "citations"
                    | "caller" => 0,
                    key if key.starts_with("encrypted_") => {
                        field.as_str().map_or(0, media::opaque_tokens)
                    }
                    _ => count_payload(encoding, Some(field), depth + 1),
                })
                .sum()
        }
        Value::Bool(_) | Value::Null => 0,
    }
}

/// `JSON.stringify(value)`: compact, in the value's own key order.
pub fn compact_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The unknown block types already warned about.
static WARNED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn warn_unknown_block(block_type: &str) {
    let mut warned = WARNED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if warned
        .get_or_insert_with(HashSet::new)
        .insert(block_type.to_string())
    {
        tracing::warn!(
            block_type,
            "unknown content block type {block_type:?} counted as 0 tokens"
        );
    }
}

/// An Anthropic image `source`: `base64` (sized from its header), `url` (a `data:` URL is
/// sized too), `file` (a Files API id: unknown size).
fn estimate_image_source(source: Option<&Value>) -> usize {
    let field = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_str);
    let size = match source.and_then(|s| s.get("type")).and_then(Value::as_str) {
        Some("base64") => field("data").and_then(media::base64_image_size),
        Some("url") => field("url").and_then(media::data_url_image_size),
        _ => None,
    };
    size.map_or(UNKNOWN_IMAGE_TOKENS, |(width, height)| {
        image_tokens(width, height)
    })
}

/// An OpenAI `image_url` part (`{url, detail}`, or a bare URL string from older SDKs): the
/// tile rule when a `data:` URL gives the size, else OpenAI's largest image for its detail.
fn estimate_openai_image(image_url: Option<&Value>) -> usize {
    let (url, detail) = match image_url {
        Some(Value::String(url)) => (url.as_str(), None),
        Some(image) => (
            image.get("url").and_then(Value::as_str).unwrap_or(""),
            image.get("detail").and_then(Value::as_str),
        ),
        None => ("", None),
    };
    match media::data_url_image_size(url) {
        Some((width, height)) => media::openai_image_tokens(width, height, detail),
        None if detail == Some("low") => media::OPENAI_IMAGE_BASE_TOKENS,
        None => media::OPENAI_UNKNOWN_IMAGE_TOKENS,
    }
}

/// An OpenAI `file` part: its `filename` plus the file. Chat Completions reads PDFs, giving
/// the model the extracted text and an image of each page, so `file_data` (base64 or a
/// `data:` URL) is estimated per page; a `file_id` alone has an unknown size: one page.
fn estimate_openai_file(encoding: Encoding, file: Option<&Value>) -> usize {
    let Some(file) = file else {
        return 0;
    };
    let name = file
        .get("filename")
        .and_then(Value::as_str)
        .map_or(0, |name| count_text(encoding, name));
    let body = match file.get("file_data").and_then(Value::as_str) {
        Some(data) => media::pdf_tokens(media::strip_data_url(data)),
        None => PDF_PAGE_TOKENS,
    };
    name + body
}

/// An Anthropic `document`: its `title` and `context` (both given to the model) plus its
/// source. Text sources (`text` with `data`, `content` with a string or blocks) are counted;
/// a base64 PDF is estimated per page; a PDF by `url` or Files API `file` id has an unknown
/// size: one page.
fn estimate_document(encoding: Encoding, block: &Value, depth: usize) -> usize {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map_or(0, |text| count_text(encoding, text))
    };
    let source = block.get("source");
    let field = |key: &str| source.and_then(|s| s.get(key));
    let body = match field("type").and_then(Value::as_str) {
        None => 0,
        Some("text") => text(field("data")),
        Some("content") => {
            field("content").map_or(0, |content| count_content(encoding, content, depth + 1))
        }
        Some("base64") => field("data")
            .and_then(Value::as_str)
            .map_or(PDF_PAGE_TOKENS, media::pdf_tokens),
        Some(_) => PDF_PAGE_TOKENS,
    };
    text(block.get("title")) + text(block.get("context")) + body
}

/// Counts an Anthropic top-level `system` value (a string or text blocks).
pub fn count_system(encoding: Encoding, system: &Value) -> usize {
    count_content(encoding, system, 0)
}

/// Counts tool definitions as their compact JSON, which is close to how the APIs render them.
pub fn count_tools(encoding: Encoding, tools: &Value) -> usize {
    match tools {
        Value::Array(tools) => tools
            .iter()
            .map(|tool| count_text(encoding, &compact_json(tool)))
            .sum(),
        Value::Null => 0,
        other => count_text(encoding, &compact_json(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    /// bpe-openai's tokenizer, the second reference beside tiktoken-rs.
    fn tokenizer(encoding: Encoding) -> &'static bpe_openai::Tokenizer {
        match encoding {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        }
    }
    use serde_json::json;

    fn tiktoken(text: &str) -> usize {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len()
    }

    #[test]
    fn counting_json_text_equals_counting_parsed_messages() {
        let messages: Vec<Value> = (0..50)
            .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message {i} 你好 🎉 ").repeat(i + 1)}))
            .collect();
        let text = serde_json::to_string(&messages).unwrap();
        assert_eq!(
            count_list_json(Encoding::O200kBase, &text).unwrap(),
            count_each(Encoding::O200kBase, &messages)
        );
        let mut broken = messages.clone();
        broken[30] = json!({"role": "user"});
        let error = count_list_json(
            Encoding::O200kBase,
            &serde_json::to_string(&broken).unwrap(),
        )
        .unwrap_err();
        assert!(
            matches!(error, ListError::Invalid(e) if e.to_string() == "messages[30].content is missing")
        );
        assert!(matches!(
            count_list_json(Encoding::O200kBase, "{}"),
            Err(ListError::Invalid(_))
        ));
    }

    #[test]
    fn empty_list_and_empty_string_count_zero() {
        assert_eq!(count_messages(Encoding::O200kBase, &[]), 0);
        assert_eq!(
            count_messages(
                Encoding::O200kBase,
                &[json!({"role": "user", "content": ""})]
            ),
            0
        );
    }

    #[test]
    fn string_content_counts_exactly_as_the_tokenizer() {
        for text in [
            "Hello, world!",
            "<|endoftext|> is ordinary text here",
            "emoji 🎉🧑‍💻 and CJK 你好世界，压缩上下文",
            "   leading spaces\n\n\ttabs\r\n",
            "fn main() { println!(\"{}\", 1 + 2); }",
        ] {
            let message = json!({"role": "user", "content": text});
            assert_eq!(
                count_message(Encoding::O200kBase, &message),
                tiktoken(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn cl100k_matches_tiktoken() {
        let text = "The quick brown fox 你好 <|endoftext|> 12345";
        let expected = tiktoken_rs::cl100k_base_singleton()
            .encode_ordinary(text)
            .len();
        assert_eq!(count_text(Encoding::Cl100kBase, text), expected);
    }

    #[test]
    fn tool_use_counts_name_and_compact_input_in_key_order() {
        let block = json!({"type": "tool_use", "id": "t", "name": "read_file", "input": {"z": 1, "a": "x y"}});
        let message = json!({"role": "assistant", "content": [block]});
        assert_eq!(
            count_message(Encoding::O200kBase, &message),
            tiktoken("read_file") + tiktoken(r#"{"z":1,"a":"x y"}"#)
        );
    }

    #[test]
    fn tool_result_counts_recursively() {
        let message = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "text", "text": "alpha beta"},
                {"type": "tool_result", "tool_use_id": "u", "content": "gamma"}
            ]}
        ]});
        assert_eq!(
            count_message(Encoding::O200kBase, &message),
            tiktoken("alpha beta") + tiktoken("gamma")
        );
    }

    #[test]
    fn openai_tool_calls_count_name_and_arguments() {
        let message = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls -la\"}"}}
        ]});
        assert_eq!(
            count_message(Encoding::O200kBase, &message),
            tiktoken("bash") + tiktoken("{\"command\":\"ls -la\"}")
        );
    }

    #[test]
    fn images_are_estimated_from_their_header_not_their_base64() {
        // A 1000×500 PNG header (IHDR) with a large padding body.
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&1000u32.to_be_bytes());
        png.extend_from_slice(&500u32.to_be_bytes());
        png.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        png.extend(std::iter::repeat_n(0u8, 200_000));
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let message = json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        ]});
        assert_eq!(count_message(Encoding::O200kBase, &message), 667);
        assert_eq!(image_tokens(1000, 500), 667);
        // Downscaled: a 4000×3000 photo costs what ≈1.15 MP costs.
        assert!((1_500..=1_600).contains(&image_tokens(4000, 3000)));
        let unknown = json!({"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]});
        assert_eq!(
            count_message(Encoding::O200kBase, &unknown),
            UNKNOWN_IMAGE_TOKENS
        );
    }

    #[test]
    fn unknown_blocks_count_zero() {
        let message = json!({"role": "user", "content": [{"type": "hologram", "text": "not counted"}, {"type": "text", "text": "hi"}]});
        assert_eq!(count_message(Encoding::O200kBase, &message), tiktoken("hi"));
    }

    fn warned(block_type: &str) -> bool {
        WARNED
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|warned| warned.contains(block_type))
    }

    #[test]
    fn known_blocks_and_server_payloads_are_never_warned_about() {
        let message = json!({"role": "assistant", "content": [
            {"type": "compaction", "content": null},
            {"type": "container_upload", "file_id": "f"},
            {"type": "fallback", "to": {"model": "m"}},
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": [
                {"type": "web_search_result", "url": "u", "title": "t", "encrypted_content": "AAAA"}]},
            {"type": "code_execution_tool_result", "tool_use_id": "c", "content": {
                "type": "code_execution_result", "stdout": "", "stderr": "", "return_code": 0,
                "content": [{"type": "code_execution_output", "file_id": "f"}]}},
            {"type": "tool_search_tool_result", "tool_use_id": "x", "content": {
                "type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "n"}]}},
            {"type": "mystery_block_of_the_future"}
        ]});
        assert_eq!(
            count_message(Encoding::O200kBase, &message),
            t(&["u", "t", "0", "n"]) + 1
        );
        for known in [
            "compaction",
            "container_upload",
            "fallback",
            "web_search_tool_result",
            "web_search_result",
            "code_execution_result",
            "code_execution_output",
            "tool_search_tool_search_result",
            "tool_reference",
        ] {
            assert!(!warned(known), "{known}");
        }
        assert!(warned("mystery_block_of_the_future"));
    }

    // ---- Every block type the APIs bill. Each payload is shaped like the API reference; the
    // ---- SDK type it follows is named in a comment (anthropic-sdk-python `types/…`,
    // ---- openai-node `resources/chat/completions/completions.ts`).

    /// The count of one block in a message of `role`.
    fn block_count(role: &str, block: Value) -> usize {
        let message = json!({"role": role, "content": [block]});
        crate::model::message::validate(std::slice::from_ref(&message))
            .expect("valid API content is accepted");
        count_message(Encoding::O200kBase, &message)
    }

    fn t(texts: &[&str]) -> usize {
        texts.iter().map(|text| tiktoken(text)).sum()
    }

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// A PNG header (IHDR) of `width` × `height`, with a padding body.
    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&width.to_be_bytes());
        png.extend_from_slice(&height.to_be_bytes());
        png.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        png.extend(std::iter::repeat_n(0u8, 10_000));
        png
    }

    /// A two-page PDF (a `/Pages` tree and two `/Page` objects, one written `/Type/Page`).
    fn pdf() -> Vec<u8> {
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n\
          2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj\n\
          3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n\
          4 0 obj << /Type/Page /Parent 2 0 R >> endobj\n%%EOF\n"
            .to_vec()
    }

    /// 400 base64 characters of opaque data: 100 tokens.
    fn opaque() -> String {
        "EqQBCkYIBxgCKkBx9Pz0".repeat(20)
    }

    #[test]
    fn compaction_counts_its_summary() {
        // beta/beta_compaction_block_param.py: {type, content: str | null, encrypted_content?}.
        let summary = "The user is migrating the billing service to Postgres 16; tests pass.";
        assert_eq!(
            block_count(
                "assistant",
                json!({"type": "compaction", "content": summary})
            ),
            t(&[summary])
        );
        // A failed compaction (`null`) is a no-op for the server.
        assert_eq!(
            block_count("assistant", json!({"type": "compaction", "content": null})),
            0
        );
        assert_eq!(
            block_count(
                "assistant",
                json!({"type": "compaction", "content": summary, "encrypted_content": opaque(),
                       "cache_control": {"type": "ephemeral"}})
            ),
            t(&[summary]) + 100
        );
    }

    #[test]
    fn search_results_count_source_title_and_text() {
        // search_result_block_param.py: {type, source, title, content: [text blocks], citations?}.
        let block = json!({
            "type": "search_result",
            "source": "https://docs.example.com/api/rate-limits",
            "title": "Rate limits",
            "content": [
                {"type": "text", "text": "Requests are limited to 50 per minute per key."},
                {"type": "text", "text": "Exceeding the limit returns HTTP 429."}
            ],
            "citations": {"enabled": true}
        });
        assert_eq!(
            block_count("user", block.clone()),
            t(&[
                "https://docs.example.com/api/rate-limits",
                "Rate limits",
                "Requests are limited to 50 per minute per key.",
                "Exceeding the limit returns HTTP 429."
            ])
        );
        // Inside a tool result too (the search-results guide returns them from a client tool).
        assert_eq!(
            block_count(
                "user",
                json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [block]})
            ),
            t(&[
                "https://docs.example.com/api/rate-limits",
                "Rate limits",
                "Requests are limited to 50 per minute per key.",
                "Exceeding the limit returns HTTP 429."
            ])
        );
    }

    #[test]
    fn documents_count_every_source_kind() {
        // document_block_param.py: source is base64 PDF | plain text | content | url PDF | file;
        // `title` and `context` are given to the model.
        let text_source = json!({"type": "document", "title": "notes.txt", "context": "From the repo wiki",
            "source": {"type": "text", "media_type": "text/plain", "data": "Deploys run at 09:00 UTC."},
            "citations": {"enabled": true}});
        assert_eq!(
            block_count("user", text_source),
            t(&[
                "notes.txt",
                "From the repo wiki",
                "Deploys run at 09:00 UTC."
            ])
        );
        let content_source = json!({"type": "document", "title": "FAQ",
        "source": {"type": "content", "content": [
            {"type": "text", "text": "Q: Is there a free tier?"},
            {"type": "text", "text": "A: Yes, 1,000 calls a month."}
        ]}});
        assert_eq!(
            block_count("user", content_source),
            t(&[
                "FAQ",
                "Q: Is there a free tier?",
                "A: Yes, 1,000 calls a month."
            ])
        );
        let string_content = json!({"type": "document",
            "source": {"type": "content", "content": "Plain string content."}});
        assert_eq!(
            block_count("user", string_content),
            t(&["Plain string content."])
        );
        let base64_pdf = json!({"type": "document", "title": "Q3 report",
            "source": {"type": "base64", "media_type": "application/pdf", "data": b64(&pdf())}});
        assert_eq!(
            block_count("user", base64_pdf),
            t(&["Q3 report"]) + 2 * PDF_PAGE_TOKENS
        );
        // A PDF by URL or by Files API id: size unknown here, one page.
        let url_pdf = json!({"type": "document",
            "source": {"type": "url", "url": "https://example.com/q3.pdf"}});
        assert_eq!(block_count("user", url_pdf), PDF_PAGE_TOKENS);
        let file = json!({"type": "document", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}});
        assert_eq!(block_count("user", file), PDF_PAGE_TOKENS);
    }

    #[test]
    fn images_count_every_source_kind() {
        // image_block_param.py: source is base64 | url | file.
        let base64 = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&png(1000, 500))}});
        assert_eq!(block_count("user", base64), image_tokens(1000, 500));
        let url = json!({"type": "image", "source": {"type": "url", "url": "https://upload.wikimedia.org/a.jpg"}});
        assert_eq!(block_count("user", url), UNKNOWN_IMAGE_TOKENS);
        let file = json!({"type": "image", "source": {"type": "file", "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"}});
        assert_eq!(block_count("user", file), UNKNOWN_IMAGE_TOKENS);
    }

    #[test]
    fn thinking_counts_its_text_not_its_signature() {
        // thinking_block_param.py: {type, thinking, signature}.
        let block = json!({"type": "thinking",
            "thinking": "The user wants the 3rd Fibonacci prime; check 2, 3, 5.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".repeat(20)});
        assert_eq!(
            block_count("assistant", block),
            t(&["The user wants the 3rd Fibonacci prime; check 2, 3, 5."])
        );
        // redacted_thinking_block_param.py: {type, data} (encrypted): its size.
        assert_eq!(
            block_count(
                "assistant",
                json!({"type": "redacted_thinking", "data": opaque()})
            ),
            100
        );
    }

    #[test]
    fn server_tool_calls_and_results_count_their_text() {
        // server_tool_use_block_param.py: {id, input, name, type}, like tool_use.
        let call = json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
            "input": {"query": "postgres 16 release date"}});
        assert_eq!(
            block_count("assistant", call),
            t(&["web_search", r#"{"query":"postgres 16 release date"}"#])
        );

        // web_search_tool_result_block_param.py: content is [web_search_result_block_param.py
        // {encrypted_content, title, type, url, page_age?}] or an error {type, error_code}.
        let results = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            {"type": "web_search_result", "url": "https://www.postgresql.org/about/news/",
             "title": "PostgreSQL 16 Released!", "encrypted_content": opaque(), "page_age": "September 14, 2023"},
            {"type": "web_search_result", "url": "https://en.wikipedia.org/wiki/PostgreSQL",
             "title": "PostgreSQL - Wikipedia", "encrypted_content": opaque(), "page_age": null}
        ]});
        assert_eq!(
            block_count("assistant", results),
            t(&[
                "https://www.postgresql.org/about/news/",
                "PostgreSQL 16 Released!",
                "September 14, 2023",
                "https://en.wikipedia.org/wiki/PostgreSQL",
                "PostgreSQL - Wikipedia"
            ]) + 2 * 100
        );
        let error = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_02",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}});
        assert_eq!(block_count("assistant", error), t(&["max_uses_exceeded"]));

        // web_fetch_tool_result_block_param.py: content is web_fetch_block_param.py
        // {type: web_fetch_result, url, retrieved_at?, content: document} or an error.
        let fetch = json!({"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_03", "content": {
            "type": "web_fetch_result", "url": "https://example.com/changelog",
            "retrieved_at": "2025-08-25T10:30:00Z",
            "content": {"type": "document", "title": "Changelog", "citations": {"enabled": true},
                "source": {"type": "text", "media_type": "text/plain", "data": "v2.1: faster startup."}}
        }});
        assert_eq!(
            block_count("assistant", fetch),
            t(&[
                "https://example.com/changelog",
                "2025-08-25T10:30:00Z",
                "Changelog",
                "v2.1: faster startup."
            ])
        );
        let fetch_pdf = json!({"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_04", "content": {
            "type": "web_fetch_result", "url": "https://example.com/a.pdf",
            "content": {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(&pdf())}}
        }});
        assert_eq!(
            block_count("assistant", fetch_pdf),
            t(&["https://example.com/a.pdf"]) + 2 * PDF_PAGE_TOKENS
        );
    }

    #[test]
    fn code_execution_results_count_their_output() {
        // code_execution_result_block_param.py: {content: [{type, file_id}], return_code,
        // stderr, stdout, type}; the output files are ids, not text.
        let result = json!({"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_05", "content": {
            "type": "code_execution_result", "stdout": "mean=4.2 sd=1.1\n", "stderr": "",
            "return_code": 0, "content": [{"type": "code_execution_output", "file_id": "file_011CRx"}]
        }});
        assert_eq!(
            block_count("assistant", result),
            t(&["mean=4.2 sd=1.1\n", "0"])
        );
        // encrypted_code_execution_result_block_param.py: `encrypted_stdout` is opaque.
        let encrypted = json!({"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_06", "content": {
            "type": "encrypted_code_execution_result", "encrypted_stdout": opaque(),
            "stderr": "warning: slow", "return_code": 1, "content": []
        }});
        assert_eq!(
            block_count("assistant", encrypted),
            100 + t(&["warning: slow", "1"])
        );
        // bash_code_execution_result_block_param.py: the same shape.
        let bash = json!({"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_07", "content": {
            "type": "bash_code_execution_result", "stdout": "total 8\ndata.csv\n",
            "stderr": "ls: cannot access 'x': No such file", "return_code": 2,
            "content": [{"type": "bash_code_execution_output", "file_id": "file_011CRy"}]
        }});
        assert_eq!(
            block_count("assistant", bash),
            t(&[
                "total 8\ndata.csv\n",
                "ls: cannot access 'x': No such file",
                "2"
            ])
        );
        let bash_error = json!({"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_08",
            "content": {"type": "bash_code_execution_tool_result_error", "error_code": "execution_time_exceeded"}});
        assert_eq!(
            block_count("assistant", bash_error),
            t(&["execution_time_exceeded"])
        );
    }

    #[test]
    fn text_editor_results_count_their_text() {
        // text_editor_code_execution_view_result_block_param.py: {content, file_type,
        // num_lines?, start_line?, total_lines?}.
        let view = json!({"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_09", "content": {
            "type": "text_editor_code_execution_view_result", "file_type": "text",
            "content": "import pandas as pd\ndf = pd.read_csv('data.csv')\n",
            "num_lines": 2, "start_line": 1, "total_lines": 2
        }});
        assert_eq!(
            block_count("assistant", view),
            t(&[
                "text",
                "import pandas as pd\ndf = pd.read_csv('data.csv')\n",
                "2",
                "1",
                "2"
            ])
        );
        // …_str_replace_result_block_param.py: {lines?, new_lines?, new_start?, old_lines?, old_start?}.
        let replace = json!({"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_10", "content": {
            "type": "text_editor_code_execution_str_replace_result",
            "lines": ["-x = 1", "+x = 2"], "new_lines": 1, "new_start": 3, "old_lines": 1, "old_start": 3
        }});
        assert_eq!(
            block_count("assistant", replace),
            t(&["-x = 1", "+x = 2", "1", "3", "1", "3"])
        );
        // …_create_result_block_param.py: {is_file_update}: nothing to read.
        let create = json!({"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_11",
            "content": {"type": "text_editor_code_execution_create_result", "is_file_update": false}});
        assert_eq!(block_count("assistant", create), 0);
    }

    #[test]
    fn tool_search_counts_the_tool_names() {
        // tool_search_tool_result_block_param.py: content is {type:
        // tool_search_tool_search_result, tool_references: [tool_reference_block_param.py]}.
        let result = json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_12", "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"},
                                {"type": "tool_reference", "tool_name": "get_forecast"}]
        }});
        assert_eq!(
            block_count("assistant", result),
            t(&["get_weather", "get_forecast"])
        );
        // A client tool search returns tool_reference blocks in a tool_result.
        let client = json!({"type": "tool_result", "tool_use_id": "toolu_2",
            "content": [{"type": "tool_reference", "tool_name": "get_weather"}]});
        assert_eq!(block_count("user", client), t(&["get_weather"]));
    }

    #[test]
    fn mcp_and_other_beta_blocks_count_their_text() {
        // beta/beta_mcp_tool_use_block_param.py: {id, input, name, server_name, type}.
        let call = json!({"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "echo",
            "server_name": "example-mcp", "input": {"param1": "value1"}});
        assert_eq!(
            block_count("assistant", call),
            t(&["echo", r#"{"param1":"value1"}"#])
        );
        // beta/beta_request_mcp_tool_result_block_param.py: content is a string or text blocks.
        let result = json!({"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": false,
            "content": [{"type": "text", "text": "Hello from MCP"}]});
        assert_eq!(block_count("assistant", result), t(&["Hello from MCP"]));
        let string_result =
            json!({"type": "mcp_tool_result", "tool_use_id": "mcptoolu_02", "content": "pong"});
        assert_eq!(block_count("assistant", string_result), t(&["pong"]));
        // container_upload_block_param.py {file_id}: the file goes to the container, not the
        // prompt. beta/beta_fallback_block_param.py: "never rendered into the prompt".
        assert_eq!(
            block_count(
                "user",
                json!({"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"})
            ),
            0
        );
        assert_eq!(
            block_count(
                "assistant",
                json!({"type": "fallback", "to": {"model": "claude-sonnet-4-5"}})
            ),
            0
        );
        // beta/beta_mid_conversation_system_block_param.py: {type: mid_conv_system, content: [text]}.
        let system = json!({"type": "mid_conv_system", "content": [{"type": "text", "text": "Answer in French from now on."}]});
        assert_eq!(
            block_count("user", system),
            t(&["Answer in French from now on."])
        );
        // beta/beta_advisor_tool_result_block_param.py: advisor_result {text, stop_reason?}.
        let advisor = json!({"type": "advisor_tool_result", "tool_use_id": "srvtoolu_13",
            "content": {"type": "advisor_result", "text": "Check the off-by-one in the loop."}});
        assert_eq!(
            block_count("assistant", advisor),
            t(&["Check the off-by-one in the loop."])
        );
    }

    #[test]
    fn openai_content_parts_count_like_the_api_bills() {
        // ChatCompletionContentPartText / ChatCompletionContentPartRefusal.
        assert_eq!(
            block_count(
                "user",
                json!({"type": "text", "text": "What is in this image?"})
            ),
            t(&["What is in this image?"])
        );
        assert_eq!(
            block_count(
                "assistant",
                json!({"type": "refusal", "refusal": "I can't help with that."})
            ),
            t(&["I can't help with that."])
        );

        // ChatCompletionContentPartImage {image_url: {url, detail?: auto | low | high}}:
        // 1000×500 is 2 × 1 tiles of 512 px: 85 + 2 × 170.
        let data_url = format!("data:image/png;base64,{}", b64(&png(1000, 500)));
        for (detail, expected) in [
            (json!("high"), 425),
            (json!("auto"), 425),
            (json!(null), 425),
            (json!("low"), 85),
        ] {
            let part =
                json!({"type": "image_url", "image_url": {"url": data_url, "detail": detail}});
            assert_eq!(block_count("user", part), expected, "{detail}");
        }
        // A remote URL cannot be sized: OpenAI's largest image for its detail.
        let remote = |detail: &str| json!({"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg", "detail": detail}});
        assert_eq!(
            block_count("user", remote("auto")),
            crate::model::media::OPENAI_UNKNOWN_IMAGE_TOKENS
        );
        assert_eq!(block_count("user", remote("low")), 85);

        // ChatCompletionContentPartInputAudio {input_audio: {data, format: wav | mp3}}:
        // 1 token per 100 ms of audio.
        let wav = crate::model::media::tests::wav(16_000, 1, 2);
        let part =
            json!({"type": "input_audio", "input_audio": {"data": b64(&wav), "format": "wav"}});
        assert_eq!(block_count("user", part), 20);
        let mp3 = crate::model::media::tests::mp3(10 + 1_000, 3);
        let part =
            json!({"type": "input_audio", "input_audio": {"data": b64(&mp3), "format": "mp3"}});
        assert_eq!(block_count("user", part), 30);

        // ChatCompletionContentPart.File {file: {file_data?, file_id?, filename?}}.
        let file = json!({"type": "file", "file": {"filename": "invoice.pdf",
            "file_data": format!("data:application/pdf;base64,{}", b64(&pdf()))}});
        assert_eq!(
            block_count("user", file),
            t(&["invoice.pdf"]) + 2 * PDF_PAGE_TOKENS
        );
        let by_id = json!({"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}});
        assert_eq!(block_count("user", by_id), PDF_PAGE_TOKENS);
    }

    #[test]
    fn openai_message_fields_count() {
        let count = |message: Value| {
            crate::model::message::validate(std::slice::from_ref(&message)).unwrap();
            count_message(Encoding::O200kBase, &message)
        };
        // ChatCompletionAssistantMessageParam: refusal, name, audio {id}, function_call.
        assert_eq!(
            count(json!({"role": "assistant", "content": null, "refusal": "I can't share that."})),
            t(&["I can't share that."])
        );
        assert_eq!(
            count(json!({"role": "user", "name": "alice_smith", "content": "hi"})),
            t(&["alice_smith", "hi"])
        );
        assert_eq!(
            count(json!({"role": "assistant", "audio": {"id": "audio_abc123"}})),
            crate::model::media::UNKNOWN_ASSISTANT_AUDIO_TOKENS
        );
        // The whole response audio passed back: its duration at 1 token per 50 ms.
        let wav = crate::model::media::tests::wav(24_000, 1, 2);
        assert_eq!(
            count(json!({"role": "assistant", "audio": {"id": "audio_abc123", "data": b64(&wav)}})),
            40
        );
        assert_eq!(
            count(json!({"role": "assistant", "content": "ok", "audio": null})),
            t(&["ok"])
        );
        assert_eq!(
            count(json!({"role": "assistant", "content": null,
                "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}})),
            t(&["get_weather", "{\"city\":\"Paris\"}"])
        );
        // ChatCompletionFunctionMessageParam {role: function, name, content}.
        assert_eq!(
            count(json!({"role": "function", "name": "get_weather", "content": "18°C"})),
            t(&["get_weather", "18°C"])
        );
        // ChatCompletionMessageCustomToolCall {id, type: custom, custom: {name, input}}.
        assert_eq!(
            count(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "custom", "custom": {"name": "code_exec", "input": "print(1)"}}
            ]})),
            t(&["code_exec", "print(1)"])
        );
    }

    #[test]
    fn large_strings_count_like_tiktoken() {
        let text = "lorem ipsum dolor sit amet 你好 ".repeat(200_000);
        assert_eq!(count_text(Encoding::O200kBase, &text), tiktoken(&text));
    }

    #[test]
    fn piece_keys_are_distinct_and_read_alike_anywhere() {
        // The same piece in the middle of a text (read as one word) and at its end (copied).
        let text = b"ab\0cdefgh\0\0\0\0\0\0\0\0ab\0cdefgh\0\0\0\0\0\0\0";
        for len in 1..=8 {
            assert_eq!(u64::read(text, 0, len), u64::read(&text[..len], 0, len));
        }
        for len in 1..=16 {
            assert_eq!(u128::read(text, 0, len), u128::read(&text[..len], 0, len));
        }
        // Pieces that differ only by trailing NUL bytes, that is by length, differ.
        let keys: HashSet<u128> = (1..=16).map(|len| u128::read(text, 0, len)).collect();
        assert_eq!(keys.len(), 16);
        assert!(!keys.contains(&u128::NONE));
        assert_eq!(
            u64::read("é".as_bytes(), 0, 2),
            u64::from_le_bytes([0xC3, 0xA9, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        );
    }

    #[test]
    fn piece_count_caches_remember_the_last_pieces_of_every_set() {
        let mut counts = PieceCountCache::<u64, 7>::new(16);
        assert_eq!(std::mem::size_of::<PieceSet<u64, 7>>(), 64);
        assert_eq!(std::mem::size_of::<PieceSet<u128, 3>>(), 64);
        let count_of = |key: u64| (key % 7) as usize;
        let key = |i: u64| i << 8 | 0x61;
        // Fewer pieces than entries in every set: all are remembered.
        let shift = counts.shift;
        let set_of = |k: u64| (k.hash() >> shift) as usize;
        let same_set: Vec<u64> = (0..10_000u64)
            .map(key)
            .filter(|&k| set_of(k) == set_of(key(0)))
            .take(9)
            .collect();
        for &k in &same_set[..7] {
            assert_eq!(counts.get_or_insert_with(k, || count_of(k)), count_of(k));
        }
        for &k in &same_set[..7] {
            assert_eq!(counts.get_or_insert_with(k, || unreachable!()), count_of(k));
        }
        // An eighth piece of the same set replaces the oldest, and only it.
        assert_eq!(counts.get_or_insert_with(same_set[7], || 3), 3);
        assert_eq!(counts.get_or_insert_with(same_set[7], || unreachable!()), 3);
        for &k in &same_set[1..7] {
            assert_eq!(counts.get_or_insert_with(k, || unreachable!()), count_of(k));
        }
        assert_eq!(counts.get_or_insert_with(same_set[0], || 5), 5);
        // Many more pieces than entries: every answer is still the piece's own count.
        let other = |i: u64| i << 8 | 0x62;
        for i in 0..5_000u64 {
            assert_eq!(
                counts.get_or_insert_with(other(i), || count_of(i)),
                count_of(i)
            );
        }
        for i in (0..5_000u64).rev() {
            assert_eq!(
                counts.get_or_insert_with(other(i), || count_of(i)),
                count_of(i)
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn counts_equal_bpe_openai_counts(text in "([a-zA-Z]{1,12}|[0-9]{1,5}|[\\u4e00-\\u9fff]{1,4}|[\\n\\r\\t ]{1,4}|[!-/:-@\\[-`{-~]{1,3}|'[sStTdDmM]|'[lL][lL]|\\u{17F}|\\PC){0,60}") {
            // bpe-openai splits with its regex; the hand-written split and the piece cache
            // must change nothing, the second time (counts remembered) either.
            for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let expected = tokenizer(encoding).count(text.as_str());
                proptest::prop_assert_eq!(count_text(encoding, &text), expected);
                proptest::prop_assert_eq!(count_text(encoding, &text), expected);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn bpe_counts_equal_tiktoken_counts(text in "\\PC{0,200}") {
            proptest::prop_assert_eq!(count_text(Encoding::O200kBase, &text), tiktoken(&text));
        }

        #[test]
        fn bpe_counts_equal_tiktoken_on_mixed_scripts(text in "([a-zA-Z ]{1,8}|[0-9]{1,5}|[\\u4e00-\\u9fff]{1,4}|[\\n\\t ]{1,3}|[!-/:-@]{1,3}|\\p{Emoji}{1,2}|'s|'LL){0,40}") {
            proptest::prop_assert_eq!(count_text(Encoding::O200kBase, &text), tiktoken(&text));
            proptest::prop_assert_eq!(
                count_text(Encoding::Cl100kBase, &text),
                tiktoken_rs::cl100k_base_singleton().encode_ordinary(&text).len()
            );
        }
    }
}
