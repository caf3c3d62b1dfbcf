//! What the per-format modules (`responses`, `ai_sdk`, `gemini`, `bedrock`, `langchain`) share
//! with the view that dispatches to them: the [`Format`] names, the side of the conversation an
//! item is on, where a view block came from in its item, the pairing [`Reader`], the edits of a
//! kept item and the block builders. It sits below them all: they and `mod.rs` import it, it
//! imports none of them.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::base::error::ValidationError;
use crate::model::binary;
use crate::model::message::type_name;

/// A message format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Format {
    /// Anthropic Messages or OpenAI Chat Completions: read as they are.
    Native,
    /// OpenAI Responses API input items (`message`, `function_call`, `function_call_output`,
    /// `reasoning`, …).
    Responses,
    /// Vercel AI SDK `ModelMessage` (v5 and later): `tool-call` / `tool-result` parts.
    AiSdk,
    /// Gemini `contents`: `{role: 'user' | 'model', parts}`.
    Gemini,
    /// Amazon Bedrock Converse: `content: [{text} | {toolUse} | {toolResult} | …]`.
    Bedrock,
    /// LangChain.js messages, serialized (`{lc: 1, type: 'constructor', id, kwargs}`) or stored
    /// (`{type: 'human', data}`); instances cross as their serialized form.
    LangChain,
}

impl Format {
    /// The `format` option's names. `anthropic` and `openai` are both the native reading.
    pub fn parse(name: &str) -> Option<Option<Format>> {
        Some(match name {
            "auto" => None,
            "anthropic" | "openai" | "openai-chat" => Some(Format::Native),
            "openai-responses" | "responses" => Some(Format::Responses),
            "ai-sdk" => Some(Format::AiSdk),
            "gemini" => Some(Format::Gemini),
            "bedrock" => Some(Format::Bedrock),
            "langchain" => Some(Format::LangChain),
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "anthropic",
            Format::Responses => "openai-responses",
            Format::AiSdk => "ai-sdk",
            Format::Gemini => "gemini",
            Format::Bedrock => "bedrock",
            Format::LangChain => "langchain",
        }
    }

    /// How the format is named in error messages.
    pub(crate) fn described(self) -> &'static str {
        match self {
            Format::Native => "an Anthropic / OpenAI Chat message",
            Format::Responses => "an OpenAI Responses item",
            Format::AiSdk => "a Vercel AI SDK message",
            Format::Gemini => "a Gemini content",
            Format::Bedrock => "a Bedrock Converse message",
            Format::LangChain => "a LangChain message",
        }
    }

    /// Whether the API wants user and model turns to alternate (Bedrock Converse; Gemini's
    /// older models).
    pub fn alternates(self) -> bool {
        matches!(self, Format::Bedrock | Format::Gemini)
    }

    /// Whether the API behind the format checks reasoning against the conversation before it.
    /// OpenAI accepts `reasoning` items from any earlier turn, and Gemini validates thought
    /// signatures only in the current turn, which a compaction keeps whole: for them the
    /// thinking policy's `auto` keeps reasoning. The other formats may carry Claude's thinking.
    pub fn may_carry_claude_thinking(self) -> bool {
        !matches!(self, Format::Responses | Format::Gemini)
    }
}

/// The documented names of the `format` option, for error messages.
pub const FORMAT_NAMES: &str = "\"auto\", \"anthropic\", \"openai\", \"openai-responses\", \
     \"ai-sdk\", \"gemini\", \"bedrock\" or \"langchain\"";

/// Which side of the conversation an item is on, which decides the view message it joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    System,
    User,
    Assistant,
    /// Answers to tool calls (possibly with other content beside them).
    Results,
}

/// Where a view block came from in its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartRef {
    /// The whole item (a Responses `function_call`, a LangChain tool message's result).
    Item,
    /// Element `n` of the item's content (or parts) array.
    Part(usize),
    /// The item's text content held as a string.
    Text,
    /// The n-th tool call of a LangChain AI message's `tool_calls`.
    ToolCall(usize),
}

/// One item read as view blocks.
#[derive(Debug, Clone)]
pub(crate) struct ItemView {
    pub side: Side,
    pub blocks: Vec<(Value, PartRef)>,
}

/// Pairing state kept while a list is read (Gemini matches responses to calls by order).
#[derive(Debug, Default)]
pub(crate) struct Reader {
    /// Calls not answered yet: (id in the view, function name).
    pending_calls: Vec<(String, String)>,
    next_call: usize,
}

impl Reader {
    pub(crate) fn call_made(&mut self, id: &str, name: &str) {
        self.pending_calls.push((id.to_string(), name.to_string()));
    }

