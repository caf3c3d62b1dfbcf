//! Amazon Bedrock Converse messages (docs.aws.amazon.com/bedrock/latest/APIReference/
//! API_runtime_Message.html and API_runtime_ContentBlock.html).
//!
//! - `{role: 'user' | 'assistant', content: ContentBlock[]}`; system prompts are a separate
//!   request field.
//! - A content block is an object with one key saying its kind: `text`, `image {format,
//!   source: {bytes | s3Location}}`, `document {format, name, source}`, `video`, `toolUse
//!   {toolUseId, name, input}`, `toolResult {toolUseId, content: [{text} | {json} | {image} |
//!   {document} | {video}], status}`, `reasoningContent {reasoningText {text, signature} |
//!   redactedContent}`, `cachePoint`, `guardContent`, `citationsContent`.
//! - A `toolResult` answers the `toolUse` with the same `toolUseId`, in the next user message.

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
    let assistant = match f.string("role")? {
        "user" => false,
        "assistant" => true,
        other => {
            return Err(f.error(
                "role",
                format!("{other:?} is not a Bedrock Converse role (user, assistant)"),
            ))
        }
    };
    let mut blocks = Vec::new();
    let mut answers = false;
    for (n, block) in f.objects("content")? {
        if let Some(view) = content_block(&block, reader, &mut answers)? {
            blocks.push((view, PartRef::Part(n)));
        }
    }
    let side = if assistant {
        Side::Assistant
    } else if answers {
        Side::Results
    } else {
        Side::User
    };
    Ok(ItemView { side, blocks })
}

fn content_block(
    block: &Fields<'_>,
    reader: &mut Reader,
    answers: &mut bool,
) -> Result<Option<Value>, ValidationError> {
    let o = block.object;
    Ok(Some(if o.contains_key("text") {
        text_block(block.string("text")?)
    } else if o.contains_key("toolUse") {
        let call = block.at(block.object("toolUse")?, block.field("toolUse"));
        let id = call.string("toolUseId")?;
        let name = call.string("name")?;
        reader.call_made(id, name);
        let input = call.object.get("input").cloned().unwrap_or(json!({}));
        json!({"type": "tool_use", "id": id, "name": name, "input": input})
    } else if o.contains_key("toolResult") {
        let result = block.at(block.object("toolResult")?, block.field("toolResult"));
        let id = result.string("toolUseId")?;
        reader.answer(Some(id), None);
        *answers = true;
        let mut content = Vec::new();
        if result.object.get("content").is_some_and(|c| !c.is_null()) {
            for (_, inner) in result.objects("content")? {
                let mut nested = false;
                let mut inner_reader = Reader::default();
                match inner.object.get("json") {
                    Some(json) => content.push(text_block(&json.to_string())),
                    None => {
                        if let Some(view) = content_block(&inner, &mut inner_reader, &mut nested)? {
                            content.push(view);
                        }
                    }
                }
            }
        }
        let is_error = result.object.get("status").and_then(Value::as_str) == Some("error");
        tool_result_block(id, Value::Array(content), is_error)
    } else if let Some(reasoning) = o.get("reasoningContent") {
        match (
            reasoning.get("reasoningText"),
            reasoning.get("redactedContent"),
        ) {
            (Some(text), _) => json!({
                "type": "thinking",
                "thinking": text.get("text").and_then(Value::as_str).unwrap_or(""),
                "signature": text.get("signature").and_then(Value::as_str).unwrap_or(""),
            }),
            (None, Some(Value::String(data))) => json!({"type": "redacted_thinking", "data": data}),
            _ => json_text_block(reasoning),
        }
    } else if let Some(image) = o.get("image") {
        let format = image.get("format").and_then(Value::as_str).unwrap_or("png");
        let media = format!("image/{format}");
        media_block(Some(&media), &bytes_of(image))
    } else if let Some(document) = o.get("document") {
        let format = document
            .get("format")
            .and_then(Value::as_str)
            .unwrap_or("pdf");
        match document.get("source").and_then(|s| s.get("text")) {
            Some(Value::String(text)) => {
                json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}})
            }
            _ => {
                let media = if format == "pdf" {
                    "application/pdf".to_string()
                } else {
                    format!("application/{format}")
                };
                media_block(Some(&media), &bytes_of(document))
            }
        }
    } else if o.contains_key("cachePoint") {
        return Ok(None);
    } else if let Some(guard) = o.get("guardContent") {
        match guard
            .get("text")
            .and_then(|t| t.get("text"))
            .and_then(Value::as_str)
        {
            Some(text) => text_block(text),
            None => json_text_block(guard),
        }
    } else {
        json_text_block(&Value::Object(o.clone()))
    }))
}

/// A media block's bytes (base64 text, or a byte array that crossed as an object), or its S3
/// location when it has no bytes.
fn bytes_of(media: &Value) -> Value {
    let source = media.get("source");
    match source.and_then(|s| s.get("bytes")) {
        Some(bytes) => bytes.clone(),
        None => source
            .and_then(|s| s.get("s3Location"))
            .and_then(|l| l.get("uri"))
            .cloned()
            .unwrap_or(Value::Null),
    }
}

pub(super) fn edit(item: &mut Value, part: PartRef, edit: &Edit) -> bool {
    let PartRef::Part(n) = part else {
        return true;
    };
    edit_element(item, "content", n, edit, |block, text| {
        if let Some(Value::Object(result)) = block.get_mut("toolResult") {
            result.insert("content".into(), json!([{ "text": text }]));
        }
    })
}

/// A message of our own (the summary).
pub(super) fn text_message(assistant: bool, text: &str) -> Value {
    let role = if assistant { "assistant" } else { "user" };
    json!({"role": role, "content": [{"text": text}]})
}
