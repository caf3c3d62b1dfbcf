//! The user's own messages, carried verbatim into the summary (SPEC §4.12). A summary model
//! restates what the user asked in its own words, and corrections or changes of mind get lost
//! ("loses track of the original task goal"); the user's words themselves are what an agent
//! resumes from. Like the ledger, this section is built deterministically from the messages,
//! whoever writes the summary, and carried forward through later compactions.
//!
//! User-authored means text from the user: the text of user messages, not tool results, and
//! not the summaries and notices the library wrote ([`crate::model::added`]). The task the agent
//! was given is the session's first user message that asks for something ([`is_request`]):
//! a command (`/mode`, `/clear`, `/model …`), a greeting or an acknowledgement shorter than a
//! sentence ("hi", "ok thanks", "continue") and a message in the library's shape are skipped;
//! when none asks for anything, the first user message is the task. It is always carried,
//! beside the most recent ones (an agent that keeps only the latest requests "loses track of the
//! original task goal"). Within a budget of tokens the task and the most recent messages are
//! kept whole; a message larger than its share keeps its beginning and its end with a marker;
//! how many were left out is always said, even when the budget cannot hold a single message.

use serde_json::Value;

use crate::carry::sections::{self, entry_header, USER_MESSAGES_HEADER};
use crate::model::added::OwnSummaries;
use crate::model::message::{block_type, role_of, Role};
use crate::model::tokens::{self, Encoding};

const LABEL: &str = "user message";
/// The label of the task: the session's first user message that asks for something.
const TASK_LABEL: &str = "task (the user's first request)";
/// The label summaries written before the rule above gave the task (the first user message).
const OLD_TASK_LABEL: &str = "task (the first user message)";
const SHORTENED_NOTE: &str = "shortened from ";
/// What the line that counts the messages left out says before the budget.
const LEFT_OUT_NOTE: &str = "left out to stay within";

/// One message's text, as carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub text: String,
    /// The original length in characters, when the text was shortened to fit the budget.
    pub shortened_from: Option<usize>,
    /// The task the agent was given: the session's first user message that asks for
    /// something ([`is_request`]), else its first user message.
    pub task: bool,
}

impl Carried {
    fn label(&self) -> &'static str {
        if self.task {
            TASK_LABEL
        } else {
            LABEL
        }
    }
}

/// The user's messages a summary carries, oldest first, and how many earlier ones were left
/// out to fit the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserMessages {
    pub messages: Vec<Carried>,
    pub left_out: usize,
}

/// The text the user wrote in `message`: a user message's string content, or its text blocks
/// joined by blank lines; `None` for tool results only, for messages of other roles, for an
/// empty text, and for the messages the library wrote (`own`: those its records name; a user
/// message that merely starts like one is the user's, carried as one entry).
pub fn user_text(message: &Value, own: &OwnSummaries) -> Option<String> {
    if role_of(message) != Some(Role::User) || own.contains(message) {
        return None;
    }
    let text = match message.get("content")? {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block_type(block) == "text")
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

/// Words of greetings and acknowledgements: a message made of a few of them asks for nothing
/// ("hi", "ok thanks", "sounds good", "continue", "yes please").
const SMALL_TALK: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "heya",
    "hiya",
    "howdy",
    "yo",
    "greetings",
    "morning",
    "afternoon",
    "evening",
    "good",
    "day",
    "there",
    "all",
    "thanks",
    "thank",
    "you",
    "thx",
    "ty",
    "cheers",
    "ok",
    "okay",
    "k",
    "kk",
    "okey",
    "sure",
    "yes",
    "yeah",
    "yep",
    "yup",
    "y",
    "no",
    "nope",
    "right",
    "alright",
    "great",
    "cool",
    "nice",
    "perfect",
    "awesome",
    "excellent",
    "fine",
    "got",
    "it",
    "understood",
    "sounds",
    "so",
    "far",
    "looks",
    "lgtm",
    "done",
    "agreed",
    "continue",
    "go",
    "on",
    "ahead",
    "proceed",
    "please",
    "pls",
    "again",
    "much",
    "very",
    "a",
    "lot",
    "that",
    "works",
    "wonderful",
    "neat",
    "welcome",
    "bye",
    "ciao",
];