    /// The call a result answers: by id when it has one, else the earliest unanswered call of
    /// that name, else the earliest unanswered call.
    pub(crate) fn answer(&mut self, id: Option<&str>, name: Option<&str>) -> Option<String> {
        let position = match id {
            Some(id) => self.pending_calls.iter().position(|(call, _)| call == id),
            None => name
                .and_then(|name| self.pending_calls.iter().position(|(_, n)| n == name))
                .or((!self.pending_calls.is_empty()).then_some(0)),
        };
        match position {
            Some(p) => Some(self.pending_calls.remove(p).0),
            None => id.map(str::to_string),
        }
    }

    /// A fresh id for a call that has none (Gemini before ids).
    pub(crate) fn synthetic_call_id(&mut self) -> String {
        self.next_call += 1;
        format!("call_{}", self.next_call)
    }
}

/// The format one content part belongs to, when only one format has such parts.
pub(crate) fn part_signature(part: &Value) -> Option<Format> {
    let part = part.as_object()?;
    let Some(kind) = part.get("type").and_then(Value::as_str) else {
        // Bedrock's blocks are keyed by kind, with no `type`.
        const BEDROCK_KEYS: &[&str] = &[
            "text",
            "image",
            "document",
            "video",
            "toolUse",
            "toolResult",
            "reasoningContent",
            "cachePoint",
            "guardContent",
            "citationsContent",
        ];
        return BEDROCK_KEYS
            .iter()
            .any(|key| part.contains_key(*key))
            .then_some(Format::Bedrock);
    };
    match kind {
        "tool-call"
        | "tool-result"
        | "tool-approval-request"
        | "tool-approval-response"
        | "reasoning" => Some(Format::AiSdk),
        "image" if part.contains_key("image") => Some(Format::AiSdk),
        "file" if part.contains_key("data") || part.contains_key("mediaType") => {
            Some(Format::AiSdk)
        }
        "input_text" | "output_text" | "input_image" | "input_file" => Some(Format::Responses),
        "tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document"
        | "server_tool_use" | "search_result" | "compaction" => Some(Format::Native),
        "image" if part.contains_key("source") => Some(Format::Native),
        "image_url" | "input_audio" => Some(Format::Native),
        "file" if part.contains_key("file") => Some(Format::Native),
        _ => None,
    }
}

impl Side {
    /// The Anthropic role of a view message on this side (results are a user message).
    pub(crate) fn role(self) -> &'static str {
        match self {
            Side::System => "system",
            Side::User | Side::Results => "user",
            Side::Assistant => "assistant",
        }
    }
}

/// What the library did to one block of a kept item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edit {
    /// Removed (thinking the policy stripped).
    Remove,
    /// Replaced by this view block (a shortened tool result or text).
    Replace(Value),
}

/// A view block's `type`.
pub(crate) fn kind(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The text of a view block's tool result content (what a shortened result is set to).
pub(crate) fn result_text(content: Option<&Value>) -> String {
    crate::model::message::tool_result_text(content)
}

/// Removes element `n` of the array at `key`; false when the array is left empty.
pub(crate) fn remove_element(object: &mut Map<String, Value>, key: &str, n: usize) -> bool {
    match object.get_mut(key) {
        Some(Value::Array(elements)) => {
            if n < elements.len() {
                elements.remove(n);
            }
            !elements.is_empty()
        }
        _ => true,
    }
}

/// Applies an edit to element `n` of the array at `key` of an item (Gemini `parts`, Bedrock and
/// AI SDK `content`): removes it, sets its `text`, or gives a tool result its new text through
/// `set_result`. False when the item is left with nothing (and is dropped).
pub(crate) fn edit_element(
    item: &mut Value,
    key: &str,
    n: usize,
    edit: &Edit,
    set_result: impl FnOnce(&mut Map<String, Value>, String),
) -> bool {
    let Some(object) = item.as_object_mut() else {
        return true;
    };
    match edit {
        Edit::Remove => remove_element(object, key, n),
        Edit::Replace(block) => {
            let element = object.get_mut(key).and_then(|array| array.get_mut(n));
            let Some(Value::Object(element)) = element else {
                return true;
            };
            match kind(block) {
                "tool_result" => set_result(element, result_text(block.get("content"))),
                "text" => {
                    if let Some(text) = block.get("text") {
                        element.insert("text".into(), text.clone());
                    }
                }
                _ => {}
            }
            true
        }
    }
}

/// Field access helpers shared by the readers: errors name the item and field.
pub(crate) struct Fields<'a> {
    pub index: usize,
    pub object: &'a Map<String, Value>,
    /// The path of `object` inside the item (`""` for the item itself, `content[2]`, …).
    pub path: String,
}

impl<'a> Fields<'a> {
    pub fn of(index: usize, object: &'a Map<String, Value>) -> Self {
        Fields {
            index,
            object,
            path: String::new(),
        }
    }

