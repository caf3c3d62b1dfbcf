//! The thinking policy for kept turns (SPEC §3): what happens to the `thinking` and
//! `redacted_thinking` blocks of the assistant messages a compaction keeps after its summary.
//!
//! Why it is needed: on models with *preserved thinking* every thinking block is bound to the
//! exact prefix before it (`system`, `tools` and the earlier messages). A summary we write
//! ourselves changes that prefix, so the kept turns' thinking "fails the check" and the request
//! gets a 400 ("Invalid `signature` in `thinking` block. The block is bound to a different
//! conversation."), or the block is dropped when the caller sends
//! `thinking.block_binding.prefix_mismatch_behavior: "drop_block"`. Anthropic's docs name two
//! fixes for keep-tail compaction: strip `thinking` / `redacted_thinking` from the kept assistant
//! turns, or keep them and have the caller send `drop_block`
//! (platform.claude.com/docs/en/build-with-claude/preserved-thinking).
//!
//! Older models run no prefix check, but in an unfinished tool-use loop the last assistant
//! message must still start with its thinking in manual ("enabled") mode, so stripping
//! everything breaks them; thinking of earlier turns they strip themselves
//! (platform.claude.com/docs/en/build-with-claude/thinking).
//!
//! Blocks are never edited: a kept turn keeps a thinking block byte for byte, or the policy
//! removes the whole block and reports it. Removing *all* of them is valid on preserved-thinking
//! models ("Remove thinking blocks from the start of the history, from the end, or all of them —
//! Valid"); removing some in the middle is not, which is why the policy keeps all or none.

use serde::Serialize;
use serde_json::Value;

use crate::model::message::{block_type, blocks, role_of, Role};

/// The `thinking` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingPolicy {
    /// Decide from the agent model (see [`rule_for`]). The default.
    #[default]
    Auto,
    /// Kept turns stay byte-identical.
    Keep,
    /// Remove `thinking` and `redacted_thinking` from every kept assistant turn.
    Strip,
}

impl ThinkingPolicy {
    pub fn parse(name: &str) -> Option<ThinkingPolicy> {
        match name {
            "auto" => Some(ThinkingPolicy::Auto),
            "keep" => Some(ThinkingPolicy::Keep),
            "strip" => Some(ThinkingPolicy::Strip),
            _ => None,
        }
    }
}

/// How a model treats thinking sent back to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRule {
    /// Preserved thinking: every block is checked against its prefix, which our summary
    /// changes. Kept thinking fails (400, or dropped with `drop_block`).
    PrefixBound,
    /// No prefix check, and manual ("enabled") thinking: the last assistant message of an
    /// unfinished tool loop must keep its thinking; earlier turns' thinking the API strips.
    LastToolLoopRequired,
    /// No prefix check, adaptive thinking only: kept thinking is accepted as is.
    Unbound,
    /// Not a Claude model: thinking blocks are not its format; nothing to decide.
    NotClaude,
}

/// The documented models, most specific first (`claude-opus-4-6` before `claude-opus-4`).
/// Sources: the supportedModels of platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks
/// (prefix-bound), each model's "What's new" page, and the thinking docs' table of which models
/// keep prior turns' thinking.
const MODEL_RULES: &[(&str, ModelRule)] = &[
    // Preserved thinking: the prefix check (on accounts created from 2026-08-31, and on every
    // account for the 5.2 models and all later ones).
    ("claude-fable-5-2", ModelRule::PrefixBound),
    ("claude-mythos-5-2", ModelRule::PrefixBound),
    ("claude-fable-5-1", ModelRule::PrefixBound),
    ("claude-mythos-5-1", ModelRule::PrefixBound),
    ("claude-opus-5-5", ModelRule::PrefixBound),
    ("claude-sonnet-5-5", ModelRule::PrefixBound),
    ("claude-haiku-5-5", ModelRule::PrefixBound),
    // Adaptive thinking only, no prefix check.
    ("claude-fable-5", ModelRule::Unbound),
    ("claude-mythos-5", ModelRule::Unbound),
    ("claude-mythos-preview", ModelRule::Unbound),
    ("claude-opus-5", ModelRule::Unbound),
    ("claude-sonnet-5", ModelRule::Unbound),
    ("claude-opus-4-8", ModelRule::Unbound),
    ("claude-opus-4-7", ModelRule::Unbound),
    // Manual ("enabled") thinking: the last tool-loop turn's thinking is required.
    ("claude-opus-4-6", ModelRule::LastToolLoopRequired),
    ("claude-sonnet-4-6", ModelRule::LastToolLoopRequired),
    ("claude-opus-4-5", ModelRule::LastToolLoopRequired),
    ("claude-haiku-4-5", ModelRule::LastToolLoopRequired),
    ("claude-sonnet-4-5", ModelRule::LastToolLoopRequired),
    ("claude-opus-4-1", ModelRule::LastToolLoopRequired),
    ("claude-opus-4", ModelRule::LastToolLoopRequired),
    ("claude-sonnet-4", ModelRule::LastToolLoopRequired),
    ("claude-3-7-sonnet", ModelRule::LastToolLoopRequired),
];