/// The most words a greeting or an acknowledgement has, in this rule: "ok thanks, looks good
/// so far" is six; a request is rarely made of such words alone.
const SMALL_TALK_MAX_WORDS: usize = 6;

/// Does `text` (a user's message) ask for something? Not when it is a command — a slash
/// command (`/mode`, `/clear`, `/model opus`: a first word `/name` that is not a path) or the
/// wrappers Claude Code records commands in (`<command-name>`, `<local-command-stdout>`) — nor
/// when it is a greeting or an acknowledgement shorter than a sentence: a few words, all of
/// them small talk ([`SMALL_TALK`]), nor when it has the shape of the library's own messages.
/// Any other text is a request, however short ("Implement spotter-gqc", "fix the tests").
pub fn is_request(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.starts_with(crate::model::added::SUMMARY_PREFIX.trim_end()) {
        return false;
    }
    const COMMAND_TAGS: &[&str] = &[
        "<command-name>",
        "<command-message>",
        "<command-args>",
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
    ];
    if COMMAND_TAGS.iter().any(|tag| trimmed.starts_with(tag)) {
        return false;
    }
    if let Some(name) = trimmed
        .strip_prefix('/')
        .map(|rest| rest.split_whitespace().next().unwrap_or(""))
    {
        // `/mode`, `/model`, `/compact`, `/review:pr`; not `/home/me/a.py is broken` (a path),
        // not `//` or `/*` (code).
        let is_command = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c));
        if is_command {
            return false;
        }
    }
    let words: Vec<String> = trimmed
        .split(|c: char| c.is_whitespace() || ",.;!?…".contains(c))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let small_talk = words.len() <= SMALL_TALK_MAX_WORDS
        && words.iter().all(|word| {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric());
            word.is_empty() || SMALL_TALK.contains(&word)
        });
    !small_talk
}

impl UserMessages {
    /// Every user-authored text of `messages`, in order (`own`: see [`user_text`]).
    pub fn extract(messages: &[Value], own: &OwnSummaries) -> UserMessages {
        UserMessages {
            messages: messages
                .iter()
                .filter_map(|message| user_text(message, own))
                .map(|text| Carried {
                    text,
                    shortened_from: None,
                    task: false,
                })
                .collect(),
            left_out: 0,
        }
    }

    /// [`UserMessages::extract`] of the start of a session: its first user message that asks
    /// for something ([`is_request`]) is the task, else its first user message; none is when
    /// one of the library's summaries or notices (`own`) comes before the first user message
    /// (what came before that is not in `messages`).
    pub fn extract_session(messages: &[Value], own: &OwnSummaries) -> UserMessages {
        let mut users = UserMessages::extract(messages, own);
        let first_user = messages.iter().position(|m| user_text(m, own).is_some());
        let summarized_before =
            first_user.is_some_and(|at| messages[..at].iter().any(|m| own.contains(m)));
        if !summarized_before {
            users.mark_task();
        }
        users
    }

