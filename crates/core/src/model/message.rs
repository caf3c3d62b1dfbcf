//! The message model: validation of Anthropic- and OpenAI-style messages, and the few
//! structural questions the rest of the crate asks of them (role, tool calls, tool results).
//!
//! Messages stay `serde_json::Value`s (with `preserve_order`) so that every field the library
//! does not know survives untouched and in the caller's key order; this module only reads them.

use serde_json::{Map, Value};

use crate::base::error::ValidationError;

/// The role of a message.
///
/// `developer` is OpenAI's newer name for `system`; it is treated as a system message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
    /// OpenAI's deprecated `function` role (the answer to a `function_call`).
    Function,
}

impl Role {
    pub fn parse(role: &str) -> Option<Role> {
        Some(match role {
            "system" => Role::System,
            "developer" => Role::Developer,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            "function" => Role::Function,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Function => "function",
        }
    }

    /// System-like messages form the head (PRD F-003 rule 1).
    pub fn is_system(self) -> bool {
        matches!(self, Role::System | Role::Developer)
    }
}

/// How deep tool results may nest inside each other before the input is rejected.
/// Real conversations nest one or two levels; this guards the recursive walkers against
/// stack overflow on hostile input.
pub const MAX_CONTENT_DEPTH: usize = 64;

/// Validates a message list and returns the role of each message.
///
/// Checks what the APIs would reject and what the library relies on: every element is an
/// object with a known `role`; `content` is a string, an array of block objects with a string
/// `type`, or (assistant messages only, as OpenAI allows) `null`/absent; `tool_result` blocks
/// carry a string `tool_use_id`; `role: 'tool'` messages carry `tool_call_id` (or the type
/// seed's `toolCallId`). Unknown block types and unknown fields are accepted.
pub fn validate(messages: &[Value]) -> Result<Vec<Role>, ValidationError> {
    messages
        .iter()
        .enumerate()
        .map(|(index, message)| validate_message(index, message))
        .collect()
}

/// Why a JSON message list was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListError {
    /// The text is not JSON.
    Json(String),
    /// The JSON is not a valid message list.
    Invalid(ValidationError),
}

/// Below this many messages, parsing them in parallel costs more than it saves.
pub(crate) const PARALLEL_PARSE_MIN: usize = 16;

/// Parses and validates a JSON message list (the text `JSON.stringify` made of it).
///
/// The list is first split into its elements without building anything (a borrowed
/// `RawValue` per message), then the messages are parsed and validated in parallel: building
/// `Value`s is the costly part of crossing from JavaScript, and it splits evenly by message.
/// The first invalid message (by index) is reported, as a sequential parse would.
pub fn parse_list(text: &str) -> Result<Vec<Value>, ListError> {
    use rayon::prelude::*;
    let raws: Vec<&serde_json::value::RawValue> = match serde_json::from_str(text) {
        Ok(raws) => raws,
        // Not an array, or something the element scan refuses: the whole-document path gives
        // the precise error (and handles lone surrogates).
        Err(_) => return parse_list_sequentially(text),
    };
    let parse_one =
        |(index, raw): (usize, &&serde_json::value::RawValue)| -> Result<Value, ListError> {
            let value =
                parse_json_lenient(raw.get()).map_err(|e| ListError::Json(e.to_string()))?;
            validate_message(index, &value).map_err(ListError::Invalid)?;
            Ok(value)
        };
    let parsed: Vec<Result<Value, ListError>> = if raws.len() >= PARALLEL_PARSE_MIN {
        raws.par_iter().enumerate().map(parse_one).collect()
    } else {
        raws.iter().enumerate().map(parse_one).collect()
    };
    parsed.into_iter().collect()
}

fn parse_list_sequentially(text: &str) -> Result<Vec<Value>, ListError> {
    let value = parse_json_lenient(text).map_err(|e| ListError::Json(e.to_string()))?;
    let list = match value {
        Value::Array(list) => list,
        other => return Err(ListError::Invalid(validate_list(&other).unwrap_err())),
    };
    validate(&list).map_err(ListError::Invalid)?;
    Ok(list)
}

