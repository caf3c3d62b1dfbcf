//! What each item of a list is made of, for a report of where its tokens go (`renderReport`):
//! its role, the blocks it holds with their tokens (tool calls and results named by their
//! tool), the view message it belongs to, whether it is a message this library wrote, and a
//! short preview of its text. Read through the view, so one description fits every format:
//! blocks are named as in the Anthropic form (`text`, `thinking`, `tool_use`, `tool_result`,
//! `image`, …) whatever the caller's format calls them.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{json, Value};

use super::{acknowledges_summary, detect, read_item, view, Format, Reader, Side};
use crate::base::error::ValidationError;
use crate::base::text::{collapse_whitespace, head};
use crate::model::added;
use crate::model::message::{block_type, openai_tool_calls, role_of, tool_call_id, Role};
use crate::model::tokens::{compact_json, count_message, count_text, Encoding};

/// One block of an item and what it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    /// The block's type in the Anthropic form (`tool_use` for an OpenAI tool call, `text` for
    /// a string content, `tool_result` for a tool message's content, `other` for what the
    /// message bills outside its blocks: a `name`, a `refusal`, audio).
    #[serde(rename = "type")]
    pub kind: String,
    pub tokens: usize,
    /// The tool a `tool_use` calls or a `tool_result` answers, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A tool result that reports an error.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
    /// How a tool result starts (see [`ItemParts::preview`]); only for tool results, which
    /// a report lists on their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
}

/// One item of a list, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemParts {
    /// The item's own `role` when it has one (`model` in Gemini), else its side of the
    /// conversation (`assistant` for a Responses `function_call`, `tool` for a result).
    pub role: String,
    /// The index of the view message the item belongs to (its own index in a native list).
    pub group: usize,
    /// The item's tokens, as `countTokens` counts it.
    pub tokens: usize,
    pub parts: Vec<Part>,
    /// A summary or notice this library wrote: the archive file name it names (empty when
    /// the originals were not archived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The model turn written after a summary where roles must alternate (Gemini, Bedrock): it
    /// belongs to the summary and is restored with it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ack: bool,
    /// The start of the item's text, whitespace collapsed, at most `preview_chars` characters
    /// (`…` marks a cut).
    pub preview: String,
}

/// Describes every item of `items` in `format` (detected when `None`). Errors name the item
/// and field, as every other reading of a list does.
pub fn item_parts(
    encoding: Encoding,
    items: &[Value],
    chosen: Option<Format>,
    preview_chars: usize,
) -> Result<(Format, Vec<ItemParts>), ValidationError> {
    let format = detect(items, chosen)?;
    let mut names: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    if format == Format::Native {
        crate::model::message::validate(items)?;
        for (index, item) in items.iter().enumerate() {
            out.push(native_item(
                encoding,
                index,
                item,
                &mut names,
                preview_chars,
            ));
        }
        return Ok((format, out));
    }
    let groups = view(format, items)?.groups;
    let mut group_of = vec![0; items.len()];
    for (group, range) in groups.iter().enumerate() {
        for index in range.clone() {
            group_of[index] = group;
        }
    }
    let mut reader = Reader::default();
    for (index, item) in items.iter().enumerate() {
        let read = read_item(format, index, item, &mut reader)?;
        let blocks: Vec<Value> = read.blocks.into_iter().map(|(block, _)| block).collect();
        let role = item
            .get("role")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| side_role(read.side).to_string());
        // The item as the view would write it alone: one text block is a string content,
        // the form in which a summary is recognised.
        let message = match blocks.as_slice() {
            [only] if read.side != Side::Results && block_type(only) == "text" => {
                json!({"role": side_role(read.side), "content": only.get("text").cloned().unwrap_or(Value::Null)})
            }
            _ => json!({"role": side_role(read.side), "content": blocks}),
        };
        let parts = block_parts(encoding, &blocks, &mut names, preview_chars);
        let tokens = parts.iter().map(|p| p.tokens).sum();
        out.push(ItemParts {
            role,
            group: group_of[index],
            tokens,
            summary: summary_of(&message),
            ack: acknowledges_summary(format, items, index),
            preview: preview(&blocks, preview_chars),
            parts,
        });
    }
    Ok((format, out))
}

/// The Anthropic-like role of a side, results named as what they are.
fn side_role(side: Side) -> &'static str {
    match side {
        Side::System => "system",
        Side::User => "user",
        Side::Assistant => "assistant",
        Side::Results => "tool",
    }
}

fn summary_of(message: &Value) -> Option<String> {
    added::summary_text(message)?;
    let archive = added::summary_archive(message).unwrap_or("");
    // The file name only: the directory a summary names may have moved.
    Some(archive.rsplit(['/', '\\']).next().unwrap_or("").to_string())
}

