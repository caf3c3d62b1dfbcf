//! Compaction strategies (SPEC §7; seeds 002 and 003).
//!
//! - [`Strategy::Summary`] (the default): the PRD's pipeline — head, an LLM summary of the
//!   middle, a recent tail.
//! - [`Strategy::Selective`] (the agent-SDK seed): rules per item type applied before any LLM
//!   call ([`crate::plan::selective`]); a full summary only when they are not enough.
//! - [`Strategy::KeepRecent`], [`Strategy::KeepSystemAndRecent`], [`Strategy::SlidingWindow`]
//!   (the type seed's "后续扩展" strategies): no LLM, older messages are removed.
//! - [`Strategy::Noop`]: the type seed's `NoOpCompressionStrategy`: nothing changes.
//!
//! Every strategy that removes or changes messages archives the originals it touched (the same
//! archive files as the summary strategy) and puts a *notice* in their place
//! ([`crate::model::added::notice_header`]): one short user message that tells the model earlier
//! messages are gone and names the archive, so `restoreMessages` (rollback) works after any
//! strategy. Every cut is pair-safe: what is kept never begins with a tool result whose call
//! was removed (both APIs answer that with a 400), and parallel tool calls move as one unit.

use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

use crate::model::message::{block_type, carries_tool_results, role_of, tool_result_text, Role};
use crate::model::piece::Piece;
/// The head every strategy keeps (except `keep-recent`, which keeps only the last messages).
pub use crate::plan::partition::head_len;
use crate::plan::partition::{extend_past_tool_results, is_user_turn};

/// Which strategy a compaction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// An LLM summary of the middle (PRD). The default.
    #[default]
    Summary,
    /// Rules per item type first; a full summary only when they are not enough (seed 002).
    Selective,
    /// Nothing is compacted (seed 003's `NoOpCompressionStrategy`).
    Noop,
    /// Keep the last `keepRecentMessages` messages, nothing else (seed 003).
    KeepRecent,
    /// Keep the leading system messages and the last `keepRecentMessages` messages (seed 003).
    KeepSystemAndRecent,
    /// Keep the leading system messages and the most recent messages within a token window
    /// (`compression.targetTokens`, by default the tail budget) (seed 003).
    SlidingWindow,
}

impl Strategy {
    /// The names accepted in `options.strategy`.
    pub const NAMES: &'static [&'static str] = &[
        "summary",
        "selective",
        "noop",
        "keep-recent",
        "keep-system-and-recent",
        "sliding-window",
    ];

    pub fn parse(name: &str) -> Option<Strategy> {
        Some(match name {
            "summary" => Strategy::Summary,
            "selective" => Strategy::Selective,
            "noop" => Strategy::Noop,
            "keep-recent" => Strategy::KeepRecent,
            "keep-system-and-recent" => Strategy::KeepSystemAndRecent,
            "sliding-window" => Strategy::SlidingWindow,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Summary => "summary",
            Strategy::Selective => "selective",
            Strategy::Noop => "noop",
            Strategy::KeepRecent => "keep-recent",
            Strategy::KeepSystemAndRecent => "keep-system-and-recent",
            Strategy::SlidingWindow => "sliding-window",
        }
    }
}

/// What a strategy without a summary removed or changed (`result.removed`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Removal {
    /// Messages removed entirely (whole turns, dropped skill messages, messages out of the window).
    pub messages_removed: usize,
    /// Tool results whose content was replaced by a placeholder (their messages stay).
    pub tool_results_cleared: usize,
    /// Skill prompt / metadata messages dropped (counted in `messages_removed` too).
    pub skill_messages_dropped: usize,
    /// User turns removed (a turn: a user prompt and the assistant/tool messages after it).
    pub turns_removed: usize,
    /// The selective rules that changed something, in the order they ran:
    /// `toolResults`, `skills`, `turns`. Empty for the other strategies.
    pub steps: Vec<&'static str>,
}

/// One message of the region a rewrite touches, as it will be in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionItem {
    /// Kept unchanged (index into the input).
    Keep(usize),
    /// Kept with some tool results cleared: the positions (in
    /// [`crate::model::message::tool_results`] order) of the results replaced by a placeholder.
    Clear { index: usize, results: Vec<usize> },
}

/// The plan of a strategy without a summary: the contiguous `region` of the input that is
/// archived and replaced by a notice followed by `items` (what stays of the region); the
/// messages before and after the region are kept as they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    pub strategy: Strategy,
    pub region: Range<usize>,
    pub items: Vec<RegionItem>,
    pub removal: Removal,
}

