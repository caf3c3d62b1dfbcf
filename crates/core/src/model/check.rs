//! A validity report for a conversation: the mistakes the LLM APIs reject with a 400, found
//! before the request is sent (and before a compaction is blamed for them).
//!
//! [`check_conversation`] never fails: structurally invalid messages (what
//! [`crate::model::message::validate`] rejects) are reported as `invalid_message` problems and skipped by
//! the other checks. Each problem names the message index and carries the wording of the API
//! error users search for (without the API's `messages.N:` prefix; the index is a field).
//!
//! The checks, with their stable `kind` codes:
//! - `invalid_message`: not a message the library accepts (missing role, content of a wrong type…);
//! - `orphan_tool_result`: a `tool_result` (or `role: 'tool'` message) that does not answer a call
//!   of the immediately preceding assistant message;
//! - `missing_tool_result`: a `tool_use` (or OpenAI `tool_calls` entry) not answered right after;
//! - `duplicate_tool_id`: a tool call id used twice, or a call answered twice;
//! - `first_message_not_user`: the first non-system message is not a user message (Anthropic);
//! - `system_not_at_start`: a system message after the conversation started (Anthropic);
//! - `empty_content`: empty text blocks or empty message content.
//!
//! The role and empty-content rules are Anthropic's; they are skipped for conversations in the
//! OpenAI dialect (any `role: 'tool'` / `'developer'` message or assistant `tool_calls`), which
//! the Chat Completions API accepts (except an empty content array, which it rejects too).

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::model::message::{self, Role};

/// One problem found in a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The index of the message the problem is in.
    pub index: usize,
    /// A stable code: `invalid_message`, `orphan_tool_result`, `missing_tool_result`,
    /// `duplicate_tool_id`, `first_message_not_user`, `system_not_at_start`, `empty_content`.
    pub kind: &'static str,
    /// What is wrong, in the words of the API error when there is one.
    pub message: String,
}

pub const INVALID_MESSAGE: &str = "invalid_message";
pub const ORPHAN_TOOL_RESULT: &str = "orphan_tool_result";
pub const MISSING_TOOL_RESULT: &str = "missing_tool_result";
pub const DUPLICATE_TOOL_ID: &str = "duplicate_tool_id";
pub const FIRST_MESSAGE_NOT_USER: &str = "first_message_not_user";
pub const SYSTEM_NOT_AT_START: &str = "system_not_at_start";
pub const EMPTY_CONTENT: &str = "empty_content";

/// A tool call as the checker sees it: its id and whether it is an OpenAI `tool_calls` entry.
struct Call<'a> {
    id: &'a str,
    openai: bool,
}

/// Client tool calls of an assistant message (`tool_use` blocks and OpenAI `tool_calls`).
/// Server tool calls ([`message::is_server_tool_call`]: `server_tool_use`, `mcp_tool_use`) are
/// answered inside the same message by the server (a `*_tool_result` block naming the call in
/// its `tool_use_id`, [`message::is_server_tool_result`]) and are not checked: a call without
/// its result is legal there (a `pause_turn` response ends that way and is sent back as is),
/// and `message::tool_results` does not return server results, so they are never orphans.
fn calls_of(message: &Value) -> Vec<Call<'_>> {
    if message::role_of(message) != Some(Role::Assistant) {
        return Vec::new();
    }
    let mut calls: Vec<Call<'_>> = message::blocks(message)
        .iter()
        .filter(|block| message::block_type(block) == "tool_use")
        .map(|block| Call {
            id: block.get("id").and_then(Value::as_str).unwrap_or(""),
            openai: false,
        })
        .collect();
    calls.extend(message::openai_tool_calls(message).iter().map(|call| Call {
        id: call.get("id").and_then(Value::as_str).unwrap_or(""),
        openai: true,
    }));
    calls
}

fn is_openai_dialect(messages: &[Value], valid: &[bool]) -> bool {
    messages.iter().zip(valid).any(|(m, &ok)| {
        ok && (matches!(message::role_of(m), Some(Role::Tool | Role::Developer))
            || !message::openai_tool_calls(m).is_empty())
    })
}

