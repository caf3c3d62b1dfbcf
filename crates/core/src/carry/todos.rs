//! The agent's task list, carried verbatim into the summary. Coding agents keep their plan in a
//! tool they call with the whole list each time — Claude Code `TodoWrite`, Codex `update_plan`,
//! Gemini CLI `write_todos`, opencode `todowrite` — so the latest call holds the plan the agent
//! was following. Summaries report such calls as "TodoWrite: 3 call(s)" at best; an agent
//! resuming after a compaction then no longer knows which steps remain. Like the ledger, this
//! section is built deterministically from the tool calls, whoever writes the summary, and
//! carried forward until a newer call replaces it.
//!
//! The tools' inputs, as their sources define them:
//! - Claude Code `TodoWrite`: `{todos: [{content, status, activeForm}]}`, status `pending` |
//!   `in_progress` | `completed` (@anthropic-ai/claude-agent-sdk `sdk-tools.d.ts`, TodoWriteInput);
//! - Codex `update_plan`: `{explanation?, plan: [{step, status}]}`, status `pending` |
//!   `in_progress` | `completed` (openai/codex `codex-rs/protocol/src/plan_tool.rs`);
//! - Gemini CLI `write_todos`: `{todos: [{description, status}]}`, status `pending` |
//!   `in_progress` | `completed` | `cancelled` (google-gemini/gemini-cli
//!   `packages/core/src/tools/write-todos.ts`);
//! - opencode `todowrite`: `{todos: [{content, status, priority}]}` (`id` in earlier releases;
//!   anomalyco/opencode `packages/opencode/src/tool/todo.ts`).
//!
//! A caller's own plan tool (named in the `planTools` option) is read the same way: the first
//! array among `todos`, `plan`, `items`, `tasks`, `steps`, `task_list` (OpenHands'
//! `task_tracker`: `{command: 'plan', task_list: [{title, notes, status}]}`); in each item, the text is the first
//! string among `content`, `step`, `description`, `title`, `task`, `text`, `name` (or the item
//! itself when it is a string), the status is `status` or `state` (or a boolean `done`,
//! `completed` or `checked`), and `priority` is shown beside it.
//!
//! Each item is written with its status, exactly as the agent last set them, open items first
//! (anything but completed, done or cancelled), each group in the agent's order. A list with
//! no open item left shrinks to one line. A call whose result is an error set nothing.

use serde_json::Value;

use crate::base::text::collapse_whitespace;
use crate::carry::ledger::failure;
use crate::carry::sections::{self, entry_header, PLAN_HEADER};
use crate::model::exchanges::Exchanges;
use crate::model::message::tool_result_text;
use crate::model::tokens::{self, Encoding};

/// The plan tools every agent of the module docs calls, by their lower-case names.
const BUILT_IN_TOOLS: &[&str] = &["todowrite", "update_plan", "write_todos"];

const LIST_FIELDS: &[&str] = &["todos", "plan", "items", "tasks", "steps", "task_list"];
const TEXT_FIELDS: &[&str] = &[
    "content",
    "step",
    "description",
    "title",
    "task",
    "text",
    "name",
];
const CLOSED_STATUSES: &[&str] = &[
    "completed",
    "complete",
    "done",
    "cancelled",
    "canceled",
    "finished",
    "skipped",
];
/// The label of an item whose tool gives it no status.
const NO_STATUS: &str = "no status";
/// The label of Codex's explanation (no tool's status reads like this).
const EXPLANATION: &str = "explanation of the plan";
const PRIORITY_NOTE: &str = "priority ";

/// One item of the list, as the agent set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanItem {
    pub text: String,
    pub status: String,
    pub priority: Option<String>,
}

impl PlanItem {
    /// Not completed, done or cancelled.
    pub fn is_open(&self) -> bool {
        !CLOSED_STATUSES.contains(&self.status.trim().to_ascii_lowercase().as_str())
    }
}

