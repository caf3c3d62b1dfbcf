//! The shared summary request (SPEC §4.10, seed 002 "发送给 LLM 的数据结构"): the loop's own
//! request body (`agentRequest`), the loop's messages exactly as it sent them, and one more user
//! message with the instructions. A provider's prompt cache is a prefix cache, so everything
//! the loop's last request held is read from it instead of being paid at full price again.
//!
//! What breaks the cache, from the providers' documentation, and so what this module never
//! changes:
//! - **Anthropic** ("Prompt caching", docs.anthropic.com/en/docs/build-with-claude/prompt-caching,
//!   "What invalidates the cache"): the cache follows the hierarchy tools → system → messages;
//!   a change to the tool definitions invalidates everything, a change to the system prompt
//!   the system and messages, a change to `tool_choice`, to the thinking parameters (enabling,
//!   disabling, budget) or to images anywhere invalidates the message blocks. The model is part
//!   of the key: another model reads nothing. So `model`, `system`, `tools`, `tool_choice` and
//!   `thinking` are the loop's, and the messages are the caller's objects. `max_tokens`,
//!   `stream` and `metadata` are not part of the cached prefix.
//!   Reads need a `cache_control` breakpoint: "the system automatically checks for cache hits at
//!   all previous content block boundaries (up to approximately 20 blocks before your explicit
//!   breakpoint)", and a request may have at most 4 breakpoints.
//! - **OpenAI** ("Prompt caching", platform.openai.com/docs/guides/prompt-caching): automatic for
//!   prompts of 1,024 tokens or more, an exact prefix match over the tools and messages, hits in
//!   128-token steps; `prompt_cache_key` steers requests with a common prefix to the same cache,
//!   so it is passed through. Removing or reordering tools, or `tools: []`, diverges at the
//!   start (opencode #43249): the tools stay.
//!
//! [PC]: Anthropic, "Prompt caching", platform.claude.com/docs/en/build-with-claude/prompt-caching.
//! `benchmark/CACHE-RULES.md` quotes every rule the local test servers implement.
//!
//! The end of the list is shaped as seed 002 does: the unanswered tool calls of the last
//! assistant message are removed (an API rejects calls without results), and the instructions
//! come after any tool results, as the last user turn.

use serde_json::{json, Map, Value};

use crate::base::error::ErrorCode;
use crate::model::message::{block_type, openai_tool_calls, role_of, tool_call_id, Role};
use crate::summary::summarize::{AttemptError, Retry, SharedRequest, SummaryRequest, SummaryUsage};

/// The most `cache_control` breakpoints the Messages API accepts in one request.
pub const MAX_BREAKPOINTS: usize = 4;
/// How many block positions the Messages API checks for an earlier cache entry, counting the
/// breakpoint itself as the first ([PC] "The lookback window is 20 blocks. The system checks at
/// most 20 positions per breakpoint, counting the breakpoint itself as the first"): an entry 19
/// blocks before the breakpoint is read, one 20 blocks before is not.
pub const LOOKBACK_BLOCKS: usize = 20;

/// The failed attempt of a reply that called a tool instead of writing the summary: a shared
/// request keeps the loop's tools, so the model may. Retried, then the transcript request.
pub fn tool_call_error(name: Option<&str>, status: u16) -> AttemptError {
    AttemptError::new(
        ErrorCode::ToolCall,
        format!(
            "the model called the tool {} instead of writing the summary",
            crate::base::text::clip(name.unwrap_or("?"), 60)
        ),
        Retry::Yes,
    )
    .with_status(status)
}

/// Adds the usage a response body reports to the request's meter, read by `read` (each
/// provider's usage object mapped to [`SummaryUsage`]).
pub fn meter_usage(request: &SummaryRequest<'_>, body: &[u8], read: fn(&Value) -> SummaryUsage) {
    let Some(meter) = request.usage else {
        return;
    };
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            meter.add(&read(usage));
        }
    }
}

/// Why the loop's request cannot be shared with this provider, or `Ok`.
pub fn check_model(shared: &SharedRequest<'_>, model: &str) -> Result<(), String> {
    match shared.agent_request.get("model").and_then(Value::as_str) {
        Some(agent) if agent == model => Ok(()),
        Some(agent) => Err(format!(
            "the summary model {model} is not the loop's model {agent}, whose cache it would not read"
        )),
        None => Err("agentRequest names no model".into()),
    }
}

