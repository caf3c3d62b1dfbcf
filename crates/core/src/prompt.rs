//! The summary prompt (PRD F-004): the middle rendered as a readable transcript, and the
//! instructions that say what a summary must preserve.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::Value;

use crate::message::{block_type, openai_tool_calls, role_of, tool_call_id, Role};
use crate::tokens::compact_json;

/// Every summary message starts with this, so a later compaction can recognise an earlier
/// summary in its middle (UC-002) and `restoreMessages` can find the archive it names.
pub const SUMMARY_PREFIX: &str = "[context-compact] ";

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
    out.push_str(
        "\nBe concise but complete: keep exact names, paths, identifiers, numbers, commands and \
         error messages; prefer bullet points. Do not invent anything that is not in the \
         transcript. Do not continue the conversation or answer the user; output only the \
         summary.\n",
    );
    if let Some(custom) = custom_instructions.filter(|c| !c.trim().is_empty()) {
        out.push_str("\nAdditional instructions:\n");
        out.push_str(custom.trim());
        out.push('\n');
    }
    out
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
    if let Some(custom) = custom_instructions.filter(|c| !c.trim().is_empty()) {
        out.push_str("\nAdditional instructions:\n");
        out.push_str(custom.trim());
        out.push('\n');
    }
    out
}

/// Is this message a summary written by this library?
pub fn is_summary_message(message: &Value) -> bool {
    summary_text(message).is_some()
}

/// The text of a summary or notice message: the content of a user message we wrote, or the
/// text block beside the signed `compaction` block of Anthropic's on-demand compaction (an
/// assistant message whose first block is the compaction block).
pub fn summary_text(message: &Value) -> Option<&str> {
    match role_of(message)? {
        Role::User => message
            .get("content")?
            .as_str()
            .filter(|text| text.starts_with(SUMMARY_PREFIX)),
        Role::Assistant => {
            let blocks = message.get("content")?.as_array()?;
            if blocks.first().map(block_type) != Some("compaction") {
                return None;
            }
            blocks[1..]
                .iter()
                .filter(|block| block_type(block) == "text")
                .find_map(|block| block.get("text")?.as_str())
                .filter(|text| text.starts_with(SUMMARY_PREFIX))
        }
        _ => None,
    }
}

/// The summary text of Anthropic's compaction block in a native summary message.
pub fn native_summary(message: &Value) -> Option<&str> {
    summary_text(message)?;
    message.get("content")?.get(0)?.get("content")?.as_str()
}

/// The first line of the text beside a compaction block.
pub fn native_header(summarized_messages: usize, archive_path: Option<&str>) -> String {
    header_line(
        summarized_messages,
        "was compacted by Anthropic into the compaction block above; what its tool calls touched was compacted into the summary below.",
        archive_path,
    )
}

/// `[context-compact] Earlier conversation (N messages) <what>` and where the originals are.
fn header_line(summarized_messages: usize, what: &str, archive_path: Option<&str>) -> String {
    let plural = if summarized_messages == 1 { "" } else { "s" };
    let mut line = format!(
        "{SUMMARY_PREFIX}Earlier conversation ({summarized_messages} message{plural}) {what}"
    );
    match archive_path {
        Some(path) => {
            line.push(' ');
            line.push_str(ARCHIVE_LABEL);
            line.push_str(path);
        }
        None => line.push_str(" The originals were not archived."),
    }
    line
}

/// The body of a summary message (without its first, explanatory line, and without its
/// thinking line).
pub fn summary_body(message: &Value) -> Option<&str> {
    let text = summary_text(message)?;
    let rest = text.strip_prefix(SUMMARY_PREFIX)?;
    let body = match rest.split_once('\n') {
        Some((_, body)) => body.trim_start_matches('\n'),
        None => "",
    };
    Some(match body.rfind(THINKING_LINE_START) {
        Some(at) if !body[at..].trim_end().contains('\n') => body[..at].trim_end(),
        _ => body,
    })
}

/// The last line of a summary or notice after which kept messages had their thinking removed
/// (the thinking policy): which of the following messages (by position, `*` for one left out
/// because it held only thinking) and where their originals are, for `restoreMessages`.
const THINKING_LINE_START: &str =
    "[context-compact: thinking was removed from kept messages after this one (at ";
const THINKING_LINE_LEFT_OUT: &str = "; * held only thinking and was left out)";
const THINKING_LINE_ARCHIVE: &str = ". Originals: ";
/// Where in the compaction's archive the originals are (the archive's
/// `keptOriginals.thinkingRemoved`, see `crate::archive`), before the archive's path. A line
/// without it names an archive holding only those originals (the layout before one compaction
/// took one number).
const THINKING_LINE_KEPT_ORIGINALS: &str = "keptOriginals.thinkingRemoved of ";
const THINKING_LINE_NOT_ARCHIVED: &str = ". The originals could not be archived.";