/// An Anthropic or OpenAI Chat message.
fn native_item(
    encoding: Encoding,
    index: usize,
    message: &Value,
    names: &mut HashMap<String, String>,
    preview_chars: usize,
) -> ItemParts {
    let role = role_of(message);
    let is_result = matches!(role, Some(Role::Tool | Role::Function));
    let mut blocks: Vec<Value> = match message.get("content") {
        Some(Value::String(text)) if is_result => {
            let mut block = json!({"type": "tool_result", "content": text});
            if let Some(id) = message.as_object().and_then(tool_call_id) {
                block["tool_use_id"] = json!(id);
            }
            if let Some(name) = message.get("name").and_then(Value::as_str) {
                // The legacy `function` role names its function instead of an id.
                block["x-name"] = json!(name);
            }
            if message.get("is_error").and_then(Value::as_bool) == Some(true) {
                block["is_error"] = json!(true);
            }
            vec![block]
        }
        Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        Some(Value::Array(blocks)) if is_result => {
            let mut block = json!({"type": "tool_result", "content": blocks});
            if let Some(id) = message.as_object().and_then(tool_call_id) {
                block["tool_use_id"] = json!(id);
            }
            vec![block]
        }
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    };
    // OpenAI tool calls (and the legacy `function_call`) as `tool_use` blocks.
    for call in openai_tool_calls(message) {
        let function = call.get("function").or_else(|| call.get("custom"));
        let name = function
            .and_then(|f| f.get("name"))
            .cloned()
            .unwrap_or(Value::Null);
        let input = function
            .and_then(|f| f.get("arguments").or_else(|| f.get("input")))
            .cloned()
            .unwrap_or(Value::Null);
        blocks.push(json!({"type": "tool_use", "id": call.get("id").cloned().unwrap_or(Value::Null), "name": name, "x-arguments": input}));
    }
    if let Some(call) = message.get("function_call").filter(|c| c.is_object()) {
        blocks.push(json!({"type": "tool_use", "name": call.get("name").cloned().unwrap_or(Value::Null), "x-arguments": call.get("arguments").cloned().unwrap_or(Value::Null)}));
    }
    let mut parts = block_parts(encoding, &blocks, names, preview_chars);
    let tokens = count_message(encoding, message);
    let counted: usize = parts.iter().map(|p| p.tokens).sum();
    if tokens > counted {
        parts.push(Part {
            kind: "other".into(),
            tokens: tokens - counted,
            name: None,
            error: false,
            preview: None,
        });
    }
    ItemParts {
        role: message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        group: index,
        tokens,
        parts,
        summary: summary_of(message),
        ack: false,
        preview: preview(&blocks, preview_chars),
    }
}

/// Each block with its tokens; tool calls register their names so the results can be named.
fn block_parts(
    encoding: Encoding,
    blocks: &[Value],
    names: &mut HashMap<String, String>,
    preview_chars: usize,
) -> Vec<Part> {
    blocks
        .iter()
        .map(|block| {
            let kind = block_type(block).to_string();
            let tokens = match block.get("x-arguments") {
                // An OpenAI call: its name plus its arguments, as `countTokens` bills it.
                Some(arguments) => {
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                    count_text(encoding, name)
                        + match arguments {
                            Value::String(text) => count_text(encoding, text),
                            Value::Null => 0,
                            other => count_text(encoding, &compact_json(other)),
                        }
                }
                None => count_message(encoding, &json!({ "content": [block] })),
            };
            let mut name = None;
            let mut error = false;
            let mut result_preview = None;
            if kind == "tool_use" || kind.ends_with("tool_use") {
                name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if let (Some(id), Some(name)) = (block.get("id").and_then(Value::as_str), &name) {
                    names.insert(id.to_string(), name.clone());
                }
            } else if kind == "tool_result" || kind.ends_with("_tool_result") {
                name = block
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .and_then(|id| names.get(id).cloned())
                    .or_else(|| {
                        block
                            .get("x-name")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    });
                error = block.get("is_error").and_then(Value::as_bool) == Some(true);
                if kind == "tool_result" && preview_chars > 0 {
                    result_preview = Some(preview(std::slice::from_ref(block), preview_chars));
                }
            }
            Part {
                kind,
                tokens,
                name,
                error,
                preview: result_preview,
            }
        })
        .collect()
}

