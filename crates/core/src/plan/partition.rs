//! Head / middle / tail partition (PRD F-003, SPEC §4.1).

use serde_json::Value;

use crate::model::message::{carries_tool_results, role_of, Role};

/// Where a message list is cut. Head is `..head_len`, middle is `head_len..tail_start`, tail is
/// `tail_start..`. Indices refer to the list that was partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub head_len: usize,
    pub tail_start: usize,
}

impl Partition {
    pub fn middle_len(&self) -> usize {
        self.tail_start - self.head_len
    }

    pub fn middle(&self) -> std::ops::Range<usize> {
        self.head_len..self.tail_start
    }
}

/// Extra constraints on the tail beyond the PRD's token budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TailRules {
    /// Keep at least this many user turns (user messages that are not tool results) in the
    /// tail (the Pi Agent seed's "keep the last N rounds"). 0 = no constraint.
    pub keep_recent_turns: usize,
}

/// [`partition`] of a caller's list read in its format (counted in `encoding`), said of its
/// items: where the head ends and where the tail starts.
pub fn partition_input(
    input: &crate::formats::Input,
    encoding: crate::model::tokens::Encoding,
    tail_retention_tokens: usize,
    rules: TailRules,
) -> Partition {
    let messages = input.messages();
    let counts = crate::model::tokens::count_each(encoding, messages);
    let plan = partition(messages, &counts, tail_retention_tokens, rules);
    Partition {
        head_len: input.item_index(plan.head_len),
        tail_start: input.item_index(plan.tail_start),
    }
}

/// Splits `messages` (with their token `counts`) into head, middle and tail.
///
/// - Head: the leading run of `system` (or `developer`) messages.
/// - Tail: scanning backwards from the end, messages are added one by one until their tokens
///   reach `tail_retention_tokens`; the message that crosses the budget is kept whole. A budget
///   of 0 is reached before any message: the tail is empty (F-005's extreme case).
/// - A single message is the tail, whatever its role (PRD boundary condition).
/// - Then the tail is extended backwards while it begins with a tool result (an Anthropic
///   `tool_result` block or an OpenAI `role: 'tool'` message): a result cut off from the
///   assistant message holding its `tool_use`/`tool_calls` is rejected by both APIs with a 400
///   ("unexpected tool_use_id found in tool_result blocks" / "messages with role 'tool' must
///   be a response to a preceeding message with 'tool_calls'"), and moving the whole run of
///   results keeps parallel calls together.
pub fn partition(
    messages: &[Value],
    counts: &[usize],
    tail_retention_tokens: usize,
    rules: TailRules,
) -> Partition {
    debug_assert_eq!(messages.len(), counts.len());
    let len = messages.len();
    if len <= 1 {
        return Partition {
            head_len: 0,
            tail_start: 0,
        };
    }
    let head_len = head_len(messages);

    // The scan stops as soon as the tail holds the budget: a budget of 0 is held by the empty
    // tail (the PRD's extreme case, F-005: the result is the head and the summary message).
    let mut tail_start = len;
    let mut tail_tokens = 0usize;
    while tail_start > head_len && tail_tokens < tail_retention_tokens {
        tail_start -= 1;
        tail_tokens += counts[tail_start];
    }

    if rules.keep_recent_turns > 0 {
        let mut turns = messages[tail_start..]
            .iter()
            .filter(|m| is_user_turn(m))
            .count();
        while turns < rules.keep_recent_turns && tail_start > head_len {
            tail_start -= 1;
            if is_user_turn(&messages[tail_start]) {
                turns += 1;
            }
        }
    }

    Partition {
        head_len,
        tail_start: extend_past_tool_results(messages, head_len, tail_start),
    }
}

/// The head: the leading run of `system` (or `developer`) messages.
pub fn head_len(messages: &[Value]) -> usize {
    messages
        .iter()
        .take_while(|m| role_of(m).is_some_and(Role::is_system))
        .count()
}

/// Moves `tail_start` back while the tail would begin with tool results, so that they stay
/// with the assistant message that made the calls.
pub fn extend_past_tool_results(
    messages: &[Value],
    head_len: usize,
    mut tail_start: usize,
) -> usize {
    while tail_start > head_len
        && tail_start < messages.len()
        && carries_tool_results(&messages[tail_start])
    {
        tail_start -= 1;
    }
    tail_start
}

