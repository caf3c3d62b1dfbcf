//! Selective compaction (seed 002, the agent SDK's `SelectiveCompactionPolicy`): before any LLM
//! call, rules per item type remove or clear the least valuable items, in the seed's priority
//! order, stopping as soon as the conversation is below the threshold. Only when the rules are
//! not enough does the pipeline fall back to a full summary of the original list (the seed's
//! `_fallback_full_summary`).
//!
//! The seed's default table, and how each rule is adapted so that it never breaks a tool pair:
//!
//! | item type | rule | here |
//! |---|---|---|
//! | `TOOL_RESULT` | TRUNCATE keep 3 | the content of all but the 3 most recent tool results is replaced by a placeholder that keeps `tool_use_id` / `tool_call_id` (removing the message would orphan its call: a 400 from both APIs) |
//! | `SKILL_PROMPT`, `SKILL_METADATA` | DROP | messages marked as skills are removed (see [`is_skill_message`]); never one that carries tool calls or results |
//! | `ASSISTANT_MESSAGE`, `USER_MESSAGE` | TRUNCATE keep 5 | whole turns (a user prompt and the assistant/tool messages after it) are removed, oldest first, keeping the fewest recent turns that hold at least 5 assistant messages and 5 user prompts; the last turn always stays |
//! | `SYSTEM_PROMPT`, `SUBAGENT_STRATEGY`, `COMPACTION_SUMMARY` | NONE | system messages and earlier summaries / notices are never touched |
//!
//! The seed removes assistant and user items independently; removing only the assistant half of
//! a turn would leave tool results without their calls, so the two rules act together on whole
//! turns and a turn goes only when *both* would remove everything in it.

use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::{Map, Value};

use crate::model::added;
use crate::model::message::Role;
use crate::model::message::{
    carries_tool_results, role_of, tool_calls, tool_result_text, tool_results,
};
use crate::model::tokens::{self, Encoding};
use crate::plan::partition::is_user_turn;
use crate::plan::strategy::{self, head_len, is_cleared, RegionItem, Removal, Rewrite, Strategy};

/// What a rule does with the items of its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Never compacted.
    None,
    /// All removed (tool results: all cleared).
    Drop,
    /// All but the `keep_recent` most recent removed (tool results: cleared).
    Truncate { keep_recent: usize },
}

impl Rule {
    /// How many recent items stay, or `None` when the rule never compacts.
    fn keep(self) -> Option<usize> {
        match self {
            Rule::None => None,
            Rule::Drop => Some(0),
            Rule::Truncate { keep_recent } => Some(keep_recent),
        }
    }
}

/// The rules of a selective compaction (`options.selectiveRules`). By default the seed's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectiveRules {
    /// Tool results. Default: truncate, keep 3.
    pub tool_results: Rule,
    /// Skill prompt and skill metadata messages. Default: drop.
    pub skills: Rule,
    /// Assistant messages (acting on whole turns). Default: truncate, keep 5.
    pub assistant_messages: Rule,
    /// User prompts (acting on whole turns). Default: truncate, keep 5.
    pub user_messages: Rule,
}

impl Default for SelectiveRules {
    fn default() -> Self {
        SelectiveRules {
            tool_results: Rule::Truncate { keep_recent: 3 },
            skills: Rule::Drop,
            assistant_messages: Rule::Truncate { keep_recent: 5 },
            user_messages: Rule::Truncate { keep_recent: 5 },
        }
    }
}

impl SelectiveRules {
    /// The keys of `options.selectiveRules`.
    pub const KEYS: &'static [&'static str] =
        &["toolResults", "skills", "assistantMessages", "userMessages"];
}

/// The values that mark a skill message.
const SKILL_TYPES: &[&str] = &["skill_prompt", "skill_metadata", "skill"];
/// The fields that may hold the marker, on the message or in its `metadata` object.
const SKILL_FIELDS: &[&str] = &["itemType", "item_type", "type", "kind"];

/// A skill prompt or skill metadata message: a message whose `itemType`, `item_type`, `type`
/// or `kind` field — on the message itself or in its `metadata` object — is `skill_prompt`,
/// `skill_metadata` or `skill` (any case; the seed's `ItemType.SKILL_PROMPT` spelt as data).
/// Messages are plain API messages, so the caller marks them; the field is sent to no API by
/// this library and ignored by the token count.
pub fn is_skill_message(message: &Value) -> bool {
    let Some(object) = message.as_object() else {
        return false;
    };
    let marked = |holder: &Map<String, Value>| {
        SKILL_FIELDS.iter().any(|field| {
            holder
                .get(*field)
                .and_then(Value::as_str)
                .is_some_and(|v| SKILL_TYPES.contains(&v.to_ascii_lowercase().as_str()))
        })
    };
    marked(object)
        || object
            .get("metadata")
            .and_then(Value::as_object)
            .is_some_and(marked)
}