/// The latest state of the list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The tool that set it, as the agent named it.
    pub tool: String,
    /// Codex's `explanation`.
    pub explanation: Option<String>,
    /// The items shown, open ones first.
    pub items: Vec<PlanItem>,
    /// Open items left out to stay within the budget (the last ones).
    pub open_left_out: usize,
    /// Closed items left out: for the budget, or all of them when none is open.
    pub closed_left_out: usize,
}

/// The lower-case name a plan tool is matched by: MCP-style prefixes (`mcp__todo__todowrite`)
/// left out, as the ledger reads tool names.
fn base_name(name: &str) -> String {
    name.rsplit("__")
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
}

/// Is `name` a plan tool: one of the built-in ones, or one the caller named (`plan_tools`)?
pub fn is_plan_tool(name: &str, plan_tools: &[String]) -> bool {
    let base = base_name(name);
    BUILT_IN_TOOLS.contains(&base.as_str())
        || plan_tools
            .iter()
            .any(|tool| tool.eq_ignore_ascii_case(name) || base_name(tool) == base)
}

/// The items of a plan tool's input (see the module docs); `None` when it holds no list.
fn read_input(tool: &str, input: &Value) -> Option<Plan> {
    let list = LIST_FIELDS
        .iter()
        .find_map(|field| input.get(*field).and_then(Value::as_array))
        .or_else(|| input.as_array())?;
    let mut items = Vec::new();
    for item in list {
        let read = match item {
            Value::String(text) => Some(PlanItem {
                text: text.clone(),
                status: NO_STATUS.into(),
                priority: None,
            }),
            Value::Object(fields) => TEXT_FIELDS
                .iter()
                .find_map(|field| fields.get(*field).and_then(Value::as_str))
                .map(|text| {
                    let status = ["status", "state"]
                        .iter()
                        .find_map(|field| fields.get(*field).and_then(Value::as_str))
                        .map(collapse_whitespace)
                        .filter(|status| !status.is_empty())
                        .or_else(|| {
                            ["done", "completed", "checked"].iter().find_map(|field| {
                                fields.get(*field).and_then(Value::as_bool).map(|done| {
                                    if done { "completed" } else { "pending" }.to_string()
                                })
                            })
                        })
                        .unwrap_or_else(|| NO_STATUS.into());
                    PlanItem {
                        text: text.to_string(),
                        status,
                        priority: fields
                            .get("priority")
                            .and_then(Value::as_str)
                            .map(collapse_whitespace)
                            .filter(|p| !p.is_empty()),
                    }
                }),
            _ => None,
        };
        items.extend(read);
    }
    // Open items first, each group in the agent's order.
    let (open, closed): (Vec<PlanItem>, Vec<PlanItem>) =
        items.into_iter().partition(PlanItem::is_open);
    let mut items = open;
    items.extend(closed);
    Some(Plan {
        tool: tool.to_string(),
        explanation: input
            .get("explanation")
            .and_then(Value::as_str)
            .filter(|text| !text.trim().is_empty())
            .map(str::to_string),
        items,
        open_left_out: 0,
        closed_left_out: 0,
    })
}

/// The state the last plan tool call of `messages` set, when one did: a call whose result is
/// an error set nothing; a call without a result (the last one, answered in the kept messages)
/// is taken as done.
pub fn latest(messages: &[Value], plan_tools: &[String]) -> Option<Plan> {
    let mut exchanges = Exchanges::new();
    let mut latest: Option<Plan> = None;
    for message in messages {
        let results = exchanges.read(message, |call| {
            is_plan_tool(call.name, plan_tools)
                .then(|| read_input(call.name, &call.input))
                .flatten()
        });
        for (result, plan) in results {
            let Some(plan) = plan else {
                continue;
            };
            if !failure::failed(result.is_error, &tool_result_text(result.content)) {
                latest = Some(plan);
            }
        }
    }
    exchanges.into_unanswered().last().or(latest)
}

impl Plan {
    fn open_count(&self) -> usize {
        self.items.iter().filter(|item| item.is_open()).count() + self.open_left_out
    }