/// A `tool_choice` that forces a tool call leaves no room for a summary, and changing it would
/// invalidate the cached messages.
pub fn check_tool_choice(shared: &SharedRequest<'_>) -> Result<(), String> {
    let forced = match shared.agent_request.get("tool_choice") {
        None | Some(Value::Null) => false,
        Some(Value::String(choice)) => choice == "required" || choice == "any",
        Some(Value::Object(choice)) => {
            matches!(
                choice.get("type").and_then(Value::as_str),
                Some("any" | "tool" | "function" | "required" | "allowed_tools")
            ) && choice.get("mode").and_then(Value::as_str) != Some("auto")
        }
        Some(_) => false,
    };
    if forced {
        Err("the loop's tool_choice forces a tool call, which leaves no room for a summary".into())
    } else {
        Ok(())
    }
}

/// Whether `messages` are in the Anthropic Messages form: leading `system` messages (the
/// request's `system`), then user and assistant turns with no OpenAI tool shapes.
pub fn check_anthropic_messages(messages: &[Value]) -> Result<(), String> {
    let lead = leading_system(messages);
    for (index, message) in messages.iter().enumerate().skip(lead) {
        match role_of(message) {
            Some(Role::User | Role::Assistant) => {}
            _ => {
                return Err(format!(
                    "message {index} is not a user or assistant message of the Messages API"
                ))
            }
        }
        if !openai_tool_calls(message).is_empty() || message.get("tool_call_id").is_some() {
            return Err(format!("message {index} is in the OpenAI form"));
        }
    }
    Ok(())
}

/// Whether earlier turns' thinking stays in the model's context when a new user turn comes.
/// "Claude Opus 4.5 and later Opus models keep all prior thinking blocks; Claude Opus 4.1 and
/// earlier Opus models keep only the last assistant turn's thinking. Claude Sonnet 4.6 and later
/// Sonnet models keep all; Claude Sonnet 4.5 and earlier Sonnet models keep only the last turn.
/// All Haiku models through Claude Haiku 4.5 keep only the last turn." (Anthropic, "Building with
/// extended thinking", thinking block preservation by model.) Models of families or versions not
/// named there are taken to keep it, as every model released since does.
pub fn keeps_prior_thinking(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let family = ["opus", "sonnet", "haiku"]
        .into_iter()
        .find(|family| lower.contains(family));
    let Some(family) = family else {
        return true;
    };
    // `claude-opus-4-5-20251101`, `claude-sonnet-4-6`, `claude-3-7-sonnet-20250219`: the first
    // one or two short numbers are the version.
    let numbers: Vec<u32> = lower
        .split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty() && part.len() <= 2)
        .filter_map(|part| part.parse().ok())
        .take(2)
        .collect();
    let version = match numbers.as_slice() {
        [major, minor, ..] => (*major, *minor),
        [major] => (*major, 0),
        [] => return true,
    };
    match family {
        "opus" => version >= (4, 5),
        "sonnet" => version >= (4, 6),
        _ => version > (4, 5),
    }
}

/// Anthropic caches only what a request asks it to: "Prompt caching … with a `cache_control`
/// breakpoint", or a top-level `cache_control` that places one on the last cacheable block
/// ([PC] "Automatic caching"). A loop whose requests carry neither wrote nothing to the cache,
/// so a shared request would read nothing and write the whole conversation at 1.25× the input
/// price: dearer than the transcript. Said when nothing shows the loop caches
/// ([`crate::summary::cache_evidence::find`]), with what to change.
pub const ANTHROPIC_CACHES_WHEN_ASKED: &str = "Anthropic caches only what a request asks it to, so the shared request would write the whole conversation at 1.25× the input price. Add `cache_control: { type: 'ephemeral' }` at the top level of your loop's request (and so of agentRequest): the loop's own requests then read the conversation from the cache, and so does a compaction. If your loop sets its breakpoints as it builds each request, pass its last response's `usage`";

