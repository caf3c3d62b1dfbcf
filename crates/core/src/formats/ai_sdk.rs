//! Vercel AI SDK `ModelMessage` (v5 and later; `ai` package, `@ai-sdk/provider-utils`
//! `src/types/model-message.ts` and `content-part.ts`).
//!
//! - `system`: a string. `user`: a string or `text` / `image` / `file` parts.
//! - `assistant`: a string or `text`, `file`, `reasoning`, `tool-call`, `tool-result` (of a
//!   provider-executed call) and `tool-approval-request` parts.
//! - `tool`: `tool-result` and `tool-approval-response` parts. A result names its call by
//!   `toolCallId`, across the assistant and tool messages.
//! - A `tool-approval-request` (`approvalId`, `toolCallId`) sits beside its call; the
//!   `tool-approval-response` answering it (`approvalId`) is in a later tool message, which must
//!   stay after the call: it reads as a `tool_approval_response` block naming the call, which the
//!   partition keeps with the call as it keeps results.
//! - Tool result `output` (v5): `{type: 'text' | 'json' | 'error-text' | 'error-json', value}`,
//!   `{type: 'content', value: [...]}` or `{type: 'execution-denied', reason}`; v4's `result`
//!   is read too.

use serde_json::{json, Map, Value};

use super::shared::{
    edit_element, json_text_block, media_block, text_block, tool_result_block, Edit, Fields,
    ItemView, PartRef, Reader, Side,
};
use crate::base::error::ValidationError;

pub(super) fn read(
    index: usize,
    object: &Map<String, Value>,
    reader: &mut Reader,
) -> Result<ItemView, ValidationError> {
    let f = Fields::of(index, object);
    let role = f.string("role")?;
    let side = match role {
        "system" => Side::System,
        "user" => Side::User,
        "assistant" => Side::Assistant,
        "tool" => Side::Results,
        other => {
            return Err(f.error(
                "role",
                format!("{other:?} is not an AI SDK message role (system, user, assistant, tool)"),
            ))
        }
    };
    let blocks = match object.get("content") {
        Some(Value::String(text)) if side != Side::Results => {
            vec![(text_block(text), PartRef::Text)]
        }
        Some(Value::Array(_)) => {
            let mut blocks = Vec::new();
            for (n, part) in f.objects("content")? {
                if let Some(block) = part_block(&part, side, reader)? {
                    blocks.push((block, PartRef::Part(n)));
                }
            }
            blocks
        }
        None | Some(Value::Null) => return Err(f.error("content", "is missing")),
        Some(other) => {
            let expected = if side == Side::Results {
                "an array of tool-result parts"
            } else {
                "a string or an array of parts"
            };
            return Err(f.error(
                "content",
                format!(
                    "expected {expected}, got {}",
                    crate::model::message::type_name(other)
                ),
            ));
        }
    };
    Ok(ItemView { side, blocks })
}