/// Never touched: system messages and earlier summaries or notices (rule NONE).
fn is_pinned(message: &Value) -> bool {
    role_of(message).is_some_and(Role::is_system) || added::is_summary_message(message)
}

/// A user prompt that starts a turn (not a tool result, a summary or a skill message).
fn starts_turn(message: &Value) -> bool {
    is_user_turn(message) && !added::is_summary_message(message) && !is_skill_message(message)
}

/// The turns after the head: each starts at a user prompt; messages before the first prompt
/// form a turn of their own.
fn turns(messages: &[Value], head: usize) -> Vec<Range<usize>> {
    let mut starts: Vec<usize> = (head..messages.len())
        .filter(|&i| starts_turn(&messages[i]))
        .collect();
    if head < messages.len() && starts.first() != Some(&head) {
        starts.insert(0, head);
    }
    let mut out = Vec::with_capacity(starts.len());
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(messages.len());
        out.push(start..end);
    }
    out
}

/// The archive name used while planning (placeholders are measured with a name of the real
/// one's length; the real name is only known once the archive is written).
const PLANNING_ARCHIVE_NAME: &str = "compact-00000000T000000Z-1.json";

/// Where the plan stands after each rule.
struct State<'a> {
    messages: &'a [Value],
    encoding: Encoding,
    counts: Vec<usize>,
    bytes: Vec<usize>,
    removed: Vec<bool>,
    cleared: BTreeMap<usize, Vec<usize>>,
    steps: Vec<&'static str>,
    skills_dropped: usize,
    turns_removed: usize,
}

impl State<'_> {
    /// (tokens, messages, tool output bytes) of the list as planned, the notice included.
    fn totals(&self, notice_tokens: usize) -> (usize, usize, usize) {
        let mut tokens = notice_tokens;
        let mut count = 1;
        let mut bytes = 0;
        for i in 0..self.messages.len() {
            if !self.removed[i] {
                tokens += self.counts[i];
                count += 1;
                bytes += self.bytes[i];
            }
        }
        (tokens, count, bytes)
    }

    fn clear(&mut self, index: usize, position: usize) {
        let positions = self.cleared.entry(index).or_default();
        positions.push(position);
        let message = strategy::clear_results(
            &self.messages[index],
            positions,
            Some(PLANNING_ARCHIVE_NAME),
        );
        self.counts[index] = tokens::count_message(self.encoding, &message);
        self.bytes[index] = crate::model::trigger::tool_output_bytes(&message);
    }

    fn remove(&mut self, index: usize) {
        self.removed[index] = true;
        self.cleared.remove(&index);
    }

    fn changed(&self) -> bool {
        !self.steps.is_empty()
    }
}

/// Plans a selective compaction. `still_over(tokens, messages, tool_output_bytes)` says whether
/// a list of that size still triggers compaction; the rules run in the seed's order until it
/// says no. `notice_tokens` is what the notice will cost.
///
/// Returns the rewrite when the rules changed something and brought the list below every
/// trigger, `None` when the pipeline must fall back to a full summary.
pub fn plan(
    messages: &[Value],
    counts: &[usize],
    rules: &SelectiveRules,
    encoding: Encoding,
    notice_tokens: usize,
    mut still_over: impl FnMut(usize, usize, usize) -> bool,
) -> Option<Rewrite> {
    let head = head_len(messages);
    let mut state = State {
        messages,
        encoding,
        counts: counts.to_vec(),
        bytes: messages
            .iter()
            .map(crate::model::trigger::tool_output_bytes)
            .collect(),
        removed: vec![false; messages.len()],
        cleared: BTreeMap::new(),
        steps: Vec::new(),
        skills_dropped: 0,
        turns_removed: 0,
    };
    let over = |state: &State, still_over: &mut dyn FnMut(usize, usize, usize) -> bool| {
        let (tokens, count, bytes) = state.totals(notice_tokens);
        still_over(tokens, count, bytes)
    };

    let steps: [fn(&mut State, &SelectiveRules, usize) -> bool; 3] =
        [clear_tool_results, drop_skills, remove_turns];
    let mut below = false;
    for step in steps {
        if step(&mut state, rules, head) && !over(&state, &mut still_over) {
            below = true;
            break;
        }
    }
    if !below || !state.changed() {
        return None;
    }
    Some(rewrite_of(&state, head))
}

