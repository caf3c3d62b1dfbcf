//! Whether the agent loop's requests are in the provider's prompt cache: the evidence
//! `summaryRequest: 'auto'` reads before it asks for the summary with the loop's own request
//! (SPEC §13). The shared request pays off only when it reads the loop's cache entry; where the
//! loop caches nothing it would write the whole conversation (1.25× the input price on
//! Anthropic), dearer than the transcript.
//!
//! A loop says it caches in any of these ways, and one is enough:
//! - the usage it passes (`usage`, its last response's) shows tokens read from or written to
//!   the cache, in any SDK's shape, or the usage recorded on its messages does (LangChain's
//!   `usage_metadata`, pi's and stored responses' `usage`);
//! - a breakpoint in its messages, in any format: Anthropic `cache_control` on a content block
//!   (tool results and system blocks included), AI SDK `providerOptions.anthropic.cacheControl`
//!   on a message or a part (also `providerOptions.bedrock.cachePoint`, and v4's
//!   `experimental_providerMetadata`), LangChain content blocks, Bedrock `cachePoint` blocks;
//! - a top-level `cache_control` in `agentRequest` (Anthropic's automatic caching), or a
//!   breakpoint in its `system` or `tools`;
//! - a provider that caches by itself (OpenAI, prompts of 1,024 tokens or more), which the
//!   summarizer answers ([`crate::summary::summarize::Summarizer::caches_by_itself`]).
//!
//! A loop that builds its breakpoints into each request as it sends it (Claude Code does) keeps
//! none in its stored messages: only its usage shows the cache. So the usage comes first.
//!
//! Only the places a breakpoint can be are read: message and part objects, their provider
//! options, a tool result's content blocks. A tool call's arguments or a tool's output are data,
//! whatever keys they hold. The search stops at the first sign.

use std::fmt;

use serde_json::{Map, Value};

use crate::formats::Format;

/// Tokens a usage report shows read from and written to the prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheTokens {
    pub read: u64,
    pub write: u64,
}

/// Cache-read fields of the usage shapes, top level or under a details object: Anthropic
/// `cache_read_input_tokens`, Bedrock `cacheReadInputTokens`, AI SDK v5 `cachedInputTokens`,
/// pi `cacheRead`, Gemini `cachedContentTokenCount`; OpenAI Chat
/// `prompt_tokens_details.cached_tokens`, Responses `input_tokens_details.cached_tokens`, AI SDK
/// v6 `inputTokenDetails.cacheReadTokens`, LangChain `input_token_details.cache_read`.
const READ_FIELDS: &[&str] = &[
    "cache_read_input_tokens",
    "cacheReadInputTokens",
    "cachedInputTokens",
    "cacheRead",
    "cachedContentTokenCount",
];
/// Cache-write fields: Anthropic `cache_creation_input_tokens`, Bedrock `cacheWriteInputTokens`,
/// pi `cacheWrite`; AI SDK v6 `inputTokenDetails.cacheWriteTokens`, LangChain
/// `input_token_details.cache_creation`, OpenRouter `prompt_tokens_details.cache_write_tokens`.
const WRITE_FIELDS: &[&str] = &[
    "cache_creation_input_tokens",
    "cacheWriteInputTokens",
    "cacheWrite",
];
const DETAILS: &[(&str, &[&str], &[&str])] = &[
    (
        "prompt_tokens_details",
        &["cached_tokens"],
        &["cache_write_tokens"],
    ),
    ("input_tokens_details", &["cached_tokens"], &[]),
    (
        "inputTokenDetails",
        &["cacheReadTokens"],
        &["cacheWriteTokens"],
    ),
    ("input_token_details", &["cache_read"], &["cache_creation"]),
];