/// OpenAI caches every prompt of 1,024 tokens or more on its own ("Prompt caching": "enabled
/// automatically for prompts that are 1024 tokens or longer"); a shorter one is never cached.
/// OpenAI-compatible servers reached through the same provider (OpenRouter, vLLM with prefix
/// caching) cache prefixes by themselves too.
pub fn check_openai_caching(prompt_tokens: u64) -> Result<String, String> {
    if prompt_tokens >= OPENAI_MIN_CACHED_TOKENS {
        Ok(format!(
            "OpenAI caches prompts of {OPENAI_MIN_CACHED_TOKENS} tokens or more by itself (this conversation: {prompt_tokens} tokens)"
        ))
    } else {
        Err(format!(
            "the conversation ({prompt_tokens} tokens) is shorter than the {OPENAI_MIN_CACHED_TOKENS} tokens OpenAI caches from"
        ))
    }
}

/// The shortest prompt OpenAI caches.
pub const OPENAI_MIN_CACHED_TOKENS: u64 = 1_024;

/// With extended thinking on a model that keeps only the last turn's thinking, the instruction
/// (a user turn that is not only tool results) strips the thinking of the current agentic turn:
/// "When non-tool results are passed in requests while extended thinking is enabled, all
/// previously-cached thinking blocks are stripped from context, and any messages in context that
/// follow those thinking blocks are removed from the cache" ([PC]). The loop's cache entry is past
/// them, so the shared request would read only the tools and system prompt and write the rest at
/// 1.25× — dearer than the transcript (measured in `npm run bench:economics -- --thinking`: 2.8 %
/// read on Sonnet 4.5, 99.7 % on Sonnet 4.6). `Err` then, and the transcript is used.
pub fn check_thinking(shared: &SharedRequest<'_>, model: &str) -> Result<(), String> {
    let enabled = shared
        .agent_request
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|kind| kind != "disabled");
    if !enabled || keeps_prior_thinking(model) {
        return Ok(());
    }
    let messages = shared.conversation;
    let last_human = messages
        .iter()
        .rposition(|m| role_of(m) == Some(Role::User) && !only_tool_results(m))
        .unwrap_or(0);
    let thinking_after = messages[last_human..].iter().any(|m| {
        role_of(m) == Some(Role::Assistant)
            && m.get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|b| matches!(block_type(b), "thinking" | "redacted_thinking"))
                })
    });
    if thinking_after {
        Err(format!(
            "{model} keeps only the last turn's thinking, so the instruction would strip the current turn's thinking and the cache would be missed; the transcript is cheaper"
        ))
    } else {
        Ok(())
    }
}

fn only_tool_results(message: &Value) -> bool {
    match message.get("content") {
        Some(Value::Array(blocks)) => {
            !blocks.is_empty() && blocks.iter().all(|b| block_type(b) == "tool_result")
        }
        _ => false,
    }
}

/// Whether `messages` are in the Chat Completions form (no Anthropic content blocks).
pub fn check_openai_messages(messages: &[Value]) -> Result<(), String> {
    for (index, message) in messages.iter().enumerate() {
        if let Some(Value::Array(blocks)) = message.get("content") {
            if let Some(block) = blocks.iter().find(|b| {
                matches!(
                    block_type(b),
                    "tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document"
                )
            }) {
                return Err(format!(
                    "message {index} holds an Anthropic `{}` block",
                    block_type(block)
                ));
            }
        }
    }
    Ok(())
}

pub use crate::model::message::leading_system;

/// The request body without the keys a one-shot JSON reply cannot have: a stream, several
/// choices. None of them is part of the cached prefix.
fn base_body(shared: &SharedRequest<'_>) -> Map<String, Value> {
    let mut body = shared.agent_request.clone();
    for key in ["stream", "stream_options", "n", "messages"] {
        body.shift_remove(key);
    }
    body
}

