//! The messages this library adds to a list — a summary, a notice where a strategy removed
//! messages, the line that says which kept messages lost their thinking — and how they are
//! recognised again: by a later compaction (an earlier summary in its middle, UC-002), by
//! `restoreMessages` (the archive each one names), by the formats (a summary in the list's own
//! shape). Every one starts with [`SUMMARY_PREFIX`].

use std::fmt::Write;

use serde_json::Value;

use crate::model::message::{block_type, role_of, Role};

/// Every summary message starts with this, so a later compaction can recognise an earlier
/// summary in its middle (UC-002) and `restoreMessages` can find the archive it names.
pub const SUMMARY_PREFIX: &str = "[context-compact] ";

/// Parses an archive's file name, `compact-<timestamp>-<sequence>.json`, into (timestamp,
/// sequence). Anything else (metadata files, temporary files, `.lock`, the audit log) is `None`.
/// The messages the library adds name archives by it, and nothing else is ever read from them.
pub fn parse_archive_file_name(name: &str) -> Option<(&str, u64)> {
    let stem = name.strip_prefix("compact-")?.strip_suffix(".json")?;
    if stem.ends_with(".meta") {
        return None;
    }
    parse_archive_stem(stem)
}

/// Is `name` an archive's file name ([`parse_archive_file_name`])?
pub fn is_archive_file_name(name: &str) -> bool {
    parse_archive_file_name(name).is_some()
}

/// `<YYYYMMDDTHHMMSSZ>-<sequence>` into (timestamp, sequence).
pub fn parse_archive_stem(stem: &str) -> Option<(&str, u64)> {
    let (timestamp, sequence) = stem.rsplit_once('-')?;
    let ts = timestamp.as_bytes();
    let digits = |range: std::ops::Range<usize>| ts[range].iter().all(u8::is_ascii_digit);
    if ts.len() != 16 || ts[8] != b'T' || ts[15] != b'Z' || !digits(0..8) || !digits(9..15) {
        return None;
    }
    if sequence.is_empty() || !sequence.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let sequence: u64 = sequence.parse().ok()?;
    Some((timestamp, sequence))
}

/// Does this message have the shape of a summary or notice of this library (it starts with
/// [`SUMMARY_PREFIX`])? The shape alone says nothing of who wrote it: a user, a tool output
/// pasted by one, or a model can start a message so. Whether the library did is
/// [`OwnSummaries::contains`], from its records.
pub fn is_summary_message(message: &Value) -> bool {
    summary_text(message).is_some()
}

/// The summaries and notices this library wrote, among the messages of a list (SPEC §11): those
/// its records name — the metadata beside the archive a summary names, a checkpoint — found by
/// the archive layer (`archive::provenance`). A message that merely starts with
/// [`SUMMARY_PREFIX`] is the caller's: it is summarized, carried and restored as the caller's
/// text, never parsed for sections or used to read an archive.
///
/// A summary is identified by the SHA-256 of its text without a trailing thinking line
/// ([`summary_identity`]): the thinking line belongs to the messages after it, and a checkpoint
/// reused later ends with another one.
#[derive(Debug, Clone, Default)]
pub struct OwnSummaries {
    digests: std::sync::Arc<std::collections::HashSet<[u8; 32]>>,
}

impl OwnSummaries {
    /// No message is the library's.
    pub fn none() -> OwnSummaries {
        OwnSummaries::default()
    }

    /// These messages, and only these, are the library's (each must have the shape of one).
    pub fn of<'a>(messages: impl IntoIterator<Item = &'a Value>) -> OwnSummaries {
        let mut own = OwnSummaries::default();
        for message in messages {
            own.insert(message);
        }
        own
    }

    /// `message` is the library's too.
    pub fn insert(&mut self, message: &Value) {
        if let Some(digest) = summary_identity(message) {
            std::sync::Arc::make_mut(&mut self.digests).insert(digest);
        }
    }

    /// Was `message` written by the library (a summary or notice its records name)?
    pub fn contains(&self, message: &Value) -> bool {
        !self.digests.is_empty()
            && summary_identity(message).is_some_and(|digest| self.digests.contains(&digest))
    }

    /// Where in `messages` the last summary the library recorded is: the one an update of the
    /// summary goes on from (notices, left by strategies without a summary, start like
    /// summaries but hold none).
    pub fn last_summary_in(&self, messages: &[Value]) -> Option<usize> {
        messages
            .iter()
            .rposition(|m| self.contains(m) && !is_notice(m))
    }

    /// How many summaries are known.
    pub fn len(&self) -> usize {
        self.digests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }
}