/// Validates the top-level value: it must be an array of messages.
pub fn validate_list(value: &Value) -> Result<&Vec<Value>, ValidationError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(ValidationError::not_an_array(type_name(other))),
    }
}

/// Validates the message at `index` of a list (what [`validate`] checks of each message).
pub fn validate_message(index: usize, message: &Value) -> Result<Role, ValidationError> {
    let err = |field: &str, problem: String| ValidationError::at(index, field, problem);
    let object = match message {
        Value::Object(object) => object,
        other => {
            return Err(ValidationError::at(
                index,
                "",
                format!("expected a message object, got {}", type_name(other)),
            ))
        }
    };
    let role = match object.get("role") {
        None => return Err(err("role", "is missing".into())),
        Some(Value::String(role)) => Role::parse(role).ok_or_else(|| {
            err(
                "role",
                format!(
                    "unknown role {role:?} (expected \"system\", \"user\", \"assistant\" or \"tool\")"
                ),
            )
        })?,
        Some(other) => {
            return Err(err(
                "role",
                format!("expected a string, got {}", type_name(other)),
            ))
        }
    };
    match object.get("content") {
        Some(Value::String(_)) => {}
        Some(Value::Array(blocks)) => validate_blocks(index, "content", blocks, 0)?,
        None | Some(Value::Null) if matches!(role, Role::Assistant | Role::Function) => {}
        None => return Err(err("content", "is missing".into())),
        Some(other) => {
            return Err(err(
                "content",
                format!(
                    "expected a string or an array of content blocks, got {}",
                    type_name(other)
                ),
            ))
        }
    }
    if role == Role::Tool {
        match tool_call_id(object) {
            Some(_) => {}
            None => match object
                .get("tool_call_id")
                .or_else(|| object.get("toolCallId"))
            {
                None => return Err(err("tool_call_id", "is missing".into())),
                Some(other) => {
                    return Err(err(
                        "tool_call_id",
                        format!("expected a string, got {}", type_name(other)),
                    ))
                }
            },
        }
    }
    if role == Role::Assistant {
        for key in ["tool_calls", "toolCalls"] {
            match object.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(calls)) => {
                    for (call_index, call) in calls.iter().enumerate() {
                        let field = format!("{key}[{call_index}]");
                        let call = call.as_object().ok_or_else(|| {
                            err(
                                &field,
                                format!("expected an object, got {}", type_name(call)),
                            )
                        })?;
                        if !matches!(call.get("id"), Some(Value::String(_))) {
                            return Err(err(&format!("{field}.id"), "expected a string".into()));
                        }
                    }
                }
                Some(other) => {
                    return Err(err(
                        key,
                        format!("expected an array, got {}", type_name(other)),
                    ))
                }
            }
        }
    }
    Ok(role)
}