/// What a thinking line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThinkingLine<'a> {
    /// (position after the summary, left out), in order.
    pub kept: Vec<(usize, bool)>,
    /// Where the originals are, in the same order.
    pub archive: Option<&'a str>,
    /// The originals are the archive's `keptOriginals.thinkingRemoved` (false: the whole
    /// archive, as written before one compaction took one number).
    pub kept_originals: bool,
}

/// The thinking line for `kept` (see [`ThinkingLine`]): their originals are
/// `keptOriginals.thinkingRemoved` of the compaction's `archive`.
pub fn thinking_line_text(kept: &[(usize, bool)], archive: Option<&str>) -> String {
    let positions: Vec<String> = kept
        .iter()
        .map(|(p, left_out)| {
            if *left_out {
                format!("{p}*")
            } else {
                p.to_string()
            }
        })
        .collect();
    let mut line = format!(
        "{THINKING_LINE_START}{}{THINKING_LINE_LEFT_OUT}",
        positions.join(", ")
    );
    match archive {
        Some(path) => {
            line.push_str(THINKING_LINE_ARCHIVE);
            line.push_str(THINKING_LINE_KEPT_ORIGINALS);
            line.push_str(path);
            line.push(']');
        }
        None => {
            line.push_str(THINKING_LINE_NOT_ARCHIVED);
            line.push(']');
        }
    }
    line
}

/// The thinking line of a summary or notice message, if it has one.
pub fn thinking_line(message: &Value) -> Option<ThinkingLine<'_>> {
    let text = summary_text(message)?;
    let last = text.trim_end().rsplit('\n').next()?;
    let rest = last.strip_prefix(THINKING_LINE_START)?;
    let (positions, rest) = rest.split_once(THINKING_LINE_LEFT_OUT)?;
    let kept = positions
        .split(", ")
        .map(|p| match p.strip_suffix('*') {
            Some(n) => n.parse().ok().map(|n| (n, true)),
            None => p.parse().ok().map(|n| (n, false)),
        })
        .collect::<Option<Vec<_>>>()?;
    let archive = rest
        .strip_prefix(THINKING_LINE_ARCHIVE)
        .and_then(|r| r.strip_suffix(']'))
        .map(str::trim);
    let located = archive.and_then(|a| a.strip_prefix(THINKING_LINE_KEPT_ORIGINALS));
    Some(ThinkingLine {
        kept,
        archive: located.or(archive).map(str::trim),
        kept_originals: located.is_some(),
    })
}

/// The archive a summary message names, if any.
pub fn summary_archive(message: &Value) -> Option<&str> {
    let text = summary_text(message)?;
    let first_line = text.strip_prefix(SUMMARY_PREFIX)?.lines().next()?;
    let (_, path) = first_line.split_once(ARCHIVE_LABEL)?;
    Some(path.trim())
}

const ARCHIVE_LABEL: &str = "Originals archived in: ";

/// The first line of a summary message.
pub fn summary_header(summarized_messages: usize, archive_path: Option<&str>) -> String {
    header_line(summarized_messages, SUMMARY_PHRASE, archive_path)
}

/// The phrase that tells a summary (an LLM wrote the text below its first line) from a notice.
const SUMMARY_PHRASE: &str = "was compacted into the summary below.";
/// How a notice says how many of the messages after it are the condensed form of what it
/// archived (selective compaction): "… into the next 12 messages."
const FOLLOWING_PHRASE: &str = "into the next ";

/// The first line of a notice: the message that stands where strategies without a summary
/// (`keep-recent`, `sliding-window`, `selective`, …) removed or condensed messages. It starts
/// like a summary (so a later compaction and `restoreMessages` recognise it and find its
/// archive) but is not one (see [`is_notice`]). `following` is how many of the messages right
/// after it are the condensed form of the archived ones (kept or cleared messages of a
/// selective compaction): `restoreMessages` replaces the notice *and* those with the archive.
pub fn notice_header(
    archived_messages: usize,
    how: &str,
    following: usize,
    archive_path: Option<&str>,
) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut line = format!(
        "{SUMMARY_PREFIX}Earlier conversation ({archived_messages} message{}) was {how}",
        plural(archived_messages)
    );
    if following > 0 {
        let _ = write!(
            line,
            " {FOLLOWING_PHRASE}{following} message{}",
            plural(following)
        );
    }
    line.push('.');
    match archive_path {
        Some(path) => {
            line.push(' ');
            line.push_str(ARCHIVE_LABEL);
            line.push_str(path);
        }
        None => line.push_str(" The originals were not archived."),
    }
    line
}

