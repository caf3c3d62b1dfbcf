//! Reading the archived originals back, for the agent itself (SPEC §4.12): the recall tool
//! (`createRecallTool`). A summary drops details; the archive keeps them, and with this the agent
//! can reach them — a range of an archive, as the summary's recall lines name it, or the
//! passages of the session's archives that match a query — within a budget of tokens.
//!
//! Whatever the input, the answer is text the model can act on: an unknown archive, a range out
//! of bounds or an empty query says what is wrong and what exists, and never fails the loop.
//! Archives are listed and read through the session's functions
//! ([`super::session::list_archives`], the [`ArchiveSource`] that restore reads), on disk or on a
//! store alike.

use std::path::Path;

use serde_json::Value;

use super::restore::{recorded_in, ArchiveSource};
use super::session::{self, ArchiveInfo, HistoryError, SessionSource};
use super::store::ArchiveStore;
use crate::base::text::clip_middle;
use crate::carry::ledger::Ledger;
use crate::model::added::{self, OwnSummaries};
use crate::model::message::{role_of, Role};
use crate::model::tokens::{self, Encoding};
use crate::summary::prompt::{render_each, RenderLimits};

/// The default budget of one answer, in tokens.
pub const DEFAULT_MAX_TOKENS: usize = 8_000;

/// Where a session's archives are.
#[derive(Clone, Copy)]
pub enum Location<'a> {
    Dir(&'a Path),
    Store(&'a ArchiveStore),
}

/// What the agent asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallRequest {
    pub archive: Option<String>,
    pub from: Option<usize>,
    pub to: Option<usize>,
    pub query: Option<String>,
    /// The session's full ledger (the files touched, the commands run, the failed calls), of
    /// which a summary carries what fits its budget.
    pub ledger: bool,
}

impl RecallRequest {
    /// The tool's input as the model gave it (`{archive?, from?, to?, query?}`; numbers may come
    /// as numeric strings). `Err`: what to tell the model.
    pub fn from_json(input: &Value) -> Result<RecallRequest, String> {
        let Value::Object(fields) = input else {
            return Err(format!(
                "The recall tool takes an object {{ archive?, from?, to?, query? }}, got {}. {USAGE}",
                crate::model::message::type_name(input)
            ));
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "`{key}` must be a string, got {}. {USAGE}",
                    crate::model::message::type_name(other)
                )),
            }
        };
        let index = |key: &str| -> Result<Option<usize>, String> {
            let bad = |shown: String| {
                Err(format!(
                    "`{key}` must be a message index (an integer, 0 or more), got {shown}. {USAGE}"
                ))
            };
            if let Some(name) = fields.get(key).and_then(crate::base::non_finite) {
                return bad(name.to_string());
            }
            match fields.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => match n.as_u64() {
                    Some(n) => Ok(Some(n as usize)),
                    None => bad(n.to_string()),
                },
                Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
                Some(Value::String(s)) => match s.trim().parse::<usize>() {
                    Ok(n) => Ok(Some(n)),
                    Err(_) => bad(format!("{s:?}")),
                },
                Some(other) => bad(crate::model::message::type_name(other).to_string()),
            }
        };
        Ok(RecallRequest {
            archive: text("archive")?.filter(|a| !a.trim().is_empty()),
            from: index("from")?,
            to: index("to")?,
            query: text("query")?,
            ledger: match fields.get("ledger") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(on)) => *on,
                Some(other) => {
                    return Err(format!(
                        "`ledger` must be a boolean, got {}. {USAGE}",
                        crate::model::message::type_name(other)
                    ))
                }
            },
        })
    }
}

const USAGE: &str =
    "Give `archive` (a file name from a summary's recall lines) with `from` and `to` \
(message indices, to exclusive) to read archived messages, `query` to search every archive of \
this session, or `ledger: true` for the full ledger of the files touched and commands run.";