/// The start of the blocks' text: what a person recognises the message by. Each block gives
/// at most what is left of the budget, so a 1 MB tool result costs no more than a short one.
fn preview(blocks: &[Value], max_chars: usize) -> String {
    let mut out = String::new();
    let mut left = max_chars;
    let mut cut = false;
    for block in blocks {
        if left == 0 {
            cut = true;
            break;
        }
        // One character more than fits, so that a cut shows.
        let budget = left + 1;
        let piece = match block_type(block) {
            "text" | "input_text" | "output_text" => block
                .get("text")
                .and_then(Value::as_str)
                .map(|t| head(t, budget).to_string()),
            "thinking" => block
                .get("thinking")
                .and_then(Value::as_str)
                .map(|t| format!("(thinking) {}", head(t, budget))),
            "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                let input = match block.get("x-arguments").or_else(|| block.get("input")) {
                    Some(Value::String(text)) => head(text, budget).to_string(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => head(&compact_json(other), budget).to_string(),
                };
                Some(format!("{name} {input}"))
            }
            "tool_result" => Some(result_head(block.get("content"), budget)),
            other => Some(format!("[{other}]")),
        };
        let Some(piece) = piece else { continue };
        let piece = collapse_whitespace(head(&piece, budget));
        if piece.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str(" · ");
        }
        let taken = head(&piece, left);
        cut |= taken.len() < piece.len();
        left = left.saturating_sub(taken.chars().count());
        out.push_str(taken);
    }
    if cut {
        out.push('…');
    }
    out
}

/// A tool result's text, at most `max_chars` characters of each text in it.
fn result_head(content: Option<&Value>, max_chars: usize) -> String {
    match content {
        Some(Value::String(text)) => head(text, max_chars).to_string(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block_type(block) {
                "text" => head(
                    block.get("text").and_then(Value::as_str).unwrap_or(""),
                    max_chars,
                )
                .to_string(),
                other => format!("[{other}]"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(items: Value, format: Option<Format>) -> Vec<ItemParts> {
        item_parts(Encoding::O200kBase, items.as_array().unwrap(), format, 40)
            .unwrap()
            .1
    }

    #[test]
    fn native_blocks_add_up_to_the_message_and_results_are_named_by_their_call() {
        let items = json!([
            {"role": "assistant", "content": [
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.rs"}}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "no such file"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "a.rs b.rs"}
        ]);
        let parts = parts_of(items.clone(), None);
        for (item, message) in parts.iter().zip(items.as_array().unwrap()) {
            assert_eq!(item.tokens, count_message(Encoding::O200kBase, message));
            assert_eq!(
                item.tokens,
                item.parts.iter().map(|p| p.tokens).sum::<usize>()
            );
        }
        assert_eq!(parts[1].parts[0].name.as_deref(), Some("read_file"));
        assert!(parts[1].parts[0].error);
        assert_eq!(parts[2].parts[0].kind, "tool_use");
        assert_eq!(parts[2].parts[0].name.as_deref(), Some("bash"));
        assert_eq!(parts[3].parts[0].kind, "tool_result");
        assert_eq!(parts[3].parts[0].name.as_deref(), Some("bash"));
        assert_eq!(parts[3].role, "tool");
        assert_eq!(parts[3].preview, "a.rs b.rs");
        assert_eq!(parts[1].parts[0].preview.as_deref(), Some("no such file"));
    }

    #[test]
    fn view_items_keep_their_role_and_group_and_summaries_name_their_archive() {
        let items = json!([
            {"role": "user", "parts": [{"text": "[context-compact] Earlier conversation (3 messages) was compacted into the summary below. Originals archived in: /x/s/compact-20260101T000000Z-1.json\n\nbody"}]},
            {"role": "model", "parts": [{"text": "Understood; continuing from the summary."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {"command": "ls"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"output": "x".repeat(5000)}}}]}
        ]);
        let parts = parts_of(items, Some(Format::Gemini));
        assert_eq!(
            parts[0].summary.as_deref(),
            Some("compact-20260101T000000Z-1.json")
        );
        assert!(parts[1].ack);
        assert_eq!(parts[2].role, "model");
        assert_eq!(parts[2].parts[0].kind, "tool_use");
        assert_eq!(parts[3].parts[0].name.as_deref(), Some("bash"));
        assert!(parts[3].preview.chars().count() <= 41);
        assert!(parts[3].preview.ends_with('…'));
        assert_eq!(
            parts.iter().map(|p| p.group).collect::<Vec<_>>(),
            vec![0, 0, 1, 2]
        );
    }

    #[test]
    fn an_invalid_item_is_named() {
        let error = item_parts(
            Encoding::O200kBase,
            &[json!({"role": "user", "content": 3})],
            None,
            40,
        )
        .unwrap_err();
        assert!(error.to_string().contains("messages[0]"), "{error}");
    }
}