/// TOOL_RESULT: clear all but the most recent `keep` results (per result: parallel results in
/// one message are counted one by one). Placeholders already there are not counted.
fn clear_tool_results(state: &mut State, rules: &SelectiveRules, head: usize) -> bool {
    let Some(keep) = rules.tool_results.keep() else {
        return false;
    };
    let mut candidates = Vec::new();
    for i in head..state.messages.len() {
        if state.removed[i] || is_pinned(&state.messages[i]) {
            continue;
        }
        for (position, result) in tool_results(&state.messages[i]).iter().enumerate() {
            if !is_cleared(result.content) && !tool_result_text(result.content).is_empty() {
                candidates.push((i, position));
            }
        }
    }
    let clear = candidates.len().saturating_sub(keep);
    if clear == 0 {
        return false;
    }
    for &(index, position) in &candidates[..clear] {
        state.clear(index, position);
    }
    state.steps.push("toolResults");
    true
}

/// SKILL_PROMPT / SKILL_METADATA: remove skill messages (all, or all but the most recent).
fn drop_skills(state: &mut State, rules: &SelectiveRules, head: usize) -> bool {
    let Some(keep) = rules.skills.keep() else {
        return false;
    };
    let candidates: Vec<usize> = (head..state.messages.len())
        .filter(|&i| {
            let m = &state.messages[i];
            !state.removed[i]
                && is_skill_message(m)
                && !added::is_summary_message(m)
                && !carries_tool_results(m)
                && tool_calls(m).is_empty()
        })
        .collect();
    let drop = candidates.len().saturating_sub(keep);
    if drop == 0 {
        return false;
    }
    for &index in &candidates[..drop] {
        state.remove(index);
    }
    state.skills_dropped += drop;
    state.steps.push("skills");
    true
}

/// ASSISTANT_MESSAGE + USER_MESSAGE: remove the oldest whole turns, keeping the fewest recent
/// turns that hold `keep` assistant messages and `keep` user prompts (and always the last turn).
/// System messages and summaries inside removed turns stay.
fn remove_turns(state: &mut State, rules: &SelectiveRules, head: usize) -> bool {
    let (Some(keep_assistant), Some(keep_user)) =
        (rules.assistant_messages.keep(), rules.user_messages.keep())
    else {
        return false;
    };
    let turns = turns(state.messages, head);
    if turns.len() <= 1 {
        return false;
    }
    let (mut assistants, mut users) = (0, 0);
    let mut keep_from = 0;
    for t in (0..turns.len()).rev() {
        for i in turns[t].clone() {
            if state.removed[i] {
                continue;
            }
            let m = &state.messages[i];
            if role_of(m) == Some(Role::Assistant) {
                assistants += 1;
            } else if starts_turn(m) {
                users += 1;
            }
        }
        if assistants >= keep_assistant && users >= keep_user {
            keep_from = t;
            break;
        }
    }
    let mut removed_any = false;
    for turn in &turns[..keep_from] {
        let mut removed_here = false;
        for i in turn.clone() {
            if !state.removed[i] && !is_pinned(&state.messages[i]) {
                state.remove(i);
                removed_here = true;
            }
        }
        if removed_here {
            removed_any = true;
            if starts_turn(&state.messages[turn.start]) {
                state.turns_removed += 1;
            }
        }
    }
    if removed_any {
        state.steps.push("turns");
    }
    removed_any
}