impl CacheTokens {
    /// The cache tokens of a usage object in any of the shapes
    /// [`crate::model::trigger::Usage::from_json`] reads (0 for a shape that reports none).
    pub fn from_usage(usage: &Value) -> CacheTokens {
        let Some(object) = usage.as_object() else {
            return CacheTokens::default();
        };
        let sum = |object: &Map<String, Value>, keys: &[&str]| -> u64 {
            keys.iter()
                .filter_map(|k| object.get(*k).and_then(Value::as_f64))
                .filter(|n| n.is_finite() && *n > 0.0)
                .map(|n| n as u64)
                .fold(0u64, u64::saturating_add)
        };
        let mut tokens = CacheTokens {
            read: sum(object, READ_FIELDS),
            write: sum(object, WRITE_FIELDS),
        };
        for (details, read, write) in DETAILS {
            if let Some(details) = object.get(*details).and_then(Value::as_object) {
                tokens.read = tokens.read.saturating_add(sum(details, read));
                tokens.write = tokens.write.saturating_add(sum(details, write));
            }
        }
        tokens
    }

    /// Whether the cache was read or written at all.
    pub fn any(self) -> bool {
        self.read > 0 || self.write > 0
    }
}

/// What the loop's requests and messages are, for [`find`].
pub struct Sources<'a> {
    /// The loop's request body without its messages (`agentRequest`).
    pub agent_request: Option<&'a Map<String, Value>>,
    /// The caller's list, in its own format.
    pub items: &'a [Value],
    pub format: Format,
    /// The cache tokens of the `usage` option; `None` when no usage was passed.
    pub usage: Option<CacheTokens>,
}

/// The sign that the loop caches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The `usage` option (`item: None`) or the usage recorded on `items[item]`.
    Usage {
        tokens: CacheTokens,
        item: Option<usize>,
    },
    /// A top-level `cache_control` in `agentRequest`.
    TopLevel,
    /// A breakpoint in `agentRequest`'s `field` (`system`, `tools`, …).
    Request { field: String, how: &'static str },
    /// A breakpoint on `items[item]`.
    Message { item: usize, how: &'static str },
    /// The provider caches this prompt by itself.
    Automatic(String),
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Evidence::Usage { tokens, item } => {
                match item {
                    None => write!(f, "the usage passed shows ")?,
                    Some(i) => write!(f, "the usage recorded on messages[{i}] shows ")?,
                }
                match (tokens.write, tokens.read) {
                    (0, read) => write!(f, "{read} tokens read from the cache"),
                    (write, 0) => write!(f, "{write} tokens written to the cache"),
                    (write, read) => write!(
                        f,
                        "{write} tokens written to the cache and {read} read from it"
                    ),
                }
            }
            Evidence::TopLevel => write!(f, "agentRequest has a top-level `cache_control`"),
            Evidence::Request { field, how } => {
                write!(f, "agentRequest.{field} has {how}")
            }
            Evidence::Message { item, how } => write!(f, "messages[{item}] has {how}"),
            Evidence::Automatic(why) => write!(f, "{why}"),
        }
    }
}

/// The first sign that the loop's requests are cached, or what was looked at and not found
/// (for the warning). `automatic` is the summarizer's answer for this prompt
/// ([`crate::summary::summarize::Summarizer::caches_by_itself`]): `Ok` names the provider's
/// own caching, `Err` says why it does not apply.
pub fn find(sources: &Sources<'_>, automatic: Result<String, String>) -> Result<Evidence, String> {
    if let Some(tokens) = sources.usage.filter(|t| t.any()) {
        return Ok(Evidence::Usage { tokens, item: None });
    }
    if let Some(request) = sources.agent_request {
        if request.get("cache_control").is_some_and(is_set) {
            return Ok(Evidence::TopLevel);
        }
        if let Some(found) = request_breakpoint(request) {
            return Ok(found);
        }
    }
    let automatic = match automatic {
        Ok(why) => return Ok(Evidence::Automatic(why)),
        Err(why) => why,
    };
    // From the end: a loop's breakpoints and usage are on its latest messages.
    for (index, item) in sources.items.iter().enumerate().rev() {
        let fields = message_fields(item, sources.format);
        if let Some(how) = fields.and_then(|f| item_breakpoint(f, sources.format)) {
            return Ok(Evidence::Message { item: index, how });
        }
        if let Some(tokens) = fields.and_then(recorded_usage).filter(|t| t.any()) {
            return Ok(Evidence::Usage {
                tokens,
                item: Some(index),
            });
        }
    }
    let usage = match sources.usage {
        Some(_) => "the usage passed shows no cache reads or writes",
        None => "no usage was passed (the `usage` option: the loop's last response's usage)",
    };
    Err(format!(
        "no sign the loop caches: no top-level `cache_control` in agentRequest, no breakpoint in its system prompt or tools, none in the messages, and {usage}; {automatic}"
    ))
}

