//! Gemini `contents` (ai.google.dev/api/caching#Content, the `Content` and `Part` types of
//! `@google/genai`).
//!
//! - `{role: 'user' | 'model', parts}`; the system instruction is not part of `contents`.
//! - Parts: `text` (with `thought: true` for a thought summary, and a `thoughtSignature`),
//!   `inlineData {mimeType, data}`, `fileData {mimeType, fileUri}`, `functionCall {id?, name,
//!   args}`, `functionResponse {id?, name, response}`, `executableCode`,
//!   `codeExecutionResult`.
//! - A `functionResponse` answers the `functionCall` with its `id` when both have one, and
//!   otherwise the calls in order (the API requires as many responses as the turn made calls,
//!   ai.google.dev/gemini-api/docs/function-calling); a call without an id gets one in the view.
//! - `thoughtSignature`s ride on the parts they were given with and are kept byte for byte.

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
    let model = match f.optional_string("role")? {
        None | Some("user") => false,
        Some("model") => true,
        // Vertex AI's older function role.
        Some("function") => false,
        Some(other) => {
            return Err(f.error(
                "role",
                format!("{other:?} is not a Gemini role (user, model)"),
            ))
        }
    };
    let mut blocks = Vec::new();
    let mut answers = false;
    for (n, part) in f.objects("parts")? {
        let o = part.object;
        let block = if let Some(text) = o.get("text") {
            let text = text
                .as_str()
                .ok_or_else(|| part.error("text", "expected a string"))?;
            if o.get("thought").and_then(Value::as_bool) == Some(true) {
                json!({"type": "thinking", "thinking": text, "signature": o.get("thoughtSignature").cloned().unwrap_or(Value::String(String::new()))})
            } else {
                text_block(text)
            }
        } else if o.contains_key("functionCall") {
            let call = part.object("functionCall")?;
            let c = part.at(call, part.field("functionCall"));
            let name = c.string("name")?;
            let id = match c.optional_string("id")? {
                Some(id) => id.to_string(),
                None => reader.synthetic_call_id(),
            };
            reader.call_made(&id, name);
            let input = call.get("args").cloned().unwrap_or(json!({}));
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        } else if o.contains_key("functionResponse") {
            let response = part.object("functionResponse")?;
            let r = part.at(response, part.field("functionResponse"));
            let name = r.string("name")?;
            let id = reader
                .answer(r.optional_string("id")?, Some(name))
                .unwrap_or_else(|| reader.synthetic_call_id());
            answers = true;
            let payload = response.get("response").cloned().unwrap_or(Value::Null);
            let is_error = payload.get("error").is_some() && payload.get("output").is_none();
            let mut content = vec![text_block(&payload_text(&payload))];
            // Multimodal function responses carry their media as parts.
            if let Some(Value::Array(parts)) = response.get("parts") {
                content.extend(parts.iter().filter_map(inline_media));
            }
            let content = match content.as_slice() {
                [only] => only.get("text").cloned().unwrap_or(Value::Null),
                _ => Value::Array(content),
            };
            tool_result_block(&id, content, is_error)
        } else if let Some(media) = inline_media(&part.object_value()) {
            media
        } else {
            json_text_block(&Value::Object(o.clone()))
        };
        blocks.push((block, PartRef::Part(n)));
    }
    let side = if model {
        Side::Assistant
    } else if answers {
        Side::Results
    } else {
        Side::User
    };
    Ok(ItemView { side, blocks })
}

impl Fields<'_> {
    fn object_value(&self) -> Value {
        Value::Object(self.object.clone())
    }
}

/// A response's text: the `output` when it is a string, else the response as JSON.
fn payload_text(payload: &Value) -> String {
    match payload.get("output") {
        Some(Value::String(text)) if payload.as_object().is_some_and(|o| o.len() == 1) => {
            text.clone()
        }
        _ => payload.to_string(),
    }
}

/// `inlineData` and `fileData` parts as view media.
fn inline_media(part: &Value) -> Option<Value> {
    if let Some(inline) = part.get("inlineData") {
        let media = inline.get("mimeType").and_then(Value::as_str);
        return Some(media_block(
            media,
            inline.get("data").unwrap_or(&Value::Null),
        ));
    }
    let file = part.get("fileData")?;
    let media = file.get("mimeType").and_then(Value::as_str);
    Some(media_block(
        media,
        file.get("fileUri").unwrap_or(&Value::Null),
    ))
}

pub(super) fn edit(item: &mut Value, part: PartRef, edit: &Edit) -> bool {
    let PartRef::Part(n) = part else {
        return true;
    };
    edit_element(item, "parts", n, edit, |part, text| {
        if let Some(Value::Object(response)) = part.get_mut("functionResponse") {
            response.insert("response".into(), json!({ "output": text }));
            response.remove("parts");
        }
    })
}

/// A content of our own (the summary).
pub(super) fn text_content(model: bool, text: &str) -> Value {
    let role = if model { "model" } else { "user" };
    json!({"role": role, "parts": [{"text": text}]})
}
