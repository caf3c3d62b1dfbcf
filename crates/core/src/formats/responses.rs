//! OpenAI Responses API input items (platform.openai.com/docs/api-reference/responses/create,
//! the `ResponseInputItem` union of the `openai` SDK, `resources/responses/responses.ts`).
//!
//! - `message` items (and the type-less "easy" `{role, content}`): `input_text`,
//!   `output_text`, `refusal`, `input_image`, `input_file`, `input_audio` parts.
//! - Client tool calls are `*_call` items with a `call_id` (`function_call`, `custom_tool_call`,
//!   `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`), answered by the
//!   `*_call_output` item with the same `call_id` (`local_shell_call_output` names the call by
//!   `id`); `mcp_approval_request` is answered by `mcp_approval_response.approval_request_id`.
//! - `reasoning` items precede the call or message they led to; reading one assistant turn
//!   (every item between two other kinds of item) as one view message keeps them together.
//! - Server-side calls (`web_search_call`, `file_search_call`, `code_interpreter_call`,
//!   `image_generation_call`, `mcp_call`, `mcp_list_tools`) carry their own results.

use serde_json::{json, Map, Value};

use super::{
    json_text_block, media_block, parse_arguments, remove_element, result_text, text_block,
    tool_result_block, Edit, Fields, ItemView, PartRef, Reader, Side,
};
use crate::base::error::ValidationError;

/// Whether an item is unmistakably a Responses item.
pub(super) fn is_responses(object: &Map<String, Value>) -> bool {
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return false;
    };
    match kind {
        // Anthropic's response objects are `type: 'message'` too; theirs have Anthropic blocks.
        "message" => match object.get("content") {
            Some(Value::Array(parts)) => parts
                .iter()
                .all(|part| super::part_signature(part) != Some(super::Format::Native)),
            _ => true,
        },
        "reasoning"
        | "item_reference"
        | "compaction"
        | "mcp_approval_request"
        | "mcp_approval_response"
        | "mcp_list_tools" => true,
        other => other.ends_with("_call") || other.ends_with("_call_output"),
    }
}

pub(super) fn read(
    index: usize,
    object: &Map<String, Value>,
    reader: &mut Reader,
) -> Result<ItemView, ValidationError> {
    let f = Fields::of(index, object);
    let kind = match object.get("type") {
        None | Some(Value::Null) => "message",
        Some(_) => f.string("type")?,
    };
    let assistant = |blocks: Vec<(Value, PartRef)>| ItemView {
        side: Side::Assistant,
        blocks,
    };
    Ok(match kind {
        "message" => read_message(&f)?,
        "reasoning" => {
            let mut text = Vec::new();
            for key in ["summary", "content"] {
                if object.get(key).is_some_and(|v| !v.is_null()) {
                    for (_, part) in f.objects(key)? {
                        if let Some(t) = part.optional_string("text")? {
                            text.push(t);
                        }
                    }
                }
            }
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push((
                    json!({"type": "thinking", "thinking": text.join("\n\n"), "signature": ""}),
                    PartRef::Item,
                ));
            }
            if let Some(encrypted) = f.optional_string("encrypted_content")? {
                blocks.push((
                    json!({"type": "redacted_thinking", "data": encrypted}),
                    PartRef::Item,
                ));
            }
            assistant(blocks)
        }
        "compaction" => assistant(vec![(
            json!({"type": "compaction", "content": null,
                   "encrypted_content": object.get("encrypted_content").cloned().unwrap_or(Value::Null)}),
            PartRef::Item,
        )]),
        "item_reference" => {
            f.string("id")?;
            assistant(Vec::new())
        }
        "mcp_approval_request" => {
            let id = f.string("id")?;
            let name = f.string("name")?;
            reader.call_made(id, name);
            let input = parse_arguments(f.optional_string("arguments")?.unwrap_or("{}"));
            assistant(vec![(
                json!({"type": "tool_use", "id": id, "name": name, "input": input}),
                PartRef::Item,
            )])
        }
        "mcp_approval_response" => {
            let id = f.string("approval_request_id")?;
            reader.answer(Some(id), None);
            let approved = object.get("approve").and_then(Value::as_bool) == Some(true);
            let text = if approved { "approved" } else { "denied" };
            ItemView {
                side: Side::Results,
                blocks: vec![(
                    tool_result_block(id, Value::String(text.into()), false),
                    PartRef::Item,
                )],
            }
        }
        output if output.ends_with("_call_output") => {
            let id = match output {
                "local_shell_call_output" => f.string("id")?,
                _ => f.string("call_id")?,
            };
            reader.answer(Some(id), None);
            let content = output_content(&f)?;
            ItemView {
                side: Side::Results,
                blocks: vec![(tool_result_block(id, content, false), PartRef::Item)],
            }
        }
        call if call.ends_with("_call") => match f.optional_string("call_id")? {
            Some(id) => {
                let tool = call.trim_end_matches("_call");
                let name = f.optional_string("name")?.unwrap_or(tool);
                reader.call_made(id, name);
                let input = call_input(tool, object);
                assistant(vec![(
                    json!({"type": "tool_use", "id": id, "name": name, "input": input}),
                    PartRef::Item,
                )])
            }
            // Run by the API: the call holds its own result.
            None if call == "image_generation_call" => {
                let image = object.get("result").cloned().unwrap_or(Value::Null);
                assistant(vec![(
                    media_block(Some("image/png"), &image),
                    PartRef::Item,
                )])
            }
            None => assistant(vec![(
                json_text_block(&Value::Object(object.clone())),
                PartRef::Item,
            )]),
        },
        "mcp_list_tools" => assistant(vec![(
            json_text_block(&Value::Object(object.clone())),
            PartRef::Item,
        )]),
        other => {
            return Err(f.error(
                "type",
                format!("{other:?} is not a Responses API input item type"),
            ))
        }
    })
}

