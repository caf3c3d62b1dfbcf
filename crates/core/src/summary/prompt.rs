//! The summary prompt (PRD F-004): the middle rendered as a readable transcript, and the
//! instructions that say what a summary must preserve.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::Value;

use crate::model::added::is_summary_message;
use crate::model::message::{block_type, openai_tool_calls, role_of, tool_call_id, Role};
use crate::model::tokens::compact_json;

/// Section headers the summary must use, in order.
pub const SECTION_HEADERS: &[&str] = &[
    "## Goal",
    "## Key decisions",
    "## File operations",
    "## Tool calls",
    "## Current state",
    "## Errors and fixes",
    "## User preferences and constraints",
    "## Next steps",
];

/// The instructions (our structured prompt, the default).
pub fn instructions(previous_summary: Option<&str>, custom_instructions: Option<&str>) -> String {
    let mut out = String::new();
    out.push_str(
        "You are compacting the history of a long-running AI agent session so the agent can \
         continue its work in a fresh context window. The transcript below is the part of the \
         conversation being removed; the agent will keep only your summary of it (plus the \
         most recent messages, which are not shown here).\n\n",
    );
    if previous_summary.is_some() {
        out.push_str(
            "An earlier part of the session was already summarized; that summary is given \
             first. Update it with what happened since: keep everything in it that still \
             matters, fold in the new transcript, and drop only what is obsolete.\n\n",
        );
    }
    write_sections(&mut out, "transcript", custom_instructions);
    out
}

/// The section headers with what goes under each, the rules of the summary, and the caller's
/// extra instructions. `source` names what the model reads (`transcript`, `conversation`).
fn write_sections(out: &mut String, source: &str, custom_instructions: Option<&str>) {
    out.push_str(
        "Write a structured plain-text summary with exactly these section headers, in this \
         order (write \"(none)\" under a header with nothing to report):\n\n",
    );
    let guidance = [
        "the user's goals and requests, in their own terms; success criteria",
        "decisions made and why; approaches tried and rejected",
        "files read, created, modified and deleted, with paths and what changed",
        "tools called: name, key result, success or failure",
        "what is done, what is in progress, what the agent was doing last",
        "errors met and how they were fixed (or that they are still open)",
        "preferences, constraints and instructions the user gave; promises made to the user",
        "the specific next actions, in order",
    ];
    for (header, what) in SECTION_HEADERS.iter().zip(guidance) {
        let _ = writeln!(out, "{header}\n<{what}>");
    }
    let _ = write!(
        out,
        "\nBe concise but complete: keep exact names, paths, identifiers, numbers, commands and \
         error messages; prefer bullet points. Do not invent anything that is not in the \
         {source}. Do not continue the conversation or answer the user; output only the \
         summary.\n"
    );
    write_custom(out, custom_instructions);
}

fn write_custom(out: &mut String, custom_instructions: Option<&str>) {
    if let Some(custom) = custom_instructions.filter(|c| !c.trim().is_empty()) {
        out.push_str("\nAdditional instructions:\n");
        out.push_str(custom.trim());
        out.push('\n');
    }
}

/// A message of the conversation named in the shared request's instructions: its number
/// among the messages sent (1-based) and how it begins, so the model can find it without
/// counting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landmark {
    pub number: usize,
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The beginning of its text, or what it does (`calls the tool read_file`).
    pub begins: String,
}

/// What the shared request asks to summarize, out of the `total` messages sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedScope {
    pub total: usize,
    /// The first message to summarize, when not the first one sent.
    pub from: Option<Landmark>,
    /// The first message kept verbatim after the summary; `None`: summarize everything.
    pub until: Option<Landmark>,
}

impl Landmark {
    /// The landmark of `message`, number `number` of those sent.
    pub fn of(message: &Value, number: usize) -> Landmark {
        let role = match role_of(message) {
            Some(Role::Assistant) => "assistant",
            _ => "user",
        };
        let text = message_text(message);
        let begins = if text.trim().is_empty() {
            let tools: Vec<String> = tool_names(message);
            if tools.is_empty() {
                "(no text)".to_string()
            } else {
                format!("(no text; it calls {})", tools.join(", "))
            }
        } else {
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let cut: String = flat.chars().take(160).collect();
            if cut.len() < flat.len() {
                format!("\"{cut}…\"")
            } else {
                format!("\"{cut}\"")
            }
        };
        Landmark {
            number,
            role,
            begins,
        }
    }
}