    fn total(&self) -> usize {
        self.items.len() + self.open_left_out + self.closed_left_out
    }

    /// The section (see the module docs), its items cut to `max_tokens` (closed items first,
    /// then the last open ones; how many is said). Empty when even the frame does not fit.
    pub fn render(&self, max_tokens: usize, encoding: Encoding) -> String {
        let mut plan = self.clone();
        // A list with no open item is one line.
        if plan.open_count() == 0 {
            plan.closed_left_out += plan.items.len();
            plan.items.clear();
        }
        loop {
            let text = plan.render_all();
            if tokens::count_text(encoding, &text) <= max_tokens {
                return text;
            }
            // Closed items go first (they are last), then the explanation, then the last
            // open items.
            if plan.items.last().is_some_and(|item| !item.is_open()) {
                plan.items.pop();
                plan.closed_left_out += 1;
            } else if plan.explanation.is_some() {
                plan.explanation = None;
            } else if plan.items.pop().is_some() {
                plan.open_left_out += 1;
            } else {
                return String::new();
            }
        }
    }

    fn render_all(&self) -> String {
        let tool = self.tool.replace('`', "");
        let total = self.total();
        let open = self.open_count();
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut out = format!("{PLAN_HEADER}\n");
        if total == 0 {
            out.push_str(&format!(
                "The last `{tool}` call of the compacted part cleared the list."
            ));
            return out;
        }
        if open == 0 {
            out.push_str(&format!(
                "The last `{tool}` call of the compacted part set {total} item{}, none open (all completed or cancelled).",
                plural(total)
            ));
            return out;
        }
        out.push_str(&format!(
            "The last `{tool}` call of the compacted part set {total} item{}, {open} open; open ones first, each as the agent wrote it:",
            plural(total)
        ));
        if self.open_left_out > 0 {
            out.push_str(&format!(
                "\n({} more open item{} not shown for room; the archive holds the call.)",
                self.open_left_out,
                plural(self.open_left_out)
            ));
        }
        if self.closed_left_out > 0 {
            out.push_str(&format!(
                "\n({} completed or cancelled item{} not shown.)",
                self.closed_left_out,
                plural(self.closed_left_out)
            ));
        }
        if let Some(explanation) = &self.explanation {
            out.push('\n');
            out.push_str(&entry_header(
                EXPLANATION,
                explanation.chars().count(),
                None,
            ));
            out.push('\n');
            out.push_str(explanation);
        }
        for item in &self.items {
            let note = item
                .priority
                .as_ref()
                .map(|priority| format!("{PRIORITY_NOTE}{priority}"));
            out.push('\n');
            out.push_str(&entry_header(
                &item.status,
                item.text.chars().count(),
                note.as_deref(),
            ));
            out.push('\n');
            out.push_str(&item.text);
        }
        out
    }