fn validate_blocks(
    index: usize,
    path: &str,
    blocks: &[Value],
    depth: usize,
) -> Result<(), ValidationError> {
    if depth > MAX_CONTENT_DEPTH {
        return Err(ValidationError::at(
            index,
            path,
            format!("content nests deeper than {MAX_CONTENT_DEPTH} levels"),
        ));
    }
    for (block_index, block) in blocks.iter().enumerate() {
        let field = format!("{path}[{block_index}]");
        let object = match block {
            Value::Object(object) => object,
            other => {
                return Err(ValidationError::at(
                    index,
                    &field,
                    format!("expected a content block object, got {}", type_name(other)),
                ))
            }
        };
        let block_type = match object.get("type") {
            Some(Value::String(block_type)) => block_type.as_str(),
            None => {
                return Err(ValidationError::at(
                    index,
                    &format!("{field}.type"),
                    "is missing".into(),
                ))
            }
            Some(other) => {
                return Err(ValidationError::at(
                    index,
                    &format!("{field}.type"),
                    format!("expected a string, got {}", type_name(other)),
                ))
            }
        };
        let expect_string = |key: &str| -> Result<(), ValidationError> {
            match object.get(key) {
                Some(Value::String(_)) => Ok(()),
                None => Err(ValidationError::at(
                    index,
                    &format!("{field}.{key}"),
                    "is missing".into(),
                )),
                Some(other) => Err(ValidationError::at(
                    index,
                    &format!("{field}.{key}"),
                    format!("expected a string, got {}", type_name(other)),
                )),
            }
        };
        match block_type {
            "text" => expect_string("text")?,
            "tool_use" | "server_tool_use" => {
                expect_string("id")?;
                expect_string("name")?;
            }
            "tool_result" => {
                expect_string("tool_use_id")?;
                match object.get("content") {
                    None | Some(Value::Null) | Some(Value::String(_)) => {}
                    Some(Value::Array(inner)) => {
                        validate_blocks(index, &format!("{field}.content"), inner, depth + 1)?
                    }
                    Some(other) => {
                        return Err(ValidationError::at(
                            index,
                            &format!("{field}.content"),
                            format!(
                                "expected a string or an array of content blocks, got {}",
                                type_name(other)
                            ),
                        ))
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses JSON text produced by `JSON.stringify`.
///
/// `JSON.stringify` writes a lone UTF-16 surrogate (legal in a JS string) as an escape such as
/// `\ud800`, which has no UTF-8 form. Such a character can only be U+FFFD in a Rust string —
/// and in any tokenizer that encodes text as UTF-8, js-tiktoken included — so lone surrogate
/// escapes are replaced with `\ufffd` and the text parsed again. Valid pairs are kept.
pub fn parse_json_lenient(text: &str) -> Result<Value, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(value) => Ok(value),
        Err(_) if text.contains("\\ud") || text.contains("\\uD") => {
            serde_json::from_str(&replace_lone_surrogates(text))
        }
        Err(e) => Err(e),
    }
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not part of a valid pair with `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |s: &[u8]| {
        std::str::from_utf8(s)
            .ok()
            .and_then(|s| u16::from_str_radix(s, 16).ok())
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i + 6 <= bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes[i + 1] != b'u' {
            // Skip the escaped character, so an escaped backslash before "ud800" is left alone.
            i += 2;
            continue;
        }
        let Some(unit) = hex(&bytes[i + 2..i + 6]) else {
            i += 6;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        let pairs = is_high
            && i + 12 <= bytes.len()
            && bytes[i + 6] == b'\\'
            && bytes[i + 7] == b'u'
            && hex(&bytes[i + 8..i + 12]).is_some_and(|u| (0xDC00..0xE000).contains(&u));
        if pairs {
            i += 12;
        } else if is_high || is_low {
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The JavaScript-style name of a JSON value's type, for error messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The role of an already validated message.
pub fn role_of(message: &Value) -> Option<Role> {
    message
        .get("role")
        .and_then(Value::as_str)
        .and_then(Role::parse)
}

/// The content blocks of a message, or an empty slice when content is a string or absent.
pub fn blocks(message: &Value) -> &[Value] {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks,
        _ => &[],
    }
}

/// The `type` of a content block.
pub fn block_type(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The id a `role: 'tool'` message answers (`tool_call_id`, or the type seed's `toolCallId`).
pub fn tool_call_id(object: &Map<String, Value>) -> Option<&str> {
    object
        .get("tool_call_id")
        .or_else(|| object.get("toolCallId"))
        .and_then(Value::as_str)
}

/// The OpenAI-style tool calls of an assistant message (`tool_calls` or `toolCalls`).
pub fn openai_tool_calls(message: &Value) -> &[Value] {
    for key in ["tool_calls", "toolCalls"] {
        if let Some(Value::Array(calls)) = message.get(key) {
            return calls;
        }
    }
    &[]
}

/// True when the message answers tool calls: it is `role: 'tool'`, or it carries at least one
/// `tool_result` block. Such a message must directly follow the message that made the calls,
/// so no cut may fall right before it. Server tool results ([`is_server_tool_result`]) do not
/// count: they sit in the assistant message beside their call.
pub fn carries_tool_results(message: &Value) -> bool {
    if matches!(role_of(message), Some(Role::Tool | Role::Function)) {
        return true;
    }
    // An AI SDK approval answers its call as a result does (formats::ai_sdk).
    blocks(message)
        .iter()
        .any(|block| matches!(block_type(block), "tool_result" | "tool_approval_response"))
}

/// True for a call the API runs itself: `server_tool_use` (web search, web fetch, code
/// execution, tool search, …) and the MCP connector's `mcp_tool_use`. Its result comes back in
/// the same assistant message, as a block whose `tool_use_id` names the call
/// ([`is_server_tool_result`]), never in a user `tool_result`: such calls are not paired across
/// messages, so a cut between messages can never separate them.
pub fn is_server_tool_call(block_type: &str) -> bool {
    matches!(block_type, "server_tool_use" | "mcp_tool_use")
}

/// True for the result of a server tool call (`web_search_tool_result`,
/// `code_execution_tool_result`, `mcp_tool_result`, … any `*_tool_result` but a client
/// `tool_result`). See [`is_server_tool_call`].
pub fn is_server_tool_result(block_type: &str) -> bool {
    block_type != "tool_result" && block_type.ends_with("_tool_result")
}

/// A tool call made by an assistant message, in either dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// The input as given: an object for Anthropic `tool_use`; for OpenAI, the parsed
    /// `arguments` when they are a JSON string, otherwise the raw value.
    pub input: std::borrow::Cow<'a, Value>,
}

/// The tool calls an assistant message makes (Anthropic `tool_use` blocks, the server tool
/// calls it reports, and OpenAI `tool_calls`): what was done, for the ledger and summaries.
/// Only `tool_use` and `tool_calls` need a result in the next message (see [`check`]).
///
/// [`check`]: crate::model::check
pub fn tool_calls(message: &Value) -> Vec<ToolCall<'_>> {
    let mut calls = Vec::new();
    for block in blocks(message) {
        let kind = block_type(block);
        if kind == "tool_use" || is_server_tool_call(kind) {
            calls.push(ToolCall {
                id: block.get("id").and_then(Value::as_str).unwrap_or(""),
                name: block.get("name").and_then(Value::as_str).unwrap_or(""),
                input: std::borrow::Cow::Borrowed(block.get("input").unwrap_or(&Value::Null)),
            });
        }
    }
    for call in openai_tool_calls(message) {
        let function = call.get("function");
        let arguments = function.and_then(|f| f.get("arguments"));
        let input = match arguments {
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(parsed) => std::borrow::Cow::Owned(parsed),
                Err(_) => std::borrow::Cow::Owned(Value::String(text.clone())),
            },
            Some(other) => std::borrow::Cow::Borrowed(other),
            None => std::borrow::Cow::Owned(Value::Null),
        };
        calls.push(ToolCall {
            id: call.get("id").and_then(Value::as_str).unwrap_or(""),
            name: function
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .unwrap_or(""),
            input,
        });
    }
    calls
}

/// A tool result carried by a message, in either dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult<'a> {
    pub tool_use_id: &'a str,
    pub is_error: bool,
    /// The result's content (a string, an array of blocks, or absent).
    pub content: Option<&'a Value>,
}

/// The tool results a message carries.
pub fn tool_results(message: &Value) -> Vec<ToolResult<'_>> {
    let Some(object) = message.as_object() else {
        return Vec::new();
    };
    if role_of(message) == Some(Role::Tool) {
        return vec![ToolResult {
            tool_use_id: tool_call_id(object).unwrap_or(""),
            is_error: object
                .get("is_error")
                .or_else(|| object.get("isError"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            content: object.get("content"),
        }];
    }
    blocks(message)
        .iter()
        .filter(|block| block_type(block) == "tool_result")
        .map(|block| ToolResult {
            tool_use_id: block
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or(""),
            is_error: block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            content: block.get("content"),
        })
        .collect()
}

/// The plain text of a message: its string content, or its `text` blocks joined by newlines.
pub fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for block in blocks {
                if block_type(block) == "text" {
                    if let Some(text) = block.get("text").and_then(Value::as_str) {
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str(text);
                    }
                }
            }
            out
        }
        _ => String::new(),
    }
}

/// The plain text of a tool result's content (strings and `text` blocks; other blocks are
/// named in brackets).
pub fn tool_result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for block in blocks {
                if !out.is_empty() {
                    out.push('\n');
                }
                match block_type(block) {
                    "text" => out.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
                    other => {
                        out.push('[');
                        out.push_str(other);
                        out.push(']');
                    }
                }
            }
            out
        }
        _ => String::new(),
    }
}

/// How many leading `system` messages the list has.
pub fn leading_system(messages: &[Value]) -> usize {
    messages
        .iter()
        .take_while(|m| role_of(m) == Some(Role::System))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error_of(messages: Value) -> String {
        validate(messages.as_array().unwrap())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn accepts_both_dialects_and_unknown_fields() {
        let messages = json!([
            {"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "mystery", "x": 1}], "extra": true},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "g", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"}]}]},
            {"role": "tool", "toolCallId": "c2", "content": "seed style"},
            {"role": "assistant"}
        ]);
        let roles = validate(messages.as_array().unwrap()).unwrap();
        assert_eq!(roles[0], Role::System);
        assert_eq!(roles[3], Role::Tool);
    }

    #[test]
    fn errors_name_the_index_and_field() {
        assert_eq!(
            error_of(json!([{"role": "user", "content": "a"}, 5])),
            "messages[1]: expected a message object, got number"
        );
        assert_eq!(
            error_of(json!([{"content": "a"}])),
            "messages[0].role is missing"
        );
        assert_eq!(
            error_of(json!([{"role": "robot", "content": "a"}])),
            "messages[0].role: unknown role \"robot\" (expected \"system\", \"user\", \"assistant\" or \"tool\")"
        );
        assert_eq!(
            error_of(json!([{"role": "user", "content": 7}])),
            "messages[0].content: expected a string or an array of content blocks, got number"
        );
        assert_eq!(
            error_of(json!([{"role": "user"}])),
            "messages[0].content is missing"
        );
        assert_eq!(
            error_of(
                json!([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}])
            ),
            "messages[0].content[0].tool_use_id is missing"
        );
        assert_eq!(
            error_of(json!([{"role": "user", "content": ["text"]}])),
            "messages[0].content[0]: expected a content block object, got string"
        );
        assert_eq!(
            error_of(json!([{"role": "tool", "content": "x"}])),
            "messages[0].tool_call_id is missing"
        );
        assert_eq!(
            error_of(json!([{"role": "user", "content": [{"type": "text"}]}])),
            "messages[0].content[0].text is missing"
        );
    }

    #[test]
    fn deep_nesting_is_rejected_not_overflowed() {
        // Built by hand: `json!` would serialize the interpolated value recursively.
        let mut content = Value::String("leaf".into());
        for _ in 0..10_000 {
            let mut block = Map::new();
            block.insert("type".into(), Value::String("tool_result".into()));
            block.insert("tool_use_id".into(), Value::String("x".into()));
            block.insert("content".into(), content);
            content = Value::Array(vec![Value::Object(block)]);
        }
        let mut message = Map::new();
        message.insert("role".into(), Value::String("user".into()));
        message.insert("content".into(), content);
        let message = Value::Object(message);
        let error = validate(std::slice::from_ref(&message))
            .unwrap_err()
            .to_string();
        assert!(error.contains("nests deeper than 64"), "{error}");
        // Dropping a 10 000-deep Value recurses; leak it so the test stays about validation.
        std::mem::forget(message);
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        assert_eq!(replace_lone_surrogates(r#""a\ud800b""#), r#""a\ufffdb""#);
        assert_eq!(
            replace_lone_surrogates(r#""\ud83c\udf89""#),
            r#""\ud83c\udf89""#
        );
        assert_eq!(
            replace_lone_surrogates(r#""\udc00\ud800""#),
            r#""\ufffd\ufffd""#
        );
        assert_eq!(replace_lone_surrogates(r#""\\ud800""#), r#""\\ud800""#);
        let parsed = parse_json_lenient(r#"[{"role":"user","content":"x\udc00y"}]"#).unwrap();
        assert_eq!(parsed[0]["content"], "x\u{FFFD}y");
        assert_eq!(parse_json_lenient(r#""\ud83c\udf89""#).unwrap(), "🎉");
    }

    #[test]
    fn lists_parse_in_parallel_with_the_first_error_by_index() {
        let many: Vec<Value> = (0..100)
            .map(|i| json!({"role": "user", "content": format!("m{i}"), "z": 1, "a": [1.0, 2]}))
            .collect();
        let text = serde_json::to_string(&many).unwrap();
        assert_eq!(parse_list(&text).unwrap(), many);
        let mut broken = many.clone();
        broken[40] = json!({"role": "robot", "content": "x"});
        broken[70] = json!(5);
        let error = parse_list(&serde_json::to_string(&broken).unwrap()).unwrap_err();
        assert!(
            matches!(&error, ListError::Invalid(e) if e.to_string().starts_with("messages[40].role")),
            "{error:?}"
        );
        assert!(matches!(
            parse_list("{\"role\": \"user\"}"),
            Err(ListError::Invalid(_))
        ));
        assert!(matches!(parse_list("[{"), Err(ListError::Json(_))));
        let lone = r#"[{"role":"user","content":"a\ud800b"}]"#;
        assert_eq!(parse_list(lone).unwrap()[0]["content"], "a\u{FFFD}b");
    }

    #[test]
    fn tool_helpers_see_both_dialects() {
        let anthropic = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "read", "input": {"path": "x"}}]});
        let openai = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "b", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]});
        assert_eq!(tool_calls(&anthropic)[0].input.get("path").unwrap(), "x");
        assert_eq!(tool_calls(&openai)[0].input.get("command").unwrap(), "ls");
        let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": true, "content": "boom"}]});
        assert!(carries_tool_results(&result));
        assert!(tool_results(&result)[0].is_error);
        assert!(carries_tool_results(
            &json!({"role": "tool", "tool_call_id": "b", "content": "x"})
        ));
        assert!(!carries_tool_results(&anthropic));
    }

    #[test]
    fn server_tool_calls_are_calls_and_their_results_stay_in_the_assistant_message() {
        // Anthropic server tools and the MCP connector: call and result in one assistant
        // message, paired by `tool_use_id` (web search tool and MCP connector docs).
        let assistant = json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "bash_code_execution", "input": {"command": "ls"}},
            {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1", "content": {
                "type": "bash_code_execution_result", "stdout": "a", "stderr": "", "return_code": 0, "content": []}},
            {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "s", "input": {}},
            {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": true, "content": "boom"},
            {"type": "text", "text": "done"}
        ]});
        validate(std::slice::from_ref(&assistant)).unwrap();
        let names: Vec<&str> = tool_calls(&assistant).iter().map(|c| c.name).collect();
        assert_eq!(names, ["bash_code_execution", "echo"]);
        // Not results a user message must carry: no cut is forced before or after it.
        assert!(!carries_tool_results(&assistant));
        assert!(tool_results(&assistant).is_empty());
        assert!(is_server_tool_call("mcp_tool_use") && !is_server_tool_call("tool_use"));
        assert!(is_server_tool_result("web_fetch_tool_result"));
        assert!(is_server_tool_result("mcp_tool_result"));
        assert!(!is_server_tool_result("tool_result"));
    }
}