/// The identity of a summary or notice message: the SHA-256 of its text
/// ([`summary_text`]) without a trailing thinking line. `None` for any other message.
pub fn summary_identity(message: &Value) -> Option<[u8; 32]> {
    let text = summary_text(message)?;
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        text_without_thinking_line(text).as_bytes(),
    );
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    Some(out)
}

/// [`summary_identity`] as lowercase hex (how the archive metadata records it).
pub fn summary_identity_hex(message: &Value) -> Option<String> {
    summary_identity(message).map(|bytes| {
        bytes.iter().fold(String::with_capacity(64), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
    })
}

/// The text of a summary without its thinking line, as [`without_thinking_line`] leaves it.
///
/// The line is written after a blank line; only that separator goes with it, so the text before
/// keeps its own trailing white space (the last entry of a section is exactly as long as its
/// header says, spaces and newlines included).
pub fn text_without_thinking_line(text: &str) -> &str {
    let trimmed = text.trim_end();
    match trimmed.rsplit_once('\n') {
        Some((before, last)) if parse_thinking_line(last).is_some() => {
            before.strip_suffix('\n').unwrap_or(before)
        }
        _ => text,
    }
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
    Some(text_without_thinking_line(body))
}

/// The last line of a summary or notice after which kept messages had their thinking removed
/// (the thinking policy): which of the following messages (by position, `*` for one left out
/// because it held only thinking) and where their originals are, for `restoreMessages`.
const THINKING_LINE_START: &str =
    "[context-compact: thinking was removed from kept messages after this one (at ";
/// Said after the positions only when one of them is starred (lines written before this rule
/// say it always; both are read).
const THINKING_LINE_LEFT_OUT: &str = "; * held only thinking and was left out";
const THINKING_LINE_ARCHIVE: &str = ". Originals: ";
/// Where in the compaction's archive the originals are (the archive's
/// `keptOriginals.thinkingRemoved`, see the archive layer), before the archive's path. A line
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
    let starred = kept.iter().any(|(_, left_out)| *left_out);
    let mut line = format!(
        "{THINKING_LINE_START}{}{})",
        positions.join(", "),
        if starred { THINKING_LINE_LEFT_OUT } else { "" }
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
    // Only a line after the first one: the first line is the summary's header.
    let (_, last) = text.trim_end().rsplit_once('\n')?;
    parse_thinking_line(last)
}

/// Reads one thinking line.
fn parse_thinking_line(last: &str) -> Option<ThinkingLine<'_>> {
    let rest = last.strip_prefix(THINKING_LINE_START)?;
    // The positions are digits, "*" and ", ": the first ")" closes them.
    let (positions, rest) = rest.split_once(')')?;
    let positions = positions
        .strip_suffix(THINKING_LINE_LEFT_OUT)
        .unwrap_or(positions);
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

/// `message` (a summary or notice) without its thinking line: the message as it stands for
/// what it replaced, before anything was said of the kept messages after it. A checkpoint keeps
/// this form, since the line belongs to the messages that followed that time.
pub fn without_thinking_line(message: &Value) -> Value {
    let Some(text) = summary_text(message) else {
        return message.clone();
    };
    if thinking_line(message).is_none() {
        return message.clone();
    }
    with_summary_text(message, text_without_thinking_line(text).to_string())
}

/// `message` (a summary or notice) with its text replaced by `text`, every other field as it
/// was (the signed compaction block of a native summary included).
pub fn with_summary_text(message: &Value, text: String) -> Value {
    let mut out = message.clone();
    match role_of(message) {
        Some(Role::User) => {
            if let Some(content) = out.get_mut("content") {
                *content = Value::String(text);
            }
        }
        Some(Role::Assistant) => {
            if let Some(blocks) = out.get_mut("content").and_then(Value::as_array_mut) {
                if let Some(block) = blocks.iter_mut().skip(1).find(|block| {
                    block_type(block) == "text"
                        && block
                            .get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| t.starts_with(SUMMARY_PREFIX))
                }) {
                    block["text"] = Value::String(text);
                }
            }
        }
        _ => {}
    }
    out
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
/// archive) but is not one (see [`is_notice`]). `stood_for` is how many messages it stands for
/// (the result's `compactedMessageCount`): the archived messages not among the `following`
/// ones. `following` is how many of the messages right after it are the condensed form of the
/// rest of the archive (kept or cleared messages of a selective compaction): `restoreMessages`
/// replaces the notice *and* those with the archive.
pub fn notice_header(
    stood_for: usize,
    how: &str,
    following: usize,
    archive_path: Option<&str>,
) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut line = format!(
        "{SUMMARY_PREFIX}Earlier conversation ({stood_for} message{}) was {how}",
        plural(stood_for)
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
    // Only the start is trimmed: the body may end with an entry of the user's messages whose
    // text ends with spaces or newlines, and its header counts them.
    format!(
        "{}\n\n{}",
        summary_header(summarized_messages, archive_path),
        body.trim_start()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn a_body_keeps_its_trailing_white_space_with_and_without_a_thinking_line() {
        // The last entry of a section may end with spaces or newlines: its header counts them.
        let body =
            "## Goal\nx\n\n## User messages (verbatim)\n[user message · 6 characters]\nhi  \n\n";
        let text = summary_message_text(2, Some("/a/compact-20260101T000000Z-1.json"), body);
        assert!(text.ends_with("hi  \n\n"));
        let message = json!({"role": "user", "content": text.clone()});
        assert_eq!(summary_body(&message), Some(body));
        let line = thinking_line_text(&[(0, false)], Some("/a/compact-20260101T000000Z-1.json"));
        let with_line = json!({"role": "user", "content": format!("{text}\n\n{line}")});
        assert_eq!(summary_body(&with_line), Some(body));
        assert_eq!(without_thinking_line(&with_line), message);
        assert_eq!(summary_identity(&with_line), summary_identity(&message));
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
        // The star is explained only where one is drawn.
        assert!(thinking_line_text(&[(0, false), (2, true)], Some(path))
            .contains("(at 0, 2*; * held only thinking and was left out). Originals: "));
        let plain = thinking_line_text(&[(1, false), (4, false)], Some(path));
        assert!(!plain.contains("held only thinking"), "{plain}");
        assert!(plain.contains("(at 1, 4). Originals: keptOriginals.thinkingRemoved of "));
        let message = json!({"role": "user", "content": format!("{body}\n\n{plain}")});
        let line = thinking_line(&message).unwrap();
        assert_eq!(line.kept, vec![(1, false), (4, false)]);
        assert_eq!(line.archive, Some(path));
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
        // The wording of today's selective notice (what it stands for is not what follows).
        let header = notice_header(
            28,
            "removed by selective compaction, the rest condensed",
            12,
            Some(path),
        );
        assert!(header.contains("(28 messages) was removed by selective compaction, the rest condensed into the next 12 messages."));
        let notice = json!({"role": "user", "content": header});
        assert!(is_notice(&notice));
        assert_eq!(notice_following(&notice), 12);
        let removed = notice_header(3, "removed by the keep-recent strategy", 0, None);
        let removed = json!({"role": "user", "content": removed});
        assert!(is_notice(&removed));
        assert_eq!(notice_following(&removed), 0);
        let summary = json!({"role": "user", "content": summary_message_text(5, Some(path), "x")});
        assert!(!is_notice(&summary));
        assert_eq!(notice_following(&summary), 0);
    }

    #[test]
    fn a_thinking_line_comes_off_and_every_other_field_stays() {
        let base = summary_message_text(
            4,
            Some("/a/compact-20260101T000000Z-1.json"),
            "## Goal\nship",
        );
        let line = thinking_line_text(
            &[(0, false), (2, true)],
            Some("/a/compact-20260101T000000Z-2.json"),
        );
        let user = json!({"role": "user", "content": format!("{base}\n\n{line}"), "extra": 1});
        assert!(thinking_line(&user).is_some());
        let plain = without_thinking_line(&user);
        assert_eq!(
            plain,
            json!({"role": "user", "content": base.clone(), "extra": 1})
        );
        // Without a line: the very same message.
        assert_eq!(without_thinking_line(&plain), plain);
        let block = json!({"type": "compaction", "content": "native summary", "signature": "s"});
        let native = json!({"role": "assistant", "content": [block.clone(), {"type": "text", "text": format!("{base}\n\n{line}")}]});
        assert_eq!(
            without_thinking_line(&native),
            json!({"role": "assistant", "content": [block, {"type": "text", "text": base}]})
        );
    }
}