    /// The section of a summary body written by [`Plan::render`].
    pub fn parse(body: &str) -> Option<Plan> {
        let section = sections::split(body).plan?;
        let (notes, entries) = sections::entries(section);
        let intro = notes.first()?;
        let tool = intro
            .strip_prefix("The last `")?
            .split_once('`')
            .map(|(tool, _)| tool.to_string())?;
        let number_after = |text: &str, marker: &str| -> Option<usize> {
            let at = text.find(marker)? + marker.len();
            text[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        };
        let count_before = |line: &str, words: &str| -> Option<usize> {
            line.strip_prefix('(')?
                .strip_suffix(")")
                .filter(|rest| rest.contains(words))?
                .split(' ')
                .next()?
                .parse()
                .ok()
        };
        let mut plan = Plan {
            tool,
            ..Plan::default()
        };
        for note in &notes[1..] {
            if let Some(n) = count_before(note, " more open item") {
                plan.open_left_out = n;
            } else if let Some(n) = count_before(note, " completed or cancelled item") {
                plan.closed_left_out = n;
            }
        }
        if intro.contains(" none open ") {
            plan.closed_left_out = number_after(intro, "part set ")?;
        }
        for entry in entries {
            if entry.label == EXPLANATION && plan.items.is_empty() && plan.explanation.is_none() {
                plan.explanation = Some(entry.text.to_string());
                continue;
            }
            plan.items.push(PlanItem {
                text: entry.text.to_string(),
                status: entry.label.to_string(),
                priority: entry
                    .notes
                    .iter()
                    .find_map(|note| note.strip_prefix(PRIORITY_NOTE))
                    .map(str::to_string),
            });
        }
        Some(plan)
    }
}

/// The task list section of a summary of `middle` whose earlier summary's body is `earlier`:
/// the state the middle's last plan call set, else the earlier summary's, carried forward.
/// Empty when neither holds one, or the budget cannot hold it.
pub fn section(
    earlier: Option<&str>,
    middle: &[Value],
    plan_tools: &[String],
    max_tokens: usize,
    encoding: Encoding,
) -> String {
    if max_tokens == 0 {
        return String::new();
    }
    latest(middle, plan_tools)
        .or_else(|| earlier.and_then(Plan::parse))
        .map(|plan| plan.render(max_tokens, encoding))
        .unwrap_or_default()
}

/// `body` without its task list section (`None` when it has none): the section gives way when
/// the result would not fit otherwise.
pub fn without_section(body: &str) -> Option<String> {
    let section = sections::split(body).plan?;
    Some(sections::remove_section(body, section))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::carry::sections::LEDGER_HEADER;
    use serde_json::json;

    const ENC: Encoding = Encoding::O200kBase;

    fn call(id: &str, name: &str, input: Value) -> Value {
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
    }

    fn result(id: &str, is_error: bool, text: &str) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": text}]})
    }

    fn texts(plan: &Plan) -> Vec<(&str, &str)> {
        plan.items
            .iter()
            .map(|i| (i.status.as_str(), i.text.as_str()))
            .collect()
    }