    pub fn at(&self, object: &'a Map<String, Value>, path: String) -> Fields<'a> {
        Fields {
            index: self.index,
            object,
            path,
        }
    }

    pub fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub fn error(&self, key: &str, problem: impl Into<String>) -> ValidationError {
        ValidationError::at(self.index, &self.field(key), problem.into())
    }

    pub fn string(&self, key: &str) -> Result<&'a str, ValidationError> {
        match self.object.get(key) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(self.error(key, "is missing")),
            Some(other) => {
                Err(self.error(key, format!("expected a string, got {}", type_name(other))))
            }
        }
    }

    pub fn optional_string(&self, key: &str) -> Result<Option<&'a str>, ValidationError> {
        match self.object.get(key) {
            Some(Value::String(s)) => Ok(Some(s)),
            None | Some(Value::Null) => Ok(None),
            Some(other) => {
                Err(self.error(key, format!("expected a string, got {}", type_name(other))))
            }
        }
    }

    pub fn object(&self, key: &str) -> Result<&'a Map<String, Value>, ValidationError> {
        match self.object.get(key) {
            Some(Value::Object(o)) => Ok(o),
            None | Some(Value::Null) => Err(self.error(key, "is missing")),
            Some(other) => {
                Err(self.error(key, format!("expected an object, got {}", type_name(other))))
            }
        }
    }

    pub fn array(&self, key: &str) -> Result<&'a Vec<Value>, ValidationError> {
        match self.object.get(key) {
            Some(Value::Array(a)) => Ok(a),
            None | Some(Value::Null) => Err(self.error(key, "is missing")),
            Some(other) => {
                Err(self.error(key, format!("expected an array, got {}", type_name(other))))
            }
        }
    }

    /// Each element of the array at `key` as an object, with its path.
    pub fn objects(&self, key: &str) -> Result<Vec<(usize, Fields<'a>)>, ValidationError> {
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(n, element)| {
                let path = self.field(&format!("{key}[{n}]"));
                match element {
                    Value::Object(object) => Ok((n, self.at(object, path))),
                    other => Err(ValidationError::at(
                        self.index,
                        &path,
                        format!("expected an object, got {}", type_name(other)),
                    )),
                }
            })
            .collect()
    }
}

/// Shared view blocks.
pub(crate) fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// Anything the view has no block for, said as text so it is counted and summarized.
pub(crate) fn json_text_block(value: &Value) -> Value {
    text_block(&value.to_string())
}

/// An image or file given as a data URL, a plain URL, or base64 data with its media type.
pub(crate) fn media_block(media_type: Option<&str>, data: &Value) -> Value {
    let is_image = media_type.is_none_or(|t| t.starts_with("image/"));
    let kind = if is_image { "image" } else { "document" };
    // Bytes and URL objects as the binding tags them (`model::binary`): the bytes are read
    // like base64 (an image's size from its header), a URL like a URL given as text.
    if let Some(base64) = binary::tagged_bytes(data) {
        return media_block(media_type, &Value::String(base64.to_string()));
    }
    if let Some(url) = binary::tagged_url(data) {
        return media_block(media_type, &Value::String(url.to_string()));
    }
    let source = match data {
        Value::String(s) if s.starts_with("data:") => {
            let (header, payload) = s.split_once(',').unwrap_or((s, ""));
            let media = header
                .trim_start_matches("data:")
                .split(';')
                .next()
                .unwrap_or("");
            json!({"type": "base64", "media_type": media, "data": payload})
        }
        Value::String(s) if s.contains("://") => json!({"type": "url", "url": s}),
        Value::String(s) => {
            json!({"type": "base64", "media_type": media_type.unwrap_or(""), "data": s})
        }
        // Bytes that crossed as an object of numbered keys (a Uint8Array through
        // `JSON.stringify`): their length is what is billed; the bytes themselves are not read.
        // A Node.js Buffer through `JSON.stringify`: `{type: 'Buffer', data: [bytes]}`.
        Value::Object(buffer) if buffer.get("data").is_some_and(Value::is_array) => {
            let length = buffer["data"].as_array().map_or(0, Vec::len);
            json!({"type": "base64", "media_type": media_type.unwrap_or(""), "data": "A".repeat(length * 4 / 3)})
        }
        Value::Object(bytes) => {
            json!({"type": "base64", "media_type": media_type.unwrap_or(""), "data": "A".repeat(bytes.len() * 4 / 3)})
        }
        _ => json!({"type": "base64", "media_type": media_type.unwrap_or(""), "data": ""}),
    };
    json!({"type": kind, "source": source})
}

/// A tool result's content in the view: text, or blocks.
pub(crate) fn tool_result_block(id: &str, content: Value, is_error: bool) -> Value {
    let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": content});
    if is_error {
        block["is_error"] = Value::Bool(true);
    }
    block
}

/// Tool arguments given as a JSON string, parsed (the ledger reads the fields); a string that
/// is not JSON stays a string.
pub(crate) fn parse_arguments(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}