/// A user turn: a user message that is a prompt, not a carrier of tool results.
pub fn is_user_turn(message: &Value) -> bool {
    role_of(message) == Some(Role::User) && !carries_tool_results(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cut(messages: &Value, counts: &[usize], budget: usize) -> (usize, usize) {
        let p = partition(
            messages.as_array().unwrap(),
            counts,
            budget,
            TailRules::default(),
        );
        (p.head_len, p.tail_start)
    }

    #[test]
    fn head_is_the_leading_system_messages() {
        let m = json!([
            {"role": "system", "content": "a"}, {"role": "system", "content": "b"},
            {"role": "user", "content": "c"}, {"role": "system", "content": "d"},
            {"role": "user", "content": "e"}
        ]);
        assert_eq!(cut(&m, &[1, 1, 1, 1, 1], 1), (2, 4));
    }

    #[test]
    fn no_system_message_means_empty_head() {
        let m = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]);
        assert_eq!(cut(&m, &[10, 10, 10], 10), (0, 2));
    }

    #[test]
    fn one_message_is_the_tail() {
        assert_eq!(
            cut(&json!([{"role": "user", "content": "a"}]), &[50], 10),
            (0, 0)
        );
        assert_eq!(
            cut(&json!([{"role": "system", "content": "a"}]), &[50], 10),
            (0, 0)
        );
        assert_eq!(cut(&json!([]), &[], 10), (0, 0));
    }

    #[test]
    fn the_message_that_crosses_the_budget_stays_whole() {
        let m = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}, {"role": "assistant", "content": "d"}]);
        // 5 < 12, 5+10 = 15 ≥ 12: the second-to-last message is kept whole.
        assert_eq!(cut(&m, &[100, 100, 10, 5], 12), (0, 2));
        // Exactly reaching the budget stops the scan (≥).
        assert_eq!(cut(&m, &[100, 100, 7, 5], 12), (0, 2));
        assert_eq!(cut(&m, &[100, 100, 6, 5], 12), (0, 1));
    }

    #[test]
    fn a_budget_of_zero_leaves_the_tail_empty() {
        // F-005's extreme case: the result is the head and the summary message.
        let m = json!([
            {"role": "system", "content": "s"}, {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}
        ]);
        assert_eq!(cut(&m, &[1, 5, 5, 5], 0), (1, 4));
        // A budget of one token still keeps the last message whole.
        assert_eq!(cut(&m, &[1, 5, 5, 5], 1), (1, 3));
        // One message is the tail whatever the budget (F-003's boundary condition).
        assert_eq!(
            cut(&json!([{"role": "user", "content": "a"}]), &[5], 0),
            (0, 0)
        );
        // Rules beyond the budget still hold: the last user turn, when asked for.
        let rules = TailRules {
            keep_recent_turns: 1,
        };
        let p = partition(m.as_array().unwrap(), &[1, 5, 5, 5], 0, rules);
        assert_eq!((p.head_len, p.tail_start), (1, 3));
    }

    #[test]
    fn middle_is_empty_when_head_and_tail_cover_everything() {
        let m = json!([{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]);
        assert_eq!(cut(&m, &[1, 1, 1], 1000), (1, 1));
    }

    #[test]
    fn tail_never_starts_with_an_anthropic_tool_result() {
        let m = json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}}, {"type": "tool_use", "id": "b", "name": "y", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}, {"type": "tool_result", "tool_use_id": "b", "content": "2"}]},
            {"role": "assistant", "content": "done"}
        ]);
        assert_eq!(cut(&m, &[1, 1, 100, 1], 50), (0, 1));
    }

    #[test]
    fn tail_never_starts_with_openai_tool_messages_of_parallel_calls() {
        let m = json!([
            {"role": "system", "content": "s"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}}, {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "assistant", "content": "done"}
        ]);
        assert_eq!(cut(&m, &[1, 1, 1, 100, 100, 1], 150), (1, 2));
    }

    #[test]
    fn server_tool_results_do_not_move_the_cut() {
        // Call and result share the assistant message: a tail may start right at it or after it.
        let m = json!([
            {"role": "user", "content": "search"},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": "q"}},
                {"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
                {"type": "mcp_tool_use", "id": "m", "name": "echo", "server_name": "x", "input": {}},
                {"type": "mcp_tool_result", "tool_use_id": "m", "content": "e"},
                {"type": "text", "text": "found"}
            ]},
            {"role": "user", "content": "thanks"},
            {"role": "assistant", "content": "welcome"}
        ]);
        assert_eq!(cut(&m, &[1, 100, 1, 1], 100), (0, 1));
        assert_eq!(cut(&m, &[1, 100, 1, 1], 2), (0, 2));
    }

    #[test]
    fn keep_recent_turns_extends_the_tail() {
        let m = json!([
            {"role": "user", "content": "1"}, {"role": "assistant", "content": "a"},
            {"role": "user", "content": "2"}, {"role": "assistant", "content": "b"},
            {"role": "user", "content": "3"}, {"role": "assistant", "content": "c"}
        ]);
        let p = partition(
            m.as_array().unwrap(),
            &[1; 6],
            1,
            TailRules {
                keep_recent_turns: 2,
            },
        );
        assert_eq!(p.tail_start, 2);
    }
}