fn part_block(
    part: &Fields<'_>,
    side: Side,
    reader: &mut Reader,
) -> Result<Option<Value>, ValidationError> {
    let object = part.object;
    let media_type = part
        .optional_string("mediaType")?
        .or(object.get("mimeType").and_then(Value::as_str));
    Ok(Some(match part.string("type")? {
        "text" => text_block(part.string("text")?),
        "image" => media_block(
            media_type.or(Some("image/*")),
            object
                .get("image")
                .ok_or_else(|| part.error("image", "is missing"))?,
        ),
        "file" => media_block(
            media_type,
            object
                .get("data")
                .ok_or_else(|| part.error("data", "is missing"))?,
        ),
        "reasoning" | "redacted-reasoning" => {
            let anthropic = object
                .get("providerOptions")
                .and_then(|o| o.get("anthropic"));
            match anthropic
                .and_then(|a| a.get("redactedData"))
                .and_then(Value::as_str)
            {
                Some(data) => json!({"type": "redacted_thinking", "data": data}),
                None => {
                    let signature = anthropic
                        .and_then(|a| a.get("signature"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let text = part
                        .optional_string("text")?
                        .or(object.get("data").and_then(Value::as_str))
                        .unwrap_or("");
                    json!({"type": "thinking", "thinking": text, "signature": signature})
                }
            }
        }
        "tool-call" => {
            let id = part.string("toolCallId")?;
            let name = part.string("toolName")?;
            let input = object
                .get("input")
                .or(object.get("args"))
                .cloned()
                .unwrap_or(json!({}));
            // A provider-executed call is answered in the same assistant message.
            if object.get("providerExecuted").and_then(Value::as_bool) == Some(true) {
                json!({"type": "server_tool_use", "id": id, "name": name, "input": input})
            } else {
                reader.call_made(id, name);
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        }
        "tool-result" => {
            let id = part.string("toolCallId")?;
            let (content, is_error) = output_content(part)?;
            if side == Side::Results {
                reader.answer(Some(id), None);
                tool_result_block(id, content, is_error)
            } else {
                json!({"type": "provider_tool_result", "tool_use_id": id, "content": content})
            }
        }
        "tool-approval-request" => {
            part.string("approvalId")?;
            part.string("toolCallId")?;
            return Ok(None);
        }
        "tool-approval-response" => {
            let approval = part.string("approvalId")?;
            json!({"type": "tool_approval_response", "approval_id": approval})
        }
        _ => json_text_block(&Value::Object(object.clone())),
    }))
}

/// A tool result's output as view content, and whether it reports an error.
fn output_content(part: &Fields<'_>) -> Result<(Value, bool), ValidationError> {
    let object = part.object;
    if object.get("output").is_none() {
        // v4: `result` (any JSON value) and `isError`.
        let result = object.get("result").cloned().unwrap_or(Value::Null);
        let is_error = object.get("isError").and_then(Value::as_bool) == Some(true);
        return Ok((as_text(&result), is_error));
    };
    let output = part.object("output")?;
    let of = part.at(output, part.field("output"));
    let value = output.get("value").cloned().unwrap_or(Value::Null);
    Ok(match of.string("type")? {
        "text" => (as_text(&value), false),
        "error-text" => (as_text(&value), true),
        "json" => (Value::String(value.to_string()), false),
        "error-json" => (Value::String(value.to_string()), true),
        "execution-denied" => (
            Value::String(format!(
                "execution denied{}",
                output
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )),
            true,
        ),
        "content" => {
            let mut blocks = Vec::new();
            for (_, item) in of.objects("value")? {
                let o = item.object;
                let media = o.get("mediaType").and_then(Value::as_str);
                blocks.push(match item.string("type")? {
                    "text" => text_block(item.string("text")?),
                    "media" | "image-data" | "file-data" => {
                        media_block(media, o.get("data").unwrap_or(&Value::Null))
                    }
                    "image-url" | "file-url" => {
                        media_block(media, o.get("url").unwrap_or(&Value::Null))
                    }
                    _ => json_text_block(&Value::Object(o.clone())),
                });
            }
            (Value::Array(blocks), false)
        }
        _ => (
            Value::String(Value::Object(output.clone()).to_string()),
            false,
        ),
    })
}

fn as_text(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(text.clone()),
        other => Value::String(other.to_string()),
    }
}

pub(super) fn edit(item: &mut Value, part: PartRef, edit: &Edit) -> bool {
    match (part, edit) {
        (PartRef::Part(n), _) => edit_element(item, "content", n, edit, |part, text| {
            if part.contains_key("output") {
                part.insert("output".into(), json!({"type": "text", "value": text}));
            } else {
                part.insert("result".into(), Value::String(text));
            }
        }),
        (PartRef::Text | PartRef::Item, Edit::Remove) => false,
        (PartRef::Text, Edit::Replace(block)) => {
            if let (Some(object), Some(text)) = (item.as_object_mut(), block.get("text")) {
                object.insert("content".into(), text.clone());
            }
            true
        }
        _ => true,
    }
}

/// A message of our own (the summary).
pub(super) fn text_message(assistant: bool, text: &str) -> Value {
    let role = if assistant { "assistant" } else { "user" };
    json!({"role": role, "content": text})
}