/// Answers `input` (see [`RecallRequest::from_json`]) from the archives of `session_id` at
/// `location`, within `max_tokens`.
pub fn recall(
    location: Location<'_>,
    session_id: &str,
    input: &Value,
    max_tokens: usize,
    encoding: Encoding,
) -> String {
    let request = match RecallRequest::from_json(input) {
        Ok(request) => request,
        Err(message) => return message,
    };
    if let Err(e) = super::validate_session_id(session_id) {
        return format!("The recall tool is set up with an invalid session: {e}");
    }
    let store = match location {
        Location::Dir(dir) => ArchiveStore::local(dir),
        Location::Store(store) => store.clone(),
    };
    let archives = match session::list_archives(&store, session_id) {
        Ok(archives) => archives,
        Err(e) => return format!("The archives of this session cannot be listed: {e}"),
    };
    if archives.is_empty() {
        return "This session has no archived messages yet: nothing was compacted.".into();
    }
    let max_tokens = max_tokens.max(MIN_TOKENS);
    let reader = Reader {
        source: SessionSource {
            store: &store,
            session_id,
        },
        encoding,
        max_tokens,
    };
    if request.ledger {
        return reader.ledger(&archives);
    }
    match (&request.archive, &request.query) {
        (_, Some(query)) if query.trim().is_empty() => format!(
            "The query is empty: give a word or phrase to search the archived messages for. {USAGE}"
        ),
        (None, None) => format!(
            "Nothing was asked. {USAGE}\n{}",
            describe_archives(&archives)
        ),
        (Some(name), None) => match find(&archives, name) {
            Some(info) => reader.range(info, request.from, request.to),
            None => unknown(&archives, name),
        },
        (Some(name), Some(query)) => match find(&archives, name) {
            Some(info) => reader.search(std::slice::from_ref(info), query),
            None => unknown(&archives, name),
        },
        (None, Some(query)) => reader.search(&archives, query),
    }
}

/// The fewest tokens an answer is given (a smaller budget could not say anything).
const MIN_TOKENS: usize = 200;

/// The archive a name (or a path ending in it) means.
fn find<'a>(archives: &'a [ArchiveInfo], name: &str) -> Option<&'a ArchiveInfo> {
    let name = name.trim().rsplit(['/', '\\']).next().unwrap_or(name);
    archives.iter().find(|info| info.file_name == name)
}

fn describe_archives(archives: &[ArchiveInfo]) -> String {
    let mut out = String::from("Archives of this session:");
    for info in archives {
        match info.message_count {
            Some(n) => out.push_str(&format!(
                "\n- {} ({n} message{}, from=0 to={n})",
                info.file_name,
                if n == 1 { "" } else { "s" }
            )),
            None => out.push_str(&format!("\n- {} (unreadable)", info.file_name)),
        }
    }
    out
}

fn unknown(archives: &[ArchiveInfo], name: &str) -> String {
    format!(
        "There is no archive named {name:?} in this session. {}",
        describe_archives(archives)
    )
}

struct Reader<'a> {
    source: SessionSource<'a>,
    encoding: Encoding,
    max_tokens: usize,
}

/// Tokens kept for the line that says what was not shown.
const TRAILER_TOKENS: usize = 80;