/// A call's input in the view: its JSON `arguments`, a custom tool's free-form `input`, or
/// the built-in tools' `action` / `operation`, in the shape the ledger reads for shells and
/// patches.
fn call_input(tool: &str, object: &Map<String, Value>) -> Value {
    if let Some(arguments) = object.get("arguments").and_then(Value::as_str) {
        return parse_arguments(arguments);
    }
    if let Some(input) = object.get("input").and_then(Value::as_str) {
        return json!({ "input": input });
    }
    let action = object.get("action");
    match tool {
        // local_shell: `action.command` is argv; shell: `action.commands` are command lines.
        "local_shell" | "shell" => {
            let lines: Vec<String> = action
                .and_then(|a| a.get("command").or_else(|| a.get("commands")))
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let separator = if tool == "local_shell" { " " } else { "\n" };
            json!({ "command": lines.join(separator) })
        }
        // apply_patch: one file operation, said as a Codex patch.
        "apply_patch" => {
            let operation = object.get("operation").cloned().unwrap_or(Value::Null);
            let path = operation.get("path").and_then(Value::as_str).unwrap_or("");
            let verb = match operation.get("type").and_then(Value::as_str) {
                Some("create_file") => "Add",
                Some("delete_file") => "Delete",
                _ => "Update",
            };
            let diff = operation.get("diff").and_then(Value::as_str).unwrap_or("");
            json!({ "input": format!("*** Begin Patch\n*** {verb} File: {path}\n{diff}\n*** End Patch") })
        }
        _ => action
            .cloned()
            .unwrap_or_else(|| Value::Object(object.clone())),
    }
}

fn read_message(f: &Fields<'_>) -> Result<ItemView, ValidationError> {
    let side = match f.string("role")? {
        "user" => Side::User,
        "assistant" => Side::Assistant,
        "system" | "developer" => Side::System,
        other => {
            return Err(f.error(
                "role",
                format!(
                "{other:?} is not a Responses message role (user, assistant, system, developer)"
            ),
            ))
        }
    };
    let blocks = match f.object.get("content") {
        Some(Value::String(text)) => vec![(text_block(text), PartRef::Text)],
        Some(Value::Array(_)) => f
            .objects("content")?
            .into_iter()
            .map(|(n, part)| Ok((content_block(&part)?, PartRef::Part(n))))
            .collect::<Result<_, ValidationError>>()?,
        None | Some(Value::Null) => return Err(f.error("content", "is missing")),
        Some(other) => {
            return Err(f.error(
                "content",
                format!(
                    "expected a string or an array of content parts, got {}",
                    crate::model::message::type_name(other)
                ),
            ))
        }
    };
    Ok(ItemView { side, blocks })
}