/// The text of a message's string content or text blocks.
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| block_type(b) == "text")
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The tools a message calls (Anthropic `tool_use` blocks or OpenAI `tool_calls`).
fn tool_names(message: &Value) -> Vec<String> {
    let mut names: Vec<String> = match message.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| block_type(b) == "tool_use")
            .filter_map(|b| b.get("name").and_then(Value::as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    names.extend(openai_tool_calls(message).iter().filter_map(|call| {
        call.pointer("/function/name")
            .and_then(Value::as_str)
            .map(str::to_string)
    }));
    names
}

/// The instruction message of a shared summary request (SPEC §4.10, seed 002): the loop's own
/// conversation is above it, so it says which part to summarize and that the rest stays
/// verbatim after the summary. It starts with [`crate::model::added::SUMMARY_PREFIX`] like
/// every message the library writes.
pub fn shared_instructions(
    scope: &SharedScope,
    style: SharedStyle,
    custom_instructions: Option<&str>,
) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{}The conversation above is being compacted to free context space. Do not continue \
         the task and do not call any tool: reply with the summary only, as text.\n\n",
        crate::model::added::SUMMARY_PREFIX
    );
    let describe = |m: &Landmark| {
        format!(
            "message {} of {} (the {} message that begins {})",
            m.number, scope.total, m.role, m.begins
        )
    };
    out.push_str("What to summarize: ");
    match &scope.from {
        Some(from) => {
            let _ = write!(out, "the conversation from {}", describe(from));
        }
        None => out.push_str("the conversation from its first message"),
    }
    match &scope.until {
        Some(until) => {
            let kept = scope.total + 1 - until.number;
            let _ = write!(
                out,
                " up to, but not including, {}. That message and the {} after it stay in the \
                 context verbatim, right after your summary: leave them out of it.\n\n",
                describe(until),
                kept - 1
            );
        }
        None => out.push_str(" to its end.\n\n"),
    }
    out.push_str(
        "If that part begins with an earlier summary (a message starting with \
         \"[context-compact]\"), update it with what happened since: keep everything in it \
         that still matters, fold in the rest, and drop only what is obsolete.\n\n",
    );
    match style {
        SharedStyle::Structured => write_sections(&mut out, "conversation", custom_instructions),
        SharedStyle::Continuation => {
            out.push_str(
                &continuation_instructions(custom_instructions)
                    .replace("described in the transcript below", "described above"),
            );
        }
    }
    out
}

/// Which prompt the shared request's instructions follow (`promptStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedStyle {
    Structured,
    Continuation,
}

/// The Agent-SDK seed's continuation-summary prompt (`promptStyle: 'continuation'`).
pub fn continuation_instructions(custom_instructions: Option<&str>) -> String {
    let mut out = String::from(
        "You have been working on the task described in the transcript below but have not yet \
         completed it. Write a continuation summary that will allow you (or another instance \
         of yourself) to resume work efficiently in a future context window where the \
         conversation history will be replaced with this summary. Your summary should be \
         structured, concise, and actionable. Include:\n\n\
         1. Task Overview\nThe user's core request and success criteria\nAny clarifications or \
         constraints they specified\n\n\
         2. Current State\nWhat has been completed so far\nFiles created, modified, or analyzed \
         (with paths if relevant)\nKey outputs or artifacts produced\n\n\
         3. Important Discoveries\nTechnical constraints or requirements uncovered\nDecisions \
         made and their rationale\nErrors encountered and how they were resolved\nWhat \
         approaches were tried that didn't work (and why)\n\n\
         4. Next Steps\nSpecific actions needed to complete the task\nAny blockers or open \
         questions to resolve\nPriority order if multiple steps remain\n\n\
         5. Context to Preserve\nUser preferences or style requirements\nDomain-specific \
         details that aren't obvious\nAny promises made to the user\n\n\
         Be concise but complete - err on the side of including information that would \
         prevent duplicate work or repeated mistakes. Write in a way that enables immediate \
         resumption of the task.\n\nWrap your summary in <summary></summary> tags.\n",
    );
    write_custom(&mut out, custom_instructions);
    out
}