/// The Anthropic Messages body: the loop's body, its messages (leading system messages become
/// `system` when the body has none), unanswered tool calls at the end removed, and the
/// instruction as the last user turn with a cache breakpoint.
pub fn anthropic_body(shared: &SharedRequest<'_>, max_tokens: u32) -> Value {
    let mut body = base_body(shared);
    let lead = leading_system(shared.conversation);
    if lead > 0 && !body.contains_key("system") {
        let text: Vec<String> = shared.conversation[..lead]
            .iter()
            .map(crate::model::message::text_of)
            .collect();
        body.insert("system".into(), json!(text.join("\n\n")));
    }
    let mut messages = without_unanswered_calls(&shared.conversation[lead..], Protocol::Anthropic);
    let mut breakpoints = count_breakpoints(&Value::Object(body.clone()))
        + messages.iter().map(count_breakpoints).sum::<usize>();
    // The loop's last request ended just before its last assistant message: its cache entry is
    // there. When that is further back than the look-back window of the breakpoint at the end,
    // a breakpoint on that block reads it exactly (the one place a caller's message is changed,
    // by a `cache_control` field that does not change what the model reads).
    if let Some(last_assistant) = messages
        .iter()
        .rposition(|m| role_of(m) == Some(Role::Assistant))
    {
        // Blocks from the loop's entry (exclusive) to the instruction (inclusive).
        let after: usize = messages[last_assistant..]
            .iter()
            .map(block_count)
            .sum::<usize>()
            + 1;
        if after >= LOOKBACK_BLOCKS && last_assistant > 0 && breakpoints + 2 <= MAX_BREAKPOINTS {
            if let Some(marked) = with_breakpoint(&messages[last_assistant - 1]) {
                messages[last_assistant - 1] = marked;
                breakpoints += 1;
            }
        }
    }
    let mut instruction = json!({"type": "text", "text": shared.instruction});
    if breakpoints < MAX_BREAKPOINTS {
        instruction["cache_control"] = json!({"type": "ephemeral"});
    }
    messages.push(json!({"role": "user", "content": [instruction]}));
    // With extended thinking the output budget holds the thinking too, and must exceed it.
    let thinking_budget = body
        .get("thinking")
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("enabled"))
        .and_then(|t| t.get("budget_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    body.insert(
        "max_tokens".into(),
        json!(thinking_budget.saturating_add(u64::from(max_tokens))),
    );
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

/// The Chat Completions body: the loop's body and messages, unanswered tool calls at the end
/// removed, and the instruction as the last user message. `limit_field` is `max_tokens` or
/// `max_completion_tokens` (reasoning models, whose budget also holds their reasoning).
pub fn openai_body(shared: &SharedRequest<'_>, limit_field: &str, max_tokens: u32) -> Value {
    let mut body = base_body(shared);
    body.shift_remove("max_tokens");
    body.shift_remove("max_completion_tokens");
    let mut messages = without_unanswered_calls(shared.conversation, Protocol::OpenAi);
    messages.push(json!({"role": "user", "content": shared.instruction}));
    body.insert(limit_field.into(), json!(max_tokens));
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

#[derive(Clone, Copy, PartialEq)]
enum Protocol {
    Anthropic,
    OpenAi,
}

/// The messages with the tool calls of the last assistant message that no later message
/// answers removed (seed 002: "最后一条 assistant 消息的 tool_calls 会被移除"); a message left with
/// nothing is dropped. The other messages are the caller's, unchanged.
fn without_unanswered_calls(messages: &[Value], protocol: Protocol) -> Vec<Value> {
    let mut out = messages.to_vec();
    let Some(last) = out
        .iter()
        .rposition(|m| role_of(m) == Some(Role::Assistant))
    else {
        return out;
    };
    let answered: Vec<&str> = out[last + 1..]
        .iter()
        .flat_map(|m| answered_ids(m))
        .collect();
    let message = &out[last];
    let rewritten = match protocol {
        Protocol::Anthropic => {
            let Some(Value::Array(blocks)) = message.get("content") else {
                return out;
            };
            let keep: Vec<Value> = blocks
                .iter()
                .filter(|b| {
                    block_type(b) != "tool_use"
                        || b.get("id")
                            .and_then(Value::as_str)
                            .is_some_and(|id| answered.contains(&id))
                })
                .cloned()
                .collect();
            if keep.len() == blocks.len() {
                return out;
            }
            let mut changed = message.clone();
            let empty = keep.iter().all(|b| {
                matches!(block_type(b), "thinking" | "redacted_thinking")
                    || (block_type(b) == "text"
                        && b.get("text")
                            .and_then(Value::as_str)
                            .is_none_or(|t| t.trim().is_empty()))
            });
            changed["content"] = Value::Array(keep);
            (!empty).then_some(changed)
        }
        Protocol::OpenAi => {
            let calls = openai_tool_calls(message);
            let keep: Vec<Value> = calls
                .iter()
                .filter(|c| {
                    c.get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| answered.contains(&id))
                })
                .cloned()
                .collect();
            if keep.len() == calls.len() {
                return out;
            }
            let mut changed = message.clone();
            let key = if message.get("tool_calls").is_some() {
                "tool_calls"
            } else {
                "toolCalls"
            };
            let object = changed.as_object_mut().expect("a message is an object");
            if keep.is_empty() {
                object.shift_remove(key);
            } else {
                object.insert(key.into(), Value::Array(keep));
            }
            let has_text = match object.get("content") {
                Some(Value::String(t)) => !t.trim().is_empty(),
                Some(Value::Array(parts)) => !parts.is_empty(),
                _ => false,
            };
            (has_text || object.contains_key(key)).then_some(changed)
        }
    };
    match rewritten {
        Some(changed) => out[last] = changed,
        None => {
            out.remove(last);
        }
    }
    out
}

/// The tool call ids a message answers (Anthropic `tool_result` blocks, OpenAI tool messages).
fn answered_ids(message: &Value) -> Vec<&str> {
    let mut ids: Vec<&str> = match message.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| block_type(b) == "tool_result")
            .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    if let Some(id) = message.as_object().and_then(tool_call_id) {
        ids.push(id);
    }
    ids
}