/// One content part as a view block.
fn content_block(part: &Fields<'_>) -> Result<Value, ValidationError> {
    let object = part.object;
    Ok(match part.string("type")? {
        "input_text" | "output_text" | "text" => text_block(part.string("text")?),
        "refusal" => text_block(part.string("refusal")?),
        // Billed like Chat Completions' `image_url` part (the tile rule, by `detail`), so it is
        // read as one; an Anthropic image block would be counted by Anthropic's pixel rule.
        "input_image" => match (object.get("image_url"), object.get("file_id")) {
            (Some(url @ Value::String(_)), _) => {
                let detail = object.get("detail").cloned().unwrap_or(json!("auto"));
                json!({"type": "image_url", "image_url": {"url": url, "detail": detail}})
            }
            (_, Some(Value::String(id))) => {
                json!({"type": "image", "source": {"type": "file", "file_id": id}})
            }
            _ => return Err(part.error("image_url", "is missing (or file_id)")),
        },
        "input_file" => {
            if let Some(data) = object.get("file_data").filter(|d| d.is_string()) {
                media_block(Some("application/pdf"), data)
            } else if let Some(url) = object.get("file_url").filter(|d| d.is_string()) {
                json!({"type": "document", "source": {"type": "url", "url": url}})
            } else if let Some(id) = object.get("file_id").and_then(Value::as_str) {
                json!({"type": "document", "source": {"type": "file", "file_id": id}})
            } else {
                return Err(part.error("file_data", "is missing (or file_id, file_url)"));
            }
        }
        // Counted as OpenAI Chat's audio part, which has the same shape.
        "input_audio" => Value::Object(object.clone()),
        _ => json_text_block(&Value::Object(object.clone())),
    })
}

/// A call output's content: text, or parts (`input_text`, `input_image`, `input_file`), or
/// a computer call's screenshot.
fn output_content(f: &Fields<'_>) -> Result<Value, ValidationError> {
    Ok(match f.object.get("output") {
        Some(Value::String(text)) => Value::String(text.clone()),
        Some(Value::Array(_)) => Value::Array(
            f.objects("output")?
                .into_iter()
                .map(|(_, part)| content_block(&part))
                .collect::<Result<_, _>>()?,
        ),
        Some(Value::Object(output)) => match output.get("image_url") {
            // A computer call's screenshot, billed as an OpenAI image (see `input_image`).
            Some(url @ Value::String(_)) => Value::Array(vec![
                json!({"type": "image_url", "image_url": {"url": url, "detail": "auto"}}),
            ]),
            _ => Value::String(Value::Object(output.clone()).to_string()),
        },
        None | Some(Value::Null) => Value::String(String::new()),
        Some(other) => Value::String(other.to_string()),
    })
}

pub(super) fn edit(item: &mut Value, part: PartRef, edit: &Edit) -> bool {
    let Some(object) = item.as_object_mut() else {
        return true;
    };
    match (part, edit) {
        (PartRef::Item, Edit::Remove) => false,
        (PartRef::Part(n), Edit::Remove) => remove_element(object, "content", n),
        (PartRef::Text, Edit::Remove) => false,
        (PartRef::Item, Edit::Replace(block)) => {
            if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                object.insert(
                    "output".into(),
                    Value::String(result_text(block.get("content"))),
                );
            }
            true
        }
        (PartRef::Part(n), Edit::Replace(block)) => {
            if let (Some(text), Some(Value::Array(parts))) = (
                block.get("text").and_then(Value::as_str),
                object.get_mut("content"),
            ) {
                if let Some(Value::Object(part)) = parts.get_mut(n) {
                    let key = if part.contains_key("refusal") {
                        "refusal"
                    } else {
                        "text"
                    };
                    part.insert(key.into(), Value::String(text.into()));
                }
            }
            true
        }
        (PartRef::Text, Edit::Replace(block)) => {
            if let Some(text) = block.get("text").and_then(Value::as_str) {
                object.insert("content".into(), Value::String(text.into()));
            }
            true
        }
        (PartRef::ToolCall(_), _) => true,
    }
}

/// A message item of our own (the summary).
pub(super) fn text_item(assistant: bool, text: &str) -> Value {
    if assistant {
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]})
    } else {
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    }
}
