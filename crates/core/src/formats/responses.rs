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
//!
//! The same reader takes the OpenAI Agents SDK's items (`AgentInputItem` of `@openai/agents`,
//! what its sessions store): the same protocol with the SDK's own names, which its model
//! classes convert to the ones above before each request. Reading them here, and not through a
//! conversion, keeps the archive holding the SDK's items, so a restore gives them back exactly.
//! - calls and outputs name the call `callId`; a function's output is `function_call_result`,
//!   a computer's `computer_call_result`, a program's `program` / `program_output`;
//! - a tool output may be structured (`{type: 'text' | 'image' | 'file', …}`), message parts
//!   carry `image` / `file` where the API has `image_url` / `file_data` / `file_id`, and an
//!   assistant message may hold `audio` / `image` parts;
//! - reasoning keeps its summary in `content` and its encrypted content in `providerData`;
//! - built-in tools are `hosted_tool_call` items with the API's item in `providerData` (a
//!   remote MCP server's approval request is answered by the `hosted_tool_call` named
//!   `mcp_approval_response`);
//! - `unknown` items carry a provider's item the SDK has no type for.

use serde_json::{json, Map, Value};

use super::shared::{
    self, json_text_block, media_block, parse_arguments, remove_element, result_text, text_block,
    tool_result_block, Edit, Fields, Format, ItemView, PartRef, Reader, Side,
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
                .all(|part| shared::part_signature(part) != Some(Format::Native)),
            _ => true,
        },
        "reasoning"
        | "item_reference"
        | "compaction"
        | "mcp_approval_request"
        | "mcp_approval_response"
        | "mcp_list_tools"
        // The Agents SDK's own item types.
        | "function_call_result"
        | "computer_call_result"
        | "tool_search_output" => true,
        "program" | "program_output" => {
            object.contains_key("call_id") || object.contains_key("callId")
        }
        other => other.ends_with("_call") || other.ends_with("_call_output"),
    }
}

/// A call's id: `call_id`, or the Agents SDK's `callId`.
fn call_id<'a>(f: &Fields<'a>) -> Result<Option<&'a str>, ValidationError> {
    match f.optional_string("call_id")? {
        Some(id) => Ok(Some(id)),
        None => f.optional_string("callId"),
    }
}

/// The id an output answers; missing, the error names `call_id` (or `callId` for the SDK's
/// own types, which only have that name).
fn required_call_id<'a>(f: &Fields<'a>, kind: &str) -> Result<&'a str, ValidationError> {
    match call_id(f)? {
        Some(id) => Ok(id),
        None if SDK_ONLY.contains(&kind) => f.string("callId"),
        None => f.string("call_id"),
    }
}