/// How long one tool result may be in the transcript before it is shortened (in chars), and
/// one tool call's input. `usize::MAX` renders everything.
#[derive(Debug, Clone, Copy)]
pub struct RenderLimits {
    pub max_tool_result_chars: usize,
    /// Default 4 000: a summary model needs what a call did, not a whole file it wrote.
    pub max_tool_input_chars: usize,
}

impl Default for RenderLimits {
    fn default() -> Self {
        RenderLimits {
            max_tool_result_chars: usize::MAX,
            max_tool_input_chars: 4_000,
        }
    }
}

impl RenderLimits {
    /// Everything, unshortened (reading archived messages back).
    pub fn unlimited() -> Self {
        RenderLimits {
            max_tool_result_chars: usize::MAX,
            max_tool_input_chars: usize::MAX,
        }
    }
}

/// Renders messages as a readable transcript. Earlier summaries are skipped (they are given to
/// the model separately, as the summary to update).
pub fn render_transcript(messages: &[Value], limits: RenderLimits) -> String {
    let mut out = String::new();
    render_transcript_into(&mut out, messages, limits);
    out
}

/// [`render_transcript`], written to `out`.
fn render_transcript_into(out: &mut impl Write, messages: &[Value], limits: RenderLimits) {
    let mut tool_names: HashMap<&str, &str> = HashMap::new();
    for message in messages {
        if is_summary_message(message) {
            continue;
        }
        render_message(out, message, &mut tool_names, limits);
    }
}

/// Each of `messages` rendered on its own, as [`render_transcript`] renders it (tool results
/// named by the calls before them); a summary or notice the library wrote as its text.
pub fn render_each(messages: &[Value], limits: RenderLimits) -> Vec<String> {
    let mut tool_names: HashMap<&str, &str> = HashMap::new();
    messages
        .iter()
        .map(|message| match crate::model::added::summary_text(message) {
            // Anthropic's compaction block holds the summary itself; the text beside it, ours.
            Some(text) => match crate::model::added::native_summary(message) {
                Some(native) => format!("{}\n\n{}\n", native.trim(), text.trim_end()),
                None => format!("{}\n", text.trim_end()),
            },
            None => {
                let mut out = String::new();
                render_message(&mut out, message, &mut tool_names, limits);
                out
            }
        })
        .collect()
}

/// One message of the transcript.
fn render_message<'a>(
    out: &mut impl Write,
    message: &'a Value,
    tool_names: &mut HashMap<&'a str, &'a str>,
    limits: RenderLimits,
) {
    {
        let role = role_of(message).map(Role::as_str).unwrap_or("unknown");
        match role_of(message) {
            Some(Role::Tool) => {
                let id = message.as_object().and_then(tool_call_id).unwrap_or("");
                let name = tool_names.get(id).copied().unwrap_or("tool");
                let is_error = message
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                render_tool_result(out, name, is_error, message.get("content"), limits);
            }
            _ => {
                match message.get("content") {
                    Some(Value::String(text)) => {
                        let _ = writeln!(out, "[{role}]\n{}\n", text.trim_end());
                    }
                    Some(Value::Array(blocks)) => {
                        let mut wrote_header = false;
                        for block in blocks {
                            render_block(out, role, &mut wrote_header, block, tool_names, limits);
                        }
                    }
                    _ => {}
                }
                for call in openai_tool_calls(message) {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                    let function = call.get("function");
                    let name = function
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    tool_names.insert(id, name);
                    let arguments = match function.and_then(|f| f.get("arguments")) {
                        Some(Value::String(text)) => text.clone(),
                        Some(other) => compact_json(other),
                        None => String::new(),
                    };
                    let _ = writeln!(
                        out,
                        "[{role} called tool {name}] {}\n",
                        clip_middle(&arguments, limits.max_tool_input_chars)
                    );
                }
            }
        }
    }
}