/// Checks a conversation for what the Anthropic and OpenAI APIs would reject. Problems are
/// sorted by message index; an empty list means the conversation is valid.
pub fn check_conversation(messages: &[Value]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut push = |index: usize, kind: &'static str, message: String| {
        problems.push(Problem {
            index,
            kind,
            message,
        })
    };

    // Structure first: everything else only looks at messages the library accepts.
    let valid: Vec<bool> = messages
        .iter()
        .enumerate()
        .map(
            |(index, m)| match message::validate(std::slice::from_ref(m)) {
                Ok(_) => true,
                Err(mut error) => {
                    error.index = Some(index);
                    push(index, INVALID_MESSAGE, error.to_string());
                    false
                }
            },
        )
        .collect();
    let role = |i: usize| {
        if valid[i] {
            message::role_of(&messages[i])
        } else {
            None
        }
    };
    let openai = is_openai_dialect(messages, &valid);

    // Tool-call ids: unique across the conversation; each call answered once.
    let mut call_ids: HashMap<&str, usize> = HashMap::new();
    let mut answered: HashMap<&str, usize> = HashMap::new();

    for (i, m) in messages.iter().enumerate() {
        let Some(r) = role(i) else { continue };

        // Calls: unique, and answered right after.
        let calls = calls_of(m);
        for call in &calls {
            if call.id.is_empty() {
                continue;
            }
            if let Some(&first) = call_ids.get(call.id) {
                let text = if call.openai {
                    format!(
                        "duplicate tool_call id '{}' (first used in message {first}): tool_call ids must be unique",
                        call.id
                    )
                } else {
                    format!(
                        "`tool_use` ids must be unique: {} (first used in message {first})",
                        call.id
                    )
                };
                push(i, DUPLICATE_TOOL_ID, text);
            } else {
                call_ids.insert(call.id, i);
            }
        }
        if !calls.is_empty() {
            let answers = answers_after(messages, &valid, i);
            let missing = |openai_calls: bool| -> Vec<&str> {
                let mut seen = HashSet::new();
                calls
                    .iter()
                    .filter(|c| c.openai == openai_calls && !answers.contains(c.id))
                    .map(|c| c.id)
                    .filter(|id| seen.insert(*id))
                    .collect()
            };
            let anthropic_missing = missing(false);
            if !anthropic_missing.is_empty() {
                push(
                    i,
                    MISSING_TOOL_RESULT,
                    format!(
                        "`tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                        anthropic_missing.join(", ")
                    ),
                );
            }
            let openai_missing = missing(true);
            if !openai_missing.is_empty() {
                push(
                    i,
                    MISSING_TOOL_RESULT,
                    format!(
                        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                        openai_missing.join(", ")
                    ),
                );
            }
        }

        // Results: each answers a call of the message right before (for `role: 'tool'`, the
        // assistant message before the run of tool messages it belongs to).
        let results = message::tool_results(m);
        if r == Role::Tool {
            let id = results.first().map(|t| t.tool_use_id).unwrap_or("");
            let mut j = i;
            while j > 0 && role(j - 1) == Some(Role::Tool) {
                j -= 1;
            }
            let previous_calls = if j > 0 {
                calls_of(&messages[j - 1])
            } else {
                Vec::new()
            };
            if j == 0 || role(j - 1) != Some(Role::Assistant) || previous_calls.is_empty() {
                push(
                    i,
                    ORPHAN_TOOL_RESULT,
                    "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'".into(),
                );
            } else if !previous_calls.iter().any(|c| c.id == id) {
                push(
                    i,
                    ORPHAN_TOOL_RESULT,
                    format!("Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."),
                );
            } else {
                note_answer(&mut answered, id, i, true, &mut push);
            }
        } else if !results.is_empty() {
            let previous_calls = if i > 0 && role(i - 1).is_some() {
                calls_of(&messages[i - 1])
            } else {
                Vec::new()
            };
            let mut orphans: Vec<&str> = Vec::new();
            for result in &results {
                if previous_calls.iter().any(|c| c.id == result.tool_use_id) {
                    note_answer(&mut answered, result.tool_use_id, i, false, &mut push);
                } else if !orphans.contains(&result.tool_use_id) {
                    orphans.push(result.tool_use_id);
                }
            }
            if !orphans.is_empty() {
                push(
                    i,
                    ORPHAN_TOOL_RESULT,
                    format!(
                        "unexpected `tool_use_id` found in `tool_result` blocks: {}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                        orphans.join(", ")
                    ),
                );
            }
        }
    }

    // Roles (Anthropic): leading system messages become the top-level `system`; then the
    // conversation starts with a user message, and no system message follows.
    if !openai {
        let mut started = false;
        for (i, message) in messages.iter().enumerate() {
            let Some(r) = role(i) else { continue };
            if r.is_system() {
                if started {
                    push(
                        i,
                        SYSTEM_NOT_AT_START,
                        "system messages must come before all other messages: the Anthropic API takes the system prompt as the top-level `system` parameter, and a `system` role inside `messages` is rejected (Input should be 'user' or 'assistant')".into(),
                    );
                }
                continue;
            }
            // Anthropic's on-demand compaction puts its block first among the messages (after
            // the leading system messages, which are the `system` parameter), in an assistant
            // message of its own (platform.claude.com/docs/en/build-with-claude/compaction-on-demand).
            let starts_with_compaction = r == Role::Assistant
                && message::blocks(message)
                    .first()
                    .is_some_and(|b| message::block_type(b) == "compaction");
            if !started && r != Role::User && !starts_with_compaction {
                push(
                    i,
                    FIRST_MESSAGE_NOT_USER,
                    "first message must use the \"user\" role".into(),
                );
            }
            started = true;
        }
    }

    // Empty content.
    let last = messages.len().saturating_sub(1);
    for (i, m) in messages.iter().enumerate() {
        let Some(r) = role(i) else { continue };
        let content = m.get("content");
        if openai {
            if matches!(content, Some(Value::Array(blocks)) if blocks.is_empty()) {
                push(
                    i,
                    EMPTY_CONTENT,
                    format!("Invalid 'messages[{i}].content': empty array. Expected an array with minimum length 1, but got an empty array instead."),
                );
            }
            continue;
        }
        if r.is_system() {
            continue;
        }
        let empty = match content {
            None | Some(Value::Null) => true,
            Some(Value::String(text)) => text.is_empty(),
            Some(Value::Array(blocks)) => blocks.is_empty(),
            Some(_) => false,
        };
        if empty {
            if !(i == last && r == Role::Assistant) {
                push(
                    i,
                    EMPTY_CONTENT,
                    "all messages must have non-empty content except for the optional final assistant message".into(),
                );
            }
            continue;
        }
        if let Some(Value::Array(blocks)) = content {
            let texts = blocks
                .iter()
                .filter(|b| message::block_type(b) == "text")
                .filter_map(|b| b.get("text").and_then(Value::as_str));
            let mut empty_block = false;
            let mut blank_block = false;
            for text in texts {
                if text.is_empty() {
                    empty_block = true;
                } else if text.trim().is_empty() {
                    blank_block = true;
                }
            }
            if empty_block {
                push(
                    i,
                    EMPTY_CONTENT,
                    "text content blocks must be non-empty".into(),
                );
            }
            if blank_block {
                push(
                    i,
                    EMPTY_CONTENT,
                    "text content blocks must contain non-whitespace text".into(),
                );
            }
        }
    }

    problems.sort_by_key(|p| p.index);
    problems
}