/// Whether a `cache_control` / `cacheControl` / `cachePoint` value asks for caching (`null` and
/// `false` do not).
fn is_set(value: &Value) -> bool {
    !matches!(value, Value::Null | Value::Bool(false))
}

/// A breakpoint in the request's system prompt or tools: Anthropic `cache_control` on a system
/// block or a tool, Bedrock `cachePoint` entries in `system` and `toolConfig.tools`, a Gemini
/// `cachedContent` (an explicit context cache the request reads).
fn request_breakpoint(request: &Map<String, Value>) -> Option<Evidence> {
    for key in ["cachedContent", "cached_content"] {
        if request.get(key).is_some_and(is_set) {
            return Some(Evidence::Request {
                field: key.into(),
                how: "a Gemini context cache",
            });
        }
    }
    let lists = [
        ("system", request.get("system")),
        ("tools", request.get("tools")),
        (
            "toolConfig.tools",
            request.get("toolConfig").and_then(|c| c.get("tools")),
        ),
    ];
    for (field, list) in lists {
        let Some(Value::Array(entries)) = list else {
            continue;
        };
        if let Some(how) = entries
            .iter()
            .filter_map(Value::as_object)
            .find_map(|entry| object_breakpoint(entry, Format::Native))
        {
            return Some(Evidence::Request {
                field: field.into(),
                how,
            });
        }
    }
    None
}

/// The object holding a message's fields: LangChain's `kwargs` (serialized) or `data` (stored),
/// the item itself in the other formats.
fn message_fields(item: &Value, format: Format) -> Option<&Map<String, Value>> {
    let object = item.as_object()?;
    if format == Format::LangChain {
        if let Some(fields) = ["kwargs", "data"]
            .iter()
            .find_map(|k| object.get(*k).and_then(Value::as_object))
        {
            return Some(fields);
        }
    }
    Some(object)
}

/// A breakpoint on a message or on one of its content blocks (Gemini's `parts`), or on a block
/// of a tool result's content.
fn item_breakpoint(fields: &Map<String, Value>, format: Format) -> Option<&'static str> {
    if let Some(how) = object_breakpoint(fields, format) {
        return Some(how);
    }
    let blocks = ["content", "parts"]
        .iter()
        .find_map(|k| fields.get(*k).and_then(Value::as_array))?;
    blocks
        .iter()
        .filter_map(Value::as_object)
        .find_map(|block| {
            object_breakpoint(block, format).or_else(|| {
                // Anthropic `tool_result` and Bedrock `toolResult` content blocks.
                let nested = block
                    .get("toolResult")
                    .and_then(|r| r.get("content"))
                    .or_else(|| block.get("content"))?;
                nested
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_object)
                    .find_map(|inner| object_breakpoint(inner, format))
            })
        })
}

/// A breakpoint on one object (a message, a block, a tool, a system entry): its own
/// `cache_control`, a Bedrock `cachePoint`, or the AI SDK's provider options.
fn object_breakpoint(object: &Map<String, Value>, format: Format) -> Option<&'static str> {
    if object.get("cache_control").is_some_and(is_set) {
        return Some(match format {
            Format::LangChain => "a content block with `cache_control`",
            _ => "a `cache_control` breakpoint",
        });
    }
    if object.get("cachePoint").is_some_and(is_set)
        || object.get("type").and_then(Value::as_str) == Some("cachePoint")
    {
        return Some("a Bedrock `cachePoint`");
    }
    // AI SDK: `providerOptions` (v4.2 and later), `experimental_providerMetadata` and
    // `providerMetadata` (v4 before it), keyed by provider: `anthropic.cacheControl`,
    // `bedrock.cachePoint`, `openrouter.cacheControl`, …
    for key in [
        "providerOptions",
        "experimental_providerMetadata",
        "providerMetadata",
    ] {
        let Some(options) = object.get(key).and_then(Value::as_object) else {
            continue;
        };
        for (provider, settings) in options {
            let Some(settings) = settings.as_object() else {
                continue;
            };
            for (field, how) in [
                ("cacheControl", "cacheControl"),
                ("cache_control", "cache_control"),
                ("cachePoint", "cachePoint"),
            ] {
                if settings.get(field).is_some_and(is_set) {
                    return Some(ai_sdk_how(key, provider, how));
                }
            }
        }
    }
    None
}