    /// Marks the task among these messages: the first that asks for something, else the
    /// first. (None when there are no messages.)
    fn mark_task(&mut self) {
        let at = self
            .messages
            .iter()
            .position(|m| is_request(&m.text))
            .unwrap_or(0);
        if let Some(task) = self.messages.get_mut(at) {
            task.task = true;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.left_out == 0
    }

    /// `earlier` (from the summary being updated) followed by these. When the task `earlier`
    /// carries asks for nothing (a session that opened with a command and had not asked for
    /// anything yet when it was compacted), the first message that asks for something becomes
    /// the task.
    pub fn merged_after(mut self, earlier: &UserMessages) -> UserMessages {
        let mut messages = earlier.messages.clone();
        messages.append(&mut self.messages);
        let mut merged = UserMessages {
            messages,
            left_out: earlier.left_out + self.left_out,
        };
        let placeholder = merged
            .messages
            .iter()
            .position(|m| m.task && !is_request(&m.text));
        if let Some(at) = placeholder {
            if let Some(request) = merged.messages.iter().position(|m| is_request(&m.text)) {
                merged.messages[at].task = false;
                merged.messages[request].task = true;
            }
        }
        merged
    }

    /// Within `max_tokens` (the whole section as rendered, headers included): the task (when
    /// one of the messages is the session's task) whole when it fits, and the most recent
    /// messages whole, as many as fit beside it; a task larger than the budget keeps its
    /// beginning and end in half of it (the most recent messages the other half), and the most
    /// recent message, when none fits whole, its beginning and end. The rest are counted in
    /// `left_out`; the task is never among them while anything is kept. Kept messages stay in
    /// their order. When the budget cannot even hold the section's header and that count, the
    /// section is only those (a few tokens over the budget): what was left out is always said.
    pub fn fit(self, max_tokens: usize, encoding: Encoding) -> UserMessages {
        let total = self.messages.len();
        let earlier_left_out = self.left_out;
        let entry_cost = |message: &Carried| {
            let header = entry_header(message.label(), message.text.chars().count(), None);
            // The header and the blank line before it, and the note of a shortened message.
            tokens::count_text(encoding, &header) + 8 + tokens::count_text(encoding, &message.text)
        };
        // The frame: header and the line of introduction, and, when something is left out, the
        // line that says how much.
        let frame = |left_out: usize, intro: bool| {
            tokens::count_text(encoding, &frame_text(left_out, intro, max_tokens))
        };
        if earlier_left_out == 0
            && frame(0, true) + self.messages.iter().map(entry_cost).sum::<usize>() <= max_tokens
        {
            return self;
        }
        let used = frame(earlier_left_out + total.max(1), true);
        if used >= max_tokens {
            return UserMessages {
                messages: Vec::new(),
                left_out: earlier_left_out + total,
            };
        }
        let room = max_tokens - used;
        // Each message with its place, so that what is kept stays in order.
        let mut messages: Vec<(usize, Carried)> = self.messages.into_iter().enumerate().collect();
        let task = messages
            .iter()
            .position(|(_, m)| m.task)
            .map(|at| messages.remove(at));
        // What the task keeps for itself: all of it when it fits the room; when even it does
        // not, its two ends in half the room (all of it when nothing else competes), so that
        // the most recent messages are still beside it.
        let reserved = task.as_ref().map_or(0, |(_, task)| {
            let cost = entry_cost(task);
            if cost <= room {
                cost
            } else if messages.is_empty() {
                room
            } else {
                room / 2
            }
        });
        let mut used = 0;
        let mut kept: Vec<(usize, Carried)> = Vec::new();
        for (at, message) in messages.into_iter().rev() {
            let cost = entry_cost(&message);
            if used + cost + reserved <= room {
                used += cost;
                kept.push((at, message));
                continue;
            }
            if kept.is_empty() {
                let shortened = shorten_into(message, room - reserved - used, encoding);
                used += shortened.as_ref().map_or(0, entry_cost);
                kept.extend(shortened.map(|m| (at, m)));
            }
            break;
        }
        if let Some((at, task)) = task {
            // The task takes what the others left, at least its share.
            let left = room - used;
            if entry_cost(&task) <= left {
                kept.push((at, task));
            } else if let Some(shortened) = shorten_into(task, left, encoding) {
                kept.push((at, shortened));
            }
        }
        kept.sort_by_key(|(at, _)| *at);
        UserMessages {
            left_out: earlier_left_out + (total - kept.len()),
            messages: kept.into_iter().map(|(_, m)| m).collect(),
        }
    }

    /// The section, or an empty string when there is nothing to say.
    pub fn render(&self, max_tokens: usize) -> String {
        if self.is_empty() {
            return String::new();
        }
        let mut out = frame_text(self.left_out, !self.messages.is_empty(), max_tokens);
        // Each entry's text exactly as it is (its own trailing newlines included): its header
        // says how long it is. A blank line between entries.
        for (n, message) in self.messages.iter().enumerate() {
            let note = message
                .shortened_from
                .map(|chars| format!("{SHORTENED_NOTE}{chars} characters"));
            out.push_str(if n == 0 { "\n" } else { "\n\n" });
            out.push_str(&entry_header(
                message.label(),
                message.text.chars().count(),
                note.as_deref(),
            ));
            out.push('\n');
            out.push_str(&message.text);
        }
        out
    }

    /// The section of a summary body written by [`UserMessages::render`].
    pub fn parse(body: &str) -> Option<UserMessages> {
        let section = sections::split(body).user_messages?;
        let (notes, entries) = sections::entries(section);
        let left_out = notes
            .iter()
            .find_map(|line| {
                let digits: String = line
                    .strip_prefix('(')?
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                // " earlier user message": as summaries written before the task was kept said.
                (line.contains(LEFT_OUT_NOTE) || line.contains(" earlier user message"))
                    .then(|| digits.parse().ok())
                    .flatten()
            })
            .unwrap_or(0);
        let messages = entries
            .into_iter()
            .filter(|entry| [LABEL, TASK_LABEL, OLD_TASK_LABEL].contains(&entry.label))
            .map(|entry| Carried {
                task: entry.label == TASK_LABEL || entry.label == OLD_TASK_LABEL,
                text: entry.text.to_string(),
                shortened_from: entry.notes.iter().find_map(|note| {
                    note.strip_prefix(SHORTENED_NOTE)?
                        .strip_suffix(" characters")?
                        .parse()
                        .ok()
                }),
            })
            .collect();
        Some(UserMessages { messages, left_out })
    }
}

/// The warning a compaction gives when the section of `body` (its summary) leaves out or
/// shortens user messages beyond what the summary it updates already did (`earlier`, that
/// summary's body): the user's words are what the section promises, so losing some of them
/// is said, once.
pub fn losses_warning(body: &str, earlier: Option<&str>) -> Option<String> {
    let now = UserMessages::parse(body)?;
    let before = earlier.and_then(UserMessages::parse).unwrap_or_default();
    let shortened = |users: &UserMessages| {
        users
            .messages
            .iter()
            .filter(|m| m.shortened_from.is_some())
            .count()
    };
    let left_out = now.left_out.saturating_sub(before.left_out);
    let cut = shortened(&now).saturating_sub(shortened(&before));
    if left_out == 0 && cut == 0 {
        return None;
    }
    let task_shortened = |users: &UserMessages| {
        users
            .messages
            .iter()
            .any(|m| m.task && m.shortened_from.is_some())
    };
    let task_cut = task_shortened(&now) && !task_shortened(&before);
    let mut parts = Vec::new();
    if left_out > 0 {
        parts.push(format!("{left_out} of the user's messages were left out"));
    }
    if cut > 0 {
        parts.push(format!(
            "{cut} {} shortened{}",
            if cut == 1 { "was" } else { "were" },
            if task_cut {
                " (the task among them)"
            } else {
                ""
            }
        ));
    }
    Some(format!(
        "the summary's section of the user's messages (userMessagesMaxTokens) could not hold them all: {}; the archive holds them",
        parts.join(" and ")
    ))
}

/// `body` without its section of user messages, not even the count of what was left out
/// (`None` when it has none): only when a window is too tight for that line; the result's
/// warnings say it then.
pub fn without_section(body: &str) -> Option<String> {
    let section = sections::split(body).user_messages?;
    Some(sections::remove_section(body, section))
}

/// The section without its entries: the header, the line of introduction (when there are
/// entries) and the count of what was left out (when something was).
fn frame_text(left_out: usize, intro: bool, max_tokens: usize) -> String {
    let mut out = String::from(USER_MESSAGES_HEADER);
    if intro {
        out.push_str("\nWhat the user wrote in the compacted part of the conversation, word for word, oldest first.");
    }
    if left_out > 0 {
        let plural = if left_out == 1 { "" } else { "s" };
        out.push_str(&format!(
            "\n({left_out} user message{plural} {LEFT_OUT_NOTE} {max_tokens} tokens; the archived originals hold them.)"
        ));
    }
    out
}

/// `body` (a summary body, or the text beside a native compaction block) with its section of
/// user messages fitted again into `max_tokens` (see [`UserMessages::fit`]): when the result of
/// a compaction is over the threshold, the section gives way before the post-condition does.
/// `None` when `body` has no such section.
pub fn refit_section(body: &str, max_tokens: usize, encoding: Encoding) -> Option<String> {
    let section = sections::split(body).user_messages?;
    // The section is a slice of `body`: its place in it.
    let start = section.as_ptr() as usize - body.as_ptr() as usize;
    let end = start + section.len();
    let fitted = Some(UserMessages::parse(body)?.fit(max_tokens, encoding))
        .filter(|users| !users.is_empty())
        .map(|users| users.render(max_tokens));
    let before = body[..start].trim_end_matches('\n');
    let after = body[end..].trim_start_matches('\n');
    let mut out = String::with_capacity(body.len());
    for part in [before, fitted.as_deref().unwrap_or(""), after] {
        if part.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(part);
    }
    Some(out)
}

/// `message` cut to fit an entry of `room` tokens (its header included); `None` when not even
/// a few words fit.
fn shorten_into(message: Carried, room: usize, encoding: Encoding) -> Option<Carried> {
    let header = entry_header(message.label(), message.text.chars().count(), None);
    let text_room = room.saturating_sub(tokens::count_text(encoding, &header) + 8);
    shorten(message, text_room, encoding)
}

/// `message` cut to `max_tokens`: its beginning (two thirds) and its end, with a marker
/// saying how much is left out between them; `None` when not even a few words fit beside the
/// marker.
fn shorten(message: Carried, max_tokens: usize, encoding: Encoding) -> Option<Carried> {
    let chars: Vec<char> = message.text.chars().collect();
    let original = message.shortened_from.unwrap_or(chars.len());
    let cut = |keep: usize| -> String {
        let head = keep * 2 / 3;
        let tail = keep - head;
        let mut out: String = chars[..head].iter().collect();
        out.push_str(&format!(
            "\n[… {} characters of this message left out …]\n",
            chars.len() - keep
        ));
        out.extend(&chars[chars.len() - tail..]);
        out
    };
    // The longest cut that fits, found by halving (counts of cut text are not proportional to
    // its length).
    let (mut low, mut high) = (0, chars.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if tokens::count_text(encoding, &cut(mid)) <= max_tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    // A cut that keeps almost nothing of the message says nothing of it.
    if low < MIN_SHORTENED_CHARS.min(chars.len()) {
        return None;
    }
    Some(Carried {
        text: cut(low),
        shortened_from: Some(original),
        task: message.task,
    })
}

/// The fewest characters of a shortened message worth keeping.
const MIN_SHORTENED_CHARS: usize = 40;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::added;
    use serde_json::json;

    #[test]
    fn only_what_the_user_wrote_is_taken() {
        let messages = vec![
            json!({"role": "system", "content": "sys"}),
            json!({"role": "user", "content": "first ask"}),
            json!({"role": "assistant", "content": "ok"}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "1", "content": "output"},
                {"type": "text", "text": "and also this"}
            ]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "2", "content": "x"}]}),
            json!({"role": "tool", "tool_call_id": "3", "content": "y"}),
            json!({"role": "user", "content": added::summary_message_text(3, None, "old")}),
            json!({"role": "user", "content": "   "}),
        ];
        // The summary is the library's when its records say so (here: told); a message that
        // only starts like one is the user's, one entry as it is.
        let own = OwnSummaries::of([&messages[6]]);
        let found = UserMessages::extract(&messages, &own);
        let texts: Vec<&str> = found.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, vec!["first ask", "and also this"]);
        let found = UserMessages::extract(&messages, &OwnSummaries::none());
        assert_eq!(found.messages.len(), 3);
        assert_eq!(
            found.messages[2].text,
            messages[6]["content"].as_str().unwrap()
        );
    }

    #[test]
    fn over_the_budget_the_most_recent_stay_whole_and_the_rest_are_counted() {
        let make = |n: usize| Carried {
            text: format!("message {n} {}", "word ".repeat(40)),
            shortened_from: None,
            task: false,
        };
        let all = UserMessages {
            messages: (0..6).map(make).collect(),
            left_out: 2,
        };
        let two = UserMessages {
            messages: vec![make(4), make(5)],
            left_out: 6,
        };
        let budget = tokens::count_text(Encoding::O200kBase, &two.render(1)) + 20;
        let fitted = all.clone().fit(budget, Encoding::O200kBase);
        assert_eq!(fitted.messages, vec![make(4), make(5)]);
        assert_eq!(fitted.left_out, 6);
        let rendered = fitted.render(budget);
        assert!(tokens::count_text(Encoding::O200kBase, &rendered) <= budget);
        assert!(rendered.contains("(6 user messages left out to stay within"));
        assert_eq!(UserMessages::parse(&rendered), Some(fitted));
        // A budget that cannot hold the section: only how many were left out is said.
        let none = all.fit(10, Encoding::O200kBase);
        assert_eq!(none.messages, Vec::new());
        assert_eq!(none.left_out, 8);
        assert_eq!(
            none.render(10),
            format!("{USER_MESSAGES_HEADER}\n(8 user messages left out to stay within 10 tokens; the archived originals hold them.)")
        );
        assert_eq!(UserMessages::parse(&none.render(10)), Some(none));
        // One message over the whole budget: its beginning and end, marked.
        let big = UserMessages {
            messages: vec![Carried {
                text: format!("BEGIN {} END", "lorem ipsum ".repeat(2_000)),
                shortened_from: None,
                task: false,
            }],
            left_out: 0,
        };
        let cut = big.fit(200, Encoding::O200kBase);
        let text = &cut.messages[0].text;
        assert!(
            text.starts_with("BEGIN ") && text.ends_with(" END"),
            "{text}"
        );
        assert!(text.contains("characters of this message left out"));
        assert!(tokens::count_text(Encoding::O200kBase, &cut.render(200)) <= 200);
        assert_eq!(cut.messages[0].shortened_from, Some(24_010));
        assert_eq!(cut.left_out, 0);
        let back = UserMessages::parse(&cut.render(200)).unwrap();
        assert_eq!(back, cut);
    }

    #[test]
    fn the_task_stays_beside_the_most_recent_messages() {
        let session: Vec<Value> = std::iter::once(json!({"role": "system", "content": "sys"}))
            .chain((0..12).map(|n| {
                json!({"role": "user", "content": format!("request {n}: {}", "word ".repeat(60))})
            }))
            .collect();
        let users = UserMessages::extract_session(&session, &OwnSummaries::none());
        assert!(users.messages[0].task && !users.messages[1].task);
        let budget = 400;
        let fitted = users.clone().fit(budget, Encoding::O200kBase);
        let rendered = fitted.render(budget);
        assert!(tokens::count_text(Encoding::O200kBase, &rendered) <= budget);
        assert!(fitted.messages[0].task);
        assert_eq!(fitted.messages[0].text, users.messages[0].text);
        assert_eq!(fitted.messages.last(), users.messages.last());
        assert_eq!(fitted.left_out, 12 - fitted.messages.len());
        assert!(rendered.contains("[task (the user's first request) · "));
        let back = UserMessages::parse(&rendered).unwrap();
        assert_eq!(back, fitted);
        // Carried forward: still the task, whatever follows.
        let later = UserMessages::extract(
            &[json!({"role": "user", "content": "one more"})],
            &OwnSummaries::none(),
        )
        .merged_after(&back)
        .fit(budget, Encoding::O200kBase);
        assert!(later.messages[0].task);
        assert_eq!(later.messages.last().unwrap().text, "one more");
        assert_eq!(
            later.left_out,
            fitted.left_out + 1 + fitted.messages.len() - later.messages.len()
        );
        // A task larger than its share: its beginning and end, marked, and still the task.
        let long_task = vec![
            json!({"role": "user", "content": format!("TASK-BEGIN {} TASK-END", "spec ".repeat(3_000))}),
            json!({"role": "user", "content": "latest"}),
        ];
        let fitted = UserMessages::extract_session(&long_task, &OwnSummaries::none())
            .fit(300, Encoding::O200kBase);
        let task = &fitted.messages[0];
        assert!(task.task && task.shortened_from.is_some());
        assert!(task.text.starts_with("TASK-BEGIN") && task.text.ends_with("TASK-END"));
        assert_eq!(fitted.messages[1].text, "latest");
        assert!(tokens::count_text(Encoding::O200kBase, &fitted.render(300)) <= 300);
        // After a summary, the first user message is not the session's.
        let after_summary = vec![
            json!({"role": "user", "content": added::summary_message_text(3, None, "old")}),
            json!({"role": "user", "content": "next"}),
        ];
        let own = OwnSummaries::of([&after_summary[0]]);
        assert!(!UserMessages::extract_session(&after_summary, &own).messages[0].task);
        // One that only looks like a summary is the user's message, carried as such; it asks
        // for nothing, so the next one is the task.
        let forged = UserMessages::extract_session(&after_summary, &OwnSummaries::none());
        assert!(!forged.messages[0].task && forged.messages[1].task);
        assert_eq!(forged.messages.len(), 2);
    }

    #[test]
    fn what_asks_for_something() {
        for request in [
            "read packages/coding-agent/docs/theme.md in full, then theme.ts",
            "Implement spotter-gqc",
            "fix the tests",
            "Hello! Can you create a new Python file named hello.py that prints 'Hello, World!'?",
            "/home/me/src/a.py is broken, look at it",
            "// TODO: port this",
            "ok, now rename the module",
            "thanks — next, add a test for the parser",
            "Work on bead spotter-4te.",
        ] {
            assert!(is_request(request), "{request:?}");
        }
        for not in [
            "/mode",
            "/clear",
            "/model claude-opus-4-6",
            "/review:pr 12",
            "  /compact  ",
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
            "<local-command-stdout>Set model to opus</local-command-stdout>",
            "hi",
            "Hello!",
            "hey there",
            "good morning",
            "ok",
            "OK, thanks!",
            "sounds good",
            "looks good so far, continue",
            "continue",
            "go ahead",
            "yes please",
            "thank you very much",
            "👍",
            "",
            "[context-compact] Earlier conversation was compacted.",
        ] {
            assert!(!is_request(not), "{not:?}");
        }
    }

    #[test]
    fn the_task_is_the_first_request() {
        let texts = |session: &[&str]| -> Vec<Value> {
            session
                .iter()
                .map(|text| json!({"role": "user", "content": text}))
                .collect()
        };
        let task_of = |users: &UserMessages| {
            users
                .messages
                .iter()
                .find(|m| m.task)
                .map(|m| m.text.clone())
        };
        // A session opening with a command (pi-session-large opens with `/mode`).
        let opened = texts(&[
            "/mode",
            "read theme.md in full, then theme.ts",
            "continue",
            "/them",
            "now the selectors",
        ]);
        let users = UserMessages::extract_session(&opened, &OwnSummaries::none());
        assert_eq!(
            task_of(&users).as_deref(),
            Some("read theme.md in full, then theme.ts")
        );
        assert_eq!(users.messages.iter().filter(|m| m.task).count(), 1);
        // Opening with a greeting, then an acknowledgement.
        let greeted = texts(&["hi!", "ok", "Add a --json flag to the CLI"]);
        let users = UserMessages::extract_session(&greeted, &OwnSummaries::none());
        assert_eq!(
            task_of(&users).as_deref(),
            Some("Add a --json flag to the CLI")
        );
        // Nothing asks for anything: the first user message.
        let short = texts(&["/mode", "hi", "continue"]);
        let users = UserMessages::extract_session(&short, &OwnSummaries::none());
        assert_eq!(task_of(&users).as_deref(), Some("/mode"));
        // ... until a later compaction carries it and a request follows: that is the task.
        let later = UserMessages::extract(
            &texts(&["ok", "Port the themes to the TUI"]),
            &OwnSummaries::none(),
        )
        .merged_after(&users);
        assert_eq!(
            task_of(&later).as_deref(),
            Some("Port the themes to the TUI")
        );
        assert_eq!(later.messages.iter().filter(|m| m.task).count(), 1);
        // A carried task that is a request stays the task.
        let carried = UserMessages::extract_session(&opened, &OwnSummaries::none());
        let later =
            UserMessages::extract(&texts(&["Another request entirely"]), &OwnSummaries::none())
                .merged_after(&carried);
        assert_eq!(
            task_of(&later).as_deref(),
            Some("read theme.md in full, then theme.ts")
        );
    }

    #[test]
    fn a_task_after_a_command_is_never_left_out_and_order_is_kept() {
        let mut session = vec![json!({"role": "user", "content": "/mode"})];
        session.push(json!({"role": "user", "content": format!("TASK: port the themes {}", "detail ".repeat(40))}));
        for n in 0..30 {
            session.push(json!({"role": "user", "content": format!("follow-up {n}: {}", "word ".repeat(50))}));
        }
        let users = UserMessages::extract_session(&session, &OwnSummaries::none());
        for budget in [120, 200, 400, 800, 2_000] {
            let fitted = users.clone().fit(budget, Encoding::O200kBase);
            let rendered = fitted.render(budget);
            assert!(
                tokens::count_text(Encoding::O200kBase, &rendered) <= budget,
                "{budget}"
            );
            let task = fitted
                .messages
                .iter()
                .find(|m| m.task)
                .expect("the task is kept");
            assert!(task.text.starts_with("TASK: port the themes"), "{budget}");
            assert!(
                !fitted.messages.iter().any(|m| m.text == "/mode"),
                "{budget}"
            );
            // The task first (the command before it is left out), then the most recent, in order.
            assert!(fitted.messages[0].task);
            if budget >= 400 {
                assert_eq!(fitted.messages.last(), users.messages.last());
            }
            assert_eq!(fitted.left_out, 32 - fitted.messages.len());
            let parsed = UserMessages::parse(&rendered).unwrap();
            assert_eq!(parsed, fitted);
        }
        // Everything fits: every message in its place, the command before the task.
        let all = users.clone().fit(100_000, Encoding::O200kBase);
        assert_eq!(all.messages[0].text, "/mode");
        assert!(all.messages[1].task);
        // A summary written before this rule labelled the first user message the task.
        let old = format!(
            "{USER_MESSAGES_HEADER}\nWhat the user wrote.\n[task (the first user message) · 5 characters]\n/mode\n\n[user message · 2 characters]\nok"
        );
        let parsed = UserMessages::parse(&old).unwrap();
        assert!(parsed.messages[0].task && !parsed.messages[1].task);
    }

    #[test]
    fn new_losses_are_warned_about_once() {
        let users = UserMessages::extract_session(
            &(0..10)
                .map(|n| json!({"role": "user", "content": format!("ask {n} {}", "x ".repeat(80))}))
                .collect::<Vec<_>>(),
            &OwnSummaries::none(),
        );
        let full = format!("## Goal\ng\n\n{}", users.render(100_000));
        assert_eq!(losses_warning(&full, None), None);
        let fitted = users.fit(300, Encoding::O200kBase);
        let cut = format!("## Goal\ng\n\n{}", fitted.render(300));
        let warning = losses_warning(&cut, None).unwrap();
        assert!(
            warning.contains(&format!("{} of the user's messages", fitted.left_out)),
            "{warning}"
        );
        // The same losses carried by the summary it updates are not warned about again.
        assert_eq!(losses_warning(&cut, Some(&cut)), None);
    }

    #[test]
    fn a_section_fitted_again_gives_way_and_keeps_what_follows() {
        let users = UserMessages::extract(
            &(0..8)
                .map(|n| json!({"role": "user", "content": format!("request {n} {}", "x ".repeat(30))}))
                .collect::<Vec<_>>(),
            &OwnSummaries::none(),
        );
        let body = format!(
            "## Goal\ng\n\n{}\n\n{}\n\n## Archived originals (recall)\nRecall: archive=a",
            "## Ledger (extracted from tool calls)\nFiles read: (none)",
            users.render(10_000)
        );
        let smaller = refit_section(&body, 200, Encoding::O200kBase).unwrap();
        let parsed = UserMessages::parse(&smaller).unwrap();
        assert!(parsed.left_out > 0 && !parsed.messages.is_empty());
        assert!(smaller.starts_with("## Goal\ng\n\n## Ledger"));
        assert!(smaller.ends_with("\n\n## Archived originals (recall)\nRecall: archive=a"));
        let none = refit_section(&body, 5, Encoding::O200kBase).unwrap();
        assert!(none.contains(&format!(
            "{USER_MESSAGES_HEADER}\n(8 user messages left out to stay within 5 tokens"
        )));
        assert_eq!(UserMessages::parse(&none).unwrap().messages, Vec::new());
        assert!(none.ends_with("hold them.)\n\n## Archived originals (recall)\nRecall: archive=a"));
        assert_eq!(refit_section("## Goal\nx", 5, Encoding::O200kBase), None);
    }

    #[test]
    fn carried_forward_after_earlier_ones() {
        let earlier = UserMessages::extract(
            &[json!({"role": "user", "content": "one"})],
            &OwnSummaries::none(),
        );
        let now = UserMessages::extract(
            &[json!({"role": "user", "content": "two"})],
            &OwnSummaries::none(),
        );
        let merged = now.merged_after(&earlier);
        let texts: Vec<&str> = merged.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, vec!["one", "two"]);
    }
}