/// Item types only the Agents SDK has (their call is named by `callId`).
const SDK_ONLY: &[&str] = &[
    "function_call_result",
    "computer_call_result",
    "program",
    "program_output",
];

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
    let results = |id: &str, content: Value| ItemView {
        side: Side::Results,
        blocks: vec![(tool_result_block(id, content, false), PartRef::Item)],
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
            // The SDK keeps the encrypted content in `providerData`, and sends it as
            // `encrypted_content`.
            let provider = object.get("providerData").and_then(Value::as_object);
            let encrypted = match f.optional_string("encrypted_content")? {
                Some(encrypted) => Some(encrypted),
                None => provider
                    .and_then(|p| p.get("encryptedContent").or(p.get("encrypted_content")))
                    .and_then(Value::as_str),
            };
            if let Some(encrypted) = encrypted {
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
            results(id, approval_text(object.get("approve")))
        }
        "hosted_tool_call" => read_hosted(&f, reader)?,
        "program" => {
            let id = required_call_id(&f, kind)?;
            reader.call_made(id, "program");
            let code = f.optional_string("code")?.unwrap_or("");
            assistant(vec![(
                json!({"type": "tool_use", "id": id, "name": "program", "input": {"code": code}}),
                PartRef::Item,
            )])
        }
        "program_output" => {
            let id = required_call_id(&f, kind)?;
            reader.answer(Some(id), None);
            // The SDK's `output`, the API's `result`.
            let text = match f.optional_string("output")? {
                Some(text) => Some(text),
                None => f.optional_string("result")?,
            };
            results(id, Value::String(text.unwrap_or("").to_string()))
        }
        // A client-side tool search is answered by its output (with the call's id); a
        // server-side one holds its result.
        "tool_search_output" => match call_id(&f)? {
            Some(id) => {
                reader.answer(Some(id), None);
                let tools = object.get("tools").cloned().unwrap_or(Value::Null);
                results(id, Value::String(tools.to_string()))
            }
            None => assistant(vec![(
                json_text_block(&Value::Object(object.clone())),
                PartRef::Item,
            )]),
        },
        output
            if output.ends_with("_call_output")
                || output == "function_call_result"
                || output == "computer_call_result" =>
        {
            let id = match output {
                "local_shell_call_output" => f.string("id")?,
                _ => required_call_id(&f, kind)?,
            };
            reader.answer(Some(id), None);
            results(id, output_content(&f)?)
        }
        call if call.ends_with("_call") => match call_id(&f)? {
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
        // What the model returned that the SDK has no type for (in `providerData`).
        "mcp_list_tools" | "unknown" => assistant(vec![(
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

/// An approval's answer as the tool result the view pairs with the request.
fn approval_text(approve: Option<&Value>) -> Value {
    let approved = approve.and_then(Value::as_bool) == Some(true);
    Value::String(if approved { "approved" } else { "denied" }.into())
}

/// The Agents SDK's `hosted_tool_call`: a built-in tool the API ran, with the API's own item in
/// `providerData`. A remote MCP server's approval request and the SDK's answer to it are a call
/// and its result, which a compaction keeps together; the other built-in calls hold their
/// result.
fn read_hosted(f: &Fields<'_>, reader: &mut Reader) -> Result<ItemView, ValidationError> {
    let object = f.object;
    let provider = object.get("providerData").and_then(Value::as_object);
    let provider_str = |key: &str| provider.and_then(|p| p.get(key)).and_then(Value::as_str);
    let name = f.optional_string("name")?;
    let what = provider_str("type").or(name).unwrap_or("");
    if what == "mcp_approval_request" {
        if let Some(id) = provider_str("id").or(f.optional_string("id")?) {
            let tool = provider_str("name").or(name).unwrap_or("mcp");
            reader.call_made(id, tool);
            let arguments = provider_str("arguments")
                .or(f.optional_string("arguments")?)
                .unwrap_or("{}");
            return Ok(ItemView {
                side: Side::Assistant,
                blocks: vec![(
                    json!({"type": "tool_use", "id": id, "name": tool, "input": parse_arguments(arguments)}),
                    PartRef::Item,
                )],
            });
        }
    }
    if what == "mcp_approval_response" {
        if let Some(id) = provider_str("approval_request_id").or(provider_str("approvalRequestId"))
        {
            reader.answer(Some(id), None);
            return Ok(ItemView {
                side: Side::Results,
                blocks: vec![(
                    tool_result_block(
                        id,
                        approval_text(provider.and_then(|p| p.get("approve"))),
                        false,
                    ),
                    PartRef::Item,
                )],
            });
        }
    }
    let block = match (what, provider.and_then(|p| p.get("result"))) {
        ("image_generation_call" | "image_generation", Some(image)) => {
            media_block(Some("image/png"), image)
        }
        _ => json_text_block(&Value::Object(object.clone())),
    };
    Ok(ItemView {
        side: Side::Assistant,
        blocks: vec![(block, PartRef::Item)],
    })
}

/// A call's input in the view: its JSON `arguments`, a custom tool's free-form `input`, or
/// the built-in tools' `action` / `operation`, in the shape the ledger reads for shells and
/// patches.
fn call_input(tool: &str, object: &Map<String, Value>) -> Value {
    match object.get("arguments") {
        Some(Value::String(arguments)) => return parse_arguments(arguments),
        // A tool search's arguments are an object.
        Some(arguments) if !arguments.is_null() => return arguments.clone(),
        _ => {}
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
        // The SDK names the image `image`: a URL or data URL, or `{id}` of an uploaded file.
        "input_image" => match (
            object.get("image_url"),
            object.get("file_id"),
            object.get("image"),
        ) {
            (Some(url @ Value::String(_)), _, _) | (_, _, Some(url @ Value::String(_))) => {
                let detail = object.get("detail").cloned().unwrap_or(json!("auto"));
                json!({"type": "image_url", "image_url": {"url": url, "detail": detail}})
            }
            (_, Some(Value::String(id)), _) => file_image(id),
            (_, _, Some(Value::Object(image))) if image.get("id").is_some_and(Value::is_string) => {
                file_image(image["id"].as_str().unwrap_or(""))
            }
            _ => return Err(part.error("image_url", "is missing (or file_id)")),
        },
        "input_file" => {
            if let Some(data) = object.get("file_data").filter(|d| d.is_string()) {
                media_block(Some("application/pdf"), data)
            } else if let Some(url) = object.get("file_url").filter(|d| d.is_string()) {
                json!({"type": "document", "source": {"type": "url", "url": url}})
            } else if let Some(id) = object.get("file_id").and_then(Value::as_str) {
                file_document(id)
            } else if let Some(file) = object.get("file").filter(|f| !f.is_null()) {
                // The SDK's `file`: inline data or a URL, `{id}` or `{url}`.
                sdk_file(file)
            } else {
                return Err(part.error("file_data", "is missing (or file_id, file_url)"));
            }
        }
        // Counted as OpenAI Chat's audio part, which has the same shape.
        "input_audio" => Value::Object(object.clone()),
        // The SDK's audio part (`{audio, format, transcript}`), counted as the same audio.
        "audio" => match object.get("audio") {
            Some(Value::String(data)) => json!({"type": "input_audio", "input_audio": {
                "data": data, "format": object.get("format").cloned().unwrap_or(Value::Null)}}),
            _ => json_text_block(&Value::Object(object.clone())),
        },
        // The SDK's image in an assistant message (`{image}`: a URL or data URL).
        "image" => match object.get("image") {
            Some(url @ Value::String(_)) => {
                json!({"type": "image_url", "image_url": {"url": url, "detail": "auto"}})
            }
            _ => json_text_block(&Value::Object(object.clone())),
        },
        _ => json_text_block(&Value::Object(object.clone())),
    })
}

fn file_image(id: &str) -> Value {
    json!({"type": "image", "source": {"type": "file", "file_id": id}})
}

fn file_document(id: &str) -> Value {
    json!({"type": "document", "source": {"type": "file", "file_id": id}})
}

/// The SDK's `file` of an `input_file` part or a file tool output: a data URL or base64 (a
/// PDF, as the API reads `file_data`), a URL, `{id}`, `{url}`, or `{data, mediaType}`.
fn sdk_file(file: &Value) -> Value {
    match file {
        Value::String(s) if s.starts_with("http://") || s.starts_with("https://") => {
            json!({"type": "document", "source": {"type": "url", "url": s}})
        }
        Value::String(_) => media_block(Some("application/pdf"), file),
        Value::Object(o) => {
            if let Some(id) = o.get("id").and_then(Value::as_str) {
                file_document(id)
            } else if let Some(url) = o.get("url").and_then(Value::as_str) {
                json!({"type": "document", "source": {"type": "url", "url": url}})
            } else {
                let media = o
                    .get("mediaType")
                    .and_then(Value::as_str)
                    .unwrap_or("application/pdf");
                media_block(Some(media), o.get("data").unwrap_or(&Value::Null))
            }
        }
        _ => json_text_block(file),
    }
}

/// The SDK's image of a tool output: a URL or data URL, `{url}`, `{fileId}`, or
/// `{data, mediaType}` (base64 or bytes).
fn sdk_image(image: Option<&Value>, detail: Option<&Value>) -> Value {
    let detail = detail.cloned().unwrap_or(json!("auto"));
    let url =
        |url: &Value| json!({"type": "image_url", "image_url": {"url": url, "detail": detail}});
    match image {
        Some(s @ Value::String(_)) => url(s),
        Some(Value::Object(o)) => {
            if let Some(u) = o.get("url").filter(|u| u.is_string()) {
                url(u)
            } else if let Some(id) = o.get("fileId").and_then(Value::as_str) {
                file_image(id)
            } else {
                let media = o
                    .get("mediaType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png");
                match o.get("data") {
                    Some(Value::String(data)) if !data.starts_with("data:") => {
                        url(&Value::String(format!("data:{media};base64,{data}")))
                    }
                    Some(data) => media_block(Some(media), data),
                    None => media_block(Some(media), &Value::Null),
                }
            }
        }
        _ => json_text_block(&json!({"type": "image"})),
    }
}

/// A call output's content: text, or parts (`input_text`, `input_image`, `input_file`), or
/// a computer call's screenshot, or a shell's outputs; the SDK's structured output
/// (`{type: 'text' | 'image' | 'file'}`) as the same.
fn output_content(f: &Fields<'_>) -> Result<Value, ValidationError> {
    Ok(match f.object.get("output") {
        Some(Value::String(text)) => Value::String(text.clone()),
        // A shell call's outputs (`[{stdout, stderr, outcome}]`, the API's and the SDK's):
        // what the model reads of them is their text.
        Some(Value::Array(entries)) if entries.iter().any(is_shell_output) => {
            Value::String(shell_text(entries))
        }
        Some(Value::Array(_)) => Value::Array(
            f.objects("output")?
                .into_iter()
                .map(|(_, part)| content_block(&part))
                .collect::<Result<_, _>>()?,
        ),
        Some(Value::Object(output)) => {
            let kind = output.get("type").and_then(Value::as_str);
            match (kind, output.get("image_url"), output.get("data")) {
                // A computer call's screenshot (the API's `image_url`, the SDK's `data`),
                // billed as an OpenAI image (see `input_image`).
                (_, Some(url @ Value::String(_)), _)
                | (Some("computer_screenshot"), _, Some(url @ Value::String(_))) => {
                    Value::Array(vec![
                        json!({"type": "image_url", "image_url": {"url": url, "detail": "auto"}}),
                    ])
                }
                (Some("text"), _, _) => Value::String(
                    output
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                ),
                (Some("image"), _, _) => {
                    Value::Array(vec![sdk_image(output.get("image"), output.get("detail"))])
                }
                (Some("file"), _, _) => {
                    Value::Array(vec![sdk_file(output.get("file").unwrap_or(&Value::Null))])
                }
                _ => Value::String(Value::Object(output.clone()).to_string()),
            }
        }
        None | Some(Value::Null) => Value::String(String::new()),
        Some(other) => Value::String(other.to_string()),
    })
}

fn is_shell_output(entry: &Value) -> bool {
    entry.as_object().is_some_and(|o| {
        !o.contains_key("type") && (o.contains_key("stdout") || o.contains_key("stderr"))
    })
}

fn shell_text(entries: &[Value]) -> String {
    let mut text = Vec::new();
    for entry in entries {
        for key in ["stdout", "stderr"] {
            if let Some(s) = entry
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                text.push(s);
            }
        }
    }
    text.join("\n")
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
                set_output(object, result_text(block.get("content")));
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

/// Gives a tool output its shortened text, in the field and shape its type has: a shell's
/// outputs stay a list of one output, a program's output is the API's `result` or the SDK's
/// `output`. A screenshot, a tool search's tools and an approval are left as they are: they
/// have no text to shorten.
fn set_output(object: &mut Map<String, Value>, text: String) {
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "computer_call_output"
        | "computer_call_result"
        | "tool_search_output"
        | "mcp_approval_response"
        | "hosted_tool_call" => {}
        "program_output" if object.contains_key("result") => {
            object.insert("result".into(), Value::String(text));
        }
        _ => match object.get("output") {
            Some(Value::Array(entries)) if entries.iter().any(is_shell_output) => {
                let outcome = entries
                    .iter()
                    .find_map(|e| e.get("outcome").cloned())
                    .unwrap_or(Value::Null);
                let mut entry = Map::new();
                entry.insert("stdout".into(), Value::String(text));
                entry.insert("stderr".into(), Value::String(String::new()));
                if !outcome.is_null() {
                    entry.insert("outcome".into(), outcome);
                }
                object.insert("output".into(), Value::Array(vec![Value::Object(entry)]));
            }
            _ => {
                object.insert("output".into(), Value::String(text));
            }
        },
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
