//! LangChain.js messages (`@langchain/core/messages`).
//!
//! A message instance crosses as what `JSON.stringify` makes of it, its `toJSON()`:
//! `{lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessage'], kwargs}`.
//! The stored form of `mapChatMessagesToStoredMessages` (`{type: 'ai', data}`) is read too.
//!
//! - `HumanMessage`, `AIMessage`, `SystemMessage`, `ToolMessage` (and their `Chunk`s),
//!   `ChatMessage` (with `role`), `FunctionMessage`.
//! - `content`: a string or content blocks (`text`, `image_url`, Anthropic's `tool_use` and
//!   `thinking`, the standard `image` / `file` / `reasoning` blocks).
//! - An AI message's calls are its `tool_calls` (`{name, args, id}`); a `ToolMessage` answers
//!   one by `tool_call_id`. Anthropic models also list the calls as `tool_use` content blocks,
//!   which are the same calls and read once.

use serde_json::{json, Map, Value};

use super::shared::{
    json_text_block, media_block, remove_element, result_text, text_block, tool_result_block, Edit,
    Fields, ItemView, PartRef, Reader, Side,
};
use crate::base::error::ValidationError;

/// Whether an item is a LangChain message, serialized or stored.
pub(super) fn is_langchain(object: &Map<String, Value>) -> bool {
    let serialized = object.get("lc").is_some()
        && object.get("type").and_then(Value::as_str) == Some("constructor");
    let stored = !object.contains_key("role")
        && object.get("data").is_some_and(Value::is_object)
        && object.get("type").and_then(Value::as_str).is_some_and(|t| {
            matches!(
                t,
                "human" | "ai" | "system" | "tool" | "function" | "chat" | "generic" | "developer"
            )
        });
    serialized || stored
}

/// The message's fields (`kwargs` or `data`) and its kind (`human`, `ai`, …).
fn fields_and_kind<'a>(f: &Fields<'a>) -> Result<(Fields<'a>, String), ValidationError> {
    if f.object.get("type").and_then(Value::as_str) == Some("constructor") {
        let id = f.array("id")?;
        let class = id.last().and_then(Value::as_str).unwrap_or("");
        let class = class.trim_end_matches("Chunk");
        let kind = match class {
            "HumanMessage" => "human",
            "AIMessage" => "ai",
            "SystemMessage" => "system",
            "ToolMessage" => "tool",
            "FunctionMessage" => "function",
            "ChatMessage" => "chat",
            "RemoveMessage" => "remove",
            other => {
                return Err(f.error("id", format!("{other:?} is not a LangChain message class")))
            }
        };
        let kwargs = f.object("kwargs")?;
        Ok((f.at(kwargs, "kwargs".into()), kind.to_string()))
    } else {
        let data = f.object("data")?;
        Ok((f.at(data, "data".into()), f.string("type")?.to_string()))
    }
}

pub(super) fn read(
    index: usize,
    object: &Map<String, Value>,
    reader: &mut Reader,
) -> Result<ItemView, ValidationError> {
    let f = Fields::of(index, object);
    if !is_langchain(object) {
        return Err(f.error(
            "type",
            "is not a LangChain message (expected a message instance, its toJSON() form \
             {lc: 1, type: 'constructor', id, kwargs}, or a stored {type, data})",
        ));
    }
    let (k, kind) = fields_and_kind(&f)?;
    let mut kind = kind;
    if kind == "chat" || kind == "generic" {
        kind = match k.optional_string("role")?.unwrap_or("user") {
            "assistant" | "ai" => "ai",
            "system" | "developer" => "system",
            "tool" => "tool",
            _ => "human",
        }
        .to_string();
    }
    let side = match kind.as_str() {
        "human" | "remove" => Side::User,
        "ai" => Side::Assistant,
        "system" | "developer" => Side::System,
        "tool" | "function" => Side::Results,
        other => return Err(f.error("type", format!("{other:?} is not a LangChain message type"))),
    };
    if kind == "remove" {
        return Ok(ItemView {
            side,
            blocks: Vec::new(),
        });
    }
    if side == Side::Results {
        let id = match kind.as_str() {
            "tool" => k.string("tool_call_id")?,
            _ => k.string("name")?,
        };
        reader.answer(Some(id), None);
        let content = match k.object.get("content") {
            Some(Value::Array(_)) => Value::Array(
                content_blocks(&k, &[])?
                    .into_iter()
                    .map(|(block, _)| block)
                    .collect(),
            ),
            Some(Value::String(text)) => Value::String(text.clone()),
            None | Some(Value::Null) => Value::String(String::new()),
            Some(other) => Value::String(other.to_string()),
        };
        let is_error = k.object.get("status").and_then(Value::as_str) == Some("error");
        return Ok(ItemView {
            side,
            blocks: vec![(tool_result_block(id, content, is_error), PartRef::Item)],
        });
    }
    let mut call_ids = Vec::new();
    let mut calls = Vec::new();
    if side == Side::Assistant && k.object.get("tool_calls").is_some_and(|c| !c.is_null()) {
        for (n, call) in k.objects("tool_calls")? {
            let name = call.string("name")?;
            let id = match call.optional_string("id")? {
                Some(id) => id.to_string(),
                None => reader.synthetic_call_id(),
            };
            reader.call_made(&id, name);
            let input = call.object.get("args").cloned().unwrap_or(json!({}));
            call_ids.push(id.clone());
            calls.push((
                json!({"type": "tool_use", "id": id, "name": name, "input": input}),
                PartRef::ToolCall(n),
            ));
        }
    }
    let mut blocks = match k.object.get("content") {
        Some(Value::String(text)) if text.is_empty() && !calls.is_empty() => Vec::new(),
        Some(Value::String(text)) => vec![(text_block(text), PartRef::Text)],
        Some(Value::Array(_)) => content_blocks(&k, &call_ids)?,
        None | Some(Value::Null) => Vec::new(),
        Some(other) => {
            return Err(k.error(
                "content",
                format!(
                    "expected a string or an array of content blocks, got {}",
                    crate::model::message::type_name(other)
                ),
            ))
        }
    };
    blocks.extend(calls);
    Ok(ItemView { side, blocks })
}