/// How many content blocks a message is (a string content is one).
fn block_count(message: &Value) -> usize {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.len().max(1),
        _ => 1,
    }
}

/// `cache_control` fields anywhere in a value (system blocks, tools, message blocks).
fn count_breakpoints(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key("cache_control"))
                + map.values().map(count_breakpoints).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_breakpoints).sum(),
        _ => 0,
    }
}

/// `message` with a breakpoint on its last block (a string content becomes one text block).
fn with_breakpoint(message: &Value) -> Option<Value> {
    let mut marked = message.clone();
    match marked.get_mut("content")? {
        Value::Array(blocks) => {
            let last = blocks.last_mut()?.as_object_mut()?;
            if last.contains_key("cache_control") {
                return None;
            }
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        content @ Value::String(_) => {
            let text = content.take();
            *content =
                json!([{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]);
        }
        _ => return None,
    }
    Some(marked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_models_keep_earlier_thinking() {
        for keeps in [
            "claude-opus-4-5-20251101",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "claude-sonnet-5",
            "claude-opus-5",
            "claude-mythos-preview",
        ] {
            assert!(keeps_prior_thinking(keeps), "{keeps}");
        }
        for strips in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5",
            "claude-opus-4-1",
            "claude-3-7-sonnet-20250219",
            "claude-sonnet-4-20250514",
        ] {
            assert!(!keeps_prior_thinking(strips), "{strips}");
        }
    }

    #[test]
    fn the_lookback_breakpoint_is_added_from_twenty_blocks() {
        let agent: Map<String, Value> =
            serde_json::from_value(json!({"model": "claude-sonnet-4-5", "max_tokens": 100}))
                .unwrap();
        // The loop's last request ended with the user message; then an assistant message of
        // `n` blocks: the instruction is `n + 1` blocks after the loop's entry.
        let conversation = |n: usize| {
            let blocks: Vec<Value> = (0..n)
                .map(|i| json!({"type": "text", "text": format!("part {i}")}))
                .collect();
            vec![
                json!({"role": "user", "content": "task"}),
                json!({"role": "assistant", "content": blocks}),
            ]
        };
        let marked = |n: usize| {
            let messages = conversation(n);
            let body = anthropic_body(
                &SharedRequest {
                    agent_request: &agent,
                    conversation: &messages,
                    instruction: "summarize",
                },
                1000,
            );
            body["messages"][0] != messages[0]
        };
        assert!(
            !marked(18),
            "19 blocks after the entry: read through the look-back"
        );
        assert!(
            marked(19),
            "20 blocks after the entry: out of the window, so a breakpoint on it"
        );
    }
}