impl Rewrite {
    /// How the notice says what happened ("removed by the keep-recent strategy"). The notice's
    /// count is of the messages it stands for, which are not among the `items` after it (those
    /// are the rest of the region, kept or with tool results cleared).
    pub fn how(&self) -> String {
        match self.strategy {
            Strategy::Selective if self.items.is_empty() => {
                "removed by selective compaction".to_string()
            }
            Strategy::Selective => {
                "removed by selective compaction, the rest condensed".to_string()
            }
            other => format!("removed by the {} strategy", other.as_str()),
        }
    }

    /// The body of the notice: what was removed, in a sentence the model can act on.
    pub fn detail(&self) -> String {
        let r = &self.removal;
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("{n} {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        let mut parts = Vec::new();
        let conversation_removed = r.messages_removed - r.skill_messages_dropped;
        if conversation_removed > 0 {
            let mut part = format!("{} removed", plural(conversation_removed, "older message"));
            if r.turns_removed > 0 {
                part.push_str(&format!(" ({})", plural(r.turns_removed, "user turn")));
            }
            parts.push(part);
        }
        if r.skill_messages_dropped > 0 {
            parts.push(format!(
                "{} dropped",
                plural(r.skill_messages_dropped, "skill message")
            ));
        }
        if r.tool_results_cleared > 0 {
            parts.push(format!(
                "{} cleared (placeholders keep their ids)",
                plural(r.tool_results_cleared, "older tool result")
            ));
        }
        if parts.is_empty() {
            parts.push("nothing removed".to_string());
        }
        format!(
            "To keep the context within its limit, earlier messages were removed without a summary: {}. \
             If something from before matters, ask the user or restore the archive.",
            parts.join("; ")
        )
    }

    /// The output of the region's items: originals by index, cleared messages rendered with
    /// the archive's file name.
    pub fn render_items(&self, messages: &[Value], archive_name: Option<&str>) -> Vec<Piece> {
        self.items
            .iter()
            .map(|item| match item {
                RegionItem::Keep(index) => Piece::Original(*index),
                RegionItem::Clear { index, results } => {
                    Piece::New(clear_results(&messages[*index], results, archive_name))
                }
            })
            .collect()
    }
}

fn removal_of(messages: &[Value], region: &Range<usize>) -> Removal {
    Removal {
        messages_removed: region.len(),
        turns_removed: messages[region.clone()]
            .iter()
            .filter(|m| is_user_turn(m) && !crate::model::added::is_summary_message(m))
            .count(),
        ..Removal::default()
    }
}

/// `keep-recent` (`keep_system` false) and `keep-system-and-recent` (true): keep the last
/// `keep` messages (and the leading system messages). The cut moves back until the kept part
/// does not begin with tool results, so a result never loses its call (and parallel results
/// stay together). `None` when nothing would be removed.
pub fn plan_keep_recent(messages: &[Value], keep: usize, keep_system: bool) -> Option<Rewrite> {
    let lower = if keep_system { head_len(messages) } else { 0 };
    let cut = messages.len().saturating_sub(keep).max(lower);
    let cut = extend_past_tool_results(messages, lower, cut);
    if cut <= lower {
        return None;
    }
    let region = lower..cut;
    Some(Rewrite {
        strategy: if keep_system {
            Strategy::KeepSystemAndRecent
        } else {
            Strategy::KeepRecent
        },
        removal: removal_of(messages, &region),
        region,
        items: Vec::new(),
    })
}

/// `sliding-window`: keep the leading system messages and the most recent messages whose
/// tokens fit in `window` (strictly: unlike the PRD's tail, the message that would cross the
/// window is not kept). A window that would begin with tool results begins after them instead
/// (their call is outside the window). When not even the last message fits, the smallest
/// pair-safe suffix holding it is kept. `None` when nothing would be removed.
pub fn plan_sliding_window(messages: &[Value], counts: &[usize], window: usize) -> Option<Rewrite> {
    let head = head_len(messages);
    let len = messages.len();
    let mut start = len;
    let mut used = 0usize;
    while start > head && used + counts[start - 1] <= window {
        start -= 1;
        used += counts[start];
    }
    while start < len && carries_tool_results(&messages[start]) {
        start += 1;
    }
    if start == len && len > head {
        start = extend_past_tool_results(messages, head, len - 1);
    }
    if start <= head {
        return None;
    }
    let region = head..start;
    Some(Rewrite {
        strategy: Strategy::SlidingWindow,
        removal: removal_of(messages, &region),
        region,
        items: Vec::new(),
    })
}

/// Every placeholder of a cleared tool result starts with this.
pub const CLEARED_PREFIX: &str = "[context-compact] Tool result cleared";

/// Is this tool result content a placeholder already?
pub fn is_cleared(content: Option<&Value>) -> bool {
    content
        .and_then(Value::as_str)
        .is_some_and(|text| text.starts_with(CLEARED_PREFIX))
}

/// The placeholder text of a cleared tool result (`archive_name`: `None` when the archive
/// could not be written).
pub fn cleared_text(original_bytes: usize, archive_name: Option<&str>) -> String {
    match archive_name {
        Some(name) => format!(
            "{CLEARED_PREFIX} to save context ({original_bytes} bytes of output). \
             The original is in the archive {name}."
        ),
        None => format!(
            "{CLEARED_PREFIX} to save context ({original_bytes} bytes of output). \
             The original could not be archived."
        ),
    }
}

/// A copy of `message` whose tool results at `positions` carry a placeholder instead of
/// their content. Everything else is kept (`tool_use_id` / `tool_call_id`, `is_error`, other
/// blocks, unknown fields), so the pairing with the call is intact.
pub fn clear_results(message: &Value, positions: &[usize], archive_name: Option<&str>) -> Value {
    let mut out = message.clone();
    if role_of(message) == Some(Role::Tool) {
        if positions.contains(&0) {
            let bytes = tool_result_text(message.get("content")).len();
            out["content"] = Value::String(cleared_text(bytes, archive_name));
        }
        return out;
    }
    if let Some(Value::Array(blocks)) = out.get_mut("content") {
        let mut position = 0;
        for block in blocks.iter_mut() {
            if block_type(block) != "tool_result" {
                continue;
            }
            if positions.contains(&position) {
                let bytes = tool_result_text(block.get("content")).len();
                block["content"] = Value::String(cleared_text(bytes, archive_name));
            }
            position += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(value: Value) -> Vec<Value> {
        value.as_array().unwrap().clone()
    }

    #[test]
    fn names_round_trip() {
        for name in Strategy::NAMES {
            assert_eq!(Strategy::parse(name).unwrap().as_str(), *name);
        }
        assert_eq!(Strategy::parse("smart"), None);
    }

    #[test]
    fn keep_recent_never_starts_with_a_tool_result() {
        let m = list(json!([
            {"role": "system", "content": "s"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}}, {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "assistant", "content": "done"}
        ]));
        // The last 2 would start at the second tool message: the cut moves to the call.
        let plan = plan_keep_recent(&m, 2, false).unwrap();
        assert_eq!(plan.region, 0..2);
        assert_eq!(plan.removal.messages_removed, 2);
        assert_eq!(plan.removal.turns_removed, 1);
        let plan = plan_keep_recent(&m, 2, true).unwrap();
        assert_eq!(plan.region, 1..2);
        assert!(plan_keep_recent(&m, 20, true).is_none());
    }

    #[test]
    fn sliding_window_keeps_what_fits_and_starts_after_orphaned_results() {
        let m = list(json!([
            {"role": "system", "content": "s"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "next"}
        ]));
        let counts = [1, 10, 10, 10, 10, 10];
        // 30 tokens fit the last three, which would begin with the tool result: start after it.
        assert_eq!(plan_sliding_window(&m, &counts, 30).unwrap().region, 1..4);
        assert_eq!(plan_sliding_window(&m, &counts, 40).unwrap().region, 1..2);
        // Nothing fits: the last message alone.
        assert_eq!(plan_sliding_window(&m, &counts, 5).unwrap().region, 1..5);
        assert!(plan_sliding_window(&m, &counts, 1_000).is_none());
    }

    #[test]
    fn clearing_keeps_ids_and_other_fields() {
        let anthropic = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "long output", "is_error": false},
            {"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": "kept"}]}
        ], "extra": 1});
        let cleared = clear_results(&anthropic, &[0], Some("compact-20260101T000000Z-1.json"));
        assert_eq!(cleared["content"][0]["tool_use_id"], "a");
        assert_eq!(cleared["content"][0]["is_error"], false);
        assert!(is_cleared(cleared["content"][0].get("content")));
        assert!(cleared["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("11 bytes"));
        assert_eq!(cleared["content"][1], anthropic["content"][1]);
        assert_eq!(cleared["extra"], 1);
        let openai = json!({"role": "tool", "tool_call_id": "c", "content": "x"});
        let cleared = clear_results(&openai, &[0], None);
        assert_eq!(cleared["tool_call_id"], "c");
        assert!(is_cleared(cleared.get("content")));
    }
}