/// Content blocks as view blocks, leaving out `tool_use` blocks that repeat a tool call.
fn content_blocks(
    k: &Fields<'_>,
    call_ids: &[String],
) -> Result<Vec<(Value, PartRef)>, ValidationError> {
    let mut blocks = Vec::new();
    for (n, block) in k.objects("content")? {
        let o = block.object;
        let view = match o.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => text_block(block.string("text")?),
            "tool_use"
                if o.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| call_ids.iter().any(|c| c == id)) =>
            {
                continue
            }
            "thinking" | "redacted_thinking" | "tool_use" | "document" | "search_result" => {
                Value::Object(o.clone())
            }
            "image" if o.contains_key("source") => Value::Object(o.clone()),
            "image_url" => {
                let url = match o.get("image_url") {
                    Some(Value::Object(u)) => u.get("url").cloned().unwrap_or(Value::Null),
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                media_block(None, &url)
            }
            // The standard blocks: {type: 'image' | 'file', source_type: 'base64' | 'url', data |
            // url, mime_type} (0.3) or {type, data | url, mimeType} (1.0).
            "image" | "file" | "audio" => {
                let media = o
                    .get("mime_type")
                    .or(o.get("mimeType"))
                    .and_then(Value::as_str);
                let data = o.get("data").or(o.get("url")).unwrap_or(&Value::Null);
                media_block(media, data)
            }
            "reasoning" => json!({"type": "thinking",
                "thinking": o.get("reasoning").and_then(Value::as_str).unwrap_or(""),
                "signature": ""}),
            _ => json_text_block(&Value::Object(o.clone())),
        };
        blocks.push((view, PartRef::Part(n)));
    }
    Ok(blocks)
}

fn fields_mut(item: &mut Value) -> Option<&mut Map<String, Value>> {
    let object = item.as_object_mut()?;
    let key = if object.contains_key("kwargs") {
        "kwargs"
    } else {
        "data"
    };
    object.get_mut(key)?.as_object_mut()
}

pub(super) fn edit(item: &mut Value, part: PartRef, edit: &Edit) -> bool {
    let Some(fields) = fields_mut(item) else {
        return true;
    };
    match (part, edit) {
        (PartRef::Part(n), Edit::Remove) => {
            let left = remove_element(fields, "content", n);
            left || fields
                .get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|calls| !calls.is_empty())
        }
        (PartRef::Text, Edit::Remove) => {
            fields.insert("content".into(), Value::String(String::new()));
            true
        }
        (PartRef::Item, Edit::Remove) => false,
        (PartRef::Item, Edit::Replace(block)) => {
            if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                fields.insert(
                    "content".into(),
                    Value::String(result_text(block.get("content"))),
                );
            }
            true
        }
        (PartRef::Text, Edit::Replace(block)) => {
            if let Some(text) = block.get("text") {
                fields.insert("content".into(), text.clone());
            }
            true
        }
        (PartRef::Part(n), Edit::Replace(block)) => {
            if let (Some(text), Some(Value::Array(blocks))) =
                (block.get("text"), fields.get_mut("content"))
            {
                if let Some(Value::Object(target)) = blocks.get_mut(n) {
                    target.insert("text".into(), text.clone());
                }
            }
            true
        }
        (PartRef::ToolCall(_), _) => true,
    }
}

/// A message of our own (the summary), in the serialized form; the JS layer makes it an
/// instance (or the stored form) when the list holds those.
pub(super) fn text_message(assistant: bool, text: &str) -> Value {
    let class = if assistant {
        "AIMessage"
    } else {
        "HumanMessage"
    };
    json!({
        "lc": 1,
        "type": "constructor",
        "id": ["langchain_core", "messages", class],
        "kwargs": {"content": text, "additional_kwargs": {}, "response_metadata": {}},
    })
}