/// How an AI SDK provider option is named in the evidence (static strings for the common ones).
fn ai_sdk_how(key: &str, provider: &str, field: &str) -> &'static str {
    match (key, provider, field) {
        ("providerOptions", "anthropic", "cacheControl") => {
            "AI SDK `providerOptions.anthropic.cacheControl`"
        }
        ("providerOptions", "bedrock", "cachePoint") => {
            "AI SDK `providerOptions.bedrock.cachePoint`"
        }
        ("providerOptions", _, _) => "an AI SDK cache option in `providerOptions`",
        ("experimental_providerMetadata", _, _) => {
            "an AI SDK cache option in `experimental_providerMetadata`"
        }
        _ => "an AI SDK cache option in `providerMetadata`",
    }
}

/// The cache tokens of the usage a model message carries: `usage` (pi, stored API responses),
/// LangChain's `usage_metadata`, or `response_metadata.usage`.
fn recorded_usage(fields: &Map<String, Value>) -> Option<CacheTokens> {
    let usage = fields
        .get("usage")
        .or_else(|| fields.get("usage_metadata"))
        .or_else(|| fields.get("response_metadata").and_then(|m| m.get("usage")))
        .filter(|u| u.is_object())?;
    Some(CacheTokens::from_usage(usage))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::trigger::Usage;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    const NOT_BY_ITSELF: &str = "Anthropic caches only what a request asks it to";

    /// The evidence for `items` in `format`: an agentRequest without breakpoints, no usage, a
    /// provider that does not cache by itself.
    fn in_items(items: &[Value], format: Format) -> Result<Evidence, String> {
        let agent = map(json!({"model": "m", "system": "plain", "tools": []}));
        find(
            &Sources {
                agent_request: Some(&agent),
                items,
                format,
                usage: None,
            },
            Err(NOT_BY_ITSELF.into()),
        )
    }

    fn in_request(agent: Value) -> Result<Evidence, String> {
        let agent = map(agent);
        let items = [json!({"role": "user", "content": "hi"})];
        find(
            &Sources {
                agent_request: Some(&agent),
                items: &items,
                format: Format::Native,
                usage: None,
            },
            Err(NOT_BY_ITSELF.into()),
        )
    }

    #[test]
    fn usage_shows_the_cache_in_every_shape() {
        let shapes = [
            (
                "Anthropic",
                json!({"input_tokens": 3, "cache_creation_input_tokens": 128_130, "cache_read_input_tokens": 0, "output_tokens": 301}),
                CacheTokens {
                    read: 0,
                    write: 128_130,
                },
            ),
            (
                "OpenAI Chat",
                json!({"prompt_tokens": 5_000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4_864}}),
                CacheTokens {
                    read: 4_864,
                    write: 0,
                },
            ),
            (
                "OpenAI Responses",
                json!({"input_tokens": 5_000, "input_tokens_details": {"cached_tokens": 4_096}, "output_tokens": 10}),
                CacheTokens {
                    read: 4_096,
                    write: 0,
                },
            ),
            (
                "AI SDK v5",
                json!({"inputTokens": 5_000, "outputTokens": 10, "cachedInputTokens": 4_000}),
                CacheTokens {
                    read: 4_000,
                    write: 0,
                },
            ),
            (
                "AI SDK v6",
                json!({"inputTokens": 5_000, "outputTokens": 10, "inputTokenDetails": {"noCacheTokens": 800, "cacheReadTokens": 4_000, "cacheWriteTokens": 200}}),
                CacheTokens {
                    read: 4_000,
                    write: 200,
                },
            ),
            (
                "LangChain",
                json!({"input_tokens": 5_000, "output_tokens": 10, "total_tokens": 5_010, "input_token_details": {"cache_read": 4_000, "cache_creation": 200}}),
                CacheTokens {
                    read: 4_000,
                    write: 200,
                },
            ),
            (
                "Bedrock",
                json!({"inputTokens": 10, "outputTokens": 10, "cacheReadInputTokens": 4_000, "cacheWriteInputTokens": 0}),
                CacheTokens {
                    read: 4_000,
                    write: 0,
                },
            ),
            (
                "pi",
                json!({"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 3_000}),
                CacheTokens {
                    read: 0,
                    write: 3_000,
                },
            ),
            (
                "Gemini",
                json!({"promptTokenCount": 5_000, "candidatesTokenCount": 10, "cachedContentTokenCount": 4_000}),
                CacheTokens {
                    read: 4_000,
                    write: 0,
                },
            ),
        ];
        for (shape, usage, tokens) in shapes {
            // Each is a usage the `usage` option accepts.
            assert!(Usage::from_json(&usage).is_some(), "{shape}");
            assert_eq!(CacheTokens::from_usage(&usage), tokens, "{shape}");
            let found = find(
                &Sources {
                    agent_request: None,
                    items: &[],
                    format: Format::Native,
                    usage: Some(tokens),
                },
                Err(NOT_BY_ITSELF.into()),
            );
            assert_eq!(found, Ok(Evidence::Usage { tokens, item: None }), "{shape}");
        }
        // Usage without cache fields, or with zeros, shows nothing.
        for usage in [
            json!({"input_tokens": 9, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}),
            json!({"prompt_tokens": 9, "completion_tokens": 1}),
            json!({"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 0}}),
            json!({"inputTokens": 9, "cachedInputTokens": null}),
        ] {
            assert!(!CacheTokens::from_usage(&usage).any(), "{usage}");
        }
    }

    #[test]
    fn the_warning_says_what_was_looked_at() {
        let no_usage =
            in_items(&[json!({"role": "user", "content": "hi"})], Format::Native).unwrap_err();
        assert!(
            no_usage.starts_with(
                "no sign the loop caches: no top-level `cache_control` in agentRequest"
            ),
            "{no_usage}"
        );
        assert!(no_usage.contains("no usage was passed"), "{no_usage}");
        assert!(no_usage.ends_with(NOT_BY_ITSELF), "{no_usage}");
        let zero = find(
            &Sources {
                agent_request: None,
                items: &[],
                format: Format::Native,
                usage: Some(CacheTokens::default()),
            },
            Err(
                "the conversation (800 tokens) is shorter than the 1024 tokens OpenAI caches from"
                    .into(),
            ),
        )
        .unwrap_err();
        assert!(
            zero.contains("the usage passed shows no cache reads or writes"),
            "{zero}"
        );
        assert!(zero.contains("800 tokens"), "{zero}");
        // What was seen, when something was.
        let seen = Evidence::Usage {
            tokens: CacheTokens {
                read: 0,
                write: 128_130,
            },
            item: None,
        };
        assert_eq!(
            seen.to_string(),
            "the usage passed shows 128130 tokens written to the cache"
        );
    }

    #[test]
    fn the_provider_caching_by_itself_is_evidence() {
        let found = find(
            &Sources {
                agent_request: None,
                items: &[],
                format: Format::Native,
                usage: None,
            },
            Ok("OpenAI caches prompts of 1024 tokens or more by itself".into()),
        );
        assert!(matches!(found, Ok(Evidence::Automatic(_))), "{found:?}");
    }

    #[test]
    fn agent_request_breakpoints() {
        assert_eq!(
            in_request(json!({"model": "m", "cache_control": {"type": "ephemeral"}})),
            Ok(Evidence::TopLevel)
        );
        let system = in_request(json!({"model": "m", "system": [
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        ]}))
        .unwrap();
        assert_eq!(
            system.to_string(),
            "agentRequest.system has a `cache_control` breakpoint"
        );
        let tools = in_request(json!({"model": "m", "tools": [
            {"name": "a", "input_schema": {"type": "object"}},
            {"name": "b", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}
        ]}))
        .unwrap();
        assert!(
            matches!(&tools, Evidence::Request { field, .. } if field == "tools"),
            "{tools:?}"
        );
        // Bedrock Converse: cachePoint entries in system and toolConfig.tools.
        let bedrock_system = in_request(
            json!({"modelId": "m", "system": [{"text": "a"}, {"cachePoint": {"type": "default"}}]}),
        );
        assert!(matches!(bedrock_system, Ok(Evidence::Request { .. })));
        let bedrock_tools = in_request(
            json!({"modelId": "m", "toolConfig": {"tools": [{"toolSpec": {"name": "a"}}, {"cachePoint": {"type": "default"}}]}}),
        );
        assert!(
            matches!(&bedrock_tools, Ok(Evidence::Request { field, .. }) if field == "toolConfig.tools")
        );
        // Gemini's explicit context cache.
        assert!(in_request(
            json!({"model": "gemini-2.5-pro", "cachedContent": "cachedContents/abc"})
        )
        .is_ok());
        // A tool whose parameter is named `cache_control` is no breakpoint, nor is a null one.
        for none in [
            json!({"model": "m", "tools": [{"name": "set", "input_schema": {"type": "object", "properties": {"cache_control": {"type": "string"}}}}]}),
            json!({"model": "m", "cache_control": null}),
            json!({"model": "m", "system": [{"type": "text", "text": "a", "cache_control": null}]}),
        ] {
            assert!(in_request(none.clone()).is_err(), "{none}");
        }
    }

    #[test]
    fn anthropic_and_openai_message_breakpoints() {
        let cc = json!({"type": "ephemeral"});
        let cases = [
            (
                "a text block",
                json!({"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cc}]}),
            ),
            (
                "a tool result",
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "out", "cache_control": cc}]}),
            ),
            (
                "inside a tool result",
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "out", "cache_control": cc}]}]}),
            ),
            (
                "a system message block",
                json!({"role": "system", "content": [{"type": "text", "text": "be brief", "cache_control": cc}]}),
            ),
            (
                "an OpenAI content part",
                json!({"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cc}]}),
            ),
            (
                "an OpenAI tool message part",
                json!({"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "out", "cache_control": cc}]}),
            ),
            (
                "a message (LiteLLM)",
                json!({"role": "user", "content": "hi", "cache_control": cc}),
            ),
        ];
        for (what, message) in cases {
            let items = [
                json!({"role": "user", "content": "task"}),
                message,
                json!({"role": "assistant", "content": "ok"}),
            ];
            assert_eq!(
                in_items(&items, Format::Native),
                Ok(Evidence::Message {
                    item: 1,
                    how: "a `cache_control` breakpoint"
                }),
                "{what}"
            );
        }
    }

    #[test]
    fn ai_sdk_breakpoints() {
        let cases = [
            (
                json!({"role": "user", "content": "hi", "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}),
                "AI SDK `providerOptions.anthropic.cacheControl`",
            ),
            (
                json!({"role": "user", "content": [{"type": "text", "text": "hi", "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}]}),
                "AI SDK `providerOptions.anthropic.cacheControl`",
            ),
            (
                json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "bash", "output": {"type": "text", "value": "ok"}, "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}]}),
                "AI SDK `providerOptions.anthropic.cacheControl`",
            ),
            (
                json!({"role": "system", "content": "be brief", "providerOptions": {"bedrock": {"cachePoint": {"type": "default"}}}}),
                "AI SDK `providerOptions.bedrock.cachePoint`",
            ),
            (
                json!({"role": "user", "content": "hi", "providerOptions": {"openrouter": {"cacheControl": {"type": "ephemeral"}}}}),
                "an AI SDK cache option in `providerOptions`",
            ),
            (
                json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "experimental_providerMetadata": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}),
                "an AI SDK cache option in `experimental_providerMetadata`",
            ),
        ];
        for (message, how) in cases {
            let items = [json!({"role": "user", "content": "task"}), message.clone()];
            assert_eq!(
                in_items(&items, Format::AiSdk),
                Ok(Evidence::Message { item: 1, how }),
                "{message}"
            );
        }
        // Provider options that are not about caching, and a tool call whose input has such a
        // key, are not breakpoints.
        let items = [
            json!({"role": "assistant", "content": [
                {"type": "reasoning", "text": "…", "providerOptions": {"anthropic": {"signature": "sig"}}},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "set", "input": {"providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}, "cache_control": 1}}
            ]}),
            json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "set", "output": {"type": "json", "value": {"cache_control": {"type": "ephemeral"}}}}]}),
        ];
        assert!(in_items(&items, Format::AiSdk).is_err());
    }

    #[test]
    fn langchain_breakpoints_and_usage() {
        let serialized = json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]
        }});
        let stored = json!({"type": "human", "data": {"content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}});
        for item in [serialized, stored] {
            let items = [
                item.clone(),
                json!({"type": "ai", "data": {"content": "ok"}}),
            ];
            assert_eq!(
                in_items(&items, Format::LangChain),
                Ok(Evidence::Message {
                    item: 0,
                    how: "a content block with `cache_control`"
                }),
                "{item}"
            );
        }
        // ChatBedrockConverse's cachePoint block.
        let bedrock = [
            json!({"type": "human", "data": {"content": [{"type": "text", "text": "hi"}, {"cachePoint": {"type": "default"}}]}}),
        ];
        assert!(matches!(
            in_items(&bedrock, Format::LangChain),
            Ok(Evidence::Message { item: 0, .. })
        ));
        // An AIMessage's usage_metadata that shows cache reads.
        let ai = json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"], "kwargs": {
            "content": "done", "tool_calls": [],
            "usage_metadata": {"input_tokens": 5_000, "output_tokens": 4, "total_tokens": 5_004, "input_token_details": {"cache_read": 4_800, "cache_creation": 0}}
        }});
        let items = [json!({"type": "human", "data": {"content": "task"}}), ai];
        let found = in_items(&items, Format::LangChain).unwrap();
        assert_eq!(
            found,
            Evidence::Usage {
                tokens: CacheTokens {
                    read: 4_800,
                    write: 0
                },
                item: Some(1)
            }
        );
        assert_eq!(
            found.to_string(),
            "the usage recorded on messages[1] shows 4800 tokens read from the cache"
        );
        // An AIMessage without cache reads in its usage is no sign.
        let plain = [
            json!({"type": "ai", "data": {"content": "ok", "usage_metadata": {"input_tokens": 10, "output_tokens": 1, "total_tokens": 11}}}),
        ];
        assert!(in_items(&plain, Format::LangChain).is_err());
    }

    #[test]
    fn bedrock_gemini_responses_and_recorded_usage() {
        let bedrock = [
            json!({"role": "user", "content": [{"text": "task"}, {"cachePoint": {"type": "default"}}]}),
            json!({"role": "assistant", "content": [{"text": "ok"}]}),
        ];
        assert_eq!(
            in_items(&bedrock, Format::Bedrock),
            Ok(Evidence::Message {
                item: 0,
                how: "a Bedrock `cachePoint`"
            })
        );
        // Gemini and the Responses API have no breakpoints in their messages (they cache by
        // themselves, or through a context cache named in the request).
        let gemini = [
            json!({"role": "user", "parts": [{"text": "task"}]}),
            json!({"role": "model", "parts": [{"text": "ok"}]}),
        ];
        assert!(in_items(&gemini, Format::Gemini).is_err());
        let responses = [
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "task"}]}),
            json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"cache_control\":{}}"}),
        ];
        assert!(in_items(&responses, Format::Responses).is_err());
        // pi's assistant messages carry their usage.
        let pi = [
            json!({"role": "user", "content": "task"}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": {"input": 3, "output": 5, "cacheRead": 9_000, "cacheWrite": 120}}),
        ];
        assert!(matches!(
            in_items(&pi, Format::Native),
            Ok(Evidence::Usage { item: Some(1), .. })
        ));
    }

    #[test]
    fn tool_output_is_data() {
        // A tool call's input and a tool result's text that mention breakpoints are not ones.
        let items = [
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "set", "input": {"cache_control": {"type": "ephemeral"}, "cachePoint": {}}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "\"cache_control\": {\"type\": \"ephemeral\"}"}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"cache_control\":{\"type\":\"ephemeral\"}}"}}]}),
        ];
        assert!(in_items(&items, Format::Native).is_err());
    }
}
