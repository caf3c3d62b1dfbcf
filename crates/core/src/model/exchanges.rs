//! Tool calls paired with their results. Several readers walk a conversation's tool calls and
//! need, at each result, the call it answers (the ledger, the latest failure, the task list, the
//! extractive summary); the pairing is written once here so that all of them agree on which call
//! a result answers.
//!
//! The rule: a result answers the latest call with its id that no result has answered yet, and
//! answers it once. Ids are the caller's (or the model's) and are not always unique over a long
//! session — some agents count them from 1 again after a restart — so the latest open call is
//! the one the result was written for, and a second result with the same id does not answer a
//! call twice. Calls are read before results within one message (an OpenAI Chat assistant
//! message holds calls only, a tool message results only; an Anthropic user message may hold
//! results, and no message answers its own calls before making them).

use serde_json::Value;

use crate::model::message::{tool_calls, tool_results, ToolCall, ToolResult};

/// The calls read so far that no result has answered, each with what its reader kept for it.
#[derive(Debug)]
pub struct Exchanges<T> {
    open: Vec<(String, T)>,
}

impl<T> Default for Exchanges<T> {
    fn default() -> Self {
        Exchanges { open: Vec::new() }
    }
}

impl<T> Exchanges<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one message: each of its tool calls goes to `on_call`, which returns what to keep
    /// until the call's result (`None`: the reader does not follow this call); then each of its
    /// tool results comes back with what was kept for the call it answers (`None` when it
    /// answers no call the reader followed).
    pub fn read<'m>(
        &mut self,
        message: &'m Value,
        mut on_call: impl FnMut(ToolCall<'m>) -> Option<T>,
    ) -> Vec<(ToolResult<'m>, Option<T>)> {
        for call in tool_calls(message) {
            let id = call.id.to_string();
            if let Some(kept) = on_call(call) {
                self.open.push((id, kept));
            }
        }
        tool_results(message)
            .into_iter()
            .map(|result| {
                let kept = self.answer(result.tool_use_id);
                (result, kept)
            })
            .collect()
    }

    /// What was kept for the call a result with this id answers (see the module docs), taken.
    fn answer(&mut self, id: &str) -> Option<T> {
        let at = self.open.iter().rposition(|(open, _)| open == id)?;
        Some(self.open.remove(at).1)
    }

    /// The calls no result answered, in the order they were made (the last ones of a region are
    /// often answered in the messages after it).
    pub fn into_unanswered(self) -> impl Iterator<Item = T> {
        self.open.into_iter().map(|(_, kept)| kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str) -> Value {
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": {}}]})
    }

    fn result(id: &str) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]})
    }

    fn answered(messages: &[Value]) -> (Vec<Option<String>>, Vec<String>) {
        let mut exchanges = Exchanges::new();
        let mut out = Vec::new();
        for message in messages {
            for (_, kept) in exchanges.read(message, |call| Some(call.name.to_string())) {
                out.push(kept);
            }
        }
        (out, exchanges.into_unanswered().collect())
    }

    #[test]
    fn a_result_answers_the_latest_open_call_with_its_id_once() {
        let (answers, open) = answered(&[
            call("1", "a"),
            call("2", "b"),
            call("1", "c"),
            result("1"),
            result("1"),
            result("1"),
            result("9"),
        ]);
        let name = |s: &str| Some(s.to_string());
        assert_eq!(answers, [name("c"), name("a"), None, None]);
        assert_eq!(open, ["b"]);
    }

    #[test]
    fn calls_come_before_results_and_openai_shapes_pair_too() {
        let messages = [
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "y", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "y", "content": "done"}),
        ];
        let (answers, open) = answered(&messages);
        assert_eq!(answers, [Some("read".to_string())]);
        assert_eq!(open, ["bash"]);
    }

    #[test]
    fn calls_the_reader_does_not_follow_answer_nothing() {
        let mut exchanges: Exchanges<()> = Exchanges::new();
        exchanges.read(&call("1", "a"), |_| None);
        let answer = result("1");
        let results = exchanges.read(&answer, |_| Some(()));
        assert_eq!(results.len(), 1);
        assert!(results[0].1.is_none());
    }
}