    #[test]
    fn each_agents_plan_tool_is_read_as_its_source_defines_it() {
        // Claude Code TodoWrite.
        let claude = latest(
            &[call(
                "1",
                "TodoWrite",
                json!({"todos": [
                    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
                    {"content": "Fix the parser", "status": "in_progress", "activeForm": "Fixing the parser"},
                    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}
                ]}),
            )],
            &[],
        )
        .unwrap();
        assert_eq!(
            texts(&claude),
            vec![
                ("in_progress", "Fix the parser"),
                ("pending", "Run the tests"),
                ("completed", "Read the code")
            ]
        );
        // Codex update_plan, in the OpenAI Chat dialect (arguments as a JSON string).
        let codex = latest(
            &[json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "update_plan", "arguments": "{\"explanation\":\"Tests first.\",\"plan\":[{\"step\":\"Write a failing test\",\"status\":\"completed\"},{\"step\":\"Fix the bug\",\"status\":\"in_progress\"}]}"}}]})],
            &[],
        )
        .unwrap();
        assert_eq!(codex.explanation.as_deref(), Some("Tests first."));
        assert_eq!(
            texts(&codex),
            vec![
                ("in_progress", "Fix the bug"),
                ("completed", "Write a failing test")
            ]
        );
        // Gemini CLI write_todos, with cancelled.
        let gemini = latest(
            &[call(
                "g",
                "write_todos",
                json!({"todos": [{"description": "Drop the cache", "status": "cancelled"}, {"description": "Ship", "status": "pending"}]}),
            )],
            &[],
        )
        .unwrap();
        assert_eq!(
            texts(&gemini),
            vec![("pending", "Ship"), ("cancelled", "Drop the cache")]
        );
        // opencode todowrite, with priorities.
        let opencode = latest(
            &[call(
                "o",
                "todowrite",
                json!({"todos": [{"content": "Add auth", "status": "pending", "priority": "high", "id": "1"}]}),
            )],
            &[],
        )
        .unwrap();
        assert_eq!(opencode.items[0].priority.as_deref(), Some("high"));
        // A caller's own tool, with booleans; unknown tools are not plans.
        let own = latest(
            &[call(
                "m",
                "mcp__board__set_tasks",
                json!({"tasks": [{"title": "A", "done": true}, {"title": "B", "done": false}, "C"]}),
            )],
            &["set_tasks".to_string()],
        )
        .unwrap();
        assert_eq!(
            texts(&own),
            vec![("pending", "B"), ("no status", "C"), ("completed", "A")]
        );
        assert_eq!(
            latest(&[call("x", "set_tasks", json!({"tasks": []}))], &[]),
            None
        );
    }

    #[test]
    fn the_last_call_that_took_effect_wins() {
        let messages = vec![
            call(
                "1",
                "TodoWrite",
                json!({"todos": [{"content": "one", "status": "pending"}]}),
            ),
            result("1", false, "Todos have been modified successfully."),
            call(
                "2",
                "write_todos",
                json!({"todos": [{"description": "two", "status": "in_progress"}, {"description": "three", "status": "in_progress"}]}),
            ),
            result(
                "2",
                true,
                "Invalid parameters: Only one task can be \"in_progress\" at a time.",
            ),
        ];
        assert_eq!(
            texts(&latest(&messages, &[]).unwrap()),
            vec![("pending", "one")]
        );
        let mut more = messages.clone();
        more.push(call(
            "3",
            "TodoWrite",
            json!({"todos": [{"content": "four", "status": "pending"}]}),
        ));
        assert_eq!(
            texts(&latest(&more, &[]).unwrap()),
            vec![("pending", "four")]
        );
    }

    #[test]
    fn rendered_exactly_read_back_and_carried_forward() {
        let tricky =
            format!("Fix it\n\n{LEDGER_HEADER}\n- not a ledger\n[pending · 3 characters]\nabc");
        let messages = vec![call(
            "1",
            "update_plan",
            json!({"explanation": "Why:\nbecause", "plan": [
                {"step": "Done step", "status": "completed"},
                {"step": tricky, "status": "in_progress"},
                {"step": "Later", "status": "pending"}
            ]}),
        )];
        let body = format!(
            "## Goal\nx\n\n{}\n\n## Archived originals (recall)\nRecall: archive=a",
            section(None, &messages, &[], 2_000, ENC)
        );
        let parsed = Plan::parse(&body).unwrap();
        assert_eq!(parsed, latest(&messages, &[]).unwrap());
        assert_eq!(parsed.items[0].text, tricky);
        // The text inside cannot end the section or add a ledger.
        assert_eq!(crate::carry::ledger::Ledger::parse(&body), None);
        assert!(sections::split(&body).recall.is_some());
        // Carried forward when the middle has no newer call; replaced by one.
        let carried = section(
            Some(&body),
            &[json!({"role": "user", "content": "go on"})],
            &[],
            2_000,
            ENC,
        );
        assert_eq!(Plan::parse(&carried).unwrap(), parsed);
        let newer = [call(
            "2",
            "TodoWrite",
            json!({"todos": [{"content": "New", "status": "pending"}]}),
        )];
        let replaced = section(Some(&body), &newer, &[], 2_000, ENC);
        assert_eq!(
            texts(&Plan::parse(&replaced).unwrap()),
            vec![("pending", "New")]
        );
        assert_eq!(section(None, &messages, &[], 0, ENC), "");
    }

    #[test]
    fn a_finished_list_is_one_line_and_a_long_one_keeps_its_open_items() {
        let done = [call(
            "1",
            "TodoWrite",
            json!({"todos": [
                {"content": "a", "status": "completed"}, {"content": "b", "status": "completed"}
            ]}),
        )];
        let text = section(None, &done, &[], 2_000, ENC);
        assert_eq!(
            text,
            format!("{PLAN_HEADER}\nThe last `TodoWrite` call of the compacted part set 2 items, none open (all completed or cancelled).")
        );
        assert_eq!(Plan::parse(&text).unwrap().render(2_000, ENC), text);
        let cleared = section(
            None,
            &[call("1", "TodoWrite", json!({"todos": []}))],
            &[],
            2_000,
            ENC,
        );
        assert!(cleared.ends_with("cleared the list."));
        let long: Vec<Value> = (0..60)
            .map(|n| json!({"content": format!("step {n} {}", "detail ".repeat(10)), "status": if n < 20 { "completed" } else { "pending" }}))
            .collect();
        let messages = [call("1", "TodoWrite", json!({"todos": long}))];
        let text = section(None, &messages, &[], 400, ENC);
        assert!(tokens::count_text(ENC, &text) <= 400);
        let plan = Plan::parse(&text).unwrap();
        assert_eq!(plan.closed_left_out, 20);
        assert!(plan.open_left_out > 0);
        assert!(plan.items.iter().all(PlanItem::is_open));
        assert_eq!(
            plan.items[0].text,
            format!("step 20 {}", "detail ".repeat(10))
        );
        assert!(text.contains(&format!("{} more open items not shown", plan.open_left_out)));
        assert_eq!(plan.render(400, ENC), text);
    }

    use proptest::prelude::*;

    /// Texts an agent may write, header-like lines and entry-like lines among them.
    fn agent_text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                "[a-zA-Z0-9 .,`'()-]{0,40}",
                Just(format!("\n{LEDGER_HEADER}\n")),
                Just(format!("\n{PLAN_HEADER}\n")),
                Just("\n[pending · 3 characters]\n".to_string()),
                Just("\n## User messages (verbatim)\n".to_string()),
                Just("é中🙂\n\n".to_string()),
            ],
            1..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the agent wrote, the section reads back as the state it set, within its
        /// budget, and is carried forward unchanged.
        #[test]
        fn any_list_reads_back_exactly(
            items in prop::collection::vec((agent_text(), prop_oneof![Just("pending"), Just("in_progress"), Just("completed"), Just("cancelled"), Just("blocked")]), 0..12),
            explanation in prop::option::of(agent_text()),
            budget in 60usize..3_000,
        ) {
            let input = json!({
                "explanation": explanation,
                "plan": items.iter().map(|(text, status)| json!({"step": text, "status": status})).collect::<Vec<_>>(),
            });
            let messages = [call("1", "update_plan", input)];
            let text = section(None, &messages, &[], budget, ENC);
            if text.is_empty() {
                return Ok(());
            }
            prop_assert!(tokens::count_text(ENC, &text) <= budget);
            let body = format!("## Goal\nx\n\n{text}\n\n## Archived originals (recall)\nRecall: archive=a");
            let parsed = Plan::parse(&body).unwrap();
            let set = latest(&messages, &[]).unwrap();
            // What is shown is the set state, open items first; what is not is counted.
            prop_assert_eq!(parsed.items.len() + parsed.open_left_out + parsed.closed_left_out, set.items.len());
            for item in &parsed.items {
                prop_assert!(set.items.contains(item));
            }
            let open_shown = parsed.items.iter().filter(|i| i.is_open()).count();
            prop_assert_eq!(&parsed.items[..open_shown], &set.items[..open_shown]);
            prop_assert_eq!(parsed.render(budget, ENC), text.clone());
            prop_assert_eq!(sections::split(&body).recall, Some("## Archived originals (recall)\nRecall: archive=a"));
            let carried = section(Some(&body), &[json!({"role": "user", "content": "next"})], &[], budget, ENC);
            prop_assert_eq!(carried, text);
        }
    }

    #[test]
    fn the_section_gives_way_whole() {
        let body = format!(
            "## Goal\nx\n\n{}\n\n## User messages (verbatim)\n[user message · 2 characters]\nhi",
            section(
                None,
                &[call(
                    "1",
                    "TodoWrite",
                    json!({"todos": [{"content": "a", "status": "pending"}]})
                )],
                &[],
                2_000,
                ENC
            )
        );
        assert_eq!(
            without_section(&body).unwrap(),
            "## Goal\nx\n\n## User messages (verbatim)\n[user message · 2 characters]\nhi"
        );
        assert_eq!(without_section("## Goal\nx"), None);
    }
}