/// The rule for a model id (`claude-opus-4-5-20251101`, `anthropic/claude-sonnet-4.5`,
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, …). A Claude model not in the table is taken
/// as prefix-bound: the docs say later models enforce the prefix check on every account.
pub fn rule_for(model: &str) -> ModelRule {
    let lower = model.to_ascii_lowercase().replace('.', "-");
    let Some(start) = lower.find("claude") else {
        return ModelRule::NotClaude;
    };
    let name = &lower[start..];
    MODEL_RULES
        .iter()
        .find(|(prefix, _)| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| !continues_version(rest))
        })
        .map_or(ModelRule::PrefixBound, |(_, rule)| *rule)
}

/// Does `rest` (what follows a table entry in a model id) continue its version number?
/// `-5`, `-5-…` do (`claude-opus-4` is not `claude-opus-4-5`); a date (`-20250514`), a tag
/// (`-latest`, `-v1:0`) or nothing do not.
fn continues_version(rest: &str) -> bool {
    match rest.strip_prefix('-') {
        Some(after) => {
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && digits < 8
        }
        None => rest.starts_with(|c: char| c.is_ascii_alphanumeric()),
    }
}

/// What the policy does to the kept turns of one compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Keep,
    /// Strip every kept assistant turn's thinking.
    Strip,
}

/// The decision for `policy` with the agent's model (`None`: not named).
///
/// `auto` with no model named strips every kept turn's thinking. That is what the APIs accept
/// for the widest set of models: every preserved-thinking model (which includes every model
/// released after them, as the docs announce) and every adaptive-thinking model accepts a turn
/// without its thinking, while a kept thinking block fails on all preserved-thinking models. It
/// fails only on the older manual-thinking models when the conversation ends in an unfinished
/// tool loop; naming `agentModel` then keeps that turn's thinking.
pub fn decide(policy: ThinkingPolicy, agent_model: Option<&str>) -> Decision {
    match policy {
        ThinkingPolicy::Keep => Decision::Keep,
        ThinkingPolicy::Strip => Decision::Strip,
        ThinkingPolicy::Auto => match agent_model.map(rule_for) {
            None | Some(ModelRule::PrefixBound) => Decision::Strip,
            // Older turns' thinking is stripped by the API itself and the last tool-loop turn's
            // is required: kept turns stay byte-identical.
            Some(ModelRule::LastToolLoopRequired | ModelRule::Unbound | ModelRule::NotClaude) => {
                Decision::Keep
            }
        },
    }
}

/// Is this a thinking block the policy removes?
pub fn is_thinking(block: &Value) -> bool {
    matches!(block_type(block), "thinking" | "redacted_thinking")
}

/// One kept message the policy changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Stripped {
    /// Its index in the input.
    pub index: usize,
    /// The message without its thinking, or `None` when it held nothing else (it is left out:
    /// an empty assistant message is invalid, and the APIs merge the neighbouring turns).
    pub message: Option<Value>,
    /// The positions of the removed blocks in the original `content`.
    pub removed: Vec<usize>,
}

