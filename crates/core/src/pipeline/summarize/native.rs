//! Step 3, **summarize**, by Anthropic's on-demand compaction (`provider:
//! 'anthropic-compaction'`): the middle becomes the API's signed compaction block, with the
//! library's ledger beside it; or why not, and our own summary is written instead.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::base::retry::RetryPolicy;
use crate::carry::appended::{appended_sections, earlier_body};
use crate::model::added::OwnSummaries;
use crate::options::CompactOptions;
use crate::pipeline::shared::draft::{NativeFallback, NativeSummarized};
use crate::pipeline::shared::outcome::Aborted;
use crate::plan::partition::Partition;
use crate::summary::summarize::AttemptObserver;

/// Anthropic's on-demand compaction of the middle of `plan`, when `provider:
/// 'anthropic-compaction'` is set and the conversation allows it; otherwise why not (the
/// caller then writes its own summary). `None`: not configured.
pub(crate) async fn summarize_natively(
    messages: &[Value],
    plan: Partition,
    options: &CompactOptions,
    own: &OwnSummaries,
    cancel: &CancellationToken,
    observer: &dyn AttemptObserver,
) -> Result<Option<Result<NativeSummarized, NativeFallback>>, Aborted> {
    let Some(client) = options.native_compaction.as_deref() else {
        return Ok(None);
    };
    let model = client.model().to_string();
    let fallback = |why: String, unavailable: bool| {
        NativeFallback {
        warning: format!(
            "anthropic-compaction was not used ({why}); the summary was written by the anthropic provider instead"
        ),
        unavailable_model: unavailable.then(|| model.clone()),
    }
    };
    if options.compaction_unavailable_models.contains(&model) {
        return Ok(Some(Err(fallback(
            format!("on-demand compaction was found unavailable for {model} earlier"),
            false,
        ))));
    }
    if crate::providers::anthropic_compaction::supports_compaction(&model) == Some(false) {
        return Ok(Some(Err(fallback(
            format!("{model} does not offer on-demand compaction"),
            true,
        ))));
    }
    // Leading system messages are the request's `system` parameter, not part of `messages`:
    // they are sent as such, and the block goes first after them in the result (first among
    // the messages of the next request).
    let system = system_parameter(options.system.as_ref(), &messages[..plan.head_len]);
    let middle = &messages[plan.middle()];
    let openai = middle.iter().any(|m| {
        matches!(
            crate::model::message::role_of(m),
            Some(crate::model::message::Role::Tool | crate::model::message::Role::Function)
        ) || !crate::model::message::openai_tool_calls(m).is_empty()
    });
    if openai {
        return Ok(Some(Err(fallback(
            "the messages are not in the Anthropic format".into(),
            false,
        ))));
    }
    let policy = RetryPolicy {
        max_retries: options.max_retries,
        base_delay: options.retry_base_delay,
    };
    let result = client
        .compact(
            middle,
            system.as_ref(),
            options.tools.as_ref(),
            options.custom_instructions.as_deref(),
            options.summary_max_tokens,
            policy,
            cancel,
            observer,
        )
        .await;
    use crate::providers::anthropic_compaction::NativeFailure;
    match result {
        Ok(native) => {
            let ledger = appended_sections(
                earlier_body(middle, own),
                middle,
                &options.section_budgets(),
                own,
            );
            Ok(Some(Ok(NativeSummarized {
                region: plan.middle(),
                block: native.block,
                ledger,
                attempts: native.attempts,
                model,
            })))
        }
        Err(NativeFailure::Aborted) => Err(Aborted),
        Err(NativeFailure::Unavailable { status, message }) => Ok(Some(Err(fallback(
            format!(
                "unavailable for {model}{}: {message}",
                status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
            ),
            true,
        )))),
        Err(NativeFailure::Failed(error)) => {
            Ok(Some(Err(fallback(format!("it failed: {error}"), false))))
        }
    }
}

/// The `system` parameter of a compaction request: the caller's `system` option, then the text
/// of the leading system messages of the list, in that order (a request puts its `system`
/// parameter before its messages). The API takes a string or an array of text blocks: one
/// string source alone is sent as that string, exactly as the agent sends it (the summarizer
/// reads it, and the kept turns' thinking stays valid only when it matches); anything else as
/// an array of text blocks — strings become `{type: "text", text}`, blocks are kept as they are
/// (`cache_control` included). Empty text is left out. `None` when there is no system prompt.
pub(crate) fn system_parameter(given: Option<&Value>, head: &[Value]) -> Option<Value> {
    let sources: Vec<&Value> = given
        .filter(|v| !v.is_null())
        .into_iter()
        .chain(head.iter().filter_map(|message| message.get("content")))
        .filter(|source| match source {
            Value::String(text) => !text.is_empty(),
            Value::Array(blocks) => !blocks.is_empty(),
            _ => false,
        })
        .collect();
    match sources.as_slice() {
        [] => None,
        [Value::String(text)] => Some(Value::String(text.clone())),
        _ => {
            let mut blocks = Vec::new();
            for source in sources {
                match source {
                    Value::String(text) => {
                        blocks.push(serde_json::json!({"type": "text", "text": text}))
                    }
                    Value::Array(parts) => blocks.extend(
                        parts
                            .iter()
                            .filter(|b| b.get("text").and_then(Value::as_str) != Some(""))
                            .cloned(),
                    ),
                    _ => {}
                }
            }
            (!blocks.is_empty()).then_some(Value::Array(blocks))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_system_parameter_is_the_given_system_then_the_leading_system_messages() {
        let system = |text: &str| json!({"role": "system", "content": text});
        // Nothing: no parameter.
        assert_eq!(system_parameter(None, &[]), None);
        assert_eq!(system_parameter(Some(&Value::Null), &[system("")]), None);
        // One string, from either side: sent as it is.
        assert_eq!(
            system_parameter(None, &[system("You are a coding agent.")]),
            Some(json!("You are a coding agent."))
        );
        assert_eq!(
            system_parameter(Some(&json!("Be brief.")), &[]),
            Some(json!("Be brief."))
        );
        // Several: text blocks, the option first, blocks kept with their fields.
        let cached = json!([{"type": "text", "text": "Tools: grep.", "cache_control": {"type": "ephemeral"}}]);
        assert_eq!(
            system_parameter(
                Some(&json!("Be brief.")),
                &[
                    system("You are a coding agent."),
                    json!({"role": "developer", "content": cached}),
                    system(""),
                ]
            ),
            Some(json!([
                {"type": "text", "text": "Be brief."},
                {"type": "text", "text": "You are a coding agent."},
                {"type": "text", "text": "Tools: grep.", "cache_control": {"type": "ephemeral"}}
            ]))
        );
        // A given array of blocks stays an array, with the messages after it.
        assert_eq!(
            system_parameter(Some(&cached), &[system("More.")]),
            Some(json!([
                {"type": "text", "text": "Tools: grep.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "More."}
            ]))
        );
    }
}