fn render_block<'a>(
    out: &mut impl Write,
    role: &str,
    wrote_header: &mut bool,
    block: &'a Value,
    tool_names: &mut HashMap<&'a str, &'a str>,
    limits: RenderLimits,
) {
    let mut header = |out: &mut dyn Write| {
        if !*wrote_header {
            let _ = writeln!(out, "[{role}]");
            *wrote_header = true;
        }
    };
    match block_type(block) {
        "text" => {
            header(out);
            let _ = writeln!(
                out,
                "{}\n",
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim_end()
            );
        }
        "thinking" => {
            header(out);
            let thinking = block.get("thinking").and_then(Value::as_str).unwrap_or("");
            let _ = writeln!(out, "(thinking) {}\n", clip_middle(thinking.trim(), 2_000));
        }
        "tool_use" | "server_tool_use" => {
            let id = block.get("id").and_then(Value::as_str).unwrap_or("");
            let name = block.get("name").and_then(Value::as_str).unwrap_or("");
            tool_names.insert(id, name);
            let input = block.get("input").map(compact_json).unwrap_or_default();
            let _ = writeln!(
                out,
                "[{role} called tool {name}] {}\n",
                clip_middle(&input, limits.max_tool_input_chars)
            );
            *wrote_header = false;
        }
        "tool_result" => {
            let id = block
                .get("tool_use_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            let name = tool_names.get(id).copied().unwrap_or("tool");
            let is_error = block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            render_tool_result(out, name, is_error, block.get("content"), limits);
            *wrote_header = false;
        }
        "image" | "image_url" => {
            header(out);
            let _ = out.write_str("[image]\n\n");
        }
        "document" => {
            header(out);
            let title = block
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("untitled");
            let _ = writeln!(out, "[document: {title}]\n");
        }
        "redacted_thinking" => {}
        other => {
            header(out);
            let _ = writeln!(out, "[{other} block]\n");
        }
    }
}

fn render_tool_result(
    out: &mut impl Write,
    name: &str,
    is_error: bool,
    content: Option<&Value>,
    limits: RenderLimits,
) {
    let text = match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            let mut text = String::new();
            for block in blocks {
                match block_type(block) {
                    "text" => {
                        text.push_str(block.get("text").and_then(Value::as_str).unwrap_or(""));
                        text.push('\n');
                    }
                    "image" | "image_url" => text.push_str("[image]\n"),
                    "document" => text.push_str("[document]\n"),
                    other => {
                        let _ = writeln!(text, "[{other} block]");
                    }
                }
            }
            text
        }
        Some(Value::Null) | None => String::new(),
        Some(other) => compact_json(other),
    };
    let marker = if is_error { " (ERROR)" } else { "" };
    let _ = writeln!(
        out,
        "[tool result from {name}{marker}]\n{}\n",
        clip_middle(text.trim_end(), limits.max_tool_result_chars)
    );
}

/// Shortens text to about `max_chars`, keeping its head and tail and saying how much was cut.
pub fn clip_middle(text: &str, max_chars: usize) -> String {
    if max_chars == usize::MAX || text.len() <= max_chars {
        return text.to_string();
    }
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return text.to_string();
    }
    let keep_head = max_chars * 2 / 3;
    let keep_tail = max_chars - keep_head;
    let head: String = text.chars().take(keep_head).collect();
    let tail: String = text.chars().skip(total_chars - keep_tail).collect();
    format!(
        "{head}\n[… {} characters omitted …]\n{tail}",
        total_chars - keep_head - keep_tail
    )
}