impl Reader<'_> {
    fn read(&self, name: &str) -> Result<Vec<Value>, HistoryError> {
        self.source
            .read_archive(name)
            // The messages the compaction replaced (not the originals of the kept messages it
            // changed, which the summary's markers name on their own).
            .map(|body| body.messages)
    }

    /// The metadata recorded beside the archive `name`, if there is any.
    fn meta(&self, name: &str) -> Option<Value> {
        self.source.read_meta(name)
    }

    /// The session's full ledger: the ledgers recorded beside its archives (each whole, where
    /// the summaries carry what fits their budget), as one, within the answer's budget.
    fn ledger(&self, archives: &[ArchiveInfo]) -> String {
        let ledgers: Vec<Ledger> = archives
            .iter()
            .filter_map(|info| self.meta(&info.file_name))
            .filter_map(|meta| {
                meta.get("ledger")
                    .and_then(Value::as_str)
                    .and_then(Ledger::parse)
            })
            .collect();
        if ledgers.is_empty() {
            return "No ledger is recorded beside this session's archives: no summary listed any \
file operation, command or failed call."
                .into();
        }
        let text = Ledger::union(&ledgers).render_within(self.max_tokens, self.encoding);
        if text.is_empty() {
            return "The full ledger does not fit this answer's budget; search the archives with \
`query` (a path or a folder) instead."
                .into();
        }
        text
    }

    fn tokens(&self, text: &str) -> usize {
        tokens::count_text(self.encoding, text)
    }

    /// Messages `from..to` of an archive, rendered readably, as many as the budget holds.
    fn range(&self, info: &ArchiveInfo, from: Option<usize>, to: Option<usize>) -> String {
        let name = &info.file_name;
        let messages = match self.read(name) {
            Ok(messages) => messages,
            Err(e) => return format!("Archive {name} cannot be read: {e}"),
        };
        let len = messages.len();
        let from = from.unwrap_or(0);
        let to = to.unwrap_or(len);
        if len == 0 {
            return format!("Archive {name} holds no messages.");
        }
        if from >= len {
            return format!(
                "from={from} is out of range: {name} holds {len} message{} (from=0 to={len}; indices 0 to {}).",
                if len == 1 { "" } else { "s" },
                len - 1
            );
        }
        if to > len {
            return format!(
                "to={to} is past the end: {name} holds {len} message{}, so `to` is at most {len} (to is exclusive).",
                if len == 1 { "" } else { "s" }
            );
        }
        if from >= to {
            return format!(
                "from={from} must be less than to={to} (to is exclusive): ask for from={from} to={} for one message.",
                from + 1
            );
        }
        // Rendered from the start of the archive, so a result names the tool that made it.
        let own = self.own(&messages[..to]);
        let rendered = render_each(&messages[..to], RenderLimits::unlimited(), &own);
        let budget = self.max_tokens.saturating_sub(TRAILER_TOKENS);
        // The header says exactly what is shown: it is written once the messages that fit are
        // known, and its share of the budget is kept for it.
        let header = |shown_to: usize, shortened: bool| {
            let what = if shown_to == from + 1 {
                format!("message {from}")
            } else {
                format!("messages {from} to {}", shown_to - 1)
            };
            format!(
                "Archive {name}, {what} of {len}{} (from={from} to={shown_to}):",
                if shortened { ", shortened" } else { "" }
            )
        };
        let mut used = self.tokens(&header(to, true));
        let mut body = String::new();
        for index in from..to {
            let block = format!(
                "\n\n--- message {index} · {} ---\n{}",
                label(&messages[index], &own),
                rendered[index].trim_end()
            );
            let cost = self.tokens(&block);
            if used + cost <= budget {
                used += cost;
                body.push_str(&block);
                continue;
            }
            if index == from {
                // One message larger than the whole budget: its beginning and end.
                let mut out = header(from + 1, true);
                out.push_str(&self.clipped(&block, budget.saturating_sub(used)));
                if index + 1 < to {
                    out.push_str(&format!(
                        "\n\n[Message {index} was shortened to fit this tool's {} tokens, and messages {} to {} are not shown. Ask again with archive={name} from={} to={to}.]",
                        self.max_tokens,
                        index + 1,
                        to - 1,
                        index + 1
                    ));
                } else {
                    out.push_str(&format!(
                        "\n\n[Message {index} was shortened to fit this tool's {} tokens.]",
                        self.max_tokens
                    ));
                }
                return out;
            }
            let mut out = header(index, false);
            out.push_str(&body);
            out.push_str(&format!(
                "\n\n[Messages {index} to {} are not shown: over this tool's {} tokens. Ask again with archive={name} from={index} to={to}.]",
                to - 1,
                self.max_tokens
            ));
            return out;
        }
        let mut out = header(to, false);
        out.push_str(&body);
        out
    }

    /// The summaries and notices among `messages` (of one archive) that the session's records
    /// name: labelled as earlier summaries and left out of searches. A message that only starts
    /// like one is shown as the message it is.
    fn own(&self, messages: &[Value]) -> OwnSummaries {
        let mut own = OwnSummaries::none();
        for message in messages.iter().filter(|m| added::is_summary_message(m)) {
            if recorded_in(&self.source, message) {
                own.insert(message);
            }
        }
        own
    }

    /// `text` within `max_tokens`: its beginning and end.
    fn clipped(&self, text: &str, max_tokens: usize) -> String {
        let total = text.chars().count();
        let (mut low, mut high) = (0, total);
        while low < high {
            let mid = (low + high).div_ceil(2);
            if self.tokens(&clip_middle(text, mid)) <= max_tokens {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        clip_middle(text, low)
    }

    /// The passages of `archives` (newest first) that match `query`.
    fn search(&self, archives: &[ArchiveInfo], query: &str) -> String {
        let query = query.trim();
        let mut ordered: Vec<&ArchiveInfo> = archives.iter().collect();
        ordered.sort_by(|a, b| (b.sequence, &b.file_name).cmp(&(a.sequence, &a.file_name)));
        let mut documents = Vec::new();
        let mut unreadable = Vec::new();
        for info in ordered {
            match self.read(&info.file_name) {
                Ok(messages) => {
                    let own = self.own(&messages);
                    let rendered = render_each(&messages, RenderLimits::unlimited(), &own);
                    for (index, (message, text)) in messages.iter().zip(rendered).enumerate() {
                        // A summary repeats what the earlier archives hold in full.
                        if own.contains(message) {
                            continue;
                        }
                        documents.push((
                            info.file_name.as_str(),
                            index,
                            label(message, &own),
                            text,
                        ));
                    }
                }
                Err(e) => unreadable.push(format!("{} ({e})", info.file_name)),
            }
        }
        let phrase = query.to_ascii_lowercase();
        let words: Vec<String> = phrase.split_whitespace().map(str::to_string).collect();
        let mut hits: Vec<(usize, usize, usize)> = Vec::new(); // (document, at, length)
        for (d, (_, _, _, text)) in documents.iter().enumerate() {
            if let Some(at) = text.to_ascii_lowercase().find(&phrase) {
                hits.push((d, at, phrase.len()));
            }
        }
        let mut how = format!("match \"{query}\"");
        if hits.is_empty() && words.len() > 1 {
            for (d, (_, _, _, text)) in documents.iter().enumerate() {
                let lower = text.to_ascii_lowercase();
                if words.iter().all(|word| lower.contains(word.as_str())) {
                    let at = lower.find(words[0].as_str()).unwrap_or(0);
                    hits.push((d, at, words[0].len()));
                }
            }
            how = format!("contain every word of \"{query}\" (none holds the whole phrase)");
        }
        let searched = if archives.len() == 1 {
            format!("archive {}", archives[0].file_name)
        } else {
            format!("the {} archives of this session", archives.len())
        };
        let mut out = if hits.is_empty() {
            format!(
                "Nothing in {searched} matches \"{query}\" (case-insensitive). Try fewer or other words, or read a range. {}",
                describe_archives(archives)
            )
        } else {
            format!(
                "{} message{} in {searched} {how}, newest archive first:",
                hits.len(),
                if hits.len() == 1 { "" } else { "s" }
            )
        };
        let budget = self.max_tokens.saturating_sub(TRAILER_TOKENS);
        let mut used = self.tokens(&out);
        for (shown, (d, at, length)) in hits.iter().enumerate() {
            let (name, index, label, text) = &documents[*d];
            let block = format!(
                "\n\n--- {name} · message {index} · {label} (archive={name} from={index} to={}) ---\n{}",
                index + 1,
                passage(text, *at, *length)
            );
            let cost = self.tokens(&block);
            if used + cost > budget {
                out.push_str(&format!(
                    "\n\n[{} more matching message{} not shown: over this tool's {} tokens. Narrow the query, or read one by its range.]",
                    hits.len() - shown,
                    if hits.len() - shown == 1 { " is" } else { "s are" },
                    self.max_tokens
                ));
                break;
            }
            used += cost;
            out.push_str(&block);
        }
        if !unreadable.is_empty() {
            out.push_str(&format!(
                "\n\n[Not searched, unreadable: {}.]",
                unreadable.join(", ")
            ));
        }
        out
    }
}

/// How a message is labelled: its role, and whether the library wrote it (its records say so).
fn label(message: &Value, own: &OwnSummaries) -> String {
    let role = role_of(message).map_or("unknown", Role::as_str);
    if own.contains(message) {
        format!("{role}, an earlier summary")
    } else {
        role.to_string()
    }
}

/// Characters of context on each side of a match.
const PASSAGE_CONTEXT: usize = 400;

/// The text around `text[at..at + length]`.
fn passage(text: &str, at: usize, length: usize) -> String {
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(at.saturating_sub(PASSAGE_CONTEXT));
    let end = floor((at + length + PASSAGE_CONTEXT).min(text.len()));
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(text[start..end].trim());
    if end < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let messages: Vec<Value> = (0..30)
            .map(|i| {
                if i % 2 == 0 {
                    json!({"role": "user", "content": format!("question {i} {}", "lorem ipsum ".repeat(30))})
                } else {
                    json!({"role": "assistant", "content": format!("answer {i}: the NEEDLE-{i} is here")})
                }
            })
            .collect();
        let file = super::super::persist_messages(&messages, dir.path(), "s").unwrap();
        let name = file.path.file_name().unwrap().to_string_lossy().to_string();
        (dir, name)
    }

    fn ask(dir: &Path, input: Value, max: usize) -> String {
        recall(Location::Dir(dir), "s", &input, max, Encoding::O200kBase)
    }

    #[test]
    fn a_range_reads_back_the_messages_within_the_budget() {
        let (dir, name) = setup();
        let out = ask(
            dir.path(),
            json!({"archive": name, "from": 3, "to": 6}),
            8_000,
        );
        assert!(out.starts_with(&format!(
            "Archive {name}, messages 3 to 5 of 30 (from=3 to=6):"
        )));
        assert!(out.contains(
            "--- message 3 · assistant ---\n[assistant]\nanswer 3: the NEEDLE-3 is here"
        ));
        assert!(out.contains("question 4 lorem"));
        assert!(!out.contains("NEEDLE-7"));
        // Numeric strings and a path are accepted as the model may give them.
        let path = dir.path().join("s").join(&name);
        let same = ask(
            dir.path(),
            json!({"archive": path.display().to_string(), "from": "3", "to": "6"}),
            8_000,
        );
        assert_eq!(same, out);
        // Over the budget: the rest is named, to ask for.
        let small = ask(dir.path(), json!({"archive": name}), 400);
        assert!(
            tokens::count_text(Encoding::O200kBase, &small) <= 400,
            "{small}"
        );
        assert!(
            small.contains(&format!("Ask again with archive={name} from=")),
            "{small}"
        );
    }

    #[test]
    fn a_query_finds_passages_and_bad_input_is_answered_not_thrown() {
        let (dir, name) = setup();
        let out = ask(dir.path(), json!({"query": "needle-17"}), 8_000);
        assert!(out.starts_with("1 message in archive"), "{out}");
        assert!(out.contains(&format!("(archive={name} from=17 to=18)")));
        assert!(out.contains("NEEDLE-17 is here"));
        let words = ask(dir.path(), json!({"query": "here NEEDLE-21"}), 8_000);
        assert!(words.contains("contain every word"), "{words}");
        for (input, expected) in [
            (json!({"query": "  "}), "The query is empty"),
            (json!({}), "Nothing was asked"),
            (
                json!({"archive": "compact-x.json"}),
                "There is no archive named",
            ),
            (
                json!({"archive": name, "from": 40}),
                "from=40 is out of range",
            ),
            (json!({"archive": name, "to": 31}), "to=31 is past the end"),
            (
                json!({"archive": name, "from": 5, "to": 5}),
                "must be less than to=5",
            ),
            (
                json!({"archive": name, "from": -1}),
                "`from` must be a message index",
            ),
            (json!({"archive": 3}), "`archive` must be a string"),
            (json!("text"), "takes an object"),
            (json!({"query": "absent words"}), "Nothing in archive"),
            (json!({"ledger": "yes"}), "`ledger` must be a boolean"),
            // No ledger beside an archive written without one.
            (json!({"ledger": true}), "No ledger is recorded"),
        ] {
            let out = ask(dir.path(), input.clone(), 8_000);
            assert!(out.contains(expected), "{input}: {out}");
        }
        let none = recall(
            Location::Dir(dir.path()),
            "other",
            &json!({"query": "x"}),
            100,
            Encoding::O200kBase,
        );
        assert!(none.contains("no archived messages yet"));
    }
}