/// Applies `decision` to the kept messages `kept` (input indices, in order) of `messages`.
pub fn strip_kept(messages: &[Value], kept: &[usize], decision: Decision) -> Vec<Stripped> {
    if decision == Decision::Keep {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &index in kept {
        let message = &messages[index];
        if role_of(message) != Some(Role::Assistant) {
            continue;
        }
        let content = blocks(message);
        let removed: Vec<usize> = content
            .iter()
            .enumerate()
            .filter(|(_, block)| is_thinking(block))
            .map(|(i, _)| i)
            .collect();
        if removed.is_empty() {
            continue;
        }
        let rest: Vec<Value> = content
            .iter()
            .filter(|block| !is_thinking(block))
            .cloned()
            .collect();
        let message = if rest.is_empty() {
            None
        } else {
            let mut copy = message.clone();
            copy["content"] = Value::Array(rest);
            Some(copy)
        };
        out.push(Stripped {
            index,
            message,
            removed,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn models_map_to_their_documented_rule() {
        for (model, rule) in [
            ("claude-fable-5-1", ModelRule::PrefixBound),
            ("claude-opus-5-5-20261001", ModelRule::PrefixBound),
            ("anthropic/claude-sonnet-5.5", ModelRule::PrefixBound),
            (
                "us.anthropic.claude-haiku-5-5-20261101-v1:0",
                ModelRule::PrefixBound,
            ),
            ("claude-opus-6", ModelRule::PrefixBound),
            ("claude-fable-5", ModelRule::Unbound),
            ("claude-opus-5", ModelRule::Unbound),
            ("claude-opus-4-8", ModelRule::Unbound),
            ("claude-opus-4-6", ModelRule::LastToolLoopRequired),
            (
                "claude-sonnet-4-5-20250929",
                ModelRule::LastToolLoopRequired,
            ),
            ("claude-sonnet-4-20250514", ModelRule::LastToolLoopRequired),
            ("claude-opus-4", ModelRule::LastToolLoopRequired),
            ("claude-3-7-sonnet-latest", ModelRule::LastToolLoopRequired),
            ("gpt-4o", ModelRule::NotClaude),
            ("deepseek-reasoner", ModelRule::NotClaude),
        ] {
            assert_eq!(rule_for(model), rule, "{model}");
        }
    }

    #[test]
    fn decisions() {
        use ThinkingPolicy::*;
        let strip_all = Decision::Strip;
        assert_eq!(decide(Keep, Some("claude-fable-5-1")), Decision::Keep);
        assert_eq!(decide(Strip, Some("claude-sonnet-4-5")), strip_all);
        assert_eq!(decide(Auto, None), strip_all);
        assert_eq!(decide(Auto, Some("claude-opus-5-5")), strip_all);
        assert_eq!(decide(Auto, Some("claude-sonnet-4-5")), Decision::Keep);
        assert_eq!(decide(Auto, Some("claude-opus-4-7")), Decision::Keep);
        assert_eq!(decide(Auto, Some("gpt-5")), Decision::Keep);
    }

    #[test]
    fn stripping_removes_whole_blocks_and_leaves_out_thinking_only_turns() {
        let messages = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig1"},
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}
            ]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]}),
            json!({"role": "assistant", "content": [{"type": "redacted_thinking", "data": "abc"}]}),
            json!({"role": "user", "content": "next"}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "more", "signature": "sig2"},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {}}
            ]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}]}),
        ];
        let kept: Vec<usize> = (0..messages.len()).collect();
        let all = strip_kept(&messages, &kept, Decision::Strip);
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].index, 1);
        assert_eq!(all[0].removed, [0]);
        assert_eq!(
            all[0].message.as_ref().unwrap()["content"],
            json!([{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}])
        );
        assert_eq!(all[1].index, 3);
        assert!(all[1].message.is_none());
        assert_eq!(all[2].index, 5);
        assert!(strip_kept(&messages, &kept, Decision::Keep).is_empty());
    }
}