/// The tool-call ids answered right after the assistant message at `i`: by the run of
/// `role: 'tool'` messages that follows it, or by the `tool_result` blocks of the next message.
fn answers_after<'a>(messages: &'a [Value], valid: &[bool], i: usize) -> HashSet<&'a str> {
    let mut answers = HashSet::new();
    let mut j = i + 1;
    while j < messages.len() && valid[j] && message::role_of(&messages[j]) == Some(Role::Tool) {
        answers.extend(
            message::tool_results(&messages[j])
                .iter()
                .map(|t| t.tool_use_id),
        );
        j += 1;
    }
    if j == i + 1 && j < messages.len() && valid[j] {
        let next = &messages[j];
        if message::role_of(next) == Some(Role::User) {
            answers.extend(message::tool_results(next).iter().map(|t| t.tool_use_id));
        }
    }
    answers
}

/// Records that message `i` answers call `id`, reporting a second answer.
fn note_answer<'a>(
    answered: &mut HashMap<&'a str, usize>,
    id: &'a str,
    i: usize,
    openai: bool,
    push: &mut impl FnMut(usize, &'static str, String),
) {
    if id.is_empty() {
        return;
    }
    if let Some(&first) = answered.get(id) {
        let text = if openai {
            format!("duplicate tool message for tool_call_id '{id}' (first answered in message {first})")
        } else {
            format!("each `tool_use` must have a single result. Found multiple `tool_result` blocks with id: {id} (first answered in message {first})")
        };
        push(i, DUPLICATE_TOOL_ID, text);
    } else {
        answered.insert(id, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(messages: Value) -> Vec<Problem> {
        check_conversation(messages.as_array().unwrap())
    }

    fn kinds(problems: &[Problem]) -> Vec<(usize, &'static str)> {
        problems.iter().map(|p| (p.index, p.kind)).collect()
    }

    fn tool_use(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "bash", "input": {"cmd": "ls"}})
    }

    fn tool_result(id: &str) -> Value {
        json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
    }

    #[test]
    fn valid_conversations_have_no_problems() {
        let anthropic = json!([
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": [{"type": "text", "text": "Sure."}, tool_use("a"), tool_use("b")]},
            {"role": "user", "content": [tool_result("a"), tool_result("b")]},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": [{"type": "text", "text": "thanks"}]},
            {"role": "assistant", "content": ""}
        ]);
        assert_eq!(check(anthropic), vec![]);
        let openai = json!([
            {"role": "developer", "content": "Be brief."},
            {"role": "assistant", "content": "Hi, how can I help?"},
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "w", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "tool", "toolCallId": "c2", "content": ""},
            {"role": "system", "content": "late system messages are fine for OpenAI"},
            {"role": "assistant", "content": "Sunny."}
        ]);
        assert_eq!(check(openai), vec![]);
        assert_eq!(check(json!([])), vec![]);
    }

    #[test]
    fn orphan_tool_result_anthropic() {
        let problems = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [tool_result("a")]},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [tool_result("zzz"), {"type": "text", "text": "and?"}]}
        ]));
        assert_eq!(kinds(&problems), vec![(4, ORPHAN_TOOL_RESULT)]);
        assert_eq!(
            problems[0].message,
            "unexpected `tool_use_id` found in `tool_result` blocks: zzz. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
        );
        // A result whose call is two messages back is an orphan too (and the call is unanswered).
        let problems = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": "wait"},
            {"role": "user", "content": [tool_result("a")]}
        ]));
        assert_eq!(
            kinds(&problems),
            vec![(1, MISSING_TOOL_RESULT), (3, ORPHAN_TOOL_RESULT)]
        );
    }

    #[test]
    fn orphan_tool_message_openai() {
        let problems = check(json!([
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "c1", "content": "x"}
        ]));
        assert_eq!(kinds(&problems), vec![(1, ORPHAN_TOOL_RESULT)]);
        assert_eq!(
            problems[0].message,
            "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"
        );
        let problems = check(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "tool", "tool_call_id": "c9", "content": "y"}
        ]));
        assert_eq!(kinds(&problems), vec![(3, ORPHAN_TOOL_RESULT)]);
        assert!(problems[0]
            .message
            .contains("'c9' not found in 'tool_calls'"));
    }

    #[test]
    fn tool_calls_without_results() {
        let problems = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use("a"), tool_use("b")]},
            {"role": "user", "content": [tool_result("a")]}
        ]));
        assert_eq!(kinds(&problems), vec![(1, MISSING_TOOL_RESULT)]);
        assert_eq!(
            problems[0].message,
            "`tool_use` ids were found without `tool_result` blocks immediately after: b. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        );
        // At the very end too: the API rejects a request that ends with an unanswered call.
        let problems = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use("a")]}
        ]));
        assert_eq!(kinds(&problems), vec![(1, MISSING_TOOL_RESULT)]);

        let problems = check(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "user", "content": "next"}
        ]));
        assert_eq!(kinds(&problems), vec![(1, MISSING_TOOL_RESULT)]);
        assert_eq!(
            problems[0].message,
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: c2"
        );
    }

    #[test]
    fn server_tool_use_needs_no_result() {
        let problems = check(json!([
            {"role": "user", "content": "search"},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srv", "content": []},
                {"type": "text", "text": "found"}
            ]}
        ]));
        assert_eq!(problems, vec![]);
    }

    #[test]
    fn server_and_mcp_blocks_of_every_kind_are_neither_orphans_nor_missing() {
        let problems = check(json!([
            {"role": "user", "content": [
                {"type": "text", "text": "research and run it"},
                {"type": "container_upload", "file_id": "file_1"}
            ]},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
                {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [
                    {"type": "web_search_result", "url": "u", "title": "t", "encrypted_content": "AAAA"}]},
                {"type": "server_tool_use", "id": "s2", "name": "web_fetch", "input": {"url": "u"}},
                {"type": "web_fetch_tool_result", "tool_use_id": "s2", "content": {
                    "type": "web_fetch_result", "url": "u", "content": {"type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "d"}}}},
                {"type": "server_tool_use", "id": "s3", "name": "code_execution", "input": {"code": "1"}},
                {"type": "code_execution_tool_result", "tool_use_id": "s3", "content": {
                    "type": "code_execution_tool_result_error", "error_code": "unavailable"}},
                {"type": "server_tool_use", "id": "s4", "name": "tool_search_tool_regex", "input": {"query": "w"}},
                {"type": "tool_search_tool_result", "tool_use_id": "s4", "content": {
                    "type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "w"}]}},
                {"type": "mcp_tool_use", "id": "m1", "name": "echo", "server_name": "srv", "input": {}},
                {"type": "mcp_tool_result", "tool_use_id": "m1", "content": [{"type": "text", "text": "e"}]},
                {"type": "tool_use", "id": "t1", "name": "w", "input": {}}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]},
            // A paused turn ends with a server call whose result comes in the continuation.
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s5", "name": "web_search", "input": {"query": "q2"}}
            ]}
        ]));
        assert_eq!(problems, vec![]);
        // A user `tool_result` cannot answer a server call.
        let problems = check(json!([
            {"role": "user", "content": "search"},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s1", "content": "x"}]}
        ]));
        assert_eq!(kinds(&problems), vec![(2, ORPHAN_TOOL_RESULT)]);
    }

    #[test]
    fn duplicate_tool_ids() {
        let problems = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [tool_result("a")]},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [tool_result("a")]}
        ]));
        assert_eq!(
            kinds(&problems),
            vec![(3, DUPLICATE_TOOL_ID), (4, DUPLICATE_TOOL_ID)]
        );
        assert!(problems[0]
            .message
            .starts_with("`tool_use` ids must be unique: a (first used in message 1)"));
        // The same call answered twice in one message.
        let problems = check(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [tool_result("a"), tool_result("a")]}
        ]));
        assert_eq!(kinds(&problems), vec![(2, DUPLICATE_TOOL_ID)]);
        // OpenAI: two calls with one id.
        let problems = check(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "c1", "type": "function", "function": {"name": "g", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"}
        ]));
        assert_eq!(kinds(&problems), vec![(1, DUPLICATE_TOOL_ID)]);
    }

    #[test]
    fn role_problems() {
        let problems = check(json!([
            {"role": "system", "content": "s"},
            {"role": "assistant", "content": "I start"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "late"},
            {"role": "assistant", "content": "ok"}
        ]));
        assert_eq!(
            kinds(&problems),
            vec![(1, FIRST_MESSAGE_NOT_USER), (3, SYSTEM_NOT_AT_START)]
        );
        // A compaction block may open the conversation, in an assistant message.
        let compacted = check(json!([
            {"role": "assistant", "content": [{"type": "compaction", "content": "S", "signature": "x"}]},
            {"role": "user", "content": "go on"}
        ]));
        assert!(compacted.is_empty(), "{compacted:?}");
        // After the leading system messages (the request's `system` parameter), it is first
        // among the messages.
        let compacted = check(json!([
            {"role": "system", "content": "s"},
            {"role": "system", "content": [{"type": "text", "text": "t"}]},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "S", "signature": "x"},
                {"type": "text", "text": "[context-compact] Earlier conversation (4 messages) was compacted by Anthropic"}
            ]},
            {"role": "user", "content": "go on"}
        ]));
        assert!(compacted.is_empty(), "{compacted:?}");
        assert_eq!(
            problems[0].message,
            "first message must use the \"user\" role"
        );
        // Several leading system messages are the head, not a problem.
        let problems = check(json!([
            {"role": "system", "content": "a"},
            {"role": "system", "content": "b"},
            {"role": "user", "content": "hi"}
        ]));
        assert_eq!(problems, vec![]);
    }

    #[test]
    fn empty_content() {
        let problems = check(json!([
            {"role": "user", "content": ""},
            {"role": "assistant", "content": []},
            {"role": "user", "content": [{"type": "text", "text": ""}]},
            {"role": "assistant", "content": [{"type": "text", "text": "  \n"}]},
            {"role": "user", "content": "fine"},
            {"role": "assistant"}
        ]));
        assert_eq!(
            kinds(&problems),
            vec![
                (0, EMPTY_CONTENT),
                (1, EMPTY_CONTENT),
                (2, EMPTY_CONTENT),
                (3, EMPTY_CONTENT)
            ]
        );
        assert_eq!(
            problems[0].message,
            "all messages must have non-empty content except for the optional final assistant message"
        );
        assert_eq!(problems[2].message, "text content blocks must be non-empty");
        assert_eq!(
            problems[3].message,
            "text content blocks must contain non-whitespace text"
        );
        // OpenAI: only an empty array is rejected.
        let problems = check(json!([
            {"role": "user", "content": []},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": ""}
        ]));
        assert_eq!(kinds(&problems), vec![(0, EMPTY_CONTENT)]);
        assert!(problems[0]
            .message
            .starts_with("Invalid 'messages[0].content': empty array."));
    }

    #[test]
    fn invalid_messages_are_reported_not_thrown() {
        let problems = check(json!([
            {"role": "user", "content": "hi"},
            5,
            {"role": "robot", "content": "x"},
            {"role": "user", "content": [{"type": "tool_result"}]}
        ]));
        assert_eq!(
            kinds(&problems),
            vec![
                (1, INVALID_MESSAGE),
                (2, INVALID_MESSAGE),
                (3, INVALID_MESSAGE)
            ]
        );
        assert_eq!(
            problems[0].message,
            "messages[1]: expected a message object, got number"
        );
        assert_eq!(
            problems[2].message,
            "messages[3].content[0].tool_use_id is missing"
        );
    }

    #[test]
    fn problems_serialize_with_stable_fields() {
        let problems = check(json!([{"role": "assistant", "content": "x"}]));
        assert_eq!(
            serde_json::to_value(&problems).unwrap(),
            json!([{"index": 0, "kind": "first_message_not_user", "message": "first message must use the \"user\" role"}])
        );
    }
}