fn rewrite_of(state: &State, head: usize) -> Rewrite {
    let messages = state.messages;
    let affected: Vec<usize> = (0..messages.len())
        .filter(|&i| state.removed[i] || state.cleared.contains_key(&i))
        .collect();
    let first = affected[0];
    let last = *affected.last().unwrap_or(&first);
    // Start at the beginning of the first affected message's turn: the notice goes there, in
    // front of a user prompt (or right after the head), never between a call and its result.
    let mut start = turns(messages, head)
        .into_iter()
        .find(|t| t.contains(&first))
        .map_or(first, |t| t.start);
    // An earlier notice whose condensed messages reach into the region goes into it too, so
    // that a restore replaces it together with them.
    loop {
        let reaching = (head..start).find(|&p| {
            let following = added::notice_following(&messages[p]);
            following > 0 && p + following >= start
        });
        match reaching {
            Some(p) => start = p,
            None => break,
        }
    }
    let region = start..last + 1;
    let items: Vec<RegionItem> = region
        .clone()
        .filter(|&i| !state.removed[i])
        .map(|i| match state.cleared.get(&i) {
            Some(positions) => RegionItem::Clear {
                index: i,
                results: positions.clone(),
            },
            None => RegionItem::Keep(i),
        })
        .collect();
    let removal = Removal {
        messages_removed: state.removed.iter().filter(|r| **r).count(),
        tool_results_cleared: state.cleared.values().map(Vec::len).sum(),
        skill_messages_dropped: state.skills_dropped,
        turns_removed: state.turns_removed,
        steps: state.steps.clone(),
    };
    Rewrite {
        strategy: Strategy::Selective,
        region,
        items,
        removal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool_turn(i: usize, output: &str) -> Vec<Value> {
        vec![
            json!({"role": "user", "content": format!("request {i}")}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "reading"}, {"type": "tool_use", "id": format!("t{i}"), "name": "read_file", "input": {"path": format!("src/{i}.rs")}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": output}]}),
            json!({"role": "assistant", "content": format!("done {i}")}),
        ]
    }

    fn conversation(turns: usize, output: &str) -> Vec<Value> {
        let mut m = vec![json!({"role": "system", "content": "You are an agent."})];
        for i in 0..turns {
            m.extend(tool_turn(i, output));
        }
        m
    }

    fn counts(m: &[Value]) -> Vec<usize> {
        tokens::count_each(Encoding::O200kBase, m)
    }

    #[test]
    fn rules_parse_with_per_type_defaults_and_reject_typos() {
        let rules = SelectiveRules::from_json(&json!({
            "toolResults": {"strategy": "truncate", "keepRecent": 1},
            "skills": {"strategy": "none"},
            "userMessages": {"strategy": "truncate"}
        }))
        .unwrap();
        assert_eq!(rules.tool_results, Rule::Truncate { keep_recent: 1 });
        assert_eq!(rules.skills, Rule::None);
        assert_eq!(rules.user_messages, Rule::Truncate { keep_recent: 5 });
        assert_eq!(rules.assistant_messages, Rule::Truncate { keep_recent: 5 });
        let e =
            SelectiveRules::from_json(&json!({"toolResult": {"strategy": "drop"}})).unwrap_err();
        assert!(e.to_string().contains("unknown rule"), "{e}");
        let e =
            SelectiveRules::from_json(&json!({"skills": {"strategy": "summarize"}})).unwrap_err();
        assert!(e.to_string().contains("unknown strategy"), "{e}");
    }

    #[test]
    fn skills_are_recognised_by_a_marker_field() {
        assert!(is_skill_message(
            &json!({"role": "user", "content": "x", "metadata": {"type": "skill_prompt"}})
        ));
        assert!(is_skill_message(
            &json!({"role": "system", "content": "x", "itemType": "SKILL_METADATA"})
        ));
        assert!(!is_skill_message(
            &json!({"role": "user", "content": "skill_prompt"})
        ));
    }

    #[test]
    fn clearing_old_tool_results_is_enough_when_they_are_the_bulk() {
        let big = "line of output\n".repeat(400);
        let m = conversation(8, &big);
        let c = counts(&m);
        let total: usize = c.iter().sum();
        let plan = plan(
            &m,
            &c,
            &SelectiveRules::default(),
            Encoding::O200kBase,
            80,
            |t, _, _| t >= total / 2,
        )
        .unwrap();
        assert_eq!(plan.removal.steps, vec!["toolResults"]);
        assert_eq!(plan.removal.tool_results_cleared, 5);
        assert_eq!(plan.removal.messages_removed, 0);
        // The region starts at the first turn and ends at the last cleared result.
        assert_eq!(plan.region, 1..1 + 4 * 4 + 3);
        assert!(plan.items.iter().all(|item| match item {
            RegionItem::Clear { index, .. } => carries_tool_results(&m[*index]),
            RegionItem::Keep(_) => true,
        }));
    }

    #[test]
    fn whole_turns_go_when_clearing_is_not_enough_and_skills_are_dropped() {
        let mut m = conversation(12, "short output");
        m.insert(5, json!({"role": "user", "content": "SKILL: how to write tests", "metadata": {"type": "skill_prompt"}}));
        let c = counts(&m);
        let plan = plan(
            &m,
            &c,
            &SelectiveRules::default(),
            Encoding::O200kBase,
            80,
            |_, n, _| n > 30,
        )
        .unwrap();
        assert_eq!(plan.removal.steps, vec!["toolResults", "skills", "turns"]);
        assert_eq!(plan.removal.skill_messages_dropped, 1);
        // 5 assistant messages need 3 turns (2 each); 5 prompts need 5 turns: 7 turns go.
        assert_eq!(plan.removal.turns_removed, 7);
        assert_eq!(plan.removal.messages_removed, 7 * 4 + 1);
        assert_eq!(plan.region.start, 1);
    }

    #[test]
    fn nothing_changes_or_not_enough_means_fallback() {
        let m = conversation(2, "x");
        let c = counts(&m);
        assert!(plan(
            &m,
            &c,
            &SelectiveRules::default(),
            Encoding::O200kBase,
            80,
            |_, _, _| true
        )
        .is_none());
        let none = SelectiveRules {
            tool_results: Rule::None,
            skills: Rule::None,
            assistant_messages: Rule::None,
            user_messages: Rule::None,
        };
        assert!(plan(&m, &c, &none, Encoding::O200kBase, 80, |_, _, _| false).is_none());
    }
}