/// The full prompt for `messages`: [`build_prompt`] with their [`render_transcript`].
///
/// The transcript is rendered twice, first only to measure it, so that the prompt is written
/// once into a buffer of its exact size: for a long middle the prompt is the largest thing a
/// compaction allocates, and a growing buffer would briefly need twice that.
pub fn render_prompt(
    instructions: &str,
    previous_summary: Option<&str>,
    messages: &[Value],
    limits: RenderLimits,
) -> String {
    let mut measured = ByteCount(0);
    render_transcript_into(&mut measured, messages, limits);
    let mut prompt = String::with_capacity(
        instructions.len() + previous_summary.map_or(0, str::len) + measured.0 + 128,
    );
    prompt.push_str(instructions);
    push_previous_summary(&mut prompt, previous_summary);
    prompt.push_str("\n<transcript>\n");
    let start = prompt.len();
    render_transcript_into(&mut prompt, messages, limits);
    let end = start + prompt[start..].trim_end().len();
    prompt.truncate(end);
    prompt.push_str("\n</transcript>\n");
    prompt
}

/// A `fmt::Write` that only counts the bytes written to it.
struct ByteCount(usize);

impl Write for ByteCount {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

fn push_previous_summary(prompt: &mut String, previous_summary: Option<&str>) {
    if let Some(previous) = previous_summary {
        prompt.push_str("\n<previous_summary>\n");
        prompt.push_str(previous.trim());
        prompt.push_str("\n</previous_summary>\n");
    }
}

/// The full prompt: instructions, the previous summary (if any), the transcript.
pub fn build_prompt(
    instructions: &str,
    previous_summary: Option<&str>,
    transcript: &str,
) -> String {
    let mut prompt = String::with_capacity(instructions.len() + transcript.len() + 256);
    prompt.push_str(instructions);
    push_previous_summary(&mut prompt, previous_summary);
    prompt.push_str("\n<transcript>\n");
    prompt.push_str(transcript.trim_end());
    prompt.push_str("\n</transcript>\n");
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn render_prompt_is_build_prompt_of_the_transcript_in_one_exact_buffer() {
        let conversations = [
            vec![],
            vec![json!({"role": "user", "content": "   "})],
            vec![
                json!({"role": "user", "content": "fix src/a.ts  \n\n"}),
                json!({"role": "assistant", "content": [
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "src/a.ts"}}
                ]}),
                json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x\n".repeat(3000)}
                ]}),
            ],
        ];
        for messages in &conversations {
            for limits in [
                RenderLimits::default(),
                RenderLimits {
                    max_tool_result_chars: 100,
                    ..RenderLimits::default()
                },
            ] {
                for previous in [None, Some("## Goal\nearlier")] {
                    let expected = build_prompt(
                        "INSTRUCTIONS",
                        previous,
                        &render_transcript(messages, limits),
                    );
                    let prompt = render_prompt("INSTRUCTIONS", previous, messages, limits);
                    assert_eq!(prompt, expected);
                    assert!(prompt.capacity() <= prompt.len() + 128, "one exact buffer");
                }
            }
        }
    }

    #[test]
    fn transcript_shows_roles_tools_errors_and_placeholders() {
        let messages = json!([
            {"role": "user", "content": "Fix the build"},
            {"role": "assistant", "content": [{"type": "text", "text": "Running it."}, {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "cargo build"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "error: linker failed"}, {"type": "image", "source": {"type": "base64", "data": "AAAA"}}]}
        ]);
        let t = render_transcript(messages.as_array().unwrap(), RenderLimits::default());
        assert!(t.contains("[user]\nFix the build"));
        assert!(t.contains("[assistant called tool bash] {\"command\":\"cargo build\"}"));
        assert!(t.contains("[tool result from bash (ERROR)]\nerror: linker failed"));
        assert!(t.contains("[image]"));
    }

    #[test]
    fn clip_middle_keeps_head_and_tail() {
        let text = "a".repeat(100) + &"b".repeat(100);
        let clipped = clip_middle(&text, 30);
        assert!(clipped.starts_with(&"a".repeat(20)));
        assert!(clipped.ends_with(&"b".repeat(10)));
        assert!(clipped.contains("170 characters omitted"));
    }

    #[test]
    fn instructions_cover_every_dimension_and_custom_text() {
        let text = instructions(Some("old"), Some("Answer in French."));
        for header in SECTION_HEADERS {
            assert!(text.contains(header));
        }
        assert!(text.contains("Update it with what happened since"));
        assert!(text.ends_with("Answer in French.\n"));
    }
}