/// Is this message a notice ([`notice_header`]) rather than a summary?
pub fn is_notice(message: &Value) -> bool {
    summary_text(message)
        .and_then(|text| text.lines().next())
        .is_some_and(|first| !first.contains(SUMMARY_PHRASE))
}

/// How many messages after a notice stand for part of its archive (0 for summaries).
pub fn notice_following(message: &Value) -> usize {
    if !is_notice(message) {
        return 0;
    }
    let Some(first) = summary_text(message).and_then(|text| text.lines().next()) else {
        return 0;
    };
    // Only the part before the archive path, which is the caller's text.
    let first = first.split(ARCHIVE_LABEL).next().unwrap_or(first);
    first
        .split_once(FOLLOWING_PHRASE)
        .map(|(_, rest)| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

/// The whole content of a summary message.
pub fn summary_message_text(
    summarized_messages: usize,
    archive_path: Option<&str>,
    body: &str,
) -> String {
    format!(
        "{}\n\n{}",
        summary_header(summarized_messages, archive_path),
        body.trim()
    )
}

/// How long one tool result may be in the transcript before it is shortened (in chars).
/// `usize::MAX` renders everything.
#[derive(Debug, Clone, Copy)]
pub struct RenderLimits {
    pub max_tool_result_chars: usize,
}

impl Default for RenderLimits {
    fn default() -> Self {
        RenderLimits {
            max_tool_result_chars: usize::MAX,
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
                            render_block(
                                out,
                                role,
                                &mut wrote_header,
                                block,
                                &mut tool_names,
                                limits,
                            );
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
                        clip_middle(&arguments, 4_000)
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
                clip_middle(&input, 4_000)
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
    fn summary_messages_round_trip_their_parts() {
        let text = summary_message_text(
            12,
            Some("/tmp/x/compact-20260101T000000Z-1.json"),
            "## Goal\nship",
        );
        let message = json!({"role": "user", "content": text});
        assert!(is_summary_message(&message));
        assert_eq!(summary_body(&message), Some("## Goal\nship"));
        assert_eq!(
            summary_archive(&message),
            Some("/tmp/x/compact-20260101T000000Z-1.json")
        );
        let unarchived = json!({"role": "user", "content": summary_message_text(1, None, "b")});
        assert_eq!(summary_archive(&unarchived), None);
    }

    #[test]
    fn thinking_lines_name_the_kept_originals_of_the_one_archive_and_old_lines_still_read() {
        let path = "/tmp/x/s/compact-20260101T000000Z-7.json";
        let body = summary_message_text(3, Some(path), "## Goal\nship");
        let line = thinking_line_text(&[(0, false), (2, true)], Some(path));
        assert!(line.ends_with(&format!(
            "Originals: keptOriginals.thinkingRemoved of {path}]"
        )));
        let message = json!({"role": "user", "content": format!("{body}\n\n{line}")});
        assert_eq!(
            thinking_line(&message),
            Some(ThinkingLine {
                kept: vec![(0, false), (2, true)],
                archive: Some(path),
                kept_originals: true,
            })
        );
        assert_eq!(summary_body(&message), Some("## Goal\nship"));
        // As written before one compaction took one number: a whole archive of originals.
        let old = "[context-compact: thinking was removed from kept messages after this one (at 0, 2*; \
                   * held only thinking and was left out). Originals: /tmp/x/s/compact-20260101T000000Z-9.json]";
        let message = json!({"role": "user", "content": format!("{body}\n\n{old}")});
        assert_eq!(
            thinking_line(&message),
            Some(ThinkingLine {
                kept: vec![(0, false), (2, true)],
                archive: Some("/tmp/x/s/compact-20260101T000000Z-9.json"),
                kept_originals: false,
            })
        );
        let unarchived = thinking_line_text(&[(1, false)], None);
        let message = json!({"role": "user", "content": format!("{body}\n\n{unarchived}")});
        let line = thinking_line(&message).unwrap();
        assert_eq!((line.archive, line.kept_originals), (None, false));
    }

    #[test]
    fn notices_are_recognised_and_say_what_follows() {
        let path = "/tmp/x/compact-20260101T000000Z-2.json";
        let header = notice_header(40, "condensed by selective compaction", 12, Some(path));
        let notice = json!({"role": "user", "content": format!("{header}\n\nbody")});
        assert!(is_summary_message(&notice));
        assert!(is_notice(&notice));
        assert_eq!(notice_following(&notice), 12);
        assert_eq!(summary_archive(&notice), Some(path));
        let removed = notice_header(3, "removed by the keep-recent strategy", 0, None);
        let removed = json!({"role": "user", "content": removed});
        assert!(is_notice(&removed));
        assert_eq!(notice_following(&removed), 0);
        let summary = json!({"role": "user", "content": summary_message_text(5, Some(path), "x")});
        assert!(!is_notice(&summary));
        assert_eq!(notice_following(&summary), 0);
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
